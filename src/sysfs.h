/*
 * sysfs.h -- reading small sysfs files under a movable root.
 *
 * RESMON_SYSFS_ROOT (default "/sys") moves resmon's whole view of sysfs --
 * DRM cards, hwmon, powercap -- so tests can point it at a fixture tree.
 */
#ifndef RESMON_SYSFS_H
#define RESMON_SYSFS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

const char *rm__sysfs_root(void);

/* Reads the file at root/relative into buf (NUL-terminated, trailing
 * newline removed).  Returns the length or a negative errno. */
ssize_t rm__sysfs_read(const char *relative, char *buf, size_t cap);

/* Reads a file holding one unsigned decimal (or 0x hex) integer. */
int rm__sysfs_read_u64(const char *relative, uint64_t *out);

#endif
