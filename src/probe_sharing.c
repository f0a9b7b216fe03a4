/*
 * probe_sharing.c -- processes that share their parent's address space or
 * file table (see probe_state.h).
 *
 * clone(CLONE_VM) makes a second process of the same memory: a vfork child
 * until its exec (posix_spawn, Python's subprocess), the helper task of
 * ASan's leak check at a program's exit, a runtime's own clone.  Its statm,
 * smaps_rollup and stat show that memory whole, as its parent's do: summed
 * over the tree, the pages counted twice (a program of 86 MiB read 168 MiB
 * of PSS while ASan's leak check ran, CI64).  CLONE_FILES does the same to
 * the open descriptors.  Such a process's shared levels are its parent's,
 * counted there: the reading leaves them out of its sums (probe.c,
 * metrics.c) for as long as it still shares -- an exec gives it a memory of
 * its own, and a parent's exit leaves it the sole holder.  Its CPU, I/O and
 * counts are its own and count as ever.
 *
 * kcmp(2) tells whether two processes share the object: one call at a
 * child's join, and one a reading for each process found sharing.  Where
 * kcmp is refused (EPERM: a process we may not inspect; ENOSYS: a kernel
 * built without it) the process counts whole, as it did before.
 */
#include "probe_state.h"

#include <linux/kcmp.h>
#include <sys/syscall.h>
#include <unistd.h>

static const struct {
    int kcmp_type;
    unsigned shares;
} sharable[] = {
    {KCMP_VM, RM__SHARES_MEMORY},
    {KCMP_FILES, RM__SHARES_FILES},
};

/* The objects of `wanted` that a and b share, by kcmp (0: the same). */
static unsigned shared_objects(pid_t a, pid_t b, unsigned wanted)
{
    unsigned shared = 0;
    for (size_t i = 0; i < sizeof sharable / sizeof *sharable; i++)
        if (wanted & sharable[i].shares && syscall(SYS_kcmp, a, b, sharable[i].kcmp_type, 0, 0) == 0)
            shared |= sharable[i].shares;
    return shared;
}

void rm__probe_note_sharing(rm__tracked *t, const rm__tracked *parent)
{
    t->sharer = parent->pid;
    t->metrics.shares = shared_objects(parent->pid, t->pid, RM__SHARES_MEMORY | RM__SHARES_FILES);
}

unsigned rm__probe_still_shares(rm__probe *p, rm__tracked *t)
{
    /* Its sharer counts the shared levels only while it is tracked and
     * read in this reading: one found ended (a zombie holds no memory)
     * leaves them to t.  Parents come first in the set, so the sharer's
     * reading of this round is already made. */
    const rm__tracked *sharer = rm__probe_find(p, t->sharer);
    if (!sharer || sharer->ending || (size_t)(sharer - p->procs) < p->members)
        t->metrics.shares = 0;
    else
        t->metrics.shares = shared_objects(t->sharer, t->pid, t->metrics.shares);
    return t->metrics.shares; /* once cleared, for good: sharing begins only at a clone */
}
