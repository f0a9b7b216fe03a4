/*
 * textfile.c -- --textfile: the exposition as a file for node_exporter's
 * textfile collector, replaced atomically.
 *
 * node_exporter reads the directory whenever it is scraped; a file caught
 * half-written would be a parse error for the whole collector.  So every
 * write is one of the command's output files (output_file.c): a temporary
 * file in the same directory (same filesystem, rename is atomic; its name
 * does not end in .prom, so the collector never reads it) renamed over the
 * path, with the file guarantees of every other output -- a symbolic link is
 * followed and kept, a read-only file is refused, the replaced file's mode
 * is kept.  The collector reads regular files only, and the path is
 * replaced every interval, so anything else at the path (a device such as
 * /dev/null or /dev/stdout, a FIFO, a directory) is refused before the
 * command starts instead of being replaced.
 */
#include "textfile.h"
#include "output_file.h"
#include "text_output.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

int textfile_check(const char *path, char *err, size_t errcap)
{
    struct stat st;
    if (strcmp(path, "-") == 0 || (stat(path, &st) == 0 && !S_ISREG(st.st_mode))) {
        char shown[256];
        printable_copy(shown, sizeof shown, path);
        snprintf(err, errcap, "--textfile '%s' is not a regular file: give the path of a file for the textfile "
                 "collector, which resmon replaces every interval", shown);
        return -EINVAL;
    }
    /* The same checks as the first write makes (a read-only file, a missing
     * directory, no room for the temporary file), leaving the path as it was. */
    output_file f = {.silent = 1};
    if (output_file_open(&f, path, "textfile") < 0) {
        char shown[256];
        printable_copy(shown, sizeof shown, path);
        snprintf(err, errcap, "cannot write textfile '%s': %s", shown, strerror(f.error));
        return -f.error;
    }
    output_file_discard(&f);
    return 0;
}

int textfile_write(const char *path, const char *text, size_t len)
{
    /* Something other than a regular file may have taken the path during
     * the run (the start refused one): never write into it, never wait on it. */
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return -EINVAL;
    output_file f = {.silent = 1};
    if (output_file_open(&f, path, "textfile") < 0)
        return -f.error;
    fwrite(text, 1, len, f.stream);
    return output_file_publish(&f) < 0 ? -f.error : 0;
}
