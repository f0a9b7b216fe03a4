/*
 * version.c -- the version of the library linked at run time.
 */
#include "resmon.h"

unsigned resmon_version(void)
{
    return RESMON_VERSION_NUMBER;
}

const char *resmon_version_string(void)
{
    return RESMON_VERSION_STRING;
}
