/*
 * consumer_0_3.c -- a program built against a frozen copy of resmon.h 0.3
 * (tests/abi/resmon-0.3/resmon.h, never edited), run against the library of
 * this tree.  While the library's structs grow, this must keep passing: that
 * is the promise of resmon.h's "Versioning and growth".
 */
#include "resmon.h" /* the 0.3 copy: its directory comes first on the include path */

#include <stdio.h>
#include <string.h>

#if RESMON_VERSION_MAJOR != 0 || RESMON_VERSION_MINOR != 3
#error "this consumer must see the frozen 0.3 header"
#endif

static int samples_seen;

static void count(const resmon_sample *s, void *user)
{
    (void)user;
    samples_seen += s->rss_mb > 0;
}

static int util(void *ctx, double *percent)
{
    (void)ctx;
    *percent = 12.5;
    return 0;
}

int main(void)
{
    resmon_gpu_profiler gpu = RESMON_GPU_PROFILER_INIT;
    gpu.get_utilization = util;
    resmon_options opts = RESMON_OPTIONS_INIT;
    opts.sample_interval_sec = 0.005;
    opts.gpu_profiler = &gpu;
    opts.on_sample = count;
    resmon_monitor *m;
    int rc = resmon_monitor_new(&m, &opts);
    if (rc != 0) {
        printf("new: %s\n", resmon_strerror(rc));
        return 1;
    }
    if (resmon_monitor_start(m) != 0 || resmon_monitor_stop(m) != 0)
        return 1;
    resmon_sample samples[4];
    memset(samples, 0xA5, sizeof samples);
    long n = (long)resmon_monitor_get_samples(m, samples, 2, sizeof *samples);
    resmon_summary s;
    rc = resmon_monitor_get_summary(m, &s, sizeof s);
    char json[2048];
    int len = resmon_summary_to_json(&s, json, sizeof json);
    resmon_summary back;
    int ok = n >= 2 && rc == 0 && s.struct_size == sizeof s && s.num_samples == (uint64_t)n &&
             samples_seen == n && samples[0].rss_mb > 0 && samples[1].timestamp >= samples[0].timestamp &&
             memcmp(&samples[2], &samples[3], sizeof samples[2]) == 0 /* both still 0xA5: never written */ &&
             len > 0 && resmon_summary_from_json(json, (size_t)len, &back, sizeof back, NULL, 0) == 0 &&
             back.num_samples == s.num_samples;
    printf("%s: %ld samples, %s\n", ok ? "ok" : "FAILED", n, json);
    resmon_monitor_free(m);
    return ok ? 0 : 1;
}
