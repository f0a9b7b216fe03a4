/*
 * fuzz_summary_json.c -- libFuzzer target for resmon_summary_from_json.
 *
 * Every input must be accepted or rejected with -EINVAL (-E2BIG when longer
 * than RESMON_SUMMARY_JSON_MAX_BYTES), never crash or read past the given
 * length; whatever is accepted must survive a round trip
 * through resmon_summary_to_json unchanged.
 */
#include "resmon.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int same_double(double a, double b)
{
    return (isnan(a) && isnan(b)) || a == b;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    resmon_summary s;
    char err[128];
    int rc = resmon_summary_from_json((const char *)data, size, &s, sizeof s, err, sizeof err);
    if (rc != 0) {
        int expected = size > RESMON_SUMMARY_JSON_MAX_BYTES ? -E2BIG : -EINVAL;
        if (rc != expected || err[0] == '\0')
            abort();
        return 0;
    }
    char text[2048];
    int n = resmon_summary_to_json(&s, text, sizeof text);
    if (n < 0 || (size_t)n >= sizeof text)
        abort();
    resmon_summary back;
    if (resmon_summary_from_json(text, (size_t)n, &back, sizeof back, err, sizeof err) != 0)
        abort();
    if (!same_double(back.peak_rss_mb, s.peak_rss_mb) || !same_double(back.mean_rss_mb, s.mean_rss_mb) ||
        !same_double(back.peak_gpu_mem_mb, s.peak_gpu_mem_mb) || back.num_samples != s.num_samples ||
        !same_double(back.duration_sec, s.duration_sec) || !same_double(back.hwm_rss_mb, s.hwm_rss_mb))
        abort();
    return 0;
}
