/*
 * probe.c -- CPU time and resident memory of a process or process tree
 * (see probe.h).
 */
#include "probe.h"
#include "internal.h"
#include "proc_tree.h"
#include "procfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct tracked_process {
    pid_t pid;
    int dir_fd;          /* /proc/PID, for status and clear_refs */
    int statm_fd;        /* kept open, re-read with pread each sample */
    clockid_t cpu_clock; /* the process's CPU clock: all its threads, in ns */
    uint64_t last_cpu_ns;
    uint64_t last_rss_pages; /* the latest reading while it had memory */
    unsigned seen_walk;  /* the walk that last found it (tree mode) */
    int peak_reset_ok;
} tracked_process;

struct rm__probe {
    int proc_fd;
    pid_t root;
    int include_children;
    int peak_reset_refused;
    int keep_peak_marks;     /* never reset: follow each lifetime peak instead */
    uint64_t lifetime_peak_bytes; /* largest mark read so far (keep_peak_marks) */
    unsigned walk;
    uint64_t page_size;
    rm__tree_walker walker;
    tracked_process *procs; /* procs[0] is the root */
    size_t count, cap;
    pid_t *pid_list;        /* for rm__probe_pids */
    size_t pid_list_cap;
    long ticks_per_sec;     /* stat's clock ticks */
    uint64_t previous_boottime_ns; /* CLOCK_BOOTTIME of the previous reading */
    long online_cpus;       /* a tree cannot use more CPU than this */
    unsigned generation;    /* bumped when the tracked set changes */
};

static void untrack_at(rm__probe *p, size_t index)
{
    tracked_process *t = &p->procs[index];
    if (t->statm_fd >= 0)
        close(t->statm_fd);
    if (t->dir_fd >= 0)
        close(t->dir_fd);
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

/* Resident pages; *has_memory is 0 for a zombie (its memory is gone). */
static int read_rss_pages(const tracked_process *t, uint64_t *pages, int *has_memory)
{
    char text[128];
    ssize_t n = rm__pread_file(t->statm_fd, text, sizeof text);
    if (n < 0)
        return (int)n;
    uint64_t size_pages;
    int rc = rm__parse_statm(text, (size_t)n, &size_pages, pages);
    *has_memory = size_pages != 0;
    return rc;
}

/* Whether pid started after the previous reading.  Unknown (stat unreadable)
 * counts as "before": never an absurd spike. */
static int born_since_previous_reading(const rm__probe *p, int dir_fd)
{
    if (!p->previous_boottime_ns)
        return 0;
    char text[1024];
    ssize_t n = rm__read_file_at(dir_fd, "stat", text, sizeof text);
    rm__proc_stat st;
    if (n <= 0 || rm__parse_stat(text, (size_t)n, &st) < 0)
        return 0;
    return rm__started_after(st.starttime, p->ticks_per_sec, p->previous_boottime_ns);
}

/* Starts tracking pid.  A process born since the previous reading counts all
 * its CPU time in this interval (baseline 0); one that is older -- missed by
 * an earlier walk, the kernel's children lists being best effort -- starts
 * from its current CPU time, so its past never shows as a spike. */
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
    tracked_process t = {.pid = pid, .dir_fd = -1, .statm_fd = -1};
    char path[32];
    snprintf(path, sizeof path, "%d", (int)pid);
    t.dir_fd = openat(p->proc_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (t.dir_fd < 0)
        return errno == ENOENT ? -ESRCH : -errno;
    t.statm_fd = openat(t.dir_fd, "statm", O_RDONLY | O_CLOEXEC);
    int rc = t.statm_fd < 0 ? (errno == ENOENT ? -ESRCH : -errno) : 0;
    if (rc == 0) {
        if (pid == getpid())
            t.cpu_clock = CLOCK_PROCESS_CPUTIME_ID; /* skips the kernel's pid lookup */
        else if (clock_getcpuclockid(pid, &t.cpu_clock) != 0)
            rc = -ESRCH;
    }
    uint64_t cpu_now = 0, rss_pages;
    int has_memory;
    if (rc == 0)
        rc = read_cpu_ns(&t, &cpu_now); /* both reads also prove the process readable */
    if (rc == 0)
        rc = read_rss_pages(&t, &rss_pages, &has_memory);
    if (rc < 0) {
        if (t.statm_fd >= 0)
            close(t.statm_fd);
        close(t.dir_fd);
        return rc;
    }
    if (!born_since_previous_reading(p, t.dir_fd))
        t.last_cpu_ns = cpu_now;
    p->procs[p->count] = t;
    *out = &p->procs[p->count++];
    p->generation++;
    return 0;
}

int rm__probe_open(rm__probe **out, pid_t pid, int include_children)
{
    rm__probe *p = calloc(1, sizeof *p);
    if (!p)
        return -ENOMEM;
    p->root = pid ? pid : getpid();
    p->include_children = include_children;
    p->page_size = (uint64_t)sysconf(_SC_PAGESIZE);
    p->ticks_per_sec = sysconf(_SC_CLK_TCK);
    p->online_cpus = sysconf(_SC_NPROCESSORS_ONLN);
    p->proc_fd = open(rm__proc_root(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int rc = p->proc_fd < 0 ? -errno : 0;
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
    *out = p;
    return 0;
}

void rm__probe_keep_peak_marks(rm__probe *p)
{
    p->keep_peak_marks = 1;
}

void rm__probe_close(rm__probe *p)
{
    if (!p)
        return;
    while (p->count > 0)
        untrack_at(p, p->count - 1);
    free(p->procs);
    free(p->pid_list);
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

/* Brings the tracked set up to date with the tree: new descendants are
 * tracked, processes no longer in it are dropped.  A walk that runs out of
 * memory keeps the old set: a sample of the known processes beats none. */
static void refresh_tree(rm__probe *p)
{
    if (rm__tree_walk(&p->walker, p->root) < 0)
        return;
    p->walk++;
    p->procs[0].seen_walk = p->walk;
    for (size_t i = 0; i < p->walker.found_len; i++) {
        pid_t pid = p->walker.found[i];
        tracked_process *t = find_tracked(p, pid);
        if (!t && track(p, pid, &t) < 0)
            continue; /* gone already, or not ours to read */
        t->seen_walk = p->walk;
    }
    for (size_t i = p->count; i-- > 1;)
        if (p->procs[i].seen_walk != p->walk)
            untrack_at(p, i);
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
    struct timespec boot;
    clock_gettime(CLOCK_BOOTTIME, &boot);
    if (p->include_children)
        refresh_tree(p);
    rm__probe_reading r = {0};
    uint64_t rss_pages = 0;
    int root_exited = 0;
    for (size_t i = p->count; i-- > 0;) {
        tracked_process *t = &p->procs[i];
        uint64_t cpu_ns, pages;
        int has_memory = 1;
        int rc = read_cpu_ns(t, &cpu_ns);
        if (rc == 0)
            rc = read_rss_pages(t, &pages, &has_memory);
        if (i == 0 && rc == 0 && !has_memory) {
            /* A zombie: its last CPU time still counts, and the memory it
             * held until it exited stands in for the 0 a zombie reads, so
             * that the window ends on what the process used, not on its
             * release (memory_growth_mb, means). */
            root_exited = 1;
            pages = t->last_rss_pages;
        } else if (rc == 0) {
            t->last_rss_pages = pages;
        }
        if (rc < 0) {
            if (i == 0)
                return -ESRCH; /* the root has ended: so has the target */
            untrack_at(p, i); /* ended between the walk and now */
            continue;
        }
        if (!baseline && cpu_ns > t->last_cpu_ns)
            r.cpu_ns += cpu_ns - t->last_cpu_ns;
        t->last_cpu_ns = cpu_ns;
        rss_pages += pages;
        r.process_count++;
        if (p->keep_peak_marks && has_memory)
            follow_peak_mark(p, t);
    }
    r.rss_bytes = rss_pages * p->page_size;
    /* No set of processes can use more CPU than the machine has: a reading
     * above that (a process's past time landing in one interval) is cut to
     * it rather than shown as an absurd percentage. */
    uint64_t boot_ns = rm__timespec_ns(&boot);
    if (!baseline && p->previous_boottime_ns && p->online_cpus > 0 && boot_ns > p->previous_boottime_ns) {
        uint64_t most_ns = (uint64_t)p->online_cpus * (boot_ns - p->previous_boottime_ns);
        if (r.cpu_ns > most_ns)
            r.cpu_ns = most_ns;
    }
    p->previous_boottime_ns = boot_ns;
    *out = r;
    return root_exited ? RM__PROBE_ENDED : 0;
}

int rm__probe_begin(rm__probe *p, rm__probe_reading *out)
{
    int rc = read_all(p, out, 1);
    if (rc != 0)
        return rc;
    p->peak_reset_refused = 0;
    if (p->keep_peak_marks)
        return 0;
    for (size_t i = 0; i < p->count; i++) {
        p->procs[i].peak_reset_ok = rm__reset_peak_rss(p->procs[i].dir_fd) == 0;
        if (!p->procs[i].peak_reset_ok)
            p->peak_reset_refused = 1;
    }
    return 0;
}

int rm__probe_read(rm__probe *p, rm__probe_reading *out)
{
    return read_all(p, out, 0);
}

int rm__probe_peak_rss(rm__probe *p, uint64_t *bytes, resmon_hwm_scope *scope)
{
    uint64_t peak = p->lifetime_peak_bytes;
    int any = p->lifetime_peak_bytes > 0;
    for (size_t i = 0; i < p->count; i++) {
        uint64_t value;
        if (rm__read_peak_rss(p->procs[i].dir_fd, &value) == 0) {
            any = 1;
            if (value > peak)
                peak = value;
        }
    }
    if (!any)
        return -ESRCH;
    *bytes = peak;
    *scope = p->peak_reset_refused || p->keep_peak_marks ? RESMON_HWM_LIFETIME : RESMON_HWM_WINDOW;
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
    for (size_t i = 0; i < p->count; i++)
        p->pid_list[i] = p->procs[i].pid;
    *pids = p->pid_list;
    *count = p->count;
}

unsigned rm__probe_generation(const rm__probe *p)
{
    return p->generation;
}
