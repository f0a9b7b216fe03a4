/*
 * sample_store.c -- kept samples (see sample_store.h).
 *
 * The ring lives in pages of its own (mmap, grown with mremap) rather than on
 * the malloc heap, because it grows on the sampler thread (see pages.h).
 * Measured: a 1 kHz monitor keeping 1500 samples cost VmSize +72 MiB with
 * malloc (an arena for the sampler thread), +8 MiB (its stack) with mmap.
 */
#include "sample_store.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

static size_t bytes_for(size_t capacity)
{
    return capacity * sizeof(resmon_sample);
}

void rm__sample_store_init(rm__sample_store *store, size_t max_kept)
{
    memset(store, 0, sizeof *store);
    store->max_kept = max_kept;
}

void rm__sample_store_free(rm__sample_store *store)
{
    if (store->ring)
        munmap(store->ring, bytes_for(store->capacity));
    memset(store, 0, sizeof *store);
}

void rm__sample_store_clear(rm__sample_store *store)
{
    store->oldest = 0;
    store->count = 0;
}

/* Reallocates to new_capacity slots, unrolling the ring so oldest is 0. */
static int resize(rm__sample_store *store, size_t new_capacity)
{
    if (new_capacity == 0 || new_capacity > SIZE_MAX / sizeof(resmon_sample))
        return -ENOMEM;
    void *grown;
    if (store->ring && store->oldest == 0) { /* in order already: the kernel moves the pages */
        grown = mremap(store->ring, bytes_for(store->capacity), bytes_for(new_capacity), MREMAP_MAYMOVE);
        if (grown == MAP_FAILED)
            return -ENOMEM;
    } else {
        grown = mmap(NULL, bytes_for(new_capacity), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (grown == MAP_FAILED)
            return -ENOMEM;
        rm__sample_store_copy(store, grown, store->count);
        if (store->ring)
            munmap(store->ring, bytes_for(store->capacity));
    }
    store->ring = grown;
    store->capacity = new_capacity;
    store->oldest = 0;
    return 0;
}

int rm__sample_store_reserve(rm__sample_store *store, size_t n)
{
    if (store->max_kept && n > store->max_kept)
        n = store->max_kept;
    return n > store->capacity ? resize(store, n) : 0;
}

int rm__sample_store_push(rm__sample_store *store, const resmon_sample *s)
{
    if (store->max_kept && store->count == store->max_kept) {
        store->ring[store->oldest] = *s; /* overwrite the oldest */
        store->oldest = (store->oldest + 1) % store->capacity;
        return 0;
    }
    if (store->count == store->capacity) {
        size_t grown = store->capacity ? store->capacity * 2 : 1024;
        if (store->max_kept && grown > store->max_kept)
            grown = store->max_kept;
        int rc = resize(store, grown);
        if (rc < 0)
            return rc;
    }
    store->ring[(store->oldest + store->count) % store->capacity] = *s;
    store->count++;
    return 0;
}

size_t rm__sample_store_copy(const rm__sample_store *store, resmon_sample *out, size_t cap)
{
    size_t n = store->count < cap ? store->count : cap;
    size_t first_run = store->capacity - store->oldest;
    if (first_run > n)
        first_run = n;
    if (n) {
        memcpy(out, store->ring + store->oldest, first_run * sizeof *out);
        memcpy(out + first_run, store->ring, (n - first_run) * sizeof *out);
    }
    return store->count;
}

size_t rm__sample_store_copy_strided(const rm__sample_store *store, void *out, size_t cap, size_t stride)
{
    if (stride == sizeof(resmon_sample))
        return rm__sample_store_copy(store, out, cap);
    /* A caller built against another resmon.h: each element gets the bytes
     * both layouts share, and the rest of a larger element is zeroed. */
    size_t n = store->count < cap ? store->count : cap;
    size_t common = stride < sizeof(resmon_sample) ? stride : sizeof(resmon_sample);
    unsigned char *dst = out;
    for (size_t i = 0; i < n; i++, dst += stride) {
        const resmon_sample *s = store->ring + (store->oldest + i) % store->capacity;
        memcpy(dst, s, common);
        if (stride > common)
            memset(dst + common, 0, stride - common);
    }
    return store->count;
}

int rm__sample_store_latest(const rm__sample_store *store, resmon_sample *out)
{
    if (store->count == 0)
        return 0;
    /* The newest sits just before where the next push goes. */
    *out = store->ring[(store->oldest + store->count - 1) % store->capacity];
    return 1;
}
