/*
 * target.c -- resmon_process_check: whether a process can be monitored at
 * all, and when not, why, from its /proc/PID/stat (state and vsize, parsed
 * by procfs.c's rm__parse_stat).
 *
 * A zombie (state Z, or X while it is being reaped) has exited: its memory is
 * gone and its CPU time is final, so a window on it holds one sample of
 * nothing.  A kernel thread has no address space of its own (vsize 0 while
 * alive), so every memory figure would read 0.  resmon_monitor_start still
 * accepts both (a window on a zombie ends at once with one sample, as a
 * target that exits does); this call lets a caller refuse them first and
 * say why.
 */
#include "resmon.h"

#include "fileio.h"
#include "procfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int resmon_process_check(pid_t pid)
{
    if (pid <= 0)
        return -EINVAL;
    const char *root = rm__proc_root();
    int proc_fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (proc_fd < 0)
        return -errno;
    int rc = rm__check_proc_namespace(proc_fd, strcmp(root, "/proc") == 0);
    char path[32], text[1024];
    snprintf(path, sizeof path, "%d/stat", (int)pid);
    ssize_t n = rc < 0 ? rc : rm__read_file_at(proc_fd, path, text, sizeof text);
    close(proc_fd);
    if (n < 0)
        return n == -ENOENT ? -ESRCH : (int)n;
    rm__proc_stat stat;
    if ((rc = rm__parse_stat(text, (size_t)n, &stat)) < 0)
        return rc;
    /* A zombie leader with threads still running (its main thread called
     * pthread_exit) is a live process: stat shows its leader's state and
     * no address space, its threads hold both (see probe_read.c). */
    int main_thread_exited = stat.state == 'Z' && stat.num_threads > 1;
    if ((stat.state == 'Z' || stat.state == 'X') && !main_thread_exited)
        return -ECHILD;
    if (stat.vsize == 0 && !main_thread_exited)
        return -ENOEXEC;
    return 0;
}
