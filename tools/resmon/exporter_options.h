/*
 * exporter_options.h -- the Prometheus outputs' options (options.c parses
 * the command line through these; exporters.h runs what they ask for).
 */
#ifndef RESMON_EXPORTER_OPTIONS_H
#define RESMON_EXPORTER_OPTIONS_H

#include "resmon.h"

#include <stddef.h>

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

#endif
