/*
 * summary_json.c -- resmon_summary to JSON, by hand: a fixed set of keys in a
 * fixed order, numbers that round-trip.  Reading is summary_json_read.c's,
 * a file of its own so that a program that only writes (the resmon command)
 * never links Jansson.
 */
#include "json_number.h"
#include "json_text.h"
#include "metric_fields.h"
#include "struct_size.h"
#include "resmon.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- writing ------------------------------------------------------------ */

static void put_key(rm__json_text *w, const char *key)
{
    rm__json_put(w, w->len > 1 ? ", \"" : "\"", w->len > 1 ? 3 : 1);
    rm__json_put(w, key, strlen(key));
    rm__json_put(w, "\": ", 3);
}

static void put_double(rm__json_text *w, const char *key, double value)
{
    char number[32];
    size_t n = rm__json_format_double(value, number);
    put_key(w, key);
    rm__json_put(w, number, n);
}

int resmon_summary_to_json(const resmon_summary *caller_summary, char *buf, size_t cap)
{
    if (!caller_summary || (!buf && cap))
        return -EINVAL;
    resmon_summary own; /* the caller's, in this library's layout */
    int rc = rm__copy_struct_in(&own, sizeof own, caller_summary, caller_summary->struct_size,
                                RM__SIZE_THROUGH(resmon_summary, peak_gpu_proc_mem_mb));
    if (rc < 0)
        return rc;
    const resmon_summary *s = &own;
    rm__json_text w = {buf, cap, 0};
    rm__json_put(&w, "{", 1);
    /* The seed's to_dict() keys, in its order. */
    put_double(&w, "peak_rss_mb", s->peak_rss_mb);
    put_double(&w, "mean_rss_mb", s->mean_rss_mb);
    put_double(&w, "peak_gpu_mem_mb", s->peak_gpu_mem_mb);
    put_double(&w, "mean_gpu_util", s->mean_gpu_util);
    put_double(&w, "memory_growth_mb", s->memory_growth_mb);
    char count[24];
    int count_len = snprintf(count, sizeof count, "%llu", (unsigned long long)s->num_samples);
    put_key(&w, "num_samples");
    rm__json_put(&w, count, (size_t)count_len);
    put_double(&w, "duration_sec", s->duration_sec);
    if (!isnan(s->mean_gpu_clock_mhz))
        put_double(&w, "mean_gpu_clock_mhz", s->mean_gpu_clock_mhz);
    if (!isnan(s->mean_gpu_power_w))
        put_double(&w, "mean_gpu_power_w", s->mean_gpu_power_w);
    /* Beyond the seed, only when known: first the CPU figures of a measured
     * window (a seed summary has none, and then no skipped_slots either). */
    if (isfinite(s->mean_cpu_percent))
        put_double(&w, "mean_cpu_percent", s->mean_cpu_percent);
    if (isfinite(s->peak_cpu_percent))
        put_double(&w, "peak_cpu_percent", s->peak_cpu_percent);
    if (isfinite(s->cpu_time_sec)) {
        put_double(&w, "cpu_time_sec", s->cpu_time_sec);
        put_key(&w, "skipped_slots");
        count_len = snprintf(count, sizeof count, "%llu", (unsigned long long)s->skipped_slots);
        rm__json_put(&w, count, (size_t)count_len);
    }
    if (isfinite(s->hwm_rss_mb) && s->hwm_scope != RESMON_HWM_UNKNOWN) {
        put_double(&w, "hwm_rss_mb", s->hwm_rss_mb);
        put_key(&w, "hwm_scope");
        if (s->hwm_scope == RESMON_HWM_WINDOW)
            rm__json_put(&w, "\"window\"", 8);
        else
            rm__json_put(&w, "\"lifetime\"", 10);
    }
    if (isfinite(s->gpu_energy_j)) {
        put_double(&w, "gpu_energy_j", s->gpu_energy_j);
        put_key(&w, "gpu_energy_source");
        if (s->gpu_energy_source == RESMON_ENERGY_COUNTER)
            rm__json_put(&w, "\"counter\"", 9);
        else
            rm__json_put(&w, "\"integrated\"", 12);
    }
    if (isfinite(s->cpu_energy_j))
        put_double(&w, "cpu_energy_j", s->cpu_energy_j);
    if (isfinite(s->peak_gpu_proc_mem_mb))
        put_double(&w, "peak_gpu_proc_mem_mb", s->peak_gpu_proc_mem_mb);
    for (size_t i = 0; i < rm__metric_field_count; i++) {
        /* A summary from an older resmon.h ends before these fields: the
         * zeros it was extended with are not measurements. */
        int in_callers_struct = rm__metric_fields[i].summary_offset + sizeof(double) <= caller_summary->struct_size;
        double value = rm__summary_metric_value(s, &rm__metric_fields[i]);
        if (in_callers_struct && isfinite(value))
            put_double(&w, rm__metric_fields[i].summary_field, value);
    }
    /* Since 0.4: a cgroup's figures, when the summary had a cgroup. */
    int has_cgroup = offsetof(resmon_summary, cgroup_version) + sizeof(int32_t) <= caller_summary->struct_size &&
                     (s->cgroup_version == 1 || s->cgroup_version == 2);
    if (has_cgroup) {
        put_key(&w, "cgroup_version");
        rm__json_put(&w, s->cgroup_version == 2 ? "2" : "1", 1);
        const struct {
            const char *key;
            double value;
        } cgroup_fields[] = {
            {"cgroup_peak_mb", s->cgroup_peak_mb},
            {"cgroup_oom_kills", s->cgroup_oom_kills},
            {"cgroup_throttled_sec", s->cgroup_throttled_sec},
            {"cgroup_nr_throttled", s->cgroup_nr_throttled},
            {"cgroup_io_read_bytes", s->cgroup_io_read_bytes},
            {"cgroup_io_write_bytes", s->cgroup_io_write_bytes},
        };
        for (size_t i = 0; i < sizeof cgroup_fields / sizeof *cgroup_fields; i++)
            if (isfinite(cgroup_fields[i].value))
                put_double(&w, cgroup_fields[i].key, cgroup_fields[i].value);
    }
    rm__json_put(&w, "}", 1);
    if (cap)
        buf[w.len < cap ? w.len : cap - 1] = '\0';
    return w.len > INT_MAX ? -ENOSPC : (int)w.len;
}
