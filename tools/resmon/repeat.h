/*
 * repeat.h -- repeated runs: --repeat and --warmup (repeat.c).
 */
#ifndef RESMON_REPEAT_H
#define RESMON_REPEAT_H

#include "options.h"
#include "resmon.h"

/* The most runs --repeat and --warmup take: more is surely a typo. */
#define REPEAT_MAX_RUNS 100000
/* Runs o->argv o->warmup times unmeasured, then o->repeat times measured,
 * each a full run; writes the multi-run JSON to o->summary_path and the
 * table of medians to stderr.  Returns the exit status. */
int repeat_main(const cli_options *o, resmon_gpu *gpu);

#endif
