/*
 * gpu_reading.c -- one GPU reading: combining devices, filling a sample, and
 * the adapter between it and the per-metric resmon_gpu_profiler callbacks
 * (see gpu_reading.h).
 */
#include "gpu_reading.h"
#include "gpu_backend.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>

/* ---- the fields and how devices combine ---------------------------------- */

enum combine {
    MEAN,       /* average over the devices that know it */
    SUM,        /* sum over the devices that know it */
    SUM_BESIDE, /* sum over the devices that know `beside`; unknown if one of them lacks it */
    SUM_OF_ALL, /* sum over every device; unknown if any lacks it */
};

#define FIELD(name) offsetof(rm__gpu_device_reading, name)

static const struct rule {
    size_t field, beside;
    enum combine how;
} rules[] = {
    {FIELD(gauges.util_percent), 0, MEAN},
    {FIELD(gauges.mem_used_mb), 0, SUM},
    {FIELD(gauges.mem_total_mb), FIELD(gauges.mem_used_mb), SUM_BESIDE},
    {FIELD(gauges.clock_mhz), 0, MEAN},
    {FIELD(gauges.mem_clock_mhz), 0, MEAN},
    {FIELD(gauges.power_w), 0, SUM},
    {FIELD(gauges.power_limit_w), FIELD(gauges.power_w), SUM_BESIDE},
    {FIELD(energy_j), 0, SUM_OF_ALL},
    {FIELD(proc_mem_mb), 0, SUM},
};
#define RULE_COUNT (sizeof rules / sizeof *rules)

/* Every field but the public gauges' struct_size (which is not a metric) and
 * the unavailable bits (one per rule). */
_Static_assert(RULE_COUNT * sizeof(double) + sizeof(size_t) == offsetof(rm__gpu_device_reading, unavailable),
               "every field of a GPU reading needs a rule saying how devices combine");
_Static_assert(RULE_COUNT <= sizeof(unsigned) * 8, "one unavailable bit per rule");

static double *field_of(rm__gpu_device_reading *r, size_t offset)
{
    return (double *)((char *)r + offset);
}

static double value_of(const rm__gpu_device_reading *r, size_t offset)
{
    return *(const double *)((const char *)r + offset);
}

void rm__gpu_reading_clear(rm__gpu_device_reading *r)
{
    r->gauges.struct_size = sizeof r->gauges;
    for (size_t i = 0; i < RULE_COUNT; i++)
        *field_of(r, rules[i].field) = NAN;
    r->unavailable = 0;
}

void rm__gpu_reading_unavailable(rm__gpu_device_reading *r, const double *field)
{
    size_t offset = (size_t)((const char *)field - (const char *)r);
    for (size_t i = 0; i < RULE_COUNT; i++)
        if (rules[i].field == offset) {
            *field_of(r, offset) = NAN;
            r->unavailable |= 1u << i;
        }
}

void rm__gpu_reading_all_unavailable(rm__gpu_device_reading *r)
{
    for (size_t i = 0; i < RULE_COUNT; i++)
        rm__gpu_reading_unavailable(r, field_of(r, rules[i].field));
}

void rm__gpu_reading_sum_init(rm__gpu_reading_sum *sum)
{
    *sum = (rm__gpu_reading_sum){0};
}

void rm__gpu_reading_sum_add(rm__gpu_reading_sum *sum, const rm__gpu_device_reading *r)
{
    sum->devices++;
    sum->unavailable |= r->unavailable;
    for (size_t i = 0; i < RULE_COUNT; i++) {
        const struct rule *rule = &rules[i];
        double value = value_of(r, rule->field);
        if (rule->how == SUM_BESIDE && isnan(value_of(r, rule->beside)))
            continue; /* this device is not part of that sum */
        if (isnan(value)) {
            *field_of(&sum->missing, rule->field) += 1;
            continue;
        }
        *field_of(&sum->total, rule->field) += value;
        *field_of(&sum->known, rule->field) += 1;
    }
}

void rm__gpu_reading_sum_result(const rm__gpu_reading_sum *sum, rm__gpu_device_reading *out)
{
    for (size_t i = 0; i < RULE_COUNT; i++) {
        const struct rule *rule = &rules[i];
        double total = value_of(&sum->total, rule->field);
        double known = value_of(&sum->known, rule->field);
        double missing = value_of(&sum->missing, rule->field);
        double result = NAN;
        if (known > 0 && !(sum->unavailable & (1u << i))) {
            switch (rule->how) {
            case MEAN: result = total / known; break;
            case SUM: result = total; break;
            case SUM_BESIDE:
            case SUM_OF_ALL: result = missing > 0 ? NAN : total; break;
            }
        }
        *field_of(out, rule->field) = result;
    }
}

/* ---- a caller's profiler, metric by metric -------------------------------- */

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

/* ---- resmon's own profilers, as per-metric callbacks ---------------------- */

/* Reads every device once and answers one metric: *value from field, and
 * *beside (when not NULL) from the field reported with it; -ENOTSUP when no
 * device knows the metric. */
static int answer(void *ctx, const pid_t *pids, size_t pid_count, size_t field, double *value, size_t beside_field,
                  double *beside)
{
    rm__gpu_device_reading r;
    rm__gpu_read_devices(ctx, pids, pid_count, &r);
    if (isnan(value_of(&r, field)))
        return -ENOTSUP;
    *value = value_of(&r, field);
    if (beside)
        *beside = value_of(&r, beside_field);
    return 0;
}

static int own_utilization(void *ctx, double *percent)
{
    return answer(ctx, NULL, 0, FIELD(gauges.util_percent), percent, 0, NULL);
}

static int own_memory(void *ctx, resmon_gpu_memory *out)
{
    return answer(ctx, NULL, 0, FIELD(gauges.mem_used_mb), &out->gpu_memory_used_mb, FIELD(gauges.mem_total_mb),
                  &out->gpu_memory_total_mb);
}

static int own_clocks(void *ctx, resmon_gpu_clocks *out)
{
    return answer(ctx, NULL, 0, FIELD(gauges.clock_mhz), &out->gpu_clock_mhz, FIELD(gauges.mem_clock_mhz),
                  &out->mem_clock_mhz);
}

static int own_power(void *ctx, resmon_gpu_power *out)
{
    return answer(ctx, NULL, 0, FIELD(gauges.power_w), &out->power_draw_w, FIELD(gauges.power_limit_w),
                  &out->power_limit_w);
}

static int own_energy(void *ctx, double *joules)
{
    return answer(ctx, NULL, 0, FIELD(energy_j), joules, 0, NULL);
}

static int own_process_memory(void *ctx, const pid_t *pids, size_t count, double *mb)
{
    return answer(ctx, pids, count, FIELD(proc_mem_mb), mb, 0, NULL);
}

resmon_gpu_profiler rm__gpu_profiler_for(resmon_gpu *g)
{
    return (resmon_gpu_profiler){
        .struct_size = sizeof(resmon_gpu_profiler),
        .ctx = g,
        .get_utilization = own_utilization,
        .get_memory_usage = own_memory,
        .get_clock_info = own_clocks,
        .get_power_info = own_power,
        .get_energy = own_energy,
        .get_process_memory = own_process_memory,
    };
}

/* A table whose every callback is resmon's own (as resmon_gpu_profiler_of
 * gives it, or a copy of it): its ctx is a resmon_gpu, read in one pass. */
static int is_own_profiler(const resmon_gpu_profiler *gpu)
{
    return gpu->get_utilization == own_utilization && gpu->get_memory_usage == own_memory &&
           gpu->get_clock_info == own_clocks && gpu->get_power_info == own_power &&
           gpu->get_energy == own_energy && gpu->get_process_memory == own_process_memory;
}

void rm__gpu_read(const resmon_gpu_profiler *gpu, const pid_t *pids, size_t pid_count, rm__gpu_device_reading *out,
                  rm__gpu_gate *gate)
{
    rm__gpu_reading_clear(out);
    if (!gpu)
        return;
    if (is_own_profiler(gpu))
        GATED(gate, rm__gpu_read_devices(gpu->ctx, pids, pid_count, out));
    else
        read_callbacks(gpu, pids, pid_count, out, gate);
}

/* ---- into a sample ------------------------------------------------------- */

static double valid_or_nan(double value)
{
    return isfinite(value) && value >= 0.0 ? value : NAN;
}

void rm__gpu_clear_sample(resmon_sample *s)
{
    s->gpu_util = s->gpu_mem_mb = s->gpu_clock_mhz = s->gpu_power_w = s->gpu_proc_mem_mb = NAN;
}

void rm__gpu_reading_to_sample(const rm__gpu_device_reading *r, resmon_sample *s, double *energy_j)
{
    s->gpu_util = valid_or_nan(r->gauges.util_percent);
    s->gpu_mem_mb = valid_or_nan(r->gauges.mem_used_mb);
    s->gpu_clock_mhz = valid_or_nan(r->gauges.clock_mhz);
    s->gpu_power_w = valid_or_nan(r->gauges.power_w);
    s->gpu_proc_mem_mb = valid_or_nan(r->proc_mem_mb);
    *energy_j = valid_or_nan(r->energy_j);
}
