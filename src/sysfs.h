/*
 * sysfs.h -- reading small sysfs files under a movable root.
 *
 * RESMON_SYSFS_ROOT (default "/sys") moves resmon's whole view of sysfs --
 * DRM cards, hwmon, powercap -- so tests can point it at a fixture tree.  The
 * variable is read once, by whoever opens something that reads sysfs (a GPU
 * profiler or list, a monitor's RAPL counters), on the caller's thread; the
 * root then travels with what was opened (prmon's read_path model).  Reading
 * it again on the GPU or sampler thread would race with a host program's
 * setenv.
 */
#ifndef RESMON_SYSFS_H
#define RESMON_SYSFS_H

#include <dirent.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct rm__sysfs {
    char root[PATH_MAX]; /* no trailing slash needed */
} rm__sysfs;

/* RESMON_SYSFS_ROOT when set and not empty (ignored in setuid programs),
 * else "/sys". */
void rm__sysfs_from_env(rm__sysfs *fs);

/* Writes root/relative into path; -ENAMETOOLONG when it does not fit. */
int rm__sysfs_path(const rm__sysfs *fs, const char *relative, char *path, size_t cap);

/* Reads the file at root/relative into buf (NUL-terminated, trailing
 * newline removed).  Returns the length or a negative errno. */
/* opendir of a directory under the root; NULL (errno set) when it fails. */
DIR *rm__sysfs_opendir(const rm__sysfs *fs, const char *relative);
ssize_t rm__sysfs_read(const rm__sysfs *fs, const char *relative, char *buf, size_t cap);

/* Reads a file holding one unsigned decimal (or 0x hex) integer. */
int rm__sysfs_read_u64(const rm__sysfs *fs, const char *relative, uint64_t *out);

#endif
