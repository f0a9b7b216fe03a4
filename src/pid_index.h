/*
 * pid_index.h -- from a pid to its position in an array the caller owns,
 * by open addressing: the tree walker's found set and kept-open files and
 * the probe's rows are each looked up once per process per walk, and a scan
 * made a walk of 10 000 processes quadratic.
 *
 * The index holds positions + 1 (0: an empty slot), never the pids: the
 * caller's array stays the truth, and a lookup compares the pid there:
 *
 *     for (size_t s = rm__pid_index_first(&ix, pid); ix.slots[s]; s = rm__pid_index_next(&ix, s))
 *         if (rows[ix.slots[s] - 1].pid == pid)
 *             return &rows[ix.slots[s] - 1];
 *
 * Entries are only added; a caller that removes or moves some resets the
 * index and adds what is left.
 */
#ifndef RESMON_PID_INDEX_H
#define RESMON_PID_INDEX_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct rm__pid_index {
    uint32_t *slots;
    size_t cap; /* a power of two; 0: no table yet */
} rm__pid_index;

/* Empties ix, with room for at least entries positions (the table is kept
 * at least twice that, so that a probe ends soon).  Returns 0, or -ENOMEM
 * with ix as it was. */
int rm__pid_index_reset(rm__pid_index *ix, size_t entries);

/* Whether ix has room for entries positions without a reset. */
static inline int rm__pid_index_fits(const rm__pid_index *ix, size_t entries)
{
    return ix->cap >= 2 * entries && ix->cap > 0;
}

/* Adds position for pid; the caller made room (rm__pid_index_fits). */
void rm__pid_index_add(rm__pid_index *ix, pid_t pid, size_t position);

static inline size_t rm__pid_index_first(const rm__pid_index *ix, pid_t pid)
{
    return ((uint32_t)pid * 2654435761u) & (ix->cap - 1);
}

static inline size_t rm__pid_index_next(const rm__pid_index *ix, size_t slot)
{
    return (slot + 1) & (ix->cap - 1);
}

void rm__pid_index_free(rm__pid_index *ix);

#endif
