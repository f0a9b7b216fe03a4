/*
 * option_values.h -- the values the command's options take (seconds, sizes),
 * each parsed one way for options.c and exporter_options.c.
 */
#ifndef RESMON_OPTION_VALUES_H
#define RESMON_OPTION_VALUES_H

#include <stdint.h>

/* A finite number of seconds, the whole of text: positive, or also 0 when
 * zero_allowed.  0, or -EINVAL (*out untouched). */
int parse_seconds(const char *text, double *out, int zero_allowed);
/* The first --memory-limit too large to bound anything: 4 EiB (2^62).  A
 * cgroup v1 limit file reads its "none" back as ~2^63, so a limit read back
 * from there at or past this is taken for none (cgroup_check_limit): one
 * asked for there would read as lifted by the command (attack 73). */
#define MEMORY_LIMIT_BOUND (1ULL << 62)

/* A --memory-limit SIZE: bytes, or a number with K, M, G or T (powers of
 * 1024, optionally followed by "iB" or "B"), at least a page and below
 * MEMORY_LIMIT_BOUND.  0, -EINVAL (not a size) or -ERANGE (out of those
 * bounds). */
int parse_size(const char *text, uint64_t *bytes);

#endif
