/*
 * enum_names.c -- the words for resmon's enums (resmon_hwm_scope_name,
 * resmon_energy_source_name), as the JSON summary and the bindings spell
 * them.
 */
#include "resmon.h"

#include <stddef.h>

const char *resmon_hwm_scope_name(resmon_hwm_scope scope)
{
    switch (scope) {
    case RESMON_HWM_WINDOW: return "window";
    case RESMON_HWM_LIFETIME: return "lifetime";
    case RESMON_HWM_UNKNOWN: break;
    }
    return NULL;
}

const char *resmon_energy_source_name(resmon_energy_source source)
{
    switch (source) {
    case RESMON_ENERGY_COUNTER: return "counter";
    case RESMON_ENERGY_INTEGRATED: return "integrated";
    case RESMON_ENERGY_UNKNOWN: break;
    }
    return NULL;
}
