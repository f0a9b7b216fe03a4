/*
 * reader_wait.h -- the end of a run waiting for the readers of its outputs
 * that go to a pipe or a FIFO: one bound for all of them (reader_wait.c).
 *
 * Every output written at the end (the samples, the trace, the processes
 * file, the chart, the summary) goes through one reader_wait: a reader that
 * takes nothing for READER_STUCK_SEC ends the wait of every output still to
 * write, so three stuck FIFOs cost that bound once, not three times; after a
 * stop (a signal resmon received) all of them get READER_STOP_GRACE_SEC in
 * all.  A reader that takes some starts the bound again.
 */
#ifndef RESMON_READER_WAIT_H
#define RESMON_READER_WAIT_H

/* How long the readers may take nothing before resmon gives up on them. */
#define READER_STUCK_SEC 5.0
/* After a stop, what the readers get in all to take the rest. */
#define READER_STOP_GRACE_SEC 1.0

typedef struct reader_wait {
    int stop_fd;     /* readable on a stop (signals_stop_fd), drained here; -1: none */
    int stopped;     /* a stop was seen: the deadline no longer moves */
    double deadline; /* CLOCK_MONOTONIC when the wait gives up; 0: set at the next wait */
    int gave_up;     /* the deadline passed: every later wait gives up at once */
} reader_wait;

/* A wait that ends on stop_fd (-1: none) becoming readable, or at once
 * after its grace when stopped (a signal came before the end). */
void reader_wait_init(reader_wait *w, int stop_fd, int stopped);
/* Waits until fd can take more (or has an error for write to see): 1; 0
 * when the readers took nothing for READER_STUCK_SEC (since the last
 * progress, of any output), or the grace after a stop ran out. */
int reader_wait_writable(reader_wait *w, int fd);
/* Waits, within the same deadline, until pidfd (pidfd_open's) is readable:
 * its process exited (1); 0 when the deadline passed or after a stop's
 * grace -- a converter run at the end (rsvg-convert) that hangs costs the
 * end's one bound, not for ever. */
int reader_wait_exited(reader_wait *w, int pidfd);
/* A reader took some: the next wait has READER_STUCK_SEC again (not after a
 * stop, nor once the wait gave up: a later output's write into its pipe's
 * free room is no reader reading, and gave each output its own 5 s). */
void reader_wait_progress(reader_wait *w);
/* Why an output's reader was given up on, for its one line: it took
 * nothing for READER_STUCK_SEC, or a signal cut the wait to its grace. */
const char *reader_wait_why(const reader_wait *w);

#endif
