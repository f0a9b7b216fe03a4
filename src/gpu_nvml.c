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
 * under MIG) is absent; any other failure makes it unavailable for that
 * reading (see gpu_reading.h); GPU_IS_LOST marks the device lost and every
 * later reading unavailable, without another call into the driver.
 *
 * Opening touches only the device asked for: nvmlDeviceGetHandleByIndex
 * initialises the GPU it returns (nvml.h), so walking every index to find one
 * lets a faulty or foreign GPU stall or fail opening a healthy one.  Only
 * listing, a UUID prefix and a CUDA index (which needs every device's PCI bus
 * id) walk them all.
 *
 * NVIDIA_VISIBLE_DEVICES is not read: it is the container runtime's
 * variable, and inside a container NVML already sees only the injected GPUs,
 * numbered from 0 (CDI even sets it to "void" while injecting GPUs).
 */
#include "gpu_backend.h"
#include "gpu_cuda_visible.h"
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
typedef struct { /* nvmlPciInfo_t as _v3 fills it */
    char bus_id_legacy[16];
    unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
    char bus_id[32];
} nvmlPciInfo_t;

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
    nvmlReturn_t (*index_of)(nvmlDevice_t, unsigned *);
    nvmlReturn_t (*pci_info)(nvmlDevice_t, nvmlPciInfo_t *);
    nvmlReturn_t (*is_mig)(nvmlDevice_t, unsigned *);
    nvmlReturn_t (*mig_parent)(nvmlDevice_t, nvmlDevice_t *);
    nvmlReturn_t (*mig_count)(nvmlDevice_t, unsigned *);
    nvmlReturn_t (*mig_by_index)(nvmlDevice_t, unsigned, nvmlDevice_t *);
    nvmlReturn_t (*gpu_instance_id)(nvmlDevice_t, unsigned *);
    nvmlReturn_t (*compute_instance_id)(nvmlDevice_t, unsigned *);
    /* Running processes: CUDA compute ones, and MPS clients (which the
     * compute list does not show). */
    nvmlReturn_t (*processes)(nvmlDevice_t, unsigned *, void *);
    nvmlReturn_t (*mps_processes)(nvmlDevice_t, unsigned *, void *);
    size_t process_stride; /* bytes per process entry of both */
} nvml = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* One running-process list of a device, kept between readings. */
typedef struct process_list {
    unsigned char *entries;
    unsigned capacity, count;
} process_list;

typedef struct nvml_device {
    nvmlDevice_t handle;
    atomic_int lost;       /* GPU_IS_LOST seen: no more calls */
    atomic_int memory_v1;  /* the _v2 memory call is missing or refused */
    process_list compute, mps;
} nvml_device;

/* Stores NVML's function `newest` (or else `older`, or else NULL) into the
 * function pointer at fn_slot.  ISO C has no conversion from dlsym's void *
 * to a function pointer; POSIX guarantees the two have the same
 * representation, so the bytes are copied instead of cast, which stays
 * correct under -Wpedantic.  Returns whether it was found. */
static int load_symbol(void *fn_slot, const char *newest, const char *older)
{
    void *fn = dlsym(nvml.handle, newest);
    if (!fn && older)
        fn = dlsym(nvml.handle, older);
    memcpy(fn_slot, &fn, sizeof fn);
    return fn != NULL;
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
    load_symbol(&nvml.init, "nvmlInit_v2", "nvmlInit");
    load_symbol(&nvml.shutdown, "nvmlShutdown", NULL);
    load_symbol(&nvml.error_string, "nvmlErrorString", NULL);
    load_symbol(&nvml.count, "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount");
    load_symbol(&nvml.by_index, "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex");
    load_symbol(&nvml.by_uuid, "nvmlDeviceGetHandleByUUID", NULL);
    load_symbol(&nvml.by_pci, "nvmlDeviceGetHandleByPciBusId_v2", "nvmlDeviceGetHandleByPciBusId");
    load_symbol(&nvml.name, "nvmlDeviceGetName", NULL);
    load_symbol(&nvml.uuid, "nvmlDeviceGetUUID", NULL);
    load_symbol(&nvml.utilization, "nvmlDeviceGetUtilizationRates", NULL);
    load_symbol(&nvml.memory_v1, "nvmlDeviceGetMemoryInfo", NULL);
    load_symbol(&nvml.memory_v2, "nvmlDeviceGetMemoryInfo_v2", NULL);
    load_symbol(&nvml.clock, "nvmlDeviceGetClockInfo", NULL);
    load_symbol(&nvml.power, "nvmlDeviceGetPowerUsage", NULL);
    load_symbol(&nvml.power_limit, "nvmlDeviceGetEnforcedPowerLimit", NULL);
    load_symbol(&nvml.energy, "nvmlDeviceGetTotalEnergyConsumption", NULL);
    load_symbol(&nvml.index_of, "nvmlDeviceGetIndex", NULL);
    load_symbol(&nvml.pci_info, "nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2");
    load_symbol(&nvml.is_mig, "nvmlDeviceIsMigDeviceHandle", NULL);
    load_symbol(&nvml.mig_parent, "nvmlDeviceGetDeviceHandleFromMigDeviceHandle", NULL);
    load_symbol(&nvml.mig_count, "nvmlDeviceGetMaxMigDeviceCount", NULL);
    load_symbol(&nvml.mig_by_index, "nvmlDeviceGetMigDeviceHandleByIndex", NULL);
    load_symbol(&nvml.gpu_instance_id, "nvmlDeviceGetGpuInstanceId", NULL);
    load_symbol(&nvml.compute_instance_id, "nvmlDeviceGetComputeInstanceId", NULL);
    /* _v3, else _v2 (both 24-byte entries), else v1 (16 bytes); the MPS
     * query follows the version the compute query has. */
    nvml.process_stride = 24;
    if (load_symbol(&nvml.processes, "nvmlDeviceGetComputeRunningProcesses_v3", NULL)) {
        load_symbol(&nvml.mps_processes, "nvmlDeviceGetMPSComputeRunningProcesses_v3", NULL);
        /* Drivers 535.43-535.86 wrote 32-byte entries from _v3 without a
         * version bump; they are the ones with ConfComputeMemSizeInfo but
         * not RunningProcessDetailList (nvitop's test). */
        if (dlsym(nvml.handle, "nvmlDeviceGetConfComputeMemSizeInfo") &&
            !dlsym(nvml.handle, "nvmlDeviceGetRunningProcessDetailList"))
            nvml.process_stride = 32;
    } else if (load_symbol(&nvml.processes, "nvmlDeviceGetComputeRunningProcesses_v2", NULL)) {
        load_symbol(&nvml.mps_processes, "nvmlDeviceGetMPSComputeRunningProcesses_v2", NULL);
    } else {
        load_symbol(&nvml.processes, "nvmlDeviceGetComputeRunningProcesses", NULL);
        load_symbol(&nvml.mps_processes, "nvmlDeviceGetMPSComputeRunningProcesses", NULL);
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

/* Total memory in MiB: from _v2 where it answers, else v1; NAN when neither
 * does or the total is 0 (unified-memory parts such as GB10 have no memory
 * of their own: v1 answers NOT_SUPPORTED, _v2 may say 0). */
static double memory_total_mb(nvmlDevice_t handle)
{
    nvmlMemory_v2_t v2 = {.version = NVML_MEMORY_V2_VERSION};
    nvmlMemory_t v1;
    unsigned long long total = 0;
    if (nvml.memory_v2 && nvml.memory_v2(handle, &v2) == NVML_SUCCESS)
        total = v2.total;
    else if (nvml.memory_v1 && nvml.memory_v1(handle, &v1) == NVML_SUCCESS)
        total = v1.total;
    return total ? (double)total / RM__BYTES_PER_MIB : NAN;
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
    info->memory_total_mb = memory_total_mb(handle);
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

/* The NVML index of a device handle; a MIG instance's is its parent GPU's.
 * Asks only about this device. */
static unsigned index_of_locked(nvmlDevice_t handle, unsigned fallback)
{
    unsigned is_mig = 0, index;
    nvmlDevice_t parent;
    if (nvml.is_mig && nvml.mig_parent && nvml.is_mig(handle, &is_mig) == NVML_SUCCESS && is_mig &&
        nvml.mig_parent(handle, &parent) == NVML_SUCCESS)
        handle = parent;
    if (nvml.index_of && nvml.index_of(handle, &index) == NVML_SUCCESS)
        return index;
    return fallback;
}

/* The one GPU whose UUID begins with prefix (CUDA accepts a unique prefix
 * such as GPU-8932f937).  Walks every device: used only when no UUID equals
 * the prefix.  NVML_ERROR_NOT_FOUND when none or several match. */
static nvmlReturn_t by_uuid_prefix_locked(const char *prefix, nvmlDevice_t *handle)
{
    unsigned count = 0, matches = 0;
    if (nvml.count(&count) != NVML_SUCCESS || !nvml.uuid)
        return NVML_ERROR_NOT_FOUND;
    for (unsigned i = 0; i < count; i++) {
        nvmlDevice_t h;
        char uuid[96];
        if (nvml.by_index(i, &h) == NVML_SUCCESS && nvml.uuid(h, uuid, sizeof uuid) == NVML_SUCCESS &&
            strncmp(uuid, prefix, strlen(prefix)) == 0) {
            *handle = h;
            matches++;
        }
    }
    return matches == 1 ? NVML_SUCCESS : NVML_ERROR_NOT_FOUND;
}

static nvmlReturn_t by_uuid_locked(const char *uuid, nvmlDevice_t *handle)
{
    if (!nvml.by_uuid)
        return NVML_ERROR_FUNCTION_NOT_FOUND;
    nvmlReturn_t nrc = nvml.by_uuid(uuid, handle);
    if (nrc != NVML_SUCCESS && strncmp(uuid, "GPU-", 4) == 0)
        nrc = by_uuid_prefix_locked(uuid, handle);
    return nrc;
}

/* How a selector names an NVIDIA device. */
typedef enum selector_form { BY_INDEX, BY_UUID, BY_PCI_BUS_ID, NOT_A_SELECTOR } selector_form;

static selector_form form_of(const char *selector, unsigned *index)
{
    if (rm__parse_index(selector, index) == 0)
        return BY_INDEX;
    if (strncmp(selector, "GPU-", 4) == 0 || strncmp(selector, "MIG-", 4) == 0)
        return BY_UUID;
    return strchr(selector, ':') ? BY_PCI_BUS_ID : NOT_A_SELECTOR;
}

/* Finds the device a selector names; 0, or a negative errno with a sentence
 * in err.  Called with nvml.lock held and the library acquired. */
static int find_device_locked(const char *selector, nvmlDevice_t *handle, unsigned *index, char *err, size_t errcap)
{
    unsigned count = 0;
    nvml.count(&count);
    nvmlReturn_t nrc;
    selector_form form = form_of(selector, index);
    int by_index = form == BY_INDEX;
    if (by_index)
        nrc = *index < count ? nvml.by_index(*index, handle) : NVML_ERROR_NOT_FOUND;
    else if (form == BY_UUID)
        nrc = by_uuid_locked(selector, handle);
    else
        nrc = nvml.by_pci ? nvml.by_pci(selector, handle) : NVML_ERROR_FUNCTION_NOT_FOUND;
    if (nrc != NVML_SUCCESS) {
        if (count == 0)
            return snprintf(err, errcap, "no NVIDIA GPU found"), -ENODEV;
        if (nrc == NVML_ERROR_NO_PERMISSION)
            return snprintf(err, errcap, "no permission to use NVIDIA GPU %s", selector), -EACCES;
        snprintf(err, errcap, "no NVIDIA GPU '%s' (found %u): %s", selector, count, nvml_error(nrc));
        return -ENOENT;
    }
    if (!by_index)
        *index = index_of_locked(*handle, 0);
    return 0;
}

static int nvml_open(const rm__gpu_env *env, const char *selector, void **ctx, resmon_gpu_info *info, char *err,
                     size_t errcap)
{
    /* A selector that names nothing is bad input whether or not a driver is
     * here: said as such (EINVAL, a ValueError in Python), not as a missing
     * library (stop 53's attack: nvml:-1 was FileNotFoundError). */
    unsigned unused;
    if (form_of(selector, &unused) == NOT_A_SELECTOR) {
        snprintf(err, errcap, "NVIDIA GPUs are chosen by index, UUID (GPU-...) or PCI bus id, not '%s'", selector);
        return -EINVAL;
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

/* ---- CUDA_VISIBLE_DEVICES, resolved as the CUDA runtime resolves it ------- */

/* CUDA's device order: PCI bus order under CUDA_DEVICE_ORDER=PCI_BUS_ID.  The
 * default, FASTEST_FIRST, ranks devices by an unpublished speed estimate and
 * breaks ties by PCI bus id, so on a node whose GPUs are all one model (one
 * PCI device id) it is PCI bus order too; on a mixed node it cannot be reproduced without the CUDA
 * runtime, and an index there is refused (-EINVAL) rather than guessed. */
typedef struct cuda_order {
    unsigned count;
    unsigned nvml_index[RM__GPU_MAX_DEVICES]; /* CUDA index -> NVML index */
} cuda_order;

static int compare_pci(const nvmlPciInfo_t *a, const nvmlPciInfo_t *b)
{
    if (a->domain != b->domain)
        return a->domain < b->domain ? -1 : 1;
    if (a->bus != b->bus)
        return a->bus < b->bus ? -1 : 1;
    return a->device < b->device ? -1 : a->device > b->device;
}

static int cuda_order_locked(const rm__gpu_env *env, cuda_order *order, char *err, size_t errcap)
{
    nvmlPciInfo_t pci[RM__GPU_MAX_DEVICES];
    int mixed = 0;
    order->count = 0;
    unsigned count = 0;
    if (nvml.count(&count) != NVML_SUCCESS)
        count = 0;
    for (unsigned i = 0; i < count && i < RM__GPU_MAX_DEVICES; i++) {
        nvmlDevice_t h;
        if (nvml.by_index(i, &h) != NVML_SUCCESS || !nvml.pci_info || nvml.pci_info(h, &pci[i]) != NVML_SUCCESS) {
            snprintf(err, errcap, "cannot read the PCI bus id of NVIDIA GPU %u, which CUDA's device order needs", i);
            return -EIO;
        }
        /* One model, one PCI device id: then fastest-first is PCI order. */
        mixed |= pci[i].pci_device_id != pci[0].pci_device_id;
        /* Insertion sort by PCI bus id: a handful of devices. */
        unsigned at = order->count;
        while (at > 0 && compare_pci(&pci[order->nvml_index[at - 1]], &pci[i]) > 0) {
            order->nvml_index[at] = order->nvml_index[at - 1];
            at--;
        }
        order->nvml_index[at] = i;
        order->count++;
    }
    if (mixed && !env->cuda_order_pci_bus) {
        snprintf(err, errcap, "CUDA_VISIBLE_DEVICES='%s' names GPUs by CUDA index, and CUDA's default "
                              "fastest-first order on this node of different GPU models cannot be reproduced "
                              "without the CUDA runtime: use GPU UUIDs, or set CUDA_DEVICE_ORDER=PCI_BUS_ID",
                 env->cuda_visible);
        return -EINVAL;
    }
    return 0;
}

/* The MIG instance gi/ci of the GPU named by gpu_uuid (the older form
 * MIG-GPU-<uuid>/<gi>/<ci>). */
static nvmlReturn_t mig_instance_locked(const char *gpu_uuid, unsigned gi, unsigned ci, nvmlDevice_t *handle)
{
    nvmlDevice_t parent;
    unsigned slots = 0;
    if (by_uuid_locked(gpu_uuid, &parent) != NVML_SUCCESS || !nvml.mig_count || !nvml.mig_by_index ||
        !nvml.gpu_instance_id || !nvml.compute_instance_id || nvml.mig_count(parent, &slots) != NVML_SUCCESS)
        return NVML_ERROR_NOT_FOUND;
    for (unsigned i = 0; i < slots; i++) {
        nvmlDevice_t mig;
        unsigned g, c;
        if (nvml.mig_by_index(parent, i, &mig) == NVML_SUCCESS && nvml.gpu_instance_id(mig, &g) == NVML_SUCCESS &&
            nvml.compute_instance_id(mig, &c) == NVML_SUCCESS && g == gi && c == ci) {
            *handle = mig;
            return NVML_SUCCESS;
        }
    }
    return NVML_ERROR_NOT_FOUND;
}

/* What the CUDA_VISIBLE_DEVICES grammar asks NVML (see gpu_cuda_visible.h);
 * CUDA's order is worked out at the first index, if any. */
typedef struct cuda_resolver {
    const rm__gpu_env *env;
    cuda_order order;
    int have_order;
    char *err;
    size_t errcap;
} cuda_resolver;

/* Called with nvml.lock held and the library acquired. */
static int resolve_cuda_entry_locked(void *ctx, const rm__cuda_entry *entry, char uuid[RM__CUDA_UUID_MAX])
{
    cuda_resolver *r = ctx;
    nvmlDevice_t handle;
    nvmlReturn_t nrc = NVML_ERROR_NOT_FOUND;
    switch (entry->kind) {
    case RM__CUDA_INDEX:
        if (!r->have_order) {
            int rc = cuda_order_locked(r->env, &r->order, r->err, r->errcap);
            if (rc < 0)
                return rc;
            r->have_order = 1;
        }
        if (entry->index < r->order.count)
            nrc = nvml.by_index(r->order.nvml_index[entry->index], &handle);
        break;
    case RM__CUDA_UUID:
        nrc = by_uuid_locked(entry->uuid, &handle);
        break;
    case RM__CUDA_MIG_INSTANCE:
        nrc = mig_instance_locked(entry->uuid, entry->gpu_instance, entry->compute_instance, &handle);
        break;
    }
    if (nrc != NVML_SUCCESS || !nvml.uuid || nvml.uuid(handle, uuid, RM__CUDA_UUID_MAX) != NVML_SUCCESS)
        return -ENOENT;
    return 0;
}

int rm__nvml_cuda_devices(const rm__gpu_env *env, rm__cuda_devices *out, char *err, size_t errcap)
{
    out->count = 0;
    pthread_mutex_lock(&nvml.lock);
    int rc = acquire_locked(env->nvml_library, err, errcap);
    if (rc == 0) {
        cuda_resolver resolver = {.env = env, .err = err, .errcap = errcap};
        rm__cuda_query query = {.ctx = &resolver, .resolve = resolve_cuda_entry_locked};
        rc = rm__cuda_visible_devices(env->cuda_visible, &query, out->uuids, RM__GPU_MAX_DEVICES, &out->count);
        release_locked();
    }
    pthread_mutex_unlock(&nvml.lock);
    return rc;
}

static void nvml_close(void *ctx)
{
    nvml_device *d = ctx;
    if (!d)
        return;
    free(d->compute.entries);
    free(d->mps.entries);
    free(d);
    pthread_mutex_lock(&nvml.lock);
    release_locked();
    pthread_mutex_unlock(&nvml.lock);
}

/* Every call into a device goes through here: after GPU_IS_LOST the device
 * is not called again.  A call that fails for any reason but "this device
 * has no such metric" makes the given fields unavailable for this reading. */
static int succeeded(nvml_device *d, nvmlReturn_t rc, rm__gpu_device_reading *r, double *field, double *other)
{
    if (rc == NVML_SUCCESS)
        return 1;
    if (rc == NVML_ERROR_GPU_IS_LOST)
        atomic_store(&d->lost, 1);
    if (rc != NVML_ERROR_NOT_SUPPORTED && rc != NVML_ERROR_FUNCTION_NOT_FOUND) {
        rm__gpu_reading_unavailable(r, field);
        if (other)
            rm__gpu_reading_unavailable(r, other);
    }
    return 0;
}

static int lost(nvml_device *d)
{
    return atomic_load(&d->lost);
}

static void read_utilization(nvml_device *d, rm__gpu_device_reading *r)
{
    nvmlUtilization_t u;
    double *field = &r->gauges.util_percent;
    if (nvml.utilization && !lost(d) && succeeded(d, nvml.utilization(d->handle, &u), r, field, NULL))
        *field = u.gpu;
}

/* Used and total MiB, both NAN when the total is 0: a unified-memory GPU
 * (GB10) has no memory of its own, and "0 MiB used" of it would be a lie. */
static void store_memory(rm__gpu_device_reading *r, unsigned long long used, unsigned long long total)
{
    if (total == 0)
        return;
    r->gauges.mem_used_mb = (double)used / RM__BYTES_PER_MIB;
    r->gauges.mem_total_mb = (double)total / RM__BYTES_PER_MIB;
}

static void read_memory(nvml_device *d, rm__gpu_device_reading *r)
{
    double *used = &r->gauges.mem_used_mb, *total = &r->gauges.mem_total_mb;
    if (nvml.memory_v2 && !lost(d) && !atomic_load(&d->memory_v1)) {
        /* v2's used excludes reserved memory and matches nvidia-smi. */
        nvmlMemory_v2_t mem = {.version = NVML_MEMORY_V2_VERSION};
        nvmlReturn_t nrc = nvml.memory_v2(d->handle, &mem);
        if (nrc == NVML_SUCCESS) {
            store_memory(r, mem.used, mem.total);
            return;
        }
        if (nrc != NVML_ERROR_FUNCTION_NOT_FOUND && nrc != NVML_ERROR_NOT_SUPPORTED) {
            succeeded(d, nrc, r, used, total);
            return;
        }
        atomic_store(&d->memory_v1, 1); /* an older driver: v1 from now on */
    }
    nvmlMemory_t mem;
    if (nvml.memory_v1 && !lost(d) && succeeded(d, nvml.memory_v1(d->handle, &mem), r, used, total))
        store_memory(r, mem.used, mem.total);
}

static void read_clocks(nvml_device *d, rm__gpu_device_reading *r)
{
    unsigned mhz;
    resmon_gpu_reading *g = &r->gauges;
    if (nvml.clock && !lost(d) && succeeded(d, nvml.clock(d->handle, NVML_CLOCK_GRAPHICS, &mhz), r, &g->clock_mhz, NULL))
        g->clock_mhz = mhz;
    if (nvml.clock && !lost(d) && succeeded(d, nvml.clock(d->handle, NVML_CLOCK_MEM, &mhz), r, &g->mem_clock_mhz, NULL))
        g->mem_clock_mhz = mhz;
}

static void read_power(nvml_device *d, rm__gpu_device_reading *r)
{
    unsigned milliwatts;
    resmon_gpu_reading *g = &r->gauges;
    if (nvml.power && !lost(d) && succeeded(d, nvml.power(d->handle, &milliwatts), r, &g->power_w, NULL))
        g->power_w = milliwatts / 1000.0;
    if (nvml.power_limit && !lost(d) && succeeded(d, nvml.power_limit(d->handle, &milliwatts), r, &g->power_limit_w, NULL))
        g->power_limit_w = milliwatts / 1000.0;
}

static void read_energy(nvml_device *d, rm__gpu_device_reading *r)
{
    unsigned long long millijoules;
    if (nvml.energy && !lost(d) && succeeded(d, nvml.energy(d->handle, &millijoules), r, &r->energy_j, NULL))
        r->energy_j = (double)millijoules / 1000.0;
}

/* Fetches one running-process list into list; the NVML code, or
 * NVML_ERROR_INSUFFICIENT_SIZE when it kept outgrowing the buffer. */
static nvmlReturn_t fetch_processes(nvml_device *d, nvmlReturn_t (*query)(nvmlDevice_t, unsigned *, void *),
                                    process_list *list)
{
    list->count = 0;
    /* The list can grow between calls: ask, then allocate with room to spare. */
    for (int attempt = 0; attempt < 3; attempt++) {
        unsigned count = list->capacity;
        nvmlReturn_t nrc = query(d->handle, &count, count ? list->entries : NULL);
        if (nrc == NVML_ERROR_INSUFFICIENT_SIZE || (nrc == NVML_SUCCESS && count > list->capacity)) {
            unsigned capacity = count + count / 2 + 8;
            unsigned char *grown = realloc(list->entries, (size_t)capacity * nvml.process_stride);
            if (!grown)
                return NVML_ERROR_INSUFFICIENT_SIZE;
            list->entries = grown;
            list->capacity = capacity;
            continue;
        }
        if (nrc == NVML_SUCCESS)
            list->count = count;
        return nrc;
    }
    return NVML_ERROR_INSUFFICIENT_SIZE;
}

static void process_entry(const process_list *list, unsigned i, unsigned *pid, unsigned long long *used)
{
    const unsigned char *entry = list->entries + (size_t)i * nvml.process_stride;
    memcpy(pid, entry, sizeof *pid);          /* pid @0 */
    memcpy(used, entry + 8, sizeof *used);    /* usedGpuMemory @8 */
}

static int monitored(unsigned pid, const pid_t *pids, size_t pid_count)
{
    for (size_t k = 0; k < pid_count; k++)
        if ((unsigned)pids[k] == pid)
            return 1;
    return 0;
}

/* Whether pid appears before entry `before` of list `upto` in the lists. */
static int counted_before(const process_list *const lists[], size_t upto, unsigned before, unsigned pid)
{
    for (size_t l = 0; l <= upto; l++)
        for (unsigned i = 0; i < (l == upto ? before : lists[l]->count); i++) {
            unsigned other;
            unsigned long long used;
            process_entry(lists[l], i, &other, &used);
            if (other == pid)
                return 1;
        }
    return 0;
}

/* The GPU memory of the monitored processes that run on this device, CUDA
 * and MPS clients alike.  NAN when none of them is listed (their memory is
 * not known to be 0: NVML may list them under other PIDs, see README), and
 * unavailable when a query fails or NVML cannot say one process's memory
 * (usedGpuMemory NOT_AVAILABLE, e.g. under Windows WDDM or without
 * permission): a sum without it would understate. */
static void read_process_memory(nvml_device *d, const pid_t *pids, size_t pid_count, rm__gpu_device_reading *r)
{
    if (!nvml.processes || lost(d))
        return;
    nvmlReturn_t nrc = fetch_processes(d, nvml.processes, &d->compute);
    if (nrc == NVML_SUCCESS && nvml.mps_processes && !lost(d)) {
        nrc = fetch_processes(d, nvml.mps_processes, &d->mps);
        if (nrc == NVML_ERROR_NOT_SUPPORTED || nrc == NVML_ERROR_FUNCTION_NOT_FOUND)
            nrc = NVML_SUCCESS; /* no MPS here: the compute list is all */
    }
    if (nrc != NVML_SUCCESS) {
        succeeded(d, nrc, r, &r->proc_mem_mb, NULL);
        return;
    }
    const process_list *const lists[] = {&d->compute, &d->mps};
    double total = 0;
    size_t found = 0;
    for (size_t l = 0; l < 2; l++)
        for (unsigned i = 0; i < lists[l]->count; i++) {
            unsigned pid;
            unsigned long long used;
            process_entry(lists[l], i, &pid, &used);
            if (!monitored(pid, pids, pid_count) || counted_before(lists, l, i, pid))
                continue;
            if (used == NVML_VALUE_NOT_AVAILABLE_ULL) {
                rm__gpu_reading_unavailable(r, &r->proc_mem_mb);
                return;
            }
            total += (double)used / RM__BYTES_PER_MIB;
            found++;
        }
    if (found)
        r->proc_mem_mb = total;
}

static void nvml_read(void *ctx, const pid_t *pids, size_t pid_count, rm__gpu_device_reading *out)
{
    nvml_device *d = ctx;
    if (lost(d)) { /* fallen off the bus: every metric it had is gone */
        rm__gpu_reading_all_unavailable(out);
        return;
    }
    read_utilization(d, out);
    read_memory(d, out);
    read_clocks(d, out);
    read_power(d, out);
    read_energy(d, out);
    if (pid_count)
        read_process_memory(d, pids, pid_count, out);
    if (lost(d))
        rm__gpu_reading_all_unavailable(out);
}

const rm__gpu_backend rm__gpu_nvml = {
    .name = "nvml",
    .list = nvml_list,
    .open = nvml_open,
    .close = nvml_close,
    .read = nvml_read,
};
