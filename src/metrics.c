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
#include <unistd.h>

#define DEFAULT_DETAIL_INTERVAL_SEC 0.5
#define STAT_GROUPS (RESMON_METRIC_COUNTS | RESMON_METRIC_CPU_SPLIT | RESMON_METRIC_FAULTS | RESMON_METRIC_MEMORY_DETAIL)

/* The files a process's figures come from, each read (or refused) on its
 * own: a refused one blanks only its own fields. */
enum {
    SOURCE_STAT = 1,     /* stat: vmem, counts, CPU split, faults */
    SOURCE_SWITCHES = 2, /* every thread's status: context switches */
    SOURCE_SMAPS = 4,    /* smaps_rollup: PSS, swap */
    SOURCE_IO = 8        /* io */
};

/* Which source each counter comes from, and whether the kernel adds a reaped
 * child's count to its parent's (only then is a settled child subtracted). */
static const struct {
    unsigned source;
    int folds_into_parent;
} counter_info[RM__COUNTER_COUNT] = {
    [RM__IO_RCHAR] = {SOURCE_IO, 1},
    [RM__IO_WCHAR] = {SOURCE_IO, 1},
    [RM__IO_READ_BYTES] = {SOURCE_IO, 1},
    [RM__IO_WRITE_BYTES] = {SOURCE_IO, 1},
    [RM__IO_SYSCR] = {SOURCE_IO, 1},
    [RM__IO_SYSCW] = {SOURCE_IO, 1},
    [RM__USER_TICKS] = {SOURCE_STAT, 1},
    [RM__SYSTEM_TICKS] = {SOURCE_STAT, 1},
    [RM__MINOR_FAULTS] = {SOURCE_STAT, 1},
    [RM__MAJOR_FAULTS] = {SOURCE_STAT, 1},
    [RM__VOLUNTARY_SWITCHES] = {SOURCE_SWITCHES, 0},
    [RM__INVOLUNTARY_SWITCHES] = {SOURCE_SWITCHES, 0},
};

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
}

void rm__metrics_open_network(rm__metrics *m, int proc_fd, pid_t root)
{
    if (!(m->groups & RESMON_METRIC_NETWORK))
        return;
    char path[48];
    snprintf(path, sizeof path, "%d/net/dev", (int)root);
    m->net_fd = openat(proc_fd, path, RM__READ_FLAGS);
}

void rm__metrics_free(rm__metrics *m)
{
    if (m->net_fd >= 0)
        close(m->net_fd);
    m->net_fd = -1;
}

void rm__process_metrics_init(rm__process_metrics *pm, int count_from_zero)
{
    memset(pm, 0, sizeof *pm);
    pm->io_fd = pm->smaps_fd = pm->status_fd = -1;
    pm->count_from_zero = count_from_zero;
}

void rm__process_metrics_close(rm__process_metrics *pm)
{
    int *fds[] = {&pm->io_fd, &pm->smaps_fd, &pm->status_fd};
    for (size_t i = 0; i < sizeof fds / sizeof *fds; i++) {
        if (*fds[i] >= 0)
            close(*fds[i]);
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
            m->reported[c] = 0;
        }
    m->known_sources = 0;
    m->unreadable = 0;
    m->vmem_bytes = m->threads = m->pss_kb = m->swap_kb = m->uss_kb = 0;
    m->ended_pss_kb = m->ended_swap_kb = m->ended_uss_kb = 0;
    m->ended_smaps = 0;
    m->processes = 0;
    m->pss_exempt_until_next_ns = UINT64_MAX;
}

/* pread of a file kept open (opened at first use).  -ESRCH when the process
 * is gone, another negative errno when refused. */
static ssize_t read_kept_open(int dir_fd, int *fd, const char *name, char *buf, size_t cap)
{
    if (*fd < 0) {
        *fd = openat(dir_fd, name, RM__READ_FLAGS);
        if (*fd < 0)
            return errno == ENOENT ? -ESRCH : -errno;
    }
    return rm__pread_file(*fd, buf, cap);
}

/* smaps_rollup is bound to the address space it was opened on: once the
 * process execs, a kept descriptor reads only an error, never the new
 * image's memory.  Such a read is retried once on a fresh descriptor. */
static ssize_t read_smaps_rollup(int dir_fd, int *fd, char *buf, size_t cap)
{
    ssize_t n = read_kept_open(dir_fd, fd, "smaps_rollup", buf, cap);
    if (n < 0 && *fd >= 0) {
        close(*fd);
        *fd = -1;
        n = read_kept_open(dir_fd, fd, "smaps_rollup", buf, cap);
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
    int task_fd = openat(dir_fd, "task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (task_fd < 0)
        return errno == ENOENT ? -ESRCH : -errno;
    DIR *dir = fdopendir(task_fd);
    if (!dir) {
        close(task_fd);
        return -ENOMEM;
    }
    uint64_t v = 0, iv = 0;
    int threads = 0;
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
    }
    closedir(dir);
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
    if (pm->primed & SOURCE_SWITCHES && !m->final_reading &&
        ++pm->switch_scans_skipped < (threads + SWITCH_THREADS_PER_READING - 1) / SWITCH_THREADS_PER_READING) {
        *voluntary = pm->last[RM__VOLUNTARY_SWITCHES]; /* stands still until the next scan */
        *involuntary = pm->last[RM__INVOLUNTARY_SWITCHES];
        return 0;
    }
    pm->switch_scans_skipped = 0;
    return read_context_switches(dir_fd, voluntary, involuntary);
}

/* Fills now[] with the lifetime counters of the groups read; marks each
 * group read in *read_groups.  Returns -ESRCH when the process is gone. */
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

/* Reads the sources `wanted` asks for (SOURCE_* bits), each on its own: one
 * that is refused (another user's io, a non-dumpable process's smaps_rollup)
 * costs only its own fields.  Fills now[] and the levels in pm, returns the
 * sources read in *got and those refused in *refused, or -ESRCH when the
 * process is gone. */
static int read_counters(rm__metrics *m, rm__process_metrics *pm, int dir_fd, const rm__proc_stat *st, int idle,
                         uint64_t rss_pages, uint64_t boot_ns, int baseline, uint64_t *now, unsigned *got,
                         unsigned *refused)
{
    char text[4096];
    int zombie = 0;
    if (st && m->tick_ns) {
        pm->born_ns = st->starttime * m->tick_ns; /* kept: an idle process's stat is not read */
        pm->born_known = 1;
    }
    if (st)
        pm->image = st->startstack; /* an exec changes it: it ran, so its stat is read */
    uint64_t age_ns = pm->born_known && boot_ns >= pm->born_ns ? boot_ns - pm->born_ns : UINT64_MAX; /* unknown: read */
    if (idle) {
        /* It has not run since its previous reading: its faults, switches,
         * I/O, threads and size are what they were (only running changes
         * them), so the sources it gave then stand, unread. */
        *got |= pm->primed & (SOURCE_STAT | SOURCE_SWITCHES | SOURCE_IO);
        for (size_t c = 0; c < RM__COUNTER_COUNT; c++)
            if (*got & counter_info[c].source)
                now[c] = pm->last[c];
        zombie = pm->zombie;
    }
    if (m->groups & STAT_GROUPS && st && !(*got & SOURCE_STAT)) {
        now[RM__USER_TICKS] = st->utime + (m->tree ? st->cutime : 0);
        now[RM__SYSTEM_TICKS] = st->stime + (m->tree ? st->cstime : 0);
        now[RM__MINOR_FAULTS] = st->minflt + (m->tree ? st->cminflt : 0);
        now[RM__MAJOR_FAULTS] = st->majflt + (m->tree ? st->cmajflt : 0);
        zombie = pm->zombie = st->state == 'Z';
        if (!zombie && st->vsize) { /* a zombie keeps what it had alive */
            pm->vmem_bytes = st->vsize;
            pm->threads = st->num_threads;
        } else if (pm->threads == 0) {
            /* First seen as a zombie (stat reads 0 threads): it is still a
             * process, with the thread it ended with, so a tree never
             * shows fewer threads than processes. */
            pm->threads = 1;
        }
        *got |= SOURCE_STAT;
    }
    if (m->groups & RESMON_METRIC_FAULTS && !(*got & SOURCE_SWITCHES)) {
        int rc = read_switches(m, pm, dir_fd, st, &now[RM__VOLUNTARY_SWITCHES], &now[RM__INVOLUNTARY_SWITCHES]);
        if (rc == 0)
            *got |= SOURCE_SWITCHES;
        else if (rm__read_refused(rc))
            *refused |= SOURCE_SWITCHES;
    }
    int exempt = m->groups & RESMON_METRIC_MEMORY_DETAIL && !zombie && !pss_read_due(m, pm, age_ns, rss_pages);
    if (m->groups & RESMON_METRIC_MEMORY_DETAIL && !zombie) {
        if (!exempt && pm->pss_exempt && !m->pss_tree_due)
            m->pss_sharing_changed = 1; /* grew past the floor: the next reading reads the tree (plan_pss) */
        pm->pss_exempt = exempt;
    }
    if (exempt) {
        /* Its age-out makes a tree-wide reading (plan_pss). */
        if (pm->born_ns + m->detail_interval_ns < m->pss_exempt_until_next_ns)
            m->pss_exempt_until_next_ns = pm->born_ns + m->detail_interval_ns;
        /* Opening checks the access a read needs (and walks nothing): a
         * process whose smaps_rollup is refused stays unreadable. */
        if (pm->smaps_fd < 0 && (pm->smaps_fd = openat(dir_fd, "smaps_rollup", RM__READ_FLAGS)) < 0 &&
            rm__read_refused(-errno))
            *refused |= SOURCE_SMAPS;
        pm->smaps_known = pm->pss_from_rss = pm->smaps_fd >= 0;
        pm->pss_kb = pm->uss_kb = rss_pages * ((uint64_t)sysconf(_SC_PAGESIZE) / 1024);
        pm->swap_kb = 0;
        pm->smaps_read_ns = boot_ns;
        pm->smaps_rss_pages = rss_pages;
    } else if (m->groups & RESMON_METRIC_MEMORY_DETAIL && !zombie &&
               (baseline || m->final_reading || m->pss_tree_due || !pm->smaps_known || pm->pss_from_rss ||
                rss_moved(pm, rss_pages))) {
        pm->pss_from_rss = 0;
        m->smaps_reads++;
        ssize_t n = read_smaps_rollup(dir_fd, &pm->smaps_fd, text, sizeof text);
        if (rm__read_refused(n))
            *refused |= SOURCE_SMAPS;
        /* A refused read leaves no earlier figure standing: after an exec
         * into a non-dumpable image, the old image's PSS is not this one's. */
        pm->smaps_known = n >= 0 && rm__parse_status_kb(text, (size_t)n, "Pss", &pm->pss_kb) == 0 &&
                          rm__parse_status_kb(text, (size_t)n, "Swap", &pm->swap_kb) == 0;
        uint64_t clean_kb, dirty_kb; /* USS: the pages no other process maps */
        if (pm->smaps_known && rm__parse_status_kb(text, (size_t)n, "Private_Clean", &clean_kb) == 0 &&
            rm__parse_status_kb(text, (size_t)n, "Private_Dirty", &dirty_kb) == 0)
            pm->uss_kb = clean_kb + dirty_kb;
        else
            pm->smaps_known = 0;
        if (pm->smaps_known) {
            pm->smaps_read_ns = boot_ns;
            pm->smaps_rss_pages = rss_pages;
        }
    }
    /* A zombie's pages are gone: the processes it shared them with hold
     * them now, and their next readings count them whole.  Its last PSS
     * beside those would count them twice (3 exited forks of a 50 MB parent
     * made a peak of 70 MiB over the kernel's 59): it is set aside
     * (note_ended_pss). */
    if (pm->smaps_known && !zombie)
        *got |= SOURCE_SMAPS;
    if (m->groups & RESMON_METRIC_IO && !(*got & SOURCE_IO)) {
        ssize_t n = read_kept_open(dir_fd, &pm->io_fd, "io", text, sizeof text);
        rm__proc_io io;
        if (rm__read_refused(n))
            *refused |= SOURCE_IO;
        if (n >= 0 && rm__parse_io(text, (size_t)n, &io) == 0) {
            now[RM__IO_RCHAR] = io.rchar;
            now[RM__IO_WCHAR] = io.wchar;
            now[RM__IO_READ_BYTES] = io.read_bytes;
            now[RM__IO_WRITE_BYTES] = io.write_bytes;
            now[RM__IO_SYSCR] = io.syscr;
            now[RM__IO_SYSCW] = io.syscw;
            *got |= SOURCE_IO;
        }
    }
    return zombie;
}

/* The sources the groups ask of a process (a zombie has no memory map). */
static unsigned wanted_sources(const rm__metrics *m, int zombie)
{
    unsigned wanted = 0;
    if (m->groups & STAT_GROUPS)
        wanted |= SOURCE_STAT;
    if (m->groups & RESMON_METRIC_FAULTS)
        wanted |= SOURCE_SWITCHES;
    if (m->groups & RESMON_METRIC_MEMORY_DETAIL && !zombie)
        wanted |= SOURCE_SMAPS;
    if (m->groups & RESMON_METRIC_IO)
        wanted |= SOURCE_IO;
    return wanted;
}

/* Adds a process's levels from the sources in `from` to this reading's sums. */
/* The last PSS of a process that ended stands for the reading only when no
 * live process gave one (a command that ended alone: the window ends on
 * what it used, as its RSS does); beside live ones, whose readings hold its
 * shared pages now, it would count them twice. */
static void note_ended_pss(rm__metrics *m, const rm__process_metrics *pm)
{
    if (!pm->smaps_known)
        return;
    m->ended_pss_kb += pm->pss_kb;
    m->ended_swap_kb += pm->swap_kb;
    m->ended_uss_kb += pm->uss_kb;
    m->ended_smaps = 1;
}

static void add_levels(rm__metrics *m, const rm__process_metrics *pm, unsigned from)
{
    if (from & SOURCE_STAT) {
        m->processes++;
        m->vmem_bytes += pm->vmem_bytes;
        m->threads += pm->threads;
    }
    if (from & SOURCE_SMAPS) {
        m->pss_kb += pm->pss_kb;
        m->swap_kb += pm->swap_kb;
        m->uss_kb += pm->uss_kb;
    }
    m->known_sources |= from;
}

int rm__metrics_need_stat(const rm__metrics *m)
{
    return (m->groups & STAT_GROUPS) != 0;
}

void rm__metrics_read_process(rm__metrics *m, rm__process_metrics *pm, int dir_fd, const rm__proc_stat *st, int idle,
                              uint64_t rss_pages, uint64_t boot_ns, int baseline)
{
    if (!m->groups)
        return; /* the default: a sample costs what it did before the groups */
    uint64_t now[RM__COUNTER_COUNT] = {0};
    unsigned got = 0, refused = 0;
    int zombie = read_counters(m, pm, dir_fd, st, idle, rss_pages, boot_ns, baseline, now, &got, &refused);
    if (zombie)
        note_ended_pss(m, pm);
    if (wanted_sources(m, zombie) & ~got & refused)
        m->unreadable++;
    for (size_t c = 0; c < RM__COUNTER_COUNT; c++) {
        unsigned source = counter_info[c].source;
        if (!(got & source))
            continue;
        /* A source read for the first time counts from now, unless the
         * process was born in this interval (then all of it is the window's). */
        uint64_t from = pm->primed & source ? pm->last[c]
                                            : (pm->count_from_zero && !pm->primed && !baseline ? 0 : now[c]);
        if (now[c] > from)
            m->counted[c] += (int64_t)(now[c] - from);
        pm->last[c] = now[c]; /* a sum over threads may shrink: count from here */
    }
    pm->primed |= got & ~SOURCE_SMAPS;
    pm->count_from_zero = 0;
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
        if (pm->primed & counter_info[c].source && counter_info[c].folds_into_parent)
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
void rm__metrics_plan_pss(rm__metrics *m, unsigned generation, uint64_t boot_ns)
{
    int untold = generation - m->pss_generation != m->pss_changes_noted; /* a change not told: taken as walked */
    m->pss_tree_due = m->pss_sharing_changed || untold || boot_ns >= m->pss_exempt_until_ns ||
                      boot_ns - m->pss_tree_read_ns >= m->detail_interval_ns;
    m->pss_generation = generation;
    m->pss_changes_noted = 0;
    if (m->pss_tree_due) {
        m->pss_tree_read_ns = boot_ns;
        m->pss_sharing_changed = 0;
    }
}

void rm__metrics_joined(rm__metrics *m, rm__process_metrics *pm, const rm__proc_stat *st, uint64_t rss_pages,
                        rm__process_metrics *parent)
{
    m->pss_changes_noted++;
    pm->image = st ? st->startstack : 0;
    pm->parent_image = parent ? parent->image : 0;
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
        m->unreadable += processes;
}

void rm__metrics_raise_switches(rm__metrics *m, rm__counter counter, uint64_t value)
{
    if (m->groups & RESMON_METRIC_FAULTS && value <= INT64_MAX && (int64_t)value > m->counted[counter])
        m->counted[counter] = (int64_t)value;
}

void rm__metrics_finish_reading(rm__metrics *m, int baseline)
{
    if (!m->groups)
        return; /* the default: a sample costs what it did before the groups */
    for (size_t c = 0; c < RM__COUNTER_COUNT; c++)
        if (m->counted[c] > 0 && (uint64_t)m->counted[c] > m->reported[c])
            m->reported[c] = (uint64_t)m->counted[c];
    if (m->ended_smaps && !(m->known_sources & SOURCE_SMAPS)) {
        m->pss_kb = m->ended_pss_kb;
        m->swap_kb = m->ended_swap_kb;
        m->uss_kb = m->ended_uss_kb;
        m->known_sources |= SOURCE_SMAPS;
    }
    m->pss_exempt_until_ns = m->pss_exempt_until_next_ns;
    m->net_known = 0;
    if (m->net_fd >= 0) {
        char text[16384]; /* ~130 bytes per interface */
        ssize_t n = rm__pread_file(m->net_fd, text, sizeof text);
        m->net_known = n > 0 && rm__parse_net_dev(text, (size_t)n, &m->net_now) == 0;
        if (m->net_known && baseline)
            m->net_start = m->net_now;
    }
}

/* A counter that only grows, measured from the window's start: an
 * interface that disappeared (its counts gone from the sum) shows 0 more,
 * never a negative amount. */
static double since(uint64_t now, uint64_t start)
{
    return now > start ? (double)(now - start) : 0.0;
}

void rm__metrics_fill_sample(const rm__metrics *m, resmon_sample *s)
{
    /* A field is the sum over the processes whose source could be read (NAN
     * when none could); unreadable_procs says how many could not. */
    unsigned on = m->groups, known = m->known_sources;
    double tick_sec = (double)m->tick_ns * 1e-9;
    int stat = !!(known & SOURCE_STAT), smaps = (on & RESMON_METRIC_MEMORY_DETAIL) && (known & SOURCE_SMAPS);
    int io = (on & RESMON_METRIC_IO) && (known & SOURCE_IO);
    int vmem = (on & RESMON_METRIC_MEMORY_DETAIL) && stat, counts = (on & RESMON_METRIC_COUNTS) && stat;
    int split = (on & RESMON_METRIC_CPU_SPLIT) && stat, faults = (on & RESMON_METRIC_FAULTS) && stat;
    int switches = (on & RESMON_METRIC_FAULTS) && (known & SOURCE_SWITCHES);
    int net = (on & RESMON_METRIC_NETWORK) && m->net_known;
    s->vmem_mb = vmem ? (double)m->vmem_bytes / RM__BYTES_PER_MIB : NAN;
    s->pss_mb = smaps ? (double)m->pss_kb / 1024.0 : NAN;
    s->swap_mb = smaps ? (double)m->swap_kb / 1024.0 : NAN;
    s->io_rchar = io ? (double)m->reported[RM__IO_RCHAR] : NAN;
    s->io_wchar = io ? (double)m->reported[RM__IO_WCHAR] : NAN;
    s->io_read_bytes = io ? (double)m->reported[RM__IO_READ_BYTES] : NAN;
    s->io_write_bytes = io ? (double)m->reported[RM__IO_WRITE_BYTES] : NAN;
    s->io_syscr = io ? (double)m->reported[RM__IO_SYSCR] : NAN;
    s->io_syscw = io ? (double)m->reported[RM__IO_SYSCW] : NAN;
    s->nprocs = counts ? (double)m->processes : NAN;
    s->nthreads = counts ? (double)m->threads : NAN;
    s->cpu_user_sec = split ? (double)m->reported[RM__USER_TICKS] * tick_sec : NAN;
    s->cpu_sys_sec = split ? (double)m->reported[RM__SYSTEM_TICKS] * tick_sec : NAN;
    s->minor_faults = faults ? (double)m->reported[RM__MINOR_FAULTS] : NAN;
    s->major_faults = faults ? (double)m->reported[RM__MAJOR_FAULTS] : NAN;
    s->voluntary_switches = switches ? (double)m->reported[RM__VOLUNTARY_SWITCHES] : NAN;
    s->involuntary_switches = switches ? (double)m->reported[RM__INVOLUNTARY_SWITCHES] : NAN;
    s->net_rx_bytes = net ? since(m->net_now.rx_bytes, m->net_start.rx_bytes) : NAN;
    s->net_tx_bytes = net ? since(m->net_now.tx_bytes, m->net_start.tx_bytes) : NAN;
    s->net_rx_packets = net ? since(m->net_now.rx_packets, m->net_start.rx_packets) : NAN;
    s->net_tx_packets = net ? since(m->net_now.tx_packets, m->net_start.tx_packets) : NAN;
    s->unreadable_procs = on & ~RESMON_METRIC_NETWORK ? (double)m->unreadable : NAN;
    s->uss_mb = smaps ? (double)m->uss_kb / 1024.0 : NAN;
}
