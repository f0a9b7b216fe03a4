/*
 * test_tree.c -- monitoring another process and its descendants: children
 * and grandchildren found each sample, a child forked by a worker thread
 * (listed only in that thread's children file), a target that exits during
 * the window, a zombie target, and one that never existed.
 * Runs each tree test with the kernel's children lists (where it has them)
 * and with the /proc scan.
 */
#include "probe.h"
#include "probe_state.h"
#include "resmon.h"
#include "test_util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* Touches megabytes of memory, reports ready, then sleeps until killed. */
static void hold_memory_forever(size_t megabytes, const test_child *self)
{
    char *block = malloc(megabytes << 20);
    if (block)
        test_touch(block, megabytes << 20);
    test_child_ready(self);
    for (;;)
        pause();
}

typedef struct family_args {
    int children;
    size_t megabytes;
} family_args;

static int run_family(const test_child *self, const void *arg)
{
    const family_args *a = arg;
    for (int i = 0; i < a->children; i++)
        if (fork() == 0)
            hold_memory_forever(a->megabytes, self);
    hold_memory_forever(10, self);
    return 0;
}

/* A target that forks `children` processes each holding `megabytes`, and
 * holds 10 MiB itself; returns once all of them hold their memory.  A
 * family is its own process group, so test_child_kill ends all of it. */
static test_child spawn_family(int children, size_t megabytes)
{
    family_args args = {children, megabytes};
    test_child c = test_spawn(run_family, &args, TEST_SPAWN_GROUP);
    for (int i = 0; i < children + 1; i++)
        test_child_wait_ready(&c);
    return c;
}

typedef struct thread_forker_args {
    size_t megabytes;
    const test_child *self;
} thread_forker_args;

static void *fork_from_thread(void *arg)
{
    thread_forker_args *a = arg;
    if (fork() == 0)
        hold_memory_forever(a->megabytes, a->self);
    for (;;)
        pause();
    return NULL;
}

static int run_thread_forker(const test_child *self, const void *arg)
{
    thread_forker_args args = {*(const size_t *)arg, self};
    pthread_t tid;
    pthread_create(&tid, NULL, fork_from_thread, &args);
    test_child_idle();
}

/* A target whose only child is forked by a worker thread, not by main;
 * returns once the child holds its memory. */
static test_child spawn_thread_forker(size_t megabytes)
{
    test_child c = test_spawn(run_thread_forker, &megabytes, TEST_SPAWN_GROUP);
    test_child_wait_ready(&c);
    return c;
}

static resmon_summary monitor_for(pid_t pid, int include_children, double seconds)
{
    resmon_options opts = {.struct_size = sizeof(resmon_options), .sample_interval_sec = 0.02, .pid = pid, .include_children = include_children};
    resmon_monitor *m = test_monitor_new(&opts);
    assert_non_null(m);
    assert_int_equal(resmon_monitor_start(m), 0);
    test_sleep(seconds);
    assert_int_equal(resmon_monitor_stop(m), 0);
    resmon_summary s = test_summary(m);
    resmon_monitor_free(m);
    return s;
}

static void tree_counts_children_and_grandchildren(void **state)
{
    (void)state;
    test_child target = spawn_family(2, 100);
    resmon_summary tree = monitor_for(target.pid, 1, 0.2);
    resmon_summary alone = monitor_for(target.pid, 0, 0.2);
    test_child_kill(&target);
    ASSERT_BETWEEN(tree.peak_rss_mb, 200, 260 * SANITIZER_MEMORY_FACTOR);
    ASSERT_BETWEEN(alone.peak_rss_mb, 1, 40 * SANITIZER_MEMORY_FACTOR);
}

static void tree_includes_child_forked_by_worker_thread(void **state)
{
    (void)state;
    test_child target = spawn_thread_forker(120);
    resmon_summary tree = monitor_for(target.pid, 1, 0.2);
    test_child_kill(&target);
    ASSERT_BETWEEN(tree.peak_rss_mb, 120, 160 * SANITIZER_MEMORY_FACTOR);
}

/* A monitored window around a fixed amount of work: it lasts until `spinner`
 * has used `cpu_seconds` more CPU time, however busy the machine.  Also
 * returns what the kernel accounted to `accounted` over a bracket around
 * the window, and the bracket's wall time. */
typedef struct cpu_window {
    resmon_summary summary;
    double kernel_sec, bracket_sec;
} cpu_window;

static double kernel_cpu_sec(const pid_t *pids, int count)
{
    double sum = 0;
    for (int i = 0; i < count; i++)
        sum += test_cpu_sec_of(pids[i]);
    return sum;
}

static cpu_window monitor_while_spinning(pid_t target, int include_children, pid_t spinner,
                                         double cpu_seconds, const pid_t *accounted, int accounted_count)
{
    resmon_options opts = {.struct_size = sizeof(resmon_options), .sample_interval_sec = 0.02, .pid = target, .include_children = include_children};
    resmon_monitor *m = test_monitor_new(&opts);
    assert_non_null(m);
    double kernel0 = kernel_cpu_sec(accounted, accounted_count), wall0 = test_now();
    assert_int_equal(resmon_monitor_start(m), 0);
    double work_done = test_cpu_sec_of(spinner) + cpu_seconds;
    double safety_net = test_now() + 60; /* a spinner that never runs fails below, not here */
    while (test_cpu_sec_of(spinner) < work_done && test_now() < safety_net)
        test_sleep(0.005);
    assert_int_equal(resmon_monitor_stop(m), 0);
    cpu_window w = {test_summary(m), kernel_cpu_sec(accounted, accounted_count) - kernel0,
                    test_now() - wall0};
    resmon_monitor_free(m);
    return w;
}

static int spin_in_a_child(const test_child *self, const void *arg)
{
    (void)arg;
    if (fork() == 0) {
        test_child_ready(self);
        test_spin(600); /* killed long before */
    }
    test_child_idle();
}

static void tree_cpu_counts_busy_children(void **state)
{
    (void)state;
    test_child target = test_spawn(spin_in_a_child, NULL, TEST_SPAWN_GROUP);
    pid_t spinner = test_child_wait_ready(&target);
    const pid_t both[] = {target.pid, spinner};
    cpu_window tree = monitor_while_spinning(target.pid, 1, spinner, 0.3, both, 2);
    cpu_window alone = monitor_while_spinning(target.pid, 0, spinner, 0.3, &target.pid, 1);
    test_child_kill(&target);
    /* The tree's reading is the spinner's CPU time (at least 0.3 s); the
     * target's own is next to nothing -- a reading that left the child out, or
     * counted it alone, fails one of these. */
    ASSERT_CPU_MATCHES_KERNEL(tree.summary.cpu_time_sec, tree.summary.duration_sec, tree.kernel_sec,
                              tree.bracket_sec, 1);
    ASSERT_BETWEEN(tree.summary.cpu_time_sec, 0.25, 60);
    ASSERT_CPU_MATCHES_KERNEL(alone.summary.cpu_time_sec, alone.summary.duration_sec, alone.kernel_sec,
                              alone.bracket_sec, 1);
    ASSERT_BETWEEN(tree.summary.mean_cpu_percent, 0.999 * 100 * tree.summary.cpu_time_sec / tree.summary.duration_sec,
                   1.001 * 100 * tree.summary.cpu_time_sec / tree.summary.duration_sec);
}

/* Waits until the monitor has a sample taken after `time` (CLOCK_MONOTONIC). */
static void wait_for_sample_after(resmon_monitor *m, double time)
{
    double safety_net = test_now() + 60;
    for (;;) {
        resmon_sample *all;
        size_t n = test_copy_samples(m, &all); /* running: the count grows */
        double last = n > 0 ? all[n - 1].timestamp : 0;
        free(all);
        if (last > time)
            return;
        if (test_now() > safety_net) {
            print_error("no sample after %.3f: the sampler stalled\n", time);
            fail();
        }
        test_sleep(0.002);
    }
}

/* Burns a fixed 0.15 CPU seconds once told to, reports done, and exits when
 * the test closes its end of `go`. */
static int spin_on_go_until_released(const test_child *self, const void *arg)
{
    (void)arg;
    test_child_go_wait(self);
    test_spin_cpu(0.15);
    test_child_ready(self);
    while (test_child_await(self))
        ;
    return 0;
}

static void target_that_exits_ends_the_window_with_its_samples(void **state)
{
    (void)state;
    test_child target = test_spawn(spin_on_go_until_released, NULL, 0);
    resmon_options opts = {.struct_size = sizeof(resmon_options), .sample_interval_sec = 0.01, .pid = target.pid, .include_children = 1};
    resmon_monitor *m = test_monitor_new(&opts);
    assert_int_equal(resmon_monitor_start(m), 0);
    test_child_go(&target);
    test_child_wait_ready(&target);
    wait_for_sample_after(m, test_now()); /* a sample has seen all the work */
    /* Let it exit and reap it so that it vanishes entirely, as an attached
     * target does. */
    struct rusage usage;
    test_child_reap(&target, &usage);
    double kernel_sec = test_rusage_sec(&usage);
    double deadline = test_now() + test_scaled(2);
    while (resmon_monitor_running(m) && test_now() < deadline)
        test_sleep(0.005);
    assert_int_equal(resmon_monitor_running(m), 0); /* the window ended by itself */
    resmon_summary s = test_summary(m);
    assert_true(s.num_samples >= 3);
    ASSERT_BETWEEN(s.duration_sec, 0.15, 60);
    /* All the target's work fell inside the window: the reading is what the
     * kernel accounted to it, neither lost with it nor made huge by it. */
    ASSERT_CPU_MATCHES_KERNEL(s.cpu_time_sec, s.duration_sec, kernel_sec, s.duration_sec, 1);
    ASSERT_BETWEEN(s.mean_cpu_percent, 0.999 * 100 * s.cpu_time_sec / s.duration_sec,
                   1.001 * 100 * s.cpu_time_sec / s.duration_sec);
    assert_int_equal(resmon_monitor_stop(m), 0);
    assert_int_equal(test_summary(m).num_samples, s.num_samples);
    /* Starting again on a target that is gone fails cleanly. */
    assert_int_equal(resmon_monitor_start(m), -ESRCH);
    assert_int_equal(resmon_monitor_running(m), 0);
    resmon_monitor_free(m);
}

static int exit_at_once(const test_child *self, const void *arg)
{
    (void)self;
    (void)arg;
    return 0;
}

static void zombie_target_ends_the_window_with_one_sample(void **state)
{
    (void)state;
    test_child target = test_spawn(exit_at_once, NULL, 0);
    test_child_wait_exited(&target); /* a zombie now */
    resmon_options opts = {.struct_size = sizeof(resmon_options), .sample_interval_sec = 0.01, .pid = target.pid};
    resmon_monitor *m = test_monitor_new(&opts);
    assert_int_equal(resmon_monitor_start(m), 0);
    double deadline = test_now() + test_scaled(2);
    while (resmon_monitor_running(m) && test_now() < deadline)
        test_sleep(0.001);
    assert_int_equal(resmon_monitor_running(m), 0); /* nothing left to sample */
    assert_int_equal(resmon_monitor_stop(m), 0);
    resmon_summary s = test_summary(m);
    assert_int_equal(s.num_samples, 1);
    ASSERT_DOUBLE_EQ(s.peak_rss_mb, 0);
    test_child_reap(&target, NULL);
    resmon_monitor_free(m);
}

/* A child that touches `megabytes` it keeps and `release_megabytes` it
 * unmaps again (so its peak-RSS mark stays above its RSS), reports ready and
 * exits when a byte arrives on go (or the test closes go). */
typedef struct held_memory {
    size_t megabytes, release_megabytes;
} held_memory;

static int hold_memory_until_released(const test_child *self, const void *arg)
{
    const held_memory *h = arg;
    char *held = malloc(h->megabytes << 20);
    if (!held)
        return 1;
    test_touch(held, h->megabytes << 20);
    if (h->release_megabytes) {
        /* mmap, not malloc: munmap returns the pages at once, also under
         * ASan, whose free keeps them in quarantine. */
        size_t bytes = h->release_megabytes << 20;
        char *released = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (released == MAP_FAILED)
            return 1;
        test_touch(released, bytes);
        munmap(released, bytes);
    }
    test_child_ready(self);
    test_child_await(self);
    return held[0] == 7 ? 0 : 1;
}

static test_child spawn_memory_holder(size_t megabytes, size_t release_megabytes)
{
    held_memory h = {megabytes, release_megabytes};
    test_child c = test_spawn(hold_memory_until_released, &h, 0);
    test_child_wait_ready(&c);
    return c;
}

/* Lets the child exit and waits until it is a zombie (exited, not reaped). */
static void let_exit_unreaped(test_child *c)
{
    test_child_release(c);
    test_child_wait_exited(c);
}

static double peak_mark_mb(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    double kb = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %lf kB", &kb) == 1)
            break;
    fclose(f);
    return kb / 1024.0;
}

/* The window's last sample is taken of a zombie, whose statm reads 0: it must
 * carry the memory the process held to its end, not its release. */
static void target_becoming_a_zombie_ends_on_its_last_live_memory(void **state)
{
    (void)state;
    test_child c = spawn_memory_holder(60, 0);
    resmon_options opts = {.struct_size = sizeof(resmon_options), .sample_interval_sec = 0.01, .pid = c.pid};
    resmon_monitor *m = test_monitor_new(&opts);
    assert_int_equal(resmon_monitor_start(m), 0);
    let_exit_unreaped(&c);
    assert_int_equal(resmon_monitor_stop(m), 0); /* its last sample reads the zombie */
    size_t n = test_samples(m, NULL, 0);
    assert_true(n >= 2);
    resmon_sample *all = calloc(n, sizeof *all);
    test_samples(m, all, n);
    assert_true(all[n - 1].rss_mb >= 60);
    ASSERT_DOUBLE_EQ(all[n - 1].rss_mb, all[n - 2].rss_mb); /* nothing read in between */
    resmon_summary s = test_summary(m);
    assert_true(s.memory_growth_mb >= 0);
    free(all);
    test_child_reap(&c, NULL);
    resmon_monitor_free(m);
}

/* keep_peak_mark: the target's own peak-RSS mark is left alone, and the
 * lifetime peak is known after the target exited. */
static void keep_peak_mark_leaves_the_mark_and_reports_the_lifetime_peak(void **state)
{
    (void)state;
    test_child c = spawn_memory_holder(10, 80);
    assert_true(peak_mark_mb(c.pid) >= 90);
    resmon_options opts = {.struct_size = sizeof(resmon_options), .sample_interval_sec = 0.01, .pid = c.pid,
                           .keep_peak_mark = 1};
    resmon_monitor *m = test_monitor_new(&opts);
    assert_int_equal(resmon_monitor_start(m), 0);
    assert_true(peak_mark_mb(c.pid) >= 90); /* not reset */
    let_exit_unreaped(&c);
    assert_int_equal(resmon_monitor_stop(m), 0);
    resmon_summary s = test_summary(m);
    assert_true(s.hwm_rss_mb >= 90);
    assert_int_equal(s.hwm_scope, RESMON_HWM_LIFETIME);
    assert_true(s.peak_rss_mb < 90 * SANITIZER_MEMORY_FACTOR);
    test_child_reap(&c, NULL);
    resmon_monitor_free(m);

    /* reset_peak_mark resets it: the window's own peak. */
    c = spawn_memory_holder(10, 80);
    resmon_options reset = {.struct_size = sizeof(resmon_options), .sample_interval_sec = 0.01, .pid = c.pid,
                            .reset_peak_mark = 1};
    m = test_monitor_new(&reset);
    assert_int_equal(resmon_monitor_start(m), 0);
    assert_true(peak_mark_mb(c.pid) < 90);
    let_exit_unreaped(&c);
    resmon_monitor_stop(m);
    test_child_reap(&c, NULL);
    resmon_monitor_free(m);
}

static void missing_process_is_refused_at_start(void **state)
{
    (void)state;
    test_child gone = test_spawn(exit_at_once, NULL, 0);
    test_child_reap(&gone, NULL);
    resmon_options opts = {.struct_size = sizeof(resmon_options), .pid = gone.pid};
    resmon_monitor *m = test_monitor_new(&opts);
    assert_non_null(m);
    assert_int_equal(resmon_monitor_start(m), -ESRCH);
    assert_int_equal(resmon_monitor_running(m), 0);
    assert_int_equal(test_summary(m).num_samples, 0);
    resmon_monitor_free(m);
}

/* ---- CPU and processes the kernel accounts for, each once ---------------- */

static double clock_sec(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Uses this much CPU on the calling thread (CPU time, not wall time: on a
 * busy machine it takes longer, never less). */
static void burn_cpu(double seconds)
{
    double end = clock_sec(CLOCK_THREAD_CPUTIME_ID) + seconds;
    while (clock_sec(CLOCK_THREAD_CPUTIME_ID) < end)
        for (int i = 0; i < 1000; i++)
            busy_sink += (unsigned long)i;
}

static double rusage_sec(int who)
{
    struct rusage ru;
    getrusage(who, &ru);
    return test_rusage_sec(&ru);
}

/* The clock-tick granularity of cutime/cstime: each of the two is cut to
 * whole ticks. */
static double two_ticks_sec(void)
{
    return 2.0 / (double)sysconf(_SC_CLK_TCK);
}

/* The CPU seconds of a monitored parent that runs `children` children one
 * after another, each burning `child_cpu_sec` (with a grandchild that burns
 * grandchild_cpu_sec, when that is not 0) and reaped at once, against the parent's own
 * accounting of the work (RUSAGE_SELF + RUSAGE_CHILDREN, as wait4 gives it). */
typedef struct family_work {
    int children;
    double child_cpu_sec, grandchild_cpu_sec;
} family_work;

static int run_family_work(const test_child *self, const void *arg)
{
    const family_work *w = arg;
    test_child_go_wait(self);
    double before = rusage_sec(RUSAGE_SELF) + rusage_sec(RUSAGE_CHILDREN);
    for (int i = 0; i < w->children; i++) {
        pid_t child = fork();
        if (child == 0) {
            pid_t grandchild = w->grandchild_cpu_sec > 0 ? fork() : -1;
            if (grandchild == 0) {
                burn_cpu(w->grandchild_cpu_sec);
                _exit(0);
            }
            burn_cpu(w->child_cpu_sec);
            if (grandchild > 0)
                waitpid(grandchild, NULL, 0);
            _exit(0);
        }
        waitpid(child, NULL, 0);
    }
    double used = rusage_sec(RUSAGE_SELF) + rusage_sec(RUSAGE_CHILDREN) - before;
    test_child_send(self, &used, sizeof used);
    test_child_idle(); /* stays alive: the window ends while it is running */
}

static void monitor_family_work(int children, double child_cpu_sec, double grandchild_cpu_sec, double interval,
                                double *series_sec, double *kernel_sec)
{
    family_work work = {children, child_cpu_sec, grandchild_cpu_sec};
    test_child target = test_spawn(run_family_work, &work, 0);
    resmon_options opts = {.struct_size = sizeof(resmon_options), .sample_interval_sec = interval, .pid = target.pid, .include_children = 1};
    resmon_monitor *m = test_monitor_new(&opts);
    assert_non_null(m);
    assert_int_equal(resmon_monitor_start(m), 0);
    test_child_go(&target);
    test_child_receive(&target, kernel_sec, sizeof *kernel_sec);
    assert_int_equal(resmon_monitor_stop(m), 0);
    resmon_summary s = test_summary(m);
    resmon_monitor_free(m);
    test_child_kill(&target);
    *series_sec = s.cpu_time_sec;
}

/* 200 children far shorter than the sample interval: no sample ever sees one
 * alive, so their CPU reaches the series only through the parent's cutime. */
static void tree_cpu_counts_children_reaped_between_samples(void **state)
{
    (void)state;
    double series, kernel;
    monitor_family_work(200, 0.005, 0, 0.1, &series, &kernel);
    assert_true(kernel >= 200 * 0.005);
    /* The window also holds the moments around the work (the parent blocked
     * on its pipe): only a little CPU more than the work, never less. */
    ASSERT_BETWEEN(series, kernel * 0.97 - two_ticks_sec(), kernel * 1.03 + two_ticks_sec());
}

/* Children and grandchildren that samples do see alive, then reaped: what
 * was counted while they lived is not counted again when their CPU lands in
 * their parent's cutime -- nor when child and grandchild end in the same
 * interval. */
static void tree_cpu_counts_tracked_children_once(void **state)
{
    (void)state;
    double series, kernel;
    monitor_family_work(30, 0.005, 0.03, 0.003, &series, &kernel);
    assert_true(kernel >= 30 * (0.005 + 0.03));
    ASSERT_BETWEEN(series, kernel * 0.97 - two_ticks_sec(), kernel * 1.03 + two_ticks_sec());
}

/* A child reaped between a reading's CPU-clock read and its stat read: the
 * stat, read through the file kept open on it, can show the process being
 * released (parent 0, children's CPU 0).  Taken for live, its parent was
 * lost, so the CPU its parent's cutime took over was never settled: in 60
 * runs of tree_cpu_counts_tracked_children_once at 1-10 ms intervals, 19 to
 * 38 settlements were lost and 2-3 runs came out 5-10 % high (once in CI).
 * The kernel's window is too narrow to hit on demand, so the rule is shown
 * on that stat's text: a process whose parent was known reads gone; one
 * whose parent never was (init, a parent outside the namespace) reads. */
static int stat_file_with_parent(const char *self_stat, const char *ppid)
{
    const char *state_end = strrchr(self_stat, ')') + 3; /* ") S " */
    const char *ppid_end = strchr(state_end + 1, ' ');
    char text[1024];
    int n = snprintf(text, sizeof text, "%.*s%s%s", (int)(state_end + 1 - self_stat), self_stat, ppid, ppid_end);
    char path[] = "/tmp/resmon-test-stat-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    unlink(path);
    assert_int_equal(write(fd, text, (size_t)n), n);
    return fd;
}

static void stat_of_a_released_process_reads_gone(void **state)
{
    (void)state;
    char self_stat[1024];
    int self = open("/proc/self/stat", O_RDONLY);
    ssize_t n = read(self, self_stat, sizeof self_stat - 1);
    close(self);
    assert_true(n > 0);
    self_stat[n] = 0;
    rm__tracked t = {.pid = getpid(), .dir_fd = -1, .ppid = getppid()};
    rm__process_reading now = {0};

    t.stat_fd = stat_file_with_parent(self_stat, "0");
    assert_int_equal(rm__probe_read_stat(&t, &now), -ESRCH);
    assert_false(now.stat_read);
    close(t.stat_fd);

    t.stat_fd = stat_file_with_parent(self_stat, "77");
    assert_int_equal(rm__probe_read_stat(&t, &now), 0);
    assert_int_equal(now.st.ppid, 77);

    /* Dead (X): its parent is reaping it, and its counters take it over. */
    close(t.stat_fd);
    char dead_stat[1024];
    snprintf(dead_stat, sizeof dead_stat, "%s", self_stat);
    strrchr(dead_stat, ')')[2] = 'X';
    t.stat_fd = stat_file_with_parent(dead_stat, "77");
    assert_int_equal(rm__probe_read_stat(&t, &now), -ESRCH);
    assert_false(now.stat_read);

    t.ppid = 0; /* never had one known: init, or a parent outside the namespace */
    close(t.stat_fd);
    t.stat_fd = stat_file_with_parent(self_stat, "0");
    assert_int_equal(rm__probe_read_stat(&t, &now), 0);
    assert_true(now.stat_read);
    close(t.stat_fd);
}

/* A process whose main thread exited (pthread_exit in main) while another
 * thread runs: its leader is a zombie, so statm read through it shows zeros
 * (and stat shows Z) while the thread holds all the process's memory.  Taken
 * for a zombie, a root ended the run at its main thread's exit (a program of
 * 100 MiB for 2 s: 3 samples of 1.2 MiB over 0.2 s) and a child's memory
 * read 0.  The probe reads the memory through a live thread. */
#define LEADER_GONE_BYTES (32u << 20)

/* The thread does not join the main thread to learn that it exited (TSan's
 * thread registry fails a CHECK on joining an exited main thread): the test
 * waits for the leader's zombie state itself (wait_leader_zombie). */
static void *hold_memory_after_main(void *arg)
{
    const test_child *self = arg;
    char *block = malloc(LEADER_GONE_BYTES);
    if (!block)
        _exit(96);
    test_touch(block, LEADER_GONE_BYTES);
    test_child_ready(self);
    test_child_await(self);
    _exit(0);
}

static int main_thread_exits_first(const test_child *self, const void *arg)
{
    (void)arg;
    pthread_t thread;
    if (pthread_create(&thread, NULL, hold_memory_after_main, (void *)self) != 0)
        return 95;
    pthread_exit(NULL);
}

/* Test side: waits until the child's leader shows as a zombie (its main
 * thread's exit is complete: its address space is detached). */
static void wait_leader_zombie(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    double safety_net = test_now() + 60;
    for (;;) {
        char text[512] = "";
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        ssize_t n = read(fd, text, sizeof text - 1);
        close(fd);
        assert_true(n > 0);
        const char *paren = strrchr(text, ')');
        if (paren && paren[1] == ' ' && paren[2] == 'Z')
            return;
        assert_true(test_now() < safety_net);
        test_sleep(0.0005); /* waiting for a state, not for a time */
    }
}

static void process_whose_main_thread_exited_reads_live(void **state)
{
    int tree = *(int *)*state;
    test_child child = test_spawn(main_thread_exits_first, NULL, 0);
    test_child_wait_ready(&child);
    wait_leader_zombie(child.pid);
    rm__probe *probe;
    rm__probe_reading r;
    assert_int_equal(rm__probe_open(&probe, child.pid, tree, NULL), 0);
    assert_int_equal(rm__probe_begin(probe, &r), 0); /* not RM__PROBE_ENDED */
    assert_true(r.rss_bytes >= LEADER_GONE_BYTES);
    assert_int_equal(rm__probe_read(probe, &r), 0);
    assert_true(r.rss_bytes >= LEADER_GONE_BYTES);
    rm__probe_close(probe);
    test_child_reap(&child, NULL);
}

/* The same process read by a probe that has no descriptor left to open
 * (its hard limit on open files reached): its leader's statm reads the
 * zeros of a zombie and the task directory cannot be opened to ask another
 * thread.  Its last RSS stands; before, the zeros were taken for the
 * target's end and the window ended (RM__PROBE_ENDED).  In a child of the
 * test, whose limit can be lowered for good. */
typedef struct starved_reader_args {
    pid_t target;
    int tree;
} starved_reader_args;

static int read_with_no_descriptor_left(const test_child *self, const void *arg)
{
    (void)self;
    const starved_reader_args *a = arg;
    rm__probe *probe;
    rm__probe_reading r;
    if (rm__probe_open(&probe, a->target, a->tree, NULL) != 0 || rm__probe_begin(probe, &r) != 0)
        return 90;
    struct rlimit none = {64, 64};
    if (setrlimit(RLIMIT_NOFILE, &none) != 0)
        return 91;
    while (dup(0) >= 0)
        ;
    if (errno != EMFILE)
        return 92;
    for (int i = 0; i < 3; i++) {
        int rc = rm__probe_read(probe, &r);
        if (rc != 0)
            return rc == RM__PROBE_ENDED ? 93 : 94;
        if (r.rss_bytes < LEADER_GONE_BYTES)
            return 95;
    }
    return 0;
}

static void process_whose_main_thread_exited_reads_live_without_descriptors(void **state)
{
    int tree = *(int *)*state;
    test_child child = test_spawn(main_thread_exits_first, NULL, 0);
    test_child_wait_ready(&child);
    wait_leader_zombie(child.pid);
    starved_reader_args args = {child.pid, tree};
    test_child reader = test_spawn(read_with_no_descriptor_left, &args, 0);
    int status = test_child_reap(&reader, NULL);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    test_child_reap(&child, NULL);
}

static int tree_mode = 1, single_mode = 0;

static int use_tree_mode(void **state)
{
    *state = &tree_mode;
    return 0;
}

static int use_single_mode(void **state)
{
    *state = &single_mode;
    return 0;
}

/* Spinners report on `ready` once running, and spin until `stop`.  Threads
 * share the write end: the test closes it after joining them, not in
 * test_ready_wait. */
typedef struct spinners {
    atomic_int stop;
    test_ready ready;
} spinners;

static void *spin_until_told(void *arg)
{
    const spinners *sp = arg;
    const atomic_int *stop = &sp->stop;
    volatile unsigned long spins = 0; /* per thread: the shared busy_sink would be a data race */
    test_ready_signal(&sp->ready);
    while (!atomic_load(stop))
        for (int i = 0; i < 1000; i++)
            spins += (unsigned long)i;
    return (void *)(uintptr_t)(spins & 1); /* read, so no compiler calls it unused */
}

/* As many spinning threads as CPUs, sampled every 5 ms: each sample's CPU
 * meets the machine's limit, and the part a sample cannot show (a thread's
 * time brought up to date at the next tick) is carried, not dropped.  The
 * window's CPU lies between the process's CPU clock read just inside start
 * and stop and read just outside them. */
static void busy_machine_loses_no_cpu(void **state)
{
    (void)state;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    assert_true(cpus > 0 && cpus < 512);
    spinners sp = {.ready = test_ready_open()};
    pthread_t threads[512];
    for (long i = 0; i < cpus; i++)
        assert_int_equal(pthread_create(&threads[i], NULL, spin_until_told, &sp), 0);
    resmon_options opts = {.struct_size = sizeof(resmon_options), .sample_interval_sec = 0.005};
    resmon_monitor *m = test_monitor_new(&opts);
    assert_non_null(m);
    test_ready readers = {sp.ready.read_fd, -1}; /* the spinners write till they all have */
    test_ready_wait(&readers, (int)cpus, NULL);   /* the spinners are running */
    double outside_before = clock_sec(CLOCK_PROCESS_CPUTIME_ID);
    assert_int_equal(resmon_monitor_start(m), 0);
    double inside_before = clock_sec(CLOCK_PROCESS_CPUTIME_ID);
    test_sleep(1.0);
    double inside_after = clock_sec(CLOCK_PROCESS_CPUTIME_ID);
    assert_int_equal(resmon_monitor_stop(m), 0);
    double outside_after = clock_sec(CLOCK_PROCESS_CPUTIME_ID);
    atomic_store(&sp.stop, 1);
    for (long i = 0; i < cpus; i++)
        pthread_join(threads[i], NULL);
    test_ready_close(&sp.ready);
    resmon_summary s = test_summary(m);
    resmon_monitor_free(m);
    /* The clock of a thread running elsewhere lags by up to a tick; the
     * bounds allow that, once per CPU, at each edge. */
    double lag = (double)cpus / (double)sysconf(_SC_CLK_TCK) * 0.4;
    ASSERT_BETWEEN(s.cpu_time_sec, inside_after - inside_before - lag, outside_after - outside_before + lag);
}

/* Readings taken back to back (microseconds apart) while every CPU spins:
 * nearly every reading has more CPU than the machine could run in its
 * interval (clocks of threads on other CPUs catch up a tick at a time).
 * What a reading cannot show is carried to the next, and the last hands out
 * the rest: the readings add up to the process's own CPU clock. */
static void probe_readings_add_up_to_the_cpu_clock(void **state)
{
    (void)state;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    assert_true(cpus > 0 && cpus < 512);
    spinners sp = {.ready = test_ready_open()};
    pthread_t threads[512];
    for (long i = 0; i < cpus; i++)
        assert_int_equal(pthread_create(&threads[i], NULL, spin_until_told, &sp), 0);
    test_ready readers = {sp.ready.read_fd, -1}; /* the spinners write till they all have */
    test_ready_wait(&readers, (int)cpus, NULL);
    rm__probe *probe;
    assert_int_equal(rm__probe_open(&probe, 0, 0, NULL), 0);
    rm__probe_reading r;
    double before = clock_sec(CLOCK_PROCESS_CPUTIME_ID);
    assert_int_equal(rm__probe_begin(probe, &r), 0);
    double after_begin = clock_sec(CLOCK_PROCESS_CPUTIME_ID);
    uint64_t sum_ns = 0;
    double end = test_now() + 0.3;
    while (test_now() < end) {
        assert_int_equal(rm__probe_read(probe, &r), 0);
        sum_ns += r.cpu_ns;
    }
    double before_last = clock_sec(CLOCK_PROCESS_CPUTIME_ID);
    rm__probe_end_window(probe);
    assert_int_equal(rm__probe_read(probe, &r), 0);
    sum_ns += r.cpu_ns;
    double after = clock_sec(CLOCK_PROCESS_CPUTIME_ID);
    rm__probe_close(probe);
    atomic_store(&sp.stop, 1);
    for (long i = 0; i < cpus; i++)
        pthread_join(threads[i], NULL);
    test_ready_close(&sp.ready);
    double lag = (double)cpus / (double)sysconf(_SC_CLK_TCK);
    ASSERT_BETWEEN((double)sum_ns * 1e-9, before_last - after_begin - lag, after - before + lag);
}

/* A descendant that held the tree's largest process peak and ended before
 * the window's end: the exact peak keeps it (its largest sampled RSS), never
 * falling to the peaks of the processes still alive. */
/* Forks a child that holds `megabytes` until go, reaps it, reports each. */
static int hold_in_a_child_until_go(const test_child *self, const void *arg)
{
    size_t megabytes = *(const size_t *)arg;
    pid_t child = fork();
    if (child == 0) {
        char *block = malloc(megabytes << 20);
        if (!block)
            _exit(2);
        test_touch(block, megabytes << 20);
        test_child_ready(self);
        test_child_await(self);
        _exit(0);
    }
    waitpid(child, NULL, 0);
    test_child_ready(self);
    test_child_idle();
}

static void probe_peak_keeps_a_descendant_that_ended(void **state)
{
    (void)state;
    const size_t child_mb = 100;
    test_child target = test_spawn(hold_in_a_child_until_go, &child_mb, 0);
    test_child_wait_ready(&target); /* the child holds its memory */
    rm__probe *probe;
    assert_int_equal(rm__probe_open(&probe, target.pid, 1, NULL), 0);
    rm__probe_reading r;
    assert_int_equal(rm__probe_begin(probe, &r), 0);
    assert_true(r.rss_bytes >= (uint64_t)child_mb << 20);
    uint64_t with_child = r.rss_bytes;
    test_child_go(&target);
    test_child_wait_ready(&target); /* the child was reaped */
    /* Asleep again: until the scheduler's next event the target's CPU clock
     * does not show that it ran (see assert_next_reading_tracks_a_fork_of),
     * and its children list, reused, still names the child. */
    test_child_wait_blocked(&target);
    assert_int_equal(rm__probe_read(probe, &r), 0);
    /* Less by the child's memory: the target's own RSS is what it shares
     * with the test process (under ASan, its quarantine: 100 MiB and more
     * after the tests before this one). */
    assert_true(r.rss_bytes + ((uint64_t)child_mb << 20) / 2 < with_child);
    uint64_t peak;
    resmon_hwm_scope scope;
    int reset_error;
    assert_int_equal(rm__probe_peak_rss(probe, &peak, &scope, &reset_error), 0);
    rm__probe_close(probe);
    test_child_kill(&target);
    assert_true(peak >= (uint64_t)child_mb << 20);
}

/* On go, forks a child that touches `megabytes`, frees them, reports ready
 * and waits (for its kill, with the target's group). */
static int fork_a_child_that_peaks_and_frees_on_go(const test_child *self, const void *arg)
{
    size_t bytes = *(const size_t *)arg << 20;
    test_child_ready(self);
    test_child_go_wait(self);
    pid_t child = fork();
    if (child == 0) {
        char *block = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (block == MAP_FAILED)
            _exit(2);
        test_touch(block, bytes);
        munmap(block, bytes);
        test_child_ready(self);
        test_child_idle();
    }
    test_child_idle();
}

/* A child born in the window that peaked and freed its memory before its
 * first reading: its mark, read then, holds nothing older than the window,
 * so it is the window's exact peak (review 63 F5: taken for the child's
 * start, it made the window's peak a "lifetime" one). */
static void peak_of_a_child_born_in_the_window_is_the_windows(void **state)
{
    (void)state;
    const size_t child_mb = 100;
    test_child target = test_spawn(fork_a_child_that_peaks_and_frees_on_go, &child_mb, TEST_SPAWN_GROUP);
    test_child_wait_ready(&target);
    rm__probe *probe;
    assert_int_equal(rm__probe_open(&probe, target.pid, 1, NULL), 0);
    rm__probe_watch_peak_marks(probe);
    rm__probe_reading r;
    assert_int_equal(rm__probe_begin(probe, &r), 0); /* the window begins: no child yet */
    test_child_go(&target);
    test_child_wait_ready(&target); /* the child peaked and freed */
    assert_int_equal(rm__probe_read(probe, &r), 0);
    assert_int_equal(rm__probe_read(probe, &r), 0);
    uint64_t peak;
    resmon_hwm_scope scope;
    int reset_error;
    assert_int_equal(rm__probe_peak_rss(probe, &peak, &scope, &reset_error), 0);
    uint64_t target_mark = 0;
    char path[48];
    snprintf(path, sizeof path, "/proc/%d/status", (int)target.pid);
    int status_fd = open(path, O_RDONLY | O_CLOEXEC);
    assert_true(status_fd >= 0);
    assert_int_equal(rm__pread_peak_rss(status_fd, &target_mark), 0);
    close(status_fd);
    rm__probe_close(probe);
    test_child_kill(&target);
    assert_true(peak >= (uint64_t)child_mb << 20);
    if (target_mark >= (uint64_t)child_mb << 20) { /* an older peak of the target's that the window may not hold */
        print_message("skipped: the target's own mark (%llu MiB, a sanitizer's) is above the child's\n",
                      (unsigned long long)(target_mark >> 20));
        return;
    }
    assert_int_equal(scope, RESMON_HWM_WINDOW);
}

/* One process with 1200 children (its children list runs over a page): the
 * tree's RSS is every child's, as the test reads each from statm itself. */
enum { LARGE_FAMILY = 1200 };

static int run_large_family(const test_child *self, const void *arg)
{
    (void)arg;
    pid_t pids[LARGE_FAMILY];
    for (int i = 0; i < LARGE_FAMILY; i++) {
        pids[i] = fork();
        if (pids[i] == 0) {
            test_child_await(self); /* until the test closes go */
            _exit(0);
        }
        if (pids[i] < 0)
            _exit(2);
    }
    test_child_send(self, pids, sizeof pids);
    for (int i = 0; i < LARGE_FAMILY; i++)
        waitpid(pids[i], NULL, 0);
    test_child_idle();
}

static void tree_tracks_every_child_of_a_large_family(void **state)
{
    (void)state;
    enum { CHILDREN = LARGE_FAMILY };
    test_child target = test_spawn(run_large_family, NULL, 0);
    pid_t pids[CHILDREN];
    test_child_receive(&target, pids, sizeof pids);
    /* Every child is blocked on the pipe now: the tree is steady. */
    resmon_summary s = monitor_for(target.pid, 1, 0.3);
    double expected_mb = 0;
    pid_t all[CHILDREN + 1];
    memcpy(all, pids, sizeof pids);
    all[CHILDREN] = target.pid;
    long page = sysconf(_SC_PAGESIZE);
    for (int i = 0; i <= CHILDREN; i++) {
        char path[64], text[128];
        snprintf(path, sizeof path, "/proc/%d/statm", (int)all[i]);
        FILE *f = fopen(path, "r");
        assert_non_null(f);
        unsigned long size, resident;
        assert_non_null(fgets(text, sizeof text, f));
        fclose(f);
        assert_int_equal(sscanf(text, "%lu %lu", &size, &resident), 2);
        expected_mb += (double)resident * (double)page / 1048576.0;
    }
    test_child_release(&target); /* the children end, the target reaps them */
    test_child_kill(&target);
    ASSERT_BETWEEN(s.peak_rss_mb, expected_mb * 0.97, expected_mb * 1.03);
}

/* A process's own files (statm, stat, the groups') were kept open beside
 * its /proc directory with no bound: 10 000 sleepers under a hard limit of
 * 20 000 descriptors left 5 000 untracked (unreadable_procs 12 507,
 * peak_nprocs 4 999).  Now such a file is kept open only within an eighth of
 * the hard limit and is read through the directory past it: the family
 * of 1200 under a limit of ~2400 descriptors is counted whole, none
 * unreadable. */
/* got: peak processes, peak unreadable, samples. */
static void monitor_wide_family(void *arg, double *got)
{
    resmon_options opts = {.struct_size = sizeof(resmon_options), .sample_interval_sec = 0.02,
                           .pid = *(pid_t *)arg, .include_children = 1,
                           .metrics = RESMON_METRIC_ALL}; /* every group's files */
    resmon_monitor *m = NULL;
    if (resmon_monitor_new(&m, &opts) == 0 && resmon_monitor_start(m) == 0) {
        struct timespec pause = {0, 200000000};
        nanosleep(&pause, NULL); /* the first sample, taken before start returned, suffices */
        resmon_summary s;
        if (resmon_monitor_stop(m) == 0 && resmon_monitor_get_summary(m, &s, sizeof s) == 0) {
            got[0] = s.peak_nprocs;
            got[1] = s.peak_unreadable_procs;
            got[2] = s.num_samples;
        }
    }
    resmon_monitor_free(m);
}

static void a_wide_family_under_a_low_open_file_limit_is_read_whole(void **state)
{
    (void)state;
    test_child target = test_spawn(run_large_family, NULL, 0);
    pid_t pids[LARGE_FAMILY];
    test_child_receive(&target, pids, sizeof pids);
    /* Room for every directory and the walker's quarter; not for a second
     * and third file a process. */
    double got[3];
    int reported = test_run_under_open_file_limit(2400, monitor_wide_family, &target.pid, got, 3);
    test_child_release(&target);
    test_child_kill(&target);
    assert_true(reported);
    assert_true(got[2] >= 1);
    assert_int_equal((int)got[0], LARGE_FAMILY + 1);
    assert_int_equal((int)got[1], 0);
}

/* A family whose last STARVED_BUSY children spin while *go is 1: forked
 * after STARVED_SLEEPERS sleepers, they are tracked after them, past the
 * budget of files kept open under a low limit. */
enum { STARVED_SLEEPERS = 48, STARVED_BUSY = 4, STARVED_FAMILY = STARVED_SLEEPERS + STARVED_BUSY };

static int run_starved_family(const test_child *self, const void *arg)
{
    atomic_int *go = (atomic_int *)arg;
    pid_t pids[STARVED_FAMILY];
    for (int i = 0; i < STARVED_FAMILY; i++) {
        pids[i] = fork();
        if (pids[i] == 0) {
            if (i >= STARVED_SLEEPERS) {
                struct timespec poll_pause = {0, 1000000};
                while (atomic_load(go) == 0)
                    nanosleep(&poll_pause, NULL);
                while (atomic_load(go) == 1)
                    ;
            }
            test_child_await(self);
            _exit(0);
        }
        if (pids[i] < 0)
            _exit(2);
    }
    test_child_send(self, pids, sizeof pids);
    for (int i = 0; i < STARVED_FAMILY; i++)
        waitpid(pids[i], NULL, 0);
    test_child_idle();
}

static double schedstat_sec(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/schedstat", (int)pid);
    FILE *f = fopen(path, "r");
    unsigned long long ns = 0;
    if (!f || fscanf(f, "%llu", &ns) != 1)
        ns = 0;
    if (f)
        fclose(f);
    return (double)ns / 1e9;
}

/* A process past the budget of kept files has its statm and stat opened at
 * each reading; with every descriptor taken (another thread of the program
 * holding them all for a while) that open fails with EMFILE.  Such a
 * process was settled as reaped and tracked again as a new one once the
 * descriptors came back: the CPU its busy children used in between was
 * lost.  Its last reading now stands, and the window's CPU is what the
 * kernel counted (schedstat) over it. */
typedef struct starved_run {
    atomic_int *go;
    pid_t target;
    const pid_t *pids;
} starved_run;

/* got: the window's CPU, the fewest processes a sample counted, samples,
 * descriptors held, the busy children's own CPU (schedstat) meanwhile. */
static void monitor_starved_family(void *arg, double *got)
{
    const starved_run *run = arg;
    resmon_options opts = {.struct_size = sizeof(resmon_options), .sample_interval_sec = 0.02, .pid = run->target,
                           .include_children = 1, .metrics = RESMON_METRIC_COUNTS};
    resmon_monitor *m = NULL;
    static int held[4096];
    int count = 0;
    double before = 0, after = 0;
    for (int i = STARVED_SLEEPERS; i < STARVED_FAMILY; i++)
        before += schedstat_sec(run->pids[i]);
    int spare = open("/dev/null", O_RDONLY | O_CLOEXEC); /* what the held descriptors copy */
    if (spare >= 0 && resmon_monitor_new(&m, &opts) == 0 && resmon_monitor_start(m) == 0) {
        atomic_store(run->go, 1);
        test_sleep(0.2);
        for (int fd; count < 4096 && (fd = dup(spare)) >= 0;)
            held[count++] = fd; /* until EMFILE: the sampler finds none */
        test_sleep(0.5);
        for (int i = 0; i < count; i++)
            close(held[i]);
        test_sleep(0.2);
        atomic_store(run->go, 2);
        resmon_summary s;
        if (resmon_monitor_stop(m) == 0 && resmon_monitor_get_summary(m, &s, sizeof s) == 0) {
            got[0] = s.cpu_time_sec;
            got[2] = s.num_samples;
            /* The fewest processes a sample counted: a process taken for
             * ended was missing until the walk found it again. */
            static resmon_sample samples[4096];
            size_t n = (size_t)s.num_samples < 4096 ? (size_t)s.num_samples : 4096;
            if (resmon_monitor_get_samples(m, samples, n, sizeof *samples) >= 0)
                for (size_t i = 0; i < n; i++)
                    if (got[1] < 0 || samples[i].nprocs < got[1])
                        got[1] = samples[i].nprocs;
        }
    }
    for (int i = STARVED_SLEEPERS; i < STARVED_FAMILY; i++)
        after += schedstat_sec(run->pids[i]);
    got[3] = count;
    got[4] = after - before;
    resmon_monitor_free(m);
}

static void a_process_read_without_a_free_descriptor_is_not_taken_for_ended(void **state)
{
    (void)state;
    atomic_int *go = mmap(NULL, sizeof *go, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    assert_true(go != MAP_FAILED);
    atomic_store(go, 0);
    test_child target = test_spawn(run_starved_family, go, 0);
    pid_t pids[STARVED_FAMILY];
    test_child_receive(&target, pids, sizeof pids);
    /* Every directory, the walker's quarter and an eighth kept open: room
     * for the sleepers' files, not the busy ones'. */
    starved_run run = {go, target.pid, pids};
    double got[5];
    int reported = test_run_under_open_file_limit(240, monitor_starved_family, &run, got, 5);
    atomic_store(go, 2); /* whatever came back: no busy child is left spinning */
    test_child_release(&target);
    test_child_kill(&target);
    munmap(go, sizeof *go);
    assert_true(reported);
    print_message("window CPU %.3f s, the busy children's (schedstat) %.3f s; %g processes at the fewest, %g samples, "
                  "%g descriptors held\n", got[0], got[4], got[1], got[2], got[3]);
    assert_true(got[2] >= 3);
    assert_true(got[3] >= 1);
    assert_int_equal((int)got[1], STARVED_FAMILY + 1);
    /* The busy children spun only inside the window (the others sleep). */
    ASSERT_BETWEEN(got[0], got[4] * 0.85, got[4] * 1.1 + 0.02);
}

/* Review 63 F3: a subreaper root (tini, dumb-init, bazel) takes over a
 * grandchild whose parent ended.  The grandchild then sleeps, so its stat
 * is not read again and its ppid stayed the dead parent's: when the root
 * reaped it nothing was settled, and its life counted twice (CPU 0.59 s
 * against the kernel's 0.29, its 512 KiB of writes twice).  The walk lists
 * it under the root: that is its parent now. */
typedef struct handed_over {
    int ready[2], end_parent[2], reaped[2];
} handed_over;

static int subreaper_root(const test_child *self, const void *arg)
{
    const handed_over *h = arg;
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    test_child_go_wait(self);
    pid_t parent = fork();
    if (parent == 0) {
        if (fork() == 0) { /* the grandchild */
            test_write_512k();
            test_spin_cpu(0.3);
            pid_t me = getpid();
            if (write(h->ready[1], &me, sizeof me) != (ssize_t)sizeof me)
                _exit(3);
            for (;;)
                pause(); /* asleep until killed */
        }
        char byte;
        _exit(read(h->end_parent[0], &byte, 1) == 1 ? 0 : 1); /* its child is handed to the root */
    }
    for (int reaped = 0; reaped < 2;)
        if (waitpid(-1, NULL, 0) > 0)
            reaped++;
    if (write(h->reaped[1], "r", 1) != 1)
        _exit(4);
    test_child_idle();
}

/* The kernel's CPU of pid and of the children it reaped (stat), seconds. */
static double cpu_with_reaped_of(pid_t pid)
{
    char path[64], text[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f)
        fclose(f);
    text[n] = '\0';
    const char *p = strrchr(text, ')');
    unsigned long long utime, stime, cutime, cstime;
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu", &utime, &stime, &cutime,
                     &cstime) != 4)
        return -1;
    return (double)(utime + stime + cutime + cstime) / (double)sysconf(_SC_CLK_TCK);
}

static void a_child_handed_to_a_subreaper_root_is_settled_against_it(void **state)
{
    (void)state;
    handed_over h;
    assert_int_equal(pipe2(h.ready, O_CLOEXEC), 0);
    assert_int_equal(pipe2(h.end_parent, O_CLOEXEC), 0);
    assert_int_equal(pipe2(h.reaped, O_CLOEXEC), 0);
    test_child root = test_spawn(subreaper_root, &h, TEST_SPAWN_GROUP);
    double wchar_before = test_io_wchar(root.pid), cpu_before = cpu_with_reaped_of(root.pid);
    test_sample_counter count = {0};
    resmon_options o = RESMON_OPTIONS_INIT;
    o.pid = root.pid;
    o.include_children = 1;
    o.metrics = RESMON_METRIC_IO;
    o.sample_interval_sec = 0.01;
    o.on_sample = test_count_sample;
    o.on_sample_user = &count;
    resmon_monitor *m;
    assert_int_equal(resmon_monitor_new(&m, &o), 0);
    assert_int_equal(resmon_monitor_start(m), 0);
    assert_int_equal(test_wait_for_samples(&count, 2), 0);
    test_child_go(&root);
    pid_t grandchild;
    assert_int_equal(read(h.ready[0], &grandchild, sizeof grandchild), (ssize_t)sizeof grandchild);
    assert_int_equal(test_wait_for_samples(&count, 5), 0); /* read with its parent's pid */
    assert_int_equal(write(h.end_parent[1], "e", 1), 1);
    assert_int_equal(test_wait_for_samples(&count, 5), 0); /* the root's now, asleep */
    kill(grandchild, SIGKILL);
    char byte;
    assert_int_equal(read(h.reaped[0], &byte, 1), 1); /* the root reaped both */
    assert_int_equal(test_wait_for_samples(&count, 3), 0);
    assert_int_equal(resmon_monitor_stop(m), 0);
    resmon_summary s = test_summary(m);
    resmon_monitor_free(m);
    double wchar = test_io_wchar(root.pid) - wchar_before, cpu = cpu_with_reaped_of(root.pid) - cpu_before;
    test_child_kill(&root);
    for (int i = 0; i < 2; i++) {
        close(h.ready[i]);
        close(h.end_parent[i]);
        close(h.reaped[i]);
    }
    print_message("window CPU %.3f s, the kernel's %.3f s; window wchar %.0f, the kernel's %.0f\n", s.cpu_time_sec, cpu,
                  s.io_wchar, wchar);
    ASSERT_DOUBLE_EQ(s.io_wchar, wchar);
    /* The kernel's figures are in ticks: two of them either way. */
    ASSERT_BETWEEN(s.cpu_time_sec, cpu - 2.0 / (double)sysconf(_SC_CLK_TCK) - 0.001,
                   cpu + 2.0 / (double)sysconf(_SC_CLK_TCK) + 0.001);
}

/* A pool of POOL sleepers forked at once: each execs sleep, so that it
 * does not run at all (a child of a sanitized test keeps a thread of the
 * sanitizer's, which wakes). */
enum { POOL = 200 };

static int run_pool(const test_child *self, const void *arg)
{
    (void)arg;
    pid_t pids[POOL];
    for (int i = 0; i < POOL; i++) {
        pids[i] = fork();
        if (pids[i] == 0) {
            execl("/bin/sleep", "sleep", "3600", (char *)NULL);
            _exit(127);
        }
        if (pids[i] < 0)
            _exit(2);
    }
    test_child_send(self, pids, sizeof pids);
    for (;;)
        pause(); /* ended with its group (TEST_SPAWN_GROUP) */
}

static int runs_sleep(pid_t pid)
{
    char path[64], comm[32] = "";
    snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
    FILE *f = fopen(path, "r");
    if (f) {
        if (!fgets(comm, sizeof comm, f))
            comm[0] = '\0';
        fclose(f);
    }
    return strcmp(comm, "sleep\n") == 0;
}

/* How a pool of POOL sleepers found together has its statm refreshed over
 * 3 s of readings at 10 Hz (leaf: as in a leaf whose totals serve,
 * rm__probe_set_leaf_refresh).  Only the processes that did not run are
 * counted; returns the refresh interval in force, s. */
typedef struct pool_refreshes {
    size_t refreshed, readings_refreshing, most, ran;
    double elapsed;
} pool_refreshes;

static double refresh_pool(int leaf, pool_refreshes *got)
{
    test_child target = test_spawn(run_pool, NULL, TEST_SPAWN_GROUP);
    pid_t pids[POOL];
    test_child_receive(&target, pids, sizeof pids);
    for (int i = 0; i < POOL; i++)
        while (!runs_sleep(pids[i])) /* exec'd: from now on it does not run */
            test_sleep(0.001);
    rm__probe *probe;
    rm__probe_reading r;
    assert_int_equal(rm__probe_open(&probe, target.pid, 1, NULL), 0);
    assert_int_equal(rm__probe_begin(probe, &r), 0);
    assert_int_equal((int)probe->count, POOL + 1);
    rm__probe_set_leaf_refresh(probe, leaf);
    static uint64_t read_at[POOL + 1], cpu_at[POOL + 1];
    for (size_t i = 0; i < probe->count; i++) {
        read_at[i] = probe->procs[i].statm_read_ns;
        cpu_at[i] = probe->procs[i].last_cpu_ns;
    }
    memset(got, 0, sizeof *got);
    double start = test_now();
    while (test_now() - start < 3.0) {
        test_sleep(0.1);
        assert_int_equal(rm__probe_read(probe, &r), 0);
        assert_int_equal((int)probe->count, POOL + 1);
        size_t now = 0;
        for (size_t i = 1; i < probe->count; i++) { /* the root is read every time */
            const rm__tracked *t = &probe->procs[i];
            if (t->last_cpu_ns != cpu_at[i])
                got->ran++; /* read because it ran: not a refresh */
            else if (t->statm_read_ns != read_at[i])
                now++;
            read_at[i] = t->statm_read_ns;
            cpu_at[i] = t->last_cpu_ns;
        }
        got->refreshed += now;
        got->readings_refreshing += now > 0;
        got->most = now > got->most ? now : got->most;
    }
    got->elapsed = test_now() - start; /* a busy machine may sleep past 3 s */
    rm__probe_close(probe);
    test_child_kill(&target);
    print_message("%zu of %d refreshed in %.1f s, by %zu readings, at most %zu in one (%zu readings of one that ran)\n",
                  got->refreshed, POOL, got->elapsed, got->readings_refreshing, got->most, got->ran);
    return (double)(leaf ? IDLE_STATM_REFRESH_LEAF_NS : IDLE_STATM_REFRESH_WIDE_NS) * 1e-9;
}

/* A sleeping process's statm is refreshed every 10 s in a wide tree.
 * Counted from each one's latest read, a pool found together was refreshed
 * all in one reading (10 000 sleepers' reads in one sample of a --pid run,
 * none in the 99 others).  Each process now has a refresh grid of its own,
 * offset by a share of the interval drawn from its pid: over 3 s about 3 in
 * 10 are refreshed, spread over the readings (before: none). */
static void a_pool_found_together_is_refreshed_apart(void **state)
{
    (void)state;
    pool_refreshes got;
    double refresh = refresh_pool(0, &got);
    ASSERT_BETWEEN((double)got.refreshed, POOL / 10.0, POOL * fmin(1.0, got.elapsed / refresh * 2.0));
    assert_true(got.readings_refreshing >= 3);
}

/* In a wide tree whose totals are its leaf's, walked every ~20 s, a 10 s
 * refresh re-read every sleeper's statm at every walk (1769 of a 1000-
 * process walk's 2780 system calls): there it is 60 s, so 3 s of readings
 * refresh about one in twenty (the 10 s grid: three in ten). */
static void a_wide_tree_in_its_leaf_refreshes_sleepers_every_minute(void **state)
{
    (void)state;
    pool_refreshes got;
    double refresh = refresh_pool(1, &got);
    assert_true(refresh >= 60.0);
    ASSERT_BETWEEN((double)got.refreshed, 1.0, POOL * fmin(1.0, got.elapsed / refresh * 2.0));
}

/* A chain: each process the only child of the one before, so a process
 * whose children are not listed cuts off everything below it. */
enum { CHAIN_DEPTH = 150 };

static int run_chain(const test_child *self, const void *arg)
{
    (void)arg;
    for (int i = 0; i < CHAIN_DEPTH; i++) {
        pid_t child = fork();
        if (child < 0)
            _exit(2);
        if (child > 0)
            for (;;)
                pause();
    }
    test_child_ready(self);
    for (;;)
        pause();
}

/* The chain again, each process with 10 sleeping threads beside its main
 * one: a children file per thread. */
static void *sleep_forever(void *arg)
{
    (void)arg;
    for (;;)
        pause();
    return NULL;
}

static int run_threaded_chain(const test_child *self, const void *arg)
{
    int depth = *(const int *)arg;
    for (int i = 0;; i++) {
        /* Fork first, threads after: a fork of a process of many threads
         * whose child starts threads is what TSan cannot follow. */
        pid_t child = i < depth ? fork() : 0;
        if (child < 0)
            _exit(2);
        if (child > 0 || i == depth) { /* this process's place in the chain */
            for (int t = 0; t < 10; t++) {
                pthread_t thread;
                if (pthread_create(&thread, NULL, sleep_forever, NULL) != 0)
                    _exit(2);
            }
            test_child_ready(self);
            for (;;)
                pause();
        }
    }
}

typedef struct limited_walk {
    size_t found;
    unsigned unwalked;
    int rc;
} limited_walk;

/* Walks from root twice (the second reuses what the first kept open) in a
 * child whose limit on open files (soft and hard: a lowered hard limit
 * cannot be raised again) leaves exactly `spare` descriptors free; the
 * second walk's result. */
static limited_walk walk_with_spare_descriptors(pid_t root, rm__tree_method method, int spare)
{
    int report[2];
    assert_int_equal(pipe(report), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        close(report[0]);
        int proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int highest = test_highest_descriptor(proc_fd);
        for (int hole; (hole = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0;)
            if (hole > highest) { /* the free numbers below the highest are filled: spare is exact */
                close(hole);
                break;
            }
        struct rlimit limit = {(rlim_t)(highest + 1 + spare), (rlim_t)(highest + 1 + spare)};
        limited_walk result = {0, 0, setrlimit(RLIMIT_NOFILE, &limit) == 0 ? 0 : -errno};
        rm__tree_walker w;
        rm__tree_walker_init(&w, proc_fd, method);
        if (result.rc == 0)
            result.rc = rm__tree_walk(&w, root);
        if (result.rc == 0)
            result.rc = rm__tree_walk(&w, root);
        result.found = w.found_len;
        result.unwalked = w.unwalked;
        rm__tree_walker_free(&w);
        _exit(write(report[1], &result, sizeof result) == (ssize_t)sizeof result ? 0 : 1);
    }
    close(report[1]);
    limited_walk result;
    assert_int_equal(read(report[0], &result, sizeof result), sizeof result);
    close(report[0]);
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    return result;
}

/* The walker kept two descriptors open per process with no bound: past the
 * hard limit on open files a process's children were not listed and its
 * whole subtree vanished, uncounted (a chain of 150 under a limit of 200
 * was found 90 deep).  Now it keeps at most a quarter of the hard limit
 * open and reads the rest with files opened and closed at once; where not
 * even that is possible the walk says how many processes it could not list
 * (unwalked), which the probe counts as unreadable.  The /proc scan read a
 * stat that failed for want of a descriptor as "no parent" for good. */
static void walk_past_the_open_file_limit_finds_or_counts_every_process(void **state)
{
    (void)state;
    test_child chain = test_spawn(run_chain, NULL, TEST_SPAWN_GROUP);
    test_child_wait_ready(&chain);
    limited_walk roomy = walk_with_spare_descriptors(chain.pid, RM__TREE_CHILDREN_FILES, 50);
    limited_walk scan = walk_with_spare_descriptors(chain.pid, RM__TREE_SCAN, 50);
    limited_walk starved = walk_with_spare_descriptors(chain.pid, RM__TREE_CHILDREN_FILES, 1);
    limited_walk scan_starved = walk_with_spare_descriptors(chain.pid, RM__TREE_SCAN, 1);
    test_child_kill(&chain);
    /* Helper-61's case: processes of 11 threads, a few descriptors to
     * spare -- the children files of the first were kept past the budget
     * and the rest of the chain went unlisted (found 1 of 20). */
    int depth = 20;
    test_child threaded = test_spawn(run_threaded_chain, &depth, TEST_SPAWN_GROUP);
    for (int i = 0; i <= depth; i++)
        test_child_wait_ready(&threaded); /* every process has its threads */
    limited_walk few = walk_with_spare_descriptors(threaded.pid, RM__TREE_CHILDREN_FILES, 6);
    test_child_kill(&threaded);
    assert_int_equal(few.rc, 0);
    assert_int_equal(few.found, depth);
    assert_int_equal(few.unwalked, 0);
    assert_int_equal(roomy.rc, 0);
    assert_int_equal(roomy.found, CHAIN_DEPTH);
    assert_int_equal(roomy.unwalked, 0);
    assert_int_equal(scan.rc, 0);
    assert_int_equal(scan.found, CHAIN_DEPTH);
    assert_int_equal(scan.unwalked, 0);
    /* One spare descriptor: a task directory opens, its children file
     * cannot; a /proc listing opens, no stat file can. */
    assert_int_equal(starved.rc, 0);
    assert_true(starved.found < CHAIN_DEPTH);
    assert_true(starved.unwalked > 0);
    assert_int_equal(scan_starved.rc, 0);
    assert_true(scan_starved.found < CHAIN_DEPTH);
    /* One for the walk: which of the machine's unreadable stats were the
     * tree's cannot be told (counting each made 397 of a one-process run). */
    assert_int_equal(scan_starved.unwalked, 1);
}

/* fork -> start -> wait4 -> stop, the child's whole run shorter than one
 * interval: the window still has the child's CPU (as wait4 accounts it) and
 * an exact peak no smaller than the memory it held. */
/* Holds `megabytes`, reports ready, and on go sends its CPU clock and burns
 * 0.1 s more. */
static int hold_then_burn_on_go(const test_child *self, const void *arg)
{
    size_t megabytes = *(const size_t *)arg;
    char *block = malloc(megabytes << 20);
    if (!block)
        return 2;
    test_touch(block, megabytes << 20);
    test_child_ready(self);
    test_child_go_wait(self);
    double at_go = clock_sec(CLOCK_PROCESS_CPUTIME_ID);
    test_child_send(self, &at_go, sizeof at_go);
    burn_cpu(0.1);
    return 0;
}

static void target_reaped_before_stop_keeps_its_cpu_and_peak(void **state)
{
    (void)state;
    const size_t held_mb = 64;
    test_child target = test_spawn(hold_then_burn_on_go, &held_mb, 0);
    test_child_wait_ready(&target);
    resmon_options opts = {.struct_size = sizeof(resmon_options), .sample_interval_sec = 2.0, .pid = target.pid, .include_children = 1};
    resmon_monitor *m = test_monitor_new(&opts);
    assert_non_null(m);
    assert_int_equal(resmon_monitor_start(m), 0);
    test_child_go(&target);
    double cpu_at_go;
    test_child_receive(&target, &cpu_at_go, sizeof cpu_at_go);
    struct rusage ru;
    test_child_reap(&target, &ru);
    assert_int_equal(resmon_monitor_stop(m), 0);
    resmon_summary s = test_summary(m);
    resmon_monitor_free(m);
    double total = test_rusage_sec(&ru);
    double in_window = total - cpu_at_go;
    ASSERT_BETWEEN(in_window, 0.1, 10);
    ASSERT_BETWEEN(s.cpu_time_sec, in_window * 0.95 - two_ticks_sec(), in_window * 1.05 + two_ticks_sec());
    ASSERT_BETWEEN(s.hwm_rss_mb, (double)held_mb, (double)held_mb * 1.5 * SANITIZER_MEMORY_FACTOR);
    assert_true(s.hwm_rss_mb >= s.peak_rss_mb);
}

/* A process walked while it had one thread (the walk then reads one
 * children file, after one fstat of its task directory) that gains a
 * thread, whose fork is listed only under that thread; or whose thread
 * forks and ends, handing its child to the main thread.  The next reading
 * after the fork must track the child, either way. */
typedef struct late_thread_args {
    const test_child *self;
    int thread_ends;
} late_thread_args;

static void *fork_and_report(void *arg)
{
    const late_thread_args *a = arg;
    pid_t child = fork();
    if (child == 0) {
        test_child_idle();
    }
    if (!a->thread_ends)
        test_child_send(a->self, &child, sizeof child);
    if (a->thread_ends)
        return (void *)(intptr_t)child;
    test_child_idle();
}

static int thread_forks_on_go(const test_child *self, const void *arg)
{
    late_thread_args a = {self, *(const int *)arg};
    test_child_ready(self);
    test_child_go_wait(self);
    pthread_t thread;
    if (pthread_create(&thread, NULL, fork_and_report, &a) != 0)
        return 2;
    if (a.thread_ends) {
        void *child;
        pthread_join(thread, &child); /* the thread has ended: its child is the main thread's */
        pid_t pid = (pid_t)(intptr_t)child;
        test_child_send(self, &pid, sizeof pid);
    }
    test_child_idle();
}

static int probe_tracks(rm__probe *probe, pid_t pid)
{
    const pid_t *pids;
    size_t count;
    rm__probe_pids(probe, &pids, &count);
    for (size_t i = 0; i < count; i++)
        if (pids[i] == pid)
            return 1;
    return 0;
}

/* Whether every thread of process group pgid is asleep (S, or stopped, or
 * a zombie): none is on a CPU or waiting for one. */
static int group_asleep(pid_t pgid)
{
    DIR *proc = opendir("/proc");
    assert_non_null(proc);
    int asleep = 1;
    for (struct dirent *d; asleep && (d = readdir(proc));) {
        if (d->d_name[0] < '1' || d->d_name[0] > '9')
            continue;
        char path[300];
        snprintf(path, sizeof path, "/proc/%.32s/task", d->d_name);
        DIR *tasks = opendir(path);
        for (struct dirent *t; asleep && tasks && (t = readdir(tasks));) {
            if (t->d_name[0] < '1' || t->d_name[0] > '9')
                continue;
            char stat_path[300], text[1024];
            snprintf(stat_path, sizeof stat_path, "/proc/%.32s/task/%.32s/stat", d->d_name, t->d_name);
            FILE *f = fopen(stat_path, "r");
            size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
            if (f)
                fclose(f);
            text[n] = '\0';
            const char *paren = strrchr(text, ')');
            char state;
            int ppid, pgrp;
            if (paren && sscanf(paren + 1, " %c %d %d", &state, &ppid, &pgrp) == 3 && pgrp == (int)pgid &&
                state != 'S' && state != 'Z' && state != 't' && state != 'T')
                asleep = 0;
        }
        if (tasks)
            closedir(tasks);
    }
    closedir(proc);
    return asleep;
}

/* Spawns work(arg), reads its tree a few times (steady), lets it fork (it
 * sends the new pid) and checks that the next reading, once the forking
 * thread is asleep again, tracks the new process.  (The kernel updates a
 * process's CPU clock, as another process reads it, only at the scheduler's
 * events -- a block, a preemption, a tick: a thread still on a CPU that
 * forked a moment ago shows its old clock, and its lists are read afresh at
 * the first reading after its next such event.  A test that read at once
 * failed 2 to 6 times in 120 under six busy loops.) */
static void assert_next_reading_tracks_a_fork_of(test_workload work, const void *arg)
{
    test_child target = test_spawn(work, arg, TEST_SPAWN_GROUP);
    test_child_wait_ready(&target);
    rm__probe *probe;
    assert_int_equal(rm__probe_open(&probe, target.pid, 1, NULL), 0);
    rm__probe_reading r;
    assert_int_equal(rm__probe_begin(probe, &r), 0);
    for (int i = 0; i < 3; i++)
        assert_int_equal(rm__probe_read(probe, &r), 0);
    test_child_go(&target);
    pid_t child;
    test_child_receive(&target, &child, sizeof child);
    double safety_net = test_now() + 60;
    while (!group_asleep(target.pid) && test_now() < safety_net)
        test_sleep(0.0005); /* waiting for a state, not for a time */
    assert_int_equal(rm__probe_read(probe, &r), 0);
    int tracked = probe_tracks(probe, child);
    rm__probe_close(probe);
    test_child_kill(&target);
    assert_true(tracked);
}

static void walk_finds_a_fork_of_a_thread_born_after_the_last_walk(int thread_ends)
{
    assert_next_reading_tracks_a_fork_of(thread_forks_on_go, &thread_ends);
}

static void walk_finds_a_fork_of_a_new_thread(void **state)
{
    (void)state;
    walk_finds_a_fork_of_a_thread_born_after_the_last_walk(0);
}

static void walk_finds_a_fork_of_a_thread_that_ended(void **state)
{
    (void)state;
    walk_finds_a_fork_of_a_thread_born_after_the_last_walk(1);
}

/* A process of many threads: the walk finds its children from a listing of
 * /proc (their parent links) instead of a children file per thread, from
 * more threads than a third of the processes /proc lists.  So that a test
 * takes that path on any machine, it starts more threads than that. */
static int many_threads_here(void)
{
    int processes = 0;
    DIR *proc = opendir("/proc");
    assert_non_null(proc);
    for (struct dirent *e; (e = readdir(proc));)
        processes += e->d_name[0] >= '1' && e->d_name[0] <= '9';
    closedir(proc);
    return processes / 3 + 100;
}

static void *sleep_in_a_thread(void *arg)
{
    (void)arg;
    for (;;)
        pause();
    return NULL;
}

static int start_sleeping_threads(int threads)
{
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    for (int i = 0; i < threads; i++) {
        pthread_t t;
        if (pthread_create(&t, &attr, sleep_in_a_thread, NULL) != 0)
            return -1;
    }
    pthread_attr_destroy(&attr);
    return 0;
}

/* One of its many threads forks on go; the next reading tracks the child. */
typedef struct many_threads_args {
    int threads;
    const test_child *self;
} many_threads_args;

static void *fork_on_go(void *arg)
{
    const many_threads_args *a = arg;
    test_child_go_wait(a->self);
    pid_t child = fork();
    if (child == 0)
        test_child_idle();
    test_child_send(a->self, &child, sizeof child);
    test_child_idle();
}

static int many_threads_one_forks_on_go(const test_child *self, const void *arg)
{
    many_threads_args a = {*(const int *)arg, self};
    if (start_sleeping_threads(a.threads) < 0)
        return 2;
    pthread_t forker;
    if (pthread_create(&forker, NULL, fork_on_go, &a) != 0)
        return 2;
    test_child_ready(self);
    test_child_idle();
}

static void walk_finds_a_fork_in_a_process_of_many_threads(void **state)
{
    (void)state;
    int threads = many_threads_here();
    assert_next_reading_tracks_a_fork_of(many_threads_one_forks_on_go, &threads);
}

/* A subreaper of many threads (its children found from parent links) whose
 * child ends: the grandchild is handed to it, and the parent the listing
 * kept for the grandchild is stale.  What the grandchild forks then must be
 * tracked at the next reading.  The same with the /proc scan, which keeps
 * parents the same way. */
static int subreaper_gets_a_grandchild(const test_child *self, const void *arg)
{
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0 || start_sleeping_threads(*(const int *)arg) < 0)
        return 2;
    if (fork() == 0) {
        sigset_t usr1;
        sigemptyset(&usr1);
        sigaddset(&usr1, SIGUSR1);
        sigprocmask(SIG_BLOCK, &usr1, NULL);
        if (fork() == 0) {
            /* Told when its parent ends, once it has been handed to the subreaper. */
            if (prctl(PR_SET_PDEATHSIG, SIGUSR1) != 0)
                _exit(2);
            test_child_ready(self);
            int sig;
            sigwait(&usr1, &sig);
            pid_t child = fork();
            if (child == 0)
                test_child_idle();
            test_child_send(self, &child, sizeof child);
            test_child_idle();
        }
        test_child_go_wait(self);
        _exit(0); /* the subreaper leaves it a zombie */
    }
    test_child_idle();
}

static void walk_follows_a_process_handed_to_a_subreaper(void **state)
{
    (void)state;
    int threads = many_threads_here();
    assert_next_reading_tracks_a_fork_of(subreaper_gets_a_grandchild, &threads);
}

/* Issue 33: a process whose CPU clock stood still since the walk that last
 * read its children lists has them reused, unread.  The rules that keep
 * that exact, each with a root that sleeps through the readings before: */

/* A sleeping process that wakes and forks: its clock moved, its list is
 * read afresh and the child tracked at the next reading. */
static int forks_on_go(const test_child *self, const void *arg)
{
    (void)arg;
    test_child_ready(self);
    test_child_go_wait(self);
    pid_t child = fork();
    if (child == 0)
        test_child_idle();
    test_child_send(self, &child, sizeof child);
    test_child_idle();
}

static void walk_finds_a_fork_of_a_process_that_slept(void **state)
{
    (void)state;
    assert_next_reading_tracks_a_fork_of(forks_on_go, NULL);
}

/* A child of a sleeping root makes a process with clone(CLONE_PARENT):
 * the root's list grows while the root never runs.  The child that ran has
 * the lists above it read afresh. */
static int child_clones_a_sibling_on_go(const test_child *self, const void *arg)
{
    (void)arg;
    if (fork() == 0) {
        test_child_go_wait(self);
        pid_t sibling = (pid_t)syscall(SYS_clone, CLONE_PARENT | SIGCHLD, NULL, NULL, NULL, NULL);
        if (sibling == 0)
            test_child_idle();
        test_child_send(self, &sibling, sizeof sibling);
        test_child_idle();
    }
    test_child_ready(self);
    test_child_idle();
}

static void walk_finds_a_sibling_made_with_clone_parent(void **state)
{
    (void)state;
    assert_next_reading_tracks_a_fork_of(child_clones_a_sibling_on_go, NULL);
}

/* A sleeping subreaper whose child forks and ends between two readings: the
 * grandchild, never tracked, is handed to the subreaper, whose list grows
 * while it never runs.  The child that ended has the lists above it read
 * afresh, and the orphan is tracked at the next reading. */
static int subreaper_gets_an_orphan_born_on_go(const test_child *self, const void *arg)
{
    (void)arg;
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
        return 2;
    if (fork() == 0) {
        test_child_go_wait(self);
        pid_t parent = getpid();
        sigset_t usr1;
        sigemptyset(&usr1);
        sigaddset(&usr1, SIGUSR1);
        sigprocmask(SIG_BLOCK, &usr1, NULL);
        if (fork() == 0) {
            if (prctl(PR_SET_PDEATHSIG, SIGUSR1) != 0)
                _exit(2);
            if (getppid() == parent) { /* else handed over already */
                int sig;
                sigwait(&usr1, &sig);
            }
            pid_t me = getpid();
            test_child_send(self, &me, sizeof me);
            test_child_idle();
        }
        _exit(0); /* the subreaper leaves it a zombie */
    }
    test_child_ready(self);
    test_child_idle();
}

static void walk_finds_an_orphan_handed_to_a_sleeping_subreaper(void **state)
{
    (void)state;
    assert_next_reading_tracks_a_fork_of(subreaper_gets_an_orphan_born_on_go, NULL);
}

/* The subreaper test above with a subreaper of one thread (children
 * lists, reused while it sleeps): what the handed-over grandchild forks is
 * found. */
static void walk_follows_a_process_handed_to_a_sleeping_subreaper(void **state)
{
    (void)state;
    int threads = 0;
    assert_next_reading_tracks_a_fork_of(subreaper_gets_a_grandchild, &threads);
}

/* A process that sleeps between readings keeps its latest statm figure
 * and peak mark unread (issue 33: its CPU clock is the reading), so one that
 * woke, allocated and slept again must be read afresh the next reading:
 * its new RSS in the tree's sum, its new VmHWM in the lifetime peak.  The
 * child (not the root, whose statm is read every time) maps `step` MiB on
 * each go and reports ready asleep; on the second go it unmaps them again,
 * so only its peak mark shows them, and it ends before the peak is asked
 * (a live process's mark is read then anyway). */
enum { WAKE_STEP_MB = 64 };

static int grow_in_a_child_on_go(const test_child *self, const void *arg)
{
    (void)arg;
    pid_t child = fork();
    if (child == 0) {
        size_t bytes = (size_t)WAKE_STEP_MB << 20;
        test_child_go_wait(self);
        char *kept = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (kept == MAP_FAILED)
            _exit(2);
        test_touch(kept, bytes);
        test_child_ready(self);
        test_child_go_wait(self);
        char *released = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (released == MAP_FAILED)
            _exit(2);
        test_touch(released, bytes);
        munmap(released, bytes);
        test_child_ready(self);
        test_child_await(self); /* until the test closes go: it ends */
        _exit(0);
    }
    test_child_send(self, &child, sizeof child);
    test_child_idle();
}

static void wait_for_zombie(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    double safety_net = test_now() + 60;
    for (;;) {
        char text[512] = "";
        FILE *f = fopen(path, "r");
        assert_non_null(f);
        size_t n = fread(text, 1, sizeof text - 1, f);
        fclose(f);
        text[n] = '\0';
        const char *paren = strrchr(text, ')');
        if (paren && paren[1] == ' ' && paren[2] == 'Z')
            return;
        assert_true(test_now() < safety_net);
        test_sleep(0.0005); /* waiting for a state, not for a time */
    }
}

static void sleeper_that_woke_is_read_at_its_new_rss_and_peak(void **state)
{
    (void)state;
    test_child target = test_spawn(grow_in_a_child_on_go, NULL, TEST_SPAWN_GROUP);
    pid_t child;
    test_child_receive(&target, &child, sizeof child);
    rm__probe *probe;
    assert_int_equal(rm__probe_open(&probe, target.pid, 1, NULL), 0);
    rm__probe_keep_peak_marks(probe);
    rm__probe_reading r;
    assert_int_equal(rm__probe_begin(probe, &r), 0);
    for (int i = 0; i < 3; i++) /* the child asleep: its statm now stands */
        assert_int_equal(rm__probe_read(probe, &r), 0);
    assert_true(probe_tracks(probe, child));
    uint64_t asleep = r.rss_bytes, step = (uint64_t)WAKE_STEP_MB << 20;
    test_child_go(&target);
    test_child_wait_ready(&target); /* mapped, touched, asleep again */
    assert_int_equal(rm__probe_read(probe, &r), 0);
    uint64_t grown = r.rss_bytes;
    test_child_go(&target);
    test_child_wait_ready(&target); /* a further step mapped and unmapped */
    assert_int_equal(rm__probe_read(probe, &r), 0);
    double child_mark_mb = peak_mark_mb(child);
    /* It ends now (a zombie: no mark left to read), so the lifetime peak
     * holds its mark only if that reading read it. */
    test_child_release(&target);
    wait_for_zombie(child);
    uint64_t peak;
    resmon_hwm_scope scope;
    int reset_error;
    assert_int_equal(rm__probe_peak_rss(probe, &peak, &scope, &reset_error), 0);
    rm__probe_close(probe);
    test_child_kill(&target);
    assert_true(grown >= asleep + step * 15 / 16);
    assert_int_equal(scope, RESMON_HWM_LIFETIME);
    assert_true(child_mark_mb >= 2.0 * WAKE_STEP_MB);
    assert_true((double)peak >= child_mark_mb * 1048576.0);
}

/* The exact peak asked while the window runs (once a second by the
 * command) reads the mark only of a process that ran since its latest
 * mark read: one that woke, peaked and slept again between two asks must
 * be read at the next ask, its mark above anything a sample saw. */
static void peak_asked_again_reads_the_mark_of_a_sleeper_that_woke(void **state)
{
    (void)state;
    test_child target = test_spawn(grow_in_a_child_on_go, NULL, TEST_SPAWN_GROUP);
    pid_t child;
    test_child_receive(&target, &child, sizeof child);
    rm__probe *probe;
    assert_int_equal(rm__probe_open(&probe, target.pid, 1, NULL), 0);
    rm__probe_reading r;
    uint64_t peak;
    resmon_hwm_scope scope;
    int reset_error;
    assert_int_equal(rm__probe_begin(probe, &r), 0);
    for (int i = 0; i < 3; i++) /* the child asleep: its mark, once read, stands */
        assert_int_equal(rm__probe_read(probe, &r), 0);
    assert_true(probe_tracks(probe, child));
    assert_int_equal(rm__probe_peak_rss(probe, &peak, &scope, &reset_error), 0);
    assert_int_equal(rm__probe_peak_rss(probe, &peak, &scope, &reset_error), 0);
    test_child_go(&target);
    test_child_wait_ready(&target); /* a step mapped and kept, asleep again */
    test_child_go(&target);
    test_child_wait_ready(&target); /* a further step mapped and unmapped */
    assert_int_equal(rm__probe_read(probe, &r), 0);
    double child_mark_mb = peak_mark_mb(child);
    assert_int_equal(rm__probe_peak_rss(probe, &peak, &scope, &reset_error), 0);
    rm__probe_close(probe);
    test_child_kill(&target);
    assert_true(child_mark_mb >= 2.0 * WAKE_STEP_MB);
    assert_true((double)peak >= child_mark_mb * 1048576.0);
}

/* The resmon command's case: the monitoring process is the child subreaper
 * of the tree and a root of the walk (for the orphans it adopts).  The walk
 * reads its main thread's list alone each time (the kernel hands an orphan
 * to a subreaper's first live thread) and every thread's once a second: an
 * orphan is found at the next walk, a child another thread forked within
 * that second. */
static int parent_of_an_orphan(const test_child *self, const void *arg)
{
    (void)arg;
    pid_t orphan = fork();
    if (orphan == 0)
        test_child_idle();
    test_child_send(self, &orphan, sizeof orphan);
    return 0; /* the orphan is handed to the subreaper */
}

typedef struct thread_child {
    test_child child;
    int told[2]; /* the thread writes its child's pid here */
    int stop[2]; /* and waits for its end here: its child stays its own */
} thread_child;

static int idle_child(const test_child *self, const void *arg)
{
    (void)self, (void)arg;
    test_child_idle();
}

static void *fork_then_wait(void *arg)
{
    thread_child *t = arg;
    t->child = test_spawn(idle_child, NULL, 0);
    if (write(t->told[1], &t->child.pid, sizeof t->child.pid) != sizeof t->child.pid)
        return NULL;
    char byte;
    while (read(t->stop[0], &byte, 1) < 0 && errno == EINTR)
        ;
    return NULL;
}

static int walk_found(const rm__tree_walker *w, pid_t pid)
{
    for (size_t i = 0; i < w->found_len; i++)
        if (w->found[i] == pid)
            return 1;
    return 0;
}

static void walk_from_the_reaper_finds_its_orphans_and_threads_children(void **state)
{
    (void)state;
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/children", (int)getpid());
    if (access(path, R_OK) != 0)
        skip(); /* a kernel without children lists: the walk scans /proc */
    int was_subreaper = 0;
    assert_int_equal(prctl(PR_GET_CHILD_SUBREAPER, &was_subreaper, 0, 0, 0), 0);
    assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
    int proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    assert_true(proc_fd >= 0);
    rm__tree_walker w;
    rm__tree_walker_init(&w, proc_fd, RM__TREE_CHILDREN_FILES);
    pid_t self = getpid();
    test_child root = test_spawn(idle_child, NULL, 0); /* the monitored root: the main thread's child */
    rm__tree_walker_note_reaper(&w, self, root.pid);
    assert_int_equal(rm__tree_walk_from(&w, &self, 1), 0); /* every thread's list */
    assert_true(walk_found(&w, root.pid));

    test_child parent = test_spawn(parent_of_an_orphan, NULL, 0);
    pid_t orphan;
    test_child_receive(&parent, &orphan, sizeof orphan);
    test_child_reap(&parent, NULL); /* it has ended: the orphan is ours */
    assert_int_equal(rm__tree_walk_from(&w, &self, 1), 0);
    assert_true(walk_found(&w, orphan)); /* the main thread's list, at once */

    thread_child t;
    assert_int_equal(pipe2(t.told, O_CLOEXEC), 0);
    assert_int_equal(pipe2(t.stop, O_CLOEXEC), 0);
    pthread_t thread;
    assert_int_equal(pthread_create(&thread, NULL, fork_then_wait, &t), 0);
    pid_t forked = 0;
    assert_int_equal(read(t.told[0], &forked, sizeof forked), sizeof forked);
    assert_true(forked > 0);
    double start = test_now();
    int found = 0;
    while (!found && test_now() < start + test_scaled(5)) {
        assert_int_equal(rm__tree_walk_from(&w, &self, 1), 0);
        found = walk_found(&w, forked);
        if (!found)
            test_sleep(0.01);
    }
    assert_true(found);
    assert_true(walk_found(&w, orphan));

    assert_int_equal(write(t.stop[1], "x", 1), 1);
    pthread_join(thread, NULL);
    for (int i = 0; i < 2; i++)
        close(t.told[i]), close(t.stop[i]);
    test_child_kill(&t.child);
    test_child_kill(&root);
    kill(orphan, SIGKILL);
    while (waitpid(orphan, NULL, 0) < 0 && errno == EINTR)
        ;
    rm__tree_walker_free(&w);
    close(proc_fd);
    assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, was_subreaper, 0, 0, 0), 0);
}

/* The reaper's main thread exited (pthread_exit in main): its children, the
 * root among them, and every later orphan go to a live thread.  The main
 * thread's list no longer has the root, so every thread's is read: the
 * orphan is found at the next walk, not a second later (a review found it
 * up to 1 s late, and missed when shorter-lived).  In a child of the test,
 * whose main thread can end; its exit status is the verdict. */
static int leader_zombie(pid_t pid)
{
    char path[64], text[512] = "";
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    const char *paren = n > 0 ? strrchr(text, ')') : NULL;
    return paren && paren[1] == ' ' && paren[2] == 'Z';
}

typedef struct exited_main_args {
    pid_t self, root;
} exited_main_args;

static void *walk_after_main_exited(void *arg)
{
    const exited_main_args *a = arg;
    double safety_net = test_now() + 60;
    while (!leader_zombie(a->self) && test_now() < safety_net)
        test_sleep(0.0005);
    int proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    rm__tree_walker w;
    rm__tree_walker_init(&w, proc_fd, RM__TREE_CHILDREN_FILES);
    rm__tree_walker_note_reaper(&w, a->self, a->root);
    pid_t self = a->self;
    int verdict = 0;
    if (rm__tree_walk_from(&w, &self, 1) != 0 || !walk_found(&w, a->root))
        verdict = 81; /* the root, handed to this thread, is found by the full listing */
    int link[2];
    pid_t parent = verdict || pipe(link) != 0 ? -1 : fork();
    if (parent == 0) {
        pid_t orphan = fork();
        if (orphan == 0) {
            for (;;)
                pause();
        }
        (void)!write(link[1], &orphan, sizeof orphan);
        _exit(0);
    }
    pid_t orphan = 0;
    if (parent < 0 || read(link[0], &orphan, sizeof orphan) != sizeof orphan)
        verdict = verdict ? verdict : 82;
    while (parent > 0 && waitpid(parent, NULL, 0) < 0 && errno == EINTR)
        ;
    if (!verdict && (rm__tree_walk_from(&w, &self, 1) != 0 || !walk_found(&w, orphan)))
        verdict = 83; /* the walk right after: at once */
    if (orphan > 0)
        kill(orphan, SIGKILL);
    kill(a->root, SIGKILL);
    _exit(verdict);
}

static int reaper_whose_main_thread_exits(const test_child *self, const void *arg)
{
    (void)self, (void)arg;
    if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0)
        return 80;
    static exited_main_args a;
    a.self = getpid();
    a.root = fork();
    if (a.root == 0) {
        for (;;)
            pause();
    }
    pthread_t thread;
    if (a.root < 0 || pthread_create(&thread, NULL, walk_after_main_exited, &a) != 0)
        return 79;
    pthread_exit(NULL);
}

static void walk_from_a_reaper_whose_main_thread_exited_finds_orphans_at_once(void **state)
{
    (void)state;
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/children", (int)getpid());
    if (access(path, R_OK) != 0)
        skip();
    test_child reaper = test_spawn(reaper_whose_main_thread_exits, NULL, 0);
    int status = test_child_reap(&reaper, NULL);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

static int use_children_lists(void **state)
{
    (void)state;
    unsetenv("RESMON_FORCE_PROC_SCAN");
    return 0;
}

static int use_proc_scan(void **state)
{
    (void)state;
    setenv("RESMON_FORCE_PROC_SCAN", "1", 1);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(tree_counts_children_and_grandchildren, use_children_lists),
        cmocka_unit_test_setup(tree_counts_children_and_grandchildren, use_proc_scan),
        cmocka_unit_test_setup(tree_includes_child_forked_by_worker_thread, use_children_lists),
        cmocka_unit_test_setup(tree_includes_child_forked_by_worker_thread, use_proc_scan),
        cmocka_unit_test_setup(tree_cpu_counts_busy_children, use_children_lists),
        cmocka_unit_test_setup(tree_cpu_counts_busy_children, use_proc_scan),
        cmocka_unit_test(target_that_exits_ends_the_window_with_its_samples),
        cmocka_unit_test(zombie_target_ends_the_window_with_one_sample),
        cmocka_unit_test(target_becoming_a_zombie_ends_on_its_last_live_memory),
        cmocka_unit_test(keep_peak_mark_leaves_the_mark_and_reports_the_lifetime_peak),
        cmocka_unit_test(missing_process_is_refused_at_start),
        cmocka_unit_test_setup(tree_cpu_counts_children_reaped_between_samples, use_children_lists),
        cmocka_unit_test_setup(tree_cpu_counts_children_reaped_between_samples, use_proc_scan),
        cmocka_unit_test_setup(tree_cpu_counts_tracked_children_once, use_children_lists),
        cmocka_unit_test_setup(tree_cpu_counts_tracked_children_once, use_proc_scan),
        cmocka_unit_test(stat_of_a_released_process_reads_gone),
        cmocka_unit_test_setup(process_whose_main_thread_exited_reads_live, use_tree_mode),
        cmocka_unit_test_setup(process_whose_main_thread_exited_reads_live, use_single_mode),
        cmocka_unit_test_setup(process_whose_main_thread_exited_reads_live_without_descriptors, use_tree_mode),
        cmocka_unit_test_setup(process_whose_main_thread_exited_reads_live_without_descriptors, use_single_mode),
        cmocka_unit_test(busy_machine_loses_no_cpu),
        cmocka_unit_test(probe_readings_add_up_to_the_cpu_clock),
        cmocka_unit_test_setup(tree_tracks_every_child_of_a_large_family, use_children_lists),
        cmocka_unit_test_setup(walk_finds_a_fork_of_a_new_thread, use_children_lists),
        cmocka_unit_test_setup(walk_finds_a_fork_of_a_thread_that_ended, use_children_lists),
        cmocka_unit_test_setup(walk_finds_a_fork_of_a_new_thread, use_proc_scan),
        cmocka_unit_test_setup(walk_finds_a_fork_in_a_process_of_many_threads, use_children_lists),
        cmocka_unit_test_setup(walk_follows_a_process_handed_to_a_subreaper, use_children_lists),
        cmocka_unit_test_setup(walk_follows_a_process_handed_to_a_subreaper, use_proc_scan),
        cmocka_unit_test_setup(walk_finds_a_fork_of_a_process_that_slept, use_children_lists),
        cmocka_unit_test_setup(walk_finds_a_sibling_made_with_clone_parent, use_children_lists),
        cmocka_unit_test_setup(walk_finds_an_orphan_handed_to_a_sleeping_subreaper, use_children_lists),
        cmocka_unit_test_setup(walk_follows_a_process_handed_to_a_sleeping_subreaper, use_children_lists),
        cmocka_unit_test_setup(peak_asked_again_reads_the_mark_of_a_sleeper_that_woke, use_children_lists),
        cmocka_unit_test(walk_from_the_reaper_finds_its_orphans_and_threads_children),
        cmocka_unit_test(walk_from_a_reaper_whose_main_thread_exited_finds_orphans_at_once),
        cmocka_unit_test(target_reaped_before_stop_keeps_its_cpu_and_peak),
        cmocka_unit_test_setup(probe_peak_keeps_a_descendant_that_ended, use_children_lists),
        cmocka_unit_test(peak_of_a_child_born_in_the_window_is_the_windows),
        cmocka_unit_test_setup(sleeper_that_woke_is_read_at_its_new_rss_and_peak, use_children_lists),
        cmocka_unit_test_setup(sleeper_that_woke_is_read_at_its_new_rss_and_peak, use_proc_scan),
        /* last: it leaves ~400 killed processes to the reaper of the test's orphans */
        cmocka_unit_test(walk_past_the_open_file_limit_finds_or_counts_every_process),
        cmocka_unit_test(a_wide_family_under_a_low_open_file_limit_is_read_whole),
        cmocka_unit_test(a_process_read_without_a_free_descriptor_is_not_taken_for_ended),
        cmocka_unit_test(a_child_handed_to_a_subreaper_root_is_settled_against_it),
        cmocka_unit_test(a_pool_found_together_is_refreshed_apart),
        cmocka_unit_test(a_wide_tree_in_its_leaf_refreshes_sleepers_every_minute),
    };
    if (getenv("RESMON_TEST_FILTER")) /* one test by name, e.g. while proving it */
        cmocka_set_test_filter(getenv("RESMON_TEST_FILTER"));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
