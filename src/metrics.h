/*
 * metrics.h -- the optional metric groups of a monitored target
 * (resmon_options.metrics): I/O, memory beyond RSS, process and thread
 * counts, the user/system split, faults and context switches, network.
 *
 * The probe owns one rm__metrics, and each tracked process's row holds one
 * rm__process_metrics; the probe calls these functions from its reading:
 * start, each live process (with the stat the probe read and parsed once
 * for everyone), settle for each process that was reaped, finish.  Counters are
 * kept as the kernel's lifetime values per process; the window's totals grow
 * by each process's increase, so a process that ends loses nothing counted.
 * When a reaped process's parent is tracked, the kernel adds the child's
 * whole count to the parent's (io, cutime, cminflt): settling subtracts what
 * the child showed, so the parent's jump adds only the child's last
 * interval, never the child twice.
 */
#ifndef RESMON_METRICS_H
#define RESMON_METRICS_H

#include "metric_list.h"
#include "procfs.h"
#include "resmon.h"

#include <errno.h>
#include <stdint.h>
#include <sys/types.h>

/* The sources a process's figures come from (metric_list.h's SOURCE), each
 * read (or refused) on its own: a refused one blanks only its own fields.
 * NET is the reading's (the root's net/dev); ANY is always known. */
enum {
    RM__SOURCE_STAT = 1,     /* stat: vmem, counts, CPU split, faults */
    RM__SOURCE_SWITCHES = 2, /* every thread's status: context switches */
    RM__SOURCE_SMAPS = 4,    /* smaps_rollup: PSS, swap, USS */
    RM__SOURCE_IO = 8,       /* io */
    RM__SOURCE_NET = 16,     /* the root's net/dev, once per reading */
    RM__SOURCE_ANY = 32,     /* always known (unreadable_procs) */
    RM__SOURCE_FDS = 64      /* the fd directory: open descriptors */
};

/* What a process shares with the tracked parent it was cloned from
 * (rm__process_metrics.shares, probe_sharing.c): its address space
 * (CLONE_VM: a vfork child before its exec, ASan's leak check, a
 * runtime's helper) or its file table (CLONE_FILES).  Those levels are
 * the parent's too, and counted there: once. */
enum {
    RM__SHARES_MEMORY = 1, /* vmem, PSS, swap, USS (and the probe's RSS) */
    RM__SHARES_FILES = 2   /* open descriptors */
};

/* Where a reading keeps each metric (metric_list.h's SLOT), one enum for
 * all, from the list: the counters (lifetime counts per process) first, then
 * the levels (summed over the reading's processes), then the reading's own. */
#define RM__PICK_COUNTER_COUNTER(name) RM__##name,
#define RM__PICK_COUNTER_LEVEL(name)
#define RM__PICK_COUNTER_READING(name)
#define RM__PICK_LEVEL_COUNTER(name)
#define RM__PICK_LEVEL_LEVEL(name) RM__##name,
#define RM__PICK_LEVEL_READING(name)
#define RM__PICK_READING_COUNTER(name)
#define RM__PICK_READING_LEVEL(name)
#define RM__PICK_READING_READING(name) RM__##name,
/* A SLOT column's enumerator: COUNTER(IO_RCHAR) is RM__IO_RCHAR. */
#define RM__SLOT_NAME_COUNTER(name) RM__##name
#define RM__SLOT_NAME_LEVEL(name) RM__##name
#define RM__SLOT_NAME_READING(name) RM__##name
#define RM__SLOTS_COUNTER(g, sf, su, f, u, c, p, h, w, source, slot, scale) RM__PICK_COUNTER_##slot
#define RM__SLOTS_LEVEL(g, sf, su, f, u, c, p, h, w, source, slot, scale) RM__PICK_LEVEL_##slot
#define RM__SLOTS_READING(g, sf, su, f, u, c, p, h, w, source, slot, scale) RM__PICK_READING_##slot
typedef enum rm__counter {
    RM__METRIC_LIST(RM__SLOTS_COUNTER)
    RM__COUNTER_COUNT,
    RM__LEVEL_BEFORE = RM__COUNTER_COUNT - 1,
    RM__METRIC_LIST(RM__SLOTS_LEVEL)
    RM__LEVEL_END,                       /* the levels are RM__COUNTER_COUNT .. RM__LEVEL_END - 1 */
    RM__READING_BEFORE = RM__LEVEL_END - 1,
    RM__METRIC_LIST(RM__SLOTS_READING)
    RM__SLOT_COUNT
} rm__counter;

typedef struct rm__process_metrics {
    int io_fd, smaps_fd;          /* opened at the first reading; -1 before
                                     (stat is the row's: read once by the probe) */
    int status_fd;                /* a one-thread process's status, for its
                                     context switches; -1 before */
    int fd_dir_fd;                /* its fd directory, for its open descriptors; -1 before */
    int zombie;                   /* its latest stat read showed a zombie */
    int stands_when_ended;        /* the root: its zombie keeps its last live levels */
    uint64_t born_ns;             /* its start (stat's starttime) after boot, when born_known */
    int born_known;
    unsigned switch_scans_skipped; /* readings since its threads' switches
                                      were last read (many threads) */
    unsigned primed;              /* sources (SOURCE_* of metrics.c) whose
                                     counters in last[] hold a reading */
    unsigned count_from_zero;     /* sources whose first reading counts from zero:
                                     born in the window (rm__probe_track), its
                                     whole count is the window's; each cleared
                                     once that source is read */
    uint64_t last[RM__LEVEL_END]; /* counters: lifetime values at the latest reading;
                                     levels: at the latest reading of their source
                                     (stat's while alive; smaps_rollup's: PSS, swap and
                                     USS, its Private_Clean + Private_Dirty) */
    int smaps_known;
    uint64_t smaps_read_ns;       /* CLOCK_BOOTTIME of that read */
    uint64_t smaps_rss_pages;     /* the process's RSS at that read */
    int pss_from_rss;             /* pss_kb is its RSS, not read: young and small (metrics.c) */
    uint64_t image;               /* its stat's startstack (0: not known) */
    uint64_t parent_image;        /* its parent's when it was tracked (0: not known):
                                     equal to image while it is a fork that has not
                                     exec'd, sharing its parent's pages */
    int has_sharing_fork;         /* a child was tracked that shared its image: its
                                     pages are shared (for the rest of its youth) */
    unsigned shares;              /* RM__SHARES_*: levels another process holds in this
                                     reading (probe_sharing.c): left out of the sums, unread */
    int reread;                   /* read every source at the next reading, idle or not:
                                     its levels were dropped (rm__metrics_sharing_ended) */
    int pss_exempt;               /* young and small when it joined or at its latest
                                     memory reading: its joining and leaving re-read
                                     no other process (metrics.c, rm__metrics_plan_pss) */
} rm__process_metrics;

typedef struct rm__metrics {
    unsigned groups;              /* RESMON_METRIC_* */
    int tree;                     /* children are tracked: count what they reaped */
    uint64_t detail_interval_ns;  /* smaps_rollup at most this often per process */
    int final_reading;            /* the window's last reading: read smaps_rollup anyway, so a
                                     window shorter than the interval (and a command that
                                     exec'd after the first reading) ends on a real PSS */
    uint64_t tick_ns;             /* stat's clock tick */
    /* The window's counts: increases added, settled children subtracted, so
     * a total may dip below what was reported until the parent's increase
     * arrives; a sample shows the largest so far (reported). */
    int64_t counted[RM__COUNTER_COUNT];
    uint64_t figure[RM__SLOT_COUNT]; /* what a sample shows, by slot: a counter's
                                     largest count so far, a level's sum over this
                                     reading's processes, the reading's own */
    unsigned wanted;              /* the sources the groups on ask a process for */
    unsigned char shown[RM__METRIC_COUNT]; /* the list's metrics of the groups on */
    unsigned shown_count;
    unsigned stands_when_idle;    /* sources an idle process cannot have moved */
    unsigned folds_into_parent;   /* sources whose counts the kernel adds to a reaper's */
    unsigned known_sources;       /* sources some process gave this reading */
    int pss_tree_due;             /* this reading reads every smaps_rollup */
    unsigned pss_generation;      /* the tracked set they were last all read for */
    uint64_t pss_tree_read_ns;    /* when (CLOCK_BOOTTIME) */
    uint64_t pss_tree_cost_ns;    /* the CPU time of the latest tree-wide reading of a wide
                                     tree (0: none measured) */
    uint64_t pss_tree_interval_ns; /* the age at which a tree-wide reading is due now:
                                     detail_interval_ns, or longer for a wide tree */
    unsigned pss_changes_noted;   /* joins and leaves told since (rm__metrics_joined/left) */
    int pss_sharing_changed;      /* one of them was walked, or a process began to be
                                     walked outside a tree-wide reading */
    uint64_t pss_exempt_until_ns; /* the earliest age-out (CLOCK_BOOTTIME) of the processes
                                     not walked at the previous reading; UINT64_MAX: none */
    uint64_t pss_exempt_until_next_ns; /* the same, gathered by this reading */
    unsigned smaps_reads;         /* smaps_rollup page walks so far (tests, benchmarks) */
    uint64_t ended[RM__LEVEL_END]; /* the smaps_rollup levels of processes that
                                     ended (zombies, a reaped root): the reading's only
                                     when no live process gave one (metrics.c) */
    int ended_smaps;
    int net_fd;                   /* the root's net/dev; -1 without */
    rm__net_totals net_start, net_now;
} rm__metrics;

/* Prepares m for groups (0: nothing is ever read).  detail_interval_sec as
 * resmon_options.memory_detail_interval_sec (0: the default). */
void rm__metrics_init(rm__metrics *m, unsigned groups, double detail_interval_sec, int tree, long ticks_per_sec);

/* Opens the network namespace's counters of root under proc_fd (with
 * RESMON_METRIC_NETWORK).  Failing leaves the network unknown. */
void rm__metrics_open_network(rm__metrics *m, int proc_fd, pid_t root);
void rm__metrics_free(rm__metrics *m);

void rm__process_metrics_init(rm__process_metrics *pm, unsigned count_from_zero);

/* A process is no longer left out of the levels of `ended` (RM__SHARES_*):
 * it left its group (an exec) or holds the group's levels now.  What it
 * showed while left out stands for nothing: dropped, and read afresh at the
 * next reading -- kept, a stat read mid-exec (no size: the last one stands)
 * counted the parent's virtual size again. */
void rm__metrics_sharing_ended(rm__process_metrics *pm, unsigned ended);
void rm__process_metrics_close(rm__process_metrics *pm);

/* Whether the groups need every process's stat at every reading (the
 * probe then reads it once, for its own use and theirs). */
int rm__metrics_need_stat(const rm__metrics *m);

/* One reading: start, then read each live process (dir_fd: its /proc
 * directory; st: its stat of this reading, NULL when it could not be read;
 * stat_starved: st is NULL for want of a descriptor (its latest stands);
 * idle: it has not run since its previous reading (its CPU clock stood
 * still), so its stat, status and io figures cannot have moved and the
 * latest stand, unread; rss_pages: its resident pages now; baseline: the
 * window's first reading, which counts nothing), settle each reaped one
 * whose parent is tracked, then finish. */
void rm__metrics_start_reading(rm__metrics *m, int baseline);
void rm__metrics_read_process(rm__metrics *m, rm__process_metrics *pm, int dir_fd, const rm__proc_stat *st,
                              int stat_starved, int idle, uint64_t rss_pages, uint64_t boot_ns, int baseline);
/* Call after start: decides whether this reading reads every process's
 * smaps_rollup, which a tree's PSS needs at one moment -- when a walked
 * process joined or left the tracked set, since a fork or an exit changes
 * how pages are shared and so every sharer's PSS (a parent's pre-fork
 * reading beside its children's counted the shared pages up to twice), when
 * a process not walked reaches the detail interval's age, or when the
 * interval has passed.  A young small process (not walked: its RSS stands in)
 * joining or leaving re-reads no other: what it shares with them is within
 * the RSS-for-PSS bound already.  generation: the probe's, bumped at every
 * change of the set; a change not told through rm__metrics_joined/left
 * counts as a walked one.  Between, a process is read again alone only when
 * its RSS moved.  processes: the tree's size now; in a wide tree (more than
 * RM__WIDE_TREE_PROCESSES) the interval and the age-outs wait as long as
 * keeps these readings at PSS_TREE_CPU_SHARE of a CPU (from the cost told by
 * rm__metrics_tree_read_cost), at most PSS_TREE_INTERVAL_MAX_NS. */
void rm__metrics_plan_pss(rm__metrics *m, unsigned generation, uint64_t boot_ns, size_t processes);

/* Tells what a tree-wide reading of a wide tree cost (the reading thread's
 * CPU time, ns), which paces the next (rm__metrics_plan_pss). */
void rm__metrics_tree_read_cost(rm__metrics *m, uint64_t cost_ns);
/* The probe tells each change of the tracked set as it makes it: pm has
 * just been tracked (st: its stat, NULL when not read; rss_pages: its RSS
 * then; parent: its parent's, NULL when the parent is not tracked;
 * shares_memory: it shares its parent's address space, probe_sharing.c),
 * or is about to be forgotten. */
void rm__metrics_joined(rm__metrics *m, rm__process_metrics *pm, const rm__proc_stat *st, uint64_t rss_pages,
                        rm__process_metrics *parent, int shares_memory);
void rm__metrics_left(rm__metrics *m, const rm__process_metrics *pm);
/* Whether a failed read (a negative errno) was refused: another user's
 * process, a non-dumpable one, /proc's hidepid.  A process that ended or
 * exec'd between two reads (ESRCH, ENOENT) is gone, not "unreadable". */
static inline int rm__read_refused(long rc)
{
    return rc == -EACCES || rc == -EPERM;
}
/* Counts processes of the tree that could not be read at all (not
 * tracked: /proc refused them) in this reading's unreadable_procs. */
void rm__metrics_count_unreadable(rm__metrics *m, unsigned processes);
/* A process reaped since the previous reading that still stands for the
 * target in its last reading (the root): its latest levels are counted. */
void rm__metrics_add_last_seen(rm__metrics *m, const rm__process_metrics *pm);
void rm__metrics_settle_reaped(rm__metrics *m, const rm__process_metrics *pm);
void rm__metrics_finish_reading(rm__metrics *m, int baseline);

/* Raises the window's count of a context-switch counter to at least value
 * (the kernel's own account of processes that ended, from RUSAGE_CHILDREN);
 * call before finish.  Nothing when the faults group is off. */
void rm__metrics_raise_switches(rm__metrics *m, rm__counter counter, uint64_t value);

/* Writes the latest reading into the sample's metric fields (NAN for groups
 * that are off or were refused). */
void rm__metrics_fill_sample(const rm__metrics *m, resmon_sample *s);

/* Copies every metric field of from (as rm__metrics_fill_sample wrote it)
 * into to, and no other field. */
void rm__metrics_copy_sample(const resmon_sample *from, resmon_sample *to);

#endif
