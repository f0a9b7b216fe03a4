/*
 * monitor.c -- resmon_monitor: the sampler thread and the window's lifecycle.
 *
 * Readers (samples, summary, exposition, running) never take a lock and
 * never make the sampler wait, however long their copy: the sampler
 * publishes each sample into the store (sample_store.h: chunks that never
 * move, a written count readers check their copy against) and into the
 * running summary under a sequence lock (seqlock.h), which it never waits
 * for.  Start takes the window's first sample on the caller's thread, then
 * starts the sampler, so it never waits for a new thread to be scheduled
 * (milliseconds on a loaded machine).  Between samples the sampler sleeps on the stop word until the
 * next slot of the schedule (start + k * interval, which never drifts; see
 * futex.h), so stop wakes it at once.
 */
#include "cgroup.h"
#include "tree_totals.h"
#include "fork_generation.h"
#include "futex.h"
#include "gpu_poller.h"
#include "gpu_reading.h"
#include "internal.h"
#include "phases.h"
#include "probe.h"
#include "process_list.h"
#include "procfs.h"
#include "rapl.h"
#include "sample_store.h"
#include "seqlock.h"
#include "struct_size.h"
#include "summary.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>
#include <sys/prctl.h>
#include <unistd.h>

#define DEFAULT_INTERVAL_SEC 0.1
/* GPU readings default to the sample interval, but no faster than 50 Hz:
 * NVML's own counters refresh every 1/6 s to 1 s, and its calls take a
 * global driver lock that frequent polling turns into stutter elsewhere. */
#define DEFAULT_MIN_GPU_INTERVAL_SEC 0.02
#define INITIAL_SAMPLE_CAPACITY 1024
/* The longest a window's edges wait for a GPU reading, and resmon_monitor_free
 * for a GPU call in flight when the profiler has a release hook. */
#define MAX_GPU_WAIT_NS 200000000u
/* 0.3, the first layout with struct_size: the smallest a caller may pass. */
#define OPTIONS_MIN_SIZE RM__SIZE_THROUGH(resmon_options, gpu_interval_sec)
#define PROFILER_MIN_SIZE RM__SIZE_THROUGH(resmon_gpu_profiler, release)
#define STOP_BIT 1 /* in stop_word; the bits above count marks' wake-ups */
#define MARK_WAKE 2
/* walk_state: who owns the probe (src/README.md, "A wide tree's walk off the
 * sampler thread").  IDLE: the sampler; ASKED: the walker (a walk is asked or
 * runs); POSTED: the sampler again, the walk's result waiting in post.
 * WALK_QUIT, or'd in by free, ends the walker. */
enum { WALK_IDLE = 0, WALK_ASKED = 1, WALK_POSTED = 2, WALK_QUIT = 4 };

/* A walk on the walker thread, as the sampler would have taken it. */
typedef struct walk_post {
    rm__probe_reading reading;
    int rc;                 /* rm__probe_read's */
    uint64_t at_ns;         /* CLOCK_MONOTONIC at the walk's start */
    uint64_t cost_ns;       /* the walker's own CPU for it (never 0) */
    uint64_t pending_ns, counted_ns, discovered_ns; /* rm__probe_cpu_pending / _counted / _discovered after it */
} walk_post;

/* A sample with what the summary needs beside it. */
typedef struct taken_sample {
    resmon_sample sample;
    double cpu_sec;     /* CPU time since the previous sample */
    int short_interval; /* taken under half an interval after the previous */
    double energy_j;    /* the GPU energy counter; NAN without one */
    int at_mark;        /* taken because a mark asked: opens its phase */
} taken_sample;

struct resmon_monitor {
    resmon_options opts;
    uint64_t interval_ns;
    char *proc_root; /* RESMON_PROC_ROOT as it was at creation */

    /* What readers see.  One writer at a time -- the sampler, or the owner
     * in start while no sampler runs -- and published brackets every change
     * of acc and of the store's latest sample together, so that a snapshot
     * of both is of one sample (rm__monitor_snapshot). */
    rm__seqlock published;
    rm__sample_store store;
    rm__summary_acc acc;
    atomic_int window_open;

    /* stop -> sampler: set to 1 and futex-woken by stop.  A mark adds
     * MARK_WAKE and wakes it too (the sampler takes the mark's sample). */
    atomic_int stop_word;
    rm__phases phases; /* resmon_monitor_mark (phases.h) */
    /* The fork generation of the process the open window samples in (set
     * by start before window_open): a forked child's copy of the monitor
     * has no sampler, and a mark there would be accepted into no window. */
    atomic_uint window_fork_generation;
    /* Tree mode: the window's per-process records, written by the sampler
     * (through the probe) and read once window_open is 0: a reader's
     * acquire of it sees them complete.  -ENOTSUP: one process, none kept. */
    rm__process_list processes;
    int processes_rc;

    /* Touched only by start/stop/free (the owner's thread) and, while it
     * runs, the sampler thread (probe, previous reading). */
    int thread_alive;
    pthread_t thread;
    rm__probe *probe;
    uint64_t previous_ns;
    rm__sysfs sysfs; /* read once by resmon_monitor_new: RAPL opens on the sampler thread */
    rm__rapl rapl;
    uint64_t rapl_read_ns;
    rm__gpu_poller *gpu; /* with a GPU profiler: for the monitor's whole life */
    int gpu_in_window;   /* the GPU thread reads for the open window */
    unsigned gpu_pid_generation; /* the probe's pid set the GPU thread has */
    uint64_t gpu_interval_ns;
    char *cgroup_path; /* resmon_options.cgroup_path, copied; NULL without one */
    rm__cgroup cgroup; /* open while a window is (dirfd -1 otherwise) */
    /* A wide tree in its own leaf: its CPU from the leaf, the walk at its
     * own cadence (tree_totals.h); held, the latest walk's reading, which a
     * sample between walks repeats (RSS, process count). */
    rm__tree_totals totals;
    rm__probe_reading held;
    size_t prefill; /* rm__monitor_prefill: copies of the first sample kept at each start */
    void (*walk_hook)(void *); /* rm__monitor_walk_hook */
    void *walk_hook_arg;
    int walk_every_sample; /* rm__monitor_walk_every_sample */
    /* The walker thread, "resmon-walk" (for the monitor's life once a
     * window could engage): an engaged window's walks, never its first or
     * last reading.  walk_state hands the probe over (release/acquire, no
     * lock); post is the walker's between ASKED and POSTED, the sampler's
     * otherwise.  walk_in_flight: the sampler asked and has not taken the
     * result (it touches no probe then); held_groups: the metric groups as
     * of the ask (the groups change only by a walk). */
    int walker_alive;
    pid_t walker_pid; /* the process it runs in: a forked child has no walker ... */
    unsigned walker_fork_generation; /* ... told by this too: a pid comes back (fork_generation.h) */
    pthread_t walker;
    atomic_int walk_state;
    walk_post post;
    int walk_in_flight;
    resmon_sample held_groups;
    long online_cpus; /* the probe's, read at start (a constant) */
    uint64_t cpu_excess_ns; /* CPU beyond the latest sample's rate, carried to the next (sample_cpu) */
    /* No metric group, no cgroup and no GPU thread in this window: after its
     * first sample only the base fields (timestamp, CPU, RSS) change, so a
     * sample writes only those and keeps the rest of the sampler's
     * taken_sample (all NAN) as the first sample left it. */
    int base_only;
    /* The window's first sample, taken by start before the sampler thread
     * exists; the thread's loop then overwrites it sample by sample. */
    taken_sample first;
    int first_ended; /* the target had ended at the first sample (RM__PROBE_ENDED) */
    int last_sample; /* window_end's sample: everything carried is handed out */
};

/* Copies the caller's options (and the profiler table they name) in the
 * library's own layout and checks them. */
static int copy_options(resmon_options *o, resmon_gpu_profiler *profiler, const resmon_options *opts)
{
    memset(profiler, 0, sizeof *profiler);
    if (!opts) {
        memset(o, 0, sizeof *o);
        o->struct_size = sizeof *o;
        return 0;
    }
    int rc = rm__copy_struct_in(o, sizeof *o, opts, opts->struct_size, OPTIONS_MIN_SIZE);
    if (rc == 0 && o->gpu_profiler) {
        rc = rm__copy_struct_in(profiler, sizeof *profiler, o->gpu_profiler, o->gpu_profiler->struct_size,
                                PROFILER_MIN_SIZE);
        o->gpu_profiler = profiler;
    }
    if (rc < 0)
        return rc;
    o->struct_size = sizeof *o;
    if (!isfinite(o->sample_interval_sec) || o->sample_interval_sec < 0 || o->pid < 0 ||
        !isfinite(o->gpu_interval_sec) || o->gpu_interval_sec < 0 ||
        (o->gpu_interval_sec > 0 && o->gpu_interval_sec < 1e-4) || (o->metrics & ~RESMON_METRIC_ALL) ||
        !isfinite(o->memory_detail_interval_sec) || o->memory_detail_interval_sec < 0 ||
        (o->memory_detail_interval_sec > 0 && o->memory_detail_interval_sec < 1e-6) ||
        (o->keep_peak_mark && o->reset_peak_mark) || (o->cgroup_members && (!o->cgroup_path || o->pid)))
        return -EINVAL;
    return 0;
}

int resmon_monitor_new(resmon_monitor **out, const resmon_options *opts)
{
    if (!out)
        return -EINVAL;
    resmon_options o;
    resmon_gpu_profiler profiler;
    int rc = copy_options(&o, &profiler, opts);
    if (rc < 0)
        return rc;
    double interval = o.sample_interval_sec == 0 ? DEFAULT_INTERVAL_SEC : o.sample_interval_sec;
    if (interval < 1e-6 || interval > 1e6) /* below 1 us or above 11 days: surely a unit mistake */
        return -EINVAL;
    o.sample_interval_sec = interval;

    resmon_monitor *m = calloc(1, sizeof *m);
    if (!m)
        return -ENOMEM;
    m->opts = o;
    m->cgroup.dirfd = m->cgroup.current_fd = -1;
    m->totals.cpu.fd = m->totals.dir_fd = -1;
    m->processes_rc = o.include_children || o.cgroup_members ? 0 : -ENOTSUP; /* as the probe will say */
    rc = -ENOMEM;
    if (!(m->proc_root = strdup(rm__proc_root())))
        goto fail;
    if (o.cgroup_path && !(m->cgroup_path = strdup(o.cgroup_path)))
        goto fail;
    m->opts.cgroup_path = m->cgroup_path;
    rm__sysfs_from_env(&m->sysfs);
    m->interval_ns = (uint64_t)llround(interval * 1e9);
    double gpu_interval = o.gpu_interval_sec > 0 ? o.gpu_interval_sec : interval;
    if (o.gpu_interval_sec <= 0 && gpu_interval < DEFAULT_MIN_GPU_INTERVAL_SEC)
        gpu_interval = DEFAULT_MIN_GPU_INTERVAL_SEC;
    m->gpu_interval_ns = (uint64_t)llround(gpu_interval * 1e9);

    if ((rc = rm__phases_init(&m->phases, o.metrics != 0)) < 0)
        goto fail;
    if (o.gpu_profiler && (rc = rm__gpu_poller_new(&m->gpu, &profiler, opts->gpu_profiler, m->gpu_interval_ns,
                                                        o.gpu_interval_sec <= 0)) < 0)
        goto fail_phases;
    m->opts.gpu_profiler = NULL; /* the poller holds the table; this copy is not kept */
    rm__sample_store_init(&m->store, o.max_samples);
    if (!m->opts.metrics && !m->cgroup_path) /* every field after gpu_proc_mem_mb is NAN: keep 64 bytes a sample */
        rm__sample_store_keep_bytes(&m->store, RM__SIZE_THROUGH(resmon_sample, gpu_proc_mem_mb));
    rm__summary_acc_reset(&m->acc, m->opts.metrics != 0);
    *out = m;
    return 0;

fail_phases:
    rm__phases_free(&m->phases);
fail:
    free(m->cgroup_path);
    free(m->proc_root);
    free(m);
    return rc;
}

/* The monitor whose sampler thread this is (NULL on every other thread), so
 * that start/stop/free called from a sample callback can refuse instead of
 * joining their own thread. */
static _Thread_local const resmon_monitor *sampler_of_this_thread;

static int called_from_sampler(const resmon_monitor *m)
{
    return sampler_of_this_thread == m;
}

/* Waits for a sampler thread that has ended (by stop, or by itself when the
 * monitored process ended) and releases what its window used. */
static void reap_sampler(resmon_monitor *m)
{
    if (m->thread_alive) {
        pthread_join(m->thread, NULL);
        m->thread_alive = 0;
    }
    rm__probe_close(m->probe);
    m->probe = NULL;
    rm__cgroup_close(&m->cgroup);
    rm__tree_totals_close(&m->totals);
}

static void stop_walker(resmon_monitor *m);

void resmon_monitor_free(resmon_monitor *m)
{
    if (!m)
        return;
    if (called_from_sampler(m))
        return; /* cannot free the monitor under its own thread; see resmon.h */
    resmon_monitor_stop(m);
    reap_sampler(m);
    stop_walker(m);
    rm__gpu_poller_free(m->gpu, MAX_GPU_WAIT_NS);
    rm__sample_store_free(&m->store);
    rm__phases_free(&m->phases);
    free(m->cgroup_path);
    free(m->proc_root);
    free(m);
}

/* ---- the sampler thread ------------------------------------------------- */

/* How long a window's edges wait for a GPU reading: one GPU interval, at
 * least 20 ms and at most 200 ms, so that stop stays prompt even when a GPU
 * call hangs. */
static uint64_t gpu_wait_ns(const resmon_monitor *m)
{
    uint64_t wait = m->gpu_interval_ns;
    if (wait < 20000000u)
        wait = 20000000u;
    return wait > MAX_GPU_WAIT_NS ? MAX_GPU_WAIT_NS : wait;
}

/* CPU package energy: the RAPL counters are read with the first and last
 * sample and at most once a second between (often enough to see every wrap,
 * rarely enough to cost nothing per sample). */
#define RAPL_READ_INTERVAL_NS 1000000000u

/* ---- the walker thread (engaged windows only) --------------------------- */

static void *walker_main(void *arg)
{
    resmon_monitor *m = arg;
    for (;;) {
        int state = atomic_load_explicit(&m->walk_state, memory_order_acquire);
        if (state & WALK_QUIT)
            return NULL;
        if (state != WALK_ASKED) {
            rm__futex_wait_until(&m->walk_state, state, 0);
            continue;
        }
        /* The probe is this thread's until POSTED. */
        walk_post *w = &m->post;
        if (m->walk_hook)
            m->walk_hook(m->walk_hook_arg);
        struct timespec before, after;
        w->at_ns = rm__now_ns();
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &before);
        w->rc = rm__probe_read(m->probe, &w->reading);
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &after);
        w->cost_ns = rm__timespec_ns(&after) - rm__timespec_ns(&before);
        w->cost_ns += !w->cost_ns; /* measured: never "not measured" */
        w->pending_ns = rm__probe_cpu_pending(m->probe);
        w->counted_ns = rm__probe_cpu_counted(m->probe);
        w->discovered_ns = rm__probe_cpu_discovered(m->probe);
        atomic_fetch_add_explicit(&m->walk_state, WALK_POSTED - WALK_ASKED, memory_order_acq_rel);
        rm__futex_wake(&m->walk_state);
    }
}

/* Whether the walker runs in this process (not in the one this copy was
 * forked from). */
static int walker_is_ours(const resmon_monitor *m)
{
    return m->walker_alive && m->walker_pid == getpid() && m->walker_fork_generation == rm__fork_generation();
}

/* On the owner's thread (a new thread's TLS is malloc'd: see pages.h), with
 * every signal blocked.  Failing, the walks stay on the sampler. */
static void start_walker(resmon_monitor *m)
{
    if (walker_is_ours(m))
        return;
    m->walker_alive = 0; /* none, or the parent's before a fork: not in this process */
    atomic_store_explicit(&m->walk_state, WALK_IDLE, memory_order_relaxed);
    if (pthread_create(&m->walker, NULL, walker_main, m) == 0) {
        m->walker_alive = 1;
        m->walker_pid = getpid();
        m->walker_fork_generation = rm__fork_generation();
        pthread_setname_np(m->walker, "resmon-walk");
    }
}

static void stop_walker(resmon_monitor *m)
{
    if (!walker_is_ours(m))
        return; /* a forked child's copy of a monitor: the walker is the parent's */
    atomic_fetch_or_explicit(&m->walk_state, WALK_QUIT, memory_order_release);
    rm__futex_wake(&m->walk_state);
    pthread_join(m->walker, NULL);
    m->walker_alive = 0;
}

/* The sampler hands the probe to the walker: the latest walk's groups are
 * kept first, for the samples taken meanwhile. */
static void ask_walk(resmon_monitor *m)
{
    rm__tree_totals_walk_starts(&m->totals);
    rm__probe_fill_metrics(m->probe, &m->held_groups);
    m->walk_in_flight = 1;
    atomic_store_explicit(&m->walk_state, WALK_ASKED, memory_order_release);
    rm__futex_wake(&m->walk_state);
}

/* Hands a walk's figures to the totals (rm__tree_totals_walked); at the
 * switch to the leaf's total the probe is told the instant of its base,
 * the cutoff of what it counts as discovered (rm__probe_cpu_discovery_from).
 * On the sampler, the probe its own. */
static void totals_walked(resmon_monitor *m, uint64_t at_ns, unsigned process_count, uint64_t cost_ns,
                          uint64_t pending_ns, uint64_t counted_ns, uint64_t discovered_ns, int final)
{
    int was_engaged = m->totals.engaged;
    rm__tree_totals_walked(&m->totals, at_ns, process_count, cost_ns, pending_ns, counted_ns, discovered_ns, final);
    rm__probe_set_leaf_refresh(m->probe, m->totals.engaged); /* the leaf's memory, walks of their own cadence */
    if (!was_engaged && m->totals.engaged) {
        struct timespec boot;
        clock_gettime(CLOCK_BOOTTIME, &boot);
        rm__probe_cpu_discovery_from(m->probe, rm__timespec_ns(&boot));
    }
}

/* Waits until the walk in flight is posted: the probe is the sampler's
 * again (the result stays for take_walk).  One walk's time at most. */
static void wait_walk_posted(resmon_monitor *m)
{
    if (!m->walk_in_flight)
        return;
    int state;
    while ((state = atomic_load_explicit(&m->walk_state, memory_order_acquire)) == WALK_ASKED)
        rm__futex_wait_until(&m->walk_state, state, 0);
}

/* Takes the walker's result as the sampler would have taken its own walk:
 * the same figures for the cadence and the CPU carry, measured at the walk.
 * Returns its rc (*r filled unless negative). */
static int take_walk(resmon_monitor *m, rm__probe_reading *r)
{
    wait_walk_posted(m);
    m->walk_in_flight = 0;
    atomic_store_explicit(&m->walk_state, WALK_IDLE, memory_order_relaxed);
    const walk_post *w = &m->post;
    if (w->rc < 0)
        return w->rc;
    totals_walked(m, w->at_ns, w->reading.process_count, w->cost_ns, w->pending_ns, w->counted_ns,
                  w->discovered_ns, 0); /* the window's last reading is the sampler's own walk */
    m->held = *r = w->reading;
    return w->rc;
}

/* A sample's CPU for its rate (*rated_ns) and for the window's CPU time
 * (returned).  The rate shows at most the online CPUs busy for the interval
 * and the excess goes to the next sample: the probe's own bound counts from
 * its latest reading, which can be a walker's older than the interval (1182
 * % on 2 CPUs right after a tree left its leaf).  The window's last takes
 * what remains into the CPU time only, as it does the leaf's CPU from
 * before its switch that no reading counted (rm__tree_totals_take_unseen):
 * it was used, but not in this interval. */
static uint64_t sample_cpu(resmon_monitor *m, uint64_t cpu_ns, uint64_t elapsed_ns, int last, uint64_t *rated_ns)
{
    uint64_t give = cpu_ns + m->cpu_excess_ns;
    uint64_t most = m->online_cpus > 0 ? (uint64_t)m->online_cpus * elapsed_ns : give;
    *rated_ns = give < most ? give : most;
    m->cpu_excess_ns = last ? 0 : give - *rated_ns;
    return (last ? give : *rated_ns) + rm__tree_totals_take_unseen(&m->totals);
}

/* Takes one sample.  first: the window's first (CPU baseline, peak reset).
 * Returns 0, RM__PROBE_ENDED (a valid last sample) or -ESRCH (no sample). */
static int take_sample(resmon_monitor *m, int first, taken_sample *t)
{
    uint64_t timestamp_ns = rm__now_ns();
    rm__probe_reading r;
    int rc = 0, walked = 1, walk_here = 1;
    int engaged = m->totals.engaged;
    if (m->walk_in_flight) {
        /* The walker's: taken once posted (the window's last waits for it:
         * window_end drains first), else this sample holds. */
        walk_here = 0;
        int state = atomic_load_explicit(&m->walk_state, memory_order_acquire) & ~WALK_QUIT;
        if (m->last_sample || state == WALK_POSTED) {
            rc = take_walk(m, &r);
            if (rc < 0)
                return rc; /* gone: no reading */
            walk_here = m->last_sample && rc == 0; /* the last reading is the sampler's, whole */
        } else {
            r = m->held;
            walked = 0;
        }
    } else if (!first) {
        /* Engaged with a walker: a due walk of a wide tree goes to it and
         * this sample holds (one that shrank to WALK_EVERY_SAMPLE_MAX or fewer
         * walks here, every sample, as tree_totals.h has it).  Between walks
         * one read of the root's statm says whether it ended: a zombie or
         * gone root is walked here, at once, its end read whole. */
        int async = engaged && m->walker_alive && !m->last_sample && m->held.process_count > WALK_EVERY_SAMPLE_MAX;
        int due = m->walk_every_sample || rm__tree_totals_walk_due(&m->totals, timestamp_ns);
        walk_here = (due && !async) || !rm__probe_root_running(m->probe);
        if (!walk_here) {
            if (due)
                ask_walk(m);
            r = m->held;
            walked = 0;
        }
    }
    if (walk_here) {
        int measure = !first && rm__tree_totals_measures(&m->totals, m->held.process_count);
        struct timespec before = {0}, after = {0};
        if (engaged && !first && !m->last_sample && m->walk_hook)
            m->walk_hook(m->walk_hook_arg);
        if (measure)
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &before);
        rm__tree_totals_walk_starts(&m->totals);
        rc = first ? rm__probe_begin(m->probe, &r) : rm__probe_read(m->probe, &r);
        if (rc < 0)
            return rc; /* gone: no reading */
        if (first)
            rm__tree_totals_begin(&m->totals); /* after the probe's base: never ahead of it */
        uint64_t cost_ns = 0;
        if (measure) {
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &after);
            cost_ns = rm__timespec_ns(&after) - rm__timespec_ns(&before);
            cost_ns += !cost_ns; /* measured: never "not measured" */
        }
        if (!first)
            totals_walked(m, timestamp_ns, r.process_count, cost_ns, rm__probe_cpu_pending(m->probe),
                          rm__probe_cpu_counted(m->probe), rm__probe_cpu_discovered(m->probe),
                          rc == RM__PROBE_ENDED || m->last_sample);
        m->held = r;
        walked = 1;
    }
    if (engaged && !first) /* the probe's CPU (handed out by its reading, if any) is not the sample's */
        r.cpu_ns = rm__tree_totals_cpu(&m->totals, timestamp_ns - m->previous_ns, m->online_cpus,
                                       rc == RM__PROBE_ENDED || m->last_sample);
    if (engaged && !m->totals.engaged) { /* the tree left the leaf: the probe carries what the total missed */
        uint64_t handed = rm__tree_totals_handed(&m->totals), counted = rm__probe_cpu_counted(m->probe);
        if ((rc == RM__PROBE_ENDED || m->last_sample) && counted > handed) {
            r.cpu_ns += counted - handed; /* the window's last: no reading after to carry it */
            handed = counted;
        }
        rm__probe_cpu_rebase(m->probe, handed); /* the refresh went back to 10 s in totals_walked */
    }
    resmon_sample *s = &t->sample;
    t->at_mark = 0;
    s->timestamp = (double)timestamp_ns * 1e-9;
    s->rss_mb = (double)r.rss_bytes / RM__BYTES_PER_MIB;
    s->cpu_percent = 0.0;
    t->cpu_sec = 0.0; /* the first sample has no interval */
    if (first) {
        m->cpu_excess_ns = 0;
    } else {
        uint64_t elapsed_ns = timestamp_ns > m->previous_ns ? timestamp_ns - m->previous_ns : 0, rated_ns;
        t->cpu_sec = (double)sample_cpu(m, r.cpu_ns, elapsed_ns, rc == RM__PROBE_ENDED || m->last_sample, &rated_ns) * 1e-9;
        if (elapsed_ns)
            s->cpu_percent = 100.0 * (double)rated_ns / (double)elapsed_ns;
    }
    t->short_interval = !first && timestamp_ns - m->previous_ns < m->interval_ns / 2;
    m->previous_ns = timestamp_ns;
    if (m->rapl.zone_count && (first || timestamp_ns - m->rapl_read_ns >= RAPL_READ_INTERVAL_NS)) {
        rm__rapl_read(&m->rapl);
        m->rapl_read_ns = timestamp_ns;
    }
    if (!first && m->base_only)
        return rc; /* the rest of t was filled by the window's first sample and stays (base_only) */
    if (m->walk_in_flight)
        rm__probe_copy_metrics(&m->held_groups, s); /* the probe is the walker's */
    else
        rm__probe_fill_metrics(m->probe, s);
    unsigned listed, threads;
    if (!walked && !isnan(s->nprocs) &&
        rm__tree_totals_process_count(&m->totals, timestamp_ns, &listed, &threads) == 0) {
        s->nprocs = listed; /* between walks: the leaf's counts, not the latest walk's */
        s->nthreads = threads;
    }
    uint64_t cgroup_bytes;
    s->cgroup_mem_mb = m->cgroup.dirfd >= 0 && rm__cgroup_read_current(&m->cgroup, &cgroup_bytes) == 0
                           ? (double)cgroup_bytes / RM__BYTES_PER_MIB
                           : NAN;
    if (m->gpu_in_window) {
        /* The set changes only by a walk: brought up to date by the sample
         * that takes a walker's result (or walks), never while one runs. */
        unsigned generation = m->walk_in_flight ? m->gpu_pid_generation : rm__probe_generation(m->probe);
        if (rm__gpu_poller_wants_pids(m->gpu) && generation != m->gpu_pid_generation) {
            const pid_t *pids;
            size_t pid_count;
            rm__probe_pids(m->probe, &pids, &pid_count);
            rm__gpu_poller_set_pids(m->gpu, pids, pid_count);
            m->gpu_pid_generation = generation;
        }
        rm__gpu_poller_latest(m->gpu, timestamp_ns, s, &t->energy_j);
    } else {
        rm__gpu_clear_sample(s);
        t->energy_j = NAN;
    }
    return rc;
}

static int publish_exact_peak(resmon_monitor *m, int *reset_error);

/* The sample a mark asked for, already recorded: the exact peak and the
 * CPU energy as of now end the current phase, and the marks' phases begin. */
static void open_marked_phases(resmon_monitor *m, const taken_sample *t)
{
    int ignored_reset_error;
    wait_walk_posted(m); /* the marks are the probe's: a phase's edge waits for a walk in flight */
    publish_exact_peak(m, &ignored_reset_error);
    if (m->rapl.zone_count)
        rm__rapl_read(&m->rapl);
    rm__seqlock_write_begin(&m->published);
    rm__phases_open(&m->phases, &m->acc, &t->sample, t->energy_j, m->rapl.zone_count ? m->rapl.total_j : NAN, 0);
    rm__seqlock_write_end(&m->published);
}

/* Keeps the sample and adds it to the summary, for readers to see at once.
 * When the store cannot grow, the sample is still counted in the summary. */
static void record(resmon_monitor *m, const taken_sample *t)
{
    rm__seqlock_write_begin(&m->published);
    rm__sample_store_push(&m->store, &t->sample);
    if (m->base_only) { /* a NAN tail and no energy: only the base fields to fold */
        rm__summary_acc_add_base(&m->acc, &t->sample, t->cpu_sec, t->short_interval);
    } else {
        rm__summary_acc_add(&m->acc, &t->sample, t->cpu_sec, t->short_interval);
        rm__summary_acc_add_energy(&m->acc, t->energy_j);
    }
    rm__phases_add(&m->phases, &t->sample, t->cpu_sec, t->short_interval, t->energy_j);
    rm__seqlock_write_end(&m->published);
    if (t->at_mark)
        open_marked_phases(m, t);
}

static void publish(resmon_monitor *m, const taken_sample *t)
{
    record(m, t);
    if (m->opts.on_sample)
        m->opts.on_sample(&t->sample, m->opts.on_sample_user);
}

/* Sleeps until deadline_ns (CLOCK_MONOTONIC), until stop sets the stop
 * word, or until a mark waits.  Returns 1 when stopping, 2 for a mark. */
static int wait_for_slot(resmon_monitor *m, uint64_t deadline_ns)
{
    int word;
    while (!((word = atomic_load_explicit(&m->stop_word, memory_order_acquire)) & STOP_BIT)) {
        if (rm__phases_pending(&m->phases))
            return 2;
        if (rm__futex_wait_until(&m->stop_word, word, deadline_ns))
            return 0;
    }
    return 1;
}

/* The window's first sample, with RAPL and the GPU thread set up first so it
 * has their readings; on start's thread, before the sampler thread exists.
 * Returns 0, RM__PROBE_ENDED (a valid sample, and the target has already
 * ended) or a negative errno (no sample: the window never opened; RAPL and
 * the GPU thread's window are closed again). */
static int window_begin(resmon_monitor *m, taken_sample *t)
{
    rm__rapl_open(&m->rapl, &m->sysfs); /* no zones: CPU energy stays unknown */
    m->rapl_read_ns = 0;
    m->gpu_in_window = 0;
    if (m->gpu) {
        const pid_t *pids;
        size_t pid_count;
        rm__probe_pids(m->probe, &pids, &pid_count);
        m->gpu_pid_generation = rm__probe_generation(m->probe);
        /* No GPU thread: a window without GPU readings beats none. */
        m->gpu_in_window = rm__gpu_poller_begin(m->gpu, pids, pid_count) == 0;
        if (m->gpu_in_window)
            rm__gpu_poller_wait_first(m->gpu, gpu_wait_ns(m));
    }
    m->base_only = !m->opts.metrics && m->cgroup.dirfd < 0 && !m->gpu_in_window;
    int rc = take_sample(m, 1, t);
    if (rc >= 0) {
        record(m, t);
        for (size_t i = 0; i < m->prefill; i++) {
            rm__seqlock_write_begin(&m->published);
            rm__sample_store_push(&m->store, &t->sample);
            rm__seqlock_write_end(&m->published);
        }
    } else {
        rm__seqlock_write_begin(&m->published);
        rm__phases_refuse(&m->phases); /* no window: a mark made meanwhile is refused from now on */
        rm__seqlock_write_end(&m->published);
        atomic_store_explicit(&m->window_open, 0, memory_order_release);
        if (m->gpu_in_window)
            rm__gpu_poller_end(m->gpu, 0);
        m->gpu_in_window = 0;
        rm__rapl_close(&m->rapl);
    }
    return rc;
}

/* The exact peak so far, from the kernel's marks (VmHWM of every monitored
 * process), into the summary: a live gauge for a scraper while the window
 * runs, and its final value at the end.  Returns what rm__probe_peak_rss
 * returned. */
static int publish_exact_peak(resmon_monitor *m, int *reset_error)
{
    uint64_t peak_bytes;
    resmon_hwm_scope scope;
    int peak_rc = rm__probe_peak_rss(m->probe, &peak_bytes, &scope, reset_error);
    if (peak_rc == 0) {
        /* statm and VmHWM count slightly different pages; the exact peak of
         * one process is never reported below a sampled value.  A tree's
         * sampled peak is a sum over its processes, not any one's: its
         * processes' own samples already bound their marks (probe_peak.c),
         * and the largest of them is the figure. */
        double hwm = (double)peak_bytes / RM__BYTES_PER_MIB;
        int one_process = !m->opts.include_children && !m->opts.cgroup_members;
        /* A plain copy (only this thread stores to the accumulator), changed
         * and published whole: hwm_scope is not a whole 64-bit word.  At most
         * once a second, so its 72 word stores cost nothing. */
        rm__summary_acc next = m->acc;
        next.hwm_rss_mb = one_process && next.peak_rss_mb > hwm ? next.peak_rss_mb : hwm;
        next.hwm_scope = scope;
        rm__seqlock_write_begin(&m->published);
        rm__summary_acc_store(&m->acc, &next);
        rm__seqlock_write_end(&m->published);
    }
    return peak_rc;
}

/* While the window runs the marks are read at most once a second (one
 * status file per monitored process), so the live exact peak costs little. */
#define LIVE_PEAK_PERIOD_NS 1000000000ULL

/* Samples on schedule until stop, or until the target ends (a zombie or
 * gone: no process is left to sample).  Returns 1 when the target ended, its
 * last sample already taken.  t: the window's first sample, which the loop's
 * samples overwrite (with base_only, only their base fields). */
static int window_loop(resmon_monitor *m, taken_sample *t)
{
    uint64_t window_start_ns = m->previous_ns;
    uint64_t next_peak_ns = window_start_ns;
    for (uint64_t slot = 1;;) {
        int woke = wait_for_slot(m, window_start_ns + slot * m->interval_ns);
        if (woke == 1)
            return 0;
        int rc = take_sample(m, 0, t);
        if (rc < 0)
            return 1;
        t->at_mark = woke == 2;
        publish(m, t);
        if (rc == RM__PROBE_ENDED)
            return 1;
        if (woke == 2)
            continue; /* a mark's sample, between slots: the slot is still ahead */
        /* The sample's own timestamp: no clock read; the marks are the
         * probe's, so not while the walker has it (tried again next sample). */
        if (m->previous_ns >= next_peak_ns && !m->walk_in_flight) {
            int ignored_reset_error;
            publish_exact_peak(m, &ignored_reset_error);
            next_peak_ns = m->previous_ns + LIVE_PEAK_PERIOD_NS;
        }

        /* Next slot: the first one still ahead.  Slots that passed while this
         * sample (or a slow callback) ran are counted, not made up in a burst. */
        uint64_t elapsed_ns = rm__now_ns() - window_start_ns;
        uint64_t next_slot = elapsed_ns / m->interval_ns + 1;
        if (next_slot > slot + 1) {
            rm__seqlock_write_begin(&m->published);
            rm__summary_acc_add_skipped(&m->acc, next_slot - slot - 1);
            rm__seqlock_write_end(&m->published);
        } else {
            next_slot = slot + 1;
        }
        slot = next_slot;
    }
}

/* The kernel's peak, never below a sampled value (the sampled one stands
 * where the kernel has no peak to give). */
static void store_cgroup_end(rm__summary_acc *acc, const rm__cgroup_end *end)
{
    if (!isnan(end->peak_mb) && !(end->peak_mb <= acc->cgroup_peak_mb))
        acc->cgroup_peak_mb = end->peak_mb; /* NAN (no memory.peak before Linux 5.19) never hides the sampled */
    acc->cgroup_oom_kills = end->oom_kills;
    acc->cgroup_throttled_sec = end->throttled_sec;
    acc->cgroup_nr_throttled = end->nr_throttled;
    acc->cgroup_io_read_bytes = end->io_read_bytes;
    acc->cgroup_io_write_bytes = end->io_write_bytes;
}

/* The window's last sample -- taken at stop, however soon after start, so
 * that every window has two edges and duration_sec is the real one -- then
 * the exact peak and the energy, and the GPU thread goes back to sleep.  A
 * target that ended by itself already has its last sample (m->first, which
 * the loop overwrote sample by sample). */
static void window_end(resmon_monitor *m, int target_ended)
{
    taken_sample t;
    const taken_sample *last = &m->first;
    m->base_only = 0; /* the stop's sample is filled whole */
    if (m->gpu_in_window) /* a last GPU reading for the last sample, if the GPU answers in time */
        rm__gpu_poller_end(m->gpu, gpu_wait_ns(m));
    wait_walk_posted(m); /* the probe is the sampler's again; its result is taken by the last sample */
    if (!target_ended)
        rm__probe_end_window(m->probe); /* the stop's sample carries no CPU forward */
    m->last_sample = 1;
    if (!target_ended && take_sample(m, 0, &t) >= 0) {
        publish(m, &t); /* at_mark 0: the closing open below takes every mark queued until then */
        last = &t;
    }
    m->gpu_in_window = 0;
    int reset_error = 0;
    int peak_rc = publish_exact_peak(m, &reset_error);
    rm__probe_processes_end(m->probe); /* after the marks were read: those still running get theirs */
    if (m->rapl.zone_count)
        rm__rapl_read(&m->rapl);
    /* Marks queued until now -- before stop, from the stop sample's callback,
     * or while the target's end was being noticed -- open phases of 0 s at
     * the last sample; later ones are refused (-EINVAL).  Accepted means
     * recorded. */
    rm__seqlock_write_begin(&m->published);
    rm__phases_open(&m->phases, &m->acc, &last->sample, last->energy_j, m->rapl.zone_count ? m->rapl.total_j : NAN,
                    1);
    rm__seqlock_write_end(&m->published);
    rm__cgroup_end end;
    rm__cgroup_read_end(m->cgroup.dirfd >= 0 ? &m->cgroup : NULL, &end);

    rm__summary_acc final = m->acc; /* a plain copy: only this thread stores to it */
    store_cgroup_end(&final, &end);
    final.walk_interval_sec = rm__tree_totals_walk_interval_sec(&m->totals, m->previous_ns);
    final.hwm_error = peak_rc < 0 ? peak_rc : reset_error;
    if (m->rapl.zone_count)
        final.cpu_energy_j = m->rapl.total_j;
    rm__seqlock_write_begin(&m->published);
    rm__summary_acc_store(&m->acc, &final);
    rm__phases_end(&m->phases, &final, m->rapl.zone_count ? m->rapl.total_j : NAN);
    rm__seqlock_write_end(&m->published);
    /* After the final summary: a reader that sees the window closed sees it. */
    atomic_store_explicit(&m->window_open, 0, memory_order_release);
    rm__rapl_close(&m->rapl);
}

static void *sampler_main(void *arg)
{
    resmon_monitor *m = arg;
    sampler_of_this_thread = m;
    prctl(PR_SET_TIMERSLACK, RM__TIMER_SLACK_NS, 0, 0, 0);

    /* The first sample's callback, on this thread as every other's. */
    if (m->opts.on_sample)
        m->opts.on_sample(&m->first.sample, m->opts.on_sample_user);
    int target_ended = m->first_ended || window_loop(m, &m->first);
    window_end(m, target_ended);
    return NULL;
}

/* ---- lifecycle ----------------------------------------------------------- */

int resmon_monitor_start(resmon_monitor *m)
{
    if (!m)
        return -EINVAL;
    if (called_from_sampler(m))
        return -EDEADLK;
    if (atomic_load_explicit(&m->window_open, memory_order_acquire))
        return -EBUSY;
    reap_sampler(m); /* a window the target's exit ended by itself */

    int members = m->opts.cgroup_members != 0;
    int rc = rm__probe_open(&m->probe, m->opts.pid, m->opts.include_children || members, m->proc_root);
    if (rc == 0 && members && (rc = rm__probe_members_of_cgroup(m->probe, m->cgroup_path)) < 0) {
        rm__probe_close(m->probe); /* nothing to monitor: the cgroup cannot be listed */
        m->probe = NULL;
    }
    if (rc < 0)
        return rc;
    if (m->opts.keep_peak_mark)
        rm__probe_keep_peak_marks(m->probe);
    else if (!m->opts.reset_peak_mark)
        rm__probe_watch_peak_marks(m->probe); /* the default: write nothing to any process */
    rm__probe_collect(m->probe, m->opts.metrics, m->opts.memory_detail_interval_sec);
    /* A cgroup that cannot be opened leaves its figures unknown: the window
     * of the processes still opens. */
    int cgroup_rc = m->cgroup_path ? rm__cgroup_open(&m->cgroup, m->cgroup_path) : 0;
    int own_leaf = cgroup_rc == 0 && m->cgroup_path && m->opts.include_children && !members;
    rm__tree_totals_open(&m->totals, own_leaf ? m->cgroup_path : NULL, m->cgroup.version, m->opts.pid);
    memset(&m->held, 0, sizeof m->held);
    m->last_sample = 0;
    m->walk_in_flight = 0;
    m->online_cpus = rm__probe_online_cpus(m->probe);

    /* No sampler runs: this thread is the writer until pthread_create. */
    rm__seqlock_write_begin(&m->published);
    rm__sample_store_clear(&m->store);
    rm__sample_store_reserve(&m->store, INITIAL_SAMPLE_CAPACITY); /* else it grows as needed */
    rm__summary_acc_reset(&m->acc, m->opts.metrics != 0);
    rm__summary_acc fresh = m->acc; /* plain: this thread is the only writer; ints are stored as whole words */
    if (cgroup_rc < 0)
        fresh.cgroup_error = cgroup_rc;
    else
        fresh.cgroup_version = m->cgroup.version;
    rm__summary_acc_store(&m->acc, &fresh);
    rm__phases_reset(&m->phases);
    rm__seqlock_write_end(&m->published);
    atomic_store(&m->stop_word, 0);
    atomic_store_explicit(&m->window_fork_generation, rm__fork_generation(), memory_order_relaxed);
    atomic_store_explicit(&m->window_open, 1, memory_order_release);
    rm__process_list_reset(&m->processes); /* after window_open: readers are told -EBUSY */

    /* Signals meant for the program (SIGINT, SIGCHLD, ...) must never be
     * delivered to resmon's threads, so they start with all blocked; and
     * the first sample is taken with them blocked, as on the sampler (a
     * handler's EINTR never reaches its reads). */
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    if (m->gpu) /* failing: the window opens without GPU readings */
        rm__gpu_poller_start_thread(m->gpu);
    if (m->totals.cpu.fd >= 0) /* a window that could engage */
        start_walker(m);
    /* The first sample here, on this thread: this thread is the writer
     * until pthread_create, which publishes what it wrote to the sampler. */
    rc = window_begin(m, &m->first);
    if (rc < 0) { /* the window never opened */
        pthread_sigmask(SIG_SETMASK, &previous, NULL);
        reap_sampler(m);
        return rc;
    }
    m->first_ended = rc == RM__PROBE_ENDED;
    m->processes_rc = rm__probe_keep_processes(m->probe, &m->processes); /* from the first reading on */
    rc = pthread_create(&m->thread, NULL, sampler_main, m);
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    if (rc != 0) { /* no window after all: nothing of its first sample stays */
        if (m->gpu_in_window)
            rm__gpu_poller_end(m->gpu, 0);
        m->gpu_in_window = 0;
        rm__rapl_close(&m->rapl);
        rm__seqlock_write_begin(&m->published);
        rm__sample_store_clear(&m->store);
        rm__summary_acc_reset(&m->acc, m->opts.metrics != 0);
        rm__phases_refuse(&m->phases); /* the first sample went into the phases too */
        rm__seqlock_write_end(&m->published);
        atomic_store_explicit(&m->window_open, 0, memory_order_release);
        reap_sampler(m);
        return rc == EAGAIN ? -EAGAIN : -rc;
    }
    m->thread_alive = 1;
    pthread_setname_np(m->thread, "resmon-sampler");
    return 0;
}

int resmon_monitor_stop(resmon_monitor *m)
{
    if (!m)
        return -EINVAL;
    if (called_from_sampler(m))
        return -EDEADLK;
    if (!m->thread_alive)
        return 0;
    atomic_store_explicit(&m->stop_word, 1, memory_order_release);
    rm__futex_wake(&m->stop_word);
    reap_sampler(m);
    return 0;
}

int resmon_monitor_running(const resmon_monitor *m)
{
    return m ? atomic_load_explicit(&m->window_open, memory_order_acquire) : 0;
}

ssize_t resmon_monitor_get_samples(const resmon_monitor *m, resmon_sample *out, size_t cap, size_t stride)
{
    if (!m || (!out && cap) || (cap && stride < RM__SIZE_THROUGH(resmon_sample, gpu_proc_mem_mb)))
        return -EINVAL;
    return (ssize_t)rm__sample_store_copy_strided(&m->store, out, cap, stride);
}

/* A copy of the accumulator as of one published sample. */
static void load_summary(const resmon_monitor *m, rm__summary_acc *acc)
{
    unsigned seq;
    do {
        seq = rm__seqlock_read_begin(&m->published);
        rm__summary_acc_load(acc, &m->acc);
    } while (rm__seqlock_read_retry(&m->published, seq));
}

int resmon_monitor_get_summary(const resmon_monitor *m, resmon_summary *out, size_t out_size)
{
    if (!m || !out || out_size < RM__SIZE_THROUGH(resmon_summary, peak_gpu_proc_mem_mb))
        return -EINVAL;
    rm__summary_acc acc;
    load_summary(m, &acc);
    resmon_summary s = rm__summary_acc_result(&acc);
    s.struct_size = rm__out_size(out_size, sizeof s);
    rm__copy_struct_out(out, out_size, &s, sizeof s);
    return 0;
}

void rm__monitor_prefill(resmon_monitor *m, size_t n)
{
    m->prefill = n;
}

void rm__monitor_walk_hook(resmon_monitor *m, void (*hook)(void *), void *arg)
{
    m->walk_hook = hook;
    m->walk_hook_arg = arg;
}

void rm__monitor_walk_every_sample(resmon_monitor *m, int on)
{
    m->walk_every_sample = on;
}

uint64_t rm__monitor_wide_refresh_ns(const resmon_monitor *m)
{
    return m->probe ? rm__probe_wide_refresh_ns(m->probe) : 0;
}

int rm__monitor_snapshot(const resmon_monitor *m, resmon_summary *summary, resmon_sample *last)
{
    rm__summary_acc acc;
    int have_last;
    unsigned seq;
    do {
        seq = rm__seqlock_read_begin(&m->published);
        rm__summary_acc_load(&acc, &m->acc);
        have_last = rm__sample_store_latest(&m->store, last);
    } while (rm__seqlock_read_retry(&m->published, seq));
    *summary = rm__summary_acc_result(&acc);
    return have_last;
}

int resmon_monitor_mark(resmon_monitor *m, const char *name)
{
    if (!m || !atomic_load_explicit(&m->window_open, memory_order_acquire))
        return -EINVAL;
    /* A forked child's copy: its window samples in the parent, which never
     * sees this mark -- refused, not accepted into nothing.  By the fork
     * generation alone: a getpid() here made a refused mark 70 times dearer
     * (1.6 us against 22 ns on this VM); a raw clone(2) or _Fork() that
     * skips the atfork handlers is not told apart. */
    if (atomic_load_explicit(&m->window_fork_generation, memory_order_relaxed) != rm__fork_generation())
        return -EINVAL;
    int rc = rm__phases_request(&m->phases, name); /* checks the name */
    if (rc == 0) {
        atomic_fetch_add_explicit(&m->stop_word, MARK_WAKE, memory_order_release);
        rm__futex_wake(&m->stop_word);
    }
    return rc;
}

ssize_t resmon_monitor_get_phases(const resmon_monitor *m, resmon_phase *out, size_t cap, size_t stride)
{
    if (!m)
        return -EINVAL;
    return rm__phases_copy(&m->phases, &m->published, out, cap, stride);
}

int resmon_monitor_phase(const resmon_monitor *m, char *name, size_t cap)
{
    if (!m)
        return -EINVAL;
    return rm__phases_current(&m->phases, &m->published, name, cap);
}

ssize_t resmon_monitor_get_processes(const resmon_monitor *m, resmon_process *out, size_t cap, size_t stride,
                                     uint64_t *seen)
{
    if (!m || (!out && cap) || (cap && stride < sizeof(resmon_process)))
        return -EINVAL;
    if (atomic_load_explicit(&m->window_open, memory_order_acquire))
        return -EBUSY; /* the sampler writes them until the window closes */
    if (m->processes_rc < 0)
        return m->processes_rc;
    if (seen)
        *seen = m->processes.seen;
    return (ssize_t)rm__process_list_copy(&m->processes, out, cap, stride);
}
