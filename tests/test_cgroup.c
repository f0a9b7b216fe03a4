/*
 * test_cgroup.c -- the cgroup parsers and readers on fixture text and fixture
 * trees of both layouts (v1's memory hierarchy, v2's unified one), so both
 * are tested on a machine that has only one; a monitor reading a fixture
 * cgroup; and, where this process may make one, a real leaf cgroup that a
 * child joins between fork and exec and that is removed afterwards.
 */
#include "cgroup.h"
#include "proc_tree.h"
#include "internal.h"
#include "tree_totals.h"
#include "test_util.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void put_file(const char *dir, const char *name, const char *text)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static void make_dirs(const char *path)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s", path);
    for (char *p = tmp + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(tmp, 0755);
            *p = '/';
        }
    mkdir(tmp, 0755);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void remove_tree(const char *dir)
{
    nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---- parsers ------------------------------------------------------------ */

static const char v1_self[] = "12:pids:/user.slice\n"
                              "4:memory:/process_api/abc\n"
                              "3:cpu,cpuacct:/\n"
                              "1:name=systemd:/user.slice/session-1.scope\n"
                              "0::/user.slice/session-1.scope\n";

static void self_finds_v1_memory_and_v2_lines(void **state)
{
    (void)state;
    char v1[256], v2[256];
    assert_int_equal(rm__cgroup_parse_self(v1_self, strlen(v1_self), v1, v2, sizeof v1), 3);
    assert_string_equal(v1, "/process_api/abc");
    assert_string_equal(v2, "/user.slice/session-1.scope");
    const char *pure_v2 = "0::/system.slice/job.service\n";
    assert_int_equal(rm__cgroup_parse_self(pure_v2, strlen(pure_v2), v1, v2, sizeof v1), 2);
    assert_string_equal(v2, "/system.slice/job.service");
    const char *merged = "5:cpu,memory,io:/a b\n"; /* a comounted v1 hierarchy; paths may hold spaces */
    assert_int_equal(rm__cgroup_parse_self(merged, strlen(merged), v1, v2, sizeof v1), 1);
    assert_string_equal(v1, "/a b");
}

static void self_rejects_garbage(void **state)
{
    (void)state;
    char v1[64], v2[64];
    const char *bad[] = {"4:memory\n", ":memory:/x\n", "4:memory:relative\n", "0::\n"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_equal(rm__cgroup_parse_self(bad[i], strlen(bad[i]), v1, v2, sizeof v1), -EINVAL);
    char long_path[200] = "4:memory:/";
    memset(long_path + 10, 'a', 100);
    long_path[110] = '\0';
    assert_int_equal(rm__cgroup_parse_self(long_path, strlen(long_path), v1, v2, sizeof v1), -ENAMETOOLONG);
}

static const char mountinfo[] =
    "25 30 0:23 / /sys rw,nosuid shared:7 - sysfs sysfs rw\n"
    "31 25 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime shared:9 - cgroup cgroup rw,cpu\n"
    "35 31 0:32 /process_api /sys/fs/cgroup/mem\\040ory rw,relatime - cgroup cgroup rw,memory\n"
    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw,nsdelegate\n";

static void mountinfo_finds_each_layout(void **state)
{
    (void)state;
    char point[256], root[256];
    assert_int_equal(rm__cgroup_parse_mountinfo(mountinfo, strlen(mountinfo), 1, point, root, sizeof point), 0);
    assert_string_equal(point, "/sys/fs/cgroup/mem ory"); /* \040 decoded */
    assert_string_equal(root, "/process_api");
    assert_int_equal(rm__cgroup_parse_mountinfo(mountinfo, strlen(mountinfo), 2, point, root, sizeof point), 0);
    assert_string_equal(point, "/sys/fs/cgroup/unified");
    assert_string_equal(root, "/");
    const char *none = "32 31 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n";
    assert_int_equal(rm__cgroup_parse_mountinfo(none, strlen(none), 1, point, root, sizeof point), -ENOENT);
    assert_int_equal(rm__cgroup_parse_mountinfo(none, strlen(none), 2, point, root, sizeof point), -ENOENT);
}

static void paths_join_below_the_mount_root(void **state)
{
    (void)state;
    char out[256];
    assert_int_equal(rm__cgroup_join_path("/m", "/", "/a/b", out, sizeof out), 0);
    assert_string_equal(out, "/m/a/b");
    assert_int_equal(rm__cgroup_join_path("/m", "/a", "/a/b", out, sizeof out), 0);
    assert_string_equal(out, "/m/b");
    assert_int_equal(rm__cgroup_join_path("/m", "/a", "/a", out, sizeof out), 0);
    assert_string_equal(out, "/m");
    assert_int_equal(rm__cgroup_join_path("/m", "/a", "/ab", out, sizeof out), -ENOENT); /* not below /a */
    assert_int_equal(rm__cgroup_join_path("/m", "/", "/", out, sizeof out), 0);
    assert_string_equal(out, "/m");
}

static void keyed_files_parse(void **state)
{
    (void)state;
    const char events[] = "low 0\nhigh 0\nmax 12\noom 1\noom_kill 3\noom_group_kill 0\n";
    uint64_t v = 0;
    assert_int_equal(rm__cgroup_parse_keyed(events, strlen(events), "oom_kill", &v), 0);
    assert_int_equal(v, 3);
    assert_int_equal(rm__cgroup_parse_keyed(events, strlen(events), "oom", &v), 0); /* not oom_kill's prefix */
    assert_int_equal(v, 1);
    const char oom_control[] = "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n";
    assert_int_equal(rm__cgroup_parse_keyed(oom_control, strlen(oom_control), "oom_kill", &v), 0);
    assert_int_equal(v, 2);
    const char old_kernel[] = "oom_kill_disable 0\nunder_oom 0\n"; /* before Linux 4.13 */
    assert_int_equal(rm__cgroup_parse_keyed(old_kernel, strlen(old_kernel), "oom_kill", &v), -ENOENT);
    const char garbled[] = "oom_kill x\n";
    assert_int_equal(rm__cgroup_parse_keyed(garbled, strlen(garbled), "oom_kill", &v), -EINVAL);
}

/* A tree's CPU total: v1 cpuacct.usage (ns), v2 cpu.stat usage_usec. */
static void cpu_totals_parse_and_read(void **state)
{
    (void)state;
    uint64_t ns = 0;
    const char v1[] = "123456789\n";
    assert_int_equal(rm__cgroup_parse_cpu_usage(v1, strlen(v1), 1, &ns), 0);
    assert_int_equal(ns, 123456789);
    const char v2[] = "usage_usec 2500\nuser_usec 2000\nsystem_usec 500\nnr_periods 0\n";
    assert_int_equal(rm__cgroup_parse_cpu_usage(v2, strlen(v2), 2, &ns), 0);
    assert_int_equal(ns, 2500000);
    const char v2_old[] = "nr_periods 0\nnr_throttled 0\nthrottled_time 0\n"; /* before Linux 4.20 */
    assert_int_equal(rm__cgroup_parse_cpu_usage(v2_old, strlen(v2_old), 2, &ns), -ENOENT);
    assert_int_equal(rm__cgroup_parse_cpu_usage("x\n", 2, 1, &ns), -EINVAL);

    char dir[] = "/tmp/resmon-cgcpu-XXXXXX";
    assert_non_null(mkdtemp(dir));
    rm__cgroup_cpu cpu;
    assert_int_equal(rm__cgroup_cpu_open(&cpu, dir), -ENOTSUP); /* neither file */
    put_file(dir, "cpu.stat", v2_old);
    assert_int_equal(rm__cgroup_cpu_open(&cpu, dir), -ENOTSUP); /* cpu.stat without usage_usec */
    put_file(dir, "cpu.stat", v2);
    assert_int_equal(rm__cgroup_cpu_open(&cpu, dir), 0);
    assert_int_equal(cpu.version, 2);
    put_file(dir, "cpu.stat", "usage_usec 7000\n"); /* rewritten: the kept descriptor reads it afresh */
    assert_int_equal(rm__cgroup_cpu_read(&cpu, &ns), 0);
    assert_int_equal(ns, 7000000);
    rm__cgroup_cpu_close(&cpu);
    assert_int_equal(cpu.fd, -1);
    put_file(dir, "cpuacct.usage", v1); /* v1's file wins: a v1 cpuacct directory */
    assert_int_equal(rm__cgroup_cpu_open(&cpu, dir), 0);
    assert_int_equal(cpu.version, 1);
    assert_int_equal(rm__cgroup_cpu_read(&cpu, &ns), 0);
    assert_int_equal(ns, 123456789);
    rm__cgroup_cpu_close(&cpu);
    char path[300];
    snprintf(path, sizeof path, "%s/cpu.stat", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/cpuacct.usage", dir);
    unlink(path);
    rmdir(dir);
}

/* Tree totals over a fixture directory's cpu.stat, as if opened on a leaf. */
static void totals_on_fixture(rm__tree_totals *t, const char *dir)
{
    memset(t, 0, sizeof *t);
    t->dir_fd = -1;
    assert_int_equal(rm__cgroup_cpu_open(&t->cpu, dir), 0);
}

/* A walk whose probe count runs ahead of the leaf's total is a suspicion,
 * not yet a leaver (a process ending as the walk reads it, a v2 total flushed
 * lazily): the next sample walks, and only a second walk ahead in a row ends
 * the engagement.  Before, one walk ahead gave up the O(1) series for good. */
static void tree_totals_leave_after_two_walks_ahead(void **state)
{
    (void)state;
    const uint64_t ms = 1000000;
    char dir[] = "/tmp/resmon-cgleft-XXXXXX";
    assert_non_null(mkdtemp(dir));
    put_file(dir, "cpu.stat", "usage_usec 1000\n");
    rm__tree_totals t;
    totals_on_fixture(&t, dir);
    rm__tree_totals_walked(&t, 1 * ms, 100, 5 * ms, 0, 0, 0, 0); /* wide: the switch */
    assert_true(t.engaged);
    rm__tree_totals_walked(&t, 2000 * ms, 100, 5 * ms, 0, 500 * ms, 0, 0); /* 500 ms ahead of a total that did not rise */
    assert_true(t.engaged);
    assert_false(t.left);
    assert_true(rm__tree_totals_walk_due(&t, 2001 * ms)); /* the next sample looks again */
    put_file(dir, "cpu.stat", "usage_usec 501000\n"); /* the total caught up */
    rm__tree_totals_walked(&t, 2100 * ms, 100, 5 * ms, 0, 500 * ms, 0, 0);
    assert_true(t.engaged);
    assert_false(t.left_suspected);
    assert_false(rm__tree_totals_walk_due(&t, 2101 * ms)); /* the walk's own cadence again (5 ms / 0.025 %) */
    rm__tree_totals_walked(&t, 8000 * ms, 100, 5 * ms, 0, 1500 * ms, 0, 0); /* a leaver: ahead ... */
    assert_true(t.engaged);
    rm__tree_totals_walked(&t, 8100 * ms, 100, 5 * ms, 0, 1600 * ms, 0, 0); /* ... and ahead again */
    assert_false(t.engaged);
    assert_true(t.left);
    assert_true(rm__tree_totals_walk_due(&t, 8101 * ms));
    rm__tree_totals_walked(&t, 8200 * ms, 100, 5 * ms, 0, 1700 * ms, 0, 0); /* left for good */
    assert_false(t.engaged);
    rm__tree_totals_close(&t);
    /* Review: a leaver seen by the window's last walk alone has no second
     * walk to confirm it; there one walk ahead is enough, or the CPU it
     * used outside the leaf was never handed out (0.7 s of 2.3 lost). */
    put_file(dir, "cpu.stat", "usage_usec 1000\n");
    totals_on_fixture(&t, dir);
    rm__tree_totals_walked(&t, 1 * ms, 100, 5 * ms, 0, 0, 0, 0);
    assert_true(t.engaged);
    rm__tree_totals_walked(&t, 2000 * ms, 100, 5 * ms, 0, 700 * ms, 0, 1); /* ahead, and the window's last */
    assert_false(t.engaged);
    assert_true(t.left);
    rm__tree_totals_close(&t);
    /* A fast-forking tree: processes the switching walk missed were first
     * read later, their life before the switch with them; the total had it
     * before its base.  That lead never grows and is no leaver (a tree of
     * 1000 sleepers lost the O(1) series to it: 9.5 ms a sample, not 0.4). */
    totals_on_fixture(&t, dir);
    rm__tree_totals_walked(&t, 1 * ms, 100, 5 * ms, 0, 0, 0, 0);
    put_file(dir, "cpu.stat", "usage_usec 101000\n"); /* the total rose 100 ms ... */
    rm__tree_totals_walked(&t, 2000 * ms, 1000, 5 * ms, 0, 300 * ms, 200 * ms, 0); /* ... the probe 300, 200 of it found */
    rm__tree_totals_walked(&t, 2100 * ms, 1000, 5 * ms, 0, 300 * ms, 200 * ms, 1);
    assert_true(t.engaged);
    assert_false(t.left);
    rm__tree_totals_close(&t);
    put_file(dir, "cpu.stat", "usage_usec 1000\n");
    /* Ahead, a failed read, ahead: not two walks compared in a row. */
    totals_on_fixture(&t, dir);
    rm__tree_totals_walked(&t, 1 * ms, 100, 5 * ms, 0, 0, 0, 0);
    rm__tree_totals_walked(&t, 2000 * ms, 100, 5 * ms, 0, 500 * ms, 0, 0);
    assert_true(t.left_suspected);
    put_file(dir, "cpu.stat", "garbage\n");
    rm__tree_totals_walked(&t, 2100 * ms, 100, 5 * ms, 0, 600 * ms, 0, 0);
    assert_false(t.left_suspected);
    put_file(dir, "cpu.stat", "usage_usec 1000\n");
    rm__tree_totals_walked(&t, 2200 * ms, 100, 5 * ms, 0, 700 * ms, 0, 0);
    assert_true(t.engaged);
    assert_true(t.left_suspected);
    rm__tree_totals_close(&t);
    char path[300];
    snprintf(path, sizeof path, "%s/cpu.stat", dir);
    unlink(path);
    rmdir(dir);
}

/* Issue 33: at the switch, the leaf's total since the window's first
 * sample held CPU the probe never counted (processes no walk had read;
 * children the kernel reaped itself): 0.06-0.21 s of 1.3-1.5 s were lost
 * for a tree forked fast.  It is taken once, into the window's CPU time,
 * and counts as handed out (a later leaver's CPU is not handed twice). */
static void tree_totals_take_what_the_leaf_used_unseen(void **state)
{
    (void)state;
    const uint64_t ms = 1000000;
    char dir[] = "/tmp/resmon-cgunseen-XXXXXX";
    assert_non_null(mkdtemp(dir));
    put_file(dir, "cpu.stat", "usage_usec 1000\n");
    rm__tree_totals t;
    totals_on_fixture(&t, dir);
    rm__tree_totals_begin(&t); /* the window's first sample: base 1 ms */
    put_file(dir, "cpu.stat", "usage_usec 401000\n"); /* the leaf used 400 ms ... */
    rm__tree_totals_walked(&t, 1000 * ms, 100, 5 * ms, 20 * ms, 250 * ms, 0, 0); /* ... the probe counted 250 */
    assert_true(t.engaged);
    assert_int_equal(rm__tree_totals_take_unseen(&t), 150 * ms);
    assert_int_equal(rm__tree_totals_take_unseen(&t), 0); /* once */
    assert_int_equal(rm__tree_totals_handed(&t), 230 * ms + 150 * ms); /* the carry (20 ms) not yet */
    put_file(dir, "cpu.stat", "usage_usec 501000\n");
    assert_int_equal(rm__tree_totals_cpu(&t, 100 * ms, 2, 0), 120 * ms); /* the rise and the carry */
    assert_int_equal(rm__tree_totals_handed(&t), 500 * ms);
    /* The probe catching up with the unseen 150 ms (its clocks lagged the
     * total at the switch, under load) is no leaver ... */
    rm__tree_totals_walked(&t, 2000 * ms, 100, 5 * ms, 0, 250 * ms + 100 * ms + 150 * ms, 0, 0);
    rm__tree_totals_walked(&t, 2100 * ms, 100, 5 * ms, 0, 250 * ms + 100 * ms + 150 * ms, 0, 0);
    assert_true(t.engaged);
    assert_false(t.left_suspected);
    /* ... a process that goes on counting beyond it is. */
    rm__tree_totals_walked(&t, 3000 * ms, 100, 5 * ms, 0, 250 * ms + 100 * ms + 150 * ms + 500 * ms, 0, 0);
    rm__tree_totals_walked(&t, 3100 * ms, 100, 5 * ms, 0, 250 * ms + 100 * ms + 150 * ms + 600 * ms, 0, 0);
    assert_true(t.left);
    rm__tree_totals_close(&t);
    /* A leaver whose lead stays within the unseen 150 ms but grows from one
     * walk to the next is one (review: allowing the whole unseen CPU hid a
     * leaver of 0.2 s). */
    put_file(dir, "cpu.stat", "usage_usec 1000\n");
    totals_on_fixture(&t, dir);
    rm__tree_totals_begin(&t);
    put_file(dir, "cpu.stat", "usage_usec 401000\n");
    rm__tree_totals_walked(&t, 1000 * ms, 100, 5 * ms, 0, 250 * ms, 0, 0); /* unseen 150 ms */
    assert_int_equal(rm__tree_totals_take_unseen(&t), 150 * ms);
    rm__tree_totals_walked(&t, 2000 * ms, 100, 5 * ms, 0, 250 * ms + 60 * ms, 0, 0); /* 60 ahead ... */
    assert_true(t.left_suspected);
    rm__tree_totals_walked(&t, 2100 * ms, 100, 5 * ms, 0, 250 * ms + 120 * ms, 0, 0); /* ... and 60 more */
    assert_true(t.left);
    rm__tree_totals_close(&t);
    /* The probe ahead of the leaf (a process that left before the switch):
     * nothing unseen, never a negative. */
    put_file(dir, "cpu.stat", "usage_usec 1000\n");
    totals_on_fixture(&t, dir);
    rm__tree_totals_begin(&t);
    put_file(dir, "cpu.stat", "usage_usec 201000\n");
    rm__tree_totals_walked(&t, 1000 * ms, 100, 5 * ms, 0, 250 * ms, 0, 0);
    assert_true(t.engaged);
    assert_int_equal(rm__tree_totals_take_unseen(&t), 0);
    rm__tree_totals_close(&t);
    /* No base (the first read failed): nothing unseen is claimed. */
    totals_on_fixture(&t, dir);
    put_file(dir, "cpu.stat", "garbage\n");
    rm__tree_totals_begin(&t);
    put_file(dir, "cpu.stat", "usage_usec 901000\n");
    rm__tree_totals_walked(&t, 1000 * ms, 100, 5 * ms, 0, 250 * ms, 0, 0);
    assert_true(t.engaged);
    assert_int_equal(rm__tree_totals_take_unseen(&t), 0);
    rm__tree_totals_close(&t);
    char path[300];
    snprintf(path, sizeof path, "%s/cpu.stat", dir);
    unlink(path);
    rmdir(dir);
}

static char *lines_of_pids(unsigned count)
{
    char *text = malloc(count * 8 + 1);
    assert_non_null(text);
    text[0] = '\0';
    for (unsigned i = 0; i < count; i++)
        sprintf(text + strlen(text), "%u\n", 1000 + i);
    return text;
}

static void put_members(const char *dir, unsigned processes)
{
    char *text = lines_of_pids(processes);
    put_file(dir, "cgroup.procs", text);
    put_file(dir, "cgroup.threads", text);
    free(text);
}

/* Between walks an engaged tree's process count is the leaf's lists, read
 * at most once a second -- and not at all while the leaf's CPU total stands
 * where it stood before the latest count: nothing forks or exits without
 * running (the kernel sorts the whole list for each read: a tree of 1000
 * sleepers cost the sampler ~0.1 ms a sample for counts that could not
 * have changed). */
static void tree_totals_count_again_only_after_the_tree_ran(void **state)
{
    (void)state;
    const uint64_t ms = 1000000;
    char dir[] = "/tmp/resmon-cgcount-XXXXXX";
    assert_non_null(mkdtemp(dir));
    put_file(dir, "cpu.stat", "usage_usec 1000\n");
    put_members(dir, 100);
    rm__tree_totals t;
    totals_on_fixture(&t, dir);
    t.dir_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    assert_true(t.dir_fd >= 0);
    t.threads_file = "cgroup.threads";
    rm__tree_totals_walked(&t, 1 * ms, 100, 5 * ms, 0, 0, 0, 0); /* wide: the switch */
    assert_true(t.engaged);
    unsigned processes = 0, threads = 0;
    /* Within a second of the walk: the walk's count stands. */
    rm__tree_totals_cpu(&t, 100 * ms, 2, 0);
    assert_int_equal(rm__tree_totals_process_count(&t, 500 * ms, &processes, &threads), -ENOENT);
    rm__tree_totals_cpu(&t, 100 * ms, 2, 0);
    assert_int_equal(rm__tree_totals_process_count(&t, 1500 * ms, &processes, &threads), 0);
    assert_int_equal(processes, 100);
    put_members(dir, 90); /* changed behind the total's back (no CPU: a fixture) */
    rm__tree_totals_cpu(&t, 100 * ms, 2, 0);
    assert_int_equal(rm__tree_totals_process_count(&t, 3000 * ms, &processes, &threads), 0);
    assert_int_equal(processes, 100); /* the total stood: not read again */
    put_file(dir, "cpu.stat", "usage_usec 1001\n"); /* a microsecond of running */
    rm__tree_totals_cpu(&t, 100 * ms, 2, 0);
    assert_int_equal(rm__tree_totals_process_count(&t, 3100 * ms, &processes, &threads), 0);
    assert_int_equal(processes, 90); /* ran: counted again, a second after the latest count */
    assert_int_equal(threads, 90);
    put_members(dir, 80);
    put_file(dir, "cpu.stat", "usage_usec 1002\n");
    rm__tree_totals_cpu(&t, 100 * ms, 2, 0);
    assert_int_equal(rm__tree_totals_process_count(&t, 3200 * ms, &processes, &threads), 0);
    assert_int_equal(processes, 90); /* ran, but within the second of the latest count */
    rm__tree_totals_cpu(&t, 100 * ms, 2, 0);
    assert_int_equal(rm__tree_totals_process_count(&t, 4200 * ms, &processes, &threads), 0);
    assert_int_equal(processes, 80); /* ran since the count before: the second is up */
    /* A count stands for 5 s at most however still the total (a process
     * can leave the leaf without running in it): review of stop 46. */
    put_members(dir, 70);
    rm__tree_totals_cpu(&t, 100 * ms, 2, 0);
    assert_int_equal(rm__tree_totals_process_count(&t, 9100 * ms, &processes, &threads), 0);
    assert_int_equal(processes, 80);
    rm__tree_totals_cpu(&t, 100 * ms, 2, 0);
    assert_int_equal(rm__tree_totals_process_count(&t, 9200 * ms, &processes, &threads), 0);
    assert_int_equal(processes, 70);
    /* A total that could not be read says nothing: the tree may have run. */
    put_members(dir, 60);
    put_file(dir, "cpu.stat", "garbage\n");
    rm__tree_totals_cpu(&t, 100 * ms, 2, 0);
    assert_int_equal(rm__tree_totals_process_count(&t, 10300 * ms, &processes, &threads), 0);
    assert_int_equal(processes, 60);
    /* After a walk, the total read before the walk began stands for its
     * count: a sleeping tree walked every ~2 s was counted again a second
     * after each walk (issue 33: most of the sampler's time at 1000
     * sleepers).  One that ran since is counted a second after the walk. */
    put_file(dir, "cpu.stat", "usage_usec 2000\n");
    rm__tree_totals_cpu(&t, 100 * ms, 2, 0);
    rm__tree_totals_walk_starts(&t);
    rm__tree_totals_walked(&t, 11000 * ms, 60, 5 * ms, 0, 0, 0, 0);
    put_members(dir, 50); /* behind the total's back */
    rm__tree_totals_cpu(&t, 100 * ms, 2, 0);
    assert_int_equal(rm__tree_totals_process_count(&t, 12500 * ms, &processes, &threads), -ENOENT);
    assert_int_equal(rm__tree_totals_process_count(&t, 15900 * ms, &processes, &threads), -ENOENT); /* the walk's */
    assert_int_equal(rm__tree_totals_process_count(&t, 16000 * ms, &processes, &threads), 0); /* 5 s at most */
    assert_int_equal(processes, 50);
    rm__tree_totals_walk_starts(&t);
    rm__tree_totals_walked(&t, 17000 * ms, 50, 5 * ms, 0, 0, 0, 0);
    put_members(dir, 40);
    put_file(dir, "cpu.stat", "usage_usec 2001\n"); /* ran after the walk began */
    rm__tree_totals_cpu(&t, 100 * ms, 2, 0);
    assert_int_equal(rm__tree_totals_process_count(&t, 17500 * ms, &processes, &threads), -ENOENT);
    assert_int_equal(rm__tree_totals_process_count(&t, 18000 * ms, &processes, &threads), 0);
    assert_int_equal(processes, 40);
    rm__tree_totals_close(&t);
    const char *names[] = {"cpu.stat", "cgroup.procs", "cgroup.threads"};
    for (size_t i = 0; i < 3; i++) {
        char path[300];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    rmdir(dir);
}

static void io_stat_sums_devices(void **state)
{
    (void)state;
    const char io[] = "8:0 rbytes=1000 wbytes=2000 rios=3 wios=4 dbytes=0 dios=0\n"
                      "253:1 rbytes=10 wbytes=20 rios=1 wios=2 dbytes=0 dios=0\n";
    rm__cgroup_io t;
    assert_int_equal(rm__cgroup_parse_io_stat(io, strlen(io), &t), 0);
    assert_int_equal(t.rbytes, 1010);
    assert_int_equal(t.wbytes, 2020);
    assert_int_equal(t.rios, 4);
    assert_int_equal(t.wios, 6);
    assert_int_equal(rm__cgroup_parse_io_stat("", 0, &t), 0); /* no I/O yet: no lines */
    assert_int_equal(t.rbytes, 0);
    const char bad[] = "8:0 rbytes=1x wbytes=2\n";
    assert_int_equal(rm__cgroup_parse_io_stat(bad, strlen(bad), &t), -EINVAL);
}

/* ---- fixture trees -------------------------------------------------------- */

typedef struct fixture {
    char root[256];  /* the fixture's whole tree */
    char proc[300];  /* its /proc/self */
    char group[512]; /* the process's memory cgroup in it */
} fixture;

/* A tree with /proc/self/{cgroup,mountinfo} and the cgroup file systems of
 * the given layout below root. */
static void make_fixture(fixture *f, int version)
{
    snprintf(f->root, sizeof f->root, "/tmp/resmon-test-cgroup-%ld-v%d", (long)getpid(), version);
    remove_tree(f->root);
    snprintf(f->proc, sizeof f->proc, "%s/proc/self", f->root);
    make_dirs(f->proc);
    char top[400];
    if (version == 1) {
        put_file(f->proc, "cgroup", v1_self);
        put_file(f->proc, "mountinfo",
                 "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
                 "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n");
        snprintf(top, sizeof top, "%s/sys/fs/cgroup/unified", f->root);
        make_dirs(top);
        put_file(top, "cgroup.controllers", "hugetlb\n"); /* as on the machine this was written on */
        snprintf(f->group, sizeof f->group, "%s/sys/fs/cgroup/memory/process_api/abc", f->root);
        make_dirs(f->group);
        put_file(f->group, "memory.usage_in_bytes", "104857600\n");
        put_file(f->group, "memory.max_usage_in_bytes", "209715200\n");
        put_file(f->group, "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n");
    } else {
        put_file(f->proc, "cgroup", "0::/user.slice/job.scope\n");
        put_file(f->proc, "mountinfo", "41 31 0:38 / /sys/fs/cgroup rw,relatime - cgroup2 cgroup2 rw\n");
        snprintf(top, sizeof top, "%s/sys/fs/cgroup", f->root);
        make_dirs(top);
        put_file(top, "cgroup.controllers", "cpuset cpu io memory pids\n");
        snprintf(f->group, sizeof f->group, "%s/user.slice/job.scope", top);
        make_dirs(f->group);
        put_file(f->group, "memory.current", "52428800\n");
        put_file(f->group, "memory.peak", "73400320\n");
        put_file(f->group, "memory.events", "low 0\nhigh 0\nmax 4\noom 2\noom_kill 2\n");
        put_file(f->group, "cpu.stat", "usage_usec 900\nuser_usec 600\nsystem_usec 300\n"
                                       "nr_periods 10\nnr_throttled 4\nthrottled_usec 250000\n");
        put_file(f->group, "io.stat", "8:0 rbytes=4096 wbytes=8192 rios=1 wios=2 dbytes=0 dios=0\n");
    }
}

static void locate_finds_v1_memory_hierarchy(void **state)
{
    (void)state;
    fixture f;
    make_fixture(&f, 1);
    rm__cgroup_place place;
    assert_int_equal(rm__cgroup_locate(f.proc, f.root, &place), 0);
    assert_int_equal(place.version, 1); /* v2 is mounted, but without the memory controller */
    assert_string_equal(place.dir, f.group);
    remove_tree(f.root);
}

/* Another process's memory cgroup path, from its cgroup file alone: no
 * mount table (one in a private mount namespace has none of the cgroups
 * mounted, review 71; and one read a process, review 72). */
static void a_processes_cgroup_path_needs_no_mounts(void **state)
{
    (void)state;
    fixture f;
    make_fixture(&f, 1);
    char other[400];
    snprintf(other, sizeof other, "%s/proc/4242", f.root);
    make_dirs(other);
    put_file(other, "cgroup", v1_self);
    put_file(other, "mountinfo", "35 31 0:32 / / rw,relatime - ext4 /dev/vda rw\n"); /* its own view: no cgroups */
    rm__cgroup_place place;
    assert_int_equal(rm__cgroup_locate(other, f.root, &place), -ENOENT);
    char path[256];
    assert_int_equal(rm__cgroup_path_of(other, 1, path, sizeof path), 0);
    assert_string_equal(path, "/process_api/abc");
    put_file(other, "cgroup", "0::/user.slice/job.scope\n");
    assert_int_equal(rm__cgroup_path_of(other, 2, path, sizeof path), 0);
    assert_string_equal(path, "/user.slice/job.scope");
    assert_int_equal(rm__cgroup_path_of(other, 1, path, sizeof path), -ENOENT); /* no v1 memory line */
    snprintf(other, sizeof other, "%s/proc/4243", f.root);
    assert_true(rm__cgroup_path_of(other, 1, path, sizeof path) < 0); /* no such process */
    remove_tree(f.root);
}

static void locate_prefers_v2_with_memory_controller(void **state)
{
    (void)state;
    fixture f;
    make_fixture(&f, 2);
    rm__cgroup_place place;
    assert_int_equal(rm__cgroup_locate(f.proc, f.root, &place), 0);
    assert_int_equal(place.version, 2);
    assert_string_equal(place.dir, f.group);
    /* Without the memory controller and without v1: nothing to use, said so. */
    char top[400];
    snprintf(top, sizeof top, "%s/sys/fs/cgroup", f.root);
    put_file(top, "cgroup.controllers", "cpu io pids\n");
    assert_int_equal(rm__cgroup_locate(f.proc, f.root, &place), -ENOTSUP);
    remove_tree(f.root);
}

static void reads_v1_files(void **state)
{
    (void)state;
    fixture f;
    make_fixture(&f, 1);
    rm__cgroup cg;
    assert_int_equal(rm__cgroup_open(&cg, f.group), 0);
    assert_int_equal(cg.version, 1);
    uint64_t v;
    assert_int_equal(rm__cgroup_read_current(&cg, &v), 0);
    assert_int_equal(v, 104857600);
    put_file(f.group, "memory.usage_in_bytes", "110000000\n"); /* re-read each time, from offset 0 */
    assert_int_equal(rm__cgroup_read_current(&cg, &v), 0);
    assert_int_equal(v, 110000000);
    assert_int_equal(rm__cgroup_read_peak(&cg, &v), 0);
    assert_int_equal(v, 209715200);
    assert_int_equal(rm__cgroup_read_oom_kills(&cg, &v), 0);
    assert_int_equal(v, 1);
    uint64_t a, b;
    assert_int_equal(rm__cgroup_read_throttling(&cg, &a, &b), -ENOENT); /* v2 only */
    rm__cgroup_io io;
    assert_int_equal(rm__cgroup_read_io(&cg, &io), -ENOENT);
    rm__cgroup_close(&cg);
    assert_int_equal(cg.dirfd, -1);
    remove_tree(f.root);
}

static void reads_v2_files(void **state)
{
    (void)state;
    fixture f;
    make_fixture(&f, 2);
    rm__cgroup cg;
    assert_int_equal(rm__cgroup_open(&cg, f.group), 0);
    assert_int_equal(cg.version, 2);
    uint64_t v, n;
    assert_int_equal(rm__cgroup_read_current(&cg, &v), 0);
    assert_int_equal(v, 52428800);
    assert_int_equal(rm__cgroup_read_peak(&cg, &v), 0);
    assert_int_equal(v, 73400320);
    assert_int_equal(rm__cgroup_read_oom_kills(&cg, &v), 0);
    assert_int_equal(v, 2);
    assert_int_equal(rm__cgroup_read_throttling(&cg, &v, &n), 0);
    assert_int_equal(v, 250000);
    assert_int_equal(n, 4);
    rm__cgroup_io io;
    assert_int_equal(rm__cgroup_read_io(&cg, &io), 0);
    assert_int_equal(io.rbytes, 4096);
    assert_int_equal(io.wbytes, 8192);
    rm__cgroup_close(&cg);
    /* Before Linux 5.19 there is no memory.peak. */
    char path[700];
    snprintf(path, sizeof path, "%s/memory.peak", f.group);
    unlink(path);
    assert_int_equal(rm__cgroup_open(&cg, f.group), 0);
    assert_int_equal(rm__cgroup_read_peak(&cg, &v), -ENOENT);
    rm__cgroup_close(&cg);
    remove_tree(f.root);
}

/* A window's end figures (rm__cgroup_read_end): each file's figure, in the
 * summary's units, or NAN where the version has no such file or there is no
 * cgroup at all. */
static void end_figures_read_each_file_or_nan(void **state)
{
    (void)state;
    rm__cgroup_end end;
    rm__cgroup_read_end(NULL, &end);
    assert_true(isnan(end.peak_mb) && isnan(end.oom_kills) && isnan(end.throttled_sec));
    assert_true(isnan(end.nr_throttled) && isnan(end.io_read_bytes) && isnan(end.io_write_bytes));
    fixture f;
    make_fixture(&f, 1);
    rm__cgroup cg;
    assert_int_equal(rm__cgroup_open(&cg, f.group), 0);
    rm__cgroup_read_end(&cg, &end);
    assert_true(end.peak_mb == 200.0 && end.oom_kills == 1.0);
    assert_true(isnan(end.throttled_sec) && isnan(end.nr_throttled)); /* v2 only */
    assert_true(isnan(end.io_read_bytes) && isnan(end.io_write_bytes));
    rm__cgroup_close(&cg);
    /* v1 counts a kill in the victim's own cgroup: those of the cgroups
     * below (a command's own, at the leaf's limit) are the group's too
     * (attack 57b: an OOM kill in a cgroup the command made in its leaf was
     * in no count).  A link is not followed. */
    char sub[700], deeper[800], link[800];
    snprintf(sub, sizeof sub, "%s/job", f.group);
    snprintf(deeper, sizeof deeper, "%s/step", sub);
    make_dirs(deeper);
    put_file(sub, "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n");
    put_file(deeper, "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 4\n");
    snprintf(link, sizeof link, "%s/elsewhere", f.group);
    assert_int_equal(symlink(sub, link), 0);
    assert_int_equal(rm__cgroup_open(&cg, f.group), 0);
    rm__cgroup_read_end(&cg, &end);
    assert_true(end.oom_kills == 7.0);
    rm__cgroup_close(&cg);
    remove_tree(f.root);
    make_fixture(&f, 2);
    assert_int_equal(rm__cgroup_open(&cg, f.group), 0);
    rm__cgroup_read_end(&cg, &end);
    assert_true(end.peak_mb == 70.0 && end.oom_kills == 2.0);
    assert_true(end.throttled_sec == 0.25 && end.nr_throttled == 4.0);
    assert_true(end.io_read_bytes == 4096.0 && end.io_write_bytes == 8192.0);
    rm__cgroup_close(&cg);
    remove_tree(f.root);
}

static void open_refuses_a_directory_without_memory_files(void **state)
{
    (void)state;
    fixture f;
    make_fixture(&f, 2);
    rm__cgroup cg;
    char top[400];
    snprintf(top, sizeof top, "%s/sys", f.root);
    assert_int_equal(rm__cgroup_open(&cg, top), -ENOTSUP);
    snprintf(top, sizeof top, "%s/absent", f.root);
    assert_int_equal(rm__cgroup_open(&cg, top), -ENOENT);
    remove_tree(f.root);
}

/* A monitor given a cgroup carries its figures: the current memory in each
 * sample, and at the end the kernel's peak (the larger of it and the
 * samples'), OOM kills, throttling and I/O. */
static void monitor_reads_a_fixture_cgroup(void **state)
{
    (void)state;
    fixture f;
    make_fixture(&f, 2);
    resmon_options o = RESMON_OPTIONS_INIT;
    o.sample_interval_sec = 0.01;
    o.cgroup_path = f.group;
    resmon_monitor *m;
    assert_int_equal(resmon_monitor_new(&m, &o), 0);
    assert_int_equal(resmon_monitor_start(m), 0);
    assert_int_equal(resmon_monitor_stop(m), 0);
    resmon_sample samples[4];
    assert_true(resmon_monitor_get_samples(m, samples, 4, sizeof *samples) >= 1);
    ASSERT_BETWEEN(samples[0].cgroup_mem_mb, 50, 50);
    resmon_summary s;
    assert_int_equal(resmon_monitor_get_summary(m, &s, sizeof s), 0);
    assert_int_equal(s.cgroup_version, 2);
    assert_int_equal(s.cgroup_error, 0);
    ASSERT_BETWEEN(s.cgroup_peak_mb, 70, 70);
    ASSERT_BETWEEN(s.cgroup_oom_kills, 2, 2);
    ASSERT_BETWEEN(s.cgroup_throttled_sec, 0.25, 0.25);
    ASSERT_BETWEEN(s.cgroup_nr_throttled, 4, 4);
    ASSERT_BETWEEN(s.cgroup_io_read_bytes, 4096, 4096);
    ASSERT_BETWEEN(s.cgroup_io_write_bytes, 8192, 8192);

    /* The JSON form carries them and reads back. */
    char json[4096];
    assert_true(resmon_summary_to_json(&s, json, sizeof json) > 0);
    assert_non_null(strstr(json, "\"cgroup_version\": 2"));
    assert_non_null(strstr(json, "\"cgroup_peak_mb\": 70"));
    resmon_summary back;
    char err[256];
    assert_int_equal(resmon_summary_from_json(json, strlen(json), &back, sizeof back, err, sizeof err), 0);
    assert_int_equal(back.cgroup_version, 2);
    ASSERT_BETWEEN(back.cgroup_peak_mb, 70, 70);
    ASSERT_BETWEEN(back.cgroup_oom_kills, 2, 2);

    /* And the Prometheus series. */
    char text[16384];
    assert_true(resmon_monitor_exposition(m, RESMON_EXPOSITION_PROMETHEUS, NULL, 0, text, sizeof text) > 0);
    assert_non_null(strstr(text, "\nresmon_cgroup_memory_bytes 52428800.0\n"));
    assert_non_null(strstr(text, "\nresmon_cgroup_memory_max_bytes 73400320.0\n"));
    assert_non_null(strstr(text, "\nresmon_cgroup_oom_kills_total 2\n"));
    assert_non_null(strstr(text, "\nresmon_cgroup_io_read_bytes_total 4096.0\n"));
    resmon_monitor_free(m);

    /* A peak file below a sampled value (a cgroup whose peak was reset)
     * never brings the peak below what a sample saw. */
    put_file(f.group, "memory.peak", "1048576\n");
    s = test_window_summary(&o);
    ASSERT_BETWEEN(s.cgroup_peak_mb, 50, 50);
    remove_tree(f.root);
}

/* A cgroup that cannot be opened leaves its figures unknown, with the
 * reason, and the window still opens. */
static void monitor_without_its_cgroup_still_runs(void **state)
{
    (void)state;
    resmon_options o = RESMON_OPTIONS_INIT;
    o.cgroup_path = "/nonexistent/cgroup";
    resmon_monitor *m;
    assert_int_equal(resmon_monitor_new(&m, &o), 0);
    assert_int_equal(resmon_monitor_start(m), 0);
    assert_int_equal(resmon_monitor_stop(m), 0);
    resmon_summary s;
    assert_int_equal(resmon_monitor_get_summary(m, &s, sizeof s), 0);
    assert_int_equal(s.cgroup_version, 0);
    assert_int_equal(s.cgroup_error, -ENOENT);
    assert_true(isnan(s.cgroup_peak_mb));
    char json[4096];
    assert_true(resmon_summary_to_json(&s, json, sizeof json) > 0);
    assert_null(strstr(json, "cgroup")); /* no cgroup, no keys */
    char text[16384];
    assert_true(resmon_monitor_exposition(m, RESMON_EXPOSITION_PROMETHEUS, NULL, 0, text, sizeof text) > 0);
    assert_null(strstr(text, "cgroup")); /* nor series */
    resmon_monitor_free(m);
}

/* Documents without the cgroup keys (every resmon before 0.4) read as
 * "no cgroup"; a cgroup_version other than 1 or 2 is refused. */
static void json_without_cgroup_keys_reads(void **state)
{
    (void)state;
    const char *old = "{\"peak_rss_mb\": 1, \"mean_rss_mb\": 1, \"peak_gpu_mem_mb\": null, \"mean_gpu_util\": null, "
                      "\"memory_growth_mb\": 0, \"num_samples\": 2, \"duration_sec\": 1}";
    resmon_summary s;
    char err[256];
    assert_int_equal(resmon_summary_from_json(old, strlen(old), &s, sizeof s, err, sizeof err), 0);
    assert_int_equal(s.cgroup_version, 0);
    assert_true(isnan(s.cgroup_peak_mb));
    assert_true(isnan(s.cgroup_oom_kills));
    const char *bad = "{\"peak_rss_mb\": 1, \"mean_rss_mb\": 1, \"memory_growth_mb\": 0, \"num_samples\": 2, "
                      "\"duration_sec\": 1, \"cgroup_version\": 3}";
    assert_int_equal(resmon_summary_from_json(bad, strlen(bad), &s, sizeof s, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "cgroup_version"));
}

/* A leaf that cannot be completed (here a fixture directory, with no
 * cgroup.procs in what mkdir made) is removed again, and the reason said. */
/* ---- a cgroup's processes as the tree --------------------------------- */

/* The walker's cgroup source lists cgroup.procs at each walk (opened afresh,
 * re-read from the start), each pid once, the roots left out. */
static void walker_lists_a_cgroups_processes(void **state)
{
    (void)state;
    char dir[256];
    snprintf(dir, sizeof dir, "/tmp/resmon-test-members-%ld", (long)getpid());
    remove_tree(dir);
    make_dirs(dir);
    int proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    rm__tree_walker w;
    rm__tree_walker_init(&w, proc_fd, RM__TREE_SCAN);
    assert_int_equal(rm__tree_walker_use_cgroup(&w, dir), -ENOENT); /* no cgroup.procs: not a cgroup */
    put_file(dir, "cgroup.procs", "12\n34\n12\n56\n"); /* v1 may list a pid twice while it moves */
    assert_int_equal(rm__tree_walker_use_cgroup(&w, dir), 0);
    pid_t root = 34;
    assert_int_equal(rm__tree_walk(&w, root), 0);
    assert_int_equal(w.found_len, 2);
    assert_int_equal(w.found[0], 12);
    assert_int_equal(w.found[1], 56);
    char path[300];
    snprintf(path, sizeof path, "%s/cgroup.procs", dir);
    FILE *f = fopen(path, "r+"); /* rewritten in place, as the kernel's file changes under an open fd */
    assert_non_null(f);
    fputs("78\n\n", f);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(truncate(path, 4), 0);
    assert_int_equal(rm__tree_walk(&w, root), 0);
    assert_int_equal(w.found_len, 1);
    assert_int_equal(w.found[0], 78);
    assert_int_equal(truncate(path, 0), 0); /* empty: no process */
    assert_int_equal(rm__tree_walk(&w, root), 0);
    assert_int_equal(w.found_len, 0);
    rm__tree_walker_free(&w);
    close(proc_fd);
    remove_tree(dir);
}

static int hold_until_go(const test_child *self, const void *arg)
{
    int mib = *(const int *)arg;
    char *block = malloc((size_t)mib << 20);
    if (!block)
        return 4;
    test_touch(block, (size_t)mib << 20);
    test_child_ready(self);
    test_child_await(self);
    return 0;
}

/* A child that touches mib MiB, says it is ready and holds until go is
 * written (or closed); returns once it is ready. */
static test_child hold_memory(int mib)
{
    test_child c = test_spawn(hold_until_go, &mib, 0);
    test_child_wait_ready(&c);
    return c;
}

typedef struct latest_sample {
    atomic_int samples;
    _Atomic double nprocs, rss_mb;
} latest_sample;

static void keep_latest(const resmon_sample *s, void *user)
{
    latest_sample *l = user;
    atomic_store(&l->nprocs, s->nprocs);
    atomic_store(&l->rss_mb, s->rss_mb);
    atomic_fetch_add(&l->samples, 1);
}

/* A started monitor of the members of the cgroup dir (cgroup_members),
 * sampling every 10 ms with the counts group into *latest. */
static resmon_monitor *start_members_monitor(const char *dir, latest_sample *latest)
{
    resmon_options o = RESMON_OPTIONS_INIT;
    o.sample_interval_sec = 0.01;
    o.metrics = RESMON_METRIC_COUNTS;
    o.cgroup_path = dir;
    o.cgroup_members = 1;
    o.on_sample = keep_latest;
    o.on_sample_user = latest;
    resmon_monitor *m;
    assert_int_equal(resmon_monitor_new(&m, &o), 0);
    assert_int_equal(resmon_monitor_start(m), 0);
    return m;
}

/* Waits (bounded) for a sample taken after this call with nprocs processes
 * (a sample of no process has no count: NAN). */
static double wait_for_processes(latest_sample *l, double nprocs)
{
    int after = atomic_load(&l->samples) + 1;
    double deadline = test_now() + test_scaled(30);
    while (test_now() < deadline) {
        double seen = atomic_load(&l->nprocs);
        if (atomic_load(&l->samples) > after && (seen == nprocs || (nprocs == 0 && isnan(seen))))
            return atomic_load(&l->rss_mb);
        test_sleep(0.002);
    }
    print_error("no sample with %g processes\n", nprocs);
    fail();
    return 0;
}

static void write_procs(const char *dir, const char *text)
{
    char path[600];
    snprintf(path, sizeof path, "%s/cgroup.procs", dir);
    assert_int_equal(test_write_file(path, text), 0);
}

/* With cgroup_members the tree is whoever cgroup.procs lists (a v2 fixture
 * cgroup listing real children): a process joins when listed, leaves when
 * no longer listed or when it ends, and this process is never sampled (an
 * empty cgroup samples 0 MiB).  The sampled peak saw both at once. */
static void monitor_follows_a_cgroups_members(void **state)
{
    (void)state;
    fixture f;
    make_fixture(&f, 2);
    test_child a = hold_memory(40);
    test_child b = hold_memory(60);
    char text[64];
    snprintf(text, sizeof text, "%d\n", (int)a.pid);
    write_procs(f.group, text);

    latest_sample latest = {0};
    resmon_monitor *m = start_members_monitor(f.group, &latest);
    double only_a = wait_for_processes(&latest, 1);
    snprintf(text, sizeof text, "%d\n%d\n", (int)b.pid, (int)a.pid);
    write_procs(f.group, text); /* b joins */
    double both = wait_for_processes(&latest, 2);
    snprintf(text, sizeof text, "%d\n", (int)b.pid);
    write_procs(f.group, text); /* a leaves, still alive */
    double only_b = wait_for_processes(&latest, 1);
    test_child_go(&b); /* b ends while listed */
    test_child_reap(&b, NULL);
    double none = wait_for_processes(&latest, 0);
    assert_int_equal(resmon_monitor_stop(m), 0);
    resmon_summary s = test_summary(m);
    resmon_monitor_free(m);
    test_child_go(&a);
    test_child_reap(&a, NULL);

    ASSERT_BETWEEN(only_a, 40, 40 * SANITIZER_MEMORY_FACTOR + 8);
    ASSERT_BETWEEN(both, 100, 100 * SANITIZER_MEMORY_FACTOR + 16);
    ASSERT_BETWEEN(only_b, 60, 60 * SANITIZER_MEMORY_FACTOR + 8);
    ASSERT_BETWEEN(none, 0, 0); /* the monitoring process is not a member */
    assert_true(s.peak_rss_mb >= 100);
    /* The largest single process's mark (b's 60 MiB), not the sampled sum
     * of both (100): the figure its name says. */
    ASSERT_BETWEEN(s.hwm_rss_mb, 60, 60 * SANITIZER_MEMORY_FACTOR + 8);
    assert_int_equal(s.cgroup_version, 2);
    ASSERT_BETWEEN(s.cgroup_peak_mb, 70, 70); /* the fixture's memory.peak: the cgroup's own figure */
    remove_tree(f.root);
}

/* The membership needs only cgroup.procs; options that make no sense are
 * refused. */
/* Waits (bounded) until `more` samples were taken after this call. */
static void wait_for_more_samples(latest_sample *l, int more)
{
    int until = atomic_load(&l->samples) + more;
    double deadline = test_now() + test_scaled(30);
    while (atomic_load(&l->samples) < until && test_now() < deadline)
        test_sleep(0.002);
    assert_true(atomic_load(&l->samples) >= until);
}

/* Touches mib MiB, clones a process that shares them, sends its pid and
 * holds until go (the clone, never told, holds until it is killed). */
static int hold_with_a_clone(const test_child *self, const void *arg)
{
    size_t bytes = (size_t)*(const int *)arg << 20;
    char *block = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (block == MAP_FAILED)
        return 4;
    test_touch(block, bytes);
    static int clone_go[2];
    char *stack;
    pid_t clone_pid;
    if (pipe(clone_go) != 0 || (clone_pid = test_clone_sharing(0, clone_go, &stack)) < 0)
        return 5;
    test_child_send(self, &clone_pid, sizeof clone_pid);
    test_child_await(self);
    kill(clone_pid, SIGKILL);
    return 0;
}

/* A cgroup lists its members in pid order: a clone whose pid came before
 * its parent's (after the pids wrapped) was tracked before it, and never
 * asked whether it shares its memory -- counted twice (review of
 * 935302e, F4).  This fixture's listing puts the clone first. */
static void a_clone_listed_before_its_parent_is_counted_once(void **state)
{
    (void)state;
    if (test_clone_vm_unsupported())
        return;
    fixture f;
    make_fixture(&f, 2);
    int mib = 64;
    test_child holder = test_spawn(hold_with_a_clone, &mib, TEST_SPAWN_GROUP);
    pid_t clone_pid;
    test_child_receive(&holder, &clone_pid, sizeof clone_pid);
    char text[64];
    snprintf(text, sizeof text, "%d\n%d\n", (int)clone_pid, (int)holder.pid);
    write_procs(f.group, text);
    latest_sample latest = {0};
    resmon_monitor *m = start_members_monitor(f.group, &latest);
    double both = wait_for_processes(&latest, 2);
    wait_for_more_samples(&latest, 2);
    double later = atomic_load(&latest.rss_mb);
    assert_int_equal(resmon_monitor_stop(m), 0);
    resmon_monitor_free(m);
    test_child_kill(&holder);
    remove_tree(f.root);
    ASSERT_BETWEEN(later, mib, mib * SANITIZER_MEMORY_FACTOR + 8); /* twice read 128 */
    assert_true(both >= mib);
}

/* A member writes 512 KiB to /dev/null and burns 0.3 s of CPU, says so,
 * and ends when let go (or stays, holding). */
static int write_and_burn(const test_child *self, const void *arg)
{
    const double *burn = arg;
    test_child_go_wait(self);
    test_write_512k();
    test_spin_cpu(*burn);
    test_child_ready(self);
    test_child_go_wait(self);
    return 0;
}

static int burn_cpu(const test_child *self, const void *arg)
{
    (void)self;
    const double *burn = arg;
    test_spin_cpu(*burn);
    return 0;
}

/* Review 63 F2: members this process forked and reaps.  procs[0] stands
 * for no one there, yet a reaped member was settled against it: its I/O
 * taken off for good (another member's 512 KiB vanished), and the catch-up
 * read of procs[0] added every child this process reaped, members or not
 * (a child never listed added its 0.5 s). */
static void members_this_process_reaps_settle_against_no_one(void **state)
{
    (void)state;
    fixture f;
    make_fixture(&f, 2);
    double burn = 0.3, no_burn = 0, outsider_burn = 0.5;
    test_child c = test_spawn(write_and_burn, &burn, 0);
    test_child d = test_spawn(write_and_burn, &no_burn, 0);
    char text[64];
    snprintf(text, sizeof text, "%d\n%d\n", (int)c.pid, (int)d.pid);
    write_procs(f.group, text);
    latest_sample latest = {0};
    resmon_options o = RESMON_OPTIONS_INIT;
    o.sample_interval_sec = 0.01;
    o.metrics = RESMON_METRIC_IO;
    o.cgroup_path = f.group;
    o.cgroup_members = 1;
    o.on_sample = keep_latest;
    o.on_sample_user = &latest;
    resmon_monitor *m;
    assert_int_equal(resmon_monitor_new(&m, &o), 0);
    assert_int_equal(resmon_monitor_start(m), 0);
    wait_for_more_samples(&latest, 2);
    test_child_go(&c);
    test_child_wait_ready(&c); /* wrote and burned */
    wait_for_more_samples(&latest, 3);
    test_child outsider = test_spawn(burn_cpu, &outsider_burn, 0); /* never a member */
    test_child_reap(&outsider, NULL);
    test_child_go(&c);
    test_child_reap(&c, NULL); /* a member ends, reaped here */
    wait_for_more_samples(&latest, 5);
    test_child_go(&d);
    test_child_wait_ready(&d); /* another member writes its 512 KiB */
    wait_for_more_samples(&latest, 3);
    assert_int_equal(resmon_monitor_stop(m), 0);
    resmon_summary s = test_summary(m);
    resmon_monitor_free(m);
    test_child_go(&d);
    test_child_reap(&d, NULL);
    remove_tree(f.root);
    print_message("window wchar %.0f (the members' 1048576), CPU %.3f s (the members' ~%.1f)\n", s.io_wchar,
                  s.cpu_time_sec, burn);
    ASSERT_BETWEEN(s.io_wchar, 1048576, 1048576 + 64); /* + the pipe bytes they said ready with */
    /* Not the outsider's 0.5 s.  (Below the member's 0.3 s by 0.04 once, in
     * a ctest -j2 beside test_tree: not understood, not the point here.) */
    ASSERT_BETWEEN(s.cpu_time_sec, burn / 2, burn + 0.1);
}

/* Review 63 F1: a member forked by a member while this process had no
 * descriptor left (so the cgroup's listing could not even be opened: the
 * walk kept its set, and said nothing) was found later and counted from
 * its figures then; when its parent reaped it, its whole life was settled:
 * 512 KiB and 0.1 s lost.  Born in the cgroup of a member, it counts from
 * its birth, and the listing that failed is said (unreadable). */
typedef struct late_member {
    const char *group;
    int written[2], release[2];
} late_member;

static int fork_a_late_member(const test_child *self, const void *arg)
{
    const late_member *late = arg;
    test_child_go_wait(self);
    pid_t member = fork();
    if (member == 0) {
        test_write_512k();
        test_spin_cpu(0.1);
        struct timespec cpu;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
        char byte;
        if (write(late->written[1], &cpu, sizeof cpu) != (ssize_t)sizeof cpu || read(late->release[0], &byte, 1) != 1)
            _exit(3);
        _exit(0);
    }
    /* Listed at once, as the kernel lists a member's child. */
    char path[600], text[64];
    snprintf(path, sizeof path, "%s/cgroup.procs", late->group);
    snprintf(text, sizeof text, "%d\n%d\n", (int)getpid(), (int)member);
    int status;
    if (member < 0 || test_write_file(path, text) != 0 || waitpid(member, &status, 0) != member ||
        !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        _exit(4);
    test_child_send(self, "d", 1);
    test_child_idle();
}

typedef struct late_member_run {
    test_child *worker;
    const late_member *late;
} late_member_run;

/* Under test_run_under_open_file_limit (nothing asserted): got, the peak
 * unreadable while starved, the window's wchar and CPU, the member's CPU
 * before it was found, the worker's wchar over the window (the kernel's). */
static void monitor_a_late_member(void *arg, double *got)
{
    const late_member_run *run = arg;
    double wchar_before = test_io_wchar(run->worker->pid);
    latest_sample latest = {0};
    resmon_options o = RESMON_OPTIONS_INIT;
    o.sample_interval_sec = 0.005;
    o.metrics = RESMON_METRIC_IO;
    o.cgroup_path = run->late->group;
    o.cgroup_members = 1;
    o.on_sample = keep_latest;
    o.on_sample_user = &latest;
    resmon_monitor *m = NULL;
    static int held[4096];
    size_t count = 0;
    int spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (spare < 0 || resmon_monitor_new(&m, &o) != 0 || resmon_monitor_start(m) != 0) {
        resmon_monitor_free(m);
        return;
    }
    int until = atomic_load(&latest.samples) + 2;
    while (atomic_load(&latest.samples) < until)
        test_sleep(0.002);
    for (int fd; count < sizeof held / sizeof *held && (fd = dup(spare)) >= 0;)
        held[count++] = fd;
    struct timespec member_cpu;
    resmon_summary during, s;
    char byte;
    int ok = errno == EMFILE && write(run->worker->go_write, "g", 1) == 1 &&
             read(run->late->written[0], &member_cpu, sizeof member_cpu) == (ssize_t)sizeof member_cpu;
    until = atomic_load(&latest.samples) + 8; /* no longer "born since the previous reading" when found */
    while (ok && atomic_load(&latest.samples) < until)
        test_sleep(0.002);
    ok = ok && resmon_monitor_get_summary(m, &during, sizeof during) == 0;
    for (size_t i = 0; i < count; i++)
        close(held[i]);
    close(spare);
    until = atomic_load(&latest.samples) + 3; /* found now */
    while (ok && atomic_load(&latest.samples) < until)
        test_sleep(0.002);
    ok = ok && write(run->late->release[1], "r", 1) == 1 && read(run->worker->ready.read_fd, &byte, 1) == 1;
    until = atomic_load(&latest.samples) + 3;
    while (ok && atomic_load(&latest.samples) < until)
        test_sleep(0.002);
    ok = ok && resmon_monitor_stop(m) == 0 && resmon_monitor_get_summary(m, &s, sizeof s) == 0;
    resmon_monitor_free(m);
    if (!ok)
        return;
    got[0] = during.peak_unreadable_procs;
    got[1] = s.io_wchar;
    got[2] = s.cpu_time_sec;
    got[3] = (double)member_cpu.tv_sec + (double)member_cpu.tv_nsec * 1e-9;
    got[4] = test_io_wchar(run->worker->pid) - wchar_before;
}

static void a_member_found_late_counts_its_whole_life(void **state)
{
    (void)state;
    fixture f;
    make_fixture(&f, 2);
    late_member late = {.group = f.group};
    assert_int_equal(pipe2(late.written, O_CLOEXEC), 0);
    assert_int_equal(pipe2(late.release, O_CLOEXEC), 0);
    test_child worker = test_spawn(fork_a_late_member, &late, TEST_SPAWN_GROUP);
    char text[64];
    snprintf(text, sizeof text, "%d\n", (int)worker.pid);
    write_procs(f.group, text);
    late_member_run run = {&worker, &late};
    double got[5];
    int reported = test_run_under_open_file_limit(64, monitor_a_late_member, &run, got, 5);
    test_child_kill(&worker);
    for (int i = 0; i < 2; i++) {
        close(late.written[i]);
        close(late.release[i]);
    }
    remove_tree(f.root);
    assert_true(reported);
    print_message("unreadable while starved %g; window wchar %.0f, the kernel's %.0f; window CPU %.3f s, the "
                  "member's before it was found %.3f s\n",
                  got[0], got[1], got[4], got[2], got[3]);
    assert_true(got[0] >= 1); /* the listing that failed is said */
    ASSERT_DOUBLE_EQ(got[1], got[4]);
    assert_true(got[2] >= got[3] - 2.0 / (double)sysconf(_SC_CLK_TCK) - 0.001);
}

static void members_options_and_a_cgroup_without_memory_files(void **state)
{
    (void)state;
    resmon_options o = RESMON_OPTIONS_INIT;
    o.cgroup_members = 1;
    resmon_monitor *m;
    assert_int_equal(resmon_monitor_new(&m, &o), -EINVAL); /* no cgroup_path */
    char dir[256];
    snprintf(dir, sizeof dir, "/tmp/resmon-test-members-bare-%ld", (long)getpid());
    remove_tree(dir);
    make_dirs(dir);
    o.cgroup_path = dir;
    o.pid = getpid();
    assert_int_equal(resmon_monitor_new(&m, &o), -EINVAL); /* a pid and a cgroup's members */
    o.pid = 0;
    assert_int_equal(resmon_monitor_new(&m, &o), 0);
    assert_int_equal(resmon_monitor_start(m), -ENOENT); /* no cgroup.procs: nothing to list */
    put_file(dir, "cgroup.procs", ""); /* as a v2 cgroup without the memory controller */
    assert_int_equal(resmon_monitor_start(m), 0);
    assert_int_equal(resmon_monitor_stop(m), 0);
    resmon_summary s = test_summary(m);
    assert_int_equal(s.cgroup_error, -ENOTSUP);
    assert_int_equal(s.cgroup_version, 0);
    ASSERT_BETWEEN(s.peak_rss_mb, 0, 0);
    resmon_monitor_free(m);
    remove_tree(dir);
}

static void failed_leaf_leaves_nothing(void **state)
{
    (void)state;
    fixture f;
    make_fixture(&f, 1);
    resmon_cgroup *cg = NULL;
    char err[RESMON_ERR_MAX];
    int rc = rm__cgroup_leaf_create_at(&cg, f.proc, f.root, 0, err, sizeof err);
    assert_true(rc < 0);
    assert_null(cg);
    assert_non_null(strstr(err, "cgroup.procs"));
    DIR *d = opendir(f.group);
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        assert_int_not_equal(strncmp(e->d_name, "resmon-", 7), 0);
    closedir(d);
    remove_tree(f.root);
}

static void leaf_names_round_trip_and_reject_lookalikes(void **state)
{
    (void)state;
    rm__cgroup_leaf_owner owner = {4242, 4026531836u, 123456789u, 7}, back;
    char name[128];
    assert_int_equal(rm__cgroup_leaf_name(name, sizeof name, &owner), 0);
    assert_string_equal(name, "resmon-4242-4026531836-123456789-7");
    assert_int_equal(rm__cgroup_leaf_name_parse(name, &back), 0);
    assert_true(back.pid == owner.pid && back.pidns == owner.pidns && back.starttime == owner.starttime &&
                back.counter == owner.counter);
    const char *not_ours[] = {"resmon-4242-0", /* the 0.4 development name: cannot be decided */
                              "resmon-4242-1-2-3x", "resmon-4242-1-2-", "resmon--1-2-3", "resmon-0-1-2-3",
                              "resmon-+42-1-2-3", "resmon-042-1-2-3", "resmon-4242-1-2-3-4", "xresmon-4242-1-2-3",
                              "resmon-99999999999-1-2-3", "resmon-test-given-x", "Resmon-4242-1-2-3"};
    for (size_t i = 0; i < sizeof not_ours / sizeof *not_ours; i++)
        assert_int_equal(rm__cgroup_leaf_name_parse(not_ours[i], &back), -EINVAL);
}

/* A /proc fixture entry: PID/stat with the given start time. */
static void put_proc(const char *proc_root, long pid, unsigned long long starttime)
{
    char dir[600], text[400];
    snprintf(dir, sizeof dir, "%s/%ld", proc_root, pid);
    make_dirs(dir);
    snprintf(text, sizeof text, "%ld (resmon) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 %llu 1000 10\n", pid,
             starttime);
    put_file(dir, "stat", text);
}

/* Makes levels nested directories of name_length-byte names below dir, by
 * descriptor (their path may pass PATH_MAX), the deepest holding a
 * cgroup.procs of text. */
static void make_nest(const char *dir, int levels, size_t name_length, const char *text)
{
    char name[256];
    memset(name, 'n', name_length);
    name[name_length] = '\0';
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    assert_true(fd >= 0);
    for (int i = 0; i < levels; i++) {
        assert_int_equal(mkdirat(fd, name, 0755), 0);
        int sub = openat(fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(sub >= 0);
        close(fd);
        fd = sub;
    }
    int f = openat(fd, "cgroup.procs", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    assert_true(f >= 0);
    assert_int_equal(write(f, text, strlen(text)), (ssize_t)strlen(text));
    close(f);
    close(fd);
}

/* Removes name below the directory open at dir with all it holds, by
 * descriptor (nftw stops at PATH_MAX). */
static void remove_at(int dir, const char *name)
{
    int fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        unlinkat(dir, name, 0);
        return;
    }
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            remove_at(dirfd(d), e->d_name);
    closedir(d);
    unlinkat(dir, name, AT_REMOVEDIR);
}

static int exists(const char *dir, const char *name)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct stat st;
    return stat(path, &st) == 0;
}

/* The sweep removes exactly the empty leaves of a creator that is gone (no
 * such pid, or the pid reused by a process started later) in this pid
 * namespace; a live creator's leaf, another namespace's, one holding a
 * process (or a cgroup below it holding one), and every directory not
 * named as resmon names its leaves stay. */
static void sweep_removes_only_stale_empty_leaves(void **state)
{
    (void)state;
    char root[256], proc[300], parent[300];
    snprintf(root, sizeof root, "/tmp/resmon-test-sweep-%ld", (long)getpid());
    remove_tree(root);
    snprintf(proc, sizeof proc, "%s/proc", root);
    snprintf(parent, sizeof parent, "%s/cg", root);
    make_dirs(proc);
    make_dirs(parent);
    put_proc(proc, 100, 5000); /* alive, the creator of resmon-100-7-5000-0 */
    put_proc(proc, 200, 9000); /* pid 200 reused: resmon-200-7-4000-0's creator is gone */
    const char *stale[] = {"resmon-300-7-10-0", "resmon-300-7-10-1", "resmon-200-7-4000-0"};
    const char *kept[] = {"resmon-100-7-5000-0", /* its creator lives */
                          "resmon-300-8-10-0",   /* another pid namespace */
                          "resmon-301-7-10-0",   /* holds a process */
                          "resmon-300-7-10",     /* not a leaf name */
                          "resmon-303-7-0-0",    /* its creator's start time unknown */
                          "given-by-user"};
    char path[800];
    for (size_t i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", parent, stale[i]);
        make_dirs(path);
    }
    for (size_t i = 0; i < 6; i++) {
        snprintf(path, sizeof path, "%s/%s", parent, kept[i]);
        make_dirs(path);
    }
    snprintf(path, sizeof path, "%s/resmon-301-7-10-0", parent);
    put_file(path, "cgroup.procs", "4321\n");
    put_file(parent, "resmon-302-7-10-0", ""); /* a file, not a directory */
    /* Review 58: on v2 a leaf that hands controllers down holds no process
     * of its own -- its command runs in a cgroup below it (job); the sweep
     * removed the empty ones beside it (pre-made) that the running workload
     * was about to use.  A leaf with a process anywhere below stays whole. */
    snprintf(path, sizeof path, "%s/resmon-304-7-10-0/job", parent);
    make_dirs(path);
    put_file(path, "cgroup.procs", "4322\n");
    snprintf(path, sizeof path, "%s/resmon-304-7-10-0/pre-made", parent);
    make_dirs(path);
    /* Attack 74: the same with the process 22 levels of 200-byte names
     * down, past PATH_MAX (the walk by path skipped it), and with cgroups
     * nested past the levels followed (what runs there is unknown). */
    const char *far[] = {"resmon-305-7-10-0", "resmon-306-7-10-0"};
    for (size_t i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s/pre-made", parent, far[i]);
        make_dirs(path);
        snprintf(path, sizeof path, "%s/%s", parent, far[i]);
        make_nest(path, i == 0 ? 22 : 70, i == 0 ? 200 : 1, i == 0 ? "4323\n" : "");
    }
    assert_int_equal(rm__cgroup_sweep_stale(parent, proc, 0), 0); /* own namespace unknown: nothing */
    assert_true(exists(parent, stale[0]));
    assert_int_equal(rm__cgroup_sweep_stale(parent, proc, 7), 0); /* pid 1 unseen (hidepid): nothing */
    assert_true(exists(parent, stale[0]));
    put_proc(proc, 1, 1);
    assert_int_equal(rm__cgroup_sweep_stale(parent, proc, 7), 3);
    for (size_t i = 0; i < 3; i++)
        assert_false(exists(parent, stale[i]));
    for (size_t i = 0; i < 6; i++)
        assert_true(exists(parent, kept[i]));
    assert_true(exists(parent, "resmon-302-7-10-0"));
    assert_true(exists(parent, "resmon-304-7-10-0/pre-made"));
    assert_true(exists(parent, "resmon-305-7-10-0/pre-made")); /* removed before the fix */
    assert_true(exists(parent, "resmon-306-7-10-0/pre-made"));
    assert_int_equal(rm__cgroup_sweep_stale(parent, proc, 7), 0);
    int at = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    for (size_t i = 0; i < 2; i++)
        remove_at(at, far[i]);
    close(at);
    remove_tree(root);
}

/* Joins the leaf, touches 64 MiB, reports ready and exits on go. */
static int join_and_hold(const test_child *self, const void *arg)
{
    if (resmon_cgroup_join(arg, 0) != 0)
        return 2;
    char *block = malloc(64 << 20);
    if (!block)
        return 4;
    test_touch(block, 64 << 20); /* a plain memset of memory read once is optimised away by clang */
    test_child_ready(self);
    test_child_go_wait(self);
    return 0;
}

/* A leaf of resmon_cgroup_create's (with limit_bytes), or the test is
 * skipped saying why none can be made here. */
static resmon_cgroup *real_leaf_or_skip(uint64_t limit_bytes)
{
    resmon_cgroup *cg = NULL;
    char err[RESMON_ERR_MAX];
    if (resmon_cgroup_create(&cg, limit_bytes, err, sizeof err) < 0) {
        print_message("skipped: no cgroup can be made here: %s\n", err);
        skip();
    }
    return cg;
}

/* On a machine where this process may make a cgroup (root, v1 memory
 * hierarchy or delegated v2), a child joins between fork and exec, the
 * leaf's memory counts it, and removal leaves no directory.  Skipped, with
 * the reason, elsewhere. */
static void real_leaf_joins_and_goes(void **state)
{
    (void)state;
    resmon_cgroup *cg = real_leaf_or_skip(0);
    char dir[4200];
    snprintf(dir, sizeof dir, "%s", resmon_cgroup_path(cg));
    struct stat st;
    assert_int_equal(stat(dir, &st), 0);
    test_child child = test_spawn(join_and_hold, cg, 0);
    test_child_wait_ready(&child);
    rm__cgroup reader;
    assert_int_equal(rm__cgroup_open(&reader, dir), 0);
    uint64_t bytes = 0, peak = 0;
    int current_rc = rm__cgroup_read_current(&reader, &bytes);
    /* The child goes before any assertion, so a failure leaves neither it nor the leaf behind. */
    test_child_go(&child);
    int status = test_child_reap(&child, NULL);
    int peak_rc = rm__cgroup_read_peak(&reader, &peak);
    rm__cgroup_close(&reader);
    assert_int_equal(resmon_cgroup_remove(cg), 0);
    assert_int_equal(current_rc, 0);
    assert_int_equal(peak_rc, 0);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    if (!TEST_UNDER_TSAN) { /* TSan's allocator hands the child memory it does not charge as anonymous here */
        assert_true(bytes >= (uint64_t)(64 << 20)); /* the child's 64 MiB, charged to the leaf */
        assert_true(peak >= (uint64_t)(64 << 20));
    }
    assert_int_not_equal(stat(dir, &st), 0);
    assert_int_equal(errno, ENOENT);
}

/* The leaf's last path component, and whether every thread of this process
 * is in it (/proc/self/task/TID/cgroup's memory line ends with it). */
static int every_thread_in(const char *leaf)
{
    DIR *tasks = opendir("/proc/self/task");
    if (!tasks)
        return 0;
    int threads = 0, inside = 0;
    struct dirent *e;
    while ((e = readdir(tasks)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[300], text[4096];
        snprintf(path, sizeof path, "/proc/self/task/%s/cgroup", e->d_name);
        FILE *f = fopen(path, "re");
        threads++;
        if (!f)
            continue;
        size_t n = fread(text, 1, sizeof text - 1, f);
        fclose(f);
        text[n] = '\0';
        inside += strstr(text, leaf) != NULL;
    }
    closedir(tasks);
    return threads > 0 && inside == threads;
}

static void *wait_on_pipe(void *arg)
{
    char c;
    while (read(*(const int *)arg, &c, 1) < 0 && errno == EINTR)
        ;
    return NULL;
}

/* A process with a second thread joins itself (pid 0): both threads move,
 * not the caller's alone (a v1 join of a single-threaded caller writes
 * tasks, which moves one thread). */
static int join_with_two_threads(const test_child *self, const void *arg)
{
    (void)self;
    const resmon_cgroup *cg = arg;
    const char *leaf = strrchr(resmon_cgroup_path(cg), '/') + 1;
    int hold[2];
    pthread_t thread;
    if (pipe(hold) != 0 || pthread_create(&thread, NULL, wait_on_pipe, &hold[0]) != 0)
        return 3;
    int rc = resmon_cgroup_join(cg, 0) == 0 && every_thread_in(leaf) ? 0 : 2;
    close(hold[1]);
    pthread_join(thread, NULL);
    return rc;
}

static int join_alone(const test_child *self, const void *arg)
{
    (void)self;
    const resmon_cgroup *cg = arg;
    return resmon_cgroup_join(cg, 0) == 0 && every_thread_in(strrchr(resmon_cgroup_path(cg), '/') + 1) ? 0 : 2;
}

/* Joining itself moves the whole caller, single-threaded or not. */
static void real_leaf_join_moves_every_thread(void **state)
{
    (void)state;
    resmon_cgroup *cg = real_leaf_or_skip(0);
    test_child alone = test_spawn(join_alone, cg, 0);
    int alone_status = test_child_reap(&alone, NULL);
    test_child two = test_spawn(join_with_two_threads, cg, 0);
    int two_status = test_child_reap(&two, NULL);
    assert_int_equal(resmon_cgroup_remove(cg), 0);
    assert_true(WIFEXITED(alone_status) && WEXITSTATUS(alone_status) == 0);
    assert_true(WIFEXITED(two_status) && WEXITSTATUS(two_status) == 0);
}

/* Joins the leaf, reports ready and exits on go. */
static int join_and_wait(const test_child *self, const void *arg)
{
    if (resmon_cgroup_join(arg, 0) != 0)
        return 2;
    test_child_ready(self);
    test_child_go_wait(self);
    return 0;
}

/* A leaf made with a memory limit keeps a process still running in it at
 * remove -- in the leaf, under the limit -- and says -EBUSY; the leaf goes
 * only once empty (here by hand: a later create sweeps it once its creator
 * is gone).  Without a limit the process would move to the parent. */
static void real_limited_leaf_keeps_what_still_runs(void **state)
{
    (void)state;
    resmon_cgroup *cg = real_leaf_or_skip(64 << 20);
    char dir[4200], leaf[256];
    snprintf(dir, sizeof dir, "%s", resmon_cgroup_path(cg));
    snprintf(leaf, sizeof leaf, "%s", strrchr(dir, '/') + 1);
    int version = resmon_cgroup_version(cg);
    test_child child = test_spawn(join_and_wait, cg, 0);
    test_child_wait_ready(&child);
    int removed = resmon_cgroup_remove(cg);
    char path[4300], text[4096] = "", limit[64] = "";
    snprintf(path, sizeof path, "/proc/%d/cgroup", (int)child.pid);
    FILE *f = fopen(path, "re");
    if (f) {
        text[fread(text, 1, sizeof text - 1, f)] = '\0';
        fclose(f);
    }
    snprintf(path, sizeof path, "%s/%s", dir, version == 2 ? "memory.max" : "memory.limit_in_bytes");
    f = fopen(path, "re");
    if (f) {
        limit[fread(limit, 1, sizeof limit - 1, f)] = '\0';
        fclose(f);
    }
    /* The child goes before any assertion, so a failure leaves neither it nor the leaf behind. */
    test_child_go(&child);
    int status = test_child_reap(&child, NULL);
    int gone = -1;
    for (int i = 0; i < 12000 && gone != 0; i++) { /* an exited process is still charged for a moment; 60 s net */
        gone = rmdir(dir) == 0 || errno == ENOENT ? 0 : -errno;
        if (gone != 0)
            usleep(5000);
    }
    /* v1: its cpuacct shadow (same name, below our cpuacct cgroup) was
     * joined too and is kept with it; removed here by hand as well. */
    rm__cgroup_place cpu_place;
    int cpu_shadow = version == 1 && rm__cgroup_locate_v1("/proc/self", "", "cpuacct", &cpu_place) == 0;
    char cpu_line[300] = "";
    if (cpu_shadow) {
        char cpu_dir[4400];
        snprintf(cpu_dir, sizeof cpu_dir, "%s/%s", cpu_place.dir, leaf);
        for (int i = 0; i < 12000 && rmdir(cpu_dir) != 0 && errno == EBUSY; i++)
            usleep(5000);
        snprintf(cpu_line, sizeof cpu_line, "cpuacct:");
    }
    assert_int_equal(removed, -EBUSY);
    assert_non_null(strstr(text, leaf)); /* still in the leaf */
    if (cpu_shadow) { /* the cpuacct line names the leaf too */
        const char *line = strstr(text, cpu_line);
        assert_non_null(line);
        const char *end = strchr(line, '\n');
        const char *at = strstr(line, leaf);
        assert_true(at && (!end || at < end));
    }
    assert_int_equal(strtoull(limit, NULL, 10), 64 << 20); /* and under its limit */
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_int_equal(gone, 0);
}

/* Writes pid to dir's cgroup.procs: 0 or -errno. */
static int move_to(const char *dir, pid_t pid)
{
    char path[4400], text[32];
    snprintf(path, sizeof path, "%s/cgroup.procs", dir);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    int n = snprintf(text, sizeof text, "%d", (int)pid);
    int rc = write(fd, text, (size_t)n) == n ? 0 : -errno;
    close(fd);
    return rc;
}

/* resmon_cgroup_holds: a process in the leaf, or in a cgroup made below it
 * (the leaf's limit binds it there), is held; one moved out of it -- as a
 * command run as root may move what it leaves running, escaping
 * --memory-limit -- is not; one that ended is -ESRCH. */
static void real_leaf_holds_what_is_in_it_or_below(void **state)
{
    (void)state;
    resmon_cgroup *cg = real_leaf_or_skip(0);
    char leaf[4200], below[4300], parent[4200];
    snprintf(leaf, sizeof leaf, "%s", resmon_cgroup_path(cg));
    snprintf(below, sizeof below, "%s/below", leaf);
    snprintf(parent, sizeof parent, "%s", leaf);
    *strrchr(parent, '/') = '\0'; /* the caller's own cgroup: the leaf is made in it */
    int bad_cg = resmon_cgroup_holds(NULL, getpid()), bad_pid = resmon_cgroup_holds(cg, 0);
    int caller = resmon_cgroup_holds(cg, getpid());
    test_child child = test_spawn(join_and_wait, cg, 0);
    test_child_wait_ready(&child);
    int in_leaf = resmon_cgroup_holds(cg, child.pid);
    int made = mkdir(below, 0755) == 0 ? 0 : -errno, in_below = -1, moved_below = -1;
    if (made == 0 && (moved_below = move_to(below, child.pid)) == 0)
        in_below = resmon_cgroup_holds(cg, child.pid);
    int moved_out = move_to(parent, child.pid), outside = moved_out == 0 ? resmon_cgroup_holds(cg, child.pid) : -1;
    test_child_go(&child);
    int status = test_child_reap(&child, NULL);
    int ended = resmon_cgroup_holds(cg, child.pid); /* reaped: no such process (its pid is not reused so soon) */
    for (int i = 0; made == 0 && i < 12000 && rmdir(below) != 0 && errno == EBUSY; i++)
        usleep(5000); /* an exited process is still charged for a moment; 60 s net */
    int removed = resmon_cgroup_remove(cg);
    print_message("made below %d, moved below %d, moved out %d\n", made, moved_below, moved_out);
    assert_int_equal(bad_cg, -EINVAL);
    assert_int_equal(bad_pid, -EINVAL);
    assert_int_equal(caller, 0); /* it made the leaf, never joined it */
    assert_int_equal(in_leaf, 1);
    if (made == 0 && moved_below == 0)
        assert_int_equal(in_below, 1);
    if (moved_out == 0)
        assert_int_equal(outside, 0);
    assert_int_equal(ended, -ESRCH);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_int_equal(removed, 0);
}

/* A tree wider than WALK_EVERY_SAMPLE_MAX (tree_totals.h) in the leaf: the
 * root forks its children there, reports ready, and all end when the test
 * closes go. */
#define SLOW_WALK_CHILDREN 70

static int wide_tree_in_leaf(const test_child *self, const void *arg)
{
    if (resmon_cgroup_join(arg, 0) != 0)
        return 2;
    for (int i = 0; i < SLOW_WALK_CHILDREN; i++) {
        pid_t pid = fork();
        if (pid < 0)
            return 3;
        if (pid == 0)
            _exit(test_child_await(self) ? 0 : 0);
    }
    test_child_ready(self);
    test_child_await(self);
    while (wait(NULL) > 0 || errno == EINTR)
        ;
    return 0;
}

typedef struct slow_walk {
    int started[2]; /* the hook -> the test: the walk is held */
    int release[2]; /* the test -> the hook: go on */
    atomic_int calls;
    resmon_monitor *m;            /* set: the hook notes ... */
    uint64_t wide_refresh_ns;     /* ... the probe's statm refresh at the held walk */
} slow_walk;

/* rm__monitor_walk_hook: holds the first engaged walk until released. */
static void hold_first_walk(void *arg)
{
    slow_walk *w = arg;
    if (atomic_fetch_add(&w->calls, 1) != 0)
        return;
    if (w->m)
        w->wide_refresh_ns = rm__monitor_wide_refresh_ns(w->m); /* the walker holds the probe */
    if (write(w->started[1], "s", 1) != 1)
        return;
    char byte;
    while (read(w->release[0], &byte, 1) < 0 && errno == EINTR)
        ;
}

static void note_sample(const resmon_sample *s, void *user)
{
    (void)s;
    ssize_t ignored = write(*(const int *)user, "x", 1); /* non-blocking: a full pipe is enough samples */
    (void)ignored;
}

/* Waits up to timeout_sec for fd to be readable and reads what is there;
 * returns the bytes read (0 at the timeout). */
static size_t read_within(int fd, double timeout_sec)
{
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    if (poll(&pfd, 1, (int)(timeout_sec * 1000)) != 1)
        return 0;
    char buf[256];
    ssize_t n = read(fd, buf, sizeof buf);
    return n > 0 ? (size_t)n : 0;
}

/* Issue 33: engaged (a wide tree in its own leaf), the per-process walk ran
 * on the sampler thread, so a slow walk (10 000 processes) held up every
 * sample until it ended.  Now it runs on its own thread: with a walk held
 * by the test, samples still come. */
static void real_leaf_slow_walk_delays_no_sample(void **state)
{
    (void)state;
    resmon_cgroup *cg = real_leaf_or_skip(0);
    rm__tree_totals probe_totals;
    test_child root = test_spawn(wide_tree_in_leaf, cg, 0);
    test_child_wait_ready(&root);
    rm__tree_totals_open(&probe_totals, resmon_cgroup_path(cg), resmon_cgroup_version(cg), root.pid);
    int has_total = probe_totals.cpu.fd >= 0;
    rm__tree_totals_close(&probe_totals);
    if (!has_total) {
        test_child_reap(&root, NULL);
        resmon_cgroup_remove(cg);
        print_message("skipped: the leaf has no CPU total here (v1 without cpuacct)\n");
        skip();
    }
    slow_walk w = {.calls = 0};
    int samples[2];
    assert_int_equal(pipe2(w.started, O_CLOEXEC), 0);
    assert_int_equal(pipe2(w.release, O_CLOEXEC), 0);
    assert_int_equal(pipe2(samples, O_CLOEXEC | O_NONBLOCK), 0);
    resmon_options o = {.struct_size = sizeof o,
                        .pid = root.pid,
                        .include_children = 1,
                        .cgroup_path = resmon_cgroup_path(cg),
                        .sample_interval_sec = 0.01,
                        .metrics = RESMON_METRIC_COUNTS, /* the groups held between walks */
                        .on_sample = note_sample,
                        .on_sample_user = &samples[1]};
    resmon_monitor *m = test_monitor_new(&o);
    w.m = m;
    rm__monitor_walk_hook(m, hold_first_walk, &w);
    assert_int_equal(resmon_monitor_start(m), 0);
    /* Engaged at the second sample; the first walk at its own cadence
     * after (the walk's cost / 0.025 %: 20 s at most). */
    size_t held = read_within(w.started[0], test_scaled(60));
    while (read_within(samples[0], 0) > 0) /* the samples before the walk was held */
        ;
    size_t during = 0;
    double give_up = test_now() + test_scaled(30); /* a hundred intervals' need, far below */
    while (held && during < 5 && test_now() < give_up)
        during += read_within(samples[0], give_up - test_now());
    assert_int_equal(write(w.release[1], "r", 1), 1);
    assert_int_equal(resmon_monitor_stop(m), 0);
    resmon_summary s = test_summary(m);
    resmon_monitor_free(m);
    int status = test_child_reap(&root, NULL);
    assert_int_equal(resmon_cgroup_remove(cg), 0);
    for (int i = 0; i < 2; i++) {
        close(w.started[i]);
        close(w.release[i]);
        close(samples[i]);
    }
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_true(held > 0);     /* a walk was held: the tree was engaged */
    /* ... and its sleepers' statm refreshed at the leaf's pace (60 s), not
     * the 10 s that re-read every one at each walk */
    assert_true(w.wide_refresh_ns >= 60000000000ULL);
    assert_true(during >= 5);  /* ... and samples came meanwhile */
    assert_true(s.peak_nprocs > SLOW_WALK_CHILDREN);
    assert_true(s.cpu_time_sec >= 0);
}

/* ---- the walker thread under attack (issue 33's review) ------------------ */

/* A wide tree in the leaf whose root burns CPU on demand: it forks
 * SLOW_WALK_CHILDREN idle children there, reports ready, then for each 's'
 * on spin burns SPIN_CPU_SEC of its own CPU and sends 'd'; at 'q' (or the
 * end of spin) it waits for go to close, reaps its children and ends. */
#define SPIN_CPU_SEC 0.3

typedef struct spin_tree_arg {
    const resmon_cgroup *cg;
    int spin_read, spin_write;
} spin_tree_arg;

static int wide_tree_that_spins(const test_child *self, const void *arg)
{
    const spin_tree_arg *a = arg;
    close(a->spin_write);
    if (resmon_cgroup_join(a->cg, 0) != 0)
        return 2;
    pid_t children[SLOW_WALK_CHILDREN];
    for (int i = 0; i < SLOW_WALK_CHILDREN; i++) {
        pid_t pid = fork();
        if (pid < 0)
            return 3;
        if (pid == 0) {
            close(a->spin_read);
            _exit(test_child_await(self) ? 0 : 0);
        }
        children[i] = pid;
    }
    test_child_ready(self);
    char byte;
    ssize_t got;
    while ((got = read(a->spin_read, &byte, 1)) != 0) {
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0 || (byte != 's' && byte != 'k'))
            break;
        if (byte == 's') {
            test_spin_cpu(SPIN_CPU_SEC);
        } else { /* 'k': the tree shrinks to the root alone */
            for (int i = 0; i < SLOW_WALK_CHILDREN; i++)
                kill(children[i], SIGKILL);
            for (int i = 0; i < SLOW_WALK_CHILDREN; i++)
                while (waitpid(children[i], NULL, 0) < 0 && errno == EINTR)
                    ;
        }
        test_child_send(self, "d", 1);
    }
    test_child_await(self);
    while (wait(NULL) > 0 || errno == EINTR)
        ;
    return 0;
}

/* The tree, its leaf and the leaf's CPU total as the kernel keeps it. */
typedef struct spin_tree {
    resmon_cgroup *cg;
    spin_tree_arg arg;
    test_child root;
    rm__tree_totals kernel; /* only its cpu: the leaf's total */
} spin_tree;

/* 0, or 1 when this machine cannot hold one (skip: nothing is left). */
static int spin_tree_open(spin_tree *t)
{
    char err[RESMON_ERR_MAX];
    memset(t, 0, sizeof *t);
    if (resmon_cgroup_create(&t->cg, 0, err, sizeof err) < 0) {
        print_message("skipped: no cgroup can be made here: %s\n", err);
        return 1;
    }
    int spin[2];
    assert_int_equal(pipe2(spin, O_CLOEXEC), 0);
    t->arg = (spin_tree_arg){.cg = t->cg, .spin_read = spin[0], .spin_write = spin[1]};
    t->root = test_spawn(wide_tree_that_spins, &t->arg, 0);
    close(t->arg.spin_read);
    t->arg.spin_read = -1;
    test_child_wait_ready(&t->root);
    rm__tree_totals_open(&t->kernel, resmon_cgroup_path(t->cg), resmon_cgroup_version(t->cg), t->root.pid);
    if (t->kernel.cpu.fd < 0) {
        rm__tree_totals_close(&t->kernel);
        close(t->arg.spin_write);
        test_child_reap(&t->root, NULL);
        resmon_cgroup_remove(t->cg);
        print_message("skipped: the leaf has no CPU total here (v1 without cpuacct)\n");
        return 1;
    }
    return 0;
}

/* Seconds of CPU the kernel has charged to the leaf. */
static double spin_tree_kernel_sec(const spin_tree *t)
{
    uint64_t ns = 0;
    assert_int_equal(rm__cgroup_cpu_read(&t->kernel.cpu, &ns), 0);
    return (double)ns * 1e-9;
}

/* The root burns SPIN_CPU_SEC; returns when it did. */
static void spin_tree_spin(spin_tree *t)
{
    assert_int_equal(write(t->arg.spin_write, "s", 1), 1);
    char done;
    test_child_receive(&t->root, &done, 1);
}

/* The root kills and reaps its children; returns when it did. */
static void spin_tree_shrink(spin_tree *t)
{
    assert_int_equal(write(t->arg.spin_write, "k", 1), 1);
    char done;
    test_child_receive(&t->root, &done, 1);
}

/* Ends the tree (unless it ended) and removes the leaf; the tree's wait status. */
static int spin_tree_close(spin_tree *t)
{
    if (t->arg.spin_write >= 0)
        close(t->arg.spin_write);
    t->arg.spin_write = -1;
    rm__tree_totals_close(&t->kernel);
    int status = t->root.reaped ? 0 : test_child_reap(&t->root, NULL);
    int removed = resmon_cgroup_remove(t->cg);
    assert_int_equal(removed, 0);
    return status;
}

/* rm__monitor_walk_hook for these tests: counts the walks on the walker
 * thread ("resmon-walk") and on others, tells the test of each walker walk
 * (a byte on started, never blocking) and holds the next `hold` of them until
 * a byte comes on release. */
typedef struct walk_gate {
    int started[2];
    int release[2];
    atomic_int hold;
    atomic_int on_walker, elsewhere;
} walk_gate;

static void walk_gate_open(walk_gate *g)
{
    memset(g, 0, sizeof *g);
    assert_int_equal(pipe2(g->started, O_CLOEXEC | O_NONBLOCK), 0);
    assert_int_equal(pipe2(g->release, O_CLOEXEC), 0);
}

static void walk_gate_close(walk_gate *g)
{
    for (int i = 0; i < 2; i++) {
        close(g->started[i]);
        close(g->release[i]);
    }
}

static void gate_walk(void *arg)
{
    walk_gate *g = arg;
    char name[32] = "";
    prctl(PR_GET_NAME, name, 0, 0, 0);
    if (strcmp(name, "resmon-walk") != 0) {
        atomic_fetch_add(&g->elsewhere, 1);
        return;
    }
    atomic_fetch_add(&g->on_walker, 1);
    int hold = atomic_load(&g->hold);
    while (hold > 0 && !atomic_compare_exchange_weak(&g->hold, &hold, hold - 1))
        ;
    ssize_t ignored = write(g->started[1], hold > 0 ? "h" : "w", 1); /* a full pipe: enough told */
    (void)ignored;
    if (hold > 0) {
        char byte;
        while (read(g->release[0], &byte, 1) < 0 && errno == EINTR)
            ;
    }
}

/* A monitor of o whose every due walk is asked of the walker, through g. */
static resmon_monitor *gated_monitor_new(const resmon_options *o, walk_gate *g)
{
    resmon_monitor *m = test_monitor_new(o);
    rm__monitor_walk_hook(m, gate_walk, g);
    rm__monitor_walk_every_sample(m, 1);
    return m;
}

/* Waits until the walker has begun a walk (held or not): 1, or 0 when none
 * came within a minute (scaled). */
static int walk_gate_wait(walk_gate *g)
{
    struct pollfd pfd = {.fd = g->started[0], .events = POLLIN};
    double give_up = test_now() + test_scaled(60);
    for (;;) {
        char byte;
        if (read(g->started[0], &byte, 1) == 1)
            return 1;
        double left = give_up - test_now();
        if (left <= 0)
            return 0;
        poll(&pfd, 1, (int)(left * 1000) + 1);
    }
}

static void walk_gate_release(walk_gate *g)
{
    assert_int_equal(write(g->release[1], "r", 1), 1);
}

/* Waits until this process's sampler thread ("resmon-sampler": one monitor
 * runs) sleeps in a futex wait without a deadline -- in monitor.c, only a
 * wait for the walk in flight (a mark's edge or stop's drain); a sample slot
 * is waited for with one.  1 when it does, 0 after a minute (scaled). */
static int wait_sampler_waits_for_walk(void)
{
    double give_up = test_now() + test_scaled(60);
    while (test_now() < give_up) {
        DIR *tasks = opendir("/proc/self/task");
        assert_non_null(tasks);
        struct dirent *e;
        int found = 0;
        while (!found && (e = readdir(tasks)) != NULL) {
            if (e->d_name[0] == '.')
                continue;
            char path[300], text[512] = "";
            snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
            FILE *f = fopen(path, "re");
            if (!f)
                continue;
            text[fread(text, 1, sizeof text - 1, f)] = '\0';
            fclose(f);
            if (strcmp(text, "resmon-sampler\n") != 0)
                continue;
            snprintf(path, sizeof path, "/proc/self/task/%s/syscall", e->d_name);
            if (!(f = fopen(path, "re")))
                continue;
            text[fread(text, 1, sizeof text - 1, f)] = '\0';
            fclose(f);
            long nr = -1;
            unsigned long word, op, val, timeout = 1;
            found = sscanf(text, "%ld %lx %lx %lx %lx", &nr, &word, &op, &val, &timeout) == 5 && nr == SYS_futex &&
                    timeout == 0;
        }
        closedir(tasks);
        if (found)
            return 1;
        test_sleep(0.0005); /* waiting for a state, not for a time */
    }
    return 0;
}

typedef struct stopper {
    resmon_monitor *m;
    pthread_t thread;
    int rc;
} stopper;

static void *stop_monitor(void *arg)
{
    stopper *s = arg;
    s->rc = resmon_monitor_stop(s->m);
    return NULL;
}

static resmon_options wide_tree_options(const spin_tree *t)
{
    return (resmon_options){.struct_size = sizeof(resmon_options),
                            .pid = t->root.pid,
                            .include_children = 1,
                            .cgroup_path = resmon_cgroup_path(t->cg),
                            .sample_interval_sec = 0.01,
                            .metrics = RESMON_METRIC_COUNTS};
}

/* Stop while the walker's walk is held: stop waits for it (the sampler
 * drains: it sleeps without a deadline until the walk is posted), then the
 * window's last sample is taken after it, and the window's CPU -- the root
 * burnt 0.3 s while the walk was held -- is the leaf's, exactly. */
static void real_leaf_stop_during_a_held_walk_loses_nothing(void **state)
{
    (void)state;
    spin_tree t;
    if (spin_tree_open(&t))
        skip();
    walk_gate g;
    walk_gate_open(&g);
    atomic_store(&g.hold, 1);
    int ticks[2];
    assert_int_equal(pipe2(ticks, O_CLOEXEC | O_NONBLOCK), 0);
    resmon_options o = wide_tree_options(&t);
    o.on_sample = note_sample;
    o.on_sample_user = &ticks[1];
    resmon_monitor *m = gated_monitor_new(&o, &g);
    double kernel_before = spin_tree_kernel_sec(&t), bracket_start = test_now();
    assert_int_equal(resmon_monitor_start(m), 0);
    int held = walk_gate_wait(&g);
    spin_tree_spin(&t);
    /* Samples go on for over a second of the held walk: the live exact
     * peak (once a second, the probe's marks) falls due meanwhile and must
     * wait for the walk. */
    double held_from = test_summary(m).duration_sec, give_up = test_now() + test_scaled(60);
    while (held && test_summary(m).duration_sec < held_from + 1.2 && test_now() < give_up)
        read_within(ticks[0], give_up - test_now());
    int held_long = test_summary(m).duration_sec >= held_from + 1.2;
    stopper st = {.m = m, .rc = 1};
    double stop_called = test_now();
    assert_int_equal(pthread_create(&st.thread, NULL, stop_monitor, &st), 0);
    int drained = held && wait_sampler_waits_for_walk();
    double released = test_now();
    walk_gate_release(&g);
    pthread_join(st.thread, NULL);
    double kernel_after = spin_tree_kernel_sec(&t), bracket_end = test_now();
    resmon_summary s = test_summary(m);
    resmon_sample samples[4096];
    size_t n = test_samples(m, samples, 4096);
    resmon_monitor_free(m);
    walk_gate_close(&g);
    int status = spin_tree_close(&t);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    close(ticks[0]);
    close(ticks[1]);
    assert_true(held);      /* the walker's walk was held */
    assert_true(held_long); /* ... over a live peak's period */
    assert_true(drained);   /* ... and stop waited for it */
    assert_int_equal(st.rc, 0);
    assert_true(n >= 3 && n < 4096);
    assert_true(samples[n - 1].timestamp >= released); /* the stop's own sample, after the walk */
    assert_true(samples[n - 1].timestamp >= stop_called);
    assert_true(s.peak_nprocs > SLOW_WALK_CHILDREN);
    assert_true(s.cpu_time_sec >= SPIN_CPU_SEC - 0.02);
    ASSERT_CPU_MATCHES_KERNEL(s.cpu_time_sec, s.duration_sec, kernel_after - kernel_before,
                              bracket_end - bracket_start, 1);
}

/* A mark while the walker's walk is held: the mark's edge waits for the
 * walk (the phase's exact peak is the probe's), then the phase opens; a
 * second held walk, then stop: both end, the phase is recorded. */
static void real_leaf_mark_during_a_held_walk_opens_its_phase(void **state)
{
    (void)state;
    spin_tree t;
    if (spin_tree_open(&t))
        skip();
    walk_gate g;
    walk_gate_open(&g);
    atomic_store(&g.hold, 2);
    resmon_options o = wide_tree_options(&t);
    resmon_monitor *m = gated_monitor_new(&o, &g);
    assert_int_equal(resmon_monitor_start(m), 0);
    int held = walk_gate_wait(&g);
    int marked = resmon_monitor_mark(m, "during");
    int edge_waited = held && marked == 0 && wait_sampler_waits_for_walk();
    walk_gate_release(&g);
    int held_again = walk_gate_wait(&g); /* the next walk, held too */
    char phase[64] = "";
    int phase_rc = resmon_monitor_phase(m, phase, sizeof phase);
    stopper st = {.m = m, .rc = 1};
    assert_int_equal(pthread_create(&st.thread, NULL, stop_monitor, &st), 0);
    int drained = held_again && wait_sampler_waits_for_walk();
    walk_gate_release(&g);
    pthread_join(st.thread, NULL);
    resmon_phase phases[8];
    ssize_t np = resmon_monitor_get_phases(m, phases, 8, sizeof *phases);
    resmon_summary s = test_summary(m);
    resmon_monitor_free(m);
    walk_gate_close(&g);
    int status = spin_tree_close(&t);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_true(held);
    assert_int_equal(marked, 0);
    assert_true(edge_waited);
    assert_true(held_again);
    assert_true(drained);
    assert_int_equal(st.rc, 0);
    assert_true(phase_rc >= 0);
    assert_string_equal(phase, "during");
    assert_int_equal(np, 2);
    assert_string_equal(phases[1].name, "during");
    assert_true(phases[1].summary.num_samples >= 1);
    assert_true(s.peak_nprocs > SLOW_WALK_CHILDREN);
}

/* The tree ends while the walker's walk is held: released, the walk finds
 * the root a zombie, and the window ends by itself on that reading, with
 * every CPU second the leaf was charged. */
static void real_leaf_tree_ends_during_a_held_walk(void **state)
{
    (void)state;
    spin_tree t;
    if (spin_tree_open(&t))
        skip();
    walk_gate g;
    walk_gate_open(&g);
    atomic_store(&g.hold, 1);
    resmon_options o = wide_tree_options(&t);
    resmon_monitor *m = gated_monitor_new(&o, &g);
    double kernel_before = spin_tree_kernel_sec(&t), bracket_start = test_now();
    assert_int_equal(resmon_monitor_start(m), 0);
    int held = walk_gate_wait(&g);
    spin_tree_spin(&t);
    close(t.arg.spin_write);
    t.arg.spin_write = -1;
    test_child_release(&t.root);
    test_child_wait_exited(&t.root); /* a zombie: its children reaped, the leaf's CPU final */
    double kernel_after = spin_tree_kernel_sec(&t);
    walk_gate_release(&g);
    double deadline = test_now() + test_scaled(30);
    while (resmon_monitor_running(m) && test_now() < deadline)
        test_sleep(0.001); /* waits for the window's end, an event the monitor reports */
    int ended = !resmon_monitor_running(m);
    double bracket_end = test_now();
    resmon_summary s = test_summary(m);
    uint64_t seen = 0; /* the records the walker's walk wrote, seen by this thread once the window closed */
    ssize_t records = resmon_monitor_get_processes(m, NULL, 0, sizeof(resmon_process), &seen);
    resmon_monitor_free(m);
    walk_gate_close(&g);
    int status = spin_tree_close(&t);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_true(held);
    assert_true(ended);
    assert_true(records > 0); /* at most the RESMON_PROCESS_TOP largest twice */
    assert_true(seen > SLOW_WALK_CHILDREN);
    assert_true(s.peak_nprocs > SLOW_WALK_CHILDREN);
    ASSERT_CPU_MATCHES_KERNEL(s.cpu_time_sec, s.duration_sec, kernel_after - kernel_before,
                              bracket_end - bracket_start, 1);
}

/* on_sample for the cycles: marks at every third sample (the mark's edge
 * may wait for the walker), and a stop from the callback is refused. */
typedef struct cycle_state {
    resmon_monitor *m;
    atomic_int samples, refused;
} cycle_state;

static void cycle_sample(const resmon_sample *s, void *user)
{
    (void)s;
    cycle_state *c = user;
    if (atomic_fetch_add(&c->samples, 1) % 3 == 2) {
        resmon_monitor_mark(c->m, "cb");
        if (resmon_monitor_stop(c->m) == -EDEADLK)
            atomic_fetch_add(&c->refused, 1);
    }
}

/* Many windows of one monitor, each stopped while its walker is busy: just
 * after a walk began, or with it held (stop drains), or after a mark, with
 * the callback marking too; the last freed without a stop.  Each window
 * ends, walked the wide tree on the walker, and the walker is reused. */
static void real_leaf_start_stop_cycles_with_walks_in_flight(void **state)
{
    (void)state;
    spin_tree t;
    if (spin_tree_open(&t))
        skip();
    walk_gate g;
    walk_gate_open(&g);
    cycle_state c = {.samples = 0};
    resmon_options o = wide_tree_options(&t);
    o.on_sample = cycle_sample;
    o.on_sample_user = &c;
    resmon_monitor *m = c.m = gated_monitor_new(&o, &g);
#ifdef RESMON_TEST_SANITIZED
    int cycles = 50; /* each window's walks are 5-10x slower */
#else
    int cycles = 200;
#endif
    int failed_at = -1, why = 0;
    for (int i = 0; i < cycles && failed_at < 0; i++) {
        int before = atomic_load(&g.on_walker);
        if (i % 4 == 3 && i != cycles - 1)
            atomic_store(&g.hold, 1);
        int rc = resmon_monitor_start(m);
        if (rc != 0) {
            failed_at = i, why = 1;
            break;
        }
        if (!walk_gate_wait(&g)) {
            failed_at = i, why = 2;
            break;
        }
        if (i == cycles - 1)
            break; /* freed below with the walk in flight, without a stop */
        if (i % 4 == 1)
            resmon_monitor_mark(m, "test");
        if (i % 4 == 2)
            walk_gate_wait(&g);
        if (i % 4 == 3) {
            stopper st = {.m = m, .rc = 1};
            assert_int_equal(pthread_create(&st.thread, NULL, stop_monitor, &st), 0);
            int drained = wait_sampler_waits_for_walk();
            walk_gate_release(&g);
            pthread_join(st.thread, NULL);
            if (!drained || st.rc != 0) {
                failed_at = i, why = 3;
                break;
            }
        } else if (resmon_monitor_stop(m) != 0) {
            failed_at = i, why = 4;
            break;
        }
        resmon_summary s = test_summary(m);
        if (s.num_samples < 2 || !(s.peak_nprocs > SLOW_WALK_CHILDREN) || atomic_load(&g.on_walker) <= before ||
            resmon_monitor_running(m)) {
            failed_at = i, why = 5;
            break;
        }
        char drain[64];
        while (read(g.started[0], drain, sizeof drain) > 0) /* walks begun after the one waited for */
            ;
    }
    resmon_monitor_free(m);
    walk_gate_close(&g);
    int status = spin_tree_close(&t);
    if (failed_at >= 0)
        print_error("cycle %d failed (%d)\n", failed_at, why);
    assert_int_equal(failed_at, -1);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_int_equal(atomic_load(&g.elsewhere), 0); /* every engaged walk between a window's edges on the walker */
    assert_true(atomic_load(&c.refused) > 0);
}

/* A fork() while the monitor has a walker (its window closed): in the
 * child, where the walker does not exist, free returns; a window there
 * opens and closes (the leaf is not the child's making: it never engages,
 * every walk on its sampler).  The parent's walker goes on. */
static int fork_child_uses_the_monitor(resmon_monitor *m, walk_gate *g, int start_again)
{
    alarm((unsigned)test_scaled(120)); /* a join of the parent's walker would hang: SIGALRM ends it */
    if (start_again) {
        int before = atomic_load(&g->on_walker);
        if (resmon_monitor_start(m) != 0)
            return 2;
        if (resmon_monitor_stop(m) != 0)
            return 4;
        if (atomic_load(&g->on_walker) != before || test_summary(m).num_samples < 2)
            return 5;
    }
    resmon_monitor_free(m);
    return 0;
}

static void real_leaf_fork_with_a_walker(void **state)
{
    (void)state;
    spin_tree t;
    if (spin_tree_open(&t))
        skip();
    walk_gate g;
    walk_gate_open(&g);
    resmon_options o = wide_tree_options(&t);
    resmon_monitor *m = gated_monitor_new(&o, &g);
    assert_int_equal(resmon_monitor_start(m), 0);
    int walked = walk_gate_wait(&g);
    assert_int_equal(resmon_monitor_stop(m), 0);
    int status[2];
    for (int start_again = 0; start_again < 2; start_again++) {
        if (start_again && TEST_UNDER_TSAN) { /* TSan ends a child that starts a thread after a threaded fork */
            status[1] = 0;
            continue;
        }
        fflush(NULL);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
            _exit(fork_child_uses_the_monitor(m, &g, start_again));
        while (waitpid(pid, &status[start_again], 0) < 0 && errno == EINTR)
            ;
    }
    char drain[64];
    while (read(g.started[0], drain, sizeof drain) > 0)
        ;
    int before = atomic_load(&g.on_walker);
    assert_int_equal(resmon_monitor_start(m), 0);
    int walked_again = walk_gate_wait(&g);
    assert_int_equal(resmon_monitor_stop(m), 0);
    int after = atomic_load(&g.on_walker);
    resmon_monitor_free(m);
    walk_gate_close(&g);
    int tree_status = spin_tree_close(&t);
    assert_true(WIFEXITED(tree_status) && WEXITSTATUS(tree_status) == 0);
    assert_true(walked);
    for (int i = 0; i < 2; i++) {
        if (!WIFEXITED(status[i]) || WEXITSTATUS(status[i]) != 0)
            print_error("child %d: status %#x\n", i, status[i]);
        assert_true(WIFEXITED(status[i]) && WEXITSTATUS(status[i]) == 0);
    }
    assert_true(walked_again);
    assert_true(after > before);
}

/* Exit codes of the processes of real_leaf_fork_into_the_walkers_pid. */
#define REUSE_SKIP 77   /* this machine cannot: no namespaces, no leaf */
#define REUSE_NOT_PLACED 9 /* the copy did not get the walker's pid */

/* In the copy that has the walker's pid: a window long enough that a walk
 * goes to a walker, then its end.  0, or what failed: 2 start, 6 no walk on
 * a walker came (the copy took the parent's walker, which is not here, for
 * its own), 4 stop. */
static int copy_walks_on_its_own_walker(resmon_monitor *m, walk_gate *g)
{
    alarm((unsigned)test_scaled(120)); /* a window waiting for a walker that is not here: SIGALRM ends it */
    char drain[64];
    while (read(g->started[0], drain, sizeof drain) > 0) /* the parent's walks, told on the shared pipe */
        ;
    if (resmon_monitor_start(m) != 0)
        return 2;
    if (!walk_gate_wait(g))
        return 6;
    if (resmon_monitor_stop(m) != 0)
        return 4;
    resmon_monitor_free(m);
    return 0;
}

/* The copy's part (V, forked by the walker's process W): waits until W is
 * gone, then forks a child that is given W's pid (ns_last_pid: nothing else
 * forks in this namespace) and uses the copy of the monitor there.  Ends the
 * tree and removes its leaf; returns the child's wait status. */
static int copy_in_the_walkers_pid(pid_t walker_process, spin_tree *t, resmon_monitor *m, walk_gate *g)
{
    double give_up = test_now() + test_scaled(60);
    while (kill(walker_process, 0) == 0 && test_now() < give_up) /* the namespace's init reaps it */
        usleep(1000);
    int status = REUSE_NOT_PLACED << 8;
    int fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY | O_CLOEXEC);
    char number[32];
    int len = snprintf(number, sizeof number, "%d", (int)walker_process - 1);
    /* Now and then (1 run in 6 here) the fork is given the next number:
     * the pid is tried again, a few times. */
    for (int tries = 0; fd >= 0 && tries < 20 && status == REUSE_NOT_PLACED << 8; tries++) {
        if (pwrite(fd, number, (size_t)len, 0) != len)
            break;
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0)
            _exit(getpid() == walker_process ? copy_walks_on_its_own_walker(m, g) : REUSE_NOT_PLACED);
        while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
        if (status == REUSE_NOT_PLACED << 8)
            usleep(10000);
    }
    if (fd >= 0)
        close(fd);
    /* The tree ends once no one holds its pipes; its leaf then empties. */
    close(t->arg.spin_write);
    test_child_release(&t->root);
    rm__tree_totals_close(&t->kernel);
    char procs[600];
    snprintf(procs, sizeof procs, "%s/cgroup.procs", resmon_cgroup_path(t->cg));
    for (;;) {
        char buf[64];
        FILE *f = fopen(procs, "r");
        int empty = !f || !fgets(buf, sizeof buf, f);
        if (f)
            fclose(f);
        if (empty || test_now() > give_up)
            break;
        usleep(1000);
    }
    resmon_cgroup_remove(t->cg);
    return status;
}

/* The walker's process (W, pid 2 of the namespace): a wide tree in its leaf,
 * a window with a walk on the walker, then a fork (V) and W's end.  Writes
 * the outcome (an exit code) on report. */
static void walkers_process(int report)
{
    spin_tree t;
    int outcome = REUSE_SKIP;
    if (spin_tree_open(&t) == 0) {
        walk_gate g;
        walk_gate_open(&g);
        resmon_options o = wide_tree_options(&t);
        resmon_monitor *m = gated_monitor_new(&o, &g);
        if (resmon_monitor_start(m) != 0 || !walk_gate_wait(&g) || resmon_monitor_stop(m) != 0) {
            outcome = 60;
        } else {
            pid_t walker_process = getpid();
            fflush(NULL);
            pid_t copy = fork();
            if (copy == 0) {
                int status = copy_in_the_walkers_pid(walker_process, &t, m, &g);
                outcome = WIFEXITED(status) ? WEXITSTATUS(status) : 100 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
                _exit(write(report, &outcome, sizeof outcome) == (ssize_t)sizeof outcome ? 0 : 1);
            }
            _exit(copy > 0 ? 0 : 61); /* the walker's process ends, its walker with it */
        }
    }
    _exit(write(report, &outcome, sizeof outcome) == (ssize_t)sizeof outcome ? 0 : 1);
}

/* Pid 1 of a new pid and mount namespace, with a /proc of its own (the
 * library checks that /proc/self is itself): runs walkers_process, reaps
 * every process of the namespace, and returns the outcome. */
static int reuse_in_a_namespace(void)
{
    if (mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
        mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0)
        return REUSE_SKIP;
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0)
        return 62;
    fflush(NULL);
    pid_t walker = fork();
    if (walker == 0) {
        close(report[0]);
        walkers_process(report[1]);
    }
    close(report[1]);
    while (wait(NULL) > 0 || errno == EINTR) /* W, V, the tree: all of them, as they end */
        ;
    int outcome = 63;
    if (read(report[0], &outcome, sizeof outcome) != (ssize_t)sizeof outcome)
        outcome = 63;
    return outcome;
}

/* A copy of the monitor forked twice, into a process that was given the
 * pid the walker's process had (pids wrap; a new pid namespace hands the
 * same numbers out again): the copy took the walker for its own, asked it
 * for walks no thread would take, and its window never ended (the alarm:
 * 100 + SIGALRM).  The walker is known by its fork generation too
 * (fork_generation.h).  Runs in a pid namespace of its own, where nothing
 * else forks, so the pid comes back for sure; needs root. */
static void real_leaf_fork_into_the_walkers_pid(void **state)
{
    (void)state;
    if (TEST_UNDER_TSAN) { /* TSan ends a child that starts a thread after a threaded fork */
        print_message("skipped: under TSan\n");
        skip();
    }
    fflush(NULL);
    pid_t outer = fork();
    assert_true(outer >= 0);
    if (outer == 0) {
        if (unshare(CLONE_NEWPID | CLONE_NEWNS) != 0)
            _exit(REUSE_SKIP);
        pid_t init = fork();
        if (init == 0)
            _exit(reuse_in_a_namespace());
        int status = 0;
        while (init > 0 && waitpid(init, &status, 0) < 0 && errno == EINTR)
            ;
        _exit(init > 0 && WIFEXITED(status) ? WEXITSTATUS(status) : 64);
    }
    int status;
    while (waitpid(outer, &status, 0) < 0 && errno == EINTR)
        ;
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) == REUSE_SKIP) {
        print_message("skipped: no pid and mount namespace, or no leaf cgroup, here\n");
        skip();
    }
    if (WEXITSTATUS(status) == REUSE_NOT_PLACED) {
        print_message("skipped: no fork of 20 was given the walker's pid (ns_last_pid)\n");
        skip();
    }
    if (WEXITSTATUS(status) != 0)
        print_error("the copy in the walker's pid: %d (%d: not placed; 100 + a signal: killed)\n",
                    WEXITSTATUS(status), REUSE_NOT_PLACED);
    assert_int_equal(WEXITSTATUS(status), 0);
}

/* A wide tree that shrinks back to WALK_EVERY_SAMPLE_MAX processes or fewer
 * stays engaged (its CPU the leaf's) and is walked at every sample again
 * (tree_totals.h: "small again: every sample").  Such a walk is cheap, and
 * it was asked of the walker: a sample asked, the next took it, so only
 * every other sample walked, each holding the figures of the sample before.
 * Now a small engaged tree is walked on the sampler, every sample: after
 * the shrink was walked, the walker gets no more walks. */
static void real_leaf_tree_that_shrank_walks_every_sample(void **state)
{
    (void)state;
    spin_tree t;
    if (spin_tree_open(&t))
        skip();
    walk_gate g;
    walk_gate_open(&g);
    int ticks[2];
    assert_int_equal(pipe2(ticks, O_CLOEXEC | O_NONBLOCK), 0);
    resmon_options o = wide_tree_options(&t);
    o.on_sample = note_sample;
    o.on_sample_user = &ticks[1];
    resmon_monitor *m = gated_monitor_new(&o, &g);
    atomic_store(&g.hold, 1);
    assert_int_equal(resmon_monitor_start(m), 0);
    int walked = walk_gate_wait(&g); /* engaged: the walker's first walk of the wide tree, held */
    /* The tree shrinks while no walk runs: a child reaped in the middle of a
     * walk is counted twice until the next (probe.c), which can pass for a
     * process that left the leaf (tree_totals.h) and end the engagement. */
    spin_tree_shrink(&t);
    int on_walker_at_shrink = atomic_load(&g.on_walker);
    walk_gate_release(&g); /* that walk sees the root alone */
    /* Samples until ten walks after the shrink ran on either thread. */
    double give_up = test_now() + test_scaled(60);
    while (atomic_load(&g.elsewhere) < 10 && atomic_load(&g.on_walker) < on_walker_at_shrink + 10 &&
           test_now() < give_up)
        read_within(ticks[0], give_up - test_now());
    int on_walker = atomic_load(&g.on_walker), elsewhere = atomic_load(&g.elsewhere);
    assert_int_equal(resmon_monitor_stop(m), 0);
    resmon_summary s = test_summary(m);
    resmon_monitor_free(m);
    walk_gate_close(&g);
    close(ticks[0]);
    close(ticks[1]);
    int status = spin_tree_close(&t);
    if (elsewhere < 10)
        print_error("after the shrink: %d walks on the walker, %d on the sampler\n", on_walker - on_walker_at_shrink,
                    elsewhere);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_true(walked);
    assert_true(s.peak_nprocs > SLOW_WALK_CHILDREN);
    assert_true(elsewhere >= 10);                          /* every sample walks on the sampler again */
    assert_int_equal(on_walker, on_walker_at_shrink); /* ... once the walk held over the shrink saw it */
    assert_false(isnan(s.walk_interval_sec));           /* still engaged */
}

/* A GPU profiler's view of the tree: the pid lists the GPU thread asked
 * about (their size), the largest and the latest. */
typedef struct gpu_view {
    atomic_int largest, latest, calls;
} gpu_view;

static int gpu_view_utilization(void *ctx, double *percent)
{
    (void)ctx;
    *percent = 1;
    return 0;
}

static int gpu_view_process_memory(void *ctx, const pid_t *pids, size_t count, double *mb)
{
    (void)pids;
    gpu_view *v = ctx;
    int n = (int)count, seen = atomic_load(&v->largest);
    while (n > seen && !atomic_compare_exchange_weak(&v->largest, &seen, n))
        ;
    atomic_store(&v->latest, n);
    atomic_fetch_add(&v->calls, 1);
    *mb = 1;
    return 0;
}

/* The GPU thread's pid list is the probe's, which the walker changes: it is
 * brought up to date by the sample that takes a walk, never read while one
 * runs.  The tree shrinks from 71 processes to its root while the walker's
 * walk is held; released, the GPU thread is asked about the root alone. */
static void real_leaf_gpu_pids_follow_the_walkers_walks(void **state)
{
    (void)state;
    spin_tree t;
    if (spin_tree_open(&t))
        skip();
    walk_gate g;
    walk_gate_open(&g);
    int ticks[2];
    assert_int_equal(pipe2(ticks, O_CLOEXEC | O_NONBLOCK), 0);
    gpu_view view = {.largest = 0};
    resmon_gpu_profiler p = RESMON_GPU_PROFILER_INIT;
    p.ctx = &view;
    p.get_utilization = gpu_view_utilization;
    p.get_process_memory = gpu_view_process_memory;
    resmon_options o = wide_tree_options(&t);
    o.on_sample = note_sample;
    o.on_sample_user = &ticks[1];
    o.gpu_profiler = &p;
    o.gpu_interval_sec = 0.01;
    resmon_monitor *m = gated_monitor_new(&o, &g);
    atomic_store(&g.hold, 1);
    assert_int_equal(resmon_monitor_start(m), 0);
    int held = walk_gate_wait(&g);
    /* The GPU thread asks at its own pace: held, the walk leaves it the
     * wide tree's list, which it must have been asked about before the
     * shrink (CI's ASan stage: not yet, 0, when read at once). */
    double give_up = test_now() + test_scaled(60);
    while (atomic_load(&view.largest) <= SLOW_WALK_CHILDREN && test_now() < give_up)
        read_within(ticks[0], give_up - test_now());
    int largest_before = atomic_load(&view.largest);
    spin_tree_shrink(&t);
    walk_gate_release(&g);
    give_up = test_now() + test_scaled(60);
    while (atomic_load(&view.latest) != 1 && test_now() < give_up)
        read_within(ticks[0], give_up - test_now());
    int latest = atomic_load(&view.latest);
    assert_int_equal(resmon_monitor_stop(m), 0);
    resmon_monitor_free(m);
    walk_gate_close(&g);
    close(ticks[0]);
    close(ticks[1]);
    int status = spin_tree_close(&t);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_true(held);
    assert_true(largest_before > SLOW_WALK_CHILDREN); /* the wide tree's pids, from the first reading */
    assert_int_equal(latest, 1);                       /* the root alone, once the walk saw it */
}

int main(void)
{
    if (getenv("RESMON_TEST_FILTER")) /* one test by name, e.g. while proving it */
        cmocka_set_test_filter(getenv("RESMON_TEST_FILTER"));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(self_finds_v1_memory_and_v2_lines),
        cmocka_unit_test(self_rejects_garbage),
        cmocka_unit_test(mountinfo_finds_each_layout),
        cmocka_unit_test(paths_join_below_the_mount_root),
        cmocka_unit_test(keyed_files_parse),
        cmocka_unit_test(cpu_totals_parse_and_read),
        cmocka_unit_test(tree_totals_leave_after_two_walks_ahead),
        cmocka_unit_test(tree_totals_take_what_the_leaf_used_unseen),
        cmocka_unit_test(tree_totals_count_again_only_after_the_tree_ran),
        cmocka_unit_test(io_stat_sums_devices),
        cmocka_unit_test(locate_finds_v1_memory_hierarchy),
        cmocka_unit_test(locate_prefers_v2_with_memory_controller),
        cmocka_unit_test(a_processes_cgroup_path_needs_no_mounts),
        cmocka_unit_test(reads_v1_files),
        cmocka_unit_test(reads_v2_files),
        cmocka_unit_test(end_figures_read_each_file_or_nan),
        cmocka_unit_test(open_refuses_a_directory_without_memory_files),
        cmocka_unit_test(monitor_reads_a_fixture_cgroup),
        cmocka_unit_test(monitor_without_its_cgroup_still_runs),
        cmocka_unit_test(json_without_cgroup_keys_reads),
        cmocka_unit_test(walker_lists_a_cgroups_processes),
        cmocka_unit_test(monitor_follows_a_cgroups_members),
        cmocka_unit_test(a_clone_listed_before_its_parent_is_counted_once),
        cmocka_unit_test(members_this_process_reaps_settle_against_no_one),
        cmocka_unit_test(a_member_found_late_counts_its_whole_life),
        cmocka_unit_test(members_options_and_a_cgroup_without_memory_files),
        cmocka_unit_test(failed_leaf_leaves_nothing),
        cmocka_unit_test(leaf_names_round_trip_and_reject_lookalikes),
        cmocka_unit_test(sweep_removes_only_stale_empty_leaves),
        cmocka_unit_test(real_leaf_joins_and_goes),
        cmocka_unit_test(real_leaf_join_moves_every_thread),
        cmocka_unit_test(real_limited_leaf_keeps_what_still_runs),
        cmocka_unit_test(real_leaf_holds_what_is_in_it_or_below),
        cmocka_unit_test(real_leaf_slow_walk_delays_no_sample),
        cmocka_unit_test(real_leaf_stop_during_a_held_walk_loses_nothing),
        cmocka_unit_test(real_leaf_mark_during_a_held_walk_opens_its_phase),
        cmocka_unit_test(real_leaf_tree_ends_during_a_held_walk),
        cmocka_unit_test(real_leaf_start_stop_cycles_with_walks_in_flight),
        cmocka_unit_test(real_leaf_fork_with_a_walker),
        cmocka_unit_test(real_leaf_fork_into_the_walkers_pid),
        cmocka_unit_test(real_leaf_tree_that_shrank_walks_every_sample),
        cmocka_unit_test(real_leaf_gpu_pids_follow_the_walkers_walks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
