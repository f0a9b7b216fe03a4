/*
 * summary.h -- the running summary of a window, updated sample by sample.
 *
 * The seed computes its summary from the list of samples when asked; resmon
 * keeps sums, counts and extremes as samples arrive, so a summary costs O(1)
 * and still covers every sample of the window when old ones are no longer
 * kept (resmon_options.max_samples).
 */
#ifndef RESMON_SUMMARY_H
#define RESMON_SUMMARY_H

#include "resmon.h"

typedef struct rm__summary_acc {
    uint64_t count;
    double first_timestamp, last_timestamp;
    double first_rss_mb, last_rss_mb, sum_rss_mb, peak_rss_mb;
    double peak_cpu_percent;
    double cpu_time_sec;
    /* The CPU peak is taken over spans of samples (see cpu_peak_span in
     * summary.c): the closed span latest, and the open one after it. */
    double peak_last_cpu_sec, peak_last_span_sec, peak_open_cpu_sec, peak_open_span_sec;
    uint64_t gpu_util_count, gpu_mem_count, gpu_clock_count, gpu_power_count;
    double sum_gpu_util, peak_gpu_mem_mb, sum_gpu_clock_mhz, sum_gpu_power_w;
    double hwm_rss_mb;
    resmon_hwm_scope hwm_scope;
    int hwm_error;
    uint64_t skipped_slots;
    /* GPU energy: from the counter when it was read at two samples or more,
     * else trapezoids of power between consecutive samples. */
    double first_energy_j, last_energy_j;
    uint64_t energy_count;
    double integrated_energy_j;
    uint64_t integrated_intervals;
    double previous_power_w, previous_timestamp;
    double cpu_energy_j;
    double peak_gpu_proc_mem_mb;
    /* The cgroup's figures (resmon_options.cgroup_path): the largest sampled
     * cgroup_mem_mb, then what the monitor reads at the window's end. */
    double cgroup_peak_mb, cgroup_oom_kills, cgroup_throttled_sec, cgroup_nr_throttled;
    double cgroup_io_read_bytes, cgroup_io_write_bytes;
    int cgroup_version, cgroup_error;
    resmon_summary metrics; /* only its metric-group fields (metric_fields.h) */
    int metrics_on;         /* some metric group is on: fold the fields (else they stay NAN) */
} rm__summary_acc;

/* Starts an empty summary.  metrics_on: some metric group is on, so the
 * samples' metric-group fields are folded (else they stay NAN, at no cost). */
void rm__summary_acc_reset(rm__summary_acc *acc, int metrics_on);

/* Adds a sample; cpu_time_sec is the CPU time measured since the previous
 * one.  short_interval marks a sample taken much sooner after the previous
 * one than the schedule says (the stop's sample, a late first slot): its
 * CPU percent is over too short a time to stand as a peak, since the sampler
 * itself is then most of what ran. */
void rm__summary_acc_add(rm__summary_acc *acc, const resmon_sample *s, double cpu_time_sec,
                         int short_interval);
/* The same for a sample whose fields after gpu_proc_mem_mb and whose GPU
 * fields are all NAN (no metric group, no cgroup, no GPU reading): folds
 * only the base fields (timestamp, CPU, RSS), which is all that
 * rm__summary_acc_add would change.  The sampler's path when nothing but the
 * base is collected. */
void rm__summary_acc_add_base(rm__summary_acc *acc, const resmon_sample *s, double cpu_time_sec,
                              int short_interval);

/* Adds the GPU energy counter's reading taken with the latest sample (NAN
 * when the profiler has none or it failed). */
void rm__summary_acc_add_energy(rm__summary_acc *acc, double energy_j);

/* Adds slots the schedule skipped (resmon_summary.skipped_slots). */
void rm__summary_acc_add_skipped(rm__summary_acc *acc, uint64_t slots);

/* Replaces a shared accumulator with src (plain memory), word by word. */
void rm__summary_acc_store(rm__summary_acc *shared, const rm__summary_acc *src);

/* Copies a shared accumulator into dst (plain memory), word by word; the
 * caller checks the sequence lock around it. */
void rm__summary_acc_load(rm__summary_acc *dst, const rm__summary_acc *shared);

/* The summary of what was added so far (the seed's rules; see resmon.h). */
resmon_summary rm__summary_acc_result(const rm__summary_acc *acc);

#endif
