/*
 * marks.c -- phases marked by the monitored program itself: the channel
 * `resmon -- CMD` opens for it, and `resmon mark NAME`, which sends on it.
 *
 * The channel is a Unix datagram socket (mode 0600: only this user -- and
 * root -- can send) in a directory of its own (0711, a random name that
 * also carries resmon's pid, pid namespace and start time), named to the
 * command by RESMON_MARK_SOCKET; every descendant inherits the name.  A
 * mark is one datagram holding the name.  Sending never blocks and never
 * fails the workload: a full queue (net.unix.max_dgram_qlen datagrams) or a
 * sender that may not send (a command that dropped privileges) drops the
 * mark, and the sender appends one byte to the drop counter beside the
 * socket (0622: any user may count), which resmon counts.  The counter's
 * name, dropped-<16 random hex>, is a secret (the 0711 directory cannot be
 * listed by others) named to the command by RESMON_MARK_DROPPED; a
 * command that dropped privileges hands it to the other user, who can then
 * add to the count, or truncate it: resmon reads the count through its own
 * descriptor and never lets it go down, so a truncation between two reads
 * can hide at most the drops counted since the last read (an append-only
 * attribute would forbid it, but would also make a killed resmon's
 * directory one that `rm -rf` as root cannot remove).  A sender holds the counter open, shared-locked (flock), from
 * before it sends until it has counted; at the end resmon removes the
 * socket and the counter's name and takes the lock exclusively (waiting
 * two seconds at most) before it reads the count for the last time
 * (marks_seal), so a mark is a phase, or in the count the
 * summary gives, or -- sent after that -- finds the channel gone: never
 * counted where no summary reads it (stop 56's attack: an orphan's drops
 * added after the last read).  A name resmon
 * refuses is sent as an empty datagram.  A thread of resmon's receives the
 * marks and hands them to the monitor (resmon_monitor_mark); marks the
 * library refuses (a bad name, more than RESMON_MAX_PHASES phases, a
 * window already closed) are counted the same way.  resmon works in the
 * directory through a descriptor held open (faults.md 35) and removes it at
 * the end; one left by a resmon killed with SIGKILL (0.3's too) is removed by the next
 * resmon that makes its channel in the same place (sweep_stale).
 */
#include "marks.h"
#include "cli.h"
#include "output_file.h"
#include "text_output.h"
#include "utf8.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

struct marks_channel {
    int fd;
    int stop_pipe[2];
    int parent_fd; /* the directory the channel's directory is in */
    int dir_fd;    /* the channel's directory, held open: cleaned up through it */
    char name[96]; /* the channel directory's name in parent_fd */
    char path[PATH_MAX];
    char dropped[32]; /* the drop counter's name in dir_fd: dropped-<16 random hex> */
    char dropped_path[PATH_MAX];
    int dropped_fd;   /* the drop counter, held open: its size is the count */
    unsigned long long dropped_seen; /* the largest size read: the count never goes down */
    int sealed;       /* marks_seal: the count is final, senders are shut out */
    resmon_monitor *monitor;
    pthread_t thread;
    int thread_alive;
    atomic_ullong refused; /* marks the library refused */
    atomic_ullong taken;
    /* The receiver and the sample callback (marks_take_queued) both take
     * datagrams; the lock keeps them in the order they were sent.  held: a
     * datagram received and not yet accepted (the monitor's queue was full),
     * taken before anything received after it. */
    pthread_mutex_t lock;
    int lock_made;
    char held[RESMON_PHASE_NAME_MAX];
    ssize_t held_len; /* -1: none */
};

int mark_name_valid(const char *name)
{
    size_t len = strlen(name);
    if (len == 0 || len >= RESMON_PHASE_NAME_MAX)
        return 0;
    const unsigned char *s = (const unsigned char *)name;
    for (size_t n; *s; s += n) {
        uint32_t cp;
        if ((n = rm__utf8_sequence_length(s, &cp)) == 0 || rm__utf8_is_control(cp))
            return 0;
    }
    return 1;
}

/* ---- the channel's directory, and those a killed resmon left ----------- */

#define DIR_PREFIX "resmon-marks-"

/* A process's pid namespace and start time ((22) starttime of
 * /proc/PID/stat, after the last ')'); 0 where unknown. */
static unsigned long long start_time_of(long pid)
{
    char path[64], text[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT || errno == ESRCH ? ULLONG_MAX : 0; /* ULLONG_MAX: no such process */
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    if (n <= 0)
        return n == 0 || errno == ESRCH ? ULLONG_MAX : 0;
    text[n] = '\0';
    char *p = strrchr(text, ')');
    for (int field = 2; p && field < 22; field++) /* p at the end of field `field` */
        p = strchr(p + 1, ' ');
    return p ? strtoull(p + 1, NULL, 10) : 0;
}

static unsigned long long own_pidns(void)
{
    struct stat st;
    return stat("/proc/self/ns/pid", &st) == 0 ? (unsigned long long)st.st_ino : 0;
}

/* Removes the channel directory dir (name in parent, held open, checked as
 * this user's): only the files a channel holds are unlinked, through the
 * directory held open; a directory that is not empty then stays. */
static void remove_channel_dir(int parent, const char *name, int dir, const struct stat *st)
{
    unlinkat(dir, "socket", 0);
    int listing = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = listing >= 0 ? fdopendir(listing) : NULL;
    if (!d && listing >= 0)
        close(listing);
    for (struct dirent *e; d && (e = readdir(d)) != NULL;)
        if (strncmp(e->d_name, "dropped", 7) == 0) /* dropped-<secret>, and "dropped" of older resmons */
            unlinkat(dir, e->d_name, 0);
    if (d)
        closedir(d);
    struct stat again;
    if (fstatat(parent, name, &again, AT_SYMLINK_NOFOLLOW) == 0 && again.st_ino == st->st_ino &&
        again.st_dev == st->st_dev)
        unlinkat(parent, name, AT_REMOVEDIR);
}

/* Opens the directory name in parent without following a link; -1 unless
 * it is a directory of this user's. */
static int open_own_dir(int parent, const char *name, struct stat *st)
{
    int dir = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dir >= 0 && (fstat(dir, st) != 0 || !S_ISDIR(st->st_mode) || st->st_uid != geteuid())) {
        close(dir);
        dir = -1;
    }
    return dir;
}

/* Removes the channel directory name in parent if it is one a resmon of
 * this user and pid namespace left behind when it was killed: its creator
 * (pid and start time in the name) is gone. */
static void sweep_one(int parent, const char *name, unsigned long long pidns)
{
    long pid;
    unsigned long long ns, start;
    int used = 0;
    if (sscanf(name, DIR_PREFIX "%ld-%llu-%llu-%n", &pid, &ns, &start, &used) != 3 || used == 0 ||
        strlen(name + used) != 6 || ns != pidns || pid <= 0 || start == 0)
        return;
    unsigned long long now = start_time_of(pid);
    if (now == 0 || now == start)
        return; /* alive, or not known: nothing is removed on a doubt */
    struct stat st;
    int dir = open_own_dir(parent, name, &st);
    if (dir >= 0) {
        remove_channel_dir(parent, name, dir, &st);
        close(dir);
    }
}

/* The same for a directory of resmon 0.3 (resmon-marks-XXXXXX, mkdtemp's
 * six letters and digits; no creator in its name): its creator is gone when
 * nothing receives on its socket (connect: ECONNREFUSED).  One without a
 * socket may be a 0.3 resmon's between mkdtemp and bind: kept. */
static void sweep_old(int parent, const char *name)
{
    const char *suffix = name + sizeof DIR_PREFIX - 1;
    if (strlen(suffix) != 6 || strspn(suffix, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") != 6)
        return;
    struct stat st, sock;
    int dir = open_own_dir(parent, name, &st);
    if (dir < 0)
        return;
    if (fstatat(dir, "socket", &sock, AT_SYMLINK_NOFOLLOW) == 0 && S_ISSOCK(sock.st_mode) &&
        sock.st_uid == geteuid()) {
        /* Through the directory held open (its socket was checked above and
         * only its owner can add to it: 0700). */
        struct sockaddr_un addr = {.sun_family = AF_UNIX};
        snprintf(addr.sun_path, sizeof addr.sun_path, "/proc/self/fd/%d/socket", dir);
        int probe = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (probe >= 0 && connect(probe, (struct sockaddr *)&addr, sizeof addr) != 0 && errno == ECONNREFUSED)
            remove_channel_dir(parent, name, dir, &st);
        if (probe >= 0)
            close(probe);
    }
    close(dir);
}

/* Sweeps what killed resmons left in parent.  With hidepid another user's
 * processes read as absent, so pid 1 must be visible first. */
static void sweep_stale(int parent, unsigned long long pidns)
{
    if (pidns == 0 || start_time_of(1) == 0 || start_time_of(1) == ULLONG_MAX)
        return;
    int listing = openat(parent, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = listing >= 0 ? fdopendir(listing) : NULL;
    if (!d) {
        if (listing >= 0)
            close(listing);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strncmp(e->d_name, DIR_PREFIX, sizeof DIR_PREFIX - 1) == 0) {
            sweep_one(parent, e->d_name, pidns);
            sweep_old(parent, e->d_name);
        }
    closedir(d);
}

/* n bytes from /dev/urandom; -1 when it cannot be read whole. */
static int random_bytes(unsigned char *buf, size_t n)
{
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    ssize_t got = fd >= 0 ? read(fd, buf, n) : -1;
    if (fd >= 0)
        close(fd);
    return got == (ssize_t)n ? 0 : -1;
}

/* Whether dir is safe for the channel: every user can reach its entries
 * (it and each directory above grant search to others: a private TMPDIR,
 * 0700 or under /root, would hide the drop counter from a command that
 * dropped privileges, its marks lost uncounted), and no other user can move
 * its components (each is root's or this user's, and one others may write
 * is sticky over an entry of root's or ours: a TMPDIR of root's in a
 * directory another user owns, /home/them/tmp, passed every check of dir
 * itself, and its owner renamed it away, made one of the same name and
 * bound a socket there -- the marks, sent by path, went to them, lost
 * uncounted: stop 53's attack on issue 28).  One walk does both. */
static int components_safe(const char *dir)
{
    char prefix[PATH_MAX];
    size_t n = strlen(dir);
    if (n >= sizeof prefix)
        return 0;
    uid_t me = geteuid();
    struct stat above;
    if (stat("/", &above) != 0 || (above.st_uid != 0 && above.st_uid != me) || !(above.st_mode & S_IXOTH))
        return 0;
    for (size_t end = 1; end <= n; end++) {
        if (end < n && dir[end] != '/')
            continue;
        if (dir[end - 1] == '/')
            continue; /* "//" */
        memcpy(prefix, dir, end);
        prefix[end] = '\0';
        struct stat st, reached;
        if (lstat(prefix, &st) != 0 || (st.st_uid != 0 && st.st_uid != me))
            return 0;
        /* above holds st's entry: others who may write it may rename the
         * entry unless it is sticky (then only the entry's owner, checked). */
        if ((above.st_mode & (S_IWGRP | S_IWOTH)) && !(above.st_mode & S_ISVTX))
            return 0;
        if (stat(prefix, &reached) != 0 || !(reached.st_mode & S_IXOTH))
            return 0;
        above = reached; /* a link's target: the next entries are its */
    }
    return 1;
}

/* ... as written and as resolved: a link in the path leads into
 * directories its text does not name (/tmp/l -> /root/private/t). */
static int others_can_reach(const char *dir)
{
    char resolved[PATH_MAX];
    return components_safe(dir) && realpath(dir, resolved) && components_safe(resolved);
}

/* Makes the channel's directory in tmp: 0711 (the socket stays 0600, the
 * drop counter is writable by every user: see marks_open), named for this
 * process so that a later resmon can tell when it is stale. */
static int make_dir(marks_channel *c, const char *tmp)
{
    /* A symbolic link another user owns (planted in /tmp, where
     * fs.protected_symlinks=0 lets root follow it) is not followed: that
     * user chose where the channel goes.  The link is checked again after
     * the open (a link's target never changes: the same inode, the same
     * place). */
    struct stat link, link_after;
    int is_link = lstat(tmp, &link) == 0 && S_ISLNK(link.st_mode);
    if (is_link && link.st_uid != geteuid() && link.st_uid != 0)
        return -EXDEV;
    c->parent_fd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC | (is_link ? 0 : O_NOFOLLOW));
    if (c->parent_fd < 0)
        return errno == ELOOP ? -EXDEV : -errno; /* became a link meanwhile */
    if (is_link && (lstat(tmp, &link_after) != 0 || link_after.st_ino != link.st_ino || link_after.st_dev != link.st_dev))
        return -EXDEV;
    struct stat parent;
    if (fstat(c->parent_fd, &parent) != 0)
        return -errno;
    /* Writable by others without the sticky bit: another user could rename
     * the channel away and bind their own, or plant what the sweep deletes. */
    if ((parent.st_mode & (S_IWGRP | S_IWOTH)) && !(parent.st_mode & S_ISVTX))
        return -EXDEV;
    /* Another user's directory (a TMPDIR of 0755 that user owns): its owner
     * may rename anything in it, sticky bit or not, and bind a socket of
     * their own where the channel was -- the marks would go to them, lost
     * uncounted.  Only this user's or root's. */
    if (parent.st_uid != geteuid() && parent.st_uid != 0)
        return -EXDEV;
    if (!others_can_reach(tmp))
        return -EXDEV;
    unsigned long long pidns = own_pidns(), start = start_time_of(getpid());
    if (start == ULLONG_MAX)
        start = 0;
    sweep_stale(c->parent_fd, pidns);
    static const char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    for (int attempt = 0; attempt < 100; attempt++) {
        unsigned char random[6];
        if (random_bytes(random, sizeof random) < 0) {
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            unsigned long long x = (unsigned long long)ts.tv_nsec ^ ((unsigned long long)getpid() << 20) ^ attempt;
            for (size_t i = 0; i < sizeof random; i++, x >>= 7)
                random[i] = (unsigned char)x;
        }
        char suffix[7];
        for (size_t i = 0; i < 6; i++)
            suffix[i] = letters[random[i] % (sizeof letters - 1)];
        suffix[6] = '\0';
        snprintf(c->name, sizeof c->name, DIR_PREFIX "%ld-%llu-%llu-%s", (long)getpid(), pidns, start, suffix);
        if (mkdirat(c->parent_fd, c->name, 0700) == 0) {
            c->dir_fd = openat(c->parent_fd, c->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            struct stat st;
            if (c->dir_fd < 0 || fstat(c->dir_fd, &st) != 0 || st.st_uid != geteuid())
                return -EPERM; /* swapped between mkdirat and openat */
            return fchmod(c->dir_fd, 0711) == 0 ? 0 : -errno;
        }
        if (errno != EEXIST)
            return -errno;
    }
    return -EEXIST;
}

/* The channel: a socket only this user may send to, and beside it the drop
 * counter, a file every user may append to (O_APPEND, a byte a mark), so
 * that a command that dropped privileges (setpriv, su) and so cannot send
 * still counts its marks as dropped.  Whoever holds the random name can
 * add to the count; a truncation is not taken back by resmon's reading
 * (marks_dropped). */
marks_channel *marks_open(char *why, size_t cap)
{
    marks_channel *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(why, cap, "out of memory");
        return NULL;
    }
    c->fd = c->stop_pipe[0] = c->stop_pipe[1] = c->parent_fd = c->dir_fd = c->dropped_fd = -1;
    c->held_len = -1;
    if (pthread_mutex_init(&c->lock, NULL) != 0) {
        snprintf(why, cap, "out of memory");
        free(c);
        return NULL;
    }
    c->lock_made = 1;
    const char *tmp = getenv("TMPDIR");
    /* The socket's whole path (67 bytes after TMPDIR at most) must fit sun_path: a long TMPDIR gives way to
     * the default.  Without TMPDIR, /dev/shm (memory) before /tmp: where
     * /tmp is a disk's, its mkdir and rmdir cost 0.2 ms each and, when they
     * meet the journal, up to 40 ms (measured on ext4), on every run. */
    int rc = -1;
    if (tmp && tmp[0] == '/' && strlen(tmp) <= sizeof(((struct sockaddr_un *)0)->sun_path) - 68 &&
        (rc = make_dir(c, tmp)) < 0) {
        /* A TMPDIR others may write and not sticky, or others cannot
         * reach (EXDEV), or one that cannot hold the channel (gone, not a
         * directory, not writable):
         * the default, so that marks are never lost for a stale TMPDIR. */
        if (c->dir_fd >= 0)
            close(c->dir_fd);
        c->dir_fd = -1;
        if (c->parent_fd >= 0)
            close(c->parent_fd);
        c->parent_fd = -1;
        tmp = NULL;
    }
    if (!tmp || tmp[0] != '/' || strlen(tmp) > sizeof(((struct sockaddr_un *)0)->sun_path) - 68) {
        tmp = "/dev/shm";
        if ((rc = make_dir(c, tmp)) < 0) {
            if (c->parent_fd >= 0)
                close(c->parent_fd);
            if (c->dir_fd >= 0)
                close(c->dir_fd);
            c->parent_fd = c->dir_fd = -1;
            tmp = "/tmp";
            rc = make_dir(c, tmp); /* /dev/shm could not be used */
        }
    }
    if (rc < 0) {
        snprintf(why, cap, "cannot create a directory in %s: %s", tmp, strerror(-rc));
        marks_close(c);
        return NULL;
    }
    snprintf(c->path, sizeof c->path, "%.100s/%s/socket", tmp, c->name);
    /* Bound through the directory held open (/proc/self/fd), so that a
     * directory swapped meanwhile is never where the socket goes. */
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    snprintf(addr.sun_path, sizeof addr.sun_path, "/proc/self/fd/%d/socket", c->dir_fd);
    unsigned char secret[8];
    if (random_bytes(secret, sizeof secret) < 0) {
        snprintf(why, cap, "cannot read /dev/urandom for the marks channel");
        marks_close(c);
        return NULL;
    }
    memcpy(c->dropped, "dropped-", 8);
    for (size_t i = 0; i < sizeof secret; i++)
        snprintf(c->dropped + 8 + 2 * i, 3, "%02x", secret[i]);
    snprintf(c->dropped_path, sizeof c->dropped_path, "%.100s/%s/%s", tmp, c->name, c->dropped);
    c->dropped_fd = openat(c->dir_fd, c->dropped, O_RDONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (c->dropped_fd >= 0) {
        if (fchmod(c->dropped_fd, 0622) != 0) {
            /* the count of senders that cannot send stays this user's */
        }
    }
    c->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int bound = c->fd >= 0 && bind(c->fd, (struct sockaddr *)&addr, sizeof addr) == 0;
    if (!bound && c->fd >= 0 && errno == ENOENT) { /* no /proc: by the name just made */
        memcpy(addr.sun_path, c->path, strlen(c->path) + 1); /* fits: TMPDIR's length was checked */
        bound = bind(c->fd, (struct sockaddr *)&addr, sizeof addr) == 0;
    }
    if (!bound ||
        fchmodat(c->dir_fd, "socket", 0600, 0) != 0 || pipe2(c->stop_pipe, O_CLOEXEC) != 0 ||
        setenv(RESMON_MARK_ENV, c->path, 1) != 0 || setenv(RESMON_MARK_DROPPED_ENV, c->dropped_path, 1) != 0) {
        snprintf(why, cap, "cannot open the marks socket %s: %s", c->path, strerror(errno));
        marks_close(c);
        return NULL;
    }
    return c;
}

/* Offers the held datagram's name to the monitor: 0 (a phase), -EAGAIN (its
 * queue is full: try again), or another error (counted as refused). */
static int offer_held(marks_channel *c)
{
    char name[RESMON_PHASE_NAME_MAX];
    ssize_t n = c->held_len;
    if (n <= 0 || n >= (ssize_t)sizeof name || memchr(c->held, '\0', (size_t)n))
        return -EINVAL;
    memcpy(name, c->held, (size_t)n);
    name[n] = '\0';
    return resmon_monitor_mark(c->monitor, name);
}

/* Under c->lock: hands the held datagram, then every queued one, to the
 * monitor in order.  Returns 1 when one waits for room in the monitor's
 * queue (it stays held), 0 when the socket is empty. */
static int take_locked(marks_channel *c)
{
    for (;;) {
        if (c->held_len < 0) {
            char buf[256];
            ssize_t n = recv(c->fd, buf, sizeof buf, MSG_DONTWAIT | MSG_TRUNC);
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0)
                return 0;
            /* longer than a name: refused whatever it holds */
            c->held_len = n < (ssize_t)sizeof c->held ? n : (ssize_t)sizeof c->held;
            memcpy(c->held, buf, (size_t)c->held_len);
        }
        int rc = offer_held(c);
        if (rc == -EAGAIN)
            return 1;
        atomic_fetch_add(rc == 0 ? &c->taken : &c->refused, 1);
        c->held_len = -1;
    }
}

/* Reads what is queued; returns when the socket is empty.  The queue of
 * marks waiting for the sampler is short: when it is full, wait for the
 * sampler (this is resmon's thread, not the workload's), without the lock,
 * so that the sample callback never waits on this wait. */
static void read_queued(marks_channel *c)
{
    for (int tries = 0;;) {
        pthread_mutex_lock(&c->lock);
        int waiting = take_locked(c);
        if (waiting && ++tries >= 1000) { /* a sampler that stopped taking: counted */
            atomic_fetch_add(&c->refused, 1);
            c->held_len = -1;
            tries = 0;
        }
        pthread_mutex_unlock(&c->lock);
        if (!waiting)
            return;
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
}

void marks_take_queued(marks_channel *c)
{
    if (!c || !c->monitor || c->fd < 0)
        return;
    pthread_mutex_lock(&c->lock);
    take_locked(c); /* a mark waiting for room stays the receiver's */
    pthread_mutex_unlock(&c->lock);
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
    /* From here a sender gets EPIPE and counts its mark as dropped; what was
     * queued before still goes to the window (an accepted datagram is a
     * phase or counted, never neither). */
    shutdown(c->fd, SHUT_RD);
    read_queued(c);
}

unsigned long long marks_dropped(marks_channel *c)
{
    if (!c)
        return 0;
    struct stat st;
    if (c->dropped_fd >= 0 && fstat(c->dropped_fd, &st) == 0 && (unsigned long long)st.st_size > c->dropped_seen)
        c->dropped_seen = (unsigned long long)st.st_size; /* a count truncated by a writer is not taken back */
    return c->dropped_seen + atomic_load(&c->refused);
}

/* How long, in wall time, the seal waits for senders that hold the
 * counter (each holds it for a send and a write: microseconds).  One
 * stopped while holding it (SIGSTOP, a debugger), or another user who holds
 * its name and locks it, is not waited for past this. */
#define SEAL_WAIT_NS 2000000000LL

static long long monotonic_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

void marks_seal(marks_channel *c)
{
    if (!c || c->sealed)
        return;
    marks_drain(c);
    c->sealed = 1;
    /* Both names first: a sender from now on finds the channel gone (no
     * socket: not sent, nothing to count) and cannot open the counter, so
     * no new holder comes -- 32 processes marking in loops took the lock
     * in turn and kept resmon's end waiting (stop 56's last attack). */
    if (c->dir_fd >= 0) {
        unlinkat(c->dir_fd, "socket", 0);
        if (c->dropped[0])
            unlinkat(c->dir_fd, c->dropped, 0);
    }
    if (c->dropped_fd < 0)
        return;
    long long deadline = monotonic_ns() + SEAL_WAIT_NS;
    while (flock(c->dropped_fd, LOCK_EX | LOCK_NB) != 0) {
        if ((errno != EWOULDBLOCK && errno != EINTR) || monotonic_ns() >= deadline)
            break; /* no locks here, or a holder that does not let go: the count as it is */
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
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
    if (named && c->path[0] && strcmp(named, c->path) == 0)
        unsetenv(RESMON_MARK_ENV);
    named = getenv(RESMON_MARK_DROPPED_ENV);
    if (named && c->dropped_path[0] && strcmp(named, c->dropped_path) == 0)
        unsetenv(RESMON_MARK_DROPPED_ENV);
    if (c->fd >= 0)
        close(c->fd);
    for (int i = 0; i < 2; i++)
        if (c->stop_pipe[i] >= 0)
            close(c->stop_pipe[i]);
    if (c->dropped_fd >= 0)
        close(c->dropped_fd);
    if (c->dir_fd >= 0) { /* through the directory held open: never what its name now points to */
        unlinkat(c->dir_fd, "socket", 0);
        if (c->dropped[0])
            unlinkat(c->dir_fd, c->dropped, 0);
        struct stat held, named_now;
        if (c->parent_fd >= 0 && fstat(c->dir_fd, &held) == 0 &&
            fstatat(c->parent_fd, c->name, &named_now, AT_SYMLINK_NOFOLLOW) == 0 && held.st_ino == named_now.st_ino &&
            held.st_dev == named_now.st_dev)
            unlinkat(c->parent_fd, c->name, AT_REMOVEDIR);
        close(c->dir_fd);
    }
    if (c->parent_fd >= 0)
        close(c->parent_fd);
    if (c->lock_made)
        pthread_mutex_destroy(&c->lock);
    free(c);
}

/* ---- resmon mark NAME ---------------------------------------------------- */

/* The refusal's one line, written only if standard error takes it now: a
 * mark never blocks, and a stderr pipe whose reader stalled (a logger, a
 * full CI pipe) held the workload for ever (attack 67 F7).  One write of
 * under PIPE_BUF bytes to a pipe with room does not block; where there is
 * none the line is lost -- marks_dropped is the record. */
static void say_refused_without_blocking(const char *name)
{
    char *line = NULL;
    size_t length = 0;
    FILE *text = open_memstream(&line, &length);
    if (!text)
        return;
    fputs("resmon mark: dropped: NAME must be 1 to 63 bytes of UTF-8 without control, bidirectional or "
          "invisible characters (U+202E, U+200B, U+FE0F...): '", text);
    print_printable(text, name);
    fputs("'\n", text);
    if (fclose(text) == 0) {
        struct pollfd err = {.fd = STDERR_FILENO, .events = POLLOUT};
        if (length > PIPE_BUF) /* the name is at most what argv holds: keep the line one write */
            memcpy(line + PIPE_BUF - 5, "...'\n", 5), length = PIPE_BUF;
        if (poll(&err, 1, 0) == 1 && (err.revents & POLLOUT) && write(STDERR_FILENO, line, length) < 0) {
            /* gone or full: nothing else to tell it with */
        }
    }
    free(line);
}

static const char mark_usage_text[] =
    "usage: resmon mark NAME   start the phase NAME of the run this program is monitored in\n"
    "       resmon mark -- NAME\n"
    "\n"
    "  -h, --help   this help (the manual: man resmon)\n"
    "\n"
    "For scripts and Makefiles run under `resmon -- COMMAND`: the phase begins at the\n"
    "mark and lasts until the next one or the end.  NAME is 1 to 63 bytes of UTF-8 without\n"
    "control characters (bidirectional and invisible ones included).  Never blocks and\n"
    "never fails the workload: outside resmon it does nothing; a NAME resmon refuses (empty,\n"
    "too long, not UTF-8, control characters) is one line on stderr, a full channel or one this user cannot reach\n"
    "drops the mark, and each is counted in the summary's marks_dropped; the status is\n"
    "0.  A single argument is the NAME whatever it starts with (\"-O2 build\"), except\n"
    "exactly -h or --help.  Only a call that is not a mark at all (no NAME, two) is 125.\n";

/* The drop counter RESMON_MARK_DROPPED names (dropped-<secret> beside the
 * socket), which resmon made for every user to append to, opened and
 * shared-locked before the mark is sent (resmon's seal waits for it); -1
 * when there is none to count into.  A lock another holds (resmon sealing,
 * or anyone who has the name) is not waited for: the mark goes on unlocked
 * -- after resmon's seal its socket is gone, so it is neither sent nor
 * counted; taken as "sealed", a lock by another user dropped every mark
 * (stop 56's last attack).  Through the directory, opened without
 * following a link, and only a regular file of one link owned by the
 * directory's owner: a channel directory swapped for another user's gets
 * nothing written. */
static int open_counter(const char *dropped_path, int *locked)
{
    *locked = 0;
    char dir[PATH_MAX];
    const char *slash = dropped_path ? strrchr(dropped_path, '/') : NULL;
    if (!slash || slash == dropped_path || (size_t)(slash - dropped_path) >= sizeof dir ||
        strncmp(slash + 1, "dropped-", 8) != 0 || strchr(slash + 1, '/'))
        return -1;
    memcpy(dir, dropped_path, (size_t)(slash - dropped_path));
    dir[slash - dropped_path] = '\0';
    int dfd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC); /* 0711: searchable, not readable */
    if (dfd < 0)
        return -1;
    struct stat dst, fst;
    int fd = fstat(dfd, &dst) == 0 ? openat(dfd, slash + 1, O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
                                   : -1;
    close(dfd);
    if (fd < 0)
        return -1;
    if (fstat(fd, &fst) != 0 || !S_ISREG(fst.st_mode) || fst.st_nlink != 1 || fst.st_uid != dst.st_uid) {
        close(fd);
        return -1;
    }
    *locked = flock(fd, LOCK_SH | LOCK_NB) == 0; /* failing: counted unlocked (above) */
    return fd;
}

/* Counts a mark that did not reach resmon: a byte appended to the counter. */
static void count_dropped(int counter)
{
    if (counter >= 0 && write(counter, "x", 1) != 1) {
        /* nothing more to do for a mark */
    }
}

int mark_main(int argc, char **argv)
{
    if (argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
        fputs(mark_usage_text, stdout);
        return stdout_close("resmon mark");
    }
    /* Usage errors of the call itself (the script is wrong on every run):
     * 125.  Everything about NAME (which may come from data) is a refusal:
     * one argument is the NAME whatever it starts with ("-O2 build"), only
     * exactly -h and --help are not. */
    const char *name = argc == 3 && strcmp(argv[1], "--") == 0 ? argv[2] : argc == 2 ? argv[1] : NULL;
    if (!name) {
        fputs(argc < 2 ? "resmon mark: a NAME is required (see resmon mark --help)\n"
                       : "resmon mark: one NAME, no options (see resmon mark --help)\n",
              stderr);
        return EXIT_USAGE;
    }
    const char *path = getenv(RESMON_MARK_ENV);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    int channel = path && *path && strlen(path) < sizeof addr.sun_path;
    if (!mark_name_valid(name))
        say_refused_without_blocking(name);
    if (!channel)
        return 0; /* not under resmon: nothing to mark */
    int locked;
    int counter = open_counter(getenv(RESMON_MARK_DROPPED_ENV), &locked);
    memcpy(addr.sun_path, path, strlen(path) + 1);
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    /* A refused name is sent empty: resmon counts a datagram it refuses. */
    const char *text = mark_name_valid(name) ? name : "";
    ssize_t sent = fd < 0 ? -1
                          : sendto(fd, text, strlen(text), MSG_DONTWAIT | MSG_NOSIGNAL, (struct sockaddr *)&addr,
                                   sizeof addr);
    int err = errno;
    if (fd >= 0)
        close(fd);
    /* Full (EAGAIN, ENOBUFS), or this user may not send (EACCES, EPERM:
     * the command dropped privileges): counted.  A channel that is gone
     * (ENOENT, ECONNREFUSED) has no count to add to -- unless the counter
     * was locked before resmon's seal removed the socket: the seal waits
     * for this lock before its last read, so the drop is in the summary
     * (a sender that opened the counter just before the seal and sent just
     * after it was in neither the phases nor the count). */
    if (sent < 0 && (locked || (err != ENOENT && err != ECONNREFUSED && err != ENOTDIR)))
        count_dropped(counter);
    if (counter >= 0)
        close(counter); /* the lock with it: resmon's seal may go on */
    return 0;
}
