/*
 * summary_json.c -- resmon_summary to JSON, by hand: a fixed set of keys in a
 * fixed order, numbers that round-trip.  Reading is summary_json_read.c's,
 * a file of its own so that a program that only writes (the resmon command)
 * never links Jansson.
 */
#include "json_number.h"
#include "figure_fields.h"
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

static void put_count(rm__json_text *w, const char *key, uint64_t count)
{
    char text[24];
    int n = snprintf(text, sizeof text, "%llu", (unsigned long long)count);
    put_key(w, key);
    rm__json_put(w, text, (size_t)n);
}

/* Whether a figure of s with this value is written (figure_list.h's JSON
 * column).  Beyond the seed's keys, only what is known: the CPU figures of
 * a measured window (a seed summary has none, and then no skipped_slots
 * either), the exact peak with its scope, the GPU's energy. */
static int written(const rm__summary_figure *f, const resmon_summary *s, double value)
{
    switch (f->json) {
    case RM__FIGURE_JSON_REQUIRED:
    case RM__FIGURE_JSON_SEED: return 1;
    case RM__FIGURE_JSON_UNLESS_NAN: return !isnan(value);
    case RM__FIGURE_JSON_KNOWN:
    case RM__FIGURE_JSON_ENERGY:
    case RM__FIGURE_JSON_CGROUP: return isfinite(value);
    case RM__FIGURE_JSON_MEASURED: return isfinite(s->cpu_time_sec);
    case RM__FIGURE_JSON_HWM: return isfinite(value) && s->hwm_scope != RESMON_HWM_UNKNOWN;
    }
    return 0;
}

static void put_figures(rm__json_text *w, const resmon_summary *s, const rm__summary_figures *list)
{
    for (size_t i = 0; i < list->count; i++) {
        const rm__summary_figure *f = &list->figures[i];
        const char *at = (const char *)s + f->offset;
        uint64_t count = 0;
        double value;
        if (f->is_u64) {
            memcpy(&count, at, sizeof count);
            value = (double)count;
        } else {
            memcpy(&value, at, sizeof value);
        }
        if (!written(f, s, value))
            continue;
        if (f->is_u64)
            put_count(w, f->key, count);
        else
            put_double(w, f->key, value);
        if (f->json == RM__FIGURE_JSON_HWM) {
            put_key(w, "hwm_scope");
            if (s->hwm_scope == RESMON_HWM_WINDOW)
                rm__json_put(w, "\"window\"", 8);
            else
                rm__json_put(w, "\"lifetime\"", 10);
        } else if (f->json == RM__FIGURE_JSON_ENERGY) {
            put_key(w, "gpu_energy_source");
            if (s->gpu_energy_source == RESMON_ENERGY_COUNTER)
                rm__json_put(w, "\"counter\"", 9);
            else
                rm__json_put(w, "\"integrated\"", 12);
        }
    }
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
    /* The seed's to_dict() keys, in its order, then the rest (figure_list.h). */
    put_figures(&w, s, &rm__summary_figures_base);
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
        put_figures(&w, s, &rm__summary_figures_cgroup);
    }
    rm__json_put(&w, "}", 1);
    if (cap)
        buf[w.len < cap ? w.len : cap - 1] = '\0';
    return w.len > INT_MAX ? -ENOSPC : (int)w.len;
}
