/*
 * processes_output.h -- every process of the run in the summary: the
 * table's "heaviest processes" and the JSON's "processes" object.
 */
#ifndef RESMON_PROCESSES_OUTPUT_H
#define RESMON_PROCESSES_OUTPUT_H

#include "run_result.h"

#include <stdio.h>

/* ", \"processes\": {...}" into the summary JSON; nothing without records. */
void processes_write_json(FILE *out, const run_result *r);
struct process_records;
struct cli_options;
/* --processes all: the records keep every process (in a temporary file);
 * one line on stderr when that cannot be made (the run goes on). */
void processes_keep_all(struct process_records *records, const struct cli_options *o);
/* "heaviest processes" lines of the table; nothing without records. */
void processes_print_table(FILE *out, const run_result *r);

#endif
