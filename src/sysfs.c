/*
 * sysfs.c -- small sysfs reads under RESMON_SYSFS_ROOT (see sysfs.h).
 */
#include "sysfs.h"
#include "procfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *rm__sysfs_root(void)
{
    const char *root = secure_getenv("RESMON_SYSFS_ROOT");
    return root && *root ? root : "/sys";
}

ssize_t rm__sysfs_read(const char *relative, char *buf, size_t cap)
{
    char path[1024];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", rm__sysfs_root(), relative) >= sizeof path)
        return -ENAMETOOLONG;
    ssize_t n = rm__read_file_at(AT_FDCWD, path, buf, cap);
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
        buf[--n] = '\0';
    return n;
}

int rm__sysfs_read_u64(const char *relative, uint64_t *out)
{
    char text[64];
    ssize_t n = rm__sysfs_read(relative, text, sizeof text);
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
