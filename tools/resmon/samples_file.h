/*
 * samples_file.h -- the samples file: CSV or JSON Lines, written as samples
 * arrive (samples_file.c).
 */
#ifndef RESMON_SAMPLES_FILE_H
#define RESMON_SAMPLES_FILE_H

#include "resmon.h"
#include "stream_writer.h"

#include <stddef.h>

/* Per-device GPU columns are written for at most this many devices. */
#define RESMON_CLI_MAX_DEVICE_COLUMNS 16

typedef struct samples_file samples_file;
/* The metric-group columns, after CPU and RSS (and before any GPU's): the
 * library's metric list (resmon_metric_info) and the tree's cgroup memory,
 * in resmon_sample's order -- what the writer writes and the reader
 * (samples_read.c) reads, one list for both.  Each is a distinct double of
 * resmon_sample, so the sample's size bounds them. */
#define SAMPLES_MAX_METRIC_COLUMNS (sizeof(resmon_sample) / sizeof(double))
typedef struct samples_column {
    const char *name;
    size_t offset; /* a double in resmon_sample */
    int integral;  /* a count or bytes: written as an integer ("3", not "3.0") */
} samples_column;
/* Fills columns (SAMPLES_MAX_METRIC_COLUMNS of room); returns how many. */
size_t samples_metric_columns(samples_column *columns);
/* The sample's base figures but the timestamp (gpu 0: CPU and RSS, always
 * written, after the timestamps) or its GPU figures (gpu 1: after the metric
 * columns, when there is a GPU), from the figure list (figure_list.h):
 * fills columns (SAMPLES_MAX_METRIC_COLUMNS of room); returns how many. */
size_t samples_figure_columns(samples_column *columns, int gpu);
/* Writes rows to fd (which stays the caller's); the format comes from path's
 * extension.  gpu_devices: 0 no GPU columns; 1 the GPU columns; N > 1 also
 * per-device columns gpuI_*.  wall_offset: CLOCK_REALTIME - CLOCK_MONOTONIC,
 * a row's unix_time (outputs_wall_offset: the run's one).  NULL when out of
 * memory. */
samples_file *samples_file_open(int fd, const char *path, size_t gpu_devices, double wall_offset);
void samples_file_write(samples_file *f, const resmon_sample *s, double elapsed_sec,
                        const resmon_gpu_reading *devices, size_t device_count, const char *phase);
/* Writes what is buffered (waiting for a FIFO's reader while the end's
 * wait lasts, see stream_writer_close) and frees f (accepts NULL);
 * *outcome says what was not written (a failed write: the file then ends
 * with the last whole row written).  wait NULL: nothing ran, nothing more
 * is written. */
void samples_file_close(samples_file *f, reader_wait *wait, stream_outcome *outcome);

#endif
