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
typedef struct rm__gpu_gate rm__gpu_gate;
void rm__gpu_read_sample(const resmon_gpu_profiler *gpu, const pid_t *pids, size_t pid_count, resmon_sample *s,
                         double *energy_j, rm__gpu_gate *gate);

/* Asked before and after every profiler callback (NULL: always allowed).
 * enter returns 0 to skip this and every later callback of the reading: the
 * monitor is being freed and must not be called back (see resmon.h,
 * "Lifetime"). */
struct rm__gpu_gate {
    int (*enter)(rm__gpu_gate *gate);
    void (*leave)(rm__gpu_gate *gate);
};

/* Marks every GPU field of s unknown (NAN). */
void rm__gpu_clear_sample(resmon_sample *s);

#endif
