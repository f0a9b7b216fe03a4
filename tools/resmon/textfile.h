/*
 * textfile.h -- --textfile PATH: the exposition as a file for
 * node_exporter's textfile collector (textfile.c, on output_file.c).
 */
#ifndef RESMON_TEXTFILE_H
#define RESMON_TEXTFILE_H

#include <stddef.h>

/* Before the command starts: 0, or -errno with a sentence in err when the
 * path is not a regular file (or a new one) that can be replaced. */
int textfile_check(const char *path, char *err, size_t errcap);
/* Replaces path with text atomically (a temporary file in the same directory
 * renamed over it, see textfile.c), so node_exporter never reads half a
 * file.  0 or -errno. */
int textfile_write(const char *path, const char *text, size_t len);

#endif
