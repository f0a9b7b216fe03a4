/*
 * periodic.c -- a thread that does one job on a period (see periodic.h).
 */
#include "periodic.h"

#include <errno.h>
#include <math.h>
#include <time.h>

static struct timespec deadline_after(double sec)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    double whole = floor(sec);
    ts.tv_sec += (time_t)whole;
    ts.tv_nsec += (long)((sec - whole) * 1e9);
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

static void *periodic_main(void *arg)
{
    periodic *p = arg;
    pthread_mutex_lock(&p->lock);
    while (!p->stopping) {
        struct timespec until = deadline_after(p->period_sec);
        int rc = 0;
        while (!p->stopping && rc != ETIMEDOUT)
            rc = pthread_cond_timedwait(&p->wake, &p->lock, &until);
        if (p->stopping)
            break;
        pthread_mutex_unlock(&p->lock); /* the work may take seconds (a push) */
        p->work(p->user);
        pthread_mutex_lock(&p->lock);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

int periodic_start(periodic *p, double period_sec, void (*work)(void *user), void *user, const char *name)
{
    *p = (periodic){.period_sec = period_sec, .work = work, .user = user};
    pthread_mutex_init(&p->lock, NULL);
    pthread_condattr_t attr; /* timed waits on the monotonic clock */
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&p->wake, &attr);
    pthread_condattr_destroy(&attr);
    int rc = pthread_create(&p->thread, NULL, periodic_main, p);
    if (rc != 0) {
        pthread_cond_destroy(&p->wake);
        pthread_mutex_destroy(&p->lock);
        return -rc;
    }
    p->started = 1;
    pthread_setname_np(p->thread, name); /* at most 15 bytes */
    return 0;
}

void periodic_stop(periodic *p)
{
    if (!p->started)
        return;
    pthread_mutex_lock(&p->lock);
    p->stopping = 1;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
}

void periodic_join(periodic *p)
{
    if (!p->started)
        return;
    periodic_stop(p);
    pthread_join(p->thread, NULL);
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->lock);
    p->started = 0;
}
