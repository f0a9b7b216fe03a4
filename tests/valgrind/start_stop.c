/*
 * start_stop.c -- a short life of monitors for helgrind and drd to watch:
 * windows opened and closed, the summary and samples read from a second
 * thread while the sampler runs, a phase marked, a monitor freed while running.  Under
 * valgrind (tests/valgrind/run.sh) any race report not explained in
 * tests/valgrind/resmon.supp fails the test.
 */
#include <resmon.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_int reading = 1;

static void *read_while_running(void *arg)
{
    const resmon_monitor *m = arg;
    resmon_sample samples[8];
    while (atomic_load(&reading)) {
        resmon_summary s;
        resmon_monitor_get_summary(m, &s, sizeof s);
        resmon_monitor_get_samples(m, samples, 8, sizeof samples[0]);
        resmon_monitor_running(m);
        resmon_phase phases[4];
        char name[RESMON_PHASE_NAME_MAX];
        resmon_monitor_get_phases(m, phases, 4, sizeof phases[0]);
        resmon_monitor_phase(m, name, sizeof name);
    }
    return NULL;
}

int main(void)
{
    resmon_options opts = RESMON_OPTIONS_INIT;
    opts.sample_interval_sec = 0.001;
    opts.max_samples = 8;
    resmon_monitor *m;
    if (resmon_monitor_new(&m, &opts) != 0)
        return 1;
    pthread_t reader;
    if (pthread_create(&reader, NULL, read_while_running, m) != 0)
        return 1;
    for (int window = 0; window < 5; window++) {
        /* A mark from this thread while the sampler runs and the reader reads. */
        if (resmon_monitor_start(m) != 0 || resmon_monitor_mark(m, "phase") != 0 || resmon_monitor_stop(m) != 0) {
            fprintf(stderr, "start_stop: window %d failed\n", window);
            return 1;
        }
    }
    atomic_store(&reading, 0);
    pthread_join(reader, NULL);
    if (resmon_monitor_start(m) != 0) /* freed while running: free stops it first */
        return 1;
    resmon_monitor_free(m);
    return 0;
}
