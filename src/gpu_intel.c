/*
 * gpu_intel.c -- Intel GPUs through i915 and xe sysfs and hwmon files.
 *
 * Clocks: the actual frequency, i915 cardN/gt_act_freq_mhz or xe
 * device/tile0/gt0/freq0/act_freq.  0 there means the GT is idle (in RC6),
 * which is what the clock is: the requested frequency (gt_cur_freq_mhz,
 * cur_freq) is used only where no actual one exists, never in place of a 0,
 * which would inflate the mean clock of a mostly idle GPU.
 *
 * Energy: hwmon energyN_input in uJ, a 64-bit counter, from the hwmon named
 * after the driver ("i915", "xe"; i915 also registers per-tile "i915_gtN"
 * ones, which count part of it); energy1_input, or energy2_input (package)
 * where xe exposes only that (DG2, PVC).  Power is the counter's change
 * between two readings.  Intel exposes no busy percentage or VRAM use in
 * sysfs (exact figures need the perf PMU): those are unavailable here.
 *
 * Reading i915/xe hwmon files can wake a runtime-suspended discrete GPU, so
 * polling at 10 Hz may keep an idle laptop dGPU from suspending.  Not yet
 * measured on hardware; a longer gpu_interval_sec (--gpu-interval) polls it
 * less often.
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
    rm__drm_card drm;
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
    int rc = rm__drm_open_card(env, &intel_vendor, selector, &d->drm, err, errcap);
    if (rc < 0) {
        free(d);
        return rc;
    }
    d->last_energy_time = -1;
    d->last_power_w = NAN;
    rm__drm_describe(&d->drm.fs, d->drm.card, d->drm.index, "intel", info);
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
    snprintf(rel, sizeof rel, "class/drm/card%d/%s", d->drm.card, file);
    int rc = rm__sysfs_read_u64(&d->drm.fs, rel, &value);
    if (rc == 0)
        *mhz = (double)value;
    return rc;
}

static void read_clock(const intel_device *d, double *field)
{
    static const char *const files[] = {
        "gt_act_freq_mhz", "device/tile0/gt0/freq0/act_freq", /* actual: i915, xe */
        "gt_cur_freq_mhz", "device/tile0/gt0/freq0/cur_freq", /* requested: only without an actual one */
    };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        if (read_mhz(d, files[i], field) == 0)
            return;
}

static int read_energy(const intel_device *d, double *joules)
{
    if (!d->drm.hwmon[0])
        return -ENOTSUP;
    char rel[192];
    uint64_t microjoules;
    snprintf(rel, sizeof rel, "%s/energy1_input", d->drm.hwmon);
    int rc = rm__sysfs_read_u64(&d->drm.fs, rel, &microjoules);
    if (rc == -ENOENT) { /* xe on DG2 and PVC: the package counter only */
        snprintf(rel, sizeof rel, "%s/energy2_input", d->drm.hwmon);
        rc = rm__sysfs_read_u64(&d->drm.fs, rel, &microjoules);
    }
    if (rc == 0)
        *joules = (double)microjoules / 1e6;
    return rc;
}

/* Power as the energy counter's change over at least POWER_MIN_WINDOW_SEC:
 * the first reading has no interval, so its power is unavailable (not absent:
 * an aggregate must not sum the other GPUs' power without this one).  A
 * reading sooner than that after the baseline repeats the last power and
 * keeps the baseline (the first power is taken over whatever interval there
 * is, so that an aggregate has a figure from its second reading on): back-to-back readings (a profiler table read callback by
 * callback reads every device once per callback) would otherwise see the
 * counter unchanged over microseconds and report 0 W.  A counter that went
 * back (a wrap, a driver reload) restarts the baseline. */
#define POWER_MIN_WINDOW_SEC 0.01
static void power_from_energy(intel_device *d, double joules, double *field, rm__gpu_device_reading *r)
{
    double now = rm__now_sec();
    int have_baseline = d->last_energy_time >= 0 && joules >= d->last_energy_j;
    if (!have_baseline || isnan(d->last_power_w) || now - d->last_energy_time >= POWER_MIN_WINDOW_SEC) {
        if (have_baseline)
            d->last_power_w = (joules - d->last_energy_j) / (now - d->last_energy_time);
        d->last_energy_j = joules;
        d->last_energy_time = now;
    }
    *field = d->last_power_w;
    if (isnan(*field))
        rm__gpu_reading_unavailable(r, field);
}

static void intel_read(void *ctx, const pid_t *pids, size_t pid_count, rm__gpu_device_reading *out)
{
    (void)pids, (void)pid_count; /* no per-process memory in sysfs */
    intel_device *d = ctx;
    read_clock(d, &out->gauges.clock_mhz);
    double joules;
    if (read_energy(d, &joules) == 0) {
        out->energy_j = joules;
        power_from_energy(d, joules, &out->gauges.power_w, out);
    }
}

const rm__gpu_backend rm__gpu_intel = {
    .name = "intel",
    .list = intel_list,
    .open = intel_open,
    .close = intel_close,
    .read = intel_read,
};
