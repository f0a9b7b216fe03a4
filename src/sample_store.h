/*
 * sample_store.h -- the samples a monitor keeps: all of them, or the most
 * recent N in a ring.
 *
 * A ring of the most recent samples (rather than thinning evenly) because
 * what a long run's reader most often wants is the recent history at full
 * resolution -- the summary already covers the whole run, and the command
 * streams every sample to its file.
 */
#ifndef RESMON_SAMPLE_STORE_H
#define RESMON_SAMPLE_STORE_H

#include "resmon.h"

typedef struct rm__sample_store {
    resmon_sample *ring;
    size_t capacity;  /* allocated slots */
    size_t oldest;    /* index of the oldest kept sample */
    size_t count;     /* kept samples */
    size_t max_kept;  /* 0: unbounded */
} rm__sample_store;

void rm__sample_store_init(rm__sample_store *store, size_t max_kept);
void rm__sample_store_free(rm__sample_store *store);

/* Forgets every sample but keeps the allocation for the next window. */
void rm__sample_store_clear(rm__sample_store *store);

/* Makes room for at least n samples (bounded by max_kept) ahead of time. */
int rm__sample_store_reserve(rm__sample_store *store, size_t n);

/* Keeps a sample, dropping the oldest when full.  Grows by doubling when
 * unbounded; -ENOMEM if that fails (the sample is not kept). */
int rm__sample_store_push(rm__sample_store *store, const resmon_sample *s);

/* Copies min(count, cap) samples, oldest first; returns count. */
size_t rm__sample_store_copy(const rm__sample_store *store, resmon_sample *out, size_t cap);

/* The same with the caller's element size (see resmon.h, "Versioning"). */
size_t rm__sample_store_copy_strided(const rm__sample_store *store, void *out, size_t cap, size_t stride);

/* Copies the most recent sample into *out; returns 1, or 0 when none is kept. */
int rm__sample_store_latest(const rm__sample_store *store, resmon_sample *out);

#endif
