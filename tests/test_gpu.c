/*
 * test_gpu.c -- the GPU backends without a GPU: NVML through a fake
 * libnvidia-ml.so.1 loaded by the real dlopen path, amdgpu and Intel through
 * fixture sysfs trees (the GPU section of /work/shared/docs/faults.md).
 */
#include "resmon.h"
#include "test_util.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char sysfs_root[64];

/* ---- fixture sysfs ------------------------------------------------------ */

/* mkdir -p of the directory that holds path. */
static void make_parents(const char *path)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s", path);
    for (char *slash = strchr(dir + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        if (mkdir(dir, 0755) != 0 && errno != EEXIST)
            fail_msg("mkdir %s: %s", dir, strerror(errno));
        *slash = '/';
    }
}

static void put_under(const char *root, const char *relative, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", root, relative);
    make_parents(path);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void put(const char *relative, const char *text)
{
    put_under(sysfs_root, relative, text);
}

static void link_driver_under(const char *root, int card, const char *driver)
{
    char path[512], target[128];
    snprintf(path, sizeof path, "%s/class/drm/card%d/device/driver", root, card);
    snprintf(target, sizeof target, "../../../../bus/pci/drivers/%s", driver);
    assert_int_equal(symlink(target, path), 0);
}

static void link_driver(int card, const char *driver)
{
    link_driver_under(sysfs_root, card, driver);
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st, (void)type, (void)ftw;
    return remove(path);
}

/* rm -rf, without a shell. */
static int remove_tree(const char *path)
{
    return nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* card0: an Intel GPU on i915, idle (act 0), with the device-level hwmon
 * ("i915") beside a per-tile one ("i915_gt0", lower-numbered, counting part
 * of it); card1: an AMD GPU with only power1_input (Polaris on 6.6+);
 * card1-DP-1 and renderD128: not cards. */
static void build_sysfs(void)
{
    snprintf(sysfs_root, sizeof sysfs_root, "/tmp/resmon-sysfs-XXXXXX");
    assert_non_null(mkdtemp(sysfs_root));
    put("class/drm/card0/device/vendor", "0x8086\n");
    link_driver(0, "i915");
    put("class/drm/card0/gt_act_freq_mhz", "0\n"); /* idle: in RC6 */
    put("class/drm/card0/gt_cur_freq_mhz", "1100\n");
    put("class/drm/card0/device/hwmon/hwmon2/name", "i915_gt0\n");
    put("class/drm/card0/device/hwmon/hwmon2/energy1_input", "2000000\n");
    put("class/drm/card0/device/hwmon/hwmon3/name", "i915\n");
    put("class/drm/card0/device/hwmon/hwmon3/energy1_input", "5000000\n");
    put("class/drm/card1/device/vendor", "0x1002\n");
    link_driver(1, "amdgpu");
    put("class/drm/card1/device/uevent", "DRIVER=amdgpu\nPCI_SLOT_NAME=0000:03:00.0\n");
    put("class/drm/card1/device/product_name", "Radeon RX 580\n");
    put("class/drm/card1/device/gpu_busy_percent", "37\n");
    put("class/drm/card1/device/mem_info_vram_used", "2147483648\n");
    put("class/drm/card1/device/mem_info_vram_total", "8589934592\n");
    put("class/drm/card1/device/mem_info_vram_vendor", "samsung\n"); /* a discrete card's own VRAM */
    put("class/drm/card1/device/mem_info_gtt_used", "33554432\n");
    put("class/drm/card1/device/mem_info_gtt_total", "8589934592\n");
    put("class/drm/card1/device/pp_dpm_sclk", "0: 300Mhz\n1: 1340Mhz *\n2: 1366Mhz\n");
    put("class/drm/card1/device/pp_dpm_mclk", "S: 40Mhz\n0: 300Mhz\n1: 2000Mhz *\n");
    put("class/drm/card1/device/hwmon/hwmon2/power1_input", "45000000\n");
    put("class/drm/card1/device/hwmon/hwmon2/power1_cap", "185000000\n");
    put("class/drm/card1-DP-1/status", "connected\n");
    put("class/drm/renderD128/dev", "226:128\n");
}

static int setup_all(void **state)
{
    (void)state;
    build_sysfs();
    return 0;
}

/* Every test starts from the fixture tree and the fake NVML, whatever the
 * previous one (perhaps failing half-way) left in the environment. */
static int fresh_environment(void **state)
{
    (void)state;
    setenv("RESMON_SYSFS_ROOT", sysfs_root, 1);
    setenv("RESMON_NVML_LIBRARY", FAKE_NVML_PATH, 1);
    unsetenv("FAKE_NVML");
    unsetenv("CUDA_VISIBLE_DEVICES");
    unsetenv("CUDA_DEVICE_ORDER");
    unsetenv("NVIDIA_VISIBLE_DEVICES");
    return 0;
}

static int teardown_all(void **state)
{
    (void)state;
    return remove_tree(sysfs_root);
}

static resmon_gpu *open_ok(const char *spec)
{
    resmon_gpu *g = NULL;
    char err[256] = "";
    int rc = resmon_gpu_open(&g, spec, err, sizeof err);
    if (rc != 0) {
        print_error("resmon_gpu_open(%s) = %d: %s\n", spec, rc, err);
        fail();
    }
    return g;
}

static int open_fails(const char *spec, const char *message_part)
{
    resmon_gpu *g = NULL;
    char err[256] = "";
    int rc = resmon_gpu_open(&g, spec, err, sizeof err);
    if (rc >= 0 || !strstr(err, message_part)) {
        print_error("resmon_gpu_open(%s) = %d \"%s\", wanted an error naming \"%s\"\n", spec, rc, err, message_part);
        fail();
    }
    assert_null(g);
    return rc;
}

/* ---- NVML ----------------------------------------------------------------- */

static void nvml_reads_every_metric(void **state)
{
    (void)state;
    setenv("FAKE_NVML", "devices=2", 1);
    resmon_gpu *g = open_ok("nvml:0");
    const resmon_gpu_profiler *p = resmon_gpu_profiler_of(g);
    double util;
    resmon_gpu_memory mem;
    resmon_gpu_clocks clocks;
    resmon_gpu_power power;
    double joules;
    assert_int_equal(p->get_utilization(p->ctx, &util), 0);
    ASSERT_DOUBLE_EQ(util, 42);
    assert_int_equal(p->get_memory_usage(p->ctx, &mem), 0);
    ASSERT_DOUBLE_EQ(mem.gpu_memory_used_mb, 1000); /* _v2: without reserved memory */
    ASSERT_DOUBLE_EQ(mem.gpu_memory_total_mb, 81559);
    assert_int_equal(p->get_clock_info(p->ctx, &clocks), 0);
    ASSERT_DOUBLE_EQ(clocks.gpu_clock_mhz, 1980);
    ASSERT_DOUBLE_EQ(clocks.mem_clock_mhz, 2619);
    assert_int_equal(p->get_power_info(p->ctx, &power), 0);
    ASSERT_DOUBLE_EQ(power.power_draw_w, 312.5); /* mW -> W */
    ASSERT_DOUBLE_EQ(power.power_limit_w, 700);
    assert_int_equal(p->get_energy(p->ctx, &joules), 0);
    assert_true(joules > 0);
    resmon_gpu_info info;
    assert_int_equal(resmon_gpu_device_info(g, 0, &info, sizeof info), 0);
    assert_string_equal(info.backend, "nvml");
    assert_string_equal(info.name, "Fake H200 #0");
    assert_string_equal(info.id, "GPU-0932f937-d72c-4106-c12f-20bd9faed9f6");
    resmon_gpu_close(g);
}

static void nvml_falls_back_to_v1_memory(void **state)
{
    (void)state;
    setenv("FAKE_NVML", "mem_v2=0", 1);
    resmon_gpu *g = open_ok("nvml:0");
    const resmon_gpu_profiler *p = resmon_gpu_profiler_of(g);
    resmon_gpu_memory mem;
    assert_int_equal(p->get_memory_usage(p->ctx, &mem), 0);
    ASSERT_DOUBLE_EQ(mem.gpu_memory_used_mb, 1512); /* v1 counts reserved memory */
    resmon_gpu_close(g);
}

static void nvml_selects_by_index_uuid_and_pci(void **state)
{
    (void)state;
    setenv("FAKE_NVML", "devices=3", 1);
    const char *specs[] = {"nvml:1", "nvml:GPU-1932f937-d72c-4106-c12f-20bd9faed9f6", "nvml:GPU-1932f9",
                           "nvml:00000000:11:00.0"};
    for (int i = 0; i < 4; i++) {
        resmon_gpu *g = open_ok(specs[i]);
        resmon_gpu_info info;
        resmon_gpu_device_info(g, 0, &info, sizeof info);
        assert_int_equal(info.index, 1);
        assert_string_equal(info.name, "Fake H200 #1");
        resmon_gpu_close(g);
    }
    assert_int_equal(open_fails("nvml:7", "no NVIDIA GPU '7' (found 3)"), -ENOENT);
    assert_int_equal(open_fails("nvml:GPU-nope", "no NVIDIA GPU 'GPU-nope'"), -ENOENT);
    assert_int_equal(open_fails("nvml:GPU-", "no NVIDIA GPU 'GPU-'"), -ENOENT); /* a prefix of all three */
    assert_int_equal(open_fails("nvml:bogus", "chosen by index, UUID"), -EINVAL);
    assert_int_equal(open_fails("cuda:0", "unknown GPU 'cuda:0'"), -EINVAL);
}

static void nvml_failures_say_why(void **state)
{
    (void)state;
    setenv("FAKE_NVML", "init=18", 1);
    assert_int_equal(open_fails("nvml:0", "driver/library version mismatch"), -EIO);
    setenv("FAKE_NVML", "init=9", 1);
    assert_int_equal(open_fails("nvml:0", "driver not loaded"), -ENODEV);
    setenv("FAKE_NVML", "init=4", 1);
    assert_int_equal(open_fails("nvml:0", "no permission"), -EACCES);
    setenv("FAKE_NVML", "devices=0", 1);
    assert_int_equal(open_fails("nvml:0", "no NVIDIA GPU found"), -ENODEV);
    setenv("RESMON_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
    assert_int_equal(open_fails("nvml:0", "not found"), -ENOENT);
    /* A selector that names nothing is bad input, driver or none (stop 54:
     * nvml:-1 said the library was missing, FileNotFoundError in Python). */
    assert_int_equal(open_fails("nvml:-1", "chosen by index, UUID (GPU-...) or PCI bus id, not '-1'"), -EINVAL);
    assert_int_equal(open_fails("nvml:", "chosen by index, UUID (GPU-...) or PCI bus id, not ''"), -EINVAL);
    /* strtoul's sign and spaces are no index (stop 54: "nvml:+0", "nvml: 0" were GPU 0). */
    assert_int_equal(open_fails("nvml:+0", "chosen by index, UUID (GPU-...) or PCI bus id, not '+0'"), -EINVAL);
    assert_int_equal(open_fails("nvml: 0", "chosen by index, UUID (GPU-...) or PCI bus id, not ' 0'"), -EINVAL);
    setenv("RESMON_NVML_LIBRARY", "libc.so.6", 1); /* loads, but is not NVML */
    assert_int_equal(open_fails("nvml:0", "lacks the NVML functions"), -EIO);
    setenv("RESMON_NVML_LIBRARY", FAKE_NVML_PATH, 1);
    setenv("FAKE_NVML", "", 1);
    resmon_gpu_close(open_ok("nvml:0")); /* and it recovers */
}

static resmon_summary monitor_for(resmon_gpu *g, double interval, double seconds, resmon_sample **samples,
                                  size_t *n);

/* A window of `seconds`, scaled: a busy machine gives the sampler and the GPU
 * thread fewer turns a second, and the tests count readings and samples. */
static resmon_summary monitor_with(resmon_gpu *g, double interval, double seconds, resmon_sample **samples,
                                   size_t *n)
{
    return monitor_for(g, interval, test_scaled(seconds), samples, n);
}

/* A window of exactly `seconds`. */
static resmon_summary monitor_for(resmon_gpu *g, double interval, double seconds, resmon_sample **samples,
                                  size_t *n)
{
    resmon_options opts = {.struct_size = sizeof(resmon_options), .sample_interval_sec = interval, .gpu_profiler = resmon_gpu_profiler_of(g)};
    resmon_monitor *m = test_monitor_new(&opts);
    assert_int_equal(resmon_monitor_start(m), 0);
    test_sleep(seconds);
    assert_int_equal(resmon_monitor_stop(m), 0);
    resmon_summary s = test_summary(m);
    *n = test_samples(m, NULL, 0);
    *samples = calloc(*n, sizeof **samples);
    test_samples(m, *samples, *n);
    resmon_monitor_free(m);
    return s;
}

/* The first known value of a sample field (a double at offset), or NAN.  A
 * GPU reading a busy machine delays past the first samples leaves them NAN:
 * allowed to be missing, never wrong -- so tests check the first one known
 * (and, through the summary, that one was known at all). */
static double first_known(const resmon_sample *samples, size_t n, size_t offset)
{
    for (size_t i = 0; i < n; i++) {
        double value;
        memcpy(&value, (const char *)&samples[i] + offset, sizeof value);
        if (!isnan(value))
            return value;
    }
    return NAN;
}
#define FIRST_KNOWN(field) first_known(samples, n, offsetof(resmon_sample, field))
/* value must equal expected; on a busy machine (RESMON_TEST_TIME_FACTOR > 1)
 * it may instead be unknown, when every reading came too late for a sample.
 * Load that arrives after the factor was chosen can do the same at factor 1,
 * so the tests that use this measure a window whose readings all came late
 * again (monitor_until_known), three windows at most. */
#define ASSERT_KNOWN_UNLESS_BUSY(value, expected)          \
    do {                                                  \
        double known_ = (value);                          \
        if (!isnan(known_) || test_time_factor() <= 1)    \
            ASSERT_DOUBLE_EQ(known_, (expected));         \
    } while (0)
/* The last known value of a field, likewise. */
static double last_known(const resmon_sample *samples, size_t n, size_t offset)
{
    for (size_t i = n; i-- > 0;) {
        double value;
        memcpy(&value, (const char *)&samples[i] + offset, sizeof value);
        if (!isnan(value))
            return value;
    }
    return NAN;
}
#define LAST_KNOWN(field) last_known(samples, n, offsetof(resmon_sample, field))

/* Opens spec (FAKE_NVML as set: the fake starts afresh at each open) and
 * monitors a window, up to three times while none of its samples has a
 * reading of the field at offset: on a machine loaded after the time
 * factor was chosen, the GPU thread can miss the first sample's wait (20 ms)
 * and the last one's.  A GPU that never answers in time misses all three. */
static resmon_summary monitor_until_known(const char *spec, double interval, double seconds, size_t offset,
                                          resmon_sample **samples, size_t *n)
{
    for (int attempt = 1;; attempt++) {
        resmon_gpu *g = open_ok(spec);
        resmon_summary s = monitor_with(g, interval, seconds, samples, n);
        resmon_gpu_close(g);
        if (!isnan(first_known(*samples, *n, offset)) || attempt == 3)
            return s;
        print_message("attempt %d: no sample had a GPU reading; measuring again\n", attempt);
        free(*samples);
    }
}

static void nvml_unsupported_metric_is_nan_only_for_itself(void **state)
{
    (void)state;
    setenv("FAKE_NVML", "unsupported=util,energy", 1); /* utilization under MIG */
    resmon_gpu *g = open_ok("nvml:0");
    resmon_sample *samples;
    size_t n;
    resmon_summary s = monitor_with(g, 0.01, 0.05, &samples, &n);
    ASSERT_NAN(FIRST_KNOWN(gpu_util));
    ASSERT_DOUBLE_EQ(FIRST_KNOWN(gpu_mem_mb), 1000);
    ASSERT_DOUBLE_EQ(LAST_KNOWN(gpu_power_w), 312.5);
    ASSERT_NAN(s.mean_gpu_util);
    ASSERT_DOUBLE_EQ(s.peak_gpu_mem_mb, 1000);
    assert_int_equal(s.gpu_energy_source, RESMON_ENERGY_INTEGRATED); /* no counter: power integrated */
    /* Integrated over the intervals whose both ends had a power reading: the
     * whole window, unless a busy machine delayed the first readings. */
    double powered_sec = 0;
    for (size_t i = 1; i < n; i++)
        if (!isnan(samples[i].gpu_power_w) && !isnan(samples[i - 1].gpu_power_w))
            powered_sec += samples[i].timestamp - samples[i - 1].timestamp;
    assert_true(powered_sec > 0);
    ASSERT_BETWEEN(s.gpu_energy_j, 312.5 * powered_sec * 0.999, 312.5 * powered_sec * 1.001);
    free(samples);
    resmon_gpu_close(g);
}

static void nvml_energy_comes_from_the_counter(void **state)
{
    (void)state;
    setenv("FAKE_NVML", "energy_step_j=10", 1);
    resmon_gpu *g = open_ok("nvml:0");
    resmon_sample *samples;
    size_t n;
    resmon_summary s = monitor_with(g, 0.02, 0.1, &samples, &n);
    resmon_gpu_close(g);
    assert_int_equal(s.gpu_energy_source, RESMON_ENERGY_COUNTER);
    /* The counter advances 10 J per GPU reading: the window's energy is the
     * difference between the readings attached to its first and last samples. */
    assert_true(s.gpu_energy_j >= 30);
    ASSERT_DOUBLE_EQ(fmod(s.gpu_energy_j, 10.0), 0);
    free(samples);
}

static void nvml_lost_gpu_turns_readings_nan_and_sampling_goes_on(void **state)
{
    (void)state;
    setenv("FAKE_NVML", "lost_after=12", 1);
    resmon_sample *samples;
    size_t n;
    resmon_summary s =
        monitor_until_known("nvml:0", 0.005, 0.15, offsetof(resmon_sample, gpu_util), &samples, &n);
    assert_true(n >= 10);
    ASSERT_KNOWN_UNLESS_BUSY(FIRST_KNOWN(gpu_util), 42);
    ASSERT_NAN(samples[n - 1].gpu_util);
    ASSERT_NAN(samples[n - 1].gpu_mem_mb);
    assert_true(samples[n - 1].rss_mb > 0);          /* CPU and RSS carry on */
    ASSERT_KNOWN_UNLESS_BUSY(s.mean_gpu_util, 42); /* over the samples that had it */
    free(samples);
}

static void nvml_unknown_errors_mid_run_cost_only_readings(void **state)
{
    (void)state;
    setenv("FAKE_NVML", "fail_after=20", 1);
    resmon_gpu *g = open_ok("nvml:0");
    resmon_sample *samples;
    size_t n;
    resmon_summary s = monitor_with(g, 0.005, 0.15, &samples, &n);
    ASSERT_NAN(samples[n - 1].gpu_power_w);
    assert_true(s.num_samples >= 10);
    free(samples);
    resmon_gpu_close(g);
}

static void nvml_process_memory_counts_only_monitored_pids(void **state)
{
    (void)state;
    char config[128];
    snprintf(config, sizeof config, "procs=%d:256,999999:4096", (int)getpid());
    setenv("FAKE_NVML", config, 1);
    resmon_sample *samples;
    size_t n;
    resmon_summary s =
        monitor_until_known("nvml:0", 0.01, 0.03, offsetof(resmon_sample, gpu_proc_mem_mb), &samples, &n);
    ASSERT_KNOWN_UNLESS_BUSY(FIRST_KNOWN(gpu_proc_mem_mb), 256);
    ASSERT_KNOWN_UNLESS_BUSY(LAST_KNOWN(gpu_proc_mem_mb), 256);
    ASSERT_KNOWN_UNLESS_BUSY(s.peak_gpu_proc_mem_mb, 256);
    free(samples);
}

/* Several monitors may share one resmon_gpu (its retain/release count them),
 * each reading it on its own GPU thread; the backends keep per-device state
 * between calls (NVML's process list buffers), so readings must not overlap.
 * Under TSan an overlap is a reported race; everywhere, both monitors must
 * see the process memory, and closing the GPU first must be safe. */
static void two_monitors_share_one_gpu(void **state)
{
    (void)state;
    char config[128];
    snprintf(config, sizeof config, "procs=%d:256,999999:4096", (int)getpid());
    setenv("FAKE_NVML", config, 1);
    resmon_gpu *g = open_ok("nvml:0");
    resmon_options opts = RESMON_OPTIONS_INIT;
    opts.sample_interval_sec = 0.002;
    opts.gpu_interval_sec = 0.002;
    opts.gpu_profiler = resmon_gpu_profiler_of(g);
    resmon_monitor *a = test_monitor_new(&opts), *b = test_monitor_new(&opts);
    resmon_gpu_close(g); /* the monitors hold it now */
    assert_int_equal(resmon_monitor_start(a), 0);
    assert_int_equal(resmon_monitor_start(b), 0);
    double deadline = test_now() + test_scaled(5);
    while ((isnan(test_summary(a).peak_gpu_proc_mem_mb) || isnan(test_summary(b).peak_gpu_proc_mem_mb) ||
            test_summary(a).num_samples < 50) && test_now() < deadline)
        test_sleep(0.01);
    assert_int_equal(resmon_monitor_stop(a), 0);
    assert_int_equal(resmon_monitor_stop(b), 0);
    ASSERT_DOUBLE_EQ(test_summary(a).peak_gpu_proc_mem_mb, 256);
    ASSERT_DOUBLE_EQ(test_summary(b).peak_gpu_proc_mem_mb, 256);
    resmon_monitor_free(a);
    resmon_monitor_free(b);
}

static void all_gpus_aggregate_with_per_device_readings(void **state)
{
    (void)state;
    setenv("FAKE_NVML", "devices=3", 1);
    resmon_gpu *g = open_ok("all");
    /* 3 NVIDIA + the AMD card + the Intel card of the fixture tree */
    assert_int_equal(resmon_gpu_device_count(g), 5);
    const resmon_gpu_profiler *p = resmon_gpu_profiler_of(g);
    resmon_gpu_memory mem;
    assert_int_equal(p->get_memory_usage(p->ctx, &mem), 0);
    ASSERT_DOUBLE_EQ(mem.gpu_memory_used_mb, 1000 + 1100 + 1200 + 2048); /* summed; Intel has none */
    ASSERT_DOUBLE_EQ(mem.gpu_memory_total_mb, 3 * 81559 + 8192); /* over the same devices */
    resmon_gpu_power power;
    assert_int_equal(p->get_power_info(p->ctx, &power), 0);
    /* Each callback reads every device: by now Intel has power (from its
     * energy counter, unchanged: 0 W) but no limit, and a sum of limits that
     * misses a device drawing power would mislead. */
    ASSERT_DOUBLE_EQ(power.power_draw_w, 3 * 312.5 + 45);
    ASSERT_NAN(power.power_limit_w);
    double util;
    assert_int_equal(p->get_utilization(p->ctx, &util), 0);
    ASSERT_DOUBLE_EQ(util, (42 + 43 + 44 + 37) / 4.0); /* averaged over devices that have it */
    resmon_gpu_reading readings[8];
    assert_int_equal(resmon_gpu_last_readings(g, readings, 8, sizeof *readings), 5);
    ASSERT_DOUBLE_EQ(readings[1].util_percent, 43);
    ASSERT_DOUBLE_EQ(readings[3].util_percent, 37);
    ASSERT_NAN(readings[4].util_percent);
    double joules;
    assert_int_equal(p->get_energy(p->ctx, &joules), -ENOTSUP); /* AMD has no counter: no partial sum */
    resmon_gpu_close(g);
}

static void default_gpu_honours_cuda_visible_devices(void **state)
{
    (void)state;
    setenv("FAKE_NVML", "devices=2", 1);
    const char *values[] = {"1", "GPU-1932f937-d72c-4106-c12f-20bd9faed9f6,0", "1,0"};
    for (int i = 0; i < 3; i++) {
        setenv("CUDA_VISIBLE_DEVICES", values[i], 1);
        resmon_gpu *g = open_ok("auto");
        resmon_gpu_info info;
        resmon_gpu_device_info(g, 0, &info, sizeof info);
        assert_string_equal(info.name, "Fake H200 #1"); /* CUDA's device 0 comes first */
        assert_int_equal(resmon_gpu_device_count(g), i == 0 ? 1 : 2); /* every GPU the job sees */
        assert_non_null(strstr(resmon_gpu_selection(g), "CUDA_VISIBLE_DEVICES"));
        resmon_gpu_close(g);
    }
    unsetenv("CUDA_VISIBLE_DEVICES");
    resmon_gpu *g = open_ok("auto"); /* not a CUDA job: the first GPU, and it says so */
    assert_int_equal(resmon_gpu_device_count(g), 1);
    assert_non_null(strstr(resmon_gpu_selection(g), "CUDA_VISIBLE_DEVICES is unset"));
    resmon_gpu_close(g);
}

/* "", "-1" and "NoDevFiles" hide every NVIDIA GPU from CUDA: "auto" may still
 * measure another GPU, but must say that CUDA does not use it. */
static void cuda_hidden_gpus_are_said_not_silently_replaced(void **state)
{
    (void)state;
    setenv("FAKE_NVML", "devices=2", 1);
    const char *values[] = {"", "-1", "NoDevFiles", "0,0" /* a repeat: CUDA sees none */};
    for (int i = 0; i < 4; i++) {
        setenv("CUDA_VISIBLE_DEVICES", values[i], 1);
        resmon_gpu *g = open_ok("auto");
        resmon_gpu_info info;
        resmon_gpu_device_info(g, 0, &info, sizeof info);
        assert_string_equal(info.backend, "amd");
        const char *why = resmon_gpu_selection(g);
        if (!strstr(why, "not a GPU CUDA uses") || !strstr(why, "hides every NVIDIA GPU")) {
            print_error("selection for CUDA_VISIBLE_DEVICES='%s': %s\n", values[i], why);
            fail();
        }
        resmon_gpu_close(g);
    }
    assert_string_equal(resmon_gpu_selection(NULL), "");
}

/* Inside a container NVML sees only the injected GPUs, from 0: CDI sets
 * NVIDIA_VISIBLE_DEVICES=void while injecting them, Docker --gpus device=2
 * leaves NVIDIA_VISIBLE_DEVICES=2 with one GPU inside.  Neither is a selector. */
static void nvidia_visible_devices_is_the_runtimes_not_a_selector(void **state)
{
    (void)state;
    setenv("FAKE_NVML", "devices=1", 1); /* the one GPU the runtime injected */
    const char *values[] = {"void", "2", "none"};
    for (int i = 0; i < 3; i++) {
        setenv("NVIDIA_VISIBLE_DEVICES", values[i], 1);
        resmon_gpu *g = open_ok("auto");
        resmon_gpu_info info;
        resmon_gpu_device_info(g, 0, &info, sizeof info);
        assert_string_equal(info.backend, "nvml");
        assert_int_equal(info.index, 0);
        resmon_gpu_close(g);
    }
}

/* CUDA numbers devices fastest first, ties broken by PCI bus id; NVML's order
 * need not be either.  Here NVML's devices 0, 1, 2 sit on buses 0x30, 0x10,
 * 0x20, so CUDA's device 0 is NVML's 1 and CUDA's 1 is NVML's 2. */
static void cuda_indices_follow_cudas_order(void **state)
{
    (void)state;
    setenv("FAKE_NVML", "devices=3;bus=30,10,20", 1);
    setenv("CUDA_VISIBLE_DEVICES", "1", 1);
    const char *orders[] = {NULL, "PCI_BUS_ID"}; /* one model: both orders are PCI order */
    for (int i = 0; i < 2; i++) {
        if (orders[i])
            setenv("CUDA_DEVICE_ORDER", orders[i], 1);
        resmon_gpu *g = open_ok("auto");
        resmon_gpu_info info;
        resmon_gpu_device_info(g, 0, &info, sizeof info);
        assert_int_equal(info.index, 2);
        resmon_gpu_close(g);
    }
    /* Mixed models: fastest-first cannot be reproduced without CUDA; said, not guessed. */
    setenv("FAKE_NVML", "devices=3;bus=30,10,20;models=H200,L4,H200", 1);
    unsetenv("CUDA_DEVICE_ORDER");
    assert_int_equal(open_fails("auto", "CUDA_DEVICE_ORDER=PCI_BUS_ID"), -EINVAL);
    assert_int_equal(open_fails("all", "use GPU UUIDs"), -EINVAL);
    setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID", 1);
    setenv("CUDA_VISIBLE_DEVICES", "0", 1);
    resmon_gpu *g = open_ok("auto");
    resmon_gpu_info info;
    resmon_gpu_device_info(g, 0, &info, sizeof info);
    assert_string_equal(info.name, "Fake L4 #1");
    resmon_gpu_close(g);
    /* UUIDs need no order. */
    unsetenv("CUDA_DEVICE_ORDER");
    setenv("CUDA_VISIBLE_DEVICES", "GPU-2932f937-d72c-4106-c12f-20bd9faed9f6", 1);
    g = open_ok("auto");
    resmon_gpu_device_info(g, 0, &info, sizeof info);
    assert_int_equal(info.index, 2);
    resmon_gpu_close(g);
}

/* CUDA accepts a unique UUID prefix and both MIG forms, and stops at the
 * first entry that names no device. */
static void cuda_uuid_prefixes_and_mig_forms(void **state)
{
    (void)state;
    setenv("FAKE_NVML", "devices=3;mig=1", 1);
    static const struct {
        const char *value, *first_name;
        size_t devices;
    } cases[] = {
        {"GPU-2932f937", "Fake H200 #2", 1},
        {"GPU-2932f937,NoDevFiles,0", "Fake H200 #2", 1}, /* the list ends at the invalid entry */
        {"GPU-2932f937,GPU-,0", "Fake H200 #2", 1},       /* an ambiguous prefix is invalid */
        {"MIG-GPU-1932f937-d72c-4106-c12f-20bd9faed9f6/2/0", "Fake H200 #1 MIG 1g.18gb", 1},
        {"MIG-11b2c3d4-0000-4000-8000-000000000001", "Fake H200 #1 MIG 1g.18gb", 1},
        {"0,2", "Fake H200 #0", 2},
        {"1gpu2,0-2", "Fake H200 #1", 2}, /* an index is its leading digits, as strtoul reads it */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        setenv("CUDA_VISIBLE_DEVICES", cases[i].value, 1);
        resmon_gpu *g = open_ok("auto");
        resmon_gpu_info info;
        resmon_gpu_device_info(g, 0, &info, sizeof info);
        if (strcmp(info.name, cases[i].first_name) != 0 || resmon_gpu_device_count(g) != cases[i].devices) {
            print_error("CUDA_VISIBLE_DEVICES=%s: %zu device(s), first %s\n", cases[i].value,
                        resmon_gpu_device_count(g), info.name);
            fail();
        }
        resmon_gpu_close(g);
    }
}

/* A MIG instance opened by UUID: its GPU's index, no utilization (NVML says
 * NOT_SUPPORTED under MIG), everything else still read. */
static void mig_instance_by_uuid_records_its_gpu(void **state)
{
    (void)state;
    setenv("FAKE_NVML", "devices=3;mig=2", 1);
    resmon_gpu *g = open_ok("nvml:MIG-21b2c3d4-0000-4000-8000-000000000002");
    resmon_gpu_info info;
    resmon_gpu_device_info(g, 0, &info, sizeof info);
    assert_int_equal(info.index, 2);
    const resmon_gpu_profiler *p = resmon_gpu_profiler_of(g);
    double util;
    resmon_gpu_memory mem;
    assert_int_equal(p->get_utilization(p->ctx, &util), -ENOTSUP);
    assert_int_equal(p->get_memory_usage(p->ctx, &mem), 0);
    ASSERT_DOUBLE_EQ(mem.gpu_memory_used_mb, 1200 / 8.0);
    resmon_gpu_close(g);
}

/* "all" is every GPU the job can see: with CUDA_VISIBLE_DEVICES, its NVIDIA
 * GPUs, not every one on the node (other jobs' among them). */
static void all_reads_the_gpus_the_job_sees(void **state)
{
    (void)state;
    setenv("FAKE_NVML", "devices=4", 1);
    setenv("CUDA_VISIBLE_DEVICES", "3,2", 1);
    resmon_gpu *g = open_ok("all");
    assert_int_equal(resmon_gpu_device_count(g), 4); /* 2 NVIDIA + the AMD and Intel cards */
    resmon_gpu_info info;
    resmon_gpu_device_info(g, 0, &info, sizeof info);
    assert_int_equal(info.index, 3);
    resmon_gpu_device_info(g, 1, &info, sizeof info);
    assert_int_equal(info.index, 2);
    assert_non_null(strstr(resmon_gpu_selection(g), "all: 2 NVIDIA"));
    resmon_gpu_close(g);
    unsetenv("CUDA_VISIBLE_DEVICES");
    g = open_ok("all");
    assert_int_equal(resmon_gpu_device_count(g), 6);
    resmon_gpu_close(g);
}

static unsigned fake_touched(void)
{
    void *lib = dlopen(FAKE_NVML_PATH, RTLD_NOW | RTLD_NOLOAD);
    assert_non_null(lib);
    /* Copied, not cast: ISO C has no void * to function pointer conversion. */
    void *symbol = dlsym(lib, "fake_nvml_touched");
    assert_non_null(symbol);
    unsigned (*touched)(void);
    memcpy(&touched, &symbol, sizeof touched);
    unsigned mask = touched();
    dlclose(lib);
    return mask;
}

/* A counter the fake NVML exports (fake_nvml_utilization_calls, ...). */
static long fake_count(const char *name)
{
    void *lib = dlopen(FAKE_NVML_PATH, RTLD_NOW | RTLD_NOLOAD);
    assert_non_null(lib);
    void *symbol = dlsym(lib, name);
    assert_non_null(symbol);
    long (*count)(void);
    memcpy(&count, &symbol, sizeof count);
    long n = count();
    dlclose(lib);
    return n;
}

/* Runs a monitor of opts until a sample has the process's GPU memory (so a
 * whole reading with the pids has been taken) and the GPU was read at least
 * 10 times, then frees it and, with released, waits for *released (the
 * profiler's release, which runs after its last call returned).  The fake
 * NVML's counts of utilization calls and process queries during the
 * monitor's life come back in *util and *procs. */
static void monitor_counting_reads(const resmon_options *opts, atomic_int *released, long *util, long *procs)
{
    long util_before = fake_count("fake_nvml_utilization_calls");
    long procs_before = fake_count("fake_nvml_process_queries");
    resmon_monitor *m = test_monitor_new(opts);
    assert_int_equal(resmon_monitor_start(m), 0);
    double deadline = test_now() + test_scaled(5);
    while ((isnan(test_summary(m).peak_gpu_proc_mem_mb) ||
            fake_count("fake_nvml_process_queries") - procs_before < 10) && test_now() < deadline)
        test_sleep(0.005);
    assert_int_equal(resmon_monitor_stop(m), 0);
    ASSERT_DOUBLE_EQ(test_summary(m).peak_gpu_proc_mem_mb, 256);
    resmon_monitor_free(m);
    deadline = test_now() + test_scaled(5);
    while (released && atomic_load(released) == 0 && test_now() < deadline)
        test_sleep(0.005);
    *util = fake_count("fake_nvml_utilization_calls") - util_before;
    *procs = fake_count("fake_nvml_process_queries") - procs_before;
}

/* The table resmon_gpu_profiler_of returns, passed as it is, is recognised
 * by its address and read whole: each GPU poll reads every device once (one
 * utilization call and one process query per poll), not once per callback. */
static void own_table_is_read_in_one_pass(void **state)
{
    (void)state;
    char config[64];
    snprintf(config, sizeof config, "procs=%d:256", (int)getpid());
    setenv("FAKE_NVML", config, 1);
    resmon_gpu *g = open_ok("nvml:0");
    resmon_options opts = RESMON_OPTIONS_INIT;
    opts.sample_interval_sec = 0.002;
    opts.gpu_interval_sec = 0.002;
    opts.gpu_profiler = resmon_gpu_profiler_of(g);
    long util, procs;
    monitor_counting_reads(&opts, NULL, &util, &procs);
    resmon_gpu_close(g);
    assert_true(procs >= 3); /* two polls at least, which tell the paths apart */
    /* One utilization call per process query (the first query asks twice,
     * once for the list's size); at most one poll may be cut short by free,
     * after its utilization call. */
    if (util > procs + 1) {
        print_error("%ld utilization calls for %ld polls: the table was read callback by callback\n", util, procs);
        fail();
    }
}

/* A copy of that table is the caller's own: it is read through its
 * callbacks, so whatever the caller wrapped is honoured.  Here every metric
 * callback is the built-in's (before the tables were told apart by address,
 * such a copy was taken for the built-in and read in one pass) and the
 * lifetime hooks are wrapped: the wrappers hold the profiler, it is read
 * callback by callback (each callback reads every device), and each wrapper
 * runs once. */
static struct {
    const resmon_gpu_profiler *inner;
    atomic_int retained, released;
} wrapped;

static void wrapped_retain(void *ctx)
{
    atomic_fetch_add(&wrapped.retained, 1);
    wrapped.inner->retain(ctx);
}

static void wrapped_release(void *ctx)
{
    atomic_fetch_add(&wrapped.released, 1);
    wrapped.inner->release(ctx);
}

static void copied_table_is_read_through_its_callbacks(void **state)
{
    (void)state;
    char config[64];
    snprintf(config, sizeof config, "procs=%d:256", (int)getpid());
    setenv("FAKE_NVML", config, 1);
    resmon_gpu *g = open_ok("nvml:0");
    resmon_gpu_profiler copy = *resmon_gpu_profiler_of(g);
    wrapped.inner = resmon_gpu_profiler_of(g);
    atomic_store(&wrapped.retained, 0);
    atomic_store(&wrapped.released, 0);
    copy.retain = wrapped_retain;
    copy.release = wrapped_release;
    resmon_options opts = RESMON_OPTIONS_INIT;
    opts.sample_interval_sec = 0.002;
    opts.gpu_interval_sec = 0.002;
    opts.gpu_profiler = &copy;
    long util, procs;
    monitor_counting_reads(&opts, &wrapped.released, &util, &procs);
    assert_int_equal(atomic_load(&wrapped.retained), 1);
    assert_int_equal(atomic_load(&wrapped.released), 1);
    resmon_gpu_close(g);
    assert_true(procs >= 3); /* two polls at least, which tell the paths apart */
    /* Per poll: five callbacks read without pids, get_process_memory with
     * them -- six utilization calls for each process query (but the first,
     * which asks twice: once for the list's size). */
    if (util < 6 * (procs - 1)) {
        print_error("%ld utilization calls for %ld polls: the copy was read as the built-in table\n", util, procs);
        fail();
    }
}

/* nvmlDeviceGetHandleByIndex initialises the GPU it returns: opening one GPU
 * must not ask for the others, one of which here will not initialise. */
static void opening_asks_only_for_the_device_named(void **state)
{
    (void)state;
    setenv("FAKE_NVML", "devices=3;broken=0", 1);
    resmon_gpu *g = open_ok("nvml:GPU-1932f937-d72c-4106-c12f-20bd9faed9f6");
    resmon_gpu_info info;
    resmon_gpu_device_info(g, 0, &info, sizeof info);
    assert_int_equal(info.index, 1); /* from nvmlDeviceGetIndex */
    assert_int_equal(fake_touched(), 0);
    resmon_gpu *g2 = open_ok("nvml:2");
    assert_int_equal(fake_touched(), 1u << 2);
    resmon_gpu_close(g2);
    resmon_gpu_close(g);
}

/* GB10 (DGX Spark) has no memory of its own: v1 memory NOT_SUPPORTED, _v2
 * total 0.  "0 MiB used of 0" is not a reading. */
static void unified_memory_gpu_has_no_memory_figures(void **state)
{
    (void)state;
    setenv("FAKE_NVML", "unified=1", 1);
    resmon_gpu *g = open_ok("nvml:0");
    resmon_gpu_info info;
    resmon_gpu_device_info(g, 0, &info, sizeof info);
    ASSERT_NAN(info.memory_total_mb);
    const resmon_gpu_profiler *p = resmon_gpu_profiler_of(g);
    resmon_gpu_memory mem;
    assert_int_equal(p->get_memory_usage(p->ctx, &mem), -ENOTSUP);
    double util;
    assert_int_equal(p->get_utilization(p->ctx, &util), 0); /* the rest is read */
    resmon_gpu_close(g);
}

static int process_memory(const char *fake, const char *library, double *mb)
{
    setenv("FAKE_NVML", fake, 1);
    setenv("RESMON_NVML_LIBRARY", library, 1);
    resmon_gpu *g = open_ok("nvml:0");
    const resmon_gpu_profiler *p = resmon_gpu_profiler_of(g);
    pid_t self = getpid();
    int rc = p->get_process_memory(p->ctx, &self, 1, mb);
    resmon_gpu_close(g);
    setenv("RESMON_NVML_LIBRARY", FAKE_NVML_PATH, 1);
    return rc;
}

/* The monitored processes' GPU memory: 0 only when NVML says so. */
static void process_memory_is_unknown_unless_listed(void **state)
{
    (void)state;
    char fake[160];
    double mb;
    int self = (int)getpid();
    /* Not listed (another namespace's PIDs, or not on this GPU): unknown. */
    assert_int_equal(process_memory("procs=999999:4096", FAKE_NVML_PATH, &mb), -ENOTSUP);
    /* Listed, but NVML cannot say its memory: unknown, not 0. */
    snprintf(fake, sizeof fake, "procs=999999:4096,%d:na", self);
    assert_int_equal(process_memory(fake, FAKE_NVML_PATH, &mb), -ENOTSUP);
    /* An MPS client is on the MPS list only. */
    snprintf(fake, sizeof fake, "procs=999999:4096;mps=%d:128", self);
    assert_int_equal(process_memory(fake, FAKE_NVML_PATH, &mb), 0);
    ASSERT_DOUBLE_EQ(mb, 128);
    /* Drivers 535.43-535.86: 32-byte entries from _v3. */
    snprintf(fake, sizeof fake, "procs=999999:4096,%d:256", self);
    assert_int_equal(process_memory(fake, FAKE_NVML_535_43_PATH, &mb), 0);
    ASSERT_DOUBLE_EQ(mb, 256);
}

/* An aggregate is never a mean or sum over the devices that happened to
 * answer: a device that has a metric and fails to give it makes it unknown. */
static void aggregate_is_unknown_when_a_device_drops_out(void **state)
{
    (void)state;
    setenv("FAKE_NVML", "devices=2", 1);
    resmon_gpu *g = open_ok("all");
    const resmon_gpu_profiler *p = resmon_gpu_profiler_of(g);
    resmon_gpu_power power;
    /* Intel's first reading has no power yet (it comes from its energy counter). */
    assert_int_equal(p->get_power_info(p->ctx, &power), -ENOTSUP);
    assert_int_equal(p->get_power_info(p->ctx, &power), 0);
    ASSERT_DOUBLE_EQ(power.power_draw_w, 2 * 312.5 + 45);
    double util;
    assert_int_equal(p->get_utilization(p->ctx, &util), 0);
    ASSERT_DOUBLE_EQ(util, (42 + 43 + 37) / 3.0);
    /* The AMD GPU refuses gpu_busy_percent (EPERM in runtime suspend; a
     * directory stands in for the refusal, since root reads any file). */
    char path[512];
    snprintf(path, sizeof path, "%s/class/drm/card1/device/gpu_busy_percent", sysfs_root);
    unlink(path);
    mkdir(path, 0755);
    assert_int_equal(p->get_utilization(p->ctx, &util), -ENOTSUP);
    resmon_gpu_reading readings[4];
    assert_int_equal(resmon_gpu_last_readings(g, readings, 4, sizeof *readings), 4);
    ASSERT_DOUBLE_EQ(readings[0].util_percent, 42); /* each device still shows its own */
    ASSERT_NAN(readings[2].util_percent);
    rmdir(path);
    put("class/drm/card1/device/gpu_busy_percent", "37\n");
    resmon_gpu_close(g);
}

/* A reading of 8 GPUs takes longer than the 20 ms default GPU interval allows
 * before a reading goes stale (30 ms): the default interval follows the
 * measured read time, so samples keep their GPU values.  The fake takes 9 ms
 * per NVML process query (twice the 4.5 ms measured on real hardware), 72 ms
 * a reading: the bug (readings every 80 ms, fresh for 30) leaves ~60 % of the
 * samples without a GPU value at any load, the fix none on a quiet machine,
 * and a reading must come more than half an interval (72 ms here, 36 ms at
 * 4.5) late for a sample to miss it -- so the bound below holds at any load
 * the suite sees and stays far from the bug (a 10 % bound at 4.5 ms failed
 * with 8 of 72 beside another test under ASan). */
static void slow_eight_gpu_profiler_still_yields_readings(void **state)
{
    (void)state;
    setenv("FAKE_NVML", "devices=8;procs_slow_us=9000", 1);
    resmon_gpu *g = open_ok("all");
    resmon_sample *samples;
    size_t n;
    monitor_with(g, 0.01, 1.5, &samples, &n);
    resmon_gpu_close(g);
    size_t stale = 0;
    for (size_t i = 1; i < n; i++)
        stale += isnan(samples[i].gpu_mem_mb);
    /* Enough samples to tell (150 are due; how many a busy machine skips is
     * the schedule's business, not this test's), and at most a third stale
     * whatever the factor. */
    if ((double)n < fmin(30, 150 / test_time_factor()) || 3 * stale > n) {
        print_error("%zu of %zu samples without a GPU reading\n", stale, n);
        fail();
    }
    free(samples);
}

static void listing_finds_every_backend(void **state)
{
    (void)state;
    setenv("FAKE_NVML", "devices=2", 1);
    resmon_gpu_info infos[8];
    size_t count = 0;
    assert_int_equal(resmon_gpu_list(infos, 8, sizeof *infos, &count), 0);
    assert_int_equal(count, 4);
    assert_string_equal(infos[0].backend, "nvml");
    ASSERT_DOUBLE_EQ(infos[0].memory_total_mb, 81559);
    assert_string_equal(infos[2].backend, "amd");
    assert_string_equal(infos[2].name, "Radeon RX 580");
    assert_string_equal(infos[2].id, "0000:03:00.0");
    ASSERT_DOUBLE_EQ(infos[2].memory_total_mb, 8192);
    assert_string_equal(infos[3].backend, "intel");
    /* A short buffer still learns the count. */
    assert_int_equal(resmon_gpu_list(infos, 1, sizeof *infos, &count), 0);
    assert_int_equal(count, 4);
    /* Without NVML: no error, just fewer GPUs. */
    setenv("RESMON_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
    assert_int_equal(resmon_gpu_list(infos, 8, sizeof *infos, &count), 0);
    assert_int_equal(count, 2);
    setenv("RESMON_NVML_LIBRARY", FAKE_NVML_PATH, 1);
}

/* A machine with 40 AMD cards (card10..card49), in a sysfs tree of its own:
 * more than any per-backend buffer resmon once had (16). */
#define MANY_CARDS 40

static void build_many_cards(char *root, size_t cap)
{
    snprintf(root, cap, "/tmp/resmon-cards-XXXXXX");
    assert_non_null(mkdtemp(root));
    for (int i = 0; i < MANY_CARDS; i++) {
        char rel[128], text[64];
        int card = 10 + i;
        snprintf(rel, sizeof rel, "class/drm/card%d/device/vendor", card);
        put_under(root, rel, "0x1002\n");
        link_driver_under(root, card, "amdgpu");
        snprintf(rel, sizeof rel, "class/drm/card%d/device/product_name", card);
        snprintf(text, sizeof text, "Radeon %d\n", card);
        put_under(root, rel, text);
        snprintf(rel, sizeof rel, "class/drm/card%d/device/mem_info_vram_used", card);
        put_under(root, rel, "1048576\n"); /* 1 MiB each */
    }
}

static void listing_describes_every_card_and_writes_nothing_beyond_cap(void **state)
{
    (void)state;
    char root[64];
    build_many_cards(root, sizeof root);
    setenv("RESMON_SYSFS_ROOT", root, 1);
    setenv("RESMON_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
    resmon_gpu_info infos[64];
    memset(infos, 0xA5, sizeof infos);
    size_t count = 0;
    assert_int_equal(resmon_gpu_list(infos, 64, sizeof *infos, &count), 0);
    assert_int_equal(count, MANY_CARDS); /* what exists */
    for (size_t i = 0; i < count; i++) { /* every reported entry is described */
        char name[32];
        snprintf(name, sizeof name, "Radeon %zu", 10 + i);
        assert_string_equal(infos[i].backend, "amd");
        assert_int_equal(infos[i].index, i);
        assert_string_equal(infos[i].name, name);
    }
    unsigned char untouched[sizeof(resmon_gpu_info)];
    memset(untouched, 0xA5, sizeof untouched);
    for (size_t i = count; i < 64; i++)
        assert_memory_equal(&infos[i], untouched, sizeof untouched);
    /* A short buffer: the count of what exists, nothing written past cap. */
    memset(infos, 0xA5, sizeof infos);
    assert_int_equal(resmon_gpu_list(infos, 10, sizeof *infos, &count), 0);
    assert_int_equal(count, MANY_CARDS);
    assert_string_equal(infos[9].name, "Radeon 19");
    assert_memory_equal(&infos[10], untouched, sizeof untouched);
    /* "all" opens every one of them and sums their memory. */
    resmon_gpu *g = open_ok("all");
    assert_int_equal(resmon_gpu_device_count(g), MANY_CARDS);
    resmon_gpu_memory mem;
    const resmon_gpu_profiler *p = resmon_gpu_profiler_of(g);
    assert_int_equal(p->get_memory_usage(p->ctx, &mem), 0);
    ASSERT_DOUBLE_EQ(mem.gpu_memory_used_mb, MANY_CARDS);
    resmon_gpu_close(g);
    setenv("RESMON_SYSFS_ROOT", sysfs_root, 1);
    setenv("RESMON_NVML_LIBRARY", FAKE_NVML_PATH, 1);
    assert_int_equal(remove_tree(root), 0);
}

static void null_buffers_get_counts_not_writes(void **state)
{
    (void)state;
    setenv("FAKE_NVML", "devices=2", 1);
    resmon_gpu *g = open_ok("all");
    const resmon_gpu_profiler *p = resmon_gpu_profiler_of(g);
    double util;
    assert_int_equal(p->get_utilization(p->ctx, &util), 0);
    assert_int_equal(resmon_gpu_last_readings(g, NULL, 4, sizeof(resmon_gpu_reading)), 4); /* 2 NVIDIA, AMD, Intel */
    resmon_gpu_reading one;
    assert_int_equal(resmon_gpu_last_readings(g, &one, 1, sizeof one), 4);
    ASSERT_DOUBLE_EQ(one.util_percent, 42);
    assert_int_equal(resmon_gpu_last_readings(NULL, &one, 1, sizeof one), -EINVAL);
    resmon_gpu_info info;
    assert_int_equal(resmon_gpu_device_info(g, 0, NULL, sizeof info), -EINVAL);
    assert_int_equal(resmon_gpu_device_info(g, 4, &info, sizeof info), -EINVAL);
    assert_int_equal(resmon_gpu_device_info(NULL, 0, &info, sizeof info), -EINVAL);
    assert_int_equal(resmon_gpu_device_count(NULL), 0);
    assert_null(resmon_gpu_profiler_of(NULL));
    resmon_gpu_close(g);
    size_t count = 0;
    assert_int_equal(resmon_gpu_list(NULL, 0, sizeof(resmon_gpu_info), &count), 0);
    assert_int_equal(count, 4);
    assert_int_equal(resmon_gpu_list(NULL, 4, sizeof(resmon_gpu_info), &count), 0); /* no buffer: the count only */
    assert_int_equal(count, 4);
    assert_int_equal(resmon_gpu_list(&info, 1, sizeof info, NULL), -EINVAL);
    assert_int_equal(resmon_gpu_open(NULL, "auto", NULL, 0), -EINVAL);
    resmon_gpu_close(NULL);
}

/* The environment is read when a profiler or monitor opens, on the caller's
 * thread: changing it later (a host program's setenv, racing with the GPU
 * or sampler thread) changes nothing for what is already open. */
static void environment_is_read_once_when_opening(void **state)
{
    (void)state;
    resmon_gpu *g = open_ok("amd:0");
    put("class/powercap/intel-rapl:0/name", "package-0\n");
    put("class/powercap/intel-rapl:0/max_energy_range_uj", "2000000\n");
    put("class/powercap/intel-rapl:0/energy_uj", "1000000\n");
    resmon_options opts = {.struct_size = sizeof(resmon_options), .sample_interval_sec = 5, .gpu_profiler = resmon_gpu_profiler_of(g)};
    resmon_monitor *m = test_monitor_new(&opts);
    setenv("RESMON_SYSFS_ROOT", "/nonexistent", 1);
    assert_int_equal(resmon_monitor_start(m), 0);
    put("class/powercap/intel-rapl:0/energy_uj", "1250000\n");
    assert_int_equal(resmon_monitor_stop(m), 0);
    resmon_summary s = test_summary(m);
    resmon_monitor_free(m);
    ASSERT_DOUBLE_EQ(s.peak_gpu_mem_mb, 2048);     /* the GPU thread read the fixture */
    ASSERT_BETWEEN(s.cpu_energy_j, 0.25 - 1e-9, 0.25 + 1e-9); /* and so did RAPL */
    const resmon_gpu_profiler *p = resmon_gpu_profiler_of(g);
    double util;
    assert_int_equal(p->get_utilization(p->ctx, &util), 0);
    ASSERT_DOUBLE_EQ(util, 37);
    resmon_gpu_close(g);
    setenv("RESMON_SYSFS_ROOT", sysfs_root, 1);
    char powercap[160];
    snprintf(powercap, sizeof powercap, "%s/class/powercap", sysfs_root);
    assert_int_equal(remove_tree(powercap), 0);
}

/* ---- amdgpu and Intel sysfs ---------------------------------------------- */

static void amd_finds_its_card_by_vendor_not_number(void **state)
{
    (void)state;
    resmon_gpu *g = open_ok("amd:0"); /* card1: card0 is the Intel iGPU */
    const resmon_gpu_profiler *p = resmon_gpu_profiler_of(g);
    double util;
    resmon_gpu_memory mem;
    resmon_gpu_clocks clocks;
    resmon_gpu_power power;
    assert_int_equal(p->get_utilization(p->ctx, &util), 0);
    ASSERT_DOUBLE_EQ(util, 37);
    assert_int_equal(p->get_memory_usage(p->ctx, &mem), 0);
    ASSERT_DOUBLE_EQ(mem.gpu_memory_used_mb, 2048);
    ASSERT_DOUBLE_EQ(mem.gpu_memory_total_mb, 8192);
    assert_int_equal(p->get_clock_info(p->ctx, &clocks), 0);
    ASSERT_DOUBLE_EQ(clocks.gpu_clock_mhz, 1340);
    ASSERT_DOUBLE_EQ(clocks.mem_clock_mhz, 2000);
    assert_int_equal(p->get_power_info(p->ctx, &power), 0);
    ASSERT_DOUBLE_EQ(power.power_draw_w, 45); /* power1_input: no power1_average here */
    ASSERT_DOUBLE_EQ(power.power_limit_w, 185);
    double joules;
    assert_int_equal(p->get_energy(p->ctx, &joules), -ENOTSUP);
    resmon_gpu_close(g);
    assert_int_equal(open_fails("amd:1", "no AMD GPU 1 (found 1"), -ENOENT);
    assert_int_equal(open_fails("amd:x", "by index"), -EINVAL);
}

static void amd_prefers_power1_average(void **state)
{
    (void)state;
    put("class/drm/card1/device/hwmon/hwmon2/power1_average", "60000000\n");
    resmon_gpu *g = open_ok("amd:0");
    const resmon_gpu_profiler *p = resmon_gpu_profiler_of(g);
    resmon_gpu_power power;
    assert_int_equal(p->get_power_info(p->ctx, &power), 0);
    ASSERT_DOUBLE_EQ(power.power_draw_w, 60);
    resmon_gpu_close(g);
    char path[512];
    snprintf(path, sizeof path, "%s/class/drm/card1/device/hwmon/hwmon2/power1_average", sysfs_root);
    unlink(path);
}

static void amd_unreadable_busy_file_costs_only_utilization(void **state)
{
    (void)state;
    /* gpu_busy_percent answers EPERM during runtime suspend; root reads any
     * file, so a directory in its place (EISDIR) stands in for the refusal. */
    char path[512];
    snprintf(path, sizeof path, "%s/class/drm/card1/device/gpu_busy_percent", sysfs_root);
    unlink(path);
    mkdir(path, 0755);
    resmon_gpu *g = open_ok("amd:0");
    resmon_sample *samples;
    size_t n;
    resmon_summary s = monitor_with(g, 0.01, 0.03, &samples, &n);
    ASSERT_NAN(FIRST_KNOWN(gpu_util));
    ASSERT_DOUBLE_EQ(FIRST_KNOWN(gpu_mem_mb), 2048);
    ASSERT_DOUBLE_EQ(FIRST_KNOWN(gpu_clock_mhz), 1340);
    ASSERT_NAN(s.mean_gpu_util);
    assert_int_equal(s.gpu_energy_source, RESMON_ENERGY_INTEGRATED);
    free(samples);
    resmon_gpu_close(g);
    rmdir(path);
    put("class/drm/card1/device/gpu_busy_percent", "37\n");
}

/* APUs: memory lives mostly in GTT (nvtop reports VRAM + GTT), recognised by
 * having no VRAM vendor; Raven's gpu_busy_percent is stuck at 100. */
static void amd_apu_memory_is_vram_plus_gtt(void **state)
{
    (void)state;
    char root[64];
    snprintf(root, sizeof root, "/tmp/resmon-apu-XXXXXX");
    assert_non_null(mkdtemp(root));
    static const char *const ids[] = {"0x15dd\n", "0x15bf\n"}; /* Raven, Phoenix */
    for (int card = 0; card < 2; card++) {
        char rel[128];
#define APU_FILE(file, text)                                                        \
        snprintf(rel, sizeof rel, "class/drm/card%d/device/" file, card);          \
        put_under(root, rel, text)
        APU_FILE("vendor", "0x1002\n");
        APU_FILE("device", ids[card]);
        APU_FILE("gpu_busy_percent", card == 0 ? "100\n" : "12\n");
        APU_FILE("mem_info_vram_used", "268435456\n");   /* 256 MiB of a 512 MiB carve-out */
        APU_FILE("mem_info_vram_total", "536870912\n");
        APU_FILE("mem_info_gtt_used", "1073741824\n");   /* 1 GiB */
        APU_FILE("mem_info_gtt_total", "8589934592\n");  /* 8 GiB */
#undef APU_FILE
        link_driver_under(root, card, "amdgpu");
    }
    setenv("RESMON_SYSFS_ROOT", root, 1);
    setenv("RESMON_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
    for (int i = 0; i < 2; i++) {
        resmon_gpu *g = open_ok(i == 0 ? "amd:0" : "amd:1");
        resmon_gpu_info info;
        resmon_gpu_device_info(g, 0, &info, sizeof info);
        ASSERT_DOUBLE_EQ(info.memory_total_mb, 512 + 8192);
        const resmon_gpu_profiler *p = resmon_gpu_profiler_of(g);
        resmon_gpu_memory mem;
        assert_int_equal(p->get_memory_usage(p->ctx, &mem), 0);
        ASSERT_DOUBLE_EQ(mem.gpu_memory_used_mb, 256 + 1024);
        ASSERT_DOUBLE_EQ(mem.gpu_memory_total_mb, 512 + 8192);
        double util = -1;
        if (i == 0) {
            assert_int_equal(p->get_utilization(p->ctx, &util), -ENOTSUP); /* Raven: not a reading */
        } else {
            assert_int_equal(p->get_utilization(p->ctx, &util), 0);
            ASSERT_DOUBLE_EQ(util, 12);
        }
        resmon_gpu_close(g);
    }
    assert_int_equal(remove_tree(root), 0);
}

static void intel_clock_and_energy(void **state)
{
    (void)state;
    resmon_gpu *g = open_ok("intel:0");
    const resmon_gpu_profiler *p = resmon_gpu_profiler_of(g);
    /* Every callback takes a whole reading; power is the energy counter's
     * change between two readings, so the first has none. */
    resmon_gpu_power power;
    assert_int_equal(p->get_power_info(p->ctx, &power), -ENOTSUP);
    put("class/drm/card0/device/hwmon/hwmon3/energy1_input", "7000000\n");
    test_sleep(0.05);
    assert_int_equal(p->get_power_info(p->ctx, &power), 0);
    ASSERT_BETWEEN(power.power_draw_w, 2 / 0.5, 2 / 0.04); /* 2 J over about 50 ms */
    /* Back-to-back readings (a copied table is read callback by callback,
     * each callback one reading) keep the power of the last 10 ms window:
     * before, the clock's reading moved the baseline and the power read
     * microseconds later was 0 W.  A pair the scheduler split by 10 ms or
     * more proves nothing, so try again with fresh energy. */
    int in_window = 0;
    double written_j = 7;
    for (int attempt = 0; attempt < 20 && !in_window; attempt++) {
        char text[32];
        snprintf(text, sizeof text, "%d\n", 8000000 + attempt * 1000000);
        put("class/drm/card0/device/hwmon/hwmon3/energy1_input", text);
        written_j = 8 + attempt;
        test_sleep(0.02);
        resmon_gpu_power first, second;
        resmon_gpu_clocks between;
        double t0 = test_now();
        assert_int_equal(p->get_power_info(p->ctx, &first), 0);
        assert_int_equal(p->get_clock_info(p->ctx, &between), 0);
        assert_int_equal(p->get_power_info(p->ctx, &second), 0);
        if (test_now() - t0 < 0.01) {
            in_window = 1;
            assert_true(first.power_draw_w > 0);
            ASSERT_DOUBLE_EQ(second.power_draw_w, first.power_draw_w);
        }
    }
    resmon_gpu_clocks clocks;
    assert_int_equal(p->get_clock_info(p->ctx, &clocks), 0);
    ASSERT_DOUBLE_EQ(clocks.gpu_clock_mhz, 0); /* idle, not the requested 1100 */
    double joules;
    assert_int_equal(p->get_energy(p->ctx, &joules), 0);
    ASSERT_DOUBLE_EQ(joules, written_j); /* uJ -> J, from the hwmon named "i915" */
    double util;
    assert_int_equal(p->get_utilization(p->ctx, &util), -ENOTSUP);
    resmon_gpu_close(g);
    put("class/drm/card0/device/hwmon/hwmon3/energy1_input", "5000000\n");
    if (!in_window)
        skip(); /* twenty pairs each split by the scheduler: the back-to-back rule went unchecked */
}

/* xe on DG2 (Arc A-series): energy only as energy2_input (package), the
 * clock under tile0/gt0/freq0, act_freq 0 while idle. */
static void intel_xe_energy2_and_idle_clock(void **state)
{
    (void)state;
    char root[64];
    snprintf(root, sizeof root, "/tmp/resmon-xe-XXXXXX");
    assert_non_null(mkdtemp(root));
    put_under(root, "class/drm/card0/device/vendor", "0x8086\n");
    link_driver_under(root, 0, "xe");
    put_under(root, "class/drm/card0/device/tile0/gt0/freq0/act_freq", "0\n");
    put_under(root, "class/drm/card0/device/tile0/gt0/freq0/cur_freq", "1500\n");
    put_under(root, "class/drm/card0/device/hwmon/hwmon4/name", "xe\n");
    put_under(root, "class/drm/card0/device/hwmon/hwmon4/energy2_input", "3000000\n");
    setenv("RESMON_SYSFS_ROOT", root, 1);
    resmon_gpu *g = open_ok("intel:0");
    const resmon_gpu_profiler *p = resmon_gpu_profiler_of(g);
    double joules;
    assert_int_equal(p->get_energy(p->ctx, &joules), 0);
    ASSERT_DOUBLE_EQ(joules, 3);
    resmon_gpu_clocks clocks;
    assert_int_equal(p->get_clock_info(p->ctx, &clocks), 0);
    ASSERT_DOUBLE_EQ(clocks.gpu_clock_mhz, 0);
    put_under(root, "class/drm/card0/device/tile0/gt0/freq0/act_freq", "2050\n");
    assert_int_equal(p->get_clock_info(p->ctx, &clocks), 0);
    ASSERT_DOUBLE_EQ(clocks.gpu_clock_mhz, 2050);
    resmon_gpu_close(g);
    assert_int_equal(remove_tree(root), 0);
}

/* ---- CPU package energy (RAPL) ------------------------------------------- */

static void rapl_counts_packages_only_and_is_wrap_safe(void **state)
{
    (void)state;
    put("class/powercap/intel-rapl:0/name", "package-0\n");
    put("class/powercap/intel-rapl:0/max_energy_range_uj", "2000000\n");
    put("class/powercap/intel-rapl:0/energy_uj", "1000000\n");
    put("class/powercap/intel-rapl:0:0/name", "core\n"); /* a sub-zone: part of the package */
    put("class/powercap/intel-rapl:0:0/max_energy_range_uj", "2000000\n");
    put("class/powercap/intel-rapl:0:0/energy_uj", "999999\n");
    /* Skylake and later: a top-level zone for the whole platform, which
     * already contains the package. */
    put("class/powercap/intel-rapl:1/name", "psys\n");
    put("class/powercap/intel-rapl:1/max_energy_range_uj", "2000000\n");
    put("class/powercap/intel-rapl:1/energy_uj", "100000\n");
    resmon_options opts = {.struct_size = sizeof(resmon_options), .sample_interval_sec = 5};
    resmon_monitor *m = test_monitor_new(&opts);
    assert_int_equal(resmon_monitor_start(m), 0);
    put("class/powercap/intel-rapl:0/energy_uj", "500000\n"); /* wrapped: 1.0 J + 0.5 J */
    put("class/powercap/intel-rapl:1/energy_uj", "1900000\n"); /* psys: 1.8 J, not counted */
    assert_int_equal(resmon_monitor_stop(m), 0);
    resmon_summary s = test_summary(m);
    resmon_monitor_free(m);
    ASSERT_BETWEEN(s.cpu_energy_j, 1.5 - 1e-9, 1.5 + 1e-9);
    char powercap[160];
    snprintf(powercap, sizeof powercap, "%s/class/powercap", sysfs_root);
    assert_int_equal(remove_tree(powercap), 0);
}

static void slow_nvml_call_leaves_cpu_sampling_on_time(void **state)
{
    (void)state;
    setenv("FAKE_NVML", "slow_ms=200", 1); /* every utilization call takes 200 ms */
    resmon_gpu *g = open_ok("nvml:0");
    resmon_sample *samples;
    size_t n;
    double t0 = test_now();
    resmon_summary s = monitor_for(g, 0.01, 0.6, &samples, &n); /* its bounds scale themselves */
    double elapsed = test_now() - t0;
    resmon_gpu_close(g);
    /* ~60 CPU/RSS samples, not one per GPU call (4: a sampler that waited
     * for the GPU would skip ~56 slots); a busy machine skips more slots
     * (35 seen under six busy loops; 4-12 under four), and load may arrive
     * after the time factor was chosen, so the bounds are the busy ones
     * whatever the factor: 40 is still far from 56.  The quiet figure is
     * bench_sampler's. */
    ASSERT_BETWEEN((double)n, 20, 1000);
    ASSERT_BETWEEN((double)s.skipped_slots, 0, 40);
    /* Start and stop waited at most 200 ms each, not for every call queued:
     * 3 s of slack, which load met so far does not reach. */
    ASSERT_BETWEEN(elapsed, 0.6, 0.6 + 3.0);
    free(samples);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(nvml_reads_every_metric, fresh_environment),
        cmocka_unit_test_setup(nvml_falls_back_to_v1_memory, fresh_environment),
        cmocka_unit_test_setup(nvml_selects_by_index_uuid_and_pci, fresh_environment),
        cmocka_unit_test_setup(nvml_failures_say_why, fresh_environment),
        cmocka_unit_test_setup(nvml_unsupported_metric_is_nan_only_for_itself, fresh_environment),
        cmocka_unit_test_setup(nvml_energy_comes_from_the_counter, fresh_environment),
        cmocka_unit_test_setup(nvml_lost_gpu_turns_readings_nan_and_sampling_goes_on, fresh_environment),
        cmocka_unit_test_setup(nvml_unknown_errors_mid_run_cost_only_readings, fresh_environment),
        cmocka_unit_test_setup(nvml_process_memory_counts_only_monitored_pids, fresh_environment),
        cmocka_unit_test_setup(two_monitors_share_one_gpu, fresh_environment),
        cmocka_unit_test_setup(own_table_is_read_in_one_pass, fresh_environment),
        cmocka_unit_test_setup(copied_table_is_read_through_its_callbacks, fresh_environment),
        cmocka_unit_test_setup(all_gpus_aggregate_with_per_device_readings, fresh_environment),
        cmocka_unit_test_setup(default_gpu_honours_cuda_visible_devices, fresh_environment),
        cmocka_unit_test_setup(cuda_hidden_gpus_are_said_not_silently_replaced, fresh_environment),
        cmocka_unit_test_setup(nvidia_visible_devices_is_the_runtimes_not_a_selector, fresh_environment),
        cmocka_unit_test_setup(cuda_indices_follow_cudas_order, fresh_environment),
        cmocka_unit_test_setup(cuda_uuid_prefixes_and_mig_forms, fresh_environment),
        cmocka_unit_test_setup(mig_instance_by_uuid_records_its_gpu, fresh_environment),
        cmocka_unit_test_setup(all_reads_the_gpus_the_job_sees, fresh_environment),
        cmocka_unit_test_setup(opening_asks_only_for_the_device_named, fresh_environment),
        cmocka_unit_test_setup(unified_memory_gpu_has_no_memory_figures, fresh_environment),
        cmocka_unit_test_setup(process_memory_is_unknown_unless_listed, fresh_environment),
        cmocka_unit_test_setup(aggregate_is_unknown_when_a_device_drops_out, fresh_environment),
        cmocka_unit_test_setup(slow_eight_gpu_profiler_still_yields_readings, fresh_environment),
        cmocka_unit_test_setup(listing_finds_every_backend, fresh_environment),
        cmocka_unit_test_setup(listing_describes_every_card_and_writes_nothing_beyond_cap, fresh_environment),
        cmocka_unit_test_setup(null_buffers_get_counts_not_writes, fresh_environment),
        cmocka_unit_test_setup(environment_is_read_once_when_opening, fresh_environment),
        cmocka_unit_test_setup(amd_finds_its_card_by_vendor_not_number, fresh_environment),
        cmocka_unit_test_setup(amd_prefers_power1_average, fresh_environment),
        cmocka_unit_test_setup(amd_unreadable_busy_file_costs_only_utilization, fresh_environment),
        cmocka_unit_test_setup(amd_apu_memory_is_vram_plus_gtt, fresh_environment),
        cmocka_unit_test_setup(intel_clock_and_energy, fresh_environment),
        cmocka_unit_test_setup(intel_xe_energy2_and_idle_clock, fresh_environment),
        cmocka_unit_test_setup(rapl_counts_packages_only_and_is_wrap_safe, fresh_environment),
        cmocka_unit_test_setup(slow_nvml_call_leaves_cpu_sampling_on_time, fresh_environment),
    };
    return cmocka_run_group_tests(tests, setup_all, teardown_all);
}
