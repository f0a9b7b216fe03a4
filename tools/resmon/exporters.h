/*
 * exporters.h -- the command's Prometheus outputs: a scrape endpoint
 * (--serve), a Pushgateway client (--push) and a node_exporter textfile
 * (--textfile), all rendering the one monitor through the library's
 * resmon_monitor_exposition.
 *
 * The exporters read the monitor's snapshot (summary and latest sample under
 * the monitor's lock, a copy of a few hundred bytes); they never run on the
 * sampler thread, so a slow scraper or a hung Pushgateway cannot delay a
 * sample.
 */
#ifndef RESMON_EXPORTERS_H
#define RESMON_EXPORTERS_H

#include "resmon.h"

#include <stddef.h>
#include <sys/types.h>

#define EXPORTER_MAX_LABELS 32

typedef struct exporter_options {
    const char *serve_address;  /* --serve HOST:PORT; NULL: no endpoint */
    double serve_linger_sec;    /* --serve-linger: keep serving the final values */
    const char *push_url;       /* --push: the Pushgateway's base URL */
    const char *push_job;       /* --push-job, default "resmon" */
    double push_interval_sec;   /* --push-interval; 0: at the end only */
    double push_timeout_sec;    /* --push-timeout, default 5 */
    const char *textfile_path;  /* --textfile */
    resmon_label labels[EXPORTER_MAX_LABELS]; /* --label KEY=VALUE, pointing into argv */
    size_t label_count;
} exporter_options;

/* ---- command line (options.c calls these) ---- */

/* getopt_long entries of the exporter options; their values lie above every
 * other option's. */
enum exporter_option {
    EXPORTER_OPT_SERVE = 1024,
    EXPORTER_OPT_SERVE_LINGER,
    EXPORTER_OPT_PUSH,
    EXPORTER_OPT_PUSH_INTERVAL,
    EXPORTER_OPT_PUSH_JOB,
    EXPORTER_OPT_PUSH_TIMEOUT,
    EXPORTER_OPT_TEXTFILE,
    EXPORTER_OPT_LABEL,
    EXPORTER_OPT_FIRST = EXPORTER_OPT_SERVE,
    EXPORTER_OPT_LAST = EXPORTER_OPT_LABEL
};
#define EXPORTER_LONG_OPTIONS                                              \
    {"serve", required_argument, NULL, EXPORTER_OPT_SERVE},                \
    {"serve-linger", required_argument, NULL, EXPORTER_OPT_SERVE_LINGER},  \
    {"push", required_argument, NULL, EXPORTER_OPT_PUSH},                  \
    {"push-interval", required_argument, NULL, EXPORTER_OPT_PUSH_INTERVAL},\
    {"push-job", required_argument, NULL, EXPORTER_OPT_PUSH_JOB},          \
    {"push-timeout", required_argument, NULL, EXPORTER_OPT_PUSH_TIMEOUT},  \
    {"textfile", required_argument, NULL, EXPORTER_OPT_TEXTFILE},          \
    {"label", required_argument, NULL, EXPORTER_OPT_LABEL}

/* The --help section of these options. */
extern const char exporter_usage_text[];

void exporter_options_init(exporter_options *o);
/* Takes one exporter option (opt from getopt_long).  Returns 0, or -1 with a
 * sentence in err. */
int exporter_parse_option(exporter_options *o, int opt, char *arg, char *err, size_t errcap);
/* Checks the options together once all are parsed.  0 or -1 with err. */
int exporter_options_check(const exporter_options *o, char *err, size_t errcap);

/* ---- the running exporters (main.c calls these) ---- */

typedef struct exporters exporters;

/* Starts what the options ask for -- binds the endpoint, checks that the
 * textfile's directory is writable, prepares the push -- before the command
 * starts, so a port in use is a usage error.  The command label is argv0's
 * basename, or the comm of pid when argv0 is NULL.  Returns NULL with
 * *out_none = 1 when nothing is asked for; NULL with *out_none = 0 after
 * printing one line on failure. */
exporters *exporters_start(const exporter_options *o, double sample_interval_sec, const char *argv0,
                           pid_t pid, int *out_none);

/* Renders from this monitor from now on.  Accepts NULLs. */
void exporters_attach(exporters *ex, const resmon_monitor *m);

/* Before the monitor is freed: keeps its final state and lets go of it. */
void exporters_detach(exporters *ex, const resmon_monitor *m);

/* The run is over: render final (the summary with the kernel's exact
 * figures) and, when have_exit, the command's exit status (as the shell
 * sees it), write the textfile and push a last time, serve for the linger
 * time, then stop and free everything.  A push in flight is abandoned for
 * the final one, so this returns at most --push-timeout plus about a second
 * after it is called (plus the linger).  Accepts NULL. */
void exporters_finish(exporters *ex, const resmon_summary *final, int have_exit, int exit_status);

/* Stops and frees without a final push (nothing ran).  Accepts NULL. */
void exporters_discard(exporters *ex);

#endif
