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
 *   procs=PID:MB,...     running compute processes on every device
 *   mem_v2=0             nvmlDeviceGetMemoryInfo_v2 answers FUNCTION_NOT_FOUND
 *
 * Device i reports util+i and mem_used_mb+100*i, so tests can tell devices
 * apart.  The v2 memory call checks its version word as the real one does.
 */
#include <stdint.h>
#include <stdio.h>
#include <strings.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FAKE_API __attribute__((visibility("default")))

/* NVML reports bytes; resmon and these tests speak MiB. */
#define BYTES_PER_MIB 1048576.0

typedef struct { unsigned gpu, memory; } nvmlUtilization_t;
typedef struct { unsigned long long total, free, used; } nvmlMemory_t;
typedef struct { unsigned version; unsigned long long total, reserved, free, used; } nvmlMemory_v2_t;
typedef struct { unsigned pid; unsigned long long used; unsigned gi, ci; } nvmlProcessInfo_t;

static struct {
    int devices, init, lost_after, fail_after, slow_ms, mem_v2;
    char unsupported[128];
    double util, mem_used_mb, mem_total_mb, clock, memclock, power_w, limit_w, energy_step_j;
    unsigned proc_pid[16];
    double proc_mb[16];
    int proc_count;
    long calls;
    double energy_j;
} fake;

/* Exported only to make the handle type opaque to resmon. */
struct nvmlDevice_st { int index; };
static struct nvmlDevice_st device_table[8];

static double value_of(const char *config, const char *key, double fallback)
{
    char pattern[64];
    snprintf(pattern, sizeof pattern, "%s=", key);
    for (const char *p = config; (p = strstr(p, pattern)) != NULL; p++)
        if (p == config || p[-1] == ';')
            return atof(p + strlen(pattern));
    return fallback;
}

static void configure(void)
{
    const char *config = getenv("FAKE_NVML");
    if (!config)
        config = "";
    memset(&fake, 0, sizeof fake);
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
    const char *procs = strstr(config, "procs=");
    if (procs) {
        procs += 6;
        while (*procs && *procs != ';' && fake.proc_count < 16) {
            unsigned pid;
            double mb;
            int used;
            if (sscanf(procs, "%u:%lf%n", &pid, &mb, &used) != 2)
                break;
            fake.proc_pid[fake.proc_count] = pid;
            fake.proc_mb[fake.proc_count++] = mb;
            procs += used;
            if (*procs == ',')
                procs++;
        }
    }
    for (int i = 0; i < 8; i++)
        device_table[i].index = i;
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
        snprintf(mine, sizeof mine, "GPU-fake-%04d", i);
        if (strcmp(uuid, mine) == 0) {
            *device = &device_table[i];
            return 0;
        }
    }
    return 6; /* NOT_FOUND */
}

FAKE_API int nvmlDeviceGetHandleByPciBusId_v2(const char *bus, struct nvmlDevice_st **device)
{
    for (int i = 0; i < fake.devices; i++) {
        char mine[64];
        snprintf(mine, sizeof mine, "00000000:%02X:00.0", 0x10 + i);
        if (strcasecmp(bus, mine) == 0) {
            *device = &device_table[i];
            return 0;
        }
    }
    return 6;
}

FAKE_API int nvmlDeviceGetName(struct nvmlDevice_st *d, char *name, unsigned len)
{
    snprintf(name, len, "Fake H200 #%d", d->index);
    return 0;
}

FAKE_API int nvmlDeviceGetUUID(struct nvmlDevice_st *d, char *uuid, unsigned len)
{
    snprintf(uuid, len, "GPU-fake-%04d", d->index);
    return 0;
}

FAKE_API int nvmlDeviceGetUtilizationRates(struct nvmlDevice_st *d, nvmlUtilization_t *u)
{
    if (fake.slow_ms > 0) {
        struct timespec ts = {fake.slow_ms / 1000, (fake.slow_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
    int rc = device_call("util");
    if (rc == 0) {
        u->gpu = (unsigned)fake.util + (unsigned)d->index;
        u->memory = 10;
    }
    return rc;
}

static void fill_memory(struct nvmlDevice_st *d, unsigned long long *total, unsigned long long *used)
{
    *total = (unsigned long long)(fake.mem_total_mb * BYTES_PER_MIB);
    *used = (unsigned long long)((fake.mem_used_mb + 100.0 * d->index) * BYTES_PER_MIB);
}

FAKE_API int nvmlDeviceGetMemoryInfo(struct nvmlDevice_st *d, nvmlMemory_t *m)
{
    int rc = device_call("mem");
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
        m->reserved = 512ull << 20;
        m->free = m->total - m->used - m->reserved;
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
    if (rc == 0) {
        fake.energy_j += fake.energy_step_j;
        *mj = (unsigned long long)(fake.energy_j * 1000);
    }
    return rc;
}

FAKE_API int nvmlDeviceGetComputeRunningProcesses_v3(struct nvmlDevice_st *d, unsigned *count, nvmlProcessInfo_t *infos)
{
    (void)d;
    int rc = device_call("procs");
    if (rc != 0)
        return rc;
    if (*count < (unsigned)fake.proc_count) {
        *count = (unsigned)fake.proc_count;
        return 7; /* INSUFFICIENT_SIZE */
    }
    for (int i = 0; i < fake.proc_count; i++)
        infos[i] = (nvmlProcessInfo_t){fake.proc_pid[i], (unsigned long long)(fake.proc_mb[i] * BYTES_PER_MIB), 0, 0};
    *count = (unsigned)fake.proc_count;
    return 0;
}
