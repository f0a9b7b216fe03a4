/*
 * figure_list.h -- the one list of the figures of resmon_sample and
 * resmon_summary outside the metric groups (those are metric_list.h's): the
 * base figures, the GPU's and the cgroup's, written once.  The places that
 * name such a figure expand this list, as metric_list.h's are expanded: the
 * summary JSON both ways (through src/figure_fields.c's tables, walked by
 * summary_json.c and summary_json_read.c), the fold from the samples of the
 * GPU's and the cgroup's figures (summary.c, by summary.h's RM__FOLD_KNOWN),
 * the Prometheus rows (exposition.c), the command's samples-file columns of
 * these figures (CPU, RSS, GPU, cgroup memory: tools/resmon/samples_file.c,
 * written, and samples_read.c, read back) and the Python binding's summary
 * dict and keys (python/src/module.c).  Two places still name figures by
 * hand, each for a reason the list cannot carry: summary.c's add_base folds
 * the base figures (CPU, RSS, count, span) on the sampler's path, its first
 * sample shared with the CPU peak's spans; and the command's table
 * (tools/resmon/summary_output.c) joins figures into lines of its own
 * wording and order.  It names only public fields (resmon.h), so it
 * lives in common/, which the library, the command and the binding share;
 * the structs' layout is the ABI, so a command built with it reads any
 * library of the same soname.
 *
 * A summary figure is
 *   X(GROUP, FIELD, TYPE, FOLD, UNIT, JSON, PROM_TYPE, PROM_ORDER, PROM_NAME, HELP)
 * and a sample figure
 *   X(GROUP, FIELD, UNIT, PROM_TYPE, PROM_ORDER, PROM_NAME, HELP)
 *   GROUP      BASE, GPU or CGROUP (a cgroup's figures are known only when
 *              the summary's cgroup_version is 1 or 2)
 *   FIELD      the struct's field, and the summary JSON's key
 *   TYPE       DOUBLE, or U64 (a uint64_t count)
 *   FOLD       how the summary has it from the samples: MAX(F) or MEAN(F)
 *              (the largest or the mean of the samples' F), GROWTH(F) (the
 *              last sample's F minus the first's), SPAN (the last timestamp
 *              minus the first), COUNT (the samples), or OWN (not from the
 *              samples' figures: CPU time and energy from their counters,
 *              the kernel's peaks, the cgroup's end reads)
 *   UNIT       MIB, BYTES, SECONDS, COUNT, PERCENT, MHZ, WATTS or JOULES
 *   JSON       when resmon_summary_to_json writes it and how
 *              resmon_summary_from_json takes it: REQUIRED (always; must be
 *              there), SEED (always; may be absent or null), UNLESS_NAN
 *              (unless NaN), KNOWN (when finite), MEASURED (when
 *              cpu_time_sec is finite; read when present), HWM (when finite
 *              and hwm_scope known, followed by "hwm_scope"), ENERGY (when
 *              finite, followed by "gpu_energy_source"), CGROUP (after
 *              "cgroup_version", when there is a cgroup and it is finite)
 *   PROM_TYPE  the exposition's family type: GAUGE, COUNTER or NONE (not
 *              exposed; then PROM_ORDER, PROM_NAME and HELP are 0, NULL, NULL)
 *   PROM_ORDER the row's place among the exposition's rows of its section
 *              (base and GPU first, then the metric groups', then the
 *              cgroup's): the order those rows had before this list
 *   PROM_NAME  the family name (a counter adds "_total"); values go out in
 *              base units (MiB as bytes, percent as a ratio, MHz as hertz),
 *              counts without a fraction
 *   HELP       its HELP (no backslash, quote or newline)
 *
 * The summary lists run in the summary JSON's order (resmon_summary's, but
 * skipped_slots beside cpu_time_sec); the metric groups' keys come between
 * the base and GPU figures and the cgroup's.
 */
#ifndef RESMON_FIGURE_LIST_H
#define RESMON_FIGURE_LIST_H

#define RM__SUMMARY_FIGURES_BASE(X)                                                                                \
    X(BASE, peak_rss_mb, DOUBLE, MAX(rss_mb), MIB, REQUIRED, GAUGE, 3, "resmon_resident_memory_max_bytes",        \
      "Largest sampled resident memory in the window so far.")                                                    \
    X(BASE, mean_rss_mb, DOUBLE, MEAN(rss_mb), MIB, REQUIRED, GAUGE, 4, "resmon_resident_memory_mean_bytes",      \
      "Mean sampled resident memory in the window so far.")                                                       \
    X(GPU, peak_gpu_mem_mb, DOUBLE, MAX(gpu_mem_mb), MIB, SEED, GAUGE, 11, "resmon_gpu_memory_used_max_bytes",    \
      "Largest sampled GPU memory in use in the window so far.")                                                  \
    X(GPU, mean_gpu_util, DOUBLE, MEAN(gpu_util), PERCENT, SEED, NONE, 0, NULL, NULL)                             \
    X(BASE, memory_growth_mb, DOUBLE, GROWTH(rss_mb), MIB, REQUIRED, NONE, 0, NULL, NULL)                         \
    X(BASE, num_samples, U64, COUNT, COUNT, REQUIRED, COUNTER, 6, "resmon_samples", "Samples taken in the window.") \
    X(BASE, duration_sec, DOUBLE, SPAN, SECONDS, REQUIRED, GAUGE, 8, "resmon_window_duration_seconds",            \
      "Time from the window's first sample to its latest.")                                                       \
    X(GPU, mean_gpu_clock_mhz, DOUBLE, MEAN(gpu_clock_mhz), MHZ, UNLESS_NAN, NONE, 0, NULL, NULL)                 \
    X(GPU, mean_gpu_power_w, DOUBLE, MEAN(gpu_power_w), WATTS, UNLESS_NAN, NONE, 0, NULL, NULL)                   \
    X(BASE, mean_cpu_percent, DOUBLE, OWN, PERCENT, KNOWN, NONE, 0, NULL, NULL)                                   \
    X(BASE, peak_cpu_percent, DOUBLE, OWN, PERCENT, KNOWN, NONE, 0, NULL, NULL)                                   \
    X(BASE, cpu_time_sec, DOUBLE, OWN, SECONDS, KNOWN, COUNTER, 0, "resmon_cpu_seconds",                          \
      "CPU time of the monitored processes in the window.")                                                       \
    X(BASE, skipped_slots, U64, OWN, COUNT, MEASURED, COUNTER, 7, "resmon_skipped_slots",                         \
      "Schedule slots missed because the sampler ran late.")                                                      \
    X(BASE, hwm_rss_mb, DOUBLE, OWN, MIB, HWM, GAUGE, 5, "resmon_resident_memory_exact_max_bytes",                \
      "Exact peak resident memory from the kernel's high-water mark (largest single process).")                  \
    X(GPU, gpu_energy_j, DOUBLE, OWN, JOULES, ENERGY, COUNTER, 15, "resmon_gpu_energy_joules",                    \
      "GPU energy in the window.")                                                                                 \
    X(BASE, cpu_energy_j, DOUBLE, OWN, JOULES, KNOWN, COUNTER, 16, "resmon_cpu_energy_joules",                    \
      "CPU package energy (RAPL) in the window.")                                                                 \
    X(GPU, peak_gpu_proc_mem_mb, DOUBLE, MAX(gpu_proc_mem_mb), MIB, KNOWN, NONE, 0, NULL, NULL)

/* Since 0.4, with resmon_options.cgroup_path. */
#define RM__SUMMARY_FIGURES_CGROUP(X)                                                                              \
    X(CGROUP, cgroup_peak_mb, DOUBLE, MAX(cgroup_mem_mb), MIB, CGROUP, GAUGE, 1, "resmon_cgroup_memory_max_bytes", \
      "Peak memory charged to the cgroup: largest sampled so far, the kernel's exact peak once the window ends.") \
    X(CGROUP, cgroup_oom_kills, DOUBLE, OWN, COUNT, CGROUP, COUNTER, 2, "resmon_cgroup_oom_kills",                \
      "Processes of the cgroup ended by the kernel's OOM killer (read when the window ends).")                    \
    X(CGROUP, cgroup_throttled_sec, DOUBLE, OWN, SECONDS, CGROUP, COUNTER, 3, "resmon_cgroup_cpu_throttled_seconds", \
      "Time the cgroup's CPU was throttled (v2 cpu.stat, read when the window ends).")                           \
    X(CGROUP, cgroup_nr_throttled, DOUBLE, OWN, COUNT, CGROUP, NONE, 0, NULL, NULL)                               \
    X(CGROUP, cgroup_io_read_bytes, DOUBLE, OWN, BYTES, CGROUP, COUNTER, 4, "resmon_cgroup_io_read_bytes",        \
      "Bytes the cgroup read from storage (v2 io.stat, read when the window ends).")                             \
    X(CGROUP, cgroup_io_write_bytes, DOUBLE, OWN, BYTES, CGROUP, COUNTER, 5, "resmon_cgroup_io_write_bytes",      \
      "Bytes the cgroup wrote to storage (v2 io.stat, read when the window ends).")                              \
    X(CGROUP, walk_interval_sec, DOUBLE, OWN, SECONDS, CGROUP, NONE, 0, NULL, NULL)

/* The sample's figures outside the metric groups, in resmon_sample's order. */
#define RM__SAMPLE_FIGURES_BASE(X)                                                                                 \
    X(BASE, timestamp, SECONDS, NONE, 0, NULL, NULL)                                                               \
    X(BASE, cpu_percent, PERCENT, GAUGE, 1, "resmon_cpu_utilization_ratio",                                       \
      "CPU time over wall time at the latest sample (1 = one core busy).")                                        \
    X(BASE, rss_mb, MIB, GAUGE, 2, "resmon_resident_memory_bytes", "Resident memory at the latest sample.")        \
    X(GPU, gpu_util, PERCENT, GAUGE, 9, "resmon_gpu_utilization_ratio", "GPU utilization at the latest sample.")  \
    X(GPU, gpu_mem_mb, MIB, GAUGE, 10, "resmon_gpu_memory_used_bytes", "GPU memory in use at the latest sample.") \
    X(GPU, gpu_clock_mhz, MHZ, GAUGE, 13, "resmon_gpu_clock_hertz", "GPU clock at the latest sample.")            \
    X(GPU, gpu_power_w, WATTS, GAUGE, 14, "resmon_gpu_power_watts", "GPU power draw at the latest sample.")       \
    X(GPU, gpu_proc_mem_mb, MIB, GAUGE, 12, "resmon_gpu_process_memory_bytes",                                    \
      "GPU memory of the monitored processes at the latest sample.")

#define RM__SAMPLE_FIGURES_CGROUP(X)                                                                               \
    X(CGROUP, cgroup_mem_mb, MIB, GAUGE, 0, "resmon_cgroup_memory_bytes",                                         \
      "Memory charged to the cgroup at the latest sample: the whole tree, page cache and kernel memory included.")

/* The FOLD column taken apart: its kind (MAX, MEAN, GROWTH, SPAN, COUNT or
 * OWN) and the sample figure it folds (nothing for SPAN, COUNT and OWN).
 * RM__FOLD_KIND_##fold and RM__FOLD_FROM_##fold, passed on as a macro's
 * arguments, expand to them (summary.h and summary.c fold by them). */
#define RM__FOLD_KIND_MAX(field) MAX
#define RM__FOLD_KIND_MEAN(field) MEAN
#define RM__FOLD_KIND_GROWTH(field) GROWTH
#define RM__FOLD_KIND_SPAN SPAN
#define RM__FOLD_KIND_COUNT COUNT
#define RM__FOLD_KIND_OWN OWN
#define RM__FOLD_FROM_MAX(field) field
#define RM__FOLD_FROM_MEAN(field) field
#define RM__FOLD_FROM_GROWTH(field) field
#define RM__FOLD_FROM_SPAN
#define RM__FOLD_FROM_COUNT
#define RM__FOLD_FROM_OWN

/* A fold from a sample's figure names a double of resmon_sample: expanded in
 * figure_fields.c as a compile-time check of the list. */
#define RM__FOLD_CHECK_MAX(field) RM__FOLD_CHECK_FIELD(field)
#define RM__FOLD_CHECK_MEAN(field) RM__FOLD_CHECK_FIELD(field)
#define RM__FOLD_CHECK_GROWTH(field) RM__FOLD_CHECK_FIELD(field)
#define RM__FOLD_CHECK_SPAN
#define RM__FOLD_CHECK_COUNT
#define RM__FOLD_CHECK_OWN
#define RM__FOLD_CHECK_FIELD(field)                                                                                \
    _Static_assert(sizeof(((resmon_sample *)0)->field) == sizeof(double), "a fold's sample figure is a double");
#define RM__FOLD_CHECK(group, field, type, fold, ...) RM__FOLD_CHECK_##fold

#endif
