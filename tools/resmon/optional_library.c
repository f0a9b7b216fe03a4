/*
 * optional_library.c -- the shared libraries only some options need
 * (libmicrohttpd for --serve, libcurl for --push), loaded by soname when the
 * option is given, as the NVML backend loads NVML.
 *
 * Linked, they were mapped into every run -- libcurl alone brings TLS,
 * Kerberos, LDAP, SSH and more, 36 objects to run `true` -- and a plain run
 * paid for them in start-up time and memory.  Loaded here, a plain run maps
 * libc, libm and what sampling needs; a machine without them runs resmon
 * fine and only the option that needs one says so.  The headers are used at
 * build time for the types and prototypes; nothing is linked.
 */
#include "exporters.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int optional_library_load(const char *option, const char *soname, const char *path_variable,
                          const char *const *names, void **slots, size_t count, char *err, size_t errcap)
{
    /* The test seam: another file in the soname's place (a missing one
     * stands for a machine without the library). */
    const char *path = getenv(path_variable);
    if (!path || !*path)
        path = soname;
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *why = dlerror();
        snprintf(err, errcap, "%s needs %s, which cannot be loaded (%s): install it, or run without %s", option,
                 soname, why ? why : "not found", option);
        return -1;
    }
    for (size_t i = 0; i < count; i++) {
        dlerror();
        slots[i] = dlsym(handle, names[i]);
        if (!slots[i]) {
            snprintf(err, errcap, "%s needs %s, and %s has no %s (too old?)", option, soname, path, names[i]);
            dlclose(handle);
            return -1;
        }
    }
    return 0; /* kept loaded until the process exits: its threads may still unwind */
}
