/*
 * input_file.c -- opening what compare and plot read: regular files only.
 *
 * A FIFO among a directory's runs, or given as a run, would block open() for
 * ever; a device reads for ever or not at all.  Inputs are opened without
 * blocking and checked with fstat (common/regular_file.h, the library's own
 * check), and anything else is named in the one-line error: "b.json: a
 * FIFO, not a regular file".
 */
#include "input_file.h"
#include "path_checked.h"
#include "regular_file.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

static void say_why(int err, mode_t mode, char *why, size_t cap)
{
    if (err == -ESPIPE)
        snprintf(why, cap, "%s, not a regular file", rm__file_kind(mode));
    else if (err == -EISDIR)
        snprintf(why, cap, "a directory, not a regular file");
    else if (err == -ENOENT)
        snprintf(why, cap, "no such file or directory");
    else if (err == -EAGAIN)
        snprintf(why, cap, "it changed while it was being opened");
    else
        snprintf(why, cap, "cannot be read (%s)", strerror(-err));
}

/* Opens the entry the checked walk reached, never a link put there since
 * (but a /proc link, which only the kernel follows): a regular file, or
 * -errno as rm__open_regular_at says it. */
static int open_entry(const path_place *place, mode_t *mode)
{
    int fd = openat(place->dir_fd, place->name, RM__READ_FLAGS | (place->proc_link ? 0 : O_NOFOLLOW));
    if (fd < 0)
        return errno == ELOOP ? -EAGAIN : -errno;
    struct stat st;
    if (fstat(fd, &st) < 0) {
        int err = errno;
        close(fd);
        return -err;
    }
    *mode = st.st_mode;
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return S_ISDIR(st.st_mode) ? -EISDIR : -ESPIPE;
    }
    return fd;
}

FILE *input_file_open(const char *path, char *why, size_t cap)
{
    /* By the walk the outputs take (path_checked.c), the kernel's
     * protected_symlinks rule kept whatever the sysctl says: read through
     * another user's link in /tmp, root's plot or compare put a root-only
     * file's figures into an output that user could read (stop 55's second
     * attack). */
    path_place place;
    int rc = path_place_checked(path, &place);
    if (rc == -EACCES && place.refused_link) {
        snprintf(why, cap, "another user's symbolic link in a sticky directory others can write "
                           "(as fs.protected_symlinks refuses)");
        return NULL;
    }
    mode_t mode = 0;
    int fd = rc < 0 ? rc : !place.exists ? -ENOENT : open_entry(&place, &mode);
    path_place_release(&place);
    if (fd < 0) {
        say_why(fd, mode, why, cap);
        return NULL;
    }
    FILE *f = fdopen(fd, "r");
    if (!f) {
        snprintf(why, cap, "%s", strerror(errno));
        close(fd);
    }
    return f;
}

int input_file_slurp(FILE *f, size_t max_bytes, char **text, size_t *length, char *why, size_t cap)
{
    *text = NULL;
    *length = 0;
    size_t size = 0, used = 0;
    char *buf = NULL;
    for (;;) {
        if (used == size) {
            size_t grown = size ? 2 * size : 65536;
            if (grown > max_bytes + 1)
                grown = max_bytes + 1;
            if (grown == size) {
                free(buf);
                snprintf(why, cap, "larger than the %zu MiB compare reads", max_bytes >> 20);
                return -1;
            }
            char *larger = realloc(buf, grown + 1);
            if (!larger) {
                free(buf);
                snprintf(why, cap, "out of memory");
                return -1;
            }
            buf = larger;
            size = grown;
        }
        size_t n = fread(buf + used, 1, size - used, f);
        used += n;
        if (n == 0 || used < size) {
            if (ferror(f)) {
                snprintf(why, cap, "%s", strerror(errno ? errno : EIO));
                free(buf);
                return -1;
            }
            if (feof(f))
                break;
        }
    }
    buf[used] = '\0';
    *text = buf;
    *length = used;
    return 0;
}
