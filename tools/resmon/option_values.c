/*
 * option_values.c -- values of the command's options (see option_values.h).
 */
#include "option_values.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

int parse_seconds(const char *text, double *out, int zero_allowed)
{
    char *end;
    errno = 0;
    double value = strtod(text, &end);
    if (end == text || *end != '\0' || errno == ERANGE || !isfinite(value) || value < 0 ||
        (value == 0 && !zero_allowed))
        return -EINVAL;
    *out = value;
    return 0;
}
