/*
 * summary.c -- the running summary of a window (see summary.h).
 *
 * Readers may copy the accumulator while it is updated (summary.h), so every
 * store to it goes through SET, a C11 atomic store; the writer's own loads
 * are plain, since no other thread stores.
 */
#include "summary.h"
#include "metric_fields.h"
#include "seqlock.h"

#include <math.h>
#include <string.h>

_Static_assert(sizeof(rm__summary_acc) % sizeof(uint64_t) == 0, "the accumulator is whole 64-bit words");
#define ACC_WORDS (sizeof(rm__summary_acc) / sizeof(uint64_t))

#define SET(field, value)                                                                         \
    _Generic((field), double: rm__shared_store_double, uint64_t: rm__shared_store_u64)(&(field), (value))

/* The figures only some samples know (RM__FOLD_KNOWN in summary.h): a MAX
 * starts NAN, a MEAN's sum and count 0 (memset). */
#define RESET_KNOWN(group, field, type, fold, ...) RM__FOLD_KNOWN(RESET_KNOWN, group, field, fold)
#define RESET_KNOWN_MAX(field, from) acc->field = NAN;
#define RESET_KNOWN_MEAN(field, from)
#define RESET_KNOWN_OWN(field, from)

static void reset_fields(rm__summary_acc *acc, int metrics_on)
{
    memset(acc, 0, sizeof *acc);
    acc->hwm_rss_mb = NAN;
    acc->hwm_scope = RESMON_HWM_UNKNOWN;
    acc->previous_power_w = NAN;
    acc->cpu_energy_j = NAN;
    RM__SUMMARY_FIGURES_BASE(RESET_KNOWN)
    RM__SUMMARY_FIGURES_CGROUP(RESET_KNOWN)
    acc->cgroup_oom_kills = acc->cgroup_throttled_sec = acc->cgroup_nr_throttled = NAN;
    acc->cgroup_io_read_bytes = acc->cgroup_io_write_bytes = NAN;
    acc->walk_interval_sec = NAN;
    for (size_t i = 0; i < rm__metric_field_count; i++)
        *rm__summary_metric(&acc->metrics, &rm__metric_fields[i]) = NAN;
    acc->metrics_on = metrics_on;
}

void rm__summary_acc_reset(rm__summary_acc *acc, int metrics_on)
{
    rm__summary_acc fresh;
    reset_fields(&fresh, metrics_on);
    rm__summary_acc_store(acc, &fresh);
}

void rm__summary_acc_store(rm__summary_acc *shared, const rm__summary_acc *src)
{
    rm__shared_store_words(shared, src, ACC_WORDS);
}

void rm__summary_acc_load(rm__summary_acc *dst, const rm__summary_acc *shared)
{
    rm__shared_load_words(dst, shared, ACC_WORDS);
}

void rm__summary_acc_add_skipped(rm__summary_acc *acc, uint64_t slots)
{
    SET(acc->skipped_slots, acc->skipped_slots + slots);
}

/* Peaks keep the largest known value, totals the latest (a sample that
 * could not read a total leaves the previous one standing). */
static void add_metric_fields(resmon_summary *metrics, const resmon_sample *s)
{
    for (size_t i = 0; i < rm__metric_field_count; i++) {
        const rm__metric_field *f = &rm__metric_fields[i];
        double value = rm__sample_metric(s, f);
        double *kept = rm__summary_metric(metrics, f);
        if (!isnan(value) && (f->fold == RESMON_FOLD_LAST || !(value <= *kept)))
            rm__shared_store_double(kept, value);
    }
}

/* The figures only some samples know are folded over the samples that have
 * them, as the seed does (it filters out None before taking the mean, and
 * its peaks): a MAX keeps the largest, a MEAN adds to its sum and count. */
#define ADD_KNOWN(group, field, type, fold, ...) RM__FOLD_KNOWN(ADD_KNOWN, group, field, fold)
#define ADD_KNOWN_MAX(field, from)                                                                                \
    if (!isnan(s->from) && !(s->from <= acc->field))                                                              \
        SET(acc->field, s->from);
#define ADD_KNOWN_MEAN(field, from)                                                                               \
    if (!isnan(s->from)) {                                                                                        \
        SET(acc->sum_##from, acc->sum_##from + s->from);                                                          \
        SET(acc->known_##from, acc->known_##from + 1);                                                            \
    }
#define ADD_KNOWN_OWN(field, from)

/* The CPU peak is the largest rate over spans of consecutive samples, each
 * at least RM__CPU_PEAK_SPAN_SEC and not ended by a sample taken under half
 * an interval after the previous one (the stop's): below a few scheduler
 * ticks the kernel brings another process's CPU time up to date only at
 * ticks, so single short intervals read 0 % or every CPU busy (one busy
 * thread at 10 ms reads 80 %, 120 %, ...), and the stop's interval is
 * mostly resmon's own.  The spans cover the window, the last one taking
 * the samples after it, so the peak is never below the mean. */
#define RM__CPU_PEAK_SPAN_SEC 0.02

static double cpu_rate_percent(double cpu_sec, double span_sec)
{
    return span_sec > 0 ? 100.0 * cpu_sec / span_sec : 0.0;
}

static void add_cpu_peak(rm__summary_acc *acc, double cpu_sec, double span_sec, int short_interval)
{
    if (span_sec < 0)
        span_sec = 0;
    double open_cpu = acc->peak_open_cpu_sec + cpu_sec, open_span = acc->peak_open_span_sec + span_sec;
    if (short_interval || open_span < RM__CPU_PEAK_SPAN_SEC - 1e-9) { /* 2 x 10 ms is a span */
        SET(acc->peak_open_cpu_sec, open_cpu);
        SET(acc->peak_open_span_sec, open_span);
        return;
    }
    double rate = cpu_rate_percent(open_cpu, open_span);
    if (rate > acc->peak_cpu_percent)
        SET(acc->peak_cpu_percent, rate);
    SET(acc->peak_last_cpu_sec, open_cpu);
    SET(acc->peak_last_span_sec, open_span);
    if (acc->peak_open_span_sec > 0 || acc->peak_open_cpu_sec != 0) { /* else still 0: the usual sample */
        SET(acc->peak_open_cpu_sec, 0.0);
        SET(acc->peak_open_span_sec, 0.0);
    }
}

/* The peak with the open span's samples joined to the closed one before. */
static double cpu_peak_percent(const rm__summary_acc *acc)
{
    if (acc->peak_open_span_sec <= 0)
        return acc->peak_cpu_percent;
    double tail = cpu_rate_percent(acc->peak_last_cpu_sec + acc->peak_open_cpu_sec,
                                   acc->peak_last_span_sec + acc->peak_open_span_sec);
    return tail > acc->peak_cpu_percent ? tail : acc->peak_cpu_percent;
}

static inline void add_base(rm__summary_acc *acc, const resmon_sample *s, double cpu_time_sec, int short_interval)
{
    if (acc->count == 0) {
        SET(acc->first_timestamp, s->timestamp);
        SET(acc->first_rss_mb, s->rss_mb);
        SET(acc->peak_rss_mb, s->rss_mb);
        SET(acc->peak_cpu_percent, 0.0);
    } else {
        SET(acc->cpu_time_sec, acc->cpu_time_sec + cpu_time_sec); /* the first sample has no interval */
        double span = s->timestamp - acc->last_timestamp;
        add_cpu_peak(acc, s->cpu_percent * span / 100.0, span, short_interval); /* cpu_time_sec, as sampled */
    }
    if (s->rss_mb > acc->peak_rss_mb)
        SET(acc->peak_rss_mb, s->rss_mb);
    SET(acc->sum_rss_mb, acc->sum_rss_mb + s->rss_mb);
    SET(acc->last_rss_mb, s->rss_mb);
    SET(acc->last_timestamp, s->timestamp);
    SET(acc->count, acc->count + 1);
}

void rm__summary_acc_add_base(rm__summary_acc *acc, const resmon_sample *s, double cpu_time_sec,
                              int short_interval)
{
    add_base(acc, s, cpu_time_sec, short_interval);
}

void rm__summary_acc_add(rm__summary_acc *acc, const resmon_sample *s, double cpu_time_sec,
                         int short_interval)
{
    add_base(acc, s, cpu_time_sec, short_interval);
    RM__SUMMARY_FIGURES_BASE(ADD_KNOWN)
    RM__SUMMARY_FIGURES_CGROUP(ADD_KNOWN)
    if (!isnan(s->gpu_power_w) && !isnan(acc->previous_power_w) && s->timestamp > acc->previous_timestamp) {
        SET(acc->integrated_energy_j, acc->integrated_energy_j + (s->gpu_power_w + acc->previous_power_w) / 2 *
                                                                     (s->timestamp - acc->previous_timestamp));
        SET(acc->integrated_intervals, acc->integrated_intervals + 1);
    }
    SET(acc->previous_power_w, s->gpu_power_w);
    SET(acc->previous_timestamp, s->timestamp);
    if (acc->metrics_on)
        add_metric_fields(&acc->metrics, s);
}

void rm__summary_acc_add_energy(rm__summary_acc *acc, double energy_j)
{
    if (isnan(energy_j))
        return;
    if (acc->energy_count == 0)
        SET(acc->first_energy_j, energy_j);
    SET(acc->last_energy_j, energy_j);
    SET(acc->energy_count, acc->energy_count + 1);
}

static double mean_or_nan(double sum, uint64_t count)
{
    return count ? sum / (double)count : NAN;
}

#define RESULT_KNOWN(group, field, type, fold, ...) RM__FOLD_KNOWN(RESULT_KNOWN, group, field, fold)
#define RESULT_KNOWN_MAX(field, from) s.field = acc->field;
#define RESULT_KNOWN_MEAN(field, from) s.field = mean_or_nan(acc->sum_##from, acc->known_##from);
#define RESULT_KNOWN_OWN(field, from)

resmon_summary rm__summary_acc_result(const rm__summary_acc *acc)
{
    resmon_summary s;
    memset(&s, 0, sizeof s);
    s.struct_size = sizeof s;
    RM__SUMMARY_FIGURES_BASE(RESULT_KNOWN)
    RM__SUMMARY_FIGURES_CGROUP(RESULT_KNOWN)
    s.hwm_rss_mb = acc->hwm_rss_mb;
    s.hwm_scope = acc->hwm_scope;
    s.hwm_error = acc->hwm_error;
    s.skipped_slots = acc->skipped_slots;
    s.cpu_energy_j = acc->cpu_energy_j;
    s.cgroup_oom_kills = acc->cgroup_oom_kills;
    s.cgroup_throttled_sec = acc->cgroup_throttled_sec;
    s.cgroup_nr_throttled = acc->cgroup_nr_throttled;
    s.cgroup_io_read_bytes = acc->cgroup_io_read_bytes;
    s.cgroup_io_write_bytes = acc->cgroup_io_write_bytes;
    s.walk_interval_sec = acc->walk_interval_sec;
    s.cgroup_version = acc->cgroup_version;
    s.cgroup_error = acc->cgroup_error;
    for (size_t i = 0; i < rm__metric_field_count; i++)
        *rm__summary_metric(&s, &rm__metric_fields[i]) = rm__summary_metric_value(&acc->metrics, &rm__metric_fields[i]);
    if (acc->energy_count >= 2 && acc->last_energy_j >= acc->first_energy_j) {
        s.gpu_energy_j = acc->last_energy_j - acc->first_energy_j;
        s.gpu_energy_source = RESMON_ENERGY_COUNTER;
    } else if (acc->integrated_intervals > 0) {
        s.gpu_energy_j = acc->integrated_energy_j;
        s.gpu_energy_source = RESMON_ENERGY_INTEGRATED;
    } else {
        s.gpu_energy_j = NAN;
    }
    if (acc->count == 0)
        return s; /* the seed's zeroed summary */
    s.num_samples = acc->count;
    s.peak_rss_mb = acc->peak_rss_mb;
    s.mean_rss_mb = acc->sum_rss_mb / (double)acc->count;
    s.memory_growth_mb = acc->last_rss_mb - acc->first_rss_mb;
    s.duration_sec = acc->count >= 2 ? acc->last_timestamp - acc->first_timestamp : 0.0;
    /* CPU time over wall time for the whole window: a mean of per-sample
     * percentages would overweight short intervals such as the stop's. */
    s.mean_cpu_percent = s.duration_sec > 0 ? 100.0 * acc->cpu_time_sec / s.duration_sec : 0.0;
    s.peak_cpu_percent = cpu_peak_percent(acc);
    /* The spans tile the window, so the highest span's rate is at least the
     * mean; summing the spans' seconds may round it a hair below (1e-9 of a
     * 1 ms window was seen), and a peak below the mean reads as a bug. */
    if (s.peak_cpu_percent < s.mean_cpu_percent)
        s.peak_cpu_percent = s.mean_cpu_percent;
    s.cpu_time_sec = acc->cpu_time_sec;
    return s;
}
