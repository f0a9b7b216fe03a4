/*
 * reader_wait.c -- the bounded, stop-aware wait of the end of a run for the
 * readers of its outputs (see reader_wait.h).
 *
 * A pipe's or FIFO's reader that stopped reading would hold a write(2) for
 * ever, SIGTERM included (a caught signal only restarts it).  So an output
 * to anything but a regular file is written without blocking, and where the
 * reader has no room this waits, with poll(2), for room, for a stop, or for
 * the deadline -- which every output of the end shares.
 */
#include "reader_wait.h"
#include "clocks.h"

#include <errno.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

/* How often a wait for room looks at what the reader took meanwhile. */
#define QUEUE_LOOK_SEC 0.2

/* The bytes written to fd and not yet read: a pipe's or FIFO's contents
 * (FIONREAD), a socket's or terminal's output queue (TIOCOUTQ, the same
 * request as SIOCOUTQ; a socket's FIONREAD is what it received); -1 when
 * not known.  A Unix socket's queue falls only when its reader has taken a
 * whole buffer (the memory charged to the writer), a pty's reads 0: there
 * a steady slow reader still shows no progress (eleventh review). */
static int queued(int fd)
{
    struct stat st;
    int n;
    if (fstat(fd, &st) != 0)
        return -1;
    unsigned long request = S_ISFIFO(st.st_mode) ? FIONREAD : S_ISSOCK(st.st_mode) || isatty(fd) ? TIOCOUTQ : 0;
    if (!request || ioctl(fd, request, &n) != 0)
        return -1;
    return n;
}

void reader_wait_init(reader_wait *w, int stop_fd, int stopped)
{
    w->stop_fd = stop_fd;
    w->stopped = stopped;
    w->deadline = 0;
    w->gave_up = 0;
}

static void stop(reader_wait *w, double now)
{
    /* The pipe is drained here, where it is waited on: the stop is kept in
     * w, and a byte left behind would wake every later poll at once. */
    char bytes[64];
    while (w->stop_fd >= 0 && read(w->stop_fd, bytes, sizeof bytes) > 0)
        ;
    w->stopped = 1;
    double grace = now + READER_STOP_GRACE_SEC;
    if (w->deadline == 0 || grace < w->deadline)
        w->deadline = grace;
}

/* Waits for events on fd, for a stop, or for the deadline.  Waiting for
 * room, a reader that takes bytes moves the deadline too: a pipe frees room
 * for a write a page at a time, so a steady reader slower than a page in
 * READER_STUCK_SEC (~820 B/s: a shell's read loop, pv -L) let no write
 * through and was given up as stopped (tenth review of issue 28). */
static int wait_for(reader_wait *w, int fd, short events)
{
    int before = events == POLLOUT ? queued(fd) : -1;
    for (;;) {
        double now = clock_monotonic_sec();
        if (w->deadline == 0)
            w->deadline = now + (w->stopped ? READER_STOP_GRACE_SEC : READER_STUCK_SEC);
        double left = w->deadline - now;
        if (w->gave_up || left <= 0) {
            w->gave_up = 1;
            return 0;
        }
        double look = before >= 0 && left > QUEUE_LOOK_SEC ? QUEUE_LOOK_SEC : left;
        struct pollfd p[2] = {{.fd = fd, .events = events}, {.fd = w->stopped ? -1 : w->stop_fd, .events = POLLIN}};
        int ready = poll(p, 2, (int)(look * 1000) + 1);
        if (ready == 0 && before >= 0) {
            int now_queued = queued(fd);
            if (now_queued >= 0 && now_queued < before)
                reader_wait_progress(w); /* the reader took some */
            before = now_queued;
            continue;
        }
        if (ready < 0 && errno == EINTR)
            continue; /* a signal: its byte is in the stop pipe by now */
        if (ready < 0)
            return 0;
        if (ready > 0 && p[1].revents)
            stop(w, clock_monotonic_sec());
        if (ready > 0 && p[0].revents)
            return 1; /* room, or an error (POLLERR: the reader went away) for write(2) to name */
    }
}

int reader_wait_writable(reader_wait *w, int fd)
{
    return wait_for(w, fd, POLLOUT);
}

int reader_wait_exited(reader_wait *w, int pidfd)
{
    return wait_for(w, pidfd, POLLIN);
}

void reader_wait_progress(reader_wait *w)
{
    if (!w->stopped && !w->gave_up)
        w->deadline = 0;
}

const char *reader_wait_why(const reader_wait *w)
{
    /* After a signal the reader may have been reading, only slower than the
     * grace allowed: "stopped reading" would blame it for resmon's cut. */
    return w->stopped ? "a signal cut the wait for the reader short" : "the reader stopped reading";
}
