/*
 * pid_index.c -- from a pid to its position in the caller's array (see
 * pid_index.h).
 */
#include "pid_index.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int rm__pid_index_reset(rm__pid_index *ix, size_t entries)
{
    size_t need = 16;
    while (need < 2 * entries)
        need *= 2;
    if (need > ix->cap) {
        uint32_t *grown = realloc(ix->slots, need * sizeof *grown);
        if (!grown)
            return -ENOMEM;
        ix->slots = grown;
        ix->cap = need;
    }
    memset(ix->slots, 0, ix->cap * sizeof *ix->slots);
    return 0;
}

void rm__pid_index_add(rm__pid_index *ix, pid_t pid, size_t position)
{
    size_t slot = rm__pid_index_first(ix, pid);
    while (ix->slots[slot])
        slot = rm__pid_index_next(ix, slot);
    ix->slots[slot] = (uint32_t)position + 1;
}

void rm__pid_index_free(rm__pid_index *ix)
{
    free(ix->slots);
    ix->slots = NULL;
    ix->cap = 0;
}
