/*
 * exporters.c -- the command's Prometheus outputs: their options, what they
 * render, and the thread that writes the textfile and pushes on a schedule.
 *
 * Every output renders through exporters_render: from the monitor while it
 * lives (a snapshot under the monitor's lock), then from the final summary,
 * which carries the kernel's exact figures (wait4) the monitor cannot know.
 * Like the rest of the command, only the library's public API is used.
 */
#include "exporters.h"

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
    "                           asks for it, else text 0.0.4).  No authentication: anyone who can\n"
    "                           reach HOST:PORT reads the metrics; bind beyond 127.0.0.1 only on a\n"
    "                           trusted network\n"
    "      --serve-linger SECONDS  keep serving the final values this long after COMMAND ends\n"
    "      --push URL           PUT the metrics to a Pushgateway at URL at the end of the run,\n"
    "                           grouped by job and every --label; a failed push is reported on\n"
    "                           stderr and never changes the exit status\n"
    "      --push-interval SECONDS  also push every SECONDS while COMMAND runs\n"
    "      --push-job NAME      the job the push is grouped under (default resmon)\n"
    "      --push-timeout SECONDS  give up on one push after this long (default 5)\n"
    "      --textfile PATH      write the metrics to PATH for node_exporter's textfile collector,\n"
    "                           replaced atomically every interval (at most once a second)\n"
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

struct exporters {
    exporter_options opts;
    char command[256];
    resmon_label labels[EXPORTER_MAX_LABELS + 1]; /* command, then the user's */
    size_t label_count;

    pthread_mutex_t lock; /* guards what renders: the monitor or the final state */
    const resmon_monitor *monitor;
    resmon_summary final;
    resmon_sample final_last;
    int have_final, have_final_last;

    metrics_server *server;
    pusher *pusher;

    /* The schedule thread (textfile, periodic push). */
    pthread_t thread;
    int thread_started;
    pthread_cond_t wake;
    int stopping;
    double textfile_period_sec;
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

char *exporters_render(exporters *ex, resmon_exposition_format format, size_t *len)
{
    pthread_mutex_lock(&ex->lock);
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
            pthread_mutex_unlock(&ex->lock);
            return text;
        }
        if (n < 0)
            break;
        cap = (size_t)n + 1;
    }
    pthread_mutex_unlock(&ex->lock);
    free(text);
    return NULL;
}

static void write_textfile(exporters *ex)
{
    size_t len;
    char *text = exporters_render(ex, RESMON_EXPOSITION_PROMETHEUS, &len);
    int rc = text ? textfile_write(ex->opts.textfile_path, text, len) : -ENOMEM;
    free(text);
    if (rc < 0 && !ex->textfile_failed)
        fprintf(stderr, "resmon: cannot write textfile '%s': %s\n", ex->opts.textfile_path, strerror(-rc));
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

/* The clock of the schedule (and of its condition variable's timed waits). */
static double monotonic_sec(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
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

/* Writes the textfile and pushes on their schedules until stopped. */
static void *schedule_thread(void *arg)
{
    exporters *ex = arg;
    double next_textfile = monotonic_sec() + ex->textfile_period_sec;
    double next_push = monotonic_sec() + ex->opts.push_interval_sec;
    pthread_mutex_lock(&ex->lock);
    while (!ex->stopping) {
        double now = monotonic_sec();
        int textfile_due = ex->opts.textfile_path && now >= next_textfile;
        int push_due = ex->pusher && ex->opts.push_interval_sec > 0 && now >= next_push;
        if (textfile_due || push_due) {
            pthread_mutex_unlock(&ex->lock); /* rendering takes it; a push may take seconds */
            if (textfile_due) {
                write_textfile(ex);
                next_textfile = now + ex->textfile_period_sec;
            }
            if (push_due) {
                push(ex);
                next_push = now + ex->opts.push_interval_sec;
            }
            pthread_mutex_lock(&ex->lock);
            continue;
        }
        double wait = 3600;
        if (ex->opts.textfile_path && next_textfile - now < wait)
            wait = next_textfile - now;
        if (ex->pusher && ex->opts.push_interval_sec > 0 && next_push - now < wait)
            wait = next_push - now;
        struct timespec until = deadline_after(wait);
        pthread_cond_timedwait(&ex->wake, &ex->lock, &until);
    }
    pthread_mutex_unlock(&ex->lock);
    return NULL;
}

static void stop_schedule(exporters *ex)
{
    if (!ex->thread_started)
        return;
    pthread_mutex_lock(&ex->lock);
    ex->stopping = 1;
    pthread_cond_signal(&ex->wake);
    pthread_mutex_unlock(&ex->lock);
    pthread_join(ex->thread, NULL);
    ex->thread_started = 0;
}

static int start_schedule(exporters *ex)
{
    if (!ex->opts.textfile_path && !(ex->pusher && ex->opts.push_interval_sec > 0))
        return 0; /* nothing on a schedule */
    int rc = pthread_create(&ex->thread, NULL, schedule_thread, ex);
    if (rc != 0)
        return -rc;
    ex->thread_started = 1;
    return 0;
}

static void free_exporters(exporters *ex)
{
    stop_schedule(ex);
    metrics_server_stop(ex->server);
    pusher_free(ex->pusher);
    pthread_cond_destroy(&ex->wake);
    pthread_mutex_destroy(&ex->lock);
    free(ex);
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
    pthread_condattr_t attr; /* timed waits on the clock of the schedule */
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&ex->wake, &attr);
    pthread_condattr_destroy(&attr);
    command_label(argv0, pid, ex->command, sizeof ex->command);
    ex->labels[0] = (resmon_label){"command", ex->command};
    memcpy(ex->labels + 1, o->labels, o->label_count * sizeof o->labels[0]);
    ex->label_count = 1 + o->label_count;
    ex->textfile_period_sec = sample_interval_sec > 1 ? sample_interval_sec : 1;

    /* The threads started here (libmicrohttpd's, the schedule's, libcurl's
     * resolver) block the signals resmon forwards, so they reach the main
     * thread and cut its waits (and the linger) short. */
    sigset_t forwarded, previous;
    sigemptyset(&forwarded);
    sigaddset(&forwarded, SIGINT);
    sigaddset(&forwarded, SIGTERM);
    sigaddset(&forwarded, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &forwarded, &previous);
    int rc = 0;
    if (o->textfile_path && (rc = textfile_check(o->textfile_path)) < 0)
        snprintf(err, sizeof err, "cannot write textfile '%s': %s", o->textfile_path, strerror(-rc));
    else if (o->push_url &&
             !(ex->pusher = pusher_new(o->push_url, o->push_job, o->labels, o->label_count, o->push_timeout_sec, err,
                                       sizeof err)))
        rc = -1;
    else if (o->serve_address && !(ex->server = metrics_server_start(o->serve_address, ex, err, sizeof err)))
        rc = -1;
    else if ((rc = start_schedule(ex)) < 0)
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
        ex->monitor = NULL;
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

void exporters_finish(exporters *ex, const resmon_summary *final)
{
    if (!ex)
        return;
    stop_schedule(ex);
    pthread_mutex_lock(&ex->lock);
    if (final) {
        ex->final = *final;
        ex->have_final = 1;
    }
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
