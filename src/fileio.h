/*
 * fileio.h -- reading small kernel files whole: /proc, sysfs, powercap.
 *
 * Kernel pseudo-files are read in one go into a caller's buffer; a read may
 * return fewer bytes than asked, or fail with EINTR, and both are retried
 * here so that every reader of /proc and /sys gets the same behaviour.  Both
 * functions return the length read or a negative errno, never print, and
 * always NUL-terminate buf (a cap of 0 is -EINVAL).
 */
#ifndef RESMON_FILEIO_H
#define RESMON_FILEIO_H

#include <stddef.h>
#include <sys/types.h>

/* Reads a whole file into buf (at most cap - 1 bytes, then NUL-terminates),
 * retrying EINTR and short reads.  path is relative to dirfd (or absolute,
 * or relative to the working directory with AT_FDCWD).  Opened non-blocking
 * and checked to be a regular file (common/regular_file.h): a FIFO, socket
 * or device is -ESPIPE, never a wait.  Returns the length or a negative
 * errno. */
ssize_t rm__read_file_at(int dirfd, const char *path, char *buf, size_t cap);

/* rm__read_file_at without the type check, for a kernel file re-read every
 * sample (a thread's /proc status, a GPU's sysfs counter): still opened
 * non-blocking, so a FIFO or device where a fixture put one reads empty or
 * fails at once, but without the fstat a sample would pay for each file. */
ssize_t rm__read_kernel_file_at(int dirfd, const char *path, char *buf, size_t cap);

/* openat(2), for the files the probe and the walker keep open (a few a
 * monitored process: its /proc directory, statm, stat, the groups' files,
 * its task directory and children list).  A wide tree runs into the soft
 * limit on open files (1024 by default) long before the hard one, and a
 * file that cannot be opened is a process not counted: on the first EMFILE
 * the soft limit is raised to the hard one, once, as the JVM and Go's
 * runtime do at their start, and the open tried again.  -1 and errno as
 * openat's. */
int rm__openat(int dirfd, const char *path, int flags);

/* pread from offset 0 of an already open file (the cheap way to re-read
 * /proc/PID/statm every sample).  Returns the length read or a negative
 * errno. */
ssize_t rm__pread_file(int fd, char *buf, size_t cap);

#endif
