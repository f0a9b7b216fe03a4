/*
 * processes_file.h -- --processes-file FILE: one record per process of the
 * run, CSV or JSON Lines (by extension), written as each process ends.
 */
#ifndef RESMON_PROCESSES_FILE_H
#define RESMON_PROCESSES_FILE_H

#include "process_records.h"

typedef struct processes_file processes_file;

/* Writes rows to fd (which stays the caller's; a CSV header at once); the
 * format comes from path's extension.  NULL when out of memory. */
processes_file *processes_file_open(int fd, const char *path);
/* process_records_on_record's callback (user: the file): one row, in one
 * write(2). */
void processes_file_write(const process_record *r, void *user);
/* Frees f; returns 0, or -errno of the first failed write (the file then
 * ends with the last whole row written). */
int processes_file_free(processes_file *f);

#endif
