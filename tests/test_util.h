/*
 * test_util.h -- helpers shared by resmon's cmocka tests.
 */
#ifndef RESMON_TEST_UTIL_H
#define RESMON_TEST_UTIL_H

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "resmon.h"

/* Written by busy loops; volatile so the compiler keeps them. */
static volatile unsigned long busy_sink;

/* Sanitizers map shadow memory beside what a test touches (TSan about 3x
 * more), so upper bounds on RSS widen under them; lower bounds do not. */
#if defined(RESMON_TEST_SANITIZED)
#define SANITIZER_MEMORY_FACTOR 5.0
#else
#define SANITIZER_MEMORY_FACTOR 1.0
#endif

/* cmocka's float asserts work in single precision; these keep doubles. */
#define ASSERT_BETWEEN(value, low, high)                                                  \
    do {                                                                                  \
        double v_ = (value), lo_ = (low), hi_ = (high);                                   \
        if (!(v_ >= lo_ && v_ <= hi_)) {                                                  \
            print_error("%s = %.9g, expected within [%.9g, %.9g]\n", #value, v_, lo_, hi_); \
            fail();                                                                       \
        }                                                                                 \
    } while (0)

#define ASSERT_DOUBLE_EQ(value, expected)                                       \
    do {                                                                        \
        double v_ = (value), e_ = (expected);                                   \
        if (!(v_ == e_)) {                                                      \
            print_error("%s = %.17g, expected %.17g\n", #value, v_, e_);        \
            fail();                                                             \
        }                                                                       \
    } while (0)

#define ASSERT_NAN(value)                                         \
    do {                                                          \
        double v_ = (value);                                      \
        if (!isnan(v_)) {                                         \
            print_error("%s = %.17g, expected NAN\n", #value, v_); \
            fail();                                               \
        }                                                         \
    } while (0)

static inline double test_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline void test_sleep(double seconds)
{
    struct timespec ts = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* Burns CPU on the calling thread for about this long (wall time). */
static inline void test_spin(double seconds)
{
    double end = test_now() + seconds;
    while (test_now() < end)
        for (int i = 0; i < 1000; i++)
            busy_sink += (unsigned long)i;
}

/* Writes every byte, in a way the compiler may not optimise away, so the
 * pages become resident. */
static inline void test_touch(void *block, size_t bytes)
{
    memset(block, 7, bytes);
    __asm__ volatile("" : : "r"(block) : "memory");
}

/* Shorthands for the public API's fill-through-pointer calls, for tests that
 * are about what a monitor measures rather than about the calls themselves
 * (test_monitor.c's API tests call the real functions). */
static inline resmon_monitor *test_monitor_new(const resmon_options *opts)
{
    resmon_monitor *m = NULL;
    return resmon_monitor_new(&m, opts) == 0 ? m : NULL;
}

static inline resmon_summary test_summary(const resmon_monitor *m)
{
    resmon_summary s;
    assert_int_equal(resmon_monitor_get_summary(m, &s, sizeof s), 0);
    return s;
}

static inline size_t test_samples(const resmon_monitor *m, resmon_sample *out, size_t cap)
{
    ssize_t n = resmon_monitor_get_samples(m, out, cap, sizeof *out);
    assert_true(n >= 0);
    return (size_t)n;
}

#endif
