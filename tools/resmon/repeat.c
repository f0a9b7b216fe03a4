/*
 * repeat.c -- resmon --repeat N [--warmup K]: the command run K times
 * unmeasured, then N times measured, each a full run (its own exact figures,
 * exit status and cgroup leaf, as a run without --repeat has); one JSON of
 * every measured run's summary and, per numeric figure, its statistics; and a
 * table of medians with hyperfine's warnings (an outlier, a cold first run).
 *
 * The multi-run JSON ("resmon_repeat": 1) is one side of several runs for
 * `resmon compare`; its "runs" are each exactly what `resmon -o` writes.  A
 * run that fails stops the repeat (unless --ignore-failure), and so does a
 * signal; the runs measured until then are still written.
 */
#include "repeat.h"
#include "child.h"
#include "cli.h"
#include "jansson_loader.h"
#include "json_number.h"
#include "marks.h"
#include "options.h"
#include "output_file.h"
#include "outputs.h"
#include "run_result.h"
#include "signals.h"
#include "summary_output.h"
#include "text_output.h"
#include "cgroup_run.h"
#include "process_records.h"
#include "processes_output.h"

#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* How long a process a run left running may take to end by itself before
 * the next run: a second covers a child finishing its writes; a daemon is
 * then ended (SIGTERM, SIGKILL), as a user's benchmark loop expects. */
#define LEFTOVER_GRACE_SEC 1.0
#include <unistd.h>

/* A run more than this many robust standard deviations (1.4826 x the median
 * absolute deviation, which a single wild run cannot move) from the median
 * is an outlier: hyperfine's rule (its modified z-score over 14.826 MADs),
 * and a first run that is one on the slow side of the wall time looks cold.
 * The deviation is taken at least 1 % of the median, and a difference
 * from it under the figure's noise floor (5 ms, 1 MiB, 1 J) is never an
 * outlier's, so that figures nearly always equal (a peak to the
 * page, a command of a few ms) do not call a page's or a millisecond's
 * difference an outlier. */
#define OUTLIER_SIGMAS 10.0
#define MAD_TO_SIGMA 1.4826
#define MIN_SPREAD_OF_MEDIAN 0.01
#define MAX_WARNINGS 16

typedef struct figure_stats {
    const char *key; /* the first run's; lives as long as runs[0] */
    size_t n;
    double median, mean, stddev, min, max;
} figure_stats;

typedef struct repeat_state {
    char **runs_json; /* each measured run's summary, as resmon -o writes it */
    json_t **runs;    /* the same, parsed */
    size_t count;
    size_t failed;    /* measured runs whose exit status was not 0 */
    size_t oom_killed; /* measured runs the OOM killer struck (their summaries' oom_killed),
                          exit status 0 or not */
    int interrupted;  /* the signal that stopped the repeat, or 0 */
    figure_stats *stats;
    size_t stat_count;
    char warnings[MAX_WARNINGS][320];
    size_t warning_count;
    resmon_cgroup *kept_cg; /* the latest run's leaf, kept under --memory-limit for what it left (cgroup_release_kept) */
} repeat_state;

/* The figures the table shows, in its order (each when every run has it). */
static const struct {
    const char *key, *label, *unit;
    int digits;
    double noise_floor; /* a smaller deviation is never an outlier's (in unit) */
} headline[] = {
    {"wall_sec", "wall time", "s", 3, 0.005},
    {"cpu_sec", "CPU time", "s", 3, 0.005},
    {"cgroup_peak_mb", "peak memory", "MiB", 1, 1},
    {"exact_peak_rss_mb", "exact peak RSS", "MiB", 1, 1},
    {"peak_rss_mb", "peak RSS", "MiB", 1, 1},
    {"peak_gpu_mem_mb", "peak GPU memory", "MiB", 1, 1},
    {"gpu_energy_j", "GPU energy", "J", 1, 1},
    {"cpu_energy_j", "CPU energy", "J", 1, 1},
};
#define HEADLINE_COUNT (sizeof headline / sizeof *headline)

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The median of values[0, n), n > 0 (sorts them). */
static double median_of(double *values, size_t n)
{
    qsort(values, n, sizeof *values, compare_doubles);
    return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

/* One full run with no output of its own, its summary JSON (as -o writes it,
 * without the final newline) into *json unless json is NULL.  Returns 0 --
 * r then holds the run, its status included -- or, printed, the status when
 * nothing ran (125, 126, 127). */
static int run_once(const cli_options *run_options, resmon_gpu *gpu, run_result *r, char **json)
{
    /* Set before anything can fail: the caller reads what the run left
     * running (orphans_unsaid) whatever this returns. */
    memset(r, 0, sizeof *r);
    r->wait4_maxrss_mb = NAN;
    r->memory_limit_at_end_mb = NAN;
    r->swap_allowed_at_end_mb = NAN;
    outputs out;
    if (outputs_open(run_options, gpu, &out) < 0) {
        outputs_discard(&out);
        return EXIT_USAGE;
    }
    r->gpu = gpu;
    /* Each run's JSON is what -o writes for one run: its processes too
     * (out of memory: the run goes on without them). */
    struct process_records *records = run_options->include_children ? process_records_new(getpid()) : NULL;
    r->processes = records;
    if (records && run_options->processes_all)
        processes_keep_all(records, run_options);
    int rc = run_command(run_options, &out, r);
    if (rc != 0) {
        process_records_free(records);
        r->processes = NULL;
        outputs_discard(&out);
        return rc;
    }
    if (json) {
        run_result counted = *r;
        outputs_settle_start(&out, &counted);
        if (out.marks) { /* as outputs_finish counts them for -o: sealed, final */
            marks_seal(out.marks);
            counted.marks_dropped = marks_dropped(out.marks);
        }
        size_t size = 0;
        FILE *text = open_memstream(json, &size);
        int written = text && summary_write_json(text, run_options, &counted) == 0;
        if (text && fclose(text) != 0)
            written = 0;
        if (!written) {
            free(*json);
            *json = NULL;
            fprintf(stderr, "resmon: out of memory\n");
            process_records_free(records);
            r->processes = NULL;
            outputs_discard(&out);
            return EXIT_USAGE;
        }
        if (size && (*json)[size - 1] == '\n')
            (*json)[size - 1] = '\0';
    }
    outputs_finish(run_options, &out, r); /* no file and quiet: only releases */
    process_records_free(records); /* r outlives the run: its medians only */
    r->processes = NULL;
    return 0;
}

/* Keeps a measured run's summary.  0, or -1 (printed). */
static int keep_run(repeat_state *st, char *json)
{
    json_error_t err;
    json_t *parsed = jansson.loadb(json, strlen(json), JSON_REJECT_DUPLICATES, &err);
    if (!parsed || !json_is_object(parsed)) {
        fprintf(stderr, "resmon: cannot read back a run's summary: %s\n", parsed ? "not an object" : err.text);
        jansson_release(parsed);
        free(json);
        return -1;
    }
    st->runs_json[st->count] = json;
    st->runs[st->count++] = parsed;
    return 0;
}

static void warn(repeat_state *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(repeat_state *st, const char *fmt, ...)
{
    if (st->warning_count == MAX_WARNINGS)
        return;
    va_list args;
    va_start(args, fmt);
    vsnprintf(st->warnings[st->warning_count++], sizeof st->warnings[0], fmt, args);
    va_end(args);
}

/* A figure's value in run i (NAN when it has none). */
static double run_value(const repeat_state *st, size_t i, const char *key)
{
    json_t *value = jansson.object_get(st->runs[i], key);
    return json_is_number(value) ? jansson.number_value(value) : NAN;
}

/* Per numeric key of the first run that every run has: n, median, mean,
 * standard deviation (n - 1; 0 for one run), min and max.  0 or -1. */
static int compute_stats(repeat_state *st, double *values)
{
    json_t *first = st->runs[0];
    size_t keys = 0;
    for (void *at = jansson.object_iter(first); at; at = jansson.object_iter_next(first, at))
        keys++;
    st->stats = calloc(keys ? keys : 1, sizeof *st->stats);
    if (!st->stats)
        return -1;
    for (void *at = jansson.object_iter(first); at; at = jansson.object_iter_next(first, at)) {
        const char *key = jansson.object_iter_key(at);
        size_t i = 0;
        double sum = 0;
        for (; i < st->count && isfinite(values[i] = run_value(st, i, key)); i++)
            sum += values[i];
        if (i < st->count)
            continue; /* not a number in every run */
        figure_stats *f = &st->stats[st->stat_count++];
        f->key = key;
        f->n = st->count;
        f->mean = sum / (double)st->count;
        double squares = 0;
        for (i = 0; i < st->count; i++)
            squares += (values[i] - f->mean) * (values[i] - f->mean);
        f->stddev = st->count > 1 ? sqrt(squares / (double)(st->count - 1)) : 0;
        f->median = median_of(values, st->count); /* sorts */
        f->min = values[0];
        f->max = values[st->count - 1];
    }
    return 0;
}

static const figure_stats *stats_of(const repeat_state *st, const char *key)
{
    for (size_t i = 0; i < st->stat_count; i++)
        if (strcmp(st->stats[i].key, key) == 0)
            return &st->stats[i];
    return NULL;
}

/* One robust standard deviation of a headline figure over the runs (see
 * OUTLIER_SIGMAS for its floors); never 0. */
static double robust_spread(const repeat_state *st, size_t h, const figure_stats *f, double *values)
{
    for (size_t j = 0; j < st->count; j++)
        values[j] = fabs(run_value(st, j, f->key) - f->median);
    double spread = MAD_TO_SIGMA * median_of(values, st->count);
    if (spread < MIN_SPREAD_OF_MEDIAN * fabs(f->median))
        spread = MIN_SPREAD_OF_MEDIAN * fabs(f->median);
    if (spread < headline[h].noise_floor / OUTLIER_SIGMAS)
        spread = headline[h].noise_floor / OUTLIER_SIGMAS;
    return spread;
}

/* hyperfine's warnings, for the headline figures: runs far from the median,
 * and a first run far slower than the rest. */
static void find_warnings(repeat_state *st, const cli_options *o, double *values)
{
    for (size_t h = 0; h < HEADLINE_COUNT && st->count >= 3; h++) {
        const figure_stats *f = stats_of(st, headline[h].key);
        if (!f)
            continue;
        char runs[128] = "";
        size_t outliers = 0, used = 0;
        double spread = robust_spread(st, h, f, values);
        for (size_t i = 0; i < st->count; i++) {
            double score = (run_value(st, i, f->key) - f->median) / spread; /* above the median: positive */
            if (fabs(score) <= OUTLIER_SIGMAS)
                continue;
            if (i == 0 && score > 0 && strcmp(f->key, "wall_sec") == 0)
                warn(st, "the first run took %.3f s, far above the median %.3f s: it looks cold (caches not yet "
                         "filled)%s",
                     run_value(st, 0, f->key), f->median, o->warmup ? "" : "; --warmup 1 runs one unmeasured first");
            if (outliers++ < 4 && used < sizeof runs)
                used += (size_t)snprintf(runs + used, sizeof runs - used, "%s%zu (%.*f %s)", used ? ", " : "", i + 1,
                                         headline[h].digits, run_value(st, i, f->key), headline[h].unit);
        }
        if (outliers)
            warn(st, "%s: %zu of %zu runs are outliers (over %.0f robust standard deviations from the median "
                     "%.*f %s): run %s%s; something else on the machine? more runs or a quieter machine",
                 headline[h].label, outliers, st->count, OUTLIER_SIGMAS, headline[h].digits, f->median,
                 headline[h].unit, runs, outliers > 4 ? ", ..." : "");
    }
}

static void put_number(FILE *out, const char *key, double value)
{
    char number[32];
    rm__json_format_double(value, number);
    fprintf(out, "\"%s\": %s", key, number);
}

/* The multi-run JSON, one line (see resmon(1), REPEATED RUNS). */
static void write_json(FILE *out, const cli_options *o, const repeat_state *st)
{
    fputs("{\"resmon_repeat\": 1, \"command\": [", out);
    for (int i = 0; i < o->argc; i++) {
        if (i)
            fputs(", ", out);
        json_write_string(out, o->argv[i]);
    }
    fprintf(out, "], \"repeat\": %ld, \"warmup\": %ld, \"completed\": %zu, \"failed\": %zu, \"oom_killed_runs\": %zu, "
                 "\"interrupted\": %s, \"runs\": [",
            o->repeat, o->warmup, st->count, st->failed, st->oom_killed, st->interrupted ? "true" : "false");
    for (size_t i = 0; i < st->count; i++)
        fprintf(out, "%s%s", i ? ", " : "", st->runs_json[i]);
    fputs("], \"stats\": {", out);
    for (size_t i = 0; i < st->stat_count; i++) {
        const figure_stats *f = &st->stats[i];
        fputs(i ? ", " : "", out);
        json_write_string(out, f->key);
        fprintf(out, ": {\"n\": %zu, ", f->n);
        put_number(out, "median", f->median);
        fputs(", ", out);
        put_number(out, "mean", f->mean);
        fputs(", ", out);
        put_number(out, "stddev", f->stddev);
        fputs(", ", out);
        put_number(out, "min", f->min);
        fputs(", ", out);
        put_number(out, "max", f->max);
        fputc('}', out);
    }
    fputs("}, \"warnings\": [", out);
    for (size_t i = 0; i < st->warning_count; i++) {
        fputs(i ? ", " : "", out);
        json_write_string(out, st->warnings[i]);
    }
    fprintf(out, "], \"resmon_version\": \"%s\"}\n", resmon_version_string());
}

static void print_table(FILE *out, const cli_options *o, const repeat_state *st)
{
    fputs("resmon: ", out);
    print_printable(out, o->argv[0]);
    fprintf(out, ", %zu run%s measured", st->count, st->count == 1 ? "" : "s");
    if (o->warmup)
        fprintf(out, " after %ld warm-up run%s", o->warmup, o->warmup == 1 ? "" : "s");
    if (st->interrupted)
        fprintf(out, " (interrupted by signal %d)", st->interrupted);
    if (st->failed)
        fprintf(out, ": %zu failed (exit_status of each in the JSON)", st->failed);
    else
        fputs(": all exited with status 0", out);
    if (st->oom_killed)
        fprintf(out, "; %zu had a process killed by the OOM killer", st->oom_killed);
    fputc('\n', out);
    fprintf(out, "  %-16s %10s \xc2\xb1 %-12s %s\n", "", "median", "stddev", "min \xe2\x80\xa6 max");
    for (size_t h = 0; h < HEADLINE_COUNT; h++) {
        const figure_stats *f = stats_of(st, headline[h].key);
        if (!f)
            continue;
        int d = headline[h].digits;
        char spread[32];
        snprintf(spread, sizeof spread, "%.*f %s", d, f->stddev, headline[h].unit);
        fprintf(out, "  %-16s %10.*f \xc2\xb1 %-12s %.*f \xe2\x80\xa6 %.*f %s\n", headline[h].label, d, f->median,
                spread, d, f->min, d, f->max, headline[h].unit);
    }
    for (size_t i = 0; i < st->warning_count; i++)
        fprintf(out, "  warning: %s\n", st->warnings[i]);
}

/* One line after each run, so a long repeat shows it goes on. */
static void print_progress(const cli_options *o, long index, const run_result *r)
{
    int measured = index >= o->warmup;
    long number = measured ? index - o->warmup + 1 : index + 1;
    fprintf(stderr, "resmon: %s %ld/%ld: status %d, %.3f s wall, %.3f s CPU\n", measured ? "run" : "warm-up run",
            number, measured ? o->repeat : o->warmup, r->exit_status, r->wall_sec,
            r->have_rusage ? r->rusage_cpu_sec : r->summary.cpu_time_sec);
}

/* One line: which signal stopped the repeat, and what is kept. */
static void say_stopped(const repeat_state *st, const run_result *cut_short)
{
    fprintf(stderr, "resmon: %ssignal %d (%s) stops the repeat%s; %zu measured run%s kept\n",
            cut_short && !cut_short->interrupted ? "a run ended by " : "", st->interrupted,
            strsignal(st->interrupted), cut_short ? " (that run is not measured)" : "", st->count,
            st->count == 1 ? "" : "s");
}

/* Runs them all; returns 0, or the status that stopped the repeat. */
static int run_each(const cli_options *o, resmon_gpu *gpu, repeat_state *st)
{
    cli_options run_options = *o;
    int last_failure = 0; /* the last failed measured run's status */
    run_options.summary_path = NULL; /* each run's summary is kept here */
    run_options.quiet = 1;           /* the table is of them all */
    for (long i = 0; i < o->warmup + o->repeat; i++) {
        int measured = i >= o->warmup;
        run_options.leftovers_said_after = i + 1 < o->warmup + o->repeat; /* below: one line */
        if (signals_received()) { /* between two runs */
            st->interrupted = signals_received();
            say_stopped(st, NULL);
            return 128 + st->interrupted;
        }
        run_result r;
        char *json = NULL;
        int rc = run_once(&run_options, gpu, &r, measured ? &json : NULL);
        st->kept_cg = r.kept_cg; /* released below once what it holds was ended, or as the repeat stops */
        if (rc != 0) {
            /* The command may have run (its summary then found no memory):
             * the repeat stops here, and says what it left as one run's. */
            if (r.orphans_unsaid)
                run_say_orphans_left(r.orphans_left);
            return rc;
        }
        /* A run that stops the repeat says what it left as one run would;
         * otherwise the line below does. */
        int goes_on = !r.interrupted && r.term_signal != SIGINT && r.term_signal != SIGQUIT && r.have_exit &&
                      (r.exit_status == 0 || o->ignore_failure);
        if (r.orphans_unsaid && !goes_on)
            run_say_orphans_left(r.orphans_left);
        /* Ctrl-C and Ctrl-\ on the terminal reach the command's group, which
         * holds the terminal, not resmon: a run they end stops the repeat as
         * a signal to resmon does, --ignore-failure or not. */
        int user_stop = r.term_signal == SIGINT || r.term_signal == SIGQUIT;
        if (r.interrupted || user_stop) { /* a run cut short is not measured */
            free(json);
            st->interrupted = r.interrupted ? signals_received() : r.term_signal;
            say_stopped(st, &r);
            return r.have_exit && r.exit_status ? r.exit_status : 128 + st->interrupted;
        }
        if (!r.have_exit) { /* said by run_command */
            free(json);
            return EXIT_USAGE;
        }
        if (measured && keep_run(st, json) < 0) {
            if (r.orphans_unsaid) /* the repeat stops here: said as one run's */
                run_say_orphans_left(r.orphans_left);
            return EXIT_USAGE;
        }
        if (!o->quiet)
            print_progress(o, i, &r);
        /* A script that goes on after its child's OOM kill exits 0, faster
         * for its lost work: "all exited with status 0" hid it and its
         * figures went into the stats unsaid (attack 57b).  Counted, said. */
        int oom_struck = r.summary.cgroup_oom_kills > 0 && !o->cgroup_path;
        if (measured && oom_struck) {
            st->oom_killed++;
            warn(st, "run %ld had a process killed by the OOM killer (oom_killed in its summary): its figures, "
                     "in the stats, are of work cut short", i - o->warmup + 1);
        } else if (oom_struck) { /* not in the stats, but the command did not do its work: said */
            warn(st, "warm-up run %ld had a process killed by the OOM killer: the runs after it may not be "
                     "warmed up", i + 1);
        }
        if (r.exit_status != 0 && measured) {
            st->failed++;
            last_failure = r.exit_status;
        }
        if (r.exit_status != 0 && !o->ignore_failure) {
            fprintf(stderr, "resmon: the repeat stops at a failed run (status %d); --ignore-failure goes on\n",
                    r.exit_status);
            return r.exit_status;
        }
        /* What a run left running is still resmon's (a subreaper's) child:
         * the next run's tree, orphan count and reaped CPU would count it.
         * A benchmark loop must not hang on a daemon the command started:
         * what still runs after a grace is ended as the run's leftover. */
        if (r.orphans_left > 0 && i + 1 < o->warmup + o->repeat) {
            leftover_outcome end;
            int done = run_end_leftovers(LEFTOVER_GRACE_SEC, &end);
            int ended = end.ended, killed = end.killed, cut_short = end.cut_short;
            char what[160];
            snprintf(what, sizeof what, "resmon: %s %ld left %d process%s running", measured ? "run" : "warm-up run",
                     measured ? i - o->warmup + 1 : i + 1, r.orphans_left, r.orphans_left == 1 ? "" : "es");
            const char *why = "so that no run counts another's (--wait-orphans counts them in their own run)";
            /* The count is of the processes ended: what a leftover started
             * becomes resmon's as it ends, and is ended too. */
            const char *it = r.orphans_left == 1 ? "it" : "them";
            char count[96];
            if (ended == r.orphans_left)
                snprintf(count, sizeof count, "%s", it);
            else if (ended < r.orphans_left) /* the others ended by themselves */
                snprintf(count, sizeof count, "%d of them", ended);
            else
                snprintf(count, sizeof count, "%s and what %s started, %d processes", it,
                         r.orphans_left == 1 ? "it" : "they", ended);
            const char *how = killed ? "SIGTERM, then SIGKILL" : "SIGTERM";
            /* A signal stops the repeat (said next): the grace is cut, and
             * what still ran is ended as it would have been after it.  What
             * could not be ended is said with each reason's count. */
            const char *after = cut_short ? "they still run" : "the next runs may count them";
            if (done == 0 && (end.unheeded > 0 || end.held > 0)) {
                char reasons[400] = "";
                size_t at = 0;
                if (end.unheeded > 0)
                    at += (size_t)snprintf(reasons + at, sizeof reasons - at,
                                           "%d did not end within %d s of SIGKILL (uninterruptible, or frozen?)",
                                           end.unheeded, LEFTOVER_KILL_SEC);
                if (end.held > 0 && at < sizeof reasons)
                    at += (size_t)snprintf(reasons + at, sizeof reasons - at,
                                           "%s%d ended but %s held by a tracer (a zombie only it can release)",
                                           at ? " and " : "", end.held, end.held == 1 ? "is" : "are");
                if (end.refused > 0 && at < sizeof reasons)
                    snprintf(reasons + at, sizeof reasons - at, " and %d refused it", end.refused);
                fprintf(stderr, "%s: %s: %s\n", what, reasons, after);
            } else if (done == 0) {
                fprintf(stderr, "%s: some could not be ended (SIGKILL refused): %s\n", what, after);
            } else if (cut_short && (ended || killed)) {
                fprintf(stderr, "%s: a signal cut the wait for %s short: ended %s (%s) as the repeat stops\n", what,
                        it, count, how);
            } else if (cut_short) {
                fprintf(stderr, "%s: a signal cut the wait for %s short: none still runs\n", what, it);
            } else if (ended || killed) {
                fprintf(stderr, "%s for over %g s (a daemon?): ended %s (%s) before the next run, %s\n", what,
                        LEFTOVER_GRACE_SEC, count, how, why);
            } else {
                fprintf(stderr, "%s: waited for %s before the next run, %s\n", what, it, why);
            }
            /* Under --memory-limit what it left stayed in its leaf, under
             * the limit, while it was waited for: a kill there is that
             * run's (its summary was read at the command's exit). */
            double kills = r.leaf_kept[0] ? cgroup_oom_kills_now(r.leaf_kept) : NAN;
            double before = isnan(r.summary.cgroup_oom_kills) ? 0 : r.summary.cgroup_oom_kills;
            if (kills > before) {
                if (measured && !oom_struck)
                    st->oom_killed++;
                warn(st, "%s %ld: what it left running had %.0f process%s killed by the OOM killer while it was "
                         "waited for (after its summary was read)%s", measured ? "run" : "warm-up run",
                     measured ? i - o->warmup + 1 : i + 1, kills - before, kills - before == 1 ? "" : "es",
                     measured ? "" : ": the runs after it may not be warmed up");
            }
        }
        cgroup_release_kept(st->kept_cg, 1);
        st->kept_cg = NULL;
    }
    /* --ignore-failure measures failed runs; it does not make a command that
     * never succeeded pass (a CI step would go green on it). */
    if (st->failed && st->failed == st->count) {
        fprintf(stderr, "resmon: every measured run failed (the last with status %d): the repeat exits with it, "
                        "--ignore-failure or not\n", last_failure);
        return last_failure;
    }
    return 0;
}

static int run_all(const cli_options *o, resmon_gpu *gpu, repeat_state *st)
{
    int rc = run_each(o, gpu, st);
    cgroup_release_kept(st->kept_cg, 0); /* the repeat stopped with it kept: what it holds stays, said */
    st->kept_cg = NULL;
    return rc;
}

static void state_free(repeat_state *st)
{
    for (size_t i = 0; i < st->count; i++) {
        free(st->runs_json[i]);
        jansson_release(st->runs[i]);
    }
    free(st->runs_json);
    free(st->runs);
    free(st->stats);
}

int repeat_main(const cli_options *o, resmon_gpu *gpu)
{
    char why[256];
    if (jansson_load("--repeat", why, sizeof why) < 0) {
        fprintf(stderr, "resmon: %s\n", why);
        return EXIT_USAGE;
    }
    repeat_state st;
    memset(&st, 0, sizeof st);
    output_file summary;
    memset(&summary, 0, sizeof summary);
    st.runs_json = calloc((size_t)o->repeat, sizeof *st.runs_json);
    st.runs = calloc((size_t)o->repeat, sizeof *st.runs);
    double *values = calloc((size_t)o->repeat, sizeof *values);
    int status = EXIT_USAGE;
    if (!st.runs_json || !st.runs || !values) {
        fprintf(stderr, "resmon: out of memory\n");
        goto done;
    }
    /* Opened first: an output that cannot be written fails before any run. */
    if (o->summary_path && output_file_open(&summary, o->summary_path, "summary file") < 0)
        goto done;
    status = run_all(o, gpu, &st);
    if (st.count == 0) { /* nothing measured: every path stays as it was */
        output_file_discard(&summary);
        goto done;
    }
    if (compute_stats(&st, values) < 0) {
        fprintf(stderr, "resmon: out of memory\n");
        output_file_discard(&summary);
        status = status ? status : EXIT_USAGE;
        goto done;
    }
    find_warnings(&st, o, values);
    if (summary.stream) {
        if (summary.is_stdout || summary.is_stderr)
            output_start_on_own_line(summary.is_stdout ? stdout : stderr);
        reader_wait wait; /* a FIFO's stuck reader: given up on after the bound, or soon after a signal */
        reader_wait_init(&wait, signals_stop_fd(), signals_received() != 0);
        output_file_wait_with(&summary, &wait);
        write_json(summary.stream, o, &st);
        if (output_file_publish(&summary) < 0 && status == 0)
            status = EXIT_USAGE;
    }
    if (!o->quiet)
        print_table(stderr, o, &st);
done:
    output_file_discard(&summary); /* accepts one published or never opened */
    state_free(&st);
    free(values);
    return status;
}
