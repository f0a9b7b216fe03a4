/*
 * taskstats.h -- the kernel's record of every task as it exits.
 *
 * Linux taskstats (generic netlink family "TASKSTATS") sends one message per
 * exiting task to every socket registered for the CPU it exited on: its own
 * CPU, peak RSS, I/O, faults, context switches, command name, parent and
 * exit status -- exact, however short the task lived.  Registering needs
 * CAP_NET_ADMIN.  This module owns the socket and a reader thread and hands
 * each record to a callback; it knows nothing of runs or outputs, so it can
 * move into the library whole.
 */
#ifndef RESMON_TASKSTATS_H
#define RESMON_TASKSTATS_H

#include <linux/taskstats.h>

typedef struct taskstats_listener taskstats_listener;

/* Called on the listener's thread for each exited task's record (a thread's
 * or a single-threaded process's: TASKSTATS_TYPE_AGGR_PID).  version is the
 * record's own (ts->version): fields newer than it read as zero.  ts NULL:
 * the kernel dropped records here (an overrun), so what was concluded from
 * records not seen -- that a process has not ended -- no longer holds. */
typedef void (*taskstats_callback)(const struct taskstats *ts, void *user);

/* Opens the socket, resolves the family and registers for every online CPU,
 * then reads records on a thread of its own until taskstats_stop.  Records
 * of tasks that exit after the call returns are delivered (a child forked
 * and reaped here, whose record must come, shows it).  Returns 0, or
 * -EPERM without CAP_NET_ADMIN, -ENOENT where the kernel has no taskstats
 * (or not in this network namespace), -ENETUNREACH where it registers but
 * delivers nothing (another network namespace), another -errno. */
int taskstats_start(taskstats_callback callback, void *user, taskstats_listener **out);

/* Delivers what the socket still holds (every task that exited before the
 * call), deregisters, joins the thread and frees l; accepts NULL.  Returns
 * the overruns: the times the kernel dropped records because the socket's
 * buffer was full (ENOBUFS; the reader never blocks the kernel, it loses
 * records and says so).  The kernel does not say how many records one
 * overrun lost: a lower bound of the records lost. */
unsigned long long taskstats_stop(taskstats_listener *l);

#endif
