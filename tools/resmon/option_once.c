/*
 * option_once.c -- the rule that an option taking one value is given once.
 *
 * getopt lets a later value replace an earlier one, silently: "-o a.json
 * -o b.json" wrote b.json alone, "--title A --title B" drew B, and nothing
 * said the first was dropped.  Every parser (resmon, resmon plot, resmon
 * compare, the exporter options) calls option_once_check for each option
 * that takes one value -- not for those that may repeat (--label,
 * --max-increase) -- so the rule is one everywhere.
 */
#include "option_once.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* As the user may spell it: "-o" where there is a short form, else "--title". */
static void option_name(int code, const struct option *longopts, char *name, size_t cap)
{
    if (code > 0 && code < 128 && isalnum(code)) {
        snprintf(name, cap, "-%c", code);
        return;
    }
    for (const struct option *opt = longopts; opt->name; opt++)
        if (!opt->flag && opt->val == code) {
            snprintf(name, cap, "--%s", opt->name);
            return;
        }
    snprintf(name, cap, "an option");
}

/* "0.1" and "0.10" are one interval: where the option has a number, the
 * numbers are compared, for a harmless repeat not to be refused. */
static int same_value(const option_once *seen, int code, const char *earlier, const char *value)
{
    if (strcmp(earlier, value) == 0)
        return 1;
    double a, b;
    return seen->number && seen->number(code, earlier, &a) == 0 && seen->number(code, value, &b) == 0 && a == b;
}

int option_once_check(option_once *seen, int code, const char *value, const struct option *longopts, char *fmt,
                      size_t cap)
{
    for (size_t i = 0; i < seen->count; i++) {
        if (seen->codes[i] != code)
            continue;
        if (same_value(seen, code, seen->values[i], value))
            return 0;
        char name[64];
        option_name(code, longopts, name, sizeof name);
        snprintf(fmt, cap, "%s given twice ('%%s' after an earlier one): give it once", name);
        return -1;
    }
    if (seen->count < OPTION_ONCE_MAX) {
        seen->codes[seen->count] = code;
        seen->values[seen->count++] = value;
    }
    return 0;
}
