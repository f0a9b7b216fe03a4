/*
 * textfile.c -- --textfile: the exposition as a file for node_exporter's
 * textfile collector, replaced atomically.
 *
 * node_exporter reads the directory whenever it is scraped; a file caught
 * half-written would be a parse error for the whole collector.  So every
 * write goes to a temporary file in the same directory (same filesystem,
 * rename is atomic) and is renamed over the old one.  The temporary name
 * does not end in .prom, so the collector never reads it.
 */
#include "exporters.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* path + ".XXXXXX.tmp" in a malloc'ed template for mkostemps. */
static char *temporary_template(const char *path)
{
    static const char suffix[] = ".XXXXXX.tmp";
    size_t n = strlen(path);
    char *tmpl = malloc(n + sizeof suffix);
    if (tmpl) {
        memcpy(tmpl, path, n);
        memcpy(tmpl + n, suffix, sizeof suffix);
    }
    return tmpl;
}

static int open_temporary(const char *path, char **out_name)
{
    char *name = temporary_template(path);
    if (!name)
        return -ENOMEM;
    int fd = mkostemps(name, 4, O_CLOEXEC);
    if (fd < 0) {
        int err = -errno;
        free(name);
        return err;
    }
    *out_name = name;
    return fd;
}

int textfile_check(const char *path)
{
    char *name = NULL;
    int fd = open_temporary(path, &name);
    if (fd < 0)
        return fd;
    close(fd);
    unlink(name);
    free(name);
    return 0;
}

int textfile_write(const char *path, const char *text, size_t len)
{
    char *name = NULL;
    int fd = open_temporary(path, &name);
    if (fd < 0)
        return fd;
    int err = 0;
    for (size_t done = 0; done < len && !err;) {
        ssize_t n = write(fd, text + done, len - done);
        if (n < 0 && errno != EINTR)
            err = -errno;
        else if (n > 0)
            done += (size_t)n;
    }
    /* mkostemps creates 0600; a collector running as another user must read it. */
    if (!err && fchmod(fd, 0644) != 0)
        err = -errno;
    if (close(fd) != 0 && !err)
        err = -errno;
    if (!err && rename(name, path) != 0)
        err = -errno;
    if (err)
        unlink(name);
    free(name);
    return err;
}
