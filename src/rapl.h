/*
 * rapl.h -- CPU package energy from the powercap RAPL counters.
 *
 * Each package zone (class/powercap/intel-rapl:N named "package-N", also on
 * AMD Zen; never "psys", the whole platform) has an energy_uj counter that
 * wraps at max_energy_range_uj.  The counter is root-only on most systems
 * since CVE-2020-8694: EACCES simply means unavailable.
 * Reading it often enough to see every wrap (the range is minutes at full
 * power) and adding up the differences gives the window's energy.
 */
#ifndef RESMON_RAPL_H
#define RESMON_RAPL_H

#include "sysfs.h"

#include <stdint.h>

#define RM__RAPL_MAX_ZONES 8

typedef struct rm__rapl {
    int zone_count;
    int fd[RM__RAPL_MAX_ZONES];
    uint64_t range_uj[RM__RAPL_MAX_ZONES];
    uint64_t last_uj[RM__RAPL_MAX_ZONES];
    double total_j;
} rm__rapl;

/* Opens every readable package zone under fs and takes the first reading.
 * Returns the number of zones (0: unavailable). */
int rm__rapl_open(rm__rapl *r, const rm__sysfs *fs);

/* Adds the energy since the previous reading (wrap-safe). */
void rm__rapl_read(rm__rapl *r);

void rm__rapl_close(rm__rapl *r);

#endif
