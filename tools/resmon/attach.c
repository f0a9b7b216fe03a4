/*
 * attach.c -- monitoring a process resmon did not start (--pid).
 *
 * resmon refuses what it cannot monitor before it starts (no such process,
 * a kernel thread, a process that has already exited), watches the target
 * through a pidfd so that its exit ends the run at once rather than at the
 * next sample slot, and leaves the target untouched: its kernel peak-RSS
 * mark is never reset unless --reset-peak asks for it (a program reading
 * its own ru_maxrss, or /usr/bin/time around it, would see the reset), so
 * the exact peak reported is the target's lifetime peak.
 */
#include "cli.h"
#include "internal.h"
#include "procfs.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Why pid cannot be monitored, or NULL when it can. */
static const char *unmonitorable(pid_t pid)
{
    char path[32];
    snprintf(path, sizeof path, "%d", (int)pid);
    int proc = open(rm__proc_root(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int dir = proc < 0 ? -1 : openat(proc, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (proc >= 0)
        close(proc);
    if (dir < 0)
        return errno == ENOENT ? "no such process" : strerror(errno);
    const char *why = NULL;
    char text[1024];
    rm__proc_stat st;
    uint64_t size_pages, resident_pages;
    ssize_t n = rm__read_file_at(dir, "stat", text, sizeof text);
    if (n > 0 && rm__parse_stat(text, (size_t)n, &st) == 0 && (st.state == 'Z' || st.state == 'X')) {
        why = "it has already exited (a zombie its parent has not reaped): nothing is left to measure";
    } else {
        n = rm__read_file_at(dir, "statm", text, sizeof text);
        if (n > 0 && rm__parse_statm(text, (size_t)n, &size_pages, &resident_pages) == 0 && size_pages == 0)
            why = "it is a kernel thread, which has no memory of its own to measure";
    }
    close(dir);
    return why;
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
    int pidfd = open_pidfd(o->pid);
    sigset_t waiting_mask;
    signals_block_forwarded(&waiting_mask);
    while (!signals_received() && resmon_monitor_running(m)) {
        double left = -1; /* forever */
        if (o->duration_sec > 0) {
            left = o->duration_sec - (rm__now_sec() - start);
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

int attach_process(const cli_options *o, resmon_options monitor_opts, run_result *r)
{
    const char *why = unmonitorable(o->pid);
    if (why) {
        fprintf(stderr, "resmon: cannot monitor process %d: %s\n", (int)o->pid, why);
        return EXIT_USAGE;
    }
    signals_prepare(); /* nothing is forwarded: resmon did not start the target */
    monitor_opts.pid = o->pid;
    monitor_opts.keep_peak_mark = !o->reset_peak;
    resmon_monitor *m = NULL;
    int rc = resmon_monitor_new(&m, &monitor_opts);
    if (rc == 0)
        rc = resmon_monitor_start(m);
    if (rc < 0) {
        fprintf(stderr, "resmon: cannot monitor process %d: %s\n", (int)o->pid,
                rc == -ESRCH ? "no such process" : resmon_strerror(rc));
        resmon_monitor_free(m);
        return EXIT_USAGE;
    }
    r->start_wall_epoch = cli_realtime_sec();
    double start = rm__now_sec();
    wait_for_end(o, m, start);
    resmon_monitor_stop(m);
    r->wall_sec = rm__now_sec() - start;
    r->interrupted = signals_received() != 0;
    resmon_monitor_get_summary(m, &r->summary, sizeof r->summary);
    resmon_monitor_free(m);
    return 0;
}
