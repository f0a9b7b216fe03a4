/*
 * procfs.h -- the small interface between resmon and Linux's /proc.
 *
 * Everything resmon knows about /proc file formats lives behind these
 * functions.  The parsers take a buffer and its length (never a NUL-terminated
 * assumption), so tests feed them fixture text; the readers take a directory
 * file descriptor, so tests can point them at a fixture tree instead of /proc.
 * All return 0 or a byte count on success and a negative errno on failure;
 * -ENOENT and -ESRCH both mean "the process is gone".
 */
#ifndef RESMON_PROCFS_H
#define RESMON_PROCFS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A command name's bytes with the NUL, as the kernel keeps it (TASK_COMM_LEN). */
#define RM__COMM_MAX 16

/* Fields of /proc/PID/stat that resmon uses, numbered as in proc(5). */
typedef struct rm__proc_stat {
    char comm[RM__COMM_MAX]; /* (2) NUL-terminated, cut to fit */
    char state;          /* (3) */
    pid_t ppid;          /* (4) */
    uint64_t minflt;     /* (10) minor faults */
    uint64_t cminflt;    /* (11) minor faults of reaped children */
    uint64_t majflt;     /* (12) major faults */
    uint64_t cmajflt;    /* (13) major faults of reaped children */
    uint64_t utime;      /* (14) clock ticks */
    uint64_t stime;      /* (15) clock ticks */
    uint64_t cutime;     /* (16) clock ticks: user time of reaped children, */
    uint64_t cstime;     /* (17) and system time, each with their own cutime/cstime */
    uint64_t num_threads; /* (20) */
    uint64_t starttime;  /* (22) clock ticks after boot: with pid, a process's identity */
    uint64_t vsize;      /* (23) virtual memory, bytes (statm's size in bytes) */
    uint64_t startstack; /* (28) the stack's start: the same in a forked child
                            as in its parent until it execs (a new, randomized
                            address space); 0 when hidden or not given */
} rm__proc_stat;

/* /proc/PID/io: the I/O of every thread of the process, live or ended, and
 * of the children it has reaped (the kernel folds them in on reap). */
typedef struct rm__proc_io {
    uint64_t rchar, wchar;             /* bytes passed to read/write-like calls */
    uint64_t syscr, syscw;             /* those calls */
    uint64_t read_bytes, write_bytes;  /* bytes the storage layer fetched or
                                          was sent (page cache misses, dirtied
                                          pages written back) */
} rm__proc_io;

/* /proc/PID/net/dev: the network namespace's interfaces, summed. */
typedef struct rm__net_totals {
    uint64_t rx_bytes, rx_packets, tx_bytes, tx_packets;
} rm__net_totals;

/* statm: "size resident shared text lib data dt" in pages.  Gives size
 * (0 only for a process without memory: a zombie or a kernel thread) and
 * resident. */
int rm__parse_statm(const char *buf, size_t len, uint64_t *size_pages, uint64_t *resident_pages);

/* stat: parses after the LAST ')' so that any comm (spaces, parentheses,
 * newlines) is skipped safely.  -EINVAL on truncated or non-numeric text. */
int rm__parse_stat(const char *buf, size_t len, rm__proc_stat *out);

/* status: the value in kB of a "Key:   N kB" line (e.g. "VmHWM").  -ENOENT
 * when the key is absent (kernel threads, zombies), -EINVAL when garbled. */
int rm__parse_status_kb(const char *buf, size_t len, const char *key, uint64_t *kb);

/* The unsigned value of a "Key:  N" line (status, io) with no unit.  -ENOENT
 * when the key is absent, -EINVAL when garbled. */
int rm__parse_status_u64(const char *buf, size_t len, const char *key, uint64_t *value);

/* io: every field of rm__proc_io; -EINVAL when one is missing or garbled. */
int rm__parse_io(const char *buf, size_t len, rm__proc_io *out);

/* net/dev: sums the counters of every interface listed (loopback included:
 * the file is the namespace's, not the process's).  -EINVAL on a line that
 * is not "name: 16 numbers". */
int rm__parse_net_dev(const char *buf, size_t len, rm__net_totals *out);

/* Parses a decimal pid list such as /proc/PID/task/TID/children ("12 34 ").
 * Calls visit for each; stops early and returns its value if non-zero. */
int rm__parse_pid_list(const char *buf, size_t len, int (*visit)(pid_t pid, void *user), void *user);

/* Resets the kernel's peak-RSS mark of the process whose /proc directory is
 * dirfd (writes "5" to clear_refs).  0, or a negative errno when refused. */
int rm__reset_peak_rss(int dirfd);

/* Reads VmHWM (peak RSS) in bytes from the status file under dirfd. */
int rm__read_peak_rss(int dirfd, uint64_t *bytes);
/* The same from a status file kept open (fd, re-read with pread). */
int rm__pread_peak_rss(int fd, uint64_t *bytes);

/* Whether a process whose stat starttime is starttime_ticks (clock ticks
 * after boot, ticks_per_sec of them a second) started after the moment
 * boottime_ns (CLOCK_BOOTTIME, the clock starttime counts in), allowing one
 * tick of rounding.  A process found in a tree that started before the
 * previous sample was missed then, not born since: its past CPU time must not
 * land in one interval. */
int rm__started_after(uint64_t starttime_ticks, long ticks_per_sec, uint64_t boottime_ns);

/* The directory of /proc that resmon reads: "/proc" unless the environment
 * variable RESMON_PROC_ROOT names another (used by tests with fixture trees).
 * Reads the environment: call it once, where a monitor is created on the
 * caller's thread, and pass the result on, never from a background thread
 * (getenv races with a host program's setenv). */
const char *rm__proc_root(void);

/* Whether the proc directory proc_fd belongs to this process's PID
 * namespace: its "self" names getpid().  A /proc mounted for another
 * namespace (unshare -pf without --mount-proc) lists other processes under
 * the same numbers -- the host's kthreadd as our child 2 -- so reading it
 * would measure the wrong process.  0, or -EXDEV.  A directory without
 * "self" (a fixture tree) passes, unless required (the default "/proc"). */
int rm__check_proc_namespace(int proc_fd, int self_required);

#endif
