/*
 * probe_read.c -- the reads of one tracked process (see probe_state.h):
 * its CPU clock, statm and stat.  A leaf of the probe: it calls only the
 * file readers and parsers below it, never back into the probe's other
 * files, which all read processes through it.
 */
#include "probe_state.h"
#include "fileio.h"
#include "regular_file.h"
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int read_cpu_ns(const rm__tracked *t, uint64_t *ns)
{
    struct timespec ts;
    if (clock_gettime(t->cpu_clock, &ts) != 0)
        return -ESRCH; /* the kernel answers EINVAL once the process is gone */
    *ns = rm__timespec_ns(&ts);
    return 0;
}

int rm__probe_read_cpu(const rm__tracked *t, uint64_t *ns)
{
    return read_cpu_ns(t, ns);
}

/* statm shows the address space of the thread it names.  Through the
 * leader's (the process's) a process whose main thread exited while its other
 * threads run -- pthread_exit in main -- reads as a zombie does: zeros (stat
 * shows its leader Z), yet its threads go on using all its memory and CPU.
 * Taken for a zombie, such a root ended the run at its main thread's exit (a
 * program of 100 MiB for 2 s: 3 samples of 1.2 MiB over 0.2 s), and a
 * child's memory read 0 and its record ended early.  Any other live thread
 * shows the memory: the first of them whose statm shows any is read.  A
 * zombie (its leader alone left) lists no other thread: it reads zeros, at
 * the cost of one listing of its task directory.  Returns 0, -ESRCH (no
 * other thread shows memory: a zombie), or -EMFILE / -ENFILE when there was
 * no descriptor to look with -- then nothing is known, and zeros must not
 * be taken for an end. */
static int read_statm_of_another_thread(const rm__tracked *t, uint64_t *size_pages, uint64_t *rss_pages)
{
    int task_fd = rm__openat(t->dir_fd, "task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (task_fd < 0)
        return errno == EMFILE || errno == ENFILE ? -errno : -ESRCH;
    char dirents[4096];
    int rc = -ESRCH, starved = 0;
    ssize_t len;
    while (rc < 0 && (len = getdents64(task_fd, dirents, sizeof dirents)) > 0) {
        for (ssize_t at = 0; rc < 0 && at < len;) {
            const struct dirent64 *entry = (const struct dirent64 *)(dirents + at);
            at += entry->d_reclen;
            char *end;
            long tid = strtol(entry->d_name, &end, 10);
            if (end == entry->d_name || *end || tid == (long)t->pid)
                continue;
            char path[48], text[128];
            snprintf(path, sizeof path, "%ld/statm", tid);
            ssize_t n = rm__read_kernel_file_at(task_fd, path, text, sizeof text);
            if (n > 0 && rm__parse_statm(text, (size_t)n, size_pages, rss_pages) == 0 && *size_pages != 0)
                rc = 0;
            starved |= n == -EMFILE || n == -ENFILE;
        }
    }
    close(task_fd);
    return rc < 0 && starved ? -EMFILE : rc;
}

/* Whether a process whose leader reads as a zombie has other threads, by
 * its stat (the leader's Z and the group's thread count) through the file
 * kept open on it: nothing opened.  0 when unknown -- a zombie's zeros then,
 * as before: taken for live, a child that ended would keep its RSS and be
 * taken for one that moved out of a cgroup (its CPU counted twice). */
static int has_other_threads(const rm__tracked *t)
{
    if (t->stat_fd < 0)
        return 0;
    char text[1024];
    ssize_t n = rm__pread_file(t->stat_fd, text, sizeof text);
    rm__proc_stat st;
    return n > 0 && rm__parse_stat(text, (size_t)n, &st) == 0 && st.num_threads > 1;
}

int rm__probe_read_statm(const rm__tracked *t, rm__process_reading *out)
{
    char text[128];
    ssize_t n = t->statm_fd >= 0 ? rm__pread_file(t->statm_fd, text, sizeof text)
                                 : rm__read_kernel_file_at(t->dir_fd, "statm", text, sizeof text); /* not kept: rm__keep_open */
    if (n == -ENOENT)
        n = -ESRCH;
    if (n < 0)
        return (int)n;
    uint64_t size_pages;
    int rc = rm__parse_statm(text, (size_t)n, &size_pages, &out->rss_pages);
    if (rc == 0 && size_pages == 0 && t->dir_fd >= 0) {
        int other = read_statm_of_another_thread(t, &size_pages, &out->rss_pages); /* -ESRCH: a zombie's zeros */
        if ((other == -EMFILE || other == -ENFILE) && has_other_threads(t)) {
            /* No descriptor to ask them, but its threads live on (its stat,
             * kept open, counts them): its last reading stands. */
            out->rss_pages = t->rss_pages;
            size_pages = 1;
        }
    }
    out->has_memory = size_pages != 0;
    return rc;
}

/* One process's CPU clock and resident memory (statm). */
int rm__probe_read_process(const rm__tracked *t, rm__process_reading *out)
{
    int rc = read_cpu_ns(t, &out->cpu_ns);
    return rc < 0 ? rc : rm__probe_read_statm(t, out);
}

/* A process's stat, read and parsed once into out->st for everyone that
 * needs it (the CPU of reaped children, the parent, the start time, the
 * groups' counts and faults); opened at the first need and kept open.
 * Through that kept-open file a process already reaped still reads, but
 * released: its parent shows as 0 and its children's CPU as 0.  Taken for a
 * live process's, that reading lost its parent (so the CPU its parent's
 * cutime took over was never settled: counted twice, CI's test_tree) and
 * reset its children's CPU.  A process whose parent was known reads gone.
 * So does one in state X (dead: its parent is reaping it), whose figures
 * still read whole: its parent's counters (cutime, faults, I/O) take it
 * over before it is released, so a parent read earlier in the same reading
 * may already hold it -- taken for live, it was counted twice until the
 * next reading settled it, and for good when that was the window's last
 * (161 of 932 000 stat reads of children being reaped read X, whole). */
int rm__probe_read_stat(rm__tracked *t, rm__process_reading *out)
{
    int fd = t->stat_fd;
    if (fd < 0) {
        fd = rm__openat(t->dir_fd, "stat", RM__READ_FLAGS);
        if (fd < 0)
            return errno == ENOENT ? -ESRCH : -errno;
        if (rm__keep_open(fd))
            t->stat_fd = fd;
    }
    char text[1024];
    ssize_t n = rm__pread_file(fd, text, sizeof text);
    if (fd != t->stat_fd)
        close(fd); /* read once: no descriptor to spare (rm__keep_open) */
    if (n < 0)
        return (int)n;
    int rc = rm__parse_stat(text, (size_t)n, &out->st);
    if (rc == 0 && ((out->st.ppid == 0 && t->ppid != 0) || out->st.state == 'X'))
        rc = -ESRCH;
    out->stat_read = rc == 0;
    return rc;
}
