/*
 * gpu_backend.h -- what each GPU backend (NVML, amdgpu sysfs, Intel sysfs)
 * provides to gpu.c, which turns devices into resmon_gpu profilers.
 *
 * A backend reads one metric per call, as the seed's protocol asks: a metric
 * the hardware lacks returns -ENOTSUP and becomes NAN for that metric only.
 * Missing operations are NULL.
 */
#ifndef RESMON_GPU_BACKEND_H
#define RESMON_GPU_BACKEND_H

#include "resmon.h"

#include <stddef.h>

typedef struct rm__gpu_backend {
    const char *name; /* "nvml", "amd", "intel": the spec prefix */
    /* Lists devices: fills up to cap infos and sets *count.  A missing
     * driver or library gives 0 devices and returns 0. */
    int (*list)(resmon_gpu_info *out, size_t cap, size_t *count);
    /* Opens a device by selector (an index; NVML also a UUID or PCI bus
     * id).  0, or a negative errno with a sentence in err. */
    int (*open)(const char *selector, void **ctx, resmon_gpu_info *info, char *err, size_t errcap);
    void (*close)(void *ctx);
    int (*utilization)(void *ctx, double *percent);
    int (*memory)(void *ctx, resmon_gpu_memory *out);
    int (*clocks)(void *ctx, resmon_gpu_clocks *out);
    int (*power)(void *ctx, resmon_gpu_power *out);
    int (*energy)(void *ctx, double *joules);
    int (*process_memory)(void *ctx, const pid_t *pids, size_t count, double *mb);
} rm__gpu_backend;

extern const rm__gpu_backend rm__gpu_nvml;
extern const rm__gpu_backend rm__gpu_amd;
extern const rm__gpu_backend rm__gpu_intel;

/* Finds DRM cards (/sys/class/drm/cardN, never by name alone) whose PCI
 * vendor id and driver match, in card-number order.  Fills up to cap card
 * numbers and returns how many match. */
size_t rm__drm_find_cards(unsigned vendor_id, const char *const *drivers, int *cards, size_t cap);

/* Fills name/id/index of a DRM card's resmon_gpu_info. */
void rm__drm_describe(int card, unsigned index, const char *backend, resmon_gpu_info *info);

/* The first hwmon directory of a card ("class/drm/cardN/device/hwmon/hwmonM"),
 * relative to the sysfs root; -ENOENT when it has none. */
int rm__drm_hwmon_dir(int card, char *out, size_t cap);

/* Parses an index selector ("0", "12"). */
int rm__parse_index(const char *selector, unsigned *index);

/* A vendor's DRM cards, for the sysfs backends. */
typedef struct rm__drm_vendor {
    unsigned vendor_id;          /* PCI vendor id */
    const char *const *drivers;  /* NULL-terminated driver names */
    const char *label;           /* "AMD", "Intel": for messages */
    const char *backend;         /* "amd", "intel": the spec prefix */
} rm__drm_vendor;

/* Chooses the vendor's card for an index selector ("amd:1" -> the second AMD
 * card) and its hwmon directory ("" when none).  0, or a negative errno with
 * a sentence in err: -EINVAL (not an index), -ENODEV (no such card at all),
 * -ENOENT (fewer cards than that). */
int rm__drm_select(const rm__drm_vendor *v, const char *selector, int *card, unsigned *index, char *hwmon,
                   size_t hwmon_cap, char *err, size_t errcap);

#endif
