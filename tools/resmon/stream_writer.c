/*
 * stream_writer.c -- the buffered, line-boundary writer of the streamed
 * outputs (see stream_writer.h).
 *
 * A regular file: write(2) until all is written, as a file on a disk never
 * waits on a reader.  A write that fails part way (a full disk, a file size
 * limit) is cut back to the last whole line it wrote, and nothing is written
 * after it; the error is reported at the close.
 *
 * Anything else (a pipe, a FIFO, a device): a write would block for as long
 * as the reader does not read -- forever, for a reader that stopped -- and
 * it runs on the sampler thread, or on the listener's with the records'
 * lock held, which the main thread needs to end the run: a stuck reader hung
 * resmon, SIGTERM included.  So each write is preceded by poll(2) with no
 * wait, and writes at most PIPE_BUF bytes, which a pipe that poll calls
 * writable takes whole without blocking (pipe(7)); the descriptor's own
 * flags are left alone, as it may be shared (stdout, with the command).
 * What the reader has not taken is kept, up to STREAM_BACKLOG_MAX_BYTES.
 */
#include "stream_writer.h"
#include "clocks.h"
#include "reader_wait.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define STREAM_BUFFER_BYTES 65536

struct stream_writer {
    int fd;
    int regular;           /* a regular file: written at once, never waits on a reader */
    int shared;            /* fd 1 or 2 (an output written where stdout or stderr stands): the command's file too */
    char *buffer;
    size_t capacity;
    size_t written;        /* buffer[0, written) is out; [written, used) waits */
    size_t used;
    size_t record_start;   /* where the record being appended began: [record_start, used) has no newline yet */
    off_t whole_bytes;     /* a regular file: what it holds, all of it whole lines */
    int error;             /* errno of the first failed write; nothing is written after it */
    int overflow;          /* the backlog reached its bound: nothing more is kept */
    unsigned long lines_dropped; /* lines not kept since the overflow or the error */
    double last_write;     /* CLOCK_MONOTONIC; < 0: none yet */
};

stream_writer *stream_writer_new(int fd)
{
    stream_writer *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    if (!(w->buffer = malloc(STREAM_BUFFER_BYTES))) {
        free(w);
        return NULL;
    }
    struct stat st;
    w->fd = fd;
    w->regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    w->shared = fd == STDOUT_FILENO || fd == STDERR_FILENO;
    w->capacity = STREAM_BUFFER_BYTES;
    w->last_write = -1;
    return w;
}

static unsigned long lines_in(const char *text, size_t n)
{
    unsigned long lines = 0;
    for (const char *p = text; (p = memchr(p, '\n', n - (size_t)(p - text))) != NULL; p++)
        lines++;
    return lines;
}

/* Room for n more bytes: the written part moved out, else a larger buffer
 * (a reader that lags), up to the backlog's bound.  0, or -1 past it. */
static int make_room(stream_writer *w, size_t n)
{
    if (w->capacity - w->used >= n)
        return 0;
    if (w->written > 0) {
        memmove(w->buffer, w->buffer + w->written, w->used - w->written);
        w->used -= w->written;
        w->record_start -= w->written;
        w->written = 0;
        if (w->capacity - w->used >= n)
            return 0;
    }
    size_t capacity = w->capacity;
    while (capacity - w->used < n && capacity < STREAM_BACKLOG_MAX_BYTES)
        capacity *= 2;
    if (capacity - w->used < n)
        return -1;
    char *grown = realloc(w->buffer, capacity);
    if (!grown)
        return -1;
    w->buffer = grown;
    w->capacity = capacity;
    return 0;
}

static void keep(stream_writer *w, const char *text, size_t n)
{
    memcpy(w->buffer + w->used, text, n);
    w->used += n;
    if (text[n - 1] == '\n')
        w->record_start = w->used;
}

void stream_writer_append(stream_writer *w, const char *text, size_t n)
{
    if (n == 0)
        return;
    if (!w->error && !w->overflow && make_room(w, n) < 0) {
        /* The record begun goes too: the file never holds half of one. */
        w->overflow = 1;
        w->used = w->record_start;
    }
    if (w->error || w->overflow) {
        w->lines_dropped += lines_in(text, n);
        return;
    }
    keep(w, text, n);
}

void stream_writer_append_last(stream_writer *w, const char *text, size_t n)
{
    if (n == 0 || w->error)
        return;
    if (w->overflow) {
        /* Past the bound by these few bytes, so the file still ends well
         * formed (the trace's "]"). */
        w->used = w->record_start;
        char *grown = w->capacity - w->used >= n ? w->buffer : realloc(w->buffer, w->used + n);
        if (!grown)
            return;
        w->buffer = grown;
        if (w->capacity < w->used + n)
            w->capacity = w->used + n;
        keep(w, text, n);
        return;
    }
    stream_writer_append(w, text, n);
}

/* A regular file, after a write that stopped part way: cut back to the end
 * of the last whole line written. */
static void keep_whole_lines(stream_writer *w, size_t done)
{
    if (w->shared) {
        /* The file behind stdout or stderr holds the command's output too:
         * cut back to our whole lines, it lost theirs (a review of stop 53). */
        w->whole_bytes += (off_t)done;
        return;
    }
    while (done > 0 && w->buffer[w->written + done - 1] != '\n')
        done--;
    w->whole_bytes += (off_t)done;
    if (ftruncate(w->fd, w->whole_bytes) != 0) {
        /* not a regular file after all: it keeps what it took */
    }
}

static void write_regular(stream_writer *w, size_t pending)
{
    size_t done = 0;
    while (done < pending) {
        ssize_t n = write(w->fd, w->buffer + w->written + done, pending - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            w->error = n < 0 ? errno : EIO;
            keep_whole_lines(w, done);
            return;
        }
        done += (size_t)n;
    }
    w->whole_bytes += (off_t)done;
    w->written += done;
}

/* As much as the reader takes now, without waiting: a chunk of at most
 * PIPE_BUF bytes, cut at a line's end where one is, after each poll that
 * says there is room.  Returns whether anything was written. */
static int write_without_waiting(stream_writer *w, size_t pending_end)
{
    int progress = 0;
    while (w->written < pending_end && !w->error) {
        struct pollfd p = {.fd = w->fd, .events = POLLOUT};
        int ready = poll(&p, 1, 0);
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready == 0)
            break; /* full: the rest waits */
        size_t chunk = pending_end - w->written;
        if (chunk > PIPE_BUF) {
            chunk = PIPE_BUF;
            const char *end = memrchr(w->buffer + w->written, '\n', chunk);
            if (end)
                chunk = (size_t)(end - (w->buffer + w->written)) + 1;
        }
        ssize_t n = write(w->fd, w->buffer + w->written, chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break; /* a descriptor set non-blocking by whoever shares it */
        if (n <= 0) {
            w->error = n < 0 ? errno : EIO; /* EPIPE: the reader closed */
            break;
        }
        w->written += (size_t)n;
        progress = 1;
    }
    return progress;
}

/* Writes the whole lines buffered, as far as the file takes them. */
static int write_pending(stream_writer *w)
{
    size_t pending_end = w->record_start; /* whole lines only */
    int progress = 0;
    if (w->error || w->written >= pending_end)
        return 0;
    if (w->regular) {
        write_regular(w, pending_end - w->written);
        progress = 1;
    } else {
        progress = write_without_waiting(w, pending_end);
    }
    if (w->written == w->used)
        w->written = w->used = w->record_start = 0;
    return progress;
}

void stream_writer_write(stream_writer *w)
{
    write_pending(w);
}

void stream_writer_write_due(stream_writer *w, size_t room)
{
    size_t waiting = w->used - w->written;
    double now = clock_monotonic_sec();
    if (waiting + room > STREAM_BUFFER_BYTES || w->last_write < 0 || now - w->last_write >= 1.0) {
        write_pending(w);
        w->last_write = now;
    }
}

/* Waits for the reader to take the rest, while the end's wait lasts (see
 * reader_wait.h). */
static void drain(stream_writer *w, reader_wait *wait)
{
    while (!w->error && w->written < w->record_start) {
        if (write_without_waiting(w, w->record_start))
            reader_wait_progress(wait);
        else if (w->error || !reader_wait_writable(wait, w->fd))
            return;
    }
}

void stream_writer_close(stream_writer *w, reader_wait *wait, stream_outcome *outcome)
{
    memset(outcome, 0, sizeof *outcome);
    if (!w)
        return;
    if (!wait) {
        stream_writer_discard(w);
        return;
    }
    w->used = w->record_start; /* a record never ended is not written */
    write_pending(w);
    if (!w->regular)
        drain(w, wait);
    unsigned long pending = lines_in(w->buffer + w->written, w->used - w->written);
    if (w->error == EPIPE && !w->regular) {
        /* Not a failure of the file: its reader closed it early. */
        outcome->reader_stuck = 1;
        outcome->stuck_why = "the reader went away";
        outcome->lines_lost = w->lines_dropped + pending;
    } else if (w->error) {
        outcome->error = -w->error;
    } else if (w->overflow || w->written < w->used) {
        outcome->reader_stuck = 1;
        outcome->stuck_why = w->overflow ? "the reader fell 64 MiB behind" : reader_wait_why(wait);
        outcome->lines_lost = w->lines_dropped + pending;
    }
    stream_writer_discard(w);
}

void stream_writer_discard(stream_writer *w)
{
    if (!w)
        return;
    free(w->buffer);
    free(w);
}
