/*
 * errors.c -- resmon_strerror: words for the negative errno values resmon returns.
 */
#include "resmon.h"

#include <errno.h>

const char *resmon_strerror(int err)
{
    if (err == 0)
        return "success";
    if (err > 0)
        err = -err;
    switch (err) {
#define RESMON_STRERROR_CASE(code, message) \
    case -code:                             \
        return message;
        RESMON_ERRNO_MAP(RESMON_STRERROR_CASE)
#undef RESMON_STRERROR_CASE
    default:
        return "unknown error";
    }
}
