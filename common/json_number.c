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
    if (magnitude == 0) { /* "0e+00": one digit */
        digits[0] = '0';
        *exponent = 0;
        return 1;
    }
    if (!(magnitude >= DBL_MIN) || magnitude >= (double)FIFTEEN_DIGITS)
        return 0; /* subnormals, large values: the slow path */
    int binary_exponent;
    double fraction = frexp(magnitude, &binary_exponent); /* [0.5, 1) */
    uint64_t mantissa = (uint64_t)ldexp(fraction, 53); /* exact: 53 bits */
    int shift = binary_exponent - 53;                  /* value = mantissa * 2^shift */
    int zero_bits = __builtin_ctzll(mantissa); /* mantissa >= 2^52: not zero */
    if (zero_bits > -shift)
        zero_bits = shift < 0 ? -shift : 0;
    mantissa >>= zero_bits;
    shift += zero_bits;
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

/* The first `precision` of the 17 correctly rounded digits `all` (exponent
 * as printf's %e), rounded to nearest: what printf writes at that precision
 * unless the digits dropped are exactly a half ("5", "50"), where the value
 * itself may lie on either side -- then 0, and printf is asked.  (A 15- or
 * 16-digit midpoint is on the 17-digit grid, so the 17-digit rounding never
 * crosses one: it lands on it or stays on the value's side.) */
static int round_to(const char *all, int exponent, int precision, char *out, int *out_exponent)
{
    int up = all[precision] > '5';
    if (all[precision] == '5') {
        up = -1;
        for (int i = precision + 1; i < 17; i++)
            if (all[i] != '0')
                up = 1;
        if (up < 0)
            return 0;
    }
    memcpy(out, all, (size_t)precision);
    *out_exponent = exponent;
    if (up) {
        int i = precision - 1;
        while (i >= 0 && out[i] == '9')
            out[i--] = '0';
        if (i < 0) {
            out[0] = '1'; /* 9.99...e+N became 1.00...e+(N+1) */
            (*out_exponent)++;
        } else {
            out[i]++;
        }
    }
    return 1;
}

#ifdef __SIZEOF_INT128__
__extension__ typedef unsigned __int128 wide_uint;

/* The 17 significant digits of magnitude, correctly rounded (to nearest,
 * ties to even, as printf rounds), and its decimal exponent, by exact
 * integer arithmetic: magnitude = mantissa / 2^shift, so its digits are
 * mantissa * 10^k / 2^shift for the k that leaves 17 of them before the
 * point.  Fits 128 bits for 1e-5 <= magnitude < 1e16 (mantissa < 2^53,
 * 10^k <= 10^21, shift <= 70); 0 outside, for printf. */
struct exact_scale {
    uint64_t mantissa; /* magnitude = mantissa / 2^shift, 2^52 <= mantissa < 2^53 */
    int shift;
    int k;            /* the digits are mantissa * 10^k / 2^shift */
    wide_uint power;  /* 10^k */
};

static int seventeen_digits(double magnitude, char *all, int *exponent, struct exact_scale *scale)
{
    if (!(magnitude >= 1e-5 && magnitude < 1e16))
        return 0;
    int binary_exponent;
    uint64_t mantissa = (uint64_t)ldexp(frexp(magnitude, &binary_exponent), 53);
    int shift = 53 - binary_exponent;
    if (shift <= 0 || shift > 100)
        return 0;
    int decimal = (int)floor(log10(magnitude)); /* may be one off: fixed below */
    for (int attempt = 0; attempt < 3; attempt++) {
        int k = 16 - decimal;
        if (k < 0 || k > 21)
            return 0;
        wide_uint power = 1;
        for (int i = 0; i < k; i++)
            power *= 10;
        wide_uint scaled = (wide_uint)mantissa * power;
        wide_uint quotient = scaled >> shift, rest = scaled - (quotient << shift);
        wide_uint half = (wide_uint)1 << (shift - 1);
        if (quotient < 10000000000000000ull) { /* fewer than 17 digits: exponent one too high */
            decimal--;
            continue;
        }
        if (quotient >= 100000000000000000ull) {
            decimal++;
            continue;
        }
        if (rest > half || (rest == half && (quotient & 1)))
            quotient++;
        if (quotient == 100000000000000000ull) { /* 9.99..95 rounded up */
            quotient /= 10;
            decimal++;
        }
        uint64_t digits = (uint64_t)quotient;
        for (int i = 16; i >= 0; i--, digits /= 10)
            all[i] = (char)('0' + digits % 10);
        *exponent = decimal;
        *scale = (struct exact_scale){mantissa, shift, k, power};
        return 1;
    }
    return 0;
}

/* Whether digits (count of them, d.ddd x 10^exponent) read back as the
 * value of scale -- what strtod answers (round to nearest, ties to even),
 * decided in integers: the text is inside the value's rounding interval,
 * half a unit in the last place above and below (a quarter of one below a
 * power of two, where the doubles beneath are twice as dense).  Everything
 * is scaled by 4 * 10^k * 2^shift, so the value is 4 * mantissa * 10^k. */
static int reads_back_exactly(const char *digits, int count, int exponent, const struct exact_scale *scale)
{
    int j = scale->k + exponent - (count - 1); /* text = whole * 10^(j - k) */
    if (j < 0)
        return -1;
    wide_uint whole = 0;
    for (int i = 0; i < count; i++)
        whole = whole * 10 + (wide_uint)(digits[i] - '0');
    for (int i = 0; i < j; i++)
        whole *= 10;
    wide_uint text = (whole << scale->shift) << 2, value = ((wide_uint)scale->mantissa * scale->power) << 2;
    int below = text < value;
    wide_uint distance = below ? value - text : text - value;
    wide_uint limit = below && scale->mantissa == (1ull << 52) ? scale->power : scale->power * 2;
    return distance < limit || (distance == limit && (scale->mantissa & 1) == 0);
}
#else /* no 128-bit integers (32-bit targets): printf and strtod, as before */
struct exact_scale {
    int unused;
};

static int seventeen_digits(double magnitude, char *all, int *exponent, struct exact_scale *scale)
{
    (void)magnitude, (void)all, (void)exponent, (void)scale;
    return 0;
}

static int reads_back_exactly(const char *digits, int count, int exponent, const struct exact_scale *scale)
{
    (void)digits, (void)count, (void)exponent, (void)scale;
    return -1;
}
#endif

/* Whether digits (d.ddd x 10^exponent) read back as magnitude. */
static int reads_back(const char *digits, int count, int exponent, double magnitude)
{
    char text[40];
    size_t len = 0;
    text[len++] = digits[0];
    text[len++] = '.';
    memcpy(text + len, digits + 1, (size_t)count - 1);
    len += (size_t)count - 1;
    snprintf(text + len, sizeof text - len, "e%d", exponent);
    return strtod(text, NULL) == magnitude;
}

/* The digits as printf's %e writes them at the first precision, from
 * `first`, that reads back -- the way every value went before the faster
 * paths, and the way the rare ones that they leave still go. */
static int digits_by_printf(double value, int first, char *digits, int *exponent)
{
    char text[40];
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
    return count;
}

/* The shortest significant digits of value (no sign, no dot, no trailing
 * zeros) into digits, and its decimal exponent: value = 0.d1d2... x 10^(exp+1).
 * Returns the number of digits. */
static int shortest_digits(double value, char *digits, int *exponent)
{
    int count = exact_digits(value, digits, exponent);
    if (count > 0)
        return count;
    /* For a normal double, the 15-digit rounding reads back whenever any
     * string of 15 digits or fewer does, and then it is that string padded
     * with zeros; only subnormals, which carry fewer bits, can need fewer
     * digits than the first precision that works, so they search from 1.
     * A normal one is printed once, at 17 digits (which always read back),
     * and its 15- and 16-digit roundings are made from those. */
    if (fabs(value) < DBL_MIN) {
        count = digits_by_printf(value, 1, digits, exponent);
    } else {
        char all[20];
        int all_exponent;
        struct exact_scale scale;
        memset(&scale, 0, sizeof scale);
        int exact = seventeen_digits(fabs(value), all, &all_exponent, &scale);
        if (!exact) {
            char text[40];
            snprintf(text, sizeof text, "%.16e", fabs(value));
            count = 0;
            for (const char *p = text; *p != 'e'; p++)
                if (*p != '.')
                    all[count++] = *p;
            all_exponent = atoi(strchr(text, 'e') + 1);
        }
        for (int precision = 15; precision <= 17; precision++) {
            if (precision == 17) {
                memcpy(digits, all, 17);
                *exponent = all_exponent;
                count = 17;
            } else if (!round_to(all, all_exponent, precision, digits, exponent)) {
                count = digits_by_printf(value, precision, digits, exponent); /* a half: ask printf */
                break;
            } else if ((exact ? reads_back_exactly(digits, precision, *exponent, &scale) : -1) < 0
                           ? reads_back(digits, precision, *exponent, fabs(value))
                           : reads_back_exactly(digits, precision, *exponent, &scale)) {
                count = precision;
                break;
            }
        }
    }
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
