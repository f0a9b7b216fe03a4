/*
 * process_records.h -- every process of a run, however short it lived,
 * folded into what fits in memory: aggregates by command name and the top
 * N by peak RSS and by CPU.
 *
 * Records come from taskstats (each process's own CPU and its own
 * high-water mark of RSS, which for a forked child counts the pages it
 * shares with its parent; one record per exit) or, where taskstats is not allowed, from wait4
 * of the processes resmon reaps itself (the command and the orphans it
 * adopts as subreaper: exact, but each figure includes what that process
 * reaped) and, alongside, the library's sampled records of the processes
 * its walk saw (resmon_monitor_get_processes: each one's own CPU and peak as
 * of the last sample that read it; a process that lived less than an
 * interval between two samples may be missing).  Each record says its
 * source.
 *
 * Bound: PROCESS_TOP_N records per ranking, PROCESS_MAX_NAMES aggregates
 * (later names fold into one "(other names)" row), PROCESS_OPEN_MAX
 * multi-threaded processes being folded at once (grown as needed; past it a
 * thread's record is kept unfolded, and counted), PROCESS_PENDING_MAX
 * records whose parent is not yet known, a set of PROCESS_MEMBER_SLOTS pids
 * and the last PROCESS_ENDED_RING ended: under 3 MiB whatever the number of
 * processes.  With --processes all every record is kept too, but on disk:
 * an unlinked temporary file in $TMPDIR (or /tmp) that takes sizeof
 * (process_record), 160 bytes on x86-64, per process and is read back once, at the
 * end; memory stays within the bound above.
 */
#ifndef RESMON_PROCESS_RECORDS_H
#define RESMON_PROCESS_RECORDS_H

#include <linux/taskstats.h>
#include <resmon.h>
#include <stddef.h>
#include <sys/resource.h>
#include <sys/types.h>

#define PROCESS_TOP_N 5
#define PROCESS_MAX_NAMES 512
#define PROCESS_OPEN_MAX 8192
#define PROCESS_PENDING_MAX 1024
#define PROCESS_MEMBER_SLOTS 65536
#define PROCESS_ENDED_RING 256
#define PROCESS_COMM_MAX 32
#define PROCESS_CHAIN_MAX 1024 /* live ancestors followed up to resmon, at most */

typedef struct process_record {
    pid_t pid;            /* the process (thread group) */
    pid_t ppid;           /* its parent when it ended */
    char comm[PROCESS_COMM_MAX];
    double start_sec;     /* relative to the run's start; NAN unknown */
    double end_sec;
    double cpu_user_sec, cpu_sys_sec; /* NAN when only the sum is known (sampled) */
    double cpu_sec;       /* their sum: what rankings and sums use */
    double peak_rss_mb;   /* its own high-water mark (taskstats; a forked child's counts the pages it shares
                           * with its parent), or wait4's (its and what it reaped) */
    double read_bytes, write_bytes; /* storage I/O; NAN unknown */
    double minor_faults, major_faults;
    double voluntary_switches, involuntary_switches;
    int exit_code;        /* the code it exited with; -1: it was killed by a signal, or unknown */
    int signal;           /* the signal that ended it (SIGKILL: 9, never "exit 137"); 0: none */
    int threads;          /* the thread records folded into it */
    const char *source;   /* "taskstats", "wait4", "sampled" */
} process_record;

/* A record's figures in the order every output writes them (the JSON's
 * records, the processes file's columns), each saying whether it is a
 * count (bytes, faults, switches: written as an integer, "49" not "49.0"). */
#define PROCESS_FIGURES 12
typedef struct process_figure {
    const char *key;
    double value; /* NAN: unknown (null, or an empty CSV field) */
    int count;
} process_figure;
void process_record_figures(const process_record *r, process_figure out[PROCESS_FIGURES]);
/* A figure as JSON number text ("null" when unknown); buf holds 32 bytes. */
void process_figure_format(const process_figure *f, char *buf);

typedef struct process_aggregate {
    char comm[PROCESS_COMM_MAX];
    unsigned long count;
    double cpu_sec;
    double peak_rss_mb;   /* the largest own peak among them */
    pid_t peak_pid;       /* the process that had it */
    const char *source;   /* the records' source: a name's wait4 and sampled records are two rows (a wait4
                           * figure includes what that process reaped, sampled ones among them) */
} process_aggregate;

typedef struct process_records process_records;

/* Records for a run of processes descending from resmon_pid (resmon, their
 * subreaper).  NULL when out of memory. */
process_records *process_records_new(pid_t resmon_pid);
/* The run starts (times are relative to start_monotonic_sec); source_error:
 * 0 when taskstats listens, else its -errno: then the records are the
 * processes resmon reaps (process_records_wait4), otherwise those calls are
 * ignored.  Call before taskstats can deliver. */
void process_records_start(process_records *p, double start_monotonic_sec, int source_error);
void process_records_free(process_records *p);

/* Called for each record as it is kept (on the listener's thread or the
 * caller's), for --processes-file; NULL for none. */
void process_records_on_record(process_records *p, void (*fn)(const process_record *, void *), void *user);

/* --processes all: every record kept from now on is also written to an
 * unlinked temporary file, for process_records_each.  0, or -errno (no
 * temporary file could be made: the run goes on, process_totals says why). */
int process_records_keep_all(process_records *p);

/* A taskstats_callback (user: the records): keeps the record when the task
 * belongs to the run, folding threads into their process; NULL (records were
 * lost) forgets which processes were known foreign. */
void process_records_taskstats(const struct taskstats *ts, void *user);

/* A process resmon reaped (wait4): its status and accounting, kept when
 * taskstats does not listen.  comm may be "" when unknown. */
void process_records_wait4(process_records *p, pid_t pid, const char *comm, int status, const struct rusage *ru,
                           double end_monotonic_sec);

/* Without taskstats: the library's sampled records of the window (times
 * relative to its first reading, window_first_monotonic_sec; NAN: unknown)
 * and how many processes it saw.  Kept at process_records_finish, after
 * the wait4 records: a process resmon reaped keeps its exact wait4 record
 * and its sampled one is dropped.  Ignored with taskstats. */
void process_records_sampled(process_records *p, const resmon_process *records, size_t count, uint64_t seen,
                             double window_first_monotonic_sec);

/* After the last record (taskstats stopped): counts the records never
 * placed and keeps what is still open; overruns: taskstats_overruns. */
void process_records_finish(process_records *p, unsigned long long overruns);

/* ---- what the outputs read, after finish ---- */
typedef struct process_totals {
    unsigned long count;        /* processes recorded by the source (taskstats or wait4), sampled ones not */
    unsigned long thread_records;
    unsigned long unfolded;     /* thread records kept as processes: more than PROCESS_OPEN_MAX folding at once */
    double cpu_sec;             /* their CPU, summed (a sampled process's CPU is in its reaper's wait4 figure) */
    unsigned long sampled_count; /* sampled records kept (without taskstats) */
    unsigned long long sampled_seen; /* processes the library's walk saw: a lower bound of the tree's */
    double sampled_cpu_sec;     /* the sampled records' own CPU, summed */
    int sampled;                /* process_records_sampled was given the library's records */
    unsigned long unattributed; /* parent unknown and never placed, with records lost (overruns) */
    unsigned long exited_nonzero; /* processes that exited with a code other than 0 */
    unsigned long signaled;     /* processes a signal ended */
    unsigned long killed;       /* ... of them SIGKILL (the OOM killer's signal, and kill -9's) */
    unsigned long long overruns;
    int source_error;           /* 0, or why taskstats did not listen (-EPERM ...) */
    int keep_all;               /* process_records_keep_all was asked */
    int keep_all_error;         /* 0, or -errno of the temporary file's failure (records from then on lost) */
    const char *source;         /* "taskstats", "wait4" */
} process_totals;
void process_records_totals(const process_records *p, process_totals *t);
/* The top records by own peak RSS and by CPU, largest first; returns how many (<= PROCESS_TOP_N). */
size_t process_records_top_rss(const process_records *p, const process_record **out);
size_t process_records_top_cpu(const process_records *p, const process_record **out);
/* Every name's aggregate, "(other names)" among them, by CPU (heaviest
 * first).  At the end of the run only: the sort moves the rows. */
size_t process_records_by_name(process_records *p, const process_aggregate **out);
/* With keep_all: calls fn for every record kept, in the order they ended.
 * Returns how many records the file lost (a failed write: process_totals'
 * keep_all_error says why), or -errno when the file cannot be read back. */
long process_records_each(process_records *p, void (*fn)(const process_record *, void *), void *user);

#endif
