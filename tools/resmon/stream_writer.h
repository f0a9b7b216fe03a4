/*
 * stream_writer.h -- the one buffered writer of the outputs written as the
 * run goes (the samples file, the trace, the processes file), line by line
 * (stream_writer.c).
 *
 * Every record those outputs write is one or more whole lines, so a line is
 * the unit here: bytes go out at line boundaries only, and a file ends with
 * a whole line.  A regular file is written with write(2) as it always was;
 * a pipe, a FIFO or a device is written only as far as it takes without
 * waiting, the rest kept for the next write, so a reader that lags (or has
 * stopped reading) never holds up the thread that writes -- the sampler,
 * the process-record listener -- nor a lock it holds.  The wait for a slow
 * reader comes only at the close, through the end's one wait for every
 * output's reader (reader_wait.h): it ends on a stop (a signal resmon
 * received) or when the readers have taken nothing for READER_STUCK_SEC.
 *
 * Not thread-safe: each writer is its output's, called under its lock.
 */
#ifndef RESMON_STREAM_WRITER_H
#define RESMON_STREAM_WRITER_H

#include "reader_wait.h"

#include <stddef.h>

/* What is kept for a reader that lags, at most: past it the reader counts
 * as stuck, and the lines that follow are not written (counted). */
#define STREAM_BACKLOG_MAX_BYTES (64u << 20)

typedef struct stream_writer stream_writer;

/* A writer on fd (which stays the caller's).  NULL when out of memory. */
stream_writer *stream_writer_new(int fd);
/* Buffers n bytes of the current record (its last byte a newline ends it).
 * Nothing is written here. */
void stream_writer_append(stream_writer *w, const char *text, size_t n);
/* The last record, which makes the file whole (the trace's "]"): kept even
 * after the backlog reached its bound, so the file still ends well formed. */
void stream_writer_append_last(stream_writer *w, const char *text, size_t n);
/* Writes what is buffered when it is more than room bytes short of the
 * buffer's size, or at the first call, or when the last such write is a
 * second old: a regular file then holds every line up to a second ago, as a
 * killed run leaves it. */
void stream_writer_write_due(stream_writer *w, size_t room);
/* Writes what is buffered now (as far as a pipe takes it): a header, a
 * row that is due at once.  The second counted by write_due goes on. */
void stream_writer_write(stream_writer *w);

/* How the close went. */
typedef struct stream_outcome {
    int error;                 /* -errno of the first failed write, or 0 */
    int reader_stuck;          /* the reader did not take everything (see stuck_why) */
    const char *stuck_why;     /* "the reader stopped reading", "the reader fell 64 MiB behind",
                                  "the reader went away" (it closed the pipe) */
    unsigned long lines_lost;  /* lines not written, whole: with error or reader_stuck */
} stream_outcome;

/* Writes what is buffered, waiting for a reader while the end's wait lasts
 * (reader_wait.h), and frees w (accepts NULL).  *outcome says what was not
 * written.  wait NULL: nothing ran; w is freed without writing. */
void stream_writer_close(stream_writer *w, reader_wait *wait, stream_outcome *outcome);
/* Frees w without writing (nothing ran). */
void stream_writer_discard(stream_writer *w);

#endif
