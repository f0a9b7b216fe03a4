/*
 * monitor_workload.c -- the smallest real use of libresmon.
 *
 * Monitors a small bundled workload (allocate and touch memory in steps,
 * spin two threads, free) at 100 Hz and prints its summary, as text and as
 * the seed's JSON.
 *
 *     monitor_workload [MEGABYTES]     (default 256)
 */
#define _POSIX_C_SOURCE 200809L
#include <resmon.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Written by busy loops; volatile so the compiler keeps them. */
static volatile unsigned long busy_sink;

static void spin_for(double seconds)
{
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    do {
        for (int i = 0; i < 10000; i++)
            busy_sink += (unsigned long)i;
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while ((double)(now.tv_sec - start.tv_sec) + (double)(now.tv_nsec - start.tv_nsec) * 1e-9 < seconds);
}

static void *spin_thread(void *arg)
{
    spin_for(*(const double *)arg);
    return NULL;
}

/* Grows memory in four steps, spins two threads, then frees it all. */
static int run_workload(size_t megabytes)
{
    char *blocks[4] = {0};
    for (int i = 0; i < 4; i++) {
        blocks[i] = malloc(megabytes / 4 * 1048576);
        if (!blocks[i])
            return -ENOMEM;
        memset(blocks[i], i + 1, megabytes / 4 * 1048576); /* touch: make it resident */
        spin_for(0.05);
    }
    double seconds = 0.2;
    pthread_t threads[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&threads[i], NULL, spin_thread, &seconds);
    for (int i = 0; i < 2; i++)
        pthread_join(threads[i], NULL);
    for (int i = 0; i < 4; i++)
        free(blocks[i]);
    return 0;
}

int main(int argc, char **argv)
{
    size_t megabytes = argc > 1 ? strtoul(argv[1], NULL, 10) : 256;
    resmon_options opts = RESMON_OPTIONS_INIT;
    opts.sample_interval_sec = 0.01;
    resmon_monitor *mon;
    int rc = resmon_monitor_new(&mon, &opts);
    if (rc < 0) {
        fprintf(stderr, "monitor_workload: %s\n", resmon_strerror(rc));
        return 1;
    }
    rc = resmon_monitor_start(mon);
    if (rc == 0)
        rc = run_workload(megabytes);
    resmon_monitor_stop(mon);
    if (rc < 0) {
        fprintf(stderr, "monitor_workload: %s\n", resmon_strerror(rc));
        resmon_monitor_free(mon);
        return 1;
    }
    resmon_summary s;
    resmon_monitor_get_summary(mon, &s, sizeof s);
    printf("resmon %s: %llu samples over %.3f s\n", resmon_version_string(),
           (unsigned long long)s.num_samples, s.duration_sec);
    printf("  CPU        mean %6.1f %%   peak %6.1f %%   %.3f s CPU time\n", s.mean_cpu_percent,
           s.peak_cpu_percent, s.cpu_time_sec);
    printf("  RSS        mean %6.1f MiB peak %6.1f MiB exact peak %.1f MiB (%s)\n", s.mean_rss_mb,
           s.peak_rss_mb, s.hwm_rss_mb,
           s.hwm_scope == RESMON_HWM_WINDOW ? "this window" : "process lifetime");
    printf("  growth     %+.1f MiB\n", s.memory_growth_mb);
    char json[1024];
    resmon_summary_to_json(&s, json, sizeof json);
    printf("%s\n", json);
    resmon_monitor_free(mon);
    return 0;
}
