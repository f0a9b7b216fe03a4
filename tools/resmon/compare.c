/*
 * compare.c -- `resmon compare [OPTIONS] BASE NEW`: a regression gate for CI
 * that tells a change from noise.
 *
 * Each side is one summary JSON (what `resmon -o`, resmon_summary_to_json and
 * the Python to_dict() write), the multi-run JSON of `resmon --repeat` (its
 * "runs"), a pytest report (`pytest --resmon-json`), or a directory of
 * summaries or reports holding repeated runs of that side.  Every numeric key
 * present on both sides gets a row, judged over the runs of each side that
 * hold it (a partial report in a directory lacks some); a pytest report's
 * keys are "NODEID::KEY".  With enough runs a side, the Mann-Whitney U test
 * (rank_test.c) says whether a key changed at --alpha; a limit fails only a
 * change that is significant and exceeds both its relative and its absolute
 * part.  A failed NEW run, or exit statuses that differ, fail the comparison;
 * sides that ran different commands are refused.
 *
 * Jansson parses the inputs, loaded when compare runs (optional_library.c,
 * as for reading a .jsonl file), so no other run of the command maps it and
 * a machine without it runs everything else.
 */
#include "compare.h"
#include "cli.h"
#include "decimal_text.h"
#include "input_file.h"
#include "path_checked.h"
#include "jansson_loader.h"
#include "json_number.h"
#include "option_once.h"
#include "output_file.h"
#include "output_paths.h"
#include "rank_test.h"
#include "reader_wait.h"
#include "text_output.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <langinfo.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char compare_usage_text[] =
    "usage: resmon compare [OPTIONS] BASE NEW\n"
    "\n"
    "Compares two sides of a benchmark.  BASE and NEW are each a summary JSON (resmon -o,\n"
    "the library's resmon_summary_to_json, the Python to_dict()), what resmon writes for\n"
    "repeated runs (every run in it), the JSON report of resmon's pytest plugin (its keys\n"
    "are NODEID::KEY), or a directory of summaries or reports, one run each; - is standard\n"
    "input.  Inputs are regular files of at most 32 MiB, read in at most 256 MiB of memory\n"
    "(a pytest report of some 5 MB a side).  A side's figure is its median, over the runs that\n"
    "hold the key (a run that lacks it, a partial pytest report, is said beside it).\n"
    "With enough runs a side (4 at --alpha 0.05, 5 at 0.01) a Mann-Whitney U test says\n"
    "whether a key changed, its p adjusted for the keys tested alike (Benjamini-Hochberg\n"
    "over the keys each limit judges, and over the keys of no limit apart); each key\n"
    "gets one verdict: regression, improvement, unchanged, noise, or not enough runs.\n"
    "A significant change no larger than the key's floor (its limit's M, else the floor\n"
    "N% alone carries) is unchanged, limit or not.  Shown: the keys with a limit and\n"
    "the keys that changed significantly, led by one line saying whether the limits\n"
    "hold.\n"
    "\n"
    "      --max-increase KEY=LIMIT  fail (exit 1) when KEY rises by more than LIMIT:\n"
    "                                N% (of BASE), N (KEY's own unit) or N%,M (both:\n"
    "                                more than N% and more than M); repeatable,\n"
    "                                one limit for each KEY.  N%\n"
    "                                alone also needs a rise over 1 unit (0.01 for a\n"
    "                                _sec key, 1 MiB for _bytes, io_rchar, io_wchar),\n"
    "                                so a zero or tiny BASE never fails on\n"
    "                                the percentage alone.  With enough runs the rise\n"
    "                                beyond the limit must also be significant (NEW\n"
    "                                against BASE raised by it, one-sided).  A KEY that names no\n"
    "                                pytest report key as a whole names it in every\n"
    "                                test (rss_growth_mb).  Facts of the run\n"
    "                                (marks_dropped, exit_status, interval_sec,\n"
    "                                walk_interval_sec, cgroup_version) are rows,\n"
    "                                never limits\n"
    "      --alpha P                 the test's level, 0 < P < 0.5 (default 0.05)\n"
    "      --all                     show every key, not only those with a limit or a\n"
    "                                significant change\n"
    "      --allow-different-commands\n"
    "                                compare summaries whose command lines differ\n"
    "                                (refused otherwise)\n"
    "      --format FORMAT           text (default), markdown (a CI job summary, a PR\n"
    "                                comment) or json (every key, p-values, verdicts)\n"
    "  -h, --help                    this help (the manual: man resmon)\n"
    "\n"
    "Exit status: 0 when every limit holds, 1 when one is exceeded (each named on stderr)\n"
    "or, limits or not, when a run of NEW failed (exit_status not 0, interrupted, or a\n"
    "process OOM-killed) or BASE's exit status differs from NEW's; 125 for bad usage, an\n"
    "unreadable input or one\n"
    "that is not a summary, a KEY that is not a numeric key on both sides, or summaries\n"
    "of different commands.\n";

enum compare_format { FORMAT_TEXT, FORMAT_MARKDOWN, FORMAT_JSON };

/* One numeric key of one side: its value in each run. */
typedef struct metric {
    char *key;
    double *values; /* cap of them, grown as runs hold the key (never past the side's runs) */
    size_t count;   /* the runs that hold it: a directory's partial report lacks some keys */
    size_t cap;
    size_t last_run; /* the last run that gave it a value, plus 1 */
} metric;

/* A run read, on either side: one met again -- a link to it, a copy of it,
 * or BASE's own run among NEW's -- is one measurement counted twice, and a
 * run compared with itself holds every gate. */
typedef struct run_seen {
    dev_t dev;
    ino_t ino;          /* 0: none stat could name (standard input) */
    uint64_t hash;      /* FNV-1a of its document, keys sorted, written compactly */
    const void *side;   /* the side that read it */
    char *path;
} run_seen;

typedef struct runs_seen {
    run_seen *at;
    size_t count, cap;
} runs_seen;

typedef struct side {
    const char *path;
    runs_seen *seen; /* every run read so far, both sides' */
    size_t runs;
    metric *metrics;
    size_t metric_count, metric_cap;
    json_t *index; /* key -> position in metrics: Jansson's object as a hash table */
    char *failed;  /* the first run that failed (a summary whose command exited other
                      than 0, or was interrupted), as one line's words; NULL: none */
    double status; /* the first run's exit_status; NAN: none (a pytest report) */
    int reports;   /* its runs are pytest reports: a failed BASE does not fail the comparison (status_failure) */
    json_t *first; /* the first summary read (a --repeat file: the whole file), kept
                      for its command; NULL for a pytest report */
    json_t *command;           /* first's "command" array, or NULL */
    const char *watched;       /* what first's run watched: run_watched's words, or NULL */
    const char *command_differs; /* the first run whose command is not first's */
    char *command_differs_owned;
    size_t only_here;          /* keys of this side that the other lacks */
    const char *kind;          /* what a directory's runs are: "summaries", "pytest reports", or NULL */
    char *kind_path;           /* the first run of that kind */
    size_t *run_keys;          /* per run: how many keys it holds (a run lacks metric_count - this) */
    char **run_names;          /* per run: its file (a --repeat file's "PATH run N") */
    size_t partial;            /* compared keys that some runs of this side lack */
    char *left_running;        /* the first run that left work running (orphans_left), as words; NULL: none */
    size_t left_running_runs;  /* how many runs left work running */
    json_t *left_tests;        /* pytest reports: NODEID -> how many runs of the test named work left running */
    json_t *unjudged;          /* pytest reports: the NODEID::KEYs left out as their records' "unjudged" (a set) */
} side;

/* KEY=N%, KEY=N or KEY=N%,M: a rise fails when it is more than percent% of
 * BASE (when percent is not NAN) and more than floor. */
typedef struct limit {
    const char *arg; /* KEY=LIMIT as given */
    char *key;
    double percent; /* NAN: no relative part */
    double floor;   /* the absolute part: given, or the key's default with N% alone */
    int floor_given;
    size_t rows; /* rows it applies to */
    size_t judged, exceeded; /* rows it is the limit of (the most specific naming a row), rows it fails */
    int overridden; /* a row it names has a more specific limit (a longer KEY) */
} limit;

enum verdict { VERDICT_NOT_ENOUGH, VERDICT_UNCHANGED, VERDICT_NOISE, VERDICT_REGRESSION, VERDICT_IMPROVEMENT };

static const char *const verdict_names[] = {"not enough runs", "unchanged", "noise", "regression", "improvement"};

typedef struct row {
    const char *key;
    double base, base_min, base_max, new_value, new_min, new_max;
    double change, change_pct; /* change_pct NAN when base is 0 */
    double p;                  /* the rank test's two-sided p; NAN: not enough runs */
    double q;                  /* p adjusted over its family (adjust_family); NAN with p; for a
                                  key with a limit, the one-sided test's in its change's direction */
    double p_rise, p_fall;     /* one-sided p: NEW above BASE, below it (from U) */
    int rose, fell;            /* a key with a limit: its rise, its fall significant in its family */
    double p_beyond, q_beyond; /* a key with a limit: one-sided p of NEW above BASE raised by the
                                  limit (test_beyond), adjusted over the limit's keys; NAN: untested */
    int shown_beyond;          /* q_beyond <= alpha: the rise beyond the limit is no chance */
    int rise_unreachable;      /* the runs' ties keep any rise's p over alpha, whatever the data */
    const double *base_values, *new_values; /* the runs' values (the sides' metrics) */
    size_t base_runs, new_runs; /* the runs of each side that hold the key */
    int exact;                 /* p from the exact distribution */
    int significant;           /* q <= alpha */
    enum verdict verdict;
    const limit *limit; /* the last --max-increase naming it, or NULL */
    int exceeded;
    int shown; /* in the text and markdown tables (all rows are in the JSON) */
    size_t order; /* position in BASE, for a stable sort */
} row;

/* Where the report goes and where its messages go: the process's stdout and
 * stderr for the command, a caller's streams for compare_run (the Python
 * binding's).  Set by compare_run for the length of one call. */
static FILE *compare_out, *compare_err;

/* compare_run's caller (NULL for the command), for the length of one call,
 * and whether it said stop. */
static const compare_caller *compare_caller_now;
static int compare_stopped;
static struct timespec compare_asked; /* when the caller was last asked */

/* Whether the caller asked the run to stop: asked at most every 10 ms (the
 * Python binding takes the GIL to answer), and never again once it said
 * yes.  Called between pieces of work of well under 10 ms each: a chunk of
 * the JSON parsed, a test's record, a row judged. */
static int caller_stopped(void)
{
    if (compare_stopped || !compare_caller_now || !compare_caller_now->interrupted)
        return compare_stopped;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if ((now.tv_sec - compare_asked.tv_sec) * 1000000000L + (now.tv_nsec - compare_asked.tv_nsec) < 10000000L)
        return 0;
    compare_asked = now;
    compare_stopped = compare_caller_now->interrupted(compare_caller_now->context) != 0;
    return compare_stopped;
}

/* "resmon compare: " then text shown printable, then the rest; returns 125. */
static int compare_error(const char *text, const char *why)
{
    fputs("resmon compare: ", compare_err);
    print_printable(compare_err, text);
    fprintf(compare_err, "%s\n", why);
    return EXIT_USAGE;
}

/* The report could not be written: says why, with the failed write's errno
 * (ENOSPC, EPIPE...) where stdio still has it. */
static int stdout_error(int err)
{
    if (err == ETIMEDOUT) {
        fprintf(compare_err, "resmon compare: standard output cannot be written: its reader took nothing for %g s\n",
                READER_STUCK_SEC);
        return EXIT_USAGE;
    }
    fprintf(compare_err, "resmon compare: standard output cannot be written: %s\n", strerror(err ? err : EIO));
    return EXIT_USAGE;
}

/* ---- reading one side ------------------------------------------------ */

static void *budget_malloc(size_t n);
static void budget_free(void *p);

/* A block of the budget's grown to bytes, its first kept bytes copied. */
static void *budget_grow(void *old, size_t kept, size_t bytes)
{
    void *grown = budget_malloc(bytes);
    if (!grown)
        return NULL;
    if (kept)
        memcpy(grown, old, kept);
    budget_free(old);
    return grown;
}

/* A string of the budget's, as asprintf makes one; NULL when the budget or
 * memory is out.  The runs' names are the budget's too: 36 000 runs of a
 * directory named by a 3 700-byte path took 281 MiB (review 60). */
static char *budget_printf(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    int n = vsnprintf(NULL, 0, format, args);
    va_end(args);
    char *text = n >= 0 ? budget_malloc((size_t)n + 1) : NULL;
    if (!text)
        return NULL;
    va_start(args, format);
    vsnprintf(text, (size_t)n + 1, format, args);
    va_end(args);
    return text;
}

/* count zeroed items of size bytes, the budget's; NULL when the budget or
 * memory is out (or the product overflows). */
static void *budget_calloc(size_t count, size_t size)
{
    void *block = size && count > SIZE_MAX / size ? NULL : budget_malloc(count * size);
    if (block)
        memset(block, 0, count * size);
    return block;
}

/* A key is judged over the runs that hold it: a directory's reports from a
 * `pytest -k`, `-x` or interrupted session lack some tests, and a key kept
 * only when every run held it silently left those tests ungated.  The
 * side's keys and values are the budget's (budget_malloc), each key's
 * values grown as runs hold it: a slot for every run of the side, outside
 * the budget, took 910 MB for a 7.9 MB directory of 200 shards' reports --
 * keys times runs (attack 58). */
static int side_add(side *s, const char *key, double value, size_t run)
{
    json_t *at = jansson.object_get(s->index, key);
    if (at) {
        metric *m = &s->metrics[jansson.integer_value(at)];
        if (m->last_run != run + 1) { /* once a run */
            if (m->count == m->cap) {
                size_t cap = 2 * m->cap < s->runs ? 2 * m->cap : s->runs;
                double *grown = budget_grow(m->values, m->count * sizeof *grown, cap * sizeof *grown);
                if (!grown)
                    return -ENOMEM;
                m->values = grown;
                m->cap = cap;
            }
            m->values[m->count++] = value;
            m->last_run = run + 1;
            s->run_keys[run]++;
        }
        return 0;
    }
    if (s->metric_count == s->metric_cap) {
        size_t cap = s->metric_cap ? 2 * s->metric_cap : 64;
        metric *grown = budget_grow(s->metrics, s->metric_count * sizeof *grown, cap * sizeof *grown);
        if (!grown)
            return -ENOMEM;
        s->metrics = grown;
        s->metric_cap = cap;
    }
    metric *m = &s->metrics[s->metric_count];
    size_t length = strlen(key) + 1;
    m->key = budget_malloc(length);
    m->values = budget_malloc(sizeof *m->values);
    if (!m->key || !m->values ||
        jansson.object_set_new(s->index, key, jansson.integer((json_int_t)s->metric_count)) < 0) {
        budget_free(m->key);
        budget_free(m->values);
        return -ENOMEM;
    }
    memcpy(m->key, key, length);
    m->values[0] = value;
    m->cap = 1;
    m->count = 1;
    m->last_run = run + 1;
    s->run_keys[run]++;
    s->metric_count++;
    return 0;
}

/* The numeric members of object, each under prefix + its name. */
/* Whether name is one of the strings of list (NULL: none). */
static int listed(json_t *list, const char *name)
{
    size_t n = json_is_array(list) ? jansson.array_size(list) : 0;
    for (size_t i = 0; i < n; i++) {
        json_t *item = jansson.array_get(list, i);
        if (json_is_string(item) && strcmp(jansson.string_value(item), name) == 0)
            return 1;
    }
    return 0;
}

/* The numeric members of object as keys of this run, but those named in
 * skip (a pytest record's "unjudged": the test ran beside other work, and
 * the plugin's own limits judge none of them -- judged here, a session
 * fixture's 100 MiB failed a test, attack 63 F2). */
static int side_add_members(side *s, json_t *object, const char *prefix, size_t run, json_t *skip)
{
    if (caller_stopped())
        return -EINTR;
    for (void *at = jansson.object_iter(object); at; at = jansson.object_iter_next(object, at)) {
        const char *name = jansson.object_iter_key(at);
        json_t *value = jansson.object_iter_value(at);
        if (!json_is_number(value))
            continue;
        char *key;
        if (asprintf(&key, "%s%s%s", prefix ? prefix : "", prefix ? "::" : "", name) < 0)
            return -ENOMEM;
        int rc;
        if (listed(skip, name)) { /* left out, and noted for the notes and a limit's error */
            json_t *one = (s->unjudged || (s->unjudged = jansson.object())) ? jansson.integer(1) : NULL;
            rc = one && jansson.object_set_new(s->unjudged, key, one) == 0 ? 0 : -ENOMEM;
        } else {
            rc = side_add(s, key, jansson.number_value(value), run);
        }
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

/* ...but memory, not bytes, is what a side costs: a pytest report took 24
 * MiB of memory per MB (its tree, and the keys kept for both sides), so 32
 * MiB of input could take 770 MiB.  Every allocation Jansson makes in
 * compare (the trees and both sides' key index) is counted, with the
 * allocator's overhead, against this budget; an input that would pass it is
 * refused, named, as one over the byte bound is. */
#define COMPARE_MEMORY_MAX ((size_t)256 << 20)
/* What the budget counts is less by what it does not: the program, an
 * input's text while it is parsed, the allocator's slack.  Counted up to
 * the whole 256 MiB, a comparison of 324 000 keys a side peaked at 298 MiB
 * (attack 59). */
#define COMPARE_BUDGET (COMPARE_MEMORY_MAX - ((size_t)40 << 20))
#define BUDGET_HEADER 16 /* keeps malloc's alignment */
#define BUDGET_OVERHEAD 16 /* what malloc adds to each block */
static size_t budget_held;
static int budget_exceeded;
/* Jansson's allocator is the process's: in the Python extension, where the
 * engine runs without the GIL, another thread's Jansson calls (any other
 * native code) come here too.  Only the engine's thread counts, so the
 * budget is the engine's alone and never written by two threads. */
static _Thread_local int budget_counting;

static void *budget_malloc(size_t n)
{
    if (!budget_counting) { /* another thread's: a header saying so */
        size_t *block = n <= SIZE_MAX - BUDGET_HEADER ? malloc(n + BUDGET_HEADER) : NULL;
        if (block)
            block[0] = 0;
        return block ? (char *)block + BUDGET_HEADER : NULL;
    }
    size_t cost = n + BUDGET_HEADER + BUDGET_OVERHEAD;
    if (n > COMPARE_BUDGET || cost > COMPARE_BUDGET - budget_held) {
        budget_exceeded = 1;
        return NULL;
    }
    size_t *block = malloc(n + BUDGET_HEADER);
    if (!block)
        return NULL;
    block[0] = cost;
    budget_held += cost;
    return (char *)block + BUDGET_HEADER;
}

static void budget_free(void *p)
{
    if (!p)
        return;
    size_t *block = (size_t *)(void *)((char *)p - BUDGET_HEADER);
    if (block[0]) /* the engine's own */
        budget_held -= block[0];
    free(block);
}

/* After a failed read: the line that says so, when the budget was the
 * reason. */
static int budget_error(const char *path)
{
    char line[160];
    snprintf(line, sizeof line, ": needs more than the %zu MiB of memory compare allows", COMPARE_MEMORY_MAX >> 20);
    return compare_error(path, line);
}

/* Out of memory reading path, or (NULL) while comparing the sides read:
 * the budget's line when it was the reason. */
static int out_of_memory(const char *path)
{
    if (path)
        return budget_exceeded ? budget_error(path) : compare_error(path, ": out of memory");
    char line[160];
    snprintf(line, sizeof line, "BASE and NEW together need more than the %zu MiB of memory compare allows",
             COMPARE_MEMORY_MAX >> 20);
    return compare_error(budget_exceeded ? line : "out of memory", "");
}

/* The text of path ("-": standard input, which may be a pipe), at most
 * COMPARE_INPUT_MAX bytes: a FIFO, device or directory is refused without
 * waiting on it, as is standard output's own file.  Returns 0, or prints one
 * line and returns EXIT_USAGE. */
static int input_text(const char *path, char **text, size_t *length)
{
    char why[256];
    FILE *f = stdin;
    struct stat in, out;
    if (strcmp(path, "-") == 0 && compare_out == stdout && fstat(STDIN_FILENO, &in) == 0 &&
        fstat(STDOUT_FILENO, &out) == 0 && S_ISREG(in.st_mode) && in.st_dev == out.st_dev &&
        in.st_ino == out.st_ino) {
        /* `compare a.json - < b.json >> b.json`: as a named input would be */
        fputs("resmon compare: standard output and the input '-' (standard input) name the same file: an output "
              "never replaces an input (see resmon compare --help)\n", compare_err);
        return EXIT_USAGE;
    }
    if (strcmp(path, "-") != 0) {
        const char *const paths[] = {"-", path};
        const char *const options[] = {"standard output", "the input"};
        if (compare_out == stdout && output_paths_check("resmon compare", paths, options, 1, 2) != 0)
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

/* Room for runs runs of s: their key counts and names.  Returns 0 or
 * -ENOMEM. */
static int side_set_runs(side *s, size_t runs)
{
    size_t *keys = budget_calloc(runs, sizeof *keys);
    char **names = budget_calloc(runs, sizeof *names);
    if (!keys || !names) {
        budget_free(keys);
        budget_free(names);
        return -ENOMEM;
    }
    for (size_t i = 0; i < s->runs && s->run_names; i++)
        budget_free(s->run_names[i]);
    budget_free(s->run_keys);
    budget_free(s->run_names);
    s->run_keys = keys;
    s->run_names = names;
    s->runs = runs;
    return 0;
}

static int is_summary(json_t *root)
{
    return json_is_object(root) && json_is_number(jansson.object_get(root, "peak_rss_mb")) &&
           json_is_number(jansson.object_get(root, "num_samples"));
}

/* Adds one summary as run number run of s: its numbers, whether it failed,
 * its exit status and command.  Returns 0 or -ENOMEM. */
/* What a summary's run watched, as check_commands words it: a command it
 * ran, a tree it attached to (--pid) or a cgroup it read (--cgroup alone).
 * Their figures cover different spans and processes (an attached run misses
 * the start and has no exact peak), so they are not compared unasked.  NULL:
 * the summary does not say. */
static const char *run_watched(json_t *summary)
{
    if (jansson.object_get(summary, "command"))
        return jansson.object_get(summary, "cgroup_path") ? "ran a command in a cgroup it was given (--cgroup)"
                                                          : "ran a command";
    if (jansson.object_get(summary, "pid"))
        return "attached to a process tree (--pid)";
    if (jansson.object_get(summary, "cgroup_path"))
        return "read a cgroup (--cgroup)";
    return NULL;
}

/* Whether the OOM killer struck a command's run: its summary names a
 * victim (oom_killed) or its leaf counted a kill.  A script that goes on
 * after its child was killed exits 0 -- and, its work cut short, looks
 * cheaper and faster: such a run is a failed one, whatever its status
 * (a gate passed "2 limits hold" over five such runs). */
static int oom_struck(json_t *summary)
{
    json_t *victim = jansson.object_get(summary, "oom_killed");
    json_t *kills = jansson.object_get(summary, "cgroup_oom_kills");
    /* A given cgroup's (--cgroup PATH COMMAND) kills are of whoever is in
     * it, the command's or not -- and in summaries before 0.4.0's last
     * fixes, of its whole life: a kill before the run failed every later
     * run of the service (by the count, and by the oom_killed they wrote
     * from it). */
    if (jansson.object_get(summary, "cgroup_path"))
        return 0;
    return (victim && !json_is_null(victim) && !json_is_false(victim)) ||
           (json_is_number(kills) && jansson.number_value(kills) > 0);
}

/* Whether summary holds KEY (a figure of how the run ended) as something
 * other than a count: a gate passes only what it can tell succeeded, and a
 * "1" or -1 of OOM kills or of processes left running tells nothing (attack
 * 67 F10: each passed).  Absent is a run without that figure; null too
 * where resmon writes one for "unknown" (null_said: the cgroup's kills,
 * which a cgroup may not tell), else it is no count (attack 70: a
 * hand-edited null passed). */
static int ending_unsaid(json_t *summary, const char *key, int null_said)
{
    json_t *value = jansson.object_get(summary, key);
    return value && !(null_said && json_is_null(value)) &&
           !(json_is_number(value) && jansson.number_value(value) >= 0);
}

static int side_add_summary(side *s, json_t *summary, const char *path, size_t run)
{
    int rc = side_add_members(s, summary, NULL, run, NULL);
    /* What the command left running went on after the run was measured:
     * its figures miss that work (status_failure). */
    json_t *orphans = jansson.object_get(summary, "orphans_left");
    int left = json_is_number(orphans) && jansson.number_value(orphans) > 0;
    s->left_running_runs += left;
    if (rc == 0 && !s->left_running && left &&
        asprintf(&s->left_running, "%s left %g process%s running (orphans_left)", path, jansson.number_value(orphans),
                 jansson.number_value(orphans) == 1 ? "" : "es") < 0) {
        s->left_running = NULL;
        return -ENOMEM;
    }
    /* A failed run is not a faster one: noted, whatever its figures.  So is
     * a run not known to have succeeded: a command's summary whose status is
     * null (the kernel gave none: resmon itself exited 125), missing or not
     * a number, and an "interrupted" that is anything but false -- a gate
     * passes only what it can tell succeeded.  (A --pid or --cgroup
     * summary has no command, and no status to know.) */
    json_t *status = jansson.object_get(summary, "exit_status");
    json_t *interrupted = jansson.object_get(summary, "interrupted");
    int has_command = jansson.object_get(summary, "command") != NULL;
    char status_text[64];
    if (json_is_number(status))
        snprintf(status_text, sizeof status_text, "%g", jansson.number_value(status));
    else
        snprintf(status_text, sizeof status_text, "%s", !status ? "missing" : json_is_null(status) ? "null" : "not a number");
    const char *why = NULL;
    if (json_is_true(interrupted))
        why = "was interrupted, exit_status";
    else if (interrupted && !json_is_false(interrupted))
        why = "has an \"interrupted\" that is not false, exit_status";
    else if (!interrupted && has_command) /* every command's summary has it: one without may hide a stopped run */
        why = "is a command's run that does not say whether it was interrupted (no \"interrupted\"), exit_status";
    else if (json_is_number(status) && jansson.number_value(status) != 0)
        why = "exited with status";
    else if (status && !json_is_number(status) && !json_is_null(status))
        why = "has an exit_status that says nothing of how it ended:";
    else if (!json_is_number(status) && has_command)
        why = "is a command's run that does not say how it ended: exit_status";
    else if (has_command && oom_struck(summary))
        why = "had a process killed by the OOM killer (oom_killed, cgroup_oom_kills), exit_status";
    else if (has_command && (ending_unsaid(summary, "orphans_left", 0) || ending_unsaid(summary, "cgroup_oom_kills", 1)))
        why = "has an orphans_left or cgroup_oom_kills that is not a count (a number, 0 or more), exit_status";
    if (rc == 0 && !s->failed && why && asprintf(&s->failed, "%s %s %s", path, why, status_text) < 0) {
        s->failed = NULL;
        return -ENOMEM;
    }
    if (run == 0)
        s->status = json_is_number(status) ? jansson.number_value(status) : NAN;
    json_t *command = jansson.object_get(summary, "command");
    const char *watched = run_watched(summary);
    if (run == 0) {
        s->command = command;
        s->watched = watched;
    } else if (!s->command_differs && (!command != !s->command || (command && !jansson.equal(command, s->command)) ||
                                       !watched != !s->watched || (watched && strcmp(watched, s->watched) != 0))) {
        if (!(s->command_differs_owned = strdup(path)))
            return -ENOMEM;
        s->command_differs = s->command_differs_owned;
    }
    return rc;
}

/* A --repeat file's runs as the whole side s.  Returns 0, or prints one line
 * and returns EXIT_USAGE. */
static int side_add_repeat(side *s, json_t *root, const char *path, int in_directory)
{
    json_t *runs = jansson.object_get(root, "runs");
    size_t count = json_is_array(runs) ? jansson.array_size(runs) : 0;
    if (in_directory)
        return compare_error(path, ": a resmon --repeat file is a side of its own, not a run in a directory");
    if (!json_is_array(runs))
        return compare_error(path, ": a resmon --repeat file without a \"runs\" array");
    if (count == 0)
        return compare_error(path, ": a resmon --repeat file that holds no run");
    if (side_set_runs(s, count) < 0)
        return compare_error(path, ": out of memory");
    /* A repeat stopped early (SIGTERM in run 2 of 5) keeps the runs it
     * completed, each a success: the file itself says it is not whole. */
    json_t *interrupted = jansson.object_get(root, "interrupted"), *asked = jansson.object_get(root, "repeat");
    json_t *completed = jansson.object_get(root, "completed");
    /* ... and one whose "runs" are fewer than it says completed (or that
     * does not say) is no whole record either: its runs are what is judged. */
    if (!s->failed && (!json_is_number(completed) || jansson.number_value(completed) != (double)count) &&
        asprintf(&s->failed, "%s holds %zu runs where its \"completed\" says %s", path, count,
                 json_is_number(completed) ? "otherwise" : "nothing") < 0) {
        s->failed = NULL;
        return compare_error(path, ": out of memory");
    }
    if (!s->failed && ((interrupted && !json_is_false(interrupted)) ||
                       (json_is_number(asked) && json_is_number(completed) &&
                        jansson.number_value(completed) < jansson.number_value(asked))) &&
        asprintf(&s->failed, "%s was interrupted after %g of its %g runs", path,
                 json_is_number(completed) ? jansson.number_value(completed) : (double)count,
                 json_is_number(asked) ? jansson.number_value(asked) : NAN) < 0) {
        s->failed = NULL;
        return compare_error(path, ": out of memory");
    }
    /* A leftover OOM-killed while the repeat waited for it before the next
     * run is counted in the file's oom_killed_runs, after that run's summary
     * was read (review 67 R4: the gate passed such a file).  Not a count:
     * says nothing of how the runs ended (null neither: resmon always
     * writes the count). */
    json_t *struck = jansson.object_get(root, "oom_killed_runs");
    if (!s->failed && struck && (!json_is_number(struck) || jansson.number_value(struck) != 0) &&
        asprintf(&s->failed, "%s had %s (oom_killed_runs)", path,
                 json_is_number(struck) && jansson.number_value(struck) > 0
                     ? "a process killed by the OOM killer in some of its runs"
                     : "an oom_killed_runs that is not a count") < 0) {
        s->failed = NULL;
        return compare_error(path, ": out of memory");
    }
    for (size_t i = 0; i < count; i++) {
        char where[64];
        json_t *run = jansson.array_get(runs, i);
        if (!is_summary(run)) {
            snprintf(where, sizeof where, ": run %zu of \"runs\" is not a resmon summary", i + 1);
            return compare_error(path, where);
        }
        char *named = budget_printf("%s run %zu", path, i + 1);
        if (!named)
            return out_of_memory(path);
        int rc = side_add_summary(s, run, named, i);
        s->run_names[i] = named;
        if (rc < 0)
            return rc == -EINTR ? COMPARE_INTERRUPTED : compare_error(path, ": out of memory");
    }
    return 0;
}

/* Notes that a test of this side left work running when it returned (its
 * record's left_running).  0 or -ENOMEM. */
static int note_left_test(side *s, const char *node)
{
    if (!s->left_tests && !(s->left_tests = jansson.object()))
        return -ENOMEM;
    json_t *had = jansson.object_get(s->left_tests, node);
    json_t *count = jansson.integer(had ? jansson.integer_value(had) + 1 : 1);
    return count && jansson.object_set_new(s->left_tests, node, count) == 0 ? 0 : -ENOMEM;
}

/* A pytest report of a session that did not succeed is a failed run, as a
 * summary's exit status other than 0 is: a test that failed early is quick
 * and lean, not an improvement, and a session interrupted after half its
 * tests passed as "2 keys not judged" (stop 53's attack on issue 28).  The
 * session's "interrupted" and "exit_status", each test's "outcome" (a
 * report from before 0.4.1 has none of them: not known to have failed), and
 * a test's "oom_kills" (its leaf's: a process of it killed, the test
 * passed on a run cut short).
 * Returns 0 or -ENOMEM. */
static int report_failure(side *s, json_t *root, json_t *tests, const char *path)
{
    if (s->failed)
        return 0;
    json_t *interrupted = jansson.object_get(root, "interrupted"), *status = jansson.object_get(root, "exit_status");
    int rc = 0;
    if (interrupted && !json_is_false(interrupted))
        rc = asprintf(&s->failed, "%s is the report of an interrupted pytest session", path);
    else if (status && (!json_is_number(status) || (jansson.number_value(status) != 0 &&
                                                    jansson.number_value(status) != 5))) /* 5: none collected (-k) */
        rc = json_is_number(status) ? asprintf(&s->failed, "%s is the report of a pytest session that exited %g", path,
                                               jansson.number_value(status))
                                    : asprintf(&s->failed, "%s has an exit_status that is not a number", path);
    for (void *at = jansson.object_iter(tests); at && !s->failed; at = jansson.object_iter_next(tests, at)) {
        json_t *outcome = jansson.object_get(jansson.object_iter_value(at), "outcome");
        json_t *kills = jansson.object_get(jansson.object_iter_value(at), "oom_kills");
        const char *said = json_is_string(outcome) ? jansson.string_value(outcome) : NULL;
        if (outcome && (!said || (strcmp(said, "passed") != 0 && strcmp(said, "skipped") != 0)))
            rc = asprintf(&s->failed, "%s: %s %s", path, jansson.object_iter_key(at),
                          said && strlen(said) < 32 ? said : "did not pass");
        else if (json_is_number(kills) && jansson.number_value(kills) > 0) /* a test that passed with its work cut short */
            rc = asprintf(&s->failed, "%s: %s had a process killed by the OOM killer (oom_kills)", path,
                          jansson.object_iter_key(at));
    }
    if (rc < 0) {
        s->failed = NULL;
        return -ENOMEM;
    }
    return 0;
}

/* A file's text handed to Jansson's parser a piece at a time, so that a
 * caller may stop the run in the parse of a large report (10 MB: ~1 s). */
typedef struct input_chunks {
    const char *text;
    size_t length, offset;
} input_chunks;

/* json_load_callback's source: the next 64 KiB, or -1 (an error to the
 * parser) when the caller stopped the run. */
static size_t next_chunk(void *buffer, size_t cap, void *data)
{
    input_chunks *c = data;
    if (caller_stopped())
        return (size_t)-1;
    size_t n = c->length - c->offset;
    if (n > cap)
        n = cap;
    if (n > 65536)
        n = 65536;
    memcpy(buffer, c->text + c->offset, n);
    c->offset += n;
    return n;
}

/* FNV-1a over the text Jansson writes, in the dump's order. */
static int hash_chunk(const char *buffer, size_t size, void *data)
{
    uint64_t *hash = data;
    for (size_t i = 0; i < size; i++)
        *hash = (*hash ^ (unsigned char)buffer[i]) * 1099511628211ULL;
    return caller_stopped() ? -1 : 0;
}

/* Whether the run of path (root, as read) was read before, by either side:
 * the same file (a link, or the same name twice) or the same document (a
 * copy, also one written again with other spacing or key order: its keys
 * sorted, written compactly, hashed -- two real runs never agree on their
 * start time, pid and clocks).  Records it when not.  Returns 0, or prints
 * one line and returns EXIT_USAGE (COMPARE_INTERRUPTED when stopped). */
static int run_met_before(side *s, const char *path, json_t *root)
{
    runs_seen *seen = s->seen;
    if (!seen)
        return 0;
    run_seen now = {.side = s, .hash = 14695981039346656037ULL};
    if (jansson.dump_callback(root, hash_chunk, &now.hash, JSON_SORT_KEYS | JSON_COMPACT | JSON_ENCODE_ANY) != 0)
        return compare_stopped ? COMPARE_INTERRUPTED : budget_exceeded ? budget_error(path) : out_of_memory(path);
    struct stat st;
    if (strcmp(path, "-") != 0 && stat(path, &st) == 0) {
        now.dev = st.st_dev;
        now.ino = st.st_ino;
    }
    for (size_t j = 0; j < seen->count; j++) {
        const run_seen *was = &seen->at[j];
        int same_file = now.ino && was->ino == now.ino && was->dev == now.dev;
        if (!same_file && was->hash != now.hash)
            continue;
        char why[PATH_MAX + 200];
        if (was->side != s)
            snprintf(why, sizeof why, ": the same %s as %s, on the other side: a run compared with itself holds "
                                      "every gate", same_file ? "file" : "run (a copy)", was->path);
        else
            snprintf(why, sizeof why, ": the same %s as %s (%s): one run counted twice would pass for two "
                                      "measurements", same_file ? "file" : "run", was->path,
                     same_file ? "a link" : "a copy");
        return compare_error(path, why);
    }
    if (seen->count == seen->cap) {
        size_t cap = seen->cap ? 2 * seen->cap : 16;
        run_seen *grown = budget_grow(seen->at, seen->count * sizeof *grown, cap * sizeof *grown);
        if (!grown)
            return out_of_memory(path);
        seen->at = grown;
        seen->cap = cap;
    }
    if (!(now.path = budget_printf("%s", path)))
        return out_of_memory(path);
    seen->at[seen->count++] = now;
    return 0;
}

static void runs_seen_free(runs_seen *seen)
{
    for (size_t i = 0; i < seen->count; i++)
        budget_free(seen->at[i].path);
    budget_free(seen->at);
}

/* Reads one file as run number run of s (a --repeat file: every run of s,
 * unless in_directory).  Returns 0, or prints one line and returns
 * EXIT_USAGE. */
static int side_read_file(side *s, const char *path, size_t run, int in_directory)
{
    char *text;
    size_t length;
    int text_rc = input_text(path, &text, &length);
    if (text_rc != 0)
        return text_rc;
    json_error_t err;
    input_chunks chunks = {text, length, 0};
    json_t *root = jansson.load_callback(next_chunk, &chunks, JSON_REJECT_DUPLICATES | JSON_DECODE_INT_AS_REAL, &err);
    free(text);
    if (!root && compare_stopped)
        return COMPARE_INTERRUPTED;
    if (!root && budget_exceeded)
        return budget_error(path);
    if (!root) {
        char why[JSON_ERROR_TEXT_LENGTH + 64];
        snprintf(why, sizeof why, ": not JSON (line %d: %s)", err.line, err.text);
        return compare_error(path, why);
    }
    int rc = run_met_before(s, path, root), keep = 0;
    if (rc != 0) {
        jansson_release(root);
        return rc;
    }
    json_t *tests = jansson.object_get(root, "tests");
    /* A directory's runs are of one kind: a summary's keys and a report's
     * NODEID::KEY never meet, so a mix compared nothing and passed. */
    const char *kind = is_summary(root) || json_is_number(jansson.object_get(root, "resmon_repeat")) ? "summaries"
                       : json_is_object(tests)                                                    ? "pytest reports"
                                                                                                  : NULL;
    if (in_directory && kind && s->kind && strcmp(kind, s->kind) != 0) {
        /* Both named: the first file read is not the odd one more often than
         * the one that differs from it. */
        fputs("resmon compare: ", compare_err);
        print_printable(compare_err, s->path);
        fprintf(compare_err, " holds %s (", s->kind);
        print_printable(compare_err, s->kind_path);
        fprintf(compare_err, ") and %s (", kind);
        print_printable(compare_err, path);
        fputs("): a directory's runs are of one kind\n", compare_err);
        jansson_release(root);
        return EXIT_USAGE;
    }
    if (kind && !s->kind) {
        s->kind = kind;
        if (!(s->kind_path = strdup(path))) {
            jansson_release(root);
            return compare_error(path, ": out of memory");
        }
    }
    if (is_summary(root)) {
        rc = side_add_summary(s, root, path, run);
        keep = run == 0;
    } else if (json_is_number(jansson.object_get(root, "resmon_repeat"))) {
        int repeat_rc = side_add_repeat(s, root, path, in_directory);
        if (repeat_rc != 0) {
            jansson_release(root);
            return repeat_rc;
        }
        keep = 1;
    } else if (json_is_object(tests) && json_is_string(jansson.object_get(root, "resmon_version"))) {
        for (void *at = jansson.object_iter(tests); at && rc == 0; at = jansson.object_iter_next(tests, at)) {
            json_t *record = jansson.object_iter_value(at);
            /* A test skipped in its body (pytest.skip(), an xfail) has the
             * figures of the work it did before: compared, it read as an
             * improvement (attack 57b).  It is not a run of that test: its
             * keys are missing from this run, as a partial report's are. */
            json_t *outcome = json_is_object(record) ? jansson.object_get(record, "outcome") : NULL;
            if (json_is_object(record) && !(json_is_string(outcome) && strcmp(jansson.string_value(outcome), "skipped") == 0)) {
                rc = side_add_members(s, record, jansson.object_iter_key(at), run,
                                      jansson.object_get(record, "unjudged"));
                json_t *left = jansson.object_get(record, "left_running");
                if (rc == 0 && left && !(json_is_array(left) && jansson.array_size(left) == 0) && !json_is_false(left) &&
                    !json_is_null(left))
                    rc = note_left_test(s, jansson.object_iter_key(at));
            }
        }
        s->reports = 1;
        if (rc == 0)
            rc = report_failure(s, root, tests, path);
    } else {
        jansson_release(root);
        return compare_error(path, ": not a resmon summary (no numeric peak_rss_mb and num_samples), "
                                   "resmon --repeat file (no resmon_repeat) "
                                   "nor a pytest report (no \"tests\" object and resmon_version)");
    }
    if (keep) /* its command is compared with the other side's */
        s->first = root;
    else
        jansson_release(root);
    if (rc == -EINTR)
        return COMPARE_INTERRUPTED;
    if (rc < 0)
        return out_of_memory(path);
    return 0;
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The *.json files of directory, sorted, as paths; NULL-terminated.  The
 * directory is the one the checked walk reached (path_checked.c): listed
 * through another user's link in /tmp, root's compare named the files of
 * a directory only root can read (stop 55's third attack). */
static char **directory_files(const char *directory, size_t *count, int *error)
{
    *count = 0;
    *error = 0;
    path_place place;
    int rc = path_place_checked(directory, &place);
    int fd = rc < 0 ? rc : openat(place.dir_fd, place.name, O_RDONLY | O_DIRECTORY | O_CLOEXEC |
                                  (place.proc_link ? 0 : O_NOFOLLOW));
    if (fd < 0 && rc == 0)
        fd = -errno;
    if (rc == 0)
        path_place_release(&place);
    DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
    if (!dir) {
        *error = fd >= 0 ? errno : -fd;
        if (fd >= 0)
            close(fd);
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
            size_t larger = cap ? 2 * cap : 16;
            char **grown = budget_grow(paths, cap * sizeof *grown, larger * sizeof *grown);
            if (!grown)
                break;
            paths = grown;
            cap = larger;
        }
        if (!(paths[*count] = budget_printf("%s/%s", directory, entry->d_name)))
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
    for (size_t i = 0; paths && i < count; i++)
        budget_free(paths[i]);
    budget_free(paths);
}

/* Reads BASE or NEW: a file, or a directory of runs.  Returns 0, or prints
 * one line and returns EXIT_USAGE. */
static int side_read(side *s, const char *path)
{
    s->path = path;
    s->status = NAN;
    s->index = jansson.object();
    if (!s->index)
        return compare_error(path, ": out of memory");
    struct stat st;
    if (strcmp(path, "-") != 0 && stat(path, &st) < 0) {
        char why[128];
        snprintf(why, sizeof why, ": %s", errno == ENOENT ? "no such file or directory" : strerror(errno));
        return compare_error(path, why);
    }
    if (strcmp(path, "-") == 0 || !S_ISDIR(st.st_mode)) {
        if (side_set_runs(s, 1) < 0 || !(s->run_names[0] = budget_printf("%s", path)))
            return out_of_memory(path);
        return side_read_file(s, path, 0, 0);
    }
    size_t count;
    int error;
    char **paths = directory_files(path, &count, &error);
    if (error) {
        free_paths(paths, count);
        char why[200];
        snprintf(why, sizeof why, ": the directory cannot be read (%s)",
                 error == EACCES ? "another user's symbolic link in a sticky directory others can write, as "
                                   "fs.protected_symlinks refuses, or no permission" : strerror(error));
        return error == ENOMEM ? out_of_memory(path) : compare_error(path, why);
    }
    if (count == 0) {
        free_paths(paths, count);
        return compare_error(path, ": the directory holds no .json file");
    }
    if (side_set_runs(s, count) < 0) {
        free_paths(paths, count);
        return out_of_memory(path);
    }
    int rc = 0;
    for (size_t i = 0; i < count && rc == 0; i++) {
        s->run_names[i] = paths[i];
        paths[i] = NULL; /* the side's now */
        rc = side_read_file(s, s->run_names[i], i, 1);
    }
    free_paths(paths, count);
    return rc;
}

static void side_free(side *s)
{
    free(s->failed);
    free(s->left_running);
    jansson_release(s->left_tests);
    jansson_release(s->unjudged);
    free(s->command_differs_owned);
    free(s->kind_path);
    for (size_t i = 0; i < s->runs && s->run_names; i++)
        budget_free(s->run_names[i]);
    budget_free(s->run_names);
    budget_free(s->run_keys);
    jansson_release(s->first);
    for (size_t i = 0; i < s->metric_count; i++) {
        budget_free(s->metrics[i].key);
        budget_free(s->metrics[i].values);
    }
    budget_free(s->metrics);
    jansson_release(s->index);
}

/* The metric of key, in the runs of s that hold it, or NULL. */
static const metric *side_find(const side *s, const char *key)
{
    json_t *at = jansson.object_get(s->index, key);
    return at ? &s->metrics[jansson.integer_value(at)] : NULL;
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

/* The one-sided p of NEW above BASE from the test of BASE (the first
 * sample) against NEW: U counts the (BASE, NEW) pairs where BASE is the
 * larger, so a small U -- BASE running low -- is NEW running high. */
static double p_of_a_rise(const rank_test_result *t)
{
    return t->p_below;
}

/* Every run of both sides holds one value: p 1, there is no change to
 * find -- not "too few runs". */
static int one_value(const rank_test_result *t)
{
    return t->p_below_min >= 1 && t->p_above_min >= 1;
}

/* The rank test of one row: p, NAN when the runs are too few for any p to
 * reach alpha; whether it is significant is its family's to say
 * (adjust_family). */
static int test_row(row *r, const metric *b, const metric *n, double alpha)
{
    r->p = r->q = r->p_beyond = r->q_beyond = NAN;
    r->base_values = b->values;
    r->new_values = n->values;
    if (rank_test_min_p(b->count, n->count) > alpha)
        return 0;
    rank_test_result t;
    int rc = rank_test(b->values, b->count, n->values, n->count, &t);
    if (rc == -EINVAL) /* a NaN cannot be in JSON: never, but no verdict then */
        return 0;
    if (rc < 0)
        return rc;
    /* Tied runs past the exact count's bound take the approximation, which
     * with sides this uneven (1 run against 60) may never reach alpha: then
     * no verdict of noise, but the medians alone judge, as with too few
     * runs -- or a limit could never fail. */
    if (!t.exact && rank_test_asymptotic_min_p(b->count, n->count) > alpha)
        return 0;
    /* Counted exactly, ties can keep one side from alpha whatever the data
     * (BASE 100 100 against NEW 100 103 103 200..: no rise under 3/231):
     * a limit, which only a rise fails, could then never fail (review 61).
     * The row keeps its p (a key one value in all runs but one is
     * "unchanged", not "too few runs"); judge lets the medians decide. */
    r->rise_unreachable = !one_value(&t) && t.p_below_min > alpha;
    r->p = t.p;
    r->exact = t.exact;
    r->p_rise = p_of_a_rise(&t);
    r->p_fall = t.p_above;
    return 0;
}

/* The gate's test of a key with a limit: is NEW above BASE raised by the
 * limit -- each BASE run by what the limit allows it, the larger of its
 * floor and its percent (limit_exceeded's rule, run by run)?  One-sided,
 * p_beyond.  Tested for any rise, a key that rose within its limit was a
 * discovery that loosened the Benjamini-Hochberg step for the rest: half of
 * 500 tests made 5 % slower, under a limit of 10 %, failed the gate on
 * unchanged tests whose noise read above +10 %, 10 runs in 10 (review 58).
 * With ties that keep any data from alpha (too uneven for the
 * approximation, or too many for the exact count), p_beyond stays NAN and
 * the one-sided test of any rise decides (judge).  Returns 0 or
 * -ENOMEM. */
static int test_beyond(row *r, double alpha)
{
    const limit *l = r->limit;
    double *raised = malloc(r->base_runs * sizeof *raised);
    if (!raised)
        return -ENOMEM;
    for (size_t i = 0; i < r->base_runs; i++) {
        double b = r->base_values[i], allowed = l->floor;
        if (!isnan(l->percent) && fabs(b) * l->percent / 100 > allowed)
            allowed = fabs(b) * l->percent / 100; /* +inf for a huge base: never beyond (beyond_doubles fails it) */
        raised[i] = b + allowed;
    }
    rank_test_result t;
    int rc = rank_test(raised, r->base_runs, r->new_values, r->new_runs, &t);
    free(raised);
    if (rc == -EINVAL)
        return 0;
    if (rc < 0)
        return rc;
    if (!one_value(&t) && t.p_below_min > alpha) /* no data with these ties could show it: untested (judge) */
        return 0;
    r->p_beyond = p_of_a_rise(&t);
    return 0;
}

/* Which p of a row a family adjusts. */
enum tested { TESTED_BOTH, TESTED_RISE, TESTED_FALL, TESTED_BEYOND };

static double tested_p(const row *r, enum tested which)
{
    return which == TESTED_RISE     ? r->p_rise
           : which == TESTED_FALL   ? r->p_fall
           : which == TESTED_BEYOND ? r->p_beyond
                                    : r->p;
}

static enum tested sorting_by; /* compare_p's key: qsort passes no context */

static int compare_p(const void *a, const void *b)
{
    double x = tested_p(*(row *const *)a, sorting_by), y = tested_p(*(row *const *)b, sorting_by);
    return (x > y) - (x < y);
}

/* Benjamini-Hochberg step-up over family[0..m) by the p which names: q is
 * p times m over p's rank, the smallest of it from the largest p down.
 * Sets each row's flag for which (significant, rose or fell: q <= alpha)
 * and, for the test in its change's direction, its q. */
static void step_up(row **family, size_t m, enum tested which, double alpha)
{
    sorting_by = which;
    qsort(family, m, sizeof *family, compare_p);
    double smallest = 1;
    for (size_t i = m; i-- > 0;) {
        double q = tested_p(family[i], which) * (double)m / (double)(i + 1);
        smallest = q < smallest ? q : smallest;
        row *r = family[i];
        int significant = smallest <= alpha;
        if (which == TESTED_BOTH) {
            r->q = smallest;
            r->significant = significant;
        } else if (which == TESTED_RISE) {
            r->rose = significant;
            if (r->change >= 0)
                r->q = smallest;
        } else if (which == TESTED_BEYOND) {
            r->shown_beyond = significant;
            r->q_beyond = smallest;
        } else {
            r->fell = significant;
            if (r->change < 0)
                r->q = smallest;
        }
    }
}

/* Whether every run of both sides gave a row's key one value: its p is 1
 * whatever the runs' order, so it can never be a false change and is left
 * out of its family's count (Tarone's rule for tests that cannot reject):
 * a summary's many keys that never vary do not dilute the one that did. */
static int constant(const row *r)
{
    return r->base_min == r->base_max && r->new_min == r->new_max && r->base_min == r->new_min;
}

/* Whether a row is in the family of the rows which limit judges (which
 * NULL: those no limit does) and has a p that can vary. */
static int in_family(const row *r, const limit *which)
{
    return r->limit == which && !isnan(r->p) && !constant(r);
}

/* Benjamini-Hochberg over one family of rows: those one limit judges (the
 * rows' limit is which), or those none does (which NULL).  Each key tested
 * alone at alpha, 500 keys of pure noise failed some 5 of them at every
 * comparison (a limit naming cpu_sec in every test of a pytest report:
 * attack 57a); adjusted, pure noise fails a family at most alpha of the
 * time, and a change in many of its keys is still found.  A family per
 * limit, never one of every limited key: two limits on a summary's two keys
 * made a family of 2, and a cpu_sec doubled in every one of 4 runs a side
 * (p 0.029) read as "noise" (review 57c).  A key no run varied is not
 * counted (constant).  Returns the family's tested keys, or -ENOMEM. */
static long adjust_family(row *rows, size_t count, const limit *which, double alpha)
{
    row **family = budget_malloc((count ? count : 1) * sizeof *family);
    if (!family)
        return -ENOMEM;
    size_t m = 0;
    for (size_t i = 0; i < count; i++) {
        if (in_family(&rows[i], which))
            family[m++] = &rows[i];
        else if (!isnan(rows[i].p) && rows[i].limit == which)
            rows[i].q = 1; /* one value in every run: no p but 1 was possible */
    }
    /* A limit fails only a rise beyond it: its keys are tested one-sided --
     * for a rise beyond the limit (the gate, test_beyond), and apart for a
     * rise and a fall (the report's words: "unchanged" within the limit,
     * "improvement").  Tested two-sided, real improvements were discoveries
     * that loosened the step for the rest: 300 of 500 tests made faster
     * failed the gate on keys noise had raised, 14 times in 20 (review
     * 57d); tested for any rise, so did tests made slower within the limit
     * (review 58). */
    if (which) {
        step_up(family, m, TESTED_RISE, alpha);
        step_up(family, m, TESTED_FALL, alpha);
        for (size_t i = 0; i < m; i++)
            family[i]->significant = (family[i]->rose && family[i]->change > 0) ||
                                     (family[i]->fell && family[i]->change < 0);
        size_t g = 0; /* the gate's family: the keys whose rise beyond the limit could be tested */
        for (size_t i = 0; i < m; i++)
            if (!isnan(family[i]->p_beyond))
                family[g++] = family[i];
        step_up(family, g, TESTED_BEYOND, alpha);
    } else {
        step_up(family, m, TESTED_BOTH, alpha);
    }
    budget_free(family);
    return (long)m;
}

static row *build_rows(side *base, side *next, size_t *count, double alpha)
{
    /* The rows are the budget's too: 324 000 keys a side, accepted, took
     * 298 MiB with the rows uncounted (attack 59). */
    size_t slots = base->metric_count < next->metric_count ? base->metric_count : next->metric_count;
    slots = slots ? slots : 1; /* a row is a key of both sides */
    row *rows = budget_calloc(slots, sizeof *rows);
    *count = 0;
    if (!rows)
        return NULL;
    for (size_t i = 0; i < base->metric_count; i++) {
        if (caller_stopped()) {
            budget_free(rows);
            return NULL;
        }
        metric *b = &base->metrics[i];
        metric *n = (metric *)side_find(next, b->key);
        if (!n) {
            base->only_here++;
            continue;
        }
        row *r = &rows[(*count)++];
        r->key = b->key;
        r->order = i;
        r->base_runs = b->count;
        r->new_runs = n->count;
        base->partial += b->count < base->runs;
        next->partial += n->count < next->runs;
        spread(b, &r->base, &r->base_min, &r->base_max);
        spread(n, &r->new_value, &r->new_min, &r->new_max);
        r->change = r->new_value - r->base;
        r->change_pct = r->base != 0 ? r->change / fabs(r->base) * 100.0 : NAN; /* 100 x change may overflow */
        if (test_row(r, b, n, alpha) < 0) {
            budget_free(rows);
            return NULL;
        }
    }
    next->only_here = next->metric_count - *count;
    qsort(rows, *count, sizeof *rows, compare_rows);
    return rows;
}

/* ---- limits ----------------------------------------------------------- */

/* The absolute part a relative-only limit carries: the smallest rise of
 * KEY that counts, one unit (MiB, J, W, a percentage point, a count), 0.01
 * for seconds.  A rise from a zero or tiny base is then judged by its size,
 * never by a percentage alone (0 -> 0.0078 MiB is not "+inf %"). */
static double default_floor(const char *key)
{
    size_t n = strlen(key);
    const char *name = strrchr(key, ':'); /* a pytest report's NODEID::KEY: its KEY */
    name = name ? name + 1 : key;
    /* A byte count's unit is a byte: a page of I/O or one packet over a zero
     * base failed "+20%", as 8 KiB of rss_growth_mb did (issue 30); its
     * floor is a MiB, as a _mb key's. */
    if ((n >= 6 && strcmp(key + n - 6, "_bytes") == 0) || strcmp(name, "io_rchar") == 0 ||
        strcmp(name, "io_wchar") == 0)
        return 1048576;
    return n >= 4 && strcmp(key + n - 4, "_sec") == 0 ? 0.01 : 1;
}

/* One N of a limit: finite, not negative; with a % sign when percent. */
static int parse_amount(const char *text, const char *end_at, int percent, double *out)
{
    char *end;
    errno = 0;
    double value = strtod(text, &end);
    if (end == text || errno == ERANGE || !isfinite(value) || value < 0 || !rm__decimal_text(text, end))
        return -EINVAL; /* decimal only: "0x10" read as 16 (attack 70) */
    if (percent && *end++ != '%')
        return -EINVAL;
    if (end != end_at)
        return -EINVAL;
    *out = value;
    return 0;
}

/* KEY=N%, KEY=N or KEY=N%,M; each number finite and not negative. */
static int parse_limit(const char *arg, limit *out)
{
    const char *eq = strrchr(arg, '=');
    if (!eq || eq == arg || !eq[1])
        return -EINVAL;
    const char *amount = eq + 1, *end = amount + strlen(amount), *comma = strchr(amount, ',');
    out->percent = NAN;
    out->floor_given = 0;
    if (comma) {
        if (parse_amount(amount, comma, 1, &out->percent) < 0 || parse_amount(comma + 1, end, 0, &out->floor) < 0)
            return -EINVAL;
        out->floor_given = 1;
    } else if (end[-1] == '%') {
        if (parse_amount(amount, end, 1, &out->percent) < 0)
            return -EINVAL;
    } else {
        if (parse_amount(amount, end, 0, &out->floor) < 0)
            return -EINVAL;
        out->floor_given = 1;
    }
    out->arg = arg;
    out->key = strndup(arg, (size_t)(eq - arg));
    if (out->key && !out->floor_given)
        out->floor = default_floor(out->key);
    out->rows = 0;
    return out->key ? 0 : -ENOMEM;
}

/* Whether one of the n limits before l names l's KEY with another limit.
 * The last would win, so "cpu_time_sec=10% ... cpu_time_sec=20%" loosened a
 * CI gate without a word; the same limit twice (10% and 10.0%,0.01 for a _sec key) is harmless. */
static int limit_contradicts(const limit *limits, size_t n, const limit *l)
{
    for (size_t i = 0; i < n; i++) {
        const limit *e = &limits[i];
        if (strcmp(e->key, l->key) != 0)
            continue;
        int same_percent = isnan(e->percent) ? isnan(l->percent) : e->percent == l->percent;
        if (!same_percent || e->floor != l->floor)
            return 1;
    }
    return 0;
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

/* Whether r's size breaks l: a rise over the absolute part and, where l
 * has one, over the relative part.  A change or a ratio that does not fit a
 * double (values near DBL_MAX apart, a base near zero: +-inf, or NaN) is
 * never a pass: it counts as exceeded, and the row says it cannot be
 * compared.  The relative limit is a ratio compared with N, never |base| x
 * N / 100, which overflowed to +inf for a huge base and so let every change
 * pass. */
static int limit_exceeded(const limit *l, const row *r)
{
    int relative = !isnan(l->percent);
    if (!isfinite(r->change) || (relative && r->base != 0 && !isfinite(r->change_pct)))
        return 1;
    if (!(r->change > l->floor))
        return 0;
    if (!relative || r->base == 0)
        return 1;
    double allowed = fabs(r->base) * l->percent / 100;
    return isfinite(allowed) ? r->change > allowed : r->change_pct > l->percent;
}

/* Whether a rise above a relative limit passed only because it is no
 * larger than the limit's floor: "ok, limit +0%" beside +24 % reads as a
 * bug unless the floor that decided is named (a relative-only limit's
 * default floor is otherwise unsaid). */
static int passed_by_floor(const limit *l, const row *r)
{
    if (isnan(l->percent) || !(r->change > 0) || r->change > l->floor)
        return 0;
    return r->base == 0 || r->change > fabs(r->base) * l->percent / 100;
}

/* Whether r's change or ratio overflowed (see limit_exceeded). */
static int beyond_doubles(const row *r)
{
    return !isfinite(r->change) || (r->base != 0 && !isfinite(r->change_pct));
}

/* What of the change a double cannot hold: the change itself, or only its
 * percentage of a tiny BASE (attack 67 F16: "a change that does not fit"
 * for a change of 1.7e308, which fits). */
static const char *what_does_not_fit(const row *r)
{
    return !isfinite(r->change) ? "a change that does not fit a double" : "a change whose percentage does not fit a double";
}

/* +N%, +N, or +N% and +M (a relative-only limit's default floor unsaid). */
static void format_limit(const limit *l, char *buf, size_t cap)
{
    if (isnan(l->percent))
        snprintf(buf, cap, "+%.6g", l->floor);
    else if (l->floor_given)
        snprintf(buf, cap, "+%.6g%% and +%.6g", l->percent, l->floor);
    else
        snprintf(buf, cap, "+%.6g%%", l->percent);
}

/* Whether a key is a cost that a limit may gate on.  The rest are facts of
 * the run that a summary holds beside its costs -- a count of refused marks,
 * the exit status, the interval, walk interval and cgroup version it ran
 * with (resmon's own cadence, not the program's cost) -- shown as
 * rows (a change there explains others) but never gated on: more of them is
 * not a regression of what the program costs.  A pytest report's
 * NODEID::KEY is judged by its KEY. */
static int is_cost(const char *key)
{
    static const char *const run_facts[] = {"marks_dropped", "exit_status", "interval_sec", "walk_interval_sec",
                                               "cgroup_version"};
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
    fputs("resmon compare: --max-increase ", compare_err);
    print_printable(compare_err, l->arg);
    fputs(": ", compare_err);
    print_printable(compare_err, l->key);
    fprintf(compare_err, "%s\n", why);
    return EXIT_USAGE;
}

/* The smallest change of r's key that counts as one: its limit's absolute
 * part, else the key's default floor.  A significant change no larger is
 * "unchanged", as a limit's floor passes it: 4 KiB more of rss_growth_mb
 * in every run is real but no regression (issue 30). */
static double row_floor(const row *r)
{
    return r->limit ? r->limit->floor : default_floor(r->key);
}

/* Whether a significant change of r is no larger than its key's floor. */
static int under_floor(const row *r)
{
    return r->significant && isfinite(r->change) && fabs(r->change) <= row_floor(r);
}

/* One row's verdict, and whether it fails its limit.  With too few runs for
 * the test (p NAN) the limit judges the medians alone, as a single run can
 * only be judged; otherwise a rise fails only when it is significant too.
 * A significant rise within the key's limit, or a significant change no
 * larger than the key's floor (limit or not), is "unchanged". */
static void judge(row *r)
{
    int beyond = r->limit && limit_exceeded(r->limit, r);
    /* No p, or for a limit its medians beyond it and neither test able to
     * reach alpha with these ties: the medians judge, as with too few runs
     * (a fall, or a rise within the limit, keeps its tested verdict --
     * review 62). */
    if (isnan(r->p) || (r->limit && beyond && isnan(r->p_beyond) && r->rise_unreachable)) {
        r->verdict = VERDICT_NOT_ENOUGH;
        r->exceeded = beyond;
        r->p = r->q = NAN; /* shown "-" as too few runs are: not a p of 0.5 beside EXCEEDED (review 62) */
        return;
    }
    /* A key with a limit: its one-sided tests (adjust_family) -- it fails
     * when its rise beyond the limit is no chance (or could not be tested:
     * the medians judge); a rise that is shown but not beyond the limit is
     * "unchanged" within it, "noise" where the medians read beyond it.
     * Else the two-sided test, by the medians' direction. */
    int rise = (r->limit ? r->rose : r->significant) && r->change > 0;
    int fall = (r->limit ? r->fell : r->significant) && r->change < 0;
    if (r->limit) {
        /* Untestable beyond the limit (ties that keep the approximation
         * from alpha): the one-sided test of any rise decides, as before
         * the gate went beyond the limit -- never the medians alone, which
         * failed noise (review 58b). */
        int shown = isnan(r->p_beyond) ? rise : r->shown_beyond;
        r->exceeded = beyond && (shown || beyond_doubles(r));
        if (r->exceeded)
            r->verdict = VERDICT_REGRESSION;
        else if (rise)
            r->verdict = beyond ? VERDICT_NOISE : VERDICT_UNCHANGED;
        else if (fall)
            r->verdict = under_floor(r) ? VERDICT_UNCHANGED : VERDICT_IMPROVEMENT;
        else
            r->verdict = r->change != 0 ? VERDICT_NOISE : VERDICT_UNCHANGED;
        /* The table's p is the one alpha judged the verdict by: beyond the
         * limit for a rise, the fall's for a fall; "significant" says the
         * same (a rise within the limit is real, but none the gate counts). */
        if (r->change >= 0 && !isnan(r->q_beyond)) {
            r->q = r->q_beyond;
            r->significant = r->shown_beyond;
        }
        return;
    }
    r->exceeded = 0;
    if (rise)
        r->verdict = under_floor(r) ? VERDICT_UNCHANGED : VERDICT_REGRESSION;
    else if (fall)
        r->verdict = under_floor(r) ? VERDICT_UNCHANGED : VERDICT_IMPROVEMENT;
    else
        r->verdict = r->change != 0 ? VERDICT_NOISE : VERDICT_UNCHANGED;
}

/* Attaches each limit to its rows, adjusts p over the keys judged alike
 * (tested[0]: those without a limit; tested[1]: with one, over all limits;
 * tested[2]: the most keys one limit's family holds) and judges each row.
 * Returns 0, -ENOMEM, or prints one line and returns EXIT_USAGE for a KEY
 * that names no row or no cost. */
/* Whether l names a key that s left out as its record's "unjudged". */
static int names_unjudged(const side *s, const limit *l)
{
    for (void *at = s->unjudged ? jansson.object_iter(s->unjudged) : NULL; at;
         at = jansson.object_iter_next(s->unjudged, at))
        if (limit_names(l, jansson.object_iter_key(at)))
            return 1;
    return 0;
}

static int apply_limits(limit *limits, size_t limit_count, row *rows, size_t row_count, double alpha,
                        size_t tested[3], const side *base, const side *next)
{
    for (size_t i = 0; i < limit_count; i++) {
        if (!is_cost(limits[i].key))
            return limit_error(&limits[i], " is a fact of the run, not a cost: compare shows it but gates nothing on it");
        for (size_t j = 0; j < row_count; j++) {
            if (!limit_names(&limits[i], rows[j].key))
                continue;
            limits[i].rows++;
            /* The most specific limit naming a row is its limit, whatever
             * their order: a test's own NODEID::KEY over KEY.  The last
             * one won, so "t.py::test_a::cpu_sec=10%" before
             * "cpu_sec=100%" let test_a rise 50 % (attack 63 F4). */
            size_t mine = strlen(limits[i].key), theirs = rows[j].limit ? strlen(rows[j].limit->key) : 0;
            if (rows[j].limit && mine > theirs)
                limits[rows[j].limit - limits].overridden = 1;
            else if (rows[j].limit && mine < theirs)
                limits[i].overridden = 1;
            if (!rows[j].limit || mine > theirs)
                rows[j].limit = &limits[i];
        }
        if (!limits[i].rows && (names_unjudged(base, &limits[i]) || names_unjudged(next, &limits[i])))
            return limit_error(&limits[i], " is left unjudged wherever both sides hold it (\"unjudged\" in a "
                                           "test's record: it ran beside other work)");
        if (!limits[i].rows)
            return limit_error(&limits[i], " is not a numeric key of both BASE and NEW (see resmon compare without limits)");
    }
    for (size_t j = 0; j < row_count; j++) {
        int rc = rows[j].limit && !isnan(rows[j].p) ? test_beyond(&rows[j], alpha) : 0;
        if (rc < 0)
            return rc;
    }
    for (size_t i = 0; i <= limit_count; i++) { /* the rows of no limit, then each limit's */
        long m = adjust_family(rows, row_count, i ? &limits[i - 1] : NULL, alpha);
        if (m < 0)
            return (int)m;
        tested[i > 0] += (size_t)m;
        if (i > 0 && (size_t)m > tested[2])
            tested[2] = (size_t)m;
    }
    for (size_t j = 0; j < row_count; j++) {
        judge(&rows[j]);
        if (rows[j].limit) {
            limit *l = &limits[rows[j].limit - limits];
            l->judged++;
            l->exceeded += (size_t)rows[j].exceeded;
        }
    }
    return 0;
}

/* ---- output ------------------------------------------------------------ */

/* Rows of a markdown table shown before the rest fold into <details>: a
 * 500-test pytest report stays some 40 lines in a pull request. */
#define MARKDOWN_VISIBLE_ROWS 20

typedef struct report {
    const side *base, *next;
    row *rows;
    size_t count;
    size_t limited, exceeded, significant, shown; /* rows */
    size_t given, given_exceeded; /* the limits given that judge a row, and those exceeded in one */
    size_t unjudged; /* keys on one side only that a limit names: never judged, so said */
    size_t unproven; /* limited keys that rose, beyond their limit by the medians, not shown beyond it */
    size_t thinned; /* limited keys judged over fewer runs than a side has (runs that lack them or left them out) */
    size_t overridden; /* limits that name keys, each judged by a more specific limit */
    const char *overridden_arg; /* the first of them, as given */
    double alpha;
    size_t tested[3]; /* keys with a p, without a limit and with; the largest limit's family (apply_limits) */
    int utf8; /* the text report's stream takes UTF-8: check marks (compare_caller) */
    const char *failure; /* why the runs fail the comparison whatever the limits, or NULL */
} report;

static void format_number(double value, char *buf, size_t cap)
{
    snprintf(buf, cap, "%.6g", value == 0 ? 0.0 : value); /* a summary's -0.0 reads "0", not "-0" */
}

static void format_percent(double value, char *buf, size_t cap)
{
    if (isnan(value))
        snprintf(buf, cap, "-");
    else
        snprintf(buf, cap, "%+.1f%%", value);
}

/* The tables show p adjusted over the row's family: the figure alpha judges. */
static void format_p(const row *r, char *buf, size_t cap)
{
    if (isnan(r->q))
        snprintf(buf, cap, "-");
    else
        snprintf(buf, cap, "%.2g", r->q);
}

/* The fewest keys of the widest limit's family that must rise beyond their
 * limit together, every NEW run above every BASE run, for any of them to
 * fail it: the step-up takes k keys at the least one-sided p the runs allow,
 * p1, only when p1 x keys / k <= alpha.  With 5 runs a side (p1 1/252)
 * and 500 keys, 40: a regression in 39 tests, however large, holds
 * (review 58).  1 where one key alone can fail it; 0 where no family of
 * several keys is tested. */
static size_t keys_to_fail(const report *rep)
{
    size_t widest = rep->tested[2];
    double p1 = rank_test_min_p(rep->base->runs, rep->next->runs) / 2;
    if (widest <= 1 || 2 * p1 > rep->alpha)
        return 0;
    double k = ceil((double)widest * p1 / rep->alpha * (1 - 1e-12)); /* an exact product stays itself */
    return k < 1 ? 1 : (size_t)k;
}

/* The line that leads every report: do the limits hold?  It counts the
 * limits given; where one judges several keys (rss_growth_mb in every test
 * of a pytest report) the keys are counted beside them. */
static void headline(const report *rep, int utf8, char *buf, size_t cap)
{
    char keys[768] = "";
    if (rep->limited != rep->given && rep->exceeded)
        snprintf(keys, sizeof keys, ", in %zu of %zu keys", rep->exceeded, rep->limited);
    else if (rep->limited != rep->given)
        snprintf(keys, sizeof keys, " in %zu keys", rep->limited);
    if (rep->unjudged) /* a limit that holds must not read as holding where it judged nothing */
        snprintf(keys + strlen(keys), sizeof keys - strlen(keys), "; %zu key%s a limit names not judged (on one side only)",
                 rep->unjudged, rep->unjudged == 1 ? "" : "s");
    /* Limits that hold over many keys with runs too few to single one out:
     * a regression in fewer keys than keys_to_fail could not have failed
     * them, however large -- said where it is read, not only in a note
     * (review 57c), with its number (review 58: "one key alone" read as
     * though two would do, where 39 of 500 could not). */
    size_t widest = rep->tested[2], fewest = keys_to_fail(rep);
    if (rep->limited && !rep->exceeded && !rep->failure && fewest > 1)
        snprintf(keys + strlen(keys), sizeof keys - strlen(keys),
                 " (fewer than %zu of %zu keys rising together cannot fail it; one alone needs %zu runs a side)",
                 fewest, widest, rank_test_runs_needed(2 * rep->alpha / (double)widest));
    if (rep->unproven)
        snprintf(keys + strlen(keys), sizeof keys - strlen(keys),
                 "; %zu key%s rose beyond %s limit by the medians, not shown by the runs (more runs a side would tell)",
                 rep->unproven, rep->unproven == 1 ? "" : "s", rep->unproven == 1 ? "its" : "their");
    /* A limit that holds over the one run of six that did not leave its key
     * out read as holding over six (attack 74): the runs it stood on, said
     * where it is read first. */
    if (rep->thinned && !rep->exceeded && !rep->failure)
        snprintf(keys + strlen(keys), sizeof keys - strlen(keys),
                 "; %zu limited key%s judged on fewer runs than a side has (missing or unjudged in some: below)",
                 rep->thinned, rep->thinned == 1 ? "" : "s");
    if (rep->failure && rep->limited) /* a failed run fails the comparison: no check mark, limits or not */
        snprintf(buf, cap, "%s a run failed (below), and %zu of %zu limit%s exceeded%s", utf8 ? "\u2717" : "FAIL:",
                 rep->given_exceeded, rep->given, rep->given == 1 ? "" : "s", keys);
    else if (rep->failure)
        snprintf(buf, cap, "%s a run failed (below)", utf8 ? "\u2717" : "FAIL:");
    else if (rep->limited && rep->exceeded)
        snprintf(buf, cap, "%s %zu of %zu limit%s exceeded%s", utf8 ? "\u2717" : "FAIL:", rep->given_exceeded,
                 rep->given, rep->given == 1 ? "" : "s", keys);
    else if (rep->limited)
        snprintf(buf, cap, "%s %zu limit%s hold%s%s", utf8 ? "\u2713" : "ok:", rep->given, rep->given == 1 ? "" : "s",
                 rep->given == 1 ? "s" : "", keys);
    else if (rank_test_min_p(rep->base->runs, rep->next->runs) <= rep->alpha)
        snprintf(buf, cap, "no limits, a report: %zu of %zu keys changed significantly", rep->significant, rep->count);
    else
        snprintf(buf, cap, "no limits, a report");
}

/* With too few runs for the test, how many it needs; "" with enough. */
static void runs_line(const report *rep, char *buf, size_t cap)
{
    buf[0] = '\0';
    if (rank_test_min_p(rep->base->runs, rep->next->runs) <= rep->alpha)
        return;
    snprintf(buf, cap,
             "not enough runs: %zu a side needed to tell a change from noise at --alpha %g (BASE has %zu, NEW %zu); "
             "limits judge the medians alone",
             rank_test_runs_needed(rep->alpha), rep->alpha, rep->base->runs, rep->next->runs);
}

/* Where a limit judges several keys, that their p is adjusted for them;
 * and where the runs are too few for a change in one of them alone to be
 * told from noise, how many would be.  (The keys without a limit are
 * adjusted over theirs alike: the JSON counts both.) */
static void family_line(const report *rep, char *buf, size_t cap)
{
    buf[0] = '\0';
    size_t with = rep->tested[1], widest = rep->tested[2];
    if (widest <= 1)
        return;
    int n = with == widest
                ? snprintf(buf, cap, "p adjusted for the %zu keys the limits judge (Benjamini-Hochberg)", with)
                : snprintf(buf, cap, "p adjusted for the keys each limit judges (Benjamini-Hochberg, up to %zu)",
                           widest);
    size_t fewest = keys_to_fail(rep);
    if (n > 0 && (size_t)n < cap && fewest > 1)
        snprintf(buf + n, cap - (size_t)n,
                 "; fewer than %zu limited keys rising together cannot fail a limit, one alone needs %zu runs a side",
                 fewest, rank_test_runs_needed(2 * rep->alpha / (double)widest));
}

/* Keys on one side only (a test added or removed): said, not compared. */
static void only_line(const report *rep, char *buf, size_t cap)
{
    buf[0] = '\0';
    char limited[80] = "";
    if (rep->unjudged)
        snprintf(limited, sizeof limited, " (%zu named by a limit: not judged)", rep->unjudged);
    if (rep->base->only_here || rep->next->only_here)
        snprintf(buf, cap, "%zu key%s only in BASE and %zu only in NEW: not compared%s", rep->base->only_here,
                 rep->base->only_here == 1 ? "" : "s", rep->next->only_here, limited);
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
    char base[112], next[112], change[40], pct[32], p[16], note[256];
} cells;

static void row_cells(const row *r, const side *base, const side *next, const char *dash, cells *c)
{
    format_side(r->base, r->base_min, r->base_max, r->base_runs, dash, c->base, sizeof c->base);
    format_side(r->new_value, r->new_min, r->new_max, r->new_runs, dash, c->next, sizeof c->next);
    char change[32];
    format_number(r->change, change, sizeof change);
    snprintf(c->change, sizeof c->change, "%s%s", r->change > 0 ? "+" : "", change);
    format_percent(r->change_pct, c->pct, sizeof c->pct);
    format_p(r, c->p, sizeof c->p);
    c->note[0] = '\0';
    /* A key some runs lack is judged over the runs that hold it: said. */
    char held[128] = "";
    if (r->base_runs < base->runs || r->new_runs < next->runs)
        snprintf(held, sizeof held, "; %s has %zu of %zu runs", r->base_runs < base->runs ? "BASE" : "NEW",
                 r->base_runs < base->runs ? r->base_runs : r->new_runs,
                 r->base_runs < base->runs ? base->runs : next->runs);
    if (r->base_runs < base->runs && r->new_runs < next->runs)
        snprintf(held, sizeof held, "; BASE has %zu of %zu runs, NEW %zu of %zu", r->base_runs, base->runs,
                 r->new_runs, next->runs);
    if (r->limit) {
        char l[64];
        format_limit(r->limit, l, sizeof l);
        char floor[48] = "";
        if (!r->exceeded && !r->limit->floor_given && passed_by_floor(r->limit, r))
            snprintf(floor, sizeof floor, ", under its floor of +%.6g", r->limit->floor);
        snprintf(c->note, sizeof c->note, "%s limit %s%s%s%s", r->exceeded ? "EXCEEDED" : "ok,", l, floor,
                 !beyond_doubles(r)      ? ""
                 : isfinite(r->change) ? " (its percentage does not fit a double)"
                                       : " (the change does not fit a double)",
                 held);
    } else if (under_floor(r)) {
        snprintf(c->note, sizeof c->note, "significant, under the key's floor of %+.6g%s", row_floor(r), held);
    } else if (held[0]) {
        snprintf(c->note, sizeof c->note, "%s", held + 2);
    }
}

static void print_markdown_text(FILE *out, const char *text);

/* A run's name in a note: printable, escaped for markdown. */
static void print_note_text(FILE *out, const char *text, int markdown)
{
    if (markdown)
        print_markdown_text(out, text);
    else
        print_printable(out, text);
}

/* The keys that some runs of s lack, compared over the runs that hold
 * them: how many, and which runs lack keys (the first two named). */
static void print_partial(FILE *out, const char *name, const side *s, const char *prefix, int markdown)
{
    if (!s->partial)
        return;
    fprintf(out, "%s%s: %zu compared key%s %s missing from some of its %zu runs (", prefix, name, s->partial,
            s->partial == 1 ? "" : "s", s->partial == 1 ? "is" : "are", s->runs);
    size_t named = 0, lacking = 0;
    for (size_t i = 0; i < s->runs; i++) {
        if (s->run_keys[i] >= s->metric_count)
            continue;
        if (named < 2) {
            fputs(named ? "; " : "", out);
            print_note_text(out, s->run_names[i] ? s->run_names[i] : "?", markdown);
            fprintf(out, " lacks %zu of %zu", s->metric_count - s->run_keys[i], s->metric_count);
            named++;
        }
        lacking++;
    }
    if (lacking > named)
        fprintf(out, "; %zu more run%s", lacking - named, lacking - named == 1 ? "" : "s");
    fputs("): each is judged over the runs that hold it\n", out);
}

/* How many keys of s its records left out as "unjudged" (the tests ran
 * beside other work), and the first of them. */
static void print_unjudged(FILE *out, const char *name, const side *s, const char *prefix, int markdown)
{
    size_t n = 0;
    const char *first = NULL;
    for (void *at = s->unjudged ? jansson.object_iter(s->unjudged) : NULL; at;
         at = jansson.object_iter_next(s->unjudged, at), n++)
        if (!first)
            first = jansson.object_iter_key(at);
    if (!n)
        return;
    fprintf(out, "%s%s: %zu key%s left out, unjudged in %s record%s (%s test ran beside other work): ", prefix, name,
            n, n == 1 ? "" : "s", n == 1 ? "its" : "their", n == 1 ? "" : "s", n == 1 ? "its" : "each");
    print_note_text(out, first, markdown);
    fputs(n > 1 ? " and others\n" : "\n", out);
}

/* The lines on the runs (how many, whether enough), on keys some runs lack
 * and on keys of one side only, each after PREFIX: the text and the
 * markdown reports share them. */
static void print_notes(FILE *out, const report *rep, const char *prefix, int markdown)
{
    char line[400]; /* as the reports' own */
    runs_line(rep, line, sizeof line);
    if (line[0])
        fprintf(out, "%s%s\n", prefix, line);
    family_line(rep, line, sizeof line);
    if (line[0])
        fprintf(out, "%s%s\n", prefix, line);
    print_partial(out, "BASE", rep->base, prefix, markdown);
    print_partial(out, "NEW", rep->next, prefix, markdown);
    only_line(rep, line, sizeof line);
    if (line[0])
        fprintf(out, "%s%s\n", prefix, line);
    print_unjudged(out, "BASE", rep->base, prefix, markdown);
    print_unjudged(out, "NEW", rep->next, prefix, markdown);
    if (rep->overridden) { /* counted in no headline: said here */
        fprintf(out, "%s%zu limit%s judge%s no key, a more specific one judging each key it names: ", prefix,
                rep->overridden, rep->overridden == 1 ? "" : "s", rep->overridden == 1 ? "s" : "");
        print_note_text(out, rep->overridden_arg, markdown);
        fputs(rep->overridden > 1 ? " and others\n" : "\n", out);
    }
}

static void print_side_heading(FILE *out, const char *what, const side *s)
{
    fprintf(out, "%s ", what);
    print_printable(out, s->path);
    fprintf(out, " (%zu run%s)", s->runs, s->runs == 1 ? "" : "s");
}

static void print_text(FILE *out, const report *rep)
{
    char line[1024];
    headline(rep, rep->utf8, line, sizeof line);
    fprintf(out, "%s\n", line);
    if (rep->failure) {
        print_printable(out, rep->failure);
        fputc('\n', out);
    }
    print_side_heading(out, "base", rep->base);
    fputs(", ", out);
    print_side_heading(out, "new", rep->next);
    fprintf(out, ", alpha %g\n", rep->alpha);
    print_notes(out, rep, "", 0);
    size_t key_width = 3, base_width = 4, new_width = 3;
    for (size_t i = 0; i < rep->count; i++) {
        if (!rep->rows[i].shown)
            continue;
        cells c;
        row_cells(&rep->rows[i], rep->base, rep->next, "..", &c);
        size_t k = printable_width(rep->rows[i].key);
        key_width = k > key_width ? k : key_width;
        base_width = strlen(c.base) > base_width ? strlen(c.base) : base_width;
        new_width = strlen(c.next) > new_width ? strlen(c.next) : new_width;
    }
    if (rep->shown)
        fprintf(out, "%-*s  %*s  %*s  %12s  %9s  %7s  %s\n", (int)key_width, "key", (int)base_width, "base",
                (int)new_width, "new", "change", "change %", "p", "verdict");
    for (size_t i = 0; i < rep->count; i++) {
        const row *r = &rep->rows[i];
        if (!r->shown)
            continue;
        cells c;
        row_cells(r, rep->base, rep->next, "..", &c);
        print_printable(out, r->key);
        fprintf(out, "%*s  %*s  %*s  %12s  %9s  %7s  %s%s%s\n", (int)(key_width - printable_width(r->key)), "",
                (int)base_width, c.base, (int)new_width, c.next, c.change, c.pct, c.p, verdict_names[r->verdict],
                c.note[0] ? "; " : "", c.note);
    }
    if (rep->shown < rep->count)
        fprintf(out, "(%zu more key%s without a limit or a significant change: --all shows them)\n",
                rep->count - rep->shown, rep->count - rep->shown == 1 ? "" : "s");
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

/* How far a row moved, for the order of a pull request's table: its
 * relative change, or any change from a zero base first. */
static double movement(const row *r)
{
    if (isnan(r->change_pct))
        return r->change != 0 ? INFINITY : 0;
    return fabs(r->change_pct);
}

/* Failing rows first, then significant ones, then the most changed. */
static int compare_for_review(const void *a, const void *b)
{
    const row *x = a, *y = b;
    if (x->exceeded != y->exceeded)
        return y->exceeded - x->exceeded;
    if (x->significant != y->significant)
        return y->significant - x->significant;
    double mx = movement(x), my = movement(y);
    if (mx != my)
        return mx < my ? 1 : -1;
    return (x->order > y->order) - (x->order < y->order);
}

static void print_markdown_header(FILE *out)
{
    fputs("| key | base | new | change | change % | p | verdict | |\n|:--|--:|--:|--:|--:|--:|:--|:--|\n", out);
}

static void print_markdown_row(FILE *out, const report *rep, const row *r)
{
    cells c;
    row_cells(r, rep->base, rep->next, "\u2013", &c);
    fputs("| ", out);
    print_markdown_text(out, r->key);
    fprintf(out, " | %s | %s | %s | %s | %s | %s | %s%s%s |\n", c.base, c.next, c.change, c.pct, c.p,
            verdict_names[r->verdict], r->exceeded ? "**" : "", c.note, r->exceeded ? "**" : "");
}

/* Sorts rep's rows for review (the text order is not needed after this). */
static void print_markdown(FILE *out, report *rep)
{
    char line[1024];
    headline(rep, 1, line, sizeof line);
    fputs("**resmon compare**: ", out);
    print_side_heading(out, "base", rep->base);
    fputs(" vs ", out);
    print_side_heading(out, "new", rep->next);
    if (rep->exceeded || rep->failure)
        fprintf(out, ": \u2717 **%s**\n", line + strlen("\u2717 "));
    else
        fprintf(out, ": %s\n", line);
    if (rep->failure) {
        fputs("\n**", out);
        print_markdown_text(out, rep->failure);
        fputs("**\n", out);
    }
    print_notes(out, rep, "\n", 1);
    qsort(rep->rows, rep->count, sizeof *rep->rows, compare_for_review);
    size_t printed = 0;
    for (size_t i = 0; i < rep->count; i++) {
        if (!rep->rows[i].shown)
            continue;
        if (printed == 0) {
            fputc('\n', out);
            print_markdown_header(out);
        } else if (printed == MARKDOWN_VISIBLE_ROWS) {
            fprintf(out, "\n<details><summary>%zu more rows</summary>\n\n", rep->shown - printed);
            print_markdown_header(out);
        }
        print_markdown_row(out, rep, &rep->rows[i]);
        printed++;
    }
    if (printed > MARKDOWN_VISIBLE_ROWS)
        fputs("\n</details>\n", out);
    if (rep->shown < rep->count)
        fprintf(out, "\n%zu more key%s without a limit or a significant change (`--all` shows them).\n",
                rep->count - rep->shown, rep->count - rep->shown == 1 ? "" : "s");
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
    fprintf(out, ", \"runs\": %zu", s->runs);
    put_json_number(out, "exit_status", s->status); /* NAN: null */
    fputs(", \"failed\": ", out);
    if (s->failed)
        json_write_string(out, s->failed);
    else
        fputs("null", out);
    fprintf(out, ", \"keys_only_here\": %zu, \"keys_in_some_runs\": %zu}", s->only_here, s->partial);
}

static void print_json_row(FILE *out, const row *r)
{
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
    fprintf(out, ", \"base_runs\": %zu, \"new_runs\": %zu", r->base_runs, r->new_runs);
    put_json_number(out, "p_value", r->p);
    put_json_number(out, "p_adjusted", r->q);
    fprintf(out, ", \"exact\": %s, \"significant\": %s, \"verdict\": \"%s\", \"noise\": %s",
            !isnan(r->p) && r->exact ? "true" : "false", r->significant ? "true" : "false", verdict_names[r->verdict],
            r->verdict == VERDICT_NOISE ? "true" : "false");
    if (r->limit) {
        char l[64];
        format_limit(r->limit, l, sizeof l);
        fprintf(out, ", \"limit\": \"%s\"", l);
        put_json_number(out, "limit_pct", r->limit->percent);
        put_json_number(out, "limit_floor", r->limit->floor);
        fprintf(out, ", \"exceeded\": %s}", r->exceeded ? "true" : "false");
    } else {
        fputs(", \"limit\": null, \"limit_pct\": null, \"limit_floor\": null, \"exceeded\": null}", out);
    }
}

static void print_json(FILE *out, const report *rep, const char *status_failure)
{
    fputc('{', out);
    print_json_side(out, "base", rep->base);
    fputs(", ", out);
    print_json_side(out, "new", rep->next);
    put_json_number(out, "alpha", rep->alpha);
    int enough = rank_test_min_p(rep->base->runs, rep->next->runs) <= rep->alpha;
    fprintf(out, ", \"enough_runs\": %s, \"runs_needed\": %zu", enough ? "true" : "false",
            rank_test_runs_needed(rep->alpha));
    fputs(", \"metrics\": {", out);
    for (size_t i = 0; i < rep->count; i++) {
        fputs(i ? ", " : "", out);
        print_json_row(out, &rep->rows[i]);
    }
    /* limits and limits_exceeded count rows (keys); limits_given those the
     * command line gave, as the headline counts them. */
    fprintf(out, "}, \"limits\": %zu, \"limits_exceeded\": %zu, \"limits_given\": %zu, "
                 "\"limits_given_exceeded\": %zu, \"limited_keys_unjudged\": %zu, \"limited_keys_unproven\": %zu, "
                 "\"limited_keys_on_fewer_runs\": %zu, "
                 "\"significant\": %zu, \"tested_with_limit\": %zu, \"tested_without_limit\": %zu, "
                 "\"run_failed\": ",
            rep->limited, rep->exceeded, rep->given, rep->given_exceeded, rep->unjudged, rep->unproven, rep->thinned,
            rep->significant, rep->tested[1], rep->tested[0]);
    if (status_failure)
        json_write_string(out, status_failure);
    else
        fputs("null", out);
    fprintf(out, ", \"passed\": %s}\n", rep->exceeded || status_failure ? "false" : "true");
}

/* One line on stderr per exceeded limit: key, base, new, limit. */
static void report_exceeded(const row *rows, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        if (!rows[i].exceeded)
            continue;
        char b[32], n[32], pct[32], l[64];
        format_number(rows[i].base, b, sizeof b);
        format_number(rows[i].new_value, n, sizeof n);
        format_percent(rows[i].change_pct, pct, sizeof pct);
        format_limit(rows[i].limit, l, sizeof l);
        fputs("resmon compare: ", compare_err);
        print_printable(compare_err, rows[i].key);
        if (beyond_doubles(&rows[i]))
            fprintf(compare_err, " went from %s to %s, %s: failed against the limit of %s, never passed\n", b, n,
                    what_does_not_fit(&rows[i]), l);
        else
            fprintf(compare_err, " rose from %s to %s (%s), above the limit of %s\n", b, n, pct, l);
    }
}

/* ---- the command line --------------------------------------------------- */

typedef struct compare_options {
    enum compare_format format;
    limit *limits;
    size_t limit_count;
    double alpha;
    int all, allow_different_commands;
    const char *base_path, *new_path;
} compare_options;

static int compare_usage_error(const char *fmt, const char *arg)
{
    print_usage_line(compare_err, "resmon compare", fmt, arg, "resmon compare --help");
    return EXIT_USAGE;
}

enum { OPT_MAX_INCREASE = 1000, OPT_FORMAT, OPT_ALPHA, OPT_ALL, OPT_ALLOW_DIFFERENT_COMMANDS };

/* --alpha is a number: "--alpha 0.1 --alpha 0.10" gives it once (option_once.c). */
static int compare_option_number(int code, const char *text, double *value)
{
    char *end;
    if (code != OPT_ALPHA)
        return -1;
    *value = strtod(text, &end);
    return end == text || *end || !rm__decimal_text(text, end) ? -1 : 0;
}

/* Returns 0, -1 after --help, or EXIT_USAGE after one line. */
static int compare_parse(int argc, char **argv, compare_options *o)
{
    static const struct option longopts[] = {
        {"max-increase", required_argument, NULL, OPT_MAX_INCREASE},
        {"format", required_argument, NULL, OPT_FORMAT},
        {"alpha", required_argument, NULL, OPT_ALPHA},
        {"all", no_argument, NULL, OPT_ALL},
        {"allow-different-commands", no_argument, NULL, OPT_ALLOW_DIFFERENT_COMMANDS},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    memset(o, 0, sizeof *o);
    o->alpha = 0.05;
    o->limits = calloc((size_t)argc, sizeof *o->limits);
    if (!o->limits)
        return compare_usage_error("out of memory", NULL);
    opterr = 0;
    optind = 0; /* glibc's full reset: a second call (the Python binding's) forgets the first's argv */
    int c;
    option_once given = {.number = compare_option_number};
    char twice[160];
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        /* Said after the switch: an invalid second value is named as invalid. */
        int twice_given = optarg && c != '?' && c != OPT_MAX_INCREASE && /* --max-increase: one for each KEY */
                          option_once_check(&given, c, optarg, longopts, twice, sizeof twice) != 0;
        switch (c) {
        case OPT_MAX_INCREASE:
            if (parse_limit(optarg, &o->limits[o->limit_count]) < 0)
                return compare_usage_error(
                    "--max-increase '%s': expected KEY=N%, KEY=N or KEY=N%,M, N and M numbers >= 0", optarg);
            o->limit_count++;
            if (limit_contradicts(o->limits, o->limit_count - 1, &o->limits[o->limit_count - 1]))
                return compare_usage_error("--max-increase '%s': its KEY was given an other limit before: give it one",
                                           optarg);
            break;
        case OPT_ALPHA: {
            char *end;
            errno = 0;
            o->alpha = strtod(optarg, &end);
            /* Below 0.5: a one-sided p is at most 0.5 whatever the runs, so at
             * 0.5 or above a key that did not rise failed (review 58c). */
            if (end == optarg || *end || errno == ERANGE || !rm__decimal_text(optarg, end) ||
                !(o->alpha > 0 && o->alpha < 0.5))
                return compare_usage_error("--alpha '%s': expected a number between 0 and 0.5 (0.05)", optarg);
            break;
        }
        case OPT_ALL:
            o->all = 1;
            break;
        case OPT_ALLOW_DIFFERENT_COMMANDS:
            o->allow_different_commands = 1;
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
            fputs(compare_usage_text, compare_out);
            return -1;
        default:
            if (optopt == OPT_MAX_INCREASE || optopt == OPT_FORMAT || optopt == OPT_ALPHA)
                return compare_usage_error("'%s' needs a value", argv[optind - 1]);
            if (optopt > 0 && optopt <= UCHAR_MAX) {
                /* A short option: inside a group ("-xh") optind has not moved past its word. */
                char word[] = {'-', (char)optopt, '\0'};
                return compare_usage_error("unknown option '%s'", word);
            }
            return compare_usage_error("unknown option '%s'", argv[optind - 1]);
        }
        if (twice_given)
            return compare_usage_error(twice, optarg);
    }
    if (argc - optind != 2)
        return compare_usage_error(argc - optind < 2 ? "expected BASE and NEW%s" : "expected only BASE and NEW%s", "");
    o->base_path = argv[optind];
    o->new_path = argv[optind + 1];
    if (strcmp(o->base_path, "-") == 0 && strcmp(o->new_path, "-") == 0)
        return compare_usage_error("BASE and NEW are both standard input (-), which is read once%s", "");
    return 0;
}

static void compare_options_free(compare_options *o)
{
    for (size_t i = 0; i < o->limit_count; i++)
        free(o->limits[i].key);
    free(o->limits);
}

/* Sides that ran different commands are refused: prints one line and
 * returns EXIT_USAGE, or returns 0. */
static int check_commands(const side *base, const side *next)
{
    const side *sides[] = {base, next};
    for (size_t i = 0; i < 2; i++) {
        if (!sides[i]->command_differs)
            continue;
        fprintf(compare_err, "resmon compare: %s's runs ran different commands (", i ? "NEW" : "BASE");
        print_printable(compare_err, sides[i]->command_differs);
        fputs(" is not its first run's); --allow-different-commands compares them anyway\n", compare_err);
        return EXIT_USAGE;
    }
    if (base->watched && next->watched && strcmp(base->watched, next->watched) != 0) {
        fprintf(compare_err, "resmon compare: BASE %s and NEW %s: their figures cover different things; "
                             "--allow-different-commands compares them anyway\n", base->watched, next->watched);
        return EXIT_USAGE;
    }
    if (base->command && next->command && !jansson.equal(base->command, next->command)) {
        fputs("resmon compare: BASE and NEW ran different commands (their \"command\" differs); "
              "--allow-different-commands compares them anyway\n",
              compare_err);
        return EXIT_USAGE;
    }
    return 0;
}

/* Why the runs fail the comparison whatever the limits (a crash is quick and
 * lean, not an improvement): a failed run of NEW, or a failed BASE where NEW
 * did not fail (their exit statuses differ).  NULL when neither; else the
 * line's text after "resmon compare: ", which the caller frees. */
/* Whether s holds any key of test node (NODEID::...). */
/* How many runs of s hold the test node (its keys' most). */
static size_t test_runs(const side *s, const char *node)
{
    size_t n = strlen(node), runs = 0;
    for (size_t i = 0; i < s->metric_count; i++)
        if (strncmp(s->metrics[i].key, node, n) == 0 && strncmp(s->metrics[i].key + n, "::", 2) == 0 &&
            s->metrics[i].count > runs)
            runs = s->metrics[i].count;
    return runs;
}

/* Whether NEW's runs left work running more often than BASE's: NEW_LEFT of
 * NEW_RUNS against BASE_LEFT of BASE_RUNS.  A share, not "any BASE run":
 * one BASE run that left a slow daemon let every NEW run background its work
 * and pass as a 98 % improvement (attack 67 F9). */
static int left_more_often(size_t next_left, size_t next_runs, size_t base_left, size_t base_runs)
{
    return next_left > 0 && base_runs > 0 && (double)next_left * (double)base_runs > (double)base_left * (double)next_runs;
}

static size_t left_count(const side *s, const char *node)
{
    json_t *count = s->left_tests ? jansson.object_get(s->left_tests, node) : NULL;
    return count ? (size_t)jansson.integer_value(count) : 0;
}

/* The first test NEW and BASE both hold that left work running in more of
 * NEW's runs than of BASE's, or NULL. */
static const char *newly_left_test(const side *base, const side *next)
{
    for (void *at = next->left_tests ? jansson.object_iter(next->left_tests) : NULL; at;
         at = jansson.object_iter_next(next->left_tests, at)) {
        const char *node = jansson.object_iter_key(at);
        if (left_more_often(left_count(next, node), test_runs(next, node), left_count(base, node), test_runs(base, node)))
            return node;
    }
    return NULL;
}

static char *status_failure(const side *base, const side *next)
{
    char *line = NULL;
    int rc = 0;
    const char *left_test = NULL;
    /* Work a run left running went on after it was measured: a benchmark
     * that backgrounds its work read as -98.8 % CPU, an improvement, and a
     * test that returned while its child worked as -99 % (attack 63 F3).
     * Where BASE's runs left work running too, the sides are alike. */
    if (next->failed)
        rc = asprintf(&line, "NEW run failed: %s: a failed run fails the comparison, limits or not", next->failed);
    else if (left_more_often(next->left_running_runs, next->runs, base->left_running_runs, base->runs))
        rc = asprintf(&line, "NEW run left work running: %s (%zu of NEW's %zu runs, %zu of BASE's %zu): its figures "
                             "miss that work, so the comparison fails, limits or not", next->left_running,
                      next->left_running_runs, next->runs, base->left_running_runs, base->runs);
    else if ((left_test = newly_left_test(base, next)))
        rc = asprintf(&line, "NEW's %s left work running when it returned (left_running) in %zu of its %zu runs, BASE's "
                             "in %zu of %zu: its figures miss that work, so the comparison fails, limits or not",
                      left_test, left_count(next, left_test), test_runs(next, left_test), left_count(base, left_test),
                      test_runs(base, left_test));
    else if (base->failed && !base->reports) /* a baseline report's failed test: its rows, not every gate */
        rc = asprintf(&line, "BASE run failed: %s, and NEW's did not: runs whose exit statuses differ fail the "
                             "comparison, limits or not", base->failed);
    else if (!isnan(base->status) && !isnan(next->status) && base->status != next->status)
        rc = asprintf(&line, "the exit statuses differ (BASE %g, NEW %g): the comparison fails, limits or not",
                      base->status, next->status);
    return rc < 0 ? NULL : line;
}

/* How many keys of from that to lacks some limit names. */
static size_t one_side_limited(const side *from, const side *to, const limit *limits, size_t limit_count)
{
    size_t n = 0;
    for (size_t i = 0; i < from->metric_count; i++) {
        if (side_find(to, from->metrics[i].key))
            continue;
        for (size_t j = 0; j < limit_count; j++) {
            if (limit_names(&limits[j], from->metrics[i].key)) {
                n++;
                break;
            }
        }
    }
    return n;
}

/* Which rows the tables show, and the counts the headline gives. */
static void tally(report *rep, int all, const limit *limits, size_t limit_count)
{
    if (limit_count)
        rep->unjudged = one_side_limited(rep->base, rep->next, limits, limit_count) +
                        one_side_limited(rep->next, rep->base, limits, limit_count);
    for (size_t i = 0; i < limit_count; i++) {
        rep->given += limits[i].judged > 0;
        rep->given_exceeded += limits[i].exceeded > 0;
        /* (The same limit given twice judges through its first: no word.) */
        if (limits[i].rows && !limits[i].judged && limits[i].overridden && !rep->overridden++)
            rep->overridden_arg = limits[i].arg;
    }
    for (size_t i = 0; i < rep->count; i++) {
        row *r = &rep->rows[i];
        /* A significant change under its key's floor is "unchanged": not
         * shown or counted as a change. */
        int changed = r->verdict == VERDICT_REGRESSION || r->verdict == VERDICT_IMPROVEMENT;
        r->shown = all || r->limit || r->exceeded || changed;
        rep->shown += (size_t)r->shown;
        rep->limited += r->limit != NULL;
        rep->thinned += r->limit && (r->base_runs < rep->base->runs || r->new_runs < rep->next->runs);
        rep->exceeded += (size_t)r->exceeded;
        rep->significant += (size_t)changed;
        /* The rise is shown and the medians read beyond the limit, but the
         * runs do not show it beyond: one BASE run as slow as NEW's (load)
         * leaves 5 runs a side short of it (CI59: +37 % against 10 %, p
         * 0.067).  It holds -- and the headline says why it might not.
         * (Not where the rise itself is not shown: such a key is noise to
         * the runs, and noise in 500 keys reads beyond a 10 % limit by its
         * medians in some 6 of them every time -- review 60 F3.) */
        rep->unproven += r->limit && !r->exceeded && r->rose && r->change > 0 && r->verdict == VERDICT_NOISE;
    }
}

/* Whether the command's standard output takes UTF-8: a C program's streams
 * carry the environment locale's character set.  LC_CTYPE is put back as
 * it was.  The command's only: compare_run's caller says what its stream
 * takes (a Python stream's encoding is not the locale's: PYTHONIOENCODING,
 * a pytest terminal writer). */
static int locale_is_utf8(void)
{
    const char *current = setlocale(LC_CTYPE, NULL);
    char *saved = current ? strdup(current) : NULL;
    if (!saved)
        return 0;
    int utf8 = 0;
    if (setlocale(LC_CTYPE, "")) {
        const char *codeset = nl_langinfo(CODESET);
        utf8 = codeset && (strcmp(codeset, "UTF-8") == 0 || strcmp(codeset, "utf8") == 0);
    }
    setlocale(LC_CTYPE, saved);
    free(saved);
    return utf8;
}

/* The subcommand, writing to out and err: its exit status, -1 after --help,
 * or COMPARE_INTERRUPTED when the caller stopped it.  Neither stream is
 * closed. */
static int compare_streams(int argc, char **argv, FILE *out, FILE *err, const compare_caller *caller)
{
    compare_out = out;
    compare_err = err;
    compare_caller_now = caller;
    compare_stopped = 0;
    budget_exceeded = 0; /* a caller's earlier run may have passed the budget */
    budget_counting = 1;
    clock_gettime(CLOCK_MONOTONIC, &compare_asked);
    compare_options o;
    int rc = compare_parse(argc, argv, &o);
    if (rc == 0 && out == stdout && stdout_closed_when_started()) {
        /* `resmon compare A B >&-`: the verdict would go to the /dev/null
         * that holds stdout's place, and the status alone would say it. */
        fputs("resmon compare: standard output cannot be written: it was closed when resmon started\n", err);
        rc = EXIT_USAGE;
    }
    if (rc != 0) {
        compare_options_free(&o);
        return rc;
    }
    runs_seen seen = {0};
    side base = {.seen = &seen}, next = {.seen = &seen};
    row *rows = NULL;
    size_t count = 0;
    char why[512], *failure = NULL;
    if (jansson_load("comparing summaries", why, sizeof why) < 0)
        rc = compare_error(why, "");
    else
        jansson.set_alloc_funcs(budget_malloc, budget_free); /* before Jansson's first allocation */
    if (rc == 0)
        rc = side_read(&base, o.base_path);
    if (rc == 0)
        rc = side_read(&next, o.new_path);
    if (rc == 0 && base.kind && next.kind && strcmp(base.kind, next.kind) != 0) {
        /* A summary's keys and a report's NODEID::KEY never meet: compared,
         * nothing was judged and it passed (stop 53's attack on issue 28). */
        fprintf(compare_err, "resmon compare: BASE holds %s and NEW %s: compare runs of one kind\n", base.kind,
                next.kind);
        rc = EXIT_USAGE;
    }
    if (rc == 0 && !o.allow_different_commands)
        rc = check_commands(&base, &next);
    if (rc == 0 && !(rows = build_rows(&base, &next, &count, o.alpha)))
        rc = compare_stopped ? COMPARE_INTERRUPTED : out_of_memory(NULL);
    if (rc == 0 && caller_stopped())
        rc = COMPARE_INTERRUPTED;
    size_t tested[3] = {0, 0, 0};
    if (rc == 0 && (rc = apply_limits(o.limits, o.limit_count, rows, count, o.alpha, tested, &base, &next)) == -ENOMEM)
        rc = out_of_memory(NULL);
    if (rc == 0) {
        report rep = {.base = &base, .next = &next, .rows = rows, .count = count, .alpha = o.alpha,
                      .tested = {tested[0], tested[1], tested[2]}};
        rep.utf8 = caller->utf8;
        tally(&rep, o.all, o.limits, o.limit_count);
        failure = status_failure(&base, &next);
        rep.failure = failure;
        /* Standard output is written through an output_file's sink, not
         * stdout's FILE: stdio forgets why a write failed when the failure
         * was a buffer flushed inside fprintf (the error flag stays, errno is
         * lost), so ">/dev/full" said EIO or ENOSPC by the report's length;
         * and a pipe another process made non-blocking is waited for as a
         * blocking write would, within the readers' bound. */
        output_file report_file = {.silent = 1, .who = "resmon compare"};
        FILE *to = out;
        int write_errno = 0;
        if (out == stdout) {
            to = output_file_open(&report_file, "-", "report") == 0 ? report_file.stream : NULL;
            if (!to)
                write_errno = report_file.error ? report_file.error : ENOMEM;
        }
        if (to) {
            if (o.format == FORMAT_JSON)
                print_json(to, &rep, failure);
            else if (o.format == FORMAT_MARKDOWN)
                print_markdown(to, &rep);
            else
                print_text(to, &rep);
            errno = 0;
            if (to != out)
                write_errno = output_file_publish(&report_file) == 0 ? 0 : report_file.error ? report_file.error : EIO;
            else if (fflush(out) != 0 || ferror(out))
                write_errno = errno ? errno : EIO;
        }
        if (write_errno) {
            rc = stdout_error(write_errno);
        } else {
            report_exceeded(rows, count);
            rc = rep.exceeded ? 1 : 0;
            if (failure) {
                fputs("resmon compare: ", err);
                print_printable(err, failure);
                fputc('\n', err);
                rc = 1;
            }
        }
    }
    free(failure);
    budget_free(rows);
    side_free(&base);
    side_free(&next);
    runs_seen_free(&seen);
    compare_options_free(&o);
    return rc;
}

int compare_run(int argc, char **argv, FILE *out, FILE *err, const compare_caller *caller)
{
    int rc = compare_streams(argc, argv, out, err, caller);
    compare_caller_now = NULL;
    budget_counting = 0;
    return rc == -1 ? 0 : rc;
}

int compare_main(int argc, char **argv)
{
    compare_caller command = {.utf8 = locale_is_utf8()};
    int rc = compare_streams(argc, argv, stdout, stderr, &command);
    if (rc == -1)
        return stdout_close("resmon compare");
    errno = 0;
    if (fclose(stdout) != 0 && rc != EXIT_USAGE)
        rc = stdout_error(errno);
    return rc;
}
