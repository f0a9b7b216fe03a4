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
#include <stdlib.h>
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

static void target_becoming_a_zombie_gives_the_last_sample(void **state)
{
    (void)state;
    pid_t target = fork();
    if (target == 0) {
        test_sleep(0.1);
        _exit(0);
    }
    resmon_options opts = {.struct_size = sizeof(resmon_options), .sample_interval_sec = 0.01, .pid = target};
    resmon_monitor *m = test_monitor_new(&opts);
    assert_int_equal(resmon_monitor_start(m), 0);
    siginfo_t info;
    waitid(P_PID, (id_t)target, &info, WEXITED | WNOWAIT); /* exited, not reaped */
    double deadline = test_now() + 2;
    while (resmon_monitor_running(m) && test_now() < deadline)
        test_sleep(0.001);
    assert_int_equal(resmon_monitor_running(m), 0);
    resmon_sample last;
    size_t n = test_samples(m, NULL, 0);
    resmon_sample *all = calloc(n, sizeof *all);
    test_samples(m, all, n);
    last = all[n - 1];
    ASSERT_DOUBLE_EQ(last.rss_mb, 0); /* the zombie's: its memory is gone */
    assert_true(all[n - 2].rss_mb > 0);
    free(all);
    waitpid(target, NULL, 0);
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
        cmocka_unit_test(target_becoming_a_zombie_gives_the_last_sample),
        cmocka_unit_test(missing_process_is_refused_at_start),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
