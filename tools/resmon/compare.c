/*
 * compare.c -- `resmon compare [OPTIONS] BASE NEW`: a regression gate for CI.
 *
 * Each side is one summary JSON (what `resmon -o`, resmon_summary_to_json and
 * the Python to_dict() write), a pytest report (`pytest --resmon-json`), or a
 * directory of either holding repeated runs of that side, which are compared
 * by their median with min..max shown.  Every numeric key present on both
 * sides (in every run of each) gets a row; a pytest report's keys are
 * "NODEID::KEY".  --max-increase limits what may grow; the exit status says
 * whether every limit held.
 *
 * Jansson parses the inputs, loaded when compare runs (optional_library.c,
 * as for reading a .jsonl file), so no other run of the command maps it and
 * a machine without it runs everything else.
 */
#include "compare.h"
#include "cli.h"
#include "json_number.h"
#include "jansson_loader.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

static const char compare_usage_text[] =
    "usage: resmon compare [OPTIONS] BASE NEW\n"
    "\n"
    "Compares two resmon summaries: BASE and NEW are each a summary JSON (resmon -o, the\n"
    "library's resmon_summary_to_json, the Python to_dict()), the JSON report of resmon's\n"
    "pytest plugin (its keys are NODEID::KEY), or a directory of such files holding\n"
    "repeated runs of one side, compared by median with min..max shown; - is standard\n"
    "input.  Inputs are regular files of at most 32 MiB.  A change inside\n"
    "both sides' spreads is marked as noise.  Every numeric key present on both sides is\n"
    "shown, the exact peaks (exact_peak_rss_mb, hwm_rss_mb) first, then the sampled ones.\n"
    "\n"
    "      --max-increase KEY=LIMIT  fail (exit 1) when KEY grows by more than LIMIT: N% of\n"
    "                                BASE, or N in KEY's own unit; repeatable.  A KEY that\n"
    "                                names no pytest report key as a whole names it in\n"
    "                                every test (rss_growth_mb).  Facts of the run\n"
    "                                (marks_dropped, exit_status, interval_sec,\n"
    "                                cgroup_version) are rows, never limits\n"
    "      --format FORMAT           text (default), markdown (a CI job summary, a PR\n"
    "                                comment) or json\n"
    "  -h, --help                    this help (the manual: man resmon)\n"
    "\n"
    "Exit status: 0 when every limit holds, 1 when one is exceeded (each named on stderr)\n"
    "or when, with a limit, a run of either side failed (its exit_status not 0, or\n"
    "interrupted: a failed run is not a faster one), 125 for bad usage, an unreadable input or one that is not a summary, or a KEY that is\n"
    "not a numeric key on both sides.\n";

enum compare_format { FORMAT_TEXT, FORMAT_MARKDOWN, FORMAT_JSON };

/* One numeric key of one side: its value in each run. */
typedef struct metric {
    char *key;
    double *values; /* capacity: the side's number of runs */
    size_t count;
} metric;

typedef struct side {
    const char *path;
    size_t runs;
    metric *metrics;
    size_t metric_count, metric_cap;
    json_t *index; /* key -> position in metrics: Jansson's object as a hash table */
    char *failed;  /* the first run that failed (a summary whose command exited other
                      than 0, or was interrupted), as one line's words; NULL: none */
} side;

typedef struct limit {
    const char *arg; /* KEY=LIMIT as given */
    char *key;
    double amount;
    int percent;
    size_t rows; /* rows it applies to */
} limit;

typedef struct row {
    const char *key;
    double base, base_min, base_max, new_value, new_min, new_max;
    double change, change_pct; /* change_pct NAN when base is 0 */
    int noise;
    const limit *limit; /* the last --max-increase naming it, or NULL */
    int exceeded;
    size_t order; /* position in BASE, for a stable sort */
} row;

/* "resmon compare: " then text shown printable, then the rest; returns 125. */
static int compare_error(const char *text, const char *why)
{
    fputs("resmon compare: ", stderr);
    print_printable(stderr, text);
    fprintf(stderr, "%s\n", why);
    return EXIT_USAGE;
}

/* The report could not be written: says why, with the failed write's errno
 * (ENOSPC, EPIPE...) where stdio still has it. */
static int stdout_error(int err)
{
    fprintf(stderr, "resmon compare: standard output cannot be written: %s\n", strerror(err ? err : EIO));
    return EXIT_USAGE;
}

/* ---- reading one side ------------------------------------------------ */

static int side_add(side *s, const char *key, double value, size_t run)
{
    json_t *at = jansson.object_get(s->index, key);
    if (at) {
        metric *m = &s->metrics[jansson.integer_value(at)];
        if (m->count == run) /* present in every run so far */
            m->values[m->count++] = value;
        return 0;
    }
    if (run != 0) /* missing from an earlier run: never compared */
        return 0;
    if (s->metric_count == s->metric_cap) {
        size_t cap = s->metric_cap ? 2 * s->metric_cap : 64;
        metric *grown = realloc(s->metrics, cap * sizeof *grown);
        if (!grown)
            return -ENOMEM;
        s->metrics = grown;
        s->metric_cap = cap;
    }
    metric *m = &s->metrics[s->metric_count];
    m->key = strdup(key);
    m->values = malloc(s->runs * sizeof *m->values);
    if (!m->key || !m->values ||
        jansson.object_set_new(s->index, key, jansson.integer((json_int_t)s->metric_count)) < 0) {
        free(m->key);
        free(m->values);
        return -ENOMEM;
    }
    m->values[0] = value;
    m->count = 1;
    s->metric_count++;
    return 0;
}

/* The numeric members of object, each under prefix + its name. */
static int side_add_members(side *s, json_t *object, const char *prefix, size_t run)
{
    for (void *at = jansson.object_iter(object); at; at = jansson.object_iter_next(object, at)) {
        const char *name = jansson.object_iter_key(at);
        json_t *value = jansson.object_iter_value(at);
        if (!json_is_number(value))
            continue;
        char *key;
        if (asprintf(&key, "%s%s%s", prefix ? prefix : "", prefix ? "::" : "", name) < 0)
            return -ENOMEM;
        int rc = side_add(s, key, jansson.number_value(value), run);
        free(key);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* The largest input compare reads.  Jansson holds a parsed file at about
 * ten times its size, and a pytest report's keys are kept for both sides:
 * a 160 MB report took 3.8 GB.  A summary is a few KiB; 32 MiB is a pytest
 * report of some 25,000 tests. */
#define COMPARE_INPUT_MAX ((size_t)32 << 20)

/* The text of path ("-": standard input, which may be a pipe), at most
 * COMPARE_INPUT_MAX bytes: a FIFO, device or directory is refused without
 * waiting on it, as is standard output's own file.  Returns 0, or prints one
 * line and returns EXIT_USAGE. */
static int input_text(const char *path, char **text, size_t *length)
{
    char why[256];
    FILE *f = stdin;
    if (strcmp(path, "-") != 0) {
        const char *const paths[] = {"-", path};
        const char *const options[] = {"standard output", "the input"};
        if (output_paths_check("resmon compare", paths, options, 1, 2) != 0)
            return EXIT_USAGE; /* `compare a.json b.json >> b.json` */
        if (!(f = input_file_open(path, why, sizeof why))) {
            char line[300];
            snprintf(line, sizeof line, ": %s", why);
            return compare_error(path, line);
        }
    }
    struct stat st;
    int rc = 0;
    if (f != stdin && fstat(fileno(f), &st) == 0 && (uintmax_t)st.st_size > COMPARE_INPUT_MAX) {
        snprintf(why, sizeof why, "%.0f MiB, larger than the %zu MiB compare reads", (double)st.st_size / 1048576,
                 COMPARE_INPUT_MAX >> 20); /* said before reading any of it */
        rc = -1;
    }
    if (rc == 0)
        rc = input_file_slurp(f, COMPARE_INPUT_MAX, text, length, why, sizeof why);
    if (f != stdin)
        fclose(f);
    if (rc < 0) {
        char line[300];
        snprintf(line, sizeof line, ": %s", why);
        return compare_error(path, line);
    }
    return 0;
}

/* Reads one file as run number run of s.  Returns 0, or prints one line and
 * returns EXIT_USAGE. */
static int side_read_file(side *s, const char *path, size_t run)
{
    char *text;
    size_t length;
    int text_rc = input_text(path, &text, &length);
    if (text_rc != 0)
        return text_rc;
    json_error_t err;
    json_t *root = jansson.loadb(text, length, JSON_REJECT_DUPLICATES | JSON_DECODE_INT_AS_REAL, &err);
    free(text);
    if (!root) {
        char why[JSON_ERROR_TEXT_LENGTH + 64];
        snprintf(why, sizeof why, ": not JSON (line %d: %s)", err.line, err.text);
        return compare_error(path, why);
    }
    int rc = 0;
    json_t *tests = jansson.object_get(root, "tests");
    if (json_is_number(jansson.object_get(root, "peak_rss_mb")) &&
        json_is_number(jansson.object_get(root, "num_samples"))) {
        rc = side_add_members(s, root, NULL, run);
        /* A failed run is not a faster one: noted, whatever its figures. */
        json_t *status = jansson.object_get(root, "exit_status");
        int interrupted = json_is_true(jansson.object_get(root, "interrupted"));
        if (rc == 0 && !s->failed && ((json_is_number(status) && jansson.number_value(status) != 0) || interrupted) &&
            asprintf(&s->failed, "%s %s %g", path, interrupted ? "was interrupted, exit_status" : "exited with status",
                     json_is_number(status) ? jansson.number_value(status) : NAN) < 0) {
            s->failed = NULL;
            rc = -ENOMEM;
        }
    } else if (json_is_object(tests) && json_is_string(jansson.object_get(root, "resmon_version"))) {
        for (void *at = jansson.object_iter(tests); at && rc == 0; at = jansson.object_iter_next(tests, at)) {
            json_t *record = jansson.object_iter_value(at);
            if (json_is_object(record))
                rc = side_add_members(s, record, jansson.object_iter_key(at), run);
        }
    } else {
        jansson_release(root);
        return compare_error(path, ": not a resmon summary (no numeric peak_rss_mb and num_samples) "
                                   "nor a pytest report (no \"tests\" object and resmon_version)");
    }
    jansson_release(root);
    if (rc < 0)
        return compare_error(path, ": out of memory");
    return 0;
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The *.json files of directory, sorted, as paths; NULL-terminated. */
static char **directory_files(const char *directory, size_t *count, int *error)
{
    DIR *dir = opendir(directory);
    *count = 0;
    *error = 0;
    if (!dir) {
        *error = errno;
        return NULL;
    }
    char **paths = NULL;
    size_t cap = 0;
    struct dirent *entry;
    while ((entry = readdir(dir))) {
        /* dotfiles (a writer's .NAME.resmon-XXXXXX temporaries) are no runs */
        if (entry->d_name[0] == '.' || !path_has_extension(entry->d_name, ".json"))
            continue;
        if (*count + 1 >= cap) {
            cap = cap ? 2 * cap : 16;
            char **grown = realloc(paths, cap * sizeof *grown);
            if (!grown)
                break;
            paths = grown;
        }
        if (asprintf(&paths[*count], "%s/%s", directory, entry->d_name) < 0)
            break;
        ++*count;
        paths[*count] = NULL;
    }
    if (entry) /* stopped early: out of memory */
        *error = ENOMEM;
    closedir(dir);
    if (*count)
        qsort(paths, *count, sizeof *paths, compare_names);
    return paths;
}

static void free_paths(char **paths, size_t count)
{
    for (size_t i = 0; i < count; i++)
        free(paths[i]);
    free(paths);
}

/* Reads BASE or NEW: a file, or a directory of runs.  Returns 0, or prints
 * one line and returns EXIT_USAGE. */
static int side_read(side *s, const char *path)
{
    s->path = path;
    s->index = jansson.object();
    if (!s->index)
        return compare_error(path, ": out of memory");
    struct stat st;
    if (strcmp(path, "-") != 0 && stat(path, &st) < 0)
        return compare_error(path, errno == ENOENT ? ": no such file or directory" : ": cannot be read");
    if (strcmp(path, "-") == 0 || !S_ISDIR(st.st_mode)) {
        s->runs = 1;
        return side_read_file(s, path, 0);
    }
    size_t count;
    int error;
    char **paths = directory_files(path, &count, &error);
    if (error) {
        free_paths(paths, count);
        return compare_error(path, error == ENOMEM ? ": out of memory" : ": the directory cannot be read");
    }
    if (count == 0) {
        free_paths(paths, count);
        return compare_error(path, ": the directory holds no .json file");
    }
    s->runs = count;
    int rc = 0;
    for (size_t i = 0; i < count && rc == 0; i++)
        rc = side_read_file(s, paths[i], i);
    free_paths(paths, count);
    return rc;
}

static void side_free(side *s)
{
    free(s->failed);
    for (size_t i = 0; i < s->metric_count; i++) {
        free(s->metrics[i].key);
        free(s->metrics[i].values);
    }
    free(s->metrics);
    jansson_release(s->index);
}

/* The metric of key present in every run of s, or NULL. */
static const metric *side_find(const side *s, const char *key)
{
    json_t *at = jansson.object_get(s->index, key);
    const metric *m = at ? &s->metrics[jansson.integer_value(at)] : NULL;
    return m && m->count == s->runs ? m : NULL;
}

/* ---- the rows --------------------------------------------------------- */

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median, min and max of m's values (sorted in place: their order is not
 * needed after this). */
static void spread(metric *m, double *median, double *min, double *max)
{
    qsort(m->values, m->count, sizeof *m->values, compare_doubles);
    size_t n = m->count;
    /* Halves added, not a sum halved: two values near DBL_MAX sum to +inf. */
    *median = n % 2 ? m->values[n / 2] : m->values[n / 2 - 1] / 2 + m->values[n / 2] / 2;
    *min = m->values[0];
    *max = m->values[n - 1];
}

/* The exact peaks lead, then the sampled peaks, then the rest as in BASE;
 * a pytest report's rows stay in its order, test by test. */
static int rank(const char *key)
{
    if (strcmp(key, "exact_peak_rss_mb") == 0)
        return 0;
    if (strcmp(key, "hwm_rss_mb") == 0)
        return 1;
    if (strcmp(key, "peak_rss_mb") == 0)
        return 2;
    if (strncmp(key, "peak_", 5) == 0 && !strstr(key, "::"))
        return 3;
    return 4;
}

static int compare_rows(const void *a, const void *b)
{
    const row *x = a, *y = b;
    int rx = rank(x->key), ry = rank(y->key);
    if (rx != ry)
        return rx - ry;
    return (x->order > y->order) - (x->order < y->order);
}

static row *build_rows(side *base, side *next, size_t *count)
{
    row *rows = calloc(base->metric_count ? base->metric_count : 1, sizeof *rows);
    *count = 0;
    if (!rows)
        return NULL;
    for (size_t i = 0; i < base->metric_count; i++) {
        metric *b = &base->metrics[i];
        metric *n = (metric *)side_find(next, b->key);
        if (b->count != base->runs || !n)
            continue;
        row *r = &rows[(*count)++];
        r->key = b->key;
        r->order = i;
        spread(b, &r->base, &r->base_min, &r->base_max);
        spread(n, &r->new_value, &r->new_min, &r->new_max);
        r->change = r->new_value - r->base;
        r->change_pct = r->base != 0 ? r->change / fabs(r->base) * 100.0 : NAN; /* 100 x change may overflow */
        /* Noise: each side's median lies within the other's runs. */
        r->noise = base->runs > 1 && next->runs > 1 && r->change != 0 && r->new_value >= r->base_min &&
                   r->new_value <= r->base_max && r->base >= r->new_min && r->base <= r->new_max;
    }
    qsort(rows, *count, sizeof *rows, compare_rows);
    return rows;
}

/* ---- limits ----------------------------------------------------------- */

/* KEY=N% or KEY=N, N finite and not negative. */
static int parse_limit(const char *arg, limit *out)
{
    const char *eq = strrchr(arg, '=');
    if (!eq || eq == arg || !eq[1])
        return -EINVAL;
    const char *amount = eq + 1;
    char *end;
    errno = 0;
    double value = strtod(amount, &end);
    int percent = *end == '%';
    if (end == amount || errno == ERANGE || !isfinite(value) || value < 0 || end[percent] != '\0')
        return -EINVAL;
    out->arg = arg;
    out->key = strndup(arg, (size_t)(eq - arg));
    out->amount = value;
    out->percent = percent;
    out->rows = 0;
    return out->key ? 0 : -ENOMEM;
}

/* A limit's KEY names a row as a whole, or the KEY part of a pytest
 * report's NODEID::KEY. */
static int limit_names(const limit *l, const char *key)
{
    if (strcmp(key, l->key) == 0)
        return 1;
    size_t n = strlen(key), k = strlen(l->key);
    return n > k + 2 && strcmp(key + n - k, l->key) == 0 && key[n - k - 1] == ':' && key[n - k - 2] == ':';
}

/* Whether r breaks l.  A change or a ratio that does not fit a double
 * (values near DBL_MAX apart, a base near zero: +-inf, or NaN) is never a
 * pass: it counts as exceeded, and the row says it cannot be compared.  The
 * relative limit is a ratio compared with N, never |base| x N / 100, which
 * overflowed to +inf for a huge base and so let every change pass. */
static int limit_exceeded(const limit *l, const row *r)
{
    if (!isfinite(r->change) || (l->percent && r->base != 0 && !isfinite(r->change_pct)))
        return 1;
    if (!l->percent)
        return r->change > l->amount;
    if (r->base == 0)
        return r->change > 0;
    double allowed = fabs(r->base) * l->amount / 100;
    return isfinite(allowed) ? r->change > allowed : r->change_pct > l->amount;
}

/* Whether r's change or ratio overflowed (see limit_exceeded). */
static int beyond_doubles(const row *r)
{
    return !isfinite(r->change) || (r->base != 0 && !isfinite(r->change_pct));
}

static void format_limit(const limit *l, char *buf, size_t cap)
{
    snprintf(buf, cap, "+%.6g%s", l->amount, l->percent ? "%" : "");
}

/* Whether a key is a cost that a limit may gate on.  The rest are facts of
 * the run that a summary holds beside its costs -- a count of refused marks,
 * the exit status, the interval and cgroup version it ran with -- shown as
 * rows (a change there explains others) but never gated on: more of them is
 * not a regression of what the program costs.  A pytest report's
 * NODEID::KEY is judged by its KEY. */
static int is_cost(const char *key)
{
    static const char *const run_facts[] = {"marks_dropped", "exit_status", "interval_sec", "cgroup_version"};
    const char *name = strrchr(key, ':');
    name = name && name > key && name[-1] == ':' ? name + 1 : key;
    for (size_t i = 0; i < sizeof run_facts / sizeof *run_facts; i++)
        if (strcmp(name, run_facts[i]) == 0)
            return 0;
    return 1;
}

/* "resmon compare: --max-increase KEY=LIMIT: KEY" then why, on one line;
 * returns EXIT_USAGE. */
static int limit_error(const limit *l, const char *why)
{
    fputs("resmon compare: --max-increase ", stderr);
    print_printable(stderr, l->arg);
    fputs(": ", stderr);
    print_printable(stderr, l->key);
    fprintf(stderr, "%s\n", why);
    return EXIT_USAGE;
}

/* Attaches each limit to its rows.  Returns 0, or prints one line and
 * returns EXIT_USAGE for a KEY that names no row or no cost. */
static int apply_limits(limit *limits, size_t limit_count, row *rows, size_t row_count)
{
    for (size_t i = 0; i < limit_count; i++) {
        if (!is_cost(limits[i].key))
            return limit_error(&limits[i], " is a fact of the run, not a cost: compare shows it but gates nothing on it");
        for (size_t j = 0; j < row_count; j++) {
            if (limit_names(&limits[i], rows[j].key)) {
                rows[j].limit = &limits[i];
                limits[i].rows++;
            }
        }
        if (!limits[i].rows)
            return limit_error(&limits[i], " is not a numeric key of both BASE and NEW (see resmon compare without limits)");
    }
    for (size_t j = 0; j < row_count; j++)
        rows[j].exceeded = rows[j].limit && limit_exceeded(rows[j].limit, &rows[j]);
    return 0;
}

/* ---- output ------------------------------------------------------------ */

static void format_number(double value, char *buf, size_t cap)
{
    snprintf(buf, cap, "%.6g", value);
}

static void format_percent(double value, char *buf, size_t cap)
{
    if (isnan(value))
        snprintf(buf, cap, "-");
    else
        snprintf(buf, cap, "%+.1f%%", value);
}

/* A side's cell: the median, and min..max (or min–max) with several runs. */
static void format_side(double median, double min, double max, size_t runs, const char *dash, char *buf, size_t cap)
{
    char m[32], lo[32], hi[32];
    format_number(median, m, sizeof m);
    if (runs < 2) {
        snprintf(buf, cap, "%s", m);
        return;
    }
    format_number(min, lo, sizeof lo);
    format_number(max, hi, sizeof hi);
    snprintf(buf, cap, "%s (%s%s%s)", m, lo, dash, hi);
}

typedef struct cells {
    char base[112], next[112], change[40], pct[32], note[160];
} cells;

static void row_cells(const row *r, const side *base, const side *next, const char *dash, cells *c)
{
    format_side(r->base, r->base_min, r->base_max, base->runs, dash, c->base, sizeof c->base);
    format_side(r->new_value, r->new_min, r->new_max, next->runs, dash, c->next, sizeof c->next);
    char change[32];
    format_number(r->change, change, sizeof change);
    snprintf(c->change, sizeof c->change, "%s%s", r->change > 0 ? "+" : "", change);
    format_percent(r->change_pct, c->pct, sizeof c->pct);
    c->note[0] = '\0';
    if (r->limit) {
        char l[48];
        format_limit(r->limit, l, sizeof l);
        snprintf(c->note, sizeof c->note, "%s limit %s%s", r->exceeded ? "EXCEEDED" : "ok,", l,
                 beyond_doubles(r) ? " (the change does not fit a double)" : "");
    }
    if (r->noise)
        snprintf(c->note + strlen(c->note), sizeof c->note - strlen(c->note), "%snoise", c->note[0] ? "; " : "");
}

static size_t printable_width(const char *text)
{
    size_t n = 0;
    for (const unsigned char *c = (const unsigned char *)text; *c; c++)
        n += *c < 0x20 || *c == 0x7f ? 4 : 1;
    return n;
}

static void print_side_heading(FILE *out, const char *what, const side *s)
{
    fprintf(out, "%s ", what);
    print_printable(out, s->path);
    fprintf(out, " (%zu run%s)", s->runs, s->runs == 1 ? "" : "s");
}

static void print_text(FILE *out, const row *rows, size_t count, const side *base, const side *next)
{
    print_side_heading(out, "base", base);
    fputs(", ", out);
    print_side_heading(out, "new", next);
    fputc('\n', out);
    size_t key_width = 3, base_width = 4, new_width = 3;
    for (size_t i = 0; i < count; i++) {
        cells c;
        row_cells(&rows[i], base, next, "..", &c);
        size_t k = printable_width(rows[i].key);
        key_width = k > key_width ? k : key_width;
        base_width = strlen(c.base) > base_width ? strlen(c.base) : base_width;
        new_width = strlen(c.next) > new_width ? strlen(c.next) : new_width;
    }
    fprintf(out, "%-*s  %*s  %*s  %12s  %9s\n", (int)key_width, "key", (int)base_width, "base", (int)new_width, "new",
            "change", "change %");
    for (size_t i = 0; i < count; i++) {
        cells c;
        row_cells(&rows[i], base, next, "..", &c);
        print_printable(out, rows[i].key);
        fprintf(out, "%*s  %*s  %*s  %12s  %9s%s%s\n", (int)(key_width - printable_width(rows[i].key)), "",
                (int)base_width, c.base, (int)new_width, c.next, c.change, c.pct, c.note[0] ? "  " : "", c.note);
    }
}

/* Markdown table text: a backslash before each character that would end a
 * cell, open a code span or emphasis, or start a tag or link. */
static void print_markdown_text(FILE *out, const char *text)
{
    char *escaped = malloc(2 * strlen(text) + 1);
    if (!escaped) {
        print_printable(out, text);
        return;
    }
    char *to = escaped;
    for (const char *c = text; *c; c++) {
        if (strchr("|`\\*_<[", *c))
            *to++ = '\\';
        *to++ = *c;
    }
    *to = '\0';
    print_printable(out, escaped);
    free(escaped);
}

static void print_markdown(FILE *out, const row *rows, size_t count, const side *base, const side *next,
                           size_t exceeded, size_t limited)
{
    fputs("**resmon compare**: ", out);
    print_side_heading(out, "base", base);
    fputs(" vs ", out);
    print_side_heading(out, "new", next);
    if (limited)
        fprintf(out, ": %s", exceeded ? "" : "every limit holds");
    if (exceeded)
        fprintf(out, "**%zu limit%s exceeded**", exceeded, exceeded == 1 ? "" : "s");
    fputs("\n\n| key | base | new | change | change % | |\n|:--|--:|--:|--:|--:|:--|\n", out);
    for (size_t i = 0; i < count; i++) {
        cells c;
        row_cells(&rows[i], base, next, "\u2013", &c);
        fputs("| ", out);
        print_markdown_text(out, rows[i].key);
        fprintf(out, " | %s | %s | %s | %s | %s%s%s |\n", c.base, c.next, c.change, c.pct,
                rows[i].exceeded ? "**" : "", c.note, rows[i].exceeded ? "**" : "");
    }
}

static void put_json_number(FILE *out, const char *key, double value)
{
    char number[32];
    rm__json_format_double(value, number);
    fprintf(out, ", \"%s\": %s", key, number);
}

static void print_json_side(FILE *out, const char *name, const side *s)
{
    fprintf(out, "\"%s\": {\"path\": ", name);
    json_write_string(out, s->path);
    fprintf(out, ", \"runs\": %zu}", s->runs);
}

static void print_json(FILE *out, const row *rows, size_t count, const side *base, const side *next, size_t exceeded)
{
    fputc('{', out);
    print_json_side(out, "base", base);
    fputs(", ", out);
    print_json_side(out, "new", next);
    fputs(", \"metrics\": {", out);
    for (size_t i = 0; i < count; i++) {
        const row *r = &rows[i];
        fputs(i ? ", " : "", out);
        json_write_string(out, r->key);
        char number[32];
        rm__json_format_double(r->base, number);
        fprintf(out, ": {\"base\": %s", number);
        put_json_number(out, "new", r->new_value);
        put_json_number(out, "change", r->change);
        put_json_number(out, "change_pct", r->change_pct);
        put_json_number(out, "base_min", r->base_min);
        put_json_number(out, "base_max", r->base_max);
        put_json_number(out, "new_min", r->new_min);
        put_json_number(out, "new_max", r->new_max);
        fprintf(out, ", \"noise\": %s", r->noise ? "true" : "false");
        if (r->limit) {
            char l[48];
            format_limit(r->limit, l, sizeof l);
            fprintf(out, ", \"limit\": \"%s\", \"exceeded\": %s}", l, r->exceeded ? "true" : "false");
        } else {
            fputs(", \"limit\": null, \"exceeded\": null}", out);
        }
    }
    fprintf(out, "}, \"limits_exceeded\": %zu}\n", exceeded);
}

/* One line on stderr per exceeded limit: key, base, new, limit. */
static void report_exceeded(const row *rows, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        if (!rows[i].exceeded)
            continue;
        char b[32], n[32], pct[32], l[48];
        format_number(rows[i].base, b, sizeof b);
        format_number(rows[i].new_value, n, sizeof n);
        format_percent(rows[i].change_pct, pct, sizeof pct);
        format_limit(rows[i].limit, l, sizeof l);
        fputs("resmon compare: ", stderr);
        print_printable(stderr, rows[i].key);
        if (beyond_doubles(&rows[i]))
            fprintf(stderr, " went from %s to %s, a change that does not fit a double: failed against the limit "
                            "of %s, never passed\n", b, n, l);
        else
            fprintf(stderr, " rose from %s to %s (%s), above the limit of %s\n", b, n, pct, l);
    }
}

/* ---- the command line --------------------------------------------------- */

typedef struct compare_options {
    enum compare_format format;
    limit *limits;
    size_t limit_count;
    const char *base_path, *new_path;
} compare_options;

static int compare_usage_error(const char *fmt, const char *arg)
{
    fputs("resmon compare: ", stderr);
    const char *slot = strstr(fmt, "%s");
    fwrite(fmt, 1, slot ? (size_t)(slot - fmt) : strlen(fmt), stderr);
    if (slot) {
        print_printable(stderr, arg);
        fputs(slot + 2, stderr);
    }
    fputs(" (see resmon compare --help)\n", stderr);
    return EXIT_USAGE;
}

/* Returns 0, -1 after --help, or EXIT_USAGE after one line. */
static int compare_parse(int argc, char **argv, compare_options *o)
{
    enum { OPT_MAX_INCREASE = 1000, OPT_FORMAT };
    static const struct option longopts[] = {
        {"max-increase", required_argument, NULL, OPT_MAX_INCREASE},
        {"format", required_argument, NULL, OPT_FORMAT},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    memset(o, 0, sizeof *o);
    o->limits = calloc((size_t)argc, sizeof *o->limits);
    if (!o->limits)
        return compare_usage_error("out of memory", NULL);
    opterr = 0;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_MAX_INCREASE:
            if (parse_limit(optarg, &o->limits[o->limit_count]) < 0)
                return compare_usage_error("--max-increase '%s': expected KEY=N% or KEY=N, N a number >= 0", optarg);
            o->limit_count++;
            break;
        case OPT_FORMAT:
            if (strcmp(optarg, "text") == 0)
                o->format = FORMAT_TEXT;
            else if (strcmp(optarg, "markdown") == 0)
                o->format = FORMAT_MARKDOWN;
            else if (strcmp(optarg, "json") == 0)
                o->format = FORMAT_JSON;
            else
                return compare_usage_error("--format '%s': expected text, markdown or json", optarg);
            break;
        case 'h':
            fputs(compare_usage_text, stdout);
            return -1;
        default:
            if (optopt == OPT_MAX_INCREASE || optopt == OPT_FORMAT)
                return compare_usage_error("'%s' needs a value", argv[optind - 1]);
            return compare_usage_error("unknown option '%s'", argv[optind - 1]);
        }
    }
    if (argc - optind != 2)
        return compare_usage_error(argc - optind < 2 ? "expected BASE and NEW%s" : "expected only BASE and NEW%s", "");
    o->base_path = argv[optind];
    o->new_path = argv[optind + 1];
    return 0;
}

static void compare_options_free(compare_options *o)
{
    for (size_t i = 0; i < o->limit_count; i++)
        free(o->limits[i].key);
    free(o->limits);
}

int compare_main(int argc, char **argv)
{
    compare_options o;
    int rc = compare_parse(argc, argv, &o);
    if (rc != 0) {
        compare_options_free(&o);
        return rc == -1 ? stdout_close("resmon compare") : rc;
    }
    side base = {0}, next = {0};
    row *rows = NULL;
    size_t count = 0;
    char why[512];
    if (jansson_load("comparing summaries", why, sizeof why) < 0)
        rc = compare_error(why, "");
    if (rc == 0)
        rc = side_read(&base, o.base_path);
    if (rc == 0)
        rc = side_read(&next, o.new_path);
    if (rc == 0 && !(rows = build_rows(&base, &next, &count)))
        rc = compare_error("", "out of memory");
    if (rc == 0)
        rc = apply_limits(o.limits, o.limit_count, rows, count);
    if (rc == 0) {
        size_t exceeded = 0;
        for (size_t i = 0; i < count; i++)
            exceeded += (size_t)rows[i].exceeded;
        if (o.format == FORMAT_JSON)
            print_json(stdout, rows, count, &base, &next, exceeded);
        else if (o.format == FORMAT_MARKDOWN)
            print_markdown(stdout, rows, count, &base, &next, exceeded, o.limit_count);
        else
            print_text(stdout, rows, count, &base, &next);
        errno = 0;
        if (fflush(stdout) != 0 || ferror(stdout)) {
            rc = stdout_error(errno);
        } else {
            report_exceeded(rows, count);
            rc = exceeded ? 1 : 0;
            /* A gate never passes a run that failed (its figures may be
             * smaller for that very reason: a crash is quick and lean). */
            const side *sides[] = {&base, &next};
            for (size_t i = 0; i < 2; i++) {
                if (!sides[i]->failed)
                    continue;
                fprintf(stderr, "resmon compare: %s run failed: ", i ? "NEW" : "BASE");
                print_printable(stderr, sides[i]->failed);
                fputs(o.limit_count ? ": no limit passes a failed run\n" : "\n", stderr);
                if (o.limit_count)
                    rc = 1;
            }
        }
    }
    free(rows);
    side_free(&base);
    side_free(&next);
    compare_options_free(&o);
    errno = 0;
    if (fclose(stdout) != 0 && rc != EXIT_USAGE)
        rc = stdout_error(errno);
    return rc;
}
