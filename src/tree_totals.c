/*
 * tree_totals.c -- a wide tree's CPU from its leaf cgroup, and the walk's
 * cadence (see tree_totals.h).
 */
#include "tree_totals.h"

#include "regular_file.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <unistd.h>
#include <string.h>

/* The walk's share of one CPU once the tree is wide: the goal is
 * resmon at <= 0.2 ms a sample at 10 Hz for 1000 processes (0.2 % of a
 * CPU), and the O(1) samples take most of that (0.13-0.17 ms a sample
 * measured on a 2-core VM: a thread's wake-up alone costs 50-70 us of CPU
 * there), so the walk gets an eighth (a walk of 1000 sleepers, its 1000
 * clock reads and a quarter of their statm refreshes, ~5 ms measured by its
 * thread clock, every ~20 s; stop 52 measured 0.06 ms a sample for it, from
 * 0.14 with twice this share, a 10 s cap and every statm re-read). */
#define WALK_CPU_SHARE 0.00025
/* ... but a tree's RSS, threads and groups are never older than this: a
 * 10 000-process walk (~0.2 s) then costs 1 % of a CPU, not less. */
#define WALK_INTERVAL_MAX_NS 20000000000ULL

/* What the probe may count beyond the total's increase before the tree is
 * taken to have left the leaf: the two are read at different instants
 * (the probe's clocks first, each bringing the total up to date), so the
 * total is normally ahead; this only absorbs rounding and the last tick. */
#define LEFT_SLACK_NS 20000000ULL
#define LEFT_SLACK_FRACTION 0.02

void rm__tree_totals_open(rm__tree_totals *t, const char *memory_dir, int version, pid_t root)
{
    memset(t, 0, sizeof *t);
    t->cpu.fd = t->dir_fd = -1;
    char dir[RM__CGROUP_PATH_MAX];
    if (memory_dir && root > 0 && rm__cgroup_leaf_cpu_dir(memory_dir, version, (int)root, dir, sizeof dir) == 0)
        rm__cgroup_cpu_open(&t->cpu, dir); /* -ENOTSUP: fd stays -1 */
    if (t->cpu.fd >= 0)
        t->dir_fd = open(memory_dir, O_PATH | O_DIRECTORY | O_CLOEXEC); /* -1: the count stays the walk's */
    t->threads_file = version == 1 ? "tasks" : "cgroup.threads";
}

/* How often a wide tree's process count is re-read between walks ... */
#define PROCESS_COUNT_REFRESH_NS 1000000000ULL
/* ... and how long a count stands at most while the leaf's CPU total stood
 * (a process that left the leaf without running in it: moved by another,
 * or moving itself between two charges of its runtime; a v1 tree split
 * between cpuacct groups). */
#define PROCESS_COUNT_STANDS_MAX_NS 5000000000ULL

/* The lines of the leaf's file name: one a process or thread.  Opened for
 * each count: v1 lists what the cgroup held when an open file was first
 * read, for as long as it is read again. */
static int count_lines(int dir_fd, const char *name, unsigned *lines)
{
    int fd = rm__open_regular_at(dir_fd, name, NULL);
    if (fd < 0)
        return fd;
    char buf[4096];
    unsigned n_lines = 0;
    off_t offset = 0;
    for (;;) {
        ssize_t n = pread(fd, buf, sizeof buf, offset);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            int rc = n < 0 ? -errno : 0;
            close(fd);
            if (rc < 0)
                return rc;
            break;
        }
        for (ssize_t i = 0; i < n; i++)
            n_lines += buf[i] == '\n';
        offset += n;
    }
    *lines = n_lines;
    return 0;
}

int rm__tree_totals_process_count(rm__tree_totals *t, uint64_t now_ns, unsigned *processes, unsigned *threads)
{
    if (t->dir_fd < 0)
        return -ENOENT;
    uint64_t since = t->count_read_ns ? t->count_read_ns : t->last_walk_ns;
    /* The samples read the total (rm__tree_totals_cpu) before the count:
     * one that stands since then says that nothing in the leaf ran since
     * the lists were read. */
    /* After a walk, the total read before it began: a sleeping tree's
     * count then stands from walk to walk (a count a second after each
     * walk was most of the sampler's time at 1000 sleepers: the kernel
     * builds and sorts the whole list for each read). */
    int ran = (!t->count_read_ns && !t->walk_cpu_known) || t->cpu_unread || t->last_cpu_ns != t->count_cpu_ns;
    if (now_ns - since < PROCESS_COUNT_REFRESH_NS || (!ran && now_ns - since < PROCESS_COUNT_STANDS_MAX_NS)) {
        *processes = t->count;
        *threads = t->threads;
        return t->count_read_ns ? 0 : -ENOENT;
    }
    unsigned procs, tasks;
    int rc = count_lines(t->dir_fd, "cgroup.procs", &procs);
    if (rc == 0)
        rc = count_lines(t->dir_fd, t->threads_file, &tasks);
    if (rc < 0)
        return rc;
    t->count = *processes = procs;
    t->threads = *threads = tasks > procs ? tasks : procs; /* a process exited between the two reads */
    t->count_read_ns = now_ns;
    t->count_cpu_ns = t->last_cpu_ns;
    t->walk_cpu_known = 0;
    unsigned moved = procs > t->walked_count ? procs - t->walked_count : t->walked_count - procs;
    if (4 * (uint64_t)moved > t->walked_count)
        t->next_walk_ns = 0; /* changed by more than a quarter: the next sample walks */
    return 0;
}

void rm__tree_totals_close(rm__tree_totals *t)
{
    rm__cgroup_cpu_close(&t->cpu);
    if (t->dir_fd >= 0)
        close(t->dir_fd);
    t->dir_fd = -1;
    t->engaged = 0;
}

void rm__tree_totals_begin(rm__tree_totals *t)
{
    t->window_based = t->cpu.fd >= 0 && rm__cgroup_cpu_read(&t->cpu, &t->window_base_ns) == 0;
}

void rm__tree_totals_walk_starts(rm__tree_totals *t)
{
    t->walk_start_cpu_ns = t->last_cpu_ns;
    t->walk_start_known = t->engaged && !t->cpu_unread;
}

int rm__tree_totals_walk_due(const rm__tree_totals *t, uint64_t now_ns)
{
    return !t->engaged || now_ns >= t->next_walk_ns;
}

int rm__tree_totals_measures(const rm__tree_totals *t, unsigned last_process_count)
{
    return t->cpu.fd >= 0 && !t->left && (t->engaged || last_process_count > WALK_EVERY_SAMPLE_MAX);
}

void rm__tree_totals_walked(rm__tree_totals *t, uint64_t now_ns, unsigned process_count, uint64_t cost_ns,
                            uint64_t probe_pending_ns, uint64_t probe_counted_ns, uint64_t probe_discovered_ns,
                            int final)
{
    if (t->cpu.fd < 0 || t->left)
        return;
    if (!t->engaged && process_count > WALK_EVERY_SAMPLE_MAX) {
        /* The switch: the total from now on; the probe's carry with it. */
        if (rm__cgroup_cpu_read(&t->cpu, &t->last_cpu_ns) < 0)
            return;
        t->engaged = 1;
        /* What the leaf used since the window opened beyond the probe's
         * count: processes that started and ended between two walks whose
         * parent's cutime does not hold them yet (or ever: children the
         * kernel reaps itself, SIGCHLD ignored), and processes that no walk
         * had read yet -- a tree forked fast has hundreds at the switch.
         * The total's base holds their CPU up to now and the probe will not
         * count it after (the discovered CPU below), so without it 0.06-0.21
         * s of 1.3-1.5 s were lost for 400-1000 sleepers forked by sh.  It
         * was used before this sample's interval, at instants unknown: the
         * window's CPU time takes it, no sample's rate
         * (rm__tree_totals_take_unseen).  Never too much: a process that
         * left the leaf before the switch is in the probe's count whole and
         * in the total only until it left. */
        t->unseen_ns = t->unseen_untaken_ns = 0;
        if (t->window_based && t->last_cpu_ns > t->window_base_ns &&
            t->last_cpu_ns - t->window_base_ns > probe_counted_ns)
            t->unseen_ns = t->unseen_untaken_ns = t->last_cpu_ns - t->window_base_ns - probe_counted_ns;
        t->carry_ns = probe_pending_ns;
        t->last_lead_ns = 0;
        t->probe_base_ns = probe_counted_ns;
        t->discovered_base_ns = probe_discovered_ns;
        t->total_base_ns = t->last_cpu_ns;
        t->first_walk_ns = now_ns;
        t->walks = 0;
    } else if (t->engaged) {
        uint64_t total;
        if (rm__cgroup_cpu_read(&t->cpu, &total) == 0 && total >= t->total_base_ns &&
            probe_counted_ns >= t->probe_base_ns) {
            /* A process started before the switch and first read after it
             * (the switching walk missed it) brings its life before the
             * switch, which the total's base already held: a lead that never
             * grows, which took a fast-forking tree of 1000 for a leaver.
             * The probe counts that apart (its discovered CPU, from the
             * switch's instant on); one started after is in the rise whole. */
            uint64_t discovered = probe_discovered_ns > t->discovered_base_ns ? probe_discovered_ns - t->discovered_base_ns : 0;
            uint64_t rose = total - t->total_base_ns, counted = probe_counted_ns - t->probe_base_ns;
            counted = counted > discovered ? counted - discovered : 0;
            uint64_t lead = counted > rose ? counted - rose : 0;
            uint64_t slack = LEFT_SLACK_NS + (uint64_t)(LEFT_SLACK_FRACTION * (double)rose);
            /* Nor is the probe's catching up with what the leaf had beyond
             * its count at the switch (unseen_ns): under load its clocks
             * lagged the total by 0.11 s there and ran 0.11 s ahead of the
             * rise after -- a leaver each time (2 runs in 14 beside six busy
             * loops), whose CPU the probe then counted once more.  A
             * catch-up stops; a leaver's lead grows.  Within unseen_ns a
             * lead is a leaver's only while it grows from one walk to the
             * next (the second walk comes a sample after the first: a
             * leaver busy outside the leaf adds more than the slack);
             * beyond unseen_ns, always.  (Allowing the whole of unseen_ns
             * hid a leaver that used less: 0.21-0.27 s of 0.9-1.1 lost, a
             * review's 3 runs in 8.)  Known: a leaver's CPU outside the leaf
             * before the switch is netted out of unseen_ns, and one that
             * stops within a walk of the switch may stay hidden in it. */
            int ahead = lead > slack && (lead > t->unseen_ns + slack || lead > t->last_lead_ns + LEFT_SLACK_NS);
            t->last_lead_ns = lead;
            /* The window's last walk has no next one to confirm: there the
             * probe's count is the better figure either way (a lagging
             * total does not catch up within the window). */
            if (ahead && (t->left_suspected || final)) {
                t->engaged = 0; /* a process left the leaf: the probe's CPU from the next sample */
                t->left = 1;
                t->last_walk_ns = now_ns;
                t->walks++;
                return;
            }
            /* One walk ahead is not yet a leaver: a process ending as the
             * walk read it can be counted by the probe (its exit record)
             * before the total shows it, and a v2 total is flushed lazily.
             * A leaver stays ahead: the next sample walks to see. */
            t->left_suspected = ahead;
        } else {
            t->left_suspected = 0; /* "two in a row" means two walks compared, not a failed read between */
        }
    }
    if (!t->engaged)
        return;
    t->last_walk_ns = now_ns;
    t->count_read_ns = 0; /* the walk's count is the latest */
    t->count_cpu_ns = t->walk_start_cpu_ns;
    t->walk_cpu_known = t->walk_start_known;
    t->walk_start_known = 0;
    t->walked_count = process_count;
    t->walks++;
    t->walk_cost_ns = cost_ns;
    if (process_count <= WALK_EVERY_SAMPLE_MAX || cost_ns == 0 || t->left_suspected) {
        t->next_walk_ns = 0; /* small again, or not yet measured: every sample */
        return;
    }
    double wait_ns = (double)cost_ns / WALK_CPU_SHARE;
    t->next_walk_ns = now_ns + (wait_ns > (double)WALK_INTERVAL_MAX_NS ? WALK_INTERVAL_MAX_NS : (uint64_t)wait_ns);
}

uint64_t rm__tree_totals_cpu(rm__tree_totals *t, uint64_t elapsed_ns, long online_cpus, int everything)
{
    uint64_t now = 0;
    t->cpu_unread = rm__cgroup_cpu_read(&t->cpu, &now) != 0; /* then the count takes the tree to have run */
    if (!t->cpu_unread) {
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

uint64_t rm__tree_totals_take_unseen(rm__tree_totals *t)
{
    uint64_t unseen = t->unseen_untaken_ns;
    t->unseen_untaken_ns = 0;
    return unseen;
}

uint64_t rm__tree_totals_handed(const rm__tree_totals *t)
{
    uint64_t leaf = t->probe_base_ns + (t->unseen_ns - t->unseen_untaken_ns) + (t->last_cpu_ns - t->total_base_ns);
    return leaf > t->carry_ns ? leaf - t->carry_ns : 0;
}

double rm__tree_totals_walk_interval_sec(const rm__tree_totals *t, uint64_t last_sample_ns)
{
    if (!t->engaged && !t->left)
        return NAN;
    if (t->walks < 2)
        return last_sample_ns > t->first_walk_ns ? (double)(last_sample_ns - t->first_walk_ns) * 1e-9 : 0.0;
    return (double)(t->last_walk_ns - t->first_walk_ns) * 1e-9 / (double)(t->walks - 1);
}
