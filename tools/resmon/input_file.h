/*
 * input_file.h -- what compare and plot read (input_file.c).
 */
#ifndef RESMON_INPUT_FILE_H
#define RESMON_INPUT_FILE_H

#include <stddef.h>
#include <stdio.h>

/* Opens path for reading: non-blocking, and only a regular file (a FIFO,
 * socket, device or directory is refused).  Returns the stream, or NULL with
 * why set ("a FIFO, not a regular file", strerror's words). */
FILE *input_file_open(const char *path, char *why, size_t cap);
/* Reads f whole into a NUL-terminated buffer the caller frees; more than
 * max_bytes is refused (why says so) having read max_bytes + 1 at most.
 * Returns 0 or -1. */
int input_file_slurp(FILE *f, size_t max_bytes, char **text, size_t *length, char *why, size_t cap);

#endif
