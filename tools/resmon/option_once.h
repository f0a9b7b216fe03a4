/*
 * option_once.h -- an option that takes one value is given once
 * (option_once.c): every subcommand's parser applies the same rule.
 */
#ifndef RESMON_OPTION_ONCE_H
#define RESMON_OPTION_ONCE_H

#include <getopt.h>
#include <stddef.h>

#define OPTION_ONCE_MAX 64

/* An option's value as a number where it has one (a number of seconds, a
 * count, a size): 0 and *value; -1 where its text is the value (a path, a
 * title) or the text is not one. */
typedef int (*option_once_number)(int code, const char *text, double *value);

/* The values given so far, by getopt's code.  Zero it before parsing; set
 * number where the parser has options whose values are numbers, so that
 * "-i 0.1 -i 0.10" is the same value given twice, not two. */
typedef struct option_once {
    int codes[OPTION_ONCE_MAX];
    const char *values[OPTION_ONCE_MAX];
    size_t count;
    option_once_number number;
} option_once;

/* Records value for the option getopt returned as code (long options
 * described by longopts).  The same value again (the same text, or the
 * same number by seen->number) is harmless; a different
 * one is refused: fills fmt with one line's text, "-o given twice ('%s'
 * after an earlier one): give it once" (%s: the value, for the caller's
 * usage error to print), and returns -1.  0 else.  The parsers say it after
 * checking the value itself: "-i 0.1 -i abc" is an invalid interval, named
 * as a single "-i abc" is, not a second value. */
int option_once_check(option_once *seen, int code, const char *value, const struct option *longopts, char *fmt,
                      size_t cap);

#endif
