/*
 * optional_library.c -- the shared libraries only some options need
 * (libmicrohttpd for --serve, libcurl for --push, Jansson to read a .jsonl
 * file or compare summaries), loaded by soname when the option is given, as
 * the NVML backend loads NVML.
 *
 * Linked, they were mapped into every run -- libcurl alone brings TLS,
 * Kerberos, LDAP, SSH and more, 36 objects to run `true` -- and a plain run
 * paid for them in start-up time and memory.  Loaded here, a plain run maps
 * ld.so, libc, libm and what sampling needs; a machine without them runs resmon
 * fine and only the option that needs one says so.  The headers are used at
 * build time for the types and prototypes; nothing is linked.
 */
#include "optional_library.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int optional_library_load(const char *option, const char *soname, const char *path_variable,
                          const char *const *names, size_t count, void *table, size_t table_size, char *err,
                          size_t errcap)
{
    void *first;
    memcpy(&first, table, sizeof first);
    if (first)
        return 0; /* loaded before */
    if (table_size != count * sizeof(void *)) {
        snprintf(err, errcap, "%s: resmon's table for %s has %zu bytes for %zu functions (a build error)", option,
                 soname, table_size, count);
        return -1;
    }
    /* The test seam: another file in the soname's place (a missing one
     * stands for a machine without the library). */
    const char *path = getenv(path_variable);
    if (!path || !*path)
        path = soname;
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *why = dlerror();
        int is_option = option[0] == '-'; /* "--serve": the run may do without it */
        snprintf(err, errcap, "%s needs %s, which cannot be loaded (%s): install it%s%s", option, soname,
                 why ? why : "not found", is_option ? ", or run without " : "", is_option ? option : "");
        return -1;
    }
    for (size_t i = 0; i < count; i++) {
        dlerror();
        void *symbol = dlsym(handle, names[i]);
        if (!symbol) {
            snprintf(err, errcap, "%s needs %s, and %s has no %s (too old?)", option, soname, path, names[i]);
            memset(table, 0, table_size);
            dlclose(handle);
            return -1;
        }
        /* POSIX: dlsym's pointer is the function's; the table is a struct of
         * function pointers, one per name, so slot i lies at i pointers. */
        memcpy((char *)table + i * sizeof symbol, &symbol, sizeof symbol);
    }
    return 0; /* kept loaded until the process exits: its threads may still unwind */
}
