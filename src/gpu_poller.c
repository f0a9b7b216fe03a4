/*
 * gpu_poller.c -- the GPU thread of a monitor (see gpu_poller.h).
 *
 * The thread and the monitor talk through fields guarded by one mutex, and a
 * futex word the monitor bumps with every request (open a window, close it,
 * quit) so that a sleeping thread wakes at once.  Each profiler callback runs
 * through a gate that marks the call in flight and refuses new calls once the
 * monitor is being freed; that is what lets resmon_monitor_free promise that
 * no callback starts after it returns.
 */
#include "gpu_poller.h"
#include "futex.h"
#include "gpu.h"
#include "gpu_profiler.h"
#include "gpu_reading.h"
#include "internal.h"
#include "pages.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

struct rm__gpu_poller {
    resmon_gpu_profiler table; /* the caller's, copied */
    resmon_gpu *own;           /* the resmon_gpu whose own table the caller passed, else NULL */
    uint64_t base_interval_ns; /* asked for, or the default */
    int adaptive;              /* the default: stretch to the read time */
    atomic_uint_fast64_t interval_ns; /* in force: base, or 2x the slowest recent reading */
    atomic_int refs;           /* the monitor's, and the thread's while it runs */
    atomic_int wake_word;      /* bumped by every request; the thread sleeps on it */
    rm__gpu_gate gate;
    pthread_t thread;

    pthread_mutex_t lock;      /* guards everything below */
    pthread_cond_t changed;    /* a reading arrived, a call returned, the thread ended */
    int thread_started, thread_done;
    int quit;                  /* the monitor is being freed: no new calls */
    int orphaned;              /* free gave up waiting: the thread releases the profiler */
    int in_call;
    unsigned window;           /* counts windows; readings carry the one they were taken for */
    int window_open, ending, final_done;
    rm__gpu_device_reading latest;
    uint64_t latest_ns;
    uint64_t window_readings;
    /* The monitored pids.  The monitor hands over a new list (next_pids);
     * the thread swaps it for the list it used, which it leaves in retired
     * for the monitor to free: the thread itself never allocates or frees.  They
     * come from pages.h, since set_pids runs on the sampler thread. */
    pid_t *next_pids, *thread_pids, *retired;
    size_t next_count, thread_count;
    int next_pending;
};

static void unref(rm__gpu_poller *p)
{
    if (atomic_fetch_sub(&p->refs, 1) != 1)
        return;
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->changed);
    rm__pages_free(p->next_pids);
    rm__pages_free(p->thread_pids);
    rm__pages_free(p->retired);
    free(p);
}

static void request(rm__gpu_poller *p)
{
    atomic_fetch_add(&p->wake_word, 1);
    rm__futex_wake(&p->wake_word);
}

static int gate_enter(rm__gpu_gate *gate)
{
    rm__gpu_poller *p = (rm__gpu_poller *)((char *)gate - offsetof(rm__gpu_poller, gate));
    pthread_mutex_lock(&p->lock);
    int allowed = !p->quit;
    p->in_call = allowed;
    pthread_mutex_unlock(&p->lock);
    return allowed;
}

static void gate_leave(rm__gpu_gate *gate)
{
    rm__gpu_poller *p = (rm__gpu_poller *)((char *)gate - offsetof(rm__gpu_poller, gate));
    pthread_mutex_lock(&p->lock);
    p->in_call = 0;
    if (p->quit)
        pthread_cond_broadcast(&p->changed);
    pthread_mutex_unlock(&p->lock);
}

static void release_profiler(rm__gpu_poller *p)
{
    if (p->table.release)
        p->table.release(p->table.ctx);
}

/* Stores a reading taken for window (dropped when that window has closed). */
static void publish(rm__gpu_poller *p, unsigned window, const rm__gpu_device_reading *reading, uint64_t taken_ns)
{
    pthread_mutex_lock(&p->lock);
    if (window == p->window && p->window_open) {
        p->latest = *reading;
        p->latest_ns = taken_ns;
        p->window_readings++;
        if (p->ending) { /* the reading the window's last sample waits for */
            p->window_open = 0;
            p->ending = 0;
            p->final_done = 1;
        }
        pthread_cond_broadcast(&p->changed);
    }
    pthread_mutex_unlock(&p->lock);
}

/* The default GPU interval follows what a reading costs: at least twice the
 * slowest recent reading (which decays by 1/8 per reading), so a profiler
 * whose reading takes 36 ms (8 GPUs, 4.5 ms per NVML process query) is read
 * every ~72 ms and each reading stays fresh until the next arrives, instead
 * of going stale before it (fresh means within 1.5 intervals).  It also keeps
 * the GPU thread, and the driver lock NVML calls take, idle at least half the
 * time.  An interval the caller chose is kept as it is.  When the interval
 * changes the schedule restarts at the start of the reading just taken, so
 * readings stay one interval apart. */
static uint64_t adapt_interval(rm__gpu_poller *p, uint64_t asked_ns, uint64_t taken_ns, uint64_t *start_ns,
                               uint64_t *slot)
{
    uint64_t current = atomic_load(&p->interval_ns);
    if (!p->adaptive)
        return current;
    uint64_t wanted = 2 * (taken_ns - asked_ns);
    uint64_t decayed = current - current / 8;
    uint64_t next = wanted > decayed ? wanted : decayed;
    if (next < p->base_interval_ns)
        next = p->base_interval_ns;
    if (next != current) {
        atomic_store(&p->interval_ns, next);
        *start_ns = asked_ns;
        *slot = 0;
    }
    return next;
}

static void *poller_main(void *arg)
{
    rm__gpu_poller *p = arg;
    prctl(PR_SET_TIMERSLACK, RM__TIMER_SLACK_NS, 0, 0, 0);
    unsigned schedule_window = 0;
    uint64_t start_ns = 0, slot = 0;
    for (;;) {
        int seen = atomic_load(&p->wake_word);
        pthread_mutex_lock(&p->lock);
        if (p->quit) {
            pthread_mutex_unlock(&p->lock);
            break;
        }
        int polling = p->window_open;
        unsigned window = p->window;
        if (p->next_pending && !p->retired) {
            p->retired = p->thread_pids;
            p->thread_pids = p->next_pids;
            p->thread_count = p->next_count;
            p->next_pids = NULL;
            p->next_pending = 0;
        }
        const pid_t *pids = p->thread_pids;
        size_t pid_count = p->thread_count;
        pthread_mutex_unlock(&p->lock);

        if (!polling) { /* between windows: sleep until the next request */
            rm__futex_wait_until(&p->wake_word, seen, 0);
            continue;
        }
        if (window != schedule_window) { /* a new window: its schedule starts now */
            schedule_window = window;
            start_ns = rm__now_ns();
            slot = 0;
        }
        rm__gpu_device_reading reading;
        uint64_t asked_ns = rm__now_ns();
        rm__gpu_read(&p->table, p->own, pids, pid_count, &reading, &p->gate);
        uint64_t taken_ns = rm__now_ns();
        uint64_t interval_ns = adapt_interval(p, asked_ns, taken_ns, &start_ns, &slot);
        publish(p, window, &reading, taken_ns);

        slot++;
        uint64_t due_ns = start_ns + slot * interval_ns;
        if (due_ns < taken_ns) { /* a slow call: skip to the next slot ahead */
            slot = (taken_ns - start_ns) / interval_ns + 1;
            due_ns = start_ns + slot * interval_ns;
        }
        /* Any request since `seen` ends the sleep at once. */
        while (atomic_load(&p->wake_word) == seen && !rm__futex_wait_until(&p->wake_word, seen, due_ns))
            ;
    }
    pthread_mutex_lock(&p->lock);
    p->thread_done = 1;
    int orphaned = p->orphaned;
    pthread_cond_broadcast(&p->changed);
    pthread_mutex_unlock(&p->lock);
    if (orphaned) /* free has returned: the owner learns here that it may let go */
        release_profiler(p);
    unref(p);
    return NULL;
}

int rm__gpu_poller_new(rm__gpu_poller **out, const resmon_gpu_profiler *table, const resmon_gpu_profiler *caller_table,
                       uint64_t interval_ns, int adaptive)
{
    rm__gpu_poller *p = calloc(1, sizeof *p);
    if (!p)
        return -ENOMEM;
    p->table = *table;
    p->own = rm__gpu_of_table(caller_table); /* by address, once: see gpu.h */
    p->base_interval_ns = interval_ns;
    p->adaptive = adaptive;
    atomic_init(&p->interval_ns, interval_ns);
    p->gate.enter = gate_enter;
    p->gate.leave = gate_leave;
    atomic_init(&p->refs, 1);
    atomic_init(&p->wake_word, 0);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    int rc = pthread_cond_init(&p->changed, &attr);
    pthread_condattr_destroy(&attr);
    if (rc == 0 && (rc = pthread_mutex_init(&p->lock, NULL)) != 0)
        pthread_cond_destroy(&p->changed);
    if (rc != 0) {
        free(p);
        return -rc;
    }
    if (p->table.retain)
        p->table.retain(p->table.ctx);
    *out = p;
    return 0;
}

int rm__gpu_poller_wants_pids(const rm__gpu_poller *p)
{
    return p->table.get_process_memory != NULL;
}

void rm__gpu_poller_set_pids(rm__gpu_poller *p, const pid_t *pids, size_t count)
{
    pid_t *copy = NULL;
    if (count) {
        copy = count <= SIZE_MAX / sizeof *copy ? rm__pages_alloc(count * sizeof *copy) : NULL;
        if (!copy)
            return; /* keep the previous list */
        memcpy(copy, pids, count * sizeof *copy);
    }
    pthread_mutex_lock(&p->lock);
    pid_t *unused = p->next_pids, *retired = p->retired;
    p->next_pids = copy;
    p->next_count = count;
    p->next_pending = 1;
    p->retired = NULL;
    pthread_mutex_unlock(&p->lock);
    rm__pages_free(unused);
    rm__pages_free(retired);
}

int rm__gpu_poller_start_thread(rm__gpu_poller *p)
{
    pthread_mutex_lock(&p->lock);
    int start_thread = !p->thread_started;
    p->thread_started = 1;
    pthread_mutex_unlock(&p->lock);
    if (!start_thread)
        return 0;
    atomic_fetch_add(&p->refs, 1); /* the thread's */
    int rc = pthread_create(&p->thread, NULL, poller_main, p);
    if (rc != 0) {
        atomic_fetch_sub(&p->refs, 1);
        pthread_mutex_lock(&p->lock);
        p->thread_started = 0;
        pthread_mutex_unlock(&p->lock);
        return -rc;
    }
    pthread_setname_np(p->thread, "resmon-gpu");
    return 0;
}

int rm__gpu_poller_begin(rm__gpu_poller *p, const pid_t *pids, size_t pid_count)
{
    rm__gpu_poller_set_pids(p, pids, pid_count);
    pthread_mutex_lock(&p->lock);
    int started = p->thread_started;
    if (started) {
        p->window++;
        p->window_open = 1;
        p->ending = 0;
        p->final_done = 0;
        p->window_readings = 0;
    }
    pthread_mutex_unlock(&p->lock);
    if (!started)
        return -EAGAIN;
    request(p);
    return 0;
}

void rm__gpu_poller_wait_first(rm__gpu_poller *p, uint64_t timeout_ns)
{
    struct timespec deadline = rm__timespec_from_ns(rm__now_ns() + timeout_ns);
    pthread_mutex_lock(&p->lock);
    while (p->window_readings == 0 && p->window_open &&
           pthread_cond_timedwait(&p->changed, &p->lock, &deadline) != ETIMEDOUT)
        ;
    pthread_mutex_unlock(&p->lock);
}

void rm__gpu_poller_latest(rm__gpu_poller *p, uint64_t now_ns, resmon_sample *s, double *energy_j)
{
    rm__gpu_device_reading reading;
    pthread_mutex_lock(&p->lock);
    uint64_t interval_ns = atomic_load(&p->interval_ns);
    int fresh = p->window_readings > 0 && now_ns <= p->latest_ns + interval_ns + interval_ns / 2;
    if (fresh)
        reading = p->latest;
    pid_t *retired = p->retired; /* freed here, off the GPU thread */
    p->retired = NULL;
    pthread_mutex_unlock(&p->lock);
    rm__pages_free(retired);
    if (!fresh)
        rm__gpu_reading_clear(&reading);
    rm__gpu_reading_to_sample(&reading, s, energy_j);
}

void rm__gpu_poller_end(rm__gpu_poller *p, uint64_t timeout_ns)
{
    pthread_mutex_lock(&p->lock);
    int open = p->window_open;
    if (open)
        p->ending = 1;
    pthread_mutex_unlock(&p->lock);
    if (!open)
        return;
    request(p);
    struct timespec deadline = rm__timespec_from_ns(rm__now_ns() + timeout_ns);
    pthread_mutex_lock(&p->lock);
    while (!p->final_done && pthread_cond_timedwait(&p->changed, &p->lock, &deadline) != ETIMEDOUT)
        ;
    if (!p->final_done) { /* a slow call: its reading will be dropped */
        p->window_open = 0;
        p->ending = 0;
    }
    pthread_mutex_unlock(&p->lock);
}

void rm__gpu_poller_free(rm__gpu_poller *p, uint64_t bounded_wait_ns)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->quit = 1;
    p->window_open = 0;
    int started = p->thread_started;
    pthread_mutex_unlock(&p->lock);
    if (!started) {
        release_profiler(p);
        unref(p);
        return;
    }
    request(p);
    pthread_mutex_lock(&p->lock);
    if (p->table.release) { /* the owner hears from release: the wait may end */
        struct timespec deadline = rm__timespec_from_ns(rm__now_ns() + bounded_wait_ns);
        while (!p->thread_done && pthread_cond_timedwait(&p->changed, &p->lock, &deadline) != ETIMEDOUT)
            ;
    } else { /* the owner frees its context when free returns: wait for the call */
        while (!p->thread_done)
            pthread_cond_wait(&p->changed, &p->lock);
    }
    int done = p->thread_done;
    if (!done)
        p->orphaned = 1; /* the thread releases the profiler when its call returns */
    pthread_mutex_unlock(&p->lock);
    if (done) {
        pthread_join(p->thread, NULL);
        release_profiler(p);
    } else {
        pthread_detach(p->thread);
    }
    unref(p);
}
