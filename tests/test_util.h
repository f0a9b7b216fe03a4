/*
 * test_util.h -- helpers shared by resmon's cmocka tests.
 */
#ifndef RESMON_TEST_UTIL_H
#define RESMON_TEST_UTIL_H

#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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

/* ---- fixture trees (a fake /proc or /sys under a temporary directory) ---- */

/* Creates directory path and any missing parents (mode 0755), as mkdir -p
 * does.  0, or a negative errno. */
static inline int test_mkdir_p(const char *path)
{
    char partial[4096];
    size_t len = strlen(path);
    if (len == 0 || len >= sizeof partial)
        return -ENAMETOOLONG;
    memcpy(partial, path, len + 1);
    for (size_t i = 1; i <= len; i++) {
        if (partial[i] != '/' && partial[i] != '\0')
            continue;
        char saved = partial[i];
        partial[i] = '\0';
        if (mkdir(partial, 0755) != 0 && errno != EEXIST)
            return -errno;
        partial[i] = saved;
    }
    return 0;
}

/* Writes text to path, creating the directories above it first.  0, or a
 * negative errno. */
static inline int test_write_file(const char *path, const char *text)
{
    char dir[4096];
    const char *slash = strrchr(path, '/');
    if (slash && slash != path) {
        size_t n = (size_t)(slash - path);
        if (n >= sizeof dir)
            return -ENAMETOOLONG;
        memcpy(dir, path, n);
        dir[n] = '\0';
        int rc = test_mkdir_p(dir);
        if (rc < 0)
            return rc;
    }
    FILE *f = fopen(path, "w");
    if (!f)
        return -errno;
    int failed = fputs(text, f) < 0;
    failed |= fclose(f) != 0;
    return failed ? -EIO : 0;
}

static inline int test_remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)type;
    (void)ftw;
    return remove(path) == 0 ? 0 : -errno;
}

/* Removes path and everything under it, as rm -rf does, without following
 * symbolic links (a fixture's links to drivers are removed, not their
 * targets).  0, or a negative errno. */
static inline int test_remove_tree(const char *path)
{
    return nftw(path, test_remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

#endif
