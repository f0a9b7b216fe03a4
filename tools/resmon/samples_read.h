/*
 * samples_read.h -- saved samples files, read back into a chart's series
 * (samples_read.c).
 */
#ifndef RESMON_SAMPLES_READ_H
#define RESMON_SAMPLES_READ_H

#include "chart_series.h"

#include <stddef.h>

/* Feeds every row of a samples file written by -s (CSV or JSON Lines, by
 * extension; columns found by name, unknown ones ignored) to c, and its
 * phase column, if any, to chart_series_phase; *end_sec is the last
 * elapsed_sec.  Returns 0, or fills why (without the path) and returns -1. */
int samples_read(const char *path, chart_series *c, double *end_sec, char *why, size_t cap);

#endif
