/*
 * swap_on_lookup.c -- LD_PRELOAD'ed into resmon by test_cli.py: the race
 * another user runs in a loop (renameat2(RENAME_EXCHANGE) of a directory
 * and a link in a directory they can write), made to happen at one chosen
 * moment instead of by luck.  The first time resmon looks up a name whose
 * last component is $SWAP_AFTER_LOOKUP_OF (by open, openat, stat, lstat or
 * fstatat, as resmon's own code calls them), $SWAP_A and $SWAP_B are
 * exchanged right after that lookup returns.  A resolution that looks the
 * path up again later is sent where the swapped link points; one that holds
 * what it reached is not.  $SWAP_AT (default 1) picks a later lookup of
 * that name instead of the first.  The command resmon starts does not
 * inherit it.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int swapped, lookups;

__attribute__((constructor)) static void not_inherited(void)
{
    unsetenv("LD_PRELOAD");
}

static void after_lookup(const char *path)
{
    const char *when = getenv("SWAP_AFTER_LOOKUP_OF"), *a = getenv("SWAP_A"), *b = getenv("SWAP_B");
    if (swapped || !when || !a || !b || !path)
        return;
    const char *slash = strrchr(path, '/');
    if (strcmp(slash ? slash + 1 : path, when) != 0)
        return;
    const char *at = getenv("SWAP_AT");
    if (++lookups < (at ? atoi(at) : 1))
        return;
    swapped = 1;
    if (renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) != 0)
        perror("swap_on_lookup: renameat2");
}

#define REAL(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))
#define EXPORT __attribute__((visibility("default")))

EXPORT int open(const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = (mode_t)va_arg(ap, int);
    va_end(ap);
    int rc = REAL(open)(path, flags, mode);
    after_lookup(path);
    return rc;
}

EXPORT int open64(const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = (mode_t)va_arg(ap, int);
    va_end(ap);
    int rc = REAL(open64)(path, flags, mode);
    after_lookup(path);
    return rc;
}

EXPORT int openat(int dir_fd, const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = (mode_t)va_arg(ap, int);
    va_end(ap);
    int rc = REAL(openat)(dir_fd, path, flags, mode);
    after_lookup(path);
    return rc;
}

EXPORT int openat64(int dir_fd, const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = (mode_t)va_arg(ap, int);
    va_end(ap);
    int rc = REAL(openat64)(dir_fd, path, flags, mode);
    after_lookup(path);
    return rc;
}

EXPORT int stat(const char *path, struct stat *st)
{
    int rc = REAL(stat)(path, st);
    after_lookup(path);
    return rc;
}

EXPORT int lstat(const char *path, struct stat *st)
{
    int rc = REAL(lstat)(path, st);
    after_lookup(path);
    return rc;
}

EXPORT int fstatat(int dir_fd, const char *path, struct stat *st, int flags)
{
    int rc = REAL(fstatat)(dir_fd, path, st, flags);
    after_lookup(path);
    return rc;
}
