/*
 * fileio.c -- reading small kernel files whole (see fileio.h).
 */
#include "fileio.h"
#include "regular_file.h"

#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <pthread.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Reads fd whole into buf and closes it. */
/* one_record: the file is a kernel one that shows itself whole at its first
 * read when it fits (rm__read_kernel_file_at): a read shorter than asked is
 * then the end, and the read that would return 0 is not made. */
static ssize_t read_and_close(int fd, char *buf, size_t cap, int one_record)
{
    size_t used = 0;
    ssize_t result;
    for (;;) {
        if (used == cap - 1) {
            result = (ssize_t)used; /* truncated: callers size buffers for what they parse */
            break;
        }
        ssize_t n = read(fd, buf + used, cap - 1 - used);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            result = -errno;
            break;
        }
        if (n == 0) {
            result = (ssize_t)used;
            break;
        }
        used += (size_t)n;
        if (one_record && used < cap - 1) {
            result = (ssize_t)used;
            break;
        }
    }
    close(fd);
    buf[result >= 0 ? (size_t)result : 0] = '\0';
    return result;
}

ssize_t rm__read_file_at(int dirfd, const char *path, char *buf, size_t cap)
{
    if (cap == 0)
        return -EINVAL;
    buf[0] = '\0';
    int fd = rm__open_regular_at(dirfd, path, NULL);
    return fd < 0 ? fd : read_and_close(fd, buf, cap, 0);
}

/* Raises the soft limit on open files to the hard one (see rm__openat). */
static void raise_open_file_limit(void)
{
    struct rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
        limit.rlim_cur = limit.rlim_max;
        (void)setrlimit(RLIMIT_NOFILE, &limit); /* failing, EMFILE stands */
    }
}

static pthread_once_t open_file_limit_raised = PTHREAD_ONCE_INIT;

/* Per-process files kept open by every probe of this process, and how
 * many may be: an eighth of the hard limit. */
static atomic_long kept_files;
static atomic_long kept_budget = LONG_MAX / 2;

void rm__keep_open_limit_refresh(void)
{
    /* The hard limit, which rm__openat raises the soft one to. */
    struct rlimit limit;
    long budget = LONG_MAX / 2;
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_max != RLIM_INFINITY && limit.rlim_max / 8 < LONG_MAX / 2)
        budget = (long)(limit.rlim_max / 8);
    atomic_store_explicit(&kept_budget, budget, memory_order_relaxed);
}

int rm__keep_open(int fd)
{
    (void)fd;
    long budget = atomic_load_explicit(&kept_budget, memory_order_relaxed);
    if (atomic_fetch_add_explicit(&kept_files, 1, memory_order_relaxed) < budget)
        return 1;
    atomic_fetch_sub_explicit(&kept_files, 1, memory_order_relaxed);
    return 0;
}

void rm__count_kept(int fd)
{
    (void)fd;
    atomic_fetch_add_explicit(&kept_files, 1, memory_order_relaxed);
}

int rm__starved(long rc)
{
    return rc == -EMFILE || rc == -ENFILE;
}

void rm__close_kept(int fd)
{
    if (fd < 0)
        return;
    close(fd);
    atomic_fetch_sub_explicit(&kept_files, 1, memory_order_relaxed);
}

int rm__openat(int dirfd, const char *path, int flags)
{
    int fd = openat(dirfd, path, flags);
    if (fd < 0 && errno == EMFILE) {
        pthread_once(&open_file_limit_raised, raise_open_file_limit);
        fd = openat(dirfd, path, flags);
    }
    return fd;
}

ssize_t rm__read_kernel_file_at(int dirfd, const char *path, char *buf, size_t cap)
{
    if (cap == 0)
        return -EINVAL;
    buf[0] = '\0';
    int fd = rm__openat(dirfd, path, RM__READ_FLAGS);
    return fd < 0 ? -errno : read_and_close(fd, buf, cap, 1);
}

ssize_t rm__pread_file(int fd, char *buf, size_t cap)
{
    if (cap == 0)
        return -EINVAL;
    for (;;) {
        /* The system call itself, not glibc's pread: that is a cancellation
         * point, and in a process with threads (the sampler's) it switches
         * asynchronous cancellation on and off around every call -- 30 of a
         * sample's 50 instructions of reading statm.  Nothing here is
         * cancelled.  (64-bit ABIs only: elsewhere the offset takes two
         * registers, aligned per architecture.) */
#if defined(__LP64__) && defined(SYS_pread64)
        ssize_t n = (ssize_t)syscall(SYS_pread64, fd, buf, cap - 1, (long)0);
#else
        ssize_t n = pread(fd, buf, cap - 1, 0);
#endif
        if (n >= 0) {
            buf[n] = '\0';
            return n;
        }
        if (errno != EINTR)
            return -errno;
    }
}
