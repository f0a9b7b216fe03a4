/*
 * compare.h -- `resmon compare BASE NEW`: two summaries (or two directories
 * of repeated runs) side by side, with limits on what may grow.
 */
#ifndef RESMON_COMPARE_H
#define RESMON_COMPARE_H

#include <stdio.h>

/* Runs the subcommand; argv[0] is "compare".  Returns the exit status: 0
 * every limit holds, 1 one was exceeded, 125 bad usage or an unreadable or
 * non-summary input (one line on stderr names the file and why). */
int compare_main(int argc, char **argv);

/* What a caller that is not the command (the Python binding's
 * _resmon.compare) tells the engine. */
typedef struct compare_caller {
    int utf8; /* out takes UTF-8 (check marks, en dashes), else plain ASCII ("ok:", "FAIL:") */
    /* Asked now and then while the inputs are read and judged (NULL: never);
     * non-zero stops the run, which writes nothing more and returns
     * COMPARE_INTERRUPTED.  It may be slow: the engine asks at most a few
     * hundred times a second of work, and once it said yes, never again. */
    int (*interrupted)(void *context);
    void *context;
} compare_caller;

/* compare_run's status when caller->interrupted stopped it. */
#define COMPARE_INTERRUPTED (-2)

/* The same, for such a caller: the report is written to out and every
 * message to err, neither closed; --help is written to out and returns 0.
 * Nothing else is printed and nothing exits; the process's locale is not
 * read or changed (caller->utf8 says what out takes).  Not reentrant:
 * getopt's state and the streams are the process's, so one call at a time
 * (the binding holds a lock of its own).  "-" as an input is the process's
 * standard input; standard output is not checked against the inputs, since
 * the report does not go there. */
int compare_run(int argc, char **argv, FILE *out, FILE *err, const compare_caller *caller);

#endif
