/*
 * probe.h -- reading the CPU time and resident memory of a monitored target.
 *
 * A target is one process (this one by default) or a process and all its
 * descendants.  The probe keeps each process's /proc files open between
 * samples, re-reads them with pread, and reads CPU time from the kernel's
 * per-process CPU clock (nanoseconds, all threads), never from tick counts.
 * Processes are tracked by pid while their open /proc files stay valid: when
 * a process ends, its files fail with ESRCH and it is dropped, so a reused pid
 * becomes a new process.
 *
 * A tree's CPU also counts what its processes' reaped children used, from
 * each one's cutime/cstime in stat (read when its CPU clock moved -- only a
 * running process reaps -- at most every 10 ms).  A child tracked until it ended was counted while
 * alive; when it is reaped, its parent's increase is reduced by what was
 * counted, so every CPU second is counted once, however short-lived the
 * process that used it.
 */
#ifndef RESMON_PROBE_H
#define RESMON_PROBE_H

#include "resmon.h"

#include <stdint.h>
#include <sys/types.h>

typedef struct rm__probe rm__probe;

typedef struct rm__probe_reading {
    uint64_t cpu_ns;        /* CPU time used since the previous reading (0 on
                               the first), the tree's including the children
                               its processes reaped (their cutime/cstime), each
                               CPU second once; at most online CPUs x interval,
                               the rest carried to the next reading */
    uint64_t rss_bytes;     /* resident memory summed over live processes (and,
                               in a reaped root's final reading, its last) */
    unsigned process_count; /* processes read */
} rm__probe_reading;

/* Opens a probe of pid (0: this process), with its descendants when
 * include_children, reading the /proc tree at proc_root (NULL: "/proc"; the
 * caller reads RESMON_PROC_ROOT once, see rm__proc_root).  Returns 0, -ESRCH
 * (no such process), -EACCES/-EPERM (not ours to read), -ENOTDIR (proc_root
 * is not a directory) or -ENOMEM. */
int rm__probe_open(rm__probe **out, pid_t pid, int include_children, const char *proc_root);
void rm__probe_close(rm__probe *p);

/* Call before the first reading, on a probe of this process (pid 0) with
 * include_children: the tree is then the processes of the cgroup directory
 * dir, listed from its cgroup.procs at each reading (see
 * rm__tree_walker_use_cgroup), and this process itself is never read.  A
 * process joins from the reading that finds it listed (its counters from
 * then on) and leaves when it is no longer listed: moved out (what it used
 * so far stays counted) or ended.  0, -EINVAL without include_children, or
 * the errno of opening cgroup.procs. */
int rm__probe_members_of_cgroup(rm__probe *p, const char *dir);

/* Call before the first reading: the kernel's peak-RSS marks are never reset
 * (they may belong to a program that reads its own ru_maxrss); instead each
 * reading reads the mark of every process that ran since its previous mark
 * read (a mark rises only while its process runs), and rm__probe_peak_rss gives the
 * largest ever seen with RESMON_HWM_LIFETIME -- also after the target ended. */
void rm__probe_keep_peak_marks(rm__probe *p);

/* Call before the first reading: the marks are never reset, yet the
 * window's exact peak is given wherever the marks show it.  Each process's
 * mark is read at its first reading of the window and again at the end;
 * since a mark never falls, one that rose holds the largest RSS since that
 * first reading.  rm__probe_peak_rss then gives RESMON_HWM_WINDOW when no
 * process whose mark stayed put could have peaked above the figure (its
 * mark is no higher), else the largest mark with RESMON_HWM_LIFETIME. */
void rm__probe_watch_peak_marks(rm__probe *p);

/* Call before the first reading: each reading also reads the metric groups
 * (RESMON_METRIC_* bits; see resmon_options.metrics), and rm__probe_fill_metrics
 * gives them. */
void rm__probe_collect(rm__probe *p, unsigned groups, double memory_detail_interval_sec);

/* Writes the latest reading's metric groups into s (NAN where unknown). */
void rm__probe_fill_metrics(const rm__probe *p, resmon_sample *s);

/* Copies the metric groups' fields that rm__probe_fill_metrics wrote into
 * from, and only those, into to (a sample taken while another thread reads
 * the probe: the groups change only by a reading). */
void rm__probe_copy_metrics(const resmon_sample *from, resmon_sample *to);

/* Returned with a valid reading when the target's root has exited: a zombie
 * not yet reaped, or reaped since the previous reading.  The reading is the
 * target's last, with all CPU still carried; the root's RSS in it is the
 * last read while it was alive (a zombie reads 0), so a window never ends on
 * the release of the memory. */
#define RM__PROBE_ENDED 1

/* Takes the window's first reading: records every process's CPU clock as
 * the baseline and resets the kernel's peak-RSS marks.  Returns 0,
 * RM__PROBE_ENDED, or -ESRCH when the target is gone. */
int rm__probe_begin(rm__probe *p, rm__probe_reading *out);

/* Takes the next reading: 0, or RM__PROBE_ENDED with the target's final
 * reading -- its root a zombie, or reaped since the previous reading (then
 * the root's last values seen stand in for it) -- or -ESRCH, with no
 * reading, once the final reading was given. */
int rm__probe_read(rm__probe *p, rm__probe_reading *out);

/* Makes the next reading the window's last: it hands out all the CPU carried
 * from earlier readings, however short its interval. */
void rm__probe_end_window(rm__probe *p);

/* The largest per-process peak RSS: for each process the larger of the
 * kernel's mark (VmHWM, read now for live processes; for a root that ended,
 * the last read during the window) and its largest sampled RSS; processes
 * that ended keep theirs.  With how far to trust it (RESMON_HWM_LIFETIME when
 * any reset was refused, with the refusal's negative errno in *reset_error;
 * else 0 there).  When no kernel mark was ever read, returns why (the root's
 * error, e.g. -EMFILE; -ESRCH when it is gone). */
int rm__probe_peak_rss(rm__probe *p, uint64_t *bytes, resmon_hwm_scope *scope, int *reset_error);

/* Per-process records (probe_processes.c; tree mode only): from now on each
 * process that ends goes into list, its times counted from the window's
 * first reading.  Call once that reading was taken (rm__probe_begin).
 * -ENOTSUP for a probe of one process. */
struct rm__process_list;
int rm__probe_keep_processes(rm__probe *p, struct rm__process_list *list);

/* After the window's last reading and rm__probe_peak_rss (which read the
 * marks of those still running): the records of every process still
 * tracked go into the list. */
void rm__probe_processes_end(rm__probe *p);

/* The pids read by the latest reading (borrowed until the next one). */
void rm__probe_pids(rm__probe *p, const pid_t **pids, size_t *count);

/* Whether the root is alive and no zombie, by one read of its statm
 * (not the tree's reading: nothing is counted).  0 for a cgroup's members,
 * once the root is gone, and when the next reading is the window's last:
 * a reading is then due. */
int rm__probe_root_running(rm__probe *p);

/* The CPU the readings counted and have not yet handed out (the carry). */
uint64_t rm__probe_cpu_pending(const rm__probe *p);

/* All the CPU the readings counted since the window's first. */
uint64_t rm__probe_cpu_counted(const rm__probe *p);

/* Of that, what processes started before boottime_ns (CLOCK_BOOTTIME; the
 * instant a leaf's CPU total was taken as the base) had used when a reading
 * first saw them (rm__probe_cpu_discovery_from sets the instant; until then
 * nothing is). */
uint64_t rm__probe_cpu_discovered(const rm__probe *p);
void rm__probe_cpu_discovery_from(rm__probe *p, uint64_t boottime_ns);

/* How often a sleeping process of a wide tree has its statm re-read: 1
 * while the tree's memory is its leaf cgroup's and it is walked at its own
 * cadence (IDLE_STATM_REFRESH_LEAF_NS), 0 otherwise (_WIDE_NS).  By the
 * probe's owner between readings. */
void rm__probe_set_leaf_refresh(rm__probe *p, int leaf);
uint64_t rm__probe_wide_refresh_ns(const rm__probe *p);

/* The samples handed out handed_ns of the window's CPU from another source
 * (a leaf cgroup's total): what the probe counted beyond that is carried,
 * to be handed out by the next readings, and nothing below it (never more
 * than counted is taken as handed out: no later CPU is swallowed). */
void rm__probe_cpu_rebase(rm__probe *p, uint64_t handed_ns);

/* The CPUs online (what a reading hands out at most per interval). */
long rm__probe_online_cpus(const rm__probe *p);

/* Changes whenever a process joins or leaves the tracked set, so callers can
 * skip copying an unchanged pid list. */
unsigned rm__probe_generation(const rm__probe *p);

#endif
