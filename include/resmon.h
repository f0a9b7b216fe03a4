/*
 * resmon.h -- the whole public API of libresmon.
 *
 * resmon measures what a program costs while it runs.  A monitor owns one
 * background thread that wakes on a fixed schedule (10 Hz by default) and
 * records a sample: CPU percent since the previous sample, resident memory,
 * and -- when the caller supplies a GPU profiler -- GPU utilization, memory,
 * clock and power, which a second thread reads on its own schedule so that a
 * slow GPU never delays a sample.  resmon can open NVIDIA (NVML, loaded at run
 * time), AMD and Intel GPUs itself (resmon_gpu_open).  The monitored window
 * runs from resmon_monitor_start() to resmon_monitor_stop(); a summary of it
 * (peaks, means, growth, duration) is kept up to date as samples arrive, so
 * asking for it costs nothing.
 *
 *     resmon_monitor *mon;
 *     if (resmon_monitor_new(&mon, NULL) == 0) {          // 10 Hz, no GPU
 *         resmon_monitor_start(mon);
 *         run_benchmark();
 *         resmon_monitor_stop(mon);
 *         resmon_summary s;
 *         resmon_monitor_get_summary(mon, &s, sizeof s);
 *         printf("peak RSS %.1f MiB (exact %.1f)\n", s.peak_rss_mb, s.hwm_rss_mb);
 *         resmon_monitor_free(mon);
 *     }
 *
 * Beyond sampling, resmon gives the exact in-window peak RSS from the
 * kernel's high-water mark, monitors another process and its descendants,
 * keeps a bounded sample store for long runs, streams samples through a
 * callback, and measures GPU and CPU energy and the monitored processes' own
 * GPU memory.
 *
 * Conventions
 *   - Functions that can fail return 0 (or a count) on success and a negative
 *     errno on failure; resmon_strerror() turns one into words.  Constructors
 *     take the address of the new object's pointer as their first argument
 *     (resmon_monitor_new, resmon_gpu_open) and set it only on success.
 *   - The library never prints, never exits and never aborts.
 *   - A value that is unknown is NAN (what the Python seed calls None).
 *   - Memory is in MiB (bytes / 1048576), time in seconds, power in watts.
 *   - The caller owns what it passes in; whatever the library allocates has a
 *     matching free function.
 *
 * Thread safety
 *   One monitor may be read (resmon_monitor_get_samples, _get_summary,
 *   _running, _exposition) from any number of threads while it runs; start,
 *   stop and free must not race with each other on the same monitor, and free
 *   must not race with anything: a thread still inside a reader when another
 *   frees the monitor is the caller's bug.  Different monitors are
 *   independent, except for the exact peak RSS (see "Summary: the exact peak
 *   RSS").
 *
 *   Readers never delay the sampler, by design: they take no lock, and the
 *   sampler never waits for one, however many read and however many samples
 *   they copy (a copy of a million kept samples takes tens of milliseconds of
 *   the reader's own time, none of the sampler's).  The sampler publishes
 *   each sample with atomic stores; a reader that finds its copy overlapped
 *   a sample being published copies the affected part again.  What a reader
 *   gets:
 *   - a summary (and for _exposition, a summary and the latest kept sample)
 *     exactly as it stood after some one sample of the window: never a mix of
 *     two samples' figures;
 *   - kept samples that are each one whole sample, never torn, oldest
 *     first, consecutive and of one window: those kept when the copy began,
 *     each copied before the sampler could drop it (with max_samples the
 *     oldest may be dropped by the time the call returns).  Samples
 *     published while the copy ran are not in it: a copy may miss the very
 *     latest, never one in the middle.
 *   A reader retries while a sample is being published (under a
 *   microsecond), and copies again when the sampler overwrote a kept sample
 *   before the copy reached it (it copies far faster than the sampler
 *   samples, so only a ring smaller than a copy's first 1024 samples meets
 *   this more than rarely).
 *
 * Versioning and growth
 *   RESMON_VERSION_* give the version compiled against, resmon_version() the
 *   version linked at run time.  Within one major version the ABI is stable
 *   from 1.0 on; 0.x releases may still break it between minors (see
 *   CHANGELOG.md).
 *
 *   Structs grow only at their end, and the library never relies on the
 *   caller's idea of a struct's size:
 *   - A struct the caller hands in (resmon_options, resmon_gpu_profiler,
 *     resmon_summary) begins with struct_size, which the caller sets to
 *     sizeof the struct it was compiled with (RESMON_OPTIONS_INIT and
 *     RESMON_GPU_PROFILER_INIT do it).  The library reads that many bytes and
 *     treats fields beyond them as zero (as the Linux kernel does for
 *     clone3/openat2): a program built against an older, smaller header keeps
 *     working.  A struct larger than the library knows is accepted when every
 *     byte the library does not know is zero, else refused with -E2BIG (also
 *     a struct_size above 4096, which no resmon.h will have).  These structs
 *     grow in whole 8-byte units and never end in padding, so the bytes a
 *     caller's struct_size covers are always fields it could set.
 *   - A function that fills caller memory takes its size (out_size) or, for
 *     arrays, the size of one element (stride), writes only that many bytes
 *     per element, and fills struct_size with what it wrote.  Pass sizeof.
 */
#ifndef RESMON_H
#define RESMON_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
/* C++ before C++20 has no designated initializers: the *_INIT macros use this. */
template <typename T> static inline T resmon_cxx_init_()
{
    T value{};
    value.struct_size = sizeof value;
    return value;
}
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Version and export markers                                               */
/* ------------------------------------------------------------------------ */

#define RESMON_VERSION_MAJOR 0
#define RESMON_VERSION_MINOR 4
#define RESMON_VERSION_PATCH 0
#define RESMON_VERSION_NUMBER \
    (RESMON_VERSION_MAJOR * 10000 + RESMON_VERSION_MINOR * 100 + RESMON_VERSION_PATCH)

#define RESMON_STRINGIFY_(x) #x
#define RESMON_STRINGIFY(x) RESMON_STRINGIFY_(x)
#define RESMON_VERSION_STRING                     \
    RESMON_STRINGIFY(RESMON_VERSION_MAJOR) "."    \
    RESMON_STRINGIFY(RESMON_VERSION_MINOR) "."    \
    RESMON_STRINGIFY(RESMON_VERSION_PATCH)

/* The library is built with -fvisibility=hidden; only RESMON_API names are
 * exported.  Define RESMON_STATIC_DEFINE when linking the static library into
 * a shared object of your own if you do not want to re-export them. */
#if defined(RESMON_BUILDING) && !defined(RESMON_STATIC_DEFINE)
#define RESMON_API __attribute__((visibility("default")))
#else
#define RESMON_API
#endif

/* Version linked at run time, as RESMON_VERSION_NUMBER / _STRING. */
RESMON_API unsigned resmon_version(void);
RESMON_API const char *resmon_version_string(void);

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */
/* ------------------------------------------------------------------------ */

/* Every error resmon returns is one of these negative errno values.  The one
 * table generates both the codes and the messages of resmon_strerror(), so the
 * two cannot drift apart.  Errors of the system calls resmon makes (opening
 * /proc and /sys files, creating threads) are passed through unchanged, so the
 * table also names the ones those calls can give (EMFILE, ENOTDIR, ...); a
 * test reads the library's sources and fails when an errno resmon can return
 * has no words here. */
#define RESMON_ERRNO_MAP(XX)                                                   \
    XX(EINVAL, "invalid argument")                                             \
    XX(ENOMEM, "out of memory")                                                \
    XX(EBUSY, "monitor is already running")                                    \
    XX(EDEADLK, "called from the monitor's own sampler thread")                \
    XX(EAGAIN, "resource temporarily unavailable (could not create a thread)") \
    XX(ESRCH, "no such process")                                               \
    XX(ENOENT, "no such file or directory")                                    \
    XX(EACCES, "permission denied")                                            \
    XX(EPERM, "operation not permitted")                                       \
    XX(ENOSPC, "buffer too small")                                             \
    XX(EIO, "input/output error")                                              \
    XX(ENOTSUP, "not supported")                                               \
    XX(ENODEV, "no such device")                                               \
    XX(ETIMEDOUT, "timed out")                                                 \
    XX(ENOTDIR, "not a directory")                                             \
    XX(EISDIR, "is a directory")                                               \
    XX(EMFILE, "too many open files in this process")                          \
    XX(ENFILE, "too many open files in the system")                            \
    XX(ELOOP, "too many levels of symbolic links")                             \
    XX(ENAMETOOLONG, "file name too long")                                     \
    XX(E2BIG, "input too large, or a struct from a newer resmon.h sets fields this library lacks") \
    XX(ERANGE, "value out of range")                                           \
    XX(EEXIST, "file exists")                                                  \
    XX(EROFS, "read-only file system")                                         \
    XX(EXDEV, "/proc belongs to another PID namespace (mount this one's: unshare --mount-proc)") \
    XX(ECHILD, "the process has already exited (a zombie its parent has not reaped): nothing is left to measure") \
    XX(ENOEXEC, "a kernel thread, which has no memory of its own to measure") \
    XX(ESPIPE, "not a regular file (a FIFO, socket or device where a file was expected)")

/* A short English description of a negative errno (positive values are
 * accepted too).  Never NULL; the string is static and thread-safe. */
RESMON_API const char *resmon_strerror(int err);

/* ------------------------------------------------------------------------ */
/* Samples and summaries                                                     */
/* ------------------------------------------------------------------------ */

/* One measurement.  Arrays of samples are copied with the caller's stride
 * (resmon_monitor_get_samples), so the struct carries no size of its own.
 *
 * Sample: CPU percent
 *   cpu_percent is CPU time over wall time since the previous sample, x100:
 *   above 100 with several busy threads; 0 in the first sample of a window.
 *   It comes from the kernel's per-process CPU clock (ns), which brings a
 *   thread running on another CPU up to date only at each scheduler tick
 *   (1/CONFIG_HZ): at intervals of a few ticks single samples alternate by
 *   +-1 tick; sums and means (cpu_time_sec) are unaffected.  A sample shows
 *   at most online CPUs x its interval; any excess is carried into the next
 *   sample, and what remains at the window's last sample goes into
 *   cpu_time_sec, not into that sample's rate (it was used earlier).
 *
 * Sample: the metric groups (since 0.4)
 *   The fields from vmem_mb to net_tx_packets, and uss_mb, are the metric
 *   groups of resmon_options.metrics (each field's comment names its group),
 *   summed over the monitored processes; NAN when the group is off or the
 *   kernel refused the read.  Counters (I/O, CPU split, faults, switches,
 *   network) are cumulative since the window's first sample, which reads 0.
 *   - pss_mb, the proportional set size: a page shared by n processes counts
 *     1/n in each, so a tree's sum is its real footprint.  uss_mb (since
 *     0.4), the unique set size: the private pages (smaps_rollup
 *     Private_Clean + Private_Dirty), what ending the processes frees, read
 *     with PSS.  PSS, USS and swap come from smaps_rollup, read on its own
 *     slower schedule (see "Options: memory detail").
 *   - The NETWORK fields count the monitored root's network namespace: every
 *     interface (loopback included) and every process in it, not only the
 *     monitored ones (as prmon reports it).
 *   - unreadable_procs (since 0.4, with any group but NETWORK on, else NAN):
 *     processes of the tree that this sample could not read in full -- a
 *     file the groups need refused (another user's process, or one that is
 *     not dumpable: io and smaps_rollup need ptrace access) or the process
 *     not readable at all.  Each field is then the sum over the processes
 *     that could be read for it (NAN when none could): a lower bound.
 *
 * Sample: the cgroup's memory (since 0.4)
 *   With resmon_options.cgroup_path, cgroup_mem_mb is the cgroup's charged
 *   memory now (v2 memory.current, v1 memory.usage_in_bytes), one read for
 *   the whole tree: anonymous memory, page cache and kernel memory, each page
 *   counted once however many processes share it.  NAN without a cgroup. */
typedef struct resmon_sample {
    double timestamp;       /* seconds, CLOCK_MONOTONIC */
    double cpu_percent;     /* CPU time over wall time since the previous sample, x100 */
    double rss_mb;          /* resident set size, MiB */
    double gpu_util;        /* percent; NAN when unavailable */
    double gpu_mem_mb;      /* NAN when unavailable */
    double gpu_clock_mhz;   /* NAN when unavailable */
    double gpu_power_w;     /* NAN when unavailable */
    double gpu_proc_mem_mb; /* GPU memory of the monitored process(es); NAN when unavailable */
    /* Since 0.4: the metric groups (see above); NAN when the group is off. */
    double vmem_mb;        /* MEMORY_DETAIL: virtual memory (statm size) */
    double pss_mb;         /* MEMORY_DETAIL: proportional set size (smaps_rollup) */
    double swap_mb;        /* MEMORY_DETAIL: swapped out (smaps_rollup) */
    double io_rchar;       /* IO: bytes read through read-like calls (page cache hits included) */
    double io_wchar;       /* IO: bytes written through write-like calls */
    double io_read_bytes;  /* IO: bytes fetched from storage */
    double io_write_bytes; /* IO: bytes sent to storage (dirtied pages) */
    double io_syscr;       /* IO: read-like calls */
    double io_syscw;       /* IO: write-like calls */
    double nprocs;         /* COUNTS: live processes read in this sample (no zombie) */
    double nthreads;       /* COUNTS: their threads */
    double cpu_user_sec;   /* CPU_SPLIT: user-mode CPU seconds (clock ticks) */
    double cpu_sys_sec;    /* CPU_SPLIT: kernel-mode CPU seconds */
    double minor_faults;   /* FAULTS */
    double major_faults;   /* FAULTS: faults that read from storage */
    double voluntary_switches;   /* FAULTS: context switches while waiting */
    double involuntary_switches; /* FAULTS: context switches by preemption */
    double net_rx_bytes;   /* NETWORK: the namespace's bytes received (see above) */
    double net_tx_bytes;   /* NETWORK: bytes sent */
    double net_rx_packets; /* NETWORK: packets received */
    double net_tx_packets; /* NETWORK: packets sent */
    double cgroup_mem_mb;    /* since 0.4: the cgroup's charged memory, MiB; NAN without one */
    double unreadable_procs; /* since 0.4: processes not read in full (see above) */
    double uss_mb;           /* since 0.4, MEMORY_DETAIL: unique set size (smaps_rollup) */
    double open_fds;         /* since 0.4, COUNTS: open file descriptors (/proc/PID/fd) */
} resmon_sample;

/* How much to trust resmon_summary.hwm_rss_mb (see "Summary: the exact peak
 * RSS").  The lifetime peak may predate the window: it is given when the mark
 * was left alone and did not rise in the window, when keep_peak_mark asked
 * for it, or when the kernel refused the reset. */
typedef enum resmon_hwm_scope {
    RESMON_HWM_UNKNOWN = 0,  /* not measured (hwm_rss_mb is NAN) */
    RESMON_HWM_WINDOW = 1,   /* the exact peak within the monitored window */
    RESMON_HWM_LIFETIME = 2  /* the peak over the process's whole life */
} resmon_hwm_scope;

/* Where resmon_summary.gpu_energy_j comes from.  Power integrated over the
 * samples misses what happens between samples. */
typedef enum resmon_energy_source {
    RESMON_ENERGY_UNKNOWN = 0,   /* not measured (gpu_energy_j is NAN) */
    RESMON_ENERGY_COUNTER = 1,   /* the GPU's cumulative energy counter: exact */
    RESMON_ENERGY_INTEGRATED = 2 /* power integrated over the samples */
} resmon_energy_source;

/* The words for these enums, as the JSON summary spells them: "window",
 * "lifetime"; "counter", "integrated".  NULL for the UNKNOWN values and any
 * value outside the enum, so a binding can list them all by counting up from
 * 1 until NULL.  Static strings; thread-safe.  Since 0.4. */
RESMON_API const char *resmon_hwm_scope_name(resmon_hwm_scope scope);
RESMON_API const char *resmon_energy_source_name(resmon_energy_source source);

/* The monitored window in aggregate.  NAN means unknown.
 *
 * Summary: growth and samples
 *   memory_growth_mb is the last sampled RSS minus the first.  A last sample
 *   taken after the monitored pid exited (a zombie, whose RSS reads 0)
 *   carries that process's last live RSS instead.  num_samples counts every
 *   sample of the window, including any no longer kept because of
 *   max_samples.  skipped_slots counts schedule slots missed because the
 *   sampler ran late; the schedule skips ahead, never bursts.
 *
 * Summary: CPU time
 *   cpu_time_sec is the CPU seconds consumed between the first and the last
 *   sample, from the same clock as cpu_percent (see "Sample: CPU percent").
 *   With include_children, descendants too short-lived for any sample count
 *   through their parents' cutime/cstime (whole clock ticks), each CPU second
 *   once.  Unknowable: the CPU a monitored pid used after the last sample
 *   that saw it alive, when another process reaps it first -- except when
 *   this process reaps it and include_children is set (then it comes from
 *   RUSAGE_CHILDREN, assuming no other child was reaped in that interval).
 *   A tree of more than 64 processes in a leaf of resmon_cgroup_create's
 *   making takes its CPU from the leaf's total (see "Cgroup figures"); what
 *   the leaf used before that switch beyond what the samples counted (the
 *   CPU of processes no reading saw: children the kernel reaped itself,
 *   processes forked faster than the walks) is in cpu_time_sec too, and in
 *   no sample's rate.
 *   mean_cpu_percent is cpu_time_sec over duration_sec, x100 (0 if no
 *   duration).  peak_cpu_percent is the largest CPU percent over spans of
 *   samples of at least 20 ms (a few scheduler ticks), a sample taken under
 *   half an interval after the previous (the stop's) joining the span before
 *   it: never below mean_cpu_percent.
 *
 * Summary: the exact peak RSS
 *   hwm_rss_mb is the exact peak RSS from the kernel's high-water mark
 *   (VmHWM), read when the window starts and when it stops, so a spike
 *   between two samples still shows here (NAN when unknown); hwm_scope says
 *   how far to trust it.  By default the mark is only read: when it rose during the window its
 *   final value is the window's exact peak (RESMON_HWM_WINDOW); when it did
 *   not, the value is the lifetime peak and hwm_scope says so (see "Options:
 *   the peak mark").  With reset_peak_mark, resmon resets the mark when a
 *   window starts (by writing 5 to /proc/PID/clear_refs): the mark is per
 *   process, so two such monitors of the same process whose windows overlap
 *   reset each other, and a window that started first sees only the peak
 *   since the later start (still exact for the later window).  Where the
 *   reset is refused, or keep_peak_mark asks for no reset, the value is the
 *   lifetime peak and hwm_scope says so.
 *   - When monitoring a tree (or a cgroup's members), this is the largest
 *     single process's peak, never the sampled sum (peak_rss_mb, which is
 *     larger when two processes hold memory at once).  Per process, the
 *     larger of the kernel's mark and its largest sampled RSS, so never
 *     below what a sample of that process saw.
 *   - A monitored pid that ends before stop keeps the mark last read during
 *     the window (at each sample, at most every 10 ms): a spike after that
 *     read is not known; descendants that end before stop keep their largest
 *     sampled RSS.
 *   - While the window runs, the exact peak so far (the marks are read at
 *     most once a second), so a summary or an exposition taken mid-window
 *     has it too; final at stop.
 *   hwm_error (since 0.4) says why hwm_rss_mb is not the window's exact
 *   peak: 0 when it is, when the window has not ended yet, when
 *   keep_peak_mark asked for the lifetime peak, or when the mark was left
 *   alone and did not rise in the window; else the negative errno of what
 *   failed -- reading VmHWM when hwm_rss_mb is NAN (-EMFILE: the process had
 *   no free file descriptor at stop; -ESRCH: the process was gone), or
 *   resetting the mark when hwm_scope is RESMON_HWM_LIFETIME (-EACCES,
 *   -EPERM).  resmon_strerror() says it in words.  Not part of the JSON form.
 *   A caller built against 0.3 passes a smaller struct_size and is neither
 *   given nor asked for it.
 *
 * Summary: energy
 *   gpu_energy_j and cpu_energy_j are the window's energy, joules; NAN when
 *   unknown.  GPU: from the profiler's energy counter when it has one, else
 *   power integrated over the samples (gpu_energy_source says which).  CPU:
 *   the packages' RAPL counters (powercap energy_uj, wrap-safe), which are
 *   root-only on most systems: NAN then.
 *
 * Summary: the metric groups (since 0.4)
 *   From peak_vmem_mb to net_tx_packets, and peak_uss_mb: from the samples'
 *   metric groups; NAN when no sample had the value.  Peaks are the largest
 *   sampled; totals the window's, as the last sample has them.
 *   peak_unreadable_procs is the largest unreadable_procs of a sample; when
 *   above 0, the metric-group figures are lower bounds (NAN when no group
 *   but NETWORK was on).
 *
 * Summary: cgroups (since 0.4)
 *   The cgroup_* fields come with resmon_options.cgroup_path (NAN, or 0 for
 *   the integers, without one).
 *   - cgroup_peak_mb: the cgroup's peak charged memory (v2 memory.peak, v1
 *     memory.max_usage_in_bytes) -- anonymous memory, page cache and kernel
 *     memory of the whole tree, the figure a memory limit is compared with --
 *     and never below a sample's cgroup_mem_mb.  For a cgroup resmon made for
 *     the window (resmon_cgroup_create) it is the window's peak; for one that
 *     existed before, its lifetime peak.  Pages are charged to the cgroup
 *     that first brought them in: a file already in the page cache (a
 *     program's own binary) is not counted again, so the figure can be below
 *     one process's RSS on a warm cache.
 *   - cgroup_oom_kills: processes the OOM killer ended there and in the
 *     cgroups below it over the cgroup's life (memory.events /
 *     memory.oom_control oom_kill; on v1, summed over those below that
 *     still exist at the end).  The command takes a given cgroup's count
 *     (and throttling and I/O) at the run's start from these.
 *   - v2 only, where the controllers are enabled: CPU throttling (cpu.stat
 *     throttled_usec, nr_throttled) and I/O totals over every device
 *     (io.stat), over the cgroup's life.
 *   - walk_interval_sec: for a leaf resmon made (resmon_cgroup_create, v1
 *     with its cpuacct shadow; v2 itself) holding a tree of more than 64
 *     processes, the samples' CPU is the leaf's CPU total (one read a
 *     sample, the tree's every CPU second once; a running process's time
 *     reaches it at the kernel's ticks) and the per-process walk runs only
 *     as often as keeps it at 0.025 % of a CPU (at least every 20 s): the
 *     walks' mean interval.  Between walks a sample holds the latest walk's
 *     RSS and metric-group figures (a process whose CPU clock stood still
 *     keeps its statm figure for up to 60 s, then shown at the next walk:
 *     the run's memory is the leaf's; PSS as "Options: memory
 *     detail" says of a wide tree), and its nprocs and nthreads are what
 *     the leaf lists (re-read once a second when the tree ran since, every
 *     5 s when its CPU total stood still; a count that moved by more
 *     than a quarter walks at the next sample).  Those walks run on a
 *     thread of their own ("resmon-walk", started by resmon_monitor_start,
 *     ended by resmon_monitor_free), so a slow one delays no sample; the
 *     samples during it hold the previous walk's figures, and a mark's
 *     sample waits for it (a phase's exact peak needs the tree).  A process
 *     of the tree that leaves the leaf's CPU accounting sends it back to walking every
 *     sample, its CPU counted (the mean then covers the walks before).
 *     NAN when every sample walked.
 *   - cgroup_version is 1 or 2, 0 without a cgroup.  cgroup_error is 0, or
 *     the negative errno of opening cgroup_path (then every cgroup field is
 *     unknown).  Not part of the JSON form. */
typedef struct resmon_summary {
    size_t struct_size;        /* set by whoever fills it; see "Versioning" */
    double peak_rss_mb;        /* largest sampled RSS */
    double mean_rss_mb;        /* mean sampled RSS */
    double peak_gpu_mem_mb;    /* NAN when no sample had GPU memory */
    double mean_gpu_util;      /* NAN when no sample had GPU utilization */
    double memory_growth_mb;   /* last sampled RSS minus first (see above) */
    uint64_t num_samples;      /* every sample of the window, also those no longer kept */
    double duration_sec;       /* last timestamp minus first; 0 with < 2 samples */
    double mean_gpu_clock_mhz; /* NAN when no sample had a GPU clock */
    double mean_gpu_power_w;   /* NAN when no sample had GPU power */
    double mean_cpu_percent;   /* cpu_time_sec over duration_sec, x100; 0 if no duration */
    double peak_cpu_percent;   /* largest over spans of >= 20 ms: "Summary: CPU time" */
    double cpu_time_sec;       /* CPU seconds between first and last sample: "Summary: CPU time" */
    double hwm_rss_mb;         /* exact peak RSS (VmHWM): "Summary: the exact peak RSS" */
    resmon_hwm_scope hwm_scope;
    uint32_t reserved_0; /* names the padding before skipped_slots: written 0, never read */
    uint64_t skipped_slots;    /* schedule slots missed because the sampler ran late */
    double gpu_energy_j;       /* joules; NAN when unknown: "Summary: energy" */
    resmon_energy_source gpu_energy_source;
    uint32_t reserved_1; /* names the padding before cpu_energy_j: written 0, never read */
    double cpu_energy_j;       /* joules, RAPL; NAN when unknown (often: root-only) */
    double peak_gpu_proc_mem_mb; /* GPU memory of the monitored processes; NAN if unknown */
    int hwm_error;             /* since 0.4: why hwm_rss_mb is not the window's exact peak, or 0 */
    uint32_t reserved_2; /* names the padding before peak_vmem_mb: written 0, never read */
    /* Since 0.4: the metric groups' peaks and totals; NAN when no sample had the value. */
    double peak_vmem_mb, peak_pss_mb, peak_swap_mb;
    double io_rchar, io_wchar, io_read_bytes, io_write_bytes, io_syscr, io_syscw;
    double peak_nprocs, peak_nthreads;
    double cpu_user_sec, cpu_sys_sec;
    double minor_faults, major_faults, voluntary_switches, involuntary_switches;
    double net_rx_bytes, net_tx_bytes, net_rx_packets, net_tx_packets;
    /* Since 0.4, with resmon_options.cgroup_path: see "Summary: cgroups". */
    double cgroup_peak_mb;        /* peak charged memory, MiB */
    double cgroup_oom_kills;      /* processes the OOM killer ended there */
    double cgroup_throttled_sec;  /* v2: cpu.stat throttled_usec, seconds */
    double cgroup_nr_throttled;   /* v2: cpu.stat nr_throttled */
    double cgroup_io_read_bytes;  /* v2: io.stat, every device */
    double cgroup_io_write_bytes; /* v2: io.stat, every device */
    int32_t cgroup_version; /* 1 or 2; 0 without a cgroup */
    int32_t cgroup_error;   /* 0, or the negative errno of opening cgroup_path */
    double peak_unreadable_procs; /* since 0.4: the largest unreadable_procs of a sample */
    double peak_uss_mb; /* since 0.4: the largest sampled uss_mb (NAN when no sample had it) */
    double peak_open_fds; /* since 0.4: the largest sampled open_fds (NAN when no sample had it) */
    double walk_interval_sec; /* since 0.4: a wide tree's mean walk interval ("Summary: cgroups") */
} resmon_summary;

/* Serialises a summary (s->struct_size must be set, as every resmon function
 * that fills one sets it) as one JSON object: peak_rss_mb, mean_rss_mb,
 * peak_gpu_mem_mb (number or null), mean_gpu_util (number or null),
 * memory_growth_mb, num_samples (an integer), duration_sec, then
 * mean_gpu_clock_mhz and mean_gpu_power_w only when known -- followed, each
 * only when known, by mean_cpu_percent, peak_cpu_percent, cpu_time_sec and
 * skipped_slots (an integer, written with cpu_time_sec: a summary resmon
 * measured has both, one read from calibrax's JSON has neither), hwm_rss_mb
 * and hwm_scope ("window" or "lifetime"),
 * gpu_energy_j and gpu_energy_source ("counter" or "integrated"),
 * cpu_energy_j and peak_gpu_proc_mem_mb, then (since 0.4) each metric-group field
 * under its own name: peak_vmem_mb, peak_pss_mb, peak_swap_mb, io_rchar,
 * io_wchar, io_read_bytes, io_write_bytes, io_syscr, io_syscw, peak_nprocs,
 * peak_nthreads, cpu_user_sec, cpu_sys_sec, minor_faults, major_faults,
 * voluntary_switches, involuntary_switches, net_rx_bytes, net_tx_bytes,
 * net_rx_packets, net_tx_packets, then (since 0.4) peak_unreadable_procs and
 * peak_uss_mb (resmon_metric_info lists them).  (The first nine keys are exactly
 * the calibrax ResourceSummary.to_dict() keys in its order; see README.)
 * Doubles are written with 17 significant digits and round-trip exactly;
 * non-finite values in required numeric fields are written as null.
 * snprintf semantics: returns the length the full text needs (excluding the
 * NUL) and writes at most cap bytes, always NUL-terminated when cap > 0.
 * The text is always one JSON object on one line: it starts with '{' and ends
 * with '}', with no whitespace around it, so a caller may add keys of its own
 * by writing the text up to its last byte, then ", ", its keys and "}".
 * Returns -EINVAL when s is NULL, s->struct_size is invalid, or buf is NULL
 * with cap > 0; -E2BIG as described under "Versioning". */
RESMON_API int resmon_summary_to_json(const resmon_summary *s, char *buf, size_t cap);

/* The longest input resmon_summary_from_json reads: 1 MiB.  A summary is a
 * few hundred bytes (the command's, with its command line, a few KiB). */
#define RESMON_SUMMARY_JSON_MAX_BYTES (1 << 20)

/* Parses what resmon_summary_to_json -- or Python's json.dumps of calibrax's
 * to_dict() -- produces: integers where doubles are expected, null or missing
 * optional keys, keys in any order, unknown keys ignored, and every
 * num_samples to_json writes (0 to 2^64-1, read exactly).  Reads at most len
 * bytes (json need not be NUL-terminated) and fills out_size bytes of out
 * (pass sizeof *out).  Rejects malformed JSON, a document that is not an
 * object (at its first byte, before parsing), a missing required key, a wrong
 * type, a negative or fractional num_samples, non-finite numbers and trailing
 * non-space text with -EINVAL, and an input longer than
 * RESMON_SUMMARY_JSON_MAX_BYTES with -E2BIG, without reading it; either with
 * a message naming the key, byte offset or limit in err (if errcap > 0;
 * always NUL-terminated).  What one call allocates is bounded by the input it
 * accepts: at most about 50 MiB for the longest input (1 MiB of empty arrays,
 * the worst case measured, takes 46 MiB; a summary takes a few KiB), all
 * freed before it returns.  Nesting deeper than 2048 is malformed.  On
 * failure *out is left unchanged.  Fields absent from JSON are NAN (or 0 for
 * counts, the UNKNOWN value for enums, 0 for hwm_error), so a summary written
 * by resmon_summary_to_json reads back field for field (but hwm_error, which
 * is not part of the JSON form).  A "phases" array (resmon_phases_to_json,
 * the resmon command's summary) is ignored as any unknown key is; each of its
 * objects reads as a summary of its own.  Thread-safe. */
RESMON_API int resmon_summary_from_json(const char *json, size_t len, resmon_summary *out, size_t out_size,
                                        char *err, size_t errcap);

/* ---- The metric list (since 0.4) ----------------------------------------
 *
 * Every metric-group field (resmon_options.metrics) of resmon_sample and its
 * resmon_summary counterpart, described by the library itself, so that a
 * program (or a binding) that writes them out -- the resmon command's CSV
 * columns, the Python package's fields -- needs no list of its own and
 * gains a metric when the library does.  The list is in resmon_summary's
 * order, which is the summary JSON's; an index stays with its metric within
 * a library version, and new metrics are added at the end. */

/* How the summary folds a metric's sampled values. */
typedef enum resmon_metric_fold {
    RESMON_FOLD_MAX = 1, /* the largest sampled value: a level (memory, counts) */
    RESMON_FOLD_LAST = 2 /* the last sample's value: a total since the window began */
} resmon_metric_fold;

typedef struct resmon_metric {
    size_t struct_size;          /* bytes filled; see "Versioning" */
    const char *sample_field;    /* resmon_sample's field ("io_wchar") */
    const char *summary_field;   /* resmon_summary's field, the summary JSON's key */
    const char *column;          /* the resmon command's CSV column and JSON Lines key */
    const char *unit;            /* "MiB", "bytes", "seconds" or "count" */
    const char *prometheus_name; /* the exposition's family name (counters add _total) */
    const char *help;            /* one sentence, the exposition's HELP */
    const char *words;           /* a few words for a person ("bytes sent to storage") */
    size_t sample_offset;        /* offsetof(resmon_sample, <sample_field>), a double */
    size_t summary_offset;       /* offsetof(resmon_summary, <summary_field>), a double */
    uint32_t group;              /* the RESMON_METRIC_* bit that reads it; 0: any but NETWORK */
    uint32_t fold;               /* a resmon_metric_fold */
} resmon_metric;

/* How many metrics the list has. */
RESMON_API size_t resmon_metric_count(void);

/* Describes metric `index` (0 to resmon_metric_count() - 1) in out, filling
 * out_size bytes (pass sizeof *out).  The strings are static.  0, or -EINVAL
 * (out NULL, out_size too small) or -ERANGE (index beyond the list). */
RESMON_API int resmon_metric_info(size_t index, resmon_metric *out, size_t out_size);

/* The metric groups (since 0.4): each RESMON_METRIC_* bit with its names, so
 * a program (or a binding) that lets its user pick groups needs no list of
 * its own.  In bit order; resmon_metric.group names a metric's group. */
typedef struct resmon_metric_group {
    size_t struct_size;       /* bytes filled; see "Versioning" */
    const char *name;         /* "memory_detail": the Python binding's metrics= name */
    const char *command_name; /* "memory": the resmon command's --metrics word */
    const char *words;        /* what it measures, for a person ("vmem, PSS, USS, swap") */
    const char *files;        /* what it reads per process ("stat, smaps_rollup") */
    uint32_t bit;             /* its RESMON_METRIC_* bit */
    uint32_t reserved;        /* 0 */
} resmon_metric_group;

/* How many metric groups there are (since 0.4). */
RESMON_API size_t resmon_metric_group_count(void);

/* Describes group `index` (0 to resmon_metric_group_count() - 1) in out,
 * filling out_size bytes (pass sizeof *out), as resmon_metric_info does
 * (since 0.4).  The strings are static.  0, or -EINVAL (out NULL, out_size
 * too small) or -ERANGE (index beyond the list). */
RESMON_API int resmon_metric_group_info(size_t index, resmon_metric_group *out, size_t out_size);

/* ------------------------------------------------------------------------ */
/* GPU profilers                                                             */
/* ------------------------------------------------------------------------ */

/* A GPU profiler is a table of callbacks that the monitor's GPU thread -- and
 * only that thread -- calls once per GPU interval (see gpu_interval_sec).
 * Each returns 0 on success or a negative errno.  A NULL callback means "not
 * supported".  A failing callback, or a value that is NaN, infinite or
 * negative, makes that field NAN in that sample only; the other fields and
 * the monitor carry on.
 *
 * Profiler: the callbacks
 *   get_energy reads a cumulative energy counter in joules (any origin, never
 *   decreasing within a window): with it the window's energy is exact;
 *   without it resmon integrates power over time.  get_process_memory gives
 *   the GPU memory used by the given processes, MiB.  retain and release are
 *   the lifetime hooks (below); either may be NULL.  They are called on any
 *   thread, never concurrently with another callback of the same monitor.
 *
 * Lifetime.  resmon_monitor_new copies the table and calls retain(ctx) once;
 * the monitor calls release(ctx) exactly once, after the last callback it
 * will ever make has returned.  After release, nothing of the profiler is
 * touched again.  resmon_monitor_free therefore behaves in one of two ways:
 *   - release set: free waits at most 200 ms for a GPU call in flight.  If
 *     the call is still running then (a hung driver), free returns anyway; the
 *     call finishes on the GPU thread, no other callback starts, and then
 *     release(ctx) runs there.  The owner frees ctx in release, never before.
 *     (This is what a garbage-collected binding needs: retain takes a
 *     reference, release drops it.)
 *   - release NULL: free waits until a call in flight returns, however long,
 *     so that the caller may free ctx as soon as free returns.
 * Either way no callback runs after resmon_monitor_free returns, other than
 * the completion of a call already in flight and then release. */
typedef struct resmon_gpu_memory { double gpu_memory_used_mb, gpu_memory_total_mb; } resmon_gpu_memory;
typedef struct resmon_gpu_clocks { double gpu_clock_mhz, mem_clock_mhz; } resmon_gpu_clocks;
typedef struct resmon_gpu_power { double power_draw_w, power_limit_w; } resmon_gpu_power;

typedef struct resmon_gpu_profiler {
    size_t struct_size; /* sizeof(resmon_gpu_profiler); see "Versioning" */
    void *ctx;          /* passed back to every callback */
    int (*get_utilization)(void *ctx, double *percent);
    int (*get_memory_usage)(void *ctx, resmon_gpu_memory *out);
    int (*get_clock_info)(void *ctx, resmon_gpu_clocks *out);
    int (*get_power_info)(void *ctx, resmon_gpu_power *out);
    int (*get_energy)(void *ctx, double *joules); /* a cumulative counter: see above */
    int (*get_process_memory)(void *ctx, const pid_t *pids, size_t count, double *mb);
    void (*retain)(void *ctx);  /* may be NULL; see "Lifetime" */
    void (*release)(void *ctx); /* may be NULL; see "Lifetime" */
} resmon_gpu_profiler;

/* A profiler table with struct_size set and every callback NULL:
 *     resmon_gpu_profiler p = RESMON_GPU_PROFILER_INIT;   (C and C++) */
#ifndef __cplusplus
#define RESMON_GPU_PROFILER_INIT {.struct_size = sizeof(resmon_gpu_profiler)}
#else
#define RESMON_GPU_PROFILER_INIT resmon_cxx_init_<resmon_gpu_profiler>()
#endif

/* ---- GPU backends built into resmon --------------------------------------
 *
 * resmon finds NVIDIA GPUs through NVML, loaded with dlopen at run time
 * (libnvidia-ml.so.1; the environment variable RESMON_NVML_LIBRARY names
 * another path), AMD GPUs through amdgpu's sysfs files and Intel GPUs through
 * i915/xe sysfs and hwmon files (under RESMON_SYSFS_ROOT, default /sys).
 * These variables are read when resmon_gpu_list or resmon_gpu_open is
 * called (RESMON_SYSFS_ROOT also by resmon_monitor_new, for RAPL), never
 * later on resmon's own threads.  Nothing vendor-specific is needed at build
 * time. */

typedef struct resmon_gpu_info {
    size_t struct_size;     /* bytes filled; see "Versioning" */
    char backend[8];        /* "nvml", "amd" or "intel" */
    unsigned index;         /* index within the backend */
    char name[96];          /* product name as the driver reports it */
    char id[96];            /* NVML: UUID; sysfs: PCI address */
    double memory_total_mb; /* NAN when unknown */
} resmon_gpu_info;

/* The latest readings of one device, as the aggregate profiler took them. */
typedef struct resmon_gpu_reading {
    size_t struct_size; /* bytes filled; see "Versioning" */
    double util_percent, mem_used_mb, mem_total_mb, clock_mhz, mem_clock_mhz, power_w, power_limit_w;
} resmon_gpu_reading;

typedef struct resmon_gpu resmon_gpu; /* an open GPU profiler */

/* Lists the GPUs every backend finds: describes the first min(cap, *count)
 * in out (stride: the size of one element, sizeof *out; nothing beyond them is
 * written; out may be NULL to learn the count only) and stores how many exist
 * in *count.  A missing driver or library is not an error: it finds nothing.
 * Returns 0, or -EINVAL (count NULL, stride too small). */
RESMON_API int resmon_gpu_list(resmon_gpu_info *out, size_t cap, size_t stride, size_t *count);

/* Opens a profiler into *out.  spec:
 *   "auto" or NULL  with CUDA_VISIBLE_DEVICES set (a CUDA job): every NVIDIA
 *                   GPU it shows CUDA, as one aggregate; when it hides them
 *                   all ("", "-1", "NoDevFiles"), the first AMD or Intel GPU,
 *                   and resmon_gpu_selection says that CUDA does not use it.
 *                   Without it: the first GPU found (NVML, then AMD, Intel).
 *   "all"           every GPU the job can see, as one aggregate: the NVIDIA
 *                   GPUs CUDA_VISIBLE_DEVICES shows (every one when unset),
 *                   every AMD and Intel GPU
 *   "nvml:N", "nvml:GPU-<uuid>" (or a unique prefix), "nvml:MIG-<uuid>",
 *   "nvml:<pci bus id>", "amd:N", "intel:N": that device; nvml:N is NVML's
 *                   index, which need not be CUDA's
 * CUDA_VISIBLE_DEVICES is resolved as the CUDA runtime does: indices, GPU-
 * UUIDs or unique prefixes of them, MIG-<uuid>, MIG-GPU-<uuid>/<gi>/<ci>,
 * up to the first entry that names no device; an index is its leading digits
 * ("1gpu2" is 1, "0-2" is 0), and a device named twice leaves CUDA none.  A CUDA index follows
 * CUDA_DEVICE_ORDER=PCI_BUS_ID exactly; CUDA's default order (fastest first,
 * ties by PCI bus id) is reproduced only where every GPU is the same model,
 * and "auto"/"all" fail with -EINVAL on a mixed node: prefer UUIDs there.
 * NVIDIA_VISIBLE_DEVICES (the container runtime's) is not read: inside a
 * container NVML sees only the injected GPUs already.
 * Aggregates: memory and power summed, utilization and clocks averaged;
 * a device that has a metric but cannot read it at a poll (asleep, failing,
 * lost) makes that metric NAN for the aggregate, never a sum or mean over the
 * others (resmon_gpu_last_readings shows each device).
 * Returns 0, or a negative errno with a sentence in err (library missing,
 * driver/library mismatch, no permission, no such device): -ENOENT (no such
 * device or library), -ENODEV (no GPU at all), -EACCES, -EIO, -EINVAL (bad
 * spec, or a CUDA order resmon cannot reproduce).  RESMON_ERR_MAX bytes hold
 * any message.  Never prints.  Thread-safe. */
RESMON_API int resmon_gpu_open(resmon_gpu **out, const char *spec, char *err, size_t errcap);

/* Room for any message resmon puts in an err buffer. */
#define RESMON_ERR_MAX 1024

/* Drops the caller's hold on the profiler.  A monitor that still uses it
 * keeps it open until that monitor releases it (see "Lifetime" above), so
 * closing before freeing the monitor is safe; NVML is shut down with its last
 * user.  Accepts NULL. */
RESMON_API void resmon_gpu_close(resmon_gpu *gpu);

/* The callback table to put in resmon_options.gpu_profiler (its retain and
 * release keep the profiler open while a monitor uses it).  Valid until
 * resmon_gpu_close.  Passed as it is (this very address), it is recognised
 * and each GPU poll reads every device once; a copy of it, or one with a
 * callback wrapped, is read through its callbacks like any caller's table
 * (so every wrapper is honoured, at the cost of one reading of every device
 * per callback; the copy's retain and release must still hold the profiler,
 * as these do).  Do not write through the returned pointer: copy it. */
RESMON_API const resmon_gpu_profiler *resmon_gpu_profiler_of(resmon_gpu *gpu);

/* What "auto" or "all" picked and why, in one sentence (for a person: the
 * command prints it and puts it in its JSON); "" for a device spec.  Valid
 * until resmon_gpu_close. */
RESMON_API const char *resmon_gpu_selection(const resmon_gpu *gpu);

/* How many devices the profiler reads (1, or N for "all"), and each one's
 * description (out_size: sizeof *out).  0, or -EINVAL. */
RESMON_API size_t resmon_gpu_device_count(const resmon_gpu *gpu);
RESMON_API int resmon_gpu_device_info(const resmon_gpu *gpu, size_t i, resmon_gpu_info *out, size_t out_size);

/* The readings of each device from the profiler's latest calls (per-device
 * columns for "all"); thread-safe, e.g. from a monitor's on_sample callback.
 * Copies up to cap with the given stride (sizeof *out; none when out is NULL)
 * and returns how many devices there are, or -EINVAL (gpu NULL, stride too
 * small). */
RESMON_API ssize_t resmon_gpu_last_readings(const resmon_gpu *gpu, resmon_gpu_reading *out, size_t cap,
                                            size_t stride);

/* ------------------------------------------------------------------------ */
/* The monitor                                                               */
/* ------------------------------------------------------------------------ */

/* Called on the sampler thread with each sample as soon as it is taken (the
 * first, which resmon_monitor_start takes, once the sampler thread begins), in
 * order, including the first and last of a window.  It must not call start,
 * stop or free on the same monitor (they return -EDEADLK).  A slow callback
 * delays the next sample; the schedule then skips ahead (skipped_slots). */
typedef void (*resmon_sample_cb)(const resmon_sample *sample, void *user);

/* Metric groups beyond CPU and RSS (resmon_options.metrics), each a few
 * /proc reads per process per sample; see BENCHMARKS.md for their cost.
 * FAULTS reads the faults from stat and the context switches from status: a
 * process of T threads sums its threads' every ceil(T/64) samples and at the
 * last. */
#define RESMON_METRIC_IO            0x01u /* /proc/PID/io */
#define RESMON_METRIC_MEMORY_DETAIL 0x02u /* vmem (stat), PSS and swap (smaps_rollup) */
#define RESMON_METRIC_COUNTS        0x04u /* processes and threads (stat), open descriptors (fd) */
#define RESMON_METRIC_CPU_SPLIT     0x08u /* user and system seconds (stat) */
#define RESMON_METRIC_FAULTS        0x10u /* faults (stat); context switches (status) */
#define RESMON_METRIC_NETWORK       0x20u /* /proc/PID/net/dev, once per sample */
#define RESMON_METRIC_ALL           ((RESMON_METRIC_NETWORK << 1) - 1u) /* every group (0x3f) */

/* What a monitor measures, and how often.  Zero in every field means the
 * default; RESMON_OPTIONS_INIT (below) sets struct_size.
 *
 * Options: the schedule
 *   sample_interval_sec: 0 means the default, 0.1 (10 Hz); else 1e-6 to 1e6.
 *   gpu_interval_sec: 0 means the sample interval, but no faster than 0.02 s
 *   and no faster than twice the slowest recent GPU reading (measured as it
 *   runs: 8 NVIDIA GPUs at 4.5 ms per process query are read every ~75 ms).
 *   The GPU is read on its own thread ("resmon-gpu") on this schedule; each
 *   sample carries the freshest reading, or NAN when it is older than 1.5
 *   GPU intervals (a slow or hung call), so CPU/RSS sampling never waits for
 *   it.  A nonzero value is kept as is.  The gpu_profiler table is copied;
 *   see "Lifetime".
 *
 * Options: monitoring a tree
 *   pid 0 monitors this process; else the process to monitor (its CPU clock
 *   and /proc/PID must be readable).  With pid, a nonzero include_children
 *   adds every descendant alive at each sample (found afresh each sample).
 *   A descendant whose parent ends (an orphan, adopted by a subreaper or
 *   init) stays in the tree, with what it starts, until it exits; when this
 *   process is a child subreaper (PR_SET_CHILD_SUBREAPER) and pid its child,
 *   every other child of this process is taken for an orphan of pid's tree
 *   (the resmon command has no others).
 *
 * Options: kept samples
 *   max_samples 0 keeps every sample.  Else only the most recent max_samples
 *   are kept (a ring); the summary still covers the whole window.  on_sample
 *   is an optional streaming callback (resmon_sample_cb), given
 *   on_sample_user.
 *
 * Options: the metric groups (since 0.4)
 *   metrics: RESMON_METRIC_* bits, the groups each sample reads (0: none, so
 *   a sample costs what it did in 0.3).  Other bits: -EINVAL.  In a tree
 *   (include_children), counters stay continuous when a child is reaped: the
 *   kernel then adds the child's whole I/O, faults and CPU to its parent's,
 *   and resmon subtracts what it already counted of the child.  A child born
 *   in the window counts from its birth however late a walk finds it (a
 *   parent running on another CPU shows its CPU clock as of its last tick,
 *   so its children list may be read a sample late).  Context
 *   switches are the exception: the kernel keeps those of a process that
 *   ended only for whoever reaps it (wait4, RUSAGE_CHILDREN), never in
 *   /proc, so the samples lose a child's last interval and every child that
 *   ended between two samples -- except when the monitored pid is this
 *   process's child and this process reaps it: the window's last sample then
 *   carries the kernel's count of its whole tree (RUSAGE_CHILDREN, as for
 *   its CPU).  The resmon command reports wait4's figure.  Without
 *   include_children, CPU split and faults are the process's own, but its
 *   I/O includes the children it reaped (the kernel keeps no separate
 *   account of them).  The counters of a process found in a tree after it
 *   started count from when it was found.
 *
 * Options: memory detail
 *   PSS and swap (RESMON_METRIC_MEMORY_DETAIL) are read at most every
 *   memory_detail_interval_sec per process: smaps_rollup walks the page
 *   tables, about 1 us per MiB resident (a 1 GiB process costs ~0.2-1 ms,
 *   see BENCHMARKS.md), so it never runs at every sample of a fast schedule.
 *   Samples between carry each process's latest reading.  A tree's processes
 *   are read together, at the same sample, and again whenever a walked
 *   process joins or leaves the tree or a process not walked reaches this
 *   interval's age (a fork or an exit changes every sharer's PSS); a process
 *   whose RSS moved (by more than 1/16 of its RSS at its last
 *   reading plus 1 MiB) is read again alone.  Since 0.4, a process younger
 *   than this interval whose RSS is under 64 MiB and that has exec'd is not
 *   walked at all: its RSS stands in for its PSS and USS and its swap is 0,
 *   an estimate high by at most the pages it shares (libraries), until it
 *   is older or larger -- so the many short-lived processes of a build
 *   (compilers, shells) cost no page walks.  A fork that has not exec'd
 *   (its stat's startstack is still its parent's) shares every page its
 *   parent had, so it is walked however young: a stand-in would count those
 *   pages once per child.
 *   Such a process joining or leaving the tree reads no other process again,
 *   so a sum mixes readings from before and after a change in sharing only
 *   through these processes: it is high by at most the pages they share
 *   while they are tracked, and low by at most that for up to this interval
 *   after they left.  0 means 0.5; else >= 1e-6.
 *   In a tree of more than 64 processes (since 0.4) the tree-wide readings
 *   that come by age (the interval passed, a young process aged past it)
 *   wait as long as keeps them at 0.05 % of a CPU, from the latest one's
 *   measured cost, and at most 60 s: 1000 sleeping processes cost ~25 ms a
 *   reading, so one comes every ~50 s, and the samples between carry it.
 *   A walked process joining or leaving still reads the tree at the next
 *   reading.
 *
 * Options: the peak mark
 *   With both keep_peak_mark and reset_peak_mark 0 (the default), a monitor
 *   writes nothing to any process.  The kernel's peak-RSS mark (VmHWM) of
 *   each monitored process is read at its first sample of the window and at
 *   stop; the mark never falls, so when it rose during the window its value
 *   at stop is exactly the window's peak (hwm_scope RESMON_HWM_WINDOW), as
 *   is the mark of a process born in the window (all its life is).  When
 *   it did not rise, the mark holds an earlier peak, which may be above
 *   anything in the window: hwm_rss_mb is then that lifetime peak with
 *   RESMON_HWM_LIFETIME, and the sampled peak_rss_mb is the window's figure.
 *   - reset_peak_mark (since 0.4) nonzero: start resets each monitored
 *     process's mark (writes 5 to /proc/PID/clear_refs, the behaviour of
 *     0.3), so hwm_rss_mb is the window's exact peak even when it stayed
 *     below an earlier one.  The reset is the process's own: its
 *     getrusage(RUSAGE_SELF).ru_maxrss, its VmHWM and a /usr/bin/time -v
 *     around it lose every peak before the window (a parent's
 *     RUSAGE_CHILDREN and wait4 keep theirs).
 *   - keep_peak_mark nonzero: follow the lifetime peak instead: each sample
 *     also reads every process's VmHWM (one more /proc read per process), and
 *     hwm_rss_mb is the largest lifetime peak seen, hwm_scope
 *     RESMON_HWM_LIFETIME, known even after the process exited.  Added in 0.3
 *     (where 0 meant "reset"; see reset_peak_mark).
 *   Both set: -EINVAL.
 *
 * Options: cgroups (since 0.4)
 *   cgroup_path: a cgroup directory (e.g.
 *   /sys/fs/cgroup/system.slice/x.service, or resmon_cgroup_path() of one
 *   made for the command) whose figures each sample and the summary carry:
 *   cgroup_mem_mb, cgroup_peak_mb and the rest.  Copied by
 *   resmon_monitor_new; opened by resmon_monitor_start (a cgroup that cannot
 *   be opened leaves those fields unknown and sets
 *   resmon_summary.cgroup_error: the window still opens).  The processes
 *   sampled are pid's (and its descendants), or with cgroup_members the
 *   cgroup's own; the figures are the cgroup's, whoever is in it.  NULL: no
 *   cgroup.
 *   cgroup_members (the word was reserved, and had to be 0, before 0.4):
 *   nonzero, with cgroup_path and pid 0 (else -EINVAL), the monitored
 *   processes are the cgroup's, whoever they are -- a service, a container --
 *   listed from its cgroup.procs and its descendants' at each sample (one
 *   open and read per cgroup, 16 levels deep at most), not pid's tree, and
 *   never this process itself.  A process is sampled from the first sample
 *   that finds it there (its counters from then on), and leaves the sums
 *   when it is no longer listed: moved out (what it used so far stays
 *   counted) or ended (as in a tree).  include_children is implied.  The
 *   window ends only at resmon_monitor_stop: a cgroup that empties, or is
 *   removed, is sampled as no process.  The membership needs only
 *   cgroup.procs: a cgroup without memory files (a v2 cgroup without the
 *   memory controller) is still monitored, with cgroup_error -ENOTSUP and its
 *   figures unknown.  The network group reads this process's network
 *   namespace (a container's own is not followed).  resmon_monitor_start
 *   returns the errno of opening cgroup.procs (-ENOENT: not a cgroup,
 *   -EACCES). */
typedef struct resmon_options {
    size_t struct_size;                      /* sizeof(resmon_options); see "Versioning" */
    double sample_interval_sec;              /* 0: 0.1 s (10 Hz); else 1e-6 to 1e6 */
    const resmon_gpu_profiler *gpu_profiler; /* NULL: no GPU readings; copied */
    pid_t pid;              /* 0: this process; else the process to monitor */
    int include_children;   /* with pid: nonzero adds every descendant (see above) */
    size_t max_samples;     /* 0: keep every sample; else the most recent max_samples */
    resmon_sample_cb on_sample; /* optional streaming callback */
    void *on_sample_user;
    double gpu_interval_sec; /* 0: adaptive, >= 0.02 s ("Options: the schedule"); else as given */
    int keep_peak_mark;     /* nonzero: follow the lifetime peak ("Options: the peak mark") */
    unsigned metrics;       /* since 0.4: RESMON_METRIC_* bits ("Options: the metric groups") */
    double memory_detail_interval_sec; /* since 0.4: PSS at most this often; 0: 0.5 s */
    int reset_peak_mark;    /* since 0.4: nonzero resets each VmHWM at start (see above) */
    int cgroup_members;     /* since 0.4: monitor the cgroup's processes ("Options: cgroups") */
    const char *cgroup_path; /* since 0.4: a cgroup whose figures to read; NULL: none */
} resmon_options;

/* Options with struct_size set and every other field zero, which means the
 * defaults:
 *     resmon_options o = RESMON_OPTIONS_INIT;   (C and C++) */
#ifndef __cplusplus
#define RESMON_OPTIONS_INIT {.struct_size = sizeof(resmon_options)}
#else
#define RESMON_OPTIONS_INIT resmon_cxx_init_<resmon_options>()
#endif

typedef struct resmon_monitor resmon_monitor; /* opaque */

/* Creates a stopped monitor in *out.  opts NULL means defaults; the options
 * (and the GPU profiler table they name) are copied.  The environment
 * variable RESMON_PROC_ROOT (a directory to read instead of /proc, for tests
 * with fixture trees) is read here (and by resmon_process_check), never on
 * the monitor's threads.  Returns 0, -EINVAL (struct_size missing or too small, interval
 * out of range, NaN or infinite, negative pid), -E2BIG (see "Versioning") or
 * -ENOMEM. */
RESMON_API int resmon_monitor_new(resmon_monitor **out, const resmon_options *opts);

/* Stops the monitor if it runs, then frees it.  Accepts NULL.  With a GPU
 * profiler, see "Lifetime" above for what free waits for.  Freeing a monitor
 * while another thread is still inside any resmon_monitor_* call on it is the
 * caller's bug, as with free(3). */
RESMON_API void resmon_monitor_free(resmon_monitor *m);

/* Opens a window: clears the previous window's samples and summary, reads
 * (or, with reset_peak_mark, resets) the exact-peak mark, takes the window's
 * first sample on the calling thread (every signal blocked meanwhile), then
 * starts the sampler thread and returns.  Returns 0,
 * -EBUSY if already running, -EDEADLK from the sampler thread,
 * -ESRCH/-EACCES if the monitored process cannot be read, -ENOTDIR/-ENOENT
 * if RESMON_PROC_ROOT is not a directory, -EXDEV if /proc belongs to another
 * PID namespace than this process's (unshare -pf without --mount-proc: its
 * numbers name other processes; since 0.4),
 * -EMFILE/-ENFILE without a free file descriptor, -EAGAIN/-ENOMEM if the
 * thread cannot be created.
 *
 * File descriptors: a window keeps a few files open for each monitored
 * process (its /proc directory, statm, stat, the groups' files, and for a
 * tree its task directory and children list), so a wide tree can need
 * thousands.  On the first EMFILE the library raises this process's soft
 * limit on open files to its hard limit (as the JVM and Go's runtime do at
 * their start; since 0.4.1: before, a tree past the default soft limit of
 * 1024 lost processes silently).  The raised limit is this process's:
 * the processes it starts afterwards inherit it (the resmon command gives
 * its commands back the limit it started with; a host of the library that
 * cares does the same before exec).  A process the probe cannot open once
 * the hard limit is reached is counted in unreadable_procs when a metric
 * group is on; one the walker cannot list (its children) is not counted
 * anywhere yet. */
RESMON_API int resmon_monitor_start(resmon_monitor *m);

/* Whether pid can be monitored at all, read from its /proc/PID/stat (under
 * RESMON_PROC_ROOT when set, read on the calling thread as by
 * resmon_monitor_new).  Returns 0; -ESRCH when there is no such process;
 * -ECHILD when it has already exited (a zombie its parent has not reaped:
 * nothing is left to measure); -ENOEXEC when it is a kernel thread (no
 * memory of its own); -EINVAL for pid <= 0; -EXDEV, -EACCES, -ENOENT,
 * -ENOTDIR, -EMFILE as resmon_monitor_start.  resmon_monitor_start itself
 * accepts a zombie or a kernel thread (a zombie's window ends at once with
 * one sample), so a caller that refuses them -- `resmon --pid` does -- asks
 * here first and shows resmon_strerror's words.  Thread-safe.  Since 0.4. */
RESMON_API int resmon_process_check(pid_t pid);

/* Closes the window: wakes the sampler thread at once (it never sleeps out
 * the interval), lets it take the window's final sample, joins it and reads
 * the exact peak.  Returns 0, also when not running (a no-op), or -EDEADLK
 * from the sampler thread. */
RESMON_API int resmon_monitor_stop(resmon_monitor *m);

/* 1 while a window is open, else 0.  Also 0 after a monitored process has
 * exited and the sampler ended the window by itself. */
RESMON_API int resmon_monitor_running(const resmon_monitor *m);

/* Copies min(n, cap) of the kept samples, oldest first, into out -- stride
 * bytes apart, each one's first stride bytes (pass sizeof *out; out may be
 * NULL when cap is 0) -- and returns n, the number kept, or -EINVAL.  A
 * consistent snapshot even while the monitor runs, taken without ever making
 * the sampler wait (see "Thread safety" for exactly what it holds).  With no
 * metric group on (resmon_options.metrics 0) and no cgroup_path, a kept
 * sample takes 64 bytes, not sizeof(resmon_sample): every field after
 * gpu_proc_mem_mb is then NAN and is not stored.  Like every reader it
 * must return before another thread calls resmon_monitor_free on the same
 * monitor: freeing a monitor that another thread is still reading is the
 * caller's bug (as with free() and any other use of the memory), which resmon
 * cannot detect. */
RESMON_API ssize_t resmon_monitor_get_samples(const resmon_monitor *m, resmon_sample *out, size_t cap,
                                              size_t stride);

/* Fills out (out_size: sizeof *out) with the current window's summary, a
 * consistent snapshot taken in O(1) (the summary as of one sample, without
 * making the sampler wait; see "Thread safety"): zeroed with GPU and peak
 * fields NAN when no sample has been taken.  Returns 0 or -EINVAL. */
RESMON_API int resmon_monitor_get_summary(const resmon_monitor *m, resmon_summary *out, size_t out_size);

/* ------------------------------------------------------------------------ */
/* Phases                                                                    */
/* ------------------------------------------------------------------------ */

/* A window may be cut into named phases (load, compute, write-back), each
 * with its own summary.  Since 0.4.
 *
 *     resmon_monitor_start(mon);
 *     resmon_monitor_mark(mon, "load");    load();
 *     resmon_monitor_mark(mon, "compute"); compute();
 *     resmon_monitor_stop(mon);
 *     resmon_phase ph[RESMON_MAX_PHASES];
 *     ssize_t n = resmon_monitor_get_phases(mon, ph, RESMON_MAX_PHASES, sizeof *ph);
 *
 * A mark wakes the sampler, which takes a sample at once (microseconds
 * later): that sample ends the phase before and begins the new one, so
 * each phase's figures are those of its own samples, its CPU seconds and
 * durations add up to the window's, and a phase shorter than the interval
 * still has two edges.  The time before the first mark is a phase of its
 * own, named "" (the empty name, which no mark can have); a window without
 * marks has no phases (get_phases returns 0).  A phase lasts until the next
 * mark or the window's end. */

/* A phase name's bytes with the NUL: names are 1 to 63 bytes. */
#define RESMON_PHASE_NAME_MAX 64
/* Phases a window holds, the unnamed first one included.  A mark beyond
 * them is refused (-ENOSPC): the last phase then runs on to the window's
 * end, and nothing grows. */
#define RESMON_MAX_PHASES 256

/* One phase.  Arrays of phases are copied with the caller's stride, as
 * samples are; the summary comes last, so the struct grows with it, and its
 * struct_size says how much of it was written.
 *
 * Phase: its summary
 *   summary holds the phase's figures, by the window's own rules, over its
 *   samples (the sample at each mark belongs to both phases it separates):
 *   duration, peaks, means, growth, CPU seconds, GPU figures and energy, the
 *   metric groups.  hwm_rss_mb is the exact peak within the phase where the
 *   window's is known (hwm_scope RESMON_HWM_WINDOW) and rose during the
 *   phase (the kernel's mark is read at each mark); else NAN with
 *   RESMON_HWM_UNKNOWN: the phase peaked no higher than an earlier one.
 *   cpu_energy_j is the RAPL energy between its edges.  The window-end
 *   figures (skipped_slots, the cgroup's peak from the kernel, OOM kills,
 *   throttling, I/O) are the window's alone: 0 or NAN here, but
 *   cgroup_peak_mb, the phase's sampled cgroup peak. */
typedef struct resmon_phase {
    char name[RESMON_PHASE_NAME_MAX]; /* NUL-terminated; "" before the first mark */
    double start_sec;       /* its first sample, seconds after the window's first */
    double start_timestamp; /* the same sample's timestamp (CLOCK_MONOTONIC) */
    resmon_summary summary; /* the phase's figures: "Phase: its summary" */
} resmon_phase;

/* Starts a phase named name in the open window: the current phase ends at
 * the sample the mark asks for.  name: 1 to 63 bytes of UTF-8 without
 * control characters (below 0x20, and 0x7f).  O(1), takes no sample itself
 * and never allocates but at a window's first mark (the table of
 * RESMON_MAX_PHASES phases, once per monitor); safe from any thread and from
 * the sample callback.  Marks called together are applied in order at the
 * same sample (the phases between them last 0 s).  Accepted means recorded:
 * a mark that returns 0 is a phase of the window, even one made as the
 * window closes (from stop's last sample callback, or while the target's
 * end is noticed: a phase of 0 s at the last sample).  Returns 0, -EINVAL
 * (bad name, m NULL, or no window open -- nor one that is closing, whose
 * phases are final, nor in a forked child: its copy of the monitor has no
 * sampler), -ENOSPC (the window holds
 * RESMON_MAX_PHASES phases: the mark is refused), -EAGAIN (16 marks already
 * wait for the sampler: refused; try again) or -ENOMEM (the first mark could
 * not allocate the table). */
RESMON_API int resmon_monitor_mark(resmon_monitor *m, const char *name);

/* Copies min(n, cap) of the window's n phases, oldest first, into out --
 * stride bytes apart, each one's first stride bytes (at least through the
 * 0.3 summary's fields: offsetof(resmon_phase, summary) + 160; pass
 * sizeof *out; out may be NULL when cap is 0) -- and returns n, or -EINVAL.
 * The last phase is the one still running while the window is open.  Each
 * phase is copied as of one sample, without making the sampler wait.  The
 * phases stay readable after stop, until the next start. */
RESMON_API ssize_t resmon_monitor_get_phases(const resmon_monitor *m, resmon_phase *out, size_t cap,
                                             size_t stride);

/* The current phase's name into name (cap bytes, NUL-terminated, cut to
 * fit; may be NULL with cap 0): "" before the first mark.  Returns the
 * number of phases so far (0 before the first mark), or -EINVAL.  Lock-free
 * and O(1): meant for the sample callback (which phase a sample is in) and
 * for exporters. */
RESMON_API int resmon_monitor_phase(const resmon_monitor *m, char *name, size_t cap);

/* Writes phases (count elements, stride bytes apart) as a JSON array, one
 * object per phase: "name", "start_sec", then the keys of
 * resmon_summary_to_json for the phase's summary.  snprintf semantics, as
 * resmon_summary_to_json.  Returns the length, or -EINVAL (phases NULL with
 * count > 0, stride too small, a summary's struct_size invalid). */
RESMON_API int resmon_phases_to_json(const resmon_phase *phases, size_t count, size_t stride, char *buf,
                                     size_t cap);

/* ------------------------------------------------------------------------ */
/* Processes                                                                 */
/* ------------------------------------------------------------------------ */

/* A monitor of a tree (resmon_options.include_children, or cgroup_members)
 * keeps a record of each process it saw: which one took the memory and the
 * CPU.  Since 0.4.
 *
 *     resmon_process procs[RESMON_MAX_PROCESSES];
 *     uint64_t seen;
 *     ssize_t n = resmon_monitor_get_processes(mon, procs, RESMON_MAX_PROCESSES,
 *                                              sizeof *procs, &seen);
 *
 * Sampled: the library sees a process only through its readings (the walk
 * of the tree each sample), so every figure is as of the last reading that
 * read it, and a process that lives less than an interval between two
 * readings may never be seen -- it then has no record and is not counted
 * (its CPU is still in the window's cpu_time_sec, through its parent's
 * reaped-children time; the library cannot tell how many such processes
 * there were).  The resmon command's --processes, from the kernel's
 * taskstats, sees every one.
 *
 * Bounded: every process seen is counted, and a record is kept when it is
 * among the RESMON_PROCESS_TOP largest by peak RSS or by CPU seen so far in
 * the window: at most RESMON_MAX_PROCESSES records (about 10 KiB), however
 * many processes the tree runs. */

/* A command name's bytes with the NUL, as the kernel keeps it (15 bytes at
 * most, cut by the kernel). */
#define RESMON_PROCESS_COMM_MAX 16
/* Records kept by each ranking (peak RSS, CPU), and both together. */
#define RESMON_PROCESS_TOP 64
#define RESMON_MAX_PROCESSES (2 * RESMON_PROCESS_TOP)

/* How a record's process left the window. */
typedef enum resmon_process_end {
    RESMON_PROCESS_RUNNING = 0, /* alive at the window's last reading */
    RESMON_PROCESS_EXITED = 1,  /* ended within the window */
    RESMON_PROCESS_LEFT = 2     /* cgroup_members: moved out of the cgroup, alive */
} resmon_process_end;

/* Where a record's figures come from.  The library samples; other sources
 * may be added by later versions. */
typedef enum resmon_process_source {
    RESMON_PROCESS_SAMPLED = 0 /* the monitor's readings of /proc (see above) */
} resmon_process_source;

/* One process of the tree.  Arrays of records are copied with the caller's
 * stride; struct_size says how much of each was written.  Times are seconds
 * relative to the window's first reading (CLOCK_BOOTTIME, the clock of the
 * kernel's start times).
 *
 *   start_sec    when the process started, from the kernel (stat's
 *                starttime: to a clock tick, usually 10 ms); negative for a
 *                process older than the window
 *   end_sec      the last reading that saw it alive, or the first that
 *                saw it a zombie (exited, not yet reaped, however late its
 *                parent reaps it): an exited process ended at most one
 *                interval before; the window's last reading for one running
 *   cpu_sec      its CPU clock (all its threads, since it started) at its
 *                last reading, without the children it reaped (each is its
 *                own record); an exited process may have run up to an
 *                interval more
 *   peak_rss_mb  its own peak RSS: the larger of its largest sampled RSS
 *                and the kernel's mark (VmHWM) where the monitor read it
 *                (at its first reading and at least once a second, and at
 *                the window's end for those running: exact for them).  The
 *                mark is the process's lifetime peak, or since the window's
 *                start with resmon_options.reset_peak_mark.
 *   comm         its command name at its latest stat reading (a name
 *                changes at exec; a process that exec'd and ended between
 *                two readings keeps the name it had before) */
typedef struct resmon_process {
    size_t struct_size; /* set by the library; see "Versioning" */
    pid_t pid;
    pid_t ppid;         /* its parent at its latest stat reading */
    char comm[RESMON_PROCESS_COMM_MAX];
    double start_sec;
    double end_sec;
    double cpu_sec;
    double peak_rss_mb;
    resmon_process_end end;
    resmon_process_source source;
} resmon_process;

/* Copies min(n, cap) of the window's n kept records into out, by peak RSS,
 * largest first (equal peaks: by CPU) -- stride bytes apart, each one's
 * first stride bytes (at least sizeof(resmon_process) as of 0.4; pass
 * sizeof *out; out may be NULL when cap is 0) -- stores in *seen (when not
 * NULL) how many processes the window saw, records kept or not, and
 * returns n.  The records are written by the sampler thread (a wide tree's
 * walks: its walker thread, "resmon-walk") as processes end and at the
 * window's last reading, so they are read once the window has closed (by
 * stop, or by the target's end: resmon_monitor_running returns 0), and stay
 * readable until the next start.  Returns -EBUSY while the window is open,
 * -ENOTSUP for a monitor of one process (not a tree), -EINVAL for a bad
 * argument. */
RESMON_API ssize_t resmon_monitor_get_processes(const resmon_monitor *m, resmon_process *out, size_t cap,
                                                size_t stride, uint64_t *seen);

/* ------------------------------------------------------------------------ */
/* Cgroups                                                                   */
/* ------------------------------------------------------------------------ */

/* A leaf memory cgroup made for a command, so that the whole tree it starts
 * is measured exactly (resmon_summary.cgroup_peak_mb) and, if asked, kept
 * under a memory limit.  Since 0.4.
 *
 *     resmon_cgroup *cg;
 *     if (resmon_cgroup_create(&cg, 0, err, sizeof err) == 0) {
 *         pid_t pid = fork();
 *         if (pid == 0) { resmon_cgroup_join(cg, 0); execvp(...); }
 *         opts.cgroup_path = resmon_cgroup_path(cg);  ... monitor, wait ...
 *         resmon_cgroup_remove(cg);
 *     }
 *
 * The leaf is made below the caller's own memory cgroup: in v2's unified
 * hierarchy when it offers the memory controller (the controller must be
 * delegated: the caller's cgroup hands it down or may be told to, which a
 * non-root cgroup holding processes refuses), else in v1's memory
 * hierarchy; as root, or wherever the caller may create directories there. */
typedef struct resmon_cgroup resmon_cgroup; /* opaque */

/* Makes the leaf, named resmon-PID-PIDNS-START-N (the caller's pid, pid
 * namespace inode and start time, then a counter), with memory_limit_bytes as its limit
 * when nonzero (v2 memory.max with memory.swap.max 0; v1
 * memory.limit_in_bytes and memory.memsw.limit_in_bytes): the OOM killer
 * then ends a process of the tree when it would go over.  Returns 0, or a
 * negative errno with a sentence in err saying why no cgroup could be made
 * (RESMON_ERR_MAX holds any): -ENOENT (no memory controller mounted),
 * -ENOTSUP (v2 without the memory controller or without memory.peak),
 * -EACCES/-EPERM/-EROFS (not allowed), -EBUSY (v2: not delegated). */
RESMON_API int resmon_cgroup_create(resmon_cgroup **out, uint64_t memory_limit_bytes, char *err, size_t errcap);

/* The leaf's directory; valid until resmon_cgroup_remove.  NULL for NULL. */
RESMON_API const char *resmon_cgroup_path(const resmon_cgroup *cg);

/* 1 or 2: the layout the leaf is in. */
RESMON_API int resmon_cgroup_version(const resmon_cgroup *cg);

/* Moves a process into the leaf: pid 0 is the caller -- a stat(2) and one
 * write(2) to a file opened by create, so async-signal-safe, for a child
 * between fork and exec (a single-threaded caller in a v1 leaf is moved
 * through its tasks file, which the kernel does without a global lock;
 * moving another process, or through cgroup.procs, may wait for an RCU grace
 * period: milliseconds) -- else the process pid (as a parent does for a
 * child it holds before exec).  Everything the process starts afterwards stays in the
 * leaf.  0 or a negative errno (-ESRCH: no such process). */
RESMON_API int resmon_cgroup_join(const resmon_cgroup *cg, pid_t pid);

/* Whether the process pid is in the leaf or in a cgroup below it (one its
 * processes made there): 1, or 0 when it is elsewhere -- moved out by a
 * write to another cgroup's cgroup.procs, which a process run as root may
 * do, so that the leaf's limit no longer binds it and its figures no longer
 * count it.  -ESRCH: no such process, or one that has exited (a zombie);
 * -EINVAL: cg NULL or pid not above 0; -ENOTSUP: the caller's own cgroup
 * path was not readable when cg was made; another negative errno when /proc
 * cannot say.  Reads /proc/PID/cgroup (its paths are the caller's view, as
 * the leaf's), and /proc/PID/stat for one outside: one or two small reads,
 * for a check now and then (resmon's command asks it of every process a run
 * left running), not for every sample.  Since 0.4. */
RESMON_API int resmon_cgroup_holds(const resmon_cgroup *cg, pid_t pid);

/* Removes the leaf and frees cg: an exiting process the kernel still counts
 * is waited for up to 2 s.  Processes still running in it (orphans left
 * running) are moved to the parent cgroup first -- except from a leaf made
 * with a memory limit: the limit binds them for as long as they live, so
 * they and the leaf stay, and -EBUSY is returned (since 0.4).  Removes only
 * the directory create made.  Returns 0, or a negative errno when the
 * directory could not be removed (it is then left); cg is freed either way.
 * Accepts NULL.  A leaf so left, and that of a process killed with SIGKILL,
 * goes with a later resmon_cgroup_create: before making its own, it removes
 * every leaf so named below the same parent whose creator was in the
 * caller's pid namespace and is gone (no such pid, or one started at another
 * time) and that holds no process.  Nothing else is removed.  The cgroups
 * a command made in its leaf are emptied and removed with it down to 64
 * levels below it; where they go deeper, the leaf is left and -ELOOP
 * returned if nothing within those levels runs (-EBUSY if something does;
 * -EMFILE or -ENFILE where no descriptor was left to follow them, about
 * two a level):
 * neither this call nor a later create removes a leaf nested deeper (since
 * 0.4). */
RESMON_API int resmon_cgroup_remove(resmon_cgroup *cg);

/* ------------------------------------------------------------------------ */
/* Prometheus and OpenMetrics exposition                                     */
/* ------------------------------------------------------------------------ */

/* Renders a monitor's state as metrics a Prometheus server (or anything that
 * reads its formats) can scrape, so a program that embeds resmon can serve
 * its own /metrics from its own HTTP server.  The library does no HTTP.
 * Since 0.4.
 *
 * Metric names carry base units (bytes, seconds, joules, watts, hertz,
 * ratios of 1): resmon_cpu_seconds_total, resmon_resident_memory_bytes (last
 * sample), resmon_resident_memory_max_bytes (the window's sampled peak so
 * far), resmon_samples_total, and when known the exact peak, GPU and energy
 * series (README.md, "Prometheus", lists them all).  A field that is NAN is
 * left out, never written as NaN or 0.  OpenMetrics adds # UNIT lines, names
 * counters' families without _total, and ends with a final "# EOF". */
typedef enum resmon_exposition_format {
    RESMON_EXPOSITION_PROMETHEUS = 0, /* text format 0.0.4: "text/plain; version=0.0.4" */
    RESMON_EXPOSITION_OPENMETRICS = 1 /* OpenMetrics 1.0.0 */
} resmon_exposition_format;

/* A label added to every series.  The value may hold any UTF-8 text; it is
 * escaped as the format requires (backslash, double quote, newline), and
 * each byte that is not valid UTF-8 is written as U+FFFD, so the exposition
 * stays valid whatever the value's source.  A
 * name-value pair, complete as it is: like resmon_gpu_memory it will not grow,
 * so it carries no struct_size. */
typedef struct resmon_label {
    const char *name;
    const char *value;
} resmon_label;

/* 1 when name is a valid label name ([a-zA-Z_][a-zA-Z0-9_]*, not starting
 * with the reserved "__"), else 0. */
RESMON_API int resmon_label_name_valid(const char *name);

/* Renders summary (summary->struct_size must be set, as every resmon
 * function that fills one sets it) and, when last is not NULL, the latest
 * sample (last_size: sizeof *last, as a stride is; ignored when last is
 * NULL), each series carrying the labels in order.  snprintf semantics:
 * returns the length the full text needs (excluding the NUL) and writes at
 * most cap bytes, always NUL-terminated when cap > 0.  Returns -EINVAL when
 * summary is NULL or its struct_size invalid, last_size is too small, buf is
 * NULL with cap > 0, labels is NULL with label_count > 0, a label name is
 * invalid or appears twice, a value is NULL, or the format is unknown; -E2BIG
 * as described under "Versioning".  Thread-safe; reads only what it is
 * given. */
RESMON_API int resmon_exposition_render(const resmon_summary *summary, const resmon_sample *last,
                                        size_t last_size, resmon_exposition_format format,
                                        const resmon_label *labels, size_t label_count, char *buf,
                                        size_t cap);

/* The same for a monitor's current state: its summary and latest kept
 * sample as of one sample (resmon_monitor_get_summary and
 * resmon_monitor_get_samples), copied without a lock, so the sampler never
 * waits for the caller however often it scrapes.  Safe from any thread while
 * the monitor runs (see Thread safety). */
RESMON_API int resmon_monitor_exposition(const resmon_monitor *m, resmon_exposition_format format,
                                         const resmon_label *labels, size_t label_count, char *buf,
                                         size_t cap);

#ifdef __cplusplus
}
#endif

#endif /* RESMON_H */
