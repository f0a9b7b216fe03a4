/*
 * option_values.h -- values of the command's options that more than one
 * parser takes (options.c, exporter_options.c).
 */
#ifndef RESMON_OPTION_VALUES_H
#define RESMON_OPTION_VALUES_H

/* A finite number of seconds, the whole of text: positive, or also 0 when
 * zero_allowed.  0, or -EINVAL (*out untouched). */
int parse_seconds(const char *text, double *out, int zero_allowed);

#endif
