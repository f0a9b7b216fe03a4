/*
 * cgroup.h -- the small interface between resmon and Linux control groups.
 *
 * Everything resmon knows about cgroup files lives behind these functions,
 * for both layouts: v1, where the memory controller has a hierarchy of its
 * own (memory.usage_in_bytes, memory.max_usage_in_bytes, memory.oom_control),
 * and v2, the unified hierarchy (memory.current, memory.peak, memory.events,
 * cpu.stat, io.stat).  As in procfs.h the parsers take a buffer and its
 * length, and the readers a directory, so tests run both layouts on fixture
 * trees on a machine that has only one.  All return 0 on success and a
 * negative errno on failure; none prints.
 */
#ifndef RESMON_CGROUP_H
#define RESMON_CGROUP_H

#include <stddef.h>
#include <stdint.h>

#define RM__CGROUP_PATH_MAX 4096

/* Where a process's memory cgroup is: the directory in the cgroup file
 * system (mount point joined with the process's path below the mount's
 * root) and the layout. */
typedef struct rm__cgroup_place {
    int version; /* 1 or 2 */
    char dir[RM__CGROUP_PATH_MAX];
} rm__cgroup_place;

/* /proc/PID/cgroup: the path of the v1 hierarchy whose controller list names
 * "memory" (into v1, when not NULL) and of the v2 line "0::PATH" (into v2).
 * Returns a bit mask: 1 when the v1 memory line was found, 2 the v2 line; or
 * -EINVAL on a line that is not "ID:CONTROLLERS:PATH", -ENAMETOOLONG. */
int rm__cgroup_parse_self(const char *buf, size_t len, char *v1, char *v2, size_t cap);

/* /proc/PID/mountinfo: the mount point and the mount's root within its file
 * system of the v1 cgroup mount whose super options name "memory"
 * (version 1) or of the cgroup2 mount (version 2), first found.  Octal
 * escapes (\040 for a space) are decoded.  -ENOENT when there is none. */
int rm__cgroup_parse_mountinfo(const char *buf, size_t len, int version, char *mount_point, char *root,
                               size_t cap);

/* Joins a mount point, the mount's root and a process's cgroup path: the
 * directory of that cgroup.  -ENOENT when the path is not below the root
 * (the cgroup is outside what this mount shows), -ENAMETOOLONG. */
int rm__cgroup_join_path(const char *mount_point, const char *root, const char *path, char *out, size_t cap);

/* The memory cgroup of the process whose /proc directory is proc_dir (e.g.
 * "/proc/self"), found through its cgroup and mountinfo files, with
 * fs_prefix ("" on a real system, a fixture directory in tests) put before
 * every mount point.  Prefers v2 when the unified hierarchy offers the
 * memory controller (its cgroup.controllers names it), else v1's memory
 * hierarchy.  -ENOENT: no memory controller is mounted; -ENOTSUP: v2 only,
 * without the memory controller. */
int rm__cgroup_locate(const char *proc_dir, const char *fs_prefix, rm__cgroup_place *out);

/* rm__cgroup_locate in the v1 hierarchy of controller (e.g. "cpuacct"):
 * out->version 1.  -ENOENT when no such hierarchy is mounted. */
int rm__cgroup_locate_v1(const char *proc_dir, const char *fs_prefix, const char *controller, rm__cgroup_place *out);

/* The memory cgroup's path of the process whose /proc directory is
 * proc_dir, as its cgroup file writes it -- relative to the reader's cgroup
 * namespace, whatever mounts the process sees: the v1 memory hierarchy's
 * line (version 1) or v2's "0::" line.  -ENOENT when there is none. */
int rm__cgroup_path_of(const char *proc_dir, int version, char *path, size_t cap);

/* The value of a "key N" line in a flat keyed file (memory.events,
 * memory.oom_control, memory.stat, cpu.stat).  -ENOENT when absent, -EINVAL
 * when garbled. */
int rm__cgroup_parse_keyed(const char *buf, size_t len, const char *key, uint64_t *value);

/* io.stat: "MAJ:MIN rbytes=N wbytes=N rios=N wios=N ..." per device, summed
 * over the devices.  -EINVAL when a known field is garbled. */
typedef struct rm__cgroup_io {
    uint64_t rbytes, wbytes, rios, wios;
} rm__cgroup_io;
int rm__cgroup_parse_io_stat(const char *buf, size_t len, rm__cgroup_io *out);

/* An open cgroup directory to read from. */
typedef struct rm__cgroup {
    int dirfd;   /* O_PATH|O_DIRECTORY; -1 when closed */
    int version; /* 1 or 2, from the files it has */
    int current_fd; /* memory.current / memory.usage_in_bytes, kept open: one pread a sample */
} rm__cgroup;

/* Opens the cgroup directory dir and tells its layout from its files.
 * -ENOENT/-ENOTDIR/-EACCES from the open; -ENOTSUP when it has no memory
 * files (no memory controller there). */
int rm__cgroup_open(rm__cgroup *cg, const char *dir);
void rm__cgroup_close(rm__cgroup *cg);

/* Charged memory now, bytes: one read, the whole tree, page cache and kernel
 * memory included. */
int rm__cgroup_read_current(const rm__cgroup *cg, uint64_t *bytes);

/* The peak of the charged memory since the cgroup was made (or, v1, its
 * max_usage was last reset).  -ENOENT on v2 before Linux 5.19. */
int rm__cgroup_read_peak(const rm__cgroup *cg, uint64_t *bytes);

/* Processes the kernel's OOM killer ended in the cgroup and below it (v2
 * memory.events "oom_kill"; v1 memory.oom_control "oom_kill", Linux >= 4.13,
 * summed over the cgroup and those below it, which v1 counts apart, down to
 * RM_CGROUP_NESTING_MAX levels: -ELOOP, unknown, when none was seen there
 * and cgroups go deeper). */
int rm__cgroup_read_oom_kills(const rm__cgroup *cg, uint64_t *count);

/* v2 cpu.stat: microseconds throttled and throttled periods (-ENOENT where
 * the cpu controller is not enabled, and always on v1). */
int rm__cgroup_read_throttling(const rm__cgroup *cg, uint64_t *throttled_usec, uint64_t *nr_throttled);

/* v2 io.stat summed over devices (-ENOENT without the io controller, and on v1). */
int rm__cgroup_read_io(const rm__cgroup *cg, rm__cgroup_io *out);

/* A cgroup's CPU total: the CPU time of every process that ran in it, one
 * read whatever their number (v1 cpuacct.usage, ns; v2 cpu.stat usage_usec,
 * which every v2 cgroup has since Linux 4.20, controller or not).  The
 * kernel adds a running task's time at its ticks and switches: the total of
 * the tree's running processes lags their CPU clocks by up to a tick, and
 * nothing is ever lost (an exiting task's time is added at its exit). */
typedef struct rm__cgroup_cpu {
    int fd;      /* kept open, pread each sample; -1 when closed */
    int version; /* 1: cpuacct.usage; 2: cpu.stat */
} rm__cgroup_cpu;
/* Opens the CPU total of the cgroup directory dir (a v1 cpuacct directory,
 * or a v2 one).  -ENOTSUP when it has none; an open's errno. */
int rm__cgroup_cpu_open(rm__cgroup_cpu *cpu, const char *dir);
void rm__cgroup_cpu_close(rm__cgroup_cpu *cpu);
int rm__cgroup_cpu_read(const rm__cgroup_cpu *cpu, uint64_t *ns);
/* The parser of the above: version 1 one number of ns, 2 cpu.stat's
 * usage_usec (-ENOENT without it). */
int rm__cgroup_parse_cpu_usage(const char *buf, size_t len, int version, uint64_t *ns);

/* What the cgroup says at a window's end: its peak (MiB), OOM kills, time
 * throttled (s) and times throttled, bytes read and written; NAN where it
 * says nothing (a file missing, an older kernel, cg NULL: no cgroup open). */
typedef struct rm__cgroup_end {
    double peak_mb, oom_kills, throttled_sec, nr_throttled, io_read_bytes, io_write_bytes;
} rm__cgroup_end;
void rm__cgroup_read_end(const rm__cgroup *cg, rm__cgroup_end *end);

/* The name of the memory-limit file of a layout: "memory.max" or
 * "memory.limit_in_bytes". */
const char *rm__cgroup_limit_file(int version);

/* The name of a leaf resmon makes: "resmon-PID-PIDNS-START-N", its
 * creator's pid, pid namespace (the inode of /proc/PID/ns/pid), start time
 * (stat's starttime, clock ticks after boot) and a counter.  The three say
 * whether the creator still lives, so a later resmon can remove a leaf that
 * a resmon killed by SIGKILL left behind, and only such a leaf. */
typedef struct rm__cgroup_leaf_owner {
    long pid;
    uint64_t pidns, starttime;
    unsigned counter;
} rm__cgroup_leaf_owner;
int rm__cgroup_leaf_name(char *out, size_t cap, const rm__cgroup_leaf_owner *owner);
/* 0 when name is exactly such a name (decimal numbers, no sign, no leading
 * zero), else -EINVAL. */
int rm__cgroup_leaf_name_parse(const char *name, rm__cgroup_leaf_owner *out);

/* Removes the stale leaves below parent: directories named as above whose
 * creator was in pid namespace own_pidns (another namespace's pids cannot be
 * checked from here) and is gone -- proc_root/PID is absent, or holds a
 * process started at another time -- and that hold no process (cgroup.procs
 * empty; rmdir refuses a cgroup with processes or children anyway).
 * Nothing else is touched.  own_pidns 0 (unknown): nothing is.  Returns how
 * many were removed. */
int rm__cgroup_sweep_stale(const char *parent, const char *proc_root, uint64_t own_pidns);

/* The directory whose CPU total (rm__cgroup_cpu_open) is exactly the tree
 * of root: for a leaf this process made (memory_dir, of layout version,
 * named as above with this process's pid) and that root is in -- v2 the
 * leaf itself, v1 its cpuacct shadow of the same name.  -ENOENT for any
 * other cgroup (it may hold processes of others). */
int rm__cgroup_leaf_cpu_dir(const char *memory_dir, int version, int root, char *out, size_t cap);

/* resmon_cgroup_create with the /proc directory and the prefix of mount
 * points given (fixture trees in tests). */
struct resmon_cgroup;
int rm__cgroup_leaf_create_at(struct resmon_cgroup **out, const char *proc_dir, const char *fs_prefix,
                              uint64_t memory_limit_bytes, char *err, size_t errcap);
/* resmon_cgroup_holds for the process whose /proc directory is proc_dir. */
int rm__cgroup_leaf_holds_at(const struct resmon_cgroup *cg, const char *proc_dir);

#endif
