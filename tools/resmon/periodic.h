/*
 * periodic.h -- a thread that does one job on a period until stopped (the
 * exporters' textfile writes and pushes: each destination has its own, so
 * a hung Pushgateway never delays the textfile).
 */
#ifndef RESMON_PERIODIC_H
#define RESMON_PERIODIC_H

#include <pthread.h>

typedef struct periodic {
    double period_sec;
    void (*work)(void *user);
    void *user;
    pthread_mutex_t lock; /* guards stopping */
    pthread_cond_t wake;  /* stopping was set */
    int stopping;
    pthread_t thread;
    int started;
} periodic;

/* Starts a thread named name (at most 15 bytes) that calls work(user) every
 * period_sec, the first one period after the start; the period counts from
 * the end of the previous call, so a slow one is never followed by a burst.
 * 0, or -errno (nothing started; p needs no periodic_join). */
int periodic_start(periodic *p, double period_sec, void (*work)(void *user), void *user, const char *name);
/* Asks the thread to stop: it does no further work once the call in
 * progress (if any) returns.  Accepts a periodic never started. */
void periodic_stop(periodic *p);
/* Stops (if not yet asked), waits for the thread and frees what it held.
 * Accepts a periodic never started, and one joined already. */
void periodic_join(periodic *p);

#endif
