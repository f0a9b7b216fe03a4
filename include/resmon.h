/*
 * resmon.h -- the whole public API of libresmon.
 *
 * resmon measures what a program costs while it runs.  A monitor owns one
 * background thread that wakes on a fixed schedule (10 Hz by default) and
 * records a sample: CPU percent since the previous sample, resident memory,
 * and -- when the caller supplies a GPU profiler -- GPU utilization, memory,
 * clock and power, which a second thread reads on its own schedule so that a
 * slow GPU never delays a sample.  resmon can open NVIDIA (NVML, loaded at run
 * time), AMD and Intel GPUs itself (resmon_gpu_open).  The monitored window runs from resmon_monitor_start() to
 * resmon_monitor_stop(); a summary of it (peaks, means, growth, duration) is
 * kept up to date as samples arrive, so asking for it costs nothing.
 *
 *     resmon_monitor *mon = resmon_monitor_new(NULL);     // 10 Hz, no GPU
 *     resmon_monitor_start(mon);
 *     run_benchmark();
 *     resmon_monitor_stop(mon);
 *     resmon_summary s = resmon_monitor_summary(mon);
 *     printf("peak RSS %.1f MiB (exact %.1f)\n", s.peak_rss_mb, s.hwm_rss_mb);
 *     resmon_monitor_free(mon);
 *
 * The API mirrors the ResourceMonitor of the calibrax Python library
 * (ResourceMonitor, ResourceSample, ResourceSummary, GPUProfilerProtocol) and
 * goes further: the exact in-window peak RSS from the kernel's high-water mark,
 * monitoring another process and its descendants, a bounded sample store for
 * long runs, a per-sample callback for streaming, GPU and CPU energy, and the
 * monitored processes' own GPU memory.
 *
 * Conventions
 *   - Functions that can fail return 0 (or a count) on success and a negative
 *     errno on failure; resmon_strerror() turns one into words.  Constructors
 *     return NULL and set errno.
 *   - The library never prints, never exits and never aborts.
 *   - A value that is unknown is NAN (what the Python seed calls None).
 *   - Memory is in MiB (bytes / 1048576), time in seconds, power in watts.
 *   - The caller owns what it passes in; whatever the library allocates has a
 *     matching free function.
 *
 * Thread safety
 *   One monitor may be read (resmon_monitor_samples, _summary, _running) from
 *   any number of threads while it runs; start, stop and free must not race
 *   with each other on the same monitor.  Different monitors are independent,
 *   except for the exact peak RSS (see resmon_summary.hwm_rss_mb).
 *
 * Versioning
 *   RESMON_VERSION_* give the version compiled against, resmon_version() the
 *   version linked at run time.  Within one major version the ABI is stable
 *   from 1.0 on; 0.x releases may change struct layouts between minors.
 */
#ifndef RESMON_H
#define RESMON_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Version and export markers                                               */
/* ------------------------------------------------------------------------ */

#define RESMON_VERSION_MAJOR 0
#define RESMON_VERSION_MINOR 2
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
 * two cannot drift apart. */
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
    XX(ETIMEDOUT, "timed out")

/* A short English description of a negative errno (positive values are
 * accepted too).  Never NULL; the string is static and thread-safe. */
RESMON_API const char *resmon_strerror(int err);

/* ------------------------------------------------------------------------ */
/* Samples and summaries                                                     */
/* ------------------------------------------------------------------------ */

/* ResourceSample: one measurement. */
typedef struct resmon_sample {
    double timestamp;     /* seconds, CLOCK_MONOTONIC (the seed's perf_counter) */
    double cpu_percent;   /* CPU time over wall time since the previous sample,
                             x100; above 100 with several busy threads; 0 in
                             the first sample of a window.  From the kernel's
                             per-process CPU clock (ns), which brings a thread
                             running on another CPU up to date only at each
                             scheduler tick (1/CONFIG_HZ): at intervals of a few
                             ticks single samples alternate by +-1 tick; sums
                             and means (cpu_time_sec) are unaffected */
    double rss_mb;        /* resident set size, MiB */
    double gpu_util;      /* percent; NAN when unavailable */
    double gpu_mem_mb;    /* NAN when unavailable */
    double gpu_clock_mhz; /* NAN when unavailable */
    double gpu_power_w;   /* NAN when unavailable */
    double gpu_proc_mem_mb; /* beyond the seed: GPU memory of the monitored
                               process(es); NAN when unavailable */
} resmon_sample;

/* How much to trust resmon_summary.hwm_rss_mb. */
typedef enum resmon_hwm_scope {
    RESMON_HWM_UNKNOWN = 0,  /* not measured (hwm_rss_mb is NAN) */
    RESMON_HWM_WINDOW = 1,   /* the exact peak within the monitored window */
    RESMON_HWM_LIFETIME = 2  /* the kernel refused the reset: the peak over the
                                process's whole life, which may predate the window */
} resmon_hwm_scope;

/* ResourceSummary: the monitored window in aggregate.  NAN means None. */
typedef struct resmon_summary {
    /* The seed's fields, in its order. */
    double peak_rss_mb;        /* largest sampled RSS */
    double mean_rss_mb;        /* mean sampled RSS */
    double peak_gpu_mem_mb;    /* NAN when no sample had GPU memory */
    double mean_gpu_util;      /* NAN when no sample had GPU utilization */
    double memory_growth_mb;   /* last sampled RSS minus first */
    uint64_t num_samples;      /* every sample of the window, including any no
                                  longer kept because of max_samples */
    double duration_sec;       /* last timestamp minus first; 0 with < 2 samples */
    double mean_gpu_clock_mhz; /* NAN when no sample had a GPU clock */
    double mean_gpu_power_w;   /* NAN when no sample had GPU power */

    /* Beyond the seed. */
    double mean_cpu_percent;   /* cpu_time_sec over duration_sec, x100; 0 if no duration */
    double peak_cpu_percent;   /* largest per-sample CPU percent, leaving out samples
                                  taken under half an interval after the previous one
                                  (such as the stop's), whose CPU is mostly resmon's */
    double cpu_time_sec;       /* CPU seconds consumed between first and last
                                  sample, from the same clock as cpu_percent */
    /* Exact peak RSS from the kernel's high-water mark (VmHWM).  resmon resets
     * the mark when a window starts (by writing 5 to /proc/PID/clear_refs) and
     * reads it when the window stops, so a spike between two samples still
     * shows here.  The mark is per process: two monitors of the same process
     * whose windows overlap reset each other, so a window that started first
     * sees only the peak since the later start (still exact for the later
     * window).  Where the reset is refused, the value is the lifetime peak and
     * hwm_scope says so.  When monitoring a tree, this is the largest single
     * process's peak.  NAN when unknown. */
    double hwm_rss_mb;
    resmon_hwm_scope hwm_scope;
    uint64_t skipped_slots;    /* schedule slots missed because the sampler ran
                                  late; the schedule skips ahead, never bursts */
    /* Energy of the window, joules; NAN when unknown.  GPU: from the
     * profiler's energy counter when it has one (exact), else power
     * integrated over the samples (trapezoids; misses what happens between
     * samples).  CPU: the packages' RAPL counters (powercap energy_uj, wrap-
     * safe), which are root-only on most systems: NAN then. */
    double gpu_energy_j;
    int gpu_energy_exact;      /* 1: counter; 0: integrated power */
    double cpu_energy_j;
    double peak_gpu_proc_mem_mb; /* GPU memory of the monitored processes; NAN if unknown */
} resmon_summary;

/* Serialises a summary as a JSON object with exactly the seed's to_dict()
 * keys in its order -- peak_rss_mb, mean_rss_mb, peak_gpu_mem_mb (number or
 * null), mean_gpu_util (number or null), memory_growth_mb, num_samples (an
 * integer), duration_sec, then mean_gpu_clock_mhz and mean_gpu_power_w only
 * when known -- followed, each only when known, by hwm_rss_mb and hwm_scope
 * ("window" or "lifetime"), gpu_energy_j and gpu_energy_source ("counter" or
 * "integrated"), cpu_energy_j and peak_gpu_proc_mem_mb.  Doubles are written with 17 significant digits and round-trip
 * exactly; non-finite values in required numeric fields are written as null.
 * snprintf semantics: returns the length the full text needs (excluding the
 * NUL) and writes at most cap bytes, always NUL-terminated when cap > 0.
 * Returns -EINVAL when s is NULL or buf is NULL with cap > 0. */
RESMON_API int resmon_summary_to_json(const resmon_summary *s, char *buf, size_t cap);

/* Parses what resmon_summary_to_json -- or the seed's to_dict() followed by
 * Python's json.dumps -- produces: integers where doubles are expected, null
 * or missing optional keys, keys in any order, unknown keys ignored.  Reads at
 * most len bytes (json need not be NUL-terminated).  Rejects malformed JSON,
 * a missing required key, a wrong type, a negative or fractional num_samples,
 * non-finite numbers and trailing non-space text with -EINVAL and a message
 * naming the key or byte offset in err (if errcap > 0; always NUL-terminated).
 * On failure *out is left unchanged.  Fields absent from JSON are NAN (or 0
 * for counts, RESMON_HWM_UNKNOWN for hwm_scope). */
RESMON_API int resmon_summary_from_json(const char *json, size_t len, resmon_summary *out,
                                        char *err, size_t errcap);

/* ------------------------------------------------------------------------ */
/* GPU profilers (GPUProfilerProtocol)                                       */
/* ------------------------------------------------------------------------ */

/* A GPU profiler is a table of callbacks that the monitor's GPU thread -- and
 * only that thread -- calls once per GPU interval (see gpu_interval_sec).  Each returns 0 on success or a
 * negative errno.  A NULL callback means "not supported".  A failing callback,
 * or a value that is NaN, infinite or negative, makes that field NAN in that
 * sample only; the other fields and the monitor carry on.  Field names follow
 * the seed's dictionary keys. */
typedef struct resmon_gpu_memory { double gpu_memory_used_mb, gpu_memory_total_mb; } resmon_gpu_memory;
typedef struct resmon_gpu_clocks { double gpu_clock_mhz, mem_clock_mhz; } resmon_gpu_clocks;
typedef struct resmon_gpu_power { double power_draw_w, power_limit_w; } resmon_gpu_power;

typedef struct resmon_gpu_profiler {
    void *ctx; /* passed back to every callback */
    int (*get_utilization)(void *ctx, double *percent);
    int (*get_memory_usage)(void *ctx, resmon_gpu_memory *out);
    int (*get_clock_info)(void *ctx, resmon_gpu_clocks *out);
    int (*get_power_info)(void *ctx, resmon_gpu_power *out);
    /* Beyond the seed; NULL when not supported. */
    /* A cumulative energy counter in joules (any origin, never decreasing
     * within a window): with it the window's energy is exact; without it
     * resmon integrates power over time. */
    int (*get_energy)(void *ctx, double *joules);
    /* GPU memory used by the given processes, MiB. */
    int (*get_process_memory)(void *ctx, const pid_t *pids, size_t count, double *mb);
} resmon_gpu_profiler;

/* ---- GPU backends built into resmon --------------------------------------
 *
 * resmon finds NVIDIA GPUs through NVML, loaded with dlopen at run time
 * (libnvidia-ml.so.1; the environment variable RESMON_NVML_LIBRARY names
 * another path), AMD GPUs through amdgpu's sysfs files and Intel GPUs through
 * i915/xe sysfs and hwmon files (under RESMON_SYSFS_ROOT, default /sys).
 * Nothing vendor-specific is needed at build time.  Added in 0.2. */

typedef struct resmon_gpu_info {
    char backend[8];        /* "nvml", "amd" or "intel" */
    unsigned index;         /* index within the backend */
    char name[96];          /* product name as the driver reports it */
    char id[96];            /* NVML: UUID; sysfs: PCI address */
    double memory_total_mb; /* NAN when unknown */
} resmon_gpu_info;

/* The latest readings of one device, as the aggregate profiler took them. */
typedef struct resmon_gpu_reading {
    double util_percent, mem_used_mb, mem_total_mb, clock_mhz, mem_clock_mhz, power_w, power_limit_w;
} resmon_gpu_reading;

typedef struct resmon_gpu resmon_gpu; /* an open GPU profiler */

/* Lists the GPUs every backend finds, up to cap, and stores how many exist in
 * *count.  A missing driver or library is not an error: it finds nothing.
 * Returns 0 or -ENOMEM. */
RESMON_API int resmon_gpu_list(resmon_gpu_info *out, size_t cap, size_t *count);

/* Opens a profiler.  spec:
 *   "auto" or NULL  the first GPU any backend finds (NVML first; for NVIDIA,
 *                   the first entry of CUDA_VISIBLE_DEVICES or
 *                   NVIDIA_VISIBLE_DEVICES when set: an index or a UUID)
 *   "all"           every GPU found, as one aggregate (memory and power
 *                   summed, utilization and clocks averaged)
 *   "nvml:N", "nvml:GPU-<uuid>", "nvml:<pci bus id>", "amd:N", "intel:N"
 * Returns 0, or a negative errno with a sentence in err (library missing,
 * driver/library mismatch, no permission, no such device): -ENOENT (no such
 * device or library), -ENODEV (no GPU at all), -EACCES, -EIO, -EINVAL (bad
 * spec).  Never prints.  Thread-safe. */
RESMON_API int resmon_gpu_open(resmon_gpu **out, const char *spec, char *err, size_t errcap);

/* Closes a profiler (NVML is shut down with its last user).  Accepts NULL.
 * No monitor may still use its profiler. */
RESMON_API void resmon_gpu_close(resmon_gpu *gpu);

/* The callback table to put in resmon_options.gpu_profiler; valid until
 * resmon_gpu_close. */
RESMON_API const resmon_gpu_profiler *resmon_gpu_profiler_of(resmon_gpu *gpu);

/* How many devices the profiler reads (1, or N for "all"), and each one's
 * description. */
RESMON_API size_t resmon_gpu_device_count(const resmon_gpu *gpu);
RESMON_API int resmon_gpu_device_info(const resmon_gpu *gpu, size_t i, resmon_gpu_info *out);

/* The readings of each device from the profiler's latest calls (per-device
 * columns for "all"); thread-safe, e.g. from a monitor's on_sample callback.
 * Returns how many devices; copies up to cap. */
RESMON_API size_t resmon_gpu_last_readings(const resmon_gpu *gpu, resmon_gpu_reading *out, size_t cap);

/* ------------------------------------------------------------------------ */
/* The monitor (ResourceMonitor)                                             */
/* ------------------------------------------------------------------------ */

/* Called on the sampler thread with each sample as soon as it is taken, in
 * order, including the first and last of a window.  It must not call start,
 * stop or free on the same monitor (they return -EDEADLK).  A slow callback
 * delays the next sample; the schedule then skips ahead (skipped_slots). */
typedef void (*resmon_sample_cb)(const resmon_sample *sample, void *user);

typedef struct resmon_options {
    double sample_interval_sec;              /* 0 means the default, 0.1 (10 Hz) */
    const resmon_gpu_profiler *gpu_profiler; /* NULL: no GPU readings.  Must
                                                outlive the monitor. */
    /* Beyond the seed; a zeroed struct always means "defaults". */
    pid_t pid;              /* 0: this process.  Else the process to monitor
                               (its CPU clock and /proc/PID must be readable) */
    int include_children;   /* with pid: nonzero adds every descendant alive at
                               each sample (found afresh each sample) */
    size_t max_samples;     /* 0: keep every sample.  Else keep only the most
                               recent max_samples (a ring); the summary still
                               covers the whole window */
    resmon_sample_cb on_sample; /* optional streaming callback */
    void *on_sample_user;
    double gpu_interval_sec; /* 0: the sample interval, but no faster than
                                0.02 s.  The GPU is read on its own thread
                                ("resmon-gpu") on this schedule; each sample
                                carries the freshest reading, or NAN when it is
                                older than 1.5 GPU intervals (a slow or hung
                                call), so CPU/RSS sampling never waits for it */
} resmon_options;

typedef struct resmon_monitor resmon_monitor; /* opaque */

/* Creates a stopped monitor.  opts NULL means defaults; the options are
 * copied.  Returns NULL and sets errno to EINVAL (negative, NaN or infinite
 * interval, negative pid) or ENOMEM. */
RESMON_API resmon_monitor *resmon_monitor_new(const resmon_options *opts);

/* Stops the monitor if it runs, then frees it.  Accepts NULL. */
RESMON_API void resmon_monitor_free(resmon_monitor *m);

/* __enter__: clears the previous window's samples and summary, resets the
 * exact-peak mark, starts the sampler thread and returns once the window's
 * first sample is recorded.  Returns 0, -EBUSY if already running, -EDEADLK
 * from the sampler thread, -ESRCH/-EACCES if the monitored process cannot be
 * read, -EAGAIN/-ENOMEM if the thread cannot be created. */
RESMON_API int resmon_monitor_start(resmon_monitor *m);

/* __exit__: wakes the sampler thread at once (it never sleeps out the
 * interval), lets it take the window's final sample, joins it and reads the
 * exact peak.  Returns 0, also when not running (a no-op), or -EDEADLK from
 * the sampler thread. */
RESMON_API int resmon_monitor_stop(resmon_monitor *m);

/* 1 while a window is open, else 0.  Also 0 after a monitored process has
 * exited and the sampler ended the window by itself. */
RESMON_API int resmon_monitor_running(const resmon_monitor *m);

/* Copies min(n, cap) of the kept samples, oldest first, into out (which may be
 * NULL when cap is 0) and returns n, the number kept.  A consistent snapshot
 * even while the monitor runs. */
RESMON_API size_t resmon_monitor_samples(const resmon_monitor *m, resmon_sample *out, size_t cap);

/* The current window's summary (a consistent snapshot, O(1)).  Zeroed with GPU
 * and peak fields NAN when no sample has been taken. */
RESMON_API resmon_summary resmon_monitor_summary(const resmon_monitor *m);

#ifdef __cplusplus
}
#endif

#endif /* RESMON_H */
