/*
 * jansson_loader.c -- the one table of Jansson's calls (jansson_loader.h).
 */
#include "jansson_loader.h"
#include "optional_library.h"

struct jansson_calls jansson;

static const char *const jansson_names[] = {
    "json_loadf",          "json_loadb",       "json_object",          "json_object_get",
    "json_object_set_new", "json_object_iter", "json_object_iter_next", "json_object_iter_key",
    "json_object_iter_value", "json_integer",  "json_integer_value",   "json_number_value",
    "json_string_value",   "json_delete",      "json_array_size",      "json_array_get",
    "json_equal",          "json_set_alloc_funcs", "json_load_callback", "json_dump_callback",
};

int jansson_load(const char *option, char *why, size_t cap)
{
    return OPTIONAL_LIBRARY_LOAD(option, "libjansson.so.4", "RESMON_JANSSON_LIBRARY", jansson_names, &jansson, why,
                                 cap);
}

void jansson_release(json_t *object)
{
    if (object)
        jansson.delete_(object);
}
