/*
 * marks.c -- phases marked by the monitored program itself: the channel
 * `resmon -- CMD` opens for it, and `resmon mark NAME`, which sends on it.
 *
 * The channel is a Unix datagram socket in a directory of its own (mkdtemp:
 * mode 0700, so only this user -- and root -- can reach it), named to the
 * command by RESMON_MARK_SOCKET; every descendant inherits the name.  A
 * mark is one datagram holding the name.  Sending never blocks and never
 * fails the workload: a full queue (net.unix.max_dgram_qlen datagrams) or a
 * channel that is gone drops the mark, and a sender that saw its mark
 * dropped appends one byte to the file "dropped" beside the socket, which
 * resmon counts.  A thread of resmon's receives the marks and hands them to
 * the monitor (resmon_monitor_mark); marks the library refuses (more than
 * RESMON_MAX_PHASES phases) are counted the same way.  resmon removes the
 * directory at the end.
 */
#include "cli.h"
#include "utf8.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

struct marks_channel {
    int fd;
    int stop_pipe[2];
    char dir[200];
    char path[PATH_MAX];
    char dropped_path[PATH_MAX];
    resmon_monitor *monitor;
    pthread_t thread;
    int thread_alive;
    atomic_ullong refused; /* marks the library refused */
    atomic_ullong taken;
};

int mark_name_valid(const char *name)
{
    size_t len = strlen(name);
    if (len == 0 || len >= RESMON_PHASE_NAME_MAX)
        return 0;
    const unsigned char *s = (const unsigned char *)name;
    for (size_t n; *s; s += n) {
        uint32_t cp;
        if ((n = rm__utf8_sequence_length(s, &cp)) == 0 || cp < 0x20 || (cp >= 0x7f && cp <= 0x9f))
            return 0;
    }
    return 1;
}

marks_channel *marks_open(char *why, size_t cap)
{
    marks_channel *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(why, cap, "out of memory");
        return NULL;
    }
    c->fd = c->stop_pipe[0] = c->stop_pipe[1] = -1;
    const char *tmp = getenv("TMPDIR");
    /* The socket's whole path must fit sun_path: a long TMPDIR gives way to
     * the default.  Without TMPDIR, /dev/shm (memory) before /tmp: where
     * /tmp is a disk's, its mkdir and rmdir cost 0.2 ms each and, when they
     * meet the journal, up to 40 ms (measured on ext4), on every run. */
    int made = 0;
    if (!tmp || tmp[0] != '/' || strlen(tmp) > sizeof(((struct sockaddr_un *)0)->sun_path) - 40) {
        tmp = "/dev/shm";
        snprintf(c->dir, sizeof c->dir, "%s/resmon-marks-XXXXXX", tmp);
        made = mkdtemp(c->dir) != NULL;
        if (!made)
            tmp = "/tmp";
    }
    if (!made)
        snprintf(c->dir, sizeof c->dir, "%s/resmon-marks-XXXXXX", tmp);
    if (!made && !mkdtemp(c->dir)) {
        snprintf(why, cap, "cannot create a directory in %s: %s", tmp, strerror(errno));
        free(c);
        return NULL;
    }
    snprintf(c->path, sizeof c->path, "%.200s/socket", c->dir);
    snprintf(c->dropped_path, sizeof c->dropped_path, "%.200s/dropped", c->dir);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    memcpy(addr.sun_path, c->path, strlen(c->path) + 1); /* fits: TMPDIR's length was checked */
    c->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (c->fd < 0 || bind(c->fd, (struct sockaddr *)&addr, sizeof addr) != 0 ||
        pipe2(c->stop_pipe, O_CLOEXEC) != 0 || setenv(RESMON_MARK_ENV, c->path, 1) != 0) {
        snprintf(why, cap, "cannot open the marks socket %s: %s", c->path, strerror(errno));
        marks_close(c);
        return NULL;
    }
    return c;
}

/* Hands one datagram's name to the monitor.  The queue of marks waiting
 * for the sampler is short: when it is full, wait for the sampler (this is
 * resmon's thread, not the workload's). */
static void take_mark(marks_channel *c, const char *buf, ssize_t n)
{
    char name[RESMON_PHASE_NAME_MAX];
    int rc = -EINVAL;
    if (n > 0 && n < (ssize_t)sizeof name) {
        memcpy(name, buf, (size_t)n);
        name[n] = '\0';
        rc = memchr(buf, '\0', (size_t)n) ? -EINVAL : resmon_monitor_mark(c->monitor, name);
        for (int tries = 0; rc == -EAGAIN && tries < 1000; tries++) {
            struct timespec ms = {0, 1000000};
            nanosleep(&ms, NULL);
            rc = resmon_monitor_mark(c->monitor, name);
        }
    }
    atomic_fetch_add(rc == 0 ? &c->taken : &c->refused, 1);
}

/* Reads what is queued; returns when the socket is empty. */
static void read_queued(marks_channel *c)
{
    char buf[256];
    ssize_t n;
    while ((n = recv(c->fd, buf, sizeof buf, MSG_DONTWAIT | MSG_TRUNC)) >= 0 || errno == EINTR)
        if (n >= 0)
            take_mark(c, buf, n > (ssize_t)sizeof buf ? (ssize_t)sizeof buf : n);
}

static void *receiver(void *arg)
{
    marks_channel *c = arg;
    struct pollfd fds[2] = {{.fd = c->fd, .events = POLLIN}, {.fd = c->stop_pipe[0], .events = POLLIN}};
    for (;;) {
        if (poll(fds, 2, -1) < 0 && errno != EINTR)
            break;
        read_queued(c);
        if (fds[1].revents)
            break;
    }
    read_queued(c); /* what was sent before the stop */
    return NULL;
}

int marks_start(marks_channel *c, resmon_monitor *m)
{
    if (!c)
        return 0;
    c->monitor = m;
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous); /* signals stay the main thread's */
    int rc = pthread_create(&c->thread, NULL, receiver, c);
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    c->thread_alive = rc == 0;
    return -rc;
}

void marks_drain(marks_channel *c)
{
    if (!c || !c->thread_alive)
        return;
    if (write(c->stop_pipe[1], "x", 1) != 1) {
        /* a pipe with room for a byte: cannot fail */
    }
    pthread_join(c->thread, NULL);
    c->thread_alive = 0;
}

unsigned long long marks_dropped(const marks_channel *c)
{
    if (!c)
        return 0;
    struct stat st;
    unsigned long long senders = stat(c->dropped_path, &st) == 0 ? (unsigned long long)st.st_size : 0;
    return senders + atomic_load(&c->refused);
}

unsigned long long marks_taken(const marks_channel *c)
{
    return c ? atomic_load(&c->taken) : 0;
}

void marks_close(marks_channel *c)
{
    if (!c)
        return;
    marks_drain(c);
    const char *named = getenv(RESMON_MARK_ENV);
    if (named && strcmp(named, c->path) == 0)
        unsetenv(RESMON_MARK_ENV);
    if (c->fd >= 0) {
        close(c->fd);
        unlink(c->path);
    }
    for (int i = 0; i < 2; i++)
        if (c->stop_pipe[i] >= 0)
            close(c->stop_pipe[i]);
    unlink(c->dropped_path);
    rmdir(c->dir);
    free(c);
}

/* ---- resmon mark NAME ---------------------------------------------------- */

static const char mark_usage_text[] =
    "usage: resmon mark NAME   start the phase NAME of the run this program is monitored in\n"
    "\n"
    "  -h, --help   this help (the manual: man resmon)\n"
    "\n"
    "For scripts and Makefiles run under `resmon -- COMMAND`: the phase begins at the\n"
    "mark and lasts until the next one or the end.  NAME is 1 to 63 bytes of UTF-8 without\n"
    "control characters.  Never blocks and never fails the workload: outside resmon, or\n"
    "when the channel is full, the mark is dropped (counted in the summary's\n"
    "marks_dropped) and the status is still 0; a bad NAME is 125.\n";

int mark_main(int argc, char **argv)
{
    if (argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
        fputs(mark_usage_text, stdout);
        return stdout_close("resmon mark");
    }
    const char *name = argc == 3 && strcmp(argv[1], "--") == 0 ? argv[2] : argc == 2 ? argv[1] : NULL;
    if (!name || (name[0] == '-' && argc == 2 && name[1])) {
        fputs(argc < 2 ? "resmon mark: a NAME is required (see resmon mark --help)\n"
                       : "resmon mark: one NAME, no options (see resmon mark --help)\n",
              stderr);
        return EXIT_USAGE;
    }
    if (!mark_name_valid(name)) {
        fputs("resmon mark: NAME must be 1 to 63 bytes of UTF-8 without control characters: '", stderr);
        print_printable(stderr, name);
        fputs("'\n", stderr);
        return EXIT_USAGE;
    }
    const char *path = getenv(RESMON_MARK_ENV);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (!path || !*path || strlen(path) >= sizeof addr.sun_path)
        return 0; /* not under resmon: nothing to mark */
    memcpy(addr.sun_path, path, strlen(path) + 1);
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return 0;
    ssize_t sent = sendto(fd, name, strlen(name), MSG_DONTWAIT | MSG_NOSIGNAL, (struct sockaddr *)&addr, sizeof addr);
    int err = errno;
    close(fd);
    if (sent < 0 && (err == EAGAIN || err == EWOULDBLOCK || err == ENOBUFS)) {
        /* resmon is there but its queue is full: say so beside the socket */
        char dropped[PATH_MAX];
        const char *slash = strrchr(path, '/');
        int dir_len = slash ? (int)(slash - path) : 0;
        snprintf(dropped, sizeof dropped, "%.*s/dropped", dir_len < 200 ? dir_len : 200, path);
        int dfd = open(dropped, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
        if (dfd >= 0) {
            if (write(dfd, "x", 1) != 1) {
                /* nothing more to do for a mark */
            }
            close(dfd);
        }
    }
    return 0;
}
