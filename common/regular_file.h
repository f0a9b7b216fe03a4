/*
 * regular_file.h -- opening a file that must be a regular file, never
 * blocking on what is not one.
 *
 * open(2) of a FIFO for reading waits for a writer, for ever, and no signal
 * handler resmon has can end that wait on its sampler thread; a tty or
 * another device may block the read that follows.  Every file resmon reads
 * as data (a cgroup's or /proc's files through a path a user gave, the
 * inputs of compare and plot) is opened here: O_NONBLOCK, so the open itself
 * returns at once whatever the file is, then fstat, and anything but a
 * regular file is closed again and refused with -ESPIPE (what pread says of
 * a pipe), its kind in *mode for the message (rm__file_kind).
 *
 * O_NONBLOCK is left set: it changes nothing for a regular file (nor for
 * /proc, sysfs or cgroupfs files, which are regular files).
 *
 * Shared by the library and the resmon command, header-only (static inline),
 * as utf8.h is.
 */
#ifndef RESMON_REGULAR_FILE_H
#define RESMON_REGULAR_FILE_H

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

/* The flags every read of a data file is opened with: the open cannot block
 * on a FIFO nor make a tty resmon's controlling terminal. */
#define RM__READ_FLAGS (O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)

/* Opens path (relative to dirfd, or AT_FDCWD) for reading.  Returns the
 * descriptor, or a negative errno: -ESPIPE when it is there but no regular
 * file (a FIFO, socket or device; a directory is -EISDIR), its st_mode then
 * in *mode when mode is not NULL. */
static inline int rm__open_regular_at(int dirfd, const char *path, mode_t *mode)
{
    int fd = openat(dirfd, path, RM__READ_FLAGS);
    if (fd < 0)
        return -errno;
    struct stat st;
    if (fstat(fd, &st) < 0) {
        int err = errno;
        close(fd);
        return -err;
    }
    if (mode)
        *mode = st.st_mode;
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return S_ISDIR(st.st_mode) ? -EISDIR : -ESPIPE;
    }
    return fd;
}

/* What a file of this st_mode is, for "b.json: a FIFO, not a regular file". */
static inline const char *rm__file_kind(mode_t mode)
{
    switch (mode & S_IFMT) {
    case S_IFREG:
        return "a regular file";
    case S_IFDIR:
        return "a directory";
    case S_IFIFO:
        return "a FIFO";
    case S_IFSOCK:
        return "a socket";
    case S_IFCHR:
        return "a character device";
    case S_IFBLK:
        return "a block device";
    default:
        return "an unknown kind of file";
    }
}

#endif
