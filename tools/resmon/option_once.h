/*
 * option_once.h -- an option that takes one value is given once
 * (option_once.c): every subcommand's parser applies the same rule.
 */
#ifndef RESMON_OPTION_ONCE_H
#define RESMON_OPTION_ONCE_H

#include <getopt.h>
#include <stddef.h>

#define OPTION_ONCE_MAX 64

/* The values given so far, by getopt's code.  Zero it before parsing. */
typedef struct option_once {
    int codes[OPTION_ONCE_MAX];
    const char *values[OPTION_ONCE_MAX];
    size_t count;
} option_once;

/* Records value for the option getopt returned as code (long options
 * described by longopts).  The same value again is harmless; a different
 * one is refused: fills fmt with one line's text, "-o given twice ('%s'
 * after an earlier one): give it once" (%s: the value, for the caller's
 * usage error to print), and returns -1.  0 else. */
int option_once_check(option_once *seen, int code, const char *value, const struct option *longopts, char *fmt,
                      size_t cap);

#endif
