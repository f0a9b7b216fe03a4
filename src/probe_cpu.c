/*
 * probe_cpu.c -- a probe's CPU accounting (see probe_state.h): every CPU
 * second the kernel accounts to the target's processes is counted once, and
 * handed out to the readings no faster than the tree could have run.
 *
 * counted_ns grows by each live process's CPU-clock increase and by each
 * tree process's cutime/cstime increase (the CPU of the children it
 * reaped); a tracked child that was reaped is settled (what was counted of
 * it is taken off, since its parent's cutime now holds all of it).
 * reported_ns is what the readings handed out: the difference is carried.
 */
#include "probe_state.h"

#include <sys/resource.h>

/* The CPU a process's parent will show in its cutime/cstime once it reaps
 * it: all the process ever used, its reaped children's included. */
static uint64_t lifetime_cpu_ns(const rm__tracked *t)
{
    return t->last_cpu_ns + t->children_ns;
}

void rm__probe_cpu_begin(rm__probe *p)
{
    p->cpu.counted_ns = 0;
    p->cpu.reported_ns = 0;
}

void rm__probe_cpu_catch_up(rm__probe *p)
{
    p->stat_due_pending = 0;
    for (size_t i = p->members; i < p->count; i++) { /* procs[0] stands for no one in a cgroup's members */
        rm__tracked *t = &p->procs[i];
        if (!t->stat_due)
            continue;
        rm__process_reading now = {0};
        if (rm__probe_read_stat(t, &now) == 0)
            rm__probe_cpu_account_children(p, t, &now, 0);
        t->stat_due = 0; /* gone: the next reading finds it so */
    }
}

/* Its CPU up to the latest reading was counted while it was tracked; once
 * reaped, all of its CPU lands in its parent's cutime, so when that parent
 * is tracked its increase is reduced by what was already counted (and, for
 * a process older than the window, by its past).  probe.c calls this for a
 * reaped process whose parent is tracked.  The parent's stat is then
 * read in this same reading (stat_due), so that the reduction and the
 * increase meet: apart, the reduction showed as a 0 % sample and the
 * increase as a run of samples pinned at every CPU busy. */
void rm__probe_cpu_settle(rm__probe *p, const rm__tracked *t, rm__tracked *parent)
{
    p->cpu.counted_ns -= (int64_t)lifetime_cpu_ns(t);
    rm__metrics_settle_reaped(&p->metrics, &t->metrics);
    if (p->include_children)
        parent->stat_due = p->stat_due_pending = 1;
}

/* Our RUSAGE_CHILDREN: CPU in ns, and context switches when asked for. */
static uint64_t our_children_cpu_ns(uint64_t *switches)
{
    struct rusage ru;
    if (getrusage(RUSAGE_CHILDREN, &ru) != 0) {
        if (switches)
            switches[0] = switches[1] = 0; /* nothing known: raises nothing */
        return 0;
    }
    if (switches) {
        switches[0] = (uint64_t)ru.ru_nvcsw;
        switches[1] = (uint64_t)ru.ru_nivcsw;
    }
    return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000u +
           (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000u;
}

void rm__probe_cpu_note_children(rm__probe *p, int baseline)
{
    if (p->cpu.root_is_our_child)
        p->cpu.our_children_ns = our_children_cpu_ns(p->cpu.our_children_switches);
    if (baseline) {
        p->cpu.root_start_switches[0] = p->procs[0].metrics.last[RM__VOLUNTARY_SWITCHES];
        p->cpu.root_start_switches[1] = p->procs[0].metrics.last[RM__INVOLUNTARY_SWITCHES];
    }
}

/* The root, our child, was reaped in this interval: the increase of our
 * RUSAGE_CHILDREN switches is its whole life's, with everything it reaped
 * (the same assumption as for its CPU: no other child of ours was reaped in
 * that interval).  Less what it had before the window, that is the window's
 * count of the root's tree -- which /proc loses for every process that ends
 * (a child's last interval, a child never sampled).  The counted total is
 * raised to it; what is still alive elsewhere keeps its share. */
static void count_root_switches(rm__probe *p, const uint64_t *now)
{
    for (int i = 0; i < 2; i++) {
        uint64_t life = now[i] > p->cpu.our_children_switches[i] ? now[i] - p->cpu.our_children_switches[i] : 0;
        uint64_t window = life > p->cpu.root_start_switches[i] ? life - p->cpu.root_start_switches[i] : 0;
        rm__metrics_raise_switches(&p->metrics, i == 0 ? RM__VOLUNTARY_SWITCHES : RM__INVOLUNTARY_SWITCHES,
                                   window);
    }
}

/* The root was reaped after the latest reading.  What it used since then is
 * known only when we reaped it ourselves: it is the increase of our
 * RUSAGE_CHILDREN beyond what was counted (assuming no other child of ours
 * was reaped in that interval, and never more than the machine could run). */
void rm__probe_cpu_root_tail(rm__probe *p, uint64_t boot_ns)
{
    if (!p->cpu.root_is_our_child)
        return;
    uint64_t switches[2] = {0, 0};
    uint64_t now = our_children_cpu_ns(switches);
    count_root_switches(p, switches);
    uint64_t seen = p->cpu.our_children_ns + lifetime_cpu_ns(&p->procs[0]);
    if (now <= seen)
        return;
    uint64_t tail = now - seen;
    uint64_t most = (uint64_t)(p->cpu.online_cpus > 0 ? p->cpu.online_cpus : 1) * (boot_ns - p->previous_boottime_ns);
    p->cpu.counted_ns += (int64_t)(tail < most ? tail : most);
}
