/*
 * decimal_text.h -- whether an option's number is written in decimal, as
 * its help says: strtod alone also reads "0x10" (16), "inf", "nan" and
 * leading spaces, which no one means as a number of seconds or a limit.
 */
#ifndef RESMON_DECIMAL_TEXT_H
#define RESMON_DECIMAL_TEXT_H

/* Whether text, up to end, is digits with at most one point and an
 * optional exponent (e or E, an optional sign, digits): "1", ".5", "2.",
 * "1e-3".  No sign in front, no space, no hex, no inf or nan. */
static inline int rm__decimal_text(const char *text, const char *end)
{
    const char *p = text;
    int digits = 0, points = 0;
    for (; p < end && ((*p >= '0' && *p <= '9') || *p == '.'); p++)
        *p == '.' ? points++ : digits++;
    if (!digits || points > 1)
        return 0;
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < end && (*p == '+' || *p == '-'))
            p++;
        const char *exponent = p;
        while (p < end && *p >= '0' && *p <= '9')
            p++;
        if (p == exponent)
            return 0;
    }
    return p == end;
}

#endif
