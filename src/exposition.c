/*
 * exposition.c -- a monitor's state as Prometheus text (0.0.4) or
 * OpenMetrics 1.0.
 *
 * One table lists every metric once -- name, type, unit, help and where its
 * value comes from -- and one writer renders it in either format, so the two
 * formats cannot disagree about what a metric means.  Values are converted to
 * base units here (MiB to bytes, MHz to hertz, percent to ratios of 1), as
 * Prometheus' naming conventions ask.
 */
#include "internal.h"
#include "metric_list.h"
#include "json_number.h"
#include "struct_size.h"
#include "utf8.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>

typedef enum metric_type { METRIC_GAUGE, METRIC_COUNTER } metric_type;

/* Where a value comes from: the window's summary, or the latest sample
 * (NULL when no sample was taken).  NAN leaves the series out. */
typedef double (*metric_value)(const resmon_summary *s, const resmon_sample *last);

/* A metric-group field of the summary (resmon_options.metrics), times a scale
 * to its base unit.  A summary from an older resmon.h ends before these
 * fields; its zero-extended copies are not measurements and are left out. */
typedef struct summary_field {
    size_t offset; /* 0: the metric has a metric_value instead */
    double scale;
} summary_field;

typedef struct metric {
    /* The family name.  For a counter the series adds "_total" (and so does
     * the family in text 0.0.4, which has no separate family name). */
    const char *name;
    metric_type type;
    const char *unit; /* OpenMetrics # UNIT, a suffix of name; NULL for none */
    const char *help; /* fixed text: no backslash, quote or newline to escape */
    metric_value value;
    int integer;      /* written without a fraction (counts) */
    summary_field field; /* when value is NULL */
} metric;

#define FROM_FUNCTION(function, integer) function, integer, {0, 0}

/* A row of the metric list (metric_list.h): a MAX is a gauge, a LAST a
 * counter; values in base units (MiB as bytes), counts without a fraction. */
#define ROW_TYPE_MAX METRIC_GAUGE
#define ROW_TYPE_LAST METRIC_COUNTER
#define ROW_UNIT_MIB "bytes"
#define ROW_UNIT_BYTES "bytes"
#define ROW_UNIT_SECONDS "seconds"
#define ROW_UNIT_COUNT NULL
#define ROW_SCALE_MIB RM__BYTES_PER_MIB
#define ROW_SCALE_BYTES 1.0
#define ROW_SCALE_SECONDS 1.0
#define ROW_SCALE_COUNT 1.0
#define ROW_INTEGER_MIB 0
#define ROW_INTEGER_BYTES 0
#define ROW_INTEGER_SECONDS 0
#define ROW_INTEGER_COUNT 1
#define ROW(group_, sample_, summary_, fold_, unit_, column_, name_, help_, words_, ...)                          \
    {.name = name_, .type = ROW_TYPE_##fold_, .unit = ROW_UNIT_##unit_, .help = help_,                           \
     .integer = ROW_INTEGER_##unit_, .field = {offsetof(resmon_summary, summary_), ROW_SCALE_##unit_}},

#define LAST(field) (last ? last->field : NAN)

static double cpu_seconds(const resmon_summary *s, const resmon_sample *last) { (void)last; return s->cpu_time_sec; }
static double cpu_ratio(const resmon_summary *s, const resmon_sample *last) { (void)s; return LAST(cpu_percent) / 100.0; }
static double rss_bytes(const resmon_summary *s, const resmon_sample *last) { (void)s; return LAST(rss_mb) * RM__BYTES_PER_MIB; }
static double rss_max_bytes(const resmon_summary *s, const resmon_sample *last) { (void)last; return s->peak_rss_mb * RM__BYTES_PER_MIB; }
static double rss_mean_bytes(const resmon_summary *s, const resmon_sample *last) { (void)last; return s->mean_rss_mb * RM__BYTES_PER_MIB; }
static double rss_exact_max_bytes(const resmon_summary *s, const resmon_sample *last) { (void)last; return s->hwm_rss_mb * RM__BYTES_PER_MIB; }
static double samples(const resmon_summary *s, const resmon_sample *last) { (void)last; return (double)s->num_samples; }
static double skipped_slots(const resmon_summary *s, const resmon_sample *last) { (void)last; return (double)s->skipped_slots; }
static double duration(const resmon_summary *s, const resmon_sample *last) { (void)last; return s->duration_sec; }
static double gpu_ratio(const resmon_summary *s, const resmon_sample *last) { (void)s; return LAST(gpu_util) / 100.0; }
static double gpu_mem_bytes(const resmon_summary *s, const resmon_sample *last) { (void)s; return LAST(gpu_mem_mb) * RM__BYTES_PER_MIB; }
static double gpu_mem_max_bytes(const resmon_summary *s, const resmon_sample *last) { (void)last; return s->peak_gpu_mem_mb * RM__BYTES_PER_MIB; }
static double gpu_proc_mem_bytes(const resmon_summary *s, const resmon_sample *last) { (void)s; return LAST(gpu_proc_mem_mb) * RM__BYTES_PER_MIB; }
static double gpu_hertz(const resmon_summary *s, const resmon_sample *last) { (void)s; return LAST(gpu_clock_mhz) * 1e6; }
static double gpu_watts(const resmon_summary *s, const resmon_sample *last) { (void)s; return LAST(gpu_power_w); }
static double gpu_joules(const resmon_summary *s, const resmon_sample *last) { (void)last; return s->gpu_energy_j; }
static double cpu_joules(const resmon_summary *s, const resmon_sample *last) { (void)last; return s->cpu_energy_j; }
/* Since 0.4: a cgroup's figures, only when the summary had a cgroup (an
 * older caller's summary reads cgroup_version 0). */
#define CGROUP(value) (s->cgroup_version ? (value) : NAN)
static double cgroup_bytes(const resmon_summary *s, const resmon_sample *last) { return CGROUP(LAST(cgroup_mem_mb) * RM__BYTES_PER_MIB); }
static double cgroup_max_bytes(const resmon_summary *s, const resmon_sample *last) { (void)last; return CGROUP(s->cgroup_peak_mb * RM__BYTES_PER_MIB); }
static double cgroup_oom_kills(const resmon_summary *s, const resmon_sample *last) { (void)last; return CGROUP(s->cgroup_oom_kills); }
static double cgroup_throttled(const resmon_summary *s, const resmon_sample *last) { (void)last; return CGROUP(s->cgroup_throttled_sec); }
static double cgroup_io_read(const resmon_summary *s, const resmon_sample *last) { (void)last; return CGROUP(s->cgroup_io_read_bytes); }
static double cgroup_io_write(const resmon_summary *s, const resmon_sample *last) { (void)last; return CGROUP(s->cgroup_io_write_bytes); }

static const metric metrics[] = {
    {"resmon_cpu_seconds", METRIC_COUNTER, "seconds", "CPU time of the monitored processes in the window.", FROM_FUNCTION(cpu_seconds, 0)},
    {"resmon_cpu_utilization_ratio", METRIC_GAUGE, "ratio", "CPU time over wall time at the latest sample (1 = one core busy).", FROM_FUNCTION(cpu_ratio, 0)},
    {"resmon_resident_memory_bytes", METRIC_GAUGE, "bytes", "Resident memory at the latest sample.", FROM_FUNCTION(rss_bytes, 0)},
    {"resmon_resident_memory_max_bytes", METRIC_GAUGE, "bytes", "Largest sampled resident memory in the window so far.", FROM_FUNCTION(rss_max_bytes, 0)},
    {"resmon_resident_memory_mean_bytes", METRIC_GAUGE, "bytes", "Mean sampled resident memory in the window so far.", FROM_FUNCTION(rss_mean_bytes, 0)},
    {"resmon_resident_memory_exact_max_bytes", METRIC_GAUGE, "bytes", "Exact peak resident memory from the kernel's high-water mark (largest single process).", FROM_FUNCTION(rss_exact_max_bytes, 0)},
    {"resmon_samples", METRIC_COUNTER, NULL, "Samples taken in the window.", FROM_FUNCTION(samples, 1)},
    {"resmon_skipped_slots", METRIC_COUNTER, NULL, "Schedule slots missed because the sampler ran late.", FROM_FUNCTION(skipped_slots, 1)},
    {"resmon_window_duration_seconds", METRIC_GAUGE, "seconds", "Time from the window's first sample to its latest.", FROM_FUNCTION(duration, 0)},
    {"resmon_gpu_utilization_ratio", METRIC_GAUGE, "ratio", "GPU utilization at the latest sample.", FROM_FUNCTION(gpu_ratio, 0)},
    {"resmon_gpu_memory_used_bytes", METRIC_GAUGE, "bytes", "GPU memory in use at the latest sample.", FROM_FUNCTION(gpu_mem_bytes, 0)},
    {"resmon_gpu_memory_used_max_bytes", METRIC_GAUGE, "bytes", "Largest sampled GPU memory in use in the window so far.", FROM_FUNCTION(gpu_mem_max_bytes, 0)},
    {"resmon_gpu_process_memory_bytes", METRIC_GAUGE, "bytes", "GPU memory of the monitored processes at the latest sample.", FROM_FUNCTION(gpu_proc_mem_bytes, 0)},
    {"resmon_gpu_clock_hertz", METRIC_GAUGE, "hertz", "GPU clock at the latest sample.", FROM_FUNCTION(gpu_hertz, 0)},
    {"resmon_gpu_power_watts", METRIC_GAUGE, "watts", "GPU power draw at the latest sample.", FROM_FUNCTION(gpu_watts, 0)},
    {"resmon_gpu_energy_joules", METRIC_COUNTER, "joules", "GPU energy in the window.", FROM_FUNCTION(gpu_joules, 0)},
    {"resmon_cpu_energy_joules", METRIC_COUNTER, "joules", "CPU package energy (RAPL) in the window.", FROM_FUNCTION(cpu_joules, 0)},
    /* The metric groups (resmon_options.metrics); sums over the monitored
     * processes, totals counted from the window's start.  From the metric
     * list, in the order these rows had before it. */
    RM__METRICS_CPU_SPLIT(ROW) RM__METRICS_MEMORY(ROW) RM__METRICS_COUNTS(ROW) RM__METRICS_UNREADABLE(ROW)
    RM__METRICS_IO(ROW) RM__METRICS_FAULTS(ROW) RM__METRICS_NETWORK(ROW) RM__METRICS_ADDED(ROW)
    /* The monitored cgroup (resmon_options.cgroup_path). */
    {"resmon_cgroup_memory_bytes", METRIC_GAUGE, "bytes", "Memory charged to the cgroup at the latest sample: the whole tree, page cache and kernel memory included.", FROM_FUNCTION(cgroup_bytes, 0)},
    {"resmon_cgroup_memory_max_bytes", METRIC_GAUGE, "bytes", "Peak memory charged to the cgroup: largest sampled so far, the kernel's exact peak once the window ends.", FROM_FUNCTION(cgroup_max_bytes, 0)},
    {"resmon_cgroup_oom_kills", METRIC_COUNTER, NULL, "Processes of the cgroup ended by the kernel's OOM killer (read when the window ends).", FROM_FUNCTION(cgroup_oom_kills, 1)},
    {"resmon_cgroup_cpu_throttled_seconds", METRIC_COUNTER, "seconds", "Time the cgroup's CPU was throttled (v2 cpu.stat, read when the window ends).", FROM_FUNCTION(cgroup_throttled, 0)},
    {"resmon_cgroup_io_read_bytes", METRIC_COUNTER, "bytes", "Bytes the cgroup read from storage (v2 io.stat, read when the window ends).", FROM_FUNCTION(cgroup_io_read, 0)},
    {"resmon_cgroup_io_write_bytes", METRIC_COUNTER, "bytes", "Bytes the cgroup wrote to storage (v2 io.stat, read when the window ends).", FROM_FUNCTION(cgroup_io_write, 0)},
};

/* A metric's value, NAN when unknown -- including a summary field that the
 * caller's resmon_summary (callers_size bytes) does not have. */
static double metric_value_of(const metric *mt, const resmon_summary *s, const resmon_sample *last,
                              size_t callers_size)
{
    if (mt->value)
        return mt->value(s, last);
    if (mt->field.offset + sizeof(double) > callers_size)
        return NAN;
    double value;
    memcpy(&value, (const char *)s + mt->field.offset, sizeof value);
    return value * mt->field.scale;
}

/* Appends with snprintf semantics: counts everything, writes what fits. */
typedef struct writer {
    char *buf;
    size_t cap, len;
} writer;

static void put(writer *w, const char *text, size_t n)
{
    if (w->len < w->cap) {
        size_t room = w->cap - w->len - 1; /* keep the NUL's byte */
        memcpy(w->buf + w->len, text, n < room ? n : room);
    }
    w->len += n;
}

static void puts_(writer *w, const char *text)
{
    put(w, text, strlen(text));
}

static void printf_(writer *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void printf_(writer *w, const char *fmt, ...)
{
    char tmp[256]; /* fixed names and help texts only; labels go through puts_ */
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0)
        put(w, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* The writer as rm__label_value_write's sink (utf8.h: the one label escaper). */
static void put_bytes(void *w, const char *text, size_t n)
{
    put(w, text, n);
}

static void put_labels(writer *w, const resmon_label *labels, size_t count)
{
    if (count == 0)
        return;
    puts_(w, "{");
    for (size_t i = 0; i < count; i++) {
        puts_(w, i ? "," : "");
        puts_(w, labels[i].name); /* any length: not through printf_'s buffer */
        puts_(w, "=\"");
        rm__label_value_write(labels[i].value, put_bytes, w);
        puts_(w, "\"");
    }
    puts_(w, "}");
}

static void put_metric(writer *w, const metric *mt, double value, resmon_exposition_format format,
                       const resmon_label *labels, size_t label_count)
{
    const char *suffix = mt->type == METRIC_COUNTER ? "_total" : "";
    const char *type = mt->type == METRIC_COUNTER ? "counter" : "gauge";
    if (format == RESMON_EXPOSITION_OPENMETRICS) {
        printf_(w, "# TYPE %s %s\n", mt->name, type);
        if (mt->unit)
            printf_(w, "# UNIT %s %s\n", mt->name, mt->unit);
        printf_(w, "# HELP %s %s\n", mt->name, mt->help);
    } else {
        printf_(w, "# HELP %s%s %s\n", mt->name, suffix, mt->help);
        printf_(w, "# TYPE %s%s %s\n", mt->name, suffix, type);
    }
    printf_(w, "%s%s", mt->name, suffix);
    put_labels(w, labels, label_count);
    char number[32];
    if (mt->integer)
        snprintf(number, sizeof number, "%" PRIu64, (uint64_t)value);
    else
        rm__json_format_double(value, number);
    printf_(w, " %s\n", number);
}

int resmon_label_name_valid(const char *name)
{
    if (!name || !(*name == '_' || (*name >= 'a' && *name <= 'z') || (*name >= 'A' && *name <= 'Z')))
        return 0;
    if (name[0] == '_' && name[1] == '_')
        return 0; /* reserved for Prometheus' own use */
    for (const char *p = name + 1; *p; p++)
        if (!(*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')))
            return 0;
    return 1;
}

static int labels_valid(const resmon_label *labels, size_t count)
{
    if (count && !labels)
        return 0;
    for (size_t i = 0; i < count; i++) {
        if (!resmon_label_name_valid(labels[i].name) || !labels[i].value)
            return 0;
        for (size_t j = 0; j < i; j++)
            if (strcmp(labels[i].name, labels[j].name) == 0)
                return 0; /* a series cannot carry one label twice */
    }
    return 1;
}

/* The caller's summary and sample in this library's layout (resmon.h,
 * "Versioning"): a caller built against another header passes other sizes. */
static int copy_in(const resmon_summary *summary, const resmon_sample *last, size_t last_size,
                   resmon_summary *own_summary, resmon_sample *own_last)
{
    int rc = rm__copy_struct_in(own_summary, sizeof *own_summary, summary, summary->struct_size,
                                RM__SIZE_THROUGH(resmon_summary, peak_gpu_proc_mem_mb));
    if (rc == 0 && last)
        rc = rm__copy_struct_in(own_last, sizeof *own_last, last, last_size,
                                RM__SIZE_THROUGH(resmon_sample, gpu_proc_mem_mb));
    return rc;
}

int resmon_exposition_render(const resmon_summary *summary, const resmon_sample *last, size_t last_size,
                             resmon_exposition_format format, const resmon_label *labels,
                             size_t label_count, char *buf, size_t cap)
{
    if (!summary || (!buf && cap) || !labels_valid(labels, label_count) ||
        (format != RESMON_EXPOSITION_PROMETHEUS && format != RESMON_EXPOSITION_OPENMETRICS))
        return -EINVAL;
    resmon_summary own_summary;
    resmon_sample own_last;
    int rc = copy_in(summary, last, last_size, &own_summary, &own_last);
    if (rc < 0)
        return rc;
    writer w = {buf, cap, 0};
    for (size_t i = 0; i < sizeof metrics / sizeof metrics[0]; i++) {
        double value = metric_value_of(&metrics[i], &own_summary, last ? &own_last : NULL, summary->struct_size);
        if (isfinite(value))
            put_metric(&w, &metrics[i], value, format, labels, label_count);
    }
    if (format == RESMON_EXPOSITION_OPENMETRICS)
        puts_(&w, "# EOF\n");
    if (cap)
        buf[w.len < cap ? w.len : cap - 1] = '\0';
    if (w.len > (size_t)INT32_MAX)
        return -ENOMEM; /* cannot happen with a bounded label set; int cannot say it */
    return (int)w.len;
}

int resmon_monitor_exposition(const resmon_monitor *m, resmon_exposition_format format,
                              const resmon_label *labels, size_t label_count, char *buf, size_t cap)
{
    if (!m)
        return -EINVAL;
    resmon_summary summary;
    resmon_sample last;
    int have_last = rm__monitor_snapshot(m, &summary, &last);
    return resmon_exposition_render(&summary, have_last ? &last : NULL, sizeof last, format, labels,
                                    label_count, buf, cap);
}
