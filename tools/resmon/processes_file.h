/*
 * processes_file.h -- --processes-file FILE: one record per process of the
 * run, CSV or JSON Lines (by extension), written as each process ends.
 */
#ifndef RESMON_PROCESSES_FILE_H
#define RESMON_PROCESSES_FILE_H

#include "process_records.h"
#include "stream_writer.h"

typedef struct processes_file processes_file;

/* Writes rows to fd (which stays the caller's; a CSV header at once); the
 * format comes from path's extension.  NULL when out of memory. */
processes_file *processes_file_open(int fd, const char *path);
/* process_records_on_record's callback (user: the file): one row, written
 * at once as far as the file takes it without waiting. */
void processes_file_write(const process_record *r, void *user);
/* Writes what a FIFO's reader has not taken yet (waiting while the end's
 * wait lasts, see stream_writer_close) and frees f (accepts NULL); *outcome
 * says what was not written (a failed write: the file then ends with the
 * last whole row written).  wait NULL: nothing ran, nothing more is
 * written. */
void processes_file_close(processes_file *f, reader_wait *wait, stream_outcome *outcome);

#endif
