/*
 * test_process_check.c -- resmon_process_check: whether a process can be
 * monitored, and when not, a distinct errno with words of its own (a
 * zombie, a kernel thread, no such process), on the real /proc and on a
 * fixture tree (RESMON_PROC_ROOT) where a kernel thread is spelled out.
 */
#include "resmon.h"
#include "test_util.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int ready_then_idle(const test_child *self, const void *arg)
{
    (void)arg;
    test_child_ready(self);
    test_child_idle();
}

static int exit_at_once(const test_child *self, const void *arg)
{
    (void)self;
    (void)arg;
    return 0;
}

static void a_live_process_can_be_monitored(void **state)
{
    (void)state;
    assert_int_equal(resmon_process_check(getpid()), 0);
    test_child child = test_spawn(ready_then_idle, NULL, 0);
    test_child_wait_ready(&child);
    assert_int_equal(resmon_process_check(child.pid), 0);
    test_child_kill(&child);
}

static void a_zombie_has_already_exited(void **state)
{
    (void)state;
    test_child child = test_spawn(exit_at_once, NULL, 0);
    test_child_wait_exited(&child); /* a zombie now */
    assert_int_equal(resmon_process_check(child.pid), -ECHILD);
    assert_non_null(strstr(resmon_strerror(-ECHILD), "already exited"));
    test_child_reap(&child, NULL);
    assert_int_equal(resmon_process_check(child.pid), -ESRCH); /* reaped: gone */
    assert_string_equal(resmon_strerror(-ESRCH), "no such process");
}

static void no_such_process_and_bad_pids(void **state)
{
    (void)state;
    assert_int_equal(resmon_process_check(0), -EINVAL);
    assert_int_equal(resmon_process_check(-1), -EINVAL);
    /* Above /proc/sys/kernel/pid_max's ceiling (2^22): never a process. */
    assert_int_equal(resmon_process_check(1 << 23), -ESRCH);
}

/* kthreadd, where this /proc shows the host's kernel (not in every
 * container): state S, vsize 0. */
static void kthreadd_is_a_kernel_thread(void **state)
{
    (void)state;
    FILE *f = fopen("/proc/2/comm", "re");
    char comm[32] = "";
    if (f) {
        if (!fgets(comm, sizeof comm, f))
            comm[0] = '\0';
        fclose(f);
    }
    if (strcmp(comm, "kthreadd\n") != 0)
        skip();
    assert_int_equal(resmon_process_check(2), -ENOEXEC);
}

/* A fixture /proc: 100 a kernel thread (vsize 0, sleeping), 101 a process,
 * 102 a zombie, 103 a process being reaped (X), 104 a garbled stat. */
static void a_fixture_tree_names_each_case(void **state)
{
    (void)state;
    char root[] = "/tmp/resmon-process-check-XXXXXX";
    assert_non_null(mkdtemp(root));
    /* comm may hold spaces and parentheses: the state follows the last ')'. */
    static const struct {
        int pid;
        const char *stat;
        int expected;
    } cases[] = {
        {100, "100 (kworker/0:1) S 2 0 0 0 -1 69238880 0 0 0 0 0 0 0 0 20 0 1 0 30 0 0 "
              "18446744073709551615 0 0 0 0 0 0 0 2147483647 0 0 0 0 17 0 0 0 0 0 0\n", -ENOEXEC},
        {101, "101 (a (b) c) S 1 101 101 0 -1 4194304 10 0 0 0 1 2 0 0 20 0 1 0 40 4096000 300 "
              "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n", 0},
        {102, "102 (z) Z 1 102 102 0 -1 4227084 10 0 0 0 1 2 0 0 20 0 1 0 50 0 0 "
              "18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n", -ECHILD},
        {103, "103 (x) X 1 103 103 0 -1 4227084 10 0 0 0 1 2 0 0 20 0 1 0 50 0 0 "
              "18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n", -ECHILD},
        {104, "104 (garbled", -EINVAL},
        /* Its main thread exited, another thread runs: alive. */
        {106, "106 (m) Z 1 106 106 0 -1 4227084 10 0 0 0 1 2 0 0 20 0 2 0 50 0 0 "
              "18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n", 0},
    };
    char path[256];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(path, sizeof path, "%s/%d/stat", root, cases[i].pid);
        assert_int_equal(test_write_file(path, cases[i].stat), 0);
    }
    assert_int_equal(setenv("RESMON_PROC_ROOT", root, 1), 0);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        assert_int_equal(resmon_process_check(cases[i].pid), cases[i].expected);
    assert_int_equal(resmon_process_check(105), -ESRCH);
    unsetenv("RESMON_PROC_ROOT");
    assert_non_null(strstr(resmon_strerror(-ENOEXEC), "kernel thread"));
    assert_int_equal(test_remove_tree(root), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_live_process_can_be_monitored),
        cmocka_unit_test(a_zombie_has_already_exited),
        cmocka_unit_test(no_such_process_and_bad_pids),
        cmocka_unit_test(kthreadd_is_a_kernel_thread),
        cmocka_unit_test(a_fixture_tree_names_each_case),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
