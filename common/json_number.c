/*
 * json_number.c -- exact, short JSON numbers (see json_number.h).
 */
#include "json_number.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t rm__json_format_double(double value, char *buf)
{
    if (!isfinite(value)) {
        memcpy(buf, "null", 5);
        return 4;
    }
    int len = 0;
    for (int digits = 15; digits <= 17; digits++) {
        len = snprintf(buf, 32, "%.*g", digits, value);
        if (strtod(buf, NULL) == value)
            break;
    }
    if (!strpbrk(buf, ".eE")) {
        memcpy(buf + len, ".0", 3);
        len += 2;
    }
    return (size_t)len;
}
