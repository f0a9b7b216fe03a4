/*
 * json_number.h -- writing doubles as JSON numbers that read back exactly.
 *
 * Shared by the library and the resmon command: each compiles its own copy
 * of json_number.c, so the command needs nothing from the library beyond
 * its public API.
 */
#ifndef RESMON_JSON_NUMBER_H
#define RESMON_JSON_NUMBER_H

#include <stddef.h>

/* Writes the shortest decimal text that strtod reads back as exactly value,
 * byte for byte as Python's repr(float) and json.dumps write it (fixed
 * notation from 1e-4 to below 1e16, ".0" on whole numbers, else "1e+16",
 * "1.5e-07"); "null" for NaN and infinities, which JSON cannot hold.  buf must
 * hold at least 32 bytes.
 * Returns the length written. */
size_t rm__json_format_double(double value, char *buf);

#endif
