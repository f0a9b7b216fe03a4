/*
 * gpu_reading.c -- one GPU reading: its fields, how devices combine, and
 * filling a sample from it (see gpu_reading.h).  A leaf: it calls nothing
 * else of resmon's.
 */
#include "gpu_reading.h"

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
