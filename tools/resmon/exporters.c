/*
 * exporters.c -- the command's Prometheus outputs while they run: the
 * endpoint, the textfile and the pushes, started before the command and
 * finished after it.
 *
 * Every output renders through command_exposition_render (the server calls
 * it back through the render callback it was given); the textfile and the
 * periodic pushes run on their own threads (periodic.h).  Like the rest of
 * the command, only the library's public API is used.
 */
#include "exporters.h"
#include "command_exposition.h"
#include "exporter_options.h"
#include "periodic.h"
#include "push.h"
#include "serve.h"
#include "signals.h"
#include "text_output.h"
#include "textfile.h"
#include "utf8.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct exporters {
    exporter_options opts;
    char command[256];
    resmon_label labels[EXPORTER_MAX_LABELS + 1]; /* command, then the user's; values valid UTF-8 */
    char *repaired[EXPORTER_MAX_LABELS + 1];      /* the values this owns (NULL: argv's own) */
    size_t label_count;

    command_exposition exposition; /* what renders */

    struct metrics_server *server;
    struct pusher *pusher;

    periodic textfile, pushes;
    textfile file;       /* --textfile's place, resolved at the start */
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

static void write_textfile(void *user)
{
    exporters *ex = user;
    size_t len;
    char *text = command_exposition_render(&ex->exposition, RESMON_EXPOSITION_PROMETHEUS, &len);
    char reason[200] = "out of memory";
    int rc = text ? textfile_write(&ex->file, text, len, reason, sizeof reason) : -ENOMEM;
    free(text);
    if (rc < 0 && !ex->textfile_failed) {
        fputs("resmon: cannot write textfile '", stderr);
        print_printable(stderr, ex->opts.textfile_path);
        fprintf(stderr, "': %s\n", reason);
    }
    ex->textfile_failed = rc < 0;
}

static void push(void *user)
{
    exporters *ex = user;
    size_t len;
    char *text = command_exposition_render(&ex->exposition, RESMON_EXPOSITION_PROMETHEUS, &len);
    if (text)
        pusher_push(ex->pusher, text, len);
    else
        fprintf(stderr, "resmon: push skipped: out of memory\n");
    free(text);
}

/* Stops both threads; a push in flight gives up at once, and the pusher is
 * ready for the final push afterwards. */
static void stop_schedule(exporters *ex)
{
    periodic_stop(&ex->textfile);
    periodic_stop(&ex->pushes);
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
        rc = periodic_start(&ex->textfile, sample_interval_sec > 1 ? sample_interval_sec : 1, write_textfile, ex,
                            "resmon-textfile");
    if (rc == 0 && ex->pusher && ex->opts.push_interval_sec > 0)
        rc = periodic_start(&ex->pushes, ex->opts.push_interval_sec, push, ex, "resmon-push");
    return rc;
}

static void free_exporters(exporters *ex)
{
    stop_schedule(ex);
    metrics_server_stop(ex->server);
    pusher_free(ex->pusher);
    command_exposition_destroy(&ex->exposition);
    textfile_close(&ex->file);
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
    ex->exposition.labels = ex->labels;
    ex->exposition.label_count = ex->label_count;
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
    ex->file.dir_fd = -1; /* nothing held until textfile_open */
    command_exposition_init(&ex->exposition);
    command_label(argv0, pid, ex->command, sizeof ex->command);

    /* The threads started here (libmicrohttpd's, the schedule's, libcurl's
     * resolver) block the signals resmon forwards, so they reach the main
     * thread and cut its waits (and the linger) short. */
    sigset_t previous;
    signals_block_forwarded(&previous);
    int rc = 0;
    if ((rc = set_labels(ex, o)) < 0)
        snprintf(err, sizeof err, "out of memory");
    else if (o->textfile_path && (rc = textfile_open(&ex->file, o->textfile_path, err, sizeof err)) < 0)
        ;
    else if (o->push_url && !(ex->pusher = pusher_new(o->push_url, o->push_job, ex->labels + 1, ex->label_count - 1,
                                                      o->push_timeout_sec, err, sizeof err)))
        rc = -1;
    else if (o->serve_address &&
             !(ex->server = metrics_server_start(o->serve_address, command_exposition_render, &ex->exposition, err, sizeof err)))
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
    if (ex)
        command_exposition_attach(&ex->exposition, m);
}

void exporters_detach(exporters *ex, const resmon_monitor *m)
{
    if (ex)
        command_exposition_detach(&ex->exposition, m);
}

/* Sleeps for the linger time; a signal (SIGINT, SIGTERM: handlers without
 * SA_RESTART) cuts it short. */
static void linger(double sec)
{
    struct timespec left = {(time_t)sec, (long)((sec - floor(sec)) * 1e9)};
    nanosleep(&left, NULL);
}

int exporters_finish(exporters *ex, const resmon_summary *final, int have_exit, int exit_status)
{
    if (!ex)
        return 0;
    stop_schedule(ex);
    command_exposition_end(&ex->exposition, final, have_exit, exit_status);
    /* The textfile's last write is the file the run leaves (with the exit
     * status): one that fails is a file not written, as any output's. */
    int rc = 0;
    if (ex->opts.textfile_path) {
        write_textfile(ex);
        rc = ex->textfile_failed ? -1 : 0;
    }
    if (ex->pusher)
        push(ex);
    if (ex->server && ex->opts.serve_linger_sec > 0)
        linger(ex->opts.serve_linger_sec);
    free_exporters(ex);
    return rc;
}

void exporters_discard(exporters *ex)
{
    if (ex)
        free_exporters(ex);
}
