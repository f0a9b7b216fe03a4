/*
 * test_monitor.c -- the monitor's rules as include/resmon.h states them:
 * edges, schedule, stop latency, CPU%, RSS, exact peak, GPU profiler
 * handling, lifecycle, readers racing the sampler, streaming and the bounded
 * store.
 */
#include "internal.h"
#include "resmon.h"
#include "test_util.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

static resmon_monitor *new_monitor(double interval, const resmon_gpu_profiler *gpu)
{
    resmon_options opts = {.struct_size = sizeof(resmon_options), .sample_interval_sec = interval, .gpu_profiler = gpu};
    resmon_monitor *m = test_monitor_new(&opts);
    assert_non_null(m);
    return m;
}

static void new_rejects_bad_options(void **state)
{
    (void)state;
    const double bad[] = {-1.0, -1e-9, NAN, INFINITY, -INFINITY, 1e-9, 1e9};
    resmon_monitor *m = (resmon_monitor *)&m; /* must stay untouched on failure */
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        resmon_options opts = RESMON_OPTIONS_INIT;
        opts.sample_interval_sec = bad[i];
        assert_int_equal(resmon_monitor_new(&m, &opts), -EINVAL);
    }
    resmon_options negative_pid = RESMON_OPTIONS_INIT;
    negative_pid.pid = -3;
    assert_int_equal(resmon_monitor_new(&m, &negative_pid), -EINVAL);
    resmon_options no_size = {.sample_interval_sec = 0.1}; /* struct_size forgotten */
    assert_int_equal(resmon_monitor_new(&m, &no_size), -EINVAL);
    assert_int_equal(resmon_monitor_new(NULL, NULL), -EINVAL);
    assert_ptr_equal(m, (resmon_monitor *)&m);

    resmon_monitor *defaults = NULL;
    assert_int_equal(resmon_monitor_new(&defaults, NULL), 0);
    assert_non_null(defaults);
    resmon_monitor_free(defaults);
    resmon_monitor_free(NULL);
}

static void never_started_has_zeroed_summary(void **state)
{
    (void)state;
    resmon_monitor *m = test_monitor_new(NULL);
    assert_int_equal(resmon_monitor_running(m), 0);
    assert_int_equal(resmon_monitor_stop(m), 0);
    assert_int_equal(test_samples(m, NULL, 0), 0);
    resmon_summary s = test_summary(m);
    assert_int_equal(s.num_samples, 0);
    ASSERT_DOUBLE_EQ(s.peak_rss_mb, 0);
    ASSERT_DOUBLE_EQ(s.duration_sec, 0);
    ASSERT_NAN(s.peak_gpu_mem_mb);
    ASSERT_NAN(s.mean_gpu_util);
    resmon_monitor_free(m);
}

static void every_window_has_two_edge_samples(void **state)
{
    (void)state;
    resmon_monitor *m = new_monitor(10.0, NULL);
    double before = test_now();
    assert_int_equal(resmon_monitor_start(m), 0);
    assert_int_equal(resmon_monitor_running(m), 1);
    assert_int_equal(test_samples(m, NULL, 0), 1); /* taken before start returned */
    assert_int_equal(resmon_monitor_start(m), -EBUSY);
    assert_int_equal(resmon_monitor_stop(m), 0);
    double after = test_now();
    assert_int_equal(resmon_monitor_running(m), 0);
    resmon_sample *samples;
    assert_int_equal(test_copy_samples(m, &samples), 2);
    ASSERT_DOUBLE_EQ(samples[0].cpu_percent, 0);
    ASSERT_BETWEEN(samples[0].timestamp, before, after);
    ASSERT_BETWEEN(samples[1].timestamp, samples[0].timestamp, after);
    assert_true(samples[0].rss_mb > 0);
    resmon_summary s = test_summary(m);
    assert_int_equal(s.num_samples, 2);
    ASSERT_DOUBLE_EQ(s.duration_sec, samples[1].timestamp - samples[0].timestamp);
    assert_int_equal(resmon_monitor_stop(m), 0); /* second stop: no-op */
    assert_int_equal(test_summary(m).num_samples, 2);
    free(samples);
    resmon_monitor_free(m);
}

static void stop_is_prompt_with_a_long_interval(void **state)
{
    (void)state;
    resmon_monitor *m = new_monitor(10.0, NULL);
    assert_int_equal(resmon_monitor_start(m), 0);
    test_sleep(0.02);
    double t = test_now();
    assert_int_equal(resmon_monitor_stop(m), 0);
    double stop_latency = test_now() - t;
    /* The stop wakes the sampler instead of waiting for its next slot, 10 s
     * away: bounded by the interval, which no load met so far comes near
     * (a loaded machine may hold a thread off for many milliseconds, at any
     * point of a run).  How prompt it is: BENCHMARKS.md, "Stop latency". */
    ASSERT_BETWEEN(stop_latency, 0, 10.0 / 2);
    assert_int_equal(test_summary(m).num_samples, 2); /* the start's and the stop's: no slot came */
    resmon_monitor_free(m);
}

static void schedule_is_absolute_and_does_not_drift(void **state)
{
    (void)state;
    const double interval = 0.01;
    resmon_monitor *m = new_monitor(interval, NULL);
    assert_int_equal(resmon_monitor_start(m), 0);
    test_sleep(2.0);
    assert_int_equal(resmon_monitor_stop(m), 0);
    resmon_sample *samples;
    size_t n = test_copy_samples(m, &samples);
    resmon_summary s = test_summary(m);
    /* Slot k is due at t0 + k*interval.  Every slot up to the stop was either
     * sampled or counted as skipped; then comes the stop's own sample. */
    double t0 = samples[0].timestamp;
    double expected = floor(s.duration_sec / interval) + 2;
    /* Never more (no burst, no slot counted twice); never fewer than the
     * slots up to the last scheduled sample plus the stop's own (the slots
     * that pass between the stop and the sampler thread getting a CPU to take
     * its last sample are neither, however long a busy machine makes that). */
    double through_last = floor((samples[n - 2].timestamp - t0) / interval + 1e-7) + 2;
    ASSERT_BETWEEN((double)n + (double)s.skipped_slots, through_last, expected + 1);
    /* How many slots a machine skips and how late samples are depend on
     * what else runs on it, however long after the start that load arrives:
     * those figures are bench/bench_sampler.c's (BENCHMARKS.md: skipped
     * slots, lateness median and p99), not this test's.  What holds under any
     * load is the schedule itself, checked above and below: every slot is
     * sampled or counted, a sample is never early, and a late sampler moves
     * on to the first slot ahead instead of making the missed ones up in a
     * burst (two samples never share a slot). */
    ASSERT_BETWEEN((double)n, 2, expected + 1);
    double previous_slot = 0;
    for (size_t i = 1; i + 1 < n; i++) {
        double slot = floor((samples[i].timestamp - t0) / interval + 1e-7);
        assert_true(slot > previous_slot);
        previous_slot = slot;
    }
    free(samples);
    resmon_monitor_free(m);
}

static atomic_int spinners_stop;

static void *spinner(void *arg)
{
    (void)arg;
    volatile unsigned long spins = 0; /* per thread: no shared counter to race on */
    while (!atomic_load_explicit(&spinners_stop, memory_order_relaxed))
        spins++;
    return NULL;
}

/* Returns the monitor's mean CPU% over a window in which `threads` threads
 * spin 0.2 CPU seconds each (a fixed amount of work, however busy the
 * machine), after checking it against the CPU time the kernel accounted to
 * the process over a bracket around the window. */
static double mean_cpu_with_spinners(int threads)
{
    resmon_monitor *m = new_monitor(0.05, NULL);
    atomic_store(&spinners_stop, 0);
    pthread_t tid[4];
    for (int i = 0; i < threads; i++)
        pthread_create(&tid[i], NULL, spinner, NULL);
    double cpu0 = test_clock_sec(CLOCK_PROCESS_CPUTIME_ID), wall0 = test_now();
    assert_int_equal(resmon_monitor_start(m), 0);
    if (threads == 0) {
        test_sleep(0.3);
    } else {
        double work_done = cpu0 + 0.2 * threads, safety_net = test_now() + 60;
        while (test_clock_sec(CLOCK_PROCESS_CPUTIME_ID) < work_done && test_now() < safety_net)
            test_sleep(0.01);
    }
    assert_int_equal(resmon_monitor_stop(m), 0);
    double used = test_clock_sec(CLOCK_PROCESS_CPUTIME_ID) - cpu0, bracket = test_now() - wall0;
    atomic_store(&spinners_stop, 1);
    for (int i = 0; i < threads; i++)
        pthread_join(tid[i], NULL);
    resmon_summary s = test_summary(m);
    /* A reading of one thread only, of the wrong unit or of wall time fails
     * here: with spinners the kernel's figure is at least 0.2 s each. */
    ASSERT_CPU_MATCHES_KERNEL(s.cpu_time_sec, s.duration_sec, used, bracket, threads + 1 /* sampler */);
    ASSERT_BETWEEN(s.mean_cpu_percent, 0.999 * 100 * s.cpu_time_sec / s.duration_sec,
                   1.001 * 100 * s.cpu_time_sec / s.duration_sec);
    /* An idle window's CPU is mostly the sampler's own, much of it in the
     * stop's short interval, which the peak leaves out: no lower bound then. */
    ASSERT_BETWEEN(s.peak_cpu_percent, threads ? s.mean_cpu_percent * 0.9 : 0.0, 100.0 * (threads + 1) * 1.3);
    resmon_monitor_free(m);
    return s.mean_cpu_percent;
}

static void cpu_percent_reads_100_per_busy_thread(void **state)
{
    (void)state;
    /* On an idle machine these read about 0, 100 and 200; on a busy one less,
     * but always what the kernel accounted (checked inside). */
    ASSERT_BETWEEN(mean_cpu_with_spinners(0), 0, 15); /* the sampler alone */
    mean_cpu_with_spinners(1);
    if (sysconf(_SC_NPROCESSORS_ONLN) >= 2)
        mean_cpu_with_spinners(2);
}

static void rss_follows_touched_memory(void **state)
{
    (void)state;
    resmon_monitor *m = new_monitor(0.02, NULL);
    assert_int_equal(resmon_monitor_start(m), 0);
    size_t bytes = 200u << 20;
    char *block = malloc(bytes);
    assert_non_null(block);
    test_touch(block, bytes);
    test_sleep(0.1);
    assert_int_equal(resmon_monitor_stop(m), 0);
    resmon_summary s = test_summary(m);
    resmon_sample *samples;
    size_t n = test_copy_samples(m, &samples);
    ASSERT_BETWEEN(samples[n - 1].rss_mb - samples[0].rss_mb, 195, 215 * SANITIZER_MEMORY_FACTOR);
    ASSERT_BETWEEN(s.memory_growth_mb, 195, 215 * SANITIZER_MEMORY_FACTOR);
    ASSERT_BETWEEN(s.peak_rss_mb, samples[0].rss_mb + 195, samples[0].rss_mb + 215 * SANITIZER_MEMORY_FACTOR);
    free(samples);
    free(block);
    resmon_monitor_free(m);
}

static void exact_peak_catches_a_spike_between_samples(void **state)
{
    (void)state;
    resmon_monitor *m = new_monitor(600.0, NULL); /* no sample falls inside the spike */
    assert_int_equal(resmon_monitor_start(m), 0);
    double baseline = test_summary(m).peak_rss_mb;
    test_sleep(0.03);
    size_t bytes = 300u << 20;
    char *spike = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(spike != MAP_FAILED);
    test_touch(spike, bytes);
    test_sleep(0.02);
    munmap(spike, bytes);
    assert_int_equal(resmon_monitor_stop(m), 0);
    resmon_summary s = test_summary(m);
    assert_int_equal(s.num_samples, 2);
    ASSERT_BETWEEN(s.peak_rss_mb, 0, baseline + 50); /* the samples missed it */
    assert_true(s.hwm_scope == RESMON_HWM_WINDOW || s.hwm_scope == RESMON_HWM_LIFETIME);
    ASSERT_BETWEEN(s.hwm_rss_mb, baseline + 295, baseline + 400 * SANITIZER_MEMORY_FACTOR);

    /* The next window starts a fresh peak -- when the kernel allows resets. */
    assert_int_equal(resmon_monitor_start(m), 0);
    assert_int_equal(resmon_monitor_stop(m), 0);
    s = test_summary(m);
    if (s.hwm_scope == RESMON_HWM_WINDOW)
        ASSERT_BETWEEN(s.hwm_rss_mb, s.peak_rss_mb, baseline + 50);
    else
        ASSERT_BETWEEN(s.hwm_rss_mb, baseline + 295, baseline + 400 * SANITIZER_MEMORY_FACTOR);
    resmon_monitor_free(m);
}

/* This process's peak RSS as its own getrusage sees it, MiB. */
static double own_maxrss_mb(void)
{
    struct rusage ru;
    assert_int_equal(getrusage(RUSAGE_SELF, &ru), 0);
    return (double)ru.ru_maxrss / 1024.0; /* KiB on Linux */
}

/* Touches and unmaps megabytes: this process's peak-RSS mark rises above
 * its RSS. */
static void spike(size_t megabytes)
{
    size_t bytes = megabytes << 20;
    char *block = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(block != MAP_FAILED);
    test_touch(block, bytes);
    munmap(block, bytes);
}

/* By default a monitor writes nothing to the process: the peak that
 * getrusage().ru_maxrss (and /usr/bin/time) report survives every window.
 * The window's exact peak is still known when the mark rose during it, and a
 * window below an earlier peak says its figure is the lifetime one. */
static void default_window_leaves_the_peak_mark_and_ru_maxrss_alone(void **state)
{
    (void)state;
    spike(300);
    double before = own_maxrss_mb();
    resmon_monitor *m = new_monitor(600.0, NULL); /* two samples: the edges */
    assert_int_equal(resmon_monitor_start(m), 0);
    assert_int_equal(resmon_monitor_stop(m), 0);
    resmon_summary s = test_summary(m);
    assert_true(own_maxrss_mb() >= before); /* not reset */
    assert_int_equal(s.hwm_scope, RESMON_HWM_LIFETIME); /* the mark did not rise: an earlier peak */
    assert_int_equal(s.hwm_error, 0);
    ASSERT_BETWEEN(s.hwm_rss_mb, before - 1, before + 1);
    assert_true(s.peak_rss_mb < before - 250); /* the window's sampled figure */

    /* A window whose peak rises above the earlier one: exact, and it is what
     * ru_maxrss shows afterwards. */
    assert_int_equal(resmon_monitor_start(m), 0);
    spike((size_t)before + 100);
    assert_int_equal(resmon_monitor_stop(m), 0);
    s = test_summary(m);
    double after = own_maxrss_mb();
    assert_true(after >= before + 95);
    assert_int_equal(s.hwm_scope, RESMON_HWM_WINDOW);
    ASSERT_BETWEEN(s.hwm_rss_mb, after - 1, after + 1);
    resmon_monitor_free(m);
}

/* reset_peak_mark asks for the 0.3 behaviour: the window's own peak, at the
 * cost of the process's ru_maxrss. */
static void reset_peak_mark_resets_the_mark_for_the_window(void **state)
{
    (void)state;
    spike(300);
    double before = own_maxrss_mb();
    resmon_options opts = {.struct_size = sizeof(resmon_options), .sample_interval_sec = 600.0,
                           .reset_peak_mark = 1};
    resmon_monitor *m = test_monitor_new(&opts);
    assert_int_equal(resmon_monitor_start(m), 0);
    assert_int_equal(resmon_monitor_stop(m), 0);
    resmon_summary s = test_summary(m);
    if (s.hwm_scope == RESMON_HWM_LIFETIME) { /* the kernel refused the reset */
        assert_true(s.hwm_error == -EACCES || s.hwm_error == -EPERM);
    } else {
        assert_int_equal(s.hwm_scope, RESMON_HWM_WINDOW);
        assert_true(s.hwm_rss_mb < before - 250);
        assert_true(own_maxrss_mb() < before - 250); /* what the header warns of */
    }
    resmon_monitor_free(m);
    resmon_options both = {.struct_size = sizeof(resmon_options), .keep_peak_mark = 1, .reset_peak_mark = 1};
    resmon_monitor *refused = NULL;
    assert_int_equal(resmon_monitor_new(&refused, &both), -EINVAL);
    assert_null(refused);
}

/* ---- a fake GPU profiler ------------------------------------------------- */

typedef struct fake_gpu {
    double util, mem_used, clock, power;
    int fail_all;        /* every callback returns -EIO */
    int fail_every_other;
    atomic_int calls;
    atomic_int called_off_sampler; /* a call from a thread other than the sampler */
    pthread_t main_thread;
} fake_gpu;

static int fake_should_fail(fake_gpu *f)
{
    int call = atomic_fetch_add(&f->calls, 1);
    if (pthread_equal(pthread_self(), f->main_thread))
        atomic_store(&f->called_off_sampler, 1);
    return f->fail_all || (f->fail_every_other && (call / 4) % 2 == 1);
}

static int fake_util(void *ctx, double *percent)
{
    fake_gpu *f = ctx;
    if (fake_should_fail(f))
        return -EIO;
    *percent = f->util;
    return 0;
}

static int fake_memory(void *ctx, resmon_gpu_memory *out)
{
    fake_gpu *f = ctx;
    if (fake_should_fail(f))
        return -EIO;
    out->gpu_memory_used_mb = f->mem_used;
    out->gpu_memory_total_mb = 80000;
    return 0;
}

static int fake_clock(void *ctx, resmon_gpu_clocks *out)
{
    fake_gpu *f = ctx;
    if (fake_should_fail(f))
        return -EIO;
    out->gpu_clock_mhz = f->clock;
    out->mem_clock_mhz = 2600;
    return 0;
}

static int fake_power(void *ctx, resmon_gpu_power *out)
{
    fake_gpu *f = ctx;
    if (fake_should_fail(f))
        return -EIO;
    out->power_draw_w = f->power;
    out->power_limit_w = 700;
    return 0;
}

#define FAKE_PROFILER(f)                                                                   \
    {                                                                                      \
        .struct_size = sizeof(resmon_gpu_profiler), .ctx = (f), .get_utilization = fake_util, .get_memory_usage = fake_memory,          \
        .get_clock_info = fake_clock, .get_power_info = fake_power                          \
    }

static int fake_energy(void *ctx, double *joules)
{
    fake_gpu *f = ctx;
    /* A counter that advances exactly with the fake's power draw. */
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    *joules = 5000.0 + f->power * ((double)ts.tv_sec + (double)ts.tv_nsec * 1e-9);
    return 0;
}

/* Runs a window of at least 0.1 s that lasts until the fake GPU has been
 * called 16 times and 12 samples were taken, however busy the machine. */
static resmon_summary run_with_gpu(const resmon_gpu_profiler *gpu, resmon_sample **samples, size_t *n)
{
    fake_gpu *f = gpu->ctx;
    resmon_monitor *m = new_monitor(0.005, gpu);
    assert_int_equal(resmon_monitor_start(m), 0);
    test_sleep(0.1);
    double safety_net = test_now() + 60;
    while ((atomic_load(&f->calls) < 16 || test_samples(m, NULL, 0) < 12) && test_now() < safety_net)
        test_sleep(0.005);
    assert_int_equal(resmon_monitor_stop(m), 0);
    resmon_summary s = test_summary(m);
    *n = test_copy_samples(m, samples);
    resmon_monitor_free(m);
    return s;
}

static void gpu_fixed_values_reach_samples_and_summary(void **state)
{
    (void)state;
    fake_gpu f = {.util = 42.5, .mem_used = 1234.5, .clock = 1980, .power = 312.25, .main_thread = pthread_self()};
    resmon_gpu_profiler gpu = FAKE_PROFILER(&f);
    resmon_sample *samples;
    size_t n;
    resmon_summary s = run_with_gpu(&gpu, &samples, &n);
    assert_true(n >= 2);
    /* A sample carries the reading exactly, or -- when the GPU thread has
     * not delivered a fresh one in time, as on a busy machine -- none. */
    size_t with_gpu = 0;
    for (size_t i = 0; i < n; i++) {
        if (isnan(samples[i].gpu_util)) {
            ASSERT_NAN(samples[i].gpu_power_w);
            continue;
        }
        with_gpu++;
        ASSERT_DOUBLE_EQ(samples[i].gpu_util, 42.5);
        ASSERT_DOUBLE_EQ(samples[i].gpu_mem_mb, 1234.5);
        ASSERT_DOUBLE_EQ(samples[i].gpu_clock_mhz, 1980);
        ASSERT_DOUBLE_EQ(samples[i].gpu_power_w, 312.25);
    }
    assert_true(with_gpu > 0);
    ASSERT_DOUBLE_EQ(s.mean_gpu_util, 42.5);
    ASSERT_DOUBLE_EQ(s.peak_gpu_mem_mb, 1234.5);
    ASSERT_DOUBLE_EQ(s.mean_gpu_clock_mhz, 1980);
    ASSERT_DOUBLE_EQ(s.mean_gpu_power_w, 312.25);
    assert_int_equal(atomic_load(&f.called_off_sampler), 0); /* the GPU thread only */
    assert_true(atomic_load(&f.calls) >= 8);
    free(samples);
}

static void failing_gpu_gives_nan_and_a_normal_run(void **state)
{
    (void)state;
    fake_gpu f = {.fail_all = 1, .main_thread = pthread_self()};
    resmon_gpu_profiler gpu = FAKE_PROFILER(&f);
    resmon_sample *samples;
    size_t n;
    resmon_summary s = run_with_gpu(&gpu, &samples, &n);
    assert_true(n >= 10);
    for (size_t i = 0; i < n; i++) {
        ASSERT_NAN(samples[i].gpu_util);
        ASSERT_NAN(samples[i].gpu_mem_mb);
        ASSERT_NAN(samples[i].gpu_clock_mhz);
        ASSERT_NAN(samples[i].gpu_power_w);
        assert_true(samples[i].rss_mb > 0);
    }
    ASSERT_NAN(s.mean_gpu_util);
    ASSERT_NAN(s.peak_gpu_mem_mb);
    ASSERT_NAN(s.mean_gpu_clock_mhz);
    ASSERT_NAN(s.mean_gpu_power_w);
    assert_true(s.peak_rss_mb > 0);
    free(samples);
}

static void gpu_failures_cost_only_their_samples(void **state)
{
    (void)state;
    fake_gpu f = {.util = 10, .mem_used = 500, .clock = 1000, .power = 100, .fail_every_other = 1,
                  .main_thread = pthread_self()};
    resmon_gpu_profiler gpu = FAKE_PROFILER(&f);
    resmon_sample *samples;
    size_t n;
    resmon_summary s = run_with_gpu(&gpu, &samples, &n);
    size_t with_gpu = 0;
    for (size_t i = 0; i < n; i++)
        with_gpu += !isnan(samples[i].gpu_util);
    assert_true(with_gpu > 0 && with_gpu < n);
    ASSERT_DOUBLE_EQ(s.mean_gpu_util, 10); /* averaged over the samples that have it */
    ASSERT_DOUBLE_EQ(s.peak_gpu_mem_mb, 500);
    free(samples);
}

static void null_gpu_callbacks_mean_unsupported(void **state)
{
    (void)state;
    fake_gpu f = {.util = 77, .main_thread = pthread_self()};
    resmon_gpu_profiler gpu = {.struct_size = sizeof(resmon_gpu_profiler), .ctx = &f, .get_utilization = fake_util};
    resmon_sample *samples;
    size_t n;
    resmon_summary s = run_with_gpu(&gpu, &samples, &n);
    /* The samples that carry a reading (on a busy machine the first ones may
     * come before the GPU thread's first) have the utilization and nothing
     * the profiler cannot read. */
    size_t with_gpu = 0;
    for (size_t i = 0; i < n; i++) {
        if (isnan(samples[i].gpu_util))
            continue;
        with_gpu++;
        ASSERT_DOUBLE_EQ(samples[i].gpu_util, 77);
        ASSERT_NAN(samples[i].gpu_mem_mb);
    }
    assert_true(with_gpu > 0);
    ASSERT_DOUBLE_EQ(s.mean_gpu_util, 77);
    ASSERT_NAN(s.peak_gpu_mem_mb);
    ASSERT_NAN(s.mean_gpu_clock_mhz);
    ASSERT_NAN(s.mean_gpu_power_w);
    free(samples);
}

static void invalid_gpu_values_become_nan(void **state)
{
    (void)state;
    const double bad[] = {NAN, INFINITY, -INFINITY, -1.0, -1e-300};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        fake_gpu f = {.util = bad[i], .mem_used = bad[i], .clock = bad[i], .power = bad[i], .main_thread = pthread_self()};
        resmon_gpu_profiler gpu = FAKE_PROFILER(&f);
        resmon_sample *samples;
        size_t n;
        resmon_summary s = run_with_gpu(&gpu, &samples, &n);
        ASSERT_NAN(samples[0].gpu_util);
        ASSERT_NAN(samples[n - 1].gpu_power_w);
        ASSERT_NAN(s.mean_gpu_util);
        ASSERT_NAN(s.peak_gpu_mem_mb);
        ASSERT_NAN(s.mean_gpu_clock_mhz);
        ASSERT_NAN(s.mean_gpu_power_w);
        free(samples);
    }
}

static void gpu_energy_is_integrated_without_a_counter(void **state)
{
    (void)state;
    fake_gpu f = {.util = 1, .mem_used = 1, .clock = 1, .power = 250, .main_thread = pthread_self()};
    resmon_gpu_profiler gpu = FAKE_PROFILER(&f);
    resmon_sample *samples;
    size_t n;
    resmon_summary s = run_with_gpu(&gpu, &samples, &n);
    assert_int_equal(s.gpu_energy_source, RESMON_ENERGY_INTEGRATED);
    /* 250 W over every interval whose two samples have a power reading (on a
     * busy machine the first ones may wait for the GPU thread's first). */
    double powered_sec = 0;
    for (size_t i = 1; i < n; i++)
        if (!isnan(samples[i].gpu_power_w) && !isnan(samples[i - 1].gpu_power_w))
            powered_sec += samples[i].timestamp - samples[i - 1].timestamp;
    assert_true(powered_sec > 0);
    ASSERT_BETWEEN(s.gpu_energy_j, 250 * powered_sec * 0.999, 250 * powered_sec * 1.001);
    free(samples);
}

static void gpu_energy_comes_from_the_counter_when_there_is_one(void **state)
{
    (void)state;
    fake_gpu f = {.util = 1, .mem_used = 1, .clock = 1, .power = 100, .main_thread = pthread_self()};
    resmon_gpu_profiler gpu = FAKE_PROFILER(&f);
    gpu.get_energy = fake_energy;
    resmon_sample *samples;
    size_t n;
    resmon_summary s = run_with_gpu(&gpu, &samples, &n);
    assert_int_equal(s.gpu_energy_source, RESMON_ENERGY_COUNTER);
    /* The counter advances 100 J/s: the energy is 100 x the time between the
     * first and the last reading the samples carry.  A reading is read at
     * most 1.5 GPU intervals (20 ms) plus the call itself before its sample. */
    double first = NAN, last = NAN;
    for (size_t i = 0; i < n; i++)
        if (!isnan(samples[i].gpu_util)) {
            if (isnan(first))
                first = samples[i].timestamp;
            last = samples[i].timestamp;
        }
    assert_false(isnan(first));
    double staleness = 0.03 + test_scaled(0.005);
    ASSERT_BETWEEN(s.gpu_energy_j, 100 * (last - first - staleness), 100 * (last - first + staleness));
    free(samples);
}

/* A GPU call that hangs while gpu_hangs is set: until the test clears it, or
 * for 30 s, so that a monitor that waits for it fails instead of hanging. */
static atomic_int gpu_hangs, gpu_calls_entered, gpu_calls_returned;

static int hanging_util(void *ctx, double *percent)
{
    (void)ctx;
    atomic_fetch_add(&gpu_calls_entered, 1);
    double give_up = test_now() + 30;
    while (atomic_load(&gpu_hangs) && test_now() < give_up)
        test_sleep(0.001);
    *percent = 50;
    atomic_fetch_add(&gpu_calls_returned, 1);
    return 0;
}

/* Waits until the monitor holds `count` samples; returns how many it holds. */
static size_t wait_for_samples(resmon_monitor *m, size_t count)
{
    double safety_net = test_now() + 60;
    size_t n;
    while ((n = test_samples(m, NULL, 0)) < count && test_now() < safety_net)
        test_sleep(0.002);
    return n;
}

static int some_sample_has_gpu_util(resmon_monitor *m)
{
    resmon_sample *samples;
    size_t n = test_copy_samples(m, &samples);
    int found = 0;
    for (size_t i = 0; i < n; i++)
        found |= !isnan(samples[i].gpu_util);
    free(samples);
    return found;
}

static void hanging_gpu_call_does_not_stall_cpu_and_rss_sampling(void **state)
{
    (void)state;
    /* No release callback: free waits for a call in flight (so it is let go first). */
    static const resmon_gpu_profiler gpu = {.struct_size = sizeof(resmon_gpu_profiler), .get_utilization = hanging_util};
    atomic_store(&gpu_hangs, 1);
    atomic_store(&gpu_calls_returned, 0);
    resmon_options opts = {.struct_size = sizeof(resmon_options), .sample_interval_sec = 0.01, .gpu_profiler = &gpu};
    resmon_monitor *m = test_monitor_new(&opts);
    double t0 = test_now();
    assert_int_equal(resmon_monitor_start(m), 0);
    double start_latency = test_now() - t0;
    /* CPU/RSS sampling goes on while the first GPU call hangs. */
    assert_true(wait_for_samples(m, 30) >= 30);
    assert_int_equal(atomic_load(&gpu_calls_returned), 0);
    /* Readings arrive once the GPU answers... */
    atomic_store(&gpu_hangs, 0);
    double safety_net = test_now() + 60;
    while (!some_sample_has_gpu_util(m) && test_now() < safety_net)
        test_sleep(0.005);
    /* ...and the stop does not wait for a call that hangs again, while which
     * sampling goes on again (counted in samples, not bounded in time: a busy
     * machine may hold any thread off for long). */
    atomic_store(&gpu_hangs, 1);
    int entered = atomic_load(&gpu_calls_entered);
    while (atomic_load(&gpu_calls_entered) == entered && test_now() < safety_net)
        test_sleep(0.001);
    int returned = atomic_load(&gpu_calls_returned);
    size_t before_hang = test_samples(m, NULL, 0);
    assert_true(wait_for_samples(m, before_hang + 10) >= before_hang + 10);
    assert_int_equal(atomic_load(&gpu_calls_returned), returned);
    t0 = test_now();
    assert_int_equal(resmon_monitor_stop(m), 0);
    double stop_latency = test_now() - t0;
    resmon_summary s = test_summary(m);
    resmon_sample *samples;
    size_t n = test_copy_samples(m, &samples);
    atomic_store(&gpu_hangs, 0); /* free waits for the call in flight */
    resmon_monitor_free(m);
    /* The edges waited for the GPU only a bounded time, not for the call
     * that hangs for 30 s: bounded by a third of that, which load arriving
     * after the time factor was chosen cannot reach (0.25 s x factor could). */
    ASSERT_BETWEEN(start_latency, 0, 10);
    ASSERT_BETWEEN(stop_latency, 0, 10);
    /* Readings were attached only while fresh: some samples have one, the
     * rest (those taken while the call hung) are NAN rather than stale. */
    size_t with_gpu = 0;
    for (size_t i = 0; i < n; i++)
        with_gpu += !isnan(samples[i].gpu_util);
    assert_true(with_gpu > 0 && with_gpu < n);
    ASSERT_DOUBLE_EQ(s.mean_gpu_util, 50);
    free(samples);
}

static void no_gpu_means_unknown_energy(void **state)
{
    (void)state;
    resmon_monitor *m = new_monitor(0.01, NULL);
    assert_int_equal(resmon_monitor_start(m), 0);
    assert_int_equal(resmon_monitor_stop(m), 0);
    resmon_summary s = test_summary(m);
    ASSERT_NAN(s.gpu_energy_j);
    ASSERT_NAN(s.peak_gpu_proc_mem_mb);
    /* CPU energy: known exactly when RAPL is readable here, else unknown. */
    assert_true(isnan(s.cpu_energy_j) || s.cpu_energy_j >= 0);
    resmon_monitor_free(m);
}

/* ---- lifecycle ----------------------------------------------------------- */

static void fifty_windows_each_start_afresh(void **state)
{
    (void)state;
    resmon_monitor *m = new_monitor(0.001, NULL);
    for (int cycle = 0; cycle < 50; cycle++) {
        double before = test_now();
        assert_int_equal(resmon_monitor_start(m), 0);
        if (cycle % 5 == 0)
            test_sleep(0.005);
        assert_int_equal(resmon_monitor_stop(m), 0);
        resmon_summary s = test_summary(m);
        assert_true(s.num_samples >= 2);
        /* The previous window was cleared: every sample is this window's
         * (by its time, not by a count a busy machine's delays can raise). */
        resmon_sample *samples;
        size_t n = test_copy_samples(m, &samples);
        assert_int_equal(n, s.num_samples);
        for (size_t i = 0; i < n; i++)
            assert_true(samples[i].timestamp >= before);
        ASSERT_DOUBLE_EQ(samples[0].cpu_percent, 0);
        free(samples);
    }
    resmon_monitor_free(m);
}

static void free_while_running_stops_first(void **state)
{
    (void)state;
    resmon_monitor *m = new_monitor(0.001, NULL);
    assert_int_equal(resmon_monitor_start(m), 0);
    test_sleep(0.01);
    resmon_monitor_free(m); /* ASan/TSan builds check nothing leaks or races */
}

typedef struct reader_args {
    resmon_monitor *monitor;
    atomic_int *stop;
    int inconsistencies;
    int snapshots;
} reader_args;

static void *reader(void *arg)
{
    reader_args *a = arg;
    resmon_sample *buf = malloc(4096 * sizeof *buf);
    while (!atomic_load(a->stop)) {
        size_t n = test_samples(a->monitor, buf, 4096);
        if (n > 4096)
            n = 4096;
        for (size_t i = 1; i < n; i++)
            if (!(buf[i].timestamp > buf[i - 1].timestamp))
                a->inconsistencies++;
        resmon_summary s = test_summary(a->monitor);
        if (s.num_samples > 0 && !(s.mean_rss_mb <= s.peak_rss_mb && s.duration_sec >= 0))
            a->inconsistencies++;
        a->snapshots++;
    }
    free(buf);
    return NULL;
}

static void readers_racing_the_sampler_see_consistent_snapshots(void **state)
{
    (void)state;
    resmon_monitor *m = new_monitor(0.001, NULL);
    atomic_int stop = 0;
    reader_args args[4];
    pthread_t tid[4];
    for (int i = 0; i < 4; i++) {
        args[i] = (reader_args){m, &stop, 0, 0};
        pthread_create(&tid[i], NULL, reader, &args[i]);
    }
    for (int window = 0; window < 5; window++) {
        assert_int_equal(resmon_monitor_start(m), 0);
        test_sleep(0.06);
        assert_int_equal(resmon_monitor_stop(m), 0);
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < 4; i++) {
        pthread_join(tid[i], NULL);
        assert_int_equal(args[i].inconsistencies, 0);
        assert_true(args[i].snapshots > 0);
    }
    resmon_monitor_free(m);
}

static void thousand_windows_with_racing_readers(void **state)
{
    (void)state;
    resmon_monitor *m = new_monitor(0.0005, NULL);
    atomic_int stop = 0;
    reader_args args[2];
    pthread_t tid[2];
    for (int i = 0; i < 2; i++) {
        args[i] = (reader_args){m, &stop, 0, 0};
        pthread_create(&tid[i], NULL, reader, &args[i]);
    }
    for (int window = 0; window < 1000; window++) {
        assert_int_equal(resmon_monitor_start(m), 0);
        assert_int_equal(resmon_monitor_stop(m), 0);
        assert_true(test_summary(m).num_samples >= 2);
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < 2; i++) {
        pthread_join(tid[i], NULL);
        assert_int_equal(args[i].inconsistencies, 0);
    }
    resmon_monitor_free(m);
}

typedef struct stream_state {
    resmon_monitor *monitor;
    atomic_int count;
    atomic_int stop_result, start_result;
    double last_timestamp;
    double sleep_sec;
} stream_state;

static void on_sample(const resmon_sample *s, void *user)
{
    stream_state *st = user;
    atomic_fetch_add(&st->count, 1);
    st->last_timestamp = s->timestamp;
    atomic_store(&st->stop_result, resmon_monitor_stop(st->monitor));
    atomic_store(&st->start_result, resmon_monitor_start(st->monitor));
    if (st->sleep_sec > 0)
        test_sleep(st->sleep_sec);
}

static void callback_streams_every_sample_and_cannot_reenter(void **state)
{
    (void)state;
    stream_state st = {0};
    resmon_options opts = {.struct_size = sizeof(resmon_options), .sample_interval_sec = 0.002, .on_sample = on_sample, .on_sample_user = &st};
    st.monitor = test_monitor_new(&opts);
    assert_int_equal(resmon_monitor_start(st.monitor), 0);
    test_sleep(0.1);
    assert_int_equal(resmon_monitor_stop(st.monitor), 0);
    resmon_summary s = test_summary(st.monitor);
    assert_int_equal(atomic_load(&st.count), (int)s.num_samples);
    assert_int_equal(atomic_load(&st.stop_result), -EDEADLK);
    assert_int_equal(atomic_load(&st.start_result), -EDEADLK);
    resmon_sample last;
    size_t n = test_samples(st.monitor, NULL, 0);
    resmon_sample *all = calloc(n, sizeof *all);
    test_samples(st.monitor, all, n);
    last = all[n - 1];
    ASSERT_DOUBLE_EQ(st.last_timestamp, last.timestamp);
    free(all);
    resmon_monitor_free(st.monitor);
}

static void slow_callback_skips_slots_instead_of_bursting(void **state)
{
    (void)state;
    stream_state st = {.sleep_sec = 0.025};
    resmon_options opts = {.struct_size = sizeof(resmon_options), .sample_interval_sec = 0.01, .on_sample = on_sample, .on_sample_user = &st};
    st.monitor = test_monitor_new(&opts);
    assert_int_equal(resmon_monitor_start(st.monitor), 0);
    test_sleep(0.3);
    assert_int_equal(resmon_monitor_stop(st.monitor), 0);
    resmon_sample *samples;
    size_t n = test_copy_samples(st.monitor, &samples);
    resmon_summary s = test_summary(st.monitor);
    assert_true(s.skipped_slots >= 10);
    for (size_t i = 1; i < n; i++) /* no burst: samples stay at least a callback apart */
        ASSERT_BETWEEN(samples[i].timestamp - samples[i - 1].timestamp, 0.005, INFINITY);
    free(samples);
    resmon_monitor_free(st.monitor);
}

static void bounded_store_keeps_recent_samples_and_whole_summary(void **state)
{
    (void)state;
    resmon_options opts = {.struct_size = sizeof(resmon_options), .sample_interval_sec = 0.001, .max_samples = 16};
    resmon_monitor *m = test_monitor_new(&opts);
    assert_int_equal(resmon_monitor_start(m), 0);
    double safety_net = test_now() + 60;
    while (test_summary(m).num_samples <= 50 && test_now() < safety_net)
        test_sleep(0.005);
    double before_stop = test_now();
    assert_int_equal(resmon_monitor_stop(m), 0);
    resmon_summary s = test_summary(m);
    resmon_sample kept[32];
    assert_int_equal(test_samples(m, kept, 32), 16);
    assert_true(s.num_samples > 50);
    /* The summary spans every sample, one slot (1 ms) apart at least. */
    ASSERT_BETWEEN(s.duration_sec, 0.001 * (double)(s.num_samples - 2), 60);
    for (int i = 1; i < 16; i++)
        assert_true(kept[i].timestamp > kept[i - 1].timestamp);
    /* Only the last ones: up to the stop's, and not from the window's start. */
    assert_true(kept[15].timestamp >= before_stop);
    assert_true(kept[0].timestamp > kept[15].timestamp - s.duration_sec);
    resmon_monitor_free(m);
}

/* ---- readers copying a large window never hold the sampler off ---------- */

typedef struct gap_watch {
    _Atomic double last, largest; /* written on the sampler thread only */
} gap_watch;

static void watch_gaps(const resmon_sample *s, void *user)
{
    gap_watch *g = user;
    double last = atomic_load(&g->last);
    if (last > 0 && s->timestamp - last > atomic_load(&g->largest))
        atomic_store(&g->largest, s->timestamp - last);
    atomic_store(&g->last, s->timestamp);
}

typedef struct window_copier {
    resmon_monitor *monitor;
    const resmon_sample *decoy; /* non-NULL: copy this instead of the monitor's window */
    size_t cap;
    atomic_int *stop;
    atomic_int copies;
    int short_copies; /* a copy of fewer samples than the full window holds */
} window_copier;

static void *copy_window_in_a_loop(void *arg)
{
    window_copier *c = arg;
    resmon_sample *buf = malloc(c->cap * sizeof *buf);
    assert_non_null(buf);
    while (!atomic_load(c->stop)) {
        size_t n = c->cap;
        if (c->decoy) /* the same work, holding nothing of the monitor's */
            memcpy(buf, c->decoy, c->cap * sizeof *buf);
        else
            n = test_samples(c->monitor, buf, c->cap);
        /* Whole samples in order, however the sampler overwrote the ring. */
        c->short_copies += n < c->cap - 1;
        for (size_t i = 1; i < (n < c->cap ? n : c->cap); i++)
            if (!(buf[i].timestamp >= buf[i - 1].timestamp) || !(buf[i].rss_mb > 0))
                c->short_copies += 1000000;
        atomic_fetch_add(&c->copies, 1);
    }
    free(buf);
    return NULL;
}

typedef struct sampler_share {
    double slots_taken; /* samples taken over the schedule's slots in the time */
    double largest_gap_sec;
} sampler_share;

/* A 1 kHz monitor whose ring is full (kept samples) from its first sample,
 * with readers threads copying all of it in a loop meanwhile (or, with a
 * decoy, copying as much from elsewhere: the same load on the CPUs): the
 * share of its slots the sampler took while they did. */
static sampler_share share_with_readers(size_t kept, int readers, const resmon_sample *decoy)
{
    enum { MEASURED_SLOTS = 1000 };
    const double interval = 0.001;
    gap_watch gaps = {0};
    resmon_options opts = {.struct_size = sizeof(resmon_options), .sample_interval_sec = interval,
                           .max_samples = kept, .on_sample = watch_gaps, .on_sample_user = &gaps};
    resmon_monitor *m = test_monitor_new(&opts);
    assert_non_null(m);
    rm__monitor_prefill(m, kept);
    atomic_int stop = 0;
    window_copier copiers[2];
    pthread_t tid[2];
    assert_int_equal(resmon_monitor_start(m), 0);
    for (int i = 0; i < readers; i++) {
        copiers[i] = (window_copier){.monitor = m, .decoy = decoy, .cap = kept, .stop = &stop};
        assert_int_equal(pthread_create(&tid[i], NULL, copy_window_in_a_loop, &copiers[i]), 0);
    }
    for (int i = 0; i < readers; i++) /* each reader is copying before the count starts */
        while (atomic_load(&copiers[i].copies) < 1)
            sched_yield();
    double t0 = test_now();
    uint64_t n0 = test_summary(m).num_samples;
    atomic_store(&gaps.largest, 0.0);
    /* Until the schedule has had its slots, and every reader copied again
     * meanwhile (a reader that made no copy held nothing off). */
    for (;;) {
        test_sleep(0.02);
        int copying = 1;
        for (int i = 0; i < readers; i++)
            copying &= atomic_load(&copiers[i].copies) >= 3;
        if (copying && test_now() - t0 >= MEASURED_SLOTS * interval)
            break;
    }
    double t1 = test_now();
    uint64_t n1 = test_summary(m).num_samples;
    sampler_share share = {.slots_taken = (double)(n1 - n0) * interval / (t1 - t0),
                           .largest_gap_sec = atomic_load(&gaps.largest)};
    atomic_store(&stop, 1);
    for (int i = 0; i < readers; i++) {
        pthread_join(tid[i], NULL);
        assert_int_equal(copiers[i].short_copies, 0);
    }
    assert_int_equal(resmon_monitor_stop(m), 0);
    resmon_monitor_free(m);
    return share;
}

/* Issue 17: two threads copying a 20k-sample window cut a 1 kHz sampler to
 * 2 % of its slots, 677 ms apart, because the copy held the mutex the
 * sampler publishes under.  Readers now copy without holding anything the
 * sampler needs.  The window here is 500 000 samples (a copy of 116 MB, about
 * 6 ms on the 2-core test machine, where the original code left the sampler
 * 11 % of its slots and now it takes 97 %), compared with the same monitor
 * beside two decoys copying as much from elsewhere, so that the readers'
 * own load on the CPUs is in both.  A busy machine takes slots from both
 * (CI: 0.749 with none beside it, 0.431 with the readers, under load 16 that
 * the time factor, chosen before it came, did not scale); load that arrives
 * between the two halves can still tell them apart, so a pair that misses is
 * measured again, three pairs at most: the lock held the sampler off in
 * every pair. */
static void readers_copying_a_large_window_never_hold_off_the_sampler(void **state)
{
    (void)state;
    /* Under TSan every acquire load of a copy costs a vector-clock merge (a
     * 500 000-sample copy takes seconds), so it checks the protocol's races on
     * a smaller window. */
    const size_t kept = TEST_UNDER_TSAN ? 20000 : 500000;
    resmon_sample *decoy = calloc(kept, sizeof *decoy);
    assert_non_null(decoy);
    for (size_t i = 0; i < kept; i++) { /* what a copy checks: in order, with memory */
        decoy[i].timestamp = (double)i;
        decoy[i].rss_mb = 1.0;
    }
    double factor = test_time_factor();
    for (int pair = 1;; pair++) {
        sampler_share alone = share_with_readers(kept, 2, decoy);
        sampler_share read = share_with_readers(kept, 2, NULL);
        print_message("slots taken: %.3f beside decoys, %.3f with 2 readers; largest gap %.1f ms beside decoys, "
                      "%.1f ms with readers\n",
                      alone.slots_taken, read.slots_taken, alone.largest_gap_sec * 1e3, read.largest_gap_sec * 1e3);
        if (TEST_UNDER_TSAN)
            break; /* TSan's runtime serialises atomics on one word through its own locks: it times itself */
        int held_off = !(read.slots_taken >= alone.slots_taken * 0.6 / factor) ||
                       !(read.largest_gap_sec <= 0.1 * factor + 2 * alone.largest_gap_sec);
        if (held_off && pair < 3)
            continue;
        ASSERT_BETWEEN(read.slots_taken, alone.slots_taken * 0.6 / factor, 1.1);
        ASSERT_BETWEEN(read.largest_gap_sec, 0, 0.1 * factor + 2 * alone.largest_gap_sec);
        break;
    }
    free(decoy);
}

/* ---- the sample without metric groups ----------------------------------- */

#define BASE_SAMPLES 30

typedef struct base_samples {
    resmon_sample seen[BASE_SAMPLES];
    atomic_int count;
} base_samples;

static void keep_base_sample(const resmon_sample *s, void *user)
{
    base_samples *b = user;
    int i = atomic_load(&b->count);
    if (i < BASE_SAMPLES) {
        b->seen[i] = *s;
        atomic_store(&b->count, i + 1);
    }
}

/* Without groups, cgroup or GPU a sample writes only its base fields and
 * keeps the rest as the window's first sample left it (monitor.c,
 * base_only): every sample the callback and the readers see must still be
 * whole -- its own timestamp, CPU and RSS, every other field NAN. */
static void samples_without_groups_are_whole_with_a_nan_tail(void **state)
{
    (void)state;
    static base_samples b;
    atomic_store(&b.count, 0);
    resmon_options opts = RESMON_OPTIONS_INIT;
    opts.sample_interval_sec = 0.001;
    opts.on_sample = keep_base_sample;
    opts.on_sample_user = &b;
    resmon_monitor *m = test_monitor_new(&opts);
    assert_non_null(m);
    assert_int_equal(resmon_monitor_start(m), 0);
    while (atomic_load(&b.count) < BASE_SAMPLES) { /* waiting for samples, not for a time */
        static volatile unsigned sink;
        for (unsigned i = 0; i < 100000; i++)
            sink = sink + i; /* CPU between samples, so cpu_percent moves */
        sched_yield();
    }
    assert_int_equal(resmon_monitor_stop(m), 0);
    resmon_sample *kept;
    size_t n = test_copy_samples(m, &kept);
    resmon_monitor_free(m);
    assert_true(n >= BASE_SAMPLES);
    const size_t tail = offsetof(resmon_sample, gpu_util);
    int cpu_moved = 0;
    for (size_t i = 0; i < BASE_SAMPLES; i++) {
        const resmon_sample *s = &b.seen[i];
        ASSERT_DOUBLE_EQ(s->timestamp, kept[i].timestamp); /* the callback's sample is the kept one */
        ASSERT_DOUBLE_EQ(s->rss_mb, kept[i].rss_mb);
        ASSERT_DOUBLE_EQ(s->cpu_percent, kept[i].cpu_percent);
        assert_true(s->rss_mb > 0);
        if (i > 0) {
            assert_true(s->timestamp > b.seen[i - 1].timestamp);
            cpu_moved |= s->cpu_percent != b.seen[1].cpu_percent;
        }
        for (size_t off = tail; off + sizeof(double) <= sizeof *s; off += sizeof(double)) {
            double field, kept_field;
            memcpy(&field, (const char *)s + off, sizeof field);
            memcpy(&kept_field, (const char *)&kept[i] + off, sizeof kept_field);
            ASSERT_NAN(field);
            ASSERT_NAN(kept_field);
        }
    }
    assert_true(cpu_moved);
    free(kept);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(new_rejects_bad_options),
        cmocka_unit_test(never_started_has_zeroed_summary),
        cmocka_unit_test(every_window_has_two_edge_samples),
        cmocka_unit_test(stop_is_prompt_with_a_long_interval),
        cmocka_unit_test(schedule_is_absolute_and_does_not_drift),
        cmocka_unit_test(cpu_percent_reads_100_per_busy_thread),
        cmocka_unit_test(rss_follows_touched_memory),
        cmocka_unit_test(exact_peak_catches_a_spike_between_samples),
        cmocka_unit_test(default_window_leaves_the_peak_mark_and_ru_maxrss_alone),
        cmocka_unit_test(reset_peak_mark_resets_the_mark_for_the_window),
        cmocka_unit_test(gpu_fixed_values_reach_samples_and_summary),
        cmocka_unit_test(failing_gpu_gives_nan_and_a_normal_run),
        cmocka_unit_test(gpu_failures_cost_only_their_samples),
        cmocka_unit_test(null_gpu_callbacks_mean_unsupported),
        cmocka_unit_test(invalid_gpu_values_become_nan),
        cmocka_unit_test(gpu_energy_is_integrated_without_a_counter),
        cmocka_unit_test(gpu_energy_comes_from_the_counter_when_there_is_one),
        cmocka_unit_test(hanging_gpu_call_does_not_stall_cpu_and_rss_sampling),
        cmocka_unit_test(no_gpu_means_unknown_energy),
        cmocka_unit_test(fifty_windows_each_start_afresh),
        cmocka_unit_test(free_while_running_stops_first),
        cmocka_unit_test(readers_racing_the_sampler_see_consistent_snapshots),
        cmocka_unit_test(thousand_windows_with_racing_readers),
        cmocka_unit_test(callback_streams_every_sample_and_cannot_reenter),
        cmocka_unit_test(slow_callback_skips_slots_instead_of_bursting),
        cmocka_unit_test(bounded_store_keeps_recent_samples_and_whole_summary),
        cmocka_unit_test(readers_copying_a_large_window_never_hold_off_the_sampler),
        cmocka_unit_test(samples_without_groups_are_whole_with_a_nan_tail),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
