/*
 * phases.c -- named phases of a window (see phases.h and resmon.h).
 */
#include "phases.h"
#include "internal.h"
#include "metric_fields.h"
#include "struct_size.h"
#include "utf8.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NAME_WORDS (RESMON_PHASE_NAME_MAX / 8)
#define ACC_WORDS (sizeof(rm__summary_acc) / sizeof(uint64_t))
#define MIN_STRIDE (offsetof(resmon_phase, summary) + RM__SIZE_THROUGH(resmon_summary, peak_gpu_proc_mem_mb))

_Static_assert(RESMON_PHASE_NAME_MAX % 8 == 0, "a name is whole words");

/* Stores each LAST-folded metric of s (NULL: 0, the window's start) as ph's base. */
static void store_metric_base(rm__phase *ph, const resmon_sample *s)
{
    for (size_t i = 0; i < rm__metric_field_count; i++)
        rm__shared_store_double(&ph->metric_base[i], s && rm__metric_fields[i].fold == RESMON_FOLD_LAST
                                                         ? rm__sample_metric(s, &rm__metric_fields[i])
                                                         : 0.0);
}

/* A phase's totals are its own: each LAST-folded figure less its base. */
static void subtract_metric_base(resmon_summary *summary, const double *base)
{
    for (size_t i = 0; i < rm__metric_field_count; i++) {
        const rm__metric_field *f = &rm__metric_fields[i];
        double *value = rm__summary_metric(summary, f);
        if (f->fold == RESMON_FOLD_LAST && !isnan(base[i]))
            *value -= base[i]; /* NAN stays NAN: not read */
    }
}

int rm__phases_init(rm__phases *p, int metrics_on)
{
    memset(p, 0, sizeof *p);
    p->metrics_on = metrics_on;
    p->closed = 1; /* until a window starts */
    return -pthread_mutex_init(&p->lock, NULL);
}

void rm__phases_free(rm__phases *p)
{
    free(atomic_load(&p->table));
    pthread_mutex_destroy(&p->lock);
}

void rm__phases_reset(rm__phases *p)
{
    pthread_mutex_lock(&p->lock);
    p->pending_count = 0;
    p->accepted = 0;
    p->closed = 0;
    atomic_store_explicit(&p->has_pending, 0, memory_order_release);
    pthread_mutex_unlock(&p->lock);
    atomic_store_explicit(&p->count, 0, memory_order_release);
}

void rm__phases_refuse(rm__phases *p)
{
    rm__phases_reset(p);
    pthread_mutex_lock(&p->lock);
    p->closed = 1;
    pthread_mutex_unlock(&p->lock);
}

int rm__phase_name_check(const char *name)
{
    if (!name)
        return -EINVAL;
    size_t len = strnlen(name, RESMON_PHASE_NAME_MAX);
    if (len == 0 || len >= RESMON_PHASE_NAME_MAX)
        return -EINVAL;
    const unsigned char *s = (const unsigned char *)name;
    for (size_t n; *s; s += n) {
        uint32_t cp;
        if ((n = rm__utf8_sequence_length(s, &cp)) == 0)
            return -EINVAL;
        if (rm__utf8_is_control(cp)) /* C0, DEL, C1 and bidirectional controls */
            return -EINVAL;
    }
    return 0;
}

int rm__phases_request(rm__phases *p, const char *name)
{
    int rc = rm__phase_name_check(name);
    if (rc < 0)
        return rc;
    pthread_mutex_lock(&p->lock);
    if (!atomic_load_explicit(&p->table, memory_order_relaxed)) {
        /* Once per monitor.  calloc of this size maps fresh zero pages, so
         * only the entries a window writes become resident. */
        rm__phase *table = calloc(RESMON_MAX_PHASES, sizeof *table);
        if (!table) {
            pthread_mutex_unlock(&p->lock);
            return -ENOMEM;
        }
        atomic_store_explicit(&p->table, table, memory_order_release);
    }
    unsigned needed = p->accepted == 0 ? 2 : 1; /* the first mark also makes the unnamed first phase */
    if (p->closed)
        rc = -EINVAL; /* the window's closing open has taken the queue: nothing would open this one */
    else if (p->accepted + needed > RESMON_MAX_PHASES)
        rc = -ENOSPC;
    else if (p->pending_count == RM__PHASES_PENDING)
        rc = -EAGAIN;
    else {
        memcpy(p->pending[p->pending_count++], name, strlen(name) + 1);
        p->accepted += needed;
        atomic_store_explicit(&p->has_pending, 1, memory_order_release);
    }
    pthread_mutex_unlock(&p->lock);
    return rc;
}

static rm__phase *current(rm__phases *p)
{
    size_t count = atomic_load_explicit(&p->count, memory_order_relaxed);
    return count ? &atomic_load_explicit(&p->table, memory_order_relaxed)[count - 1] : NULL;
}

void rm__phases_add(rm__phases *p, const resmon_sample *s, double cpu_time_sec, int short_interval,
                    double energy_j)
{
    rm__phase *ph = current(p);
    if (!ph)
        return; /* no mark yet: the window's accumulator is the first phase's */
    rm__summary_acc_add(&ph->acc, s, cpu_time_sec, short_interval);
    rm__summary_acc_add_energy(&ph->acc, energy_j);
}

static double window_exact_peak(const rm__summary_acc *window)
{
    return window->hwm_scope == RESMON_HWM_WINDOW ? window->hwm_rss_mb : NAN;
}

/* Ends ph: its exact peak is the window's when the window's rose during it
 * (the kernel's mark never falls, so the rise happened in this phase). */
static void close_phase(rm__phase *ph, const rm__summary_acc *window, double cpu_energy_total_j)
{
    rm__summary_acc a = ph->acc; /* plain: only this thread stores to it */
    double peak = window_exact_peak(window);
    if (peak > ph->hwm_start_mb) { /* false for NAN on either side */
        a.hwm_rss_mb = peak; /* never the phase's sampled peak: a tree's is a sum (monitor.c) */
        a.hwm_scope = RESMON_HWM_WINDOW;
    } else {
        a.hwm_rss_mb = NAN;
        a.hwm_scope = RESMON_HWM_UNKNOWN;
    }
    a.hwm_error = 0;
    a.cpu_energy_j = cpu_energy_total_j - ph->cpu_energy_start_j; /* NAN without RAPL */
    rm__summary_acc_store(&ph->acc, &a);
}

static void store_name(rm__phase *ph, const char *name)
{
    uint64_t words[NAME_WORDS] = {0};
    memcpy(words, name, strlen(name) + 1);
    rm__shared_store_words(ph->name_words, words, NAME_WORDS);
}

void rm__phases_open(rm__phases *p, const rm__summary_acc *window, const resmon_sample *s, double energy_j,
                     double cpu_energy_total_j, int closing)
{
    char names[RM__PHASES_PENDING][RESMON_PHASE_NAME_MAX];
    pthread_mutex_lock(&p->lock); /* held by a mark for a copy of 64 bytes at most */
    if (closing)
        p->closed = 1;
    unsigned n = p->pending_count;
    memcpy(names, p->pending, n * sizeof names[0]);
    p->pending_count = 0;
    atomic_store_explicit(&p->has_pending, 0, memory_order_relaxed);
    pthread_mutex_unlock(&p->lock);
    if (n == 0)
        return;
    rm__phase *table = atomic_load_explicit(&p->table, memory_order_acquire);
    size_t count = atomic_load_explicit(&p->count, memory_order_relaxed);
    if (count == 0) { /* the unnamed first phase: the window until now */
        rm__phase *first = &table[0];
        store_name(first, "");
        rm__shared_store_double(&first->start_timestamp, window->first_timestamp);
        rm__summary_acc_store(&first->acc, window);
        store_metric_base(first, NULL);
        first->hwm_start_mb = 0.0; /* any exact peak of the window so far is this phase's */
        first->cpu_energy_start_j = isnan(cpu_energy_total_j) ? NAN : 0.0;
        count = 1;
    }
    for (unsigned i = 0; i < n && count < RESMON_MAX_PHASES; i++) {
        close_phase(&table[count - 1], window, cpu_energy_total_j);
        rm__phase *ph = &table[count];
        store_name(ph, names[i]);
        rm__shared_store_double(&ph->start_timestamp, s->timestamp);
        rm__summary_acc fresh;
        rm__summary_acc_reset(&fresh, p->metrics_on);
        fresh.cgroup_version = window->cgroup_version;
        fresh.cgroup_error = window->cgroup_error;
        rm__summary_acc_add(&fresh, s, 0.0, 0); /* the mark's sample: this phase's first */
        /* The phase's energy starts where the last one's ended: at the
         * window's latest counter reading.  The mark's sample may carry
         * none (NAN: the GPU thread was late, on a busy machine), and
         * starting at the next reading lost the energy of the intervals
         * between -- the phases summed to 300 J of the window's 320. */
        rm__summary_acc_add_energy(&fresh, isnan(energy_j) && window->energy_count ? window->last_energy_j
                                                                                  : energy_j);
        rm__summary_acc_store(&ph->acc, &fresh);
        store_metric_base(ph, s);
        ph->hwm_start_mb = window_exact_peak(window);
        ph->cpu_energy_start_j = cpu_energy_total_j;
        count++;
        atomic_store_explicit(&p->count, count, memory_order_release);
    }
}

void rm__phases_end(rm__phases *p, const rm__summary_acc *window, double cpu_energy_total_j)
{
    rm__phase *ph = current(p);
    if (ph)
        close_phase(ph, window, cpu_energy_total_j);
}

/* One phase's shared words, plain. */
typedef struct phase_copy {
    uint64_t name_words[NAME_WORDS];
    double start_timestamp, first_timestamp;
    rm__summary_acc acc;
    double metric_base[RM__METRIC_COUNT];
} phase_copy;

/* Phase i (when i < the count) as of one sample; returns the count. */
static size_t load_phase(const rm__phases *p, const rm__seqlock *published, size_t i, phase_copy *c)
{
    size_t count;
    unsigned seq;
    do {
        seq = rm__seqlock_read_begin(published);
        count = atomic_load_explicit(&p->count, memory_order_acquire);
        if (i < count) {
            const rm__phase *table = atomic_load_explicit(&p->table, memory_order_acquire);
            rm__shared_load_words(c->name_words, table[i].name_words, NAME_WORDS);
            rm__shared_load_words(&c->start_timestamp, &table[i].start_timestamp, 1);
            rm__shared_load_words(&c->first_timestamp, &table[0].start_timestamp, 1);
            rm__summary_acc_load(&c->acc, &table[i].acc);
            rm__shared_load_words(c->metric_base, table[i].metric_base, RM__METRIC_COUNT);
        }
    } while (rm__seqlock_read_retry(published, seq));
    return count;
}

ssize_t rm__phases_copy(const rm__phases *p, const rm__seqlock *published, resmon_phase *out, size_t cap,
                        size_t stride)
{
    if ((!out && cap) || (cap && stride < MIN_STRIDE))
        return -EINVAL;
    for (size_t i = 0;; i++) {
        phase_copy c;
        size_t count = load_phase(p, published, i < cap ? i : SIZE_MAX, &c);
        if (i >= count || i >= cap)
            return (ssize_t)count;
        resmon_phase e;
        memset(&e, 0, sizeof e);
        memcpy(e.name, c.name_words, sizeof e.name);
        e.name[sizeof e.name - 1] = '\0';
        e.start_timestamp = c.start_timestamp;
        e.start_sec = c.start_timestamp - c.first_timestamp;
        e.summary = rm__summary_acc_result(&c.acc);
        subtract_metric_base(&e.summary, c.metric_base);
        size_t summary_room = stride - offsetof(resmon_phase, summary);
        e.summary.struct_size = rm__out_size(summary_room, sizeof e.summary);
        rm__copy_struct_out((unsigned char *)out + i * stride, stride, &e, sizeof e);
    }
}

int rm__phases_current(const rm__phases *p, const rm__seqlock *published, char *name, size_t cap)
{
    if (!name && cap)
        return -EINVAL;
    uint64_t words[NAME_WORDS] = {0};
    size_t count;
    unsigned seq;
    do {
        seq = rm__seqlock_read_begin(published);
        count = atomic_load_explicit(&p->count, memory_order_acquire);
        if (count) {
            const rm__phase *table = atomic_load_explicit(&p->table, memory_order_acquire);
            rm__shared_load_words(words, table[count - 1].name_words, NAME_WORDS);
        }
    } while (rm__seqlock_read_retry(published, seq));
    if (cap)
        rm__copy_string(name, cap, (const char *)words, sizeof words - 1);
    return (int)count;
}
