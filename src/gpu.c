/*
 * gpu.c -- resmon_gpu: opening GPUs by spec and presenting one or several
 * devices as one resmon_gpu_profiler.
 *
 * One code path serves one device and many: each poll reads every device
 * once (one backend call, one lock to keep its latest values) and combines
 * what they know -- memory and power summed, utilization and clocks averaged,
 * energy summed only when every device has a counter (see
 * rm__gpu_reading_sum).  A device that cannot read a metric contributes
 * nothing to it; when no device knows a metric, that field is NAN.  The
 * profiler's per-metric callbacks are built on this below.
 *
 * Which devices: a CUDA job (CUDA_VISIBLE_DEVICES set) uses the NVIDIA GPUs
 * that variable shows CUDA, so "auto" reads all of them and "all" reads them
 * rather than every NVIDIA GPU of the node (other jobs' included).  Without
 * it "auto" reads the first GPU found.  Every profiler says what it picked
 * and why (resmon_gpu_selection), in particular when "auto" falls back to an
 * AMD or Intel GPU that a CUDA job does not use.
 */
#include "gpu.h"
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
    /* One reading of the devices at a time: several monitors may share this
     * profiler, each with its own GPU thread, and the backends keep per-device
     * state between calls (NVML's process lists, Intel's energy for power). */
    pthread_mutex_t read_lock;
    pthread_mutex_t last_lock; /* guards devices[].last: written by the GPU
                                  thread, read by resmon_gpu_last_readings */
    char selection[RESMON_ERR_MAX]; /* what "auto"/"all" picked and why */
    resmon_gpu *next_open; /* the registry's list (guarded by registry_lock) */
    size_t count;
    gpu_device devices[];
};

/* What the environment says about finding GPUs (see rm__gpu_env). */
static void gpu_env_read(rm__gpu_env *env)
{
    rm__sysfs_from_env(&env->sysfs);
    const char *library = secure_getenv("RESMON_NVML_LIBRARY");
    rm__copy_string(env->nvml_library, sizeof env->nvml_library, library ? library : "",
                    library ? strlen(library) : 0);
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");
    env->cuda_visible_set = visible != NULL;
    rm__copy_string(env->cuda_visible, sizeof env->cuda_visible, visible ? visible : "",
                    visible ? strlen(visible) : 0);
    const char *order = getenv("CUDA_DEVICE_ORDER");
    env->cuda_order_pci_bus = order && strcmp(order, "PCI_BUS_ID") == 0;
}

void rm__gpu_read_devices(resmon_gpu *g, const pid_t *pids, size_t pid_count, rm__gpu_device_reading *out)
{
    rm__gpu_reading_sum sum;
    rm__gpu_reading_sum_init(&sum);
    pthread_mutex_lock(&g->read_lock);
    for (size_t i = 0; i < g->count; i++) {
        gpu_device *d = &g->devices[i];
        rm__gpu_device_reading reading;
        rm__gpu_reading_clear(&reading);
        d->backend->read(d->ctx, pids, pid_count, &reading);
        pthread_mutex_lock(&g->last_lock);
        d->last = reading.gauges;
        pthread_mutex_unlock(&g->last_lock);
        rm__gpu_reading_sum_add(&sum, &reading);
    }
    pthread_mutex_unlock(&g->read_lock);
    rm__gpu_reading_sum_result(&sum, out);
}

/* ---- the profiler's callbacks --------------------------------------------- */

/* Each reads every device once and answers its metric; -ENOTSUP when no
 * device knows it.  The value reported with it (a total beside a usage, a
 * limit beside a power) comes along as it is. */
static int known(double value, double *out)
{
    if (isnan(value))
        return -ENOTSUP;
    *out = value;
    return 0;
}

static rm__gpu_device_reading read_now(void *ctx, const pid_t *pids, size_t pid_count)
{
    rm__gpu_device_reading r;
    rm__gpu_read_devices(ctx, pids, pid_count, &r);
    return r;
}

static int own_utilization(void *ctx, double *percent)
{
    return known(read_now(ctx, NULL, 0).gauges.util_percent, percent);
}

static int own_memory(void *ctx, resmon_gpu_memory *out)
{
    rm__gpu_device_reading r = read_now(ctx, NULL, 0);
    int rc = known(r.gauges.mem_used_mb, &out->gpu_memory_used_mb);
    if (rc == 0)
        out->gpu_memory_total_mb = r.gauges.mem_total_mb;
    return rc;
}

static int own_clocks(void *ctx, resmon_gpu_clocks *out)
{
    rm__gpu_device_reading r = read_now(ctx, NULL, 0);
    int rc = known(r.gauges.clock_mhz, &out->gpu_clock_mhz);
    if (rc == 0)
        out->mem_clock_mhz = r.gauges.mem_clock_mhz;
    return rc;
}

static int own_power(void *ctx, resmon_gpu_power *out)
{
    rm__gpu_device_reading r = read_now(ctx, NULL, 0);
    int rc = known(r.gauges.power_w, &out->power_draw_w);
    if (rc == 0)
        out->power_limit_w = r.gauges.power_limit_w;
    return rc;
}

static int own_energy(void *ctx, double *joules)
{
    return known(read_now(ctx, NULL, 0).energy_j, joules);
}

static int own_process_memory(void *ctx, const pid_t *pids, size_t count, double *mb)
{
    return known(read_now(ctx, pids, count).proc_mem_mb, mb);
}

/* ---- the registry of open profilers -------------------------------------
 *
 * Every resmon_gpu that resmon_gpu_open returned and that is not yet freed,
 * so that a table is recognised as one's own by its address alone: the
 * address resmon_gpu_profiler_of gave is compared, never the memory behind
 * a caller's table (which may be a copy, a wrapper, anything). */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static resmon_gpu *registry;

static void registry_add(resmon_gpu *g)
{
    pthread_mutex_lock(&registry_lock);
    g->next_open = registry;
    registry = g;
    pthread_mutex_unlock(&registry_lock);
}

static void registry_remove(resmon_gpu *g)
{
    pthread_mutex_lock(&registry_lock);
    for (resmon_gpu **at = &registry; *at; at = &(*at)->next_open)
        if (*at == g) {
            *at = g->next_open;
            break;
        }
    pthread_mutex_unlock(&registry_lock);
}

resmon_gpu *rm__gpu_of_table(const resmon_gpu_profiler *table)
{
    resmon_gpu *found = NULL;
    pthread_mutex_lock(&registry_lock);
    for (resmon_gpu *g = registry; g && !found; g = g->next_open)
        if (&g->profiler == table && table->ctx == g) /* ctx: a caller who wrote into it gets the callback path */
            found = g;
    pthread_mutex_unlock(&registry_lock);
    return found;
}

/* ---- listing and opening ------------------------------------------------- */

int resmon_gpu_list(resmon_gpu_info *out, size_t cap, size_t stride, size_t *count)
{
    if (!count || (out && cap && stride < RM__SIZE_THROUGH(resmon_gpu_info, memory_total_mb)))
        return -EINVAL;
    if (!out)
        cap = 0; /* the count only */
    rm__gpu_env env;
    gpu_env_read(&env);
    /* Each backend describes its devices straight into what is left of out,
     * so every entry counted within cap is written, and none beyond it. */
    size_t total = 0;
    for (size_t b = 0; b < BACKEND_COUNT; b++) {
        size_t room = total < cap ? cap - total : 0, n = 0;
        if (room == 0 || stride == sizeof *out) {
            backends[b]->list(&env, room ? (resmon_gpu_info *)((char *)out + total * stride) : NULL, room, &n);
        } else { /* a caller built against another resmon.h: describe, then copy with its stride */
            if (room > RM__GPU_MAX_DEVICES) /* no backend lists more; a huge cap allocates nothing */
                room = RM__GPU_MAX_DEVICES;
            resmon_gpu_info *bounce = calloc(room, sizeof *bounce);
            if (!bounce)
                return -ENOMEM;
            backends[b]->list(&env, bounce, room, &n);
            for (size_t i = 0; i < n && i < room; i++) {
                bounce[i].struct_size = rm__out_size(stride, sizeof bounce[i]);
                rm__copy_struct_out((char *)out + (total + i) * stride, stride, &bounce[i], sizeof bounce[i]);
            }
            free(bounce);
        }
        for (size_t i = 0; stride == sizeof *out && i < n && i < room; i++)
            ((resmon_gpu_info *)((char *)out + total * stride))[i].struct_size = sizeof *out;
        total += n;
    }
    *count = total;
    return 0;
}

static void gpu_free(resmon_gpu *g)
{
    registry_remove(g); /* a table at this address is nobody's from now on */
    for (size_t i = 0; i < g->count; i++)
        g->devices[i].backend->close(g->devices[i].ctx);
    pthread_mutex_destroy(&g->read_lock);
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
    if (pthread_mutex_init(&g->read_lock, NULL) != 0) {
        pthread_mutex_destroy(&g->last_lock);
        free(g);
        return NULL;
    }
    atomic_init(&g->holders, 1);
    g->profiler = (resmon_gpu_profiler){
        .struct_size = sizeof(resmon_gpu_profiler),
        .ctx = g,
        .get_utilization = own_utilization,
        .get_memory_usage = own_memory,
        .get_clock_info = own_clocks,
        .get_power_info = own_power,
        .get_energy = own_energy,
        .get_process_memory = own_process_memory,
        .retain = gpu_retain,
        .release = gpu_release,
    };
    return g;
}

static int open_device(const rm__gpu_env *env, gpu_device *d, const rm__gpu_backend *backend, const char *selector,
                       char *err, size_t errcap)
{
    rm__gpu_device_reading unknown;
    rm__gpu_reading_clear(&unknown);
    d->backend = backend;
    d->last = unknown.gauges;
    return backend->open(env, selector, &d->ctx, &d->info, err, errcap);
}

static int open_one(const rm__gpu_env *env, resmon_gpu **out, const rm__gpu_backend *backend, const char *selector,
                    char *err, size_t errcap)
{
    resmon_gpu *g = gpu_new(1);
    if (!g)
        return -ENOMEM;
    int rc = open_device(env, &g->devices[0], backend, selector, err, errcap);
    if (rc < 0) {
        gpu_free(g); /* no device open yet: count is 0 */
        return rc;
    }
    g->count = 1;
    *out = g;
    return 0;
}

/* Opens one more device of g (which has room); a device that will not open
 * is left out. */
static int add_device(const rm__gpu_env *env, resmon_gpu *g, const rm__gpu_backend *backend, const char *selector,
                      char *err, size_t errcap)
{
    int rc = open_device(env, &g->devices[g->count], backend, selector, err, errcap);
    if (rc == 0)
        g->count++;
    return rc;
}

/* Every device a backend lists; how many opened. */
static size_t add_every_device(const rm__gpu_env *env, resmon_gpu *g, const rm__gpu_backend *backend)
{
    size_t n = 0, before = g->count;
    backend->list(env, NULL, 0, &n);
    for (size_t i = 0; i < n && g->count < RM__GPU_MAX_DEVICES; i++) {
        char selector[24], reason[256];
        snprintf(selector, sizeof selector, "%zu", i);
        add_device(env, g, backend, selector, reason, sizeof reason);
    }
    return g->count - before;
}

/* The NVIDIA devices a CUDA job sees; how many opened. */
static size_t add_cuda_devices(const rm__gpu_env *env, resmon_gpu *g, const rm__cuda_devices *cuda)
{
    size_t before = g->count;
    for (size_t i = 0; i < cuda->count && g->count < RM__GPU_MAX_DEVICES; i++) {
        char reason[256];
        add_device(env, g, &rm__gpu_nvml, cuda->uuids[i], reason, sizeof reason);
    }
    return g->count - before;
}

/* Resolves CUDA_VISIBLE_DEVICES when set: 1 with cuda filled, 0 when unset
 * or NVML is missing (why says so), or -EINVAL/-ENOMEM with err. */
static int cuda_job_devices(const rm__gpu_env *env, rm__cuda_devices *cuda, char *why, size_t whycap, char *err,
                            size_t errcap)
{
    if (!env->cuda_visible_set)
        return 0;
    int rc = rm__nvml_cuda_devices(env, cuda, why, whycap);
    if (rc == -EINVAL || rc == -ENOMEM) {
        snprintf(err, errcap, "%s", why);
        return rc;
    }
    if (rc == 0 && cuda->count == 0)
        snprintf(why, whycap, "CUDA_VISIBLE_DEVICES='%.64s' hides every NVIDIA GPU from CUDA", env->cuda_visible);
    return rc == 0 && cuda->count > 0;
}

/* "auto": the NVIDIA GPUs a CUDA job sees, else the first GPU found (NVIDIA,
 * then AMD, then Intel). */
static int open_default(const rm__gpu_env *env, resmon_gpu **out, char *err, size_t errcap)
{
    rm__cuda_devices *cuda = calloc(1, sizeof *cuda);
    resmon_gpu *g = gpu_new(RM__GPU_MAX_DEVICES);
    if (!cuda || !g) {
        free(cuda);
        free(g);
        return -ENOMEM;
    }
    char reasons[BACKEND_COUNT][256] = {""};
    /* The longest message below: every reason whole, plus its own words. */
    _Static_assert(BACKEND_COUNT * 256 + 128 <= RESMON_ERR_MAX, "RESMON_ERR_MAX must hold every reason");
    int rc = cuda_job_devices(env, cuda, reasons[0], sizeof reasons[0], err, errcap);
    if (rc < 0)
        goto fail;
    if (rc > 0 && add_cuda_devices(env, g, cuda) > 0) {
        snprintf(g->selection, sizeof g->selection, "auto: the %zu NVIDIA GPU(s) that CUDA_VISIBLE_DEVICES='%.64s' "
                 "shows a CUDA job", g->count, env->cuda_visible);
        goto done;
    }
    if (rc > 0)
        snprintf(reasons[0], sizeof reasons[0], "the GPUs CUDA_VISIBLE_DEVICES='%.64s' names do not open",
                 env->cuda_visible);
    for (size_t b = env->cuda_visible_set ? 1 : 0; b < BACKEND_COUNT; b++) {
        if (add_device(env, g, backends[b], "0", reasons[b], sizeof reasons[b]) != 0)
            continue;
        const resmon_gpu_info *info = &g->devices[0].info;
        if (env->cuda_visible_set) /* a CUDA job: this GPU is not one it uses */
            snprintf(g->selection, sizeof g->selection, "auto: %s:0 (%s), which is not a GPU CUDA uses: %s",
                     info->backend, info->name, reasons[0]);
        else if (b == 0)
            snprintf(g->selection, sizeof g->selection, "auto: %s:0 (%s), the first NVIDIA GPU; CUDA_VISIBLE_DEVICES "
                     "is unset, so a CUDA job may use any of them (--gpu all reads every one)", info->backend,
                     info->name);
        else
            snprintf(g->selection, sizeof g->selection, "auto: %s:0 (%s), the first GPU found (no NVIDIA GPU: %s)",
                     info->backend, info->name, reasons[0]);
        goto done;
    }
    snprintf(err, errcap, "no GPU found (NVIDIA: %s; AMD: %s; Intel: %s)", reasons[0], reasons[1], reasons[2]);
    rc = -ENODEV;
fail:
    free(cuda);
    gpu_free(g);
    return rc;
done:
    free(cuda);
    *out = g;
    return 0;
}

/* "all": every GPU the job can see -- the NVIDIA ones CUDA_VISIBLE_DEVICES
 * shows CUDA when it is set, else every NVIDIA GPU -- and every AMD and Intel
 * GPU. */
static int open_all(const rm__gpu_env *env, resmon_gpu **out, char *err, size_t errcap)
{
    rm__cuda_devices *cuda = calloc(1, sizeof *cuda);
    resmon_gpu *g = gpu_new(RM__GPU_MAX_DEVICES);
    if (!cuda || !g) {
        free(cuda);
        free(g);
        return -ENOMEM;
    }
    char why[256] = "";
    int rc = cuda_job_devices(env, cuda, why, sizeof why, err, errcap);
    if (rc < 0) {
        free(cuda);
        gpu_free(g);
        return rc;
    }
    size_t nvidia = rc > 0 ? add_cuda_devices(env, g, cuda) : env->cuda_visible_set ? 0 : add_every_device(env, g, &rm__gpu_nvml);
    free(cuda);
    size_t amd = add_every_device(env, g, &rm__gpu_amd);
    size_t intel = add_every_device(env, g, &rm__gpu_intel);
    if (g->count == 0) {
        gpu_free(g);
        snprintf(err, errcap, "no GPU found by any backend (nvml, amd, intel)");
        return -ENODEV;
    }
    if (env->cuda_visible_set)
        snprintf(g->selection, sizeof g->selection, "all: %zu NVIDIA GPU(s), those CUDA_VISIBLE_DEVICES='%.64s' shows "
                 "a CUDA job; %zu AMD; %zu Intel", nvidia, env->cuda_visible, amd, intel);
    else
        snprintf(g->selection, sizeof g->selection, "all: %zu NVIDIA GPU(s), every one on the node "
                 "(CUDA_VISIBLE_DEVICES is unset); %zu AMD; %zu Intel", nvidia, amd, intel);
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
    rm__gpu_env env;
    gpu_env_read(&env);
    int rc = -EINVAL;
    if (!spec || strcmp(spec, "auto") == 0) {
        rc = open_default(&env, out, err, errcap);
    } else if (strcmp(spec, "all") == 0) {
        rc = open_all(&env, out, err, errcap);
    } else {
        const char *colon = strchr(spec, ':');
        size_t b = 0;
        for (; colon && b < BACKEND_COUNT; b++) {
            size_t len = strlen(backends[b]->name);
            if ((size_t)(colon - spec) == len && strncmp(spec, backends[b]->name, len) == 0) {
                rc = open_one(&env, out, backends[b], colon + 1, err, errcap);
                break;
            }
        }
        if (!colon || b == BACKEND_COUNT)
            snprintf(err, errcap, "unknown GPU '%s': use auto, all, nvml:N, nvml:GPU-<uuid>, amd:N or intel:N", spec);
    }
    if (rc == 0)
        registry_add(*out);
    return rc;
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

const char *resmon_gpu_selection(const resmon_gpu *g)
{
    return g ? g->selection : "";
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
    if (!g || (out && cap && stride < RM__SIZE_THROUGH(resmon_gpu_reading, power_limit_w)))
        return -EINVAL;
    if (!out)
        cap = 0; /* the count only */
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
