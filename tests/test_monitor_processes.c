/*
 * test_monitor_processes.c -- the library's per-process records
 * (resmon_monitor_get_processes): a real tree whose one child allocates
 * 100 MiB is its top record, with its own pid, parent, name and a peak
 * between what a sample saw and the kernel's own mark; a child that ended
 * mid-window says so; the bound keeps the top of each ranking; the calls'
 * refusals (window open, one process, stride).
 */
#include "process_list.h"
#include "resmon.h"
#include "test_util.h"
#include "vm_rss.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#define ALLOC_MB 100

/* Messages on the tree's report pipe: one write each (atomic: < PIPE_BUF). */
enum { PIDS, ALLOCATED, REAPED };
typedef struct report {
    int kind;
    pid_t pid[3]; /* PIDS: the allocating child and the two idle ones; REAPED: [0] */
} report;

static void send_report(int fd, const report *r)
{
    if (write(fd, r, sizeof *r) != (ssize_t)sizeof *r)
        _exit(3);
}

static void read_exactly(int fd, void *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, (char *)buf + got, n - got);
        if (r == 0 || (r < 0 && errno != EINTR))
            fail_msg("read: %zd (%s)", r, r ? strerror(errno) : "end of file");
        if (r > 0)
            got += (size_t)r;
    }
}

/* What a test leaves running, ended by the teardown also when an assertion
 * failed midway (cmocka then leaves the test at once). */
static struct {
    resmon_monitor *m;
    pid_t root; /* its group is killed too */
} left;

static int end_what_is_left(void **state)
{
    (void)state;
    resmon_monitor_free(left.m);
    if (left.root > 0) {
        kill(-left.root, SIGKILL);
        kill(left.root, SIGKILL);
        waitpid(left.root, NULL, 0);
    }
    left.m = NULL;
    left.root = 0;
    return 0;
}

/* A child: waits for a byte on go for each step, then _exit (no atexit
 * handlers, so no sanitizer's leak check forks a helper). */
static void child_main(int go, int report_fd, int allocates)
{
    char step;
    if (allocates) {
        read_exactly(go, &step, 1); /* allocate now */
        char *block = malloc((size_t)ALLOC_MB << 20);
        if (!block)
            _exit(2);
        test_touch(block, (size_t)ALLOC_MB << 20);
        report r = {.kind = ALLOCATED, .pid = {getpid()}};
        send_report(report_fd, &r);
    }
    read_exactly(go, &step, 1); /* exit now (or at EOF: the test ended) */
    _exit(0);
}

/* The tree's root: forks the three children, reports their pids, reaps
 * each one as it exits and reports it, then waits to be told to exit. */
static void root_main(int go[4][2], int report_fd)
{
    report pids = {.kind = PIDS};
    for (int i = 0; i < 3; i++) {
        pid_t pid = fork();
        if (pid == 0)
            child_main(go[i][0], report_fd, i == 0);
        pids.pid[i] = pid;
    }
    send_report(report_fd, &pids);
    for (;;) {
        pid_t pid = wait(NULL);
        if (pid < 0)
            break;
        report r = {.kind = REAPED, .pid = {pid}};
        send_report(report_fd, &r);
    }
    char step;
    read_exactly(go[3][0], &step, 1);
    _exit(0);
}

typedef struct tree {
    pid_t root, child[3];
    int go[4][2]; /* the test writes a step to child i (3: the root) */
    int report[2];
} tree;

static void tree_start(tree *t)
{
    for (int i = 0; i < 4; i++)
        assert_int_equal(pipe2(t->go[i], O_CLOEXEC), 0);
    assert_int_equal(pipe2(t->report, O_CLOEXEC), 0);
    t->root = fork();
    assert_true(t->root >= 0);
    if (t->root == 0) {
        setpgid(0, 0); /* one group: the cleanup kills all of it */
        root_main(t->go, t->report[1]);
    }
    setpgid(t->root, t->root);
    report r;
    read_exactly(t->report[0], &r, sizeof r);
    assert_int_equal(r.kind, PIDS);
    memcpy(t->child, r.pid, sizeof t->child);
}

static void tree_step(tree *t, int which)
{
    assert_int_equal(write(t->go[which][1], "x", 1), 1);
}

static report tree_next_report(tree *t)
{
    report r;
    read_exactly(t->report[0], &r, sizeof r);
    return r;
}

static void tree_end(tree *t)
{
    kill(-t->root, SIGKILL);
    waitpid(t->root, NULL, 0);
    for (int i = 0; i < 4; i++) {
        close(t->go[i][0]);
        close(t->go[i][1]);
    }
    close(t->report[0]);
    close(t->report[1]);
}

/* The sampler tells the test each sample's timestamp through a pipe that
 * never blocks it: the test waits on samples as events. */
static void on_sample(const resmon_sample *s, void *user)
{
    int fd = *(const int *)user;
    ssize_t ignored = write(fd, &s->timestamp, sizeof s->timestamp);
    (void)ignored;
}

/* Returns once a sample taken after `after` (CLOCK_MONOTONIC seconds) was
 * published: its reading began after that moment. */
static void wait_sample_after(int fd, double after)
{
    double timestamp;
    do
        read_exactly(fd, &timestamp, sizeof timestamp);
    while (timestamp <= after);
}

static double vm_hwm_mb_of(pid_t pid)
{
    return vm_status_mb_of(pid, "VmHWM:");
}

static const resmon_process *find_pid(const resmon_process *procs, size_t n, pid_t pid)
{
    for (size_t i = 0; i < n; i++)
        if (procs[i].pid == pid)
            return &procs[i];
    print_error("no record of pid %d\n", (int)pid);
    fail();
    return NULL;
}

static void records_of_a_real_tree(void **state)
{
    (void)state;
    if (TEST_UNDER_TSAN)
        skip(); /* its shadow memory is resident in every process: the idle ones would hold gigabytes */
    char self_comm[RESMON_PROCESS_COMM_MAX] = "";
    FILE *f = fopen("/proc/self/comm", "r");
    assert_non_null(f);
    assert_non_null(fgets(self_comm, sizeof self_comm, f));
    fclose(f);
    self_comm[strcspn(self_comm, "\n")] = '\0';

    tree t;
    tree_start(&t);
    left.root = t.root;
    int samples[2];
    assert_int_equal(pipe2(samples, O_CLOEXEC), 0);
    assert_int_equal(fcntl(samples[1], F_SETFL, O_NONBLOCK), 0);
    resmon_options o = RESMON_OPTIONS_INIT;
    o.pid = t.root;
    o.include_children = 1;
    o.sample_interval_sec = 0.01;
    o.on_sample = on_sample;
    o.on_sample_user = &samples[1];
    resmon_monitor *m = left.m = test_monitor_new(&o);
    assert_non_null(m);
    assert_int_equal(resmon_monitor_start(m), 0);
    resmon_process procs[RESMON_MAX_PROCESSES];
    assert_int_equal(resmon_monitor_get_processes(m, procs, RESMON_MAX_PROCESSES, sizeof *procs, NULL), -EBUSY);

    tree_step(&t, 0); /* the first child allocates */
    report r = tree_next_report(&t);
    assert_int_equal(r.kind, ALLOCATED);
    wait_sample_after(samples[0], test_now()); /* a reading saw it holding the memory */
    double own_hwm_mb = vm_hwm_mb_of(t.child[0]);
    assert_true(own_hwm_mb >= ALLOC_MB);
    tree_step(&t, 0); /* it exits, and the root reaps it */
    r = tree_next_report(&t);
    assert_int_equal(r.kind, REAPED);
    assert_int_equal(r.pid[0], t.child[0]);
    wait_sample_after(samples[0], test_now()); /* a walk found it gone: it ended mid-window */
    wait_sample_after(samples[0], test_now());
    assert_int_equal(resmon_monitor_stop(m), 0);
    resmon_summary s = test_summary(m);

    uint64_t seen = 0;
    ssize_t n = resmon_monitor_get_processes(m, procs, RESMON_MAX_PROCESSES, sizeof *procs, &seen);
    assert_int_equal(n, 4); /* the root and its three children */
    assert_int_equal(seen, 4);
    const resmon_process *top = &procs[0];
    assert_int_equal(top->pid, t.child[0]); /* the allocating child has the largest peak */
    ASSERT_BETWEEN(top->peak_rss_mb, ALLOC_MB, own_hwm_mb);
    assert_int_equal(top->end, RESMON_PROCESS_EXITED);
    assert_true(top->cpu_sec > 0); /* touching 100 MiB takes the kernel's time */
    for (ssize_t i = 1; i < n; i++)
        assert_true(procs[i].peak_rss_mb <= procs[i - 1].peak_rss_mb);

    const resmon_process *root = find_pid(procs, (size_t)n, t.root);
    assert_int_equal(root->ppid, getpid());
    assert_int_equal(root->end, RESMON_PROCESS_RUNNING);
    for (int i = 0; i < 3; i++) {
        const resmon_process *c = find_pid(procs, (size_t)n, t.child[i]);
        assert_int_equal(c->ppid, t.root);
        assert_int_equal(c->end, i == 0 ? RESMON_PROCESS_EXITED : RESMON_PROCESS_RUNNING);
    }
    for (ssize_t i = 0; i < n; i++) {
        const resmon_process *p = &procs[i];
        assert_int_equal(p->struct_size, sizeof *p);
        assert_int_equal(p->source, RESMON_PROCESS_SAMPLED);
        assert_string_equal(p->comm, self_comm); /* forked, never exec'd: the test's name */
        /* All started before the window, within the test's second or so; the
         * running ones were last seen by the window's last reading. */
        ASSERT_BETWEEN(p->start_sec, -test_scaled(30), 0.011);
        ASSERT_BETWEEN(p->end_sec, 0, s.duration_sec + test_scaled(0.05));
        if (p->end == RESMON_PROCESS_RUNNING) /* the reading's own clock, microseconds after its timestamp */
            ASSERT_BETWEEN(p->end_sec, s.duration_sec - test_scaled(0.05), s.duration_sec + test_scaled(0.05));
        if (p->pid != t.child[0])
            assert_true(p->peak_rss_mb < ALLOC_MB);
    }
    assert_true(top->end_sec < root->end_sec); /* its end was seen samples before stop */

    /* Readable after stop until the next start, the same each time. */
    resmon_process again[RESMON_MAX_PROCESSES];
    assert_int_equal(resmon_monitor_get_processes(m, again, RESMON_MAX_PROCESSES, sizeof *again, NULL), n);
    assert_memory_equal(again, procs, (size_t)n * sizeof *procs);

    resmon_monitor_free(m);
    left.m = NULL;
    close(samples[0]);
    close(samples[1]);
    tree_end(&t);
    left.root = 0;
}

/* A stride larger than the library's record gets the record and zeros;
 * smaller than the 0.4 record is refused; cap 0 counts. */
static void strides_and_refusals(void **state)
{
    (void)state;
    tree t;
    tree_start(&t);
    left.root = t.root;
    resmon_options o = RESMON_OPTIONS_INIT;
    o.pid = t.root;
    o.include_children = 1;
    resmon_monitor *m = left.m = test_monitor_new(&o);
    assert_non_null(m);
    uint64_t seen = 99;
    assert_int_equal(resmon_monitor_get_processes(m, NULL, 0, 0, &seen), 0); /* no window yet: none */
    assert_int_equal(seen, 0);
    assert_int_equal(resmon_monitor_start(m), 0);
    assert_int_equal(resmon_monitor_stop(m), 0);
    assert_int_equal(resmon_monitor_get_processes(m, NULL, 0, 0, &seen), 4);
    assert_int_equal(seen, 4);
    struct {
        resmon_process p;
        unsigned char tail[24];
    } wide[4];
    memset(wide, 0xab, sizeof wide);
    assert_int_equal(resmon_monitor_get_processes(m, &wide[0].p, 4, sizeof *wide, NULL), 4);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(wide[i].p.struct_size, sizeof(resmon_process));
        for (size_t b = 0; b < sizeof wide[i].tail; b++)
            assert_int_equal(wide[i].tail[b], 0);
    }
    resmon_process one;
    assert_int_equal(resmon_monitor_get_processes(m, &one, 1, sizeof one - 8, NULL), -EINVAL);
    assert_int_equal(resmon_monitor_get_processes(m, NULL, 1, sizeof one, NULL), -EINVAL);
    assert_int_equal(resmon_monitor_get_processes(NULL, NULL, 0, 0, NULL), -EINVAL);
    resmon_monitor_free(m);

    /* One process, not a tree: no records are kept. */
    o.include_children = 0;
    m = left.m = test_monitor_new(&o);
    assert_non_null(m);
    assert_int_equal(resmon_monitor_get_processes(m, NULL, 0, 0, NULL), -ENOTSUP);
    assert_int_equal(resmon_monitor_start(m), 0);
    assert_int_equal(resmon_monitor_stop(m), 0);
    assert_int_equal(resmon_monitor_get_processes(m, NULL, 0, 0, NULL), -ENOTSUP);
    resmon_monitor_free(m);
    left.m = NULL;
    tree_end(&t);
    left.root = 0;
}

/* A window the target's end closed by itself: its records are readable
 * without stop, from another thread than the sampler that wrote them (the
 * window's closing publishes them), every process marked exited. */
/* Forks a root whose one child exits when a byte arrives on go_fd; the
 * root writes the child's pid to forked_fd, then reaps it -- at once, or
 * only when a byte arrives on reap_fd (>= 0: the child stays a zombie until
 * then) -- and exits.  Returns the root's pid (in the test process). */
static pid_t root_with_one_child(int go_fd, int forked_fd, int reap_fd)
{
    pid_t root = fork();
    assert_true(root >= 0);
    if (root == 0) {
        char step;
        pid_t child = fork();
        if (child == 0) {
            read_exactly(go_fd, &step, 1);
            _exit(0);
        }
        if (write(forked_fd, &child, sizeof child) != (ssize_t)sizeof child)
            _exit(3);
        if (reap_fd >= 0)
            read_exactly(reap_fd, &step, 1);
        waitpid(child, NULL, 0); /* it exits when told, then the root does */
        _exit(0);
    }
    return root;
}

static void readable_once_the_target_ended(void **state)
{
    (void)state;
    int go[2], forked[2];
    assert_int_equal(pipe2(go, O_CLOEXEC), 0);
    assert_int_equal(pipe2(forked, O_CLOEXEC), 0);
    pid_t root = root_with_one_child(go[0], forked[1], -1);
    left.root = root;
    pid_t child;
    read_exactly(forked[0], &child, sizeof child); /* the window's first walk finds it */
    resmon_options o = RESMON_OPTIONS_INIT;
    o.pid = root;
    o.include_children = 1;
    o.sample_interval_sec = 0.005;
    resmon_monitor *m = left.m = test_monitor_new(&o);
    assert_non_null(m);
    assert_int_equal(resmon_monitor_start(m), 0);
    assert_int_equal(write(go[1], "x", 1), 1);
    double deadline = test_now() + test_scaled(30);
    while (resmon_monitor_running(m) && test_now() < deadline)
        test_sleep(0.001); /* waits for the window's end, an event the monitor reports */
    assert_int_equal(resmon_monitor_running(m), 0);
    resmon_process procs[4];
    uint64_t seen = 0;
    ssize_t n = resmon_monitor_get_processes(m, procs, 4, sizeof *procs, &seen);
    assert_int_equal(n, 2);
    assert_int_equal(seen, 2);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(procs[i].end, RESMON_PROCESS_EXITED);
        assert_true(procs[i].pid == root ? procs[i].ppid == getpid() : procs[i].pid == child && procs[i].ppid == root);
    }
    resmon_monitor_free(m);
    left.m = NULL;
    waitpid(root, NULL, 0);
    left.root = 0;
    close(go[0]);
    close(go[1]);
    close(forked[0]);
    close(forked[1]);
}

static char state_of(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    const char *paren = strrchr(buf, ')');
    return paren && paren[1] == ' ' ? paren[2] : 0;
}

/* The most recent samples kept (max_samples): the last kept is the latest. */
#define ZOMBIE_SAMPLES_KEPT 4096

/* The first sample (of m, kept to ZOMBIE_SAMPLES_KEPT, each announced on
 * samples_fd) that reads the tree as one process, or the latest at the
 * deadline; NULL if none was kept.  Waits for an event, not a time: under
 * load an exited child's end is seen well after its Z. */
static const resmon_sample *await_one_process(resmon_monitor *m, int samples_fd, double deadline)
{
    static resmon_sample taken[ZOMBIE_SAMPLES_KEPT];
    ssize_t n;
    do {
        wait_sample_after(samples_fd, test_now());
        n = resmon_monitor_get_samples(m, taken, ZOMBIE_SAMPLES_KEPT, sizeof *taken);
    } while (n >= 1 && taken[n - 1].nprocs != 1 && test_now() < deadline);
    return n >= 1 ? &taken[n - 1] : NULL;
}

/* Review (rev2 F1): a child its parent reaps late ended when it exited --
 * at the first reading that saw it a zombie -- not at the reap: here the
 * parent reaps it some 0.3 s (60 intervals) after it exited. */
static void a_child_reaped_late_ends_when_it_exited(void **state)
{
    (void)state;
    int go[2], reap[2], forked[2], samples[2];
    assert_int_equal(pipe2(go, O_CLOEXEC), 0);
    assert_int_equal(pipe2(reap, O_CLOEXEC), 0);
    assert_int_equal(pipe2(forked, O_CLOEXEC), 0);
    assert_int_equal(pipe2(samples, O_CLOEXEC | O_NONBLOCK), 0);
    pid_t root = root_with_one_child(go[0], forked[1], reap[0]); /* the child is a zombie until told */
    left.root = root;
    pid_t child;
    read_exactly(forked[0], &child, sizeof child);
    int fl = fcntl(samples[0], F_GETFL);
    assert_int_equal(fcntl(samples[0], F_SETFL, fl & ~O_NONBLOCK), 0); /* the test blocks, the sampler never */
    resmon_options o = RESMON_OPTIONS_INIT;
    o.pid = root;
    o.include_children = 1;
    o.sample_interval_sec = 0.005;
    o.metrics = RESMON_METRIC_COUNTS; /* nprocs: the child's end seen */
    o.max_samples = ZOMBIE_SAMPLES_KEPT;
    o.on_sample = on_sample;
    o.on_sample_user = &samples[1];
    resmon_monitor *m = left.m = test_monitor_new(&o);
    assert_non_null(m);
    assert_int_equal(resmon_monitor_start(m), 0);
    assert_int_equal(write(go[1], "x", 1), 1);
    double deadline = test_now() + test_scaled(30);
    while (state_of(child) != 'Z' && test_now() < deadline)
        test_sleep(0.001);
    assert_int_equal(state_of(child), 'Z');
    /* Its end seen (a sample of the tree without it: under load that can
     * come well after its Z, a_zombie_child_counts_as_no_process), then
     * 0.3 s more a zombie, sampled throughout, before its parent reaps it. */
    await_one_process(m, samples[0], deadline);
    wait_sample_after(samples[0], test_now() + 0.3);
    assert_int_equal(write(reap[1], "x", 1), 1);
    while (resmon_monitor_running(m) && test_now() < deadline)
        test_sleep(0.001); /* the root ends once it reaped */
    assert_int_equal(resmon_monitor_running(m), 0);
    resmon_process procs[4];
    uint64_t seen = 0;
    ssize_t n = resmon_monitor_get_processes(m, procs, 4, sizeof *procs, &seen);
    assert_int_equal(n, 2);
    const resmon_process *c = find_pid(procs, 2, child), *r = find_pid(procs, 2, root);
    assert_int_equal(c->end, RESMON_PROCESS_EXITED);
    if (!(c->end_sec + 0.2 < r->end_sec))
        fail_msg("the child ended at %.3f s, its parent (which reaped it 0.3 s after its exit) at %.3f s", c->end_sec,
                 r->end_sec);
    resmon_monitor_free(m);
    left.m = NULL;
    waitpid(root, NULL, 0);
    left.root = 0;
    int fds[] = {go[0], go[1], reap[0], reap[1], forked[0], forked[1], samples[0], samples[1]};
    for (size_t i = 0; i < sizeof fds / sizeof *fds; i++)
        close(fds[i]);
}

/* A child seen alive, then a zombie its parent has not reaped: from then it
 * is no process of the tree, with no thread and no virtual memory -- as its
 * RSS (statm's zeros) already was.  It counted as a process with its last
 * threads and vmem before: a sample of the zombie read nprocs 2 and about
 * twice the root's vmem. */
static void a_zombie_child_counts_as_no_process(void **state)
{
    (void)state;
    int go[2], reap[2], forked[2], samples[2];
    assert_int_equal(pipe2(go, O_CLOEXEC), 0);
    assert_int_equal(pipe2(reap, O_CLOEXEC), 0);
    assert_int_equal(pipe2(forked, O_CLOEXEC), 0);
    assert_int_equal(pipe2(samples, O_CLOEXEC | O_NONBLOCK), 0);
    pid_t root = root_with_one_child(go[0], forked[1], reap[0]); /* the child is a zombie until told */
    left.root = root;
    pid_t child;
    read_exactly(forked[0], &child, sizeof child);
    int fl = fcntl(samples[0], F_GETFL);
    assert_int_equal(fcntl(samples[0], F_SETFL, fl & ~O_NONBLOCK), 0); /* the test blocks, the sampler never */
    resmon_options o = RESMON_OPTIONS_INIT;
    o.pid = root;
    o.include_children = 1;
    o.sample_interval_sec = 0.005;
    o.metrics = RESMON_METRIC_COUNTS | RESMON_METRIC_MEMORY_DETAIL;
    o.on_sample = on_sample;
    o.on_sample_user = &samples[1];
    o.max_samples = ZOMBIE_SAMPLES_KEPT; /* the most recent: the last kept is the latest */
    resmon_monitor *m = left.m = test_monitor_new(&o);
    assert_non_null(m);
    assert_int_equal(resmon_monitor_start(m), 0); /* its first reading sees both alive */
    resmon_sample first; /* kept before the child is told to exit: both alive */
    while (resmon_monitor_get_samples(m, &first, 1, sizeof first) < 1)
        wait_sample_after(samples[0], 0);
    assert_int_equal(write(go[1], "x", 1), 1);
    double deadline = test_now() + test_scaled(30);
    while (state_of(child) != 'Z' && test_now() < deadline)
        test_sleep(0.001);
    assert_int_equal(state_of(child), 'Z');
    /* Samples until one reads the zombie as no process -- how soon is not
     * this test's: the kernel books an exiting task's last run at its final
     * switch, after its state reads Z, and a reading in between finds its
     * CPU clock where the previous one left it and takes its figures as
     * they stood (is_idle in probe.c).  Under load that switch came more
     * than 50 ms after the Z (CI68's TSan stage: nprocs 2 from a sample
     * begun 50 ms after it, where this waited a fixed 50 ms).  Before the
     * fix no sample of the zombie ever read it as none. */
    const resmon_sample *last = await_one_process(m, samples[0], deadline);
    assert_int_equal(write(reap[1], "x", 1), 1);
    while (resmon_monitor_running(m) && test_now() < deadline)
        test_sleep(0.001); /* the root ends once it reaped */
    resmon_monitor_free(m);
    left.m = NULL;
    waitpid(root, NULL, 0);
    left.root = 0;
    int fds[] = {go[0], go[1], reap[0], reap[1], forked[0], forked[1], samples[0], samples[1]};
    for (size_t i = 0; i < sizeof fds / sizeof *fds; i++)
        close(fds[i]);
    assert_non_null(last);
    ASSERT_DOUBLE_EQ(first.nprocs, 2);
    ASSERT_DOUBLE_EQ(last->nprocs, 1);
    /* The root's threads alone (under TSan a forked child carries one more). */
    assert_true(last->nthreads >= 1 && last->nthreads <= first.nthreads - 1);
    /* The child, a fork of the root, held about as much address space. */
    if (!(last->vmem_mb < 0.75 * first.vmem_mb))
        fail_msg("vmem %.1f MiB with the zombie, %.1f MiB with both alive", last->vmem_mb, first.vmem_mb);
}

/* The bound: of many processes, the kept records are exactly the top
 * RESMON_PROCESS_TOP by peak and by CPU (each once), by peak first, and
 * every process is counted. */
static void bound_keeps_each_rankings_top(void **state)
{
    (void)state;
    static rm__process_list list;
    rm__process_list_reset(&list);
    enum { COUNT = 5000 };
    for (int i = 0; i < COUNT; i++) {
        /* peak and CPU in unrelated orders: (i * 7919) % COUNT permutes 0..COUNT-1 */
        resmon_process r = {.struct_size = sizeof r, .pid = i + 1};
        r.peak_rss_mb = (double)((i * 7919) % COUNT);
        r.cpu_sec = (double)((i * 104729) % COUNT);
        rm__process_list_add(&list, &r);
    }
    resmon_process out[RESMON_MAX_PROCESSES];
    size_t n = rm__process_list_copy(&list, out, RESMON_MAX_PROCESSES, sizeof *out);
    assert_int_equal(list.seen, COUNT);
    size_t top_peak = 0, top_cpu = 0, both = 0;
    for (size_t i = 0; i < n; i++) {
        int by_peak = out[i].peak_rss_mb >= COUNT - RESMON_PROCESS_TOP;
        int by_cpu = out[i].cpu_sec >= COUNT - RESMON_PROCESS_TOP;
        assert_true(by_peak || by_cpu);
        top_peak += (size_t)by_peak;
        top_cpu += (size_t)by_cpu;
        both += (size_t)(by_peak && by_cpu);
        if (i > 0)
            assert_true(out[i].peak_rss_mb < out[i - 1].peak_rss_mb);
    }
    assert_int_equal(top_peak, RESMON_PROCESS_TOP);
    assert_int_equal(top_cpu, RESMON_PROCESS_TOP);
    assert_int_equal(n, 2 * RESMON_PROCESS_TOP - both);
    assert_int_equal(out[0].peak_rss_mb, COUNT - 1);
    /* cap below n: the first cap, n still returned */
    assert_int_equal(rm__process_list_copy(&list, out, 3, sizeof *out), n);
    assert_int_equal(out[2].peak_rss_mb, COUNT - 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(records_of_a_real_tree, end_what_is_left),
        cmocka_unit_test_teardown(strides_and_refusals, end_what_is_left),
        cmocka_unit_test_teardown(readable_once_the_target_ended, end_what_is_left),
        cmocka_unit_test_teardown(a_child_reaped_late_ends_when_it_exited, end_what_is_left),
        cmocka_unit_test_teardown(a_zombie_child_counts_as_no_process, end_what_is_left),
        cmocka_unit_test(bound_keeps_each_rankings_top),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
