/*
 * json_number.c -- exact, short JSON numbers (see json_number.h).
 *
 * The text is what Python's repr(float) -- and so json.dumps -- writes: the
 * shortest digits that read back as the same double, in fixed notation when
 * the decimal exponent is from -4 to 15 and in exponent notation otherwise
 * (printf's %g switches at another exponent, which made 1e15 "1e+15" where
 * Python writes "1000000000000000.0").
 */
#include "json_number.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Python's repr switches to exponent notation outside 1e-4 <= |x| < 1e16. */
#define FIXED_MIN_EXPONENT (-4)
#define FIXED_MAX_EXPONENT 15

/* The shortest significant digits of value (no sign, no dot, no trailing
 * zeros) into digits, and its decimal exponent: value = 0.d1d2... x 10^(exp+1).
 * Returns the number of digits. */
static int shortest_digits(double value, char *digits, int *exponent)
{
    char text[40];
    /* For a normal double, the 15-digit rounding reads back whenever any
     * string of 15 digits or fewer does, and then it is that string padded
     * with zeros; only subnormals, which carry fewer bits, can need fewer
     * digits than the first precision that works, so they search from 1. */
    int first = fabs(value) < DBL_MIN ? 1 : 15;
    for (int precision = first; precision <= 17; precision++) {
        snprintf(text, sizeof text, "%.*e", precision - 1, value);
        if (strtod(text, NULL) == value)
            break;
    }
    const char *p = text + (text[0] == '-');
    int count = 0;
    for (; *p != 'e'; p++)
        if (*p != '.')
            digits[count++] = *p;
    *exponent = atoi(p + 1);
    while (count > 1 && digits[count - 1] == '0')
        count--;
    return count;
}

size_t rm__json_format_double(double value, char *buf)
{
    if (!isfinite(value)) {
        memcpy(buf, "null", 5);
        return 4;
    }
    char digits[20];
    int exponent;
    int count = shortest_digits(value, digits, &exponent);
    size_t len = 0;
    if (signbit(value))
        buf[len++] = '-';
    if (exponent < FIXED_MIN_EXPONENT || exponent > FIXED_MAX_EXPONENT) {
        buf[len++] = digits[0]; /* d[.ddd]e+XX */
        if (count > 1) {
            buf[len++] = '.';
            memcpy(buf + len, digits + 1, (size_t)count - 1);
            len += (size_t)count - 1;
        }
        len += (size_t)snprintf(buf + len, 8, "e%c%02d", exponent < 0 ? '-' : '+', abs(exponent));
    } else if (exponent < 0) {
        memcpy(buf + len, "0.", 2); /* 0.000ddd */
        len += 2;
        memset(buf + len, '0', (size_t)(-exponent - 1));
        len += (size_t)(-exponent - 1);
        memcpy(buf + len, digits, (size_t)count);
        len += (size_t)count;
    } else {
        int whole = exponent + 1; /* ddd.ddd, or ddd000.0 */
        for (int i = 0; i < whole; i++)
            buf[len++] = i < count ? digits[i] : '0';
        buf[len++] = '.';
        if (count > whole) {
            memcpy(buf + len, digits + whole, (size_t)(count - whole));
            len += (size_t)(count - whole);
        } else {
            buf[len++] = '0';
        }
    }
    buf[len] = '\0';
    return len;
}
