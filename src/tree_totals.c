/*
 * tree_totals.c -- a wide tree's CPU from its leaf cgroup, and the walk's
 * cadence (see tree_totals.h).
 */
#include "tree_totals.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The walk's share of one CPU once the tree is wide: the goal is
 * resmon at <= 0.2 ms a sample at 10 Hz for 1000 processes (0.2 % of a
 * CPU), so the walk gets half of that, and the O(1) samples the rest. */
#define WALK_CPU_SHARE 0.001
/* ... but a tree's RSS, threads and groups are never older than this: a
 * 10 000-process walk (~0.2 s) then costs 2 % of a CPU, not less. */
#define WALK_INTERVAL_MAX_NS 10000000000ULL

void rm__tree_totals_open(rm__tree_totals *t, const char *memory_dir, int version, pid_t root)
{
    memset(t, 0, sizeof *t);
    t->cpu.fd = -1;
    char dir[RM__CGROUP_PATH_MAX];
    if (memory_dir && root > 0 && rm__cgroup_leaf_cpu_dir(memory_dir, version, (int)root, dir, sizeof dir) == 0)
        rm__cgroup_cpu_open(&t->cpu, dir); /* -ENOTSUP: fd stays -1 */
}

void rm__tree_totals_close(rm__tree_totals *t)
{
    rm__cgroup_cpu_close(&t->cpu);
    t->engaged = 0;
}

int rm__tree_totals_walk_due(const rm__tree_totals *t, uint64_t now_ns)
{
    return !t->engaged || now_ns >= t->next_walk_ns;
}

int rm__tree_totals_measures(const rm__tree_totals *t, unsigned last_process_count)
{
    return t->cpu.fd >= 0 && (t->engaged || last_process_count > WALK_EVERY_SAMPLE_MAX);
}

void rm__tree_totals_walked(rm__tree_totals *t, uint64_t now_ns, unsigned process_count, uint64_t cost_ns,
                            uint64_t probe_pending_ns)
{
    if (t->cpu.fd < 0)
        return;
    if (!t->engaged && process_count > WALK_EVERY_SAMPLE_MAX) {
        /* The switch: the total from now on; the probe's carry with it. */
        if (rm__cgroup_cpu_read(&t->cpu, &t->last_cpu_ns) < 0)
            return;
        t->engaged = 1;
        t->carry_ns = probe_pending_ns;
        t->first_walk_ns = now_ns;
        t->walks = 0;
    }
    if (!t->engaged)
        return;
    t->last_walk_ns = now_ns;
    t->walks++;
    t->walk_cost_ns = cost_ns;
    if (process_count <= WALK_EVERY_SAMPLE_MAX || cost_ns == 0) {
        t->next_walk_ns = 0; /* small again, or not yet measured: every sample */
        return;
    }
    double wait_ns = (double)cost_ns / WALK_CPU_SHARE;
    t->next_walk_ns = now_ns + (wait_ns > (double)WALK_INTERVAL_MAX_NS ? WALK_INTERVAL_MAX_NS : (uint64_t)wait_ns);
}

uint64_t rm__tree_totals_cpu(rm__tree_totals *t, uint64_t elapsed_ns, long online_cpus, int everything)
{
    uint64_t now = 0;
    if (rm__cgroup_cpu_read(&t->cpu, &now) == 0) {
        if (now > t->last_cpu_ns)
            t->carry_ns += now - t->last_cpu_ns;
        t->last_cpu_ns = now;
    }
    uint64_t give = t->carry_ns;
    if (!everything && online_cpus > 0 && give > (uint64_t)online_cpus * elapsed_ns)
        give = (uint64_t)online_cpus * elapsed_ns; /* a tick's lag caught up: carried, never lost */
    t->carry_ns -= give;
    return give;
}

double rm__tree_totals_walk_interval_sec(const rm__tree_totals *t, uint64_t last_sample_ns)
{
    if (!t->engaged)
        return NAN;
    if (t->walks < 2)
        return last_sample_ns > t->first_walk_ns ? (double)(last_sample_ns - t->first_walk_ns) * 1e-9 : 0.0;
    return (double)(t->last_walk_ns - t->first_walk_ns) * 1e-9 / (double)(t->walks - 1);
}
