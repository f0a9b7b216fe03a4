/*
 * compare.h -- `resmon compare BASE NEW`: two summaries (or two directories
 * of repeated runs) side by side, with limits on what may grow.
 */
#ifndef RESMON_COMPARE_H
#define RESMON_COMPARE_H

/* Runs the subcommand; argv[0] is "compare".  Returns the exit status: 0
 * every limit holds, 1 one was exceeded, 125 bad usage or an unreadable or
 * non-summary input (one line on stderr names the file and why). */
int compare_main(int argc, char **argv);

#endif
