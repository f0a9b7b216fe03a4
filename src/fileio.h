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
 * fails at once, but without the fstat a sample would pay for each file.
 * Only for files the kernel shows as one record (/proc/PID/stat, statm,
 * status; a sysfs attribute): the first read returns such a file whole
 * when it fits, so a read shorter than asked is its end and the read that
 * would return 0 is not made -- a quarter of the system calls of a wide
 * tree's statm refreshes past the kept-open budget.  (A regular file, a
 * test's fixture, reads short only at its end too.)  Not for a file of
 * many records (a children list, cgroup.procs, smaps): there a short read
 * is one record's end. */
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

/* Whether fd, a per-process file just opened (statm, stat, a group's
 * file), may stay open for the next readings (1: it is counted, and closed
 * with rm__close_kept) or must be read and closed now (0).  Kept open, a
 * re-read costs one pread; but each process's directory must stay open (it
 * pins the process: a reused pid is never read for it), and in a wide tree
 * the files kept beside the directories took the descriptors: 10 000
 * sleepers under a hard limit of 20 000 left 5 000 processes untracked,
 * counted unreadable.  So at most an eighth of the hard limit is kept (the
 * walker keeps its own quarter, proc_tree.c; the directories and the files
 * read once need the rest: a quarter left 7 500 of 10 000 sleepers
 * unreadable, each read once needing a free descriptor); past it a file is opened
 * through the process's directory at each reading (openat + read + close;
 * for a sleeping process, once a refresh). */
int rm__keep_open(int fd);
void rm__close_kept(int fd);
/* Counts fd as kept whatever the budget (the root's stat: one a probe). */
void rm__count_kept(int fd);
/* Whether a read failed for want of a descriptor (-EMFILE, -ENFILE): a
 * file past the budget, opened at each reading, may find none -- the
 * process is not gone, its last reading stands. */
int rm__starved(long rc);

/* Reads the hard limit that rm__keep_open goes by: at each probe's start
 * (a limit lowered since is heeded). */
void rm__keep_open_limit_refresh(void);

/* pread from offset 0 of an already open file (the cheap way to re-read
 * /proc/PID/statm every sample).  Returns the length read or a negative
 * errno. */
ssize_t rm__pread_file(int fd, char *buf, size_t cap);

#endif
