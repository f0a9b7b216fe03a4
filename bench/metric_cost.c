/*
 * metric_cost.c -- what each metric group (resmon_options.metrics) costs per
 * process per sample, printed as the Markdown table of BENCHMARKS.md.
 *
 *   resmon_metric_cost [--readings N] [--big-mib M]
 *       CPU microseconds per reading (rm__probe_read plus filling a sample's
 *       fields), best of 3 loops of N readings, for this process and for a
 *       child holding M MiB in 4 KiB pages (0: no such column).
 *   resmon_metric_cost --loop GROUP N [--big-mib M]
 *       only N readings with GROUP (a row name below), for
 *       bench/metric_cost_callgrind.sh: instruction counts are reproducible
 *       where timings on a shared machine are not.
 *
 * The time is the reading thread's CPU clock, which counts the kernel's work
 * for the /proc reads (smaps_rollup's page-table walk is almost all of it)
 * and not the time another program had the core.
 */
#include "probe.h"
#include "resmon.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PSS_EVERY_READING 1e-6 /* memory_detail_interval_sec below any reading's period */

typedef struct group_row {
    const char *name;  /* for --loop */
    const char *alias; /* for --loop too (the command's word), or NULL */
    char label[128];
    unsigned groups;
    double memory_detail_interval_sec; /* 0: the library's default, 0.5 s */
} group_row;

/* none, each group of the library's list (resmon_metric_group_info; PSS on
 * its 0.5 s schedule), MEMORY_DETAIL with PSS read every sample, all. */
#define ROW_MAX 32
static group_row rows[ROW_MAX];
static size_t ROW_COUNT;

static void add_row(const char *name, const char *alias, const char *label, unsigned groups, double interval)
{
    if (ROW_COUNT == ROW_MAX)
        return;
    group_row *row = &rows[ROW_COUNT++];
    *row = (group_row){name, alias, "", groups, interval};
    snprintf(row->label, sizeof row->label, "%s", label);
}

static void make_rows(void)
{
    add_row("none", NULL, "none (CPU clock + statm)", 0, 0);
    resmon_metric_group g;
    for (size_t i = 0; resmon_metric_group_info(i, &g, sizeof g) == 0; i++) {
        char label[128];
        int n = snprintf(label, sizeof label, "%s (`%s`)", g.name, g.files);
        for (int c = 0; c < n && label[c] != ' '; c++)
            label[c] = (char)(label[c] >= 'a' && label[c] <= 'z' ? label[c] - 'a' + 'A' : label[c]);
        add_row(g.name, g.command_name, label, g.bit, 0);
        if (g.bit == RESMON_METRIC_MEMORY_DETAIL)
            add_row("pss", NULL, "MEMORY_DETAIL, PSS read every sample", g.bit, PSS_EVERY_READING);
    }
    add_row("all", NULL, "ALL, PSS on its schedule", RESMON_METRIC_ALL, 0);
}

static double thread_cpu_sec(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A child that holds mib MiB touched page by page, until killed. */
static pid_t start_big_process(long mib)
{
    int ready[2];
    if (pipe(ready) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(ready[0]);
        size_t bytes = (size_t)mib << 20;
        char *memory = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (memory == MAP_FAILED)
            _exit(1);
        for (size_t i = 0; i < bytes; i += 4096)
            memory[i] = 1;
        if (write(ready[1], "r", 1) != 1)
            _exit(1);
        for (;;)
            pause();
    }
    close(ready[1]);
    char byte;
    ssize_t n = pid > 0 ? read(ready[0], &byte, 1) : -1;
    close(ready[0]);
    if (n != 1) {
        if (pid > 0) {
            kill(pid, SIGKILL);
            waitpid(pid, NULL, 0);
        }
        return -1;
    }
    return pid;
}

static void stop_big_process(pid_t pid)
{
    if (pid > 0) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
    }
}

/* n readings of pid (0: this process) with a row's groups; the CPU seconds
 * they took, or a negative errno. */
static double time_readings(pid_t pid, const group_row *row, long n)
{
    rm__probe *probe;
    int rc = rm__probe_open(&probe, pid, 0, NULL);
    if (rc < 0)
        return rc;
    rm__probe_collect(probe, row->groups, row->memory_detail_interval_sec);
    rm__probe_reading reading;
    resmon_sample sample;
    memset(&sample, 0, sizeof sample);
    rc = rm__probe_begin(probe, &reading);
    double start = thread_cpu_sec();
    for (long i = 0; rc >= 0 && i < n; i++) {
        rc = rm__probe_read(probe, &reading);
        rm__probe_fill_metrics(probe, &sample);
    }
    double spent = thread_cpu_sec() - start;
    rm__probe_close(probe);
    return rc < 0 ? rc : spent;
}

static double best_us_per_reading(pid_t pid, const group_row *row, long n)
{
    double best = -1;
    for (int run = 0; run < 3; run++) {
        double spent = time_readings(pid, row, n);
        if (spent < 0)
            return spent;
        if (best < 0 || spent < best)
            best = spent;
    }
    return best / (double)n * 1e6;
}

static int print_table(long readings, long big_mib)
{
    pid_t big = big_mib > 0 ? start_big_process(big_mib) : 0;
    if (big < 0) {
        fprintf(stderr, "resmon_metric_cost: cannot start a process holding %ld MiB\n", big_mib);
        return 1;
    }
    printf("| groups (resmon_options.metrics) | CPU µs per reading, this process |");
    if (big)
        printf(" %ld MiB process |", big_mib);
    printf("\n|---|---:|%s\n", big ? "---:|" : "");
    for (size_t i = 0; i < ROW_COUNT; i++) {
        printf("| %s | %.1f |", rows[i].label, best_us_per_reading(0, &rows[i], readings));
        if (big) /* smaps_rollup of a big process takes ms: fewer readings */
            printf(" %.1f |", best_us_per_reading(big, &rows[i], rows[i].memory_detail_interval_sec > 0
                                                                      ? readings / 20 + 1
                                                                      : readings));
        printf("\n");
        fflush(stdout);
    }
    printf("\n%ld readings per loop, best of 3; the reading thread's CPU clock (kernel time included).\n",
           readings);
    stop_big_process(big);
    return 0;
}

static int loop_only(const char *group, long n, long big_mib)
{
    for (size_t i = 0; i < ROW_COUNT; i++) {
        if (strcmp(rows[i].name, group) != 0 && !(rows[i].alias && strcmp(rows[i].alias, group) == 0))
            continue;
        pid_t big = big_mib > 0 ? start_big_process(big_mib) : 0;
        if (big < 0)
            return 1;
        double spent = time_readings(big, &rows[i], n);
        stop_big_process(big);
        return spent < 0;
    }
    fprintf(stderr, "resmon_metric_cost: no group row named '%s'\n", group);
    return 2;
}

int main(int argc, char **argv)
{
    long readings = 2000, big_mib = 1024;
    int big_mib_given = 0;
    const char *loop_group = NULL;
    long loop_n = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--readings") == 0 && i + 1 < argc) {
            readings = atol(argv[++i]);
        } else if (strcmp(argv[i], "--big-mib") == 0 && i + 1 < argc) {
            big_mib = atol(argv[++i]);
            big_mib_given = 1;
        } else if (strcmp(argv[i], "--loop") == 0 && i + 2 < argc) {
            loop_group = argv[++i];
            loop_n = atol(argv[++i]);
        } else {
            fprintf(stderr, "usage: resmon_metric_cost [--readings N] [--big-mib M] | --loop GROUP N [--big-mib M]\n");
            return 2;
        }
    }
    make_rows();
    if (loop_group)
        return loop_only(loop_group, loop_n, big_mib_given ? big_mib : 0); /* this process by default */
    if (readings <= 0 || big_mib < 0) {
        fprintf(stderr, "resmon_metric_cost: --readings must be positive, --big-mib not negative\n");
        return 2;
    }
    return print_table(readings, big_mib);
}
