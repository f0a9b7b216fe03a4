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
/* What run_end_leftovers did: ended, the processes it ended (each once:
 * those they started too, which become resmon's as their parent ends);
 * killed, SIGKILLs sent; cut_short, a signal to resmon cut the grace short.
 * When some could not be ended: unheeded of them were sent SIGKILL and
 * still run (uninterruptible sleep, a frozen cgroup), held ended but are
 * zombies a tracer holds (only it can release them), and refused refused
 * the signal (EPERM). */
typedef struct leftover_outcome {
    int ended, killed, cut_short;
    int unheeded, held, refused;
} leftover_outcome;

/* Between two runs of --repeat: gives the processes the last run left
 * running (adopted orphans) grace_sec to end by themselves, reaping each,
 * then ends the rest -- SIGTERM, and SIGKILL for what still runs a second
 * later -- so that the next run counts none of them and a daemon the
 * command started never holds the repeat.  A signal to resmon (the repeat
 * stops) cuts the grace short: the rest are ended at once, as they would
 * have been after it, not left running past resmon's exit.  Returns 1 when
 * none is left, 0 when some could not be ended (*out says why). */
int run_end_leftovers(double grace_sec, leftover_outcome *out);
/* How long run_end_leftovers sends SIGKILL (every 0.1 s) to what still runs. */
#define LEFTOVER_KILL_SEC 10
/* Notes the limits resmon started with, for the commands it runs (call
 * first, before any monitor). */
void run_note_start_limits(void);
/* The line said at the command's exit when left (> 0) processes it
 * started still run. */
void run_say_orphans_left(int left);

#endif
