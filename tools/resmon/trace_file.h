/*
 * trace_file.h -- the run as a timeline (--trace FILE.json) in the Chrome
 * trace-event format, which ui.perfetto.dev and chrome://tracing open.
 *
 * The file is the format's JSON Array Format: "[", then one event per line,
 * each line after the first starting with ",".  Events are written as the
 * run goes (the samples' counters, the phases as they start and end), at
 * event boundaries only, so a killed resmon leaves every event up to the last
 * write, never half of one; the closing "]" comes at the end, and the
 * viewers' importers add it when it is missing (the format allows that "to
 * support tracing systems that can not cleanly finish writing the trace").
 *
 * The tracks, in the viewer:
 *   process 1 "resmon: COMMAND": the counters (CPU %, RSS of the tree, the
 *     cgroup's memory where there is one, GPU utilisation, memory and power
 *     where a GPU is monitored), and thread 1 "phases": each phase (resmon
 *     mark) a slice from its first sample to the next phase's;
 *   process 2 "processes": one track per process slot, each process a slice
 *     named by its command, its figures in args.  A slot holds processes
 *     one after another; one that starts while every slot is busy opens a
 *     new one, so there are as many slots as processes ran at once.
 * Timestamps are microseconds after the run's first sample.
 *
 * Not thread-safe by itself: calls are serialised by a lock inside, so the
 * sampler thread (samples), a process-record reader and the main thread (the
 * end) may each call it.
 */
#ifndef RESMON_TRACE_FILE_H
#define RESMON_TRACE_FILE_H

#include "resmon.h"
#include "stream_writer.h"

#include <stddef.h>

typedef struct trace_file trace_file;

/* One process of the run, for its slice.  The caller owns the strings. */
typedef struct trace_process {
    int pid, ppid;             /* 0: unknown */
    const char *name;          /* the slice's name: the command name (comm, or argv[0]'s last part) */
    const char *command_line;  /* NULL: unknown */
    double start_timestamp;    /* CLOCK_MONOTONIC seconds */
    double end_timestamp;      /* NAN: still running when it was handed over (drawn to the trace's end) */
    double cpu_sec;            /* user + system; NAN: unknown */
    double peak_rss_mb;        /* NAN: unknown */
    int exit_code;             /* the code it exited with; -1: a signal ended it, or unknown */
    int term_signal;           /* the signal that ended it; 0: none */
    const char *source;        /* where the figures come from ("wait4", "taskstats", "sampled"); NULL: none */
} trace_process;

/* A writer on fd (which stays the caller's).  title names the run (process
 * 1's name); gpu: whether GPU counters are written.  The header and the
 * tracks' names are buffered at once.  NULL when out of memory. */
trace_file *trace_file_open(int fd, const char *title, int gpu);

/* A sample: its counters, and the phases that started since the last one
 * (read from m; NULL: no phases). */
void trace_file_sample(trace_file *t, const resmon_sample *s, const resmon_monitor *m);

/* Slices for count processes, each on the first free slot.  They may come
 * in any order (as they end, or all at the end); a process that starts
 * before every slot is free gets a new slot, so slices never overlap on one. */
void trace_file_processes(trace_file *t, const trace_process *processes, size_t count);

struct cli_options;
struct run_result;
/* The end of the run: the last phase ends at the last sample, the command
 * resmon ran (when it did) gets its slice, and "]" closes the array.  Then
 * writes what is buffered, with no lock held (waiting for a FIFO's reader
 * while the end's wait lasts, see stream_writer_close), and frees t.
 * *outcome says what was not written (a failed write: the file then ends
 * with the last whole event written).  o and r NULL: nothing ran; only the
 * free, nothing more is written. */
void trace_file_finish(trace_file *t, const struct cli_options *o, const struct run_result *r, reader_wait *wait,
                       stream_outcome *outcome);

#endif
