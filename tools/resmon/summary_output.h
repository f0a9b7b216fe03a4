/*
 * summary_output.h -- the summary: the JSON file and the human table
 * (summary_output.c).
 */
#ifndef RESMON_SUMMARY_OUTPUT_H
#define RESMON_SUMMARY_OUTPUT_H

#include "options.h"
#include "run_result.h"

#include <stdio.h>

int summary_write_json(FILE *out, const cli_options *o, const run_result *r);
void summary_print_table(FILE *out, const cli_options *o, const run_result *r);

#endif
