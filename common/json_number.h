/*
 * json_number.h -- JSON numbers that read back exactly: doubles written with
 * as many digits as they need, and counts up to 2^64-1 read from their own
 * digits (a JSON parser's integers stop at 2^63-1, its doubles at 2^53).
 *
 * Shared by the library and the resmon command: each compiles its own copy
 * of json_number.c, so the command needs nothing from the library beyond
 * its public API.
 */
#ifndef RESMON_JSON_NUMBER_H
#define RESMON_JSON_NUMBER_H

#include <stddef.h>
#include <stdint.h>

/* Writes the shortest decimal text that strtod reads back as exactly value,
 * byte for byte as Python's repr(float) and json.dumps write it (fixed
 * notation from 1e-4 to below 1e16, ".0" on whole numbers, else "1e+16",
 * "1.5e-07"); "null" for NaN and infinities, which JSON cannot hold.  buf must
 * hold at least 32 bytes.
 * Returns the length written. */
size_t rm__json_format_double(double value, char *buf);

/* Parses text[0..len) as a plain unsigned decimal integer (digits only, as
 * JSON writes an integer).  -EINVAL when it is not one (a sign, a fraction or
 * an exponent), -ERANGE above UINT64_MAX. */
int rm__json_parse_u64(const char *text, size_t len, uint64_t *out);

/* Finds the text of the value of key in the top-level object of json, a
 * document already validated by a strict parser: [*start, *end) are its byte
 * offsets.  With duplicate keys the last one counts, as Jansson keeps it; a
 * key written with escapes ("num\u005fsamples") is compared as decoded.
 * 0, or -ENOENT when the key is absent (or json is no object). */
int rm__json_find_top_level_value(const char *json, size_t len, const char *key, size_t *start, size_t *end);

#endif
