/*
 * gpu_amd.c -- AMD GPUs through amdgpu's sysfs files; no library needed.
 *
 * Files, under class/drm/cardN/device/: gpu_busy_percent (%),
 * mem_info_vram_used/_total (bytes), pp_dpm_sclk/pp_dpm_mclk (one line per
 * level, "*" on the current one, "Mhz"), hwmon/hwmonM/power1_average or, since
 * 6.6 on many GPUs (Polaris among them), only power1_input (uW), power1_cap.
 * A missing file (or EOPNOTSUPP) means the GPU has no such metric; any other
 * refusal (gpu_busy_percent answers EPERM while the GPU is in runtime
 * suspend) makes that one metric unavailable for the reading, which an
 * aggregate of several GPUs must not average or sum around (gpu_reading.h).
 * amdgpu has no energy counter in sysfs: resmon integrates power.
 *
 * APUs (integrated GPUs): ROCm and the graphics stack place most of their
 * memory in GTT (system memory mapped for the GPU), not in the small VRAM
 * carve-out, so memory used and total are VRAM + GTT there, as nvtop
 * reports them.  An APU is recognised by having no mem_info_vram_vendor:
 * amdgpu hides that file when the VRAM vendor is unknown, which is the case
 * for carve-out memory (amdgpu_vram_attrs_is_visible); a discrete card
 * reports its VRAM vendor.  Raven and Raven2/Picasso (PCI ids 0x15dd, 0x15d8)
 * report gpu_busy_percent 100 whatever the load (a firmware quirk), so their
 * utilization is left unknown rather than reported as 100.
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

typedef struct amd_device {
    rm__drm_card drm;
    int integrated;     /* an APU: memory is VRAM + GTT */
    int busy_is_stuck;  /* Raven: gpu_busy_percent always reads 100 */
} amd_device;

static int card_file_exists(const rm__sysfs *fs, int card, const char *file)
{
    char rel[160], text[64];
    snprintf(rel, sizeof rel, "class/drm/card%d/device/%s", card, file);
    return rm__sysfs_read(fs, rel, text, sizeof text) != -ENOENT;
}

static int is_integrated(const rm__sysfs *fs, int card)
{
    return !card_file_exists(fs, card, "mem_info_vram_vendor") && card_file_exists(fs, card, "mem_info_gtt_total");
}

static int busy_is_stuck(const rm__sysfs *fs, int card)
{
    char rel[96], text[32];
    snprintf(rel, sizeof rel, "class/drm/card%d/device/device", card);
    if (rm__sysfs_read(fs, rel, text, sizeof text) < 0)
        return 0;
    unsigned long id = strtoul(text, NULL, 16);
    return id == 0x15dd || id == 0x15d8; /* Raven/Raven2, Picasso */
}

/* Memory in MiB: VRAM, plus GTT on an APU; NAN when unreadable. */
static double memory_mb(const rm__sysfs *fs, int card, int integrated, const char *vram_file, const char *gtt_file,
                        int *refused)
{
    char rel[128];
    uint64_t bytes, total = 0;
    const char *files[] = {vram_file, integrated ? gtt_file : NULL};
    for (size_t i = 0; i < 2 && files[i]; i++) {
        snprintf(rel, sizeof rel, "class/drm/card%d/device/%s", card, files[i]);
        int rc = rm__sysfs_read_u64(fs, rel, &bytes);
        if (rc == -ENOENT && integrated && i == 0)
            continue; /* an APU without a VRAM carve-out in use: GTT is all */
        if (rc < 0) {
            if (refused)
                *refused = rc != -ENOENT && rc != -EOPNOTSUPP;
            return NAN;
        }
        total += bytes;
    }
    return (double)total / RM__BYTES_PER_MIB;
}

static void amd_describe(const rm__sysfs *fs, int card, unsigned index, resmon_gpu_info *info)
{
    rm__drm_describe(fs, card, index, "amd", info);
    info->memory_total_mb = memory_mb(fs, card, is_integrated(fs, card), "mem_info_vram_total",
                                      "mem_info_gtt_total", NULL);
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
    int rc = rm__drm_open_card(env, &amd_vendor, selector, &d->drm, err, errcap);
    if (rc < 0) {
        free(d);
        return rc;
    }
    d->integrated = is_integrated(&d->drm.fs, d->drm.card);
    d->busy_is_stuck = busy_is_stuck(&d->drm.fs, d->drm.card);
    amd_describe(&d->drm.fs, d->drm.card, d->drm.index, info);
    *ctx = d;
    return 0;
}

static void amd_close(void *ctx)
{
    free(ctx);
}

/* Whether a read's failure says the metric exists but cannot be read now
 * (EPERM in runtime suspend, EBUSY, EIO...), not that the GPU lacks it. */
static int refused(int rc)
{
    return rc < 0 && rc != -ENOENT && rc != -EOPNOTSUPP;
}

/* A card file holding one number, scaled; the field stays NAN when the file
 * is missing or refuses to be read. */
static void read_card_value(const amd_device *d, rm__gpu_device_reading *r, const char *file, double *field)
{
    char rel[160];
    uint64_t value;
    snprintf(rel, sizeof rel, "class/drm/card%d/device/%s", d->drm.card, file);
    int rc = rm__sysfs_read_u64(&d->drm.fs, rel, &value);
    if (rc == 0)
        *field = (double)value;
    else if (refused(rc))
        rm__gpu_reading_unavailable(r, field);
}

/* The current level of a pp_dpm_* table: the line marked "*", such as
 * "1: 1340Mhz *" (newer kernels may add a deep-sleep line "S: 40Mhz *"). */
static void read_current_level_mhz(const amd_device *d, const char *file, double *mhz)
{
    char rel[160], text[1024];
    snprintf(rel, sizeof rel, "class/drm/card%d/device/%s", d->drm.card, file);
    if (rm__sysfs_read(&d->drm.fs, rel, text, sizeof text) < 0)
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

static void read_power(const amd_device *d, rm__gpu_device_reading *r)
{
    if (!d->drm.hwmon[0])
        return;
    char rel[192];
    uint64_t microwatts;
    snprintf(rel, sizeof rel, "%s/power1_average", d->drm.hwmon);
    int rc = rm__sysfs_read_u64(&d->drm.fs, rel, &microwatts);
    if (rc == -ENOENT) { /* since 6.6 many GPUs have only the instantaneous file */
        snprintf(rel, sizeof rel, "%s/power1_input", d->drm.hwmon);
        rc = rm__sysfs_read_u64(&d->drm.fs, rel, &microwatts);
    }
    if (rc < 0) {
        if (refused(rc))
            rm__gpu_reading_unavailable(r, &r->gauges.power_w);
        return;
    }
    r->gauges.power_w = (double)microwatts / 1e6;
    snprintf(rel, sizeof rel, "%s/power1_cap", d->drm.hwmon);
    if (rm__sysfs_read_u64(&d->drm.fs, rel, &microwatts) == 0)
        r->gauges.power_limit_w = (double)microwatts / 1e6;
}

static void read_memory(const amd_device *d, rm__gpu_device_reading *r)
{
    resmon_gpu_reading *g = &r->gauges;
    int used_refused = 0, total_refused = 0;
    g->mem_used_mb = memory_mb(&d->drm.fs, d->drm.card, d->integrated, "mem_info_vram_used", "mem_info_gtt_used",
                               &used_refused);
    g->mem_total_mb = memory_mb(&d->drm.fs, d->drm.card, d->integrated, "mem_info_vram_total",
                                "mem_info_gtt_total", &total_refused);
    if (used_refused)
        rm__gpu_reading_unavailable(r, &g->mem_used_mb);
    if (total_refused)
        rm__gpu_reading_unavailable(r, &g->mem_total_mb);
}

static void amd_read(void *ctx, const pid_t *pids, size_t pid_count, rm__gpu_device_reading *out)
{
    (void)pids, (void)pid_count; /* amdgpu has no per-process VRAM in sysfs */
    const amd_device *d = ctx;
    resmon_gpu_reading *g = &out->gauges;
    if (!d->busy_is_stuck)
        read_card_value(d, out, "gpu_busy_percent", &g->util_percent);
    read_memory(d, out);
    read_current_level_mhz(d, "pp_dpm_sclk", &g->clock_mhz);
    read_current_level_mhz(d, "pp_dpm_mclk", &g->mem_clock_mhz);
    read_power(d, out);
}

const rm__gpu_backend rm__gpu_amd = {
    .name = "amd",
    .list = amd_list,
    .open = amd_open,
    .close = amd_close,
    .read = amd_read,
};
