/*
 * json_check.c -- reads a summary JSON file back with the library's
 * resmon_summary_from_json and prints its fields, for the command's tests.
 *   json_check FILE   ->  "num_samples=N peak_rss_mb=X ..." or "error: ..." (exit 1)
 */
#include "resmon.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    FILE *f = fopen(argv[1], "rb");
    if (!f)
        return 2;
    static char text[1 << 20];
    size_t n = fread(text, 1, sizeof text, f);
    fclose(f);
    resmon_summary s;
    char err[256];
    if (resmon_summary_from_json(text, n, &s, sizeof s, err, sizeof err) != 0) {
        printf("error: %s\n", err);
        return 1;
    }
    printf("num_samples=%llu peak_rss_mb=%.17g mean_rss_mb=%.17g duration_sec=%.17g hwm_rss_mb=%.17g hwm_scope=%d "
           "cpu_time_sec=%.17g mean_cpu_percent=%.17g skipped_slots=%llu\n",
           (unsigned long long)s.num_samples, s.peak_rss_mb, s.mean_rss_mb, s.duration_sec, s.hwm_rss_mb,
           (int)s.hwm_scope, s.cpu_time_sec, s.mean_cpu_percent, (unsigned long long)s.skipped_slots);
    return 0;
}
