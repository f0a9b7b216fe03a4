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

static const char *const intel_drivers[] = {"i915", "xe", NULL};
static const rm__drm_vendor intel_vendor = {INTEL_VENDOR_ID, intel_drivers, "Intel", "intel"};

typedef struct intel_device {
    rm__sysfs fs;
    int card;
    char hwmon[160]; /* "" when the card has no hwmon */
    double last_energy_j, last_energy_time; /* for power from energy */
    double last_power_w;
} intel_device;

static void intel_list(const rm__gpu_env *env, resmon_gpu_info *out, size_t cap, size_t *count)
{
    int cards[RM__GPU_MAX_DEVICES];
    size_t n = rm__drm_find_cards(&env->sysfs, INTEL_VENDOR_ID, intel_drivers, cards);
    for (size_t i = 0; i < n && i < cap; i++)
        rm__drm_describe(&env->sysfs, cards[i], (unsigned)i, "intel", &out[i]);
    *count = n;
}

static int intel_open(const rm__gpu_env *env, const char *selector, void **ctx, resmon_gpu_info *info, char *err,
                      size_t errcap)
{
    intel_device *d = calloc(1, sizeof *d);
    if (!d)
        return -ENOMEM;
    d->fs = env->sysfs;
    unsigned index;
    int rc = rm__drm_select(&d->fs, &intel_vendor, selector, &d->card, &index, err, errcap);
    if (rc < 0) {
        free(d);
        return rc;
    }
    if (rm__drm_hwmon_dir(&d->fs, &intel_vendor, d->card, d->hwmon, sizeof d->hwmon) < 0)
        d->hwmon[0] = '\0';
    d->last_energy_time = -1;
    d->last_power_w = NAN;
    rm__drm_describe(&d->fs, d->card, index, "intel", info);
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
    int rc = rm__sysfs_read_u64(&d->fs, rel, &value);
    if (rc == 0)
        *mhz = (double)value;
    return rc;
}

static void read_clock(const intel_device *d, double *field)
{
    double mhz = 0;
    /* Actual frequency first; 0 (Arc) or missing means use the requested one. */
    if ((read_mhz(d, "gt_act_freq_mhz", &mhz) == 0 && mhz > 0) ||
        read_mhz(d, "gt_cur_freq_mhz", &mhz) == 0 ||
        (read_mhz(d, "device/tile0/gt0/freq0/act_freq", &mhz) == 0 && mhz > 0) ||
        read_mhz(d, "device/tile0/gt0/freq0/cur_freq", &mhz) == 0)
        *field = mhz;
}

static int read_energy(const intel_device *d, double *joules)
{
    if (!d->hwmon[0])
        return -ENOTSUP;
    char rel[192];
    uint64_t microjoules;
    snprintf(rel, sizeof rel, "%s/energy1_input", d->hwmon);
    int rc = rm__sysfs_read_u64(&d->fs, rel, &microjoules);
    if (rc == 0)
        *joules = (double)microjoules / 1e6;
    return rc;
}

/* Power as the energy counter's change since the previous reading: the
 * first reading has no interval, so it has no power yet. */
static void power_from_energy(intel_device *d, double joules, double *field)
{
    double now = rm__now_sec();
    if (d->last_energy_time >= 0 && now > d->last_energy_time && joules >= d->last_energy_j)
        d->last_power_w = (joules - d->last_energy_j) / (now - d->last_energy_time);
    d->last_energy_j = joules;
    d->last_energy_time = now;
    *field = d->last_power_w;
}

static void intel_read(void *ctx, const pid_t *pids, size_t pid_count, rm__gpu_device_reading *out)
{
    (void)pids, (void)pid_count; /* no per-process memory in sysfs */
    intel_device *d = ctx;
    read_clock(d, &out->gauges.clock_mhz);
    double joules;
    if (read_energy(d, &joules) == 0) {
        out->energy_j = joules;
        power_from_energy(d, joules, &out->gauges.power_w);
    }
}

const rm__gpu_backend rm__gpu_intel = {
    .name = "intel",
    .list = intel_list,
    .open = intel_open,
    .close = intel_close,
    .read = intel_read,
};
