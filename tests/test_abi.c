/*
 * test_abi.c -- the public structs' layout, and the growth rules of resmon.h
 * ("Versioning and growth") exercised with callers whose structs are larger
 * than the library's (a program built against a newer header) or exactly the
 * smallest the library accepts.
 *
 * The layout asserts make an accidental ABI change fail CI: a deliberate one
 * updates them together with CHANGELOG.md and the version.
 */
#include "test_util.h"
#include "struct_size.h"

#include <errno.h>
#include <stdlib.h>

#if defined(__x86_64__) || defined(__aarch64__)
_Static_assert(sizeof(resmon_sample) == 264, "resmon_sample layout changed");
_Static_assert(offsetof(resmon_sample, open_fds) == 256, "0.4 fields are appended");
_Static_assert(offsetof(resmon_sample, uss_mb) == 248, "0.4 fields are appended");
_Static_assert(offsetof(resmon_sample, cgroup_mem_mb) == 232, "0.4 fields are appended");
_Static_assert(offsetof(resmon_sample, unreadable_procs) == 240, "0.4 fields are appended");
_Static_assert(offsetof(resmon_sample, vmem_mb) == 64, "metric fields are appended after the 0.3.0 layout");
_Static_assert(offsetof(resmon_sample, net_tx_packets) == 224, "resmon_sample layout changed");
_Static_assert(offsetof(resmon_sample, gpu_proc_mem_mb) == 56, "resmon_sample layout changed");
_Static_assert(sizeof(resmon_phase) == 504 && offsetof(resmon_phase, summary) == 80,
               "resmon_phase layout changed: the summary stays last");
_Static_assert(sizeof(resmon_summary) == 424, "resmon_summary layout changed");
_Static_assert(offsetof(resmon_summary, walk_interval_sec) == 416, "0.4 fields are appended");
_Static_assert(offsetof(resmon_summary, peak_open_fds) == 408, "0.4 fields are appended");
_Static_assert(offsetof(resmon_summary, peak_uss_mb) == 400, "0.4 fields are appended");
_Static_assert(offsetof(resmon_summary, cgroup_peak_mb) == 336, "0.4 fields are appended");
_Static_assert(offsetof(resmon_summary, cgroup_error) == 388, "resmon_summary layout changed");
_Static_assert(offsetof(resmon_summary, peak_unreadable_procs) == 392, "0.4 fields are appended");
_Static_assert(offsetof(resmon_summary, num_samples) == 48, "resmon_summary layout changed");
_Static_assert(offsetof(resmon_summary, peak_gpu_proc_mem_mb) == 152, "resmon_summary layout changed");
_Static_assert(offsetof(resmon_summary, hwm_error) == 160, "resmon_summary layout changed");
_Static_assert(offsetof(resmon_summary, peak_vmem_mb) == 168, "metric fields are appended after hwm_error");
/* The holes are named: each reserved field fills the 4 bytes after a 4-byte field. */
_Static_assert(offsetof(resmon_summary, reserved_0) == offsetof(resmon_summary, hwm_scope) + 4 &&
                   offsetof(resmon_summary, skipped_slots) == offsetof(resmon_summary, reserved_0) + 4,
               "resmon_summary layout changed");
_Static_assert(offsetof(resmon_summary, reserved_1) == offsetof(resmon_summary, gpu_energy_source) + 4 &&
                   offsetof(resmon_summary, cpu_energy_j) == offsetof(resmon_summary, reserved_1) + 4,
               "resmon_summary layout changed");
_Static_assert(offsetof(resmon_summary, reserved_2) == 164 && offsetof(resmon_summary, peak_vmem_mb) == 168,
               "resmon_summary layout changed");
_Static_assert(offsetof(resmon_summary, net_tx_packets) == 328, "resmon_summary layout changed");
_Static_assert(sizeof(resmon_options) == 96, "resmon_options layout changed");
_Static_assert(offsetof(resmon_options, reset_peak_mark) == 80, "resmon_options layout changed");
_Static_assert(offsetof(resmon_options, cgroup_path) == 88, "0.4 fields are appended");
_Static_assert(offsetof(resmon_options, cgroup_members) == 84, "0.4: the reserved word before cgroup_path");
_Static_assert(offsetof(resmon_options, metrics) == 68, "resmon_options layout changed");
_Static_assert(offsetof(resmon_options, memory_detail_interval_sec) == 72, "resmon_options layout changed");
_Static_assert(offsetof(resmon_options, keep_peak_mark) == 64, "resmon_options layout changed");
_Static_assert(offsetof(resmon_options, gpu_interval_sec) == 56, "resmon_options layout changed");
_Static_assert(sizeof(resmon_gpu_profiler) == 80, "resmon_gpu_profiler layout changed");
_Static_assert(offsetof(resmon_gpu_profiler, release) == 72, "resmon_gpu_profiler layout changed");
_Static_assert(sizeof(resmon_gpu_info) == 224, "resmon_gpu_info layout changed");
_Static_assert(sizeof(resmon_gpu_reading) == 64, "resmon_gpu_reading layout changed");
#endif
/* Structs the caller hands in end without padding: a caller's struct_size
 * then never covers bytes it could not set (which the library would read as
 * a newer field of garbage). */
_Static_assert(sizeof(resmon_options) == RM__SIZE_THROUGH(resmon_options, cgroup_path),
               "resmon_options must not end in padding: grow it in 8-byte units");
_Static_assert(sizeof(resmon_gpu_profiler) == RM__SIZE_THROUGH(resmon_gpu_profiler, release),
               "resmon_gpu_profiler must not end in padding: grow it in 8-byte units");
_Static_assert(sizeof(resmon_summary) == RM__SIZE_THROUGH(resmon_summary, walk_interval_sec),
               "resmon_summary must not end in padding: grow it in 8-byte units");
_Static_assert(offsetof(resmon_options, struct_size) == 0, "struct_size must come first");
_Static_assert(offsetof(resmon_gpu_profiler, struct_size) == 0, "struct_size must come first");
_Static_assert(offsetof(resmon_summary, struct_size) == 0, "struct_size must come first");

#define CANARY 0xA5

/* Options as a newer header might have them: two fields more. */
typedef struct newer_options {
    resmon_options known;
    double future_a;
    void *future_b;
} newer_options;

static void newer_options_are_accepted_when_their_new_fields_are_zero(void **state)
{
    (void)state;
    newer_options o;
    memset(&o, 0, sizeof o);
    o.known.struct_size = sizeof o;
    o.known.sample_interval_sec = 0.01;
    resmon_monitor *m = NULL;
    assert_int_equal(resmon_monitor_new(&m, &o.known), 0);
    resmon_monitor_free(m);

    o.future_a = 1.0; /* a feature this library does not have: refused, not ignored */
    m = NULL;
    assert_int_equal(resmon_monitor_new(&m, &o.known), -E2BIG);
    assert_null(m);
    assert_string_not_equal(resmon_strerror(-E2BIG), "unknown error");
}

static void a_garbage_struct_size_is_refused_before_it_is_read(void **state)
{
    (void)state;
    resmon_options o = RESMON_OPTIONS_INIT;
    o.struct_size = (size_t)1 << 40; /* an uninitialised field: never scanned */
    resmon_monitor *m = NULL;
    assert_int_equal(resmon_monitor_new(&m, &o), -E2BIG);
    assert_null(m);
}

static void options_smaller_than_the_first_sized_layout_are_refused(void **state)
{
    (void)state;
    resmon_options o = RESMON_OPTIONS_INIT;
    resmon_monitor *m = NULL;
    o.struct_size = offsetof(resmon_options, gpu_interval_sec); /* cut short */
    assert_int_equal(resmon_monitor_new(&m, &o), -EINVAL);
    o.struct_size = 0;
    assert_int_equal(resmon_monitor_new(&m, &o), -EINVAL);
    assert_null(m);
}

typedef struct newer_profiler {
    resmon_gpu_profiler known;
    int (*future_callback)(void *ctx);
} newer_profiler;

static int answer_util(void *ctx, double *percent)
{
    (void)ctx;
    *percent = 42;
    return 0;
}

static int future(void *ctx)
{
    (void)ctx;
    return 0;
}

static void profiler_tables_follow_the_same_rule(void **state)
{
    (void)state;
    newer_profiler p;
    memset(&p, 0, sizeof p);
    p.known.struct_size = sizeof p;
    p.known.get_utilization = answer_util;
    resmon_options o = RESMON_OPTIONS_INIT;
    o.gpu_profiler = &p.known;
    resmon_monitor *m = NULL;
    assert_int_equal(resmon_monitor_new(&m, &o), 0);
    resmon_monitor_free(m);

    p.future_callback = future;
    assert_int_equal(resmon_monitor_new(&m, &o), -E2BIG);
    p.future_callback = NULL;
    p.known.struct_size = 8; /* only struct_size: not a profiler table */
    assert_int_equal(resmon_monitor_new(&m, &o), -EINVAL);
}

/* A sample as a newer header might have it, with a canary after it. */
typedef struct newer_sample {
    resmon_sample known;
    double future;
    unsigned char canary[8];
} newer_sample;

static void samples_are_copied_with_the_callers_stride(void **state)
{
    (void)state;
    resmon_monitor *m = test_monitor_new(NULL);
    assert_int_equal(resmon_monitor_start(m), 0);
    assert_int_equal(resmon_monitor_stop(m), 0); /* two samples: the edges */

    newer_sample wide[3];
    memset(wide, CANARY, sizeof wide);
    assert_int_equal(resmon_monitor_get_samples(m, &wide[0].known, 3, sizeof *wide), 2);
    resmon_sample exact[2];
    assert_int_equal(resmon_monitor_get_samples(m, exact, 2, sizeof *exact), 2);
    for (int i = 0; i < 2; i++) {
        assert_memory_equal(&wide[i].known, &exact[i], sizeof exact[i]);
        assert_true(wide[i].future == 0.0); /* what this library lacks reads as zero */
        for (size_t b = 0; b < sizeof wide[i].canary; b++)
            assert_int_equal(wide[i].canary[b], 0);
    }
    /* The element past the samples is never written. */
    const unsigned char *third = (const unsigned char *)&wide[2];
    for (size_t b = 0; b < sizeof wide[2]; b++)
        assert_int_equal(third[b], CANARY);

    assert_int_equal(resmon_monitor_get_samples(m, NULL, 0, 0), 2);
    assert_int_equal(resmon_monitor_get_samples(m, exact, 2, sizeof(double)), -EINVAL);
    assert_int_equal(resmon_monitor_get_samples(m, NULL, 2, sizeof *exact), -EINVAL);
    resmon_monitor_free(m);
}

typedef struct newer_summary {
    resmon_summary known;
    double future;
} newer_summary;

static void summaries_are_filled_to_the_callers_size(void **state)
{
    (void)state;
    resmon_monitor *m = test_monitor_new(NULL);
    assert_int_equal(resmon_monitor_start(m), 0);
    assert_int_equal(resmon_monitor_stop(m), 0);
    newer_summary wide;
    memset(&wide, CANARY, sizeof wide);
    assert_int_equal(resmon_monitor_get_summary(m, &wide.known, sizeof wide), 0);
    assert_int_equal(wide.known.struct_size, sizeof(resmon_summary)); /* what was filled */
    assert_true(wide.future == 0.0);
    assert_int_equal(wide.known.num_samples, 2);
    assert_int_equal(resmon_monitor_get_summary(m, &wide.known, sizeof(double)), -EINVAL);

    /* The library reads a newer caller's summary back (zero tail only). */
    char a[1024], b[1024];
    resmon_summary own = test_summary(m);
    assert_true(resmon_summary_to_json(&own, a, sizeof a) > 0);
    wide.known.struct_size = sizeof wide;
    assert_true(resmon_summary_to_json(&wide.known, b, sizeof b) > 0);
    assert_string_equal(a, b);
    wide.future = 3.0;
    assert_int_equal(resmon_summary_to_json(&wide.known, b, sizeof b), -E2BIG);
    own.struct_size = 0; /* filled by hand and struct_size forgotten */
    assert_int_equal(resmon_summary_to_json(&own, b, sizeof b), -EINVAL);
    resmon_monitor_free(m);
}

/* A caller built against 0.3, whose summary ends at peak_gpu_proc_mem_mb,
 * gets exactly its own bytes: hwm_error, appended after 0.3, is neither
 * written into its memory nor expected from it. */
static void a_0_3_summary_stops_before_hwm_error(void **state)
{
    (void)state;
    const size_t size_0_3 = offsetof(resmon_summary, peak_gpu_proc_mem_mb) + sizeof(double);
    resmon_monitor *m = test_monitor_new(NULL);
    assert_int_equal(resmon_monitor_start(m), 0);
    assert_int_equal(resmon_monitor_stop(m), 0);
    resmon_summary old;
    memset(&old, CANARY, sizeof old);
    assert_int_equal(resmon_monitor_get_summary(m, &old, size_0_3), 0);
    assert_int_equal(old.struct_size, size_0_3);
    assert_int_equal(old.num_samples, 2);
    const unsigned char *tail = (const unsigned char *)&old + size_0_3;
    for (size_t b = 0; b < sizeof old - size_0_3; b++)
        assert_int_equal(tail[b], CANARY);

    /* Its summary serialises as the library's own does. */
    char a[1024], b[1024];
    resmon_summary own = test_summary(m);
    assert_true(resmon_summary_to_json(&own, a, sizeof a) > 0);
    assert_true(resmon_summary_to_json(&old, b, sizeof b) > 0);
    assert_string_equal(a, b);
    resmon_monitor_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(newer_options_are_accepted_when_their_new_fields_are_zero),
        cmocka_unit_test(options_smaller_than_the_first_sized_layout_are_refused),
        cmocka_unit_test(a_garbage_struct_size_is_refused_before_it_is_read),
        cmocka_unit_test(profiler_tables_follow_the_same_rule),
        cmocka_unit_test(samples_are_copied_with_the_callers_stride),
        cmocka_unit_test(summaries_are_filled_to_the_callers_size),
        cmocka_unit_test(a_0_3_summary_stops_before_hwm_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
