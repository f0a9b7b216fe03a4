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
 */
#ifndef RESMON_PROBE_H
#define RESMON_PROBE_H

#include "resmon.h"

#include <stdint.h>
#include <sys/types.h>

typedef struct rm__probe rm__probe;

typedef struct rm__probe_reading {
    uint64_t cpu_ns;        /* CPU time used since the previous reading (0 on
                               the first); per-process deltas clamped at 0 */
    uint64_t rss_bytes;     /* resident memory summed over live processes */
    unsigned process_count; /* processes read */
} rm__probe_reading;

/* Opens a probe of pid (0: this process), with its descendants when
 * include_children.  Returns 0, -ESRCH (no such process), -EACCES/-EPERM (not
 * ours to read) or -ENOMEM. */
int rm__probe_open(rm__probe **out, pid_t pid, int include_children);
void rm__probe_close(rm__probe *p);

/* Call before the first reading: the kernel's peak-RSS marks are never reset
 * (they may belong to a program that reads its own ru_maxrss); instead each
 * reading reads every process's mark, and rm__probe_peak_rss gives the
 * largest ever seen with RESMON_HWM_LIFETIME -- also after the target ended. */
void rm__probe_keep_peak_marks(rm__probe *p);

/* Returned with a valid reading when the target's root has exited but not
 * yet been reaped (a zombie): the reading is its last, and the target has
 * ended.  The root's RSS in it is the last read while it was alive (a zombie
 * reads 0), so a window never ends on the release of the memory. */
#define RM__PROBE_ENDED 1

/* Takes the window's first reading: records every process's CPU clock as
 * the baseline and resets the kernel's peak-RSS marks.  Returns 0,
 * RM__PROBE_ENDED, or -ESRCH when the target is gone. */
int rm__probe_begin(rm__probe *p, rm__probe_reading *out);

/* Takes the next reading: 0, RM__PROBE_ENDED, or -ESRCH when the target is
 * gone (its root reaped), with no reading. */
int rm__probe_read(rm__probe *p, rm__probe_reading *out);

/* The largest peak-RSS mark among live processes, and how far to trust it
 * (RESMON_HWM_LIFETIME when any reset was refused).  -ESRCH when none can be
 * read. */
int rm__probe_peak_rss(rm__probe *p, uint64_t *bytes, resmon_hwm_scope *scope);

/* The pids read by the latest reading (borrowed until the next one). */
void rm__probe_pids(rm__probe *p, const pid_t **pids, size_t *count);

/* Changes whenever a process joins or leaves the tracked set, so callers can
 * skip copying an unchanged pid list. */
unsigned rm__probe_generation(const rm__probe *p);

#endif
