/*
 * signals.c -- what resmon does with the signals it receives, and the signal
 * state it hands to the command.
 *
 * resmon may be started with signals ignored or blocked by whoever launched
 * it (a Python launcher ignoring SIGCHLD, a shell blocking signals around a
 * fork).  An ignored SIGCHLD makes the kernel reap the command behind
 * resmon's back, so wait4 fails with ECHILD and the exit status is lost:
 * SIGCHLD is always set back to its default.  The signals resmon forwards
 * are unblocked in resmon itself, while the command gets the mask resmon was
 * started with, as any program exec'd by its launcher would.  A forwarded
 * signal that was ignored at start stays ignored for both (nohup, or a
 * non-interactive shell's background job, chose that for the command).
 *
 * SIGPIPE and SIGXFSZ are blocked in resmon from its first instruction on,
 * on every thread (each inherits the mask): a write to a pipe without a
 * reader -- stderr closed by whoever reads it, a FIFO output, stdout --
 * then fails with EPIPE where it is made, and a write past the file-size
 * limit (ulimit -f) with EFBIG, each named like any failed write; neither
 * kills resmon with the command's exit status and the outputs still to
 * write (`ulimit -f 0` made resmon die of SIGXFSZ, status 153 for the
 * command's 3, its temporary file left).  The command gets the mask resmon
 * was started with (a blocked signal's pending state is not inherited by a
 * forked child), so it sees both as its launcher meant.
 */
#include "signals.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The one list of the signals resmon forwards: caught here, blocked around
 * ppoll (attach.c), and blocked in every thread the exporters start
 * (exporters.c, through signals_block_forwarded), so they reach the main
 * thread and cut its waits short. */
static const int forwarded_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
#define FORWARDED_COUNT (sizeof forwarded_signals / sizeof forwarded_signals[0])

static volatile sig_atomic_t received_signal;
static volatile sig_atomic_t unforwarded_signal; /* caught while there was nowhere to send it */
/* A pipe the handler writes a byte to: a wait on a stuck output (a FIFO
 * whose reader stopped reading) polls its read end, ends on a signal, and
 * drains it (reader_wait.c). */
static int stop_pipe[2] = {-1, -1};
static pid_t resmon_pid; /* the process that caught the signals (signals_prepare) */
static volatile pid_t forward_pid;   /* the command */
static volatile pid_t forward_group; /* its process group */
static sigset_t mask_at_start;
static int mask_recorded;

void signals_block_write_faults(void)
{
    sigprocmask(SIG_SETMASK, NULL, &mask_at_start);
    mask_recorded = 1;
    sigset_t write_faults;
    sigemptyset(&write_faults);
    sigaddset(&write_faults, SIGPIPE);
    sigaddset(&write_faults, SIGXFSZ);
    sigprocmask(SIG_BLOCK, &write_faults, NULL);
}

/* Sends the signal to the command's whole process group (its descendants,
 * as timeout(1) does) and to the command itself when it has left the group
 * (setpgid) -- only then, since a second SIGINT means "force quit" to some
 * programs.  A signal from the terminal is forwarded too: it reaches resmon
 * only when resmon, not the command, is in the terminal's foreground group
 * (for instance after a shell's `fg`), so the command never gets it twice
 * from the terminal. */
static void on_signal(int sig)
{
    int saved_errno = errno;
    /* A child forked but not yet exec'd (the held command, a converter)
     * inherits this handler: there a signal forwarded to its group would be
     * caught and forgotten, and the command then run to its end with resmon
     * exiting 0 (a SIGTERM a few ms after the start).  It gets what it would
     * have got as the program it is about to become: the default action,
     * once this handler returns (the signal is blocked until then). */
    if (getpid() != resmon_pid) {
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        sigaction(sig, &dfl, NULL);
        raise(sig);
        errno = saved_errno;
        return;
    }
    received_signal = sig;
    if (stop_pipe[1] >= 0 && write(stop_pipe[1], "", 1) < 0) {
        /* full: a byte is there already */
    }
    pid_t group = forward_group, pid = forward_pid;
    if (group <= 0 && pid <= 0)
        unforwarded_signal = sig;
    if (group > 0)
        kill(-group, sig);
    if (pid > 0 && (group <= 0 || getpgid(pid) != group))
        kill(pid, sig);
    errno = saved_errno;
}

void signals_prepare(void)
{
    if (!mask_recorded)
        sigprocmask(SIG_SETMASK, NULL, &mask_at_start);
    resmon_pid = getpid();
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(SIGCHLD, &dfl, NULL);
    if (stop_pipe[0] < 0 && pipe2(stop_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
        stop_pipe[0] = stop_pipe[1] = -1; /* no pipe: an output's wait ends on its own bound only */

    sigset_t ours;
    sigemptyset(&ours);
    sigaddset(&ours, SIGCHLD);
    for (size_t i = 0; i < FORWARDED_COUNT; i++)
        sigaddset(&ours, forwarded_signals[i]);
    sigprocmask(SIG_UNBLOCK, &ours, NULL);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = 0; /* no SA_RESTART: waits return EINTR and look again */
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < FORWARDED_COUNT; i++) {
        struct sigaction previous;
        sigaction(forwarded_signals[i], NULL, &previous);
        if (previous.sa_handler != SIG_IGN)
            sigaction(forwarded_signals[i], &sa, NULL);
    }
}

void signals_forward_to(pid_t pid, pid_t group)
{
    /* A signal caught before there was anywhere to forward it (while the
     * command was forked and held) is sent now, so the command never runs
     * as if no signal came; blocked meanwhile, a signal arriving now is
     * forwarded once, by the handler, after the unblock. */
    sigset_t previous;
    signals_block_forwarded(&previous);
    int pending = pid > 0 || group > 0 ? unforwarded_signal : 0;
    if (pending)
        unforwarded_signal = 0;
    forward_pid = pid;
    forward_group = group;
    if (pending) {
        if (group > 0)
            kill(-group, pending);
        if (pid > 0 && (group <= 0 || getpgid(pid) != group))
            kill(pid, pending);
    }
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
}

int signals_stop_fd(void)
{
    return stop_pipe[0];
}

int signals_received(void)
{
    return received_signal;
}

void signals_block_forwarded(sigset_t *previous)
{
    sigset_t set;
    sigemptyset(&set);
    for (size_t i = 0; i < FORWARDED_COUNT; i++)
        sigaddset(&set, forwarded_signals[i]);
    pthread_sigmask(SIG_BLOCK, &set, previous); /* this thread's: others may run (the exporters start theirs) */
}

void signals_restore_for_exec(void)
{
    sigprocmask(SIG_SETMASK, &mask_at_start, NULL);
}

int signals_ignored_at_start(char *names, size_t cap)
{
    int count = 0;
    size_t used = 0;
    if (cap)
        names[0] = '\0';
    for (size_t i = 0; i < FORWARDED_COUNT; i++) {
        struct sigaction current;
        /* signals_prepare leaves an ignored one ignored and catches the rest,
         * so SIG_IGN now means ignored at start. */
        if (sigaction(forwarded_signals[i], NULL, &current) != 0 || current.sa_handler != SIG_IGN)
            continue;
        const char *name = sigabbrev_np(forwarded_signals[i]);
        int n = snprintf(names + used, cap > used ? cap - used : 0, "%sSIG%s", count ? ", " : "", name ? name : "?");
        if (n > 0)
            used += (size_t)n;
        count++;
    }
    return count;
}
