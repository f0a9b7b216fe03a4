/*
 * test_util.h -- helpers shared by resmon's cmocka tests.
 */
#ifndef RESMON_TEST_UTIL_H
#define RESMON_TEST_UTIL_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "resmon.h"

/* ThreadSanitizer maps shadow memory that counts as resident in every process
 * (gigabytes) and starts a background thread in each: tests that check the
 * kernel's memory or thread figures against exact expectations skip there. */
#if defined(__SANITIZE_THREAD__)
#define TEST_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TEST_UNDER_TSAN 1
#endif
#endif
#ifndef TEST_UNDER_TSAN
#define TEST_UNDER_TSAN 0
#endif

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

/* Child side: writes 512 KiB to /dev/null in 64 KiB writes (wchar 524288
 * more), or _exits 2. */
static inline void test_write_512k(void)
{
    static char chunk[65536];
    memset(chunk, 'x', sizeof chunk);
    int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    for (int i = 0; i < 8; i++)
        if (fd < 0 || write(fd, chunk, sizeof chunk) != (ssize_t)sizeof chunk)
            _exit(2);
    close(fd);
}

/* The wchar /proc/PID/io shows (bytes written, the kernel's count), or -1. */
static inline double test_io_wchar(pid_t pid)
{
    char path[64], text[512];
    snprintf(path, sizeof path, "/proc/%d/io", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, text, sizeof text - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return -1;
    text[n] = '\0';
    const char *at = strstr(text, "wchar: ");
    return at ? strtod(at + 7, NULL) : -1;
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

/* A window of a monitor made from opts, opened and closed at once (its first
 * and last samples): its summary.  The monitor is freed. */
static inline resmon_summary test_window_summary(const resmon_options *opts)
{
    resmon_monitor *m;
    assert_int_equal(resmon_monitor_new(&m, opts), 0);
    assert_int_equal(resmon_monitor_start(m), 0);
    assert_int_equal(resmon_monitor_stop(m), 0);
    resmon_summary s = test_summary(m);
    resmon_monitor_free(m);
    return s;
}

static inline size_t test_samples(const resmon_monitor *m, resmon_sample *out, size_t cap)
{
    ssize_t n = resmon_monitor_get_samples(m, out, cap, sizeof *out);
    assert_true(n >= 0);
    return (size_t)n;
}

/* Copies every kept sample into *out (calloc'd, one spare; the caller frees)
 * and returns how many were copied.  The monitor may be running: its count
 * can grow between the count and the copy (resmon_monitor_get_samples
 * returns the number kept, copying at most cap), so the copy is made again
 * until it held them all (CI30's TSan stage: 32 kept where 31 were counted). */
static inline size_t test_copy_samples(const resmon_monitor *m, resmon_sample **out)
{
    size_t cap = test_samples(m, NULL, 0);
    for (;;) {
        *out = calloc(cap + 1, sizeof **out);
        assert_non_null(*out);
        size_t kept = test_samples(m, *out, cap);
        if (kept <= cap)
            return kept;
        free(*out);
        cap = kept + 16;
    }
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

/* ---- time bounds on a busy machine ---------------------------------------
 * Most tests synchronise with their workloads and compare CPU figures with the
 * kernel's own accounting, so they need no allowance for load.  A bound whose
 * point is time itself (stop latency, schedule lateness) is multiplied by
 * RESMON_TEST_TIME_FACTOR (default 1; scripts/test-busy sets 10), as libuv
 * does with UV_TEST_TIMEOUT_MULTIPLIER.  The strict figures live in bench/. */
static inline double test_time_factor(void)
{
    const char *text = getenv("RESMON_TEST_TIME_FACTOR");
    if (!text || !*text)
        return 1.0;
    char *end;
    double factor = strtod(text, &end);
    if (*end != '\0' || !(factor >= 1.0 && factor <= 1000.0)) {
        print_error("RESMON_TEST_TIME_FACTOR='%s': expected a number from 1 to 1000\n", text);
        fail();
    }
    return factor;
}

static inline double test_scaled(double seconds)
{
    return seconds * test_time_factor();
}

/* The highest descriptor open in this process (at least `floor`): a test
 * that lowers RLIMIT_NOFILE to leave a known number free counts from it. */
static inline int test_highest_descriptor(int floor)
{
    int highest = floor;
    DIR *fds = opendir("/proc/self/fd");
    for (struct dirent *d; fds && (d = readdir(fds));)
        if (atoi(d->d_name) > highest && atoi(d->d_name) != dirfd(fds))
            highest = atoi(d->d_name);
    if (fds)
        closedir(fds);
    return highest;
}

/* Runs work(arg, got) in a forked child whose limit on open files (soft
 * and hard: a lowered hard limit cannot be raised again) is `spare` above
 * its highest open descriptor, and brings got[0..count) back (-1 where the
 * child gave nothing).  Returns 1 when the child reported in full and
 * exited 0.  Nothing is asserted between the fork and the report, so that
 * a test stops its workload before it asserts. */
typedef void test_limited_work(void *arg, double *got);

static inline int test_run_under_open_file_limit(int spare, test_limited_work *work, void *arg, double *got, size_t count)
{
    for (size_t i = 0; i < count; i++)
        got[i] = -1;
    int report[2];
    if (pipe(report) != 0)
        return 0;
    pid_t child = fork();
    if (child < 0) {
        close(report[0]);
        close(report[1]);
        return 0;
    }
    if (child == 0) {
        close(report[0]);
        int highest = test_highest_descriptor(report[1]);
        struct rlimit limit = {(rlim_t)(highest + 1 + spare), (rlim_t)(highest + 1 + spare)};
        if (setrlimit(RLIMIT_NOFILE, &limit) == 0)
            work(arg, got);
        ssize_t size = (ssize_t)(count * sizeof *got);
        _exit(write(report[1], got, (size_t)size) == size ? 0 : 1);
    }
    close(report[1]);
    ssize_t n = read(report[0], got, count * sizeof *got);
    close(report[0]);
    int status;
    pid_t reaped = waitpid(child, &status, 0);
    return n == (ssize_t)(count * sizeof *got) && reaped == child && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* Counts a monitor's samples: resmon_options.on_sample = test_count_sample,
 * on_sample_user = a test_sample_counter. */
typedef struct test_sample_counter {
    atomic_int samples;
} test_sample_counter;

static inline void test_count_sample(const resmon_sample *s, void *user)
{
    (void)s;
    atomic_fetch_add(&((test_sample_counter *)user)->samples, 1);
}

/* Waits until `more` samples beyond those counted now were taken: 0, or -1
 * after a minute.  Asserts nothing: a forked child may wait too. */
static inline int test_wait_for_samples(test_sample_counter *c, int more)
{
    int until = atomic_load(&c->samples) + more;
    double safety_net = test_now() + 60 * test_time_factor();
    while (atomic_load(&c->samples) < until)
        if (test_now() > safety_net)
            return -1;
        else
            test_sleep(0.002);
    return 0;
}

/* ---- processes that share their parent's memory ----------------------------
 * clone(CLONE_VM) makes a second process of the same pages: the probe's
 * sharing groups (probe_sharing.c) count them once. */
#define TEST_CLONE_STACK_BYTES (256 << 10)

/* ThreadSanitizer cannot follow a clone(CLONE_VM) child (a thread it was
 * not told of, in its memory: every access a race): 1 when the test is to
 * be skipped, said so. */
static inline int test_clone_vm_unsupported(void)
{
    if (!TEST_UNDER_TSAN)
        return 0;
    print_message("skipped: ThreadSanitizer cannot follow a clone(CLONE_VM) child\n");
    return 1;
}

/* Whether this process can become user uid (setgid and setuid, tried in a
 * child): root can, but not in a user namespace that maps no such user.
 * 0, said, where it cannot: a test that needs another user gets there or
 * skips, it never fails for that. */
static inline int test_can_become(uid_t uid)
{
    pid_t child = fork();
    if (child == 0)
        _exit(setgid(uid) == 0 && setuid(uid) == 0 ? 0 : 1);
    int status;
    if (child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 1;
    print_message("skipped: cannot become user %d here (a user namespace that maps none?)\n", (int)uid);
    return 0;
}

static inline int test_exit_on_go(void *arg)
{
    const int *go = arg;
    char byte;
    _exit(read(go[0], &byte, 1) == 1 ? 0 : 1);
}

/* A clone of the calling process sharing its memory (and, with
 * CLONE_FILES in flags, its descriptors) that exits when go[1] is written
 * or closed.  *stack is its stack, to munmap after it is reaped. */
static inline pid_t test_clone_sharing(int flags, int go[2], char **stack)
{
    *stack = mmap(NULL, TEST_CLONE_STACK_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (*stack == MAP_FAILED)
        return -1;
    return clone(test_exit_on_go, *stack + TEST_CLONE_STACK_BYTES, CLONE_VM | flags | SIGCHLD, go);
}

/* ---- workloads that say when they are ready --------------------------------
 * A child process writes its pid to a pipe once it is ready (its memory
 * touched, its work done); the parent blocks until every child has, instead of
 * sleeping and hoping.  The parent closes its write end after forking, so a
 * child that dies first gives end-of-file, not a hang. */
typedef struct test_ready {
    int read_fd, write_fd;
} test_ready;

static inline test_ready test_ready_open(void)
{
    int fds[2];
    assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
    return (test_ready){fds[0], fds[1]};
}

/* Called in the child: reports this process ready. */
static inline void test_ready_signal(const test_ready *ready)
{
    pid_t self = getpid();
    if (write(ready->write_fd, &self, sizeof self) != (ssize_t)sizeof self)
        _exit(98);
}

/* Called in the parent after the forks: waits for `count` children and
 * stores their pids (when `pids` is not NULL). */
static inline void test_ready_wait(test_ready *ready, int count, pid_t *pids)
{
    if (ready->write_fd >= 0) {
        close(ready->write_fd);
        ready->write_fd = -1;
    }
    for (int i = 0; i < count; i++) {
        pid_t pid;
        ssize_t got;
        while ((got = read(ready->read_fd, &pid, sizeof pid)) < 0 && errno == EINTR)
            ;
        if (got != (ssize_t)sizeof pid) {
            print_error("only %d of %d workload processes became ready\n", i, count);
            fail();
        }
        if (pids)
            pids[i] = pid;
    }
}

static inline void test_ready_close(test_ready *ready)
{
    close(ready->read_fd);
    if (ready->write_fd >= 0)
        close(ready->write_fd);
}

/* ---- a spawned workload, driven through pipes -----------------------------
 * test_spawn forks a child that runs work(self, arg) and exits with what it
 * returns.  Two pipes join it to the test: on `ready` the child reports (its
 * pid when ready, or any bytes it sends), on `go` the test tells it to go on
 * (a byte) or to finish (closing its end: the child's test_child_await sees
 * end-of-file).  Each side closes the other's ends, so a child that dies
 * early gives the test end-of-file, never a hang, and a test that fails
 * early lets a waiting child go.  Descendants the workload forks inherit the
 * child's ends: a grandchild may report ready, or wait on go, too.
 *   Child side (no cmocka asserts there: a failing call _exits 97/98):
 *     test_child_ready, test_child_send, test_child_go_wait, test_child_await,
 *     test_child_idle.
 *   Test side: test_child_wait_ready, test_child_wait_blocked,
 *     test_child_receive, test_child_go,
 *     test_child_release, test_child_wait_exited, test_child_reap (wait4, so
 *     the kernel's rusage of the child comes back), test_child_kill. */
enum {
    TEST_SPAWN_GROUP = 1, /* the child leads a process group: test_child_kill ends its descendants too */
};

typedef struct test_child {
    pid_t pid; /* kept after reaping: a test may ask about the pid that is gone */
    unsigned flags;
    int reaped;
    test_ready ready; /* child writes write_fd, the test reads read_fd */
    int go_read, go_write;
} test_child;

typedef int (*test_workload)(const test_child *self, const void *arg);

static inline test_child test_spawn(test_workload work, const void *arg, unsigned flags)
{
    test_child c = {.flags = flags, .ready = test_ready_open()};
    int go[2];
    assert_int_equal(pipe2(go, O_CLOEXEC), 0);
    c.go_read = go[0];
    c.go_write = go[1];
    c.pid = fork();
    assert_true(c.pid >= 0);
    if (flags & TEST_SPAWN_GROUP)
        setpgid(c.pid, c.pid); /* in parent and child alike: whichever runs first */
    if (c.pid == 0) {
        close(c.ready.read_fd);
        close(c.go_write); /* else its own copy keeps go open: no end-of-file */
        c.ready.read_fd = c.go_write = -1;
        c.pid = getpid();
        _exit(work(&c, arg));
    }
    close(c.go_read);
    c.go_read = -1;
    close(c.ready.write_fd);
    c.ready.write_fd = -1;
    return c;
}

/* Child side: reports this process (or a descendant) ready. */
static inline void test_child_ready(const test_child *self)
{
    test_ready_signal(&self->ready);
}

/* Child side: sends bytes to the test (a result, a list of pids). */
static inline void test_child_send(const test_child *self, const void *data, size_t len)
{
    const char *p = data;
    while (len > 0) {
        ssize_t n = write(self->ready.write_fd, p, len);
        if (n <= 0)
            _exit(98);
        p += n;
        len -= (size_t)n;
    }
}

/* Child side: 1 when the test said go, 0 when it closed go (or left). */
static inline int test_child_await(const test_child *self)
{
    char byte;
    ssize_t got;
    while ((got = read(self->go_read, &byte, 1)) < 0 && errno == EINTR)
        ;
    return got == 1;
}

/* Child side: waits for go; a test that left instead ends the child. */
static inline void test_child_go_wait(const test_child *self)
{
    if (!test_child_await(self))
        _exit(97);
}

/* Child side: waits to be killed (test_child_kill). */
_Noreturn static inline void test_child_idle(void)
{
    for (;;)
        pause();
}

/* Test side: waits until the child (or one descendant) reports ready;
 * returns the pid that did. */
static inline pid_t test_child_wait_ready(test_child *c)
{
    pid_t pid;
    test_ready_wait(&c->ready, 1, &pid);
    return pid;
}

/* Test side: waits until the child sleeps (state S in /proc/PID/stat).
 * Called after it reported ready and before it is told to go, that is until
 * it is blocked waiting for go: what it counts from then on (switches, CPU)
 * is the test's. */
static inline void test_child_wait_blocked(const test_child *c)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)c->pid);
    double safety_net = test_now() + 60;
    for (;;) {
        char text[512] = "";
        FILE *f = fopen(path, "r");
        assert_non_null(f);
        size_t n = fread(text, 1, sizeof text - 1, f);
        fclose(f);
        text[n] = '\0';
        const char *paren = strrchr(text, ')');
        if (paren && paren[1] == ' ' && paren[2] == 'S')
            return;
        if (test_now() > safety_net) {
            print_error("workload %d never blocked: %s\n", (int)c->pid, text);
            fail();
        }
        test_sleep(0.0005); /* waiting for a state, not for a time */
    }
}

/* Test side: reads exactly len bytes the child sent. */
static inline void test_child_receive(test_child *c, void *data, size_t len)
{
    char *p = data;
    while (len > 0) {
        ssize_t n = read(c->ready.read_fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            print_error("workload %d sent %zu bytes fewer than expected\n", (int)c->pid, len);
            fail();
        }
        p += n;
        len -= (size_t)n;
    }
}

static inline void test_child_go(test_child *c)
{
    assert_int_equal(write(c->go_write, "g", 1), 1);
}

/* Test side: closes go; a child in test_child_await goes on (and ends). */
static inline void test_child_release(test_child *c)
{
    if (c->go_write >= 0)
        close(c->go_write);
    c->go_write = -1;
}

/* Test side: waits until the child has exited, leaving it unreaped (a
 * zombie). */
static inline void test_child_wait_exited(const test_child *c)
{
    siginfo_t info;
    assert_int_equal(waitid(P_PID, (id_t)c->pid, &info, WEXITED | WNOWAIT), 0);
}

/* Test side: releases the child, reaps it and closes the pipes; returns its
 * wait status and, when usage is not NULL, the kernel's rusage of it (its
 * own and its reaped descendants' CPU, switches, peak RSS). */
static inline int test_child_reap(test_child *c, struct rusage *usage)
{
    test_child_release(c);
    int status = 0;
    pid_t got;
    while ((got = wait4(c->pid, &status, 0, usage)) < 0 && errno == EINTR)
        ;
    test_ready_close(&c->ready);
    c->ready.read_fd = c->ready.write_fd = -1;
    c->reaped = 1;
    assert_int_equal(got, c->pid);
    return status;
}

/* Test side: kills the child (with TEST_SPAWN_GROUP its whole group) and
 * reaps it; one already reaped (its pid free for reuse) is left alone. */
static inline void test_child_kill(test_child *c)
{
    if (c->reaped || c->pid <= 0)
        return;
    kill((c->flags & TEST_SPAWN_GROUP) ? -c->pid : c->pid, SIGKILL);
    test_child_reap(c, NULL);
}

/* User plus system seconds of an rusage. */
static inline double test_rusage_sec(const struct rusage *ru)
{
    return (double)(ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) +
           (double)(ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) * 1e-6;
}

/* ---- the kernel's CPU accounting ----------------------------------------- */

static inline double test_clock_sec(clockid_t clock)
{
    struct timespec ts;
    assert_int_equal(clock_gettime(clock, &ts), 0);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU seconds the kernel has accounted to another (live) process. */
static inline double test_cpu_sec_of(pid_t pid)
{
    clockid_t clock;
    assert_int_equal(clock_getcpuclockid(pid, &clock), 0);
    return test_clock_sec(clock);
}

/* Burns CPU until this process has used `cpu_seconds` more: a fixed amount of
 * work, however busy the machine. */
static inline void test_spin_cpu(double cpu_seconds)
{
    double end = test_clock_sec(CLOCK_PROCESS_CPUTIME_ID) + cpu_seconds;
    while (test_clock_sec(CLOCK_PROCESS_CPUTIME_ID) < end)
        for (int i = 0; i < 1000; i++)
            busy_sink += (unsigned long)i;
}

/* Checks CPU seconds that resmon read for a window against the kernel's
 * accounting over a bracket around it (read before start, after stop).  The
 * bracket is longer than the window by (bracket_wall - window_wall), in which
 * at most `busy_threads` threads ran; and the kernel brings a thread running
 * on another CPU up to date only at each scheduler tick (at most 10 ms, at
 * both ends).  Within those allowances the reading must match. */
#define ASSERT_CPU_MATCHES_KERNEL(reading_sec, window_wall, kernel_sec, bracket_wall, busy_threads) \
    do {                                                                                        \
        double threads_ = (double)(busy_threads);                                               \
        double tick_slack_ = 0.02 * (threads_ + 1);                                             \
        double outside_ = threads_ * ((bracket_wall) - (window_wall));                          \
        ASSERT_BETWEEN(reading_sec, (kernel_sec) - outside_ - tick_slack_,                      \
                       (kernel_sec) + tick_slack_);                                             \
    } while (0)

#endif
