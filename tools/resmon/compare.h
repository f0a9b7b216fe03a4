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

/* The same, for a caller that is not the command (the Python binding's
 * _resmon.compare): the report is written to out and every message to err,
 * neither closed; --help is written to out and returns 0.  Nothing else is
 * printed and nothing exits.  Not reentrant: getopt's state and the streams
 * are the process's, so one call at a time (the binding holds the GIL).  "-"
 * as an input is the process's standard input; standard output is not
 * checked against the inputs, since the report does not go there. */
int compare_run(int argc, char **argv, FILE *out, FILE *err);

#endif
