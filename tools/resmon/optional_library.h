/*
 * optional_library.h -- a shared library only some of the command's options
 * need, loaded by soname with dlopen when one of them is used (see
 * optional_library.c): libmicrohttpd (--serve), libcurl (--push), Jansson
 * (reading a .jsonl file, resmon compare).
 */
#ifndef RESMON_OPTIONAL_LIBRARY_H
#define RESMON_OPTIONAL_LIBRARY_H

#include <stddef.h>

/* Loads soname (or the file named by the environment variable path_variable,
 * a test seam) and fills table -- a struct of table_size bytes holding one
 * function pointer per name, in the order of names[0 .. count-1] -- with
 * their addresses.  A table whose first pointer is already set is left as
 * it is (loaded before).  All or nothing: on failure the table stays empty.
 * 0, or -1 with one sentence in err naming option (what needs the library:
 * "--serve", or words such as "comparing summaries"), the library and what
 * is missing. */
int optional_library_load(const char *option, const char *soname, const char *path_variable,
                          const char *const *names, size_t count, void *table, size_t table_size, char *err,
                          size_t errcap);

/* optional_library_load with names an array and table a pointer to a
 * struct, counted and sized here; a struct that is not one pointer per name
 * does not compile (a negative array size). */
#define OPTIONAL_LIBRARY_LOAD(option, soname, path_variable, names, table, err, errcap)                       \
    ((void)sizeof(char[sizeof *(table) == sizeof(names) / sizeof((names)[0]) * sizeof(void *) ? 1 : -1]),  \
     optional_library_load(option, soname, path_variable, names, sizeof(names) / sizeof((names)[0]), table, \
                           sizeof *(table), err, errcap))

#endif
