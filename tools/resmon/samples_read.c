/*
 * samples_read.c -- a samples file written by -s, read back for a chart
 * (resmon plot).  Columns are found by name in the CSV header or the JSON
 * Lines keys, as samples_file.c writes them; a column resmon does not chart
 * is skipped, so files with more (or newer) columns still read.  Required:
 * elapsed_sec, cpu_percent and rss_mb in every row; elapsed_sec never goes
 * back.  An empty CSV field or a JSON null is a value not read.  A `phase`
 * column (text) marks phases: a phase starts at the first row that names it.
 */
#include "samples_read.h"
#include "chart_series.h"
#include "input_file.h"
#include "jansson_loader.h"
#include "output_paths.h"
#include "samples_file.h"

#include <errno.h>
#include <stdio.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* The columns read, and where each goes in a resmon_sample: elapsed_sec
 * (the timestamp), then the figure and metric columns exactly as
 * samples_file.c writes them -- the base figures (CPU, RSS: required), the
 * GPU's (samples_figure_columns), the metric groups' and the cgroup's
 * (samples_metric_columns) -- and the text column `phase` last. */
#define COL_ELAPSED 0
#define COLUMN_CAP (1 + 2 * SAMPLES_MAX_METRIC_COLUMNS + 1)
static const char *column_names[COLUMN_CAP] = {"elapsed_sec"};
static size_t column_offsets[COLUMN_CAP];
static int phase_column;     /* the column count, and the phase's index */
static int required_columns; /* elapsed_sec and the base figures, first */

static void list_columns(void)
{
    if (phase_column)
        return;
    samples_column columns[3 * SAMPLES_MAX_METRIC_COLUMNS];
    size_t base = samples_figure_columns(columns, 0);
    size_t count = base + samples_figure_columns(columns + base, 1);
    count += samples_metric_columns(columns + count);
    int n = COL_ELAPSED + 1;
    for (size_t i = 0; i < count; i++) {
        column_names[n] = columns[i].name;
        column_offsets[n++] = columns[i].offset;
    }
    column_names[n] = "phase";
    phase_column = n;
    required_columns = 1 + (int)base;
}

/* One row's values: numbers (NAN when not read) and the phase's text. */
typedef struct row {
    double value[COLUMN_CAP];
    const char *phase; /* NULL without the column */
} row;

/* Checks a row and feeds it to the series; 0, or -1 with why filled. */
static int take_row(const row *r, size_t line, double *last_elapsed, chart_series *c, char *why, size_t cap)
{
    for (int i = 0; i < required_columns; i++)
        if (isnan(r->value[i])) {
            snprintf(why, cap, "line %zu has no %s", line, column_names[i]);
            return -1;
        }
    double elapsed = r->value[COL_ELAPSED];
    if (elapsed < 0 || elapsed < *last_elapsed) {
        snprintf(why, cap, "line %zu: elapsed_sec %g %s", line, elapsed,
                 elapsed < 0 ? "is negative" : "goes back in time (rows out of order, or two files joined?)");
        return -1;
    }
    *last_elapsed = elapsed;
    /* Every figure no column gave is not known (NAN), never a zero the
     * chart would draw: resmon_sample is all doubles. */
    resmon_sample s;
    for (size_t i = 0; i < sizeof s / sizeof(double); i++)
        memcpy((char *)&s + i * sizeof(double), &(double){NAN}, sizeof(double));
    s.timestamp = elapsed;
    for (int i = COL_ELAPSED + 1; i < phase_column; i++)
        memcpy((char *)&s + column_offsets[i], &r->value[i], sizeof(double));
    if (r->phase)
        chart_series_phase(c, r->phase, elapsed);
    chart_series_add(c, &s, elapsed);
    return 0;
}

/* A number, the whole field; "" (and "nan", as %g writes it) is not read. */
static int parse_number(const char *text, double *out)
{
    if (!*text || strcmp(text, "nan") == 0) {
        *out = NAN;
        return 0;
    }
    char *end;
    errno = 0;
    *out = strtod(text, &end);
    /* ERANGE alone is no refusal: an overflow is infinite (refused below), an
     * underflow a subnormal or 0 (5e-324, as Python writes the smallest double). */
    return end != text && *end == '\0' && isfinite(*out) ? 0 : -1;
}

/* Splits a CSV line in place into fields (RFC 4180 quotes: "a ""b"", c");
 * returns how many, or -1 for a quote left open. */
static int split_csv(char *line, char **fields, int cap)
{
    int n = 0;
    char *in = line;
    for (;;) {
        char *out = in, *start = in;
        if (*in == '"') {
            for (in++;; in++) {
                if (*in == '\0')
                    return -1;
                if (*in == '"' && in[1] == '"')
                    *out++ = *in++;
                else if (*in == '"')
                    break;
                else
                    *out++ = *in;
            }
            in++;
            if (*in != ',' && *in != '\0')
                return -1;
        } else {
            while (*in && *in != ',')
                *out++ = *in++;
        }
        char separator = *in;
        *out = '\0';
        if (n < cap)
            fields[n] = start;
        n++;
        if (separator == '\0')
            return n;
        in++;
    }
}

#define MAX_CSV_FIELDS 512

/* The longest line a samples file has: a row of every column is a few KiB. */
#define SAMPLES_LINE_MAX ((size_t)1 << 20)

/* getline, bounded: the length of the next line (with its newline, if it
 * has one), -1 at the end, -2 for a line longer than SAMPLES_LINE_MAX (a
 * 3 GB file without a newline took 3 GB of memory) or out of memory, -3
 * for a NUL byte (binary data, not text), -4 for one in the last line,
 * without a newline (a row cut by a crash: left out).  The rest of a line
 * with a NUL is read to its end within the same bound: an 8 GB sparse file
 * (all zeros) was read whole, 31 s, to say "empty file". */
static ssize_t read_line(FILE *f, char **line, size_t *cap)
{
    size_t used = 0;
    int ch;
    while ((ch = getc_unlocked(f)) != EOF) {
        if (ch == '\0') { /* a line cut by a crash (zeros at a file's end) is left out as a cut row is */
            while ((ch = getc_unlocked(f)) != EOF && ch != '\n')
                if (++used > SAMPLES_LINE_MAX)
                    return -2;
            return ch == EOF ? -4 : -3;
        }
        if (*cap - used < 2) {
            if (*cap >= SAMPLES_LINE_MAX + 2)
                return -2;
            size_t grown_cap = *cap ? *cap * 2 : 4096;
            if (grown_cap > SAMPLES_LINE_MAX + 2)
                grown_cap = SAMPLES_LINE_MAX + 2; /* a line of SAMPLES_LINE_MAX bytes and its newline */
            char *grown = realloc(*line, grown_cap);
            if (!grown)
                return -2;
            *line = grown;
            *cap = grown_cap;
        }
        (*line)[used++] = (char)ch;
        if (ch == '\n')
            break;
    }
    if (used == 0)
        return -1;
    (*line)[used] = '\0';
    return (ssize_t)used;
}

/* CUT_ROW: a run killed with SIGKILL while a write was under way leaves
 * the rows before it whole and the last one cut where the kernel stopped
 * the write (it checks for a fatal signal at each page of the file): a last
 * line without its newline that does not read as a row is that one, and is
 * left out, not an error -- a killed run's samples are what they are for. */

/* Whether a CSV line split into n fields reads as a whole row. */
static int whole_csv_row(char **fields, int n, int header_fields, const int *where)
{
    if (n != header_fields)
        return 0;
    for (int i = 0; i < phase_column; i++) {
        double value;
        if (where[i] >= 0 && parse_number(fields[where[i]], &value) < 0)
            return 0;
    }
    return 1;
}

static int read_csv(FILE *f, chart_series *c, double *end_sec, char *why, size_t cap)
{
    char *line = NULL, *fields[MAX_CSV_FIELDS];
    size_t line_cap = 0, line_no = 0;
    int where[COLUMN_CAP], header_fields = 0, rc = -1;
    double last_elapsed = 0;
    ssize_t len;
    for (int i = 0; i <= phase_column; i++)
        where[i] = -1;
    while ((len = read_line(f, &line, &line_cap)) >= 0) {
        line_no++;
        int cut = len > 0 && line[len - 1] != '\n'; /* the last line, without its newline */
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        int n = split_csv(line, fields, MAX_CSV_FIELDS);
        if (cut && line_no > 1 && !whole_csv_row(fields, n, header_fields, where))
            break; /* a row cut by a kill mid-write (see CUT_ROW): left out */
        if (n < 0 || n > MAX_CSV_FIELDS) {
            snprintf(why, cap, "line %zu is not CSV (%s)", line_no, n < 0 ? "a quote left open" : "too many fields");
            goto done;
        }
        if (line_no == 1) {
            header_fields = n;
            for (int k = 0; k < n; k++)
                for (int i = 0; i <= phase_column; i++)
                    if (strcmp(fields[k], column_names[i]) == 0)
                        where[i] = k;
            for (int i = 0; i < required_columns; i++)
                if (where[i] < 0) {
                    snprintf(why, cap, "not a samples file: the CSV header has no %s column", column_names[i]);
                    goto done;
                }
            continue;
        }
        if (n != header_fields) {
            snprintf(why, cap, "line %zu has %d fields, the header %d", line_no, n, header_fields);
            goto done;
        }
        row r = {.phase = where[phase_column] >= 0 ? fields[where[phase_column]] : NULL};
        if (r.phase && r.phase[0] == '\'')
            r.phase++; /* the guard against spreadsheet formulas (samples_file.c) */
        for (int i = 0; i < phase_column; i++) {
            r.value[i] = NAN;
            if (where[i] >= 0 && parse_number(fields[where[i]], &r.value[i]) < 0) {
                snprintf(why, cap, "line %zu: %s is not a number", line_no, column_names[i]);
                goto done;
            }
        }
        if (take_row(&r, line_no, &last_elapsed, c, why, cap) < 0)
            goto done;
    }
    if (len < -1 && len != -4) {
        snprintf(why, cap, len == -2 ? "line %zu is longer than %zu MiB: not a samples file" :
                 "line %zu holds a NUL byte: not a samples file", line_no + 1, SAMPLES_LINE_MAX >> 20);
        goto done;
    }
    if (ferror(f)) {
        snprintf(why, cap, "%s", strerror(errno));
        goto done;
    }
    if (line_no == 0) {
        snprintf(why, cap, "empty file");
        goto done;
    }
    *end_sec = last_elapsed;
    rc = 0;
done:
    free(line);
    return rc;
}

static int read_jsonl(FILE *f, chart_series *c, double *end_sec, char *why, size_t cap)
{
    if (jansson_load("reading a .jsonl file", why, cap) < 0)
        return -1;
    char *line = NULL;
    size_t line_cap = 0, line_no = 0;
    double last_elapsed = 0;
    ssize_t len;
    int rc = -1;
    while ((len = read_line(f, &line, &line_cap)) >= 0) {
        line_no++;
        json_error_t error;
        json_t *object = jansson.loadb(line, (size_t)len, 0, &error);
        if (!json_is_object(object) && len > 0 && line[len - 1] != '\n') {
            jansson_release(object);
            break; /* a row cut by a kill mid-write (see CUT_ROW): left out */
        }
        if (!json_is_object(object)) {
            snprintf(why, cap, "line %zu is not a JSON object%s%s", line_no, object ? "" : ": ",
                     object ? "" : error.text);
            jansson_release(object);
            goto done;
        }
        row r = {.phase = NULL};
        int bad = -1;
        for (int i = 0; i < phase_column; i++) {
            json_t *v = jansson.object_get(object, column_names[i]);
            r.value[i] = json_is_number(v) ? jansson.number_value(v) : NAN;
            if (v && !json_is_number(v) && !json_is_null(v))
                bad = i;
        }
        json_t *phase = jansson.object_get(object, "phase");
        if (json_is_string(phase))
            r.phase = jansson.string_value(phase);
        else if (phase && !json_is_null(phase))
            bad = phase_column;
        else if (json_is_null(phase))
            r.phase = "";
        if (bad >= 0) {
            snprintf(why, cap, "line %zu: %s is not a %s", line_no, column_names[bad],
                     bad == phase_column ? "string" : "number");
            jansson_release(object);
            goto done;
        }
        int taken = take_row(&r, line_no, &last_elapsed, c, why, cap);
        jansson_release(object);
        if (taken < 0)
            goto done;
    }
    if (len < -1 && len != -4) {
        snprintf(why, cap, len == -2 ? "line %zu is longer than %zu MiB: not a samples file" :
                 "line %zu holds a NUL byte: not a samples file", line_no + 1, SAMPLES_LINE_MAX >> 20);
        goto done;
    }
    if (ferror(f)) {
        snprintf(why, cap, "%s", strerror(errno));
        goto done;
    }
    *end_sec = last_elapsed;
    rc = 0;
done:
    free(line);
    return rc;
}

int samples_read(const char *path, chart_series *c, double *end_sec, char *why, size_t cap)
{
    list_columns();
    int jsonl = path_has_extension(path, ".jsonl");
    if (!jsonl && !path_has_extension(path, ".csv")) {
        snprintf(why, cap, "a samples file ends in .csv or .jsonl (as -s writes them)");
        return -1;
    }
    FILE *f = input_file_open(path, why, cap); /* a FIFO or device: refused, never waited on */
    if (!f)
        return -1;
    int rc = jsonl ? read_jsonl(f, c, end_sec, why, cap) : read_csv(f, c, end_sec, why, cap);
    fclose(f);
    if (rc == 0 && chart_series_samples(c) == 0) {
        snprintf(why, cap, "no samples in it");
        rc = -1;
    }
    return rc;
}
