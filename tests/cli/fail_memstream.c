/*
 * fail_memstream.c -- LD_PRELOAD'ed into resmon by test_repeat.py: every
 * open_memstream() fails with ENOMEM, as it does when memory runs out, so
 * the repeat's out-of-memory path after a run (its summary cannot be made)
 * runs for real.  The command resmon starts does not inherit it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((constructor)) static void not_inherited(void)
{
    unsetenv("LD_PRELOAD"); /* resmon's own; the command and its children run as they are */
}

__attribute__((visibility("default"))) FILE *open_memstream(char **ptr, size_t *sizeloc)
{
    (void)ptr;
    (void)sizeloc;
    errno = ENOMEM;
    return NULL;
}
