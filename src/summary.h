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

#include "figure_list.h"
#include "resmon.h"

/* The summary figures folded from a sample's figure that only some samples
 * know: the GPU's and the cgroup's MAX and MEAN (figure_list.h).
 * RM__FOLD_KNOWN(OP, GROUP, FIELD, FOLD) expands OP_MAX(FIELD, FROM) or
 * OP_MEAN(FIELD, FROM) (FROM: the sample's figure) for such a figure,
 * OP_OWN for a figure not folded from the samples, and nothing for a base
 * figure: those (CPU, RSS, the count and the span, always known) summary.c
 * folds by hand in add_base, the sampler's path, where the first sample
 * also starts the CPU peak's spans. */
#define RM__FOLD_KNOWN(op, group, field, fold)                                                                    \
    RM__FOLD_KNOWN_##group(op, field, RM__FOLD_KIND_##fold, RM__FOLD_FROM_##fold)
#define RM__FOLD_KNOWN_BASE(op, field, kind, from)
#define RM__FOLD_KNOWN_GPU(op, field, kind, from) RM__FOLD_KNOWN_OP(op, field, kind, from)
#define RM__FOLD_KNOWN_CGROUP(op, field, kind, from) RM__FOLD_KNOWN_OP(op, field, kind, from)
#define RM__FOLD_KNOWN_OP(op, field, kind, from) op##_##kind(field, from)

/* Each MAX its largest known value (NAN before one); each MEAN the sum and
 * the count of the samples that knew its figure. */
#define RM__ACC_FOLDED(group, field, type, fold, ...) RM__FOLD_KNOWN(RM__ACC_FOLDED, group, field, fold)
#define RM__ACC_FOLDED_MAX(field, from) double field;
#define RM__ACC_FOLDED_MEAN(field, from)                                                                           \
    double sum_##from;                                                                                             \
    uint64_t known_##from;
#define RM__ACC_FOLDED_OWN(field, from)

typedef struct rm__summary_acc {
    uint64_t count;
    double first_timestamp, last_timestamp;
    double first_rss_mb, last_rss_mb, sum_rss_mb, peak_rss_mb;
    double peak_cpu_percent;
    double cpu_time_sec;
    /* The CPU peak is taken over spans of samples (see cpu_peak_span in
     * summary.c): the closed span latest, and the open one after it. */
    double peak_last_cpu_sec, peak_last_span_sec, peak_open_cpu_sec, peak_open_span_sec;
    /* The GPU's and the cgroup's folds of sampled figures (RM__ACC_FOLDED). */
    RM__SUMMARY_FIGURES_BASE(RM__ACC_FOLDED)
    RM__SUMMARY_FIGURES_CGROUP(RM__ACC_FOLDED)
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
    /* The cgroup's figures (resmon_options.cgroup_path) the monitor reads at
     * the window's end (cgroup_peak_mb above, folded, takes the kernel's
     * exact peak then too). */
    double cgroup_oom_kills, cgroup_throttled_sec, cgroup_nr_throttled;
    double cgroup_io_read_bytes, cgroup_io_write_bytes;
    double walk_interval_sec; /* the monitor's, at the window's end (tree_totals.h) */
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
