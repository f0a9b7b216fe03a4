/*
 * chart_series.c -- the series a chart draws (see chart_series.h).
 */
#include "chart_series.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define BYTES_PER_MIB 1048576.0

chart_series *chart_series_new(void)
{
    chart_series *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->stride = 1;
    for (size_t d = 0; d < DRAWN_COUNT; d++) {
        c->drawn[d] = SIZE_MAX;
        for (size_t i = 0; i < resmon_metric_count(); i++) {
            resmon_metric m;
            if (resmon_metric_info(i, &m, sizeof m) == 0 && strcmp(m.column, drawn_columns[d]) == 0)
                c->drawn[d] = m.sample_offset;
        }
    }
    return c;
}

void chart_series_free(chart_series *c)
{
    free(c);
}

/* The mean of two values, halved before the sum: two values near the
 * largest double summed to infinity, drawn at y="-inf" (attack 56a B10).
 * Halving is exact, so the mean is the same as (a + b) / 2 wherever that
 * is finite (above the subnormals). */
static double mean_of(double a, double b)
{
    return a / 2 + b / 2;
}

static double mean_known(double a, double b)
{
    if (isnan(a))
        return b;
    if (isnan(b))
        return a;
    return mean_of(a, b);
}

static void halve(chart_series *c)
{
    size_t out = 0;
    for (size_t i = 0; i + 1 < c->count; i += 2) {
        chart_point a = c->points[i], b = c->points[i + 1];
        c->points[out++] = (chart_point){a.t,
                                         mean_of(a.cpu, b.cpu),
                                         chart_max_known(a.rss, b.rss),
                                         mean_known(a.gpu_util, b.gpu_util),
                                         chart_max_known(a.gpu_mem, b.gpu_mem),
                                         chart_max_known(a.pss, b.pss),
                                         chart_max_known(a.io_read, b.io_read),
                                         chart_max_known(a.io_written, b.io_written),
                                         chart_max_known(a.nprocs, b.nprocs),
                                         chart_max_known(a.cgroup, b.cgroup)};
    }
    if (c->count % 2)
        c->points[out++] = c->points[c->count - 1];
    c->count = out;
    c->stride *= 2;
}

static void flush_pending(chart_series *c)
{
    if (c->pending_samples == 0)
        return;
    /* The sums were of each value / stride (chart_series_add): the mean is
     * scaled back by the stride they were added with, before halve()
     * doubles it. */
    chart_point p = c->pending;
    p.cpu = p.cpu / (double)c->pending_samples * (double)c->stride;
    p.gpu_util = c->gpu_util_samples ? p.gpu_util / (double)c->gpu_util_samples * (double)c->stride : NAN;
    if (!c->gpu_mem_samples)
        p.gpu_mem = NAN;
    if (c->count == CHART_MAX_POINTS)
        halve(c);
    c->points[c->count++] = p;
    c->pending_samples = c->gpu_util_samples = c->gpu_mem_samples = 0;
}

void chart_series_finish(chart_series *c)
{
    flush_pending(c);
}

static double drawn_value(const chart_series *c, const resmon_sample *s, enum drawn_metric d)
{
    double value = NAN;
    if (c->drawn[d] != SIZE_MAX)
        memcpy(&value, (const char *)s + c->drawn[d], sizeof value);
    return value;
}

void chart_series_add(chart_series *c, const resmon_sample *s, double elapsed_sec)
{
    chart_point *p = &c->pending;
    double pss = drawn_value(c, s, DRAWN_PSS), io_read = drawn_value(c, s, DRAWN_IO_READ),
           io_written = drawn_value(c, s, DRAWN_IO_WRITTEN), nprocs = drawn_value(c, s, DRAWN_NPROCS);
    if (c->pending_samples == 0)
        *p = (chart_point){elapsed_sec, 0, NAN, 0, 0, NAN, NAN, NAN, NAN, NAN};
    /* Summed as value / stride (a power of two: exact), so no sum of up to
     * stride values goes past the largest double; flush_pending scales
     * the mean back. */
    double per_point = (double)c->stride;
    p->cpu += s->cpu_percent / per_point;
    p->rss = chart_max_known(p->rss, s->rss_mb);
    p->pss = chart_max_known(p->pss, pss);
    p->io_read = chart_max_known(p->io_read, io_read / BYTES_PER_MIB);
    p->io_written = chart_max_known(p->io_written, io_written / BYTES_PER_MIB);
    p->nprocs = chart_max_known(p->nprocs, nprocs);
    c->any_pss |= !isnan(pss);
    p->cgroup = chart_max_known(p->cgroup, s->cgroup_mem_mb);
    c->any_cgroup |= !isnan(s->cgroup_mem_mb);
    c->any_io |= !isnan(io_read) || !isnan(io_written);
    c->any_nprocs |= !isnan(nprocs);
    if (!isnan(s->gpu_util)) {
        p->gpu_util += s->gpu_util / per_point;
        c->gpu_util_samples++;
        c->any_gpu_util = 1;
    }
    if (!isnan(s->gpu_mem_mb)) {
        p->gpu_mem = c->gpu_mem_samples ? (s->gpu_mem_mb > p->gpu_mem ? s->gpu_mem_mb : p->gpu_mem) : s->gpu_mem_mb;
        c->gpu_mem_samples++;
        c->any_gpu_mem = 1;
    }
    c->samples++;
    c->cpu_sum += s->cpu_percent * CHART_SUM_SCALE;
    c->rss_max = c->samples == 1 ? s->rss_mb : chart_max_known(c->rss_max, s->rss_mb);
    c->t_last = elapsed_sec > c->t_last ? elapsed_sec : c->t_last;
    if (++c->pending_samples >= c->stride)
        flush_pending(c);
}

void chart_series_phase(chart_series *c, const char *name, double elapsed_sec)
{
    char kept[CHART_PHASE_NAME_MAX];
    size_t len = strlen(name);
    if (len >= sizeof kept) { /* cut on a character boundary */
        len = sizeof kept - 1;
        while (len > 0 && ((unsigned char)name[len] & 0xC0) == 0x80)
            len--;
    }
    memcpy(kept, name, len);
    kept[len] = '\0';
    if (c->phase_count && strcmp(c->phases[c->phase_count - 1].name, kept) == 0)
        return; /* the same phase goes on */
    if (c->phase_count == CHART_MAX_PHASES) {
        c->phases_dropped++; /* the last band runs on to the end */
        return;
    }
    chart_phase *p = &c->phases[c->phase_count++];
    p->start = elapsed_sec;
    memcpy(p->name, kept, len + 1);
}

size_t chart_series_samples(const chart_series *c)
{
    return c->samples;
}
