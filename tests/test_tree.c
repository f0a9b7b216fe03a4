/*
 * test_tree.c -- monitoring another process and its descendants (faults.md
 * 4, 5, 7, 8, 9): children and grandchildren found each sample, a child
 * forked by a worker thread, a target that exits, one that never existed.
 * Runs each tree test with the kernel's children lists (where it has them)
 * and with the /proc scan.
 */
#include "resmon.h"
#include "test_util.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

/* Touches megabytes of memory, then sleeps until killed. */
static void hold_memory_forever(size_t megabytes)
{
    char *block = malloc(megabytes << 20);
    if (block)
        test_touch(block, megabytes << 20);
    for (;;)
        pause();
}

/* A target that forks `children` processes each holding `megabytes`, and
 * holds 10 MiB itself. */
static pid_t spawn_family(int children, size_t megabytes)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        for (int i = 0; i < children; i++)
            if (fork() == 0)
                hold_memory_forever(megabytes);
        hold_memory_forever(10);
    }
    return pid;
}

static void *fork_from_thread(void *arg)
{
    if (fork() == 0)
        hold_memory_forever((size_t)(uintptr_t)arg);
    for (;;)
        pause();
    return NULL;
}

/* A target whose only child is forked by a worker thread, not by main. */
static pid_t spawn_thread_forker(size_t megabytes)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        pthread_t tid;
        pthread_create(&tid, NULL, fork_from_thread, (void *)(uintptr_t)megabytes);
        for (;;)
            pause();
    }
    return pid;
}

static void kill_family(pid_t pid)
{
    /* The children are in our process group: end them with the target. */
    char cmd[64];
    snprintf(cmd, sizeof cmd, "pkill -KILL -P %d 2>/dev/null", (int)pid);
    if (system(cmd) < 0)
        fail();
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
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
    pid_t target = spawn_family(2, 100);
    test_sleep(0.5); /* let the children touch their memory */
    resmon_summary tree = monitor_for(target, 1, 0.2);
    resmon_summary alone = monitor_for(target, 0, 0.2);
    kill_family(target);
    ASSERT_BETWEEN(tree.peak_rss_mb, 200, 260 * SANITIZER_MEMORY_FACTOR);
    ASSERT_BETWEEN(alone.peak_rss_mb, 1, 40 * SANITIZER_MEMORY_FACTOR);
}

static void tree_includes_child_forked_by_worker_thread(void **state)
{
    (void)state;
    pid_t target = spawn_thread_forker(120);
    test_sleep(0.5);
    resmon_summary tree = monitor_for(target, 1, 0.2);
    kill_family(target);
    ASSERT_BETWEEN(tree.peak_rss_mb, 120, 160 * SANITIZER_MEMORY_FACTOR);
}

static void tree_cpu_counts_busy_children(void **state)
{
    (void)state;
    pid_t target = fork();
    if (target == 0) {
        if (fork() == 0)
            test_spin(30); /* killed long before */
        for (;;)
            pause();
    }
    test_sleep(0.1);
    resmon_summary tree = monitor_for(target, 1, 0.5);
    resmon_summary alone = monitor_for(target, 0, 0.3);
    kill_family(target);
    ASSERT_BETWEEN(tree.mean_cpu_percent, 70, 130);
    ASSERT_BETWEEN(alone.mean_cpu_percent, 0, 10);
}

static void target_that_exits_ends_the_window_with_its_samples(void **state)
{
    (void)state;
    pid_t target = fork();
    if (target == 0) {
        test_spin(0.15);
        _exit(0);
    }
    resmon_options opts = {.struct_size = sizeof(resmon_options), .sample_interval_sec = 0.01, .pid = target, .include_children = 1};
    resmon_monitor *m = test_monitor_new(&opts);
    assert_int_equal(resmon_monitor_start(m), 0);
    /* Reap it so that it vanishes entirely, as an attached target does. */
    waitpid(target, NULL, 0);
    double deadline = test_now() + 2;
    while (resmon_monitor_running(m) && test_now() < deadline)
        test_sleep(0.005);
    assert_int_equal(resmon_monitor_running(m), 0); /* the window ended by itself */
    resmon_summary s = test_summary(m);
    assert_true(s.num_samples >= 5);
    ASSERT_BETWEEN(s.mean_cpu_percent, 50, 130);
    assert_int_equal(resmon_monitor_stop(m), 0);
    assert_int_equal(test_summary(m).num_samples, s.num_samples);
    /* Starting again on a target that is gone fails cleanly. */
    assert_int_equal(resmon_monitor_start(m), -ESRCH);
    assert_int_equal(resmon_monitor_running(m), 0);
    resmon_monitor_free(m);
}

static void zombie_target_ends_the_window_with_one_sample(void **state)
{
    (void)state;
    pid_t target = fork();
    if (target == 0)
        _exit(0);
    test_sleep(0.05); /* now a zombie: exited, not reaped */
    resmon_options opts = {.struct_size = sizeof(resmon_options), .sample_interval_sec = 0.01, .pid = target};
    resmon_monitor *m = test_monitor_new(&opts);
    assert_int_equal(resmon_monitor_start(m), 0);
    double deadline = test_now() + 2;
    while (resmon_monitor_running(m) && test_now() < deadline)
        test_sleep(0.001);
    assert_int_equal(resmon_monitor_running(m), 0); /* nothing left to sample */
    assert_int_equal(resmon_monitor_stop(m), 0);
    resmon_summary s = test_summary(m);
    assert_int_equal(s.num_samples, 1);
    ASSERT_DOUBLE_EQ(s.peak_rss_mb, 0);
    waitpid(target, NULL, 0);
    resmon_monitor_free(m);
}

/* A child that touches `megabytes` it keeps and `release_megabytes` it
 * unmaps again (so its peak-RSS mark stays above its RSS), writes one byte to *ready and
 * exits when a byte arrives on *go (or go's writer closes). */
typedef struct held_memory_child {
    pid_t pid;
    int ready; /* read end */
    int go;    /* write end */
} held_memory_child;

static held_memory_child spawn_memory_holder(size_t megabytes, size_t release_megabytes)
{
    int ready[2], go[2];
    assert_int_equal(pipe(ready), 0);
    assert_int_equal(pipe(go), 0);
    held_memory_child c = {.pid = fork()};
    assert_true(c.pid >= 0);
    if (c.pid == 0) {
        close(go[1]); /* else its own copy keeps go open: no EOF */
        close(ready[0]);
        char *held = malloc(megabytes << 20);
        if (!held)
            _exit(1);
        test_touch(held, megabytes << 20);
        if (release_megabytes) {
            /* mmap, not malloc: munmap returns the pages at once, also under
             * ASan, whose free keeps them in quarantine. */
            size_t bytes = release_megabytes << 20;
            char *released = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (released == MAP_FAILED)
                _exit(1);
            test_touch(released, bytes);
            munmap(released, bytes);
        }
        char byte = 'r';
        if (write(ready[1], &byte, 1) != 1 || read(go[0], &byte, 1) < 0)
            _exit(1);
        _exit(held[0] == 7 ? 0 : 1);
    }
    close(ready[1]);
    close(go[0]);
    c.ready = ready[0];
    c.go = go[1];
    char byte;
    assert_int_equal(read(c.ready, &byte, 1), 1);
    return c;
}

/* Lets the child exit and waits until it is a zombie (exited, not reaped). */
static void let_exit_unreaped(held_memory_child *c)
{
    close(c->go);
    siginfo_t info;
    assert_int_equal(waitid(P_PID, (id_t)c->pid, &info, WEXITED | WNOWAIT), 0);
}

static void reap(held_memory_child *c)
{
    waitpid(c->pid, NULL, 0);
    close(c->ready);
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
    held_memory_child c = spawn_memory_holder(60, 0);
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
    reap(&c);
    resmon_monitor_free(m);
}

/* keep_peak_mark: the target's own peak-RSS mark is left alone, and the
 * lifetime peak is known after the target exited. */
static void keep_peak_mark_leaves_the_mark_and_reports_the_lifetime_peak(void **state)
{
    (void)state;
    held_memory_child c = spawn_memory_holder(10, 80);
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
    reap(&c);
    resmon_monitor_free(m);

    /* The default still resets the mark: the window's own peak. */
    c = spawn_memory_holder(10, 80);
    resmon_options reset = {.struct_size = sizeof(resmon_options), .sample_interval_sec = 0.01, .pid = c.pid};
    m = test_monitor_new(&reset);
    assert_int_equal(resmon_monitor_start(m), 0);
    assert_true(peak_mark_mb(c.pid) < 90);
    let_exit_unreaped(&c);
    resmon_monitor_stop(m);
    reap(&c);
    resmon_monitor_free(m);
}

static void missing_process_is_refused_at_start(void **state)
{
    (void)state;
    pid_t gone = fork();
    if (gone == 0)
        _exit(0);
    waitpid(gone, NULL, 0);
    resmon_options opts = {.struct_size = sizeof(resmon_options), .pid = gone};
    resmon_monitor *m = test_monitor_new(&opts);
    assert_non_null(m);
    assert_int_equal(resmon_monitor_start(m), -ESRCH);
    assert_int_equal(resmon_monitor_running(m), 0);
    assert_int_equal(test_summary(m).num_samples, 0);
    resmon_monitor_free(m);
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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
