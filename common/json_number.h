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

/* Writes the shortest decimal text (of 15, 16 or 17 significant digits) that
 * strtod reads back as exactly value, with ".0" added to whole numbers so a
 * reader sees a float as Python's json.dumps writes one; "null" for NaN and
 * infinities, which JSON cannot hold.  buf must hold at least 32 bytes.
 * Returns the length written. */
size_t rm__json_format_double(double value, char *buf);

#endif
