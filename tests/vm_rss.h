/*
 * vm_rss.h -- a process's VmRSS (or VmHWM), as the kernel's status file says
 * it: the one reader that tests/test_phases.c, tests/test_monitor_processes.c
 * and bench/bench_sampler.c share.
 */
#ifndef RESMON_TEST_VM_RSS_H
#define RESMON_TEST_VM_RSS_H

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

/* A "Name:   N kB" line of pid's status file (0: this process), in MiB;
 * NAN when it cannot be read.  field is "VmRSS:", "VmHWM:", ... */
static inline double vm_status_mb_of(pid_t pid, const char *field)
{
    char path[64], line[256];
    if (pid)
        snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    else
        snprintf(path, sizeof path, "/proc/self/status");
    FILE *f = fopen(path, "r");
    double kb = NAN;
    size_t len = strlen(field);
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, field, len) == 0 && sscanf(line + len, " %lf kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb / 1024.0;
}

/* VmRSS of pid (0: this process) in MiB; NAN when it cannot be read. */
static inline double vm_rss_mb_of(pid_t pid)
{
    return vm_status_mb_of(pid, "VmRSS:");
}

#endif
