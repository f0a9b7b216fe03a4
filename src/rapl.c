/*
 * rapl.c -- CPU package energy from powercap RAPL (see rapl.h).
 */
#include "rapl.h"
#include "fileio.h"
#include "regular_file.h"
#include "sysfs.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int read_counter(int fd, uint64_t *out)
{
    char text[32];
    ssize_t n = rm__pread_file(fd, text, sizeof text);
    if (n <= 0)
        return -1;
    char *end;
    unsigned long long value = strtoull(text, &end, 10);
    if (end == text)
        return -1;
    *out = value;
    return 0;
}

/* A top-level zone ("intel-rapl:N") named "package-N".  Sub-zones
 * ("intel-rapl:0:0": core, uncore, dram) are parts of a package, and on
 * Intel client CPUs (Skylake on) one top-level zone is "psys", the whole
 * platform, packages included: either would count energy twice. */
static int is_package_zone(const rm__sysfs *fs, const char *zone)
{
    const char *colon = strchr(zone, ':');
    if (strncmp(zone, "intel-rapl:", 11) != 0 || !colon || strchr(colon + 1, ':'))
        return 0;
    char rel[PATH_MAX], name[64];
    if ((size_t)snprintf(rel, sizeof rel, "class/powercap/%s/name", zone) >= sizeof rel ||
        rm__sysfs_read(fs, rel, name, sizeof name) < 0)
        return 0;
    return strncmp(name, "package-", 8) == 0;
}

int rm__rapl_open(rm__rapl *r, const rm__sysfs *fs)
{
    memset(r, 0, sizeof *r);
    DIR *dir = rm__sysfs_opendir(fs, "class/powercap");
    if (!dir)
        return 0;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL && r->zone_count < RM__RAPL_MAX_ZONES) {
        if (!is_package_zone(fs, e->d_name))
            continue;
        char rel[PATH_MAX];
        uint64_t range;
        if ((size_t)snprintf(rel, sizeof rel, "class/powercap/%s/max_energy_range_uj", e->d_name) >= sizeof rel ||
            rm__sysfs_read_u64(fs, rel, &range) < 0 || range == 0)
            continue;
        char path[PATH_MAX];
        if ((size_t)snprintf(rel, sizeof rel, "class/powercap/%s/energy_uj", e->d_name) >= sizeof rel ||
            rm__sysfs_path(fs, rel, path, sizeof path) < 0)
            continue;
        int fd = open(path, RM__READ_FLAGS);
        if (fd < 0)
            continue; /* EACCES: root-only, unavailable */
        int i = r->zone_count;
        if (read_counter(fd, &r->last_uj[i]) < 0) {
            close(fd);
            continue;
        }
        r->fd[i] = fd;
        r->range_uj[i] = range;
        r->zone_count++;
    }
    closedir(dir);
    return r->zone_count;
}

void rm__rapl_read(rm__rapl *r)
{
    for (int i = 0; i < r->zone_count; i++) {
        uint64_t now;
        if (read_counter(r->fd[i], &now) < 0)
            continue;
        uint64_t delta = now >= r->last_uj[i] ? now - r->last_uj[i] : (r->range_uj[i] - r->last_uj[i]) + now;
        r->total_j += (double)delta / 1e6;
        r->last_uj[i] = now;
    }
}

void rm__rapl_close(rm__rapl *r)
{
    for (int i = 0; i < r->zone_count; i++)
        close(r->fd[i]);
    r->zone_count = 0;
}
