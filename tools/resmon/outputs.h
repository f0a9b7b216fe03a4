/*
 * outputs.h -- the command's outputs as a set (outputs.c).
 */
#ifndef RESMON_OUTPUTS_H
#define RESMON_OUTPUTS_H

#include "chart_series.h"
#include "exporters.h"
#include "marks.h"
#include "options.h"
#include "output_file.h"
#include "run_result.h"
#include "samples_file.h"
#include "trace_file.h"
#include "resmon.h"

#include <stdio.h>

typedef struct outputs {
    resmon_gpu *gpu; /* for per-device columns */
    output_file summary, samples_output, plot;
    samples_file *samples;
    chart_series *chart;
    exporters *exporters; /* --serve, --push, --textfile */
    char plot_converter[4096]; /* rsvg-convert for a .png chart, else "" */
    double first_timestamp;
    int have_first;
    marks_channel *marks;  /* COMMAND's marks channel; NULL with --pid or when it cannot open */
    const resmon_monitor *monitor; /* for the phase of each sample */
    resmon_phase *phases;  /* outputs_collect_phases */
    output_file trace_output; /* --trace, and its writer */
    trace_file *trace;
    output_file processes_output; /* --processes-file */
    struct processes_file *processes; /* its rows (processes_file.h); NULL without */
} outputs;
/* Checks and opens every output named in o.  Returns 0, or prints one line
 * and returns -1 (then call outputs_discard). */
int outputs_open(const cli_options *o, resmon_gpu *gpu, outputs *out);
/* The monitor options of every run, streaming each sample to out (the pid
 * and the peak-mark handling are the caller's to set). */
resmon_options outputs_monitor_options(const cli_options *o, outputs *out);
/* A monitor with the given options whose state the Prometheus exporters
 * render while it lives (0 or a negative errno, as resmon_monitor_new), and
 * its end: the exporters keep its final state, then it is freed (accepts
 * NULL). */
int outputs_monitor_new(outputs *out, const resmon_options *opts, resmon_monitor **m);
/* The wall clock (seconds since the epoch) at the window's first sample,
 * which resmon_monitor_start took: the summary's start_time, the samples
 * file's first unix_time.  The clock read after the start was later by
 * whatever came between (taskstats' registration: 80 ms on a loaded TSan
 * run, against the samples file's 50 ms check).  The wall clock now when
 * no sample is kept. */
double outputs_start_wall_epoch(const resmon_monitor *m);
/* r's start_wall_epoch from the first sample the outputs saw, once the
 * monitor has stopped (its sampler joined): exact where the start's
 * reading could see a later sample. */
void outputs_settle_start(const outputs *out, run_result *r);
/* CLOCK_REALTIME - CLOCK_MONOTONIC, measured once per process: every wall
 * time written of a sample (start_time, the samples file's unix_time). */
double outputs_wall_offset(void);
void outputs_monitor_free(outputs *out, resmon_monitor *m);
/* The monitor's on_sample callback (user: the outputs). */
void outputs_on_sample(const resmon_sample *s, void *user);
/* Before the monitor stops: takes the marks sent so far. */
void outputs_marks_drain(outputs *out);
/* After it stopped: the phases (and marks dropped) into r. */
void outputs_collect_phases(outputs *out, const resmon_monitor *m, run_result *r);
/* The command runs: the samples, trace and processes files take their
 * names.  One that cannot is said at once (one line) and fails at
 * outputs_finish without another. */
void outputs_command_started(outputs *out);
/* Nothing ran: closes everything and leaves every path as it was. */
void outputs_discard(outputs *out);
/* "-o -" (or the file behind stdout or stderr): the stream is shared with the
 * command, whose output may not end with a newline; where it is a regular
 * file, starts the JSON on a line of its own. */
void output_start_on_own_line(FILE *stdout_stream);
/* Writes every output for what was seen, and the table unless quiet.
 * Returns 0, or -1 when an output could not be written (each printed). */
int outputs_finish(const cli_options *o, outputs *out, const run_result *r);

#endif
