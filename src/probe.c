/*
 * probe.c -- CPU time and resident memory of a process or process tree
 * (see probe.h): opening and closing a probe, and one reading, which reads
 * each tracked process once (probe_read.c) and hands the figures to the
 * concerns split out in probe_tree.c, probe_cpu.c, probe_peak.c and
 * metrics.c (see probe_state.h).  It alone calls them all: the walk
 * (probe_tree.c) says which processes ended, and this file hands those to
 * CPU, peak and metric settlement, so no file below calls back up.
 */
#include "probe.h"
#include "probe_state.h"
#include "internal.h"
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

int rm__probe_open(rm__probe **out, pid_t pid, int include_children, const char *proc_root)
{
    rm__probe *p = calloc(1, sizeof *p);
    if (!p)
        return -ENOMEM;
    p->root = pid ? pid : getpid();
    p->include_children = include_children;
    p->wide_refresh_ns = IDLE_STATM_REFRESH_WIDE_NS;
    p->page_size = (uint64_t)sysconf(_SC_PAGESIZE);
    p->ticks_per_sec = sysconf(_SC_CLK_TCK);
    p->tick_ns = p->ticks_per_sec > 0 ? 1000000000u / (uint64_t)p->ticks_per_sec : 0;
    p->cpu.online_cpus = sysconf(_SC_NPROCESSORS_ONLN);
    rm__metrics_init(&p->metrics, 0, 0, include_children, p->ticks_per_sec);
    p->proc_fd = open(proc_root ? proc_root : "/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int rc = p->proc_fd < 0 ? -errno : 0;
    if (rc == 0)
        rc = rm__check_proc_namespace(p->proc_fd, !proc_root || strcmp(proc_root, "/proc") == 0);
    rm__keep_open_limit_refresh(); /* before the root is tracked: its files too */
    if (rc == 0 && include_children)
        rm__tree_walker_init(&p->walker, p->proc_fd,
                             secure_getenv("RESMON_FORCE_PROC_SCAN") ? RM__TREE_SCAN : RM__TREE_AUTO);
    rm__tracked *root;
    if (rc == 0)
        rc = rm__probe_track(p, p->root, &root);
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
    p->cpu.root_is_our_child = include_children && root->ppid == getpid();
    int subreaper = 0;
    p->adopts_orphans = p->cpu.root_is_our_child && prctl(PR_GET_CHILD_SUBREAPER, &subreaper, 0, 0, 0) == 0 && subreaper;
    p->self = getpid(); /* the sampler runs in this process: a forked copy opens its own probe */
    if (p->adopts_orphans)
        rm__tree_walker_note_reaper(&p->walker, p->self, p->root);
    *out = p;
    return 0;
}

void rm__probe_collect(rm__probe *p, unsigned groups, double memory_detail_interval_sec)
{
    rm__metrics_free(&p->metrics);
    rm__metrics_init(&p->metrics, groups, memory_detail_interval_sec, p->include_children, p->ticks_per_sec);
    rm__metrics_open_network(&p->metrics, p->proc_fd, p->root);
    p->groups_read_stat = rm__metrics_need_stat(&p->metrics);
}

void rm__probe_fill_metrics(const rm__probe *p, resmon_sample *s)
{
    rm__metrics_fill_sample(&p->metrics, s);
}

void rm__probe_copy_metrics(const resmon_sample *from, resmon_sample *to)
{
    rm__metrics_copy_sample(from, to);
}

void rm__probe_keep_peak_marks(rm__probe *p)
{
    p->peak.keep_marks = 1;
}

void rm__probe_watch_peak_marks(rm__probe *p)
{
    p->peak.watch_marks = 1;
}

void rm__probe_close(rm__probe *p)
{
    if (!p)
        return;
    while (p->count > 0)
        rm__probe_untrack_at(p, p->count - 1);
    free(p->procs);
    rm__pid_index_free(&p->index);
    free(p->pid_list);
    free(p->walk_roots);
    rm__probe_sharing_free(p);
    rm__metrics_free(&p->metrics);
    if (p->include_children)
        rm__tree_walker_free(&p->walker);
    if (p->proc_fd >= 0)
        close(p->proc_fd);
    free(p);
}

/* Whether this reading reads a process's stat: every reading when a metric
 * group needs it; in a tree, at the baseline, when a tracked child of it
 * was reaped, and else on the CHILDREN_CPU_REFRESH_NS schedule.  Either way
 * once.  *tree_due: the tree's schedule asked (a failure then means gone,
 * but for -EMFILE / -ENFILE: a stat past the budget of kept files,
 * rm__keep_open, is opened at each reading and may find no descriptor). */
static int stat_wanted(const rm__probe *p, const rm__tracked *t, const rm__process_reading *now, uint64_t boot_ns,
                       int baseline, int idle, int *tree_due)
{
    *tree_due = 0;
    if (p->include_children) {
        int ran = now->cpu_ns != t->stat_cpu_ns;
        int due = p->last_reading || !now->has_memory || boot_ns - t->stat_read_ns >= CHILDREN_CPU_REFRESH_NS;
        *tree_due = baseline || t->stat_due || (ran && due);
    }
    return *tree_due || (p->groups_read_stat && !idle);
}

/* A process that has not run since its previous reading (its CPU clock
 * stood still) cannot have changed what stat, status and io show of it --
 * faults, switches, I/O, threads, size, reaped children all take running --
 * so a reading of the groups takes their latest figures unread (the window's
 * first and last readings read everything).  A sleeping process then costs
 * its CPU clock and statm.  The clock of a process running elsewhere moves
 * at the kernel's ticks: a figure stands at most a tick longer, never lost
 * (the counters are lifetime values). */
static int is_idle(const rm__probe *p, const rm__tracked *t, const rm__process_reading *now, int baseline)
{
    return !baseline && !p->last_reading && !t->stat_due && t->read_once && now->cpu_ns == t->last_cpu_ns &&
           !t->metrics.reread && !rm__probe_in_sharing_group(t); /* a group's levels move with any member */
}

/* Whether a process's latest statm stands for this reading: it did not run
 * since (its CPU clock stood still), so only reclaim or swap could have
 * changed its resident set, and no refresh came due since it was read.
 * Each process is refreshed on a grid of its own: every
 * IDLE_STATM_REFRESH_NS (in a wide tree IDLE_STATM_REFRESH_WIDE_NS, or
 * IDLE_STATM_REFRESH_LEAF_NS once its totals are its leaf's),
 * offset by a share of the interval drawn from its pid.  Counted from
 * each one's latest read, the processes of a pool forked together, or
 * that ran together and then slept, were refreshed all in one reading
 * (10 000 sleepers' statm reads in one sample of a --pid run every 10 s,
 * none in the 99 others); on their own grids each reading refreshes about
 * the same share, and a reading is still never older than the interval.
 * The root (its zombie is the target's end) and the window's first and
 * last readings always read it.  A sleeping process then costs its CPU
 * clock alone here. */
static int statm_stands(const rm__probe *p, const rm__tracked *t, uint64_t cpu_ns, size_t i, uint64_t boot_ns,
                        int baseline)
{
    if (i == 0 || baseline || p->last_reading || cpu_ns != t->last_cpu_ns || t->statm_read_ns == 0 ||
        t->share_group[0])
        return 0; /* a sharing group's memory moves when any member runs: read */
    uint64_t refresh_ns = p->count > RM__WIDE_TREE_PROCESSES ? p->wide_refresh_ns : IDLE_STATM_REFRESH_NS;
    uint64_t phase_ns = ((uint64_t)(uint32_t)t->pid * 2654435761u) % refresh_ns;
    return (boot_ns + phase_ns) / refresh_ns == (t->statm_read_ns + phase_ns) / refresh_ns;
}

/* Whether the clock read before this reading's walk stands for the reading
 * (no second read): the process did not run since its previous reading,
 * and no process read before it in this reading counted a reaped child
 * (cutime, or the groups' counters of a process that ran).  A process
 * reaped between the two reads would be counted twice until the next
 * reading found it gone: read after its parent, as the order below
 * promises, it is found gone now.  The root (its end is the target's) and
 * the window's first and last readings read it afresh. */
static int clock_read_stands(const rm__probe *p, const rm__tracked *t, size_t i, int baseline, int reaps_counted)
{
    return i != 0 && !baseline && !p->last_reading && !reaps_counted && t->clock_walk == p->walk &&
           t->clock_read && t->clock_ns == t->last_cpu_ns;
}

/* Settles every process found ended (by the walk or by this reading) and
 * then has the tree forget them: the CPU taken off for a reaped child whose
 * parent is tracked, the peak it keeps for the window, its metric-group
 * counters.  All are settled before any is forgotten: a parent that ended in
 * the same interval as its child still takes the child's credit. */
static void settle_ended(rm__probe *p)
{
    for (size_t i = 1; i < p->count; i++) {
        const rm__tracked *t = &p->procs[i];
        if (!t->ending)
            continue;
        rm__tracked *parent = t->ending == ENDED_REAPED ? rm__probe_find(p, t->ppid) : NULL;
        /* A cgroup's member reaped by this process (procs[0] there stands
         * for no one, and is never read) settles against no one: its
         * counters fold into a parent no figure counts.  Settled, its I/O
         * was taken off for good and another member's 512 KiB vanished,
         * and the catch-up read of procs[0] added every child this process
         * ever reaped, members or not (review 63 F2). */
        if (parent && (size_t)(parent - p->procs) < p->members)
            parent = NULL;
        if (parent)
            rm__probe_cpu_settle(p, t, parent);
        rm__probe_peak_settle(p, t);
        rm__probe_process_ended(p, t);
    }
    for (size_t i = 1; i < p->count; i++)
        if (p->procs[i].ending)
            rm__metrics_left(&p->metrics, &p->procs[i].metrics);
    rm__probe_drop_ended(p);
}

/* t's statm, into now (its last reading stands when no descriptor was
 * left to read it with).  Returns whether t was found gone. */
static int read_statm(rm__tracked *t, rm__process_reading *now, uint64_t boot_ns)
{
    int rc = rm__probe_read_statm(t, now);
    if (rm__starved(rc)) { /* not kept open, and no descriptor to read it with: its last reading stands */
        now->rss_pages = t->rss_pages;
        now->has_memory = t->has_memory;
        return 0;
    }
    t->statm_read_ns = boot_ns;
    t->has_memory = now->has_memory;
    if (!now->has_memory && rc == 0 && !t->exited_seen_ns)
        t->exited_seen_ns = boot_ns;
    return rc < 0;
}

static int read_all(rm__probe *p, rm__probe_reading *out, int baseline)
{
    if (p->root_gone)
        return -ESRCH; /* its final reading was given */
    struct timespec boot;
    clock_gettime(CLOCK_BOOTTIME, &boot);
    uint64_t boot_ns = rm__timespec_ns(&boot);
    if (baseline)
        p->window_boottime_ns = boot_ns;
    if (p->include_children && rm__probe_refresh_tree(p) > 0)
        settle_ended(p);
    int groups = p->metrics.groups != 0; /* none by default: no call into metrics.c at all */
    if (groups) {
        p->metrics.final_reading = p->last_reading;
        rm__metrics_start_reading(&p->metrics, baseline);
        rm__metrics_count_unreadable(&p->metrics, p->untrackable);
        rm__metrics_plan_pss(&p->metrics, p->generation, boot_ns, p->count);
    }
    /* A wide tree's tree-wide PSS reading is paced by what it costs: timed
     * (the page walks are nearly all of it; the clocks and statm reads
     * timed with them make the pace err on the slow side). */
    int timed = groups && p->metrics.pss_tree_due && p->count > RM__WIDE_TREE_PROCESSES;
    struct timespec cost_start;
    if (timed)
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cost_start);
    rm__probe_reading r = {0};
    uint64_t rss_pages = 0;
    int root_exited = 0;
    size_t gone_count = 0; /* processes this reading found gone */
    /* Parents before children (a process is tracked after its parent): a
     * child that exits and is reaped between the two reads is then either
     * read before its parent's counters hold it, or found gone and settled
     * next reading -- never counted in both at once.  Children first counted
     * a child's I/O and CPU twice when its parent reaped it mid-reading, and
     * the monotonic totals kept the double. */
    int reaps_counted = 0; /* a process read so far may have counted a reaped child's life */
    rm__probe_sharing_begin(p);
    for (size_t i = p->members; i < p->count; i++) {
        rm__tracked *t = &p->procs[i];
        rm__process_reading now; /* read_process fills the rest; st only with stat_read */
        now.stat_read = 0;
        int gone = 0, tree_due;
        if (clock_read_stands(p, t, i, baseline, reaps_counted))
            now.cpu_ns = t->clock_ns;
        else
            gone = rm__probe_read_cpu(t, &now.cpu_ns) < 0;
        if (!gone && statm_stands(p, t, now.cpu_ns, i, boot_ns, baseline)) {
            now.rss_pages = t->rss_pages;
            now.has_memory = t->has_memory;
        } else if (!gone) {
            gone = read_statm(t, &now, boot_ns);
        }
        /* A zombie holds no memory: it never holds its group's (the first
         * member read alive does).  A member no longer left out had its
         * statm read before it was asked: a vfork child that exec'd between
         * the two showed the shared pages there, and is read again (asked
         * after, they were counted twice: a 300 MiB Python's 300 spawns
         * read 620 MiB in one run of three). */
        if (!gone && rm__probe_sharing_wanted(t) &&
            rm__probe_sharing_read(p, t, now.has_memory) & RM__SHARES_MEMORY && now.has_memory)
            gone = read_statm(t, &now, boot_ns);
        int idle = !gone && groups && is_idle(p, t, &now, baseline);
        int stat_starved = 0;
        tree_due = 0;
        if (!gone && (groups || p->include_children) &&
            stat_wanted(p, t, &now, boot_ns, baseline, idle, &tree_due)) {
            int rc = rm__probe_read_stat(t, &now);
            stat_starved = rm__starved(rc);
            gone = rc == -ESRCH || (rc < 0 && tree_due && !stat_starved);
            if (tree_due && !rm__starved(rc)) { /* starved: asked again at the next reading */
                t->stat_read_ns = boot_ns;
                t->stat_cpu_ns = now.cpu_ns;
            }
        }
        if (gone) {
            t->ending = ENDED_REAPED; /* since the walk */
            gone_count++;
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
        uint64_t children_ns = t->children_ns;
        rm__probe_cpu_account(p, t, &now, baseline);
        reaps_counted |= t->children_ns > children_ns || (groups && !idle);
        t->rss_pages = now.rss_pages;
        if (!(t->metrics.shares & RM__SHARES_MEMORY))
            rss_pages += now.rss_pages; /* else another member's pages: counted there */
        r.process_count++;
        if (groups) {
            rm__metrics_read_process(&p->metrics, &t->metrics, t->dir_fd, now.stat_read ? &now.st : NULL,
                                     stat_starved, idle, now.rss_pages, boot_ns, baseline);
            t->read_once = 1;
        }
        uint64_t rss_bytes = now.rss_pages * p->page_size;
        if (rss_bytes > t->peak_rss_bytes)
            t->peak_rss_bytes = rss_bytes; /* the sampled peak; the marks in probe_peak.c */
        if (p->peak.keep_marks || p->peak.watch_marks)
            rm__probe_peak_marks_after_read(p, t, &now);
    }
    int root_reaped = p->procs[0].ending == ENDED_REAPED;
    if (root_reaped && !p->previous_boottime_ns)
        return -ESRCH; /* gone before the first reading: nothing to give */
    if (gone_count > 0)
        settle_ended(p);
    if (p->stat_due_pending)
        rm__probe_cpu_catch_up(p);
    if (root_reaped) {
        rm__probe_cpu_root_tail(p, boot_ns);
        /* Its last values seen stand in for it in this final reading, but
         * for those a live member of its groups holds. */
        rm__probe_sharing_stand_in(p, &p->procs[0]);
        if (!(p->procs[0].metrics.shares & RM__SHARES_MEMORY))
            rss_pages += p->procs[0].rss_pages;
        if (groups)
            rm__metrics_add_last_seen(&p->metrics, &p->procs[0].metrics);
        p->root_gone = 1;
    } else {
        if (!baseline && !p->procs[0].is_self)
            rm__probe_peak_refresh_root(p, boot_ns);
        if (baseline || p->cpu.root_is_our_child)
            rm__probe_cpu_note_children(p, baseline);
    }
    rm__probe_sharing_end(p);
    if (groups)
        rm__metrics_finish_reading(&p->metrics, baseline);
    if (timed) {
        struct timespec cost_end;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cost_end);
        rm__metrics_tree_read_cost(&p->metrics, rm__timespec_ns(&cost_end) - rm__timespec_ns(&cost_start));
    }
    r.rss_bytes = rss_pages * p->page_size;
    int ended = root_exited || root_reaped;
    r.cpu_ns = baseline ? 0 : rm__probe_cpu_hand_out(p, boot_ns, ended || p->last_reading);
    p->previous_boottime_ns = boot_ns;
    *out = r;
    return ended ? RM__PROBE_ENDED : 0;
}

int rm__probe_begin(rm__probe *p, rm__probe_reading *out)
{
    rm__probe_cpu_begin(p);
    p->last_reading = 0;
    int rc = read_all(p, out, 1);
    if (rc != 0)
        return rc;
    rm__probe_peak_begin(p);
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

int rm__probe_root_running(rm__probe *p)
{
    if (p->members || p->root_gone || p->last_reading)
        return 0;
    rm__process_reading now;
    now.stat_read = 0;
    return rm__probe_read_statm(&p->procs[0], &now) == 0 && now.has_memory;
}

uint64_t rm__probe_cpu_pending(const rm__probe *p)
{
    int64_t pending = p->cpu.counted_ns - (int64_t)p->cpu.reported_ns;
    return pending > 0 ? (uint64_t)pending : 0;
}

uint64_t rm__probe_cpu_counted(const rm__probe *p)
{
    return p->cpu.counted_ns > 0 ? (uint64_t)p->cpu.counted_ns : 0;
}

uint64_t rm__probe_cpu_discovered(const rm__probe *p)
{
    return p->cpu.discovered_ns;
}

void rm__probe_cpu_discovery_from(rm__probe *p, uint64_t boottime_ns)
{
    p->cpu.discovery_from_ns = boottime_ns;
}

void rm__probe_set_leaf_refresh(rm__probe *p, int leaf)
{
    p->wide_refresh_ns = leaf ? IDLE_STATM_REFRESH_LEAF_NS : IDLE_STATM_REFRESH_WIDE_NS;
}

uint64_t rm__probe_wide_refresh_ns(const rm__probe *p)
{
    return p->wide_refresh_ns;
}

void rm__probe_cpu_rebase(rm__probe *p, uint64_t handed_ns)
{
    uint64_t counted = rm__probe_cpu_counted(p);
    p->cpu.reported_ns = handed_ns < counted ? handed_ns : counted;
}

long rm__probe_online_cpus(const rm__probe *p)
{
    return p->cpu.online_cpus;
}

unsigned rm__probe_generation(const rm__probe *p)
{
    return p->generation;
}

/* probe.h's functions whose work is one concern's: this file is the face. */
int rm__probe_members_of_cgroup(rm__probe *p, const char *dir)
{
    return rm__probe_tree_use_cgroup(p, dir);
}

int rm__probe_peak_rss(rm__probe *p, uint64_t *bytes, resmon_hwm_scope *scope, int *reset_error)
{
    return rm__probe_peak_read(p, bytes, scope, reset_error);
}

int rm__probe_keep_processes(rm__probe *p, struct rm__process_list *list)
{
    return rm__probe_processes_keep(p, list);
}

void rm__probe_processes_end(rm__probe *p)
{
    rm__probe_processes_close(p);
}
