/*
 * test_summary.c -- the seed's summary rules on hand-made samples, and the
 * sample store's ring.
 */
#include "sample_store.h"
#include "metric_fields.h"
#include "summary.h"
#include "test_util.h"

#include <stdlib.h>

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(empty_summary_is_zeroed_with_gpu_nan),
        cmocka_unit_test(metric_groups_fold_into_peaks_and_totals),
        cmocka_unit_test(one_sample_has_zero_duration),
        cmocka_unit_test(cpu_and_rss_follow_the_seed),
        cmocka_unit_test(gpu_means_skip_missing_values),
        cmocka_unit_test(gpu_peak_of_zero_is_zero_not_nan),
        cmocka_unit_test(unbounded_store_keeps_everything_in_order),
        cmocka_unit_test(bounded_store_keeps_most_recent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
