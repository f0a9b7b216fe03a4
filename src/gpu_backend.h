/*
 * gpu_backend.h -- what each GPU backend (NVML, amdgpu sysfs, Intel sysfs)
 * provides to gpu.c, which turns devices into resmon_gpu profilers.
 *
 * The contract between the layers, as nvtop's struct gpu_vendor is: gpu.c
 * calls the backends through rm__gpu_backend, and a backend includes only
 * this header and gpu_reading.h (and the shared sysfs/file helpers), never
 * gpu.c's: nothing below this line calls back up.
 *
 * A backend reads a device whole: one call per poll fills every metric the
 * device knows into one rm__gpu_device_reading (see gpu_reading.h), leaving
 * NAN where the hardware lacks a metric or its read failed -- one missing
 * metric never costs the others.
 */
#ifndef RESMON_GPU_BACKEND_H
#define RESMON_GPU_BACKEND_H

#include "gpu_cuda_visible.h"
#include "gpu_reading.h"
#include "resmon.h"
#include "sysfs.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>

/* The most GPUs resmon handles: devices one profiler ("all") opens, and DRM
 * cards one sysfs backend considers (the kernel numbers DRM primary nodes
 * below 64).  The one limit on a GPU count anywhere in resmon. */
#define RM__GPU_MAX_DEVICES 64

/* What the environment says about finding GPUs, read once when a profiler or
 * a list opens -- never on the GPU thread, where getenv would race with a
 * host program's setenv. */
typedef struct rm__gpu_env {
    rm__sysfs sysfs;              /* RESMON_SYSFS_ROOT */
    char nvml_library[PATH_MAX];  /* RESMON_NVML_LIBRARY; "" for the driver's own */
    int cuda_visible_set;         /* CUDA_VISIBLE_DEVICES is set (perhaps to "") */
    char cuda_visible[1024];      /* its value */
    int cuda_order_pci_bus;       /* CUDA_DEVICE_ORDER=PCI_BUS_ID */
} rm__gpu_env;

typedef struct rm__gpu_backend {
    const char *name; /* "nvml", "amd", "intel": the spec prefix */
    /* Lists devices: describes the first min(cap, count) in out and sets
     * *count to how many there are.  A missing driver or library gives 0
     * devices; out may be NULL when cap is 0. */
    void (*list)(const rm__gpu_env *env, resmon_gpu_info *out, size_t cap, size_t *count);
    /* Opens a device by selector (an index; NVML also a UUID or PCI bus
     * id).  0, or a negative errno with a sentence in err. */
    int (*open)(const rm__gpu_env *env, const char *selector, void **ctx, resmon_gpu_info *info, char *err,
                size_t errcap);
    void (*close)(void *ctx);
    /* Fills what the device knows into out, which arrives all NAN.  pids (may
     * be empty) are the monitored processes, for proc_mem_mb. */
    void (*read)(void *ctx, const pid_t *pids, size_t pid_count, rm__gpu_device_reading *out);
} rm__gpu_backend;

extern const rm__gpu_backend rm__gpu_nvml;

/* The NVIDIA devices a CUDA process started in this environment would see,
 * in CUDA's order, as NVML UUIDs (GPU-... or MIG-...). */
typedef struct rm__cuda_devices {
    size_t count;
    char uuids[RM__GPU_MAX_DEVICES][RM__CUDA_UUID_MAX];
} rm__cuda_devices;

/* Resolves CUDA_VISIBLE_DEVICES (env->cuda_visible; set) as the CUDA runtime
 * does (the grammar: gpu_cuda_visible.h), asking NVML what each entry names.
 * 0 with out filled (count 0: CUDA sees no NVIDIA GPU), or a negative errno
 * with a sentence in err: no NVML (-ENOENT, -ENODEV, -EACCES, -EIO), or -EINVAL when
 * an index cannot be resolved without the CUDA runtime (CUDA's default
 * FASTEST_FIRST order on a node with different GPU models). */
int rm__nvml_cuda_devices(const rm__gpu_env *env, rm__cuda_devices *out, char *err, size_t errcap);
extern const rm__gpu_backend rm__gpu_amd;
extern const rm__gpu_backend rm__gpu_intel;

/* Parses an index selector ("0", "12"): the "N" of "nvml:N", "amd:N".  0, or
 * -EINVAL (empty, negative, not a number, too large). */
static inline int rm__parse_index(const char *selector, unsigned *index)
{
    char *end;
    errno = 0;
    unsigned long value = strtoul(selector, &end, 10);
    if (*selector < '0' || *selector > '9' || *end || errno || value > UINT_MAX) /* no sign, no space: "+0", " 0" */
        return -EINVAL;
    *index = (unsigned)value;
    return 0;
}

/* Finds DRM cards (class/drm/cardN, never by name alone) whose PCI vendor id
 * and driver match, in card-number order: fills cards with at most
 * RM__GPU_MAX_DEVICES card numbers and returns how many. */
size_t rm__drm_find_cards(const rm__sysfs *fs, unsigned vendor_id, const char *const *drivers,
                          int cards[RM__GPU_MAX_DEVICES]);

/* Fills name/id/index of a DRM card's resmon_gpu_info. */
void rm__drm_describe(const rm__sysfs *fs, int card, unsigned index, const char *backend, resmon_gpu_info *info);

/* A vendor's DRM cards, for the sysfs backends. */
typedef struct rm__drm_vendor {
    unsigned vendor_id;          /* PCI vendor id */
    const char *const *drivers;  /* NULL-terminated driver names */
    const char *label;           /* "AMD", "Intel": for messages */
    const char *backend;         /* "amd", "intel": the spec prefix */
} rm__drm_vendor;

/* A DRM card a sysfs backend has opened. */
typedef struct rm__drm_card {
    rm__sysfs fs;    /* the sysfs root read when it opened */
    int card;        /* N of class/drm/cardN */
    unsigned index;  /* among the vendor's cards: the N of "amd:N" */
    char hwmon[160]; /* its hwmon directory, relative to the root; "" when none */
} rm__drm_card;

/* Opens the vendor's card for an index selector ("amd:1" -> the second AMD
 * card): its number, index and hwmon directory.  0, or a negative errno with
 * a sentence in err: -EINVAL (not an index), -ENODEV (no such card at all),
 * -ENOENT (fewer cards than that). */
int rm__drm_open_card(const rm__gpu_env *env, const rm__drm_vendor *v, const char *selector, rm__drm_card *out,
                      char *err, size_t errcap);

#endif
