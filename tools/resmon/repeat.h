/*
 * repeat.h -- repeated runs: --repeat and --warmup (repeat.c).
 */
#ifndef RESMON_REPEAT_H
#define RESMON_REPEAT_H

#include "options.h"
#include "resmon.h"

/* Runs o->argv o->warmup times unmeasured, then o->repeat times measured,
 * each a full run; writes the multi-run JSON to o->summary_path and the
 * table of medians to stderr.  Returns the exit status. */
int repeat_main(const cli_options *o, resmon_gpu *gpu);

#endif
