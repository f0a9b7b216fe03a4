/*
 * test_json.c -- resmon_summary_to_json / _from_json: the seed's exact keys,
 * exact round trips (doubles, and counts up to 2^64-1), what Python writes,
 * and the inputs a parser must survive: deep nesting, huge numbers, duplicate
 * keys, NUL bytes, invalid escapes, input not NUL-terminated or shorter than
 * its text, JSONTestSuite's must-reject (n_) cases, oversized input.
 */
#include "resmon.h"
#include "test_util.h"

#include "figure_fields.h"
#include "figure_list.h"
#include "json_number.h"
#include "metric_list.h"
#include "summary.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the seed's to_dict() followed by json.dumps() writes (generated with
 * CPython 3.11 from the seed's field rules). */
static const char *python_minimal =
    "{\"peak_rss_mb\": 512.25, \"mean_rss_mb\": 300.1, \"peak_gpu_mem_mb\": null, "
    "\"mean_gpu_util\": null, \"memory_growth_mb\": -3.5, \"num_samples\": 42, \"duration_sec\": 4.2}";
static const char *python_with_gpu =
    "{\"peak_rss_mb\": 512.25, \"mean_rss_mb\": 300.1, \"peak_gpu_mem_mb\": 8123.0, "
    "\"mean_gpu_util\": 87.5, \"memory_growth_mb\": 0.0, \"num_samples\": 1001, \"duration_sec\": "
    "10.000123, \"mean_gpu_clock_mhz\": 1980.0, \"mean_gpu_power_w\": 612.3}";
static const char *python_zeroed =
    "{\"peak_rss_mb\": 0.0, \"mean_rss_mb\": 0.0, \"peak_gpu_mem_mb\": null, \"mean_gpu_util\": "
    "null, \"memory_growth_mb\": 0.0, \"num_samples\": 0, \"duration_sec\": 0.0}";
static const char *python_awkward_floats =
    "{\"peak_rss_mb\": 0.1, \"mean_rss_mb\": 0.3333333333333333, \"peak_gpu_mem_mb\": null, "
    "\"mean_gpu_util\": null, \"memory_growth_mb\": 1e-07, \"num_samples\": 7, \"duration_sec\": "
    "123456789.123}";
/* Where printf's %g and Python's repr pick different notations, and a
 * subnormal whose shortest text has one digit. */
static const char *python_large_and_tiny =
    "{\"peak_rss_mb\": 1000000000000000.0, \"mean_rss_mb\": 1234567890123456.8, \"peak_gpu_mem_mb\": 1e+16, "
    "\"mean_gpu_util\": 5e-324, \"memory_growth_mb\": -1.2345678901234568e+16, \"num_samples\": 2, "
    "\"duration_sec\": 0.0001}";

static resmon_summary parse_ok(const char *text)
{
    resmon_summary s;
    char err[256];
    int rc = resmon_summary_from_json(text, strlen(text), &s, sizeof s, err, sizeof err);
    if (rc != 0) {
        print_error("rejected %s: %s\n", text, err);
        fail();
    }
    return s;
}

static void to_json_matches_python_byte_for_byte(void **state)
{
    (void)state;
    const char *cases[] = {python_minimal, python_with_gpu, python_zeroed, python_awkward_floats,
                           python_large_and_tiny};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        resmon_summary s = parse_ok(cases[i]);
        char out[1024];
        int n = resmon_summary_to_json(&s, out, sizeof out);
        assert_int_equal(n, (int)strlen(cases[i]));
        assert_string_equal(out, cases[i]);
    }
}

static void from_json_reads_python_values(void **state)
{
    (void)state;
    resmon_summary s = parse_ok(python_with_gpu);
    ASSERT_DOUBLE_EQ(s.peak_rss_mb, 512.25);
    ASSERT_DOUBLE_EQ(s.mean_rss_mb, 300.1);
    ASSERT_DOUBLE_EQ(s.peak_gpu_mem_mb, 8123);
    ASSERT_DOUBLE_EQ(s.mean_gpu_util, 87.5);
    assert_int_equal(s.num_samples, 1001);
    ASSERT_DOUBLE_EQ(s.duration_sec, 10.000123);
    ASSERT_DOUBLE_EQ(s.mean_gpu_clock_mhz, 1980);
    ASSERT_DOUBLE_EQ(s.mean_gpu_power_w, 612.3);
    ASSERT_NAN(s.hwm_rss_mb);
    s = parse_ok(python_minimal);
    ASSERT_NAN(s.peak_gpu_mem_mb);
    ASSERT_NAN(s.mean_gpu_util);
    ASSERT_NAN(s.mean_gpu_clock_mhz);
}

static void from_json_is_lenient_where_python_is(void **state)
{
    (void)state;
    /* integers for floats, optional keys missing, any order, unknown keys,
     * duplicate keys (the last wins, as in Python), surrounding space */
    resmon_summary s = parse_ok(
        "  \n{\"num_samples\": 3, \"extra\": {\"nested\": [1, 2, {\"x\": null}]}, \"duration_sec\": 2, "
        "\"memory_growth_mb\": -1, \"mean_rss_mb\": 10, \"peak_rss_mb\": 1, \"peak_rss_mb\": 11}\t\r\n");
    ASSERT_DOUBLE_EQ(s.peak_rss_mb, 11);
    ASSERT_DOUBLE_EQ(s.duration_sec, 2);
    ASSERT_NAN(s.peak_gpu_mem_mb);
    assert_int_equal(s.num_samples, 3);
    s = parse_ok("{\"peak_rss_mb\": 1, \"mean_rss_mb\": 1, \"memory_growth_mb\": 0, "
                 "\"num_samples\": 5.0, \"duration_sec\": 1E2}");
    assert_int_equal(s.num_samples, 5);
    ASSERT_DOUBLE_EQ(s.duration_sec, 100);
}

static void doubles_round_trip_exactly(void **state)
{
    (void)state;
    srand(12345);
    for (int i = 0; i < 20000; i++) {
        resmon_summary s;
        memset(&s, 0, sizeof s);
        s.struct_size = sizeof s;
        uint64_t bits = ((uint64_t)rand() << 42) ^ ((uint64_t)rand() << 21) ^ (uint64_t)rand();
        double v;
        memcpy(&v, &bits, sizeof v);
        if (!isfinite(v))
            v = 1.0 / 3.0;
        s.peak_rss_mb = v;
        s.mean_rss_mb = (double)rand() / 7.0;
        s.memory_growth_mb = -v / 3.0;
        s.duration_sec = 1e-300 * rand();
        s.peak_gpu_mem_mb = s.mean_gpu_util = s.mean_gpu_clock_mhz = NAN;
        s.mean_gpu_power_w = 0.1 * i;
        s.num_samples = bits >> 1; /* Jansson integers are int64_t */
        s.hwm_rss_mb = v * 2;
        s.hwm_scope = isfinite(v * 2) ? RESMON_HWM_WINDOW : RESMON_HWM_UNKNOWN;
        char text[2048]; /* every metric-group field is 0 here, so written */
        int n = resmon_summary_to_json(&s, text, sizeof text);
        assert_true(n > 0 && n < (int)sizeof text);
        resmon_summary back = parse_ok(text);
        ASSERT_DOUBLE_EQ(back.peak_rss_mb, s.peak_rss_mb);
        ASSERT_DOUBLE_EQ(back.mean_rss_mb, s.mean_rss_mb);
        ASSERT_DOUBLE_EQ(back.memory_growth_mb, s.memory_growth_mb);
        ASSERT_DOUBLE_EQ(back.duration_sec, s.duration_sec);
        ASSERT_DOUBLE_EQ(back.mean_gpu_power_w, s.mean_gpu_power_w);
        assert_true(back.num_samples == s.num_samples);
        ASSERT_NAN(back.mean_gpu_clock_mhz);
        if (s.hwm_scope == RESMON_HWM_WINDOW)
            ASSERT_DOUBLE_EQ(back.hwm_rss_mb, s.hwm_rss_mb);
    }
}

static void to_json_writes_hwm_only_when_known(void **state)
{
    (void)state;
    resmon_summary s = parse_ok(python_minimal);
    char text[1024];
    resmon_summary_to_json(&s, text, sizeof text);
    assert_null(strstr(text, "hwm"));
    s.hwm_rss_mb = 640.5;
    s.hwm_scope = RESMON_HWM_LIFETIME;
    resmon_summary_to_json(&s, text, sizeof text);
    assert_non_null(strstr(text, ", \"duration_sec\": 4.2, \"hwm_rss_mb\": 640.5, \"hwm_scope\": \"lifetime\"}"));
    resmon_summary back = parse_ok(text);
    assert_int_equal(back.hwm_scope, RESMON_HWM_LIFETIME);
}

static void energy_and_process_memory_round_trip_when_known(void **state)
{
    (void)state;
    resmon_summary s = parse_ok(python_with_gpu);
    s.gpu_energy_j = 1234.5;
    s.gpu_energy_source = RESMON_ENERGY_COUNTER;
    s.cpu_energy_j = 88.25;
    s.peak_gpu_proc_mem_mb = 4096;
    char text[1024];
    resmon_summary_to_json(&s, text, sizeof text);
    assert_non_null(strstr(text, "\"gpu_energy_j\": 1234.5, \"gpu_energy_source\": \"counter\", "
                                 "\"cpu_energy_j\": 88.25, \"peak_gpu_proc_mem_mb\": 4096.0}"));
    resmon_summary back = parse_ok(text);
    ASSERT_DOUBLE_EQ(back.gpu_energy_j, 1234.5);
    assert_int_equal(back.gpu_energy_source, RESMON_ENERGY_COUNTER);
    ASSERT_DOUBLE_EQ(back.cpu_energy_j, 88.25);
    ASSERT_DOUBLE_EQ(back.peak_gpu_proc_mem_mb, 4096);
    s = parse_ok(python_minimal);
    ASSERT_NAN(s.gpu_energy_j);
    ASSERT_NAN(s.cpu_energy_j);
    resmon_summary_to_json(&s, text, sizeof text);
    assert_null(strstr(text, "energy"));
}

/* The metric-group keys follow every other library key, each only when
 * known, and read back; a summary without them writes none. */
static void metric_group_keys_round_trip_when_known(void **state)
{
    (void)state;
    resmon_summary s = parse_ok(python_minimal);
    ASSERT_NAN(s.peak_pss_mb);
    ASSERT_NAN(s.io_wchar);
    ASSERT_NAN(s.net_tx_packets);
    char text[2048];
    resmon_summary_to_json(&s, text, sizeof text);
    assert_null(strstr(text, "pss"));
    assert_null(strstr(text, "io_"));
    s.cpu_energy_j = 88.25;
    s.peak_pss_mb = 210.5;
    s.io_wchar = 8388609;
    s.peak_nthreads = 9;
    s.cpu_sys_sec = 0.25;
    s.net_tx_packets = 100;
    resmon_summary_to_json(&s, text, sizeof text);
    assert_non_null(strstr(text, "\"cpu_energy_j\": 88.25, \"peak_pss_mb\": 210.5, \"io_wchar\": 8388609.0, "
                                 "\"peak_nthreads\": 9.0, \"cpu_sys_sec\": 0.25, \"net_tx_packets\": 100.0}"));
    resmon_summary back = parse_ok(text);
    ASSERT_DOUBLE_EQ(back.peak_pss_mb, 210.5);
    ASSERT_DOUBLE_EQ(back.io_wchar, 8388609);
    ASSERT_DOUBLE_EQ(back.peak_nthreads, 9);
    ASSERT_DOUBLE_EQ(back.cpu_sys_sec, 0.25);
    ASSERT_DOUBLE_EQ(back.net_tx_packets, 100);
    ASSERT_NAN(back.io_rchar);
}

/* A measured window's CPU figures come after the seed's keys, in one order,
 * and read back; a seed summary (no CPU) writes none of them. */
static void cpu_keys_round_trip_after_the_seed_keys(void **state)
{
    (void)state;
    resmon_summary s = parse_ok(python_minimal);
    ASSERT_NAN(s.mean_cpu_percent);
    ASSERT_NAN(s.cpu_time_sec);
    assert_int_equal(s.skipped_slots, 0);
    s.mean_cpu_percent = 93.5;
    s.peak_cpu_percent = 200.25;
    s.cpu_time_sec = 3.927;
    s.skipped_slots = 12;
    s.hwm_rss_mb = 640.5;
    s.hwm_scope = RESMON_HWM_WINDOW;
    char text[1024];
    resmon_summary_to_json(&s, text, sizeof text);
    assert_string_equal(text, "{\"peak_rss_mb\": 512.25, \"mean_rss_mb\": 300.1, \"peak_gpu_mem_mb\": null, "
                              "\"mean_gpu_util\": null, \"memory_growth_mb\": -3.5, \"num_samples\": 42, "
                              "\"duration_sec\": 4.2, \"mean_cpu_percent\": 93.5, \"peak_cpu_percent\": 200.25, "
                              "\"cpu_time_sec\": 3.927, \"skipped_slots\": 12, \"hwm_rss_mb\": 640.5, "
                              "\"hwm_scope\": \"window\"}");
    resmon_summary back = parse_ok(text);
    ASSERT_DOUBLE_EQ(back.mean_cpu_percent, 93.5);
    ASSERT_DOUBLE_EQ(back.peak_cpu_percent, 200.25);
    ASSERT_DOUBLE_EQ(back.cpu_time_sec, 3.927);
    assert_int_equal(back.skipped_slots, 12);
}

static void to_json_has_snprintf_semantics(void **state)
{
    (void)state;
    resmon_summary s = parse_ok(python_with_gpu);
    int full = resmon_summary_to_json(&s, NULL, 0);
    assert_int_equal(full, (int)strlen(python_with_gpu));
    char small[16];
    memset(small, 'x', sizeof small);
    assert_int_equal(resmon_summary_to_json(&s, small, sizeof small), full);
    assert_int_equal(strlen(small), sizeof small - 1);
    assert_memory_equal(small, python_with_gpu, sizeof small - 1);
    char one[1] = {'x'};
    assert_int_equal(resmon_summary_to_json(&s, one, 1), full);
    assert_int_equal(one[0], '\0');
    assert_int_equal(resmon_summary_to_json(NULL, small, sizeof small), -EINVAL);
    assert_int_equal(resmon_summary_to_json(&s, NULL, 5), -EINVAL);
}

#define BASE_KEYS "\"peak_rss_mb\": 1, \"mean_rss_mb\": 1, \"memory_growth_mb\": 0, \"duration_sec\": 1"

struct rejection {
    const char *text;
    const char *message_part; /* the error must name the key or position */
};

static void from_json_rejects_bad_input(void **state)
{
    (void)state;
    static const struct rejection cases[] = {
        {"", "end of input"},
        {"   ", "end of input"},
        {"{", "end of input"},
        {"{\"peak_rss_mb\": 1", "end of input"},
        {"[]", "object"},
        {"42 ", "object"},
        {"null", "object"},
        {"{\"peak_rss_mb\": 1,}", "byte"},
        {"{'peak_rss_mb': 1}", "byte"},
        {"{\"peak_rss_mb\": 01}", "byte"},
        {"{\"peak_rss_mb\": .5}", "byte"},
        {"{\"peak_rss_mb\": 1.}", "byte"},
        {"{\"peak_rss_mb\": +1}", "byte"},
        {"{\"peak_rss_mb\": 0x10}", "byte"},
        {"{\"a\": \"\\x41\"}", "byte"},        /* invalid escape */
        {"{\"a\": \"\\uD800\"}", ""},          /* lone surrogate: rejected or keyed-missing */
        {"{\"a\": \"tab\there\"}", "byte"},    /* raw control character in a string */
        {"{\"a\": tru}", "byte"},
        {"{\"a\" 1}", "byte"},
        {"{" BASE_KEYS "}", "\"num_samples\""},
        {"{\"mean_rss_mb\": 1, \"memory_growth_mb\": 0, \"num_samples\": 1, \"duration_sec\": 1}", "\"peak_rss_mb\""},
        {"{" BASE_KEYS ", \"num_samples\": -1}", "\"num_samples\""},
        {"{" BASE_KEYS ", \"num_samples\": 2.5}", "\"num_samples\""},
        {"{" BASE_KEYS ", \"num_samples\": \"3\"}", "\"num_samples\""},
        {"{" BASE_KEYS ", \"num_samples\": true}", "\"num_samples\""},
        {"{" BASE_KEYS ", \"num_samples\": null}", "\"num_samples\""},
        {"{" BASE_KEYS ", \"num_samples\": 1e30}", "\"num_samples\""},
        {"{\"peak_rss_mb\": \"1\", \"mean_rss_mb\": 1, \"memory_growth_mb\": 0, \"num_samples\": 1, \"duration_sec\": 1}", "\"peak_rss_mb\""},
        {"{\"peak_rss_mb\": null, \"mean_rss_mb\": 1, \"memory_growth_mb\": 0, \"num_samples\": 1, \"duration_sec\": 1}", "\"peak_rss_mb\""},
        {"{" BASE_KEYS ", \"num_samples\": 1, \"mean_gpu_util\": [1]}", "\"mean_gpu_util\""},
        {"{" BASE_KEYS ", \"num_samples\": 1, \"mean_gpu_util\": NaN}", ""},
        {"{" BASE_KEYS ", \"num_samples\": 1, \"mean_gpu_util\": Infinity}", ""},
        {"{" BASE_KEYS ", \"num_samples\": 1, \"mean_gpu_util\": -Infinity}", ""},
        {"{" BASE_KEYS ", \"num_samples\": 1, \"mean_gpu_util\": 1e999}", ""},
        {"{" BASE_KEYS ", \"num_samples\": 1} x", "trailing text at byte"},
        {"{" BASE_KEYS ", \"num_samples\": 1}{}", "trailing text at byte"},
        {"{" BASE_KEYS ", \"num_samples\": 1, \"hwm_rss_mb\": 5}", "hwm"},
        {"{" BASE_KEYS ", \"num_samples\": 1, \"hwm_rss_mb\": 5, \"hwm_scope\": \"forever\"}", "\"hwm_scope\""},
        {"{" BASE_KEYS ", \"num_samples\": 1, \"gpu_energy_j\": 5, \"gpu_energy_source\": \"guess\"}", "\"gpu_energy_source\""},
        {"{" BASE_KEYS ", \"num_samples\": 1, \"cpu_energy_j\": \"5\"}", "\"cpu_energy_j\""},
        {"{\"peak_rss_mb\": 1, \"mean_rss_mb\": 1, \"memory_growth_mb\": 0, \"num_samples\": 1, \"duration_sec\": 1 /* c */}", "byte"},
    };
    int failures = 0;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        resmon_summary s;
        memset(&s, 0x5a, sizeof s);
        resmon_summary untouched = s;
        char err[256] = "";
        int rc = resmon_summary_from_json(cases[i].text, strlen(cases[i].text), &s, sizeof s, err, sizeof err);
        if (rc != -EINVAL || strstr(err, cases[i].message_part) == NULL || err[0] == '\0') {
            print_error("case %zu <%s>: rc %d, message \"%s\", wanted -EINVAL naming \"%s\"\n", i,
                        cases[i].text, rc, err, cases[i].message_part);
            failures++;
        }
        assert_memory_equal(&s, &untouched, sizeof s); /* a failed parse leaves *out alone */
    }
    assert_int_equal(failures, 0);
}

/* Parses a valid summary whose unknown key "extra" holds value. */
static int parse_with_extra(const char *value, char *err, size_t errcap)
{
    char text[512];
    int n = snprintf(text, sizeof text,
                     "{\"peak_rss_mb\": 1, \"mean_rss_mb\": 1, \"memory_growth_mb\": 0, \"num_samples\": 1, "
                     "\"duration_sec\": 1, \"extra\": %s}",
                     value);
    resmon_summary out;
    return resmon_summary_from_json(text, (size_t)n, &out, sizeof out, err, errcap);
}

/* Malformed values in the manner of JSONTestSuite's n_ (must-reject) cases,
 * each placed as the value of an unknown key in an otherwise valid summary:
 * only the parser itself can reject them there. */
static void from_json_rejects_invalid_values_anywhere(void **state)
{
    (void)state;
    static const char *const bad_values[] = {
        "-00.0", "00", "-01", "1.", ".5", "+1", "1e", "1e+", "0x1F", "1_000", "Infinity", "-Infinity", "NaN",
        "-", "[1,,2]", "[,1]", "[1,]", "[1 2]", "{\"a\" 1}", "{\"a\":1,}", "{,}", "{1:2}", "{\"a\":\"b\" 123}",
        "'single'", "\"\\a\"", "\"\\x41\"", "\"\\u12\"", "\"\\uZZZZ\"", "\"\\\"", "\"unterminated",
        "\"tab\there\"", "\"new\nline\"", "tru", "nul", "True", "None", "[", "]", "{", "}", "[1]]", "\"\\u0000\"",
        "\"\xff\"", "\"\xc3\x28\"", "/* c */ 1", "1 // c",
    };
    for (size_t i = 0; i < sizeof bad_values / sizeof *bad_values; i++) {
        char err[128];
        if (parse_with_extra(bad_values[i], err, sizeof err) != -EINVAL) {
            print_error("accepted a malformed value: %s\n", bad_values[i]);
            fail();
        }
    }
    /* and the valid neighbours of some of them are accepted */
    static const char *const good_values[] = {"-0.0", "0", "1.5e+3", "[1, 2]", "{\"a\": [true, false, null]}",
                                              "\"\\u00e9\\n\"", "\"\xc3\xa9\"", "1E-2"};
    for (size_t i = 0; i < sizeof good_values / sizeof *good_values; i++) {
        char err[128];
        if (parse_with_extra(good_values[i], err, sizeof err) != 0) {
            print_error("rejected a valid value %s: %s\n", good_values[i], err);
            fail();
        }
    }
}

static void from_json_rejects_deep_nesting(void **state)
{
    (void)state;
    size_t depth = 100000;
    char *text = malloc(2 * depth + 1);
    memset(text, '[', depth);
    memset(text + depth, ']', depth);
    text[2 * depth] = '\0';
    resmon_summary s;
    char err[128];
    assert_int_equal(resmon_summary_from_json(text, 2 * depth, &s, sizeof s, err, sizeof err), -EINVAL);
    free(text);
}

static void from_json_honours_len(void **state)
{
    (void)state;
    resmon_summary s;
    char err[128];
    /* Shorter than the text: the cut-off object is incomplete. */
    size_t cut = strlen(python_minimal) - 1;
    char *exact = malloc(cut); /* not NUL-terminated: ASan catches any overread */
    memcpy(exact, python_minimal, cut);
    assert_int_equal(resmon_summary_from_json(exact, cut, &s, sizeof s, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "end of input"));
    free(exact);
    /* Exactly the text, without a terminator: accepted. */
    size_t len = strlen(python_minimal);
    char *unterminated = malloc(len);
    memcpy(unterminated, python_minimal, len);
    assert_int_equal(resmon_summary_from_json(unterminated, len, &s, sizeof s, err, sizeof err), 0);
    free(unterminated);
    /* A NUL inside the given length is not the end of the input. */
    char with_nul[512];
    int n = snprintf(with_nul, sizeof with_nul, "%s", python_minimal);
    with_nul[n] = '\0';
    with_nul[n + 1] = '}';
    assert_int_equal(resmon_summary_from_json(with_nul, (size_t)n + 2, &s, sizeof s, err, sizeof err), -EINVAL);
    char nul_in_string[] = "{\"peak_rss_mb\": 1, \"mean_rss_mb\": 1, \"memory_growth_mb\": 0, \"num_samples\": 1, \"duration_sec\": 1, \"x\": \"a\0b\"}";
    assert_int_equal(resmon_summary_from_json(nul_in_string, sizeof nul_in_string - 1, &s, sizeof s, err, sizeof err), -EINVAL);
    /* Bad arguments */
    assert_int_equal(resmon_summary_from_json(NULL, 5, &s, sizeof s, err, sizeof err), -EINVAL);
    assert_int_equal(resmon_summary_from_json(python_minimal, strlen(python_minimal), NULL, sizeof(resmon_summary), err, sizeof err), -EINVAL);
    /* err may be absent */
    assert_int_equal(resmon_summary_from_json("x", 1, &s, sizeof s, NULL, 0), -EINVAL);
}

static void from_json_survives_random_bytes(void **state)
{
    (void)state;
    static const char alphabet[] = "{}[]\":,0123456789.eE-+ntrufalse\\u \x00\xff";
    srand(7);
    for (int i = 0; i < 20000; i++) {
        size_t len = (size_t)(rand() % 64);
        unsigned char *bytes = malloc(len ? len : 1);
        for (size_t k = 0; k < len; k++)
            bytes[k] = (unsigned char)alphabet[rand() % (int)(sizeof alphabet - 1)];
        resmon_summary s;
        char err[64];
        int rc = resmon_summary_from_json((const char *)bytes, len, &s, sizeof s, err, sizeof err);
        assert_true(rc == 0 || rc == -EINVAL);
        free(bytes);
    }
}

/* Counts up to 2^64-1 are written as integers; each must read back exactly,
 * beyond int64 (Jansson's integers) and beyond 2^53 (a double's). */
static void counts_round_trip_up_to_uint64_max(void **state)
{
    (void)state;
    static const uint64_t counts[] = {0,
                                      1,
                                      (1ull << 53) - 1,
                                      1ull << 53,
                                      (1ull << 53) + 1,
                                      (1ull << 63) - 1,
                                      1ull << 63,
                                      (1ull << 63) + 1,
                                      UINT64_MAX - 1,
                                      UINT64_MAX};
    for (size_t i = 0; i < sizeof counts / sizeof *counts; i++) {
        resmon_summary s = {.struct_size = sizeof(resmon_summary)};
        s.peak_gpu_mem_mb = s.mean_gpu_util = s.mean_gpu_clock_mhz = s.mean_gpu_power_w = NAN;
        s.hwm_rss_mb = s.gpu_energy_j = s.cpu_energy_j = s.peak_gpu_proc_mem_mb = NAN;
        s.num_samples = counts[i];
        char text[2048], err[128] = ""; /* room for the metric-group keys, zero (known) here */
        int n = resmon_summary_to_json(&s, text, sizeof text);
        assert_true(n > 0 && (size_t)n < sizeof text);
        resmon_summary back;
        int rc = resmon_summary_from_json(text, (size_t)n, &back, sizeof back, err, sizeof err);
        if (rc != 0 || back.num_samples != counts[i]) {
            print_error("%s -> rc %d (%s), num_samples %llu\n", text, rc, err,
                        (unsigned long long)back.num_samples);
            fail();
        }
    }
}

static uint64_t parse_count(const char *members, int *rc, char *err, size_t errcap)
{
    char text[512];
    int n = snprintf(text, sizeof text, "{" BASE_KEYS ", %s}", members);
    resmon_summary s = {0};
    *rc = resmon_summary_from_json(text, (size_t)n, &s, sizeof s, err, errcap);
    return s.num_samples;
}

/* The exact reading of a large count finds the top-level key the parser
 * kept: not one nested deeper or inside a string, the last of duplicates,
 * and a key spelled with escapes counts as the key. */
static void large_counts_are_read_from_the_key_the_parser_kept(void **state)
{
    (void)state;
    char err[128];
    int rc;
    uint64_t n = parse_count("\"x\": {\"num_samples\": 7}, \"s\": \"\\\"num_samples\\\": 8, \", "
                             "\"num_samples\": 9007199254740993",
                             &rc, err, sizeof err);
    assert_int_equal(rc, 0);
    assert_true(n == 9007199254740993ull);
    n = parse_count("\"num_samples\": 9007199254740993, \"y\": [{\"num_samples\": 1}], "
                    "\"num\\u005fsamples\": 18446744073709551615, \"num_sample\": 3, \"num_samples_\": 4",
                    &rc, err, sizeof err);
    assert_int_equal(rc, 0);
    assert_true(n == UINT64_MAX);
    /* Written as a float, a whole number is as exact as its double. */
    n = parse_count("\"num_samples\": 1e19", &rc, err, sizeof err);
    assert_int_equal(rc, 0);
    assert_true(n == 10000000000000000000ull);
    /* Beyond 2^64-1: refused, whatever the spelling. */
    static const char *const too_large[] = {"\"num_samples\": 18446744073709551616",
                                            "\"num_samples\": 99999999999999999999999", "\"num_samples\": 1e20",
                                            "\"num_samples\": 18446744073709551616.0"};
    for (size_t i = 0; i < sizeof too_large / sizeof *too_large; i++) {
        parse_count(too_large[i], &rc, err, sizeof err);
        assert_int_equal(rc, -EINVAL);
        assert_non_null(strstr(err, "\"num_samples\""));
    }
}

/* A document that is not an object is refused at its first byte, before a
 * parser builds a tree for it (a 100 MB array took 14.5 s and 2.1 GB). */
static void from_json_refuses_a_non_object_at_its_first_byte(void **state)
{
    (void)state;
    size_t len = RESMON_SUMMARY_JSON_MAX_BYTES;
    char *text = malloc(len);
    assert_non_null(text);
    memset(text, ' ', 8);
    text[8] = '[';
    for (size_t i = 9; i + 1 < len; i += 2)
        memcpy(text + i, "0,", 2);
    text[len - 1] = '0';
    resmon_summary s;
    char err[128];
    assert_int_equal(resmon_summary_from_json(text, len, &s, sizeof s, err, sizeof err), -EINVAL);
    assert_string_equal(err, "expected a JSON object, found '[' at byte 8");
    free(text);
    assert_int_equal(resmon_summary_from_json("\xff{}", 3, &s, sizeof s, err, sizeof err), -EINVAL);
    assert_string_equal(err, "expected a JSON object, found byte 0xff at byte 0");
}

/* Inputs longer than RESMON_SUMMARY_JSON_MAX_BYTES are refused unread with
 * -E2BIG; up to the limit a summary still parses. */
static void from_json_bounds_its_input(void **state)
{
    (void)state;
    size_t limit = RESMON_SUMMARY_JSON_MAX_BYTES;
    char *text = malloc(limit + 1);
    assert_non_null(text);
    size_t n = strlen(python_minimal);
    memcpy(text, python_minimal, n);
    memset(text + n, ' ', limit + 1 - n); /* trailing space is allowed */
    resmon_summary s;
    char err[128];
    assert_int_equal(resmon_summary_from_json(text, limit, &s, sizeof s, err, sizeof err), 0);
    assert_int_equal(resmon_summary_from_json(text, limit + 1, &s, sizeof s, err, sizeof err), -E2BIG);
    assert_non_null(strstr(err, "1048577 bytes"));
    assert_non_null(strstr(err, "limit of 1048576 bytes"));
    assert_non_null(strstr(resmon_strerror(-E2BIG), "input too large"));
    free(text);
}

static void strerror_names_every_code(void **state)
{
    (void)state;
    assert_string_equal(resmon_strerror(-EBUSY), "monitor is already running");
    assert_string_equal(resmon_strerror(EINVAL), "invalid argument");
    assert_string_equal(resmon_strerror(0), "success");
    assert_string_equal(resmon_strerror(-123456), "unknown error");
    assert_int_equal(resmon_version(), RESMON_VERSION_NUMBER);
    assert_string_equal(resmon_version_string(), RESMON_VERSION_STRING);
}

/* The enum names are the words the JSON writes and reads back, and NULL past
 * the last value: a binding that counts up from 1 finds every one. */
static void enum_names_are_the_json_words(void **state)
{
    (void)state;
    resmon_summary s = parse_ok(python_with_gpu);
    s.hwm_rss_mb = 640.5;
    s.gpu_energy_j = 1234.5;
    char text[1024], expected[64];
    for (int v = RESMON_HWM_WINDOW; resmon_hwm_scope_name((resmon_hwm_scope)v); v++) {
        s.hwm_scope = (resmon_hwm_scope)v;
        resmon_summary_to_json(&s, text, sizeof text);
        snprintf(expected, sizeof expected, "\"hwm_scope\": \"%s\"", resmon_hwm_scope_name(s.hwm_scope));
        assert_non_null(strstr(text, expected));
        assert_int_equal(parse_ok(text).hwm_scope, v);
    }
    for (int v = RESMON_ENERGY_COUNTER; resmon_energy_source_name((resmon_energy_source)v); v++) {
        s.gpu_energy_source = (resmon_energy_source)v;
        resmon_summary_to_json(&s, text, sizeof text);
        snprintf(expected, sizeof expected, "\"gpu_energy_source\": \"%s\"",
                 resmon_energy_source_name(s.gpu_energy_source));
        assert_non_null(strstr(text, expected));
        assert_int_equal(parse_ok(text).gpu_energy_source, v);
    }
    assert_string_equal(resmon_hwm_scope_name(RESMON_HWM_LIFETIME), "lifetime");
    assert_string_equal(resmon_energy_source_name(RESMON_ENERGY_INTEGRATED), "integrated");
    assert_null(resmon_hwm_scope_name(RESMON_HWM_UNKNOWN));
    assert_null(resmon_hwm_scope_name((resmon_hwm_scope)3));
    assert_null(resmon_energy_source_name(RESMON_ENERGY_UNKNOWN));
    assert_null(resmon_energy_source_name((resmon_energy_source)-1));
}

/* The formatter as it was before its printf-free fast path (issue 33,
 * item 5): the shortest of 15, 16, 17 digits that strtod reads back, laid out
 * as Python's repr.  The fast path must write these bytes for every value. */
static size_t reference_format(double value, char *buf)
{
    if (!isfinite(value))
        return (size_t)snprintf(buf, 32, "null");
    char text[40], digits[20];
    for (int precision = fabs(value) < DBL_MIN ? 1 : 15; precision <= 17; precision++) {
        snprintf(text, sizeof text, "%.*e", precision - 1, value);
        if (strtod(text, NULL) == value)
            break;
    }
    const char *p = text + (text[0] == '-');
    int count = 0;
    for (; *p != 'e'; p++)
        if (*p != '.')
            digits[count++] = *p;
    int exponent = atoi(p + 1);
    while (count > 1 && digits[count - 1] == '0')
        count--;
    size_t len = 0;
    if (signbit(value))
        buf[len++] = '-';
    if (exponent < -4 || exponent > 15) {
        buf[len++] = digits[0];
        if (count > 1) {
            buf[len++] = '.';
            for (int i = 1; i < count; i++)
                buf[len++] = digits[i];
        }
        len += (size_t)snprintf(buf + len, 8, "e%c%02d", exponent < 0 ? '-' : '+', abs(exponent));
    } else if (exponent < 0) {
        buf[len++] = '0';
        buf[len++] = '.';
        for (int i = 0; i < -exponent - 1; i++)
            buf[len++] = '0';
        for (int i = 0; i < count; i++)
            buf[len++] = digits[i];
    } else {
        for (int i = 0; i < exponent + 1; i++)
            buf[len++] = i < count ? digits[i] : '0';
        buf[len++] = '.';
        if (count > exponent + 1)
            for (int i = exponent + 1; i < count; i++)
                buf[len++] = digits[i];
        else
            buf[len++] = '0';
    }
    buf[len] = '\0';
    return len;
}

static void assert_formats_as_reference(double value)
{
    char got[40], want[40];
    size_t got_len = rm__json_format_double(value, got);
    size_t want_len = reference_format(value, want);
    if (got_len != want_len || strcmp(got, want) != 0)
        fail_msg("%.17g (%a): \"%s\" where \"%s\"", value, value, got, want);
}

static uint64_t next_random(uint64_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return *state;
}

/* Sizes in KiB over 1024 (rss_mb), whole counts, binary fractions at the
 * edge of 15 digits, the notation edges (1e-4, 1e15, 1e16), halves that round
 * to even, subnormals, and random bit patterns: byte for byte the text the
 * printf path writes. */
static void format_double_is_byte_for_byte_the_printf_path(void **state)
{
    (void)state;
    static const double tricky[] = {
        0.0, -0.0, 1.0, -1.0, 0.5, 0.1, 0.2, 0.3, 1.0 / 3, 2.0 / 3, 1e-4, 9.999999999999999e-5, 1e-5,
        0.0001220703125, 1e15, 999999999999999.0, 999999999999999.9, 1e15 + 0.5, 1e16, 1e17, 123456789.123,
        1.0625, 0.01171875, 3.5859375, 0.25, 1.5e-7, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308,
        9007199254740992.0, 9007199254740993.0, 4503599627370495.5, 0.000244140625, 2.384185791015625e-07,
        1.4210854715202004e-14, 0.30000000000000004, 24284.807125398, 1796192867.867789, 0.033727111000189325,
        8.74942713000233, 100.0, 1e-3, 123456789012345.6, 12345678901234.56, 281474976710655.0,
        281474976710655.5, 140737488355327.75, 0.1 + 0.2, 1e300, 1e-300, 65536.0 / 3,
    };
    for (size_t i = 0; i < sizeof tricky / sizeof tricky[0]; i++) {
        assert_formats_as_reference(tricky[i]);
        assert_formats_as_reference(-tricky[i]);
    }
    for (int j = 0; j <= 60; j++)
        for (uint64_t m = 1; m < 4096; m += 7) {
            assert_formats_as_reference(ldexp((double)m, -j));
            assert_formats_as_reference(ldexp((double)((1ull << 52) + m), -j));
            assert_formats_as_reference(ldexp((double)((1ull << 40) - m), -j));
        }
    for (uint64_t kib = 0; kib < 200000; kib += 13)
        assert_formats_as_reference((double)kib / 1024.0);
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 200000; i++) {
        uint64_t bits = next_random(&seed);
        double value;
        memcpy(&value, &bits, sizeof value);
        assert_formats_as_reference(value);
        /* values with few significant bits: the fast path's own ground */
        int e = (int)(next_random(&seed) % 120) - 60;
        assert_formats_as_reference(ldexp((double)(next_random(&seed) >> (11 + next_random(&seed) % 53)), e));
        assert_formats_as_reference((double)(next_random(&seed) % 100000000) / 1000.0);
        /* the 128-bit path's range, 1e-5 to 1e16: full mantissas, timestamps, percentages */
        assert_formats_as_reference(ldexp((double)(next_random(&seed) >> 11), (int)(next_random(&seed) % 72) - 70));
        assert_formats_as_reference(24000.0 + (double)(next_random(&seed) % 100000000000ull) * 1e-9);
        assert_formats_as_reference((double)(next_random(&seed) % 1000000) / 7.0);
    }
    /* the neighbours of powers of two and of ten, where the doubles below are
     * twice as dense and where rounding carries into a new digit */
    for (int e = -20; e <= 54; e++) {
        double values[] = {ldexp(1.0, e), pow(10.0, e * 0.3), pow(10.0, (double)(e / 4))};
        for (size_t v = 0; v < 3; v++) {
            double x = values[v];
            for (int step = 0; step < 4; step++) {
                assert_formats_as_reference(x);
                assert_formats_as_reference(nextafter(values[v], 0.0));
                x = nextafter(x, INFINITY);
                values[v] = nextafter(values[v], 0.0);
            }
        }
    }
}

/* Every figure of resmon_summary and resmon_sample is in exactly one list:
 * the figure list (figure_list.h) or the metric list (metric_list.h), so a
 * field added to a struct but to neither list -- which the summary JSON,
 * the exposition and the command's columns would then silently leave out --
 * fails here.  The 8-byte words that are no figure: the struct's size, and
 * the enum and int words beside their figures (hwm_scope, gpu_energy_source,
 * hwm_error, cgroup_version with cgroup_error). */
#define MARK_SUMMARY_FIGURE(group, field, ...) mark(summary_seen, offsetof(resmon_summary, field));
#define MARK_SAMPLE_FIGURE(group, field, ...) mark(sample_seen, offsetof(resmon_sample, field));
#define MARK_METRIC(group, sample_field, summary_field, ...)                                                       \
    mark(summary_seen, offsetof(resmon_summary, summary_field));                                                  \
    mark(sample_seen, offsetof(resmon_sample, sample_field));
static void mark(int *seen, size_t offset)
{
    assert_int_equal(offset % 8, 0);
    seen[offset / 8]++;
}

static void every_figure_is_in_one_list(void **state)
{
    (void)state;
    int summary_seen[sizeof(resmon_summary) / 8] = {0};
    int sample_seen[sizeof(resmon_sample) / 8] = {0};
    RM__SUMMARY_FIGURES_BASE(MARK_SUMMARY_FIGURE)
    RM__SUMMARY_FIGURES_CGROUP(MARK_SUMMARY_FIGURE)
    RM__SAMPLE_FIGURES_BASE(MARK_SAMPLE_FIGURE)
    RM__SAMPLE_FIGURES_CGROUP(MARK_SAMPLE_FIGURE)
    RM__METRIC_LIST(MARK_METRIC)
    const size_t not_figures[] = {offsetof(resmon_summary, struct_size), offsetof(resmon_summary, hwm_scope),
                                  offsetof(resmon_summary, gpu_energy_source), offsetof(resmon_summary, hwm_error),
                                  offsetof(resmon_summary, cgroup_version)};
    for (size_t i = 0; i < sizeof not_figures / sizeof *not_figures; i++)
        mark(summary_seen, not_figures[i]);
    for (size_t i = 0; i < sizeof summary_seen / sizeof *summary_seen; i++) {
        if (summary_seen[i] != 1)
            fail_msg("resmon_summary's word at byte %zu is in %d lists", i * 8, summary_seen[i]);
    }
    for (size_t i = 0; i < sizeof sample_seen / sizeof *sample_seen; i++) {
        if (sample_seen[i] != 1)
            fail_msg("resmon_sample's double at byte %zu is in %d lists", i * 8, sample_seen[i]);
    }
}

/* Each consumer derived from the figure list has every figure of it: the
 * summary JSON's tables (figure_fields.c), and the fold from the samples
 * (summary.c), checked by folding two samples whose every figure differs
 * and reading each folded figure back as its FOLD column says. */
#define TABLE_FIGURE(group, field, ...) offsetof(resmon_summary, field),
static void assert_table_is_list(const rm__summary_figures *table, const size_t *offsets, size_t count)
{
    assert_int_equal(table->count, count);
    for (size_t i = 0; i < count; i++)
        assert_int_equal(table->figures[i].offset, offsets[i]);
}

#define CHECK_FOLD(group, field, type, fold, ...) CHECK_FOLD_OF(field, RM__FOLD_KIND_##fold, SAMPLE_FIGURE_OF_##fold)
#define CHECK_FOLD_OF(field, kind, from) CHECK_FOLD_KIND(field, kind, from) /* kind expanded: MAX, ... */
#define CHECK_FOLD_KIND(field, kind, from)                                                                         \
    check_fold(#field, (double)summary.field, FOLD_##kind, offsetof(resmon_sample, from), first, second);
/* RM__FOLD_FROM_##fold, but the timestamp where a fold names no figure */
#define SAMPLE_FIGURE_OF_MAX(field) field
#define SAMPLE_FIGURE_OF_MEAN(field) field
#define SAMPLE_FIGURE_OF_GROWTH(field) field
#define SAMPLE_FIGURE_OF_SPAN timestamp
#define SAMPLE_FIGURE_OF_COUNT timestamp
#define SAMPLE_FIGURE_OF_OWN timestamp
enum fold_kind { FOLD_MAX, FOLD_MEAN, FOLD_GROWTH, FOLD_SPAN, FOLD_COUNT, FOLD_OWN };
static void check_fold(const char *field, double got, enum fold_kind kind, size_t from, const resmon_sample *first,
                       const resmon_sample *second)
{
    if (kind == FOLD_OWN) /* not from the samples' figures */
        return;
    double a, b;
    memcpy(&a, (const char *)first + from, sizeof a);
    memcpy(&b, (const char *)second + from, sizeof b);
    double want = kind == FOLD_MAX      ? fmax(a, b)
                  : kind == FOLD_MEAN   ? (a + b) / 2
                  : kind == FOLD_GROWTH ? b - a
                  : kind == FOLD_SPAN   ? b - a
                                        : 2; /* COUNT */
    if (got != want)
        fail_msg("%s folds to %g, its FOLD says %g", field, got, want);
}

static void every_consumer_has_every_figure(void **state)
{
    (void)state;
    static const size_t base[] = {RM__SUMMARY_FIGURES_BASE(TABLE_FIGURE)};
    static const size_t cgroup[] = {RM__SUMMARY_FIGURES_CGROUP(TABLE_FIGURE)};
    assert_table_is_list(&rm__summary_figures_base, base, sizeof base / sizeof *base);
    assert_table_is_list(&rm__summary_figures_cgroup, cgroup, sizeof cgroup / sizeof *cgroup);

    resmon_sample samples[2];
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; i < sizeof samples[k] / sizeof(double); i++) /* all doubles; every figure its own */
            memcpy((char *)&samples[k] + i * sizeof(double), &(double){(k ? 3.0 : 1.0) * (double)(i + 1)},
                   sizeof(double));
    const resmon_sample *first = &samples[0], *second = &samples[1];
    rm__summary_acc acc;
    rm__summary_acc_reset(&acc, 1);
    rm__summary_acc_add(&acc, first, 0.0, 0);
    rm__summary_acc_add(&acc, second, 0.0, 0);
    resmon_summary summary = rm__summary_acc_result(&acc);
    RM__SUMMARY_FIGURES_BASE(CHECK_FOLD)
    RM__SUMMARY_FIGURES_CGROUP(CHECK_FOLD)
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_figure_is_in_one_list),
        cmocka_unit_test(every_consumer_has_every_figure),
        cmocka_unit_test(to_json_matches_python_byte_for_byte),
        cmocka_unit_test(from_json_reads_python_values),
        cmocka_unit_test(from_json_is_lenient_where_python_is),
        cmocka_unit_test(doubles_round_trip_exactly),
        cmocka_unit_test(to_json_writes_hwm_only_when_known),
        cmocka_unit_test(energy_and_process_memory_round_trip_when_known),
        cmocka_unit_test(cpu_keys_round_trip_after_the_seed_keys),
        cmocka_unit_test(metric_group_keys_round_trip_when_known),
        cmocka_unit_test(to_json_has_snprintf_semantics),
        cmocka_unit_test(from_json_rejects_bad_input),
        cmocka_unit_test(from_json_rejects_invalid_values_anywhere),
        cmocka_unit_test(from_json_rejects_deep_nesting),
        cmocka_unit_test(from_json_honours_len),
        cmocka_unit_test(from_json_survives_random_bytes),
        cmocka_unit_test(counts_round_trip_up_to_uint64_max),
        cmocka_unit_test(large_counts_are_read_from_the_key_the_parser_kept),
        cmocka_unit_test(from_json_refuses_a_non_object_at_its_first_byte),
        cmocka_unit_test(from_json_bounds_its_input),
        cmocka_unit_test(strerror_names_every_code),
        cmocka_unit_test(enum_names_are_the_json_words),
        cmocka_unit_test(format_double_is_byte_for_byte_the_printf_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
