/*
 * gpu_reading.h -- one GPU reading: every metric of a device (or of several
 * combined) taken at one moment, and how devices combine.  The bottom of the
 * GPU stack (see gpu.h): it depends on resmon.h alone.
 *
 * Inside resmon a GPU is read whole: a backend fills one
 * rm__gpu_device_reading per device per poll (nvtop's refresh_dynamic_info
 * model), gpu.c combines the devices of a profiler into one, the GPU thread
 * keeps the latest one and each sample takes its fields from it.  A caller's
 * own profiler answers metric by metric; rm__gpu_read (gpu_profiler.h) asks
 * it and fills the same struct.
 *
 * Adding a GPU metric: a field here (and in resmon_gpu_reading when it is a
 * per-device gauge), how devices combine in gpu_reading.c, the backends that
 * know it, and the sample/summary field it feeds.
 */
#ifndef RESMON_GPU_READING_H
#define RESMON_GPU_READING_H

#include "resmon.h"

/* Every metric is a double, NAN when unknown.  A NAN means one of two
 * things, which combine differently: the device has no such metric (Intel
 * has no busy percentage; a MIG instance no utilization), or it has one and
 * could not give it this time (an AMD GPU asleep in runtime suspend, an NVML
 * call that failed, the first power reading derived from an energy counter).
 * Backends say the second with rm__gpu_reading_unavailable. */
typedef struct rm__gpu_device_reading {
    resmon_gpu_reading gauges; /* instantaneous values, as resmon_gpu_last_readings reports them */
    double energy_j;           /* a cumulative energy counter (any origin) */
    double proc_mem_mb;        /* GPU memory of the monitored processes; read only when pids are given */
    unsigned unavailable;      /* one bit per metric the device has but could not read now */
} rm__gpu_device_reading;

/* Marks every field unknown (and none unavailable). */
void rm__gpu_reading_clear(rm__gpu_device_reading *r);

/* Says that the device has the metric at field (a field of r) but could not
 * read it this time; the field stays NAN. */
void rm__gpu_reading_unavailable(rm__gpu_device_reading *r, const double *field);

/* Marks every metric unavailable (a device that is lost or not answering). */
void rm__gpu_reading_all_unavailable(rm__gpu_device_reading *r);

/* Combining the readings of several devices into one: memory, power, energy
 * and process memory summed, utilization and clocks averaged over the devices
 * that have them.  A device that has a metric but could not read it this time
 * makes the combined value NAN (an average or a sum that silently leaves out
 * a device that dropped out would overstate or understate); its own reading
 * shows it apart (resmon_gpu_last_readings).  Energy is known only when every
 * device has a counter; a total or limit only when every device that
 * reported usage or power also reported it. */
typedef struct rm__gpu_reading_sum {
    size_t devices;
    unsigned unavailable;           /* the devices' unavailable bits, together */
    rm__gpu_device_reading total;  /* running sums, field by field */
    rm__gpu_device_reading known;  /* how many devices knew each field */
    rm__gpu_device_reading missing; /* nonzero: a device lacked a field it had to have */
} rm__gpu_reading_sum;

void rm__gpu_reading_sum_init(rm__gpu_reading_sum *sum);
void rm__gpu_reading_sum_add(rm__gpu_reading_sum *sum, const rm__gpu_device_reading *r);
void rm__gpu_reading_sum_result(const rm__gpu_reading_sum *sum, rm__gpu_device_reading *out);

/* Fills the GPU fields of s and *energy_j from a reading.  A value that is
 * NaN, infinite or negative leaves its field NAN. */
void rm__gpu_reading_to_sample(const rm__gpu_device_reading *r, resmon_sample *s, double *energy_j);

/* Marks every GPU field of s unknown (NAN). */
void rm__gpu_clear_sample(resmon_sample *s);

#endif
