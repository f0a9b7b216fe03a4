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
#include "sysfs.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AMD_VENDOR_ID 0x1002
#define MAX_CARDS 16

static const char *const amd_drivers[] = {"amdgpu", NULL};
static const rm__drm_vendor amd_vendor = {AMD_VENDOR_ID, amd_drivers, "AMD", "amd"};

typedef struct amd_device {
    int card;
    char hwmon[128]; /* "" when the card has no hwmon */
} amd_device;

static void amd_describe(int card, unsigned index, resmon_gpu_info *info)
{
    rm__drm_describe(card, index, "amd", info);
    char rel[96];
    uint64_t bytes;
    snprintf(rel, sizeof rel, "class/drm/card%d/device/mem_info_vram_total", card);
    if (rm__sysfs_read_u64(rel, &bytes) == 0)
        info->memory_total_mb = (double)bytes / 1048576.0;
}

static int amd_list(resmon_gpu_info *out, size_t cap, size_t *count)
{
    int cards[MAX_CARDS];
    size_t n = rm__drm_find_cards(AMD_VENDOR_ID, amd_drivers, cards, MAX_CARDS);
    for (size_t i = 0; i < n && i < cap && i < MAX_CARDS; i++)
        amd_describe(cards[i], (unsigned)i, &out[i]);
    *count = n;
    return 0;
}

static int amd_open(const char *selector, void **ctx, resmon_gpu_info *info, char *err, size_t errcap)
{
    amd_device *d = calloc(1, sizeof *d);
    if (!d)
        return -ENOMEM;
    unsigned index;
    int rc = rm__drm_select(&amd_vendor, selector, &d->card, &index, d->hwmon, sizeof d->hwmon, err, errcap);
    if (rc < 0) {
        free(d);
        return rc;
    }
    amd_describe(d->card, index, info);
    *ctx = d;
    return 0;
}

static void amd_close(void *ctx)
{
    free(ctx);
}

static int read_card_u64(const amd_device *d, const char *file, uint64_t *out)
{
    char rel[160];
    snprintf(rel, sizeof rel, "class/drm/card%d/device/%s", d->card, file);
    return rm__sysfs_read_u64(rel, out);
}

static int amd_utilization(void *ctx, double *percent)
{
    uint64_t busy;
    int rc = read_card_u64(ctx, "gpu_busy_percent", &busy); /* EPERM: asleep; EOPNOTSUPP: none */
    if (rc < 0)
        return rc;
    *percent = (double)busy;
    return 0;
}

static int amd_memory(void *ctx, resmon_gpu_memory *out)
{
    uint64_t used, total;
    int rc = read_card_u64(ctx, "mem_info_vram_used", &used);
    if (rc < 0)
        return rc;
    out->gpu_memory_used_mb = (double)used / 1048576.0;
    out->gpu_memory_total_mb = read_card_u64(ctx, "mem_info_vram_total", &total) == 0 ? (double)total / 1048576.0 : NAN;
    return 0;
}

/* The current level of a pp_dpm_* table: the line marked "*", such as
 * "1: 1340Mhz *" (newer kernels may add a deep-sleep line "S: 40Mhz *"). */
static int read_current_level_mhz(const amd_device *d, const char *file, double *mhz)
{
    char rel[160], text[1024];
    snprintf(rel, sizeof rel, "class/drm/card%d/device/%s", d->card, file);
    ssize_t n = rm__sysfs_read(rel, text, sizeof text);
    if (n < 0)
        return (int)n;
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
                return 0;
            }
        }
        line = next;
    }
    return -ENOTSUP;
}

static int amd_clocks(void *ctx, resmon_gpu_clocks *out)
{
    int rc = read_current_level_mhz(ctx, "pp_dpm_sclk", &out->gpu_clock_mhz);
    if (rc < 0)
        return rc;
    if (read_current_level_mhz(ctx, "pp_dpm_mclk", &out->mem_clock_mhz) < 0)
        out->mem_clock_mhz = NAN;
    return 0;
}

static int amd_power(void *ctx, resmon_gpu_power *out)
{
    const amd_device *d = ctx;
    if (!d->hwmon[0])
        return -ENOTSUP;
    char rel[192];
    uint64_t microwatts;
    snprintf(rel, sizeof rel, "%s/power1_average", d->hwmon);
    int rc = rm__sysfs_read_u64(rel, &microwatts);
    if (rc < 0) { /* since 6.6 many GPUs have only the instantaneous file */
        snprintf(rel, sizeof rel, "%s/power1_input", d->hwmon);
        rc = rm__sysfs_read_u64(rel, &microwatts);
    }
    if (rc < 0)
        return rc == -ENOENT ? -ENOTSUP : rc;
    out->power_draw_w = (double)microwatts / 1e6;
    snprintf(rel, sizeof rel, "%s/power1_cap", d->hwmon);
    out->power_limit_w = rm__sysfs_read_u64(rel, &microwatts) == 0 ? (double)microwatts / 1e6 : NAN;
    return 0;
}

const rm__gpu_backend rm__gpu_amd = {
    .name = "amd",
    .list = amd_list,
    .open = amd_open,
    .close = amd_close,
    .utilization = amd_utilization,
    .memory = amd_memory,
    .clocks = amd_clocks,
    .power = amd_power,
};
