/*
 * phases.h -- named phases of a window (resmon_monitor_mark).
 *
 * A mark is a request: the caller's thread checks the name, queues it and
 * wakes the sampler (monitor.c), which takes a sample at once and opens the
 * queued phases at it (rm__phases_open).  Each phase keeps a summary
 * accumulator of its own, fed by the library's one fold (summary.c): the
 * first phase (unnamed, before the first mark) is the window's accumulator
 * as it stood at the first mark, so a window without marks costs nothing
 * per sample; after it, each sample is folded into the current phase too
 * (rm__phases_add: one more fold, no allocation).
 *
 * The table of RESMON_MAX_PHASES phases is allocated at a monitor's first
 * mark and kept until the monitor is freed; its entries are written with
 * the seqlock.h discipline (atomic word stores), inside the monitor's
 * published brackets, so readers copy them as they copy the summary.
 */
#ifndef RESMON_PHASES_H
#define RESMON_PHASES_H

#include "metric_list.h"
#include "seqlock.h"
#include "summary.h"

#include <pthread.h>
#include <stdatomic.h>

#define RM__PHASES_PENDING 16 /* marks waiting for the sampler */

typedef struct rm__phase {
    /* Shared with readers (stored as words). */
    uint64_t name_words[RESMON_PHASE_NAME_MAX / 8];
    double start_timestamp;
    rm__summary_acc acc;
    /* Each LAST-folded metric (a total since the window began) as of the
     * phase's first sample: the phase's own total is its last value less
     * this.  0 for the first phase (the window's first sample reads 0). */
    double metric_base[RM__METRIC_COUNT];
    /* The sampler's own. */
    double hwm_start_mb;      /* the window's exact peak at the phase's start; NAN: not known */
    double cpu_energy_start_j; /* RAPL total at the start; NAN without RAPL */
} rm__phase;

typedef struct rm__phases {
    pthread_mutex_t lock; /* marks among themselves, and the sampler taking them */
    char pending[RM__PHASES_PENDING][RESMON_PHASE_NAME_MAX]; /* guarded by lock */
    unsigned pending_count;                                  /* guarded by lock */
    unsigned accepted;      /* phases of this window, pending included (lock) */
    atomic_int has_pending; /* pending_count != 0, for the sampler's check */
    int closed;             /* no window takes marks: refused (lock) */
    _Atomic(rm__phase *) table; /* NULL until the first mark */
    _Atomic size_t count;       /* phases readers may copy */
    int metrics_on;
} rm__phases;

int rm__phases_init(rm__phases *p, int metrics_on);
void rm__phases_free(rm__phases *p);

/* A new window (the owner, while no sampler runs): no phases, and marks
 * are taken. */
void rm__phases_reset(rm__phases *p);

/* A window that never opened (the owner, while no sampler runs): marks are
 * refused (-EINVAL) again, and any queued are dropped with the window. */
void rm__phases_refuse(rm__phases *p);

/* 0 when name is a valid phase name, else -EINVAL. */
int rm__phase_name_check(const char *name);

/* The caller's half of a mark: queues name.  0, -EINVAL (a bad name, or the
 * window closed: rm__phases_open with closing), -ENOSPC, -EAGAIN, -ENOMEM
 * (resmon.h).  A name queued (0) is opened by the sampler, at the latest by
 * the window's closing rm__phases_open: accepted means recorded. */
int rm__phases_request(rm__phases *p, const char *name);

static inline int rm__phases_pending(rm__phases *p)
{
    return atomic_load_explicit(&p->has_pending, memory_order_acquire);
}

/* The sampler, inside the published brackets, for every sample after the
 * first mark: folds it into the current phase.  O(1). */
void rm__phases_add(rm__phases *p, const resmon_sample *s, double cpu_time_sec, int short_interval,
                    double energy_j);

/* The sampler, inside the published brackets, with the sample a mark asked
 * for (already folded by rm__phases_add and into window): ends the current
 * phase there and opens the queued ones, the last of which goes on.
 * closing: the window's last call, with its last sample; under the same
 * lock that takes the queue, later marks are refused, so that no mark is
 * both accepted and left out.
 * window: the window's accumulator (the first phase's figures at the first
 * mark, and the exact peak as of now); cpu_energy_total_j: RAPL's total
 * now, NAN without it. */
void rm__phases_open(rm__phases *p, const rm__summary_acc *window, const resmon_sample *s, double energy_j,
                     double cpu_energy_total_j, int closing);

/* The sampler, inside the published brackets, at the window's end, with
 * the final accumulator: the last phase's exact peak and energy. */
void rm__phases_end(rm__phases *p, const rm__summary_acc *window, double cpu_energy_total_j);

/* Readers: resmon.h's resmon_monitor_get_phases and resmon_monitor_phase. */
ssize_t rm__phases_copy(const rm__phases *p, const rm__seqlock *published, resmon_phase *out, size_t cap,
                        size_t stride);
int rm__phases_current(const rm__phases *p, const rm__seqlock *published, char *name, size_t cap);

#endif
