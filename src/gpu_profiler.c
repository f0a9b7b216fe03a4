/*
 * gpu_profiler.c -- reading a resmon_gpu_profiler whole (see
 * gpu_profiler.h): a caller's metric by metric, resmon's own in one pass.
 */
#include "gpu_profiler.h"
#include "gpu.h"

#include <math.h>
#include <stddef.h>

/* Each output starts as NAN so a callback that returns 0 without writing its
 * value cannot leak stack garbage into a reading. */
/* Runs one call through the gate; leaves the reading when the gate is shut. */
#define GATED(gate, call)                       \
    do {                                        \
        if ((gate) && !(gate)->enter(gate))     \
            return;                             \
        call;                                   \
        if (gate)                               \
            (gate)->leave(gate);                \
    } while (0)

static void read_callbacks(const resmon_gpu_profiler *gpu, const pid_t *pids, size_t pid_count,
                           rm__gpu_device_reading *out, rm__gpu_gate *gate)
{
    resmon_gpu_reading *g = &out->gauges;
    int rc;
    if (gpu->get_utilization) {
        double percent = NAN;
        GATED(gate, rc = gpu->get_utilization(gpu->ctx, &percent));
        if (rc == 0)
            g->util_percent = percent;
    }
    if (gpu->get_memory_usage) {
        resmon_gpu_memory mem = {NAN, NAN};
        GATED(gate, rc = gpu->get_memory_usage(gpu->ctx, &mem));
        if (rc == 0)
            g->mem_used_mb = mem.gpu_memory_used_mb, g->mem_total_mb = mem.gpu_memory_total_mb;
    }
    if (gpu->get_clock_info) {
        resmon_gpu_clocks clocks = {NAN, NAN};
        GATED(gate, rc = gpu->get_clock_info(gpu->ctx, &clocks));
        if (rc == 0)
            g->clock_mhz = clocks.gpu_clock_mhz, g->mem_clock_mhz = clocks.mem_clock_mhz;
    }
    if (gpu->get_power_info) {
        resmon_gpu_power power = {NAN, NAN};
        GATED(gate, rc = gpu->get_power_info(gpu->ctx, &power));
        if (rc == 0)
            g->power_w = power.power_draw_w, g->power_limit_w = power.power_limit_w;
    }
    if (gpu->get_energy) {
        double joules = NAN;
        GATED(gate, rc = gpu->get_energy(gpu->ctx, &joules));
        if (rc == 0)
            out->energy_j = joules;
    }
    if (gpu->get_process_memory && pid_count > 0) {
        double mb = NAN;
        GATED(gate, rc = gpu->get_process_memory(gpu->ctx, pids, pid_count, &mb));
        if (rc == 0)
            out->proc_mem_mb = mb;
    }
}

void rm__gpu_read(const resmon_gpu_profiler *gpu, resmon_gpu *own, const pid_t *pids, size_t pid_count,
                  rm__gpu_device_reading *out, rm__gpu_gate *gate)
{
    rm__gpu_reading_clear(out);
    if (!gpu)
        return;
    if (own)
        GATED(gate, rm__gpu_read_devices(own, pids, pid_count, out));
    else
        read_callbacks(gpu, pids, pid_count, out, gate);
}
