/*
 * fake_nvml.c -- a stand-in libnvidia-ml.so.1 for tests, loaded through the
 * real dlopen path (RESMON_NVML_LIBRARY).  It exports the NVML symbols resmon
 * resolves, versioned and unversioned, with values and failures scripted by
 * the environment variable FAKE_NVML, read at every nvmlInit:
 *
 *   devices=N            device count (default 1)
 *   init=CODE            nvmlInit's return code (18: driver/library mismatch)
 *   unsupported=LIST     metrics answering NOT_SUPPORTED: util,mem,clock,power,energy,procs
 *   lost_after=N         after N device calls, every call answers GPU_IS_LOST
 *   fail_after=N         after N device calls, every call answers UNKNOWN (999)
 *   slow_ms=N            nvmlDeviceGetUtilizationRates sleeps N ms
 *   util=P mem_used_mb=M mem_total_mb=T clock=C memclock=C power_w=W limit_w=W
 *   energy_step_j=J      the energy counter advances J per call (default 10)
 *   procs=PID:MB,...     running compute processes on every device; MB "na"
 *                        is NVML_VALUE_NOT_AVAILABLE (nvitop maps it to None)
 *   mps=PID:MB,...       MPS clients (nvmlDeviceGetMPSComputeRunningProcesses),
 *                        which the compute list does not show
 *   procs_slow_us=N      every compute-process query sleeps N us (4500 was
 *                        measured per call on a real GPU)
 *   mem_v2=0             nvmlDeviceGetMemoryInfo_v2 answers FUNCTION_NOT_FOUND
 *   unified=1            a unified-memory part (GB10): v1 memory NOT_SUPPORTED,
 *                        _v2 total 0
 *   models=A,B,...       device i is "Fake <model i> #i" (default H200)
 *   bus=B0,B1,...        device i sits on PCI bus Bi (hex; default 0x10+i): NVML
 *                        order need not be PCI order
 *   broken=K             device K answers UNKNOWN to nvmlDeviceGetHandleByIndex
 *                        (a faulty or foreign GPU; opening others must not ask)
 *   mig=P                device P is in MIG mode with instances gi 1/ci 0 and
 *                        gi 2/ci 0; utilization is NOT_SUPPORTED on it and them
 *
 * Device i reports util+i and mem_used_mb+100*i, so tests can tell devices
 * apart; its UUID is GPU-<i>932f937-..., so "GPU-1932" is a unique prefix and
 * "GPU-" is not.  fake_nvml_touched() says which devices
 * nvmlDeviceGetHandleByIndex was asked for since nvmlInit (NVML initialises
 * each one it returns); fake_nvml_utilization_calls() and
 * fake_nvml_process_queries() count nvmlDeviceGetUtilizationRates and
 * nvmlDeviceGetComputeRunningProcesses_v3 calls since nvmlInit (atomics:
 * a test reads them while a GPU thread calls).  The v2 memory call checks its version word as the
 * real one does.
 *
 * Built twice: as a current driver (exports RunningProcessDetailList, 24-byte
 * process entries), and with FAKE_NVML_535_43 as drivers 535.43-535.86, which
 * wrote 32-byte entries from the _v3 process queries and are recognised by
 * exporting ConfComputeMemSizeInfo without RunningProcessDetailList.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <strings.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#define FAKE_API __attribute__((visibility("default")))

/* NVML reports bytes; resmon and these tests speak MiB. */
#define BYTES_PER_MIB 1048576.0

typedef struct { unsigned gpu, memory; } nvmlUtilization_t;
typedef struct { unsigned long long total, free, used; } nvmlMemory_t;
typedef struct { unsigned version; unsigned long long total, reserved, free, used; } nvmlMemory_v2_t;
typedef struct {
    char bus_id_legacy[16];
    unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
    char bus_id[32];
} nvmlPciInfo_t;

#ifdef FAKE_NVML_535_43
#define PROCESS_STRIDE 32 /* what those drivers wrote */
#else
#define PROCESS_STRIDE 24 /* nvmlProcessInfo_t v2/v3 */
#endif
#define NOT_AVAILABLE 0xFFFFFFFFFFFFFFFFULL

typedef struct {
    unsigned pid[16];
    unsigned long long bytes[16];
    int count;
} process_table;

static struct {
    int devices, init, lost_after, fail_after, slow_ms, mem_v2, unified, broken, mig, procs_slow_us;
    char unsupported[128];
    char energy_fail_file[256]; /* energy reads fail (UNKNOWN) while this file exists */
    double util, mem_used_mb, mem_total_mb, clock, memclock, power_w, limit_w, energy_step_j;
    process_table compute, mps;
    char models[8][32];
    unsigned bus[8];
    unsigned touched;
    long calls;
    double energy_j;
} fake;

/* Exported only to make the handle type opaque to resmon. */
struct nvmlDevice_st { int index; int mig; unsigned gi, ci; };
static struct nvmlDevice_st device_table[8];
static atomic_long utilization_calls, process_queries;
static struct nvmlDevice_st mig_table[2];

static double value_of(const char *config, const char *key, double fallback)
{
    char pattern[64];
    snprintf(pattern, sizeof pattern, "%s=", key);
    for (const char *p = config; (p = strstr(p, pattern)) != NULL; p++)
        if (p == config || p[-1] == ';')
            return atof(p + strlen(pattern));
    return fallback;
}

static void parse_processes(const char *config, const char *key, process_table *t)
{
    const char *p = strstr(config, key);
    if (!p || (p != config && p[-1] != ';'))
        return;
    p += strlen(key);
    while (*p && *p != ';' && t->count < 16) {
        unsigned pid;
        int used = 0;
        if (sscanf(p, "%u:%n", &pid, &used) != 1 || !used)
            break;
        p += used;
        if (strncmp(p, "na", 2) == 0) {
            t->bytes[t->count] = NOT_AVAILABLE;
            p += 2;
        } else {
            double mb;
            if (sscanf(p, "%lf%n", &mb, &used) != 1)
                break;
            t->bytes[t->count] = (unsigned long long)(mb * BYTES_PER_MIB);
            p += used;
        }
        t->pid[t->count++] = pid;
        if (*p == ',')
            p++;
    }
}

/* A comma-separated list value, item i; "" when absent. */
static void list_item(const char *config, const char *key, int i, char *out, size_t cap)
{
    out[0] = '\0';
    const char *p = strstr(config, key);
    if (!p || (p != config && p[-1] != ';'))
        return;
    p += strlen(key);
    for (int k = 0; k < i; k++) {
        p += strcspn(p, ",;");
        if (*p != ',')
            return;
        p++;
    }
    snprintf(out, cap, "%.*s", (int)strcspn(p, ",;"), p);
}

static void configure(void)
{
    const char *config = getenv("FAKE_NVML");
    if (!config)
        config = "";
    memset(&fake, 0, sizeof fake);
    atomic_store(&utilization_calls, 0);
    atomic_store(&process_queries, 0);
    fake.devices = (int)value_of(config, "devices", 1);
    if (fake.devices > 8)
        fake.devices = 8;
    fake.init = (int)value_of(config, "init", 0);
    fake.lost_after = (int)value_of(config, "lost_after", -1);
    fake.fail_after = (int)value_of(config, "fail_after", -1);
    fake.slow_ms = (int)value_of(config, "slow_ms", 0);
    fake.mem_v2 = (int)value_of(config, "mem_v2", 1);
    fake.util = value_of(config, "util", 42);
    fake.mem_used_mb = value_of(config, "mem_used_mb", 1000);
    fake.mem_total_mb = value_of(config, "mem_total_mb", 81559);
    fake.clock = value_of(config, "clock", 1980);
    fake.memclock = value_of(config, "memclock", 2619);
    fake.power_w = value_of(config, "power_w", 312.5);
    fake.limit_w = value_of(config, "limit_w", 700);
    fake.energy_step_j = value_of(config, "energy_step_j", 10);
    fake.energy_j = 123456.0;
    const char *u = strstr(config, "unsupported=");
    if (u)
        snprintf(fake.unsupported, sizeof fake.unsupported, "%.*s", (int)strcspn(u + 12, ";"), u + 12);
    const char *ef = strstr(config, "energy_fail_file=");
    if (ef)
        snprintf(fake.energy_fail_file, sizeof fake.energy_fail_file, "%.*s", (int)strcspn(ef + 17, ";"), ef + 17);
    fake.unified = (int)value_of(config, "unified", 0);
    fake.broken = (int)value_of(config, "broken", -1);
    fake.mig = (int)value_of(config, "mig", -1);
    fake.procs_slow_us = (int)value_of(config, "procs_slow_us", 0);
    parse_processes(config, "procs=", &fake.compute);
    parse_processes(config, "mps=", &fake.mps);
    for (int i = 0; i < 8; i++) {
        char item[32];
        list_item(config, "models=", i, item, sizeof item);
        snprintf(fake.models[i], sizeof fake.models[i], "%s", item[0] ? item : "H200");
        list_item(config, "bus=", i, item, sizeof item);
        fake.bus[i] = item[0] ? (unsigned)strtoul(item, NULL, 16) : 0x10u + (unsigned)i;
        device_table[i] = (struct nvmlDevice_st){i, 0, 0, 0};
    }
    for (unsigned k = 0; k < 2; k++)
        mig_table[k] = (struct nvmlDevice_st){fake.mig, 1, k + 1, 0};
}

static void uuid_of(const struct nvmlDevice_st *d, char *out, size_t cap)
{
    if (d->mig)
        snprintf(out, cap, "MIG-%x1b2c3d4-0000-4000-8000-00000000000%u", d->index, d->gi);
    else
        snprintf(out, cap, "GPU-%x932f937-d72c-4106-c12f-20bd9faed9f6", d->index);
}

/* Which devices nvmlDeviceGetHandleByIndex was asked for since nvmlInit. */
FAKE_API unsigned fake_nvml_touched(void) { return fake.touched; }
FAKE_API long fake_nvml_utilization_calls(void) { return atomic_load(&utilization_calls); }
FAKE_API long fake_nvml_process_queries(void) { return atomic_load(&process_queries); }

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000L};
    nanosleep(&ts, NULL);
}

/* Every device call: counts, then applies scripted failures. */
static int device_call(const char *metric)
{
    fake.calls++;
    if (fake.lost_after >= 0 && fake.calls > fake.lost_after)
        return 15; /* GPU_IS_LOST */
    if (fake.fail_after >= 0 && fake.calls > fake.fail_after)
        return 999; /* UNKNOWN */
    if (metric && strstr(fake.unsupported, metric))
        return 3; /* NOT_SUPPORTED */
    return 0;
}

FAKE_API int nvmlInit_v2(void)
{
    configure();
    return fake.init;
}
FAKE_API int nvmlInit(void) { return nvmlInit_v2(); }
FAKE_API int nvmlShutdown(void) { return 0; }

FAKE_API const char *nvmlErrorString(int rc)
{
    switch (rc) {
    case 3: return "Not Supported";
    case 15: return "GPU is lost";
    case 18: return "RM has detected an NVML/RM version mismatch.";
    default: return "Unknown Error";
    }
}

FAKE_API int nvmlDeviceGetCount_v2(unsigned *count)
{
    *count = (unsigned)fake.devices;
    return 0;
}
FAKE_API int nvmlDeviceGetCount(unsigned *count) { return nvmlDeviceGetCount_v2(count); }

FAKE_API int nvmlDeviceGetHandleByIndex_v2(unsigned index, struct nvmlDevice_st **device)
{
    if (index >= (unsigned)fake.devices)
        return 2; /* INVALID_ARGUMENT */
    fake.touched |= 1u << index;
    if ((int)index == fake.broken)
        return 999; /* UNKNOWN: a GPU that will not initialise */
    *device = &device_table[index];
    return 0;
}
FAKE_API int nvmlDeviceGetHandleByIndex(unsigned index, struct nvmlDevice_st **device)
{
    return nvmlDeviceGetHandleByIndex_v2(index, device);
}

FAKE_API int nvmlDeviceGetHandleByUUID(const char *uuid, struct nvmlDevice_st **device)
{
    for (int i = 0; i < fake.devices; i++) {
        char mine[64];
        uuid_of(&device_table[i], mine, sizeof mine);
        if (strcmp(uuid, mine) == 0) {
            *device = &device_table[i];
            return 0;
        }
    }
    for (int k = 0; fake.mig >= 0 && fake.mig < fake.devices && k < 2; k++) {
        char mine[64];
        uuid_of(&mig_table[k], mine, sizeof mine);
        if (strcmp(uuid, mine) == 0) {
            *device = &mig_table[k];
            return 0;
        }
    }
    return 6; /* NOT_FOUND: NVML matches whole UUIDs only */
}

FAKE_API int nvmlDeviceGetHandleByPciBusId_v2(const char *bus, struct nvmlDevice_st **device)
{
    for (int i = 0; i < fake.devices; i++) {
        char mine[64];
        snprintf(mine, sizeof mine, "00000000:%02X:00.0", fake.bus[i]);
        if (strcasecmp(bus, mine) == 0) {
            *device = &device_table[i];
            return 0;
        }
    }
    return 6;
}

FAKE_API int nvmlDeviceGetName(struct nvmlDevice_st *d, char *name, unsigned len)
{
    if (d->mig)
        snprintf(name, len, "Fake %s #%d MIG 1g.18gb", fake.models[d->index], d->index);
    else
        snprintf(name, len, "Fake %s #%d", fake.models[d->index], d->index);
    return 0;
}

FAKE_API int nvmlDeviceGetUUID(struct nvmlDevice_st *d, char *uuid, unsigned len)
{
    uuid_of(d, uuid, len);
    return 0;
}

FAKE_API int nvmlDeviceGetIndex(struct nvmlDevice_st *d, unsigned *index)
{
    if (d->mig)
        return 2; /* INVALID_ARGUMENT: a MIG handle has no index of its own */
    *index = (unsigned)d->index;
    return 0;
}

FAKE_API int nvmlDeviceGetPciInfo_v3(struct nvmlDevice_st *d, nvmlPciInfo_t *pci)
{
    memset(pci, 0, sizeof *pci);
    pci->bus = fake.bus[d->index];
    pci->pci_device_id = 0x10DE0000u | (unsigned)(strlen(fake.models[d->index]) * 31u + (unsigned char)fake.models[d->index][0]);
    snprintf(pci->bus_id, sizeof pci->bus_id, "00000000:%02X:00.0", pci->bus);
    return 0;
}

FAKE_API int nvmlDeviceIsMigDeviceHandle(struct nvmlDevice_st *d, unsigned *is_mig)
{
    *is_mig = (unsigned)d->mig;
    return 0;
}

FAKE_API int nvmlDeviceGetDeviceHandleFromMigDeviceHandle(struct nvmlDevice_st *d, struct nvmlDevice_st **parent)
{
    if (!d->mig)
        return 2;
    *parent = &device_table[d->index];
    return 0;
}

FAKE_API int nvmlDeviceGetMaxMigDeviceCount(struct nvmlDevice_st *d, unsigned *count)
{
    *count = d->index == fake.mig && !d->mig ? 7 : 0;
    return 0;
}

FAKE_API int nvmlDeviceGetMigDeviceHandleByIndex(struct nvmlDevice_st *d, unsigned i, struct nvmlDevice_st **mig)
{
    if (d->index != fake.mig || d->mig || i >= 2)
        return 6; /* NOT_FOUND: an empty slot */
    *mig = &mig_table[i];
    return 0;
}

FAKE_API int nvmlDeviceGetGpuInstanceId(struct nvmlDevice_st *d, unsigned *id)
{
    if (!d->mig)
        return 2;
    *id = d->gi;
    return 0;
}

FAKE_API int nvmlDeviceGetComputeInstanceId(struct nvmlDevice_st *d, unsigned *id)
{
    if (!d->mig)
        return 2;
    *id = d->ci;
    return 0;
}

FAKE_API int nvmlDeviceGetUtilizationRates(struct nvmlDevice_st *d, nvmlUtilization_t *u)
{
    if (fake.slow_ms > 0)
        sleep_us(fake.slow_ms * 1000L);
    atomic_fetch_add(&utilization_calls, 1);
    int rc = device_call("util");
    if (rc == 0 && d->index == fake.mig)
        rc = 3; /* NOT_SUPPORTED under MIG */
    if (rc == 0) {
        u->gpu = (unsigned)fake.util + (unsigned)d->index;
        u->memory = 10;
    }
    return rc;
}

static void fill_memory(struct nvmlDevice_st *d, unsigned long long *total, unsigned long long *used)
{
    double share = d->mig ? 8 : 1;
    *total = fake.unified ? 0 : (unsigned long long)(fake.mem_total_mb / share * BYTES_PER_MIB);
    *used = fake.unified ? 0 : (unsigned long long)((fake.mem_used_mb + 100.0 * d->index) / share * BYTES_PER_MIB);
}

FAKE_API int nvmlDeviceGetMemoryInfo(struct nvmlDevice_st *d, nvmlMemory_t *m)
{
    int rc = device_call("mem");
    if (rc == 0 && fake.unified)
        return 3; /* NOT_SUPPORTED: GB10 */
    if (rc == 0) {
        fill_memory(d, &m->total, &m->used);
        m->used += 512ull << 20; /* v1's used includes reserved memory */
        m->free = m->total - m->used;
    }
    return rc;
}

FAKE_API int nvmlDeviceGetMemoryInfo_v2(struct nvmlDevice_st *d, nvmlMemory_v2_t *m)
{
    if (!fake.mem_v2 || m->version != (unsigned)(sizeof(nvmlMemory_v2_t) | (2u << 24)))
        return 13; /* FUNCTION_NOT_FOUND: what plain "2" gets */
    int rc = device_call("mem");
    if (rc == 0) {
        fill_memory(d, &m->total, &m->used);
        m->reserved = fake.unified ? 0 : 512ull << 20;
        m->free = fake.unified ? 0 : m->total - m->used - m->reserved;
    }
    return rc;
}

FAKE_API int nvmlDeviceGetClockInfo(struct nvmlDevice_st *d, int type, unsigned *mhz)
{
    (void)d;
    int rc = device_call("clock");
    if (rc == 0)
        *mhz = (unsigned)(type == 2 ? fake.memclock : fake.clock);
    return rc;
}

FAKE_API int nvmlDeviceGetPowerUsage(struct nvmlDevice_st *d, unsigned *mw)
{
    (void)d;
    int rc = device_call("power");
    if (rc == 0)
        *mw = (unsigned)(fake.power_w * 1000);
    return rc;
}

FAKE_API int nvmlDeviceGetEnforcedPowerLimit(struct nvmlDevice_st *d, unsigned *mw)
{
    (void)d;
    int rc = device_call("power");
    if (rc == 0)
        *mw = (unsigned)(fake.limit_w * 1000);
    return rc;
}

FAKE_API int nvmlDeviceGetTotalEnergyConsumption(struct nvmlDevice_st *d, unsigned long long *mj)
{
    (void)d;
    int rc = device_call("energy");
    if (rc == 0 && fake.energy_fail_file[0] && access(fake.energy_fail_file, F_OK) == 0)
        return 999; /* UNKNOWN: this reading has no energy, the next may */
    if (rc == 0) {
        fake.energy_j += fake.energy_step_j;
        *mj = (unsigned long long)(fake.energy_j * 1000);
    }
    return rc;
}

/* Writes a process table the way the driver does: count first, then
 * INSUFFICIENT_SIZE when it does not fit, entries PROCESS_STRIDE apart. */
static int list_processes(const process_table *t, unsigned *count, unsigned char *infos)
{
    if (*count < (unsigned)t->count) {
        *count = (unsigned)t->count;
        return 7; /* INSUFFICIENT_SIZE */
    }
    if (t->count) /* what a wrong stride would read */
        memset(infos, 0xA5, (size_t)t->count * PROCESS_STRIDE);
    for (int i = 0; i < t->count; i++) {
        unsigned char *entry = infos + (size_t)i * PROCESS_STRIDE;
        unsigned zero = 0;
        memcpy(entry, &t->pid[i], sizeof t->pid[i]);
        memcpy(entry + 8, &t->bytes[i], sizeof t->bytes[i]);
        memcpy(entry + 16, &zero, sizeof zero); /* gpuInstanceId */
        memcpy(entry + 20, &zero, sizeof zero); /* computeInstanceId */
    }
    *count = (unsigned)t->count;
    return 0;
}

FAKE_API int nvmlDeviceGetComputeRunningProcesses_v3(struct nvmlDevice_st *d, unsigned *count, unsigned char *infos)
{
    (void)d;
    if (fake.procs_slow_us > 0)
        sleep_us(fake.procs_slow_us);
    atomic_fetch_add(&process_queries, 1);
    int rc = device_call("procs");
    return rc ? rc : list_processes(&fake.compute, count, infos);
}

FAKE_API int nvmlDeviceGetMPSComputeRunningProcesses_v3(struct nvmlDevice_st *d, unsigned *count, unsigned char *infos)
{
    (void)d;
    int rc = device_call("procs");
    return rc ? rc : list_processes(&fake.mps, count, infos);
}

#ifdef FAKE_NVML_535_43
/* Present in 535.43-535.86 (and later); its presence with the next one's
 * absence is how a caller recognises the 32-byte entries. */
FAKE_API int nvmlDeviceGetConfComputeMemSizeInfo(struct nvmlDevice_st *d, void *info)
{
    (void)d, (void)info;
    return 3;
}
#else
/* Added in 535.104.05, when the 24-byte entries came back. */
FAKE_API int nvmlDeviceGetRunningProcessDetailList(struct nvmlDevice_st *d, void *list)
{
    (void)d, (void)list;
    return 3;
}
FAKE_API int nvmlDeviceGetConfComputeMemSizeInfo(struct nvmlDevice_st *d, void *info)
{
    (void)d, (void)info;
    return 3;
}
#endif
