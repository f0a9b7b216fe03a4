/*
 * fork_generation.h -- which process, across forks, a thread belongs to.
 *
 * A monitor's threads live in the process that started them; a forked child
 * has a copy of the monitor and none of its threads.  A pid does not tell
 * the two apart for good: a grandchild can be given the pid its forebear
 * had (pids wrap once the forebear ended; a new pid namespace hands out the
 * same numbers again, and a container's init is pid 1 in each).  The fork
 * generation does: a counter every fork(2) through the C library increments
 * in the child (pthread_atfork), so a copy made by a fork never matches a
 * generation recorded before it.  A raw clone(2) and glibc's _Fork()
 * bypass the handlers: callers check the pid as well.
 */
#ifndef RESMON_FORK_GENERATION_H
#define RESMON_FORK_GENERATION_H

/* The calling process's fork generation.  The first call registers the
 * handler, so a generation recorded after it is told from any later fork's. */
unsigned rm__fork_generation(void);

#endif
