/*
 * output_paths.h -- the one rule for formats picked by a file's name, and
 * outputs that must not name one file (output_paths.c).
 */
#ifndef RESMON_OUTPUT_PATHS_H
#define RESMON_OUTPUT_PATHS_H

#include <stddef.h>

/* Whether path's name ends in ext (".png", ".csv"), in any case ("x.PNG"):
 * the one rule for every format resmon picks by a file's name.  A name that
 * is the extension alone (".png", "dir/.png") has it too: what is named
 * .png gets PNG, never SVG bytes; "dir.png/x" has none. */
int path_has_extension(const char *path, const char *ext);
/* Refuses outputs that name one file (options[i] names paths[i] in the
 * message; NULL paths are skipped).  Returns 0, or prints one line and
 * returns EXIT_USAGE. */
int output_paths_check_distinct(const char *const *paths, const char *const *options, size_t count);
/* The same check for a command that reads and writes (plot, compare):
 * paths[0, output_count) are outputs, the rest inputs; an output may name
 * neither another output nor an input (two inputs may be one file).  program
 * starts the message ("resmon plot").  Returns 0, or prints one line and
 * returns EXIT_USAGE. */
int output_paths_check(const char *program, const char *const *paths, const char *const *options,
                       size_t output_count, size_t count);

#endif
