/*
 * options.h -- the command line, parsed (options.c).
 */
#ifndef RESMON_OPTIONS_H
#define RESMON_OPTIONS_H

#include "exporter_options.h"

#include <stdint.h>
#include <sys/types.h>

/* The most runs --repeat and --warmup take: more is surely a typo. */
#define REPEAT_MAX_RUNS 100000

typedef struct cli_options {
    double interval_sec;
    const char *summary_path; /* -o: NULL none, "-" stdout */
    const char *samples_path; /* -s: .csv or .jsonl */
    const char *plot_path;    /* --plot: .svg */
    const char *trace_path;   /* --trace: .json, the Chrome trace-event timeline (trace_file.c) */
    const char *gpu;          /* --gpu: "auto", "none" */
    int include_children;
    double duration_sec;      /* --duration with --pid; 0 = until it ends */
    int quiet;
    int wait_orphans;         /* --wait-orphans: wait for adopted descendants */
    int reset_peak;           /* --reset-peak: reset the --pid target's peak mark */
    unsigned metrics;         /* --metrics: RESMON_METRIC_* groups (default all) */
    pid_t pid;                /* --pid; 0 = run argv */
    exporter_options exporters; /* --serve, --push, --textfile, --label */
    int no_cgroup;            /* --no-cgroup: never make a cgroup for COMMAND */
    uint64_t memory_limit_bytes; /* --memory-limit; 0 = none */
    const char *cgroup_path;  /* --cgroup: an existing cgroup to read */
    int watch_cgroup;         /* --cgroup without COMMAND or --pid: its processes are the tree */
    long repeat;              /* --repeat N: measured runs; 0 = one ordinary run */
    long warmup;              /* --warmup K: unmeasured runs before them */
    int ignore_failure;       /* --ignore-failure: a failed run does not stop the repeat */
    int leftovers_said_after; /* --repeat, a run before the last: the repeat says what it left running */
    char **argv;              /* the command, NULL-terminated */
    int argc;
    const char *processes_path; /* --processes-file: .csv or .jsonl */
    int processes_all;        /* --processes all: every record in the JSON summary, not the top N only */
} cli_options;

/* Parses the command line.  Returns 0, or prints one line to stderr and
 * returns EXIT_USAGE; returns -1 after printing --help or --version (exit 0). */
int cli_parse(int argc, char **argv, cli_options *out);

#endif
