/*
 * probe_tree.c -- which processes a probe tracks (see probe_state.h):
 * tracking and untracking, the walk of the tree and orphans.  It finds
 * which processes ended and leaves settling their accounts to probe.c: it
 * calls only down (probe_read.c, metrics.c's per-process open and close,
 * proc_tree.c), never into CPU or peak accounting.
 */
#include "probe_state.h"
#include "fileio.h"
#include "regular_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* In a tree, a process's stat is read when it is tracked: its parent and
 * start time (born in the window or before). */
static int reads_stat_at_birth(const rm__probe *p)
{
    return p->include_children;
}

void rm__probe_release(rm__tracked *t)
{
    rm__close_kept(t->statm_fd); /* counted by rm__keep_open */
    rm__close_kept(t->stat_fd);
    t->statm_fd = t->stat_fd = -1;
    int *fds[] = {&t->status_fd, &t->dir_fd};
    rm__process_metrics_close(&t->metrics);
    for (size_t i = 0; i < sizeof fds / sizeof *fds; i++) {
        if (*fds[i] >= 0)
            close(*fds[i]);
        *fds[i] = -1;
    }
}

void rm__probe_untrack_at(rm__probe *p, size_t index)
{
    rm__metrics_left(&p->metrics, &p->procs[index].metrics);
    rm__probe_release(&p->procs[index]);
    p->procs[index] = p->procs[--p->count];
    p->generation++;
}

/* Rebuilds the pid index for the current set (room for every row procs
 * has room for); -ENOMEM leaves it stale, and rm__probe_find scans. */
static int index_rebuild(rm__probe *p)
{
    if (rm__pid_index_reset(&p->index, p->cap) < 0)
        return -ENOMEM;
    for (size_t i = 0; i < p->count; i++)
        rm__pid_index_add(&p->index, p->procs[i].pid, i);
    p->index_generation = p->generation;
    return 0;
}

/* The row of pid, through a hash of the tracked set (a walk of 10 000
 * processes looks each one up: a scan made that quadratic). */
rm__tracked *rm__probe_find(rm__probe *p, pid_t pid)
{
    if (p->index_generation != p->generation || !p->index.cap) {
        if (index_rebuild(p) < 0) {
            for (size_t i = 0; i < p->count; i++)
                if (p->procs[i].pid == pid)
                    return &p->procs[i];
            return NULL;
        }
    }
    for (size_t s = rm__pid_index_first(&p->index, pid); p->index.slots[s]; s = rm__pid_index_next(&p->index, s))
        if (p->procs[p->index.slots[s] - 1].pid == pid)
            return &p->procs[p->index.slots[s] - 1];
    return NULL;
}

static int open_in(int dir_fd, const char *name, int *fd)
{
    *fd = rm__openat(dir_fd, name, RM__READ_FLAGS);
    return *fd >= 0 ? 0 : errno == ENOENT ? -ESRCH : -errno;
}

/* Starts tracking pid.  A descendant born in the window counts all its CPU
 * time (and its reaped children's) and all its counters, however late it is
 * found: its whole life is the window's, and its parent's counters take
 * that whole life when they reap it (its whole life is what is settled
 * then).  Born since the previous reading was the rule, and a child found
 * later -- its parent's children list reused while the parent's CPU clock
 * had not caught up (a process running on another CPU shows the clock of
 * its last tick), or no descriptor left to track it -- counted only what it
 * did once found: a child that wrote 512 KiB before it was found lost them
 * from the window's I/O when it was reaped (CI of stop 59's landing).  The
 * CPU a late find brings at once is handed out no faster than the tree
 * could have run (rm__probe_cpu_hand_out).  One that is older (missed by an
 * earlier walk, the kernel's children lists being best effort) starts from
 * its current figures, so its past never counts.  A cgroup's member whose
 * parent is a member too was born in the cgroup, and counts so; one whose
 * parent is not may have moved in with a past that was not the cgroup's:
 * born since the previous reading stays its rule.  (The cgroup's listing
 * misses no one, but a listing can fail for want of a descriptor: a member
 * forked meanwhile was found late, review 63 F1.) */
int rm__probe_track(rm__probe *p, pid_t pid, rm__tracked **out)
{
    if (p->count == p->cap) {
        size_t new_cap = p->cap ? p->cap * 2 : 16;
        rm__tracked *grown = realloc(p->procs, new_cap * sizeof *grown);
        if (!grown)
            return -ENOMEM;
        p->procs = grown;
        p->cap = new_cap;
    }
    rm__tracked t = {.pid = pid, .dir_fd = -1, .statm_fd = -1, .stat_fd = -1, .status_fd = -1, .is_self = pid == getpid()};
    rm__process_metrics_init(&t.metrics, 0);
    t.metrics.stands_when_ended = p->count == 0; /* the root (procs[0]) */
    char path[32];
    snprintf(path, sizeof path, "%d", (int)pid);
    t.dir_fd = rm__openat(p->proc_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (t.dir_fd < 0)
        return errno == ENOENT ? -ESRCH : -errno;
    int rc = open_in(t.dir_fd, "statm", &t.statm_fd);
    if (rc == 0 && !rm__keep_open(t.statm_fd)) {
        close(t.statm_fd); /* read through the directory each time */
        t.statm_fd = -1;
    }
    if (rc == 0) {
        if (t.is_self)
            t.cpu_clock = CLOCK_PROCESS_CPUTIME_ID; /* skips the kernel's pid lookup */
        else if (clock_getcpuclockid(pid, &t.cpu_clock) != 0)
            rc = -ESRCH;
    }
    rm__process_reading now = {0};
    if (rc == 0)
        rc = rm__probe_read_process(&t, &now); /* both reads also prove the process readable */
    if (rc == 0 && reads_stat_at_birth(p))
        rc = rm__probe_read_stat(&t, &now);
    /* Found in the tree, so it has a parent: none means reaped (released)
     * since the walk listed it -- see rm__probe_read_stat. */
    if (rc == 0 && now.stat_read && now.st.ppid == 0 && pid != p->root)
        rc = -ESRCH;
    if (rc < 0) {
        rm__probe_release(&t);
        return rc;
    }
    /* The root's stat is kept open from the start whatever the mode: with
     * no descriptor left later, it still tells a zombie from a process
     * whose main thread exited (rm__probe_read_statm). */
    if (p->count == 0 && t.stat_fd < 0 && open_in(t.dir_fd, "stat", &t.stat_fd) == 0)
        rm__count_kept(t.stat_fd); /* whatever the budget: one file a probe */
    /* Unknown birth (statm only: the root, tracked before any reading)
     * counts as "before": never an absurd spike. */
    rm__tracked *parent = now.stat_read ? rm__probe_find(p, now.st.ppid) : NULL;
    int parent_counted = parent && (size_t)(parent - p->procs) >= p->members; /* procs[0] stands for no one there */
    uint64_t born_after = p->members && !parent_counted ? p->previous_boottime_ns : p->window_boottime_ns;
    int born_since = now.stat_read && p->previous_boottime_ns && born_after &&
                     rm__started_after(now.st.starttime, p->ticks_per_sec, born_after);
    t.metrics.count_from_zero = born_since ? ~0u : 0u;
    t.born_in_window = born_since;
    if (p->include_children && p->count > 0)
        rm__probe_sharing_join(p, &t, parent_counted ? parent : NULL);
    if (now.stat_read) {
        t.ppid = now.st.ppid;
        t.threads = now.st.num_threads;
        rm__probe_note_identity(&t, &now.st);
    }
    if (!born_since) {
        t.last_cpu_ns = now.cpu_ns;
        t.children_ns = now.stat_read ? (now.st.cutime + now.st.cstime) * p->tick_ns : 0;
    }
    p->procs[p->count] = t; /* room was made above: parent stays where it is */
    int index_current = p->index_generation == p->generation && rm__pid_index_fits(&p->index, p->cap);
    *out = &p->procs[p->count++];
    p->generation++;
    if (index_current) { /* one more row: added, not rebuilt */
        rm__pid_index_add(&p->index, p->procs[p->count - 1].pid, p->count - 1);
        p->index_generation = p->generation;
    }
    rm__metrics_joined(&p->metrics, &(*out)->metrics, now.stat_read ? &now.st : NULL, now.rss_pages,
                       parent ? &parent->metrics : NULL, (*out)->share_group[0] != 0);
    return 0;
}

/* Forgets every process found ended (its rows released), once probe.c has
 * settled their accounts (see settle_ended there).  One stable pass: the
 * set keeps parents before children, which the reading relies on (see
 * read_all). */
void rm__probe_drop_ended(rm__probe *p)
{
    size_t kept = 1;
    for (size_t i = 1; i < p->count; i++) {
        if (p->procs[i].ending) {
            rm__probe_release(&p->procs[i]);
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
static int still_alive(rm__tracked *t, pid_t *ppid)
{
    rm__process_reading now = {0};
    /* Through the descriptors kept open on it, a process already reaped still
     * reads (statm as zeros, like a zombie), but its stat reads gone once it
     * is released: reaped, so its parent's counters now hold it (a reaped
     * child taken for a live one was counted twice). */
    int rc = rm__probe_read_process(t, &now);
    if (rc == 0)
        rc = rm__probe_read_stat(t, &now);
    if (rm__starved(rc)) { /* no descriptor to look with (files past the budget): unknown, so it stays */
        *ppid = t->ppid;
        return 1;
    }
    *ppid = now.st.ppid;
    return rc == 0;
}

/* A process the cgroup no longer lists: alive and not a zombie, so it moved
 * out (its counters so far stay counted), rather than ended -- a zombie is
 * settled as reaped, so its parent's coming cutime increase is not counted
 * twice. */
static int left_cgroup(rm__tracked *t)
{
    pid_t ppid;
    rm__process_reading now;
    now.stat_read = 0;
    if (!still_alive(t, &ppid))
        return 0;
    int rc = rm__probe_read_process(t, &now);
    return rc == 0 ? now.has_memory : rm__starved(rc) && t->has_memory;
}

int rm__probe_tree_use_cgroup(rm__probe *p, const char *dir)
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
        p->walk_roots[n++] = p->self;
    for (size_t i = 1; i < p->count; i++)
        if (p->procs[i].adopted)
            p->walk_roots[n++] = p->procs[i].pid;
    *count = n;
    return 0;
}

/* One walk: new descendants are tracked, those it did not reach settled.
 * 1 when a parent link the walker kept was stale (a process handed to a new
 * parent in the tree): a second walk then finds its descendants. */
static int walk_and_track(rm__probe *p)
{
    size_t root_count;
    int walk_rc = collect_walk_roots(p, &root_count);
    if (walk_rc == 0)
        walk_rc = rm__tree_walk_from(&p->walker, p->walk_roots, root_count);
    if (walk_rc < 0) {
        /* The set stays; what it may miss for want of a descriptor (a
         * cgroup's listing that could not be opened) is said, as a walk's
         * unlisted parents are: it was nowhere (review 63 F1). */
        if (walk_rc == -EMFILE || walk_rc == -ENFILE)
            p->untrackable = p->untrackable ? p->untrackable : 1;
        return -1;
    }
    int walk_again = 0;
    p->walk++;
    p->procs[0].seen_walk = p->walk;
    /* A process whose children the walker could not list for want of a
     * descriptor: its subtree may be missing, and is counted here too. */
    p->untrackable = p->walker.unwalked;
    for (size_t i = 0; i < p->walker.found_len; i++) {
        pid_t pid = p->walker.found[i];
        rm__tracked *t = rm__probe_find(p, pid);
        int tracked_before = t != NULL; /* a new one's stat, read at its track, is newer than the lists */
        int rc = t ? 0 : rm__probe_track(p, pid, &t);
        if (rc < 0) {
            /* Not ours to read, or no descriptor left to read it with (the
             * hard limit on open files reached): counted, never silently
             * missing.  Gone, or out of memory, is neither. */
            p->untrackable += rm__read_refused(rc) || rc == -EMFILE || rc == -ENFILE;
            continue;
        }
        t->seen_walk = p->walk;
        /* Listed under a tracked parent its stat did not show: handed to it
         * (its parent ended, and a subreaper took it), which folds its life
         * into its own counters when it reaps it.  A sleeper's stat is not
         * read again, so its ppid stayed the dead parent's: nothing was
         * settled, and its life counted twice (review 63 F3: CPU 0.59 s
         * against the kernel's 0.29, wchar doubled). */
        pid_t parent = p->walker.found_parent ? p->walker.found_parent[i] : 0;
        if (tracked_before && parent > 0 && parent != t->ppid && t != &p->procs[0] && rm__probe_find(p, parent))
            t->ppid = parent;
    }
    for (size_t i = 1; i < p->count; i++) {
        rm__tracked *t = &p->procs[i];
        pid_t ppid;
        if (t->seen_walk == p->walk || t->ending)
            continue;
        if (p->members) { /* no longer listed: moved out of the cgroup, or ended */
            t->ending = left_cgroup(t) ? ENDED_LEFT : ENDED_REAPED;
            continue;
        }
        if (still_alive(t, &ppid)) {
            t->seen_walk = p->walk;
            t->ppid = ppid; /* a dead parent's pid, reused by a tracked process, took its settle */
            if (!rm__probe_find(p, ppid))
                t->adopted = 1; /* an orphan: the next walks start from it */
            else
                walk_again |= rm__tree_walker_note_parent(&p->walker, t->pid, ppid);
        } else {
            t->ending = ENDED_REAPED;
        }
    }
    return walk_again;
}

/* Brings the tracked set up to date with the tree: new descendants are
 * tracked, and those that ended are marked (ending) for the caller to settle
 * and drop.  A walk that runs out of memory keeps the old set: a sample of
 * the known processes beats none.  Returns how many of the tracked
 * processes are marked ended. */
/* Before a walk of children lists: every tracked process's CPU clock, read
 * once (in order, parents first) and told to the walker, which reuses the
 * lists of those that did not run (see rm__tree_walker_note_clock).  The
 * reading that follows takes these for its own where it may (read_all), so
 * a sleeping process costs this one read. */
static void read_clocks_for_walk(rm__probe *p)
{
    if (!rm__tree_walker_takes_notes(&p->walker))
        return;
    for (size_t i = p->members; i < p->count; i++) {
        rm__tracked *t = &p->procs[i];
        t->clock_read = rm__probe_read_cpu(t, &t->clock_ns) == 0;
        t->clock_walk = p->walk + 1;
        rm__tree_walker_note_clock(&p->walker, t->pid, t->clock_read, t->clock_ns);
    }
}

size_t rm__probe_refresh_tree(rm__probe *p)
{
    read_clocks_for_walk(p);
    int rc = walk_and_track(p);
    if (rc == 1)
        walk_and_track(p);
    size_t ended = 0;
    for (size_t i = 1; i < p->count; i++)
        ended += p->procs[i].ending != STILL_TRACKED;
    return ended;
}
