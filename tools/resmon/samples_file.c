/*
 * samples_file.c -- every sample, as CSV or JSON Lines, written as it is
 * taken (on the sampler thread).
 *
 * Rows go out through a stream writer (stream_writer.c) at row boundaries
 * only -- when its buffer is nearly full, and at least once a second -- so
 * a crash leaves every row up to the last write, never half a row.  SIGKILL
 * during a write is the exception the kernel makes: it stops a write at a
 * page of the file, so the last row may be cut, without its newline (resmon
 * plot leaves such a row out).  A write that fails part way (a
 * full disk, a file size limit) is cut back to the last whole row it wrote,
 * and no row is written after it; a reader of a pipe or FIFO that lags is
 * never waited for while the run goes on.  Both are reported at the close.
 */
#include "samples_file.h"
#include "clocks.h"
#include "figure_list.h"
#include "json_number.h"
#include "output_paths.h"
#include "stream_writer.h"
#include "text_output.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_ROW_BYTES 4096 /* per-device columns: 4 x 16 values fit a row */

/* The sample's cgroup figures (figure_list.h): columns named as the fields,
 * placed among the metric columns by their place in resmon_sample. */
#define CGROUP_COLUMN(group, field, ...) {#field, offsetof(resmon_sample, field), 0},
static const samples_column cgroup_columns[] = {RM__SAMPLE_FIGURES_CGROUP(CGROUP_COLUMN)};
#define CGROUP_COLUMNS (sizeof cgroup_columns / sizeof *cgroup_columns)

size_t samples_metric_columns(samples_column *columns)
{
    size_t n = 0, placed = 0, count = resmon_metric_count();
    for (size_t i = 0; i < count && n + CGROUP_COLUMNS - placed + 1 <= SAMPLES_MAX_METRIC_COLUMNS; i++) {
        resmon_metric m;
        if (resmon_metric_info(i, &m, sizeof m) < 0 || m.sample_offset + sizeof(double) > sizeof(resmon_sample))
            continue; /* past the sample this command knows: a newer library's */
        while (placed < CGROUP_COLUMNS && m.sample_offset > cgroup_columns[placed].offset)
            columns[n++] = cgroup_columns[placed++];
        int integral = strcmp(m.unit, "count") == 0 || strcmp(m.unit, "bytes") == 0;
        columns[n++] = (samples_column){m.column, m.sample_offset, integral};
    }
    while (placed < CGROUP_COLUMNS)
        columns[n++] = cgroup_columns[placed++];
    return n;
}

/* The sample's base and GPU figures (figure_list.h) as columns named as the
 * fields: the base ones after the timestamps (the timestamp itself, the
 * list's first, is written with unix_time and elapsed_sec), the GPU's after
 * the metric columns, when there is a GPU. */
#define IS_GPU_BASE 0
#define IS_GPU_GPU 1
#define FIGURE_COLUMN(group, field, ...) {{#field, offsetof(resmon_sample, field), 0}, IS_GPU_##group},
static const struct {
    samples_column column;
    int gpu;
} figure_columns[] = {RM__SAMPLE_FIGURES_BASE(FIGURE_COLUMN)};
#define FIGURE_COLUMNS (sizeof figure_columns / sizeof *figure_columns)
_Static_assert(offsetof(resmon_sample, timestamp) == 0, "the timestamp is the sample's first figure");

size_t samples_figure_columns(samples_column *columns, int gpu)
{
    size_t n = 0;
    for (size_t i = 0; i < FIGURE_COLUMNS; i++)
        if (figure_columns[i].gpu == gpu && figure_columns[i].column.offset != offsetof(resmon_sample, timestamp))
            columns[n++] = figure_columns[i].column;
    return n;
}

struct samples_file {
    stream_writer *out;
    int jsonl;
    size_t gpu_devices;
    double wall_offset; /* CLOCK_REALTIME - CLOCK_MONOTONIC at open: a sample's Unix time */
    size_t column_count; /* after the timestamps: base, metric and GPU columns, once chosen */
    samples_column columns[FIGURE_COLUMNS + SAMPLES_MAX_METRIC_COLUMNS];
};

static void append(samples_file *f, const char *text, size_t n)
{
    stream_writer_append(f->out, text, n);
}

samples_file *samples_file_open(int fd, const char *path, size_t gpu_devices, double wall_offset)
{
    samples_file *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    if (!(f->out = stream_writer_new(fd))) {
        free(f);
        return NULL;
    }
    f->jsonl = path_has_extension(path, ".jsonl");
    f->gpu_devices = gpu_devices > RESMON_CLI_MAX_DEVICE_COLUMNS ? RESMON_CLI_MAX_DEVICE_COLUMNS : gpu_devices;
    f->column_count = samples_figure_columns(f->columns, 0);
    f->column_count += samples_metric_columns(f->columns + f->column_count);
    if (gpu_devices)
        f->column_count += samples_figure_columns(f->columns + f->column_count, 1);
    f->wall_offset = wall_offset;
    if (!f->jsonl) {
        const char *header = "timestamp,unix_time,elapsed_sec";
        append(f, header, strlen(header));
        for (size_t i = 0; i < f->column_count; i++) {
            append(f, ",", 1);
            append(f, f->columns[i].name, strlen(f->columns[i].name));
        }
        for (size_t i = 0; f->gpu_devices > 1 && i < f->gpu_devices; i++) {
            char columns[160];
            int written = snprintf(columns, sizeof columns, ",gpu%zu_util,gpu%zu_mem_mb,gpu%zu_clock_mhz,gpu%zu_power_w", i, i,
                             i, i);
            append(f, columns, (size_t)written);
        }
        append(f, ",phase\n", 7); /* last: the phase marks named (empty before the first) */
        stream_writer_write(f->out);
    }
    return f;
}

/* A count that is whole and exact in a double, as an integer (the text
 * printf's "%.0f" writes, "-0" included, without printf: this runs for
 * every column of every row); 0 else.  buf holds at least 24 bytes. */
static size_t integer_text(double value, int integral, char *buf)
{
    if (!integral || !(fabs(value) < 9007199254740992.0) || value != floor(value))
        return 0;
    char reversed[20];
    size_t count = 0, len = 0;
    uint64_t whole = (uint64_t)fabs(value);
    do {
        reversed[count++] = (char)('0' + whole % 10);
        whole /= 10;
    } while (whole);
    if (signbit(value))
        buf[len++] = '-';
    while (count)
        buf[len++] = reversed[--count];
    return len;
}

/* CSV: an unknown value is an empty field; JSONL: null.  integral: a count
 * or bytes, written "3" where a measure is "3.0". */
static void put_number(samples_file *f, const char *key, double value, int first, int integral)
{
    char number[32];
    size_t n = integer_text(value, integral, number);
    if (f->jsonl) {
        if (!first)
            append(f, ", ", 2);
        append(f, "\"", 1);
        append(f, key, strlen(key));
        append(f, "\": ", 3);
        if (!n)
            n = rm__json_format_double(value, number);
        append(f, number, n);
        return;
    }
    if (!first)
        append(f, ",", 1);
    if (!n && !isnan(value))
        n = rm__json_format_double(value, number);
    append(f, number, n);
}

static void put_value(samples_file *f, const char *key, double value, int first)
{
    put_number(f, key, value, first, 0);
}

/* The phase's name: a JSON string, or a CSV field (quoted when it holds a
 * comma or a quote, or guarded against spreadsheet formulas: a name that
 * itself starts with a single quote gets one more, so that a reader --
 * resmon plot -- gets the name back by dropping the first one). */
static void put_phase(samples_file *f, const char *phase)
{
    int guard = !f->jsonl && csv_needs_formula_guard(phase); /* names hold no TAB or CR */
    int quote = f->jsonl || guard || strpbrk(phase, ",\"") != NULL;
    append(f, f->jsonl ? ", \"phase\": " : ",", f->jsonl ? 11 : 1);
    if (quote)
        append(f, "\"", 1);
    if (guard)
        append(f, "'", 1);
    for (const char *p = phase; *p && p - phase < RESMON_PHASE_NAME_MAX; p++) {
        if (*p == '"')
            append(f, f->jsonl ? "\\\"" : "\"\"", 2);
        else if (*p == '\\' && f->jsonl)
            append(f, "\\\\", 2);
        else
            append(f, p, 1);
    }
    if (quote)
        append(f, "\"", 1);
}

void samples_file_write(samples_file *f, const resmon_sample *s, double elapsed_sec,
                        const resmon_gpu_reading *devices, size_t device_count, const char *phase)
{
    if (f->jsonl)
        append(f, "{", 1);
    put_value(f, "timestamp", s->timestamp, 1);
    put_value(f, "unix_time", s->timestamp + f->wall_offset, 0);
    put_value(f, "elapsed_sec", elapsed_sec, 0);
    for (size_t i = 0; i < f->column_count; i++) {
        double value;
        memcpy(&value, (const char *)s + f->columns[i].offset, sizeof value);
        put_number(f, f->columns[i].name, value, 0, f->columns[i].integral);
    }
    for (size_t i = 0; f->gpu_devices > 1 && i < f->gpu_devices; i++) {
        resmon_gpu_reading r = {.util_percent = NAN, .mem_used_mb = NAN, .mem_total_mb = NAN, .clock_mhz = NAN,
                                .mem_clock_mhz = NAN, .power_w = NAN, .power_limit_w = NAN};
        if (i < device_count)
            r = devices[i];
        /* "gpu" + any size_t + the longest suffix, so no key is ever cut. */
        char key[sizeof "gpu" + sizeof "18446744073709551615" + sizeof "_clock_mhz"];
        snprintf(key, sizeof key, "gpu%zu_util", i);
        put_value(f, key, r.util_percent, 0);
        snprintf(key, sizeof key, "gpu%zu_mem_mb", i);
        put_value(f, key, r.mem_used_mb, 0);
        snprintf(key, sizeof key, "gpu%zu_clock_mhz", i);
        put_value(f, key, r.clock_mhz, 0);
        snprintf(key, sizeof key, "gpu%zu_power_w", i);
        put_value(f, key, r.power_w, 0);
    }
    put_phase(f, phase ? phase : "");
    append(f, f->jsonl ? "}\n" : "\n", f->jsonl ? 2 : 1);
    stream_writer_write_due(f->out, MAX_ROW_BYTES);
}

void samples_file_close(samples_file *f, reader_wait *wait, stream_outcome *outcome)
{
    stream_writer_close(f ? f->out : NULL, wait, outcome);
    free(f);
}
