/*
 * processes_file.c -- --processes-file: one record per process of the run,
 * CSV or JSON Lines by extension, written as each process ends (on the
 * taskstats listener's thread, or resmon's main one for wait4 records).
 *
 * Crash-safe as the samples file is: each row goes out in one write(2), so
 * a crash or a kill leaves whole rows; a write that fails part way is cut
 * back to the last whole row (a regular file), no row is written after it,
 * and the error is reported when the file is closed.
 */
#include "processes_file.h"
#include "utf8.h"

#include "output_paths.h"
#include "text_output.h"
#include "json_number.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ROW_MAX 1024

struct processes_file {
    int fd;
    int jsonl;
    int write_errno;
    off_t whole_rows_bytes;
};

static const char *const columns[] = {
    "pid", "ppid", "comm", "start_sec", "end_sec", "cpu_user_sec", "cpu_sys_sec", "cpu_sec", "peak_rss_mb",
    "read_bytes", "write_bytes", "minor_faults", "major_faults", "voluntary_switches", "involuntary_switches",
    "exit_code", "signal", "threads", "source",
};

static void write_row(processes_file *f, const char *row, size_t n)
{
    size_t done = 0;
    while (done < n && !f->write_errno) {
        ssize_t w = write(f->fd, row + done, n - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            f->write_errno = w < 0 ? errno : EIO;
            if (ftruncate(f->fd, f->whole_rows_bytes) != 0) {
                /* not a regular file: it keeps what it took */
            }
            return;
        }
        done += (size_t)w;
    }
    if (!f->write_errno)
        f->whole_rows_bytes += (off_t)n;
}

processes_file *processes_file_open(int fd, const char *path)
{
    processes_file *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->fd = fd;
    f->jsonl = path_has_extension(path, ".jsonl");
    if (!f->jsonl) {
        char header[ROW_MAX];
        size_t n = 0;
        for (size_t i = 0; i < sizeof columns / sizeof columns[0]; i++)
            n += (size_t)snprintf(header + n, sizeof header - n, "%s%s", i ? "," : "", columns[i]);
        header[n++] = '\n';
        write_row(f, header, n);
    }
    return f;
}

/* The command name as a CSV field: always quoted (a name may hold a comma,
 * a quote or a newline), guarded against spreadsheet formulas as the
 * samples file's phase is (a leading = + - @ ' gets a ' before it), and
 * UTF-8: a byte that starts no well-formed sequence (a Latin-1 name, a comm
 * cut mid-character at 15 bytes) is U+FFFD, as in the JSON, so a reader
 * decoding UTF-8 never fails on the file. */
static void put_csv_text(FILE *row, const char *text)
{
    fputc('"', row);
    if (text[0] && strchr("=+-@'", text[0]))
        fputc('\'', row);
    const unsigned char *p = (const unsigned char *)text;
    while (*p) {
        uint32_t code_point;
        size_t length = rm__utf8_sequence_length(p, &code_point);
        if (length == 0)
            fputs(RM__UTF8_REPLACEMENT, row);
        else if (*p == '"')
            fputs("\"\"", row);
        else
            fwrite(p, 1, length, row);
        p += length ? length : 1;
    }
    fputc('"', row);
}

void processes_file_write(const process_record *r, void *user)
{
    processes_file *f = user;
    if (f->write_errno)
        return;
    char buf[ROW_MAX];
    FILE *row = fmemopen(buf, sizeof buf, "w");
    if (!row)
        return;
    process_figure figures[PROCESS_FIGURES];
    process_record_figures(r, figures);
    if (f->jsonl) {
        fprintf(row, "{\"pid\": %d, \"ppid\": %d, \"comm\": ", (int)r->pid, (int)r->ppid);
        json_write_string(row, r->comm);
    } else {
        fprintf(row, "%d,%d,", (int)r->pid, (int)r->ppid);
        put_csv_text(row, r->comm);
    }
    for (size_t i = 0; i < PROCESS_FIGURES; i++) {
        char number[32];
        process_figure_format(&figures[i], number);
        if (f->jsonl)
            fprintf(row, ", \"%s\": %s", figures[i].key, number);
        else
            fprintf(row, ",%s", strcmp(number, "null") == 0 ? "" : number);
    }
    /* The code it exited with or the signal that ended it, the other one
     * null (JSON) or empty (CSV). */
    char code[16] = "", signal[16] = "";
    if (r->exit_code >= 0)
        snprintf(code, sizeof code, "%d", r->exit_code);
    if (r->signal > 0)
        snprintf(signal, sizeof signal, "%d", r->signal);
    if (f->jsonl)
        fprintf(row, ", \"exit_code\": %s, \"signal\": %s, \"threads\": %d, \"source\": \"%s\"}\n",
                code[0] ? code : "null", signal[0] ? signal : "null", r->threads, r->source);
    else
        fprintf(row, ",%s,%s,%d,%s\n", code, signal, r->threads, r->source);
    long n = ftell(row);
    int full = fflush(row) != 0 || n <= 0 || (size_t)n >= sizeof buf - 1;
    fclose(row);
    if (!full) /* a row never exceeds the buffer: comm is at most 31 bytes */
        write_row(f, buf, (size_t)n);
}

int processes_file_free(processes_file *f)
{
    if (!f)
        return 0;
    int err = f->write_errno;
    free(f);
    return err ? -err : 0;
}
