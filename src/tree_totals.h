/*
 * tree_totals.h -- a wide tree's CPU from its leaf cgroup, and when to walk
 * its processes.
 *
 * When the monitored tree is a command in a leaf of this process's making
 * (resmon_cgroup_create), the kernel keeps the whole tree's CPU in one file
 * (v1 cpuacct.usage of the leaf's cpuacct shadow, v2 cpu.stat usage_usec).
 * Once the tree outgrows WALK_EVERY_SAMPLE_MAX processes, each sample's CPU
 * is that total's increase -- one read, whatever the tree's size -- and the
 * per-process walk (the probe's reading: RSS, threads, the metric groups,
 * the peak marks) runs at its own cadence, chosen from its own measured
 * cost, so that it takes at most WALK_CPU_SHARE of a CPU, on a thread of
 * its own (monitor.c's walker; src/README.md); between walks the sample
 * holds the latest walk's figures.  A small tree is walked every
 * sample, its CPU the probe's, exactly as without a cgroup (and at no added
 * cost: the cgroup is not read).  Once engaged, the window's CPU is the
 * cgroup's, and what the probe had counted and not yet handed out at the
 * switch is handed out through the cgroup's carry, so the sum of the samples
 * stays the tree's CPU; what the leaf used since the window's first sample
 * beyond the probe's count at the switch (processes no walk read) goes to
 * the window's CPU time at the switch (rm__tree_totals_take_unseen).  A process of the tree may leave the leaf (written
 * into another cgroup's tasks): its CPU is then the probe's only, so each
 * walk compares the probe's count since the switch with the total's
 * increase, and when the probe's is larger (beyond LEFT_SLACK) at two walks
 * in a row (the second right after the first) the tree has left: the walk
 * runs every sample again and the CPU is the probe's for
 * the rest of the window (never engaged again).  The inverse hand-over:
 * the samples handed out the probe's count at the switch plus the total's
 * increase less the carry, and the probe carries what it counted beyond
 * that (rm__probe_cpu_rebase) -- the CPU the leaver used outside the leaf
 * comes late, never lost and never twice.  (Reading a running process's
 * CPU clock also brings the cgroup's total up to date -- the kernel charges
 * both in one update -- so nothing is counted twice at the switch; what a
 * busy process used between its clock read in the switching walk and the
 * total's first read, at most that walk's duration, once, is not counted.)
 */
#ifndef RESMON_TREE_TOTALS_H
#define RESMON_TREE_TOTALS_H

#include "cgroup.h"
#include "internal.h"

#include <stdint.h>
#include <sys/types.h>

/* Up to this many processes the walk runs every sample (as it always did). */
#define WALK_EVERY_SAMPLE_MAX RM__WIDE_TREE_PROCESSES

typedef struct rm__tree_totals {
    rm__cgroup_cpu cpu;   /* fd -1: no CPU total for this tree (the walk serves) */
    int dir_fd;           /* the leaf (O_PATH; -1: none): its cgroup.procs, the count between walks */
    const char *threads_file; /* the leaf's list of threads: v1 "tasks", v2 "cgroup.threads" */
    uint64_t count_read_ns; /* when the leaf's lists were last counted (0: not since the latest walk) */
    unsigned count, threads; /* ... and what they counted */
    uint64_t count_cpu_ns;   /* ... and the CPU total read before they were (after a walk:
                                the total read before the walk began, walk_cpu_known) */
    uint64_t walk_start_cpu_ns; /* the total read before the walk in flight began */
    int walk_start_known;    /* ... read, engaged (rm__tree_totals_walk_starts) */
    int walk_cpu_known;      /* count_cpu_ns holds the latest walk's start */
    int cpu_unread;          /* the latest sample's read of the total failed */
    unsigned walked_count;   /* the processes the latest walk found */
    int engaged;          /* the samples' CPU is the cgroup's (from the switch on) */
    int left;             /* a process left the leaf: the probe's CPU again, for good */
    int left_suspected;   /* the latest walk's probe count was ahead of the total: the next walk decides */
    uint64_t last_lead_ns; /* how far the probe's count since the switch was ahead of the total's rise, at the latest walk compared */
    uint64_t window_base_ns; /* the total at the window's first sample ... */
    int window_based;        /* ... when it could be read */
    uint64_t probe_base_ns, total_base_ns; /* at the switch: the probe's count, the total */
    uint64_t unseen_ns;   /* ... and what the leaf used since the window opened beyond the probe's count */
    uint64_t unseen_untaken_ns; /* ... of which rm__tree_totals_take_unseen has not yet taken */
    uint64_t discovered_base_ns; /* ... and of the count, the life before a reading first saw a process */
    uint64_t last_cpu_ns; /* the total at the previous sample */
    uint64_t carry_ns;    /* counted, not yet handed out (at most every CPU busy per interval) */
    uint64_t next_walk_ns; /* CLOCK_MONOTONIC: the next walk is due then (0: next sample) */
    uint64_t walk_cost_ns; /* the latest walk's own CPU (thread clock); 0: not measured */
    /* for the summary: walks since the switch, and the time they spanned */
    uint64_t first_walk_ns, last_walk_ns;
    unsigned walks;
} rm__tree_totals;

/* Opens the CPU total of the leaf memory_dir (the monitor's cgroup_path,
 * of layout version) when it holds exactly root's tree
 * (rm__cgroup_leaf_cpu_dir); without one, fd stays -1 and every sample
 * walks.  Never fails. */
void rm__tree_totals_open(rm__tree_totals *t, const char *memory_dir, int version, pid_t root);
void rm__tree_totals_close(rm__tree_totals *t);

/* At the window's first sample, after the probe's first reading: the
 * total then, the base of what the tree used before a switch (no effect
 * without a total). */
void rm__tree_totals_begin(rm__tree_totals *t);

/* Whether this sample walks (the probe's full reading). */
int rm__tree_totals_walk_due(const rm__tree_totals *t, uint64_t now_ns);

/* Before a walk begins (on the sampler, before this sample reads the
 * total): the total as it stood, which the walk's process count is then
 * taken to hold for (rm__tree_totals_process_count) while it stands. */
void rm__tree_totals_walk_starts(rm__tree_totals *t);

/* Whether the coming walk's cost is worth measuring (two thread-clock
 * reads): only for a tree that may engage. */
int rm__tree_totals_measures(const rm__tree_totals *t, unsigned last_process_count);

/* After a walk at now_ns that found process_count processes and cost
 * cost_ns of this thread's CPU (0: not measured): schedules the next one,
 * and engages when the tree outgrew WALK_EVERY_SAMPLE_MAX (probe_pending_ns:
 * the probe's CPU counted but not yet handed out, carried over;
 * probe_counted_ns: all it counted).  Engaged, disengages (left) when the
 * probe counted more since the switch than the total rose, at two walks in
 * a row or at the window's last (final: the tree ended, or the window's
 * last sample): this sample's CPU is still the total's, then rebase the
 * probe on rm__tree_totals_handed. */
void rm__tree_totals_walked(rm__tree_totals *t, uint64_t now_ns, unsigned process_count, uint64_t cost_ns,
                            uint64_t probe_pending_ns, uint64_t probe_counted_ns, uint64_t probe_discovered_ns,
                            int final);

/* The CPU the window handed out, up to the latest rm__tree_totals_cpu:
 * the probe's at the switch, what the leaf used before it beyond the
 * probe's count (once taken), the total's rise since, less the carry. */
uint64_t rm__tree_totals_handed(const rm__tree_totals *t);

/* The CPU the leaf used before the switch beyond the probe's count, once
 * (then 0): the window's CPU time, not any sample's interval. */
uint64_t rm__tree_totals_take_unseen(rm__tree_totals *t);

/* Engaged: the sample's CPU, the total's increase since the previous sample
 * plus the carry, at most online_cpus x elapsed_ns unless everything (the
 * window's last).  A failed read hands out nothing (the increase waits). */
uint64_t rm__tree_totals_cpu(rm__tree_totals *t, uint64_t elapsed_ns, long online_cpus, int everything);

/* Engaged, between walks: the processes the leaf lists (cgroup.procs;
 * zombies are not listed) and their threads (v1 tasks, v2 cgroup.threads,
 * read right after: never fewer than the processes), counted at most once a
 * second -- the kernel builds and sorts the whole list for each read:
 * ~0.6 ms of CPU for 1000 processes on the VM of BENCHMARKS.md, too much
 * for every sample.  Nor is it read again while the leaf's CPU total
 * stands where it stood just before the latest count, for up to 5 s: a
 * process forks, starts a thread or exits only by running, so a tree that
 * did not run has the same lists -- but for a process that left the leaf
 * without running in it (moved by another, or moving itself between two
 * charges of its runtime; on v1, a process moved to another cpuacct group
 * alone; on kernels before 4.5, a sleeper killed from outside, its exit
 * charged to the root), which the 5 s bound covers.  When the process
 * count moved by more than a quarter from the latest walk's, the next
 * sample walks: a tree that grows or shrinks fast is seen whole promptly,
 * not at the walk's slow cadence.
 * -ENOENT when there is no count since the latest walk (the walk's stands),
 * or -errno of the read. */
int rm__tree_totals_process_count(rm__tree_totals *t, uint64_t now_ns, unsigned *processes, unsigned *threads);

/* The walks' mean interval since the switch, seconds (with one walk since,
 * the time from it to last_sample_ns: the interval was at least that;
 * once left, the walks' up to the one that saw it leave);
 * NAN when the walk ran every sample (never engaged). */
double rm__tree_totals_walk_interval_sec(const rm__tree_totals *t, uint64_t last_sample_ns);

#endif
