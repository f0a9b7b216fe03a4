/*
 * exporter_options.c -- the Prometheus outputs' options: --serve, --push,
 * --textfile, --label and their companions, and their --help section.
 */
#include "exporter_options.h"
#include "option_values.h"
#include "push.h"
#include "text_output.h"
#include "utf8.h"

#include <stdio.h>
#include <string.h>

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
