/*
 * sample_store.c -- kept samples (see sample_store.h).
 *
 * The chunks live in pages of their own (mmap) rather than on the malloc
 * heap, because they are allocated on the sampler thread (see pages.h).
 * Measured: a 1 kHz monitor keeping 1500 samples cost VmSize +72 MiB with
 * malloc (an arena for the sampler thread), +8 MiB (its stack) with mmap.
 * They never move (no mremap), so a reader may copy from them while the
 * writer grows the store.
 */
#include "sample_store.h"
#include "seqlock.h"
#include "struct_size.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#define FIRST_CHUNK_SLOTS 1024u
#define SAMPLE_WORDS (sizeof(resmon_sample) / sizeof(uint64_t))
#define MIN_KEPT_BYTES RM__SIZE_THROUGH(resmon_sample, gpu_proc_mem_mb)

_Static_assert(sizeof(resmon_sample) % sizeof(uint64_t) == 0, "a sample is whole 64-bit words");

/* Chunk k holds FIRST_CHUNK_SLOTS << k slots and begins at slot
 * FIRST_CHUNK_SLOTS * (2^k - 1). */
static size_t chunk_of(size_t slot)
{
    return (size_t)(63 - __builtin_clzll((unsigned long long)(slot / FIRST_CHUNK_SLOTS + 1)));
}

static size_t chunk_start(size_t k)
{
    return ((size_t)FIRST_CHUNK_SLOTS << k) - FIRST_CHUNK_SLOTS;
}

/* Slots in chunk k as allocated: the last chunk of a bounded store holds
 * only what max_kept needs. */
static size_t chunk_slots(const rm__sample_store *store, size_t k)
{
    size_t slots = (size_t)FIRST_CHUNK_SLOTS << k;
    if (store->max_kept && store->max_kept - chunk_start(k) < slots)
        slots = store->max_kept - chunk_start(k);
    return slots;
}

void rm__sample_store_init(rm__sample_store *store, size_t max_kept)
{
    memset(store, 0, sizeof *store);
    store->max_kept = max_kept;
    store->words = SAMPLE_WORDS;
}

void rm__sample_store_keep_bytes(rm__sample_store *store, size_t kept_bytes)
{
    if (kept_bytes < MIN_KEPT_BYTES)
        kept_bytes = MIN_KEPT_BYTES;
    if (kept_bytes > sizeof(resmon_sample))
        kept_bytes = sizeof(resmon_sample);
    store->words = (kept_bytes + sizeof(uint64_t) - 1) / sizeof(uint64_t);
}

void rm__sample_store_free(rm__sample_store *store)
{
    for (size_t k = 0; k < RM__STORE_MAX_CHUNKS && store->chunk[k]; k++)
        munmap((void *)store->chunk[k], chunk_slots(store, k) * store->words * sizeof(uint64_t));
    memset(store, 0, sizeof *store);
}

void rm__sample_store_clear(rm__sample_store *store)
{
    store->next_slot = 0;
    store->cursor = store->cursor_end = NULL;
    /* Readers still copying the last window see this change and copy again. */
    uint64_t written = atomic_load_explicit(&store->written, memory_order_relaxed);
    atomic_store_explicit(&store->window_first, written, memory_order_release);
}

/* Allocates the next chunk. */
static int grow(rm__sample_store *store)
{
    size_t k = chunk_of(store->capacity);
    if (k >= RM__STORE_MAX_CHUNKS)
        return -ENOMEM;
    size_t slots = chunk_slots(store, k);
    if (slots > SIZE_MAX / sizeof(uint64_t) / store->words)
        return -ENOMEM;
    void *chunk = mmap(NULL, slots * store->words * sizeof(uint64_t), PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (chunk == MAP_FAILED)
        return -ENOMEM;
    store->chunk[k] = chunk;
    store->capacity += slots;
    return 0;
}

int rm__sample_store_reserve(rm__sample_store *store, size_t n)
{
    if (store->max_kept && n > store->max_kept)
        n = store->max_kept;
    while (store->capacity < n) {
        int rc = grow(store);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* Points the cursor at next_slot, growing the store when it is full.  Once
 * per chunk, so kept out of line: push stays a few dozen instructions. */
__attribute__((noinline)) static int seek(rm__sample_store *store)
{
    size_t slot = store->next_slot;
    if (slot == store->capacity) { /* a bounded store that is full wraps before this */
        int rc = grow(store);
        if (rc < 0)
            return rc;
    }
    size_t k = chunk_of(slot);
    store->cursor = store->chunk[k] + (slot - chunk_start(k)) * store->words;
    store->cursor_end = store->chunk[k] + chunk_slots(store, k) * store->words;
    return 0;
}

/* The sample's kept words; a constant count where it is the usual one, so
 * the compiler unrolls the stores. */
static void store_sample(_Atomic uint64_t *dst, const resmon_sample *s, size_t words)
{
    if (words == RM__SIZE_THROUGH(resmon_sample, gpu_proc_mem_mb) / sizeof(uint64_t))
        rm__shared_store_words(dst, s, RM__SIZE_THROUGH(resmon_sample, gpu_proc_mem_mb) / sizeof(uint64_t));
    else if (words == SAMPLE_WORDS)
        rm__shared_store_words(dst, s, SAMPLE_WORDS);
    else
        rm__shared_store_words(dst, s, words);
}

int rm__sample_store_push(rm__sample_store *store, const resmon_sample *s)
{
    if (store->cursor == store->cursor_end) {
        int rc = seek(store);
        if (rc < 0)
            return rc;
    }
    uint64_t number = atomic_load_explicit(&store->written, memory_order_relaxed);
    /* Announced before the slot's words change, so that a reader that loads
     * any of the new words also sees that this sample was begun (release
     * stores below). */
    atomic_store_explicit(&store->begun, number + 1, memory_order_relaxed);
    store_sample(store->cursor, s, store->words);
    atomic_store_explicit(&store->written, number + 1, memory_order_release);
    store->cursor += store->words;
    if (++store->next_slot == store->max_kept) { /* wrap: the oldest goes next */
        store->next_slot = 0;
        store->cursor = store->cursor_end = NULL;
    }
    return 0;
}

/* What a sample holds beyond the kept words: NAN in every field. */
static uint64_t nan_words[SAMPLE_WORDS];
static pthread_once_t nan_words_once = PTHREAD_ONCE_INIT;

static void fill_nan_words(void)
{
    for (size_t i = 0; i < SAMPLE_WORDS; i++)
        nan_words[i] = 0x7ff8000000000000u; /* a quiet NaN, as NAN is */
}

/* Copies one kept sample into dst: its first stride bytes, the rest of a
 * larger element zeroed.  Fields beyond the kept words are NAN. */
static void copy_one(const rm__sample_store *store, const _Atomic uint64_t *src, unsigned char *dst,
                     size_t stride)
{
    if (stride >= sizeof(resmon_sample)) { /* the usual case: straight into dst */
        rm__shared_load_words(dst, src, store->words);
        memcpy(dst + store->words * sizeof(uint64_t), nan_words + store->words,
               sizeof(resmon_sample) - store->words * sizeof(uint64_t));
        if (stride > sizeof(resmon_sample))
            memset(dst + sizeof(resmon_sample), 0, stride - sizeof(resmon_sample));
        return;
    }
    /* A caller built against an older, smaller resmon_sample. */
    uint64_t whole[SAMPLE_WORDS];
    size_t needed = (stride + sizeof(uint64_t) - 1) / sizeof(uint64_t);
    size_t loaded = needed < store->words ? needed : store->words;
    rm__shared_load_words(whole, src, loaded);
    memcpy(whole + loaded, nan_words + loaded, (needed - loaded) * sizeof(uint64_t));
    memcpy(dst, whole, stride);
}

/* Copies n samples from the window's slot pos on, wrapping a bounded ring. */
static void copy_slots(const rm__sample_store *store, size_t pos, size_t n, unsigned char *dst, size_t stride)
{
    pthread_once(&nan_words_once, fill_nan_words);
    while (n > 0) {
        size_t k = chunk_of(pos);
        size_t run = chunk_start(k) + chunk_slots(store, k) - pos;
        if (run > n)
            run = n;
        const _Atomic uint64_t *src = store->chunk[k] + (pos - chunk_start(k)) * store->words;
        for (size_t i = 0; i < run; i++, src += store->words, dst += stride)
            copy_one(store, src, dst, stride);
        n -= run;
        pos += run;
        if (pos == store->max_kept)
            pos = 0;
    }
}

/* The window a reader copies from: its first number, and the end of what
 * was written when it looked. */
typedef struct store_view {
    uint64_t first, end;
} store_view;

static store_view view_of(const rm__sample_store *store)
{
    store_view v;
    v.end = atomic_load_explicit(&store->written, memory_order_acquire);
    /* Loaded after written, so at least as new as the window that wrote it
     * (a window that began since then leaves nothing to copy). */
    v.first = atomic_load_explicit(&store->window_first, memory_order_acquire);
    if (v.first > v.end)
        v.end = v.first;
    return v;
}

/* The oldest number of the view's window still kept when begun was begun. */
static uint64_t oldest_kept(const rm__sample_store *store, uint64_t first, uint64_t end)
{
    return store->max_kept && end - first > store->max_kept ? end - store->max_kept : first;
}

static size_t slot_of(const rm__sample_store *store, uint64_t first, uint64_t number)
{
    uint64_t pos = number - first;
    return (size_t)(store->max_kept ? pos % store->max_kept : pos);
}

/* Copies numbers [lo, lo + n) of the window beginning at first. */
static void copy_numbers(const rm__sample_store *store, uint64_t first, uint64_t lo, size_t n,
                         unsigned char *dst, size_t stride)
{
    if (n)
        copy_slots(store, slot_of(store, first, lo), n, dst, stride);
}

/* A reader checks what it copied every this many samples: the writer can
 * only overwrite the oldest, which the copy leaves behind far faster than
 * the writer (a sample every microsecond at most) reaches them. */
#define CHECK_EVERY 1024u

size_t rm__sample_store_copy_strided(const rm__sample_store *store, void *out, size_t cap, size_t stride)
{
    unsigned char *dst = out;
    for (unsigned attempt = 0;; attempt++) {
        if (attempt >= 4) /* the writer keeps lapping this copy (a tiny ring): let it run */
            sched_yield();
        store_view v = view_of(store);
        uint64_t lo = oldest_kept(store, v.first, v.end);
        size_t kept = (size_t)(v.end - lo);
        size_t want = kept < cap ? kept : cap;
        size_t have = 0;
        while (have < want) {
            size_t block = want - have < CHECK_EVERY ? want - have : CHECK_EVERY;
            copy_numbers(store, v.first, lo + have, block, dst + have * stride, stride);
            /* These loads come after the copy's acquire loads.  A new window
             * reused the slots; or begun shows the writer reached a number
             * this copy had not yet left behind (a slot is overwritten only by
             * the sample max_kept numbers later): copy again.  Else every
             * sample copied so far was whole when copied. */
            if (atomic_load_explicit(&store->window_first, memory_order_relaxed) != v.first ||
                oldest_kept(store, v.first, atomic_load_explicit(&store->begun, memory_order_relaxed)) > lo + have)
                break;
            have += block;
        }
        if (have == want)
            return kept;
    }
}

size_t rm__sample_store_copy(const rm__sample_store *store, resmon_sample *out, size_t cap)
{
    return rm__sample_store_copy_strided(store, out, cap, sizeof *out);
}

int rm__sample_store_latest(const rm__sample_store *store, resmon_sample *out)
{
    for (;;) {
        store_view v = view_of(store);
        if (v.end == v.first)
            return 0;
        copy_numbers(store, v.first, v.end - 1, 1, (unsigned char *)out, sizeof *out);
        if (atomic_load_explicit(&store->window_first, memory_order_relaxed) == v.first &&
            oldest_kept(store, v.first, atomic_load_explicit(&store->begun, memory_order_relaxed)) <= v.end - 1)
            return 1;
    }
}
