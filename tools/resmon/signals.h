/*
 * signals.h -- the signals resmon forwards to the command, and those it blocks
 * (signals.c).
 */
#ifndef RESMON_SIGNALS_H
#define RESMON_SIGNALS_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

/* First of all in main, before any thread starts: records the signal mask
 * resmon was started with (the command's, see signals_restore_for_exec) and
 * blocks SIGPIPE and SIGXFSZ for resmon's every thread, so a write to a pipe
 * without a reader (stderr, stdout, a FIFO) fails with EPIPE, and one past
 * the file-size limit with EFBIG, instead of killing resmon with the exit
 * status and the outputs. */
void signals_block_write_faults(void);
/* Call once before starting anything: SIGCHLD to its default (an ignored
 * SIGCHLD loses the exit status), the forwarded signals (SIGINT, SIGTERM,
 * SIGHUP, SIGQUIT) unblocked and caught unless ignored at start. */
void signals_prepare(void);
/* Where a caught signal goes: the process group and the pid (0: nowhere). */
void signals_forward_to(pid_t pid, pid_t group);
/* A descriptor that becomes readable once a forwarded signal is received
 * (after signals_prepare; -1 before, or when no pipe could be made): a wait
 * polls it to end on SIGTERM or SIGINT.  The wait that sees it drains it
 * and keeps the stop itself (reader_wait.c), so a later poll is not woken
 * by an old byte; signals_received() says a signal came before a wait began. */
int signals_stop_fd(void);
/* The last forwarded signal resmon received, or 0. */
int signals_received(void);
/* Blocks the forwarded signals in the calling thread, storing its previous
 * mask (for ppoll, and around starting threads that must not take them). */
void signals_block_forwarded(sigset_t *previous);
/* Which forwarded signals were ignored when resmon started (a non-interactive
 * shell's background job ignores SIGINT and SIGQUIT): their names, comma
 * separated, into names; returns how many. */
int signals_ignored_at_start(char *names, size_t cap);
/* In the forked child before exec: the signal mask resmon was started with. */
void signals_restore_for_exec(void);

#endif
