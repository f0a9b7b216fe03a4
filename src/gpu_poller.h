/*
 * gpu_poller.h -- reading the GPU on its own thread, off the sampling path.
 *
 * GPU calls can be slow (NVML's process queries take milliseconds; a call
 * has been seen to hang for hours), so a monitor with a GPU profiler reads it
 * on a second thread, "resmon-gpu", on its own schedule.  Each CPU/RSS sample
 * takes the freshest GPU reading; a reading older than 1.5 GPU intervals
 * (the GPU is late or hung) is not attached, and those fields are NAN.  CPU
 * and RSS sampling never waits for the GPU.
 */
#ifndef RESMON_GPU_POLLER_H
#define RESMON_GPU_POLLER_H

#include "resmon.h"

#include <stdint.h>

typedef struct rm__gpu_poller rm__gpu_poller;

/* Starts the GPU thread; its first reading, for the processes pids, begins
 * at once. */
int rm__gpu_poller_start(rm__gpu_poller **out, const resmon_gpu_profiler *gpu, uint64_t interval_ns,
                         const pid_t *pids, size_t pid_count);

/* Waits up to timeout_ns for the first reading (so a window's first sample
 * has GPU values when the GPU answers promptly). */
void rm__gpu_poller_wait_first(rm__gpu_poller *p, uint64_t timeout_ns);

/* The processes whose GPU memory to read (copied). */
void rm__gpu_poller_set_pids(rm__gpu_poller *p, const pid_t *pids, size_t count);

/* Fills s's GPU fields and *energy_j from the freshest reading at now_ns, or
 * NAN when there is none or it is stale. */
void rm__gpu_poller_latest(rm__gpu_poller *p, uint64_t now_ns, resmon_sample *s, double *energy_j);

/* Asks for a last reading and waits up to timeout_ns for it and for the
 * thread to end.  A thread stuck in a GPU call is left to finish on its own
 * (it frees its state when it returns); the latest reading stays readable. */
void rm__gpu_poller_finish(rm__gpu_poller *p, uint64_t timeout_ns);

/* Drops the monitor's hold on the poller (after finish). */
void rm__gpu_poller_release(rm__gpu_poller *p);

#endif
