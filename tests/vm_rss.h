/*
 * vm_rss.h -- a process's VmRSS, as the kernel's status file says it: the
 * one reader that tests/test_phases.c and bench/bench_sampler.c share.
 */
#ifndef RESMON_TEST_VM_RSS_H
#define RESMON_TEST_VM_RSS_H

#include <math.h>
#include <stdio.h>
#include <sys/types.h>

/* VmRSS of pid (0: this process) in MiB; NAN when it cannot be read. */
static inline double vm_rss_mb_of(pid_t pid)
{
    char path[64], line[256];
    if (pid)
        snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    else
        snprintf(path, sizeof path, "/proc/self/status");
    FILE *f = fopen(path, "r");
    double kb = NAN;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %lf kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb / 1024.0;
}

#endif
