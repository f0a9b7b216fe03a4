/*
 * gpu_reading.c -- one sample's GPU fields from a resmon_gpu_profiler.
 */
#include "gpu_reading.h"

#include <errno.h>
#include <math.h>

static double valid_or_nan(int rc, double value)
{
    return rc == 0 && isfinite(value) && value >= 0.0 ? value : NAN;
}

void rm__gpu_clear_sample(resmon_sample *s)
{
    s->gpu_util = s->gpu_mem_mb = s->gpu_clock_mhz = s->gpu_power_w = s->gpu_proc_mem_mb = NAN;
}

/* Runs one callback through the gate; leaves the reading when it is shut. */
#define GATED_CALL(gate, call)                      \
    do {                                            \
        if ((gate) && !(gate)->enter(gate))         \
            return;                                 \
        call;                                       \
        if (gate)                                   \
            (gate)->leave(gate);                    \
    } while (0)

void rm__gpu_read_sample(const resmon_gpu_profiler *gpu, const pid_t *pids, size_t pid_count, resmon_sample *s,
                         double *energy_j, rm__gpu_gate *gate)
{
    rm__gpu_clear_sample(s);
    *energy_j = NAN;
    if (!gpu)
        return;
    /* Each output starts as NAN so a callback that returns 0 without
     * writing its value cannot leak stack garbage into a sample. */
    if (gpu->get_utilization) {
        double percent = NAN;
        int rc = -ENOTSUP;
        GATED_CALL(gate, rc = gpu->get_utilization(gpu->ctx, &percent));
        s->gpu_util = valid_or_nan(rc, percent);
    }
    if (gpu->get_memory_usage) {
        resmon_gpu_memory mem = {NAN, NAN};
        int rc = -ENOTSUP;
        GATED_CALL(gate, rc = gpu->get_memory_usage(gpu->ctx, &mem));
        s->gpu_mem_mb = valid_or_nan(rc, mem.gpu_memory_used_mb);
    }
    if (gpu->get_clock_info) {
        resmon_gpu_clocks clocks = {NAN, NAN};
        int rc = -ENOTSUP;
        GATED_CALL(gate, rc = gpu->get_clock_info(gpu->ctx, &clocks));
        s->gpu_clock_mhz = valid_or_nan(rc, clocks.gpu_clock_mhz);
    }
    if (gpu->get_power_info) {
        resmon_gpu_power power = {NAN, NAN};
        int rc = -ENOTSUP;
        GATED_CALL(gate, rc = gpu->get_power_info(gpu->ctx, &power));
        s->gpu_power_w = valid_or_nan(rc, power.power_draw_w);
    }
    if (gpu->get_energy) {
        double joules = NAN;
        int rc = -ENOTSUP;
        GATED_CALL(gate, rc = gpu->get_energy(gpu->ctx, &joules));
        *energy_j = valid_or_nan(rc, joules);
    }
    if (gpu->get_process_memory && pid_count > 0) {
        double mb = NAN;
        int rc = -ENOTSUP;
        GATED_CALL(gate, rc = gpu->get_process_memory(gpu->ctx, pids, pid_count, &mb));
        s->gpu_proc_mem_mb = valid_or_nan(rc, mb);
    }
}
