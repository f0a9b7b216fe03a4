/*
 * test_phases.c -- resmon_monitor_mark and the phases it makes: names,
 * per-phase figures against the window's, the bound on phases, a mark's
 * cost, copying with a stride, and the phases' JSON.
 */
#include "test_util.h"
#include "vm_rss.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static resmon_monitor *started(double interval)
{
    resmon_options o = RESMON_OPTIONS_INIT;
    o.sample_interval_sec = interval;
    resmon_monitor *m = test_monitor_new(&o);
    assert_non_null(m);
    assert_int_equal(resmon_monitor_start(m), 0);
    return m;
}

/* The sampler has taken every mark so far: the phase count reached n. */
static void wait_for_phases(const resmon_monitor *m, int n)
{
    double deadline = test_now() + test_scaled(5.0);
    while (resmon_monitor_phase(m, NULL, 0) < n && test_now() < deadline)
        test_sleep(0.0002);
    assert_int_equal(resmon_monitor_phase(m, NULL, 0), n);
}

static void names_are_checked(void **state)
{
    (void)state;
    resmon_options o = RESMON_OPTIONS_INIT;
    resmon_monitor *m = test_monitor_new(&o);
    assert_int_equal(resmon_monitor_mark(NULL, "load"), -EINVAL);
    assert_int_equal(resmon_monitor_mark(m, "load"), -EINVAL); /* no window open */
    assert_int_equal(resmon_monitor_start(m), 0);
    char long_name[65];
    memset(long_name, 'a', 64);
    long_name[64] = '\0';
    const char *bad[] = {NULL, "", "tab\there", "new\nline", "del\x7f", "\xc2\x85" /* C1 NEL */, "\xff",
                         "\xc0\xaf" /* overlong */, "\xed\xa0\x80" /* surrogate */, "cut\xe2\x82", long_name,
                         "evil\xe2\x80\xae" "exe.txt" /* U+202E: shown reversed */, "\xe2\x81\xa6isolate" /* U+2066 */,
                         "bu\xe2\x80\x8b" "ild" /* U+200B: shows as "build" */,
                         "bu\xc2\xad" "ild" /* U+00AD */, "x\xf3\xa0\x81\x81" /* U+E0041, a tag */};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_equal(resmon_monitor_mark(m, bad[i]), -EINVAL);
    long_name[63] = '\0'; /* 63 bytes: the longest */
    assert_int_equal(resmon_monitor_mark(m, long_name), 0);
    assert_int_equal(resmon_monitor_mark(m, "caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x9a\x80"), 0);
    wait_for_phases(m, 3);
    char name[RESMON_PHASE_NAME_MAX];
    assert_int_equal(resmon_monitor_phase(m, name, sizeof name), 3);
    assert_string_equal(name, "caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x9a\x80");
    char small[4];
    assert_int_equal(resmon_monitor_phase(m, small, sizeof small), 3);
    assert_string_equal(small, "caf");
    resmon_monitor_stop(m);
    resmon_phase ph[4];
    assert_int_equal(resmon_monitor_get_phases(m, ph, 4, sizeof *ph), 3);
    assert_string_equal(ph[0].name, "");
    assert_string_equal(ph[1].name, long_name);
    /* A new window starts without phases. */
    assert_int_equal(resmon_monitor_start(m), 0);
    assert_int_equal(resmon_monitor_get_phases(m, NULL, 0, sizeof *ph), 0);
    assert_int_equal(resmon_monitor_phase(m, name, sizeof name), 0);
    assert_string_equal(name, "");
    resmon_monitor_free(m);
}

/* Phases' figures are the window's cut at the marks: durations and CPU
 * seconds add up, each phase's memory is its own. */
static void phases_cut_the_window(void **state)
{
    (void)state;
    double cpu0 = test_clock_sec(CLOCK_PROCESS_CPUTIME_ID);
    /* A long interval: the phases' edges are the marks' own samples (a
     * mark that waited for the next slot would wait seconds). */
    resmon_monitor *m = started(5.0);
    test_spin_cpu(0.1);
    double mark_load = test_now();
    double cpu1 = test_clock_sec(CLOCK_PROCESS_CPUTIME_ID);
    assert_int_equal(resmon_monitor_mark(m, "load"), 0);
    wait_for_phases(m, 2); /* the mark's sample is taken a few microseconds later: before the block */
    size_t bytes = 64u << 20;
    /* mmap, not malloc: munmap gives the pages back at once, also under ASan. */
    char *block = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(block != MAP_FAILED);
    test_touch(block, bytes);
    test_sleep(0.05);
    double cpu2 = test_clock_sec(CLOCK_PROCESS_CPUTIME_ID);
    assert_int_equal(resmon_monitor_mark(m, "compute"), 0);
    wait_for_phases(m, 3);
    munmap(block, bytes);
    test_spin_cpu(0.15);
    wait_for_phases(m, 3);
    assert_int_equal(resmon_monitor_stop(m), 0);
    double cpu3 = test_clock_sec(CLOCK_PROCESS_CPUTIME_ID);

    resmon_summary w = test_summary(m);
    resmon_phase ph[8];
    assert_int_equal(resmon_monitor_get_phases(m, ph, 8, sizeof *ph), 3);
    assert_string_equal(ph[0].name, "");
    assert_string_equal(ph[1].name, "load");
    assert_string_equal(ph[2].name, "compute");
    ASSERT_DOUBLE_EQ(ph[0].start_sec, 0.0);
    double sum_duration = 0, sum_cpu = 0;
    uint64_t sum_samples = 0;
    for (int i = 0; i < 3; i++) {
        assert_int_equal(ph[i].summary.struct_size, sizeof(resmon_summary));
        sum_duration += ph[i].summary.duration_sec;
        sum_cpu += ph[i].summary.cpu_time_sec;
        sum_samples += ph[i].summary.num_samples;
        if (i)
            assert_true(fabs(ph[i].start_sec - (ph[i - 1].start_sec + ph[i - 1].summary.duration_sec)) < 1e-9);
    }
    /* The mark's sample is in both phases it separates. */
    assert_int_equal(sum_samples, w.num_samples + 2);
    assert_true(fabs(sum_duration - w.duration_sec) < 1e-9);
    assert_true(fabs(sum_cpu - w.cpu_time_sec) < 1e-9);
    /* The load phase began at its mark (a sample taken at once: a few
     * microseconds on an idle machine, a wake-up's delay on a busy one), not
     * at the next slot, seconds on: a bound against that, whatever the load
     * did after the time factor was chosen. */
    ASSERT_BETWEEN(ph[1].start_timestamp - mark_load, 0.0, 1.0);
    /* Each phase's CPU seconds against the kernel's between its marks (the
     * sampler's own CPU is the process's too: a tick's slack at each edge). */
    ASSERT_BETWEEN(ph[0].summary.cpu_time_sec, cpu1 - cpu0 - 0.03, cpu1 - cpu0 + 0.03);
    ASSERT_BETWEEN(ph[1].summary.cpu_time_sec, cpu2 - cpu1 - 0.03, cpu2 - cpu1 + 0.03);
    ASSERT_BETWEEN(ph[2].summary.cpu_time_sec, cpu3 - cpu2 - 0.03, cpu3 - cpu2 + 0.03);
    /* Load grew by the block, compute gave it back. */
    assert_true(ph[1].summary.memory_growth_mb > 60);
    assert_true(ph[1].summary.peak_rss_mb >= ph[0].summary.peak_rss_mb + 60);
    assert_true(ph[2].summary.memory_growth_mb < -60);
    /* The exact peak rose during load: known for it, and no lower than its
     * sampled peak; compute did not rise above it: unknown. */
    if (w.hwm_scope == RESMON_HWM_WINDOW) {
        assert_int_equal(ph[1].summary.hwm_scope, RESMON_HWM_WINDOW);
        assert_true(ph[1].summary.hwm_rss_mb >= ph[1].summary.peak_rss_mb);
        ASSERT_DOUBLE_EQ(ph[1].summary.hwm_rss_mb, w.hwm_rss_mb);
        assert_int_equal(ph[2].summary.hwm_scope, RESMON_HWM_UNKNOWN);
        ASSERT_NAN(ph[2].summary.hwm_rss_mb);
    }
    ASSERT_NAN(ph[1].summary.peak_gpu_mem_mb); /* no GPU: unknown, as the window's */

    /* A stride through the 0.3 summary only: the rest is not written. */
    size_t min_stride = offsetof(resmon_phase, summary) + 160;
    unsigned char raw[2 * 240 + sizeof(resmon_phase)]; /* the third element whole, for the compiler */
    memset(raw, 0xee, sizeof raw);
    assert_int_equal(resmon_monitor_get_phases(m, (resmon_phase *)(void *)raw, 3, min_stride), 3);
    const resmon_phase *second = (const resmon_phase *)(void *)(raw + min_stride);
    assert_int_equal(second->summary.struct_size, 160);
    assert_string_equal(second->name, "load");
    assert_int_equal(raw[3 * min_stride], 0xee);
    assert_int_equal(resmon_monitor_get_phases(m, ph, 1, min_stride - 8), -EINVAL);
    assert_int_equal(resmon_monitor_get_phases(m, NULL, 1, sizeof *ph), -EINVAL);
    assert_int_equal(resmon_monitor_get_phases(m, NULL, 0, 0), 3);

    /* JSON: an array of objects, each a whole summary that reads back. */
    int len = resmon_phases_to_json(ph, 3, sizeof *ph, NULL, 0);
    assert_true(len > 0);
    char *json = malloc((size_t)len + 1);
    assert_int_equal(resmon_phases_to_json(ph, 3, sizeof *ph, json, (size_t)len + 1), len);
    assert_true(json[0] == '[' && json[len - 1] == ']');
    assert_non_null(strstr(json, "{\"name\": \"\", \"start_sec\": 0.0, \"peak_rss_mb\": "));
    assert_non_null(strstr(json, "}, {\"name\": \"load\", \"start_sec\": "));
    char *compute = strstr(json, "{\"name\": \"compute\"");
    assert_non_null(compute);
    resmon_summary back;
    char err[256];
    assert_int_equal(resmon_summary_from_json(compute, strlen(compute) - 1, &back, sizeof back, err, sizeof err), 0);
    ASSERT_DOUBLE_EQ(back.duration_sec, ph[2].summary.duration_sec);
    ASSERT_DOUBLE_EQ(back.cpu_time_sec, ph[2].summary.cpu_time_sec);
    /* A summary document carrying "phases" still reads as a summary. */
    int slen = resmon_summary_to_json(&w, NULL, 0);
    size_t doc_cap = (size_t)slen + (size_t)len + 32;
    char *doc = malloc(doc_cap);
    resmon_summary_to_json(&w, doc, doc_cap);
    snprintf(doc + slen - 1, doc_cap - (size_t)slen + 1, ", \"phases\": %s}", json);
    assert_int_equal(resmon_summary_from_json(doc, strlen(doc), &back, sizeof back, err, sizeof err), 0);
    assert_int_equal(back.num_samples, w.num_samples);
    free(doc);
    free(json);
    resmon_monitor_free(m);
}

/* Marks in a tight loop: the window holds RESMON_MAX_PHASES phases, the
 * rest are refused, and memory stays bounded. */
/* A phase's totals (I/O, faults, switches: LAST-folded metrics) are its own,
 * not the window's so far: bytes written only in "write" count there and in
 * no later phase, and the phases' totals add up to the window's. */
static void phase_totals_are_the_phases_own(void **state)
{
    (void)state;
    resmon_options o = RESMON_OPTIONS_INIT;
    o.sample_interval_sec = 0.5;
    o.metrics = RESMON_METRIC_IO | RESMON_METRIC_FAULTS;
    resmon_monitor *m = test_monitor_new(&o);
    assert_non_null(m);
    assert_int_equal(resmon_monitor_start(m), 0);
    assert_int_equal(resmon_monitor_mark(m, "write"), 0);
    wait_for_phases(m, 2);
    int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    assert_true(fd >= 0);
    static char chunk[1 << 16];
    const size_t written = 64u << 20;
    for (size_t n = 0; n < written; n += sizeof chunk)
        assert_int_equal(write(fd, chunk, sizeof chunk), (ssize_t)sizeof chunk);
    close(fd);
    assert_int_equal(resmon_monitor_mark(m, "quiet"), 0);
    wait_for_phases(m, 3);
    assert_int_equal(resmon_monitor_stop(m), 0);

    resmon_summary w = test_summary(m);
    resmon_phase ph[4];
    assert_int_equal(resmon_monitor_get_phases(m, ph, 4, sizeof *ph), 3);
    assert_true(ph[1].summary.io_wchar >= (double)written);
    assert_true(ph[2].summary.io_wchar < (double)written / 64); /* the sampler's own few writes at most */
    assert_true(ph[2].summary.io_syscw < 1000);
    double sum_wchar = 0, sum_syscw = 0, sum_minflt = 0;
    for (int i = 0; i < 3; i++) {
        assert_true(ph[i].summary.io_wchar >= 0 && ph[i].summary.minor_faults >= 0);
        sum_wchar += ph[i].summary.io_wchar;
        sum_syscw += ph[i].summary.io_syscw;
        sum_minflt += ph[i].summary.minor_faults;
    }
    ASSERT_DOUBLE_EQ(sum_wchar, w.io_wchar);
    ASSERT_DOUBLE_EQ(sum_syscw, w.io_syscw);
    ASSERT_DOUBLE_EQ(sum_minflt, w.minor_faults);
    resmon_monitor_free(m);
}

static void marks_in_a_tight_loop_stay_bounded(void **state)
{
    (void)state;
    resmon_monitor *m = started(0.01);
    /* What an accepted mark costs its caller (the sampler takes each before
     * the next, so none is refused as waiting). */
    double accepted_ns = 0;
    int accepted = 0;
    for (int i = 0; i < 100; i++) {
        char name[16];
        snprintf(name, sizeof name, "step %d", i);
        double t0 = test_now();
        int rc = resmon_monitor_mark(m, name);
        accepted_ns += (test_now() - t0) * 1e9;
        assert_int_equal(rc, 0);
        accepted++;
        wait_for_phases(m, accepted + 1);
    }
    double rss_before = vm_rss_mb_of(0);
    long counts[3] = {0};
    double t0 = test_now();
    long loops = 1000000;
    for (long i = 0; i < loops; i++) {
        int rc = resmon_monitor_mark(m, "hot");
        assert_true(rc == 0 || rc == -ENOSPC || rc == -EAGAIN);
        counts[rc == 0 ? 0 : rc == -ENOSPC ? 1 : 2]++;
    }
    double loop_ns = (test_now() - t0) * 1e9 / (double)loops;
    /* On a busy machine the sampler may not have run during the loop (all
     * refused as waiting): mark on, letting it take them, until the table is
     * full -- the bound is the point, not how fast it is reached. */
    double deadline = test_now() + test_scaled(10.0);
    while (counts[1] == 0 && test_now() < deadline) {
        int rc = resmon_monitor_mark(m, "hot");
        assert_true(rc == 0 || rc == -ENOSPC || rc == -EAGAIN);
        counts[rc == 0 ? 0 : rc == -ENOSPC ? 1 : 2]++;
        if (rc == -EAGAIN)
            test_sleep(0.0002);
    }
    test_sleep(0.05);
    double rss_after = vm_rss_mb_of(0);
    assert_int_equal(resmon_monitor_stop(m), 0);
    ssize_t n = resmon_monitor_get_phases(m, NULL, 0, sizeof(resmon_phase));
    assert_true(n <= RESMON_MAX_PHASES);
    assert_int_equal(n, 101 + counts[0]);
    assert_true(counts[1] > 0);
    assert_true(rss_after - rss_before < 4.0 * SANITIZER_MEMORY_FACTOR);
    /* Once full, a mark is refused and the last phase runs on to the end. */
    assert_int_equal(accepted + 1 + counts[0], RESMON_MAX_PHASES);
    print_message("mark cost: %.0f ns accepted (incl. waking the sampler), %.0f ns in a tight loop "
                  "(%ld accepted, %ld refused full, %ld refused waiting); RSS %+.2f MiB over %ld marks\n",
                  accepted_ns / accepted, loop_ns, counts[0], counts[1], counts[2], rss_after - rss_before, loops);
    resmon_monitor_free(m);
}

/* Marks from another thread while readers copy: every copy is whole (TSan
 * and helgrind check the accesses). */
typedef struct racer {
    resmon_monitor *m;
    atomic_int stop;
} racer;

static void *marker(void *arg)
{
    racer *r = arg;
    for (int i = 0; i < 200 && !atomic_load(&r->stop); i++) {
        resmon_monitor_mark(r->m, i % 2 ? "odd" : "even");
        test_sleep(0.0005);
    }
    return NULL;
}

static void marks_race_readers(void **state)
{
    (void)state;
    racer r = {.m = started(0.001)};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, marker, &r), 0);
    static resmon_phase ph[RESMON_MAX_PHASES];
    for (int i = 0; i < 200; i++) {
        ssize_t n = resmon_monitor_get_phases(r.m, ph, RESMON_MAX_PHASES, sizeof *ph);
        assert_true(n >= 0 && n <= RESMON_MAX_PHASES);
        for (ssize_t k = 1; k < n; k++) {
            assert_true(strcmp(ph[k].name, "odd") == 0 || strcmp(ph[k].name, "even") == 0);
            assert_true(ph[k].start_sec >= ph[k - 1].start_sec);
            assert_true(ph[k].summary.num_samples >= 1);
        }
        char name[RESMON_PHASE_NAME_MAX];
        assert_true(resmon_monitor_phase(r.m, name, sizeof name) >= 0);
        test_sleep(0.0005);
    }
    atomic_store(&r.stop, 1);
    pthread_join(t, NULL);
    resmon_monitor_free(r.m);
}

/* A mark just before stop still makes its phase (of the final sample). */
static void mark_then_stop_keeps_the_phase(void **state)
{
    (void)state;
    resmon_monitor *m = started(10.0);
    assert_int_equal(resmon_monitor_mark(m, "last"), 0);
    assert_int_equal(resmon_monitor_stop(m), 0);
    resmon_phase ph[2];
    assert_int_equal(resmon_monitor_get_phases(m, ph, 2, sizeof *ph), 2);
    assert_string_equal(ph[1].name, "last");
    assert_true(ph[1].summary.num_samples >= 1);
    resmon_monitor_free(m);
}

/* Accepted means recorded (faults.md 34): 8 threads mark as fast as they
 * can while the window is stopped under them, 200 times over.  Each marker
 * marks until the window refuses it as closed (-EINVAL); the main thread
 * joins them all before the next start, so every mark that returned 0 was
 * made in this window, and each one is a phase of it -- exactly, a mark
 * queued while the window closed included. */
#define WINDOW_MARKERS 8

typedef struct window_marker {
    resmon_monitor *m;
    atomic_int *accepted;
} window_marker;

static void *mark_until_closed(void *arg)
{
    window_marker *w = arg;
    for (;;) {
        int rc = resmon_monitor_mark(w->m, "m");
        if (rc == 0)
            atomic_fetch_add(w->accepted, 1);
        else if (rc == -EINVAL)
            return NULL; /* the window is closed: no later mark can be accepted */
        else
            sched_yield(); /* -EAGAIN or -ENOSPC: refused, the sampler needs the CPU */
    }
}

static void accepted_marks_are_phases_in_every_window(void **state)
{
    (void)state;
    resmon_options o = RESMON_OPTIONS_INIT;
    o.sample_interval_sec = 0.001;
    resmon_monitor *m = test_monitor_new(&o);
    assert_non_null(m);
    static resmon_phase ph[RESMON_MAX_PHASES];
    for (int window = 0; window < 200; window++) {
        atomic_int accepted = 0;
        window_marker w = {m, &accepted};
        pthread_t threads[WINDOW_MARKERS];
        assert_int_equal(resmon_monitor_start(m), 0);
        for (int i = 0; i < WINDOW_MARKERS; i++)
            assert_int_equal(pthread_create(&threads[i], NULL, mark_until_closed, &w), 0);
        while (atomic_load(&accepted) == 0) /* stop while marks are flowing */
            sched_yield();
        assert_int_equal(resmon_monitor_stop(m), 0);
        for (int i = 0; i < WINDOW_MARKERS; i++)
            pthread_join(threads[i], NULL);
        ssize_t n = resmon_monitor_get_phases(m, ph, RESMON_MAX_PHASES, sizeof *ph);
        if (n != atomic_load(&accepted) + 1)
            print_error("window %d: accepted %d, %zd phases\n", window, atomic_load(&accepted), n);
        assert_int_equal(n, atomic_load(&accepted) + 1); /* + the unnamed first */
    }
    resmon_monitor_free(m);
}

/* A mark made from the sample callback while stop runs (the stop sample's
 * callback among them) returns 0 only when its phase is in the window. */
typedef struct stop_marker {
    resmon_monitor *m;
    atomic_int stopping;
    atomic_int accepted;
} stop_marker;

static void mark_while_stopping(const resmon_sample *s, void *user)
{
    (void)s;
    stop_marker *sm = user;
    if (atomic_load(&sm->stopping) && resmon_monitor_mark(sm->m, "at-stop") == 0)
        atomic_fetch_add(&sm->accepted, 1);
}

static void a_mark_from_the_stop_samples_callback_is_kept(void **state)
{
    (void)state;
    stop_marker sm = {0};
    resmon_options o = RESMON_OPTIONS_INIT;
    o.sample_interval_sec = 10.0; /* no slot's sample: the callbacks are the first sample's and the stop's */
    o.on_sample = mark_while_stopping;
    o.on_sample_user = &sm;
    sm.m = test_monitor_new(&o);
    assert_non_null(sm.m);
    assert_int_equal(resmon_monitor_start(sm.m), 0);
    atomic_store(&sm.stopping, 1);
    assert_int_equal(resmon_monitor_stop(sm.m), 0);
    int accepted = atomic_load(&sm.accepted);
    assert_true(accepted >= 1); /* the stop sample's callback, at least */
    static resmon_phase ph[RESMON_MAX_PHASES];
    assert_int_equal(resmon_monitor_get_phases(sm.m, ph, RESMON_MAX_PHASES, sizeof *ph), accepted + 1);
    assert_string_equal(ph[accepted].name, "at-stop");
    assert_int_equal(resmon_monitor_mark(sm.m, "after"), -EINVAL);
    resmon_monitor_free(sm.m);
}

/* A forked child has a copy of the monitor and none of its threads: a mark
 * there is in no window (the parent's phases never see it, and nothing in
 * the child samples), so it is refused, never 0 (attack 57b: it returned 0
 * and was a phase of nothing).  The parent's window goes on. */
static void a_mark_from_a_forked_child_is_refused(void **state)
{
    (void)state;
    resmon_monitor *m = started(10.0);
    int result[2];
    assert_int_equal(pipe(result), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        int rc = resmon_monitor_mark(m, "child");
        _exit(write(result[1], &rc, sizeof rc) == (ssize_t)sizeof rc ? 0 : 1);
    }
    close(result[1]);
    int rc = 1;
    assert_int_equal(read(result[0], &rc, sizeof rc), (ssize_t)sizeof rc);
    close(result[0]);
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_int_equal(rc, -EINVAL);
    assert_int_equal(resmon_monitor_mark(m, "parent"), 0);
    assert_int_equal(resmon_monitor_stop(m), 0);
    resmon_phase ph[3];
    assert_int_equal(resmon_monitor_get_phases(m, ph, 3, sizeof *ph), 2);
    assert_string_equal(ph[1].name, "parent");
    resmon_monitor_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(names_are_checked),
        cmocka_unit_test(phases_cut_the_window),
        cmocka_unit_test(phase_totals_are_the_phases_own),
        cmocka_unit_test(marks_in_a_tight_loop_stay_bounded),
        cmocka_unit_test(marks_race_readers),
        cmocka_unit_test(mark_then_stop_keeps_the_phase),
        cmocka_unit_test(accepted_marks_are_phases_in_every_window),
        cmocka_unit_test(a_mark_from_the_stop_samples_callback_is_kept),
        cmocka_unit_test(a_mark_from_a_forked_child_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
