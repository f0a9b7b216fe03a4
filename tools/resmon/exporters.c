/*
 * exporters.c -- the command's Prometheus outputs: their options, what they
 * render, and the thread that writes the textfile and pushes on a schedule.
 *
 * Every output renders through exporters_render (the server calls it back
 * through the render callback it was given): from the monitor while it
 * lives (a snapshot under the monitor's lock), then from the final summary,
 * which carries the kernel's exact figures (wait4) the monitor cannot know.
 * Like the rest of the command, only the library's public API is used.
 */
#include "exporters.h"
#include "cli.h"
#include "push.h"
#include "serve.h"
#include "textfile.h"
#include "utf8.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char exporter_usage_text[] =
    "\n"
    "Prometheus export (every series carries command=\"<COMMAND's basename>\" and every --label):\n"
    "      --serve HOST:PORT    serve GET /metrics while COMMAND runs (OpenMetrics when the scraper\n"
    "                           asks for it, else text 0.0.4); PORT 1 to 65535.  No authentication:\n"
    "                           anyone who can reach HOST:PORT reads the metrics; bind beyond\n"
    "                           127.0.0.1 only on a trusted network\n"
    "      --serve-linger SECONDS  keep serving the final values this long after COMMAND ends\n"
    "      --push URL           PUT the metrics to a Pushgateway at URL (http:// or https://) at the\n"
    "                           end of the run, grouped by job and every --label; a failed push is\n"
    "                           reported on stderr and never changes the exit status; resmon exits\n"
    "                           at most --push-timeout and about a second after COMMAND\n"
    "      --push-interval SECONDS  also push every SECONDS while COMMAND runs\n"
    "      --push-job NAME      the job the push is grouped under (default resmon)\n"
    "      --push-timeout SECONDS  give up on one push after this long (default 5)\n"
    "      --textfile PATH      write the metrics to PATH (a regular file) for node_exporter's\n"
    "                           textfile collector, replaced atomically every interval (at most\n"
    "                           once a second), as the other files are\n"
    "      --label KEY=VALUE    add a label to every series (repeatable)\n";

void exporter_options_init(exporter_options *o)
{
    memset(o, 0, sizeof *o);
    o->push_job = "resmon";
    o->push_timeout_sec = 5;
}

static int parse_seconds(const char *text, double *out, int zero_allowed)
{
    char *end;
    errno = 0;
    double value = strtod(text, &end);
    if (end == text || *end != '\0' || errno == ERANGE || !isfinite(value) || value < 0 ||
        (value == 0 && !zero_allowed))
        return -1;
    *out = value;
    return 0;
}

static int parse_label(exporter_options *o, char *arg, char *err, size_t errcap)
{
    char *equals = strchr(arg, '=');
    if (!equals) {
        snprintf(err, errcap, "--label '%s': give KEY=VALUE", arg);
        return -1;
    }
    *equals = '\0'; /* argv is ours to split: the name and value point into it */
    const char *name = arg, *value = equals + 1;
    if (!resmon_label_name_valid(name)) {
        snprintf(err, errcap, "--label: invalid label name '%s' (letters, digits and _, not starting "
                              "with a digit or __)", name);
        return -1;
    }
    if (strcmp(name, "command") == 0 || strcmp(name, "job") == 0) {
        snprintf(err, errcap, "--label: '%s' is set by resmon%s", name,
                 strcmp(name, "job") == 0 ? " (use --push-job for the Pushgateway's job)" : "");
        return -1;
    }
    /* Prometheus gives these a meaning on histograms and summaries (promtool
     * rejects them elsewhere); "version" is resmon_build_info's own. */
    if (strcmp(name, "le") == 0 || strcmp(name, "quantile") == 0 || strcmp(name, "version") == 0) {
        snprintf(err, errcap, "--label: '%s' is a reserved label name", name);
        return -1;
    }
    for (size_t i = 0; i < o->label_count; i++)
        if (strcmp(o->labels[i].name, name) == 0) {
            snprintf(err, errcap, "--label: '%s' given twice", name);
            return -1;
        }
    if (o->label_count == EXPORTER_MAX_LABELS) {
        snprintf(err, errcap, "--label: at most %d labels", EXPORTER_MAX_LABELS);
        return -1;
    }
    o->labels[o->label_count++] = (resmon_label){name, value};
    return 0;
}

int exporter_parse_option(exporter_options *o, int opt, char *arg, char *err, size_t errcap)
{
    switch ((enum exporter_option)opt) {
    case EXPORTER_OPT_SERVE:
        o->serve_address = arg;
        return 0;
    case EXPORTER_OPT_SERVE_LINGER:
        if (parse_seconds(arg, &o->serve_linger_sec, 1) == 0)
            return 0;
        snprintf(err, errcap, "invalid --serve-linger '%s': give a number of seconds", arg);
        return -1;
    case EXPORTER_OPT_PUSH:
        if (push_url_check(arg, err, errcap) < 0)
            return -1;
        o->push_url = arg;
        return 0;
    case EXPORTER_OPT_PUSH_INTERVAL:
        if (parse_seconds(arg, &o->push_interval_sec, 0) == 0)
            return 0;
        snprintf(err, errcap, "invalid --push-interval '%s': give a positive number of seconds", arg);
        return -1;
    case EXPORTER_OPT_PUSH_JOB:
        if (arg[0] == '\0') {
            snprintf(err, errcap, "--push-job: give a job name");
            return -1;
        }
        /* The gateway stores what it is given, then fails every scrape of
         * its /metrics (and every later push) on a label that is not UTF-8:
         * one bad job would poison it for everyone. */
        if (!rm__utf8_valid(arg)) {
            char shown[256];
            printable_copy(shown, sizeof shown, arg);
            snprintf(err, errcap, "--push-job '%s': not valid UTF-8, which a Pushgateway cannot store", shown);
            return -1;
        }
        o->push_job = arg;
        return 0;
    case EXPORTER_OPT_PUSH_TIMEOUT:
        if (parse_seconds(arg, &o->push_timeout_sec, 0) == 0 && o->push_timeout_sec >= 0.001)
            return 0;
        snprintf(err, errcap, "invalid --push-timeout '%s': give a positive number of seconds", arg);
        return -1;
    case EXPORTER_OPT_TEXTFILE:
        o->textfile_path = arg;
        return 0;
    case EXPORTER_OPT_LABEL:
        return parse_label(o, arg, err, errcap);
    }
    snprintf(err, errcap, "unknown option");
    return -1;
}

int exporter_options_check(const exporter_options *o, char *err, size_t errcap)
{
    if (o->serve_linger_sec > 0 && !o->serve_address) {
        snprintf(err, errcap, "--serve-linger works with --serve only");
        return -1;
    }
    if (o->push_interval_sec > 0 && !o->push_url) {
        snprintf(err, errcap, "--push-interval works with --push only");
        return -1;
    }
    return 0;
}

/* ---- the running exporters ------------------------------------------------ */

/* A thread that does one job on a period until stopped: the textfile's
 * writes, the periodic pushes.  Each destination has its own, so a hung
 * Pushgateway never delays the textfile. */
typedef struct periodic {
    exporters *ex;
    double period_sec;
    void (*work)(exporters *ex);
    pthread_t thread;
    int started;
} periodic;

struct exporters {
    exporter_options opts;
    char command[256];
    resmon_label labels[EXPORTER_MAX_LABELS + 1]; /* command, then the user's; values valid UTF-8 */
    char *repaired[EXPORTER_MAX_LABELS + 1];      /* the values this owns (NULL: argv's own) */
    size_t label_count;

    pthread_mutex_t lock; /* guards what renders (the monitor or the final state) and stopping */
    const resmon_monitor *monitor;
    resmon_summary final;
    resmon_sample final_last;
    int have_final, have_final_last;
    char final_phase[RESMON_PHASE_NAME_MAX]; /* the last phase marked; "" without marks */
    int ended;               /* the command (or target) ended: not running any more */
    int have_exit, exit_status;

    struct metrics_server *server;
    struct pusher *pusher;

    pthread_cond_t wake; /* stopping was set */
    int stopping;
    periodic textfile, pushes;
    int textfile_failed; /* report a failing textfile once, not every second */
};

static void command_label(const char *argv0, pid_t pid, char *out, size_t cap)
{
    if (argv0) {
        const char *slash = strrchr(argv0, '/');
        snprintf(out, cap, "%s", slash ? slash + 1 : argv0);
        return;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f || !fgets(out, (int)cap, f))
        snprintf(out, cap, "%d", (int)pid);
    if (f)
        fclose(f);
    out[strcspn(out, "\n")] = '\0';
}

/* A label value for the series the command adds: escaped as the library
 * escapes its own (the values are valid UTF-8 already). */
static void put_label_value(FILE *out, const char *value)
{
    for (const char *p = value; *p; p++) {
        if (*p == '\\')
            fputs("\\\\", out);
        else if (*p == '"')
            fputs("\\\"", out);
        else if (*p == '\n')
            fputs("\\n", out);
        else
            fputc(*p, out);
    }
}

static void put_series(FILE *out, const exporters *ex, const char *name, const char *extra_name,
                       const char *extra_value, int value)
{
    fputs(name, out);
    for (size_t i = 0; i < ex->label_count; i++) {
        fprintf(out, "%s%s=\"", i ? "," : "{", ex->labels[i].name);
        put_label_value(out, ex->labels[i].value);
        fputc('"', out);
    }
    if (extra_name) {
        fprintf(out, "%s%s=\"", ex->label_count ? "," : "{", extra_name);
        put_label_value(out, extra_value);
        fputc('"', out);
    }
    fprintf(out, "%s %d\n", ex->label_count || extra_name ? "}" : "", value);
}

static void put_family(FILE *out, resmon_exposition_format format, const char *name, const char *type,
                       const char *help)
{
    if (format == RESMON_EXPOSITION_OPENMETRICS)
        fprintf(out, "# TYPE %s %s\n# HELP %s %s\n", name, type, name, help);
    else
        fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* The series only the command knows (under ex->lock): whether the command
 * still runs, how it ended, and which resmon measures it. */
static void put_command_series(FILE *out, const exporters *ex, resmon_exposition_format format)
{
    int openmetrics = format == RESMON_EXPOSITION_OPENMETRICS;
    put_family(out, format, "resmon_command_running", "gauge",
               "1 while the monitored command (or --pid target) runs, 0 once it ended.");
    put_series(out, ex, "resmon_command_running", NULL, NULL, !ex->ended);
    if (ex->have_exit) {
        put_family(out, format, "resmon_command_exit_status", "gauge",
                   "The command's exit status as the shell sees it (128+N when signal N ended it).");
        put_series(out, ex, "resmon_command_exit_status", NULL, NULL, ex->exit_status);
    }
    put_family(out, format, openmetrics ? "resmon_build" : "resmon_build_info", openmetrics ? "info" : "gauge",
               "The version of resmon that measures.");
    put_series(out, ex, "resmon_build_info", "version", resmon_version_string(), 1);
    /* The phase the run is in (marks), once it has one. */
    char phase[RESMON_PHASE_NAME_MAX];
    snprintf(phase, sizeof phase, "%s", ex->final_phase);
    if (ex->monitor && resmon_monitor_phase(ex->monitor, phase, sizeof phase) <= 0)
        phase[0] = '\0';
    if (phase[0]) {
        put_family(out, format, openmetrics ? "resmon_phase" : "resmon_phase_info", openmetrics ? "info" : "gauge",
                   "The phase the run is in, as the last mark named it.");
        put_series(out, ex, "resmon_phase_info", "phase", phase, 1);
    }
}

/* The library's exposition for what renders now, in a malloc'ed buffer, or
 * NULL; the caller holds ex->lock. */
static char *render_library(exporters *ex, resmon_exposition_format format, size_t *len)
{
    char *text = NULL;
    size_t cap = 4096;
    for (;;) {
        char *grown = realloc(text, cap);
        if (!grown)
            break;
        text = grown;
        int n;
        if (ex->monitor)
            n = resmon_monitor_exposition(ex->monitor, format, ex->labels, ex->label_count, text, cap);
        else if (ex->have_final)
            n = resmon_exposition_render(&ex->final, ex->have_final_last ? &ex->final_last : NULL,
                                         sizeof ex->final_last, format, ex->labels, ex->label_count, text, cap);
        else /* before the first sample: no series yet */
            n = snprintf(text, cap, "%s", format == RESMON_EXPOSITION_OPENMETRICS ? "# EOF\n" : "");
        if (n >= 0 && (size_t)n < cap) {
            *len = (size_t)n;
            return text;
        }
        if (n < 0)
            break;
        cap = (size_t)n + 1;
    }
    free(text);
    return NULL;
}

/* The current exposition in a malloc'ed, NUL-terminated buffer (the caller
 * frees), its length in *len; NULL when out of memory.  The server's render
 * callback (user: ex), the textfile's and the pushes' text. */
static char *exporters_render(void *user, resmon_exposition_format format, size_t *len)
{
    exporters *ex = user;
    pthread_mutex_lock(&ex->lock);
    size_t library_len;
    char *library = render_library(ex, format, &library_len);
    char *text = NULL;
    size_t text_len = 0;
    FILE *out = library ? open_memstream(&text, &text_len) : NULL;
    if (out) {
        static const char eof[] = "# EOF\n";
        size_t body = library_len;
        if (format == RESMON_EXPOSITION_OPENMETRICS && body >= sizeof eof - 1)
            body -= sizeof eof - 1; /* the command's series go before the end marker */
        fwrite(library, 1, body, out);
        put_command_series(out, ex, format);
        if (format == RESMON_EXPOSITION_OPENMETRICS)
            fputs(eof, out);
        if (fclose(out) != 0) {
            free(text);
            text = NULL;
        }
    }
    pthread_mutex_unlock(&ex->lock);
    free(library);
    if (text)
        *len = text_len;
    return text;
}

static void write_textfile(exporters *ex)
{
    size_t len;
    char *text = exporters_render(ex, RESMON_EXPOSITION_PROMETHEUS, &len);
    int rc = text ? textfile_write(ex->opts.textfile_path, text, len) : -ENOMEM;
    free(text);
    if (rc < 0 && !ex->textfile_failed) {
        fputs("resmon: cannot write textfile '", stderr);
        print_printable(stderr, ex->opts.textfile_path);
        fprintf(stderr, "': %s\n", strerror(-rc));
    }
    ex->textfile_failed = rc < 0;
}

static void push(exporters *ex)
{
    size_t len;
    char *text = exporters_render(ex, RESMON_EXPOSITION_PROMETHEUS, &len);
    if (text)
        pusher_push(ex->pusher, text, len);
    else
        fprintf(stderr, "resmon: push skipped: out of memory\n");
    free(text);
}

static struct timespec deadline_after(double sec)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    double whole = floor(sec);
    ts.tv_sec += (time_t)whole;
    ts.tv_nsec += (long)((sec - whole) * 1e9);
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

/* Does the job every period (the first one period after the start) until
 * stopped.  The period counts from the end of the previous job, so a slow
 * one is never followed by a burst. */
static void *periodic_main(void *arg)
{
    periodic *p = arg;
    exporters *ex = p->ex;
    pthread_mutex_lock(&ex->lock);
    while (!ex->stopping) {
        struct timespec until = deadline_after(p->period_sec);
        int rc = 0;
        while (!ex->stopping && rc != ETIMEDOUT)
            rc = pthread_cond_timedwait(&ex->wake, &ex->lock, &until);
        if (ex->stopping)
            break;
        pthread_mutex_unlock(&ex->lock); /* rendering takes it; a push may take seconds */
        p->work(ex);
        pthread_mutex_lock(&ex->lock);
    }
    pthread_mutex_unlock(&ex->lock);
    return NULL;
}

static int periodic_start(periodic *p, exporters *ex, double period_sec, void (*work)(exporters *), const char *name)
{
    p->ex = ex;
    p->period_sec = period_sec;
    p->work = work;
    int rc = pthread_create(&p->thread, NULL, periodic_main, p);
    if (rc != 0)
        return -rc;
    p->started = 1;
    pthread_setname_np(p->thread, name); /* at most 15 bytes */
    return 0;
}

static void periodic_join(periodic *p)
{
    if (p->started)
        pthread_join(p->thread, NULL);
    p->started = 0;
}

/* Stops both threads; a push in flight gives up at once, and the pusher is
 * ready for the final push afterwards. */
static void stop_schedule(exporters *ex)
{
    pthread_mutex_lock(&ex->lock);
    ex->stopping = 1;
    pthread_cond_broadcast(&ex->wake);
    pthread_mutex_unlock(&ex->lock);
    if (ex->pushes.started)
        pusher_abort(ex->pusher);
    periodic_join(&ex->textfile);
    periodic_join(&ex->pushes);
    if (ex->pusher)
        pusher_resume(ex->pusher);
}

static int start_schedule(exporters *ex, double sample_interval_sec)
{
    int rc = 0;
    if (ex->opts.textfile_path) /* every interval, at most once a second */
        rc = periodic_start(&ex->textfile, ex, sample_interval_sec > 1 ? sample_interval_sec : 1, write_textfile,
                            "resmon-textfile");
    if (rc == 0 && ex->pusher && ex->opts.push_interval_sec > 0)
        rc = periodic_start(&ex->pushes, ex, ex->opts.push_interval_sec, push, "resmon-push");
    return rc;
}

static void free_exporters(exporters *ex)
{
    stop_schedule(ex);
    metrics_server_stop(ex->server);
    pusher_free(ex->pusher);
    pthread_cond_destroy(&ex->wake);
    pthread_mutex_destroy(&ex->lock);
    for (size_t i = 0; i < ex->label_count; i++)
        free(ex->repaired[i]);
    free(ex);
}

/* The labels every series carries: command, then the user's, each value
 * made valid UTF-8 (a Latin-1 file name, a comm cut mid-character). */
static int set_labels(exporters *ex, const exporter_options *o)
{
    ex->labels[0] = (resmon_label){"command", ex->command};
    memcpy(ex->labels + 1, o->labels, o->label_count * sizeof o->labels[0]);
    ex->label_count = 1 + o->label_count;
    for (size_t i = 0; i < ex->label_count; i++) {
        if (rm__utf8_valid(ex->labels[i].value))
            continue;
        if (!(ex->repaired[i] = utf8_repaired(ex->labels[i].value)))
            return -ENOMEM;
        ex->labels[i].value = ex->repaired[i];
    }
    return 0;
}

exporters *exporters_start(const exporter_options *o, double sample_interval_sec, const char *argv0, pid_t pid,
                           int *out_none)
{
    *out_none = !o->serve_address && !o->push_url && !o->textfile_path;
    if (*out_none)
        return NULL;
    char err[512] = "";
    exporters *ex = calloc(1, sizeof *ex);
    if (!ex) {
        fprintf(stderr, "resmon: out of memory\n");
        return NULL;
    }
    ex->opts = *o;
    pthread_mutex_init(&ex->lock, NULL);
    pthread_condattr_t attr; /* timed waits on the monotonic clock */
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&ex->wake, &attr);
    pthread_condattr_destroy(&attr);
    command_label(argv0, pid, ex->command, sizeof ex->command);

    /* The threads started here (libmicrohttpd's, the schedule's, libcurl's
     * resolver) block the signals resmon forwards, so they reach the main
     * thread and cut its waits (and the linger) short. */
    sigset_t previous;
    signals_block_forwarded(&previous);
    int rc = 0;
    if ((rc = set_labels(ex, o)) < 0)
        snprintf(err, sizeof err, "out of memory");
    else if (o->textfile_path && (rc = textfile_check(o->textfile_path, err, sizeof err)) < 0)
        ;
    else if (o->push_url && !(ex->pusher = pusher_new(o->push_url, o->push_job, ex->labels + 1, ex->label_count - 1,
                                                      o->push_timeout_sec, err, sizeof err)))
        rc = -1;
    else if (o->serve_address &&
             !(ex->server = metrics_server_start(o->serve_address, exporters_render, ex, err, sizeof err)))
        rc = -1;
    else if ((rc = start_schedule(ex, sample_interval_sec)) < 0)
        snprintf(err, sizeof err, "cannot start the exporter thread: %s", strerror(-rc));
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    if (rc < 0) {
        fprintf(stderr, "resmon: %s\n", err);
        free_exporters(ex);
        return NULL;
    }
    return ex;
}

void exporters_attach(exporters *ex, const resmon_monitor *m)
{
    if (!ex || !m)
        return;
    pthread_mutex_lock(&ex->lock);
    ex->monitor = m;
    pthread_mutex_unlock(&ex->lock);
}

void exporters_detach(exporters *ex, const resmon_monitor *m)
{
    if (!ex || !m)
        return;
    pthread_mutex_lock(&ex->lock);
    if (ex->monitor == m) {
        /* The monitor has stopped (or never started), so its summary and its
         * newest sample agree; the command keeps one sample (max_samples 1),
         * which is the newest. */
        ex->have_final = resmon_monitor_get_summary(m, &ex->final, sizeof ex->final) == 0;
        ex->have_final_last =
            ex->have_final && resmon_monitor_get_samples(m, &ex->final_last, 1, sizeof ex->final_last) > 0;
        if (resmon_monitor_phase(m, ex->final_phase, sizeof ex->final_phase) <= 0)
            ex->final_phase[0] = '\0';
        ex->monitor = NULL;
        ex->ended = 1; /* a run has one monitor: freed when the target ended */
    }
    pthread_mutex_unlock(&ex->lock);
}

/* Sleeps for the linger time; a signal (SIGINT, SIGTERM: handlers without
 * SA_RESTART) cuts it short. */
static void linger(double sec)
{
    struct timespec left = {(time_t)sec, (long)((sec - floor(sec)) * 1e9)};
    nanosleep(&left, NULL);
}

void exporters_finish(exporters *ex, const resmon_summary *final, int have_exit, int exit_status)
{
    if (!ex)
        return;
    stop_schedule(ex);
    pthread_mutex_lock(&ex->lock);
    if (final) {
        ex->final = *final;
        ex->have_final = 1;
    }
    ex->ended = 1;
    ex->have_exit = have_exit;
    ex->exit_status = exit_status;
    pthread_mutex_unlock(&ex->lock);
    if (ex->opts.textfile_path)
        write_textfile(ex);
    if (ex->pusher)
        push(ex);
    if (ex->server && ex->opts.serve_linger_sec > 0)
        linger(ex->opts.serve_linger_sec);
    free_exporters(ex);
}

void exporters_discard(exporters *ex)
{
    if (ex)
        free_exporters(ex);
}
