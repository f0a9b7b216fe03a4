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

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Python's repr switches to exponent notation outside 1e-4 <= |x| < 1e16. */
#define FIXED_MIN_EXPONENT (-4)
#define FIXED_MAX_EXPONENT 15

/* Below this, a whole number has at most 15 digits (see exact_digits). */
#define FIFTEEN_DIGITS 1000000000000000ull

/* The fast path of shortest_digits, without printf or strtod: a value whose
 * exact decimal expansion has at most 15 significant digits -- a whole
 * number below 1e15, or a binary fraction m / 2^j such as a size in KiB over
 * 1024, whose expansion is m * 5^j / 10^j -- has that expansion as its
 * shortest text.  (Any other text of fewer digits differs from it by at
 * least 5 in its last place, a relative 5e-15, far more than the half unit
 * in the last place, 2^-53 ~ 1.1e-16, that reading back forgives; and the
 * 15-digit rounding below prints exactly these digits padded with zeros.)
 * Returns the digit count as shortest_digits does, or 0 to take the slow
 * path. */
static int exact_digits(double value, char *digits, int *exponent)
{
    double magnitude = fabs(value);
    if (!(magnitude >= DBL_MIN) || magnitude >= (double)FIFTEEN_DIGITS)
        return 0; /* zero and subnormals, large values: the slow path */
    int binary_exponent;
    double fraction = frexp(magnitude, &binary_exponent); /* [0.5, 1) */
    uint64_t mantissa = (uint64_t)ldexp(fraction, 53); /* exact: 53 bits */
    int shift = binary_exponent - 53;                  /* value = mantissa * 2^shift */
    while (shift < 0 && (mantissa & 1) == 0) {
        mantissa >>= 1;
        shift++;
    }
    uint64_t scaled = mantissa; /* value = scaled * 10^-fraction_digits */
    int fraction_digits = 0;
    if (shift >= 0) {
        scaled <<= shift; /* below 1e15: checked above */
    } else {
        for (; fraction_digits < -shift; fraction_digits++) {
            if (scaled >= FIFTEEN_DIGITS / 5)
                return 0;
            scaled *= 5;
        }
    }
    int zeros = 0; /* a whole number's trailing zeros are not digits */
    for (; scaled % 10 == 0; scaled /= 10)
        zeros++;
    int count = 0;
    for (uint64_t rest = scaled; rest; rest /= 10)
        count++;
    *exponent = count + zeros - 1 - fraction_digits;
    for (int i = count - 1; i >= 0; i--, scaled /= 10)
        digits[i] = (char)('0' + scaled % 10);
    return count;
}

/* The shortest significant digits of value (no sign, no dot, no trailing
 * zeros) into digits, and its decimal exponent: value = 0.d1d2... x 10^(exp+1).
 * Returns the number of digits. */
static int shortest_digits(double value, char *digits, int *exponent)
{
    int fast = exact_digits(value, digits, exponent);
    if (fast > 0)
        return fast;
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

int rm__json_parse_u64(const char *text, size_t len, uint64_t *out)
{
    if (len == 0)
        return -EINVAL;
    uint64_t value = 0;
    for (size_t i = 0; i < len; i++) {
        if (text[i] < '0' || text[i] > '9')
            return -EINVAL;
        uint64_t digit = (uint64_t)(text[i] - '0');
        if (value > (UINT64_MAX - digit) / 10)
            return -ERANGE;
        value = value * 10 + digit;
    }
    *out = value;
    return 0;
}

/* ---- finding a value's text in a validated document ----------------------
 * These walk a document that Jansson has already accepted, so they need not
 * diagnose bad syntax; they only stay within len whatever the bytes are. */

static size_t skip_space(const char *json, size_t len, size_t pos)
{
    while (pos < len && (json[pos] == ' ' || json[pos] == '\t' || json[pos] == '\n' || json[pos] == '\r'))
        pos++;
    return pos;
}

/* pos is at a string's opening quote; returns the offset after its closing
 * quote. */
static size_t skip_string(const char *json, size_t len, size_t pos)
{
    for (pos++; pos < len && json[pos] != '"'; pos++)
        if (json[pos] == '\\')
            pos++;
    return pos < len ? pos + 1 : len;
}

static size_t skip_value(const char *json, size_t len, size_t pos)
{
    if (pos < len && json[pos] == '"')
        return skip_string(json, len, pos);
    if (pos < len && (json[pos] == '{' || json[pos] == '[')) {
        size_t depth = 0;
        while (pos < len) {
            char c = json[pos];
            if (c == '"') {
                pos = skip_string(json, len, pos);
                continue;
            }
            pos++;
            if (c == '{' || c == '[')
                depth++;
            else if ((c == '}' || c == ']') && --depth == 0)
                break;
        }
        return pos;
    }
    while (pos < len && !strchr(",}] \t\n\r", json[pos]))
        pos++;
    return pos;
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Whether the string literal json[begin..end) (between its quotes) decodes
 * to key, which is plain ASCII without escapes. */
static int string_equals(const char *json, size_t begin, size_t end, const char *key)
{
    static const char escaped[] = "\"\\/bfnrt", decoded[] = "\"\\/\b\f\n\r\t";
    size_t k = 0;
    for (size_t i = begin; i < end; k++) {
        char c = json[i++];
        if (c == '\\' && i < end) {
            const char *simple = strchr(escaped, json[i]);
            if (json[i] == 'u') {
                int code = 0;
                for (int d = 1; d <= 4; d++) {
                    int h = i + (size_t)d < end ? hex_value(json[i + (size_t)d]) : -1;
                    if (h < 0)
                        return 0;
                    code = code * 16 + h;
                }
                if (code == 0 || code > 0x7f)
                    return 0; /* cannot match an ASCII key */
                c = (char)code;
                i += 5;
            } else if (simple && json[i] != '\0') {
                c = decoded[simple - escaped];
                i++;
            } else {
                return 0;
            }
        }
        if (key[k] == '\0' || key[k] != c)
            return 0;
    }
    return key[k] == '\0';
}

int rm__json_find_top_level_value(const char *json, size_t len, const char *key, size_t *start, size_t *end)
{
    int found = 0;
    size_t pos = skip_space(json, len, 0);
    if (pos >= len || json[pos] != '{')
        return -ENOENT;
    pos++;
    for (;;) {
        pos = skip_space(json, len, pos);
        if (pos >= len || json[pos] != '"')
            break; /* "}" (or a document that is not what was promised) */
        size_t key_begin = pos + 1;
        pos = skip_string(json, len, pos);
        size_t key_end = pos - 1;
        pos = skip_space(json, len, pos);
        if (pos >= len || json[pos] != ':')
            break;
        size_t value_begin = skip_space(json, len, pos + 1);
        pos = skip_value(json, len, value_begin);
        if (string_equals(json, key_begin, key_end, key)) {
            *start = value_begin;
            *end = pos;
            found = 1;
        }
        pos = skip_space(json, len, pos);
        if (pos >= len || json[pos] != ',')
            break;
        pos++;
    }
    return found ? 0 : -ENOENT;
}
