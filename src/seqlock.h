/*
 * seqlock.h -- one writer that never waits, readers that copy and retry.
 *
 * A sequence lock: the writer makes the count odd, changes the data and
 * makes the count even again; a reader copies the data between two loads of
 * the count and keeps its copy only when both loads saw the same even count.
 * The writer never waits for a reader; a reader whose copy overlapped a
 * write copies again.
 *
 * Every word the writer changes while readers may be copying is stored with
 * a release store and loaded with an acquire load (both plain moves on
 * x86-64).  So the protocol is data-race-free in the C11 memory model and
 * under ThreadSanitizer, without the standalone fences of the textbook
 * seqlock (which TSan does not model): a reader whose acquire load saw a
 * word of a later write also sees, at its second load of the count, the odd
 * count that write began with.  Data is copied in whole 64-bit words, the
 * same words on both sides, so no access is ever torn or of mixed size.
 */
#ifndef RESMON_SEQLOCK_H
#define RESMON_SEQLOCK_H

#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2, "64-bit atomics must be lock-free");
_Static_assert(sizeof(_Atomic uint64_t) == sizeof(uint64_t) && sizeof(_Atomic double) == sizeof(double),
               "shared words are plain 64-bit words");

typedef struct rm__seqlock {
    atomic_uint sequence; /* odd while a write is in progress */
} rm__seqlock;

/* Only one thread writes at a time (the monitor's sampler, or its owner
 * while no sampler runs); the begin/end pair brackets every change readers
 * may see. */
static inline void rm__seqlock_write_begin(rm__seqlock *l)
{
    unsigned s = atomic_load_explicit(&l->sequence, memory_order_relaxed);
    atomic_store_explicit(&l->sequence, s + 1, memory_order_relaxed);
}

static inline void rm__seqlock_write_end(rm__seqlock *l)
{
    unsigned s = atomic_load_explicit(&l->sequence, memory_order_relaxed);
    atomic_store_explicit(&l->sequence, s + 1, memory_order_release);
}

/* Returns the even count to pass to rm__seqlock_read_retry.  A write takes
 * well under a microsecond; a reader that finds one in progress (its writer
 * preempted) yields the CPU rather than spin against it. */
static inline unsigned rm__seqlock_read_begin(const rm__seqlock *l)
{
    unsigned s;
    for (unsigned spins = 0; (s = atomic_load_explicit(&l->sequence, memory_order_acquire)) & 1u; spins++)
        if (spins >= 64)
            sched_yield();
    return s;
}

/* Nonzero when a write overlapped the copy since rm__seqlock_read_begin
 * returned begun: copy again.  (The copy's acquire loads keep this load
 * after them.) */
static inline int rm__seqlock_read_retry(const rm__seqlock *l, unsigned begun)
{
    return atomic_load_explicit(&l->sequence, memory_order_relaxed) != begun;
}

/* Stores a field that readers may be loading (as words) at the same time.
 * The field is a plain double or uint64_t that only the writer's thread
 * stores, so the writer reads it plainly; these are C11 atomic stores on it
 * (an atomic view of a plain object, as C++20's atomic_ref gives). */
static inline void rm__shared_store_double(double *field, double value)
{
    atomic_store_explicit((_Atomic double *)field, value, memory_order_release);
}

static inline void rm__shared_store_u64(uint64_t *field, uint64_t value)
{
    atomic_store_explicit((_Atomic uint64_t *)field, value, memory_order_release);
}

/* Copies words 64-bit words from plain memory to shared words, and back. */
static inline void rm__shared_store_words(void *shared, const void *src, size_t words)
{
    _Atomic uint64_t *dst = shared;
    const unsigned char *from = src;
#pragma GCC unroll 32 /* a sample's words without a loop: this runs on the sampler, per sample */
    for (size_t i = 0; i < words; i++) {
        uint64_t w;
        memcpy(&w, from + i * sizeof w, sizeof w);
        atomic_store_explicit(&dst[i], w, memory_order_release);
    }
}

static inline void rm__shared_load_words(void *dst, const void *shared, size_t words)
{
    const _Atomic uint64_t *from = shared;
    unsigned char *to = dst;
#pragma GCC unroll 8
    for (size_t i = 0; i < words; i++) {
        uint64_t w = atomic_load_explicit(&from[i], memory_order_acquire);
        memcpy(to + i * sizeof w, &w, sizeof w);
    }
}

#endif
