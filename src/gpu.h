/*
 * gpu.h -- one of resmon's own profilers (a resmon_gpu, from
 * resmon_gpu_open) as the rest of the library sees it: read whole, every
 * device in one pass.
 *
 * The layers, top down: the monitor's GPU thread (gpu_poller.c) asks once,
 * when the monitor is made, whether its table is a resmon_gpu's own
 * (rm__gpu_of_table), and reads it through gpu_profiler.h; a resmon_gpu
 * (gpu.c) reads its devices through the backends (gpu_backend.h:
 * gpu_nvml.c, gpu_amd.c, gpu_intel.c on gpu_drm.c); all of them fill and
 * combine rm__gpu_device_reading (gpu_reading.h), which depends on nothing
 * else.  No file calls a layer above its own.
 */
#ifndef RESMON_GPU_H
#define RESMON_GPU_H

#include "gpu_reading.h"
#include "resmon.h"

/* Reads every device of g once, each device's latest values kept for
 * resmon_gpu_last_readings, and combines them into out (see
 * rm__gpu_reading_sum). */
void rm__gpu_read_devices(resmon_gpu *g, const pid_t *pids, size_t pid_count, rm__gpu_device_reading *out);

/* The open resmon_gpu whose own table (resmon_gpu_profiler_of) is at the
 * address table, to be read whole; NULL for any other address -- a copy of
 * that table, a wrapper, a caller's own -- which is read through its
 * callbacks.  Compares addresses only (a registry of the open resmon_gpu
 * objects, under a mutex): the memory at table is never read, so any
 * pointer may be asked about.  The public table has no room for a type tag
 * (its size is ABI); the address is the tag.  Called once per monitor, by
 * resmon_monitor_new (through rm__gpu_poller_new), with the pointer the
 * caller put in resmon_options.gpu_profiler. */
resmon_gpu *rm__gpu_of_table(const resmon_gpu_profiler *table);

#endif
