/*
 * sysfs.c -- small sysfs reads under a root read once (see sysfs.h).
 */
#include "sysfs.h"
#include "fileio.h"
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rm__sysfs_from_env(rm__sysfs *fs)
{
    const char *root = secure_getenv("RESMON_SYSFS_ROOT");
    if (!root || !*root)
        root = "/sys";
    rm__copy_string(fs->root, sizeof fs->root, root, strlen(root));
}

int rm__sysfs_path(const rm__sysfs *fs, const char *relative, char *path, size_t cap)
{
    int n = snprintf(path, cap, "%s/%s", fs->root, relative);
    return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

DIR *rm__sysfs_opendir(const rm__sysfs *fs, const char *relative)
{
    char path[PATH_MAX];
    if (rm__sysfs_path(fs, relative, path, sizeof path) < 0) {
        errno = ENAMETOOLONG;
        return NULL;
    }
    return opendir(path);
}

ssize_t rm__sysfs_read(const rm__sysfs *fs, const char *relative, char *buf, size_t cap)
{
    char path[PATH_MAX];
    int rc = rm__sysfs_path(fs, relative, path, sizeof path);
    if (rc < 0)
        return rc;
    ssize_t n = rm__read_kernel_file_at(AT_FDCWD, path, buf, cap); /* GPU counters: every sample */
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
        buf[--n] = '\0';
    return n;
}

int rm__sysfs_read_u64(const rm__sysfs *fs, const char *relative, uint64_t *out)
{
    char text[64];
    ssize_t n = rm__sysfs_read(fs, relative, text, sizeof text);
    if (n < 0)
        return (int)n;
    if (n == 0 || text[0] == '-')
        return -EINVAL;
    char *end;
    errno = 0;
    unsigned long long value = strtoull(text, &end, 0);
    if (errno || end == text || *end != '\0')
        return -EINVAL;
    *out = value;
    return 0;
}
