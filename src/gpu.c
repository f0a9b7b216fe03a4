/*
 * gpu.c -- resmon_gpu: opening GPUs by spec and presenting one or several
 * devices as one resmon_gpu_profiler.
 *
 * One code path serves one device and many: each callback asks every device
 * and combines what succeeded -- memory and power summed, utilization and
 * clocks averaged, energy summed (only when every device has a counter, else
 * a sum would silently miss devices).  A device whose call fails contributes
 * nothing to that sample; when none succeeds the callback fails and the
 * sample's field is NAN.
 */
#include "gpu_backend.h"
#include "internal.h"
#include "struct_size.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_GPUS 64

static const rm__gpu_backend *const backends[] = {&rm__gpu_nvml, &rm__gpu_amd, &rm__gpu_intel};
#define BACKEND_COUNT (sizeof backends / sizeof *backends)

typedef struct gpu_device {
    const rm__gpu_backend *backend;
    void *ctx;
    resmon_gpu_info info;
    resmon_gpu_reading last; /* the latest readings; NAN until read */
} gpu_device;

struct resmon_gpu {
    resmon_gpu_profiler profiler;
    /* The caller's hold (until resmon_gpu_close) plus one per monitor using
     * the profiler (its retain/release): the devices close, and NVML may be
     * unloaded, only when nobody can call into them any more. */
    atomic_int holders;
    pthread_mutex_t last_lock; /* guards devices[].last: written by the GPU
                                  thread, read by resmon_gpu_last_readings */
    size_t count;
    gpu_device devices[];
};

/* Records one field of a device's latest readings. */
static void remember(resmon_gpu *g, double *field, double value)
{
    pthread_mutex_lock(&g->last_lock);
    *field = value;
    pthread_mutex_unlock(&g->last_lock);
}

static void clear_reading(resmon_gpu_reading *r)
{
    r->util_percent = r->mem_used_mb = r->mem_total_mb = r->clock_mhz = r->mem_clock_mhz = r->power_w =
        r->power_limit_w = NAN;
}

/* ---- the profiler callbacks --------------------------------------------- */

static int gpu_utilization(void *ctx, double *percent)
{
    resmon_gpu *g = ctx;
    double sum = 0;
    size_t ok = 0;
    for (size_t i = 0; i < g->count; i++) {
        gpu_device *d = &g->devices[i];
        double value = NAN;
        if (d->backend->utilization && d->backend->utilization(d->ctx, &value) == 0) {
            sum += value;
            ok++;
        } else {
            value = NAN;
        }
        remember(g, &d->last.util_percent, value);
    }
    if (!ok)
        return -ENOTSUP;
    *percent = sum / (double)ok;
    return 0;
}

static int gpu_memory(void *ctx, resmon_gpu_memory *out)
{
    resmon_gpu *g = ctx;
    double used = 0, total = 0;
    size_t ok = 0;
    for (size_t i = 0; i < g->count; i++) {
        gpu_device *d = &g->devices[i];
        resmon_gpu_memory m = {NAN, NAN};
        if (d->backend->memory && d->backend->memory(d->ctx, &m) == 0) {
            used += m.gpu_memory_used_mb;
            total += m.gpu_memory_total_mb;
            ok++;
        } else {
            m.gpu_memory_used_mb = m.gpu_memory_total_mb = NAN;
        }
        remember(g, &d->last.mem_used_mb, m.gpu_memory_used_mb);
        remember(g, &d->last.mem_total_mb, m.gpu_memory_total_mb);
    }
    if (!ok)
        return -ENOTSUP;
    out->gpu_memory_used_mb = used;
    out->gpu_memory_total_mb = total;
    return 0;
}

static int gpu_clocks(void *ctx, resmon_gpu_clocks *out)
{
    resmon_gpu *g = ctx;
    double graphics = 0, memory = 0;
    size_t ok = 0, memory_ok = 0;
    for (size_t i = 0; i < g->count; i++) {
        gpu_device *d = &g->devices[i];
        resmon_gpu_clocks c = {NAN, NAN};
        if (d->backend->clocks && d->backend->clocks(d->ctx, &c) == 0) {
            graphics += c.gpu_clock_mhz;
            ok++;
            if (!isnan(c.mem_clock_mhz)) {
                memory += c.mem_clock_mhz;
                memory_ok++;
            }
        } else {
            c.gpu_clock_mhz = c.mem_clock_mhz = NAN;
        }
        remember(g, &d->last.clock_mhz, c.gpu_clock_mhz);
        remember(g, &d->last.mem_clock_mhz, c.mem_clock_mhz);
    }
    if (!ok)
        return -ENOTSUP;
    out->gpu_clock_mhz = graphics / (double)ok;
    out->mem_clock_mhz = memory_ok ? memory / (double)memory_ok : NAN;
    return 0;
}

static int gpu_power(void *ctx, resmon_gpu_power *out)
{
    resmon_gpu *g = ctx;
    double draw = 0, limit = 0;
    size_t ok = 0;
    for (size_t i = 0; i < g->count; i++) {
        gpu_device *d = &g->devices[i];
        resmon_gpu_power p = {NAN, NAN};
        if (d->backend->power && d->backend->power(d->ctx, &p) == 0) {
            draw += p.power_draw_w;
            limit += p.power_limit_w; /* NAN if any limit is unknown: a partial sum would mislead */
            ok++;
        } else {
            p.power_draw_w = p.power_limit_w = NAN;
        }
        remember(g, &d->last.power_w, p.power_draw_w);
        remember(g, &d->last.power_limit_w, p.power_limit_w);
    }
    if (!ok)
        return -ENOTSUP;
    out->power_draw_w = draw;
    out->power_limit_w = limit;
    return 0;
}

static int gpu_energy(void *ctx, double *joules)
{
    resmon_gpu *g = ctx;
    double sum = 0;
    for (size_t i = 0; i < g->count; i++) {
        gpu_device *d = &g->devices[i];
        double value;
        int rc = d->backend->energy ? d->backend->energy(d->ctx, &value) : -ENOTSUP;
        if (rc < 0)
            return rc;
        sum += value;
    }
    *joules = sum;
    return 0;
}

static int gpu_process_memory(void *ctx, const pid_t *pids, size_t count, double *mb)
{
    resmon_gpu *g = ctx;
    double sum = 0;
    size_t ok = 0;
    for (size_t i = 0; i < g->count; i++) {
        gpu_device *d = &g->devices[i];
        double value;
        if (d->backend->process_memory && d->backend->process_memory(d->ctx, pids, count, &value) == 0) {
            sum += value;
            ok++;
        }
    }
    if (!ok)
        return -ENOTSUP;
    *mb = sum;
    return 0;
}

/* ---- listing and opening ------------------------------------------------- */

int resmon_gpu_list(resmon_gpu_info *out, size_t cap, size_t stride, size_t *count)
{
    if (!count || (!out && cap) || (cap && stride < RM__SIZE_THROUGH(resmon_gpu_info, memory_total_mb)))
        return -EINVAL;
    size_t total = 0;
    for (size_t b = 0; b < BACKEND_COUNT; b++) {
        resmon_gpu_info found[MAX_GPUS];
        size_t n = 0;
        backends[b]->list(found, MAX_GPUS, &n);
        for (size_t i = 0; i < n && i < MAX_GPUS; i++, total++) {
            if (total >= cap)
                continue;
            found[i].struct_size = rm__out_size(stride, sizeof found[i]);
            rm__copy_struct_out((char *)out + total * stride, stride, &found[i], sizeof found[i]);
        }
    }
    *count = total;
    return 0;
}

static void gpu_free(resmon_gpu *g)
{
    for (size_t i = 0; i < g->count; i++)
        g->devices[i].backend->close(g->devices[i].ctx);
    pthread_mutex_destroy(&g->last_lock);
    free(g);
}

static void gpu_retain(void *ctx)
{
    resmon_gpu *g = ctx;
    atomic_fetch_add(&g->holders, 1);
}

static void gpu_release(void *ctx)
{
    resmon_gpu *g = ctx;
    if (atomic_fetch_sub(&g->holders, 1) == 1)
        gpu_free(g);
}

static resmon_gpu *gpu_new(size_t count)
{
    resmon_gpu *g = calloc(1, sizeof *g + count * sizeof(gpu_device));
    if (!g)
        return NULL;
    if (pthread_mutex_init(&g->last_lock, NULL) != 0) {
        free(g);
        return NULL;
    }
    atomic_init(&g->holders, 1);
    g->profiler = (resmon_gpu_profiler){
        .struct_size = sizeof(resmon_gpu_profiler),
        .ctx = g,
        .retain = gpu_retain,
        .release = gpu_release,
        .get_utilization = gpu_utilization,
        .get_memory_usage = gpu_memory,
        .get_clock_info = gpu_clocks,
        .get_power_info = gpu_power,
        .get_energy = gpu_energy,
        .get_process_memory = gpu_process_memory,
    };
    return g;
}

static int open_device(gpu_device *d, const rm__gpu_backend *backend, const char *selector, char *err, size_t errcap)
{
    d->backend = backend;
    clear_reading(&d->last);
    return backend->open(selector, &d->ctx, &d->info, err, errcap);
}

static int open_one(resmon_gpu **out, const rm__gpu_backend *backend, const char *selector, char *err, size_t errcap)
{
    resmon_gpu *g = gpu_new(1);
    if (!g)
        return -ENOMEM;
    int rc = open_device(&g->devices[0], backend, selector, err, errcap);
    if (rc < 0) {
        pthread_mutex_destroy(&g->last_lock);
        free(g);
        return rc;
    }
    g->count = 1;
    *out = g;
    return 0;
}

/* "auto": NVIDIA first (the default device honours CUDA_VISIBLE_DEVICES),
 * then AMD, then Intel. */
static int open_default(resmon_gpu **out, char *err, size_t errcap)
{
    char reasons[3][256];
    for (size_t b = 0; b < BACKEND_COUNT; b++) {
        reasons[b][0] = '\0';
        int rc = open_one(out, backends[b], b == 0 ? "default" : "0", reasons[b], sizeof reasons[b]);
        if (rc == 0)
            return 0;
        if (rc == -ENOMEM)
            return rc;
    }
    snprintf(err, errcap, "no GPU found (NVIDIA: %s; AMD: %s; Intel: %s)", reasons[0], reasons[1], reasons[2]);
    return -ENODEV;
}

static int open_all(resmon_gpu **out, char *err, size_t errcap)
{
    resmon_gpu *g = gpu_new(MAX_GPUS);
    if (!g)
        return -ENOMEM;
    for (size_t b = 0; b < BACKEND_COUNT; b++) {
        resmon_gpu_info found[MAX_GPUS];
        size_t n = 0;
        backends[b]->list(found, MAX_GPUS, &n);
        for (size_t i = 0; i < n && g->count < MAX_GPUS; i++) {
            char selector[24], reason[256];
            snprintf(selector, sizeof selector, "%zu", i);
            if (open_device(&g->devices[g->count], backends[b], selector, reason, sizeof reason) == 0)
                g->count++; /* a listed device we may not open is left out */
        }
    }
    if (g->count == 0) {
        pthread_mutex_destroy(&g->last_lock);
        free(g);
        snprintf(err, errcap, "no GPU found by any backend (nvml, amd, intel)");
        return -ENODEV;
    }
    *out = g;
    return 0;
}

int resmon_gpu_open(resmon_gpu **out, const char *spec, char *err, size_t errcap)
{
    char scratch[8];
    if (!err || !errcap) {
        err = scratch;
        errcap = sizeof scratch;
    }
    err[0] = '\0';
    if (!out)
        return -EINVAL;
    *out = NULL;
    if (!spec || strcmp(spec, "auto") == 0)
        return open_default(out, err, errcap);
    if (strcmp(spec, "all") == 0)
        return open_all(out, err, errcap);
    const char *colon = strchr(spec, ':');
    for (size_t b = 0; colon && b < BACKEND_COUNT; b++) {
        size_t len = strlen(backends[b]->name);
        if ((size_t)(colon - spec) == len && strncmp(spec, backends[b]->name, len) == 0)
            return open_one(out, backends[b], colon + 1, err, errcap);
    }
    snprintf(err, errcap, "unknown GPU '%s': use auto, all, nvml:N, nvml:GPU-<uuid>, amd:N or intel:N", spec);
    return -EINVAL;
}

void resmon_gpu_close(resmon_gpu *g)
{
    if (g)
        gpu_release(g); /* the caller's hold; monitors may still hold theirs */
}

const resmon_gpu_profiler *resmon_gpu_profiler_of(resmon_gpu *g)
{
    return g ? &g->profiler : NULL;
}

size_t resmon_gpu_device_count(const resmon_gpu *g)
{
    return g ? g->count : 0;
}

int resmon_gpu_device_info(const resmon_gpu *g, size_t i, resmon_gpu_info *out, size_t out_size)
{
    if (!g || i >= g->count || !out || out_size < RM__SIZE_THROUGH(resmon_gpu_info, memory_total_mb))
        return -EINVAL;
    resmon_gpu_info info = g->devices[i].info;
    info.struct_size = rm__out_size(out_size, sizeof info);
    rm__copy_struct_out(out, out_size, &info, sizeof info);
    return 0;
}

ssize_t resmon_gpu_last_readings(const resmon_gpu *g, resmon_gpu_reading *out, size_t cap, size_t stride)
{
    if (!g || (!out && cap) || (cap && stride < RM__SIZE_THROUGH(resmon_gpu_reading, power_limit_w)))
        return -EINVAL;
    resmon_gpu *mutable_g = (resmon_gpu *)g; /* the lock is not part of its value */
    pthread_mutex_lock(&mutable_g->last_lock);
    for (size_t i = 0; i < g->count && i < cap; i++) {
        resmon_gpu_reading r = g->devices[i].last;
        r.struct_size = rm__out_size(stride, sizeof r);
        rm__copy_struct_out((char *)out + i * stride, stride, &r, sizeof r);
    }
    pthread_mutex_unlock(&mutable_g->last_lock);
    return (ssize_t)g->count;
}
