/*
 * gpu_poller.c -- the GPU thread (see gpu_poller.h).
 */
#include "gpu_poller.h"
#include "gpu_reading.h"
#include "internal.h"

#include <errno.h>
#include <linux/futex.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

struct rm__gpu_poller {
    atomic_int refs;       /* the monitor's and the thread's */
    atomic_int stop_word;  /* futex: 1 = take a last reading and end */
    const resmon_gpu_profiler *gpu;
    uint64_t interval_ns;
    pthread_t thread;

    pthread_mutex_t lock;  /* guards what follows */
    pthread_cond_t changed; /* a reading arrived, or the thread ended */
    resmon_sample latest;
    double latest_energy_j;
    uint64_t latest_ns;
    uint64_t reading_count;
    int thread_done;
    pid_t *pids;
    size_t pid_count, pid_capacity;
};

static void release(rm__gpu_poller *p)
{
    if (atomic_fetch_sub(&p->refs, 1) != 1)
        return;
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->changed);
    free(p->pids);
    free(p);
}

static void *poller_main(void *arg)
{
    rm__gpu_poller *p = arg;
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    pid_t *pids = NULL;
    size_t pid_capacity = 0;
    uint64_t start_ns = rm__now_ns();
    for (uint64_t slot = 1;; slot++) {
        /* The pid list is copied so the GPU call runs without the lock. */
        size_t pid_count = 0;
        pthread_mutex_lock(&p->lock);
        if (p->pid_count > pid_capacity) {
            pid_t *grown = realloc(pids, p->pid_count * sizeof *grown);
            if (grown) {
                pids = grown;
                pid_capacity = p->pid_count;
            }
        }
        if (p->pid_count <= pid_capacity) {
            pid_count = p->pid_count;
            if (pid_count)
                memcpy(pids, p->pids, pid_count * sizeof *pids);
        }
        pthread_mutex_unlock(&p->lock);

        resmon_sample reading;
        double energy_j;
        rm__gpu_read_sample(p->gpu, pids, pid_count, &reading, &energy_j);
        uint64_t taken_ns = rm__now_ns();

        pthread_mutex_lock(&p->lock);
        p->latest = reading;
        p->latest_energy_j = energy_j;
        p->latest_ns = taken_ns;
        p->reading_count++;
        pthread_cond_broadcast(&p->changed);
        pthread_mutex_unlock(&p->lock);

        if (atomic_load(&p->stop_word))
            break; /* that was the last reading */
        uint64_t due_ns = start_ns + slot * p->interval_ns;
        if (due_ns < taken_ns) /* a slow call: skip to the next slot ahead */
            slot = (taken_ns - start_ns) / p->interval_ns, due_ns = start_ns + (slot + 1) * p->interval_ns;
        struct timespec due = {(time_t)(due_ns / 1000000000u), (long)(due_ns % 1000000000u)};
        while (!atomic_load(&p->stop_word) &&
               !(syscall(SYS_futex, &p->stop_word, FUTEX_WAIT_BITSET_PRIVATE, 0, &due, NULL,
                         FUTEX_BITSET_MATCH_ANY) < 0 && errno == ETIMEDOUT))
            ;
    }
    free(pids);
    pthread_mutex_lock(&p->lock);
    p->thread_done = 1;
    pthread_cond_broadcast(&p->changed);
    pthread_mutex_unlock(&p->lock);
    release(p);
    return NULL;
}

int rm__gpu_poller_start(rm__gpu_poller **out, const resmon_gpu_profiler *gpu, uint64_t interval_ns,
                         const pid_t *pids, size_t pid_count)
{
    rm__gpu_poller *p = calloc(1, sizeof *p);
    if (!p)
        return -ENOMEM;
    p->gpu = gpu;
    p->interval_ns = interval_ns;
    atomic_init(&p->refs, 2);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    int rc = pthread_cond_init(&p->changed, &attr);
    pthread_condattr_destroy(&attr);
    if (rc == 0 && (rc = pthread_mutex_init(&p->lock, NULL)) != 0)
        pthread_cond_destroy(&p->changed);
    if (rc == 0)
        rm__gpu_poller_set_pids(p, pids, pid_count);
    if (rc == 0 && (rc = pthread_create(&p->thread, NULL, poller_main, p)) != 0) {
        free(p->pids);
        pthread_mutex_destroy(&p->lock);
        pthread_cond_destroy(&p->changed);
    }
    if (rc != 0) {
        free(p);
        return -rc;
    }
    pthread_setname_np(p->thread, "resmon-gpu");
    *out = p;
    return 0;
}

static struct timespec deadline_after(uint64_t timeout_ns)
{
    uint64_t ns = rm__now_ns() + timeout_ns;
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    return ts;
}

void rm__gpu_poller_wait_first(rm__gpu_poller *p, uint64_t timeout_ns)
{
    struct timespec deadline = deadline_after(timeout_ns);
    pthread_mutex_lock(&p->lock);
    while (p->reading_count == 0 && pthread_cond_timedwait(&p->changed, &p->lock, &deadline) != ETIMEDOUT)
        ;
    pthread_mutex_unlock(&p->lock);
}

void rm__gpu_poller_set_pids(rm__gpu_poller *p, const pid_t *pids, size_t count)
{
    pthread_mutex_lock(&p->lock);
    if (count > p->pid_capacity) {
        pid_t *grown = realloc(p->pids, count * sizeof *grown);
        if (!grown) {
            pthread_mutex_unlock(&p->lock);
            return; /* keep the previous list */
        }
        p->pids = grown;
        p->pid_capacity = count;
    }
    if (count)
        memcpy(p->pids, pids, count * sizeof *pids);
    p->pid_count = count;
    pthread_mutex_unlock(&p->lock);
}

void rm__gpu_poller_latest(rm__gpu_poller *p, uint64_t now_ns, resmon_sample *s, double *energy_j)
{
    pthread_mutex_lock(&p->lock);
    int fresh = p->reading_count > 0 && now_ns <= p->latest_ns + p->interval_ns + p->interval_ns / 2;
    if (fresh) {
        s->gpu_util = p->latest.gpu_util;
        s->gpu_mem_mb = p->latest.gpu_mem_mb;
        s->gpu_clock_mhz = p->latest.gpu_clock_mhz;
        s->gpu_power_w = p->latest.gpu_power_w;
        s->gpu_proc_mem_mb = p->latest.gpu_proc_mem_mb;
        *energy_j = p->latest_energy_j;
    }
    pthread_mutex_unlock(&p->lock);
    if (!fresh) {
        rm__gpu_clear_sample(s);
        *energy_j = NAN;
    }
}

void rm__gpu_poller_finish(rm__gpu_poller *p, uint64_t timeout_ns)
{
    atomic_store(&p->stop_word, 1);
    syscall(SYS_futex, &p->stop_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    struct timespec deadline = deadline_after(timeout_ns);
    pthread_mutex_lock(&p->lock);
    while (!p->thread_done && pthread_cond_timedwait(&p->changed, &p->lock, &deadline) != ETIMEDOUT)
        ;
    int done = p->thread_done;
    pthread_mutex_unlock(&p->lock);
    if (done)
        pthread_join(p->thread, NULL);
    else
        pthread_detach(p->thread); /* stuck in a GPU call: it frees its share when it returns */
}

void rm__gpu_poller_release(rm__gpu_poller *p)
{
    if (p)
        release(p);
}
