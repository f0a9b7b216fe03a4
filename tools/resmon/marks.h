/*
 * marks.h -- marks from the command's programs: the channel and resmon mark
 * (marks.c).
 */
#ifndef RESMON_MARKS_H
#define RESMON_MARKS_H

#include "resmon.h"

#include <stddef.h>

/* The environment variable naming the marks socket to the command. */
#define RESMON_MARK_ENV "RESMON_MARK_SOCKET"
#define RESMON_MARK_DROPPED_ENV "RESMON_MARK_DROPPED" /* the drop counter: its name is a secret */
typedef struct marks_channel marks_channel;
/* Opens the channel and names it in resmon's environment (the command
 * inherits it).  NULL, with a line's worth in why, when it cannot. */
marks_channel *marks_open(char *why, size_t cap);
/* Hands every mark received from now on to m.  0 or -errno. */
int marks_start(marks_channel *c, resmon_monitor *m);
/* From the sample callback, on the sampler's thread: hands what was sent so
 * far to the monitor, so that a window the command's exit ends takes every
 * mark sent before the exit (the receiver thread may not have run yet). */
void marks_take_queued(marks_channel *c);
/* Takes what was sent so far and stops receiving (before the monitor stops). */
void marks_drain(marks_channel *c);
/* Drains, removes the socket and waits (boundedly) for every sender that
 * may still count a drop: marks_dropped is final from here. */
void marks_seal(marks_channel *c);
/* Marks dropped (by a full channel or refused by the library), and taken. */
unsigned long long marks_dropped(marks_channel *c);
unsigned long long marks_taken(const marks_channel *c);
/* Removes the channel and its directory; accepts NULL. */
void marks_close(marks_channel *c);
/* 1 when name is a valid phase name (resmon_monitor_mark's rule). */
int mark_name_valid(const char *name);
/* resmon mark NAME: argv[0] is "mark".  Returns the exit status. */
int mark_main(int argc, char **argv);

#endif
