/*
 * text_output.h -- text from outside (argv, GPU names), which may not be
 * UTF-8, written safely (text_output.c).
 */
#ifndef RESMON_TEXT_OUTPUT_H
#define RESMON_TEXT_OUTPUT_H

#include <stddef.h>
#include <stdio.h>

/* Writes text as a JSON string literal (quotes included): escapes what JSON
 * requires and writes each byte that is not valid UTF-8 as \ufffd. */
void json_write_string(FILE *out, const char *text);
/* Whether a CSV field of this text would be run by a spreadsheet as a
 * formula (OWASP, "CSV Injection": a leading = + - @ TAB or CR), or starts
 * with the single quote that guards one: such a field is written after a
 * single quote, which a spreadsheet shows as text and a reader drops. */
int csv_needs_formula_guard(const char *text);
/* Writes text as XML character data: escapes markup, replaces invalid UTF-8
 * with U+FFFD and drops the control characters XML 1.0 forbids. */
void xml_write_text(FILE *out, const char *text);
/* Writes text for a message on a terminal: control characters and bytes
 * that are not valid UTF-8 appear as \xNN. */
void print_printable(FILE *out, const char *text);
/* One line of bad usage, "WHO: FMT (see HELP)": arg (printable) in fmt's
 * "%s", or after it in quotes where fmt has none (NULL: nothing). */
void print_usage_line(FILE *out, const char *who, const char *fmt, const char *arg, const char *help);
/* The columns print_printable's text takes on a terminal (an escaped byte
 * 4, a wide character 2). */
size_t printable_width(const char *text);
/* print_printable's text in exactly columns columns: padded with spaces, or
 * cut between two characters (never inside an escape) and ended with an
 * ellipsis when it is wider. */
void print_printable_column(FILE *out, const char *text, size_t columns);
/* The same into buf (cap bytes, always NUL-terminated, cut to fit). */
void printable_copy(char *buf, size_t cap, const char *text);
/* Copies text into buf (cap bytes, cap >= 4, always NUL-terminated); text
 * that does not fit is cut on a character boundary with an ellipsis
 * ("\u2026") where it was cut, so a cut is never taken for the whole.
 * Returns 1 when it cut, else 0. */
int text_cut(char *buf, size_t cap, const char *text);
/* The words joined by single spaces (a command line), malloc'ed; NULL when
 * out of memory. */
char *words_joined(int count, char *const *words);
/* A malloc'ed copy of text with each byte that is not valid UTF-8 replaced
 * by U+FFFD; NULL when out of memory. */
char *utf8_repaired(const char *text);

#endif
