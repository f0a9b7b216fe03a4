/*
 * test_process_records.c -- the run's membership rules, thread folding and
 * bounds of tools/resmon/process_records.c, fed synthetic taskstats records.
 *
 * The run's root is this test's pid; synthetic pids lie above pid_max (no
 * /proc entry), so a record whose parent is one of them is "parent gone"
 * (rule 4) unless the parent is already known.
 */
#include "test_util.h"

#include "../tools/resmon/process_records.h"

#include <linux/acct.h>

#define GONE_BASE 5000000 /* above any pid_max: never in /proc */

static struct taskstats record(pid_t pid, pid_t tgid, pid_t ppid, const char *comm, int last, double cpu_sec,
                               unsigned long long rss_kib)
{
    struct taskstats ts;
    memset(&ts, 0, sizeof ts);
    ts.version = TASKSTATS_VERSION;
    ts.ac_pid = (unsigned)pid;
    ts.ac_tgid = (unsigned)tgid;
    ts.ac_ppid = (unsigned)ppid;
    snprintf(ts.ac_comm, sizeof ts.ac_comm, "%s", comm);
    ts.ac_flag = last ? AGROUP : 0;
    ts.cpu_run_virtual_total = (unsigned long long)(cpu_sec * 1e9);
    ts.ac_utime = (unsigned long long)(cpu_sec * 1e6);
    ts.hiwater_rss = rss_kib;
    return ts;
}

static process_records *started(void)
{
    process_records *p = process_records_new(getpid());
    assert_non_null(p);
    process_records_start(p, 0, 0);
    return p;
}

static void a_child_of_the_root_belongs(void **state)
{
    (void)state;
    process_records *p = started();
    struct taskstats ts = record(GONE_BASE + 1, GONE_BASE + 1, getpid(), "cmd", 1, 0.5, 1024);
    process_records_taskstats(&ts, p);
    process_records_finish(p, 0);
    process_totals t;
    process_records_totals(p, &t);
    assert_int_equal(t.count, 1);
    ASSERT_BETWEEN(t.cpu_sec, 0.4999, 0.5001);
    process_records_free(p);
}

static void a_child_read_before_its_gone_parent_waits_for_it(void **state)
{
    (void)state;
    process_records *p = started();
    /* grandchild first (its parent already reaped: rule 4), then the parent,
     * a child of the root, places it */
    struct taskstats grandchild = record(GONE_BASE + 3, GONE_BASE + 3, GONE_BASE + 2, "cc1", 1, 1.0, 400 * 1024);
    struct taskstats parent = record(GONE_BASE + 2, GONE_BASE + 2, getpid(), "gcc", 1, 0.1, 2048);
    process_records_taskstats(&grandchild, p);
    process_records_taskstats(&parent, p);
    process_records_finish(p, 0);
    process_totals t;
    process_records_totals(p, &t);
    assert_int_equal(t.count, 2);
    assert_int_equal(t.unattributed, 0);
    const process_record *top;
    assert_int_equal(process_records_top_rss(p, &top), 2);
    assert_int_equal(top[0].pid, GONE_BASE + 3);
    assert_string_equal(top[0].comm, "cc1");
    process_records_free(p);
}

static void a_record_of_another_tree_is_left_out_and_counted_only_with_overruns(void **state)
{
    (void)state;
    for (int overruns = 0; overruns <= 1; overruns++) {
        process_records *p = started();
        struct taskstats foreign = record(GONE_BASE + 5, GONE_BASE + 5, GONE_BASE + 4, "as", 1, 1.0, 1024);
        struct taskstats foreign_alive_parent = record(GONE_BASE + 6, GONE_BASE + 6, 1, "cron", 1, 1.0, 1024);
        process_records_taskstats(&foreign, p);
        process_records_taskstats(&foreign_alive_parent, p);
        /* ppid 0: the kernel's "no parent" (it ended first, or lives in
         * another pid namespace) -- not the empty slot of the pid set */
        struct taskstats no_parent = record(GONE_BASE + 7, GONE_BASE + 7, 0, "bash", 1, 1.0, 1024);
        process_records_taskstats(&no_parent, p);
        process_records_finish(p, (unsigned long long)overruns);
        process_totals t;
        process_records_totals(p, &t);
        assert_int_equal(t.count, 0);
        assert_int_equal(t.unattributed, overruns); /* its parent's record may have been lost */
        process_records_free(p);
    }
}

static void threads_fold_into_their_process_at_its_last_record(void **state)
{
    (void)state;
    process_records *p = started();
    pid_t tgid = GONE_BASE + 10;
    struct taskstats t1 = record(tgid + 1, tgid, getpid(), "worker", 0, 1.0, 100 * 1024);
    struct taskstats t2 = record(tgid + 2, tgid, getpid(), "worker", 0, 2.0, 300 * 1024);
    struct taskstats leader = record(tgid, tgid, getpid(), "worker", 1, 0.5, 200 * 1024);
    process_records_taskstats(&t1, p);
    process_records_taskstats(&t2, p);
    process_records_taskstats(&leader, p);
    process_records_finish(p, 0);
    process_totals t;
    process_records_totals(p, &t);
    assert_int_equal(t.count, 1);
    const process_record *top;
    assert_int_equal(process_records_top_cpu(p, &top), 1);
    assert_int_equal(top[0].threads, 3);
    ASSERT_BETWEEN(top[0].cpu_user_sec + top[0].cpu_sys_sec, 3.4999, 3.5001);
    ASSERT_BETWEEN(top[0].peak_rss_mb, 299.99, 300.01); /* the shared memory's mark, not a sum */
    process_records_free(p);
}

static void the_top_and_the_names_stay_bounded(void **state)
{
    (void)state;
    process_records *p = started();
    for (int i = 0; i < PROCESS_MAX_NAMES + 100; i++) {
        char comm[16];
        snprintf(comm, sizeof comm, "n%d", i);
        struct taskstats ts = record(GONE_BASE + 100 + i, GONE_BASE + 100 + i, getpid(), comm, 1, 0.001 * i,
                                     (unsigned long long)i);
        process_records_taskstats(&ts, p);
    }
    process_records_finish(p, 0);
    const process_record *top;
    assert_int_equal(process_records_top_rss(p, &top), PROCESS_TOP_N);
    assert_int_equal(top[0].pid, GONE_BASE + 100 + PROCESS_MAX_NAMES + 99);
    const process_aggregate *names;
    size_t count = process_records_by_name(p, &names);
    assert_int_equal(count, PROCESS_MAX_NAMES + 1);
    int other = 0;
    for (size_t i = 0; i < count; i++)
        if (strcmp(names[i].comm, "(other names)") == 0)
            other = (int)names[i].count;
    assert_int_equal(other, 100);
    /* Ranked with the rest: these hundred took the most CPU (review: the
     * driver that ends last fell there, and the table hid it). */
    assert_string_equal(names[0].comm, "(other names)");
    process_records_free(p);
}

static void wait4_records_are_kept_only_without_taskstats(void **state)
{
    (void)state;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    ru.ru_utime.tv_sec = 2;
    ru.ru_maxrss = 4096;
    for (int error = 0; error >= -EPERM; error -= EPERM) {
        process_records *p = process_records_new(getpid());
        assert_non_null(p);
        process_records_start(p, 0, error);
        process_records_wait4(p, GONE_BASE + 50, "sh", 3 << 8, &ru, 1.0);
        process_records_finish(p, 0);
        process_totals t;
        process_records_totals(p, &t);
        assert_int_equal(t.count, error ? 1 : 0);
        assert_string_equal(t.source, error ? "wait4" : "taskstats");
        if (error) {
            const process_record *top;
            process_records_top_cpu(p, &top);
            assert_int_equal(top[0].exit_code, 3);
            assert_string_equal(top[0].source, "wait4");
        }
        process_records_free(p);
    }
}

static resmon_process sampled_record(pid_t pid, pid_t ppid, const char *comm, double cpu_sec, double peak_mb)
{
    resmon_process r;
    memset(&r, 0, sizeof r);
    r.struct_size = sizeof r;
    r.pid = pid;
    r.ppid = ppid;
    snprintf(r.comm, sizeof r.comm, "%s", comm);
    r.start_sec = 0.25;
    r.end_sec = 0.75;
    r.cpu_sec = cpu_sec;
    r.peak_rss_mb = peak_mb;
    r.end = RESMON_PROCESS_EXITED;
    return r;
}

/* Without taskstats the library's records join the wait4 ones: a process
 * resmon reaped keeps its exact record only, the CPU of the others (already
 * in their reaper's wait4 figure) is summed apart, and a name's sampled and
 * wait4 records are two rows.  With taskstats they are ignored. */
static void sampled_records_join_wait4_s_without_double_counting(void **state)
{
    (void)state;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    ru.ru_utime.tv_sec = 3;
    ru.ru_maxrss = 200 * 1024;
    const resmon_process sampled[] = {
        sampled_record(GONE_BASE + 70, getpid(), "sh", 1.0, 2.0),           /* the command: wait4 has it */
        sampled_record(GONE_BASE + 71, GONE_BASE + 70, "cc1", 2.0, 150.0),
        sampled_record(GONE_BASE + 72, GONE_BASE + 70, "sh", 0.5, 1.0),
    };
    for (int error = 0; error >= -EPERM; error -= EPERM) {
        process_records *p = process_records_new(getpid());
        assert_non_null(p);
        process_records_start(p, 10.0, error);
        process_records_sampled(p, sampled, 3, 9, 10.5); /* the window's first reading 0.5 s after the start */
        process_records_wait4(p, GONE_BASE + 70, "sh", 0, &ru, 12.0); /* reaped after the window closed */
        process_records_finish(p, 0);
        process_totals t;
        process_records_totals(p, &t);
        assert_int_equal(t.count, error ? 1 : 0);
        ASSERT_BETWEEN(t.cpu_sec, error ? 2.9999 : 0, error ? 3.0001 : 0.0001);
        assert_int_equal(t.sampled, error ? 1 : 0);
        if (!error) {
            assert_int_equal(t.sampled_count, 0);
            process_records_free(p);
            continue;
        }
        assert_int_equal(t.sampled_seen, 9);
        assert_int_equal(t.sampled_count, 2);
        ASSERT_BETWEEN(t.sampled_cpu_sec, 2.4999, 2.5001);
        const process_record *top;
        assert_int_equal(process_records_top_rss(p, &top), 3);
        assert_string_equal(top[0].source, "wait4");
        assert_int_equal(top[0].pid, GONE_BASE + 70);
        assert_string_equal(top[1].source, "sampled");
        assert_string_equal(top[1].comm, "cc1");
        ASSERT_BETWEEN(top[1].start_sec, 0.7499, 0.7501);
        ASSERT_BETWEEN(top[1].end_sec, 1.2499, 1.2501);
        assert_true(isnan(top[1].cpu_user_sec) && isnan(top[1].minor_faults));
        ASSERT_BETWEEN(top[1].cpu_sec, 1.9999, 2.0001);
        assert_int_equal(top[1].exit_code, -1);
        const process_aggregate *names;
        size_t n = process_records_by_name(p, &names);
        assert_int_equal(n, 3);
        int sh_rows = 0;
        for (size_t i = 0; i < n; i++)
            if (strcmp(names[i].comm, "sh") == 0) {
                sh_rows++;
                assert_int_equal(names[i].count, 1);
            }
        assert_int_equal(sh_rows, 2);
        process_records_free(p);
    }
}

/* ac_exitcode is the task's exit_code, a wait status: SIGKILL is signal 9,
 * never "exit 137", and an exit code of 137 is not a signal. */
static void a_signal_is_told_from_an_exit_code(void **state)
{
    (void)state;
    process_records *p = started();
    struct taskstats killed = record(GONE_BASE + 60, GONE_BASE + 60, getpid(), "killed", 1, 0.2, 1024);
    killed.ac_exitcode = SIGKILL;
    struct taskstats exited = record(GONE_BASE + 61, GONE_BASE + 61, getpid(), "exited", 1, 0.1, 1024);
    exited.ac_exitcode = 137 << 8;
    process_records_taskstats(&killed, p);
    process_records_taskstats(&exited, p);
    process_records_finish(p, 0);
    const process_record *top;
    assert_int_equal(process_records_top_cpu(p, &top), 2);
    assert_string_equal(top[0].comm, "killed");
    assert_int_equal(top[0].exit_code, -1);
    assert_int_equal(top[0].signal, SIGKILL);
    assert_int_equal(top[1].exit_code, 137);
    assert_int_equal(top[1].signal, 0);
    process_totals t;
    process_records_totals(p, &t);
    assert_int_equal(t.signaled, 1);
    assert_int_equal(t.exited_nonzero, 1);
    process_records_free(p);
}

static void count_record(const process_record *r, void *user)
{
    pid_t *pids = user;
    pids[++pids[0]] = r->pid;
}

/* --processes all: every record comes back in the order they ended, from
 * the temporary file; with no temporary file, each is counted missing. */
static void keep_all_gives_back_every_record_or_counts_the_missing(void **state)
{
    (void)state;
    enum { N = 2000 }; /* more than any in-memory bound of the records */
    static pid_t pids[N + 1];
    for (int unwritable = 0; unwritable <= 1; unwritable++) {
        char *tmpdir = getenv("TMPDIR") ? strdup(getenv("TMPDIR")) : NULL;
        if (unwritable)
            setenv("TMPDIR", "/nonexistent-resmon-test", 1);
        process_records *p = process_records_new(getpid());
        assert_non_null(p);
        assert_int_equal(process_records_keep_all(p), unwritable ? -ENOENT : 0);
        if (tmpdir)
            setenv("TMPDIR", tmpdir, 1);
        else
            unsetenv("TMPDIR");
        free(tmpdir);
        process_records_start(p, 0, 0);
        for (int i = 0; i < N; i++) {
            struct taskstats ts = record(GONE_BASE + 100 + i, GONE_BASE + 100 + i, getpid(), "cc1", 1, 0.01, 1024);
            process_records_taskstats(&ts, p);
        }
        process_records_finish(p, 0);
        pids[0] = 0;
        long missing = process_records_each(p, count_record, pids);
        process_totals t;
        process_records_totals(p, &t);
        assert_int_equal(t.keep_all, 1);
        if (unwritable) {
            assert_int_equal(missing, N);
            assert_int_equal(pids[0], 0);
            assert_int_equal(t.keep_all_error, -ENOENT);
        } else {
            assert_int_equal(missing, 0);
            assert_int_equal(pids[0], N);
            for (int i = 0; i < N; i++)
                assert_int_equal(pids[1 + i], GONE_BASE + 100 + i);
        }
        process_records_free(p);
    }
}

/* Review (rev34 F3): past 256 processes folding threads at once, each
 * thread's record was kept as a process (345 for 301), silently.  Within
 * PROCESS_OPEN_MAX every one folds; past it the unfolded are counted. */
static void threads_fold_for_many_processes_at_once_and_past_the_bound_are_counted(void **state)
{
    (void)state;
    for (int extra = 0; extra <= 10; extra += 10) {
        process_records *p = started();
        int processes = (extra ? PROCESS_OPEN_MAX : 300) + extra;
        for (int i = 0; i < processes; i++) { /* each ends a thread first */
            pid_t tgid = GONE_BASE + 1000 + 2 * i;
            struct taskstats thread = record(tgid + 1, tgid, getpid(), "worker", 0, 0.001, 1024);
            process_records_taskstats(&thread, p);
        }
        for (int i = 0; i < processes; i++) {
            pid_t tgid = GONE_BASE + 1000 + 2 * i;
            struct taskstats leader = record(tgid, tgid, getpid(), "worker", 1, 0.001, 1024);
            process_records_taskstats(&leader, p);
        }
        process_records_finish(p, 0);
        process_totals t;
        process_records_totals(p, &t);
        assert_int_equal(t.unfolded, extra);
        assert_int_equal(t.count, processes + extra); /* an unfolded thread reads as one more process: said */
        assert_int_equal(t.thread_records, 2 * processes);
        process_records_free(p);
    }
}

/* A pending record names its gone parent by pid: a process given that pid
 * later, which started after the child, is not its parent (faults.md #9). */
static void a_pending_record_is_not_placed_by_a_later_holder_of_its_parents_pid(void **state)
{
    (void)state;
    for (int reused = 0; reused <= 1; reused++) {
        process_records *p = started();
        struct taskstats child = record(GONE_BASE + 21, GONE_BASE + 21, GONE_BASE + 20, "cc1", 1, 1.0, 1024);
        child.ac_etime = 1000ull * 1000000; /* started 1000 s before it was read */
        process_records_taskstats(&child, p);
        struct taskstats parent = record(GONE_BASE + 20, GONE_BASE + 20, getpid(), "gcc", 1, 0.1, 1024);
        double now = (double)time(NULL);
        parent.ac_btime64 = (unsigned long long)(reused ? now - 10 : now - 2000);
        process_records_taskstats(&parent, p);
        process_records_finish(p, 0);
        process_totals t;
        process_records_totals(p, &t);
        assert_int_equal(t.count, reused ? 1 : 2);
        process_records_free(p);
    }
}

/* Stop 54: a member's pid came round again within the ended ring's span
 * (pid_max 32768, another build beside the run), and a child of its later
 * holder -- gone from /proc by the time the child's record was read -- was
 * taken into the run: 303 records of 301.  A child whose begin time is
 * after the member's end is the later holder's; one that began before it
 * (two CPUs' exits crossing) is the member's.  Stop 55 (CI43: 178 of 182):
 * the begin time is the wall clock's whole seconds at the exit minus the
 * elapsed time's, up to a second after the real start, so a child begun
 * "at the next second" (case 2) is still the member's. */
static void a_child_that_began_after_a_members_end_is_a_later_holders(void **state)
{
    (void)state;
    for (int kind = 0; kind <= 2; kind++) { /* 0: began before; 1: long after (a later holder's); 2: "the next second" */
        process_records *p = started();
        struct timespec before;
        clock_gettime(CLOCK_REALTIME, &before);
        struct taskstats member = record(GONE_BASE + 30, GONE_BASE + 30, getpid(), "true", 1, 0.001, 1024);
        process_records_taskstats(&member, p); /* read now: it had ended by now */
        struct taskstats child = record(GONE_BASE + 31, GONE_BASE + 31, GONE_BASE + 30, "foreign", 1, 0.001, 1024);
        double now = (double)time(NULL);
        child.ac_btime64 = kind == 2 ? (unsigned long long)before.tv_sec + 1
                                     : (unsigned long long)(kind == 1 ? now + 5 : now - 5);
        process_records_taskstats(&child, p);
        process_records_finish(p, 0);
        process_totals t;
        process_records_totals(p, &t);
        assert_int_equal(t.count, kind == 1 ? 1 : 2);
        assert_int_equal(t.unattributed, 0); /* its parent's record never comes: another tree's */
        process_records_free(p);
    }
}

/* A foreign process D, a child of a keeper M that init adopted (so D's
 * chain never passes this test, the run's root), and M reaps D when it is
 * killed: *keeper and *foreign receive their pids. */
static void spawn_foreign(pid_t *keeper, pid_t *foreign)
{
    int pids[2];
    assert_int_equal(pipe(pids), 0);
    pid_t first = fork();
    assert_true(first >= 0);
    if (first == 0) {
        int null = open("/dev/null", O_RDWR); /* M and D outlive this test's output: not its pipes */
        for (int fd = 0; fd <= 2; fd++)
            dup2(null, fd);
        if (fork() == 0) { /* M */
            pid_t d = fork();
            if (d < 0)
                _exit(1); /* nothing sent: the test's read sees end-of-file */
            if (d == 0)
                for (;;)
                    pause();
            pid_t both[2] = {getpid(), d};
            if (write(pids[1], both, sizeof both) != (ssize_t)sizeof both)
                _exit(1);
            waitpid(d, NULL, 0);
            for (;;)
                pause();
        }
        _exit(0); /* M is orphaned: adopted by init (or a subreaper above this test) */
    }
    close(pids[1]); /* M's end alone: a failed M gives end-of-file, not a hang */
    assert_int_equal(waitpid(first, NULL, 0), first);
    pid_t both[2] = {0, 0};
    ssize_t got = read(pids[0], both, sizeof both);
    close(pids[0]);
    /* never kill(-1) or kill(0): a pid must name one process */
    assert_true(got == (ssize_t)sizeof both && both[0] > 1 && both[1] > 1);
    *keeper = both[0];
    *foreign = both[1];
}

/* A process found foreign is remembered until a record of its own arrives
 * (or records were lost), so another build's exits cost no read of /proc:
 * a second child of a foreign parent that has since ended is still
 * foreign, not pending (the parent's pid names nobody).  Once the parent's
 * record came, or an overrun, it is forgotten: its pid is read again and,
 * gone, the child waits as pending (counted unattributed at an end with
 * overruns). */
static void a_foreign_parent_is_known_until_its_own_record(void **state)
{
    (void)state;
    for (int forgotten = 0; forgotten <= 2; forgotten++) {
        pid_t keeper, foreign;
        spawn_foreign(&keeper, &foreign);
        process_records *p = started();
        struct taskstats first = record(GONE_BASE + 30, GONE_BASE + 30, foreign, "cc1", 1, 1.0, 1024);
        process_records_taskstats(&first, p);
        int killed = kill(foreign, SIGKILL);
        while (killed == 0 && kill(foreign, 0) == 0) /* until its keeper reaped it */
            test_sleep(0.001);
        struct taskstats ended = record(foreign, foreign, keeper, "make", 1, 1.0, 1024);
        if (forgotten == 1)
            process_records_taskstats(&ended, p); /* its own record */
        if (forgotten == 2)
            process_records_taskstats(NULL, p); /* an overrun */
        struct taskstats second = record(GONE_BASE + 31, GONE_BASE + 31, foreign, "as", 1, 1.0, 1024);
        process_records_taskstats(&second, p);
        /* Finished with an overrun, so that a pending record is counted (without one it
         * is foreign: every record of the run came). */
        process_records_finish(p, 1);
        process_totals t;
        process_records_totals(p, &t);
        process_records_free(p);
        kill(keeper, SIGKILL);
        assert_int_equal(killed, 0);
        assert_int_equal(t.count, 0);
        assert_int_equal(t.unattributed, forgotten ? 1 : 0);
    }
}

/* Review (rev34 F6): a record's end was when it was read, however late.
 * Its begin time and elapsed time say in which wall-clock second the kernel
 * made it: a record read 98 s after that second ends there. */
static void a_record_read_late_ends_within_the_second_the_kernel_made_it(void **state)
{
    (void)state;
    process_records *p = started();
    struct timespec mono;
    clock_gettime(CLOCK_MONOTONIC, &mono);
    struct taskstats ts = record(GONE_BASE + 30, GONE_BASE + 30, getpid(), "late", 1, 0.1, 1024);
    ts.ac_etime = 1500000; /* 1.5 s */
    ts.ac_btime64 = (unsigned long long)time(NULL) - 100;
    process_records_taskstats(&ts, p);
    process_records_finish(p, 0);
    const process_record *top;
    assert_int_equal(process_records_top_cpu(p, &top), 1);
    double now = (double)mono.tv_sec + (double)mono.tv_nsec / 1e9; /* the run started at monotonic 0 */
    ASSERT_BETWEEN(top[0].end_sec, now - 100, now - 97);
    ASSERT_BETWEEN(top[0].end_sec - top[0].start_sec, 1.4999, 1.5001);
    process_records_free(p);
}

/* A pending record whose parent turns out to be another tree's (its
 * record's chain reaches init) is dropped with it.  Before, it waited to
 * the end: on a busy machine another build's children whose parents were
 * reaped before their records were read filled the bounded queue, and a
 * record of the run's own that came later -- a grandchild read after its
 * parent was reaped -- found no room and was counted unattributed, not
 * placed.  Twice the bound of foreign chains (a pending child under a
 * pending parent under another tree's process), then one of the run's. */
static void another_trees_pending_records_leave_room_for_the_runs(void **state)
{
    (void)state;
    process_records *p = started();
    pid_t next = GONE_BASE + 100;
    for (int i = 0; i < 2 * PROCESS_PENDING_MAX; i++) {
        pid_t parent = next++, child = next++, grandchild = next++;
        struct taskstats g = record(grandchild, grandchild, child, "as", 1, 0.001, 1024);
        struct taskstats c = record(child, child, parent, "cc1", 1, 0.001, 1024);
        struct taskstats f = record(parent, parent, 1, "make", 1, 0.001, 1024); /* a child of init */
        process_records_taskstats(&g, p); /* parent gone: pending */
        process_records_taskstats(&c, p); /* its parent gone too: pending */
        process_records_taskstats(&f, p); /* another tree's: both go with it */
    }
    struct taskstats grandchild = record(next + 1, next + 1, next, "cc1", 1, 1.0, 400 * 1024);
    struct taskstats parent = record(next, next, getpid(), "gcc", 1, 0.1, 2048);
    process_records_taskstats(&grandchild, p);
    process_records_taskstats(&parent, p);
    process_records_finish(p, 1); /* with an overrun, what still waits is counted */
    process_totals t;
    process_records_totals(p, &t);
    assert_int_equal(t.count, 2);
    assert_int_equal(t.unattributed, 0);
    process_records_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_child_of_the_root_belongs),
        cmocka_unit_test(a_child_read_before_its_gone_parent_waits_for_it),
        cmocka_unit_test(a_record_of_another_tree_is_left_out_and_counted_only_with_overruns),
        cmocka_unit_test(threads_fold_into_their_process_at_its_last_record),
        cmocka_unit_test(the_top_and_the_names_stay_bounded),
        cmocka_unit_test(wait4_records_are_kept_only_without_taskstats),
        cmocka_unit_test(sampled_records_join_wait4_s_without_double_counting),
        cmocka_unit_test(a_signal_is_told_from_an_exit_code),
        cmocka_unit_test(keep_all_gives_back_every_record_or_counts_the_missing),
        cmocka_unit_test(threads_fold_for_many_processes_at_once_and_past_the_bound_are_counted),
        cmocka_unit_test(a_pending_record_is_not_placed_by_a_later_holder_of_its_parents_pid),
        cmocka_unit_test(a_child_that_began_after_a_members_end_is_a_later_holders),
        cmocka_unit_test(a_record_read_late_ends_within_the_second_the_kernel_made_it),
        cmocka_unit_test(a_foreign_parent_is_known_until_its_own_record),
        cmocka_unit_test(another_trees_pending_records_leave_room_for_the_runs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
