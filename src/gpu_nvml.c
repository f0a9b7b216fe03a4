/*
 * gpu_nvml.c -- NVIDIA GPUs through NVML, loaded at run time.
 *
 * No NVIDIA header or library is needed to build resmon: the few NVML types
 * used are declared here (layouts from NVML's public header, x86-64), and
 * libnvidia-ml.so.1 is opened with dlopen when a profiler is first opened
 * (RESMON_NVML_LIBRARY names another path).  The library is initialised once
 * per process for all resmon profilers and shut down with the last one.
 *
 * Newest versioned symbols are preferred, with fallbacks: nvmlInit_v2,
 * nvmlDeviceGetCount_v2, nvmlDeviceGetHandleByIndex_v2, nvmlDeviceGetMemoryInfo_v2
 * (a different struct, whose version word must be sizeof | 2 << 24: plain 2
 * gets FUNCTION_NOT_FOUND), and the running-process queries _v3, _v2, v1.
 * A metric the device does not support (NOT_SUPPORTED, e.g. utilization
 * under MIG) is unavailable; GPU_IS_LOST marks the device lost and every
 * later reading unavailable, without another call into the driver.
 */
#include "gpu_backend.h"
#include "internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct { unsigned int gpu, memory; } nvmlUtilization_t;
typedef struct { unsigned long long total, free, used; } nvmlMemory_t;
typedef struct {
    unsigned int version;
    unsigned long long total, reserved, free, used;
} nvmlMemory_v2_t;

enum {
    NVML_SUCCESS = 0,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_NO_PERMISSION = 4,
    NVML_ERROR_NOT_FOUND = 6,
    NVML_ERROR_INSUFFICIENT_SIZE = 7,
    NVML_ERROR_DRIVER_NOT_LOADED = 9,
    NVML_ERROR_FUNCTION_NOT_FOUND = 13,
    NVML_ERROR_GPU_IS_LOST = 15,
    NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
};
enum { NVML_CLOCK_GRAPHICS = 0, NVML_CLOCK_MEM = 2 };
#define NVML_MEMORY_V2_VERSION ((unsigned)(sizeof(nvmlMemory_v2_t) | (2u << 24)))
#define NVML_VALUE_NOT_AVAILABLE_ULL 0xFFFFFFFFFFFFFFFFULL

/* The library, shared by every open NVML profiler in the process. */
static struct {
    pthread_mutex_t lock;
    void *handle;
    int users;
    nvmlReturn_t (*init)(void);
    nvmlReturn_t (*shutdown)(void);
    const char *(*error_string)(nvmlReturn_t);
    nvmlReturn_t (*count)(unsigned *);
    nvmlReturn_t (*by_index)(unsigned, nvmlDevice_t *);
    nvmlReturn_t (*by_uuid)(const char *, nvmlDevice_t *);
    nvmlReturn_t (*by_pci)(const char *, nvmlDevice_t *);
    nvmlReturn_t (*name)(nvmlDevice_t, char *, unsigned);
    nvmlReturn_t (*uuid)(nvmlDevice_t, char *, unsigned);
    nvmlReturn_t (*utilization)(nvmlDevice_t, nvmlUtilization_t *);
    nvmlReturn_t (*memory_v1)(nvmlDevice_t, nvmlMemory_t *);
    nvmlReturn_t (*memory_v2)(nvmlDevice_t, nvmlMemory_v2_t *);
    nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned *);
    nvmlReturn_t (*power)(nvmlDevice_t, unsigned *);
    nvmlReturn_t (*power_limit)(nvmlDevice_t, unsigned *);
    nvmlReturn_t (*energy)(nvmlDevice_t, unsigned long long *);
    nvmlReturn_t (*processes)(nvmlDevice_t, unsigned *, void *);
    size_t process_stride; /* bytes per process entry of `processes` */
} nvml = {.lock = PTHREAD_MUTEX_INITIALIZER};

typedef struct nvml_device {
    nvmlDevice_t handle;
    atomic_int lost;       /* GPU_IS_LOST seen: no more calls */
    atomic_int memory_v1;  /* the _v2 memory call is missing or refused */
    unsigned char *process_buffer;
    unsigned process_capacity;
} nvml_device;

static void *symbol(const char *newest, const char *older)
{
    void *fn = dlsym(nvml.handle, newest);
    if (!fn && older)
        fn = dlsym(nvml.handle, older);
    return fn;
}

static const char *nvml_error(nvmlReturn_t rc)
{
    const char *text = nvml.error_string ? nvml.error_string(rc) : NULL;
    return text ? text : "unknown NVML error";
}

static void unload_locked(void)
{
    if (nvml.handle)
        dlclose(nvml.handle);
    nvml.handle = NULL;
}

/* Loads and initialises NVML for one more user.  Called with nvml.lock held. */
static int acquire_locked(char *err, size_t errcap)
{
    if (nvml.users > 0) {
        nvml.users++;
        return 0;
    }
    const char *custom = secure_getenv("RESMON_NVML_LIBRARY");
    const char *tried = custom && *custom ? custom : "libnvidia-ml.so.1";
    nvml.handle = dlopen(tried, RTLD_NOW | RTLD_LOCAL);
    if (!nvml.handle && !(custom && *custom)) /* the unversioned name is usually only a dev symlink */
        nvml.handle = dlopen("libnvidia-ml.so", RTLD_NOW | RTLD_LOCAL);
    if (!nvml.handle) {
        snprintf(err, errcap, "NVIDIA library %s not found: is the NVIDIA driver installed? (%s)", tried, dlerror());
        return -ENOENT;
    }
    nvml.init = symbol("nvmlInit_v2", "nvmlInit");
    nvml.shutdown = symbol("nvmlShutdown", NULL);
    nvml.error_string = symbol("nvmlErrorString", NULL);
    nvml.count = symbol("nvmlDeviceGetCount_v2", "nvmlDeviceGetCount");
    nvml.by_index = symbol("nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex");
    nvml.by_uuid = symbol("nvmlDeviceGetHandleByUUID", NULL);
    nvml.by_pci = symbol("nvmlDeviceGetHandleByPciBusId_v2", "nvmlDeviceGetHandleByPciBusId");
    nvml.name = symbol("nvmlDeviceGetName", NULL);
    nvml.uuid = symbol("nvmlDeviceGetUUID", NULL);
    nvml.utilization = symbol("nvmlDeviceGetUtilizationRates", NULL);
    nvml.memory_v1 = symbol("nvmlDeviceGetMemoryInfo", NULL);
    nvml.memory_v2 = symbol("nvmlDeviceGetMemoryInfo_v2", NULL);
    nvml.clock = symbol("nvmlDeviceGetClockInfo", NULL);
    nvml.power = symbol("nvmlDeviceGetPowerUsage", NULL);
    nvml.power_limit = symbol("nvmlDeviceGetEnforcedPowerLimit", NULL);
    nvml.energy = symbol("nvmlDeviceGetTotalEnergyConsumption", NULL);
    nvml.processes = symbol("nvmlDeviceGetComputeRunningProcesses_v3", NULL);
    nvml.process_stride = 24;
    if (nvml.processes) {
        /* Drivers 535.43-535.86 wrote 32-byte entries from _v3 without a
         * version bump; they are the ones with ConfComputeMemSizeInfo but
         * not RunningProcessDetailList (nvitop's test). */
        if (dlsym(nvml.handle, "nvmlDeviceGetConfComputeMemSizeInfo") &&
            !dlsym(nvml.handle, "nvmlDeviceGetRunningProcessDetailList"))
            nvml.process_stride = 32;
    } else if ((nvml.processes = symbol("nvmlDeviceGetComputeRunningProcesses_v2", NULL)) == NULL) {
        nvml.processes = symbol("nvmlDeviceGetComputeRunningProcesses", NULL);
        nvml.process_stride = 16;
    }
    if (!nvml.init || !nvml.shutdown || !nvml.count || !nvml.by_index) {
        snprintf(err, errcap, "%s lacks the NVML functions resmon needs (nvmlInit, nvmlDeviceGetCount, "
                              "nvmlDeviceGetHandleByIndex): not an NVML library?", tried);
        unload_locked();
        return -EIO;
    }
    nvmlReturn_t rc = nvml.init();
    if (rc != NVML_SUCCESS) {
        int result = -EIO;
        if (rc == NVML_ERROR_LIB_RM_VERSION_MISMATCH)
            snprintf(err, errcap, "NVIDIA driver/library version mismatch (the driver was upgraded "
                                  "without a reboot, or %s is from another driver version)", tried);
        else if (rc == NVML_ERROR_DRIVER_NOT_LOADED)
            snprintf(err, errcap, "NVIDIA driver not loaded"), result = -ENODEV;
        else if (rc == NVML_ERROR_NO_PERMISSION)
            snprintf(err, errcap, "no permission to use NVML"), result = -EACCES;
        else
            snprintf(err, errcap, "NVML initialisation failed: %s", nvml_error(rc));
        unload_locked();
        return result;
    }
    nvml.users = 1;
    return 0;
}

static void release_locked(void)
{
    if (nvml.users > 0 && --nvml.users == 0) {
        nvml.shutdown();
        unload_locked();
    }
}

static int errno_of(nvmlReturn_t rc)
{
    switch (rc) {
    case NVML_SUCCESS: return 0;
    case NVML_ERROR_NOT_SUPPORTED: return -ENOTSUP;
    case NVML_ERROR_NO_PERMISSION: return -EACCES;
    case NVML_ERROR_NOT_FOUND: return -ENOENT;
    case NVML_ERROR_GPU_IS_LOST: return -ENODEV;
    default: return -EIO;
    }
}

static void describe(nvmlDevice_t handle, unsigned index, resmon_gpu_info *info)
{
    memset(info, 0, sizeof *info);
    snprintf(info->backend, sizeof info->backend, "nvml");
    info->index = index;
    if (!nvml.name || nvml.name(handle, info->name, sizeof info->name) != NVML_SUCCESS)
        snprintf(info->name, sizeof info->name, "NVIDIA GPU %u", index);
    if (!nvml.uuid || nvml.uuid(handle, info->id, sizeof info->id) != NVML_SUCCESS)
        info->id[0] = '\0';
    info->memory_total_mb = NAN;
    nvmlMemory_t mem;
    if (nvml.memory_v1 && nvml.memory_v1(handle, &mem) == NVML_SUCCESS)
        info->memory_total_mb = (double)mem.total / 1048576.0;
}

static int nvml_list(resmon_gpu_info *out, size_t cap, size_t *count)
{
    char err[256];
    *count = 0;
    pthread_mutex_lock(&nvml.lock);
    if (acquire_locked(err, sizeof err) < 0) {
        pthread_mutex_unlock(&nvml.lock);
        return 0; /* no library or driver: no NVIDIA GPUs */
    }
    unsigned n = 0;
    if (nvml.count(&n) != NVML_SUCCESS)
        n = 0;
    for (unsigned i = 0; i < n && i < cap; i++) {
        nvmlDevice_t handle;
        if (nvml.by_index(i, &handle) == NVML_SUCCESS)
            describe(handle, i, &out[i]);
        else { /* counted, yet refused (NO_PERMISSION): listed by index only */
            memset(&out[i], 0, sizeof out[i]);
            snprintf(out[i].backend, sizeof out[i].backend, "nvml");
            out[i].index = i;
            snprintf(out[i].name, sizeof out[i].name, "NVIDIA GPU %u (not accessible)", i);
            out[i].memory_total_mb = NAN;
        }
    }
    *count = n;
    release_locked();
    pthread_mutex_unlock(&nvml.lock);
    return 0;
}

/* The NVIDIA GPU that CUDA_VISIBLE_DEVICES (else NVIDIA_VISIBLE_DEVICES)
 * puts first, as a selector: "0" when unset.  NULL when the variable hides
 * every NVIDIA GPU. */
static const char *visible_first(char *buf, size_t cap)
{
    const char *vars[] = {"CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES"};
    for (int i = 0; i < 2; i++) {
        const char *value = getenv(vars[i]);
        if (!value)
            continue;
        size_t len = strcspn(value, ",");
        rm__copy_string(buf, cap, value, len);
        if (strcmp(buf, "all") == 0)
            return "0";
        if (len == 0 || strcmp(buf, "none") == 0 || strcmp(buf, "void") == 0 || buf[0] == '-')
            return NULL;
        return buf;
    }
    return "0";
}

static int nvml_open(const char *selector, void **ctx, resmon_gpu_info *info, char *err, size_t errcap)
{
    char visible[128];
    if (strcmp(selector, "default") == 0) {
        selector = visible_first(visible, sizeof visible);
        if (!selector) {
            snprintf(err, errcap, "CUDA_VISIBLE_DEVICES/NVIDIA_VISIBLE_DEVICES hide every NVIDIA GPU");
            return -ENODEV;
        }
    }
    nvml_device *d = calloc(1, sizeof *d);
    if (!d)
        return -ENOMEM;
    pthread_mutex_lock(&nvml.lock);
    int rc = acquire_locked(err, errcap);
    if (rc < 0) {
        pthread_mutex_unlock(&nvml.lock);
        free(d);
        return rc;
    }
    unsigned count = 0, index = 0;
    nvml.count(&count);
    nvmlReturn_t nrc;
    if (rm__parse_index(selector, &index) == 0) {
        nrc = index < count ? nvml.by_index(index, &d->handle) : NVML_ERROR_NOT_FOUND;
    } else if (strncmp(selector, "GPU-", 4) == 0 || strncmp(selector, "MIG-", 4) == 0) {
        nrc = nvml.by_uuid ? nvml.by_uuid(selector, &d->handle) : NVML_ERROR_FUNCTION_NOT_FOUND;
    } else if (strchr(selector, ':')) {
        nrc = nvml.by_pci ? nvml.by_pci(selector, &d->handle) : NVML_ERROR_FUNCTION_NOT_FOUND;
    } else {
        snprintf(err, errcap, "NVIDIA GPUs are chosen by index, UUID (GPU-...) or PCI bus id, not '%s'", selector);
        nrc = -1;
        rc = -EINVAL;
    }
    if (rc == 0 && nrc != NVML_SUCCESS) {
        if (count == 0)
            snprintf(err, errcap, "no NVIDIA GPU found"), rc = -ENODEV;
        else if (nrc == NVML_ERROR_NO_PERMISSION)
            snprintf(err, errcap, "no permission to use NVIDIA GPU %s", selector), rc = -EACCES;
        else
            snprintf(err, errcap, "no NVIDIA GPU '%s' (found %u): %s", selector, count, nvml_error(nrc)), rc = -ENOENT;
    }
    if (rc < 0) {
        release_locked();
        pthread_mutex_unlock(&nvml.lock);
        free(d);
        return rc;
    }
    for (unsigned i = 0; i < count; i++) { /* its index, for the description */
        nvmlDevice_t h;
        if (nvml.by_index(i, &h) == NVML_SUCCESS && h == d->handle) {
            index = i;
            break;
        }
    }
    describe(d->handle, index, info);
    pthread_mutex_unlock(&nvml.lock);
    *ctx = d;
    return 0;
}

static void nvml_close(void *ctx)
{
    nvml_device *d = ctx;
    if (!d)
        return;
    free(d->process_buffer);
    free(d);
    pthread_mutex_lock(&nvml.lock);
    release_locked();
    pthread_mutex_unlock(&nvml.lock);
}

/* Every reading goes through here: a lost device is not called again. */
static int check(nvml_device *d, nvmlReturn_t rc)
{
    if (rc == NVML_ERROR_GPU_IS_LOST)
        atomic_store(&d->lost, 1);
    return errno_of(rc);
}

#define RETURN_IF_LOST(d)            \
    do {                             \
        if (atomic_load(&(d)->lost)) \
            return -ENODEV;          \
    } while (0)

static int nvml_utilization(void *ctx, double *percent)
{
    nvml_device *d = ctx;
    RETURN_IF_LOST(d);
    if (!nvml.utilization)
        return -ENOTSUP;
    nvmlUtilization_t u;
    int rc = check(d, nvml.utilization(d->handle, &u));
    if (rc == 0)
        *percent = u.gpu;
    return rc;
}

static int nvml_memory(void *ctx, resmon_gpu_memory *out)
{
    nvml_device *d = ctx;
    RETURN_IF_LOST(d);
    if (nvml.memory_v2 && !atomic_load(&d->memory_v1)) {
        /* v2's used excludes reserved memory and matches nvidia-smi. */
        nvmlMemory_v2_t mem = {.version = NVML_MEMORY_V2_VERSION};
        nvmlReturn_t nrc = nvml.memory_v2(d->handle, &mem);
        if (nrc == NVML_SUCCESS) {
            out->gpu_memory_used_mb = (double)mem.used / 1048576.0;
            out->gpu_memory_total_mb = (double)mem.total / 1048576.0;
            return 0;
        }
        if (nrc != NVML_ERROR_FUNCTION_NOT_FOUND && nrc != NVML_ERROR_NOT_SUPPORTED)
            return check(d, nrc);
        atomic_store(&d->memory_v1, 1); /* an older driver: v1 from now on */
    }
    if (!nvml.memory_v1)
        return -ENOTSUP;
    nvmlMemory_t mem;
    int rc = check(d, nvml.memory_v1(d->handle, &mem));
    if (rc == 0) {
        out->gpu_memory_used_mb = (double)mem.used / 1048576.0;
        out->gpu_memory_total_mb = (double)mem.total / 1048576.0;
    }
    return rc;
}

static int nvml_clocks(void *ctx, resmon_gpu_clocks *out)
{
    nvml_device *d = ctx;
    RETURN_IF_LOST(d);
    if (!nvml.clock)
        return -ENOTSUP;
    unsigned graphics, memory;
    int rc = check(d, nvml.clock(d->handle, NVML_CLOCK_GRAPHICS, &graphics));
    if (rc < 0)
        return rc;
    out->gpu_clock_mhz = graphics;
    out->mem_clock_mhz = check(d, nvml.clock(d->handle, NVML_CLOCK_MEM, &memory)) == 0 ? (double)memory : NAN;
    return 0;
}

static int nvml_power(void *ctx, resmon_gpu_power *out)
{
    nvml_device *d = ctx;
    RETURN_IF_LOST(d);
    if (!nvml.power)
        return -ENOTSUP;
    unsigned milliwatts, limit;
    int rc = check(d, nvml.power(d->handle, &milliwatts));
    if (rc < 0)
        return rc;
    out->power_draw_w = milliwatts / 1000.0;
    out->power_limit_w = nvml.power_limit && check(d, nvml.power_limit(d->handle, &limit)) == 0 ? limit / 1000.0 : NAN;
    return 0;
}

static int nvml_energy(void *ctx, double *joules)
{
    nvml_device *d = ctx;
    RETURN_IF_LOST(d);
    if (!nvml.energy)
        return -ENOTSUP;
    unsigned long long millijoules;
    int rc = check(d, nvml.energy(d->handle, &millijoules));
    if (rc == 0)
        *joules = (double)millijoules / 1000.0;
    return rc;
}

static int nvml_process_memory(void *ctx, const pid_t *pids, size_t pid_count, double *mb)
{
    nvml_device *d = ctx;
    RETURN_IF_LOST(d);
    if (!nvml.processes)
        return -ENOTSUP;
    /* The list can grow between calls: ask, then allocate with room to spare. */
    for (int attempt = 0; attempt < 3; attempt++) {
        unsigned count = d->process_capacity;
        nvmlReturn_t nrc = nvml.processes(d->handle, &count, count ? d->process_buffer : NULL);
        if (nrc == NVML_ERROR_INSUFFICIENT_SIZE || (nrc == NVML_SUCCESS && count > d->process_capacity)) {
            unsigned capacity = count + count / 2 + 8;
            unsigned char *grown = realloc(d->process_buffer, (size_t)capacity * nvml.process_stride);
            if (!grown)
                return -ENOMEM;
            d->process_buffer = grown;
            d->process_capacity = capacity;
            continue;
        }
        int rc = check(d, nrc);
        if (rc < 0)
            return rc;
        double total = 0;
        for (unsigned i = 0; i < count; i++) {
            const unsigned char *entry = d->process_buffer + (size_t)i * nvml.process_stride;
            unsigned pid;
            unsigned long long used;
            memcpy(&pid, entry, sizeof pid);         /* pid @0 */
            memcpy(&used, entry + 8, sizeof used);   /* usedGpuMemory @8 */
            if (used == NVML_VALUE_NOT_AVAILABLE_ULL)
                continue;
            for (size_t k = 0; k < pid_count; k++)
                if ((unsigned)pids[k] == pid) {
                    total += (double)used / 1048576.0;
                    break;
                }
        }
        *mb = total;
        return 0;
    }
    return -EAGAIN;
}

const rm__gpu_backend rm__gpu_nvml = {
    .name = "nvml",
    .list = nvml_list,
    .open = nvml_open,
    .close = nvml_close,
    .utilization = nvml_utilization,
    .memory = nvml_memory,
    .clocks = nvml_clocks,
    .power = nvml_power,
    .energy = nvml_energy,
    .process_memory = nvml_process_memory,
};
