/*
 * metric_fields.c -- the list of metric-group fields (see metric_fields.h).
 */
#include "metric_fields.h"

#define FIELD(sample_field, summary_field, fold)                                                           \
    {#summary_field, offsetof(resmon_sample, sample_field), offsetof(resmon_summary, summary_field), fold}

/* In resmon_summary's order, which is the JSON's. */
const rm__metric_field rm__metric_fields[] = {
    FIELD(vmem_mb, peak_vmem_mb, RM__FOLD_PEAK),
    FIELD(pss_mb, peak_pss_mb, RM__FOLD_PEAK),
    FIELD(swap_mb, peak_swap_mb, RM__FOLD_PEAK),
    FIELD(io_rchar, io_rchar, RM__FOLD_LAST),
    FIELD(io_wchar, io_wchar, RM__FOLD_LAST),
    FIELD(io_read_bytes, io_read_bytes, RM__FOLD_LAST),
    FIELD(io_write_bytes, io_write_bytes, RM__FOLD_LAST),
    FIELD(io_syscr, io_syscr, RM__FOLD_LAST),
    FIELD(io_syscw, io_syscw, RM__FOLD_LAST),
    FIELD(nprocs, peak_nprocs, RM__FOLD_PEAK),
    FIELD(nthreads, peak_nthreads, RM__FOLD_PEAK),
    FIELD(cpu_user_sec, cpu_user_sec, RM__FOLD_LAST),
    FIELD(cpu_sys_sec, cpu_sys_sec, RM__FOLD_LAST),
    FIELD(minor_faults, minor_faults, RM__FOLD_LAST),
    FIELD(major_faults, major_faults, RM__FOLD_LAST),
    FIELD(voluntary_switches, voluntary_switches, RM__FOLD_LAST),
    FIELD(involuntary_switches, involuntary_switches, RM__FOLD_LAST),
    FIELD(net_rx_bytes, net_rx_bytes, RM__FOLD_LAST),
    FIELD(net_tx_bytes, net_tx_bytes, RM__FOLD_LAST),
    FIELD(net_rx_packets, net_rx_packets, RM__FOLD_LAST),
    FIELD(net_tx_packets, net_tx_packets, RM__FOLD_LAST),
    FIELD(unreadable_procs, peak_unreadable_procs, RM__FOLD_PEAK),
};

const size_t rm__metric_field_count = sizeof rm__metric_fields / sizeof *rm__metric_fields;
