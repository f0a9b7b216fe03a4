/*
 * probe_state.h -- the probe's state: the ground floor of the files that
 * split its work by concern (see probe.h, the face that probe.c alone
 * implements, for what a reading gives):
 *
 *   probe.c       opening, closing, and one reading (read_all): it reads
 *                 each tracked process once -- CPU clock, statm and, when
 *                 anything needs it, stat, parsed once into the row -- and
 *                 hands the parsed figures to the files below; it settles
 *                 the processes the walk or the reading found ended
 *   probe_tree.c  tree membership: which processes are tracked, the walk
 *                 (which marks those that ended), orphans
 *   probe_cpu.c   CPU accounting: the counted/reported carry, the CPU of
 *                 reaped children (cutime/cstime), the root's tail
 *   probe_peak.c  the kernel's peak-RSS marks: reset, keep or watch them
 *   probe_processes.c  the per-process records (process_list.h): a row's
 *                 figures handed over when it ends and at the window's end
 *   probe_read.c  the reads of one process (CPU clock, statm, stat): a leaf
 *   probe_sharing.c  processes that share their parent's memory or file
 *                 table (clone(CLONE_VM), a vfork child): counted once
 *
 * Calls point one way: probe.c calls the others; probe_tree.c and
 * probe_cpu.c call probe_read.c (and metrics.c); none calls probe.c, and
 * neither probe_tree.c nor probe_cpu.c nor probe_peak.c calls another of them;
 * probe_processes.c reads rows only (rm__probe_known_peak below).  This
 * header includes nothing of probe.c's: the files below probe.c see its state
 * and their own functions here, and probe.h's functions are all probe.c's
 * (those whose work is a concern's hand it on: rm__probe_peak_rss to
 * rm__probe_peak_read, and so on).
 *
 * A tracked process is one row (rm__tracked): its /proc files, its CPU
 * accounting, its peak marks and its metric-group counters (metrics.h), so
 * a reading reads each /proc file of a process at most once.
 */
#ifndef RESMON_PROBE_STATE_H
#define RESMON_PROBE_STATE_H

#include "metrics.h"
#include "pid_index.h"
#include "proc_tree.h"
#include "procfs.h"
#include "process_list.h"

#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

typedef struct rm__probe rm__probe; /* as probe.h says: C11 allows the repeat */

/* The kinds of sharing probe_sharing.c follows: an address space
 * (RM__SHARES_MEMORY) and a file table (RM__SHARES_FILES). */
#define RM__SHARING_KINDS 2

/* A group's holder in the current reading (probe_sharing.c). */
typedef struct rm__share_holder {
    pid_t group, pid;
    size_t kind;
    unsigned left_out; /* members left out for it in the reading */
    uint64_t image;    /* memory kind: its stat's startstack, read before the
                          statm it holds the group's levels with (0: unknown) */
} rm__share_holder;

/* One tracked process: the one row every concern reads and writes. */
typedef struct rm__tracked {
    pid_t pid;
    pid_t ppid;          /* tree mode: its parent at the latest stat read */
    int dir_fd;          /* /proc/PID, for status, clear_refs and the groups' files */
    int statm_fd;        /* kept open, re-read with pread each sample */
    int stat_fd;         /* opened when stat is first needed (-1 before): read
                            once per reading at most, for everyone */
    int status_fd;       /* the root's status, for its peak mark: opened at the
                            first refresh (-1 before), re-read with pread */
    clockid_t cpu_clock; /* the process's CPU clock: all its threads, in ns */
    int is_self;         /* this very process: it cannot end before stop */
    int read_once;       /* a reading has read it (its figures stand when idle) */
    /* CPU accounting (probe_cpu.c) */
    uint64_t last_cpu_ns;  /* its CPU clock at the latest reading */
    uint64_t children_ns;  /* tree mode: cutime + cstime at the latest stat
                              read, the CPU of the children it has reaped */
    uint64_t stat_read_ns; /* when (CLOCK_BOOTTIME) stat was last read */
    uint64_t stat_cpu_ns;  /* its CPU clock then */
    uint64_t threads;      /* its threads at the latest stat read (0: unknown) */
    int stat_due;          /* a tracked child of it was reaped: read its stat
                              in this reading, whatever the schedule */
    /* memory and peak marks (probe_peak.c) */
    uint64_t rss_pages;      /* the latest reading while it had memory */
    uint64_t statm_read_ns;  /* when (CLOCK_BOOTTIME) statm was last read */
    int has_memory;          /* statm then showed any (0: a zombie) */
    uint64_t exited_seen_ns; /* the first reading whose statm showed it a zombie
                                (0: none): its end, however late its reap */
    uint64_t peak_rss_bytes; /* the largest RSS sampled */
    uint64_t hwm_bytes;      /* the latest VmHWM read during the window (0: none) */
    uint64_t hwm_read_ns;    /* when (CLOCK_BOOTTIME) */
    uint64_t hwm_start_bytes; /* watch_peak_marks: VmHWM at its first reading of the window
                                 (0 for one born in the window: its mark is the window's) */
    int hwm_start_known;
    uint64_t hwm_kept_cpu_ns; /* keep_peak_marks: its CPU clock at the latest mark read */
    int hwm_kept_read;        /* ... and there was one */
    int peak_reset_ok;
    uint64_t hwm_mark_cpu_ns; /* its CPU clock (latest reading) when rm__probe_peak_rss last read its mark */
    int hwm_mark_read;        /* ... and there was such a read this window */
    /* membership (probe_tree.c) */
    unsigned seen_walk;  /* the walk that last found it (tree mode) */
    /* Its CPU clock read before the walk `clock_walk` (clock_read: it could
     * be), told to the walker so that a process that did not run has its
     * children lists reused; the reading after that walk takes it for its
     * own where nothing could have reaped it since (see read_all). */
    uint64_t clock_ns;
    unsigned clock_walk;
    int clock_read;
    int ending;          /* this reading found it ENDED_REAPED */
    /* identity, from its latest stat read (tree mode: rm__probe_note_identity) */
    char comm[RM__COMM_MAX]; /* a name changes at exec: the latest read stands */
    uint64_t start_ticks;    /* stat's starttime: clock ticks after boot */
    int born_in_window;  /* its whole life is the window's (rm__probe_track) */
    int adopted;         /* tree mode: its parent ended (it is an orphan), yet
                            it stays in the tree, and the walk starts from it */
    /* sharing (probe_sharing.c): per kind (memory, files), the group of
     * tracked processes found sharing one, named by its first member's pid
     * (0: none); metrics.shares says which it is left out of now */
    pid_t share_group[RM__SHARING_KINDS];
    int sharing_unchecked;   /* its parent was not tracked at its join */
    unsigned sharing_checked_generation; /* the tracked set it was last asked against */
    /* the metric groups' counters and levels (metrics.c) */
    rm__process_metrics metrics;
} rm__tracked;

/* Why a process stops being tracked: only by ending.  A process leaves its
 * parent's tree only when the parent ends before it (it is then adopted by
 * a subreaper or init), and it is still the monitored program's work: it
 * stays in the tree until it exits. */
enum { STILL_TRACKED = 0, ENDED_REAPED, ENDED_LEFT /* a cgroup's member moved out (rm__probe_members_of_cgroup) */ };

/* What one reading of one process gives. */
typedef struct rm__process_reading {
    uint64_t cpu_ns, rss_pages;
    int has_memory;    /* 0 for a zombie: its memory is gone */
    int stat_read;     /* st holds this reading's stat */
    rm__proc_stat st;  /* parsed once, used by CPU accounting, the tree and the groups */
} rm__process_reading;

/* The monitored root's VmHWM (a status read, several times the cost of the
 * sample itself) is read at most this often, so that its exact peak survives
 * the root's exit without slowing a fast schedule. */
#define PEAK_REFRESH_NS 10000000u

/* A tree process's stat (cutime, cstime) is re-read at most this often, and
 * only when its CPU clock moved: a process reaps a child only by running.  A
 * reap seen late is counted late, never lost -- cutime only grows, and a
 * process that ends with an old reading leaves the difference in its
 * parent's increase -- so a fast schedule does not pay a stat read per busy
 * process per sample.  (With a metric group that needs stat, it is read
 * every reading anyway, once, for both.)  A reap of a tracked child forces
 * its parent's read (stat_due): the child's credit and the parent's
 * increase then land in the same reading. */
#define CHILDREN_CPU_REFRESH_NS 10000000u

/* A process whose CPU clock stood still since its previous reading did not
 * touch its memory: its resident set changes only by the kernel's reclaim
 * or swap, or by another process writing into it (process_vm_writev,
 * /proc/PID/mem, ptrace, userfaultfd: a 300 MiB write into a sleeping
 * child stood unseen until the refresh, twelfth review of issue 28), and
 * statm is re-read at most this often for it (once a second).  The root and every process in the window's first and last
 * readings are read each time. */
#define IDLE_STATM_REFRESH_NS 1000000000u
/* ... and in a wide tree (more than RM__WIDE_TREE_PROCESSES), every 10 s:
 * 1000 sleeping processes then cost their CPU clocks alone at most
 * readings (a statm read each was ~40 % of such a walk). */
#define IDLE_STATM_REFRESH_WIDE_NS 10000000000ULL
/* ... or, in a wide tree whose totals come from its leaf cgroup (the walk at
 * its own cadence, every ~15-20 s at 1000 processes: tree_totals.c), every
 * 60 s (rm__probe_set_leaf_refresh): a refresh shorter than the walks' own
 * interval re-read every sleeper's statm at every walk -- 1769 of a 1000-
 * process walk's 2780 system calls -- for a figure that is not the run's
 * memory there (the leaf's is). */
#define IDLE_STATM_REFRESH_LEAF_NS 60000000000ULL

/* The probe: the fields every file reads first, then each concern's own
 * state.  probe.c sets a part up (at open, and the peak modes when asked)
 * and reads it for probe.h's answers (rm__probe_cpu_rebase also moves the
 * CPU carry); while the readings run, only the concern's file and its inline
 * helpers here write it. */
struct rm__probe {
    int proc_fd;
    pid_t root;
    int include_children;
    uint64_t page_size;
    long ticks_per_sec;     /* stat's clock ticks */
    uint64_t tick_ns;
    uint64_t previous_boottime_ns; /* CLOCK_BOOTTIME of the previous reading */
    uint64_t window_boottime_ns;   /* CLOCK_BOOTTIME of the window's first reading */
    unsigned generation;    /* bumped when the tracked set changes */
    rm__tracked *procs;     /* procs[0] is the root */
    size_t count, cap;
    /* rm__probe_members_of_cgroup: the tree is a cgroup's processes, and
     * procs[0] (this process) stands for no one: 1 is the first index read. */
    size_t members;
    int last_reading;       /* rm__probe_end_window: hand out everything */
    int root_gone;          /* the root was reaped: its final reading is given */
    rm__metrics metrics;    /* the groups beyond CPU and RSS (none by default) */
    int groups_read_stat;   /* a metric group needs stat every reading */
    int stat_due_pending;   /* some process's stat_due is set */
    pid_t *pid_list;        /* for rm__probe_pids */
    size_t pid_list_cap;

    /* Membership (probe_tree.c). */
    unsigned walk;
    uint64_t wide_refresh_ns; /* a sleeper's statm in a wide tree: IDLE_STATM_REFRESH_WIDE_NS or _LEAF_NS */
    rm__tree_walker walker;
    /* pid -> index + 1 in procs (0: empty), open addressing, rebuilt when
     * the set changed otherwise than by a track (rm__probe_find). */
    rm__pid_index index;
    unsigned index_generation; /* the generation it holds */
    unsigned untrackable;   /* the latest walk's processes /proc refused */
    /* This process is a child subreaper (as the resmon command is) and the
     * root is its child: the orphans of the root's tree become our children,
     * so the walk starts from us too (our other children are taken for the
     * tree's: the command has none). */
    int adopts_orphans;
    pid_t self;             /* getpid() when the probe was opened */
    pid_t *walk_roots;      /* the root, us when adopts_orphans, the adopted */
    size_t walk_root_cap;

    /* CPU accounting (probe_cpu.c and the inline helpers below). */
    struct {
        /* The window's CPU as the kernel accounts it, and how much of it
         * the readings have handed out: the difference is carried to the
         * next reading (a reading never shows more than the machine could
         * run). */
        int64_t counted_ns;
        uint64_t reported_ns;
        /* Of counted_ns, what processes started before discovery_from_ns
         * (CLOCK_BOOTTIME; 0: none) had used when a reading first saw them:
         * a leaf's total read at that instant already held their life up to
         * it, so the check for a process that left the leaf (tree_totals.h)
         * leaves it out.  A process started after it is in the total's rise
         * whole, and is not. */
        uint64_t discovered_ns;
        uint64_t discovery_from_ns;
        long online_cpus;       /* a tree cannot use more CPU than this */
        /* When the root is our own child, the CPU it used after the latest
         * reading reaches our RUSAGE_CHILDREN when we reap it. */
        int root_is_our_child;
        uint64_t our_children_ns; /* RUSAGE_CHILDREN at the latest reading */
        /* Its context switches then (voluntary, involuntary), and the
         * root's own at the window's first reading: the kernel hands a
         * reaped process's switches (its threads' and its reaped
         * children's) only to wait4 and RUSAGE_CHILDREN, never to /proc. */
        uint64_t our_children_switches[2];
        uint64_t root_start_switches[2];
    } cpu;

    /* The kernel's peak-RSS marks (probe_peak.c). */
    struct {
        int reset_error;     /* 0, or the first refused reset's negative errno */
        int keep_marks;      /* never reset: follow each lifetime peak instead */
        uint64_t lifetime_bytes; /* largest mark read so far (keep_marks) */
        /* Never reset, and give the window's exact peak where the marks
         * show it (see rm__probe_watch_peak_marks).  For processes no
         * longer tracked: the largest figure exact for the window, the
         * largest mark, and the largest start mark of one whose mark did
         * not rise. */
        int watch_marks;
        uint64_t ended_window_bytes, ended_lifetime_bytes, ended_unrisen_bytes;
        uint64_t ended_bytes; /* the largest peak of processes no longer tracked */
        int ended_known;
    } peak;

    /* The groups' holders noted in the current reading (probe_sharing.c). */
    struct {
        rm__share_holder *holders;
        size_t holder_count, holder_cap;
    } sharing;

    /* The per-process records (probe_processes.c): where each goes (NULL:
     * none kept), and the window's first reading (CLOCK_BOOTTIME), which
     * the records' times count from. */
    struct {
        rm__process_list *list;
        uint64_t window_start_ns;
    } records;
};

/* probe_read.c (a leaf: file reads and parsers only): the reads of one
 * process. */
int rm__probe_read_process(const rm__tracked *t, rm__process_reading *out);
/* Its halves: the CPU clock (-ESRCH once reaped), and statm into
 * out->rss_pages and out->has_memory. */
int rm__probe_read_cpu(const rm__tracked *t, uint64_t *ns);
int rm__probe_read_statm(const rm__tracked *t, rm__process_reading *out);
int rm__probe_read_stat(rm__tracked *t, rm__process_reading *out);

/* probe_tree.c */
int rm__probe_track(rm__probe *p, pid_t pid, rm__tracked **out);
void rm__probe_release(rm__tracked *t);
void rm__probe_untrack_at(rm__probe *p, size_t index);
rm__tracked *rm__probe_find(rm__probe *p, pid_t pid);
/* The walk: tracks new descendants, marks those that ended (ending) and
 * returns how many are marked; probe.c settles them, then drops them. */
size_t rm__probe_refresh_tree(rm__probe *p);
void rm__probe_drop_ended(rm__probe *p);
/* rm__probe_members_of_cgroup's work (probe.h). */
int rm__probe_tree_use_cgroup(rm__probe *p, const char *dir);

/* probe_sharing.c.  At t's join: the groups it shares with its tracked
 * parent (NULL: not tracked yet, asked again at later readings). */
void rm__probe_sharing_join(rm__probe *p, rm__tracked *t, rm__tracked *parent);
/* Before a reading's first process: no group has a holder yet. */
void rm__probe_sharing_begin(rm__probe *p);
/* At t's reading, after its statm, when rm__probe_sharing_wanted: sets
 * t->metrics.shares to the levels another member holds in this reading
 * (the first read alive holds them), and drops the levels it stops being
 * left out of, to be read afresh; returns those (RM__SHARES_*), and
 * RM__SHARES_MEMORY when t becomes its memory group's holder (its statm is
 * read again, after the image it is checked against).  holds_now 0: a
 * zombie, which holds nothing (the root's last figures stand in, unless
 * another member holds them). */
unsigned rm__probe_sharing_read(rm__probe *p, rm__tracked *t, int holds_now);
/* A root reaped before this reading: the levels another member held in it
 * (root->metrics.shares), which its last figures do not stand in for. */
void rm__probe_sharing_stand_in(rm__probe *p, rm__tracked *root);
/* After a reading's last process: a holder no member was left out for is
 * alone, its group over (idle again, read on its own schedule). */
void rm__probe_sharing_end(rm__probe *p);
void rm__probe_sharing_free(rm__probe *p);

/* t is in a sharing group of some kind. */
static inline int rm__probe_in_sharing_group(const rm__tracked *t)
{
    for (size_t k = 0; k < RM__SHARING_KINDS; k++)
        if (t->share_group[k])
            return 1;
    return 0;
}

static inline int rm__probe_sharing_wanted(const rm__tracked *t)
{
    return t->sharing_unchecked || rm__probe_in_sharing_group(t);
}

/* A process's name and start time, from a stat read of it (tree mode). */
static inline void rm__probe_note_identity(rm__tracked *t, const rm__proc_stat *st)
{
    memcpy(t->comm, st->comm, sizeof t->comm);
    t->start_ticks = st->starttime;
}

/* probe_cpu.c */
void rm__probe_cpu_begin(rm__probe *p);
/* Reads again the stat of every parent whose tracked child was settled
 * after its own read in this reading, so that the child's credit and the
 * parent's increase land in the same reading. */
void rm__probe_cpu_catch_up(rm__probe *p);
/* t was reaped and its parent is tracked. */
void rm__probe_cpu_settle(rm__probe *p, const rm__tracked *t, rm__tracked *parent);
void rm__probe_cpu_root_tail(rm__probe *p, uint64_t boot_ns);
void rm__probe_cpu_note_children(rm__probe *p, int baseline);

/* CPU accounting's per-process half, inline: it runs for every process of
 * every reading, the default sample included (see BENCHMARKS.md). */

/* A tree process's stat of this reading: the increase of its reaped
 * children's CPU (cutime + cstime), its parent and threads. */
static inline void rm__probe_cpu_account_children(rm__probe *p, rm__tracked *t, const rm__process_reading *now,
                                                  int baseline)
{
    uint64_t children_ns = (now->st.cutime + now->st.cstime) * p->tick_ns;
    if (!baseline && children_ns > t->children_ns)
        p->cpu.counted_ns += (int64_t)(children_ns - t->children_ns);
    t->children_ns = children_ns;
    t->ppid = now->st.ppid;
    t->threads = now->st.num_threads;
    t->stat_due = 0;
    rm__probe_note_identity(t, &now->st);
}

/* Adds a live process's increases since its previous reading (now: this
 * reading's; baseline: counts nothing, records the levels). */
static inline void rm__probe_cpu_account(rm__probe *p, rm__tracked *t, const rm__process_reading *now, int baseline)
{
    int first = t->last_cpu_ns == 0 && t->children_ns == 0; /* never read with any CPU used */
    int64_t before = p->cpu.counted_ns;
    if (!baseline && now->cpu_ns > t->last_cpu_ns)
        p->cpu.counted_ns += (int64_t)(now->cpu_ns - t->last_cpu_ns);
    t->last_cpu_ns = now->cpu_ns;
    if (now->stat_read && p->include_children)
        rm__probe_cpu_account_children(p, t, now, baseline);
    else if (now->stat_read)
        t->threads = now->st.num_threads;
    if (first && p->cpu.counted_ns > before && p->cpu.discovery_from_ns &&
        !rm__started_after(t->start_ticks, p->ticks_per_sec, p->cpu.discovery_from_ns))
        p->cpu.discovered_ns += (uint64_t)(p->cpu.counted_ns - before);
}

/* The CPU a reading hands out: all counted and not yet handed out, but no
 * more than every online CPU busy for the whole interval.  The excess -- a
 * thread's time brought up to date late, a reaped child's whole life landing
 * in its parent's cutime -- is carried to the next reading, never dropped,
 * and the window's last reading hands out everything: sums stay exact. */
static inline uint64_t rm__probe_cpu_hand_out(rm__probe *p, uint64_t boot_ns, int everything)
{
    int64_t pending = p->cpu.counted_ns - (int64_t)p->cpu.reported_ns;
    if (pending <= 0)
        return 0; /* a credit awaiting its parent's cutime increase */
    uint64_t give = (uint64_t)pending;
    if (!everything && p->cpu.online_cpus > 0) {
        uint64_t elapsed = boot_ns > p->previous_boottime_ns ? boot_ns - p->previous_boottime_ns : 0;
        uint64_t most = (uint64_t)p->cpu.online_cpus * elapsed;
        if (give > most)
            give = most;
    }
    p->cpu.reported_ns += give;
    return give;
}

/* probe_peak.c */
/* The largest peak-RSS figure known for a process: the kernel's mark as
 * last read, and never below what a sample saw. */
static inline uint64_t rm__probe_known_peak(const rm__tracked *t)
{
    return t->hwm_bytes > t->peak_rss_bytes ? t->hwm_bytes : t->peak_rss_bytes;
}

/* With keep_peak_marks or watch_peak_marks: after a live process's reading. */
void rm__probe_peak_marks_after_read(rm__probe *p, rm__tracked *t, const rm__process_reading *now);
void rm__probe_peak_refresh_root(rm__probe *p, uint64_t boot_ns);
void rm__probe_peak_settle(rm__probe *p, const rm__tracked *t);
void rm__probe_peak_begin(rm__probe *p);
/* rm__probe_peak_rss's work (probe.h). */
int rm__probe_peak_read(rm__probe *p, uint64_t *bytes, resmon_hwm_scope *scope, int *reset_error);

/* probe_processes.c: a process found ended (ENDED_REAPED or ENDED_LEFT),
 * before it is dropped. */
void rm__probe_process_ended(rm__probe *p, const rm__tracked *t);
/* rm__probe_keep_processes's and rm__probe_processes_end's work (probe.h). */
int rm__probe_processes_keep(rm__probe *p, rm__process_list *list);
void rm__probe_processes_close(rm__probe *p);

#endif
