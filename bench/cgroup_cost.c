/*
 * cgroup_cost.c -- what a sample's cgroup read costs (BENCHMARKS.md, "The
 * whole tree's memory from a cgroup"): one pread of memory.current /
 * memory.usage_in_bytes per sample, and the end-of-window reads (peak, OOM
 * kills, v2 cpu.stat and io.stat) once.  Makes a leaf cgroup of its own
 * (root, or a delegated v2 subtree), measures on this thread's CPU clock,
 * and removes the leaf.
 *
 *     resmon_cgroup_cost [ITERATIONS]
 */
#include "cgroup.h"
#include "resmon.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double thread_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    long iterations = argc > 1 ? atol(argv[1]) : 200000;
    char err[RESMON_ERR_MAX];
    resmon_cgroup *leaf;
    if (resmon_cgroup_create(&leaf, 0, err, sizeof err) < 0) {
        fprintf(stderr, "cgroup_cost: no cgroup can be made here: %s\n", err);
        return 77;
    }
    rm__cgroup cg;
    if (rm__cgroup_open(&cg, resmon_cgroup_path(leaf)) < 0) {
        resmon_cgroup_remove(leaf);
        return 1;
    }
    uint64_t value, other, sink = 0;
    double start = thread_ns();
    for (long i = 0; i < iterations; i++) {
        rm__cgroup_read_current(&cg, &value);
        sink += value;
    }
    double per_sample = (thread_ns() - start) / (double)iterations;
    long end_iterations = iterations / 10 ? iterations / 10 : 1;
    start = thread_ns();
    for (long i = 0; i < end_iterations; i++) {
        rm__cgroup_io io;
        rm__cgroup_read_peak(&cg, &value);
        rm__cgroup_read_oom_kills(&cg, &value);
        rm__cgroup_read_throttling(&cg, &value, &other);
        rm__cgroup_read_io(&cg, &io);
        sink += value;
    }
    double per_end = (thread_ns() - start) / (double)end_iterations;
    printf("cgroup v%d: per sample (current memory) %.0f ns; window end (peak, OOM kills%s) %.0f ns%s\n",
           cg.version, per_sample, cg.version == 2 ? ", cpu.stat, io.stat" : "", per_end, sink == 1 ? " " : "");
    rm__cgroup_close(&cg);
    return resmon_cgroup_remove(leaf) == 0 ? 0 : 1;
}
