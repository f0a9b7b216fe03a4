/*
 * metrics.c -- the optional metric groups of a monitored target (see
 * metrics.h).
 */
#include "metrics.h"
#include "fileio.h"
#include "regular_file.h"
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#define DEFAULT_DETAIL_INTERVAL_SEC 0.5

/* The sources a process is asked for (RM__SOURCE_* read per process). */
#define PROCESS_SOURCES (RM__SOURCE_STAT | RM__SOURCE_SWITCHES | RM__SOURCE_SMAPS | RM__SOURCE_IO | RM__SOURCE_FDS)

/* The metric list (metric_list.h) as the reading uses it: each slot's
 * source, and each sample field's group, source, slot and scale. */
#define SLOT_SOURCE(group, sample_field, summary_field, fold, unit, column, prometheus, help, words, source, slot, \
                    scale)                                                                                          \
    [RM__SLOT_NAME_##slot] = RM__SOURCE_##source,
static const unsigned char slot_source[RM__SLOT_COUNT] = {RM__METRIC_LIST(SLOT_SOURCE)};

enum { SCALE_ONE, SCALE_KIB_TO_MIB, SCALE_BYTES_TO_MIB, SCALE_TICKS };
static const double scale_divisor[] = {[SCALE_ONE] = 1.0, [SCALE_KIB_TO_MIB] = 1024.0,
                                       [SCALE_BYTES_TO_MIB] = RM__BYTES_PER_MIB};

typedef struct sample_figure {
    size_t offset;  /* in resmon_sample */
    unsigned groups; /* the groups that show it (unreadable_procs: any but NETWORK) */
    unsigned char source, slot, scale;
} sample_figure;

#define SAMPLE_FIGURE(group, sample_field, summary_field, fold, unit, column, prometheus, help, words, source, slot, \
                      scale)                                                                                          \
    {offsetof(resmon_sample, sample_field), (group) ? (group) : RESMON_METRIC_ALL & ~RESMON_METRIC_NETWORK,       \
     RM__SOURCE_##source, RM__SLOT_NAME_##slot, SCALE_##scale},
static const sample_figure sample_figures[] = {RM__METRIC_LIST(SAMPLE_FIGURE)};
#define SAMPLE_FIGURE_COUNT (sizeof sample_figures / sizeof *sample_figures)

static void derive_from_readers(rm__metrics *m);

void rm__metrics_init(rm__metrics *m, unsigned groups, double detail_interval_sec, int tree, long ticks_per_sec)
{
    memset(m, 0, sizeof *m);
    m->groups = groups & RESMON_METRIC_ALL;
    m->tree = tree;
    m->detail_interval_ns = (uint64_t)llround((detail_interval_sec > 0 ? detail_interval_sec
                                                                      : DEFAULT_DETAIL_INTERVAL_SEC) * 1e9);
    m->tick_ns = ticks_per_sec > 0 ? 1000000000u / (uint64_t)ticks_per_sec : 0;
    m->net_fd = -1;
    m->pss_exempt_until_ns = m->pss_exempt_until_next_ns = UINT64_MAX;
    for (size_t i = 0; i < SAMPLE_FIGURE_COUNT; i++)
        if (m->groups & sample_figures[i].groups) {
            m->wanted |= sample_figures[i].source & PROCESS_SOURCES;
            m->shown[m->shown_count++] = (unsigned char)i;
        }
    m->known_sources = RM__SOURCE_ANY;
    derive_from_readers(m);
}

void rm__metrics_open_network(rm__metrics *m, int proc_fd, pid_t root)
{
    if (!(m->groups & RESMON_METRIC_NETWORK))
        return;
    char path[48];
    snprintf(path, sizeof path, "%d/net/dev", (int)root);
    m->net_fd = rm__openat(proc_fd, path, RM__READ_FLAGS);
}

void rm__metrics_free(rm__metrics *m)
{
    if (m->net_fd >= 0)
        close(m->net_fd);
    m->net_fd = -1;
}

void rm__process_metrics_init(rm__process_metrics *pm, unsigned count_from_zero)
{
    memset(pm, 0, sizeof *pm);
    pm->io_fd = pm->smaps_fd = pm->status_fd = pm->fd_dir_fd = -1;
    pm->count_from_zero = count_from_zero;
    pm->last[RM__PROCESSES] = 1; /* a process whose stat was read counts one */
}

void rm__process_metrics_close(rm__process_metrics *pm)
{
    int *fds[] = {&pm->io_fd, &pm->smaps_fd, &pm->status_fd, &pm->fd_dir_fd};
    for (size_t i = 0; i < sizeof fds / sizeof *fds; i++) {
        rm__close_kept(*fds[i]); /* each kept through rm__keep_open */
        *fds[i] = -1;
    }
}

void rm__metrics_start_reading(rm__metrics *m, int baseline)
{
    if (!m->groups)
        return; /* the default: a sample costs what it did before the groups */
    if (baseline)
        for (size_t c = 0; c < RM__COUNTER_COUNT; c++) {
            m->counted[c] = 0;
            m->figure[c] = 0;
        }
    m->known_sources = RM__SOURCE_ANY;
    /* The levels' sums and the reading's own. */
    memset(&m->figure[RM__COUNTER_COUNT], 0, (RM__SLOT_COUNT - RM__COUNTER_COUNT) * sizeof *m->figure);
    if (m->ended_smaps)
        memset(m->ended, 0, sizeof m->ended);
    m->ended_smaps = 0;
    m->pss_exempt_until_next_ns = UINT64_MAX;
}

/* pread of a file kept open (opened at first use).  -ESRCH when the process
 * is gone, another negative errno when refused. */
static ssize_t read_kept_open(int dir_fd, int *fd, const char *name, char *buf, size_t cap)
{
    if (*fd < 0) {
        int opened = rm__openat(dir_fd, name, RM__READ_FLAGS);
        if (opened < 0)
            return errno == ENOENT ? -ESRCH : -errno;
        if (!rm__keep_open(opened)) { /* read once: no descriptor to spare */
            ssize_t n = rm__pread_file(opened, buf, cap);
            close(opened);
            return n;
        }
        *fd = opened;
    }
    return rm__pread_file(*fd, buf, cap);
}

/* smaps_rollup is bound to the address space it was opened on: once the
 * process execs, a kept descriptor reads only an error, never the new
 * image's memory -- or, while a clone keeps the old memory alive, the old
 * memory (rm__metrics_read_process closes it at an exec).  A failed read is
 * retried once on a fresh descriptor. */
static ssize_t read_smaps_rollup(int dir_fd, int *fd, char *buf, size_t cap)
{
    ssize_t n = read_kept_open(dir_fd, fd, "smaps_rollup", buf, cap);
    if (n < 0 && *fd >= 0) {
        rm__close_kept(*fd);
        *fd = -1;
        n = read_kept_open(dir_fd, fd, "smaps_rollup", buf, cap);
        if (rm__starved(n))
            n = -EAGAIN; /* a new image with no descriptor to read it: the old one's figure must not stand */
    }
    return n;
}

/* Context switches are counted per thread: the kernel keeps no live
 * process-wide figure anywhere in /proc (status, sched and the task's stat
 * show one thread's; the thread group's sum, with its ended threads', goes
 * only to getrusage and wait4 of the process itself or its parent).  So a
 * process's figure is the sum over the threads alive now; a thread's last
 * switches before it ended are lost.  A process of one thread -- most of a
 * tree -- needs only its own status, kept open and re-read (one pread).
 * One of many threads costs a status read per thread, about 10-25 us each,
 * so a process of T threads has them read at most every
 * ceil(T / SWITCH_THREADS_PER_READING) readings (and at the window's last,
 * so its total is exact for the threads alive then); between, its figure
 * stands still.  A reading thus reads about SWITCH_THREADS_PER_READING
 * thread files per process on average, however many threads it has. */
#define SWITCH_THREADS_PER_READING 64u

static int parse_switches(const char *text, size_t n, uint64_t *voluntary, uint64_t *involuntary)
{
    return rm__parse_status_u64(text, n, "voluntary_ctxt_switches", voluntary) == 0 &&
                   rm__parse_status_u64(text, n, "nonvoluntary_ctxt_switches", involuntary) == 0
               ? 0
               : -EINVAL;
}

static int read_context_switches(int dir_fd, uint64_t *voluntary, uint64_t *involuntary)
{
    int task_fd = rm__openat(dir_fd, "task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (task_fd < 0)
        return errno == ENOENT ? -ESRCH : -errno;
    DIR *dir = fdopendir(task_fd);
    if (!dir) {
        close(task_fd);
        return -ENOMEM;
    }
    uint64_t v = 0, iv = 0;
    int threads = 0, starved = 0;
    struct dirent *entry;
    while ((entry = readdir(dir))) {
        if (entry->d_name[0] < '0' || entry->d_name[0] > '9')
            continue;
        char path[300], text[4096];
        snprintf(path, sizeof path, "%s/status", entry->d_name);
        ssize_t n = rm__read_kernel_file_at(dirfd(dir), path, text, sizeof text);
        uint64_t tv, tiv;
        if (n > 0 && parse_switches(text, (size_t)n, &tv, &tiv) == 0) {
            v += tv;
            iv += tiv;
            threads++;
        }
        starved |= rm__starved(n);
    }
    closedir(dir);
    /* A thread left out for want of a descriptor would lower the sum, and
     * the next whole scan count its switches again: none of it counts. */
    if (starved)
        return -EMFILE;
    if (threads == 0)
        return -ESRCH;
    *voluntary = v;
    *involuntary = iv;
    return 0;
}

/* A process's context switches now (see SWITCH_THREADS_PER_READING). */
static int read_switches(const rm__metrics *m, rm__process_metrics *pm, int dir_fd, const rm__proc_stat *st,
                         uint64_t *voluntary, uint64_t *involuntary)
{
    uint64_t threads = st ? st->num_threads : 0; /* stat is read with this group (faults) */
    if (threads == 1) {
        char text[4096];
        ssize_t n = read_kept_open(dir_fd, &pm->status_fd, "status", text, sizeof text);
        return n > 0 ? parse_switches(text, (size_t)n, voluntary, involuntary) : n < 0 ? (int)n : -EINVAL;
    }
    if (pm->primed & RM__SOURCE_SWITCHES && !m->final_reading &&
        ++pm->switch_scans_skipped < (threads + SWITCH_THREADS_PER_READING - 1) / SWITCH_THREADS_PER_READING) {
        *voluntary = pm->last[RM__VOLUNTARY_SWITCHES]; /* stands still until the next scan */
        *involuntary = pm->last[RM__INVOLUNTARY_SWITCHES];
        return 0;
    }
    pm->switch_scans_skipped = 0;
    return read_context_switches(dir_fd, voluntary, involuntary);
}

/* PSS is read again before its interval when RSS has grown by more than a
 * sixteenth (and 1 MiB) since the last read, or shrunk by more than a quarter:
 * an exec, a large allocation or a release would otherwise show up to an
 * interval late, or never in a short window (the command's first reading sees
 * its child before exec).  Growth is watched closely because it makes the
 * peak: a process growing in steps then has its peak PSS within ~6 % of the
 * truth, at one smaps_rollup walk per step. */
static int rss_moved(const rm__process_metrics *pm, uint64_t rss_pages)
{
    uint64_t then = pm->smaps_rss_pages;
    return rss_pages > then + then / 16 + 256 || rss_pages + then / 4 + 256 < then;
}

/* PSS is not read for a process younger than the memory-detail interval
 * whose RSS is below this: its RSS stands in for its PSS and USS (and no swap).  Such a process
 * -- a compiler of a build, a shell -- is most of what a build starts, and
 * each smaps_rollup walks every page table entry (~0.4 ms for 40 MiB), at
 * its first reading, each time its RSS grows and each time the tree's
 * membership changes: it made half of the sampler's CPU on a -j2 build.
 * RSS is PSS for a process that shares nothing, so the estimate errs only
 * by the pages it shares, at most this much per process and only while it
 * is young; a larger process (where sharing can matter: forked children of
 * a big parent) is read as before. */
#define PSS_FROM_RSS_BELOW_BYTES (64u << 20)

/* A fork that has not exec'd shares every page of its parent's: its RSS
 * counts them whole, so it never stands in for its PSS (3 children of a
 * parent that wrote 50 MB made a peak PSS of 201 MB where the truth is
 * ~50), nor does its parent's (which then counted the 50 MB beside the
 * children's quarters: 103 MiB).  After an exec the address space is new
 * (its stack moved), and what it shares is libraries: within the
 * stand-in's bound.  Not known (a hidden stat field, a parent not read)
 * keeps the young-and-small rule. */
static int shares_parent_image(const rm__process_metrics *pm)
{
    return pm->image && pm->image == pm->parent_image;
}

/* Whether a process's PSS is read now (else its RSS stands in): the rule
 * documented at resmon_options.memory_detail_interval_sec.  age_ns is
 * UINT64_MAX when unknown (then it is read). */
static int pss_read_due(const rm__metrics *m, const rm__process_metrics *pm, uint64_t age_ns, uint64_t rss_pages)
{
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    return age_ns >= m->detail_interval_ns || rss_pages * page >= PSS_FROM_RSS_BELOW_BYTES ||
           shares_parent_image(pm) || pm->has_sharing_fork;
}

/* One process's reading, as its readers share it. */
typedef struct process_reading {
    int dir_fd;
    const rm__proc_stat *st; /* its stat of this reading, NULL when not read */
    uint64_t rss_pages;      /* its resident pages now */
    uint64_t boot_ns;        /* CLOCK_BOOTTIME now */
    uint64_t age_ns;         /* since it started; UINT64_MAX when unknown */
    int baseline;
    int zombie;              /* its latest stat showed a zombie */
    uint64_t *now;           /* its counters' lifetime values, by slot */
    unsigned refused;        /* sources refused (another user's, not dumpable) */
    unsigned starved;        /* sources not read for want of a descriptor (EMFILE, ENFILE) */
} process_reading;

/* A source's read failed with rc: refused (counted unreadable), or starved
 * (no descriptor to open its file with: the process is alive and its
 * latest figures stand, rm__metrics_read_process), or gone. */
static void note_failure(process_reading *r, unsigned source, long rc)
{
    if (rm__read_refused(rc))
        r->refused |= source;
    else if (rm__starved(rc))
        r->starved |= source;
}

/* A source's reader: fills r->now[] (its counters) and pm->last[] (its
 * levels), returns its source bit when read, else 0 (adding the bit to
 * r->refused when refused). */
typedef unsigned source_reader(rm__metrics *m, rm__process_metrics *pm, process_reading *r);

/* stat, which the probe read and parsed (once for everyone). */
static unsigned read_stat_source(rm__metrics *m, rm__process_metrics *pm, process_reading *r)
{
    const rm__proc_stat *st = r->st;
    if (!st)
        return 0; /* not read: idle, or starved (r->starved set by the caller) */
    r->now[RM__USER_TICKS] = st->utime + (m->tree ? st->cutime : 0);
    r->now[RM__SYSTEM_TICKS] = st->stime + (m->tree ? st->cstime : 0);
    r->now[RM__MINOR_FAULTS] = st->minflt + (m->tree ? st->cminflt : 0);
    r->now[RM__MAJOR_FAULTS] = st->majflt + (m->tree ? st->cmajflt : 0);
    r->zombie = pm->zombie = st->state == 'Z';
    if (r->zombie && st->num_threads <= 1 && !pm->stands_when_ended) {
        /* Exited, every thread (its stat counts the zombie leader alone; a
         * leader whose other threads run reads Z with more, and is alive,
         * as in target.c): no running process of the tree
         * however late its parent reaps it, with no thread and no memory,
         * as its statm's zero RSS says.  The root's zombie is the window's
         * end: its last live figures stand, as its RSS does (probe.c). */
        pm->last[RM__PROCESSES] = 0;
        pm->last[RM__THREADS] = 0;
        pm->last[RM__VMEM_BYTES] = 0;
    } else if (!r->zombie && st->vsize) { /* alive (a zombie root, or leader with threads, keeps its last) */
        pm->last[RM__VMEM_BYTES] = st->vsize;
        pm->last[RM__THREADS] = st->num_threads;
    } else if (pm->last[RM__THREADS] == 0) {
        /* The root first seen as a zombie (its vsize reads 0): it
         * stands with the thread it ended with, so a tree never shows
         * fewer threads than processes. */
        pm->last[RM__THREADS] = 1;
    }
    return RM__SOURCE_STAT;
}

/* Every thread's status: context switches (see SWITCH_THREADS_PER_READING). */
static unsigned read_switches_source(rm__metrics *m, rm__process_metrics *pm, process_reading *r)
{
    int rc = read_switches(m, pm, r->dir_fd, r->st, &r->now[RM__VOLUNTARY_SWITCHES],
                           &r->now[RM__INVOLUNTARY_SWITCHES]);
    if (rc == 0)
        return RM__SOURCE_SWITCHES;
    note_failure(r, RM__SOURCE_SWITCHES, rc);
    return 0;
}

/* smaps_rollup: PSS, swap and USS, on the schedule of pss_read_due and
 * rm__metrics_plan_pss (a young small process's RSS stands in). */
static unsigned read_smaps_source(rm__metrics *m, rm__process_metrics *pm, process_reading *r)
{
    if (r->zombie)
        return 0; /* no memory map (note_ended_pss keeps its last) */
    if (pm->shares & RM__SHARES_MEMORY) /* another process's pages, held there: no walk of them */
        return pm->smaps_known ? RM__SOURCE_SMAPS : 0;
    uint64_t rss_pages = r->rss_pages;
    int exempt = !pss_read_due(m, pm, r->age_ns, rss_pages);
    if (!exempt && pm->pss_exempt && !m->pss_tree_due)
        m->pss_sharing_changed = 1; /* grew past the floor: the next reading reads the tree (plan_pss) */
    pm->pss_exempt = exempt;
    if (exempt) {
        /* Its age-out makes a tree-wide reading (plan_pss). */
        if (pm->born_ns + m->detail_interval_ns < m->pss_exempt_until_next_ns)
            m->pss_exempt_until_next_ns = pm->born_ns + m->detail_interval_ns;
        /* Opening checks the access a read needs (and walks nothing): a
         * process whose smaps_rollup is refused stays unreadable. */
        int readable = pm->smaps_fd >= 0;
        if (!readable) {
            int fd = rm__openat(r->dir_fd, "smaps_rollup", RM__READ_FLAGS);
            int failure = fd < 0 ? -errno : 0;
            if (fd < 0)
                note_failure(r, RM__SOURCE_SMAPS, failure);
            /* No descriptor to check it with: what the last check found stands. */
            readable = fd >= 0 || (rm__starved(failure) && pm->smaps_known);
            if (fd >= 0 && rm__keep_open(fd))
                pm->smaps_fd = fd;
            else if (fd >= 0)
                close(fd); /* no descriptor to spare: opened again at the next reading */
        }
        pm->smaps_known = pm->pss_from_rss = readable;
        pm->last[RM__PSS_KB] = pm->last[RM__USS_KB] = rss_pages * ((uint64_t)sysconf(_SC_PAGESIZE) / 1024);
        pm->last[RM__SWAP_KB] = 0;
        pm->smaps_read_ns = r->boot_ns;
        pm->smaps_rss_pages = rss_pages;
    } else if (r->baseline || m->final_reading || m->pss_tree_due || !pm->smaps_known || pm->pss_from_rss ||
               rss_moved(pm, rss_pages)) {
        char text[4096];
        m->smaps_reads++;
        ssize_t n = read_smaps_rollup(r->dir_fd, &pm->smaps_fd, text, sizeof text);
        /* smaps_rollup reads the memory map it was opened on.  A child that
         * has not exec'd yet may share its parent's (vfork, as Python's
         * subprocess and posix_spawn start one): kept open, it went on
         * reading the parent's after the exec -- a child that grew to 88
         * MiB read 6.5 MiB, the parent's PSS, for the rest of its life
         * whenever a reading caught it before its exec (under load).  Kept
         * only once it has an image of its own. */
        if (shares_parent_image(pm) && pm->smaps_fd >= 0) {
            rm__close_kept(pm->smaps_fd);
            pm->smaps_fd = -1;
        }
        note_failure(r, RM__SOURCE_SMAPS, n);
        if (rm__starved(n)) /* no descriptor to read it with: the last reading stands, read again next time */
            return pm->smaps_known ? RM__SOURCE_SMAPS : 0;
        pm->pss_from_rss = 0;
        /* A refused read leaves no earlier figure standing: after an exec
         * into a non-dumpable image, the old image's PSS is not this one's. */
        pm->smaps_known = n >= 0 && rm__parse_status_kb(text, (size_t)n, "Pss", &pm->last[RM__PSS_KB]) == 0 &&
                          rm__parse_status_kb(text, (size_t)n, "Swap", &pm->last[RM__SWAP_KB]) == 0;
        uint64_t clean_kb, dirty_kb; /* USS: the pages no other process maps */
        if (pm->smaps_known && rm__parse_status_kb(text, (size_t)n, "Private_Clean", &clean_kb) == 0 &&
            rm__parse_status_kb(text, (size_t)n, "Private_Dirty", &dirty_kb) == 0)
            pm->last[RM__USS_KB] = clean_kb + dirty_kb;
        else
            pm->smaps_known = 0;
        if (pm->smaps_known) {
            pm->smaps_read_ns = r->boot_ns;
            pm->smaps_rss_pages = rss_pages;
        }
    }
    return pm->smaps_known ? RM__SOURCE_SMAPS : 0;
}

/* io */
static unsigned read_io_source(rm__metrics *m, rm__process_metrics *pm, process_reading *r)
{
    (void)m;
    char text[4096];
    ssize_t n = read_kept_open(r->dir_fd, &pm->io_fd, "io", text, sizeof text);
    rm__proc_io io;
    note_failure(r, RM__SOURCE_IO, n);
    if (n < 0 || rm__parse_io(text, (size_t)n, &io) != 0)
        return 0;
    r->now[RM__IO_RCHAR] = io.rchar;
    r->now[RM__IO_WCHAR] = io.wchar;
    r->now[RM__IO_READ_BYTES] = io.read_bytes;
    r->now[RM__IO_WRITE_BYTES] = io.write_bytes;
    r->now[RM__IO_SYSCR] = io.syscr;
    r->now[RM__IO_SYSCW] = io.syscw;
    return RM__SOURCE_IO;
}

/* The fd directory: its entries are the open descriptors.  Kept open and
 * listed again from its start with getdents64 (no DIR: no allocation), in
 * one call for up to ~300 descriptors -- a listing that leaves room for
 * another entry is the whole directory. */
static unsigned read_fds_source(rm__metrics *m, rm__process_metrics *pm, process_reading *r)
{
    (void)m;
    if (pm->shares & RM__SHARES_FILES) /* another process's table, held there */
        return pm->primed & RM__SOURCE_FDS;
    int transient = 0; /* opened for this listing alone: no descriptor to spare */
    if (pm->fd_dir_fd < 0) {
        pm->fd_dir_fd = rm__openat(r->dir_fd, "fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (pm->fd_dir_fd < 0) {
            note_failure(r, RM__SOURCE_FDS, -errno);
            return 0;
        }
        transient = !rm__keep_open(pm->fd_dir_fd);
    } else if (lseek(pm->fd_dir_fd, 0, SEEK_SET) < 0) {
        return 0;
    }
    char buf[8192];
    uint64_t count = 0;
    for (;;) {
        long n = syscall(SYS_getdents64, pm->fd_dir_fd, buf, sizeof buf);
        if (n < 0) {
            note_failure(r, RM__SOURCE_FDS, -errno);
            if (transient) {
                close(pm->fd_dir_fd);
                pm->fd_dir_fd = -1;
            }
            return 0; /* ended (ENOENT), or refused after an exec into a non-dumpable image */
        }
        /* Each entry: d_ino (8 bytes), d_off (8), d_reclen (2), d_type (1), d_name. */
        for (long at = 0; at < n;) {
            unsigned short reclen;
            memcpy(&reclen, buf + at + 16, sizeof reclen);
            count += buf[at + 19] != '.'; /* not . or .. */
            at += reclen ? reclen : n;
        }
        if (n == 0 || (size_t)n + 64 <= sizeof buf) /* room for another entry was left: the end */
            break;
    }
    if (transient) {
        close(pm->fd_dir_fd);
        pm->fd_dir_fd = -1;
    }
    pm->last[RM__OPEN_FDS] = count;
    return RM__SOURCE_FDS;
}

/* The readers, in the order a process is read (stat first: the others use
 * what it showed), with what the kernel does to their figures:
 * stands_when_idle, a process that has not run since its previous reading
 * cannot have moved them (only running does), so its latest stand, unread;
 * folds_into_parent, the kernel adds a reaped child's counts to its
 * parent's (only then is a settled child subtracted). */
static const struct {
    unsigned source;
    unsigned char stands_when_idle, folds_into_parent;
    source_reader *read;
} readers[] = {
    {RM__SOURCE_STAT, 1, 1, read_stat_source},
    {RM__SOURCE_SWITCHES, 1, 0, read_switches_source},
    {RM__SOURCE_SMAPS, 0, 0, read_smaps_source},
    {RM__SOURCE_IO, 1, 1, read_io_source},
    {RM__SOURCE_FDS, 1, 0, read_fds_source},
};
#define READER_COUNT (sizeof readers / sizeof *readers)

static void derive_from_readers(rm__metrics *m)
{
    for (size_t i = 0; i < READER_COUNT; i++) {
        if (readers[i].stands_when_idle)
            m->stands_when_idle |= readers[i].source;
        if (readers[i].folds_into_parent)
            m->folds_into_parent |= readers[i].source;
    }
}

/* The last PSS of a process that ended stands for the reading only when no
 * live process gave one (a command that ended alone: the window ends on
 * what it used, as its RSS does); beside live ones, whose readings hold its
 * shared pages now, it would count them twice.  The root's alone, as for
 * the RSS: a tree whose processes all ended at once (an interrupted run)
 * summed every zombie's last PSS beside the root's RSS (PSS 23 MiB beside
 * an RSS of 1.7, twelfth review of issue 28). */
static void note_ended_pss(rm__metrics *m, const rm__process_metrics *pm)
{
    if (!pm->smaps_known || !pm->stands_when_ended || pm->shares & RM__SHARES_MEMORY)
        return;
    for (size_t l = RM__COUNTER_COUNT; l < RM__LEVEL_END; l++)
        if (slot_source[l] == RM__SOURCE_SMAPS)
            m->ended[l] += pm->last[l];
    m->ended_smaps = 1;
}

/* Whether level l of a process that shares `shares` with its parent is
 * the parent's, counted there (RM__SHARES_*). */
static int shared_level(size_t l, unsigned shares)
{
    if (shares & RM__SHARES_MEMORY && (l == RM__VMEM_BYTES || slot_source[l] == RM__SOURCE_SMAPS))
        return 1;
    return shares & RM__SHARES_FILES && l == RM__OPEN_FDS;
}

void rm__metrics_sharing_ended(rm__process_metrics *pm, unsigned ended)
{
    for (size_t l = RM__COUNTER_COUNT; l < RM__LEVEL_END; l++)
        if (shared_level(l, ended))
            pm->last[l] = 0;
    if (ended & RM__SHARES_MEMORY) {
        pm->smaps_known = 0; /* read afresh, through a file opened on its own memory */
        if (pm->smaps_fd >= 0) {
            rm__close_kept(pm->smaps_fd);
            pm->smaps_fd = -1;
        }
    }
    pm->reread = 1;
}

/* Adds a process's levels from the sources in `from` to this reading's sums. */
static void add_levels(rm__metrics *m, const rm__process_metrics *pm, unsigned from)
{
    for (size_t l = RM__COUNTER_COUNT; l < RM__LEVEL_END; l++)
        if (from & slot_source[l] && !shared_level(l, pm->shares))
            m->figure[l] += pm->last[l];
    m->known_sources |= from;
}

int rm__metrics_need_stat(const rm__metrics *m)
{
    return (m->wanted & RM__SOURCE_STAT) != 0;
}

void rm__metrics_read_process(rm__metrics *m, rm__process_metrics *pm, int dir_fd, const rm__proc_stat *st,
                              int stat_starved, int idle, uint64_t rss_pages, uint64_t boot_ns, int baseline)
{
    if (!m->groups)
        return; /* the default: a sample costs what it did before the groups */
    uint64_t now[RM__COUNTER_COUNT] = {0};
    if (st && m->tick_ns) {
        pm->born_ns = st->starttime * m->tick_ns; /* kept: an idle process's stat is not read */
        pm->born_known = 1;
    }
    if (st) {
        /* An exec changes it (it ran, so its stat is read).  A kept
         * smaps_rollup goes on reading the old memory while a clone keeps
         * it alive (read_smaps_rollup): a parent that exec'd read its
         * clones' PSS as its own. */
        if (pm->image && st->startstack && st->startstack != pm->image && pm->smaps_fd >= 0) {
            rm__close_kept(pm->smaps_fd);
            pm->smaps_fd = -1;
        }
        pm->image = st->startstack;
    }
    process_reading r = {
        .dir_fd = dir_fd,
        .st = st,
        .rss_pages = rss_pages,
        .boot_ns = boot_ns,
        .age_ns = pm->born_known && boot_ns >= pm->born_ns ? boot_ns - pm->born_ns : UINT64_MAX, /* unknown: read */
        .baseline = baseline,
        .now = now,
        .starved = stat_starved ? RM__SOURCE_STAT : 0u,
    };
    unsigned got = 0;
    if (idle) {
        /* It has not run since its previous reading: the sources that only
         * running moves stand as it gave them then, unread. */
        got = pm->primed & m->stands_when_idle;
        for (size_t c = 0; c < RM__COUNTER_COUNT; c++)
            if (got & slot_source[c])
                now[c] = pm->last[c];
        r.zombie = pm->zombie;
    }
    for (size_t i = 0; i < READER_COUNT; i++)
        if (m->wanted & readers[i].source & ~got)
            got |= readers[i].read(m, pm, &r);
    /* A source that found no descriptor to read with stands as it was last
     * read, as an idle process's do: the process is alive (its clock was
     * read), so its counts, threads and sizes are late, not gone -- taking
     * them out made a tree under its open-file limit lose its busy
     * processes from nprocs for as long as the descriptors were short.
     * Its counters then count nothing now and the whole rise at the next
     * reading that finds one. */
    unsigned stand = pm->primed & r.starved & ~got;
    for (size_t c = 0; c < RM__COUNTER_COUNT; c++)
        if (stand & slot_source[c])
            now[c] = pm->last[c];
    got |= stand;
    if (r.zombie)
        note_ended_pss(m, pm);
    /* A zombie has no memory map to ask for. */
    if (m->wanted & ~(r.zombie ? RM__SOURCE_SMAPS : 0u) & ~got & r.refused)
        m->figure[RM__UNREADABLE]++;
    for (size_t c = 0; c < RM__COUNTER_COUNT; c++) {
        unsigned source = slot_source[c];
        if (!(got & source))
            continue;
        /* A source read for the first time counts from now, unless the
         * process was born in this interval (then all of it is the window's). */
        uint64_t from = pm->primed & source ? pm->last[c]
                                            : (pm->count_from_zero & source && !baseline ? 0 : now[c]);
        if (now[c] > from)
            m->counted[c] += (int64_t)(now[c] - from);
        pm->last[c] = now[c]; /* a sum over threads may shrink: count from here */
    }
    pm->primed |= got & ~RM__SOURCE_SMAPS;
    /* Born in the window: each source counts from zero at its first read,
     * which a source starved or refused now has not had yet.  Cleared for
     * all at the first reading, one refused there (a process not dumpable
     * for a while: sudo, setuid) counted from its figure when it became
     * readable, and its parent's counters then settled its whole life:
     * 512 KiB written meanwhile were lost (review 63 F4). */
    pm->count_from_zero &= ~got;
    pm->reread = 0;
    add_levels(m, pm, got);
}

void rm__metrics_add_last_seen(rm__metrics *m, const rm__process_metrics *pm)
{
    if (!m->groups)
        return; /* the default: a sample costs what it did before the groups */
    add_levels(m, pm, pm->primed);
    note_ended_pss(m, pm);
}

void rm__metrics_settle_reaped(rm__metrics *m, const rm__process_metrics *pm)
{
    if (!m->groups)
        return; /* the default: a sample costs what it did before the groups */
    for (size_t c = 0; c < RM__COUNTER_COUNT; c++)
        if (pm->primed & slot_source[c] & m->folds_into_parent)
            m->counted[c] -= (int64_t)pm->last[c];
}

/* The tree-wide reading (metrics.h).  Its rule keeps this true of a sum of
 * PSS: each walked process's reading comes from the latest tree-wide reading
 * or later (read alone after its RSS moved), and no walked process joined
 * or left since that reading -- so the sum mixes readings from before and
 * after a change in sharing only through processes not walked (young and
 * small: their RSS stands in).  Each such process errs the sum by at most
 * the pages it shares with the others: high while it is tracked (its RSS
 * counts them whole), low after it left (the others' readings still count
 * their share of those pages split with it) until the next tree-wide
 * reading, at most the interval later.  A process that stops being exempt
 * is walked: by age, at a tree-wide reading (pss_exempt_until_ns); by
 * growing past the floor, alone (its RSS moved), and the next reading is
 * tree-wide. */
/* A wide tree's tree-wide PSS readings take at most this share of a CPU
 * (a reading of 1000 sleeping processes costs ~25 ms: one every ~50 s) ...
 * and come at least this often, whatever they cost. */
#define PSS_TREE_CPU_SHARE 0.0005
#define PSS_TREE_INTERVAL_MAX_NS 60000000000ULL

void rm__metrics_plan_pss(rm__metrics *m, unsigned generation, uint64_t boot_ns, size_t processes)
{
    uint64_t interval = m->detail_interval_ns;
    if (processes > RM__WIDE_TREE_PROCESSES && m->pss_tree_cost_ns) {
        double paced = (double)m->pss_tree_cost_ns / PSS_TREE_CPU_SHARE;
        if (paced > (double)PSS_TREE_INTERVAL_MAX_NS)
            paced = (double)PSS_TREE_INTERVAL_MAX_NS;
        if (paced > (double)interval)
            interval = (uint64_t)paced;
    }
    m->pss_tree_interval_ns = interval;
    uint64_t since = boot_ns - m->pss_tree_read_ns;
    int untold = generation - m->pss_generation != m->pss_changes_noted; /* a change not told: taken as walked */
    /* A young process's age-out waits for the paced interval too in a wide
     * tree: its RSS stands in for its PSS that much longer. */
    int aged_out = boot_ns >= m->pss_exempt_until_ns && since >= interval - m->detail_interval_ns;
    m->pss_tree_due = m->pss_sharing_changed || untold || aged_out || since >= interval;
    m->pss_generation = generation;
    m->pss_changes_noted = 0;
    if (m->pss_tree_due) {
        m->pss_tree_read_ns = boot_ns;
        m->pss_sharing_changed = 0;
    }
}

void rm__metrics_tree_read_cost(rm__metrics *m, uint64_t cost_ns)
{
    m->pss_tree_cost_ns = cost_ns ? cost_ns : 1;
}

void rm__metrics_joined(rm__metrics *m, rm__process_metrics *pm, const rm__proc_stat *st, uint64_t rss_pages,
                        rm__process_metrics *parent, int shares_memory)
{
    m->pss_changes_noted++;
    pm->image = st ? st->startstack : 0;
    pm->parent_image = parent ? parent->image : 0;
    if (shares_memory) {
        /* Its parent's memory, not a copy: no page is shared by one more
         * process, and no other's PSS moved -- the tree is not read again. */
        pm->pss_exempt = 1;
        return;
    }
    if (parent && shares_parent_image(pm)) {
        if (!parent->has_sharing_fork && parent->pss_exempt)
            m->pss_sharing_changed = 1; /* its RSS stood in: the tree is read again */
        parent->has_sharing_fork = 1;
    }
    if (!(m->groups & RESMON_METRIC_MEMORY_DETAIL))
        return;
    int exempt = 0;
    if (st && m->tick_ns) {
        struct timespec now;
        clock_gettime(CLOCK_BOOTTIME, &now);
        uint64_t boot_ns = rm__timespec_ns(&now), born_ns = st->starttime * m->tick_ns;
        exempt = boot_ns >= born_ns && !pss_read_due(m, pm, boot_ns - born_ns, rss_pages);
    }
    pm->pss_exempt = exempt;
    if (!exempt)
        m->pss_sharing_changed = 1;
}

void rm__metrics_left(rm__metrics *m, const rm__process_metrics *pm)
{
    m->pss_changes_noted++;
    if (m->groups & RESMON_METRIC_MEMORY_DETAIL && !pm->pss_exempt)
        m->pss_sharing_changed = 1;
}

void rm__metrics_count_unreadable(rm__metrics *m, unsigned processes)
{
    if (m->groups)
        m->figure[RM__UNREADABLE] += processes;
}

void rm__metrics_raise_switches(rm__metrics *m, rm__counter counter, uint64_t value)
{
    if (m->groups & RESMON_METRIC_FAULTS && value <= INT64_MAX && (int64_t)value > m->counted[counter])
        m->counted[counter] = (int64_t)value;
}

/* A counter that only grows, measured from the window's start: an
 * interface that disappeared (its counts gone from the sum) shows 0 more,
 * never a negative amount. */
static uint64_t since(uint64_t now, uint64_t start)
{
    return now > start ? now - start : 0;
}

/* The root's net/dev, once per reading. */
static void read_network(rm__metrics *m, int baseline)
{
    if (m->net_fd < 0)
        return;
    char text[16384]; /* ~130 bytes per interface */
    ssize_t n = rm__pread_file(m->net_fd, text, sizeof text);
    if (n <= 0 || rm__parse_net_dev(text, (size_t)n, &m->net_now) != 0)
        return;
    if (baseline)
        m->net_start = m->net_now;
    m->figure[RM__NET_RX_BYTES] = since(m->net_now.rx_bytes, m->net_start.rx_bytes);
    m->figure[RM__NET_TX_BYTES] = since(m->net_now.tx_bytes, m->net_start.tx_bytes);
    m->figure[RM__NET_RX_PACKETS] = since(m->net_now.rx_packets, m->net_start.rx_packets);
    m->figure[RM__NET_TX_PACKETS] = since(m->net_now.tx_packets, m->net_start.tx_packets);
    m->known_sources |= RM__SOURCE_NET;
}

void rm__metrics_finish_reading(rm__metrics *m, int baseline)
{
    if (!m->groups)
        return; /* the default: a sample costs what it did before the groups */
    for (size_t c = 0; c < RM__COUNTER_COUNT; c++)
        if (m->counted[c] > 0 && (uint64_t)m->counted[c] > m->figure[c])
            m->figure[c] = (uint64_t)m->counted[c];
    if (m->ended_smaps && !(m->known_sources & RM__SOURCE_SMAPS)) {
        for (size_t l = RM__COUNTER_COUNT; l < RM__LEVEL_END; l++)
            if (slot_source[l] == RM__SOURCE_SMAPS)
                m->figure[l] = m->ended[l];
        m->known_sources |= RM__SOURCE_SMAPS;
    }
    m->pss_exempt_until_ns = m->pss_exempt_until_next_ns;
    read_network(m, baseline);
}

#define SET_NAN(group, sample_field, ...) s->sample_field = NAN;
#define COPY_FIELD(group, sample_field, ...) to->sample_field = from->sample_field;

void rm__metrics_copy_sample(const resmon_sample *from, resmon_sample *to)
{
    RM__METRIC_LIST(COPY_FIELD)
}

void rm__metrics_fill_sample(const rm__metrics *m, resmon_sample *s)
{
    /* A field is its slot's figure when a group that shows it is on and some
     * process gave its source (the sum over those that could be read), else
     * NAN; unreadable_procs says how many could not.  (NAN first, written
     * straight: a sample without groups costs no loop.) */
    RM__METRIC_LIST(SET_NAN)
    double tick_sec = (double)m->tick_ns * 1e-9;
    for (size_t k = 0; k < m->shown_count; k++) {
        const sample_figure *f = &sample_figures[m->shown[k]];
        if (!(m->known_sources & f->source))
            continue;
        double value = (double)m->figure[f->slot];
        if (f->scale == SCALE_TICKS)
            value *= tick_sec;
        else if (f->scale != SCALE_ONE)
            value /= scale_divisor[f->scale];
        memcpy((char *)s + f->offset, &value, sizeof value);
    }
}
