/*
 * text_output.c -- writing text that came from outside (the command line, a
 * GPU's name from sysfs or NVML) so that every output stays valid.
 *
 * Such text is bytes, not necessarily UTF-8.  JSON and XML must be UTF-8,
 * and XML 1.0 forbids most control characters even as references, so each
 * writer decodes the text and replaces what it cannot carry: an invalid
 * byte becomes U+FFFD (the replacement character), as Python's
 * errors="replace" does.  Messages on stderr show such bytes as \xNN, so a
 * terminal never receives a raw control byte from resmon.
 */
#include "text_output.h"
#include "utf8.h"

#include <locale.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

/* Where text was cut: a cut is never taken for the whole. */
static const char ellipsis[] = "\xe2\x80\xa6";

int text_cut(char *buf, size_t cap, const char *text)
{
    size_t length = strlen(text);
    if (length < cap) {
        memcpy(buf, text, length + 1);
        return 0;
    }
    size_t cut = cap - sizeof ellipsis; /* room for the ellipsis and the NUL */
    while (cut > 0 && ((unsigned char)text[cut] & 0xC0) == 0x80) /* not inside a character */
        cut--;
    memcpy(buf, text, cut);
    memcpy(buf + cut, ellipsis, sizeof ellipsis);
    return 1;
}

char *words_joined(int count, char *const *words)
{
    size_t length = 1;
    for (int i = 0; i < count; i++)
        length += strlen(words[i]) + 1;
    char *joined = malloc(length);
    if (!joined)
        return NULL;
    size_t at = 0;
    for (int i = 0; i < count; i++) {
        size_t n = strlen(words[i]);
        if (i)
            joined[at++] = ' ';
        memcpy(joined + at, words[i], n);
        at += n;
    }
    joined[at] = '\0';
    return joined;
}

static const char replacement_character[] = RM__UTF8_REPLACEMENT;

/* Writes one character of the text: the bytes of a well-formed sequence and
 * its code point, or (length 0) the one byte that starts no sequence. */
typedef void character_writer(FILE *out, const unsigned char *bytes, size_t length, uint32_t code_point);

static void write_each_character(FILE *out, const char *text, character_writer *write_character)
{
    const unsigned char *s = (const unsigned char *)text;
    while (*s) {
        uint32_t code_point = 0;
        size_t length = rm__utf8_sequence_length(s, &code_point);
        write_character(out, s, length, code_point);
        s += length ? length : 1;
    }
}

static void json_character(FILE *out, const unsigned char *bytes, size_t length, uint32_t cp)
{
    if (length == 0) {
        fputs("\\ufffd", out);
        return;
    }
    switch (cp) {
    case '"': fputs("\\\"", out); break;
    case '\\': fputs("\\\\", out); break;
    case '\n': fputs("\\n", out); break;
    case '\r': fputs("\\r", out); break;
    case '\t': fputs("\\t", out); break;
    default:
        if (cp < 0x20 || cp == 0x7F)
            fprintf(out, "\\u%04x", (unsigned)cp);
        else
            fwrite(bytes, 1, length, out);
    }
}

int csv_needs_formula_guard(const char *text)
{
    return text[0] && strchr("=+-@'\t\r", text[0]) != NULL;
}

void json_write_string(FILE *out, const char *text)
{
    fputc('"', out);
    write_each_character(out, text, json_character);
    fputc('"', out);
}

/* XML 1.0's Char production, less the line breaks a chart title cannot
 * show: tab and the characters from U+0020 on, without U+FFFE and U+FFFF. */
static int xml_allows(uint32_t cp)
{
    return cp == '\t' || (cp >= 0x20 && cp != 0xFFFE && cp != 0xFFFF);
}

static void xml_character(FILE *out, const unsigned char *bytes, size_t length, uint32_t cp)
{
    if (length == 0) {
        fputs(replacement_character, out);
        return;
    }
    switch (cp) {
    case '&': fputs("&amp;", out); break;
    case '<': fputs("&lt;", out); break;
    case '>': fputs("&gt;", out); break;
    case '"': fputs("&quot;", out); break;
    default:
        if (xml_allows(cp))
            fwrite(bytes, 1, length, out);
        else if (cp >= 0x20)
            fputs(replacement_character, out); /* U+FFFE, U+FFFF */
        /* control characters are dropped */
    }
}

void xml_write_text(FILE *out, const char *text)
{
    write_each_character(out, text, xml_character);
}

/* Whether printable_character writes the character as \xNN escapes. */
static int escaped(size_t length, uint32_t cp)
{
    return length == 0 || rm__utf8_is_control(cp);
}

/* Invalid bytes and C0/C1 control characters as \xNN, one per byte. */
static void printable_character(FILE *out, const unsigned char *bytes, size_t length, uint32_t cp)
{
    if (escaped(length, cp)) {
        for (size_t i = 0; i < (length ? length : 1); i++)
            fprintf(out, "\\x%02x", bytes[i]);
        return;
    }
    fwrite(bytes, 1, length, out);
}

void print_printable(FILE *out, const char *text)
{
    write_each_character(out, text, printable_character);
}

/* Writes text into buf (cap bytes, NUL-terminated, cut when it does not
 * fit) through writer. */
static void copy_through(char *buf, size_t cap, const char *text, character_writer *writer)
{
    if (cap == 0)
        return;
    buf[0] = '\0';
    FILE *m = fmemopen(buf, cap, "w");
    if (!m)
        return;
    setvbuf(m, NULL, _IONBF, 0); /* what fits is kept when the rest does not */
    write_each_character(m, text, writer);
    fclose(m);
    buf[cap - 1] = '\0';
}

void print_usage_line(FILE *out, const char *who, const char *fmt, const char *arg, const char *help)
{
    const char *slot = strstr(fmt, "%s");
    fprintf(out, "%s: ", who);
    fwrite(fmt, 1, slot ? (size_t)(slot - fmt) : strlen(fmt), out);
    if (slot) {
        print_printable(out, arg);
        fputs(slot + 2, out);
    } else if (arg) {
        fputs(" '", out);
        print_printable(out, arg);
        fputc('\'', out);
    }
    fprintf(out, " (see %s)\n", help);
}

void printable_copy(char *buf, size_t cap, const char *text)
{
    copy_through(buf, cap, text, printable_character);
}

/* A UTF-8 character type for wcwidth, apart from the process's locale
 * (which resmon leaves "C"); (locale_t)0 where the C library has none. */
static locale_t utf8_locale;
static pthread_once_t utf8_locale_once = PTHREAD_ONCE_INIT;

static void open_utf8_locale(void)
{
    utf8_locale = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
}

/* The columns one character takes on a terminal as printable_character
 * writes it: 4 per escaped byte, else its width in a UTF-8 locale (2 for
 * the wide East Asian ones, 0 for a combining mark) whatever the caller's
 * locale is, and 1 where that is not known. */
static size_t character_columns(size_t length, uint32_t cp)
{
    if (escaped(length, cp))
        return 4 * (length ? length : 1);
    pthread_once(&utf8_locale_once, open_utf8_locale);
    if (!utf8_locale)
        return 1;
    locale_t previous = uselocale(utf8_locale);
    int columns = wcwidth((wchar_t)cp);
    uselocale(previous);
    return columns < 0 ? 1 : (size_t)columns;
}

size_t printable_width(const char *text)
{
    size_t columns = 0;
    for (const unsigned char *s = (const unsigned char *)text; *s;) {
        uint32_t cp = 0;
        size_t length = rm__utf8_sequence_length(s, &cp);
        columns += character_columns(length, cp);
        s += length ? length : 1;
    }
    return columns;
}

void print_printable_column(FILE *out, const char *text, size_t columns)
{
    size_t width = printable_width(text), used = 0;
    const unsigned char *s = (const unsigned char *)text;
    size_t room = width <= columns ? columns : columns ? columns - 1 : 0; /* a cut ends with the ellipsis */
    while (*s) {
        uint32_t cp = 0;
        size_t length = rm__utf8_sequence_length(s, &cp);
        size_t w = character_columns(length, cp);
        if (used + w > room)
            break; /* never half an escape or a wide character */
        printable_character(out, s, length, cp);
        used += w;
        s += length ? length : 1;
    }
    if (width > columns && columns > 0) {
        fputs(ellipsis, out);
        used++;
    }
    for (; used < columns; used++)
        fputc(' ', out);
}

static void utf8_character(FILE *out, const unsigned char *bytes, size_t length, uint32_t cp)
{
    (void)cp;
    if (length == 0)
        fputs(replacement_character, out);
    else
        fwrite(bytes, 1, length, out);
}

char *utf8_repaired(const char *text)
{
    size_t cap = strlen(text) * 3 + 1; /* each byte becomes at most U+FFFD's three */
    char *copy = malloc(cap);
    if (copy)
        copy_through(copy, cap, text, utf8_character);
    return copy;
}
