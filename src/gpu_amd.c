/*
 * gpu_amd.c -- AMD GPUs through amdgpu's sysfs files; no library needed.
 *
 * Files, under class/drm/cardN/device/: gpu_busy_percent (%),
 * mem_info_vram_used/_total (bytes), pp_dpm_sclk/pp_dpm_mclk (one line per
 * level, "*" on the current one, "Mhz"), hwmon/hwmonM/power1_average or, since
 * 6.6 on many GPUs (Polaris among them), only power1_input (uW), power1_cap.
 * A file that is missing or refuses to be read (gpu_busy_percent answers
 * EPERM while the GPU is in runtime suspend, EOPNOTSUPP on some parts) makes
 * that one metric unavailable.  amdgpu has no energy counter in sysfs:
 * resmon integrates power.
 */
#include "gpu_backend.h"
#include "internal.h"
#include "sysfs.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AMD_VENDOR_ID 0x1002

static const char *const amd_drivers[] = {"amdgpu", NULL};
static const rm__drm_vendor amd_vendor = {AMD_VENDOR_ID, amd_drivers, "AMD", "amd"};

/* An open AMD GPU is its DRM card: amdgpu keeps no other state. */
typedef rm__drm_card amd_device;

static void amd_describe(const rm__sysfs *fs, int card, unsigned index, resmon_gpu_info *info)
{
    rm__drm_describe(fs, card, index, "amd", info);
    char rel[96];
    uint64_t bytes;
    snprintf(rel, sizeof rel, "class/drm/card%d/device/mem_info_vram_total", card);
    if (rm__sysfs_read_u64(fs, rel, &bytes) == 0)
        info->memory_total_mb = (double)bytes / RM__BYTES_PER_MIB;
}

static void amd_list(const rm__gpu_env *env, resmon_gpu_info *out, size_t cap, size_t *count)
{
    int cards[RM__GPU_MAX_DEVICES];
    size_t n = rm__drm_find_cards(&env->sysfs, AMD_VENDOR_ID, amd_drivers, cards);
    for (size_t i = 0; i < n && i < cap; i++)
        amd_describe(&env->sysfs, cards[i], (unsigned)i, &out[i]);
    *count = n;
}

static int amd_open(const rm__gpu_env *env, const char *selector, void **ctx, resmon_gpu_info *info, char *err,
                    size_t errcap)
{
    amd_device *d = calloc(1, sizeof *d);
    if (!d)
        return -ENOMEM;
    int rc = rm__drm_open_card(env, &amd_vendor, selector, d, err, errcap);
    if (rc < 0) {
        free(d);
        return rc;
    }
    amd_describe(&d->fs, d->card, d->index, info);
    *ctx = d;
    return 0;
}

static void amd_close(void *ctx)
{
    free(ctx);
}

/* A card file holding one number, scaled; the field stays NAN when the file
 * is missing or refuses to be read. */
static void read_card_value(const amd_device *d, const char *file, double scale, double *field)
{
    char rel[160];
    uint64_t value;
    snprintf(rel, sizeof rel, "class/drm/card%d/device/%s", d->card, file);
    if (rm__sysfs_read_u64(&d->fs, rel, &value) == 0)
        *field = (double)value / scale;
}

/* The current level of a pp_dpm_* table: the line marked "*", such as
 * "1: 1340Mhz *" (newer kernels may add a deep-sleep line "S: 40Mhz *"). */
static void read_current_level_mhz(const amd_device *d, const char *file, double *mhz)
{
    char rel[160], text[1024];
    snprintf(rel, sizeof rel, "class/drm/card%d/device/%s", d->card, file);
    if (rm__sysfs_read(&d->fs, rel, text, sizeof text) < 0)
        return;
    for (char *line = text; line && *line;) {
        char *next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        const char *colon = strchr(line, ':');
        if (colon && strchr(line, '*')) {
            char *end;
            double value = strtod(colon + 1, &end);
            if (end != colon + 1 && strncasecmp(end, "mhz", 3) == 0) {
                *mhz = value;
                return;
            }
        }
        line = next;
    }
}

static void read_power(const amd_device *d, resmon_gpu_reading *out)
{
    if (!d->hwmon[0])
        return;
    char rel[192];
    uint64_t microwatts;
    snprintf(rel, sizeof rel, "%s/power1_average", d->hwmon);
    int rc = rm__sysfs_read_u64(&d->fs, rel, &microwatts);
    if (rc < 0) { /* since 6.6 many GPUs have only the instantaneous file */
        snprintf(rel, sizeof rel, "%s/power1_input", d->hwmon);
        rc = rm__sysfs_read_u64(&d->fs, rel, &microwatts);
    }
    if (rc < 0)
        return;
    out->power_w = (double)microwatts / 1e6;
    snprintf(rel, sizeof rel, "%s/power1_cap", d->hwmon);
    if (rm__sysfs_read_u64(&d->fs, rel, &microwatts) == 0)
        out->power_limit_w = (double)microwatts / 1e6;
}

static void amd_read(void *ctx, const pid_t *pids, size_t pid_count, rm__gpu_device_reading *out)
{
    (void)pids, (void)pid_count; /* amdgpu has no per-process VRAM in sysfs */
    const amd_device *d = ctx;
    resmon_gpu_reading *g = &out->gauges;
    read_card_value(d, "gpu_busy_percent", 1.0, &g->util_percent); /* EPERM: asleep; EOPNOTSUPP: none */
    read_card_value(d, "mem_info_vram_used", RM__BYTES_PER_MIB, &g->mem_used_mb);
    read_card_value(d, "mem_info_vram_total", RM__BYTES_PER_MIB, &g->mem_total_mb);
    read_current_level_mhz(d, "pp_dpm_sclk", &g->clock_mhz);
    read_current_level_mhz(d, "pp_dpm_mclk", &g->mem_clock_mhz);
    read_power(d, g);
}

const rm__gpu_backend rm__gpu_amd = {
    .name = "amd",
    .list = amd_list,
    .open = amd_open,
    .close = amd_close,
    .read = amd_read,
};
