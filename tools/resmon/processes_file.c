/*
 * processes_file.c -- --processes-file: one record per process of the run,
 * CSV or JSON Lines by extension, written as each process ends (on the
 * taskstats listener's thread, or resmon's main one for wait4 records).
 *
 * Crash-safe as the samples file is, through the same stream writer
 * (stream_writer.c): each row is written as it is made, at row boundaries,
 * so a crash or a kill leaves whole rows; a write that fails part way is
 * cut back to the last whole row (a regular file), no row is written after
 * it, and the error is reported when the file is closed.  The rows come
 * with the records' lock held: a FIFO's reader that lags is never waited
 * for here, only at the close, where no lock is held.
 */
#include "processes_file.h"
#include "stream_writer.h"
#include "utf8.h"

#include "output_paths.h"
#include "text_output.h"
#include "json_number.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROW_MAX 1024

struct processes_file {
    stream_writer *out;
    int jsonl;
};

static const char *const columns[] = {
    "pid", "ppid", "comm", "start_sec", "end_sec", "cpu_user_sec", "cpu_sys_sec", "cpu_sec", "peak_rss_mb",
    "read_bytes", "write_bytes", "minor_faults", "major_faults", "voluntary_switches", "involuntary_switches",
    "exit_code", "signal", "threads", "source",
};

static void write_row(processes_file *f, const char *row, size_t n)
{
    stream_writer_append(f->out, row, n);
    stream_writer_write(f->out);
}

processes_file *processes_file_open(int fd, const char *path)
{
    processes_file *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    if (!(f->out = stream_writer_new(fd))) {
        free(f);
        return NULL;
    }
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
 * samples file's phase is (csv_needs_formula_guard: a ' before a leading
 * = + - @ TAB CR or '), and
 * UTF-8: a byte that starts no well-formed sequence (a Latin-1 name, a comm
 * cut mid-character at 15 bytes) is U+FFFD, as in the JSON, so a reader
 * decoding UTF-8 never fails on the file. */
static void put_csv_text(FILE *row, const char *text)
{
    fputc('"', row);
    if (csv_needs_formula_guard(text))
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

void processes_file_close(processes_file *f, reader_wait *wait, stream_outcome *outcome)
{
    stream_writer_close(f ? f->out : NULL, wait, outcome);
    free(f);
}
