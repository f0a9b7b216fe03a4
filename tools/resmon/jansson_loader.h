/*
 * jansson_loader.h -- Jansson's calls for the command's two readers of JSON
 * (`resmon compare`, compare.c; `resmon plot` of a .jsonl file,
 * samples_read.c), loaded when one of them runs (optional_library.c), so that
 * no other run of the command maps the library.  Its header gives the types.
 *
 * json_decref (inline, calling json_delete) is not used: each object here is
 * held once and released with jansson_release; json_object_foreach (a macro
 * naming Jansson's functions) is spelled with the iterator calls.
 */
#ifndef RESMON_JANSSON_LOADER_H
#define RESMON_JANSSON_LOADER_H

#include <jansson.h>
#include <stddef.h>

struct jansson_calls {
    __typeof__(json_loadf) *loadf;
    __typeof__(json_loadb) *loadb;
    __typeof__(json_object) *object;
    __typeof__(json_object_get) *object_get;
    __typeof__(json_object_set_new) *object_set_new;
    __typeof__(json_object_iter) *object_iter;
    __typeof__(json_object_iter_next) *object_iter_next;
    __typeof__(json_object_iter_key) *object_iter_key;
    __typeof__(json_object_iter_value) *object_iter_value;
    __typeof__(json_integer) *integer;
    __typeof__(json_integer_value) *integer_value;
    __typeof__(json_number_value) *number_value;
    __typeof__(json_string_value) *string_value;
    __typeof__(json_delete) *delete_;
    __typeof__(json_array_size) *array_size;
    __typeof__(json_array_get) *array_get;
    __typeof__(json_equal) *equal;
    __typeof__(json_set_alloc_funcs) *set_alloc_funcs;
    __typeof__(json_load_callback) *load_callback;
    __typeof__(json_dump_callback) *dump_callback;
};

/* Filled by jansson_load; empty until it succeeds. */
extern struct jansson_calls jansson;

/* Loads Jansson (once; later calls return 0 at once).  0, or -1 with one
 * sentence in why naming what needs it (option: "comparing summaries"). */
int jansson_load(const char *option, char *why, size_t cap);

/* Releases object, the only reference to it (what json_decref would do). */
void jansson_release(json_t *object);

#endif
