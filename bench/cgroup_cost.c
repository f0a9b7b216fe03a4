/*
 * cgroup_cost.c -- what a sample's cgroup read costs (BENCHMARKS.md, "The
 * whole tree's memory from a cgroup"): one pread of memory.current /
 * memory.usage_in_bytes per sample, and the end-of-window reads (peak, OOM
 * kills, v2 cpu.stat and io.stat) once; and the membership listing of
 * resmon --cgroup PATH alone (cgroup.procs opened and read each walk) for 1,
 * 10 and 100 processes in the cgroup, beside the children-files walk of the
 * same processes as a tree.  Makes a leaf cgroup of its own (root, or a
 * delegated v2 subtree), measures on this thread's CPU clock, and removes
 * the leaf.
 *
 *     resmon_cgroup_cost [ITERATIONS]
 */
#include "cgroup.h"
#include "proc_tree.h"
#include "resmon.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

static double thread_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* CPU per walk, ns: of the cgroup source, or of the children files from
 * this process (the processes are its children). */
static double walk_cost(const char *dir, int from_cgroup, long iterations)
{
    int proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    rm__tree_walker w;
    rm__tree_walker_init(&w, proc_fd, RM__TREE_CHILDREN_FILES);
    if (from_cgroup && rm__tree_walker_use_cgroup(&w, dir) < 0)
        return -1;
    pid_t self = getpid();
    double start = thread_ns();
    for (long i = 0; i < iterations; i++)
        rm__tree_walk(&w, self);
    double per_walk = (thread_ns() - start) / (double)iterations;
    rm__tree_walker_free(&w);
    close(proc_fd);
    return per_walk;
}

/* 1, 10 and 100 sleeping processes in the leaf: the listing's cost. */
static int list_members(resmon_cgroup *leaf, long iterations)
{
    static const int counts[] = {1, 10, 100};
    pid_t pids[100];
    int held = 0, hold[2];
    if (pipe(hold) < 0)
        return 1;
    for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) {
        for (; held < counts[c]; held++) {
            int ready[2];
            if (pipe(ready) < 0)
                return 1;
            pid_t pid = fork();
            if (pid == 0) {
                char byte;
                close(hold[1]);
                if (resmon_cgroup_join(leaf, 0) < 0 || write(ready[1], "r", 1) != 1)
                    _exit(1);
                _exit(read(hold[0], &byte, 1) < 0); /* until the bench closes its end */
            }
            char byte;
            close(ready[1]);
            if (pid < 0 || read(ready[0], &byte, 1) != 1)
                return 1;
            close(ready[0]);
            pids[held] = pid;
        }
        double listing = walk_cost(resmon_cgroup_path(leaf), 1, iterations);
        double children = walk_cost(NULL, 0, iterations);
        printf("%3d processes: cgroup.procs listing %.0f ns a walk; children-files walk %.0f ns\n", held, listing,
               children);
    }
    close(hold[1]);
    close(hold[0]);
    for (int i = 0; i < held; i++)
        waitpid(pids[i], NULL, 0);
    return 0;
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
    int rc = list_members(leaf, iterations / 10 ? iterations / 10 : 1);
    return resmon_cgroup_remove(leaf) == 0 && rc == 0 ? 0 : 1;
}
