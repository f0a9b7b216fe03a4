/*
 * process_list.h -- the per-process records of a window (resmon.h,
 * "Processes"), in bounded memory: every process is counted, and a record
 * is kept while it is among the RESMON_PROCESS_TOP largest by peak RSS or
 * by CPU.  Filled by the probe (probe_processes.c) on the thread that owns
 * the probe (the sampler, or monitor.c's walker for a walk it was handed),
 * read once the window has closed: it has no lock of its own.
 */
#ifndef RESMON_PROCESS_LIST_H
#define RESMON_PROCESS_LIST_H

#include "resmon.h"

#include <stddef.h>
#include <stdint.h>

/* A kept record and its order of arrival: a process kept by both rankings
 * is one record, found twice. */
typedef struct rm__process_entry {
    uint64_t serial;
    resmon_process record;
} rm__process_entry;

/* Each ranking is a min-heap of its RESMON_PROCESS_TOP largest: the
 * smallest kept is at [0], the one a larger newcomer replaces. */
typedef struct rm__process_ranking {
    rm__process_entry heap[RESMON_PROCESS_TOP];
    size_t count;
} rm__process_ranking;

typedef struct rm__process_list {
    rm__process_ranking by_peak, by_cpu;
    uint64_t seen; /* every record added, kept or not */
} rm__process_list;

void rm__process_list_reset(rm__process_list *l);

/* One process's record, when it ended or at the window's end: O(log N). */
void rm__process_list_add(rm__process_list *l, const resmon_process *r);

/* The kept records, each once, by peak RSS largest first (then CPU, then
 * arrival): min(n, cap) of them into out, stride bytes apart, each one's
 * first stride bytes (stride >= sizeof(resmon_process) as of 0.4, checked
 * by the caller).  Returns n. */
size_t rm__process_list_copy(const rm__process_list *l, resmon_process *out, size_t cap, size_t stride);

#endif
