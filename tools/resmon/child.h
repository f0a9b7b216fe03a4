/*
 * child.h -- running COMMAND as resmon's child (child.c).
 */
#ifndef RESMON_CHILD_H
#define RESMON_CHILD_H

#include "options.h"
#include "outputs.h"
#include "run_result.h"

/* Runs o->argv, streaming samples to out, fills r, and returns 0 -- also
 * when the command failed, its status is in r -- or, having printed one
 * line, EXIT_USAGE, EXIT_CANNOT_EXECUTE or EXIT_NOT_FOUND when nothing ran.
 * r->have_exit is 0 when the kernel gave no exit status. */
int run_command(const cli_options *o, outputs *out, run_result *r);
/* Between two runs of --repeat: waits, unmeasured, for the processes the last
 * run left running (adopted orphans), reaping each, so that the next run
 * counts none of them; returns early when a signal arrives. */
void run_wait_leftovers(void);

#endif
