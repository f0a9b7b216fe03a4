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
 * command starts instead of being replaced.  The path is resolved once, at
 * the start: every write goes to that directory, held open, and that entry
 * in it (output_file_open_in).
 */
#include "textfile.h"
#include "output_file.h"
#include "text_output.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int textfile_open(textfile *t, const char *path, char *err, size_t errcap)
{
    t->path = path;
    t->dir_fd = -1;
    t->final_path = NULL;
    t->wrote = 0;
    struct stat st;
    if (strcmp(path, "-") == 0 || (stat(path, &st) == 0 && !S_ISREG(st.st_mode))) {
        char shown[256];
        printable_copy(shown, sizeof shown, path);
        snprintf(err, errcap, "--textfile '%s' is not a regular file: give the path of a file for the textfile "
                 "collector, which resmon replaces every interval", shown);
        return -EINVAL;
    }
    /* The same checks as a write makes (a read-only file, a missing
     * directory, no room for the temporary file), leaving the path as it
     * was; what they resolved is the place of every write of the run. */
    /* A dangling link: output_file_open takes its target's name, so that
     * the file is made there by the writes as any new file is. */
    int rc = 0;
    output_file f = {.silent = 1};
    rc = output_file_open(&f, path, "textfile") < 0 ? -f.error : 0;
    if (rc == 0 && (f.is_stdout || f.is_stderr)) {
        /* the file behind fd 1 or 2 is that stream, as "-" (output_file_open) */
        const char *stream = f.is_stdout ? "standard output" : "standard error";
        output_file_discard(&f);
        char shown[256];
        printable_copy(shown, sizeof shown, path);
        snprintf(err, errcap, "--textfile '%s' is %s: give the path of a file for the textfile "
                 "collector, which resmon replaces every interval", shown, stream);
        return -EINVAL;
    }
    if (rc == 0)
        rc = output_file_hold_place(&f, &t->dir_fd, &t->final_path, &t->replaces, &t->replaced);
    if (rc < 0) {
        char shown[256];
        printable_copy(shown, sizeof shown, path);
        snprintf(err, errcap, "cannot write textfile '%s': %s", shown, f.reason[0] ? f.reason : strerror(-rc));
    }
    output_file_discard(&f);
    return rc;
}

int textfile_write(textfile *t, const char *text, size_t len, char *reason, size_t reason_cap)
{
    /* The place the start resolved and held, never the path by name again:
     * once a second for the whole run, a directory on it swapped for a link
     * or a link put at its entry (another user's, where they can write)
     * would otherwise send root's file where they chose. */
    /* The file the last write put there is resmon's own: read-only by the
     * umask (0222), it is no file a user made read-only. */
    output_file f = {.silent = 1};
    int rc = 0;
    if (output_file_open_in(&f, t->dir_fd, t->final_path, t->replaces ? &t->replaced : NULL,
                            t->wrote ? &t->written : NULL, t->path, "textfile") < 0)
        rc = -f.error;
    else if (fwrite(text, 1, len, f.stream), output_file_publish(&f) < 0)
        rc = -f.error;
    if (rc == 0) {
        t->written = f.made;
        t->wrote = 1;
    }
    snprintf(reason, reason_cap, "%s", rc < 0 && f.reason[0] ? f.reason : rc < 0 ? strerror(-rc) : "");
    return rc;
}

void textfile_close(textfile *t)
{
    if (t->dir_fd >= 0)
        close(t->dir_fd);
    free(t->final_path);
    t->dir_fd = -1;
    t->final_path = NULL;
}
