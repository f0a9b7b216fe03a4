/*
 * attach.c -- monitoring a process resmon did not start (--pid).
 *
 * resmon refuses what it cannot monitor before it starts (no such process,
 * a kernel thread, a process that has already exited: the library's
 * resmon_process_check says which), watches the target
 * through a pidfd so that its exit ends the run at once rather than at the
 * next sample slot, and leaves the target untouched: its kernel peak-RSS
 * mark is never reset unless --reset-peak asks for it (a program reading
 * its own ru_maxrss, or /usr/bin/time around it, would see the reset), so
 * the exact peak reported is the target's lifetime peak.
 */
#include "attach.h"
#include "cgroup_run.h"
#include "cli.h"
#include "clocks.h"
#include "options.h"
#include "outputs.h"
#include "run_result.h"
#include "signals.h"
#include "text_output.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int attach_check_target(pid_t pid)
{
    int rc = resmon_process_check(pid);
    if (rc == 0)
        return 0;
    fprintf(stderr, "resmon: cannot monitor process %d: %s\n", (int)pid, resmon_strerror(rc));
    return EXIT_USAGE;
}

/* A descriptor that becomes readable when pid exits; -1 where the kernel has
 * no pidfd (before 5.3): the caller then looks every 20 ms. */
static int open_pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    (void)pid;
    return -1;
#endif
}

/* Waits until the target exits, --duration passes, resmon gets a signal, or
 * the monitor ends by itself.  Forwarded signals are blocked outside ppoll,
 * so one that arrives just before the wait still ends it. */
static void wait_for_end(const cli_options *o, resmon_monitor *m, double start)
{
    int pidfd = o->pid ? open_pidfd(o->pid) : -1; /* a watched cgroup has no process whose exit ends it */
    sigset_t waiting_mask;
    signals_block_forwarded(&waiting_mask);
    while (!signals_received() && resmon_monitor_running(m)) {
        double left = -1; /* forever */
        if (o->duration_sec > 0) {
            left = o->duration_sec - (clock_monotonic_sec() - start);
            if (left <= 0)
                break;
        }
        if (pidfd < 0 && (left < 0 || left > 0.02))
            left = 0.02;
        struct timespec timeout = {(time_t)left, (long)((left - (double)(time_t)left) * 1e9)};
        struct pollfd exited = {.fd = pidfd, .events = POLLIN};
        int ready = ppoll(pidfd >= 0 ? &exited : NULL, pidfd >= 0 ? 1 : 0, left < 0 ? NULL : &timeout,
                          &waiting_mask);
        if (ready > 0)
            break; /* the target has exited */
    }
    sigprocmask(SIG_SETMASK, &waiting_mask, NULL);
    if (pidfd >= 0)
        close(pidfd);
}

int attach_process(const cli_options *o, outputs *out, run_result *r)
{
    signals_prepare(); /* nothing is forwarded: resmon did not start the target */
    resmon_options monitor_opts = outputs_monitor_options(o, out);
    monitor_opts.pid = o->pid;
    monitor_opts.keep_peak_mark = !o->reset_peak;
    monitor_opts.reset_peak_mark = o->reset_peak;
    monitor_opts.cgroup_members = o->watch_cgroup; /* --cgroup alone: its processes are the tree */
    cgroup_counters given_at_start = {0}; /* --cgroup PATH: its counters before the window */
    if (o->cgroup_path)
        cgroup_counters_at_start(o->cgroup_path, &given_at_start);
    resmon_monitor *m = NULL;
    int rc = outputs_monitor_new(out, &monitor_opts, &m);
    if (rc == 0)
        rc = resmon_monitor_start(m);
    if (rc < 0) {
        if (o->watch_cgroup) {
            fputs("resmon: cannot list the processes of cgroup ", stderr);
            print_printable(stderr, o->cgroup_path);
            fprintf(stderr, ": %s\n", resmon_strerror(rc));
        } else {
            fprintf(stderr, "resmon: cannot monitor process %d: %s\n", (int)o->pid, resmon_strerror(rc));
        }
        outputs_monitor_free(out, m);
        return EXIT_USAGE;
    }
    r->start_wall_epoch = outputs_start_wall_epoch(m);
    double start = clock_monotonic_sec();
    outputs_command_started(out);
    wait_for_end(o, m, start);
    resmon_monitor_stop(m);
    r->wall_sec = clock_monotonic_sec() - start;
    r->interrupted = signals_received() != 0;
    resmon_monitor_get_summary(m, &r->summary, sizeof r->summary);
    if (o->cgroup_path)
        cgroup_counters_since(&given_at_start, &r->summary);
    outputs_monitor_free(out, m);
    return 0;
}
