/*
 * test_gpu_lifetime.c -- when a monitor may call its GPU profiler, and when
 * the owner may free it (resmon.h, "Lifetime"): no callback after
 * resmon_monitor_free returns, other than a call already in flight; free
 * bounded when the profiler has a release hook, and release exactly once,
 * after the last call; one call in flight per monitor at most.
 *
 * The profiler's utilization call blocks on a pipe the test controls, so the
 * test knows exactly when a call is in flight.  Its context lives on the heap
 * and is freed where the owner would free it, so under ASan any late call is
 * a heap-use-after-free.
 */
#include "test_util.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct blocking_gpu {
    int entered[2];          /* the call writes a byte here when it starts */
    int proceed[2];          /* the call returns once a byte arrives here */
    int released[2];         /* release writes a byte here */
    atomic_int block_next;   /* 1: the next utilization call blocks */
    atomic_int calls;        /* every callback, whichever */
    atomic_int in_flight, most_in_flight;
    atomic_int retains, releases;
    atomic_int calls_at_release;
} blocking_gpu;

static void enter_call(blocking_gpu *g)
{
    int now = atomic_fetch_add(&g->in_flight, 1) + 1;
    int most = atomic_load(&g->most_in_flight);
    while (now > most && !atomic_compare_exchange_weak(&g->most_in_flight, &most, now))
        ;
    atomic_fetch_add(&g->calls, 1);
}

static int blocking_util(void *ctx, double *percent)
{
    blocking_gpu *g = ctx;
    enter_call(g);
    if (atomic_exchange(&g->block_next, 0)) {
        char byte = 'e';
        assert_int_equal(write(g->entered[1], &byte, 1), 1);
        assert_int_equal(read(g->proceed[0], &byte, 1), 1);
    }
    *percent = 50;
    atomic_fetch_sub(&g->in_flight, 1);
    return 0;
}

static int counting_memory(void *ctx, resmon_gpu_memory *out)
{
    blocking_gpu *g = ctx;
    enter_call(g);
    out->gpu_memory_used_mb = 100;
    out->gpu_memory_total_mb = 1000;
    atomic_fetch_sub(&g->in_flight, 1);
    return 0;
}

static void count_retain(void *ctx)
{
    blocking_gpu *g = ctx;
    atomic_fetch_add(&g->retains, 1);
}

static void release_and_free(void *ctx)
{
    blocking_gpu *g = ctx;
    atomic_fetch_add(&g->releases, 1);
    atomic_store(&g->calls_at_release, atomic_load(&g->calls));
    assert_int_equal(atomic_load(&g->in_flight), 0); /* after the last call returned */
    char byte = 'r';
    assert_int_equal(write(g->released[1], &byte, 1), 1);
}

static blocking_gpu *blocking_gpu_new(void)
{
    blocking_gpu *g = calloc(1, sizeof *g);
    assert_non_null(g);
    assert_int_equal(pipe(g->entered), 0);
    assert_int_equal(pipe(g->proceed), 0);
    assert_int_equal(pipe(g->released), 0);
    return g;
}

static void blocking_gpu_free(blocking_gpu *g)
{
    for (int i = 0; i < 2; i++) {
        close(g->entered[i]);
        close(g->proceed[i]);
        close(g->released[i]);
    }
    free(g);
}

static resmon_gpu_profiler profiler_of(blocking_gpu *g, int with_release)
{
    resmon_gpu_profiler p = RESMON_GPU_PROFILER_INIT;
    p.ctx = g;
    p.get_utilization = blocking_util;
    p.get_memory_usage = counting_memory;
    if (with_release) {
        p.retain = count_retain;
        p.release = release_and_free;
    }
    return p;
}

static resmon_monitor *monitor_with(const resmon_gpu_profiler *p)
{
    resmon_options o = RESMON_OPTIONS_INIT;
    o.sample_interval_sec = 0.005;
    o.gpu_interval_sec = 0.005;
    o.gpu_profiler = p;
    resmon_monitor *m = NULL;
    assert_int_equal(resmon_monitor_new(&m, &o), 0);
    return m;
}

/* Opens a window, then makes the GPU thread's next call block, and returns
 * once that call is in flight. */
static void start_and_hang_a_call(resmon_monitor *m, blocking_gpu *g)
{
    assert_int_equal(resmon_monitor_start(m), 0);
    atomic_store(&g->block_next, 1);
    char byte;
    assert_int_equal(read(g->entered[0], &byte, 1), 1);
}

typedef struct freer {
    resmon_monitor *m;
    atomic_int done;
} freer;

static void *free_monitor(void *arg)
{
    freer *f = arg;
    resmon_monitor_free(f->m);
    atomic_store(&f->done, 1);
    return NULL;
}

static void free_without_release_waits_for_the_call_in_flight(void **state)
{
    (void)state;
    blocking_gpu *g = blocking_gpu_new();
    resmon_gpu_profiler p = profiler_of(g, 0);
    freer f = {.m = monitor_with(&p)};
    start_and_hang_a_call(f.m, g);
    assert_int_equal(resmon_monitor_stop(f.m), 0); /* bounded: the window closes without the GPU */

    pthread_t t;
    pthread_create(&t, NULL, free_monitor, &f);
    test_sleep(0.3); /* longer than any bounded wait: free must still be waiting */
    assert_int_equal(atomic_load(&f.done), 0);
    char go = 'g';
    assert_int_equal(write(g->proceed[1], &go, 1), 1);
    pthread_join(t, NULL);
    int calls = atomic_load(&g->calls);
    assert_int_equal(atomic_load(&g->in_flight), 0);
    test_sleep(0.05); /* ten GPU intervals: a leftover thread would call again */
    assert_int_equal(atomic_load(&g->calls), calls);
    assert_int_equal(atomic_load(&g->most_in_flight), 1);
    blocking_gpu_free(g); /* as soon as free returned: ASan sees any later call */
}

static void free_with_release_is_bounded_and_releases_after_the_call(void **state)
{
    (void)state;
    blocking_gpu *g = blocking_gpu_new();
    resmon_gpu_profiler p = profiler_of(g, 1);
    resmon_monitor *m = monitor_with(&p);
    assert_int_equal(atomic_load(&g->retains), 1);
    start_and_hang_a_call(m, g);
    int calls_before_free = atomic_load(&g->calls);
    resmon_monitor_free(m); /* returns although the call still hangs */
    assert_int_equal(atomic_load(&g->in_flight), 1);
    assert_int_equal(atomic_load(&g->releases), 0);

    char go = 'g';
    assert_int_equal(write(g->proceed[1], &go, 1), 1);
    char byte;
    assert_int_equal(read(g->released[0], &byte, 1), 1); /* release ran, on the GPU thread */
    assert_int_equal(atomic_load(&g->releases), 1);
    /* The hung call completed; no other callback (memory) started after free. */
    assert_int_equal(atomic_load(&g->calls_at_release), calls_before_free);
    test_sleep(0.05);
    assert_int_equal(atomic_load(&g->calls), calls_before_free);
    blocking_gpu_free(g);
}

static void release_comes_once_when_nothing_hangs(void **state)
{
    (void)state;
    blocking_gpu *g = blocking_gpu_new();
    resmon_gpu_profiler p = profiler_of(g, 1);
    resmon_monitor *never_started = monitor_with(&p);
    resmon_monitor_free(never_started);
    assert_int_equal(atomic_load(&g->retains), 1);
    assert_int_equal(atomic_load(&g->releases), 1);

    resmon_monitor *m = monitor_with(&p);
    for (int i = 0; i < 3; i++) { /* windows reuse the one GPU thread */
        assert_int_equal(resmon_monitor_start(m), 0);
        assert_int_equal(resmon_monitor_stop(m), 0);
    }
    resmon_monitor_free(m);
    assert_int_equal(atomic_load(&g->retains), 2);
    assert_int_equal(atomic_load(&g->releases), 2); /* free joined the thread and released at once */
    blocking_gpu_free(g);
}

static void a_new_window_never_overlaps_a_hung_call(void **state)
{
    (void)state;
    blocking_gpu *g = blocking_gpu_new();
    resmon_gpu_profiler p = profiler_of(g, 0);
    resmon_monitor *m = monitor_with(&p);
    start_and_hang_a_call(m, g);
    assert_int_equal(resmon_monitor_stop(m), 0);
    assert_int_equal(resmon_monitor_start(m), 0); /* the call from the last window still hangs */
    /* CPU/RSS sampling goes on: two samples come, however long a busy
     * machine makes them take (a fixed 50 ms saw one, CI's busy stage). */
    double wait_until = test_now() + test_scaled(10);
    resmon_summary s = test_summary(m);
    while (s.num_samples < 2 && test_now() < wait_until) {
        test_sleep(0.01);
        s = test_summary(m);
    }
    assert_true(s.num_samples >= 2);
    assert_int_equal(atomic_load(&g->most_in_flight), 1);
    char go = 'g';
    assert_int_equal(write(g->proceed[1], &go, 1), 1);
    /* Once the call returns, the GPU thread serves the new window. */
    double deadline = test_now() + 5;
    resmon_sample last;
    do {
        test_sleep(0.01);
        ssize_t n = resmon_monitor_get_samples(m, NULL, 0, sizeof last);
        resmon_sample *all = calloc((size_t)n, sizeof *all);
        resmon_monitor_get_samples(m, all, (size_t)n, sizeof *all);
        last = all[n - 1];
        free(all);
    } while (isnan(last.gpu_util) && test_now() < deadline);
    ASSERT_DOUBLE_EQ(last.gpu_util, 50);
    resmon_monitor_free(m);
    assert_int_equal(atomic_load(&g->most_in_flight), 1);
    blocking_gpu_free(g);
}

static long vm_size_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    assert_non_null(f);
    char line[256];
    long kib = -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "VmSize:", 7) == 0)
            kib = strtol(line + 7, NULL, 10);
    fclose(f);
    return kib;
}

static int answer_util(void *ctx, double *percent)
{
    (void)ctx;
    *percent = 1;
    return 0;
}

static int answer_process_memory(void *ctx, const pid_t *pids, size_t count, double *mb)
{
    (void)ctx, (void)pids, (void)count;
    *mb = 1;
    return 0;
}

/* glibc gives every thread that calls malloc or free an arena of its own:
 * 64 MiB of address space.  The sampler and GPU threads take none (pages.h),
 * so a monitor costs its two threads' stacks (8 MiB each by default), also
 * at 1 kHz with more samples than the store's first allocation holds.  (A
 * profiler that allocates still costs the GPU thread an arena: README.) */
static void background_threads_take_no_malloc_arena(void **state)
{
    (void)state;
#ifdef RESMON_TEST_SANITIZED
    skip(); /* the sanitizers replace malloc and reserve memory of their own */
#endif
    resmon_gpu_profiler p = RESMON_GPU_PROFILER_INIT;
    p.get_utilization = answer_util;
    p.get_process_memory = answer_process_memory;
    resmon_options o = RESMON_OPTIONS_INIT;
    o.sample_interval_sec = 0.001;
    o.gpu_profiler = &p;
    resmon_monitor *m = NULL;
    assert_int_equal(resmon_monitor_new(&m, &o), 0);
    long before = vm_size_kib();
    assert_int_equal(resmon_monitor_start(m), 0);
    while (test_summary(m).num_samples < 1500) /* past the first 1024-sample block */
        test_sleep(0.05);
    long grown_mib = (vm_size_kib() - before) / 1024;
    assert_int_equal(resmon_monitor_stop(m), 0);
    resmon_monitor_free(m);
    printf("VmSize grew %ld MiB with a monitor and a GPU profiler running\n", grown_mib);
    assert_true(grown_mib < 40); /* two stacks: ~16 MiB; one arena more: 80+ */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(free_without_release_waits_for_the_call_in_flight),
        cmocka_unit_test(free_with_release_is_bounded_and_releases_after_the_call),
        cmocka_unit_test(release_comes_once_when_nothing_hangs),
        cmocka_unit_test(a_new_window_never_overlaps_a_hung_call),
        cmocka_unit_test(background_threads_take_no_malloc_arena),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
