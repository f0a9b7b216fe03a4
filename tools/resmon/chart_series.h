/*
 * chart_series.h -- the series a chart draws: a run thinned evenly as it
 * grows, and its phases.  Data only: chart.c draws it as SVG; the live run
 * (outputs.c) and saved samples files (samples_read.c) feed it.
 *
 * The series is thinned so memory stays constant on day-long runs: at most
 * CHART_MAX_POINTS points, each covering `stride` samples; when full,
 * neighbours merge pairwise and the stride doubles.  A point keeps the mean
 * of CPU and GPU utilization (a rate: its mean is what was used) and the
 * maximum of memory and of the process count (levels: a chart must not hide
 * a peak) and of the I/O totals (they only grow, so the maximum is the
 * latest).
 */
#ifndef RESMON_CHART_SERIES_H
#define RESMON_CHART_SERIES_H

#include "resmon.h"

#include <math.h>
#include <stddef.h>

#define CHART_MAX_POINTS 2048
/* cpu_sum holds each value times this (2^-64: exact, for values above the
 * subnormals), so 2^64 samples near the largest double do not sum to
 * infinity; divide the mean by it. */
#define CHART_SUM_SCALE 0x1p-64
/* A phase named name starts at elapsed_sec (the previous one ends there);
 * the same name again goes on with it.  "" is time outside any named phase
 * (not drawn).  A name is kept to CHART_PHASE_NAME_MAX - 1 bytes; after
 * CHART_MAX_PHASES phases, later ones are counted, not kept, and the last
 * kept band runs on to the end ("+N more phases" under the strip). */
#define CHART_MAX_PHASES 64
#define CHART_PHASE_NAME_MAX 64

typedef struct chart_point {
    double t, cpu, rss, gpu_util, gpu_mem;
    double pss, io_read, io_written, nprocs; /* NAN when not read; I/O in MiB */
    double cgroup; /* the tree's cgroup memory (whole tree, page cache included); NAN without one */
} chart_point;

/* The metric-group metrics the chart draws, named by their samples-file
 * column; where each lives in a resmon_sample comes from the library's
 * metric list (resmon_metric_info). */
enum drawn_metric { DRAWN_PSS, DRAWN_IO_READ, DRAWN_IO_WRITTEN, DRAWN_NPROCS, DRAWN_COUNT };
static const char *const drawn_columns[DRAWN_COUNT] = {"pss_mb", "rchar", "wchar", "nprocs"};

typedef struct chart_phase {
    double start;
    char name[CHART_PHASE_NAME_MAX];
} chart_phase;

typedef struct chart_series chart_series;
struct chart_series {
    chart_point points[CHART_MAX_POINTS];
    size_t count;
    size_t stride;          /* samples per point */
    chart_point pending;    /* the point being filled */
    size_t pending_samples;
    size_t gpu_util_samples, gpu_mem_samples; /* in pending */
    int any_gpu_util, any_gpu_mem, any_pss, any_io, any_nprocs;
    int any_cgroup;
    /* the whole run, unthinned, for its legend line */
    size_t samples;
    double cpu_sum; /* each sample's CPU x CHART_SUM_SCALE */
    double rss_max, t_last;
    chart_phase phases[CHART_MAX_PHASES];
    size_t phase_count, phases_dropped;
    size_t drawn[DRAWN_COUNT]; /* each drawn metric's offset in resmon_sample; SIZE_MAX: not in the list */
};

/* The larger of two values, a NAN (not read) giving way to the other. */
static inline double chart_max_known(double a, double b)
{
    if (isnan(a))
        return b;
    if (isnan(b))
        return a;
    return a > b ? a : b;
}

/* The fields above are the renderers' to read; only chart_series.c writes them. */
chart_series *chart_series_new(void);
void chart_series_add(chart_series *c, const resmon_sample *s, double elapsed_sec);
void chart_series_phase(chart_series *c, const char *name, double elapsed_sec);
/* Flushes the partly filled point: call once all samples are added. */
void chart_series_finish(chart_series *c);
size_t chart_series_samples(const chart_series *c);
void chart_series_free(chart_series *c);

#endif
