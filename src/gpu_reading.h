/*
 * gpu_reading.h -- asking a GPU profiler for one sample's GPU fields.
 */
#ifndef RESMON_GPU_READING_H
#define RESMON_GPU_READING_H

#include "resmon.h"

/* Fills the GPU fields of s from the profiler (NULL: all NAN), and *energy_j
 * from its energy counter (NAN without one).  pids are the monitored
 * processes, for the process GPU memory.  A NULL callback, a failing one, or
 * a value that is NaN, infinite or negative leaves that field NAN; nothing
 * else is affected. */
void rm__gpu_read_sample(const resmon_gpu_profiler *gpu, const pid_t *pids, size_t pid_count, resmon_sample *s,
                         double *energy_j);

/* Marks every GPU field of s unknown (NAN). */
void rm__gpu_clear_sample(resmon_sample *s);

#endif
