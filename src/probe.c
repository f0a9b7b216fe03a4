/*
 * probe.c -- CPU time and resident memory of a process or process tree
 * (see probe.h).
 */
#include "probe.h"
#include "internal.h"
#include "metrics.h"
#include "proc_tree.h"
#include "fileio.h"
#include "procfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

typedef struct tracked_process {
    pid_t pid;
    pid_t ppid;          /* tree mode: its parent at the latest reading */
    int dir_fd;          /* /proc/PID, for status and clear_refs */
    int statm_fd;        /* kept open, re-read with pread each sample */
    int stat_fd;         /* tree mode: for cutime/cstime and the parent */
    clockid_t cpu_clock; /* the process's CPU clock: all its threads, in ns */
    int is_self;         /* this very process: it cannot end before stop */
    uint64_t last_cpu_ns;  /* its CPU clock at the latest reading */
    uint64_t children_ns;  /* tree mode: cutime + cstime at the latest stat
                              read, the CPU of the children it has reaped */
    uint64_t stat_read_ns; /* when (CLOCK_BOOTTIME) stat was last read */
    uint64_t stat_cpu_ns;  /* its CPU clock then */
    uint64_t rss_pages;      /* the latest reading while it had memory */
    uint64_t peak_rss_bytes; /* the largest RSS sampled */
    uint64_t hwm_bytes;      /* the latest VmHWM read during the window (0: none) */
    uint64_t hwm_read_ns;    /* when (CLOCK_BOOTTIME) */
    uint64_t hwm_start_bytes; /* watch_peak_marks: VmHWM at its first reading of the window */
    int hwm_start_known;
    unsigned seen_walk;  /* the walk that last found it (tree mode) */
    int peak_reset_ok;
    rm__process_metrics metrics;
    int ending;          /* this reading found it ENDED_REAPED */
    int adopted;         /* tree mode: its parent ended (it is an orphan), yet
                            it stays in the tree, and the walk starts from it */
} tracked_process;

/* Why a process stops being tracked: only by ending.  A process leaves its
 * parent's tree only when the parent ends before it (it is then adopted by
 * a subreaper or init), and it is still the monitored program's work: it
 * stays in the tree until it exits. */
enum { STILL_TRACKED = 0, ENDED_REAPED, ENDED_LEFT /* a cgroup's member moved out (rm__probe_members_of_cgroup) */ };

/* What one reading of one process gives. */
typedef struct process_reading {
    uint64_t cpu_ns, children_ns, rss_pages, starttime;
    pid_t ppid;
    int has_memory; /* 0 for a zombie: its memory is gone */
} process_reading;

/* The monitored root's VmHWM (a status read, several times the cost of the
 * sample itself) is read at most this often, so that its exact peak survives
 * the root's exit without slowing a fast schedule. */
#define PEAK_REFRESH_NS 10000000u

/* A tree process's stat (cutime, cstime) is re-read at most this often, and
 * only when its CPU clock moved: a process reaps a child only by running.  A
 * reap seen late is counted late, never lost -- cutime only grows, and a
 * process that ends with an old reading leaves the difference in its
 * parent's increase -- so a fast schedule does not pay a stat read per busy
 * process per sample. */
#define CHILDREN_CPU_REFRESH_NS 10000000u

struct rm__probe {
    int proc_fd;
    pid_t root;
    int include_children;
    int peak_reset_error;  /* 0, or the first refused reset's negative errno */
    int keep_peak_marks;     /* never reset: follow each lifetime peak instead */
    uint64_t lifetime_peak_bytes; /* largest mark read so far (keep_peak_marks) */
    /* Never reset, and give the window's exact peak where the marks show it
     * (see rm__probe_watch_peak_marks).  For processes no longer tracked:
     * the largest figure exact for the window, the largest mark, and the
     * largest start mark of one whose mark did not rise. */
    int watch_peak_marks;
    uint64_t ended_window_bytes, ended_lifetime_bytes, ended_unrisen_bytes;
    unsigned walk;
    uint64_t page_size;
    rm__tree_walker walker;
    tracked_process *procs; /* procs[0] is the root */
    size_t count, cap;
    pid_t *pid_list;        /* for rm__probe_pids */
    size_t pid_list_cap;
    long ticks_per_sec;     /* stat's clock ticks */
    uint64_t tick_ns;
    uint64_t previous_boottime_ns; /* CLOCK_BOOTTIME of the previous reading */
    long online_cpus;       /* a tree cannot use more CPU than this */
    unsigned generation;    /* bumped when the tracked set changes */
    rm__metrics metrics;    /* the groups beyond CPU and RSS (none by default) */
    unsigned untrackable;   /* the latest walk's processes /proc refused */
    /* The window's CPU as the kernel accounts it, and how much of it the
     * readings have handed out: the difference is carried to the next
     * reading (a reading never shows more than the machine could run). */
    int64_t counted_ns;
    uint64_t reported_ns;
    int last_reading;       /* rm__probe_end_window: hand out everything */
    int root_gone;          /* the root was reaped: its final reading is given */
    uint64_t ended_peak_bytes; /* the largest peak of processes no longer tracked */
    int ended_peak_known;
    /* When the root is our own child, the CPU it used after the latest
     * reading reaches our RUSAGE_CHILDREN when we reap it. */
    int root_is_our_child;
    uint64_t our_children_ns; /* RUSAGE_CHILDREN at the latest reading */
    /* This process is a child subreaper (as the resmon command is) and the
     * root is its child: the orphans of the root's tree become our children,
     * so the walk starts from us too (our other children are taken for the
     * tree's: the command has none). */
    int adopts_orphans;
    pid_t *walk_roots;      /* the root, us when adopts_orphans, the adopted */
    size_t walk_root_cap;
    /* Its context switches then (voluntary, involuntary), and the root's own
     * at the window's first reading: the kernel hands a reaped process's
     * switches (its threads' and its reaped children's) only to wait4 and
     * RUSAGE_CHILDREN, never to /proc. */
    uint64_t our_children_switches[2];
    uint64_t root_start_switches[2];
    /* rm__probe_members_of_cgroup: the tree is a cgroup's processes, and
     * procs[0] (this process) stands for no one: 1 is the first index read. */
    size_t members;
};

/* In a tree, a process's stat is read too: its cutime/cstime carry the CPU
 * of the children it reaped, however short-lived.  (statm stays the source
 * of RSS: stat's rss field is the kernel's approximate per-CPU count.) */
static int reads_stat(const rm__probe *p)
{
    return p->include_children;
}

/* Closes what a tracked process holds (its slot is reused by the caller). */
static void release_tracked(tracked_process *t)
{
    if (t->statm_fd >= 0)
        close(t->statm_fd);
    rm__process_metrics_close(&t->metrics);
    if (t->stat_fd >= 0)
        close(t->stat_fd);
    if (t->dir_fd >= 0)
        close(t->dir_fd);
}

static void untrack_at(rm__probe *p, size_t index)
{
    release_tracked(&p->procs[index]);
    p->procs[index] = p->procs[--p->count];
    p->generation++;
}

static int read_cpu_ns(const tracked_process *t, uint64_t *ns)
{
    struct timespec ts;
    if (clock_gettime(t->cpu_clock, &ts) != 0)
        return -ESRCH; /* the kernel answers EINVAL once the process is gone */
    *ns = rm__timespec_ns(&ts);
    return 0;
}

/* One process's CPU clock and resident memory (statm). */
static int read_process(const tracked_process *t, process_reading *out)
{
    int rc = read_cpu_ns(t, &out->cpu_ns);
    if (rc < 0)
        return rc;
    char text[128];
    ssize_t n = rm__pread_file(t->statm_fd, text, sizeof text);
    if (n < 0)
        return (int)n;
    uint64_t size_pages;
    rc = rm__parse_statm(text, (size_t)n, &size_pages, &out->rss_pages);
    out->has_memory = size_pages != 0;
    return rc;
}

/* What a tree process's stat adds: the CPU of the children it reaped, its
 * parent, its start time. */
static int read_stat_fields(const tracked_process *t, uint64_t tick_ns, process_reading *out)
{
    char text[1024];
    ssize_t n = rm__pread_file(t->stat_fd, text, sizeof text);
    if (n < 0)
        return (int)n;
    rm__proc_stat st;
    int rc = rm__parse_stat(text, (size_t)n, &st);
    if (rc < 0)
        return rc;
    out->children_ns = (st.cutime + st.cstime) * tick_ns;
    out->ppid = st.ppid;
    out->starttime = st.starttime;
    return 0;
}

static int open_in(int dir_fd, const char *name, int *fd)
{
    *fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC);
    return *fd >= 0 ? 0 : errno == ENOENT ? -ESRCH : -errno;
}

/* Starts tracking pid.  A process born since the previous reading counts all
 * its CPU time (and its reaped children's) in this interval (baseline 0); one
 * that is older -- missed by an earlier walk, the kernel's children lists
 * being best effort -- starts from its current CPU time, so its past never
 * shows as a spike. */
static int track(rm__probe *p, pid_t pid, tracked_process **out)
{
    if (p->count == p->cap) {
        size_t new_cap = p->cap ? p->cap * 2 : 16;
        tracked_process *grown = realloc(p->procs, new_cap * sizeof *grown);
        if (!grown)
            return -ENOMEM;
        p->procs = grown;
        p->cap = new_cap;
    }
    tracked_process t = {.pid = pid, .dir_fd = -1, .statm_fd = -1, .stat_fd = -1, .is_self = pid == getpid()};
    char path[32];
    snprintf(path, sizeof path, "%d", (int)pid);
    t.dir_fd = openat(p->proc_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (t.dir_fd < 0)
        return errno == ENOENT ? -ESRCH : -errno;
    int rc = open_in(t.dir_fd, "statm", &t.statm_fd);
    if (rc == 0 && reads_stat(p))
        rc = open_in(t.dir_fd, "stat", &t.stat_fd);
    if (rc == 0) {
        if (t.is_self)
            t.cpu_clock = CLOCK_PROCESS_CPUTIME_ID; /* skips the kernel's pid lookup */
        else if (clock_getcpuclockid(pid, &t.cpu_clock) != 0)
            rc = -ESRCH;
    }
    process_reading now = {0};
    if (rc == 0)
        rc = read_process(&t, &now); /* both reads also prove the process readable */
    if (rc == 0 && reads_stat(p))
        rc = read_stat_fields(&t, p->tick_ns, &now);
    if (rc < 0) {
        if (t.statm_fd >= 0)
            close(t.statm_fd);
        if (t.stat_fd >= 0)
            close(t.stat_fd);
        close(t.dir_fd);
        return rc;
    }
    t.ppid = now.ppid;
    /* Unknown birth (statm only: the root, tracked before any reading)
     * counts as "before": never an absurd spike. */
    int born_since = reads_stat(p) && p->previous_boottime_ns &&
                     rm__started_after(now.starttime, p->ticks_per_sec, p->previous_boottime_ns);
    rm__process_metrics_init(&t.metrics, born_since);
    if (!born_since) {
        t.last_cpu_ns = now.cpu_ns;
        t.children_ns = now.children_ns;
    }
    p->procs[p->count] = t;
    *out = &p->procs[p->count++];
    p->generation++;
    return 0;
}

int rm__probe_open(rm__probe **out, pid_t pid, int include_children, const char *proc_root)
{
    rm__probe *p = calloc(1, sizeof *p);
    if (!p)
        return -ENOMEM;
    p->root = pid ? pid : getpid();
    p->include_children = include_children;
    p->page_size = (uint64_t)sysconf(_SC_PAGESIZE);
    p->ticks_per_sec = sysconf(_SC_CLK_TCK);
    p->tick_ns = p->ticks_per_sec > 0 ? 1000000000u / (uint64_t)p->ticks_per_sec : 0;
    p->online_cpus = sysconf(_SC_NPROCESSORS_ONLN);
    rm__metrics_init(&p->metrics, 0, 0, include_children, p->ticks_per_sec);
    p->proc_fd = open(proc_root ? proc_root : "/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int rc = p->proc_fd < 0 ? -errno : 0;
    if (rc == 0)
        rc = rm__check_proc_namespace(p->proc_fd, !proc_root || strcmp(proc_root, "/proc") == 0);
    if (rc == 0 && include_children)
        rm__tree_walker_init(&p->walker, p->proc_fd,
                             secure_getenv("RESMON_FORCE_PROC_SCAN") ? RM__TREE_SCAN : RM__TREE_AUTO);
    tracked_process *root;
    if (rc == 0)
        rc = track(p, p->root, &root);
    /* Room for the pid list now, on the caller's thread: growing it on the
     * sampler thread would cost that thread a malloc arena (see pages.h). */
    if (rc == 0 && !(p->pid_list = malloc(p->cap * sizeof *p->pid_list)))
        rc = -ENOMEM;
    if (rc == 0)
        p->pid_list_cap = p->cap;
    if (rc < 0) {
        rm__probe_close(p);
        return rc;
    }
    p->root_is_our_child = reads_stat(p) && root->ppid == getpid();
    int subreaper = 0;
    p->adopts_orphans = p->root_is_our_child && prctl(PR_GET_CHILD_SUBREAPER, &subreaper, 0, 0, 0) == 0 && subreaper;
    *out = p;
    return 0;
}

void rm__probe_collect(rm__probe *p, unsigned groups, double memory_detail_interval_sec)
{
    rm__metrics_free(&p->metrics);
    rm__metrics_init(&p->metrics, groups, memory_detail_interval_sec, p->include_children, p->ticks_per_sec);
    rm__metrics_open_network(&p->metrics, p->proc_fd, p->root);
}

void rm__probe_fill_metrics(const rm__probe *p, resmon_sample *s)
{
    rm__metrics_fill_sample(&p->metrics, s);
}

void rm__probe_keep_peak_marks(rm__probe *p)
{
    p->keep_peak_marks = 1;
}

void rm__probe_watch_peak_marks(rm__probe *p)
{
    p->watch_peak_marks = 1;
}

void rm__probe_close(rm__probe *p)
{
    if (!p)
        return;
    while (p->count > 0)
        untrack_at(p, p->count - 1);
    free(p->procs);
    free(p->pid_list);
    free(p->walk_roots);
    rm__metrics_free(&p->metrics);
    if (p->include_children)
        rm__tree_walker_free(&p->walker);
    if (p->proc_fd >= 0)
        close(p->proc_fd);
    free(p);
}

static tracked_process *find_tracked(rm__probe *p, pid_t pid)
{
    for (size_t i = 0; i < p->count; i++)
        if (p->procs[i].pid == pid)
            return &p->procs[i];
    return NULL;
}

/* The CPU a process's parent will show in its cutime/cstime once it reaps
 * it: all the process ever used, its reaped children's included. */
static uint64_t lifetime_cpu_ns(const tracked_process *t)
{
    return t->last_cpu_ns + t->children_ns;
}

/* The largest peak-RSS figure known for a process: the kernel's mark as
 * last read, and never below what a sample saw. */
static uint64_t known_peak(const tracked_process *t)
{
    return t->hwm_bytes > t->peak_rss_bytes ? t->hwm_bytes : t->peak_rss_bytes;
}

/* What a watched process tells of the window's peak (watch_peak_marks).
 * The mark never falls, so when it rose after the process's first reading
 * of the window, its latest value is the largest RSS since then: exact.
 * Otherwise its largest sample is what is known, and the true in-window
 * peak lies between that and the mark (*unrisen_bound). */
static uint64_t watched_peak(const tracked_process *t, uint64_t *unrisen_bound)
{
    *unrisen_bound = 0;
    if (t->hwm_start_known && t->hwm_bytes > t->hwm_start_bytes)
        return known_peak(t);
    if (t->hwm_start_known)
        *unrisen_bound = t->hwm_start_bytes;
    return t->peak_rss_bytes;
}

static void note_watched(const tracked_process *t, uint64_t *window, uint64_t *lifetime, uint64_t *unrisen)
{
    uint64_t bound, figure = watched_peak(t, &bound);
    if (figure > *window)
        *window = figure;
    if (known_peak(t) > *lifetime)
        *lifetime = known_peak(t);
    if (bound > *unrisen)
        *unrisen = bound;
}

/* Settles the accounts of a process that has ended (reaped) or left the
 * tree, before it is forgotten.  Its CPU up to the latest reading was counted
 * while it was tracked; once reaped, all of its CPU lands in its parent's
 * cutime, so when that parent is tracked its increase is reduced by what was
 * already counted (and, for a process older than the window, by its past).
 * Its peak is kept for the window's exact peak. */
static void settle_ended(rm__probe *p, const tracked_process *t, int reaped)
{
    if (reaped && find_tracked(p, t->ppid)) {
        p->counted_ns -= (int64_t)lifetime_cpu_ns(t);
        rm__metrics_settle_reaped(&p->metrics, &t->metrics);
    }
    if (known_peak(t) > p->ended_peak_bytes)
        p->ended_peak_bytes = known_peak(t);
    if (t->hwm_bytes)
        p->ended_peak_known = 1;
    if (p->watch_peak_marks)
        note_watched(t, &p->ended_window_bytes, &p->ended_lifetime_bytes, &p->ended_unrisen_bytes);
}

/* Settles every process this reading found ended, then forgets them.  All
 * are settled before any is forgotten: a parent that ended in the same
 * interval as its child still takes the child's credit. */
static void forget_ended(rm__probe *p)
{
    for (size_t i = 1; i < p->count; i++)
        if (p->procs[i].ending)
            settle_ended(p, &p->procs[i], p->procs[i].ending == ENDED_REAPED);
    /* One stable pass: the set keeps parents before children, which the
     * reading relies on (see read_all). */
    size_t kept = 1;
    for (size_t i = 1; i < p->count; i++) {
        if (p->procs[i].ending) {
            release_tracked(&p->procs[i]);
            p->generation++;
        } else {
            p->procs[kept++] = p->procs[i];
        }
    }
    p->count = kept;
}

/* Whether a process the walk did not list is still alive, and its parent
 * now.  The kernel's children lists are best effort, and an orphan is no
 * longer listed under the tree: either stays tracked. */
static int still_alive(rm__probe *p, const tracked_process *t, pid_t *ppid)
{
    process_reading now = {0};
    /* Through the descriptors kept open on it, a process already reaped still
     * reads (statm as zeros, like a zombie), but the kernel shows its parent
     * as 0 once it is released: reaped, so its parent's counters now hold it
     * (a reaped child taken for a live one was counted twice). */
    int alive = read_process(t, &now) == 0 && read_stat_fields(t, p->tick_ns, &now) == 0 && now.ppid != 0;
    *ppid = now.ppid;
    return alive;
}

/* A process the cgroup no longer lists: alive and not a zombie, so it moved
 * out (its counters so far stay counted), rather than ended -- a zombie is
 * settled as reaped, so its parent's coming cutime increase is not counted
 * twice. */
static int left_cgroup(rm__probe *p, const tracked_process *t)
{
    pid_t ppid;
    process_reading now = {0};
    return still_alive(p, t, &ppid) && read_process(t, &now) == 0 && now.has_memory;
}

int rm__probe_members_of_cgroup(rm__probe *p, const char *dir)
{
    if (!p->include_children)
        return -EINVAL;
    int rc = rm__tree_walker_use_cgroup(&p->walker, dir);
    if (rc == 0)
        p->members = 1;
    return rc;
}

/* The walk's roots: the monitored root, this process when it adopts the
 * tree's orphans, and every orphan adopted outside the tree.  0 or -ENOMEM. */
static int collect_walk_roots(rm__probe *p, size_t *count)
{
    size_t need = 2;
    for (size_t i = 1; i < p->count; i++)
        need += p->procs[i].adopted;
    if (need > p->walk_root_cap) {
        pid_t *grown = realloc(p->walk_roots, need * 2 * sizeof *grown);
        if (!grown)
            return -ENOMEM;
        p->walk_roots = grown;
        p->walk_root_cap = need * 2;
    }
    size_t n = 0;
    p->walk_roots[n++] = p->root;
    if (p->adopts_orphans)
        p->walk_roots[n++] = getpid();
    for (size_t i = 1; i < p->count; i++)
        if (p->procs[i].adopted)
            p->walk_roots[n++] = p->procs[i].pid;
    *count = n;
    return 0;
}

/* Brings the tracked set up to date with the tree: new descendants are
 * tracked, processes that ended are dropped.  A walk that runs out of
 * memory keeps the old set: a sample of the known processes beats none. */
static void refresh_tree(rm__probe *p)
{
    size_t root_count;
    if (collect_walk_roots(p, &root_count) < 0 || rm__tree_walk_from(&p->walker, p->walk_roots, root_count) < 0)
        return;
    p->walk++;
    p->procs[0].seen_walk = p->walk;
    p->untrackable = 0;
    for (size_t i = 0; i < p->walker.found_len; i++) {
        pid_t pid = p->walker.found[i];
        tracked_process *t = find_tracked(p, pid);
        int rc = t ? 0 : track(p, pid, &t);
        if (rc < 0) {
            p->untrackable += rc != -ESRCH; /* not gone: not ours to read */
            continue;
        }
        t->seen_walk = p->walk;
    }
    for (size_t i = 1; i < p->count; i++) {
        tracked_process *t = &p->procs[i];
        pid_t ppid;
        if (t->seen_walk == p->walk)
            continue;
        if (p->members) { /* no longer listed: moved out of the cgroup, or ended */
            t->ending = left_cgroup(p, t) ? ENDED_LEFT : ENDED_REAPED;
            continue;
        }
        if (still_alive(p, t, &ppid)) {
            t->seen_walk = p->walk;
            if (!find_tracked(p, ppid))
                t->adopted = 1; /* an orphan: the next walks start from it */
        } else {
            t->ending = ENDED_REAPED;
        }
    }
    forget_ended(p);
}

/* The kernel's peak-RSS mark of the root, read during the window so that it
 * survives the root's exit (a reaped process has no status to read).  This
 * process's own mark needs no such care: it cannot end before stop. */
static void refresh_root_peak(rm__probe *p, uint64_t boot_ns)
{
    tracked_process *root = &p->procs[0];
    if (root->is_self || boot_ns - root->hwm_read_ns < PEAK_REFRESH_NS)
        return;
    uint64_t bytes;
    if (rm__read_peak_rss(root->dir_fd, &bytes) == 0) {
        root->hwm_bytes = bytes;
        root->hwm_read_ns = boot_ns;
    }
}

/* Our RUSAGE_CHILDREN: CPU in ns, and context switches when asked for. */
static uint64_t our_children_cpu_ns(uint64_t *switches)
{
    struct rusage ru;
    if (getrusage(RUSAGE_CHILDREN, &ru) != 0) {
        if (switches)
            switches[0] = switches[1] = 0; /* nothing known: raises nothing */
        return 0;
    }
    if (switches) {
        switches[0] = (uint64_t)ru.ru_nvcsw;
        switches[1] = (uint64_t)ru.ru_nivcsw;
    }
    return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000u +
           (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000u;
}

/* The root, our child, was reaped in this interval: the increase of our
 * RUSAGE_CHILDREN switches is its whole life's, with everything it reaped
 * (the same assumption as for its CPU: no other child of ours was reaped in
 * that interval).  Less what it had before the window, that is the window's
 * count of the root's tree -- which /proc loses for every process that ends
 * (a child's last interval, a child never sampled).  The counted total is
 * raised to it; what is still alive elsewhere keeps its share. */
static void count_root_switches(rm__probe *p, const uint64_t *now)
{
    for (int i = 0; i < 2; i++) {
        uint64_t life = now[i] > p->our_children_switches[i] ? now[i] - p->our_children_switches[i] : 0;
        uint64_t window = life > p->root_start_switches[i] ? life - p->root_start_switches[i] : 0;
        rm__metrics_raise_switches(&p->metrics, i == 0 ? RM__VOLUNTARY_SWITCHES : RM__INVOLUNTARY_SWITCHES,
                                   window);
    }
}

/* The root was reaped after the latest reading.  What it used since then is
 * known only when we reaped it ourselves: it is the increase of our
 * RUSAGE_CHILDREN beyond what was counted (assuming no other child of ours
 * was reaped in that interval, and never more than the machine could run). */
static void count_root_tail(rm__probe *p, uint64_t boot_ns)
{
    if (!p->root_is_our_child)
        return;
    uint64_t switches[2] = {0, 0};
    uint64_t now = our_children_cpu_ns(switches);
    count_root_switches(p, switches);
    uint64_t seen = p->our_children_ns + lifetime_cpu_ns(&p->procs[0]);
    if (now <= seen)
        return;
    uint64_t tail = now - seen;
    uint64_t most = (uint64_t)(p->online_cpus > 0 ? p->online_cpus : 1) * (boot_ns - p->previous_boottime_ns);
    p->counted_ns += (int64_t)(tail < most ? tail : most);
}

/* The CPU a reading hands out: all counted and not yet handed out, but no
 * more than every online CPU busy for the whole interval.  The excess -- a
 * thread's time brought up to date late, a reaped child's whole life landing
 * in its parent's cutime -- is carried to the next reading, never dropped,
 * and the window's last reading hands out everything: sums stay exact. */
static uint64_t cpu_to_hand_out(rm__probe *p, uint64_t boot_ns, int everything)
{
    int64_t pending = p->counted_ns - (int64_t)p->reported_ns;
    if (pending <= 0)
        return 0; /* a credit awaiting its parent's cutime increase */
    uint64_t give = (uint64_t)pending;
    if (!everything && p->online_cpus > 0) {
        uint64_t elapsed = boot_ns > p->previous_boottime_ns ? boot_ns - p->previous_boottime_ns : 0;
        uint64_t most = (uint64_t)p->online_cpus * elapsed;
        if (give > most)
            give = most;
    }
    p->reported_ns += give;
    return give;
}

/* Keeps the largest peak-RSS mark seen, so the lifetime peak survives the
 * process's exit (a zombie, or a process already reaped, has no mark). */
static void follow_peak_mark(rm__probe *p, const tracked_process *t)
{
    uint64_t bytes;
    if (rm__read_peak_rss(t->dir_fd, &bytes) == 0 && bytes > p->lifetime_peak_bytes)
        p->lifetime_peak_bytes = bytes;
}

static int read_all(rm__probe *p, rm__probe_reading *out, int baseline)
{
    if (p->root_gone)
        return -ESRCH; /* its final reading was given */
    struct timespec boot;
    clock_gettime(CLOCK_BOOTTIME, &boot);
    uint64_t boot_ns = rm__timespec_ns(&boot);
    if (p->include_children)
        refresh_tree(p);
    p->metrics.final_reading = p->last_reading;
    rm__metrics_start_reading(&p->metrics, baseline);
    rm__metrics_count_unreadable(&p->metrics, p->untrackable);
    rm__metrics_plan_pss(&p->metrics, p->generation, boot_ns);
    rm__probe_reading r = {0};
    uint64_t rss_pages = 0;
    int root_exited = 0;
    /* Parents before children (a process is tracked after its parent): a
     * child that exits and is reaped between the two reads is then either
     * read before its parent's counters hold it, or found gone and settled
     * next reading -- never counted in both at once.  Children first counted
     * a child's I/O and CPU twice when its parent reaped it mid-reading, and
     * the monotonic totals kept the double. */
    for (size_t i = p->members; i < p->count; i++) {
        tracked_process *t = &p->procs[i];
        process_reading now = {.children_ns = t->children_ns, .ppid = t->ppid};
        int gone = read_process(t, &now) < 0;
        if (!gone && reads_stat(p)) {
            int ran = now.cpu_ns != t->stat_cpu_ns;
            int due = p->last_reading || !now.has_memory || boot_ns - t->stat_read_ns >= CHILDREN_CPU_REFRESH_NS;
            if (baseline || (ran && due)) {
                gone = read_stat_fields(t, p->tick_ns, &now) < 0;
                t->stat_read_ns = boot_ns;
                t->stat_cpu_ns = now.cpu_ns;
            }
        }
        if (gone) {
            t->ending = ENDED_REAPED; /* since the walk */
            continue;
        }
        if (i == 0 && !now.has_memory) {
            /* A zombie: its last CPU time still counts, and the memory it
             * held until it exited stands in for the 0 a zombie reads, so
             * that the window ends on what the process used, not on its
             * release (memory_growth_mb, means). */
            root_exited = 1;
            now.rss_pages = t->rss_pages;
        }
        if (!baseline && now.cpu_ns > t->last_cpu_ns)
            p->counted_ns += (int64_t)(now.cpu_ns - t->last_cpu_ns);
        if (!baseline && now.children_ns > t->children_ns)
            p->counted_ns += (int64_t)(now.children_ns - t->children_ns);
        t->last_cpu_ns = now.cpu_ns;
        t->children_ns = now.children_ns;
        t->ppid = now.ppid;
        t->rss_pages = now.rss_pages;
        uint64_t rss_bytes = now.rss_pages * p->page_size;
        if (rss_bytes > t->peak_rss_bytes)
            t->peak_rss_bytes = rss_bytes;
        rss_pages += now.rss_pages;
        r.process_count++;
        rm__metrics_read_process(&p->metrics, &t->metrics, t->dir_fd, now.rss_pages, boot_ns, baseline);
        if (p->keep_peak_marks && now.has_memory)
            follow_peak_mark(p, t);
        if (p->watch_peak_marks && !t->hwm_start_known && now.has_memory &&
            rm__read_peak_rss(t->dir_fd, &t->hwm_start_bytes) == 0) {
            t->hwm_start_known = 1; /* one status read per process and window */
            if (t->hwm_start_bytes > t->hwm_bytes)
                t->hwm_bytes = t->hwm_start_bytes;
        }
    }
    int root_reaped = p->procs[0].ending == ENDED_REAPED;
    if (root_reaped && !p->previous_boottime_ns)
        return -ESRCH; /* gone before the first reading: nothing to give */
    forget_ended(p);
    if (root_reaped) {
        count_root_tail(p, boot_ns);
        /* Its last values seen stand in for it in this final reading. */
        rss_pages += p->procs[0].rss_pages;
        rm__metrics_add_last_seen(&p->metrics, &p->procs[0].metrics);
        p->root_gone = 1;
    } else {
        if (!baseline)
            refresh_root_peak(p, boot_ns);
        if (p->root_is_our_child)
            p->our_children_ns = our_children_cpu_ns(p->our_children_switches);
        if (baseline) {
            p->root_start_switches[0] = p->procs[0].metrics.last[RM__VOLUNTARY_SWITCHES];
            p->root_start_switches[1] = p->procs[0].metrics.last[RM__INVOLUNTARY_SWITCHES];
        }
    }
    rm__metrics_finish_reading(&p->metrics, baseline);
    r.rss_bytes = rss_pages * p->page_size;
    int ended = root_exited || root_reaped;
    r.cpu_ns = baseline ? 0 : cpu_to_hand_out(p, boot_ns, ended || p->last_reading);
    p->previous_boottime_ns = boot_ns;
    *out = r;
    return ended ? RM__PROBE_ENDED : 0;
}

int rm__probe_begin(rm__probe *p, rm__probe_reading *out)
{
    p->counted_ns = 0;
    p->reported_ns = 0;
    p->last_reading = 0;
    int rc = read_all(p, out, 1);
    if (rc != 0)
        return rc;
    p->peak_reset_error = 0;
    if (p->keep_peak_marks)
        return 0;
    if (p->watch_peak_marks) { /* the start marks were read with the reading */
        refresh_root_peak(p, p->previous_boottime_ns);
        return 0;
    }
    for (size_t i = p->members; i < p->count; i++) {
        p->procs[i].hwm_bytes = 0; /* read before the reset: not this window's */
        p->procs[i].hwm_read_ns = 0;
        int reset = rm__reset_peak_rss(p->procs[i].dir_fd);
        p->procs[i].peak_reset_ok = reset == 0;
        if (reset < 0 && p->peak_reset_error == 0)
            p->peak_reset_error = reset;
    }
    refresh_root_peak(p, p->previous_boottime_ns); /* known even if it ends before the next reading */
    return 0;
}

int rm__probe_read(rm__probe *p, rm__probe_reading *out)
{
    return read_all(p, out, 0);
}

void rm__probe_end_window(rm__probe *p)
{
    p->last_reading = 1;
}

int rm__probe_peak_rss(rm__probe *p, uint64_t *bytes, resmon_hwm_scope *scope, int *reset_error)
{
    uint64_t peak = p->ended_peak_bytes > p->lifetime_peak_bytes ? p->ended_peak_bytes : p->lifetime_peak_bytes;
    int any = p->ended_peak_known || p->lifetime_peak_bytes > 0, read_error = -ESRCH;
    for (size_t i = p->members; i < p->count; i++) {
        tracked_process *t = &p->procs[i];
        uint64_t value;
        int reaped_root = i == 0 && p->root_gone;
        int rc = reaped_root ? -ESRCH : rm__read_peak_rss(t->dir_fd, &value);
        if (rc == 0 && value > t->hwm_bytes)
            t->hwm_bytes = value; /* a zombie has no mark: its last read stands */
        else if (rc < 0 && i == 0 && !reaped_root)
            read_error = rc; /* the root's reason, e.g. -EMFILE: no descriptor left */
        if (t->hwm_bytes) {
            any = 1;
            if (known_peak(t) > peak)
                peak = known_peak(t);
        }
    }
    if (!any)
        return read_error;
    *bytes = peak;
    *scope = p->peak_reset_error || p->keep_peak_marks ? RESMON_HWM_LIFETIME : RESMON_HWM_WINDOW;
    *reset_error = p->peak_reset_error;
    if (p->watch_peak_marks) {
        /* Exact when no process whose mark stayed put could have peaked
         * above the figure; else the lifetime figure, said to be one. */
        uint64_t window = p->ended_window_bytes, lifetime = p->ended_lifetime_bytes, unrisen = p->ended_unrisen_bytes;
        for (size_t i = p->members; i < p->count; i++)
            note_watched(&p->procs[i], &window, &lifetime, &unrisen);
        int exact = unrisen <= window;
        *bytes = exact ? window : lifetime;
        *scope = exact ? RESMON_HWM_WINDOW : RESMON_HWM_LIFETIME;
    }
    return 0;
}

void rm__probe_pids(rm__probe *p, const pid_t **pids, size_t *count)
{
    if (p->pid_list_cap < p->count) {
        pid_t *grown = realloc(p->pid_list, p->cap * sizeof *grown);
        if (!grown) {
            *pids = NULL;
            *count = 0;
            return;
        }
        p->pid_list = grown;
        p->pid_list_cap = p->cap;
    }
    for (size_t i = p->members; i < p->count; i++)
        p->pid_list[i - p->members] = p->procs[i].pid;
    *pids = p->pid_list;
    *count = p->count - p->members;
}

unsigned rm__probe_generation(const rm__probe *p)
{
    return p->generation;
}
