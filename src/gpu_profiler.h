/*
 * gpu_profiler.h -- reading a resmon_gpu_profiler whole: the one call the
 * monitor's GPU thread makes per poll.
 *
 * A caller's profiler answers metric by metric, through its callbacks; one
 * of resmon's own (gpu.h) is read device by device in one pass.  Either way
 * the result is one rm__gpu_device_reading, so everything after this point
 * has one shape.
 */
#ifndef RESMON_GPU_PROFILER_H
#define RESMON_GPU_PROFILER_H

#include "gpu_reading.h"
#include "resmon.h"

/* Asked before and after every profiler call (NULL: always allowed).  enter
 * returns 0 to skip this and every later call of the reading: the monitor is
 * being freed and must not call back (see resmon.h, "Lifetime"). */
typedef struct rm__gpu_gate rm__gpu_gate;
struct rm__gpu_gate {
    int (*enter)(rm__gpu_gate *gate);
    void (*leave)(rm__gpu_gate *gate);
};

/* Reads every metric of a profiler once into out.  own: the resmon_gpu
 * whose own table gpu is a copy of (rm__gpu_of_table of the caller's
 * pointer, resolved once when the monitor was made), read in one pass (one
 * call through the gate); NULL: gpu is read through its callbacks (each
 * through the gate).  pids are the monitored processes, for the
 * process GPU memory (none: that field stays NAN).  A NULL profiler, a NULL
 * or failing callback leaves its fields NAN. */
void rm__gpu_read(const resmon_gpu_profiler *gpu, resmon_gpu *own, const pid_t *pids, size_t pid_count,
                  rm__gpu_device_reading *out, rm__gpu_gate *gate);

#endif
