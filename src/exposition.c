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
#include "figure_list.h"
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

/* Where a row's value is: a field of the window's summary, or of the latest
 * sample (NAN when no sample was taken).  NAN leaves the series out. */
typedef enum metric_source { FROM_SUMMARY, FROM_LAST_SAMPLE } metric_source;

typedef struct metric {
    /* The family name.  For a counter the series adds "_total" (and so does
     * the family in text 0.0.4, which has no separate family name). */
    const char *name;
    metric_type type;
    const char *unit; /* OpenMetrics # UNIT, a suffix of name; NULL for none */
    const char *help; /* fixed text: no backslash, quote or newline to escape */
    int integer;      /* written without a fraction (counts) */
    metric_source source;
    size_t offset;    /* of the field in its struct: a double, or a uint64_t count */
    int is_u64;
    /* To the base unit: times multiply, over divide (each exact where 1). */
    double multiply, divide;
    int needs_cgroup; /* known only when the summary had a cgroup */
} metric;

/* Each unit's Prometheus unit and conversion to it: values in base units
 * (MiB as bytes, percent as a ratio of 1, MHz as hertz), counts without a
 * fraction. */
#define UNIT_MIB "bytes", 0, RM__BYTES_PER_MIB, 1.0
#define UNIT_BYTES "bytes", 0, 1.0, 1.0
#define UNIT_SECONDS "seconds", 0, 1.0, 1.0
#define UNIT_COUNT NULL, 1, 1.0, 1.0
#define UNIT_PERCENT "ratio", 0, 1.0, 100.0
#define UNIT_MHZ "hertz", 0, 1e6, 1.0
#define UNIT_WATTS "watts", 0, 1.0, 1.0
#define UNIT_JOULES "joules", 0, 1.0, 1.0
#define UNIT_OF(spec) UNIT_OF_(spec)
#define UNIT_OF_(prom_unit, integer_, multiply_, divide_)                                                         \
    .unit = prom_unit, .integer = integer_, .multiply = multiply_, .divide = divide_

#define TYPE_GAUGE METRIC_GAUGE
#define TYPE_COUNTER METRIC_COUNTER
#define IS_U64_DOUBLE 0
#define IS_U64_U64 1
#define NEEDS_CGROUP_BASE 0
#define NEEDS_CGROUP_GPU 0
#define NEEDS_CGROUP_CGROUP 1

/* A figure of the figure list (figure_list.h) at its PROM_ORDER; one that
 * is not exposed (NONE) makes no row. */
#define ROW_NONE(...)
#define ROW_GAUGE(...) ROW_EXPOSED(GAUGE, __VA_ARGS__)
#define ROW_COUNTER(...) ROW_EXPOSED(COUNTER, __VA_ARGS__)
#define ROW_EXPOSED(type_, order, name_, help_, group, struct_, source_, field, is_u64_, unit_)                  \
    [order] = {.name = name_, .type = TYPE_##type_, .help = help_, UNIT_OF(UNIT_##unit_), .source = source_,     \
               .offset = offsetof(struct_, field), .is_u64 = IS_U64_##is_u64_, .needs_cgroup = NEEDS_CGROUP_##group},
#define SUMMARY_ROW(group, field, type, fold, unit, json, prom_type, order, name, help)                           \
    ROW_##prom_type(order, name, help, group, resmon_summary, FROM_SUMMARY, field, type, unit)
#define SAMPLE_ROW(group, field, unit, prom_type, order, name, help)                                              \
    ROW_##prom_type(order, name, help, group, resmon_sample, FROM_LAST_SAMPLE, field, DOUBLE, unit)
#define COUNT_EXPOSED_NONE 0
#define COUNT_EXPOSED_GAUGE 1
#define COUNT_EXPOSED_COUNTER 1
#define SUMMARY_EXPOSED(group, field, type, fold, unit, json, prom_type, ...) +COUNT_EXPOSED_##prom_type
#define SAMPLE_EXPOSED(group, field, unit, prom_type, ...) +COUNT_EXPOSED_##prom_type

/* A row of the metric list (metric_list.h): a MAX is a gauge, a LAST a
 * counter. */
#define ROW_TYPE_MAX METRIC_GAUGE
#define ROW_TYPE_LAST METRIC_COUNTER
#define ROW(group_, sample_, summary_, fold_, unit_, column_, name_, help_, words_, ...)                          \
    {.name = name_, .type = ROW_TYPE_##fold_, .help = help_, UNIT_OF(UNIT_##unit_), .source = FROM_SUMMARY,     \
     .offset = offsetof(resmon_summary, summary_)},

/* CPU, memory, the samples, GPU and energy. */
static const metric base_rows[] = {RM__SUMMARY_FIGURES_BASE(SUMMARY_ROW) RM__SAMPLE_FIGURES_BASE(SAMPLE_ROW)};
_Static_assert(sizeof base_rows / sizeof *base_rows ==
                   (0 RM__SUMMARY_FIGURES_BASE(SUMMARY_EXPOSED) RM__SAMPLE_FIGURES_BASE(SAMPLE_EXPOSED)),
               "the base rows' PROM_ORDER run 0, 1, 2, ... without a gap");

/* The metric groups (resmon_options.metrics); sums over the monitored
 * processes, totals counted from the window's start.  From the metric list,
 * in the order these rows had before it. */
static const metric metric_rows[] = {
    RM__METRICS_CPU_SPLIT(ROW) RM__METRICS_MEMORY(ROW) RM__METRICS_COUNTS(ROW) RM__METRICS_UNREADABLE(ROW)
    RM__METRICS_IO(ROW) RM__METRICS_FAULTS(ROW) RM__METRICS_NETWORK(ROW) RM__METRICS_ADDED(ROW)};

/* The monitored cgroup (resmon_options.cgroup_path). */
static const metric cgroup_rows[] = {RM__SAMPLE_FIGURES_CGROUP(SAMPLE_ROW) RM__SUMMARY_FIGURES_CGROUP(SUMMARY_ROW)};
_Static_assert(sizeof cgroup_rows / sizeof *cgroup_rows ==
                   (0 RM__SUMMARY_FIGURES_CGROUP(SUMMARY_EXPOSED) RM__SAMPLE_FIGURES_CGROUP(SAMPLE_EXPOSED)),
               "the cgroup rows' PROM_ORDER run 0, 1, 2, ... without a gap");

static const struct {
    const metric *rows;
    size_t count;
} sections[] = {
    {base_rows, sizeof base_rows / sizeof *base_rows},
    {metric_rows, sizeof metric_rows / sizeof *metric_rows},
    {cgroup_rows, sizeof cgroup_rows / sizeof *cgroup_rows},
};

/* A metric's value, NAN when unknown -- including a summary field that the
 * caller's resmon_summary (callers_size bytes) does not have: a summary from
 * an older resmon.h ends before the newer fields, and its zero-extended
 * copies are not measurements.  A cgroup's figures are known only when the
 * summary had a cgroup (an older caller's summary reads cgroup_version 0). */
static double metric_value_of(const metric *mt, const resmon_summary *s, const resmon_sample *last,
                              size_t callers_size)
{
    if (mt->needs_cgroup && !s->cgroup_version)
        return NAN;
    const char *from = (const char *)s;
    if (mt->source == FROM_LAST_SAMPLE) {
        if (!last)
            return NAN;
        from = (const char *)last;
    } else if (mt->offset + sizeof(double) > callers_size) {
        return NAN;
    }
    double value;
    if (mt->is_u64) {
        uint64_t count;
        memcpy(&count, from + mt->offset, sizeof count);
        value = (double)count;
    } else {
        memcpy(&value, from + mt->offset, sizeof value);
    }
    return value * mt->multiply / mt->divide;
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
    /* A count prints without a fraction only where it is one a uint64_t
     * holds: a caller's negative or huge figure is printed as the double it
     * is (converting it would be undefined, and gcc and clang differ). */
    if (mt->integer && value >= 0 && value < 18446744073709551616.0)
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
    for (size_t section = 0; section < sizeof sections / sizeof *sections; section++)
        for (size_t i = 0; i < sections[section].count; i++) {
            const metric *mt = &sections[section].rows[i];
            double value = metric_value_of(mt, &own_summary, last ? &own_last : NULL, summary->struct_size);
            if (isfinite(value))
                put_metric(&w, mt, value, format, labels, label_count);
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
