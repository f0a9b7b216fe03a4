/*
 * internal.h -- declarations shared between libresmon's source files.
 *
 * Public names carry the resmon_ prefix and live in include/resmon.h; names
 * shared between files inside the library carry rm__; everything else is
 * static.
 */
#ifndef RESMON_INTERNAL_H
#define RESMON_INTERNAL_H

#include "resmon.h"

#include <stdint.h>
#include <string.h>
#include <time.h>

#define RM__BYTES_PER_MIB 1048576.0

/* A tree of more than this many processes is wide: its walk (tree_totals.c,
 * in a leaf), its tree-wide PSS readings (metrics.c) and a sleeping
 * process's statm (probe.c) are paced by their cost, not by the samples. */
#define RM__WIDE_TREE_PROCESSES 64

static inline uint64_t rm__timespec_ns(const struct timespec *ts)
{
    return (uint64_t)ts->tv_sec * 1000000000u + (uint64_t)ts->tv_nsec;
}

static inline struct timespec rm__timespec_from_ns(uint64_t ns)
{
    struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000u), .tv_nsec = (long)(ns % 1000000000u)};
    return ts;
}

/* Linux lets a sleeping thread wake up to 50 us late by default to batch
 * wake-ups; resmon's threads ask for 1 us, which keeps a 1 kHz schedule on
 * time at no measurable cost. */
#define RM__TIMER_SLACK_NS 1000UL

/* Nanoseconds on CLOCK_MONOTONIC: the clock of every sample timestamp and
 * schedule. */
static inline uint64_t rm__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return rm__timespec_ns(&ts);
}

/* The same clock in seconds. */
static inline double rm__now_sec(void)
{
    return (double)rm__now_ns() * 1e-9;
}

/* Copies at most len bytes of src (stopping at a NUL) into dst of cap bytes,
 * truncating, always NUL-terminated. */
static inline void rm__copy_string(char *dst, size_t cap, const char *src, size_t len)
{
    size_t n = strnlen(src, len);
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/* The summary and the latest kept sample under one lock, so the two agree
 * (monitor.c).  Returns 1 when *last was filled, 0 when no sample is kept. */
int rm__monitor_snapshot(const resmon_monitor *m, resmon_summary *summary, resmon_sample *last);

/* For benchmarks and tests only: each later window's first sample is also
 * kept n more times (the summary counts it once), so that readers can be
 * measured against a full store without waiting for it to fill.  Call it
 * while the monitor is stopped. */
void rm__monitor_prefill(resmon_monitor *m, size_t n);

/* For tests only: hook(arg) is called before each walk of a wide tree in
 * its own leaf (engaged, tree_totals.h) that is neither the window's first
 * reading nor its last, on the thread that walks (a test makes a walk slow
 * with it).  Call it while the monitor is stopped; NULL: none. */
void rm__monitor_walk_hook(resmon_monitor *m, void (*hook)(void *), void *arg);

/* For tests only: on, an engaged window's walk is due at every sample (not
 * at its measured cadence), so a test reaches the walker within a few
 * samples of start.  Call it while the monitor is stopped. */
void rm__monitor_walk_every_sample(resmon_monitor *m, int on);

/* For tests only: how often the probe re-reads a sleeper's statm in a wide
 * tree (rm__probe_set_leaf_refresh), ns.  Called by whoever holds the probe
 * (the walk hook, on the walker). */
uint64_t rm__monitor_wide_refresh_ns(const resmon_monitor *m);

#endif
