/*
 * process_records.c -- which taskstats records belong to the run, threads
 * folded into processes, and the bounded aggregates (process_records.h).
 *
 * Membership rule.  taskstats reports every task of the machine; a record
 * belongs to the run when resmon is an ancestor of the task, decided in
 * this order:
 *   1. its parent (ac_ppid, read by the kernel at the exit) is resmon: the
 *      command itself, or an orphan resmon adopted as subreaper (a double
 *      fork's grandchild lands here);
 *   2. its parent is a pid already known to the run (a process recorded
 *      before, or one the walk of rule 3 passed through);
 *   3. the live /proc/PPID/stat chain, read now, reaches resmon or a known
 *      pid (the parent still runs: a child usually ends before its parent);
 *      a chain that reaches init instead is foreign, and its live members
 *      are remembered as such until a record of theirs arrives (see
 *      foreign_known: the exits of another build cost no read);
 *   4. the parent is gone from /proc (it ended and was reaped between the
 *      child's exit and this read): the record waits, bounded, until a
 *      record of that parent arrives and places it; at finish the rest
 *      are counted as unattributed, never guessed.
 * resmon runs nothing else while the command runs, so every child of
 * resmon is the command's or an orphan of its tree.
 */
#include "process_records.h"
#include "clocks.h"
#include "json_number.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/acct.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PROCESS_FOREIGN_CACHE 1024

/* A record's source, by these very pointers (a record read back from the
 * --processes all file is checked against them). */
static const char SOURCE_TASKSTATS[] = "taskstats";
static const char SOURCE_WAIT4[] = "wait4";
static const char SOURCE_SAMPLED[] = "sampled";

struct process_records {
    pthread_mutex_t lock;
    pid_t resmon_pid;
    double start_monotonic_sec;
    void (*on_record)(const process_record *, void *);
    void *on_record_user;
    pid_t *members;      /* open-addressing set, PROCESS_MEMBER_SLOTS; 0 = empty, -1 = removed */
    size_t member_count; /* slots used, removed ones included */
    struct ended_member {
        pid_t pid;
        double latest_start_boot_sec; /* its start, at the latest (CLOCK_BOOTTIME): tells a reused pid apart */
        double ended_by_epoch_sec;    /* when it had ended, at the latest (its record read): ditto */
    } ended[PROCESS_ENDED_RING];     /* the members that ended last */
    double boot_minus_monotonic_sec; /* CLOCK_BOOTTIME - CLOCK_MONOTONIC at the start */
    double real_minus_monotonic_sec; /* CLOCK_REALTIME - CLOCK_MONOTONIC at the start */
    pid_t foreign[PROCESS_FOREIGN_CACHE]; /* live processes known not to be the run's, by pid % size; 0: none */
    size_t ended_next;
    process_record *open; /* multi-threaded processes being folded, room for open_capacity */
    size_t open_count, open_capacity;
    struct pending {
        struct taskstats ts;
        double end_sec;
    } *pending;
    size_t pending_count;
    process_record top_rss[PROCESS_TOP_N], top_cpu[PROCESS_TOP_N];
    size_t top_rss_count, top_cpu_count;
    process_aggregate names[PROCESS_MAX_NAMES + 1]; /* the last: "(other names)" */
    size_t name_count;
    int other_names_used;
    process_totals totals;
    FILE *all; /* --processes all: every record, as the struct, in an unlinked file */
    process_record sampled[RESMON_MAX_PROCESSES]; /* the library's, kept at finish */
    size_t sampled_count;
};

process_records *process_records_new(pid_t resmon_pid)
{
    process_records *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->members = calloc(PROCESS_MEMBER_SLOTS, sizeof *p->members);
    p->pending = calloc(PROCESS_PENDING_MAX, sizeof *p->pending);
    if (!p->members || !p->pending) {
        process_records_free(p);
        return NULL;
    }
    pthread_mutex_init(&p->lock, NULL);
    p->resmon_pid = resmon_pid;
    p->totals.source = SOURCE_TASKSTATS;
    return p;
}

void process_records_start(process_records *p, double start_monotonic_sec, int source_error)
{
    pthread_mutex_lock(&p->lock);
    p->start_monotonic_sec = start_monotonic_sec;
    p->boot_minus_monotonic_sec = clock_minus_monotonic_sec(CLOCK_BOOTTIME);
    p->real_minus_monotonic_sec = clock_minus_monotonic_sec(CLOCK_REALTIME);
    p->totals.source_error = source_error;
    p->totals.source = source_error ? SOURCE_WAIT4 : SOURCE_TASKSTATS;
    pthread_mutex_unlock(&p->lock);
}

void process_records_free(process_records *p)
{
    if (!p)
        return;
    if (p->members)
        pthread_mutex_destroy(&p->lock);
    free(p->members);
    free(p->pending);
    if (p->all)
        fclose(p->all);
    free(p->open);
    free(p);
}

void process_records_on_record(process_records *p, void (*fn)(const process_record *, void *), void *user)
{
    p->on_record = fn;
    p->on_record_user = user;
}

/* ---- the member set: the run's pids seen so far ---- */
static size_t member_slot(pid_t pid)
{
    return ((size_t)pid * 2654435761u) % PROCESS_MEMBER_SLOTS;
}

static pid_t *member_find(const process_records *p, pid_t pid)
{
    if (pid <= 0)
        return NULL; /* 0: the kernel's "no parent" (it ended first, another namespace) */
    for (size_t i = member_slot(pid);; i = (i + 1) % PROCESS_MEMBER_SLOTS) {
        if (p->members[i] == pid)
            return &p->members[i];
        if (p->members[i] == 0)
            return NULL;
    }
}

static int member_known(const process_records *p, pid_t pid)
{
    return member_find(p, pid) != NULL;
}

/* A member's last record came: its pid leaves the set, so that a process
 * of another tree that is given the same pid later (pid_max may be 32768)
 * is not taken for it.  The last PROCESS_ENDED_RING ended pids stay
 * recognised, with their start and end, for a child whose record is read
 * after its parent's (two CPUs' exits crossing).  latest_start_sec and
 * end_sec: the member's start relative to the run, at the latest (the
 * record's elapsed time counted back from when it was read, which is after
 * the exit), and when it was read. */
static void member_ended(process_records *p, pid_t pid, double latest_start_sec, double end_sec)
{
    pid_t *slot = member_find(p, pid);
    if (slot)
        *slot = -1;
    p->ended[p->ended_next] = (struct ended_member){
        pid, p->start_monotonic_sec + p->boot_minus_monotonic_sec + latest_start_sec,
        p->start_monotonic_sec + p->real_minus_monotonic_sec + end_sec};
    p->ended_next = (p->ended_next + 1) % PROCESS_ENDED_RING;
}

static const struct ended_member *ended_recently(const process_records *p, pid_t pid)
{
    for (size_t i = 0; pid > 0 && i < PROCESS_ENDED_RING; i++)
        if (p->ended[i].pid == pid)
            return &p->ended[i];
    return NULL;
}

/* Adds pid; a set three quarters full starts over (the bound: only a
 * parent that ended long ago is forgotten, and its late children then go
 * through the /proc walk or wait as pending). */
static void member_add(process_records *p, pid_t pid)
{
    if (pid <= 0 || member_known(p, pid))
        return;
    if (p->member_count >= PROCESS_MEMBER_SLOTS / 4 * 3) {
        memset(p->members, 0, PROCESS_MEMBER_SLOTS * sizeof *p->members);
        p->member_count = 0;
    }
    size_t i = member_slot(pid);
    while (p->members[i] != 0)
        i = (i + 1) % PROCESS_MEMBER_SLOTS;
    p->members[i] = pid;
    p->member_count++;
}

/* What /proc/PID/stat says of a live pid (fields after the last ')'). */
struct proc_stat {
    char state;               /* (3): 'Z' a zombie, 'X' dead */
    pid_t ppid;               /* (4) */
    unsigned flags;           /* (9): PF_EXITING once it is in its exit */
    unsigned long long start; /* (22) starttime, clock ticks since boot: a reused pid differs */
};

/* The number at *at (after spaces; a '-' sign is skipped), *at moved past it. */
static unsigned long long next_number(const char **at, const char *end)
{
    const char *c = *at;
    while (c < end && *c == ' ')
        c++;
    if (c < end && *c == '-')
        c++;
    unsigned long long value = 0;
    for (; c < end && *c >= '0' && *c <= '9'; c++)
        value = value * 10 + (unsigned long long)(*c - '0');
    *at = c;
    return value;
}

/* 0, or -1 when the pid is gone.  Read with open, read and close and
 * parsed by hand: this runs for exits all over the machine (fopen, two
 * reads and sscanf made it half again as dear). */
static int read_proc_stat(pid_t pid, struct proc_stat *st)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n;
    do
        n = read(fd, buf, sizeof buf - 1);
    while (n < 0 && errno == EINTR);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    const char *close_paren = strrchr(buf, ')'), *end = buf + n;
    if (!close_paren || close_paren + 3 >= end)
        return -1;
    st->state = close_paren[2];
    const char *at = close_paren + 3;
    for (int field = 4; field <= 22; field++) {
        unsigned long long value = next_number(&at, end);
        if (at >= end || *at != ' ')
            return -1;
        if (field == 4)
            st->ppid = (pid_t)value;
        else if (field == 9)
            st->flags = (unsigned)value;
        else if (field == 22)
            st->start = value;
    }
    return 0;
}

#define PF_EXITING_FLAG 0x4 /* include/linux/sched.h PF_EXITING */

/* Whether the pid of a member that ended is now another process's (a pid
 * is told apart by pid and start time, faults.md #9).  The member's last
 * record came, so it is in its exit for good (PF_EXITING), a zombie, or
 * gone: a live process not exiting under its pid is another; one exiting
 * is another when it started after the member's latest start.  A pid gone
 * from /proc names nobody else now: the member, reaped. */
static int ended_pid_reused(const struct ended_member *e)
{
    struct proc_stat st;
    if (read_proc_stat(e->pid, &st) != 0)
        return 0;
    if (st.state != 'Z' && st.state != 'X' && !(st.flags & PF_EXITING_FLAG))
        return 1;
    long ticks = sysconf(_SC_CLK_TCK);
    return ticks > 0 && (double)st.start / (double)ticks > e->latest_start_boot_sec;
}

/* The foreign set.  Whether a live process is the run's cannot change while
 * it lives (it is reparented only when its parent ends, to init or to its
 * nearest subreaper ancestor -- resmon, if it was the run's), and its pid
 * is free again only after it ended, which sends its record first: so an
 * entry stands until a record of that pid arrives (foreign_forget), or
 * until records were lost (an overrun: all are forgotten).  A process seen
 * in its exit (a zombie, PF_EXITING) is not entered: its record may have
 * been read already.  The exits of another build on the machine then cost
 * no read of /proc once its make and shells are known, where each exit
 * read its parent's stat (and each new parent's chain up to init): most of
 * resmon's CPU beside a parallel build, 81 % of it at 1000 sleepers. */
static int foreign_known(const process_records *p, pid_t pid)
{
    return p->foreign[(size_t)pid % PROCESS_FOREIGN_CACHE] == pid;
}

static void foreign_forget(process_records *p, pid_t pid)
{
    if (pid > 0 && foreign_known(p, pid))
        p->foreign[(size_t)pid % PROCESS_FOREIGN_CACHE] = 0;
}

static int seen_live(const struct proc_stat *st)
{
    return st->state != 'Z' && st->state != 'X' && !(st->flags & PF_EXITING_FLAG);
}

/* When a process started, at the earliest, in seconds since the epoch --
 * from a thread group leader's record only (another thread started later
 * than its process); 0 unknown.  The record's begin time is no floor of
 * the start: the kernel takes the whole seconds of the wall clock at the
 * exit minus the whole seconds of the elapsed time (kernel/tsacct.c), which
 * lies within a second either side of the start -- a child started at
 * .9 and ended at .1 of the next second is "begun" at the later second.
 * Taken as the start, it put real children after their parent's end:
 * CI43 lost 4 of 182 records of a 90-deep script, its two CPUs' exits
 * crossing under load.  The start is after btime - 1. */
static double earliest_start_epoch_sec(const struct taskstats *ts)
{
    if (ts->version >= 12 && ts->ac_pid != ts->ac_tgid)
        return 0;
    double btime = (double)(ts->version >= 10 && ts->ac_btime64 ? ts->ac_btime64 : ts->ac_btime);
    return btime > 1 ? btime - 1 : 0;
}

/* 1: parent belongs to the run (rules 1-3); 0: it does not; -1: parent is
 * gone, undecided (rule 4); -2: the chain of live ancestors is deeper than
 * PROCESS_CHAIN_MAX (a process that deep is counted unattributed, never
 * dropped as foreign: a recursive script 90 levels deep lost 55 records).
 * Live ancestors found on the way are added to the members; a chain that
 * reaches init, or a process known foreign, enters its live members in the
 * foreign set. */
static int parent_in_run(process_records *p, const struct taskstats *child)
{
    pid_t parent = (pid_t)child->ac_ppid;
    pid_t chain[PROCESS_CHAIN_MAX];
    int live[PROCESS_CHAIN_MAX];
    size_t depth = 0;
    /* A child that started after the member of its parent's pid had ended
     * is a later holder's (faults.md #9): with pid_max 32768 and another
     * build on the machine, a pid of the run came round again within the
     * ring's span, and its holder -- gone from /proc by now, so
     * ended_pid_reused could not tell -- had two children's records taken
     * into the run (303 of 301, under two CI runs and six busy loops).  The
     * child's begin time is known within a second (earliest_start_epoch_sec):
     * a reuse within about a second of the end still passes. */
    const struct ended_member *ended = ended_recently(p, parent);
    if (ended && !ended_pid_reused(ended) && earliest_start_epoch_sec(child) < ended->ended_by_epoch_sec)
        return 1; /* else the walk below tells whose child it is */
    for (pid_t at = parent; depth < sizeof chain / sizeof chain[0]; depth++) {
        if (at == p->resmon_pid || member_known(p, at)) {
            for (size_t i = 0; i < depth; i++)
                member_add(p, chain[i]);
            return 1;
        }
        if (at <= 1 || foreign_known(p, at))
            break;
        chain[depth] = at;
        struct proc_stat st;
        if (read_proc_stat(at, &st) != 0)
            return depth == 0 ? -1 : 0; /* a gone grandparent: its child was reparented, not ours */
        live[depth] = seen_live(&st);
        at = st.ppid;
    }
    if (depth == PROCESS_CHAIN_MAX)
        return -2;
    for (size_t i = 0; i < depth; i++)
        if (live[i])
            p->foreign[(size_t)chain[i] % PROCESS_FOREIGN_CACHE] = chain[i];
    return 0;
}

void process_record_figures(const process_record *r, process_figure out[PROCESS_FIGURES])
{
    const process_figure figures[PROCESS_FIGURES] = {
        {"start_sec", r->start_sec, 0},
        {"end_sec", r->end_sec, 0},
        {"cpu_user_sec", r->cpu_user_sec, 0},
        {"cpu_sys_sec", r->cpu_sys_sec, 0},
        {"cpu_sec", r->cpu_sec, 0},
        {"peak_rss_mb", r->peak_rss_mb, 0},
        {"read_bytes", r->read_bytes, 1},
        {"write_bytes", r->write_bytes, 1},
        {"minor_faults", r->minor_faults, 1},
        {"major_faults", r->major_faults, 1},
        {"voluntary_switches", r->voluntary_switches, 1},
        {"involuntary_switches", r->involuntary_switches, 1},
    };
    memcpy(out, figures, sizeof figures);
}

void process_figure_format(const process_figure *f, char *buf)
{
    if (f->count && isfinite(f->value)) /* whole, and below 2^53: exact */
        snprintf(buf, 32, "%.0f", f->value);
    else
        rm__json_format_double(f->value, buf);
}

/* ---- the kept figures ---- */
static void top_insert(process_record *top, size_t *count, const process_record *r, int by_cpu)
{
    double key = by_cpu ? r->cpu_sec : r->peak_rss_mb;
    if (isnan(key))
        return;
    size_t at = *count;
    while (at > 0) {
        const process_record *q = &top[at - 1];
        double qkey = by_cpu ? q->cpu_sec : q->peak_rss_mb;
        if (qkey >= key)
            break;
        at--;
    }
    if (at >= PROCESS_TOP_N)
        return;
    size_t last = *count < PROCESS_TOP_N ? *count : PROCESS_TOP_N - 1;
    memmove(&top[at + 1], &top[at], (last - at) * sizeof *top);
    top[at] = *r;
    if (*count < PROCESS_TOP_N)
        (*count)++;
}

static process_aggregate *aggregate_for(process_records *p, const char *comm, const char *source)
{
    for (size_t i = 0; i < p->name_count; i++)
        if (strcmp(p->names[i].comm, comm) == 0 && p->names[i].source == source)
            return &p->names[i];
    if (p->name_count < PROCESS_MAX_NAMES) {
        process_aggregate *a = &p->names[p->name_count++];
        snprintf(a->comm, sizeof a->comm, "%s", comm);
        a->peak_rss_mb = NAN;
        a->source = source;
        return a;
    }
    process_aggregate *other = &p->names[PROCESS_MAX_NAMES];
    if (!p->other_names_used) {
        snprintf(other->comm, sizeof other->comm, "(other names)");
        other->peak_rss_mb = NAN;
        other->source = source; /* the first to fold here: with taskstats, the only one */
        p->other_names_used = 1;
    }
    return other;
}

/* Keeps one finished process (lock held). */
static void keep(process_records *p, const process_record *r)
{
    double cpu = r->cpu_sec;
    if (r->source == SOURCE_SAMPLED) { /* its CPU is already in its reaper's wait4 figure: summed apart */
        p->totals.sampled_count++;
        p->totals.sampled_cpu_sec += cpu;
    } else {
        p->totals.count++;
        p->totals.thread_records += (unsigned long)r->threads;
        p->totals.cpu_sec += cpu;
        if (r->signal)
            p->totals.signaled++;
        if (r->signal == SIGKILL)
            p->totals.killed++;
        else if (r->exit_code > 0)
            p->totals.exited_nonzero++;
    }
    top_insert(p->top_rss, &p->top_rss_count, r, 0);
    top_insert(p->top_cpu, &p->top_cpu_count, r, 1);
    process_aggregate *a = aggregate_for(p, r->comm[0] ? r->comm : "?", r->source);
    a->count++;
    a->cpu_sec += cpu;
    if (!isnan(r->peak_rss_mb) && (isnan(a->peak_rss_mb) || r->peak_rss_mb > a->peak_rss_mb)) {
        a->peak_rss_mb = r->peak_rss_mb;
        a->peak_pid = r->pid;
    }
    /* After the first failed write nothing more is written, so the file
     * holds a prefix of the records (stdio may report the failure only at
     * a later flush); the missing ones are counted from its size. */
    if (p->all && !p->totals.keep_all_error && fwrite(r, sizeof *r, 1, p->all) != 1)
        p->totals.keep_all_error = errno ? -errno : -EIO;
    if (p->on_record)
        p->on_record(r, p->on_record_user);
}

/* A wait status (wait4's, and taskstats' ac_exitcode, which is the task's
 * exit_code in the same encoding) as the code or the signal: a process
 * killed by SIGKILL is signal 9, never "exit 137" as a shell would say. */
static void set_status(process_record *r, int status)
{
    r->exit_code = WIFSIGNALED(status) ? -1 : WEXITSTATUS(status);
    r->signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

/* One thread's record as a process record.  CPU: the scheduler's exact
 * runtime (cpu_run_virtual_total, ns), split between user and system in the
 * ratio of the tick-sampled ac_utime/ac_stime, as the kernel splits what
 * wait4 reports (cputime_adjust); the ticks alone miss a process shorter
 * than a tick. */
static void from_taskstats(const process_records *p, const struct taskstats *ts, double end_sec, process_record *r)
{
    memset(r, 0, sizeof *r);
    r->pid = (pid_t)(ts->version >= 12 ? ts->ac_tgid : ts->ac_pid);
    r->ppid = (pid_t)ts->ac_ppid;
    snprintf(r->comm, sizeof r->comm, "%.*s", (int)sizeof ts->ac_comm, ts->ac_comm);
    double elapsed = (double)(ts->version >= 12 && ts->ac_tgetime ? ts->ac_tgetime : ts->ac_etime) / 1e6;
    /* The end is when the record was read: the kernel stamps no time on it
     * (its elapsed time counts to an instant it does not give), so the end
     * is late by the listener's delay -- under a millisecond idle, up to
     * its pass gap (100 ms, taskstats.c) and more on a busy machine -- and the start, the elapsed time before it, as late.
     * The begin time, whole seconds counted back from the instant by the
     * whole seconds of ac_etime, says in which wall-clock second the record
     * was made: a record read after that second (a listener held up by a
     * slow output) ends at that second's end, late by under a second.
     * Nothing of the run starts before it: the command is forked before
     * the run's start but held until then (its elapsed time counts the
     * wait), so a start before 0 is 0. */
    if (ts->version >= 10 && ts->ac_btime64) {
        double made_by_epoch = (double)ts->ac_btime64 + floor((double)ts->ac_etime / 1e6) + 1;
        double made_by = made_by_epoch - p->real_minus_monotonic_sec - p->start_monotonic_sec;
        if (made_by < end_sec && made_by > 0) /* a wall clock stepped back since the start: left as read */
            end_sec = made_by;
    }
    r->end_sec = end_sec;
    r->start_sec = end_sec - elapsed > 0 ? end_sec - elapsed : 0;
    double user = (double)ts->ac_utime / 1e6, sys = (double)ts->ac_stime / 1e6;
    double runtime = (double)ts->cpu_run_virtual_total / 1e9;
    if (runtime > 0) {
        double ticks = user + sys;
        user = ticks > 0 ? runtime * user / ticks : runtime;
        sys = runtime - user;
    }
    r->cpu_user_sec = user;
    r->cpu_sys_sec = sys;
    r->cpu_sec = user + sys;
    r->peak_rss_mb = (double)ts->hiwater_rss / 1024.0; /* KiB */
    r->read_bytes = (double)ts->read_bytes;
    r->write_bytes = (double)ts->write_bytes;
    r->minor_faults = (double)ts->ac_minflt;
    r->major_faults = (double)ts->ac_majflt;
    r->voluntary_switches = (double)ts->nvcsw;
    r->involuntary_switches = (double)ts->nivcsw;
    set_status(r, (int)ts->ac_exitcode);
    r->threads = 1;
    r->source = SOURCE_TASKSTATS;
    (void)p;
}

/* Adds a thread's figures into its process's: times and counts add up,
 * the memory (shared by the threads) is the largest mark. */
static void fold(process_record *into, const process_record *thread)
{
    into->cpu_user_sec += thread->cpu_user_sec;
    into->cpu_sys_sec += thread->cpu_sys_sec;
    into->cpu_sec += thread->cpu_sec;
    into->read_bytes += thread->read_bytes;
    into->write_bytes += thread->write_bytes;
    into->minor_faults += thread->minor_faults;
    into->major_faults += thread->major_faults;
    into->voluntary_switches += thread->voluntary_switches;
    into->involuntary_switches += thread->involuntary_switches;
    into->threads += thread->threads;
    if (thread->peak_rss_mb > into->peak_rss_mb)
        into->peak_rss_mb = thread->peak_rss_mb;
    if (thread->start_sec < into->start_sec)
        into->start_sec = thread->start_sec;
    if (thread->end_sec > into->end_sec)
        into->end_sec = thread->end_sec;
}

/* Room for one more open process: the array grows (doubling) up to
 * PROCESS_OPEN_MAX.  300 forked workers that each ended a thread before
 * their main one overflowed a fixed 256: 44 processes counted twice. */
static int open_room(process_records *p)
{
    if (p->open_count < p->open_capacity)
        return 1;
    if (p->open_capacity >= PROCESS_OPEN_MAX)
        return 0;
    size_t capacity = p->open_capacity ? p->open_capacity * 2 : 64;
    if (capacity > PROCESS_OPEN_MAX)
        capacity = PROCESS_OPEN_MAX;
    process_record *grown = realloc(p->open, capacity * sizeof *grown);
    if (!grown)
        return 0;
    p->open = grown;
    p->open_capacity = capacity;
    return 1;
}

/* A member's thread record: folded into its open process until the
 * process's last thread (AGROUP, taskstats v12+) ends it.  Before v12 a
 * record has no thread group id: each is kept as its own process. */
static void take_member(process_records *p, const struct taskstats *ts, double end_sec)
{
    process_record r;
    from_taskstats(p, ts, end_sec, &r);
    member_add(p, r.pid);
    size_t i = 0;
    while (i < p->open_count && p->open[i].pid != r.pid)
        i++;
    int last = ts->version < 12 || (ts->ac_flag & AGROUP);
    /* The process's name is its main thread's, whichever thread ends last:
     * named worker threads (JVMs, tokio, Python's) split one program in
     * "by name" under random thread names. */
    int leader = ts->version < 12 || ts->ac_pid == ts->ac_tgid;
    if (i < p->open_count) {
        fold(&p->open[i], &r);
        if (leader)
            memcpy(p->open[i].comm, r.comm, sizeof r.comm);
        if (last) { /* the last thread's status is the process's */
            p->open[i].exit_code = r.exit_code;
            p->open[i].signal = r.signal;
            process_record done = p->open[i];
            p->open[i] = p->open[--p->open_count];
            keep(p, &done);
            member_ended(p, r.pid, done.start_sec, done.end_sec);
        }
    } else if (last) {
        keep(p, &r);
        member_ended(p, r.pid, r.start_sec, r.end_sec);
    } else if (open_room(p)) {
        p->open[p->open_count++] = r;
    } else { /* more processes with threads ending at once than the bound (or memory): kept unfolded, said */
        p->totals.unfolded++;
        keep(p, &r);
    }
}

/* When a pending record's process started, at the latest (its elapsed
 * time counted back from when it was read), in seconds since the epoch. */
static double latest_start_epoch_sec(const process_records *p, const struct pending *q)
{
    const struct taskstats *ts = &q->ts;
    double elapsed = (double)(ts->version >= 12 && ts->ac_tgetime ? ts->ac_tgetime : ts->ac_etime) / 1e6;
    return p->start_monotonic_sec + p->real_minus_monotonic_sec + q->end_sec - elapsed;
}

/* Settles the pending records whose parent is the process of record
 * parent, now decided: in the run (verdict > 0) they are taken, each placed
 * one placing its own; another tree's (0) they are dropped with theirs --
 * left waiting, another build's records filled the bounded queue on a busy
 * machine and a record of the run's that came later found no room and was
 * counted unattributed; too deep to tell (-2) they are counted unattributed.
 * A pending record names its parent by pid, and the parent was gone when it
 * came: a process that started after the child cannot be its parent, only
 * a later holder of the pid (faults.md #9), and does not settle it. */
static void settle_pending(process_records *p, const struct taskstats *parent, int verdict)
{
    pid_t pid = (pid_t)(parent->version >= 12 ? parent->ac_tgid : parent->ac_pid);
    double parent_earliest = earliest_start_epoch_sec(parent);
    for (size_t i = 0; i < p->pending_count;) {
        if ((pid_t)p->pending[i].ts.ac_ppid == pid && latest_start_epoch_sec(p, &p->pending[i]) >= parent_earliest) {
            struct pending q = p->pending[i];
            p->pending[i] = p->pending[--p->pending_count];
            settle_pending(p, &q.ts, verdict); /* its own children first: they ended before it */
            if (verdict > 0)
                take_member(p, &q.ts, q.end_sec);
            else if (verdict == -2)
                p->totals.unattributed++;
            i = 0;
        } else {
            i++;
        }
    }
}

void process_records_taskstats(const struct taskstats *ts, void *user)
{
    process_records *p = user;
    if (!ts) { /* records were lost: an exit of a process known foreign may be among them */
        pthread_mutex_lock(&p->lock);
        memset(p->foreign, 0, sizeof p->foreign);
        pthread_mutex_unlock(&p->lock);
        return;
    }
    pid_t tgid = (pid_t)(ts->version >= 12 ? ts->ac_tgid : ts->ac_pid);
    if (tgid == p->resmon_pid)
        return; /* resmon's own threads */
    double now = clock_monotonic_sec();
    pthread_mutex_lock(&p->lock); /* the start is set while the listener runs */
    foreign_forget(p, (pid_t)ts->ac_pid); /* it ended: its pid may name another process next */
    double end_sec = now - p->start_monotonic_sec;
    int in = member_known(p, tgid) ? 1 : parent_in_run(p, ts);
    /* The children that waited for this record first: they ended before it,
     * and the processes file lists records as they end (a child read after
     * its parent was reaped waits, and the listener's passes are 100 ms
     * apart: a shell's five children were written after it). */
    if (in != -1 && p->pending_count)
        settle_pending(p, ts, in);
    if (in > 0)
        take_member(p, ts, end_sec);
    else if (in == -2)
        p->totals.unattributed++;
    if (in == -1) {
        if (p->pending_count < PROCESS_PENDING_MAX) {
            p->pending[p->pending_count].ts = *ts;
            p->pending[p->pending_count].end_sec = end_sec;
            p->pending_count++;
        } else {
            p->totals.unattributed++;
        }
    }
    pthread_mutex_unlock(&p->lock);
}

void process_records_wait4(process_records *p, pid_t pid, const char *comm, int status, const struct rusage *ru,
                           double end_monotonic_sec)
{
    process_record r;
    memset(&r, 0, sizeof r);
    r.pid = pid;
    r.ppid = p->resmon_pid;
    snprintf(r.comm, sizeof r.comm, "%s", comm && comm[0] ? comm : "?");
    r.start_sec = NAN;
    r.end_sec = end_monotonic_sec - p->start_monotonic_sec;
    r.cpu_user_sec = (double)ru->ru_utime.tv_sec + (double)ru->ru_utime.tv_usec / 1e6;
    r.cpu_sys_sec = (double)ru->ru_stime.tv_sec + (double)ru->ru_stime.tv_usec / 1e6;
    r.cpu_sec = r.cpu_user_sec + r.cpu_sys_sec;
    r.peak_rss_mb = (double)ru->ru_maxrss / 1024.0; /* KiB */
    r.read_bytes = r.write_bytes = NAN;
    r.minor_faults = (double)ru->ru_minflt;
    r.major_faults = (double)ru->ru_majflt;
    r.voluntary_switches = (double)ru->ru_nvcsw;
    r.involuntary_switches = (double)ru->ru_nivcsw;
    set_status(&r, status);
    r.threads = 0;
    r.source = SOURCE_WAIT4;
    pthread_mutex_lock(&p->lock);
    if (p->totals.source_error) { /* with taskstats, its own record of the process is kept */
        keep(p, &r);
        member_add(p, pid); /* its sampled record is not kept beside this exact one */
    }
    pthread_mutex_unlock(&p->lock);
}

/* A library record as the command's: times moved from the window's first
 * reading to the run's start; the figures the walk does not read (I/O,
 * faults, switches, the CPU split, the exit status) unknown. */
static void from_sampled(const process_records *p, const resmon_process *s, double window_first_monotonic_sec,
                         process_record *r)
{
    memset(r, 0, sizeof *r);
    r->pid = s->pid;
    r->ppid = s->ppid;
    snprintf(r->comm, sizeof r->comm, "%s", s->comm);
    double shift = window_first_monotonic_sec - p->start_monotonic_sec; /* NAN: the times are unknown */
    r->start_sec = s->start_sec + shift;
    r->end_sec = s->end_sec + shift;
    r->cpu_user_sec = r->cpu_sys_sec = NAN;
    r->cpu_sec = s->cpu_sec;
    r->peak_rss_mb = s->peak_rss_mb;
    r->read_bytes = r->write_bytes = NAN;
    r->minor_faults = r->major_faults = NAN;
    r->voluntary_switches = r->involuntary_switches = NAN;
    r->exit_code = -1;
    r->signal = 0;
    r->threads = 0;
    r->source = SOURCE_SAMPLED;
}

void process_records_sampled(process_records *p, const resmon_process *records, size_t count, uint64_t seen,
                             double window_first_monotonic_sec)
{
    pthread_mutex_lock(&p->lock);
    if (p->totals.source_error) {
        p->totals.sampled = 1;
        p->totals.sampled_seen = seen;
        if (count > RESMON_MAX_PROCESSES)
            count = RESMON_MAX_PROCESSES;
        for (size_t i = 0; i < count; i++)
            from_sampled(p, &records[i], window_first_monotonic_sec, &p->sampled[i]);
        p->sampled_count = count;
    }
    pthread_mutex_unlock(&p->lock);
}

void process_records_finish(process_records *p, unsigned long long overruns)
{
    pthread_mutex_lock(&p->lock);
    /* A pending record whose parent ended in the run was placed when that
     * parent's record came: what is left belongs to another tree (a
     * parent's record comes after its children's, and every record of the
     * run has come) -- unless records were lost, and then its parent's may
     * have been among them: counted, not guessed. */
    if (overruns)
        p->totals.unattributed += p->pending_count;
    p->pending_count = 0;
    while (p->open_count > 0) { /* the last thread's record was lost (overrun) */
        process_record done = p->open[--p->open_count];
        keep(p, &done);
    }
    /* Every wait4 record has come: the processes resmon reaped keep theirs
     * (the command's is exact), the others the walk saw keep the sampled. */
    for (size_t i = 0; i < p->sampled_count; i++)
        if (!member_known(p, p->sampled[i].pid))
            keep(p, &p->sampled[i]);
    p->sampled_count = 0;
    p->totals.overruns = overruns;
    pthread_mutex_unlock(&p->lock);
}

/* An unlinked temporary file: O_TMPFILE where the file system has it,
 * else a name that is removed at once.  Nothing is left behind by a kill. */
static int unlinked_temporary(void)
{
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0)
        return fd;
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/resmon-processes-XXXXXX", dir) >= sizeof path)
        return -ENAMETOOLONG;
    fd = mkostemp(path, O_CLOEXEC);
    if (fd < 0)
        return -errno;
    unlink(path);
    return fd;
}

int process_records_keep_all(process_records *p)
{
    pthread_mutex_lock(&p->lock);
    p->totals.keep_all = 1;
    int fd = unlinked_temporary();
    if (fd >= 0 && !(p->all = fdopen(fd, "w+"))) {
        int err = -errno;
        close(fd);
        fd = err;
    }
    if (fd < 0)
        p->totals.keep_all_error = fd;
    pthread_mutex_unlock(&p->lock);
    return fd < 0 ? fd : 0;
}

long process_records_each(process_records *p, void (*fn)(const process_record *, void *), void *user)
{
    if (!p->totals.keep_all)
        return 0;
    if (!p->all)
        return (long)(p->totals.count + p->totals.sampled_count); /* no file: every record lost */
    struct stat st;
    if (!p->totals.keep_all_error && fflush(p->all) != 0)
        p->totals.keep_all_error = errno ? -errno : -EIO;
    if (fstat(fileno(p->all), &st) != 0)
        return -errno;
    unsigned long held = (unsigned long)((size_t)st.st_size / sizeof(process_record));
    rewind(p->all);
    clearerr(p->all); /* a failed write's flag: what follows is the reading */
    process_record r;
    unsigned long given = 0;
    for (; given < held && fread(&r, sizeof r, 1, p->all) == 1; given++) {
        if (r.source != SOURCE_TASKSTATS && r.source != SOURCE_WAIT4 && r.source != SOURCE_SAMPLED)
            break; /* not a record as written: never follow its pointer */
        r.comm[sizeof r.comm - 1] = '\0';
        fn(&r, user);
    }
    held = given;
    if (ferror(p->all))
        return -EIO;
    unsigned long kept = p->totals.count + p->totals.sampled_count;
    return held < kept ? (long)(kept - held) : 0;
}

void process_records_totals(const process_records *p, process_totals *t)
{
    *t = p->totals;
}

size_t process_records_top_rss(const process_records *p, const process_record **out)
{
    *out = p->top_rss;
    return p->top_rss_count;
}

size_t process_records_top_cpu(const process_records *p, const process_record **out)
{
    *out = p->top_cpu;
    return p->top_cpu_count;
}

static int by_cpu_descending(const void *a, const void *b)
{
    double x = ((const process_aggregate *)a)->cpu_sec, y = ((const process_aggregate *)b)->cpu_sec;
    return (x < y) - (x > y);
}

size_t process_records_by_name(process_records *p, const process_aggregate **out)
{
    /* "(other names)", used only once every row is taken, follows them in
     * the array and is ranked with them: past PROCESS_MAX_NAMES names the
     * driver that ends last (make, python) lands there, and a table that
     * left it out hid the heaviest program.  Sorting moves it from its
     * fixed place, so this is for the end of the run, after the last
     * record. */
    size_t count = p->name_count + (size_t)p->other_names_used;
    qsort(p->names, count, sizeof *p->names, by_cpu_descending);
    *out = p->names;
    return count;
}
