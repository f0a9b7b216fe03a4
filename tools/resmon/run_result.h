/*
 * run_result.h -- what a run produced, for the outputs (child.c, attach.c and
 * repeat.c fill it).
 */
#ifndef RESMON_RUN_RESULT_H
#define RESMON_RUN_RESULT_H

#include "resmon.h"

#include <stddef.h>

typedef struct run_result {
    resmon_summary summary;
    double start_wall_epoch;   /* the wall clock at the first sample, for ISO 8601 */
    double wall_sec;           /* from the first sample to the target's end */
    int have_exit;             /* 1 when we ran the command and reaped it */
    int exit_status;           /* as the shell sees it: code, or 128 + signal */
    int term_signal;           /* 0 unless a signal ended it */
    int have_rusage;
    double rusage_cpu_sec;     /* user + system of the command and all it reaped */
    double rusage_maxrss_mb;   /* largest single process's peak RSS */
    double wait4_maxrss_mb;    /* wait4's figure when a sample saw one process above it
                                  (its mark reset, or it was never reaped); else NAN */
    double rusage_nvcsw, rusage_nivcsw; /* context switches (voluntary,
                                  involuntary) of the command and all it and
                                  resmon reaped */
    int interrupted;           /* resmon got SIGINT/SIGTERM/SIGHUP/SIGQUIT */
    int orphans_left;          /* adopted descendants still running at the end */
    int orphans_unsaid;        /* they were not said (leftovers_said_after): the caller says them */
    int moved_out_known;       /* --memory-limit with a leaf: what the command left was checked ... */
    int orphans_moved_out;     /* ... and this many of them ran outside the leaf (moved out: unbound) */
    resmon_gpu *gpu;           /* the GPU profiler, NULL without */
    char cgroup_note[RESMON_ERR_MAX]; /* why no cgroup was made for COMMAND; "" when one was, or not asked */
    double memory_limit_at_end_mb; /* --memory-limit: the leaf's limit at the end where the run changed it; else NAN */
    double swap_allowed_at_end_mb; /* --memory-limit: the swap the leaf allowed beyond it at the end where the run let
                                      some in (INFINITY: no bound); else NAN */
    char leaf_kept[RESMON_ERR_MAX];   /* the leaf kept under --memory-limit for what COMMAND left running; "" if none */
    resmon_cgroup *kept_cg;    /* --repeat: that leaf, still open, for cgroup_release_kept once the repeat ended what it holds */
    const resmon_phase *phases; /* the window's phases (owned by the outputs); NULL without marks */
    size_t phase_count;
    int have_marks;             /* the command had a marks channel */
    unsigned long long marks_dropped;
    /* The command resmon ran, for its slice in the trace: its pid, when it
     * was let go (exec) and when its exit was noticed (CLOCK_MONOTONIC);
     * 0 when resmon ran none. */
    pid_t command_pid;
    double command_start_timestamp, command_end_timestamp;
    /* ---- every process of the run (process_records.h, processes_output.c) ---- */
    struct process_records *processes; /* NULL: not kept (--pid, --cgroup, --repeat, --no-children) */
} run_result;

/* Why the whole tree's exact peak (the cgroup's) can sit below the largest
 * process's RSS: the table and the chart say it where it happens. */
#define TREE_BELOW_RSS_NOTE                                                                                             \
    "below RSS: file pages already cached (libraries, binaries) are charged to the cgroup that first read them " \
    "(or a process moved out of it)"

#endif
