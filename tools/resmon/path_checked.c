/*
 * path_checked.c -- where an output path leads, resolved by resmon itself.
 *
 * An output is written beside the file it replaces and renamed over it,
 * relative to the directory held open (output_file.c).  What matters is
 * which directory that is.  Resolved by name -- stat(), realpath(), open()
 * of the directory -- the path is looked up afresh each time, and another
 * user who can write a directory on it (/tmp, /dev/shm) can swap a
 * directory for a link between two lookups and send root's output over a
 * file of their choosing (stop 54's attack won at the 22nd swap).  With
 * fs.protected_symlinks=0, the kernel's own default, a link they planted is
 * followed at once.  So the walk here never looks a name up twice: each
 * component is opened (O_PATH|O_NOFOLLOW) from the directory held before
 * it, a link is read through its own descriptor, checked by the rule the
 * kernel applies with the sysctl on, and its target walked from the
 * directory it sits in (or from /); the last directory reached is kept for
 * every later step.  Links under /proc that name no path (a pipe behind
 * /dev/stdout) are followed by the kernel, as the kernel follows them.
 */
#include "path_checked.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

#ifndef PROC_SUPER_MAGIC
#define PROC_SUPER_MAGIC 0x9fa0
#endif

/* The kernel follows 40 links in one lookup and refuses a 41st. */
enum { MAX_LINKS = 40 };

void path_place_release(path_place *place)
{
    if (place->dir_fd >= 0)
        close(place->dir_fd);
    place->dir_fd = -1;
}

/* The kernel's fs.protected_symlinks rule for the link (lstat'd into link)
 * in the directory dir_fd: in a sticky directory others may write, a link
 * is followed only when it is this user's or the directory owner's. */
static int may_follow(int dir_fd, const struct stat *link)
{
    struct stat parent;
    if (fstat(dir_fd, &parent) != 0)
        return 0;
    if (!(parent.st_mode & S_ISVTX) || !(parent.st_mode & S_IWOTH))
        return 1;
    return link->st_uid == geteuid() || link->st_uid == parent.st_uid;
}

/* A link in /proc (/proc/PID/fd/N, /proc/self/cwd): what it points to is
 * an open file, reached by the kernel whatever its text says ("pipe:[12]",
 * "/tmp/x (deleted)"); only /proc/self and the like ("1234") are names. */
static int is_proc_link(int dir_fd, const char *target)
{
    struct statfs fs;
    if (fstatfs(dir_fd, &fs) != 0 || fs.f_type != PROC_SUPER_MAGIC)
        return 0;
    for (const char *c = target; *c; c++)
        if (*c < '0' || *c > '9')
            return target[0] == '/' || strchr(target, ':') != NULL;
    return 0; /* /proc/self: a directory's name */
}

/* Whether st is the file standard output or error is open on. */
static int behind_standard_stream(const struct stat *st)
{
    struct stat stream;
    for (int fd = STDOUT_FILENO; fd <= STDERR_FILENO; fd++)
        if (fstat(fd, &stream) == 0 && stream.st_dev == st->st_dev && stream.st_ino == st->st_ino)
            return 1;
    return 0;
}

/* done += "/" name (the resolved path, for messages); cut where too long. */
static void path_append(char *done, size_t cap, const char *name)
{
    size_t have = strlen(done);
    if (have == 1 && done[0] == '/')
        have = 0;
    snprintf(done + have, cap - have, "/%s", name);
}

static void path_up(char *done)
{
    char *slash = strrchr(done, '/');
    if (slash && slash != done)
        *slash = '\0';
    else if (slash)
        done[1] = '\0'; /* "/.." is "/" */
}

/* The walk ends at name in the directory cur, which place holds from now
 * (done: cur's resolved path); st is the entry's, NULL where it is not
 * there (a new file's name). */
static int place_entry(path_place *place, int cur, const char *done, const char *name, const struct stat *st,
                       int proc_link)
{
    place->dir_fd = cur;
    place->exists = st != NULL;
    if (st)
        place->st = *st;
    place->proc_link = proc_link;
    snprintf(place->name, sizeof place->name, "%s", name);
    snprintf(place->path, sizeof place->path, "%s", done);
    path_append(place->path, sizeof place->path, name);
    return 0;
}

static int walk_fail(path_place *place, int cur, int fd, int err)
{
    if (cur >= 0)
        close(cur);
    if (fd >= 0)
        close(fd);
    place->dir_fd = -1;
    return -err;
}

static int start_at(const char *path, char *done, size_t cap)
{
    if (path[0] == '/') {
        snprintf(done, cap, "/");
        return open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    }
    /* A working directory longer than PATH_MAX has no name here: the
     * resolved path starts at "." then, the walk itself is the same. */
    if (!getcwd(done, cap))
        snprintf(done, cap, ".");
    return open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
}

int path_place_checked(const char *path, path_place *place)
{
    memset(place, 0, sizeof *place);
    place->dir_fd = -1;
    if (!*path)
        return -ENOENT;
    char rest[2 * PATH_MAX + 2], done[PATH_MAX];
    if (snprintf(rest, sizeof rest, "%s", path) >= (int)sizeof rest)
        return -ENAMETOOLONG;
    int cur = start_at(path, done, sizeof done);
    if (cur < 0)
        return -errno;
    int links = 0;
    /* Set while walking a /proc link's text: the file it led to must be
     * the one the kernel reached through it. */
    int expect = 0;
    struct stat expected = {0};
    const char *at = rest;
    for (;;) {
        while (*at == '/')
            at++;
        if (!*at) { /* the path names a directory ("/", ".", "dir/") */
            if (fstat(cur, &place->st) != 0)
                return walk_fail(place, cur, -1, errno);
            place->dir_fd = cur;
            place->exists = 1;
            snprintf(place->name, sizeof place->name, ".");
            snprintf(place->path, sizeof place->path, "%s", done);
            return 0;
        }
        const char *end = strchr(at, '/');
        size_t len = end ? (size_t)(end - at) : strlen(at);
        if (len > NAME_MAX)
            return walk_fail(place, cur, -1, ENAMETOOLONG);
        char name[NAME_MAX + 1];
        memcpy(name, at, len);
        name[len] = '\0';
        at += len;
        const char *after = at;
        while (*after == '/')
            after++;
        int last = !*after, trailing_slash = last && *at == '/';
        if (strcmp(name, ".") == 0)
            continue;
        if (strcmp(name, "..") == 0) {
            int up = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
            if (up < 0)
                return walk_fail(place, cur, -1, errno);
            close(cur);
            cur = up;
            path_up(done);
            continue;
        }
        int fd = openat(cur, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
            int err = errno;
            if (err != ENOENT || !last)
                return walk_fail(place, cur, -1, err);
            if (trailing_slash) /* "new/": open(O_CREAT) makes nothing there */
                return walk_fail(place, cur, -1, EISDIR);
            if (expect) /* the /proc link's file is gone: its text named another */
                return walk_fail(place, cur, -1, EAGAIN);
            return place_entry(place, cur, done, name, NULL, 0);
        }
        struct stat st;
        if (fstat(fd, &st) != 0)
            return walk_fail(place, cur, fd, errno);
        if (S_ISLNK(st.st_mode)) {
            if (++links > MAX_LINKS)
                return walk_fail(place, cur, fd, ELOOP);
            if (!may_follow(cur, &st)) {
                place->refused_link = 1;
                return walk_fail(place, cur, fd, EACCES);
            }
            char target[PATH_MAX];
            ssize_t n = readlinkat(fd, "", target, sizeof target - 1);
            if (n < 0)
                return walk_fail(place, cur, fd, errno);
            target[n] = '\0';
            close(fd);
            if (n == 0)
                return walk_fail(place, cur, -1, ENOENT);
            if (is_proc_link(cur, target)) {
                struct stat object;
                if (fstatat(cur, name, &object, 0) != 0)
                    return walk_fail(place, cur, -1, errno);
                if (!last || trailing_slash) { /* /proc/self/cwd/out.json: the kernel's jump */
                    int next = openat(cur, name, O_PATH | O_DIRECTORY | O_CLOEXEC);
                    if (next < 0)
                        return walk_fail(place, cur, -1, errno);
                    close(cur);
                    cur = next;
                    if (target[0] == '/')
                        snprintf(done, sizeof done, "%s", target);
                    else
                        path_append(done, sizeof done, name);
                    continue;
                }
                if (target[0] != '/' || !S_ISREG(object.st_mode) || object.st_nlink == 0 ||
                    behind_standard_stream(&object)) {
                    /* a pipe, a socket, a terminal, a deleted file (read
                     * through the link: "exec 7<f; rm f"), or the file
                     * standard output or error writes: written where it
                     * is, or through the stream */
                    return place_entry(place, cur, done, name, &object, 1);
                }
                /* A regular file: replaced in its own directory, which its
                 * text names; walked like any link, it must lead back to
                 * the file the kernel reached. */
                expect = 1;
                expected = object;
            }
            char joined[sizeof rest];
            if (snprintf(joined, sizeof joined, "%s%s", target, at) >= (int)sizeof joined)
                return walk_fail(place, cur, -1, ENAMETOOLONG);
            memcpy(rest, joined, strlen(joined) + 1);
            at = rest;
            if (target[0] == '/') {
                close(cur);
                if ((cur = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
                    return walk_fail(place, -1, -1, errno);
                snprintf(done, sizeof done, "/");
            }
            continue;
        }
        if (last && !trailing_slash) {
            close(fd);
            if (expect && (st.st_dev != expected.st_dev || st.st_ino != expected.st_ino))
                return walk_fail(place, cur, -1, EAGAIN);
            return place_entry(place, cur, done, name, &st, 0);
        }
        if (!S_ISDIR(st.st_mode))
            return walk_fail(place, cur, fd, ENOTDIR);
        close(cur);
        cur = fd;
        path_append(done, sizeof done, name);
    }
}
