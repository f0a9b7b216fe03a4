/*
 * sample_store.h -- the samples a monitor keeps: all of them, or the most
 * recent N in a ring.
 *
 * A ring of the most recent samples (rather than thinning evenly) because
 * what a long run's reader most often wants is the recent history at full
 * resolution -- the summary already covers the whole run, and the command
 * streams every sample to its file.
 *
 * One writer (the sampler; the owner while no sampler runs) and any number
 * of readers, none of which ever waits for another or holds anything the
 * writer needs:
 *   - Samples live in chunks that never move once allocated (chunk k holds
 *     1024 << k slots), so growing never invalidates a reader's copy.
 *   - Every sample has a number, counted over the store's life.  The writer
 *     announces the number it is about to write (begun), writes the slot's
 *     words with release stores and then publishes the count (written).
 *   - A reader loads the count, copies the samples it names, oldest first,
 *     with acquire loads, and every 1024 samples checks that the writer has
 *     not overwritten any it was about to copy (begun has not reached them,
 *     and no new window began); when it has, it copies again.  A copied
 *     sample is therefore always one whole sample, never a mix of two, and
 *     a copy holds consecutive samples of one window, each still kept when
 *     it was copied; samples published after the copy began are not in it.
 */
#ifndef RESMON_SAMPLE_STORE_H
#define RESMON_SAMPLE_STORE_H

#include "resmon.h"

#include <stdatomic.h>
#include <stdint.h>

#define RM__STORE_MAX_CHUNKS 48 /* 1024 * (2^48 - 1) slots: more than memory holds */

typedef struct rm__sample_store {
    /* Shared with readers. */
    _Atomic uint64_t begun;        /* samples whose writing began, over the store's life */
    _Atomic uint64_t written;      /* samples completely written, over the store's life */
    _Atomic uint64_t window_first; /* the number of the current window's first sample */
    /* Set by init. */
    size_t max_kept; /* 0: unbounded */
    size_t words;    /* 64-bit words kept of each sample */
    /* The writer's.  chunk[k] is set before any sample in it is published
     * and stays until free, so readers read it for the slots they copy. */
    _Atomic uint64_t *chunk[RM__STORE_MAX_CHUNKS];
    size_t capacity;  /* slots in the allocated chunks */
    size_t next_slot; /* where the next sample goes */
    _Atomic uint64_t *cursor, *cursor_end; /* its words, and the end of its chunk (NULL: find them) */
} rm__sample_store;

/* Keeps whole samples; max_kept 0 keeps every one. */
void rm__sample_store_init(rm__sample_store *store, size_t max_kept);

/* Keeps only each sample's first kept_bytes (a multiple of 8, at least
 * through gpu_proc_mem_mb); readers see NAN in every field beyond.  A
 * monitor without metric groups and without a cgroup keeps 64 bytes: every
 * field after gpu_proc_mem_mb is then NAN (metrics.c, cgroup_mem_mb).  A
 * field added to resmon_sample that can be known without either must be
 * kept too (monitor.c, resmon_monitor_new).  Call it before the first push. */
void rm__sample_store_keep_bytes(rm__sample_store *store, size_t kept_bytes);

void rm__sample_store_free(rm__sample_store *store);

/* Begins a new, empty window, keeping the allocation.  The writer's call. */
void rm__sample_store_clear(rm__sample_store *store);

/* Makes room for at least n samples (bounded by max_kept) ahead of time.
 * The writer's call. */
int rm__sample_store_reserve(rm__sample_store *store, size_t n);

/* Keeps a sample, dropping the oldest when full.  Grows by a chunk when
 * unbounded; -ENOMEM if that fails (the sample is not kept).  The writer's
 * call. */
int rm__sample_store_push(rm__sample_store *store, const resmon_sample *s);

/* Copies min(n, cap) of the n kept samples, oldest first, into out, each
 * element stride bytes apart (its first stride bytes; the rest of a larger
 * element zeroed; see resmon.h, "Versioning"); returns n.  Any thread, at
 * any time, without waiting for the writer. */
size_t rm__sample_store_copy_strided(const rm__sample_store *store, void *out, size_t cap, size_t stride);

/* The same with stride sizeof(resmon_sample). */
size_t rm__sample_store_copy(const rm__sample_store *store, resmon_sample *out, size_t cap);

/* Copies the most recent sample into *out; returns 1, or 0 when none is
 * kept.  Any thread, as rm__sample_store_copy_strided. */
int rm__sample_store_latest(const rm__sample_store *store, resmon_sample *out);

#endif
