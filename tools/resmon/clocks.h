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

/* `clock` minus CLOCK_MONOTONIC, seconds: of five tries (monotonic, clock,
 * monotonic), the one read closest together.  A thread preempted between
 * two plain reads shifted the offset by the time it waited: a summary's
 * start_time 31 ms off the samples file's first unix_time on a loaded
 * machine. */
static inline double clock_minus_monotonic_sec(clockid_t clock)
{
    double offset = 0.0, closest = 0.0;
    for (int i = 0; i < 5; i++) {
        double before = clock_monotonic_sec(), at = clock_sec(clock), after = clock_monotonic_sec();
        if (i == 0 || after - before < closest) {
            closest = after - before;
            offset = at - (before + (after - before) / 2);
        }
    }
    return offset;
}

#endif
