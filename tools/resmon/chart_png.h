/*
 * chart_png.h -- the chart as PNG: the SVG through rsvg-convert (chart_png.c).
 */
#ifndef RESMON_CHART_PNG_H
#define RESMON_CHART_PNG_H

#include <stddef.h>
#include "reader_wait.h"

#include <stdio.h>

/* Whether a chart written to path is PNG (a .png name, any case), SVG, or
 * refused; for PNG finds rsvg-convert on PATH into converter (else ""), and
 * refuses the name when it is missing.  Returns 0, or prints one line, who
 * ("resmon plot") then option and path, and returns -1. */
int chart_output_check(const char *who, const char *path, const char *option, char *converter, size_t cap);
/* A stream to render the SVG into, for chart_png_finish; NULL (errno) on failure. */
FILE *chart_png_begin(void);
/* Converts what svg holds to PNG, written to out, and closes svg.  Returns
 * 0 (a failed write of out is out's, for its publish to name), or fills why
 * with one line's worth and returns -1.  With wait (not NULL) a converter
 * still running at its deadline, or after a stop's grace, is killed. */
int chart_png_finish(FILE *svg, const char *converter, FILE *out, reader_wait *wait, char *why, size_t cap);

#endif
