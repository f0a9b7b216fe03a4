/*
 * chart.h -- a chart of one run, or of several overlaid, as SVG (chart.c); the
 * series it draws is chart_series.h.
 */
#ifndef RESMON_CHART_H
#define RESMON_CHART_H

#include "chart_series.h"
#include "run_result.h"

#include <stddef.h>
#include <stdio.h>

/* CPUs in resmon's affinity mask (what a command it starts may use), or 0. */
int chart_cpus_available(void);

typedef struct chart_run {
    const chart_series *series; /* finished (chart_series_finish) */
    const char *label;          /* the legend's name; NULL with a subtitle */
    double end_sec;             /* where the run ends on the time axis */
} chart_run;
typedef struct chart_info {
    const char *title;
    const char *subtitle;          /* NULL: a line per run (label and figures) */
    int cpus;                      /* a capacity line at cpus x 100 %; 0: none */
    const char *cpus_source;       /* where cpus came from, for its label */
    double exact_peak_process_mb;  /* NAN: not drawn */
    const char *exact_peak_process_source; /* "wait4", "VmHWM" */
    double exact_peak_tree_mb;     /* the whole tree's exact peak (a cgroup's memory.peak); NAN: not drawn */
    const char *exact_peak_tree_source;
} chart_info;
/* Draws runs (one, or several overlaid with a colour each) as SVG; the time
 * axis ends at the latest end_sec.  Returns 0 or -errno. */
int chart_render_svg(FILE *out, const chart_info *info, const chart_run *runs, size_t count);
/* The live run's chart, from what the run produced.  Returns 0 or -errno. */
/* interval_sec: the asked interval, which the subtitle names. */
int chart_write_svg(const chart_series *c, FILE *out, const char *title, const run_result *r, double interval_sec);

#endif
