/*
 * test_procfs.c -- the /proc parsers and the tree walker, on fixture text and
 * fixture trees: a comm holding spaces, parentheses or a newline (stat is
 * parsed after the last ')'), truncated and non-numeric lines, a process
 * that ended mid-walk, and children lists that are per thread (a child forked
 * by a worker thread is listed under that thread's task directory).
 */
#include "proc_tree.h"
#include "fileio.h"
#include "procfs.h"
#include "test_util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* A stat line with the given comm and otherwise plausible fields: ppid 1,
 * utime 250, stime 50, starttime 12345. */
static int make_stat(char *buf, size_t cap, int pid, const char *comm, int ppid)
{
    return snprintf(buf, cap,
                    "%d (%s) S %d 1 1 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 1 0 12345 "
                    "1000000 200 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n",
                    pid, comm, ppid);
}

static void stat_parses_ordinary_line(void **state)
{
    (void)state;
    char line[512];
    int n = make_stat(line, sizeof line, 42, "bash", 7);
    rm__proc_stat st;
    assert_int_equal(rm__parse_stat(line, (size_t)n, &st), 0);
    assert_int_equal(st.state, 'S');
    assert_string_equal(st.comm, "bash");
    assert_int_equal(st.ppid, 7);
    assert_int_equal(st.utime, 250);
    assert_int_equal(st.stime, 50);
    assert_int_equal(st.starttime, 12345);
}

/* Fields 16-17 carry the CPU of reaped children (the tree's CPU stays
 * continuous through them). */
static void stat_gives_children_cpu(void **state)
{
    (void)state;
    const char *line = "42 (x) S 7 1 1 0 -1 4194560 100 0 0 0 250 50 1234 567 20 0 1 0 12345 "
                       "1000000 200 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n";
    rm__proc_stat st;
    assert_int_equal(rm__parse_stat(line, strlen(line), &st), 0);
    assert_int_equal(st.cutime, 1234);
    assert_int_equal(st.cstime, 567);
    assert_int_equal(st.starttime, 12345);
    /* A non-numeric cutime is refused, not read as no children. */
    const char *bad = "42 (x) S 7 1 1 0 -1 4194560 100 0 0 0 250 50 x 567 20 0 1 0 12345\n";
    assert_int_equal(rm__parse_stat(bad, strlen(bad), &st), -EINVAL);
}

static void stat_survives_hostile_comm(void **state)
{
    (void)state;
    const char *comms[] = {"Plex New Transc", "(sd-pam)", ") ", ")", "a) S 99 (b", "new\nline", "((", ""};
    for (size_t i = 0; i < sizeof comms / sizeof *comms; i++) {
        char line[512];
        int n = make_stat(line, sizeof line, 42, comms[i], 7);
        rm__proc_stat st;
        assert_int_equal(rm__parse_stat(line, (size_t)n, &st), 0);
        assert_string_equal(st.comm, comms[i]); /* the name whole: from the first '(' to the last ')' */
        assert_int_equal(st.ppid, 7);
        assert_int_equal(st.starttime, 12345);
    }
    /* A name longer than the kernel keeps (15 bytes) is cut, never overruns. */
    char line[512];
    int n = make_stat(line, sizeof line, 42, "a-name-of-twenty-bytes", 7);
    rm__proc_stat st;
    assert_int_equal(rm__parse_stat(line, (size_t)n, &st), 0);
    assert_string_equal(st.comm, "a-name-of-twent");
}

static void stat_rejects_garbage(void **state)
{
    (void)state;
    const char *bad[] = {
        "",
        "42",
        "42 (x",
        "42 (x)",
        "42 (x) S",
        "42 (x) S 7 1 1 0 -1 4194560 100 0 0 0 250",           /* truncated before starttime */
        "42 (x) S abc 1 1 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 1 0 12345", /* non-numeric ppid */
        "42 (x) S 7 1 1 0 -1 4194560 100 0 0 0 2x0 50 0 0 20 0 1 0 12345",   /* non-numeric utime */
        "42 (x) S 7 1 1 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 1 0 99999999999999999999999",
        "42 x) S 7 1 1 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 1 0 12345",     /* no '(' */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        rm__proc_stat st;
        if (rm__parse_stat(bad[i], strlen(bad[i]), &st) != -EINVAL) {
            print_error("accepted: \"%s\"\n", bad[i]);
            fail();
        }
    }
}

static void stat_never_reads_past_len(void **state)
{
    (void)state;
    char line[512];
    int n = make_stat(line, sizeof line, 42, "x", 7);
    /* Every prefix is either rejected or parsed; ASan checks no overread. */
    for (int len = 0; len < n; len++) {
        char *copy = malloc((size_t)len + 1);
        memcpy(copy, line, (size_t)len);
        rm__proc_stat st;
        int rc = rm__parse_stat(copy, (size_t)len, &st);
        assert_true(rc == 0 || rc == -EINVAL);
        free(copy);
    }
}

static void statm_gives_resident_pages(void **state)
{
    (void)state;
    uint64_t size = 0, pages = 0;
    const char *text = "2712 1041 867 198 0 334 0\n";
    assert_int_equal(rm__parse_statm(text, strlen(text), &size, &pages), 0);
    assert_int_equal(size, 2712);
    assert_int_equal(pages, 1041);
    assert_int_equal(rm__parse_statm("2712", 4, &size, &pages), -EINVAL);
    assert_int_equal(rm__parse_statm("2712 x", 6, &size, &pages), -EINVAL);
    assert_int_equal(rm__parse_statm("", 0, &size, &pages), -EINVAL);
    /* The largest 64-bit value parses; one more overflows. */
    const char *max = "1 18446744073709551615";
    assert_int_equal(rm__parse_statm(max, strlen(max), &size, &pages), 0);
    assert_true(pages == UINT64_MAX);
    const char *over = "1 18446744073709551616";
    assert_int_equal(rm__parse_statm(over, strlen(over), &size, &pages), -EINVAL);
    /* A zombie's statm is all zeros: valid, zero resident. */
    assert_int_equal(rm__parse_statm("0 0 0 0 0 0 0\n", 14, &size, &pages), 0);
    assert_int_equal(size, 0);
    assert_int_equal(pages, 0);
}

static void status_finds_vmhwm(void **state)
{
    (void)state;
    const char *text = "Name:\tcat\nVmPeak:\t  5000 kB\nVmHWM:\t    1752 kB\nVmRSS:\t  1000 kB\n";
    uint64_t kb = 0;
    assert_int_equal(rm__parse_status_kb(text, strlen(text), "VmHWM", &kb), 0);
    assert_int_equal(kb, 1752);
    assert_int_equal(rm__parse_status_kb(text, strlen(text), "VmSwap", &kb), -ENOENT);
    const char *garbled = "VmHWM:\t   abc kB\n";
    assert_int_equal(rm__parse_status_kb(garbled, strlen(garbled), "VmHWM", &kb), -EINVAL);
    const char *no_unit = "VmHWM:\t   12\n";
    assert_int_equal(rm__parse_status_kb(no_unit, strlen(no_unit), "VmHWM", &kb), -EINVAL);
    /* "VmHWMx" must not match "VmHWM". */
    const char *prefix = "VmHWMx:\t 5 kB\n";
    assert_int_equal(rm__parse_status_kb(prefix, strlen(prefix), "VmHWM", &kb), -ENOENT);
}

static void stat_gives_faults_threads_and_vsize(void **state)
{
    (void)state;
    /* A real line (a python3 with 4 threads): faults (10)-(13), cutime and
     * cstime (16)-(17), num_threads (20), vsize (23). */
    const char *line = "4242 (python3) S 4200 4242 4200 34816 4242 4194304 9138 2711 12 3 120 31 45 17 "
                       "20 0 4 0 987654 1059061760 26880 18446744073709551615 1 1 0 0 0 0 0 16781312 "
                       "134234626 0 0 0 17 1 0 0 0 0 0\n";
    rm__proc_stat st;
    assert_int_equal(rm__parse_stat(line, strlen(line), &st), 0);
    assert_int_equal(st.minflt, 9138);
    assert_int_equal(st.cminflt, 2711);
    assert_int_equal(st.majflt, 12);
    assert_int_equal(st.cmajflt, 3);
    assert_int_equal(st.utime, 120);
    assert_int_equal(st.stime, 31);
    assert_int_equal(st.cutime, 45);
    assert_int_equal(st.cstime, 17);
    assert_int_equal(st.num_threads, 4);
    assert_int_equal(st.starttime, 987654);
    assert_true(st.vsize == 1059061760u);
    /* Cut before vsize: an error, not a zero. */
    const char *cut = "4242 (python3) S 4200 4242 4200 34816 4242 4194304 9138 2711 12 3 120 31 45 17 20 0 4 0 987654";
    assert_int_equal(rm__parse_stat(cut, strlen(cut), &st), -EINVAL);
}

static void io_parses_every_counter(void **state)
{
    (void)state;
    const char *text = "rchar: 323934931\nwchar: 323929600\nsyscr: 632687\nsyscw: 632675\n"
                       "read_bytes: 4096\nwrite_bytes: 323932160\ncancelled_write_bytes: 0\n";
    rm__proc_io io;
    assert_int_equal(rm__parse_io(text, strlen(text), &io), 0);
    assert_true(io.rchar == 323934931u && io.wchar == 323929600u);
    assert_true(io.syscr == 632687u && io.syscw == 632675u);
    assert_true(io.read_bytes == 4096u && io.write_bytes == 323932160u);
    /* A missing line (a kernel without task I/O accounting has no
     * read_bytes) or a garbled number is an error, never a zero. */
    const char *missing = "rchar: 1\nwchar: 2\nsyscr: 3\nsyscw: 4\n";
    assert_int_equal(rm__parse_io(missing, strlen(missing), &io), -EINVAL);
    const char *garbled = "rchar: 1\nwchar: 2x\nsyscr: 3\nsyscw: 4\nread_bytes: 5\nwrite_bytes: 6\n";
    assert_int_equal(rm__parse_io(garbled, strlen(garbled), &io), -EINVAL);
    /* Every prefix is either rejected or parsed; ASan checks no overread. */
    for (size_t len = 0; len < strlen(text); len++) {
        char *copy = malloc(len + 1);
        memcpy(copy, text, len);
        int rc = rm__parse_io(copy, len, &io);
        assert_true(rc == 0 || rc == -EINVAL);
        free(copy);
    }
}

static void status_gives_context_switches(void **state)
{
    (void)state;
    const char *text = "Name:\tcat\nThreads:\t3\nvoluntary_ctxt_switches:\t150\n"
                       "nonvoluntary_ctxt_switches:\t7\n";
    uint64_t value = 0;
    assert_int_equal(rm__parse_status_u64(text, strlen(text), "voluntary_ctxt_switches", &value), 0);
    assert_int_equal(value, 150);
    assert_int_equal(rm__parse_status_u64(text, strlen(text), "nonvoluntary_ctxt_switches", &value), 0);
    assert_int_equal(value, 7);
    assert_int_equal(rm__parse_status_u64(text, strlen(text), "Threads", &value), 0);
    assert_int_equal(value, 3);
    /* A value with a unit is not a plain count. */
    const char *with_unit = "VmRSS:\t 100 kB\n";
    assert_int_equal(rm__parse_status_u64(with_unit, strlen(with_unit), "VmRSS", &value), -EINVAL);
    assert_int_equal(rm__parse_status_u64(text, strlen(text), "ctxt_switches", &value), -ENOENT);
}

static void smaps_rollup_gives_pss_and_swap(void **state)
{
    (void)state;
    const char *text = "55d4a0e3e000-7ffd2c5f7000 ---p 00000000 00:00 0                          [rollup]\n"
                       "Rss:              204800 kB\nPss:               51200 kB\nPss_Anon:          51200 kB\n"
                       "Shared_Clean:          0 kB\nSwap:               1024 kB\nSwapPss:             256 kB\n";
    uint64_t kb = 0;
    assert_int_equal(rm__parse_status_kb(text, strlen(text), "Pss", &kb), 0);
    assert_int_equal(kb, 51200);
    assert_int_equal(rm__parse_status_kb(text, strlen(text), "Swap", &kb), 0);
    assert_int_equal(kb, 1024);
}

static void net_dev_sums_every_interface(void **state)
{
    (void)state;
    const char *text =
        "Inter-|   Receive                                                |  Transmit\n"
        " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n"
        "    lo: 1000      10    0    0    0     0          0         0     1000      10    0    0    0     0       0          0\n"
        "  eth0: 5000000   4000    1    2    0     0          0        30   700000    3000    0    0    0     0       0          0\n";
    rm__net_totals net;
    assert_int_equal(rm__parse_net_dev(text, strlen(text), &net), 0);
    assert_true(net.rx_bytes == 5001000u && net.rx_packets == 4010u);
    assert_true(net.tx_bytes == 701000u && net.tx_packets == 3010u);
    /* A namespace with no interface at all is zero, not an error. */
    const char *headers_only = "Inter-| Receive | Transmit\n face |bytes packets|bytes packets\n";
    assert_int_equal(rm__parse_net_dev(headers_only, strlen(headers_only), &net), 0);
    assert_true(net.rx_bytes == 0 && net.tx_packets == 0);
    const char *cut = "h1\nh2\n  eth0: 5000 40 0 0\n";
    assert_int_equal(rm__parse_net_dev(cut, strlen(cut), &net), -EINVAL);
    assert_int_equal(rm__parse_net_dev("h1 only", 7, &net), -EINVAL);
}

static void started_after_allows_one_tick(void **state)
{
    (void)state;
    /* 100 ticks a second: tick 500 is 5 s after boot. */
    assert_true(rm__started_after(500, 100, 4900000000u));  /* born after 4.9 s */
    assert_true(rm__started_after(500, 100, 5005000000u));  /* within a tick: rounding */
    assert_false(rm__started_after(500, 100, 5200000000u)); /* born before 5.2 s */
    assert_true(rm__started_after(500, 0, 9000000000u));    /* unknown tick rate: assume new */
}

static int collect_pid(pid_t pid, void *user)
{
    pid_t *out = user;
    while (*out)
        out++;
    *out = pid;
    return 0;
}

static void pid_list_parses_children_file(void **state)
{
    (void)state;
    pid_t got[8] = {0};
    const char *text = "12 345 6789 ";
    assert_int_equal(rm__parse_pid_list(text, strlen(text), collect_pid, got), 0);
    assert_int_equal(got[0], 12);
    assert_int_equal(got[1], 345);
    assert_int_equal(got[2], 6789);
    assert_int_equal(got[3], 0);
    pid_t none[2] = {0};
    assert_int_equal(rm__parse_pid_list("", 0, collect_pid, none), 0);
    assert_int_equal(none[0], 0);
    pid_t bad[4] = {0};
    assert_int_equal(rm__parse_pid_list("12 x3", 5, collect_pid, bad), -EINVAL);
    assert_int_equal(rm__parse_pid_list("0", 1, collect_pid, bad), -EINVAL);
}

/* ---- fixture /proc trees ------------------------------------------------- */

static void write_file(int dir_fd, const char *path, const char *text)
{
    int fd = openat(dir_fd, path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
}

static void add_process(int root_fd, int pid, const char *comm, int ppid)
{
    char path[64], line[512];
    snprintf(path, sizeof path, "%d", pid);
    mkdirat(root_fd, path, 0755);
    snprintf(path, sizeof path, "%d/stat", pid);
    make_stat(line, sizeof line, pid, comm, ppid);
    write_file(root_fd, path, line);
}

static int has_pid(const rm__tree_walker *w, pid_t pid)
{
    for (size_t i = 0; i < w->found_len; i++)
        if (w->found[i] == pid)
            return 1;
    return 0;
}

static void scan_finds_descendants_only(void **state)
{
    (void)state;
    char dir[] = "/tmp/resmon-proc-XXXXXX";
    assert_non_null(mkdtemp(dir));
    int root_fd = open(dir, O_RDONLY | O_DIRECTORY);
    assert_true(root_fd >= 0);
    add_process(root_fd, 1, "init", 0);
    add_process(root_fd, 100, "bench", 1);
    add_process(root_fd, 101, "worker one", 100);
    add_process(root_fd, 102, ")(", 101);      /* grandchild with a hostile name */
    add_process(root_fd, 103, "sh", 100);
    add_process(root_fd, 200, "unrelated", 1);
    add_process(root_fd, 201, "child of unrelated", 200);
    mkdirat(root_fd, "300", 0755);             /* vanished: directory without stat */
    mkdirat(root_fd, "301", 0755);
    write_file(root_fd, "301/stat", "301 (garbled");
    mkdirat(root_fd, "self", 0755);            /* non-pid entries are ignored */

    rm__tree_walker w;
    rm__tree_walker_init(&w, root_fd, RM__TREE_SCAN);
    assert_int_equal(rm__tree_walk(&w, 100), 0);
    assert_int_equal(w.found_len, 3);
    assert_true(has_pid(&w, 101) && has_pid(&w, 102) && has_pid(&w, 103));
    assert_false(has_pid(&w, 200) || has_pid(&w, 201) || has_pid(&w, 100));

    /* A reused walker gives the same answer without reading any stat file
     * again: known pids keep their parent links. */
    unsigned long reads = w.stat_reads;
    assert_int_equal(rm__tree_walk(&w, 100), 0);
    assert_int_equal(w.found_len, 3);
    assert_int_equal(w.stat_reads, reads);
    /* A new process costs one stat read; one that ended is forgotten. */
    add_process(root_fd, 150, "new child", 102);
    char ended[64];
    snprintf(ended, sizeof ended, "%s/103", dir);
    assert_int_equal(test_remove_tree(ended), 0);
    assert_int_equal(rm__tree_walk(&w, 100), 0);
    assert_int_equal(w.stat_reads, reads + 1);
    assert_int_equal(w.found_len, 3);
    assert_true(has_pid(&w, 101) && has_pid(&w, 102) && has_pid(&w, 150));
    assert_false(has_pid(&w, 103));
    /* A leaf has no descendants. */
    assert_int_equal(rm__tree_walk(&w, 150), 0);
    assert_int_equal(w.found_len, 0);
    rm__tree_walker_free(&w);
    close(root_fd);
    assert_int_equal(test_remove_tree(dir), 0);
}

static void children_files_include_worker_threads(void **state)
{
    (void)state;
    char dir[] = "/tmp/resmon-proc-XXXXXX";
    assert_non_null(mkdtemp(dir));
    int root_fd = open(dir, O_RDONLY | O_DIRECTORY);
    /* 100 has a main thread (100) and a worker (105); the worker forked 106. */
    const char *dirs[] = {"100", "100/task", "100/task/100", "100/task/105", "101", "101/task",
                          "101/task/101", "106", "106/task", "106/task/106", "107"};
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++)
        mkdirat(root_fd, dirs[i], 0755);
    write_file(root_fd, "100/task/100/children", "101 ");
    write_file(root_fd, "100/task/105/children", "106 ");
    write_file(root_fd, "101/task/101/children", "");
    write_file(root_fd, "106/task/106/children", "107 ");
    /* 107 has no task directory: it ended mid-walk.  It is still listed. */

    rm__tree_walker w;
    rm__tree_walker_init(&w, root_fd, RM__TREE_CHILDREN_FILES);
    assert_int_equal(rm__tree_walk(&w, 100), 0);
    assert_int_equal(w.found_len, 3);
    assert_true(has_pid(&w, 101) && has_pid(&w, 106) && has_pid(&w, 107));
    rm__tree_walker_free(&w);
    close(root_fd);
    assert_int_equal(test_remove_tree(dir), 0);
}

/* A fixture of root 100 whose children are 101..100+count, each with a
 * task directory and an empty children file (105: "205 "). */
static void make_flat_fixture(int root_fd, int count)
{
    char path[64], list[1024] = "";
    for (int pid = 100; pid <= 100 + count; pid++) {
        if (pid > 100) {
            size_t used = strlen(list);
            snprintf(list + used, sizeof list - used, "%d ", pid);
        }
        snprintf(path, sizeof path, "%d", pid);
        mkdirat(root_fd, path, 0755);
        snprintf(path, sizeof path, "%d/task", pid);
        mkdirat(root_fd, path, 0755);
        snprintf(path, sizeof path, "%d/task/%d", pid, pid);
        mkdirat(root_fd, path, 0755);
        snprintf(path, sizeof path, "%d/task/%d/children", pid, pid);
        write_file(root_fd, path, pid == 105 ? "205 " : "");
    }
    write_file(root_fd, "100/task/100/children", list);
}

/* A process past the walker's budget of kept descriptors had no entry, so
 * its children list was read afresh at every walk however long it slept:
 * 7500 of 10 000 sleepers under a hard limit of 20 000, 70 % of a --pid
 * run's CPU (openat, getdents, close).  Now such a process has an entry
 * without descriptors, and its list is reused while its clock stands.
 * Here only the root's files fit the budget: 105's list changes on disk
 * while its clock stands (reused: 205 still found, not 206), then its
 * clock moves (read afresh: 206). */
static void a_sleeper_past_the_budget_has_its_list_reused(void **state)
{
    (void)state;
    char dir[] = "/tmp/resmon-proc-XXXXXX";
    assert_non_null(mkdtemp(dir));
    int root_fd = open(dir, O_RDONLY | O_DIRECTORY);
    make_flat_fixture(root_fd, 10);
    const char *dirs[] = {"205", "205/task", "205/task/205", "206", "206/task", "206/task/206"};
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++)
        mkdirat(root_fd, dirs[i], 0755);
    write_file(root_fd, "205/task/205/children", "");
    write_file(root_fd, "206/task/206/children", "");

    rm__tree_walker w;
    rm__tree_walker_init(&w, root_fd, RM__TREE_CHILDREN_FILES);
    w.kept_budget = 1 + RM__CACHED_THREADS; /* the root's files, no one else's */
    const pid_t all[] = {101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 205};
    for (int walk = 1; walk <= 4; walk++) {
        if (walk == 3)
            write_file(root_fd, "105/task/105/children", "206 "); /* while its clock stands */
        for (size_t i = 0; i < sizeof all / sizeof *all; i++) /* noted for the next walk */
            rm__tree_walker_note_clock(&w, all[i], 1, all[i] == 105 && walk == 4 ? 2000 : 1000);
        assert_int_equal(rm__tree_walk(&w, 100), 0);
        assert_int_equal(w.found_len, 11);
        assert_true(w.kept_fds <= w.kept_budget);
        if (walk == 3) { /* reused: no descriptor kept for it, and no read */
            assert_true(has_pid(&w, 205));
            assert_false(has_pid(&w, 206));
        }
    }
    assert_true(has_pid(&w, 206)); /* its clock moved: read afresh */
    assert_false(has_pid(&w, 205));
    assert_true(w.walked_count >= 11); /* an entry each, past the budget too */
    rm__tree_walker_free(&w);
    close(root_fd);
    assert_int_equal(test_remove_tree(dir), 0);
}

/* With most entries past the budget (no descriptor), a process that finds
 * no descriptor free (EMFILE) has the walker let go half of the kept files:
 * dropping the upper half of the entries instead closed nothing (they held
 * none), and the processes still to read went unread.  In a child whose
 * limit on open files leaves none free after the first walk, and a budget
 * raised as if processes that held files had ended; exit 0: every process
 * was read (a new one too) and descriptors were let go. */
static int walk_out_of_descriptors(int root_fd, int room_in_budget)
{
    rm__tree_walker w;
    rm__tree_walker_init(&w, root_fd, RM__TREE_CHILDREN_FILES);
    w.kept_budget = 5 * (1 + RM__CACHED_THREADS); /* the first 19 keep theirs (2 each; 9 asked) */
    if (rm__tree_walk(&w, 100) != 0 || w.found_len != 41)
        return 2;
    size_t kept_before = w.kept_fds;
    if (kept_before < 6)
        return 3;
    char list[1024];
    ssize_t n = rm__read_file_at(root_fd, "100/task/100/children", list, sizeof list - 8);
    if (n <= 0)
        return 4;
    strcat(list, "150 "); /* a new child: its directory made before the limit */
    int fd = openat(root_fd, "100/task/100/children", O_WRONLY | O_TRUNC);
    if (fd < 0 || write(fd, list, strlen(list)) != (ssize_t)strlen(list) || close(fd) != 0)
        return 5;
    if (room_in_budget)
        w.kept_budget = 1 << 20; /* as if processes that held files ended: they take their own again */
    int highest = test_highest_descriptor(-1);
    for (;;) { /* every lower number taken too: none free under the limit */
        int filler = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (filler < 0)
            return 11;
        if (filler > highest) {
            close(filler);
            break;
        }
    }
    struct rlimit limit = {(rlim_t)highest + 1, (rlim_t)highest + 1};
    if (setrlimit(RLIMIT_NOFILE, &limit) != 0)
        return 6;
    if (rm__tree_walk(&w, 100) != 0)
        return 7;
    int found = 0;
    for (size_t i = 0; i < w.found_len; i++)
        found |= w.found[i] == 150;
    int rc = !found ? 8 : w.unwalked ? 9 : w.kept_fds >= kept_before ? 10 : w.found_len != 42 ? 12 : 0;
    rm__tree_walker_free(&w);
    return rc;
}

static void walk_out_of_descriptors_in_child(int room_in_budget)
{
    char dir[] = "/tmp/resmon-proc-XXXXXX";
    assert_non_null(mkdtemp(dir));
    int root_fd = open(dir, O_RDONLY | O_DIRECTORY);
    make_flat_fixture(root_fd, 40);
    const char *dirs[] = {"205", "205/task", "205/task/205", "150", "150/task", "150/task/150"};
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++)
        mkdirat(root_fd, dirs[i], 0755);
    write_file(root_fd, "205/task/205/children", "");
    write_file(root_fd, "150/task/150/children", "");
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0)
        _exit(walk_out_of_descriptors(root_fd, room_in_budget));
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    close(root_fd);
    assert_int_equal(test_remove_tree(dir), 0);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

/* The budget spent: the failing open is a read by pid's. */
static void a_walker_out_of_descriptors_lets_kept_files_go(void **state)
{
    (void)state;
    walk_out_of_descriptors_in_child(0);
}

/* Room in the budget again: the failing open is an entry's taking its own. */
static void a_walker_out_of_descriptors_taking_its_own_lets_kept_files_go(void **state)
{
    (void)state;
    walk_out_of_descriptors_in_child(1);
}

/* The root's threads in the fixture: 100 and 101..100+count-1, each with an
 * empty children list (a task directory's link count is 2 + its threads, as
 * in /proc, so the walker's one-thread shortcut sees them). */
static void set_threads(int root_fd, int count)
{
    char path[64];
    for (int t = 101; t < 170; t++) {
        snprintf(path, sizeof path, "100/task/%d/children", t);
        unlinkat(root_fd, path, 0);
        snprintf(path, sizeof path, "100/task/%d", t);
        unlinkat(root_fd, path, AT_REMOVEDIR);
    }
    for (int t = 101; t < 100 + count; t++) {
        snprintf(path, sizeof path, "100/task/%d", t);
        mkdirat(root_fd, path, 0755);
        snprintf(path, sizeof path, "100/task/%d/children", t);
        write_file(root_fd, path, "");
    }
}

/* A process of many threads has its children found from a /proc listing's
 * parent links, which keep the parents of pids listed before.  Links kept
 * from a listing walks ago (the root had one thread meanwhile, so no listing
 * was made) must not be reused: pid 500 ended and was reused by a child of
 * the root in between, and its old parent hid it at every later walk. */
static void parent_links_of_an_earlier_walk_are_not_kept(void **state)
{
    (void)state;
    char dir[] = "/tmp/resmon-proc-XXXXXX";
    assert_non_null(mkdtemp(dir));
    int root_fd = open(dir, O_RDONLY | O_DIRECTORY);
    assert_true(root_fd >= 0);
    add_process(root_fd, 1, "init", 0);
    add_process(root_fd, 100, "root", 1);
    mkdirat(root_fd, "100/task", 0755);
    mkdirat(root_fd, "100/task/100", 0755);
    write_file(root_fd, "100/task/100/children", "");
    add_process(root_fd, 500, "unrelated", 1);
    set_threads(root_fd, 70);
    rm__tree_walker w;
    rm__tree_walker_init(&w, root_fd, RM__TREE_CHILDREN_FILES);
    assert_int_equal(rm__tree_walk(&w, 100), 0); /* links listed: 500's parent is 1 */
    assert_false(has_pid(&w, 500));
    set_threads(root_fd, 1);
    assert_int_equal(rm__tree_walk(&w, 100), 0);
    assert_int_equal(rm__tree_walk(&w, 100), 0);
    add_process(root_fd, 500, "reused", 100); /* 500 ended; its pid went to a child of the root */
    write_file(root_fd, "100/task/100/children", "500 ");
    assert_int_equal(rm__tree_walk(&w, 100), 0);
    assert_true(has_pid(&w, 500));
    set_threads(root_fd, 70);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(rm__tree_walk(&w, 100), 0);
        assert_true(has_pid(&w, 500));
    }
    rm__tree_walker_free(&w);
    close(root_fd);
    assert_int_equal(test_remove_tree(dir), 0);
}

/* A pid reaped and reused within one interval by a process the walk lists
 * again (a fork of the tree's): the walker's descriptors kept open on the
 * old one read nothing, and the new one's children were never found while
 * it lived.  Here 200 ends (its directory removed) and 200 comes back, a
 * new process with child 400. */
static void find_reused_pids_children(size_t kept_budget)
{
    char dir[] = "/tmp/resmon-proc-XXXXXX";
    assert_non_null(mkdtemp(dir));
    int root_fd = open(dir, O_RDONLY | O_DIRECTORY);
    assert_true(root_fd >= 0);
    const char *dirs[] = {"100", "100/task", "100/task/100", "200", "200/task", "200/task/200"};
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++)
        mkdirat(root_fd, dirs[i], 0755);
    write_file(root_fd, "100/task/100/children", "200 ");
    write_file(root_fd, "200/task/200/children", "300 ");
    rm__tree_walker w;
    rm__tree_walker_init(&w, root_fd, RM__TREE_CHILDREN_FILES);
    if (kept_budget)
        w.kept_budget = kept_budget;
    assert_int_equal(rm__tree_walk(&w, 100), 0);
    assert_true(has_pid(&w, 200) && has_pid(&w, 300));
    rm__tree_walker_note_clock(&w, 200, 1, 1000); /* a sleeper: its list kept for reuse ... */
    assert_int_equal(rm__tree_walk(&w, 100), 0);
    assert_true(has_pid(&w, 300));

    char old[600];
    snprintf(old, sizeof old, "%s/200", dir);
    assert_int_equal(test_remove_tree(old), 0);
    for (size_t i = 3; i < sizeof dirs / sizeof *dirs; i++)
        mkdirat(root_fd, dirs[i], 0755);
    write_file(root_fd, "200/task/200/children", "400 ");
    for (int walk = 0; walk < 2; walk++) {
        /* ... the new 200's clock is its own (50), or unread: not reused */
        rm__tree_walker_note_clock(&w, 200, walk == 0, 50);
        assert_int_equal(rm__tree_walk(&w, 100), 0);
        assert_int_equal(w.found_len, 2);
        assert_true(has_pid(&w, 200) && has_pid(&w, 400));
    }
    rm__tree_walker_free(&w);
    close(root_fd);
    assert_int_equal(test_remove_tree(dir), 0);
}

static void a_reused_pid_has_its_new_children_found(void **state)
{
    (void)state;
    find_reused_pids_children(0);
}

/* The same past the budget of kept descriptors: 200's entry holds none
 * (its lists read by pid each time it is not reused). */
static void a_reused_pid_past_the_budget_has_its_new_children_found(void **state)
{
    (void)state;
    find_reused_pids_children(1 + RM__CACHED_THREADS);
}

/* A children list longer than any single read (1200 pids, ~6 KiB) is read to
 * its end: every child is found. */
static void children_file_longer_than_a_page_is_read_whole(void **state)
{
    (void)state;
    char dir[] = "/tmp/resmon-proc-XXXXXX";
    assert_non_null(mkdtemp(dir));
    int root_fd = open(dir, O_RDONLY | O_DIRECTORY);
    const char *dirs[] = {"100", "100/task", "100/task/100"};
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++)
        mkdirat(root_fd, dirs[i], 0755);
    enum { CHILDREN = 1200, FIRST_CHILD = 10000 };
    size_t cap = CHILDREN * 8 + 1, used = 0;
    char *list = malloc(cap);
    assert_non_null(list);
    for (int i = 0; i < CHILDREN; i++)
        used += (size_t)snprintf(list + used, cap - used, "%d ", FIRST_CHILD + i);
    assert_true(used > 4096);
    write_file(root_fd, "100/task/100/children", list);
    free(list);

    rm__tree_walker w;
    rm__tree_walker_init(&w, root_fd, RM__TREE_CHILDREN_FILES);
    for (int walk = 0; walk < 2; walk++) { /* the second re-reads the kept-open file */
        assert_int_equal(rm__tree_walk(&w, 100), 0);
        assert_int_equal(w.found_len, CHILDREN);
        assert_true(has_pid(&w, FIRST_CHILD) && has_pid(&w, FIRST_CHILD + CHILDREN - 1));
    }
    rm__tree_walker_free(&w);
    close(root_fd);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

static void reads_real_proc_files(void **state)
{
    (void)state;
    int self = open("/proc/self", O_RDONLY | O_DIRECTORY);
    assert_true(self >= 0);
    char buf[1024];
    ssize_t n = rm__read_file_at(self, "stat", buf, sizeof buf);
    assert_true(n > 0);
    rm__proc_stat st;
    assert_int_equal(rm__parse_stat(buf, (size_t)n, &st), 0);
    assert_int_equal(st.ppid, getppid());
    uint64_t peak = 0;
    assert_int_equal(rm__read_peak_rss(self, &peak), 0);
    assert_true(peak > 0);
    /* The same from a status kept open, re-read twice (the root's peak refresh). */
    int status = openat(self, "status", O_RDONLY | O_CLOEXEC);
    assert_true(status >= 0);
    for (int i = 0; i < 2; i++) {
        uint64_t again = 0;
        assert_int_equal(rm__pread_peak_rss(status, &again), 0);
        assert_true(again >= peak);
    }
    close(status);
    assert_int_equal(rm__pread_peak_rss(-1, &peak), -EBADF);
    assert_int_equal(rm__read_file_at(self, "no-such-file", buf, sizeof buf), -ENOENT);
    close(self);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stat_parses_ordinary_line),
        cmocka_unit_test(stat_gives_children_cpu),
        cmocka_unit_test(stat_survives_hostile_comm),
        cmocka_unit_test(stat_rejects_garbage),
        cmocka_unit_test(stat_never_reads_past_len),
        cmocka_unit_test(statm_gives_resident_pages),
        cmocka_unit_test(status_finds_vmhwm),
        cmocka_unit_test(stat_gives_faults_threads_and_vsize),
        cmocka_unit_test(io_parses_every_counter),
        cmocka_unit_test(status_gives_context_switches),
        cmocka_unit_test(smaps_rollup_gives_pss_and_swap),
        cmocka_unit_test(net_dev_sums_every_interface),
        cmocka_unit_test(started_after_allows_one_tick),
        cmocka_unit_test(pid_list_parses_children_file),
        cmocka_unit_test(scan_finds_descendants_only),
        cmocka_unit_test(children_files_include_worker_threads),
        cmocka_unit_test(children_file_longer_than_a_page_is_read_whole),
        cmocka_unit_test(parent_links_of_an_earlier_walk_are_not_kept),
        cmocka_unit_test(a_reused_pid_has_its_new_children_found),
        cmocka_unit_test(a_reused_pid_past_the_budget_has_its_new_children_found),
        cmocka_unit_test(a_sleeper_past_the_budget_has_its_list_reused),
        cmocka_unit_test(a_walker_out_of_descriptors_lets_kept_files_go),
        cmocka_unit_test(a_walker_out_of_descriptors_taking_its_own_lets_kept_files_go),
        cmocka_unit_test(reads_real_proc_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
