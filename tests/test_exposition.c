/*
 * test_exposition.c -- resmon_exposition_render / resmon_monitor_exposition:
 * Prometheus text 0.0.4 and OpenMetrics 1.0, base units, NaN fields left
 * out, label escaping and validation, snprintf semantics, and a live monitor.
 */
#include "resmon.h"
#include "test_util.h"

#include <errno.h>
#include <stdlib.h>

static resmon_summary cpu_only_summary(void)
{
    resmon_summary s;
    memset(&s, 0, sizeof s);
    s.struct_size = sizeof s;
    s.peak_rss_mb = 2.0;
    s.mean_rss_mb = 1.5;
    s.peak_gpu_mem_mb = NAN;
    s.mean_gpu_util = NAN;
    s.num_samples = 42;
    s.duration_sec = 4.25;
    s.mean_gpu_clock_mhz = NAN;
    s.mean_gpu_power_w = NAN;
    s.cpu_time_sec = 1.5;
    s.hwm_rss_mb = NAN;
    s.gpu_energy_j = NAN;
    s.cpu_energy_j = NAN;
    s.peak_gpu_proc_mem_mb = NAN;
    s.skipped_slots = 3;
    /* no metric group asked for */
    double *groups[] = {&s.peak_vmem_mb, &s.peak_pss_mb, &s.peak_swap_mb, &s.io_rchar, &s.io_wchar,
                        &s.io_read_bytes, &s.io_write_bytes, &s.io_syscr, &s.io_syscw, &s.peak_nprocs,
                        &s.peak_nthreads, &s.cpu_user_sec, &s.cpu_sys_sec, &s.minor_faults, &s.major_faults,
                        &s.voluntary_switches, &s.involuntary_switches, &s.net_rx_bytes, &s.net_tx_bytes,
                        &s.net_rx_packets, &s.net_tx_packets};
    for (size_t i = 0; i < sizeof groups / sizeof *groups; i++)
        *groups[i] = NAN;
    return s;
}

static resmon_sample cpu_only_sample(void)
{
    resmon_sample last = {.timestamp = 10, .cpu_percent = 150, .rss_mb = 1.25, .gpu_util = NAN,
                          .gpu_mem_mb = NAN, .gpu_clock_mhz = NAN, .gpu_power_w = NAN, .gpu_proc_mem_mb = NAN};
    return last;
}

static char *render(const resmon_summary *s, const resmon_sample *last, resmon_exposition_format format,
                    const resmon_label *labels, size_t count)
{
    int n = resmon_exposition_render(s, last, sizeof(resmon_sample), format, labels, count, NULL, 0);
    assert_true(n > 0);
    char *text = malloc((size_t)n + 1);
    assert_non_null(text);
    assert_int_equal(
        resmon_exposition_render(s, last, sizeof(resmon_sample), format, labels, count, text, (size_t)n + 1), n);
    assert_int_equal(strlen(text), n);
    return text;
}

#define ASSERT_CONTAINS(text, needle)                                               \
    do {                                                                            \
        if (!strstr((text), (needle))) {                                            \
            print_error("missing \"%s\" in:\n%s\n", (needle), (text));              \
            fail();                                                                 \
        }                                                                           \
    } while (0)

#define ASSERT_LACKS(text, needle)                                                  \
    do {                                                                            \
        if (strstr((text), (needle))) {                                             \
            print_error("unexpected \"%s\" in:\n%s\n", (needle), (text));           \
            fail();                                                                 \
        }                                                                           \
    } while (0)

static void prometheus_text_has_help_type_and_base_units(void **state)
{
    (void)state;
    resmon_summary s = cpu_only_summary();
    resmon_sample last = cpu_only_sample();
    resmon_label labels[] = {{"command", "sleep"}};
    char *text = render(&s, &last, RESMON_EXPOSITION_PROMETHEUS, labels, 1);
    ASSERT_CONTAINS(text, "# HELP resmon_cpu_seconds_total ");
    ASSERT_CONTAINS(text, "# TYPE resmon_cpu_seconds_total counter\n"
                          "resmon_cpu_seconds_total{command=\"sleep\"} 1.5\n");
    ASSERT_CONTAINS(text, "# TYPE resmon_resident_memory_bytes gauge\n"
                          "resmon_resident_memory_bytes{command=\"sleep\"} 1310720.0\n");
    ASSERT_CONTAINS(text, "resmon_resident_memory_max_bytes{command=\"sleep\"} 2097152.0\n");
    ASSERT_CONTAINS(text, "resmon_cpu_utilization_ratio{command=\"sleep\"} 1.5\n");
    ASSERT_CONTAINS(text, "# TYPE resmon_samples_total counter\nresmon_samples_total{command=\"sleep\"} 42\n");
    ASSERT_CONTAINS(text, "resmon_skipped_slots_total{command=\"sleep\"} 3\n");
    ASSERT_CONTAINS(text, "resmon_window_duration_seconds{command=\"sleep\"} 4.25\n");
    /* 0.0.4 has neither units nor an end marker */
    ASSERT_LACKS(text, "# UNIT");
    ASSERT_LACKS(text, "# EOF");
    free(text);
}

static void unknown_fields_are_left_out(void **state)
{
    (void)state;
    resmon_summary s = cpu_only_summary();
    resmon_sample last = cpu_only_sample();
    char *text = render(&s, &last, RESMON_EXPOSITION_PROMETHEUS, NULL, 0);
    ASSERT_LACKS(text, "gpu");
    ASSERT_LACKS(text, "energy");
    ASSERT_LACKS(text, "exact_max");
    ASSERT_LACKS(text, "NaN");
    ASSERT_CONTAINS(text, "\nresmon_samples_total 42\n"); /* no labels: no braces */
    free(text);
    /* Without a sample, the latest-sample series go too. */
    text = render(&s, NULL, RESMON_EXPOSITION_PROMETHEUS, NULL, 0);
    ASSERT_LACKS(text, "resmon_resident_memory_bytes");
    ASSERT_LACKS(text, "resmon_cpu_utilization_ratio");
    ASSERT_CONTAINS(text, "resmon_resident_memory_max_bytes 2097152.0\n");
    free(text);
}

/* A count a caller set out of a uint64_t's range is printed as the double it
 * is, not converted (undefined: gcc printed 0, clang 9223372036854775808). */
static void a_count_out_of_range_is_printed_as_it_is(void **state)
{
    (void)state;
    resmon_summary s = cpu_only_summary();
    s.cgroup_version = 2;
    s.cgroup_oom_kills = -1;
    char *text = render(&s, NULL, RESMON_EXPOSITION_PROMETHEUS, NULL, 0);
    ASSERT_CONTAINS(text, "\nresmon_cgroup_oom_kills_total -1.0\n");
    free(text);
    s.cgroup_oom_kills = 1e30;
    text = render(&s, NULL, RESMON_EXPOSITION_PROMETHEUS, NULL, 0);
    ASSERT_CONTAINS(text, "\nresmon_cgroup_oom_kills_total 1e+30\n");
    free(text);
    s.cgroup_oom_kills = 3;
    text = render(&s, NULL, RESMON_EXPOSITION_PROMETHEUS, NULL, 0);
    ASSERT_CONTAINS(text, "\nresmon_cgroup_oom_kills_total 3\n");
    free(text);
}

static void gpu_and_energy_in_base_units(void **state)
{
    (void)state;
    resmon_summary s = cpu_only_summary();
    s.peak_gpu_mem_mb = 1024;
    s.gpu_energy_j = 12.5;
    s.cpu_energy_j = 3;
    s.hwm_rss_mb = 3;
    resmon_sample last = cpu_only_sample();
    last.gpu_util = 50;
    last.gpu_mem_mb = 512;
    last.gpu_clock_mhz = 1500;
    last.gpu_power_w = 250.5;
    last.gpu_proc_mem_mb = 256;
    char *text = render(&s, &last, RESMON_EXPOSITION_PROMETHEUS, NULL, 0);
    ASSERT_CONTAINS(text, "\nresmon_gpu_utilization_ratio 0.5\n");
    ASSERT_CONTAINS(text, "\nresmon_gpu_memory_used_bytes 536870912.0\n");
    ASSERT_CONTAINS(text, "\nresmon_gpu_memory_used_max_bytes 1073741824.0\n");
    ASSERT_CONTAINS(text, "\nresmon_gpu_process_memory_bytes 268435456.0\n");
    ASSERT_CONTAINS(text, "\nresmon_gpu_clock_hertz 1500000000.0\n");
    ASSERT_CONTAINS(text, "\nresmon_gpu_power_watts 250.5\n");
    ASSERT_CONTAINS(text, "# TYPE resmon_gpu_energy_joules_total counter\nresmon_gpu_energy_joules_total 12.5\n");
    ASSERT_CONTAINS(text, "\nresmon_cpu_energy_joules_total 3.0\n");
    ASSERT_CONTAINS(text, "\nresmon_resident_memory_exact_max_bytes 3145728.0\n");
    free(text);
}

static resmon_summary summary_with_metric_groups(void)
{
    resmon_summary s = cpu_only_summary();
    s.peak_vmem_mb = 100;
    s.peak_pss_mb = 1.5;
    s.peak_swap_mb = 0;
    s.io_rchar = 4096;
    s.io_wchar = 8192;
    s.io_read_bytes = 0;
    s.io_write_bytes = 12288;
    s.io_syscr = 3;
    s.io_syscw = 5;
    s.peak_nprocs = 4;
    s.peak_nthreads = 9;
    s.cpu_user_sec = 1.25;
    s.cpu_sys_sec = 0.25;
    s.minor_faults = 1000;
    s.major_faults = 2;
    s.voluntary_switches = 70;
    s.involuntary_switches = 11;
    s.net_rx_bytes = 1e10; /* past 2^32: a long-lived namespace */
    s.net_tx_bytes = 2000;
    s.net_rx_packets = 30;
    s.net_tx_packets = 40;
    return s;
}

static void metric_groups_in_base_units_with_prometheus_names(void **state)
{
    (void)state;
    resmon_summary s = summary_with_metric_groups();
    char *text = render(&s, NULL, RESMON_EXPOSITION_PROMETHEUS, NULL, 0);
    ASSERT_CONTAINS(text, "# TYPE resmon_cpu_user_seconds_total counter\nresmon_cpu_user_seconds_total 1.25\n");
    ASSERT_CONTAINS(text, "\nresmon_cpu_system_seconds_total 0.25\n");
    ASSERT_CONTAINS(text, "# TYPE resmon_virtual_memory_max_bytes gauge\nresmon_virtual_memory_max_bytes 104857600.0\n");
    ASSERT_CONTAINS(text, "\nresmon_proportional_memory_max_bytes 1572864.0\n");
    ASSERT_CONTAINS(text, "\nresmon_swap_memory_max_bytes 0.0\n"); /* known zero is a value */
    ASSERT_CONTAINS(text, "# TYPE resmon_processes_max gauge\nresmon_processes_max 4\n");
    ASSERT_CONTAINS(text, "\nresmon_threads_max 9\n");
    ASSERT_CONTAINS(text, "# TYPE resmon_io_read_bytes_total counter\nresmon_io_read_bytes_total 4096.0\n");
    ASSERT_CONTAINS(text, "\nresmon_io_write_bytes_total 8192.0\n");
    ASSERT_CONTAINS(text, "\nresmon_io_storage_read_bytes_total 0.0\n");
    ASSERT_CONTAINS(text, "\nresmon_io_storage_write_bytes_total 12288.0\n");
    ASSERT_CONTAINS(text, "\nresmon_io_read_syscalls_total 3\n");
    ASSERT_CONTAINS(text, "\nresmon_io_write_syscalls_total 5\n");
    ASSERT_CONTAINS(text, "\nresmon_minor_page_faults_total 1000\n");
    ASSERT_CONTAINS(text, "\nresmon_major_page_faults_total 2\n");
    ASSERT_CONTAINS(text, "\nresmon_voluntary_context_switches_total 70\n");
    ASSERT_CONTAINS(text, "\nresmon_involuntary_context_switches_total 11\n");
    ASSERT_CONTAINS(text, "\nresmon_network_receive_bytes_total 10000000000.0\n");
    ASSERT_CONTAINS(text, "\nresmon_network_transmit_bytes_total 2000.0\n");
    ASSERT_CONTAINS(text, "\nresmon_network_receive_packets_total 30\n");
    ASSERT_CONTAINS(text, "\nresmon_network_transmit_packets_total 40\n");
    ASSERT_CONTAINS(text, "# HELP resmon_network_receive_bytes_total Bytes received by every interface of the "
                          "monitored process's network namespace");
    free(text);

    text = render(&s, NULL, RESMON_EXPOSITION_OPENMETRICS, NULL, 0);
    ASSERT_CONTAINS(text, "# TYPE resmon_io_read_bytes counter\n# UNIT resmon_io_read_bytes bytes\n");
    ASSERT_CONTAINS(text, "# TYPE resmon_processes_max gauge\n# HELP resmon_processes_max ");
    free(text);

    /* A group not asked for (NAN) leaves its series out, the others stay. */
    s.peak_pss_mb = NAN;
    s.net_rx_bytes = NAN;
    text = render(&s, NULL, RESMON_EXPOSITION_PROMETHEUS, NULL, 0);
    ASSERT_LACKS(text, "proportional");
    ASSERT_LACKS(text, "network_receive_bytes");
    ASSERT_CONTAINS(text, "\nresmon_network_transmit_bytes_total 2000.0\n");
    ASSERT_LACKS(text, "NaN");
    free(text);
}

/* A caller built against the 0.3 resmon.h has no metric-group fields: the
 * zeros they are extended with are not measurements. */
static void an_older_summary_has_no_metric_group_series(void **state)
{
    (void)state;
    resmon_summary s = summary_with_metric_groups();
    s.struct_size = offsetof(resmon_summary, hwm_error) + sizeof s.hwm_error;
    char *text = render(&s, NULL, RESMON_EXPOSITION_PROMETHEUS, NULL, 0);
    ASSERT_CONTAINS(text, "\nresmon_cpu_seconds_total 1.5\n");
    ASSERT_LACKS(text, "io_");
    ASSERT_LACKS(text, "resmon_processes_max");
    ASSERT_LACKS(text, "user_seconds");
    free(text);
}

static void openmetrics_has_units_families_and_eof(void **state)
{
    (void)state;
    resmon_summary s = cpu_only_summary();
    resmon_sample last = cpu_only_sample();
    char *text = render(&s, &last, RESMON_EXPOSITION_OPENMETRICS, NULL, 0);
    /* A counter's family drops _total; its one series keeps it. */
    ASSERT_CONTAINS(text, "# TYPE resmon_cpu_seconds counter\n# UNIT resmon_cpu_seconds seconds\n"
                          "# HELP resmon_cpu_seconds ");
    ASSERT_CONTAINS(text, "\nresmon_cpu_seconds_total 1.5\n");
    ASSERT_CONTAINS(text, "# TYPE resmon_resident_memory_bytes gauge\n# UNIT resmon_resident_memory_bytes bytes\n");
    ASSERT_CONTAINS(text, "# TYPE resmon_samples counter\n# HELP resmon_samples "); /* no unit */
    size_t n = strlen(text);
    assert_true(n > 6);
    assert_string_equal(text + n - 6, "# EOF\n");
    assert_true(strstr(text, "# EOF") == text + n - 6); /* only at the end */
    free(text);
}

static void label_values_are_escaped(void **state)
{
    (void)state;
    resmon_summary s = cpu_only_summary();
    resmon_label labels[] = {{"path", "C:\\dir \"x\"\nnext"}, {"host", "n\xc3\xa9ud"}};
    for (int format = 0; format < 2; format++) {
        char *text = render(&s, NULL, (resmon_exposition_format)format, labels, 2);
        ASSERT_CONTAINS(text, "resmon_samples_total{path=\"C:\\\\dir \\\"x\\\"\\nnext\",host=\"n\xc3\xa9ud\"} 42\n");
        free(text);
    }
}

/* A Latin-1 name, a comm cut mid-character, a stray continuation byte, an
 * overlong '/', a surrogate: each byte that starts no well-formed sequence
 * becomes U+FFFD, so a scraper never rejects the exposition. */
static void label_values_that_are_not_utf8_get_u_fffd(void **state)
{
    (void)state;
    resmon_summary s = cpu_only_summary();
    resmon_label labels[] = {{"a", "caf\xe9"}, {"b", "abcdefghijklmn\xc3"}, {"c", "x\x80y"},
                             {"d", "\xc0\xaf"}, {"e", "\xed\xa0\x80\"q"}};
    for (int format = 0; format < 2; format++) {
        char *text = render(&s, NULL, (resmon_exposition_format)format, labels, 5);
        ASSERT_CONTAINS(text, "{a=\"caf\xef\xbf\xbd\",b=\"abcdefghijklmn\xef\xbf\xbd\",c=\"x\xef\xbf\xbdy\","
                              "d=\"\xef\xbf\xbd\xef\xbf\xbd\",e=\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\\\"q\"}");
        free(text);
    }
}

static void invalid_labels_are_refused(void **state)
{
    (void)state;
    resmon_summary s = cpu_only_summary();
    char buf[64] = "untouched";
    const char *bad_names[] = {"", "1st", "__reserved", "with-dash", "dotted.name", "sp ace", "caf\xc3\xa9"};
    for (size_t i = 0; i < sizeof bad_names / sizeof bad_names[0]; i++) {
        assert_false(resmon_label_name_valid(bad_names[i]));
        resmon_label l = {bad_names[i], "v"};
        assert_int_equal(resmon_exposition_render(&s, NULL, 0, RESMON_EXPOSITION_PROMETHEUS, &l, 1, buf, sizeof buf),
                         -EINVAL);
    }
    assert_false(resmon_label_name_valid(NULL));
    const char *good_names[] = {"_x", "job", "instance_2", "A"};
    for (size_t i = 0; i < sizeof good_names / sizeof good_names[0]; i++)
        assert_true(resmon_label_name_valid(good_names[i]));
    resmon_label twice[] = {{"job", "a"}, {"job", "b"}};
    assert_int_equal(resmon_exposition_render(&s, NULL, 0, 0, twice, 2, buf, sizeof buf), -EINVAL);
    resmon_label no_value = {"job", NULL};
    assert_int_equal(resmon_exposition_render(&s, NULL, 0, 0, &no_value, 1, buf, sizeof buf), -EINVAL);
    assert_int_equal(resmon_exposition_render(&s, NULL, 0, 0, NULL, 1, buf, sizeof buf), -EINVAL);
    assert_int_equal(resmon_exposition_render(NULL, NULL, 0, 0, NULL, 0, buf, sizeof buf), -EINVAL);
    assert_int_equal(resmon_exposition_render(&s, NULL, 0, 0, NULL, 0, NULL, 1), -EINVAL);
    assert_int_equal(resmon_exposition_render(&s, NULL, 0, (resmon_exposition_format)7, NULL, 0, buf, sizeof buf),
                     -EINVAL);
    assert_string_equal(buf, "untouched");
}

static void short_buffers_get_a_terminated_prefix(void **state)
{
    (void)state;
    resmon_summary s = cpu_only_summary();
    resmon_sample last = cpu_only_sample();
    resmon_label labels[] = {{"command", "a long enough command name"}};
    char *full = render(&s, &last, RESMON_EXPOSITION_OPENMETRICS, labels, 1);
    size_t n = strlen(full);
    char *buf = malloc(n + 1);
    assert_non_null(buf);
    for (size_t cap = 0; cap <= n + 1; cap++) {
        memset(buf, 'Z', n + 1);
        int rc = resmon_exposition_render(&s, &last, sizeof(resmon_sample), RESMON_EXPOSITION_OPENMETRICS, labels, 1, buf, cap);
        assert_int_equal(rc, (int)n);
        if (cap == 0) {
            assert_int_equal(buf[0], 'Z'); /* nothing written */
            continue;
        }
        size_t kept = cap - 1 < n ? cap - 1 : n;
        assert_int_equal(buf[kept], '\0');
        assert_memory_equal(buf, full, kept);
        if (cap <= n)
            assert_int_equal(buf[cap], 'Z'); /* never past cap */
    }
    free(buf);
    free(full);
}

/* What a caller built against another resmon.h passes (resmon.h,
 * "Versioning"): a larger summary or sample renders as the library's own when
 * its unknown tail is zero and is refused otherwise; a summary whose
 * struct_size was never set, or a sample cut short, is refused. */
typedef struct newer_summary {
    resmon_summary known;
    double future;
} newer_summary;

typedef struct newer_sample {
    resmon_sample known;
    double future;
} newer_sample;

static void callers_structs_follow_the_growth_rules(void **state)
{
    (void)state;
    resmon_summary s = cpu_only_summary();
    resmon_sample last = cpu_only_sample();
    char *own = render(&s, &last, RESMON_EXPOSITION_PROMETHEUS, NULL, 0);

    newer_summary wide_s;
    memset(&wide_s, 0, sizeof wide_s);
    wide_s.known = s;
    wide_s.known.struct_size = sizeof wide_s;
    newer_sample wide_l;
    memset(&wide_l, 0, sizeof wide_l);
    wide_l.known = last;
    char buf[8192];
    int n = resmon_exposition_render(&wide_s.known, &wide_l.known, sizeof wide_l, RESMON_EXPOSITION_PROMETHEUS,
                                     NULL, 0, buf, sizeof buf);
    assert_true(n > 0 && (size_t)n < sizeof buf);
    assert_string_equal(buf, own);

    wide_l.future = 1.0;
    assert_int_equal(resmon_exposition_render(&wide_s.known, &wide_l.known, sizeof wide_l,
                                              RESMON_EXPOSITION_PROMETHEUS, NULL, 0, buf, sizeof buf),
                     -E2BIG);
    wide_s.future = 1.0;
    assert_int_equal(resmon_exposition_render(&wide_s.known, NULL, 0, RESMON_EXPOSITION_PROMETHEUS, NULL, 0, buf,
                                              sizeof buf),
                     -E2BIG);
    assert_int_equal(resmon_exposition_render(&s, &last, sizeof(double), RESMON_EXPOSITION_PROMETHEUS, NULL, 0,
                                              buf, sizeof buf),
                     -EINVAL);
    s.struct_size = 0; /* filled by hand and struct_size forgotten */
    assert_int_equal(resmon_exposition_render(&s, NULL, 0, RESMON_EXPOSITION_PROMETHEUS, NULL, 0, buf, sizeof buf),
                     -EINVAL);
    free(own);
}

/* A value of one unlabelled series in rendered text. */
static double series_value(const char *text, const char *name)
{
    char needle[128];
    snprintf(needle, sizeof needle, "\n%s ", name);
    const char *p = strstr(text, needle);
    if (!p) {
        print_error("no series %s in:\n%s\n", name, text);
        fail();
    }
    return strtod(p + strlen(needle), NULL);
}

static void a_monitor_renders_its_latest_sample_and_summary(void **state)
{
    (void)state;
    /* A ring of 3 wraps several times, so "latest" must follow the ring. */
    resmon_options opts = {.struct_size = sizeof(resmon_options), .sample_interval_sec = 0.002, .max_samples = 3,
                           .metrics = RESMON_METRIC_IO | RESMON_METRIC_COUNTS | RESMON_METRIC_CPU_SPLIT};
    resmon_monitor *m = test_monitor_new(&opts);
    assert_non_null(m);
    assert_int_equal(resmon_monitor_start(m), 0);
    struct timespec nap = {0, 2000000};
    while (test_summary(m).num_samples < 10)
        nanosleep(&nap, NULL); /* waiting for a count, not for a time */
    /* rendering while the sampler runs is safe (TSan checks this) */
    char scratch[8192];
    assert_true(resmon_monitor_exposition(m, RESMON_EXPOSITION_PROMETHEUS, NULL, 0, scratch, sizeof scratch) > 0);
    assert_int_equal(resmon_monitor_stop(m), 0);

    char text[8192];
    int n = resmon_monitor_exposition(m, RESMON_EXPOSITION_PROMETHEUS, NULL, 0, text + 1, sizeof text - 1);
    assert_true(n > 0 && (size_t)n < sizeof text - 1);
    text[0] = '\n'; /* every series now follows a newline */
    resmon_sample kept[3];
    assert_int_equal(test_samples(m, kept, 3), 3);
    resmon_summary s = test_summary(m);
    ASSERT_DOUBLE_EQ(series_value(text, "resmon_resident_memory_bytes"), kept[2].rss_mb * 1048576.0);
    ASSERT_DOUBLE_EQ(series_value(text, "resmon_resident_memory_max_bytes"), s.peak_rss_mb * 1048576.0);
    ASSERT_DOUBLE_EQ(series_value(text, "resmon_cpu_seconds_total"), s.cpu_time_sec);
    ASSERT_DOUBLE_EQ(series_value(text, "resmon_samples_total"), (double)s.num_samples);
    ASSERT_DOUBLE_EQ(series_value(text, "resmon_io_read_bytes_total"), s.io_rchar);
    ASSERT_DOUBLE_EQ(series_value(text, "resmon_cpu_user_seconds_total"), s.cpu_user_sec);
    ASSERT_DOUBLE_EQ(series_value(text, "resmon_threads_max"), s.peak_nthreads);
    assert_true(s.peak_nthreads >= 2); /* this thread and the sampler's */
    ASSERT_LACKS(text, "proportional"); /* a group not asked for */
    assert_int_equal(resmon_monitor_exposition(NULL, 0, NULL, 0, text, sizeof text), -EINVAL);
    resmon_monitor_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(prometheus_text_has_help_type_and_base_units),
        cmocka_unit_test(unknown_fields_are_left_out),
        cmocka_unit_test(a_count_out_of_range_is_printed_as_it_is),
        cmocka_unit_test(gpu_and_energy_in_base_units),
        cmocka_unit_test(metric_groups_in_base_units_with_prometheus_names),
        cmocka_unit_test(an_older_summary_has_no_metric_group_series),
        cmocka_unit_test(openmetrics_has_units_families_and_eof),
        cmocka_unit_test(label_values_are_escaped),
        cmocka_unit_test(label_values_that_are_not_utf8_get_u_fffd),
        cmocka_unit_test(invalid_labels_are_refused),
        cmocka_unit_test(short_buffers_get_a_terminated_prefix),
        cmocka_unit_test(callers_structs_follow_the_growth_rules),
        cmocka_unit_test(a_monitor_renders_its_latest_sample_and_summary),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
