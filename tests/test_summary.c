/*
 * test_summary.c -- the seed's summary rules on hand-made samples, and the
 * sample store's ring.
 */
#include "sample_store.h"
#include "seqlock.h"
#include "metric_fields.h"
#include "summary.h"
#include "test_util.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static resmon_sample sample(double t, double cpu, double rss)
{
    resmon_sample s = {.timestamp = t, .cpu_percent = cpu, .rss_mb = rss, .gpu_util = NAN, .gpu_mem_mb = NAN,
                       .gpu_clock_mhz = NAN, .gpu_power_w = NAN, .gpu_proc_mem_mb = NAN};
    for (size_t i = 0; i < rm__metric_field_count; i++)
        *rm__sample_metric_slot(&s, &rm__metric_fields[i]) = NAN; /* groups off */
    return s;
}

static void empty_summary_is_zeroed_with_gpu_nan(void **state)
{
    (void)state;
    rm__summary_acc acc;
    rm__summary_acc_reset(&acc, 0);
    resmon_summary s = rm__summary_acc_result(&acc);
    assert_int_equal(s.num_samples, 0);
    ASSERT_DOUBLE_EQ(s.peak_rss_mb, 0);
    ASSERT_DOUBLE_EQ(s.mean_rss_mb, 0);
    ASSERT_DOUBLE_EQ(s.memory_growth_mb, 0);
    ASSERT_DOUBLE_EQ(s.duration_sec, 0);
    ASSERT_NAN(s.peak_gpu_mem_mb);
    ASSERT_NAN(s.mean_gpu_util);
    ASSERT_NAN(s.mean_gpu_clock_mhz);
    ASSERT_NAN(s.mean_gpu_power_w);
    ASSERT_NAN(s.hwm_rss_mb);
    assert_int_equal(s.hwm_scope, RESMON_HWM_UNKNOWN);
    ASSERT_NAN(s.peak_pss_mb);
    ASSERT_NAN(s.io_wchar);
}

/* Levels keep their peak, totals the last known value; a sample that could
 * not read a group (NAN) changes neither. */
static void metric_groups_fold_into_peaks_and_totals(void **state)
{
    (void)state;
    rm__summary_acc acc;
    rm__summary_acc_reset(&acc, 1); /* as the monitor does when resmon_options.metrics has a group */
    const double pss[] = {10, 250, NAN, 40};
    const double wchar[] = {0, 4096, 8192, NAN};
    const double nprocs[] = {1, 5, 3, 2};
    for (int i = 0; i < 4; i++) {
        resmon_sample s = sample(i, 0, 1);
        s.pss_mb = pss[i];
        s.io_wchar = wchar[i];
        s.nprocs = nprocs[i];
        rm__summary_acc_add(&acc, &s, 0, 0);
    }
    resmon_summary s = rm__summary_acc_result(&acc);
    ASSERT_DOUBLE_EQ(s.peak_pss_mb, 250);
    ASSERT_DOUBLE_EQ(s.io_wchar, 8192);
    ASSERT_DOUBLE_EQ(s.peak_nprocs, 5);
    ASSERT_NAN(s.net_rx_bytes); /* never sampled */
}

static void one_sample_has_zero_duration(void **state)
{
    (void)state;
    rm__summary_acc acc;
    rm__summary_acc_reset(&acc, 0);
    resmon_sample s0 = sample(5.0, 0, 12.5);
    rm__summary_acc_add(&acc, &s0, 0, 0);
    resmon_summary s = rm__summary_acc_result(&acc);
    assert_int_equal(s.num_samples, 1);
    ASSERT_DOUBLE_EQ(s.duration_sec, 0);
    ASSERT_DOUBLE_EQ(s.peak_rss_mb, 12.5);
    ASSERT_DOUBLE_EQ(s.mean_rss_mb, 12.5);
    ASSERT_DOUBLE_EQ(s.memory_growth_mb, 0);
}

static void cpu_and_rss_follow_the_seed(void **state)
{
    (void)state;
    rm__summary_acc acc;
    rm__summary_acc_reset(&acc, 0);
    resmon_sample in[] = {sample(10.0, 0, 100), sample(10.1, 50, 300), sample(10.2, 150, 200),
                          sample(10.3, 100, 80)};
    for (size_t i = 0; i < 4; i++)
        rm__summary_acc_add(&acc, &in[i], i ? 0.1 : 0, 0);
    resmon_summary s = rm__summary_acc_result(&acc);
    assert_int_equal(s.num_samples, 4);
    ASSERT_DOUBLE_EQ(s.peak_rss_mb, 300);
    ASSERT_DOUBLE_EQ(s.mean_rss_mb, 170);
    ASSERT_DOUBLE_EQ(s.memory_growth_mb, -20); /* last minus first, not peak minus first */
    ASSERT_BETWEEN(s.duration_sec, 0.3 - 1e-12, 0.3 + 1e-12);
    ASSERT_BETWEEN(s.mean_cpu_percent, 100 - 1e-9, 100 + 1e-9); /* CPU time / wall time */
    ASSERT_DOUBLE_EQ(s.peak_cpu_percent, 150);
    ASSERT_BETWEEN(s.cpu_time_sec, 0.3 - 1e-12, 0.3 + 1e-12);
    ASSERT_NAN(s.mean_gpu_util);
}

/* Adds samples at the given times with the given CPU seconds since the
 * previous (short: taken under half an interval after it). */
static resmon_summary fold_cpu(const double *times, const double *cpu_sec, const int *short_interval, size_t n)
{
    rm__summary_acc acc;
    rm__summary_acc_reset(&acc, 0);
    for (size_t i = 0; i < n; i++) {
        double percent = i ? 100.0 * cpu_sec[i] / (times[i] - times[i - 1]) : 0.0;
        resmon_sample s = sample(times[i], percent, 1);
        rm__summary_acc_add(&acc, &s, i ? cpu_sec[i] : 0, short_interval[i]);
    }
    return rm__summary_acc_result(&acc);
}

/* Issue 17.12: the peak is never below the mean.  A command that ends at
 * once has one interval, the stop's, short: its CPU was the whole mean and
 * a peak of 0 (all short samples left out) stood beside a mean of 66.7 %. */
static void cpu_peak_is_never_below_the_mean(void **state)
{
    (void)state;
    double t1[] = {0.0, 0.003}, c1[] = {0, 0.002};
    int s1[] = {0, 1};
    resmon_summary s = fold_cpu(t1, c1, s1, 2);
    ASSERT_BETWEEN(s.mean_cpu_percent, 66.6, 66.7);
    ASSERT_BETWEEN(s.peak_cpu_percent, s.mean_cpu_percent * (1 - 1e-12), s.mean_cpu_percent * (1 + 1e-12));
    assert_true(s.peak_cpu_percent >= s.mean_cpu_percent); /* exactly: not a rounding below */
    /* Wall-clock timestamps of today (1.8e9 s) and a 1.4 ms window, as CI
     * met it: the spans' sum may round below the duration; never the peak. */
    for (int i = 0; i < 200; i++) {
        double t3[] = {1764600601.460 + i * 0.0137, 1764600601.460 + i * 0.0137 + 0.0013640289980685338};
        double c3[] = {0, 0.001068554 + i * 1e-9};
        int s3[] = {0, 1};
        s = fold_cpu(t3, c3, s3, 2);
        assert_true(s.peak_cpu_percent >= s.mean_cpu_percent);
    }
    /* Idle full intervals, then all the CPU in the stop's short one: it joins
     * the span before it, so the peak is a rate over 0.13 s, not 0. */
    double t2[] = {0.0, 0.1, 0.2, 0.23}, c2[] = {0, 0, 0, 0.02};
    int s2[] = {0, 0, 0, 1};
    s = fold_cpu(t2, c2, s2, 4);
    ASSERT_BETWEEN(s.peak_cpu_percent, 100 * 0.02 / 0.13 - 1e-9, 100 * 0.02 / 0.13 + 1e-9);
    assert_true(s.peak_cpu_percent >= s.mean_cpu_percent);
}

/* Under a few scheduler ticks one interval reads a tick's lump or nothing:
 * at 1 ms, 0 %, 400 % (capped at the machine), 0 %, ... for one busy thread
 * sampled between its ticks.  The peak is a rate over 20 ms spans. */
static void cpu_peak_spans_a_few_ticks(void **state)
{
    (void)state;
    enum { N = 101 };
    double times[N], cpu[N];
    int short_interval[N] = {0};
    for (int i = 0; i < N; i++) {
        times[i] = i * 0.001;
        cpu[i] = i % 4 == 0 ? 0.004 : 0; /* one thread: a 4 ms tick lands every 4 ms */
    }
    resmon_summary s = fold_cpu(times, cpu, short_interval, N);
    ASSERT_BETWEEN(s.mean_cpu_percent, 99, 101);
    ASSERT_BETWEEN(s.peak_cpu_percent, 99, 121); /* not 400 % */
    /* 10 ms samples of one busy thread alternating 80 % and 120 %. */
    double t10[11], c10[11];
    int s10[11] = {0};
    for (int i = 0; i < 11; i++) {
        t10[i] = i * 0.01;
        c10[i] = i % 2 ? 0.008 : 0.012;
    }
    s = fold_cpu(t10, c10, s10, 11);
    ASSERT_BETWEEN(s.peak_cpu_percent, 100 - 1e-9, 100 + 1e-9);
}

static void gpu_means_skip_missing_values(void **state)
{
    (void)state;
    rm__summary_acc acc;
    rm__summary_acc_reset(&acc, 0);
    resmon_sample a = sample(0, 0, 1), b = sample(1, 0, 1), c = sample(2, 0, 1);
    a.gpu_util = 20; a.gpu_mem_mb = 1000; a.gpu_clock_mhz = 1500;
    b.gpu_util = 40; b.gpu_mem_mb = 3000; b.gpu_power_w = 250;
    /* c: no GPU values at all (a failing profiler) */
    rm__summary_acc_add(&acc, &a, 0, 0);
    rm__summary_acc_add(&acc, &b, 0, 0);
    rm__summary_acc_add(&acc, &c, 0, 0);
    resmon_summary s = rm__summary_acc_result(&acc);
    ASSERT_DOUBLE_EQ(s.mean_gpu_util, 30);
    ASSERT_DOUBLE_EQ(s.peak_gpu_mem_mb, 3000);
    ASSERT_DOUBLE_EQ(s.mean_gpu_clock_mhz, 1500);
    ASSERT_DOUBLE_EQ(s.mean_gpu_power_w, 250);
}

static void gpu_peak_of_zero_is_zero_not_nan(void **state)
{
    (void)state;
    rm__summary_acc acc;
    rm__summary_acc_reset(&acc, 0);
    resmon_sample a = sample(0, 0, 1);
    a.gpu_mem_mb = 0;
    rm__summary_acc_add(&acc, &a, 0, 0);
    ASSERT_DOUBLE_EQ(rm__summary_acc_result(&acc).peak_gpu_mem_mb, 0);
}

static void unbounded_store_keeps_everything_in_order(void **state)
{
    (void)state;
    rm__sample_store store;
    rm__sample_store_init(&store, 0);
    for (int i = 0; i < 5000; i++) {
        resmon_sample s = sample(i, 0, 0);
        assert_int_equal(rm__sample_store_push(&store, &s), 0);
    }
    resmon_sample *out = calloc(5000, sizeof *out);
    assert_int_equal(rm__sample_store_copy(&store, out, 5000), 5000);
    for (int i = 0; i < 5000; i++)
        ASSERT_DOUBLE_EQ(out[i].timestamp, i);
    /* A short buffer gets the oldest, and the full count. */
    assert_int_equal(rm__sample_store_copy(&store, out, 3), 5000);
    ASSERT_DOUBLE_EQ(out[2].timestamp, 2);
    assert_int_equal(rm__sample_store_copy(&store, NULL, 0), 5000);
    free(out);
    rm__sample_store_free(&store);
}

static void bounded_store_keeps_most_recent(void **state)
{
    (void)state;
    rm__sample_store store;
    rm__sample_store_init(&store, 7);
    resmon_sample out[10];
    for (int i = 0; i < 23; i++) {
        resmon_sample s = sample(i, 0, 0);
        assert_int_equal(rm__sample_store_push(&store, &s), 0);
        size_t n = rm__sample_store_copy(&store, out, 10);
        assert_int_equal(n, i + 1 < 7 ? i + 1 : 7);
        for (size_t k = 0; k < n; k++)
            ASSERT_DOUBLE_EQ(out[k].timestamp, i + 1 - (double)n + (double)k);
    }
    assert_true(store.capacity <= 7);
    rm__sample_store_clear(&store);
    assert_int_equal(rm__sample_store_copy(&store, out, 10), 0);
    rm__sample_store_free(&store);
}

/* ---- readers racing the store's writer ------------------------------------ */

typedef struct racing_store {
    rm__sample_store store;
    size_t cap;          /* what a reader asks for */
    size_t kept_words;   /* words a sample keeps; the rest read NAN */
    atomic_int done;
    atomic_int copies, bad;
} racing_store;

/* Sample number n: every field n, so a sample mixed from two reads as such. */
static resmon_sample numbered(uint64_t n)
{
    resmon_sample s;
    double *field = (double *)(void *)&s;
    for (size_t i = 0; i < sizeof s / sizeof(double); i++)
        field[i] = (double)n;
    return s;
}

static int sample_is_whole(const resmon_sample *s, size_t kept_words)
{
    const double *field = (const double *)(const void *)s;
    for (size_t i = 1; i < sizeof *s / sizeof(double); i++)
        if (i < kept_words ? field[i] != field[0] : !isnan(field[i]))
            return 0;
    return 1;
}

static void *copy_racing(void *arg)
{
    racing_store *r = arg;
    resmon_sample *out = calloc(r->cap, sizeof *out);
    while (!atomic_load(&r->done)) {
        size_t n = rm__sample_store_copy(&r->store, out, r->cap);
        size_t copied = n < r->cap ? n : r->cap;
        if (r->store.max_kept && n > r->store.max_kept)
            atomic_fetch_add(&r->bad, 1);
        for (size_t i = 0; i < copied; i++)
            if (!sample_is_whole(&out[i], r->kept_words) || (i && out[i].timestamp != out[i - 1].timestamp + 1))
                atomic_fetch_add(&r->bad, 1);
        atomic_fetch_add(&r->copies, 1);
    }
    free(out);
    return NULL;
}

/* One writer pushing every microsecond (and starting a new window every
 * 5000 samples), two readers copying meanwhile: every copy is whole samples,
 * consecutive, of one window -- never torn by an overwrite or a new window,
 * however often the writer laps the ring under them. */
static void race(size_t max_kept, size_t kept_bytes, size_t cap)
{
    racing_store r = {.cap = cap};
    rm__sample_store_init(&r.store, max_kept);
    if (kept_bytes)
        rm__sample_store_keep_bytes(&r.store, kept_bytes);
    r.kept_words = r.store.words;
    assert_int_equal(rm__sample_store_reserve(&r.store, 1024), 0);
    pthread_t readers[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&readers[i], NULL, copy_racing, &r), 0);
    const uint64_t pushes = TEST_UNDER_TSAN ? 20000 : 200000; /* TSan: each atomic costs ~100x */
    double next = test_now();
    for (uint64_t n = 1; n <= pushes || atomic_load(&r.copies) < 100; n++) {
        if (n % 5000 == 0)
            rm__sample_store_clear(&r.store);
        resmon_sample s = numbered(n);
        assert_int_equal(rm__sample_store_push(&r.store, &s), 0);
        /* A sample a microsecond at most, as the sampler's own reads bound it
         * (a tight loop would lap a copy of a tiny ring every time). */
        next += 1e-6;
        while (test_now() < next)
            ;
    }
    atomic_store(&r.done, 1);
    for (int i = 0; i < 2; i++)
        pthread_join(readers[i], NULL);
    assert_int_equal(atomic_load(&r.bad), 0);
    rm__sample_store_free(&r.store);
}

static void copies_racing_a_small_ring_are_whole_and_in_order(void **state)
{
    (void)state;
    race(8, 0, 8);
    race(8, 0, 3);
    race(3000, 64, 4000); /* 64-byte samples, chunks of 1024 and 1976 */
}

static void copies_racing_an_unbounded_store_are_whole_and_in_order(void **state)
{
    (void)state;
    race(0, 0, 6000);
    race(0, 64, 2000);
}

/* A store keeping 64 bytes a sample reads NAN beyond them, at any stride. */
static void short_samples_read_nan_beyond_what_is_kept(void **state)
{
    (void)state;
    rm__sample_store store;
    rm__sample_store_init(&store, 0);
    rm__sample_store_keep_bytes(&store, 64);
    resmon_sample s = numbered(7);
    assert_int_equal(rm__sample_store_push(&store, &s), 0);
    resmon_sample out;
    assert_int_equal(rm__sample_store_copy(&store, &out, 1), 1);
    assert_true(sample_is_whole(&out, 8));
    ASSERT_DOUBLE_EQ(out.gpu_proc_mem_mb, 7);
    ASSERT_NAN(out.vmem_mb);
    ASSERT_NAN(out.net_tx_packets);
    struct {
        resmon_sample known;
        double later[3];
    } wide[1];
    memset(wide, 0xff, sizeof wide);
    assert_int_equal(rm__sample_store_copy_strided(&store, wide, 1, sizeof wide[0]), 1);
    ASSERT_NAN(wide[0].known.pss_mb);
    ASSERT_DOUBLE_EQ(wide[0].later[2], 0);
    assert_int_equal(rm__sample_store_latest(&store, &out), 1);
    ASSERT_DOUBLE_EQ(out.timestamp, 7);
    ASSERT_NAN(out.io_syscw);
    rm__sample_store_free(&store);
}

/* A summary copied under the sequence lock while samples are added is the
 * summary of some number of them, never a mix: sample n has RSS n, so a
 * summary of c samples has last RSS c and a mean of (c + 1) / 2. */
typedef struct racing_summary {
    rm__seqlock lock;
    rm__summary_acc acc;
    atomic_int done, copies, bad;
} racing_summary;

static void *copy_summaries(void *arg)
{
    racing_summary *r = arg;
    while (!atomic_load(&r->done)) {
        rm__summary_acc acc;
        unsigned seq;
        do {
            seq = rm__seqlock_read_begin(&r->lock);
            rm__summary_acc_load(&acc, &r->acc);
        } while (rm__seqlock_read_retry(&r->lock, seq));
        resmon_summary s = rm__summary_acc_result(&acc);
        double c = (double)s.num_samples;
        if (s.num_samples && (s.peak_rss_mb != c || s.mean_rss_mb != (c + 1) / 2 || s.duration_sec != c - 1))
            atomic_fetch_add(&r->bad, 1);
        atomic_fetch_add(&r->copies, 1);
    }
    return NULL;
}

static void summaries_racing_the_writer_are_of_one_moment(void **state)
{
    (void)state;
    racing_summary r = {0};
    rm__summary_acc_reset(&r.acc, 1);
    pthread_t readers[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&readers[i], NULL, copy_summaries, &r), 0);
    for (int n = 1;; n++) {
        if (n % 10000 == 0) { /* a new window, as start does */
            rm__seqlock_write_begin(&r.lock);
            rm__summary_acc_reset(&r.acc, 1);
            rm__seqlock_write_end(&r.lock);
            n = 1;
        }
        resmon_sample s = sample(n, 0, n);
        rm__seqlock_write_begin(&r.lock);
        rm__summary_acc_add(&r.acc, &s, 0, 0);
        rm__seqlock_write_end(&r.lock);
        if (atomic_load(&r.copies) >= 100 && n > 5000)
            break;
    }
    atomic_store(&r.done, 1);
    for (int i = 0; i < 2; i++)
        pthread_join(readers[i], NULL);
    assert_int_equal(atomic_load(&r.bad), 0);
}

/* resmon_metric_group_info lists every group once, in bit order, with
 * distinct names; their bits make RESMON_METRIC_ALL and every metric's group
 * is one of them. */
static void the_group_list_describes_every_group(void **state)
{
    (void)state;
    size_t count = resmon_metric_group_count();
    assert_true(count >= 6);
    unsigned all = 0;
    resmon_metric_group g, previous = {0};
    for (size_t i = 0; i < count; i++) {
        assert_int_equal(resmon_metric_group_info(i, &g, sizeof g), 0);
        assert_int_equal(g.struct_size, sizeof g);
        assert_true(g.bit != 0 && (g.bit & (g.bit - 1)) == 0 && g.bit > previous.bit); /* one bit, in order */
        assert_true(*g.name && *g.command_name && *g.words && *g.files);
        assert_int_equal(g.reserved, 0);
        if (i > 0) {
            assert_string_not_equal(g.name, previous.name);
            assert_string_not_equal(g.command_name, previous.command_name);
        }
        all |= g.bit;
        previous = g;
    }
    assert_int_equal(all, RESMON_METRIC_ALL);
    assert_int_equal(resmon_metric_group_info(count, &g, sizeof g), -ERANGE);
    assert_int_equal(resmon_metric_group_info(0, NULL, sizeof g), -EINVAL);
    assert_int_equal(resmon_metric_group_info(0, &g, offsetof(resmon_metric_group, reserved)), -EINVAL);
    for (size_t i = 0; i < resmon_metric_count(); i++) {
        resmon_metric m;
        assert_int_equal(resmon_metric_info(i, &m, sizeof m), 0);
        assert_true(m.group == 0 || (m.group & all) == m.group);
    }
}

/* resmon_metric_info describes the list the library itself folds and writes:
 * every metric-group double of resmon_sample (but the cgroup's, which is not
 * a metric group) once, each under its JSON key. */
static void the_metric_list_describes_every_metric_field(void **state)
{
    (void)state;
    size_t count = resmon_metric_count();
    assert_int_equal(count, rm__metric_field_count);
    assert_true(count >= 22);
    resmon_summary summary;
    memset(&summary, 0, sizeof summary);
    summary.struct_size = sizeof summary;
    for (size_t i = 0; i < count; i++) {
        resmon_metric m;
        assert_int_equal(resmon_metric_info(i, &m, sizeof m), 0);
        assert_int_equal(m.struct_size, sizeof m);
        assert_true(m.fold == RESMON_FOLD_MAX || m.fold == RESMON_FOLD_LAST);
        assert_true(m.group == 0 || (m.group & RESMON_METRIC_ALL) == m.group);
        assert_true(m.sample_offset % sizeof(double) == 0 && m.sample_offset + sizeof(double) <= sizeof(resmon_sample));
        assert_true(m.summary_offset % sizeof(double) == 0 &&
                    m.summary_offset + sizeof(double) <= sizeof(resmon_summary));
        assert_true(*m.sample_field && *m.summary_field && *m.column && *m.unit && *m.words && *m.help);
        assert_true(strncmp(m.prometheus_name, "resmon_", 7) == 0);
        for (size_t j = 0; j < i; j++) {
            assert_int_not_equal(rm__metric_fields[j].sample_offset, m.sample_offset);
            assert_int_not_equal(rm__metric_fields[j].summary_offset, m.summary_offset);
            assert_string_not_equal(rm__metric_fields[j].column, m.column);
        }
        double value = (double)(i + 1);
        memcpy((char *)&summary + m.summary_offset, &value, sizeof value);
    }
    for (size_t offset = offsetof(resmon_sample, vmem_mb); offset < sizeof(resmon_sample); offset += sizeof(double)) {
        size_t listed = 0;
        for (size_t i = 0; i < count; i++)
            listed += rm__metric_fields[i].sample_offset == offset;
        assert_int_equal(listed, offset == offsetof(resmon_sample, cgroup_mem_mb) ? 0 : 1);
    }
    /* Each summary field is written under its key, in the list's order. */
    char json[4096];
    assert_true(resmon_summary_to_json(&summary, json, sizeof json) < (int)sizeof json);
    const char *at = json;
    for (size_t i = 0; i < count; i++) {
        char expected[96];
        snprintf(expected, sizeof expected, "\"%s\": %zu", rm__metric_fields[i].summary_field, i + 1);
        const char *found = strstr(at, expected);
        assert_non_null(found);
        at = found;
    }
    /* Sizes and indexes, as "Versioning" says. */
    resmon_metric m;
    assert_int_equal(resmon_metric_info(count, &m, sizeof m), -ERANGE);
    assert_int_equal(resmon_metric_info(0, NULL, sizeof m), -EINVAL);
    assert_int_equal(resmon_metric_info(0, &m, offsetof(resmon_metric, fold)), -EINVAL);
    unsigned char bigger[sizeof(resmon_metric) + 16];
    memset(bigger, 0xa5, sizeof bigger);
    assert_int_equal(resmon_metric_info(1, (resmon_metric *)(void *)bigger, sizeof bigger), 0);
    memcpy(&m, bigger, sizeof m);
    assert_int_equal(m.struct_size, sizeof m);
    assert_string_equal(m.summary_field, rm__metric_fields[1].summary_field);
    for (size_t i = sizeof m; i < sizeof bigger; i++)
        assert_int_equal(bigger[i], 0);
}

/* The sampler's fold without groups, cgroup or GPU (rm__summary_acc_add_base)
 * gives the summary the whole fold gives, for samples with a NAN tail:
 * varied CPU, RSS, short intervals, a first sample, a peak span. */
static void base_fold_matches_the_whole_fold_for_a_nan_tail(void **state)
{
    (void)state;
    rm__summary_acc whole, base;
    rm__summary_acc_reset(&whole, 0);
    rm__summary_acc_reset(&base, 0);
    for (int i = 0; i < 500; i++) {
        double t = i * 0.001 + (i % 7 == 3 ? 0.0004 : 0);
        resmon_sample s = sample(t, (i * 37) % 180, 10 + (i * 13) % 50);
        s.cgroup_mem_mb = NAN; /* no cgroup, as the monitor writes it */
        int short_interval = i % 11 == 5;
        double cpu = i ? s.cpu_percent * 0.001 / 100 : 0;
        rm__summary_acc_add(&whole, &s, cpu, short_interval);
        rm__summary_acc_add_energy(&whole, NAN);
        rm__summary_acc_add_base(&base, &s, cpu, short_interval);
    }
    resmon_summary a = rm__summary_acc_result(&whole), b = rm__summary_acc_result(&base);
    assert_memory_equal(&a, &b, sizeof a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(empty_summary_is_zeroed_with_gpu_nan),
        cmocka_unit_test(metric_groups_fold_into_peaks_and_totals),
        cmocka_unit_test(the_metric_list_describes_every_metric_field),
        cmocka_unit_test(the_group_list_describes_every_group),
        cmocka_unit_test(one_sample_has_zero_duration),
        cmocka_unit_test(cpu_and_rss_follow_the_seed),
        cmocka_unit_test(cpu_peak_is_never_below_the_mean),
        cmocka_unit_test(cpu_peak_spans_a_few_ticks),
        cmocka_unit_test(base_fold_matches_the_whole_fold_for_a_nan_tail),
        cmocka_unit_test(gpu_means_skip_missing_values),
        cmocka_unit_test(gpu_peak_of_zero_is_zero_not_nan),
        cmocka_unit_test(unbounded_store_keeps_everything_in_order),
        cmocka_unit_test(bounded_store_keeps_most_recent),
        cmocka_unit_test(copies_racing_a_small_ring_are_whole_and_in_order),
        cmocka_unit_test(copies_racing_an_unbounded_store_are_whole_and_in_order),
        cmocka_unit_test(short_samples_read_nan_beyond_what_is_kept),
        cmocka_unit_test(summaries_racing_the_writer_are_of_one_moment),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
