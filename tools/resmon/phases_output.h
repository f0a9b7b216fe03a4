/*
 * phases_output.h -- the run's phases in the summary JSON and the table
 * (phases_output.c).
 */
#ifndef RESMON_PHASES_OUTPUT_H
#define RESMON_PHASES_OUTPUT_H

#include "run_result.h"

#include <stdio.h>

/* The run's phases into the summary JSON ("phases", "marks_dropped") and the
 * table (a line per phase); nothing when the run had none. */
void phases_write_json(FILE *out, const run_result *r);
void phases_print_table(FILE *out, const run_result *r);

#endif
