/*
 * output_file.c -- one output file of the command, written so that a failed
 * or interrupted run never damages what was there before.
 *
 * A regular file (or a path that does not exist yet) is written to a
 * temporary file in the same directory and renamed over the path only when
 * the output is complete: until then the old file stays exactly as it was,
 * and if anything fails only the temporary file -- which resmon created --
 * is removed.  Where the file system allows it the temporary file has no
 * name (O_TMPFILE) until it is renamed: it is linked as ".NAME.resmon-XXXXXX"
 * just before the rename, every check made already (the rename is the next
 * system call), so a resmon killed (SIGKILL, the OOM killer) while it runs
 * leaves nothing beside the output but in that one gap; elsewhere it has
 * that name from the start, and a kill leaves it (README, Guarantees).  A
 * symbolic link is followed, so the file it points to is replaced and the
 * link stays.  Anything else (a device such as /dev/null,
 * a FIFO) is written in place and never removed, without blocking: a FIFO
 * whose reader stopped reading held a blocking write(2) for ever, SIGTERM
 * included, and the outputs after it were never written; its writes wait
 * through reader_wait.c instead, and give up with it.  "-" is stdout.
 * Every descriptor is close-on-exec, so the command inherits none of them.
 */
#include "output_file.h"
#include "cli.h"
#include "path_checked.h"
#include "text_output.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/fs.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* "-" then names /dev/null, not where the user meant the output to go. */
static int stdout_closed_at_start;
/* And for standard error: "-o /dev/stderr 2>&-" was written into /dev/null, exit 0. */
static int stderr_closed_at_start;

void standard_fds_occupy(void)
{
    /* With fd 0, 1 or 2 closed, the next open() would take its number: the
     * summary would become the command's stdout.  /dev/null holds the place. */
    for (int fd = 0; fd <= 2; fd++)
        if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
            stdout_closed_at_start |= fd == STDOUT_FILENO;
            stderr_closed_at_start |= fd == STDERR_FILENO;
            int null_fd = open("/dev/null", O_RDWR); /* the lowest free number: fd itself */
            if (null_fd > 2)
                close(null_fd); /* cannot happen: fd was free */
        }
}

int stdout_closed_when_started(void)
{
    return stdout_closed_at_start;
}

int stdout_close(const char *who)
{
    if (stdout_closed_at_start) {
        /* `resmon --help >&-`: the text went to the /dev/null holding fd
         * 1's place, lost with status 0. */
        fclose(stdout);
        fprintf(stderr, "%s: cannot write standard output: it was closed when resmon started\n", who);
        return EXIT_USAGE;
    }
    errno = 0;
    if (fclose(stdout) == 0)
        return 0;
    fprintf(stderr, "%s: cannot write standard output: %s\n", who, strerror(errno ? errno : EIO));
    return EXIT_USAGE;
}

/* Reports err (with reason in place of strerror(err) when not NULL) and
 * keeps it in f->error. */
static int fail(output_file *f, int err, const char *reason)
{
    f->error = err;
    snprintf(f->reason, sizeof f->reason, "%s", reason ? reason : "");
    if (!reason)
        reason = strerror(err);
    if (f->silent)
        return -1; /* the caller reports, from f->error */
    fprintf(stderr, "%s: cannot write %s '", f->who ? f->who : "resmon", f->what);
    print_printable(stderr, f->path);
    fprintf(stderr, "': %s\n", reason);
    return -1;
}

/* A path the checked walk refused (path_place_checked): a link the
 * protected_symlinks rule refuses is said as such. */
static int fail_walk(output_file *f, const path_place *place, int rc)
{
    if (rc == -EACCES && place->refused_link)
        return fail(f, EACCES, "another user's symbolic link in a sticky directory others can write "
                               "(as fs.protected_symlinks refuses)");
    if (rc == -EAGAIN)
        return fail(f, EAGAIN, "it changed while it was being opened; nothing was written");
    return fail(f, -rc, NULL);
}

/* Opens the device or FIFO the walk reached, by its entry in the directory
 * held (never the path again; a /proc link is followed as the kernel
 * follows it).  A FIFO without a reader would block open() with no word of
 * why: try without blocking first, and say what resmon waits for before it
 * does. */
static int open_in_place(output_file *f, const path_place *place)
{
    /* Without blocking whatever the walk saw: a FIFO put there since (a
     * socket and a FIFO swapped in a loop by another user) hung the open
     * with no word (stop 55's attack); same_file refuses it after. */
    int flags = O_WRONLY | O_CLOEXEC | O_NOCTTY | (place->proc_link ? 0 : O_NOFOLLOW);
    int fd = openat(place->dir_fd, place->name, flags | O_NONBLOCK);
    if (fd < 0 && errno == ENXIO && S_ISFIFO(place->st.st_mode)) {
        fprintf(stderr, "%s: waiting for a reader on FIFO '", f->who ? f->who : "resmon");
        print_printable(stderr, f->path);
        fprintf(stderr, "' (%s)\n", f->what);
        fd = openat(place->dir_fd, place->name, flags);
    }
    /* Written without blocking (see sink_write): the open file description
     * is resmon's own, no one else's flags change. */
    if (fd >= 0)
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    return fd;
}

static mode_t creation_mode(void)
{
    mode_t mask = umask(0); /* the only way to read it; set back at once */
    umask(mask);
    return 0666 & ~mask;
}

static void forget_temporary(output_file *f);

/* The last component of path (a directory's entry, relative to dir_fd). */
static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* An unnamed file in the directory held open, or -1.  Only where the file
 * can be given a name later through /proc/self/fd (linkat with
 * AT_SYMLINK_FOLLOW, which needs no privilege). */
static int open_unnamed(int dir_fd)
{
    int fd = openat(dir_fd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    if (fd >= 0 && access(link, F_OK) != 0) { /* no /proc: it could never be named */
        close(fd);
        fd = -1;
    }
    return fd;
}

/* Makes temp_path's XXXXXX unique with try (an entry created in the
 * directory held open, which never replaces one): 0 or -errno. */
static int make_unique(output_file *f, int (*try)(output_file *f, const char *name))
{
    char *x = f->temp_path + strlen(f->temp_path) - 6;
    static const char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    unsigned long long seed = (unsigned long long)now.tv_nsec ^ ((unsigned long long)getpid() << 32);
    for (int attempt = 0; attempt < 100; attempt++) {
        for (int i = 0; i < 6; i++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            x[i] = letters[(seed >> 33) % (sizeof letters - 1)];
        }
        int rc = try(f, base_name(f->temp_path));
        if (rc != -EEXIST)
            return rc;
    }
    return -EEXIST;
}

/* Gives the file open as fd (unnamed, O_TMPFILE) the name in dir_fd, never
 * replacing an entry: 0 or -errno (EEXIST where something is there). */
static int link_fd_at(int fd, int dir_fd, const char *name)
{
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    return linkat(AT_FDCWD, link, dir_fd, name, AT_SYMLINK_FOLLOW) == 0 ? 0 : -errno;
}

static int link_unnamed(output_file *f, const char *name)
{
    return link_fd_at(f->fd, f->dir_fd, name);
}

static int create_named(output_file *f, const char *name)
{
    int fd = openat(f->dir_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    f->fd = fd;
    return 0;
}

/* Where nothing is at the final name, the unnamed temporary file (fd) is
 * linked there directly: a kill between naming it and renaming it left
 * ".NAME.resmon-XXXXXX" beside the output (the samples file, published as
 * the command starts, under load).  linkat never replaces an entry, so
 * anything put there since -- a file, a link, a FIFO -- fails it with
 * EEXIST and the usual naming and checked rename follow.  1 when placed. */
static int link_into_place(output_file *f, int fd)
{
    return link_fd_at(fd, f->dir_fd, base_name(f->final_path)) == 0;
}

/* Gives the unnamed temporary file its name: 0 or -errno. */
static int name_temporary(output_file *f)
{
    int rc = make_unique(f, link_unnamed);
    if (rc == 0)
        f->temp_unnamed = 0;
    return rc;
}

/* Creates the temporary file beside final_path, in the directory held open,
 * with the mode (and, where allowed, the owner) the replaced file had. */
static int open_temporary(output_file *f, const struct stat *existing)
{
    const char *base = base_name(f->final_path);
    size_t dir_len = (size_t)(base - f->final_path);
    size_t cap = strlen(f->final_path) + 32;
    if (!(f->temp_path = malloc(cap)))
        return -ENOMEM;
    /* The name is cut so that a target near NAME_MAX still gets a temporary
     * file (".", ".resmon-XXXXXX": 15 bytes more). */
    snprintf(f->temp_path, cap, "%.*s.%.200s.resmon-XXXXXX", (int)dir_len, f->final_path, base);
    int fd = open_unnamed(f->dir_fd);
    f->temp_unnamed = fd >= 0;
    if (fd < 0) { /* a file system without O_TMPFILE, or no /proc */
        int rc = make_unique(f, create_named);
        fd = rc == 0 ? f->fd : -1;
        f->fd = -1;
        if (rc < 0)
            errno = -rc;
    }
    if (fd < 0) {
        int err = errno;
        free(f->temp_path);
        f->temp_path = NULL;
        return -err;
    }
    if (existing) {
        if (fchown(fd, existing->st_uid, existing->st_gid) != 0) {
            /* not root: the new file is the caller's, as any editor's is */
        }
        fchmod(fd, existing->st_mode & 07777);
    } else {
        fchmod(fd, creation_mode());
    }
    if (fstat(fd, &f->made) != 0)
        memset(&f->made, 0, sizeof f->made); /* inode 0: no file is known as it */
    return fd;
}

/* The stream's own write function: stdio forgets why a write failed (a
 * buffer flushed inside fprintf sets only the error flag, and errno is
 * overwritten long before anyone asks), so the first failure's errno is
 * kept here for output_file_publish to report (ENOSPC, EIO, EFBIG...). */
struct output_sink {
    int fd;
    int write_errno;           /* ETIMEDOUT: the reader stopped reading, and the wait gave up */
    int in_place;              /* not a regular file: written without blocking, waiting through wait */
    int borrowed;              /* standard output: the stream's close leaves the descriptor open */
    unsigned long long lost;   /* bytes not written, after the first failure */
    reader_wait *wait;         /* the end's, or own_wait */
    reader_wait own_wait;
};

/* After the first failure nothing more is written, and what comes is
 * counted: the stream is told it was taken, so stdio neither keeps it nor
 * hands it over again. */
static ssize_t sink_write(void *cookie, const char *buf, size_t size)
{
    struct output_sink *sink = cookie;
    size_t done = 0;
    while (done < size && !sink->write_errno) {
        ssize_t n = write(sink->fd, buf + done, size - done);
        if (n > 0) {
            done += (size_t)n;
            if (sink->in_place || sink->borrowed)
                reader_wait_progress(sink->wait);
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && errno == EAGAIN && (sink->in_place || sink->borrowed)) {
            /* Standard output too: a pipe another process made non-blocking
             * (the open file description is shared) is waited for as
             * stdio would block, within the readers' bound. */
            if (!reader_wait_writable(sink->wait, sink->fd))
                sink->write_errno = ETIMEDOUT;
        } else {
            sink->write_errno = n < 0 ? errno : EIO;
        }
    }
    sink->lost += size - done;
    return (ssize_t)size;
}

static int sink_close(void *cookie)
{
    struct output_sink *sink = cookie;
    int rc = sink->borrowed ? 0 : close(sink->fd);
    free(sink);
    return rc;
}

/* A stream over fd whose failed writes keep their errno in f->sink; closing
 * the stream closes fd, unless borrowed (standard output: written as stdio
 * would, blocking, but with the failure's errno kept).  NULL (errno set)
 * when it cannot be made. */
static FILE *sink_open(output_file *f, int fd, int borrowed)
{
    if (!(f->sink = calloc(1, sizeof *f->sink)))
        return NULL;
    f->sink->fd = fd;
    f->sink->borrowed = borrowed;
    struct stat st;
    f->sink->in_place = !borrowed && fstat(fd, &st) == 0 && !S_ISREG(st.st_mode);
    reader_wait_init(&f->sink->own_wait, -1, 0);
    f->sink->wait = &f->sink->own_wait;
    FILE *stream = fopencookie(f->sink, "w", (cookie_io_functions_t){.write = sink_write, .close = sink_close});
    if (!stream) {
        free(f->sink);
        f->sink = NULL;
    }
    return stream;
}

/* The path is checked, then opened by name: in between another user may
 * swap it (a link now pointing at a regular file), and writing in place,
 * with no truncation, would put the new text over the start of that file.
 * What was opened must be what was checked. */
static int same_file(int fd, const struct stat *checked)
{
    struct stat now;
    return fstat(fd, &now) == 0 && (now.st_mode & S_IFMT) == (checked->st_mode & S_IFMT) &&
           now.st_dev == checked->st_dev && now.st_ino == checked->st_ino;
}

static int changed(output_file *f, int fd)
{
    close(fd);
    return fail(f, EAGAIN, "it changed while it was being opened; nothing was written");
}

/* Whether path is fd (1 or 2) in resmon's own fd directory, however the
 * directory is spelled ("/dev/fd/./1", "/proc/self/fd/../fd/1", a link to
 * /proc/self/fd): its real path is /proc/PID/fd or /proc/PID/task/TID/fd. */
static int in_own_fd_directory(const char *path, int fd)
{
    const char *slash = strrchr(path, '/');
    if (!slash || slash[1] != (char)('0' + fd) || slash[2])
        return 0;
    char dir[PATH_MAX], real[PATH_MAX], own[64];
    snprintf(dir, sizeof dir, "%.*s", (int)(slash - path) + 1, path);
    if (!realpath(dir, real))
        return 0;
    int n = snprintf(own, sizeof own, "/proc/%ld/", (long)getpid());
    if (strncmp(real, own, (size_t)n) != 0)
        return 0;
    const char *rest = real + n;
    if (strcmp(rest, "fd") == 0)
        return 1;
    if (strncmp(rest, "task/", 5) != 0)
        return 0;
    rest += 5;
    const char *digits = rest;
    while (*rest >= '0' && *rest <= '9')
        rest++;
    return rest > digits && strcmp(rest, "/fd") == 0;
}

int path_follow_link(char *path, size_t cap)
{
    char target[PATH_MAX];
    ssize_t n = readlink(path, target, sizeof target - 1);
    if (n < 0)
        return -errno;
    target[n] = '\0';
    const char *slash = strrchr(path, '/');
    if (target[0] == '/' || !slash) {
        if ((size_t)n >= cap)
            return -ENAMETOOLONG;
        memcpy(path, target, (size_t)n + 1);
        return 0;
    }
    size_t dir = (size_t)(slash - path) + 1; /* relative to the link's directory */
    if (dir + (size_t)n >= cap)
        return -ENAMETOOLONG;
    memcpy(path + dir, target, (size_t)n + 1);
    return 0;
}

/* Whether path names standard output (fd 1) or error (fd 2) through their
 * aliases (/dev/stdout, /dev/fd/1, /proc/self/fd/1, any spelling of the
 * fd's link), followed link by link: with the stream closed at start they
 * lead to the /dev/null holding its place. */
static int names_stream(const char *path, int fd)
{
    char current[PATH_MAX], own[64], dev_fd[16], self_fd[32], thread_fd[40];
    snprintf(own, sizeof own, "/proc/%ld/fd/%d", (long)getpid(), fd);
    snprintf(dev_fd, sizeof dev_fd, "/dev/fd/%d", fd);
    snprintf(self_fd, sizeof self_fd, "/proc/self/fd/%d", fd);
    snprintf(thread_fd, sizeof thread_fd, "/proc/thread-self/fd/%d", fd);
    snprintf(current, sizeof current, "%s", path);
    for (int hops = 0; hops < 40; hops++) {
        if (strcmp(current, fd == STDOUT_FILENO ? "/dev/stdout" : "/dev/stderr") == 0 ||
            strcmp(current, dev_fd) == 0 || strcmp(current, self_fd) == 0 || strcmp(current, thread_fd) == 0 ||
            strcmp(current, own) == 0 || in_own_fd_directory(current, fd))
            return 1;
        if (path_follow_link(current, sizeof current) < 0)
            return 0;
    }
    return 0;
}

/* Whether dir_fd is a sticky directory others (or a group) may write
 * (/tmp), where another user can put names of their own; its owner in
 * *owner when it is. */
static int in_shared_directory(int dir_fd, uid_t *owner)
{
    struct stat dir;
    if (fstat(dir_fd, &dir) != 0 || !(dir.st_mode & S_ISVTX) || !(dir.st_mode & (S_IWOTH | S_IWGRP)))
        return 0;
    *owner = dir.st_uid;
    return 1;
}

/* The fields every open starts from, the caller's silent and who kept. */
static void output_file_init(output_file *f, const char *path, const char *what)
{
    int silent = f->silent;
    const char *who = f->who;
    memset(f, 0, sizeof *f);
    f->silent = silent;
    f->who = who;
    f->fd = -1;
    f->dir_fd = -1;
    f->path = path;
    f->what = what;
}

/* "-" (fd 1), or the regular file behind fd 1 or 2 by any name: written
 * where that stream stands. */
static int open_standard(output_file *f, int fd)
{
    const char *name = fd == STDOUT_FILENO ? "standard output" : "standard error";
    char why[96];
    /* Written into the /dev/null holding fd 1's place, it would be lost
     * with status 0 (">&-", a closed stdout of a service). */
    if (fd == STDOUT_FILENO && stdout_closed_at_start)
        return fail(f, EBADF, "standard output was closed when resmon started");
    /* Open for reading only (1<file): refused now, not after the run. */
    int mode = fcntl(fd, F_GETFL);
    if (mode >= 0 && (mode & O_ACCMODE) == O_RDONLY) {
        snprintf(why, sizeof why, "%s is open for reading only", name);
        return fail(f, EBADF, why);
    }
    /* Not stdout's own FILE: stdio forgets why a write failed when it
     * was a buffer flushed inside fprintf (">/dev/full" said EIO or
     * ENOSPC by the output's length); the sink keeps it. */
    fflush(fd == STDOUT_FILENO ? stdout : stderr);
    if (!(f->stream = sink_open(f, fd, 1)))
        return fail(f, errno ? errno : ENOMEM, NULL);
    f->fd = fd;
    f->is_stdout = fd == STDOUT_FILENO;
    f->is_stderr = fd == STDERR_FILENO;
    return 0;
}

/* The kernel's facts about an entry that decide a rename over it, read
 * without following it: append-only and immutable (chattr +a, +i), and the
 * mount it is on.  From statx, which needs no open; the flags by
 * FS_IOC_GETFLAGS where statx does not report them (older kernels and file
 * systems), when the entry can be opened for reading. */
typedef struct replace_facts {
    int flags_known, append_only, immutable;
    int mount_known;
    uint64_t mount_id;
} replace_facts;

/* struct statx as the kernel lays it out (linux/stat.h): the C library's
 * may lack stx_mnt_id, or statx itself. */
struct statx_layout {
    uint32_t mask, blksize;
    uint64_t attributes;
    uint32_t nlink, uid, gid;
    uint16_t mode, pad;
    uint64_t ino, size, blocks, attributes_mask;
    struct {
        int64_t sec;
        uint32_t nsec;
        int32_t pad;
    } times[4];
    uint32_t rdev_major, rdev_minor, dev_major, dev_minor;
    uint64_t mnt_id;
    uint64_t spare[13];
};
_Static_assert(sizeof(struct statx_layout) == 256, "struct statx is 256 bytes");
enum {
    STATX_WANT_MNT_ID = 0x1000,    /* STATX_MNT_ID (Linux 5.8) */
    STATX_HAS_IMMUTABLE = 0x10,    /* STATX_ATTR_IMMUTABLE */
    STATX_HAS_APPEND = 0x20,       /* STATX_ATTR_APPEND */
};

/* name "." is the directory itself (dir_fd). */
static void read_replace_facts(int dir_fd, const char *name, replace_facts *facts)
{
    int self = strcmp(name, ".") == 0;
    memset(facts, 0, sizeof *facts);
#ifdef SYS_statx
    struct statx_layout sx;
    memset(&sx, 0, sizeof sx);
    if (syscall(SYS_statx, dir_fd, self ? "" : name, AT_SYMLINK_NOFOLLOW | (self ? AT_EMPTY_PATH : 0),
                (unsigned)STATX_WANT_MNT_ID, &sx) == 0) {
        unsigned both = STATX_HAS_IMMUTABLE | STATX_HAS_APPEND;
        if ((sx.attributes_mask & both) == both) {
            facts->flags_known = 1;
            facts->immutable = !!(sx.attributes & STATX_HAS_IMMUTABLE);
            facts->append_only = !!(sx.attributes & STATX_HAS_APPEND);
        }
        if (sx.mask & STATX_WANT_MNT_ID) {
            facts->mount_known = 1;
            facts->mount_id = sx.mnt_id;
        }
    }
#endif
    if (!facts->flags_known) {
        int fd = openat(dir_fd, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC |
                                          (self ? O_DIRECTORY : 0));
        unsigned int flags = 0; /* the kernel writes an int whatever the ioctl's number says */
        if (fd >= 0 && ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0) {
            facts->flags_known = 1;
            facts->immutable = !!(flags & FS_IMMUTABLE_FL);
            facts->append_only = !!(flags & FS_APPEND_FL);
        }
        if (fd >= 0)
            close(fd);
    }
}

/* Whether this process may replace another user's file in a sticky
 * directory that is not its own: CAP_FOWNER (root has it). */
static int has_cap_fowner(void)
{
    struct __user_cap_header_struct head = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
    memset(data, 0, sizeof data);
    if (syscall(SYS_capget, &head, data) != 0)
        return geteuid() == 0;
    return (data[CAP_TO_INDEX(CAP_FOWNER)].effective & CAP_TO_MASK(CAP_FOWNER)) != 0;
}

/* Why the rename at the end would fail over the regular file at place (or,
 * for a new one, in its directory) although the file may be written: the
 * reason, with *err, or NULL.  access(2) asks whether the file may be
 * written, not whether it may be replaced; these were found only after the
 * command had run, its summary lost (attack 56a, B4). */
static const char *cannot_replace(const path_place *place, int *err)
{
    replace_facts dir, file;
    read_replace_facts(place->dir_fd, ".", &dir);
    *err = EPERM;
    if (dir.flags_known && dir.immutable)
        return "its directory is immutable (chattr +i): no file can be made or replaced in it";
    if (!place->exists)
        return NULL; /* a new name, linked once (O_TMPFILE): an append-only directory takes it (stop 56) */
    if (dir.flags_known && dir.append_only)
        return "its directory is append-only (chattr +a): no file in it can be replaced";
    read_replace_facts(place->dir_fd, place->name, &file);
    if (file.flags_known && file.immutable)
        return "it is immutable (chattr +i): it cannot be replaced";
    if (file.flags_known && file.append_only)
        return "it is append-only (chattr +a): it cannot be replaced";
    if (file.mount_known && dir.mount_known && file.mount_id != dir.mount_id) {
        *err = EBUSY;
        return "it is a mount point (a file mounted over it, as a container's single-file volume): "
               "it cannot be replaced";
    }
    /* The sticky rule of rename(2) and unlink(2), in any sticky directory. */
    struct stat d;
    if (fstat(place->dir_fd, &d) == 0 && (d.st_mode & S_ISVTX) && place->st.st_uid != geteuid() &&
        d.st_uid != geteuid() && !has_cap_fowner())
        return "another user's file in a sticky directory: only its owner or the directory's can replace it";
    return NULL;
}

int output_file_open(output_file *f, const char *path, const char *what)
{
    output_file_init(f, path, what);
    if (strcmp(path, "-") == 0)
        return open_standard(f, STDOUT_FILENO);
    if (stdout_closed_at_start && names_stream(path, STDOUT_FILENO)) /* -o /dev/stdout >&-: as "-" */
        return fail(f, EBADF, "standard output was closed when resmon started");
    if (stderr_closed_at_start && names_stream(path, STDERR_FILENO)) /* -o /dev/stderr 2>&- */
        return fail(f, EBADF, "standard error was closed when resmon started");
    /* Everything by resmon's own walk (path_checked.c): the link rule kept
     * for every link whatever the sysctl says, and the directory reached
     * held, so nothing later looks the path up again.  First, before the
     * streams below: looked up by stat(), another user's link in /tmp to
     * root's log led root's summary into the log behind its stdout (stop
     * 55's attack). */
    path_place place;
    int rc = path_place_checked(path, &place);
    if (rc < 0)
        return fail_walk(f, &place, rc);
    /* The regular file behind standard output or error, by any name
     * (/dev/stdout, /dev/stderr, /proc/self/fd/2, its own path), is that
     * stream, written where it stands, as "-": replaced as a file, it lost
     * everything the file held before and after (tenth review of issue 28:
     * "(echo before; resmon -o /dev/stdout -- echo CMD) > log" kept the JSON
     * alone; stop 53's attack: "-o /dev/stderr 2>err.txt" the command's
     * errors, and under ">log 2>&1" its output and the table too).  Standard
     * output first: under ">log 2>&1" both are the file; but the stream that
     * can write it before one that cannot ("1<f 2>f" is standard error's
     * file, not a refused read-only standard output). */
    int behind = -1; /* the stream the file is behind: fd 1, fd 2 or none */
    struct stat out;
    /* Only where the name is the user's: another user's hard link to root's
     * log, in a sticky directory they can write (fs.protected_hardlinks=0),
     * would send the output into the log; replaced by name instead, the log
     * keeps its own (stop 55's second attack).  A socket behind
     * /dev/stdout (the journal's) is that stream too: it cannot be opened
     * again.  A pipe or terminal is opened again, its own open file whose
     * writes wait through reader_wait and give up. */
    uid_t dir_owner; /* in_shared_directory's, when it is one */
    int may_be_stream = place.exists && ((place.proc_link && S_ISSOCK(place.st.st_mode)) ||
                                         (S_ISREG(place.st.st_mode) &&
                                          (place.st.st_nlink <= 1 || !in_shared_directory(place.dir_fd, &dir_owner))));
    for (int fd = STDOUT_FILENO; may_be_stream && fd <= STDERR_FILENO; fd++) {
        if (fstat(fd, &out) != 0 || out.st_dev != place.st.st_dev || out.st_ino != place.st.st_ino)
            continue;
        int mode = fcntl(fd, F_GETFL);
        if (behind < 0 || (mode >= 0 && (mode & O_ACCMODE) != O_RDONLY))
            behind = fd;
        if (mode >= 0 && (mode & O_ACCMODE) != O_RDONLY)
            break;
    }
    if (behind >= 0) {
        path_place_release(&place);
        return open_standard(f, behind);
    }
    if (place.exists && place.proc_link && S_ISREG(place.st.st_mode)) {
        /* a deleted file behind /proc/PID/fd/N: no directory to replace it in */
        path_place_release(&place);
        return fail(f, ENOENT, "the file it names was deleted; nothing was written");
    }
    /* The kernel's fs.protected_regular and protected_fifos rules, kept
     * whatever the sysctls say, as the link rule is: a file or FIFO another
     * user put at the name in a sticky directory others can write is
     * refused -- written, the FIFO handed root's summary to its reader; a
     * file's owner and mode were kept on the replacement, and the other
     * user read it, command line included (stop 55's third attack). */
    /* (the rules' level 2: a sticky directory a group may write too) */
    if (place.exists && !place.proc_link && (S_ISREG(place.st.st_mode) || S_ISFIFO(place.st.st_mode)) &&
        place.st.st_uid != geteuid() && in_shared_directory(place.dir_fd, &dir_owner) &&
        place.st.st_uid != dir_owner) {
        path_place_release(&place);
        return fail(f, EACCES, S_ISFIFO(place.st.st_mode) ?
                    "another user's FIFO in a sticky directory others can write (as fs.protected_fifos refuses)" :
                    "another user's file in a sticky directory others can write (as fs.protected_regular refuses)");
    }
    int fd;
    if (place.exists && S_ISDIR(place.st.st_mode)) {
        path_place_release(&place);
        return fail(f, EISDIR, NULL);
    }
    if (place.exists && !S_ISREG(place.st.st_mode)) {
        fd = open_in_place(f, &place);
        int err = errno;
        path_place_release(&place);
        if (fd >= 0 && !same_file(fd, &place.st))
            return changed(f, fd);
        if (fd < 0)
            return fail(f, err, NULL);
    } else {
        /* Refused before anything starts, as an unwritable file is. */
        int replace_err;
        const char *why = cannot_replace(&place, &replace_err);
        if (why) {
            path_place_release(&place);
            return fail(f, replace_err, why);
        }
        /* A read-only file stays read-only, for root too: access(2) lets
         * root write any file, the owner's write bit does not. */
        if (place.exists && (!(place.st.st_mode & S_IWUSR) || faccessat(place.dir_fd, place.name, W_OK, 0) != 0)) {
            int err = place.st.st_mode & S_IWUSR ? errno : EACCES;
            path_place_release(&place);
            return fail(f, err, NULL);
        }
        /* Every later step (the temporary file, its rename, the checks at
         * the end) is relative to the directory held, by the entry's name:
         * a resolved path cut at PATH_MAX (a short link to a deep
         * directory) ends in another, so the name alone is kept then. */
        const char *final_path = strcmp(base_name(place.path), place.name) == 0 ? place.path : place.name;
        if (!(f->final_path = strdup(final_path))) {
            path_place_release(&place);
            return fail(f, ENOMEM, NULL);
        }
        f->dir_fd = place.dir_fd; /* the output's now */
        place.dir_fd = -1;
        f->replaces = place.exists;
        if (place.exists)
            f->replaced = place.st;
        fd = open_temporary(f, place.exists ? &place.st : NULL);
        if (fd < 0) {
            char reason[160];
            snprintf(reason, sizeof reason, "%s%s", -fd == ENOENT || -fd == ENOTDIR ? "" :
                     "cannot create a temporary file beside it: ", strerror(-fd));
            forget_temporary(f);
            return fail(f, -fd, reason);
        }
    }
    if (!(f->stream = sink_open(f, fd, 0))) {
        int err = errno ? errno : ENOMEM;
        output_file_discard(f);
        close(fd);
        return fail(f, err, NULL);
    }
    f->fd = fd;
    return 0;
}

int output_file_hold_place(output_file *f, int *dir_fd, char **final_path, int *replaces, struct stat *replaced)
{
    *dir_fd = -1;
    *final_path = NULL;
    *replaces = f->replaces;
    if (f->replaces)
        *replaced = f->replaced;
    if (!f->temp_path || f->dir_fd < 0 || !f->final_path)
        return -EINVAL; /* written in place, or stdout: no place to hold */
    if ((*dir_fd = fcntl(f->dir_fd, F_DUPFD_CLOEXEC, 0)) < 0)
        return -errno;
    if (!(*final_path = strdup(f->final_path))) {
        close(*dir_fd);
        *dir_fd = -1;
        return -ENOMEM;
    }
    return 0;
}

/* Whether st (the entry at the final name) is the file the previous write
 * of this place put there, with the mode resmon gave it: its read-only mode
 * is the umask's, not a user's chmod. */
static int is_own(const output_file *f, const struct stat *st)
{
    return f->has_own && f->own.st_ino != 0 && st->st_dev == f->own.st_dev && st->st_ino == f->own.st_ino &&
           (st->st_mode & 07777) == (f->own.st_mode & 07777);
}

int output_file_open_in(output_file *f, int dir_fd, const char *final_path, const struct stat *replaced,
                        const struct stat *own, const char *path, const char *what)
{
    output_file_init(f, path, what);
    if (own) {
        f->has_own = 1;
        f->own = *own;
    }
    /* The entry itself, never followed: a link or anything but a regular
     * file put there since the first open was put by someone else. */
    struct stat st;
    int exists = fstatat(dir_fd, base_name(final_path), &st, AT_SYMLINK_NOFOLLOW) == 0;
    if (!exists && errno != ENOENT)
        return fail(f, errno, NULL);
    if (exists && !S_ISREG(st.st_mode))
        return fail(f, EEXIST, S_ISLNK(st.st_mode) ? "a symbolic link was put in its place while resmon ran; "
                                                     "not followed, not replaced"
                                                   : "something other than a regular file was put in its place "
                                                     "while resmon ran; not replaced");
    if (exists && !(st.st_mode & S_IWUSR) && !is_own(f, &st))
        return fail(f, EACCES, "it was made read-only while resmon ran; it was not replaced");
    if (!(f->final_path = strdup(final_path)))
        return fail(f, ENOMEM, NULL);
    if ((f->dir_fd = fcntl(dir_fd, F_DUPFD_CLOEXEC, 0)) < 0) {
        int err = errno;
        forget_temporary(f);
        return fail(f, err, NULL);
    }
    int fd = open_temporary(f, replaced);
    if (fd < 0) {
        forget_temporary(f);
        return fail(f, -fd, NULL);
    }
    if (!(f->stream = sink_open(f, fd, 0))) {
        int err = errno ? errno : ENOMEM;
        close(fd);
        output_file_discard(f);
        return fail(f, err, NULL);
    }
    f->fd = fd;
    return 0;
}

void output_file_wait_with(output_file *f, reader_wait *wait)
{
    if (f->sink && wait)
        f->sink->wait = wait;
}

/* What the reader of a FIFO or pipe did not take, for the message: NULL
 * where err is a failure of the file itself (strerror names it). */
static const char *reader_failure(const output_file *f, int err, char *reason, size_t cap)
{
    if (!f->sink || !(f->sink->in_place || f->sink->borrowed) || (err != ETIMEDOUT && err != EPIPE))
        return NULL;
    if (f->sink->borrowed && err == EPIPE)
        return NULL; /* standard output's reader went away: "Broken pipe", as every command says */
    snprintf(reason, cap, "%s; %llu byte%s not written",
             err == EPIPE ? "the reader went away" : reader_wait_why(f->sink->wait), f->sink->lost,
             f->sink->lost == 1 ? "" : "s");
    return reason;
}

/* The temporary file has its final name (or is gone): nothing to rename. */
static void forget_temporary(output_file *f)
{
    if (f->final_path && f->dir_fd >= 0) /* held only with a final path (a struct never opened has 0) */
        close(f->dir_fd);
    free(f->temp_path);
    free(f->final_path);
    f->temp_path = f->final_path = NULL;
    f->temp_unnamed = 0;
    f->dir_fd = -1;
}

/* Flushes the stream; 0 or the errno of the first failed write. */
static int flush_error(output_file *f)
{
    errno = 0;
    int failed = fflush(f->stream) != 0 || ferror(f->stream);
    if (f->sink && f->sink->write_errno)
        return f->sink->write_errno; /* the first failure's, kept when it happened */
    if (failed)
        return errno ? errno : EIO;
    return 0;
}

/* The rule of output_file_open, at the rename: a file made read-only while
 * resmon ran (chmod a-w to keep it) is not replaced either; resmon's own
 * from the previous write (is_own) was not made so. */
static int became_read_only(const output_file *f)
{
    struct stat st;
    return f->final_path && fstatat(f->dir_fd, base_name(f->final_path), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
           S_ISREG(st.st_mode) && !(st.st_mode & S_IWUSR) && !is_own(f, &st);
}

/* The rule of output_file_open, at the rename: a FIFO or a device put where
 * the file was while resmon ran (rm; mkfifo) is never replaced by a regular
 * file.  Its reader waits for the output there, which was written for a
 * file: it is refused, as a path that changes while it is opened is.  So is
 * a symbolic link put there (the entry, never followed: the link to a file
 * read as that file, and the rename then replaced the link, which resmon
 * did not make, as --textfile's rewrite and --resmon-json refuse it).  NULL,
 * or the reason, in reason (cap bytes). */
static const char *became_special(const output_file *f, char *reason, size_t cap)
{
    struct stat st;
    if (!f->final_path || fstatat(f->dir_fd, base_name(f->final_path), &st, AT_SYMLINK_NOFOLLOW) != 0 ||
        S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))
        return NULL; /* gone, a file, or a directory (rename fails on it, EISDIR) */
    if (S_ISLNK(st.st_mode)) {
        snprintf(reason, cap, "a symbolic link was put in its place while resmon ran; not followed, not replaced");
        return reason;
    }
    const char *kind = S_ISFIFO(st.st_mode) ? "a FIFO" : S_ISCHR(st.st_mode) ? "a character device" :
                       S_ISBLK(st.st_mode) ? "a block device" : S_ISSOCK(st.st_mode) ? "a socket" :
                       "not a regular file";
    snprintf(reason, cap, "it became %s while resmon ran; it was not replaced", kind);
    return reason;
}

/* The checks at the rename (became_read_only, became_special), made before
 * the temporary file gets its name: a kill between that name and the
 * rename leaves .NAME.resmon-XXXXXX beside the output (attack 56a B7), so
 * nothing but the rename comes after the naming.  0, or the errno with the
 * reason in *reason (read_only's, or one written in buf). */
static int still_replaceable(const output_file *f, const char *read_only, char *buf, size_t cap,
                             const char **reason)
{
    if (became_read_only(f)) {
        *reason = read_only;
        return EACCES;
    }
    const char *special = became_special(f, buf, cap);
    if (special) {
        *reason = special;
        return EEXIST;
    }
    /* A file made at the name while resmon ran, in an append-only or
     * immutable directory (which takes a new name, cannot_replace), or one
     * made so since: the rename would fail, and its temporary could not be
     * removed there (stop 56's last attack: .late.json.resmon-XXXXXX left
     * until chattr -a). */
    replace_facts dir, file;
    read_replace_facts(f->dir_fd, ".", &dir);
    read_replace_facts(f->dir_fd, base_name(f->final_path), &file);
    if ((dir.flags_known && (dir.append_only || dir.immutable)) ||
        (file.flags_known && (file.append_only || file.immutable))) {
        *reason = dir.flags_known && (dir.append_only || dir.immutable)
                      ? "a file was made at its name while resmon ran, in an append-only or immutable directory: "
                        "it cannot be replaced"
                      : "it was made append-only or immutable while resmon ran: it cannot be replaced";
        return EPERM;
    }
    return 0;
}

int output_file_publish(output_file *f)
{
    if (f->given_up) { /* said when it happened: one line per output */
        output_file_discard(f);
        return -1;
    }
    if (!f->stream)
        return 0;
    int err = flush_error(f);
    char reader_reason[128];
    const char *reason = err ? reader_failure(f, err, reader_reason, sizeof reader_reason) : NULL;
    if (f->is_stdout || f->is_stderr) {
        fclose(f->stream); /* the sink's: the standard stream stays open */
        f->stream = NULL;
        f->sink = NULL; /* freed by the close */
        f->fd = -1;
        return err ? fail(f, err, reason) : 0;
    }
    if (!err && f->temp_path && fsync(f->fd) != 0)
        err = errno; /* the data must be on disk before the name points at it */
    /* An unnamed file is placed after its close succeeded (close(2)'s error
     * is the last word on the data), through a descriptor kept for that. */
    static const char read_only[] = "it was made read-only while resmon ran; it was not replaced";
    char special_reason[128];
    int checked = 0;
    int unnamed_fd = !err && f->temp_unnamed ? fcntl(f->fd, F_DUPFD_CLOEXEC, 0) : -1;
    if (!err && f->temp_unnamed && unnamed_fd < 0) { /* no descriptor: named while the stream's is open */
        err = still_replaceable(f, read_only, special_reason, sizeof special_reason, &reason);
        checked = 1;
        if (!err)
            err = -name_temporary(f);
    }
    if (fclose(f->stream) != 0 && !err)
        err = errno; /* close(2)'s own: NFS reports a failed write here */
    f->stream = NULL;
    f->sink = NULL; /* freed by the close */
    f->fd = -1;
    if (unnamed_fd >= 0) {
        if (!err && link_into_place(f, unnamed_fd)) {
            close(unnamed_fd);
            forget_temporary(f);
            return 0;
        }
        if (!err) { /* something is there: checked, then named, then renamed over it */
            err = still_replaceable(f, read_only, special_reason, sizeof special_reason, &reason);
            checked = 1;
        }
        if (!err) {
            f->fd = unnamed_fd;
            err = -name_temporary(f);
            f->fd = -1;
        }
    }
    if (!err && f->temp_path && !checked) /* named from the start (no O_TMPFILE) */
        err = still_replaceable(f, read_only, special_reason, sizeof special_reason, &reason);
    if (!err && f->temp_path && renameat(f->dir_fd, base_name(f->temp_path), f->dir_fd, base_name(f->final_path)) != 0)
        err = errno;
    if (unnamed_fd >= 0)
        close(unnamed_fd); /* after the rename, not between; still unnamed (an error): it goes with it */
    if (err) {
        output_file_discard(f);
        return fail(f, err, reason);
    }
    forget_temporary(f);
    return 0;
}

/* The early publication failed: said now, once, and the output is given
 * up.  Its writers (the sampler's thread, the records') still hold the
 * descriptor and may write on: it is made the null device's (dup3, never a
 * close under them), so the temporary file goes with its last descriptor,
 * or by its name where it had one; the end's publish then fails without a
 * word (output_file_publish), and tried again there it printed the same
 * line a second time (attack 56a B8). */
static int give_up(output_file *f, int err, const char *reason)
{
    int null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null_fd >= 0 && f->fd >= 0 && dup3(null_fd, f->fd, O_CLOEXEC) < 0) {
        /* the file keeps what comes; removed by name below, or at exit */
    }
    if (null_fd >= 0)
        close(null_fd);
    if (f->temp_path && !f->temp_unnamed)
        unlinkat(f->dir_fd, base_name(f->temp_path), 0); /* resmon's own temporary file, never the path given */
    forget_temporary(f);
    f->given_up = 1;
    return fail(f, err, reason);
}

int output_file_publish_early(output_file *f)
{
    if (!f->temp_path)
        return 0;
    if (f->temp_unnamed && link_into_place(f, f->fd)) {
        forget_temporary(f);
        return 0;
    }
    /* Checked before the naming, so that only the rename comes after it
     * (still_replaceable). */
    char buf[128];
    const char *reason = NULL;
    int err = still_replaceable(f, "it was made read-only since resmon started; it was not replaced", buf,
                                sizeof buf, &reason);
    if (!err && f->temp_unnamed)
        err = -name_temporary(f);
    if (err)
        return give_up(f, err, reason);
    if (renameat(f->dir_fd, base_name(f->temp_path), f->dir_fd, base_name(f->final_path)) != 0)
        return give_up(f, errno, NULL);
    forget_temporary(f);
    return 0;
}

void output_file_discard(output_file *f)
{
    if (f->stream)
        fclose(f->stream); /* standard output's sink leaves fd 1 open */
    f->stream = NULL;
    f->sink = NULL; /* freed by the close */
    f->fd = -1;
    if (f->temp_path && !f->temp_unnamed)
        unlinkat(f->dir_fd, base_name(f->temp_path), 0); /* resmon's own temporary file, never the path given */
    forget_temporary(f);
}
