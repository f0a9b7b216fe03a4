/*
 * metric_list.h -- the one list of the metric-group metrics
 * (resmon_options.metrics), written once.  Every place that names such a
 * metric expands this list (libuv's UV_ERRNO_MAP is the model): the
 * sample-to-summary fold (summary.c), the summary JSON both ways
 * (summary_json.c, summary_json_read.c), the Prometheus rows (exposition.c),
 * the introspection call resmon_metric_info (metric_fields.c), through which
 * the command's CSV/JSON Lines columns, the chart and the Python binding get
 * theirs, and the reading (metrics.c: the sources a group asks for, the
 * per-process slots, the sums and the sample's fields).  Adding a metric is
 * a line here, its fields in resmon.h and, for a new source, its reader in
 * metrics.c (one function and a row of its reader table); a line of the
 * command's table (tools/resmon/summary_output.c) if it earns one.
 *
 * Each entry is
 *   X(GROUP, SAMPLE_FIELD, SUMMARY_FIELD, FOLD, UNIT, COLUMN, PROMETHEUS, HELP, WORDS, SOURCE, SLOT, SCALE)
 *   GROUP        the RESMON_METRIC_* bit that reads it (0: any group but
 *                NETWORK, for unreadable_procs)
 *   SAMPLE_FIELD a double in resmon_sample
 *   SUMMARY_FIELD a double in resmon_summary, and its summary JSON key
 *   FOLD         MAX (the summary keeps the largest sampled value: a level)
 *                or LAST (the last sample's: a total since the window began)
 *   UNIT         MIB, BYTES, SECONDS or COUNT: the value's unit
 *                (resmon_metric.unit); Prometheus gets base units (MiB times
 *                1048576 as bytes; a COUNT written without a fraction)
 *   COLUMN       the command's CSV column and JSON Lines key (-s)
 *   PROMETHEUS   the family name: a gauge for MAX, a counter (adding
 *                "_total") for LAST
 *   HELP         its Prometheus HELP (no backslash, quote or newline)
 *   WORDS        a few words saying what it is, as a person reads it
 *   SOURCE       where metrics.c reads it (RM__SOURCE_*, as htop's field
 *                table carries the /proc file a field needs): STAT (the
 *                process's stat), SWITCHES (its threads' status), SMAPS
 *                (smaps_rollup), IO (io), FDS (its fd directory), NET (the
 *                root's net/dev, once per reading) or ANY (always known).
 *                The groups on ask a process for the sources of their
 *                metrics; a field is NAN when no process gave its source.
 *   SLOT         where the reading keeps it (metrics.h): COUNTER(NAME), a
 *                lifetime count per process whose increases make the
 *                window's total; LEVEL(NAME), a level per process summed over
 *                the reading's processes; READING(NAME), the reading's own.
 *   SCALE        from the slot's integer to the sample's value: ONE,
 *                KIB_TO_MIB, BYTES_TO_MIB or TICKS (clock ticks to seconds)
 *
 * The sublists keep the orders the outputs had before the list existed, so
 * every output reads byte for byte as before: the summary (its JSON, its
 * struct) and the CSV run MEMORY, IO, COUNTS, CPU_SPLIT, FAULTS, NETWORK,
 * UNREADABLE, then ADDED (metrics since 0.4, at the structs' ends, in
 * their order); the Prometheus rows run CPU_SPLIT, MEMORY, COUNTS,
 * UNREADABLE, IO, FAULTS, NETWORK, ADDED.  A new metric goes at the end of
 * ADDED (and at the end of both structs).
 */
#ifndef RESMON_METRIC_LIST_H
#define RESMON_METRIC_LIST_H

#define RM__METRICS_MEMORY(X)                                                                                     \
    X(RESMON_METRIC_MEMORY_DETAIL, vmem_mb, peak_vmem_mb, MAX, MIB, "vmem_mb", "resmon_virtual_memory_max_bytes", \
      "Largest sampled virtual memory size in the window so far.", "virtual memory (statm size)", STAT, LEVEL(VMEM_BYTES), BYTES_TO_MIB)              \
    X(RESMON_METRIC_MEMORY_DETAIL, pss_mb, peak_pss_mb, MAX, MIB, "pss_mb", "resmon_proportional_memory_max_bytes", \
      "Largest sampled proportional set size (PSS: shared pages split among their users) in the window so far.",  \
      "proportional set size (smaps_rollup)", SMAPS, LEVEL(PSS_KB), KIB_TO_MIB)                                                                     \
    X(RESMON_METRIC_MEMORY_DETAIL, swap_mb, peak_swap_mb, MAX, MIB, "swap_mb", "resmon_swap_memory_max_bytes",    \
      "Largest sampled swapped-out memory in the window so far.", "swapped out (smaps_rollup)", SMAPS, LEVEL(SWAP_KB), KIB_TO_MIB)

#define RM__METRICS_IO(X)                                                                                          \
    X(RESMON_METRIC_IO, io_rchar, io_rchar, LAST, BYTES, "rchar", "resmon_io_read_bytes",                          \
      "Bytes read through read-like system calls, page cache hits included (rchar).",                             \
      "bytes read through read-like calls", IO, COUNTER(IO_RCHAR), ONE)                                                                        \
    X(RESMON_METRIC_IO, io_wchar, io_wchar, LAST, BYTES, "wchar", "resmon_io_write_bytes",                         \
      "Bytes written through write-like system calls, page cache included (wchar).",                              \
      "bytes written through write-like calls", IO, COUNTER(IO_WCHAR), ONE)                                                                    \
    X(RESMON_METRIC_IO, io_read_bytes, io_read_bytes, LAST, BYTES, "read_bytes", "resmon_io_storage_read_bytes",   \
      "Bytes fetched from the storage layer (read_bytes).", "bytes fetched from storage", IO, COUNTER(IO_READ_BYTES), ONE)                         \
    X(RESMON_METRIC_IO, io_write_bytes, io_write_bytes, LAST, BYTES, "write_bytes", "resmon_io_storage_write_bytes", \
      "Bytes sent to the storage layer (write_bytes).", "bytes sent to storage", IO, COUNTER(IO_WRITE_BYTES), ONE)                                  \
    X(RESMON_METRIC_IO, io_syscr, io_syscr, LAST, COUNT, "syscr", "resmon_io_read_syscalls",                       \
      "Read-like system calls (syscr).", "read-like calls", IO, COUNTER(IO_SYSCR), ONE)                                                        \
    X(RESMON_METRIC_IO, io_syscw, io_syscw, LAST, COUNT, "syscw", "resmon_io_write_syscalls",                      \
      "Write-like system calls (syscw).", "write-like calls", IO, COUNTER(IO_SYSCW), ONE)

#define RM__METRICS_COUNTS(X)                                                                                      \
    X(RESMON_METRIC_COUNTS, nprocs, peak_nprocs, MAX, COUNT, "nprocs", "resmon_processes_max",                     \
      "Largest sampled number of monitored processes in the window so far.", "processes", STAT, LEVEL(PROCESSES), ONE)                        \
    X(RESMON_METRIC_COUNTS, nthreads, peak_nthreads, MAX, COUNT, "nthreads", "resmon_threads_max",                 \
      "Largest sampled number of threads of the monitored processes in the window so far.", "threads", STAT, LEVEL(THREADS), ONE)

#define RM__METRICS_CPU_SPLIT(X)                                                                                   \
    X(RESMON_METRIC_CPU_SPLIT, cpu_user_sec, cpu_user_sec, LAST, SECONDS, "user_sec", "resmon_cpu_user_seconds",   \
      "CPU time in user mode in the window.", "user-mode CPU (clock ticks)", STAT, COUNTER(USER_TICKS), TICKS)                                      \
    X(RESMON_METRIC_CPU_SPLIT, cpu_sys_sec, cpu_sys_sec, LAST, SECONDS, "sys_sec", "resmon_cpu_system_seconds",    \
      "CPU time in kernel mode in the window.", "kernel-mode CPU (clock ticks)", STAT, COUNTER(SYSTEM_TICKS), TICKS)

#define RM__METRICS_FAULTS(X)                                                                                      \
    X(RESMON_METRIC_FAULTS, minor_faults, minor_faults, LAST, COUNT, "minflt", "resmon_minor_page_faults",         \
      "Page faults served without I/O.", "minor page faults", STAT, COUNTER(MINOR_FAULTS), ONE)                                                     \
    X(RESMON_METRIC_FAULTS, major_faults, major_faults, LAST, COUNT, "majflt", "resmon_major_page_faults",         \
      "Page faults that needed I/O.", "major page faults (read from storage)", STAT, COUNTER(MAJOR_FAULTS), ONE)                                    \
    X(RESMON_METRIC_FAULTS, voluntary_switches, voluntary_switches, LAST, COUNT, "vol_ctxsw",                      \
      "resmon_voluntary_context_switches", "Context switches because a thread waited.",                           \
      "context switches while waiting", SWITCHES, COUNTER(VOLUNTARY_SWITCHES), ONE)                                                                            \
    X(RESMON_METRIC_FAULTS, involuntary_switches, involuntary_switches, LAST, COUNT, "invol_ctxsw",                \
      "resmon_involuntary_context_switches", "Context switches because a thread was preempted.",                  \
      "context switches by preemption", SWITCHES, COUNTER(INVOLUNTARY_SWITCHES), ONE)

#define RM__NETWORK_HELP(what, verb)                                                                               \
    what " " verb " by every interface of the monitored process's network namespace, not by the process alone."
#define RM__METRICS_NETWORK(X)                                                                                     \
    X(RESMON_METRIC_NETWORK, net_rx_bytes, net_rx_bytes, LAST, BYTES, "rx_bytes", "resmon_network_receive_bytes",  \
      RM__NETWORK_HELP("Bytes", "received"), "bytes received (the whole network namespace)", NET, READING(NET_RX_BYTES), ONE)                      \
    X(RESMON_METRIC_NETWORK, net_tx_bytes, net_tx_bytes, LAST, BYTES, "tx_bytes", "resmon_network_transmit_bytes", \
      RM__NETWORK_HELP("Bytes", "sent"), "bytes sent (the whole network namespace)", NET, READING(NET_TX_BYTES), ONE)                              \
    X(RESMON_METRIC_NETWORK, net_rx_packets, net_rx_packets, LAST, COUNT, "rx_packets",                            \
      "resmon_network_receive_packets", RM__NETWORK_HELP("Packets", "received"),                                  \
      "packets received (the whole network namespace)", NET, READING(NET_RX_PACKETS), ONE)                                                            \
    X(RESMON_METRIC_NETWORK, net_tx_packets, net_tx_packets, LAST, COUNT, "tx_packets",                            \
      "resmon_network_transmit_packets", RM__NETWORK_HELP("Packets", "sent"),                                     \
      "packets sent (the whole network namespace)", NET, READING(NET_TX_PACKETS), ONE)

#define RM__METRICS_UNREADABLE(X)                                                                                  \
    X(0, unreadable_procs, peak_unreadable_procs, MAX, COUNT, "unreadable_procs", "resmon_unreadable_processes_max", \
      "Largest sampled number of monitored processes whose metric-group files could not be read (their share is " \
      "missing from the sums).",                                                                                   \
      "processes not readable in full", ANY, READING(UNREADABLE), ONE)

/* Since 0.4, after the fields above in both structs, in the order added. */
#define RM__METRICS_ADDED(X)                                                                                       \
    X(RESMON_METRIC_MEMORY_DETAIL, uss_mb, peak_uss_mb, MAX, MIB, "uss_mb", "resmon_unique_memory_max_bytes",     \
      "Largest sampled unique set size (USS: private pages, freed when the process exits) in the window so far.", \
      "unique set size (smaps_rollup private pages)", SMAPS, LEVEL(USS_KB), KIB_TO_MIB)                         \
    X(RESMON_METRIC_COUNTS, open_fds, peak_open_fds, MAX, COUNT, "open_fds", "resmon_open_fds_max",               \
      "Largest sampled number of open file descriptors of the monitored processes in the window so far.",       \
      "open file descriptors (fd directory)", FDS, LEVEL(OPEN_FDS), ONE)

/* The metric groups (resmon_options.metrics), in bit order: the one list
 * their names are spelled in (resmon_metric_group_info, and through it the
 * command's --metrics and --help, the Python binding's METRIC_GROUPS, the
 * cost benchmark).  Each entry is
 *   X(BIT, NAME, COMMAND_NAME, WORDS, FILES)
 *   BIT          its RESMON_METRIC_* bit (RESMON_METRIC_ALL is every bit up
 *                to the last one's)
 *   NAME         the Python binding's name (metrics="memory_detail")
 *   COMMAND_NAME the command's --metrics word (it takes NAME too, and NAME
 *                with '-' for '_')
 *   WORDS        what it measures, for a person
 *   FILES        what it reads per process */
#define RM__METRIC_GROUP_LIST(X)                                                                                   \
    X(RESMON_METRIC_IO, "io", "io", "bytes and calls read and written", "io")                                      \
    X(RESMON_METRIC_MEMORY_DETAIL, "memory_detail", "memory", "vmem, PSS, USS, swap", "stat, smaps_rollup")       \
    X(RESMON_METRIC_COUNTS, "counts", "counts", "processes, threads, open descriptors", "stat, fd/")               \
    X(RESMON_METRIC_CPU_SPLIT, "cpu_split", "cpu-split", "user and system seconds", "stat")                        \
    X(RESMON_METRIC_FAULTS, "faults", "faults", "page faults, context switches", "stat, every thread's status")   \
    X(RESMON_METRIC_NETWORK, "network", "network", "the namespace's bytes and packets", "net/dev, once per sample")

/* Every metric, in resmon_summary's order. */
#define RM__METRIC_LIST(X)                                                                                         \
    RM__METRICS_MEMORY(X) RM__METRICS_IO(X) RM__METRICS_COUNTS(X) RM__METRICS_CPU_SPLIT(X) RM__METRICS_FAULTS(X)   \
    RM__METRICS_NETWORK(X) RM__METRICS_UNREADABLE(X) RM__METRICS_ADDED(X)

/* The number of metrics, as a constant expression (for arrays and asserts). */
#define RM__METRIC_ONE(...) +1
#define RM__METRIC_COUNT (0 RM__METRIC_LIST(RM__METRIC_ONE))

#endif
