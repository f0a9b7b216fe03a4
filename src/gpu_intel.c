/*
 * gpu_intel.c -- Intel GPUs through i915 and xe sysfs and hwmon files.
 *
 * Clocks: i915 cardN/gt_act_freq_mhz (actual; often 0 on Arc, then
 * gt_cur_freq_mhz, the requested one); xe device/tile0/gt0/freq0/act_freq,
 * else cur_freq.  Energy: hwmon energy1_input in uJ, a 64-bit counter; power
 * is its change over time between two readings.  Intel exposes no busy
 * percentage or VRAM use in sysfs (exact figures need the perf PMU): those
 * are unavailable here.
 */
#include "gpu_backend.h"
#include "internal.h"
#include "sysfs.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define INTEL_VENDOR_ID 0x8086
#define MAX_CARDS 16

static const char *const intel_drivers[] = {"i915", "xe", NULL};
static const rm__drm_vendor intel_vendor = {INTEL_VENDOR_ID, intel_drivers, "Intel", "intel"};

typedef struct intel_device {
    int card;
    char hwmon[128];
    double last_energy_j, last_energy_time; /* for power from energy */
    double last_power_w;
} intel_device;

static int intel_list(resmon_gpu_info *out, size_t cap, size_t *count)
{
    int cards[MAX_CARDS];
    size_t n = rm__drm_find_cards(INTEL_VENDOR_ID, intel_drivers, cards, MAX_CARDS);
    for (size_t i = 0; i < n && i < cap && i < MAX_CARDS; i++)
        rm__drm_describe(cards[i], (unsigned)i, "intel", &out[i]);
    *count = n;
    return 0;
}

static int intel_open(const char *selector, void **ctx, resmon_gpu_info *info, char *err, size_t errcap)
{
    intel_device *d = calloc(1, sizeof *d);
    if (!d)
        return -ENOMEM;
    unsigned index;
    int rc = rm__drm_select(&intel_vendor, selector, &d->card, &index, d->hwmon, sizeof d->hwmon, err, errcap);
    if (rc < 0) {
        free(d);
        return rc;
    }
    d->last_energy_time = -1;
    d->last_power_w = NAN;
    rm__drm_describe(d->card, index, "intel", info);
    *ctx = d;
    return 0;
}

static void intel_close(void *ctx)
{
    free(ctx);
}

static int read_mhz(const intel_device *d, const char *file, double *mhz)
{
    char rel[160];
    uint64_t value;
    snprintf(rel, sizeof rel, "class/drm/card%d/%s", d->card, file);
    int rc = rm__sysfs_read_u64(rel, &value);
    if (rc == 0)
        *mhz = (double)value;
    return rc;
}

static int intel_clocks(void *ctx, resmon_gpu_clocks *out)
{
    const intel_device *d = ctx;
    double mhz = 0;
    /* Actual frequency first; 0 (Arc) or missing means use the requested one. */
    if ((read_mhz(d, "gt_act_freq_mhz", &mhz) == 0 && mhz > 0) ||
        read_mhz(d, "gt_cur_freq_mhz", &mhz) == 0 ||
        (read_mhz(d, "device/tile0/gt0/freq0/act_freq", &mhz) == 0 && mhz > 0) ||
        read_mhz(d, "device/tile0/gt0/freq0/cur_freq", &mhz) == 0) {
        out->gpu_clock_mhz = mhz;
        out->mem_clock_mhz = NAN;
        return 0;
    }
    return -ENOTSUP;
}

static int intel_energy(void *ctx, double *joules)
{
    const intel_device *d = ctx;
    if (!d->hwmon[0])
        return -ENOTSUP;
    char rel[192];
    uint64_t microjoules;
    snprintf(rel, sizeof rel, "%s/energy1_input", d->hwmon);
    int rc = rm__sysfs_read_u64(rel, &microjoules);
    if (rc < 0)
        return rc == -ENOENT ? -ENOTSUP : rc;
    *joules = (double)microjoules / 1e6;
    return 0;
}

/* Power as the energy counter's change since the previous call: the first
 * call has no interval, so it has no value yet. */
static int intel_power(void *ctx, resmon_gpu_power *out)
{
    intel_device *d = ctx;
    double joules;
    int rc = intel_energy(ctx, &joules);
    if (rc < 0)
        return rc;
    double now = rm__now_sec();
    if (d->last_energy_time >= 0 && now > d->last_energy_time && joules >= d->last_energy_j)
        d->last_power_w = (joules - d->last_energy_j) / (now - d->last_energy_time);
    d->last_energy_j = joules;
    d->last_energy_time = now;
    if (isnan(d->last_power_w))
        return -EAGAIN;
    out->power_draw_w = d->last_power_w;
    out->power_limit_w = NAN;
    return 0;
}

const rm__gpu_backend rm__gpu_intel = {
    .name = "intel",
    .list = intel_list,
    .open = intel_open,
    .close = intel_close,
    .clocks = intel_clocks,
    .power = intel_power,
    .energy = intel_energy,
};
