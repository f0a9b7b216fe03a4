/*
 * cli.h -- the resmon command's parts and what they share.
 *
 * The command is a thin layer over libresmon: it starts (or attaches to) the
 * target, opens a monitor of its process tree, streams each sample to the
 * samples file and to a thinned series for the chart, and writes the outputs
 * when the target ends.  Every sample comes from the library's one sampling
 * path; the command adds only what a monitor of a child can know: its exit
 * status and the kernel's exact accounting from wait4().
 */
#ifndef RESMON_CLI_H
#define RESMON_CLI_H

#include "resmon.h"

#include <stdio.h>
#include <sys/types.h>

/* Exit statuses of resmon's own failures, as timeout(1) and env(1) use them. */
enum cli_exit {
    EXIT_USAGE = 125,          /* bad usage, unwritable output, bad --pid */
    EXIT_CANNOT_EXECUTE = 126, /* found but not executable */
    EXIT_NOT_FOUND = 127       /* command not found */
};

typedef struct cli_options {
    double interval_sec;
    const char *summary_path; /* -o: NULL none, "-" stdout */
    const char *samples_path; /* -s: .csv or .jsonl */
    const char *plot_path;    /* --plot: .svg */
    const char *gpu;          /* --gpu: "auto", "none" */
    int include_children;
    double duration_sec;      /* --duration with --pid; 0 = until it ends */
    int quiet;
    pid_t pid;                /* --pid; 0 = run argv */
    char **argv;              /* the command, NULL-terminated */
    int argc;
} cli_options;

/* Parses the command line.  Returns 0, or prints one line to stderr and
 * returns EXIT_USAGE; returns -1 after printing --help or --version (exit 0). */
int cli_parse(int argc, char **argv, cli_options *out);

/* ---- what a run produced, for the outputs ---- */
typedef struct run_result {
    resmon_summary summary;
    double start_wall_epoch;   /* time(2) of the first sample, for ISO 8601 */
    double wall_sec;           /* from the first sample to the target's end */
    int have_exit;             /* 1 when we ran the command and reaped it */
    int exit_status;           /* as the shell sees it: code, or 128 + signal */
    int term_signal;           /* 0 unless a signal ended it */
    int have_rusage;
    double rusage_cpu_sec;     /* user + system of the command and all it reaped */
    double rusage_maxrss_mb;   /* largest single process's peak RSS */
    int interrupted;           /* resmon got SIGINT/SIGTERM/SIGHUP */
    resmon_gpu *gpu;           /* the GPU profiler, NULL without */
} run_result;

/* ---- samples file: CSV or JSON Lines, written as samples arrive ---- */
typedef struct samples_file samples_file;
/* Opens path (format from its extension).  gpu_devices: 0 no GPU columns;
 * 1 the GPU columns; N > 1 also per-device columns gpuI_*.  NULL with a
 * message in err. */
samples_file *samples_file_open(const char *path, size_t gpu_devices, char *err, size_t errcap);
void samples_file_write(samples_file *f, const resmon_sample *s, double elapsed_sec,
                        const resmon_gpu_reading *devices, size_t device_count);
/* Flushes, closes and frees; returns 0 or -errno if any write failed. */
int samples_file_close(samples_file *f);

/* ---- chart: a thinned series of the whole run, and its SVG ---- */
typedef struct chart_series chart_series;
chart_series *chart_series_new(void);
void chart_series_add(chart_series *c, const resmon_sample *s, double elapsed_sec);
void chart_series_free(chart_series *c);
/* Writes the chart as SVG.  Returns 0 or -errno. */
int chart_write_svg(const chart_series *c, FILE *out, const char *title, const run_result *r);

/* ---- the summary: JSON file and the human table ---- */
int summary_write_json(FILE *out, const cli_options *o, const run_result *r);
void summary_print_table(FILE *out, const cli_options *o, const run_result *r);

/* Writes s as a JSON string literal (quotes and escapes included). */
void json_write_string(FILE *out, const char *s);

#endif
