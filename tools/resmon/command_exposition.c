/*
 * command_exposition.c -- what the Prometheus outputs render (see
 * command_exposition.h).  Like the rest of the command, only the library's
 * public API is used.
 */
#include "command_exposition.h"
#include "utf8.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void command_exposition_init(command_exposition *ex)
{
    memset(ex, 0, sizeof *ex);
    pthread_mutex_init(&ex->lock, NULL);
}

void command_exposition_destroy(command_exposition *ex)
{
    pthread_mutex_destroy(&ex->lock);
}

void command_exposition_attach(command_exposition *ex, const resmon_monitor *m)
{
    if (!m)
        return;
    pthread_mutex_lock(&ex->lock);
    ex->monitor = m;
    pthread_mutex_unlock(&ex->lock);
}

void command_exposition_detach(command_exposition *ex, const resmon_monitor *m)
{
    if (!m)
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

void command_exposition_end(command_exposition *ex, const resmon_summary *final, int have_exit, int exit_status)
{
    pthread_mutex_lock(&ex->lock);
    if (final) {
        ex->final = *final;
        ex->have_final = 1;
    }
    ex->ended = 1;
    ex->have_exit = have_exit;
    ex->exit_status = exit_status;
    pthread_mutex_unlock(&ex->lock);
}

static void put_bytes(void *out, const char *bytes, size_t n)
{
    fwrite(bytes, 1, n, out);
}

static void put_series(FILE *out, const command_exposition *ex, const char *name, const char *extra_name,
                       const char *extra_value, int value)
{
    fputs(name, out);
    for (size_t i = 0; i < ex->label_count; i++) {
        fprintf(out, "%s%s=\"", i ? "," : "{", ex->labels[i].name);
        rm__label_value_write(ex->labels[i].value, put_bytes, out);
        fputc('"', out);
    }
    if (extra_name) {
        fprintf(out, "%s%s=\"", ex->label_count ? "," : "{", extra_name);
        rm__label_value_write(extra_value, put_bytes, out);
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
static void put_command_series(FILE *out, const command_exposition *ex, resmon_exposition_format format)
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
static char *render_library(command_exposition *ex, resmon_exposition_format format, size_t *len)
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

char *command_exposition_render(void *user, resmon_exposition_format format, size_t *len)
{
    command_exposition *ex = user;
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

