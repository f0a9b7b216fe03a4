/*
 * option_values.c -- values of the command's options (see option_values.h).
 */
#include "option_values.h"
#include "decimal_text.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int parse_seconds(const char *text, double *out, int zero_allowed)
{
    char *end;
    errno = 0;
    double value = strtod(text, &end);
    if (end == text || *end != '\0' || errno == ERANGE || !isfinite(value) || value < 0 ||
        (value == 0 && !zero_allowed) || !rm__decimal_text(text, end))
        return -EINVAL; /* decimal only: strtod also read "0x1" and " 1" */
    *out = value;
    return 0;
}

int parse_size(const char *text, uint64_t *bytes)
{
    char *end;
    errno = 0;
    /* Plain decimal digits, with at most one point: strtod alone also took
     * "0x10M", "1e3M", "inf" and leading spaces. */
    size_t digits = 0, points = 0, i = 0;
    for (; (text[i] >= '0' && text[i] <= '9') || text[i] == '.'; i++)
        text[i] == '.' ? points++ : digits++;
    if (digits == 0 || points > 1)
        return -EINVAL;
    double value = strtod(text, &end);
    int beyond_double = errno == ERANGE; /* 400 digits: out of range, once the unit is known good */
    if (end != text + i || (!beyond_double && value <= 0))
        return -EINVAL;
    double unit = 1;
    const char *units = "KMGT";
    char letter = *end >= 'a' && *end <= 'z' ? (char)(*end - 'a' + 'A') : *end; /* 64m, 1k: as 64M, 1K */
    const char *u = *end ? strchr(units, letter) : NULL;
    if (*end && !u)
        return -EINVAL;
    if (u) {
        for (const char *p = units; p <= u; p++)
            unit *= 1024;
        end++;
        if (strcasecmp(end, "iB") == 0 || strcasecmp(end, "B") == 0)
            end += strlen(end);
    }
    if (*end)
        return -EINVAL;
    if (beyond_double)
        return -ERANGE;
    if (!u && points == 0) {
        /* Plain bytes, exactly: as a double, 4611686018427387903 (under
         * 4 EiB, as the message asks) would round up to 2^62 and be refused. */
        errno = 0;
        unsigned long long whole = strtoull(text, NULL, 10);
        if (errno == ERANGE || whole < 4096 || whole >= MEMORY_LIMIT_BOUND)
            return -ERANGE;
        *bytes = whole;
        return 0;
    }
    double total = value * unit;
    if (total < 4096 || total >= (double)MEMORY_LIMIT_BOUND) /* below a page, or none in effect */
        return -ERANGE;
    *bytes = (uint64_t)total;
    return 0;
}
