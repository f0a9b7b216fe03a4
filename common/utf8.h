/*
 * utf8.h -- well-formed UTF-8 (RFC 3629), for text that came from outside
 * (argv, /proc/PID/comm, sysfs) and must reach a format that requires UTF-8:
 * JSON, XML, Prometheus label values.
 *
 * Shared by the library and the resmon command, header-only (static inline),
 * so each has its own copy and the command needs nothing from the library
 * beyond its public API.
 */
#ifndef RESMON_UTF8_H
#define RESMON_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* The length of the well-formed UTF-8 sequence at s (1 to 4), or 0 when the
 * byte at s does not start one: a stray continuation byte, an overlong form,
 * a surrogate, a sequence cut short (by the terminating NUL too), or a code
 * point above U+10FFFF.  s must be NUL-terminated. */
static inline size_t rm__utf8_sequence_length(const unsigned char *s, uint32_t *code_point)
{
    if (s[0] < 0x80) {
        *code_point = s[0];
        return 1;
    }
    size_t length;
    uint32_t cp, min;
    if ((s[0] & 0xE0) == 0xC0) {
        length = 2, cp = s[0] & 0x1F, min = 0x80;
    } else if ((s[0] & 0xF0) == 0xE0) {
        length = 3, cp = s[0] & 0x0F, min = 0x800;
    } else if ((s[0] & 0xF8) == 0xF0) {
        length = 4, cp = s[0] & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    for (size_t i = 1; i < length; i++) {
        if ((s[i] & 0xC0) != 0x80) /* also stops at the terminating NUL */
            return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    *code_point = cp;
    return length;
}

/* Whether cp is a control character (C0, DEL, C1), the line and paragraph
 * separators U+2028/9, the interlinear annotation marks U+FFF9-B, or one of
 * Unicode's Default_Ignorable_Code_Points (DerivedCoreProperties.txt): the
 * bidirectional controls (U+061C, U+200E/F, U+202A-E, U+2066-9), which
 * reorder the text around them on a terminal, so a name with U+202E reads
 * backwards, and the characters that show nothing (U+00AD, U+200B-D,
 * U+2060-4, U+FEFF, variation selectors, tags...), which make "bu\u200bild"
 * look like "build" (stop 54's and 55's attacks).  Refused in names,
 * escaped in messages. */
static inline int rm__utf8_is_control(uint32_t cp)
{
    static const uint32_t hidden[][2] = {
        {0x00AD, 0x00AD},   {0x034F, 0x034F},   {0x061C, 0x061C},   {0x115F, 0x1160},
        {0x17B4, 0x17B5},   {0x180B, 0x180F},   {0x200B, 0x200F},   {0x2028, 0x202E},
        {0x2060, 0x206F},   {0x3164, 0x3164},   {0xFE00, 0xFE0F},   {0xFEFF, 0xFEFF},
        {0xFFA0, 0xFFA0},   {0xFFF0, 0xFFFB},   {0x1BCA0, 0x1BCA3}, {0x1D173, 0x1D17A},
        {0xE0000, 0xE0FFF},
    };
    if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F))
        return 1;
    for (size_t i = 0; i < sizeof hidden / sizeof hidden[0] && cp >= hidden[i][0]; i++)
        if (cp <= hidden[i][1])
            return 1;
    return 0;
}

/* U+FFFD, the replacement character, which stands for each byte that
 * starts no well-formed sequence (as Python's errors="replace"). */
#define RM__UTF8_REPLACEMENT "\xef\xbf\xbd"

/* 1 when the whole of text is well-formed UTF-8. */
static inline int rm__utf8_valid(const char *text)
{
    const unsigned char *s = (const unsigned char *)text;
    uint32_t cp;
    for (size_t n; *s; s += n)
        if ((n = rm__utf8_sequence_length(s, &cp)) == 0)
            return 0;
    return 1;
}

/* Writes value as a Prometheus label value (text format and OpenMetrics
 * alike): backslash, double quote and line feed escaped, and each byte that
 * starts no well-formed sequence written as U+FFFD, as the JSON and SVG do,
 * so a scraper never rejects a whole exposition for one label (a command's
 * name in Latin-1, a comm cut mid-character at 15 bytes).  put(out, bytes,
 * n) receives the text piece by piece.  The library's exposition and the
 * command's own series both write through this one. */
static inline void rm__label_value_write(const char *value, void (*put)(void *out, const char *bytes, size_t n),
                                         void *out)
{
    const unsigned char *p = (const unsigned char *)value;
    while (*p) {
        uint32_t code_point;
        size_t length = rm__utf8_sequence_length(p, &code_point);
        if (length == 0)
            put(out, RM__UTF8_REPLACEMENT, sizeof RM__UTF8_REPLACEMENT - 1);
        else if (*p == '\\')
            put(out, "\\\\", 2);
        else if (*p == '"')
            put(out, "\\\"", 2);
        else if (*p == '\n')
            put(out, "\\n", 2);
        else
            put(out, (const char *)p, length);
        p += length ? length : 1;
    }
}

#endif
