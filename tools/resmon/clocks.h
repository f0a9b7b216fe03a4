/*
 * clocks.h -- the two clocks of a run: the realtime one for its start time
 * (ISO 8601 in the summary), the library's (monotonic, the clock of sample
 * timestamps) for its durations.
 */
#ifndef RESMON_CLOCKS_H
#define RESMON_CLOCKS_H

#include <time.h>

static inline double clock_sec(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline double clock_realtime_sec(void)
{
    return clock_sec(CLOCK_REALTIME);
}

static inline double clock_monotonic_sec(void)
{
    return clock_sec(CLOCK_MONOTONIC);
}

#endif
