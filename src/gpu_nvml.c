/*
 * gpu_nvml.c -- NVIDIA GPUs through NVML, loaded at run time.
 *
 * No NVIDIA header or library is needed to build resmon: the few NVML types
 * used are declared here (layouts from NVML's public header, x86-64), and
 * libnvidia-ml.so.1 is opened with dlopen when a profiler is first opened
 * (RESMON_NVML_LIBRARY, read by gpu.c when the profiler or list opens, names
 * another path).  The library is initialised once
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

/* Loads and initialises NVML for one more user: the library at custom, or
 * the driver's own when custom is "".  Called with nvml.lock held. */
static int acquire_locked(const char *custom, char *err, size_t errcap)
{
    if (nvml.users > 0) {
        nvml.users++;
        return 0;
    }
    const char *tried = *custom ? custom : "libnvidia-ml.so.1";
    nvml.handle = dlopen(tried, RTLD_NOW | RTLD_LOCAL);
    if (!nvml.handle && !*custom) /* the unversioned name is usually only a dev symlink */
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
        info->memory_total_mb = (double)mem.total / RM__BYTES_PER_MIB;
}

static void nvml_list(const rm__gpu_env *env, resmon_gpu_info *out, size_t cap, size_t *count)
{
    char err[256];
    *count = 0;
    pthread_mutex_lock(&nvml.lock);
    if (acquire_locked(env->nvml_library, err, sizeof err) < 0) {
        pthread_mutex_unlock(&nvml.lock);
        return; /* no library or driver: no NVIDIA GPUs */
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

/* Finds the device a selector names; 0, or a negative errno with a sentence
 * in err.  Called with nvml.lock held and the library acquired. */
static int find_device_locked(const char *selector, nvmlDevice_t *handle, unsigned *index, char *err, size_t errcap)
{
    unsigned count = 0;
    nvml.count(&count);
    nvmlReturn_t nrc;
    if (rm__parse_index(selector, index) == 0) {
        nrc = *index < count ? nvml.by_index(*index, handle) : NVML_ERROR_NOT_FOUND;
    } else if (strncmp(selector, "GPU-", 4) == 0 || strncmp(selector, "MIG-", 4) == 0) {
        nrc = nvml.by_uuid ? nvml.by_uuid(selector, handle) : NVML_ERROR_FUNCTION_NOT_FOUND;
    } else if (strchr(selector, ':')) {
        nrc = nvml.by_pci ? nvml.by_pci(selector, handle) : NVML_ERROR_FUNCTION_NOT_FOUND;
    } else {
        snprintf(err, errcap, "NVIDIA GPUs are chosen by index, UUID (GPU-...) or PCI bus id, not '%s'", selector);
        return -EINVAL;
    }
    if (nrc != NVML_SUCCESS) {
        if (count == 0)
            return snprintf(err, errcap, "no NVIDIA GPU found"), -ENODEV;
        if (nrc == NVML_ERROR_NO_PERMISSION)
            return snprintf(err, errcap, "no permission to use NVIDIA GPU %s", selector), -EACCES;
        snprintf(err, errcap, "no NVIDIA GPU '%s' (found %u): %s", selector, count, nvml_error(nrc));
        return -ENOENT;
    }
    for (unsigned i = 0; i < count; i++) { /* its index, for the description */
        nvmlDevice_t h;
        if (nvml.by_index(i, &h) == NVML_SUCCESS && h == *handle) {
            *index = i;
            break;
        }
    }
    return 0;
}

static int nvml_open(const rm__gpu_env *env, const char *selector, void **ctx, resmon_gpu_info *info, char *err,
                     size_t errcap)
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
    int rc = acquire_locked(env->nvml_library, err, errcap);
    if (rc < 0)
        goto out;
    unsigned index = 0;
    rc = find_device_locked(selector, &d->handle, &index, err, errcap);
    if (rc < 0) {
        release_locked();
        goto out;
    }
    describe(d->handle, index, info);
    *ctx = d;
    d = NULL;
out:
    pthread_mutex_unlock(&nvml.lock);
    free(d);
    return rc;
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

/* Every call into a device goes through here: after GPU_IS_LOST the device
 * is not called again.  Any failure leaves that metric unknown. */
static int succeeded(nvml_device *d, nvmlReturn_t rc)
{
    if (rc == NVML_ERROR_GPU_IS_LOST)
        atomic_store(&d->lost, 1);
    return rc == NVML_SUCCESS;
}

static int lost(nvml_device *d)
{
    return atomic_load(&d->lost);
}

static void read_utilization(nvml_device *d, resmon_gpu_reading *out)
{
    nvmlUtilization_t u;
    if (nvml.utilization && !lost(d) && succeeded(d, nvml.utilization(d->handle, &u)))
        out->util_percent = u.gpu;
}

static void read_memory(nvml_device *d, resmon_gpu_reading *out)
{
    if (nvml.memory_v2 && !lost(d) && !atomic_load(&d->memory_v1)) {
        /* v2's used excludes reserved memory and matches nvidia-smi. */
        nvmlMemory_v2_t mem = {.version = NVML_MEMORY_V2_VERSION};
        nvmlReturn_t nrc = nvml.memory_v2(d->handle, &mem);
        if (nrc == NVML_SUCCESS) {
            out->mem_used_mb = (double)mem.used / RM__BYTES_PER_MIB;
            out->mem_total_mb = (double)mem.total / RM__BYTES_PER_MIB;
            return;
        }
        if (nrc != NVML_ERROR_FUNCTION_NOT_FOUND && nrc != NVML_ERROR_NOT_SUPPORTED) {
            succeeded(d, nrc); /* notes a lost GPU */
            return;
        }
        atomic_store(&d->memory_v1, 1); /* an older driver: v1 from now on */
    }
    nvmlMemory_t mem;
    if (nvml.memory_v1 && !lost(d) && succeeded(d, nvml.memory_v1(d->handle, &mem))) {
        out->mem_used_mb = (double)mem.used / RM__BYTES_PER_MIB;
        out->mem_total_mb = (double)mem.total / RM__BYTES_PER_MIB;
    }
}

static void read_clocks(nvml_device *d, resmon_gpu_reading *out)
{
    unsigned mhz;
    if (nvml.clock && !lost(d) && succeeded(d, nvml.clock(d->handle, NVML_CLOCK_GRAPHICS, &mhz)))
        out->clock_mhz = mhz;
    if (nvml.clock && !lost(d) && succeeded(d, nvml.clock(d->handle, NVML_CLOCK_MEM, &mhz)))
        out->mem_clock_mhz = mhz;
}

static void read_power(nvml_device *d, resmon_gpu_reading *out)
{
    unsigned milliwatts;
    if (nvml.power && !lost(d) && succeeded(d, nvml.power(d->handle, &milliwatts)))
        out->power_w = milliwatts / 1000.0;
    if (nvml.power_limit && !lost(d) && succeeded(d, nvml.power_limit(d->handle, &milliwatts)))
        out->power_limit_w = milliwatts / 1000.0;
}

static void read_energy(nvml_device *d, double *joules)
{
    unsigned long long millijoules;
    if (nvml.energy && !lost(d) && succeeded(d, nvml.energy(d->handle, &millijoules)))
        *joules = (double)millijoules / 1000.0;
}

/* The GPU memory of the given processes, MiB; NAN when unknown. */
static double process_memory(nvml_device *d, const pid_t *pids, size_t pid_count)
{
    if (!nvml.processes || lost(d))
        return NAN;
    /* The list can grow between calls: ask, then allocate with room to spare. */
    for (int attempt = 0; attempt < 3; attempt++) {
        unsigned count = d->process_capacity;
        nvmlReturn_t nrc = nvml.processes(d->handle, &count, count ? d->process_buffer : NULL);
        if (nrc == NVML_ERROR_INSUFFICIENT_SIZE || (nrc == NVML_SUCCESS && count > d->process_capacity)) {
            unsigned capacity = count + count / 2 + 8;
            unsigned char *grown = realloc(d->process_buffer, (size_t)capacity * nvml.process_stride);
            if (!grown)
                return NAN;
            d->process_buffer = grown;
            d->process_capacity = capacity;
            continue;
        }
        if (!succeeded(d, nrc))
            return NAN;
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
                    total += (double)used / RM__BYTES_PER_MIB;
                    break;
                }
        }
        return total;
    }
    return NAN; /* the list kept outgrowing the buffer */
}

static void nvml_read(void *ctx, const pid_t *pids, size_t pid_count, rm__gpu_device_reading *out)
{
    nvml_device *d = ctx;
    read_utilization(d, &out->gauges);
    read_memory(d, &out->gauges);
    read_clocks(d, &out->gauges);
    read_power(d, &out->gauges);
    read_energy(d, &out->energy_j);
    if (pid_count)
        out->proc_mem_mb = process_memory(d, pids, pid_count);
}

const rm__gpu_backend rm__gpu_nvml = {
    .name = "nvml",
    .list = nvml_list,
    .open = nvml_open,
    .close = nvml_close,
    .read = nvml_read,
};
