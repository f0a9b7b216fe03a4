/*
 * taskstats.c -- a generic-netlink TASKSTATS listener (see taskstats.h).
 *
 * The family id is resolved with CTRL_CMD_GETFAMILY, then one
 * TASKSTATS_CMD_ATTR_REGISTER_CPUMASK names every online CPU.  A thread
 * polls the socket and a stop pipe; the socket's receive buffer is raised
 * (SO_RCVBUFFORCE, which the same capability allows) so a burst of exits
 * rarely overruns it, and an overrun (ENOBUFS) is counted, never waited out:
 * the kernel drops, the exiting tasks never block.
 */
#include "taskstats.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* Room for the socket's queue: a record's message is about 500 bytes, its
 * kernel buffer about 1.3 KiB; 8 MiB holds some 6000 exits in a burst. */
#define TASKSTATS_RCVBUF (8 << 20)
#define TASKSTATS_MSG_MAX 8192
/* Messages taken per recvmmsg. */
#define TASKSTATS_BATCH 16
/* After a pass over the socket the listener waits this long (or for stop)
 * before it looks again, so that the exits of a busy machine -- every exit
 * is reported, another build's too -- are read in passes, not one wake-up,
 * poll and recv per exit (that was most of resmon's own CPU beside a
 * parallel build).  A wake-up is most of a pass's cost on a virtual
 * machine (bench/foreign_exits.py: 14.8 ms of CPU a second at 10 ms,
 * 4.2 at 100); a lone exit is still read at once, and a record read in a
 * later pass ends that much late (process_records.c).  The queue holds
 * ~6000 records: 60 000 exits a second. */
#define TASKSTATS_PASS_GAP_MS 100

struct taskstats_listener {
    int fd;
    int stop_pipe[2];
    uint16_t family;
    char cpumask[64];
    taskstats_callback callback;
    void *user;
    pid_t probe;     /* while registering: the child whose record shows that records come */
    int probe_seen;
    pthread_t thread;
    atomic_ullong overruns;
    char (*buffers)[TASKSTATS_MSG_MAX]; /* TASKSTATS_BATCH of them, for recvmmsg */
};

/* Sends one generic-netlink request with one attribute. */
static int genl_send(int fd, uint16_t family, uint8_t cmd, uint16_t flags, uint16_t attr_type, const void *data,
                     size_t len)
{
    struct {
        struct nlmsghdr n;
        struct genlmsghdr g;
        char buf[256];
    } req;
    memset(&req, 0, sizeof req);
    if (NLA_HDRLEN + len > sizeof req.buf)
        return -EINVAL;
    req.n.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
    req.n.nlmsg_type = family;
    req.n.nlmsg_flags = NLM_F_REQUEST | flags;
    req.n.nlmsg_pid = 0;
    req.g.cmd = cmd;
    req.g.version = 1;
    struct nlattr *na = (struct nlattr *)((char *)&req + NLMSG_ALIGN(req.n.nlmsg_len));
    na->nla_type = attr_type;
    na->nla_len = (uint16_t)(NLA_HDRLEN + len);
    memcpy((char *)na + NLA_HDRLEN, data, len);
    req.n.nlmsg_len += NLA_ALIGN(na->nla_len);
    struct sockaddr_nl to = {.nl_family = AF_NETLINK};
    ssize_t n;
    while ((n = sendto(fd, &req, req.n.nlmsg_len, 0, (struct sockaddr *)&to, sizeof to)) < 0 && errno == EINTR)
        ;
    return n < 0 ? -errno : 0;
}

/* Reads the reply to a request: 0 for an ack, the family id for a
 * CTRL_CMD_NEWFAMILY answer, or -errno (the kernel's own error). */
static int genl_reply(int fd)
{
    char buf[TASKSTATS_MSG_MAX];
    ssize_t n;
    while ((n = recv(fd, buf, sizeof buf, 0)) < 0 && errno == EINTR)
        ;
    if (n < 0)
        return -errno;
    struct nlmsghdr *h = (struct nlmsghdr *)buf;
    if (!NLMSG_OK(h, (size_t)n))
        return -EPROTO;
    if (h->nlmsg_type == NLMSG_ERROR) {
        struct nlmsgerr *e = NLMSG_DATA(h);
        return e->error; /* 0: ack */
    }
    struct nlattr *na = (struct nlattr *)((char *)NLMSG_DATA(h) + GENL_HDRLEN);
    int left = (int)h->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);
    while (left >= NLA_HDRLEN && na->nla_len >= NLA_HDRLEN && na->nla_len <= left) {
        if (na->nla_type == CTRL_ATTR_FAMILY_ID && na->nla_len >= NLA_HDRLEN + sizeof(uint16_t)) {
            uint16_t id;
            memcpy(&id, (char *)na + NLA_HDRLEN, sizeof id);
            return id;
        }
        left -= NLA_ALIGN(na->nla_len);
        na = (struct nlattr *)((char *)na + NLA_ALIGN(na->nla_len));
    }
    return -ENOENT;
}

/* The online CPUs as the kernel writes them ("0-3,8"). */
static int online_cpus(char *mask, size_t cap)
{
    FILE *f = fopen("/sys/devices/system/cpu/online", "re");
    if (!f)
        return -errno;
    int ok = fgets(mask, (int)cap, f) != NULL;
    fclose(f);
    if (!ok)
        return -EIO;
    mask[strcspn(mask, "\n")] = '\0';
    return mask[0] ? 0 : -EIO;
}

/* Hands each TASKSTATS_TYPE_AGGR_PID record of one message to the callback.
 * AGGR_TGID records (a multi-threaded process's end) carry only delay
 * accounting, not CPU or memory, so the threads' own records are folded
 * instead (process_records.c). */
static void deliver(taskstats_listener *l, struct nlmsghdr *h)
{
    if (h->nlmsg_type != l->family)
        return;
    struct nlattr *na = (struct nlattr *)((char *)NLMSG_DATA(h) + GENL_HDRLEN);
    int left = (int)h->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);
    while (left >= NLA_HDRLEN && na->nla_len >= NLA_HDRLEN && na->nla_len <= left) {
        if (na->nla_type == TASKSTATS_TYPE_AGGR_PID) {
            struct nlattr *inner = (struct nlattr *)((char *)na + NLA_HDRLEN);
            int inner_left = na->nla_len - NLA_HDRLEN;
            while (inner_left >= NLA_HDRLEN && inner->nla_len >= NLA_HDRLEN && inner->nla_len <= inner_left) {
                if (inner->nla_type == TASKSTATS_TYPE_STATS) {
                    /* An older kernel's struct is shorter: copy what came,
                     * the rest reads zero (its version says which). */
                    struct taskstats ts;
                    memset(&ts, 0, sizeof ts);
                    size_t got = inner->nla_len - NLA_HDRLEN;
                    memcpy(&ts, (char *)inner + NLA_HDRLEN, got < sizeof ts ? got : sizeof ts);
                    /* resmon's own probe, no task of anyone's run (by its
                     * thread group too: under TSan a forked child carries
                     * a thread of TSan's, which has a record of its own) */
                    if (l->probe > 0 &&
                        ((pid_t)ts.ac_pid == l->probe || (ts.version >= 12 && (pid_t)ts.ac_tgid == l->probe)))
                        l->probe_seen = 1;
                    else
                        l->callback(&ts, l->user);
                }
                inner_left -= NLA_ALIGN(inner->nla_len);
                inner = (struct nlattr *)((char *)inner + NLA_ALIGN(inner->nla_len));
            }
        }
        left -= NLA_ALIGN(na->nla_len);
        na = (struct nlattr *)((char *)na + NLA_ALIGN(na->nla_len));
    }
}

/* Reads every message the socket holds now, TASKSTATS_BATCH to a system
 * call, until it says it is empty (recvmmsg may return fewer than asked
 * with more queued, keeping an error for the next call).  Returns 0 when
 * it is empty, or -errno of a failure other than an overrun.
 *
 * An overrun (ENOBUFS) is said once, and the kernel then drops every record
 * until the queue has been read empty: the callback hears of it (ts NULL)
 * at the overrun and again once the queue is empty, so that nothing
 * concluded from the records in between -- some of them were lost -- stands. */
static int drain(taskstats_listener *l)
{
    struct mmsghdr msgs[TASKSTATS_BATCH];
    struct iovec iov[TASKSTATS_BATCH];
    int overrun = 0;
    for (;;) {
        memset(msgs, 0, sizeof msgs);
        for (int i = 0; i < TASKSTATS_BATCH; i++) {
            iov[i] = (struct iovec){l->buffers[i], TASKSTATS_MSG_MAX};
            msgs[i].msg_hdr.msg_iov = &iov[i];
            msgs[i].msg_hdr.msg_iovlen = 1;
        }
        int got = recvmmsg(l->fd, msgs, TASKSTATS_BATCH, MSG_DONTWAIT, NULL);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            if (errno == ENOBUFS) { /* the kernel dropped records: counted, said, reading goes on */
                atomic_fetch_add(&l->overruns, 1);
                l->callback(NULL, l->user);
                overrun = 1;
                continue;
            }
            int empty = errno == EAGAIN || errno == EWOULDBLOCK;
            if (empty && overrun)
                l->callback(NULL, l->user); /* the drops end here */
            return empty ? 0 : -errno;
        }
        for (int i = 0; i < got; i++) {
            size_t n = msgs[i].msg_len;
            for (struct nlmsghdr *h = (struct nlmsghdr *)l->buffers[i]; NLMSG_OK(h, n); h = NLMSG_NEXT(h, n))
                deliver(l, h);
        }
    }
}

static void *listen_thread(void *arg)
{
    taskstats_listener *l = arg;
    struct pollfd fds[2] = {{.fd = l->fd, .events = POLLIN}, {.fd = l->stop_pipe[0], .events = POLLIN}};
    for (;;) {
        if (poll(fds, 2, -1) < 0 && errno != EINTR)
            break;
        if (drain(l) < 0)
            break;
        if (fds[1].revents)
            break; /* stop: the drain above took every record queued before it */
        poll(&fds[1], 1, TASKSTATS_PASS_GAP_MS); /* records queue meanwhile; a stop ends the wait */
    }
    return NULL;
}

static void listener_free(taskstats_listener *l)
{
    free(l->buffers);
    if (l->fd >= 0)
        close(l->fd);
    if (l->stop_pipe[0] >= 0)
        close(l->stop_pipe[0]);
    if (l->stop_pipe[1] >= 0)
        close(l->stop_pipe[1]);
    free(l);
}

/* Whether registered records are delivered: a child that exits at once
 * must have its record queued on the socket by the time it is reaped (the
 * kernel sends it from the exit, before the task becomes a zombie).  In a
 * network namespace other than the initial one the registration is acked
 * but the kernel sends every record to the initial namespace's socket of
 * that port: nothing comes, and "0 processes" would read as exact.
 * Returns 0, or -ENETUNREACH when the probe's record did not come. */
static int probe_delivery(taskstats_listener *l)
{
    pid_t child = vfork(); /* the child only exits: no copy of resmon's memory map */
    if (child < 0)
        return -errno;
    if (child == 0)
        _exit(0);
    l->probe = child;
    while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
        ;
    int rc = drain(l); /* everything queued, the probe's record among it */
    if (rc == 0 && !l->probe_seen && atomic_load(&l->overruns) == 0)
        rc = -ENETUNREACH;
    l->probe = 0;
    return rc;
}

/* Opens the socket, resolves the family and registers for the CPUs. */
static int listener_register(taskstats_listener *l)
{
    l->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
    if (l->fd < 0)
        return -errno;
    int rcvbuf = TASKSTATS_RCVBUF;
    if (setsockopt(l->fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof rcvbuf) != 0)
        setsockopt(l->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    struct sockaddr_nl local = {.nl_family = AF_NETLINK};
    if (bind(l->fd, (struct sockaddr *)&local, sizeof local) != 0)
        return -errno;
    static const char name[] = TASKSTATS_GENL_NAME;
    int rc = genl_send(l->fd, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 0, CTRL_ATTR_FAMILY_NAME, name, sizeof name);
    if (rc == 0)
        rc = genl_reply(l->fd);
    if (rc < 0)
        return rc; /* -ENOENT: no such family here */
    l->family = (uint16_t)rc;
    if ((rc = online_cpus(l->cpumask, sizeof l->cpumask)) < 0)
        return rc;
    /* Acked, so that the verdict (EPERM without CAP_NET_ADMIN) is known
     * here; records of tasks exiting meanwhile may come before the ack and
     * are delivered. */
    rc = genl_send(l->fd, l->family, TASKSTATS_CMD_GET, NLM_F_ACK, TASKSTATS_CMD_ATTR_REGISTER_CPUMASK, l->cpumask,
                   strlen(l->cpumask) + 1);
    while (rc == 0) {
        char buf[TASKSTATS_MSG_MAX] __attribute__((aligned(8)));
        ssize_t n = recv(l->fd, buf, sizeof buf, 0);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
            if (h->nlmsg_type == NLMSG_ERROR) {
                int error = ((struct nlmsgerr *)NLMSG_DATA(h))->error; /* 0: the ack */
                return error ? error : probe_delivery(l);
            }
            deliver(l, h);
        }
    }
    return rc;
}

int taskstats_start(taskstats_callback callback, void *user, taskstats_listener **out)
{
    *out = NULL;
    taskstats_listener *l = calloc(1, sizeof *l);
    if (!l)
        return -ENOMEM;
    l->fd = l->stop_pipe[0] = l->stop_pipe[1] = -1;
    l->callback = callback;
    l->user = user;
    l->buffers = malloc(TASKSTATS_BATCH * sizeof *l->buffers);
    if (!l->buffers) {
        listener_free(l);
        return -ENOMEM;
    }
    int rc = listener_register(l);
    if (rc == 0 && pipe2(l->stop_pipe, O_CLOEXEC) != 0)
        rc = -errno;
    if (rc == 0)
        rc = -pthread_create(&l->thread, NULL, listen_thread, l);
    if (rc < 0) {
        listener_free(l);
        return rc;
    }
    *out = l;
    return 0;
}

unsigned long long taskstats_stop(taskstats_listener *l)
{
    if (!l)
        return 0;
    /* Deregistered first (the kernel handles it within the send): the
     * socket then takes no new record, and the thread's last drain ends
     * with what was queued, however busy the machine's other processes. */
    genl_send(l->fd, l->family, TASKSTATS_CMD_GET, 0, TASKSTATS_CMD_ATTR_DEREGISTER_CPUMASK, l->cpumask,
              strlen(l->cpumask) + 1);
    if (write(l->stop_pipe[1], "s", 1) != 1) {
        /* cannot fail on a fresh pipe */
    }
    pthread_join(l->thread, NULL);
    unsigned long long overruns = atomic_load(&l->overruns);
    listener_free(l);
    return overruns;
}
