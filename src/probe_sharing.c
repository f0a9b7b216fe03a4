/*
 * probe_sharing.c -- processes that share one address space or one file
 * table (see probe_state.h).
 *
 * clone(CLONE_VM) makes a second process of the same memory: a vfork child
 * until its exec (posix_spawn, Python's subprocess), the helper task of
 * ASan's leak check at a program's exit, a runtime's own clone.  Its statm,
 * smaps_rollup and stat show that memory whole, as its parent's do: summed
 * over the tree, the pages counted twice (a program of 86 MiB read 168 MiB
 * of PSS while ASan's leak check ran, CI64).  CLONE_FILES does the same to
 * the open descriptors.
 *
 * So the tracked processes found sharing one are a group, per kind, named by
 * the pid of the first of them tracked (share_group).  In each reading the
 * first member read alive (not a zombie) holds the group's levels --
 * counted once, there -- and every other member that still shares with it
 * (kcmp(2)) is left out of the sums (metrics.shares).  A member that no
 * longer shares (an exec: its own, or the holder's, when it still shares
 * with another member) leaves the group for good -- but while the
 * holder's figures of this reading are the shared ones (it was read
 * before it exited or exec'd), the member stays left out of them for this
 * reading, and leaves at the next -- and a member that becomes
 * the holder (the one before it ended) has its levels dropped and read
 * afresh, as one that left: what it showed while left out is not known to
 * be current.  A member is never idle: the group's memory moves when any
 * of them runs.  Its CPU, I/O and counts are its own and count as ever.
 *
 * A process joins a group at its join, when it shares with its tracked
 * parent (one kcmp per kind), or at the first reading that finds its parent
 * tracked (a cgroup's members are tracked in pid order: a clone whose pid
 * came before its parent's, after the pids wrapped).  Not found: a clone
 * made with CLONE_PARENT (it shares with a sibling), and a sharer whose
 * main thread exited (kcmp asks the leader, which holds no memory then).
 * Where kcmp is refused -- a process we may not inspect (EPERM), a seccomp
 * filter (Docker's default profile allows kcmp only with CAP_SYS_PTRACE), a
 * kernel without it (ENOSYS) -- the process counts whole, as before.
 */
#include "probe_state.h"

#include <linux/kcmp.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static const struct {
    int kcmp_type;
    unsigned shares; /* RM__SHARES_* */
} kinds[RM__SHARING_KINDS] = {
    {KCMP_VM, RM__SHARES_MEMORY},
    {KCMP_FILES, RM__SHARES_FILES},
};

static int share(pid_t a, pid_t b, size_t kind)
{
    return syscall(SYS_kcmp, a, b, kinds[kind].kcmp_type, 0, 0) == 0;
}

void rm__probe_sharing_join(rm__probe *p, rm__tracked *t, rm__tracked *parent)
{
    if (!parent) { /* not tracked yet: asked again once it is (rm__probe_sharing_read) */
        t->sharing_unchecked = 1;
        t->sharing_checked_generation = p->generation;
        return;
    }
    t->sharing_unchecked = 0;
    for (size_t k = 0; k < RM__SHARING_KINDS; k++) {
        if (kinds[k].shares == RM__SHARES_FILES && !(p->metrics.groups & RESMON_METRIC_COUNTS))
            continue; /* no descriptors are counted: nothing to count once */
        if (!share(parent->pid, t->pid, k))
            continue;
        if (!parent->share_group[k])
            parent->share_group[k] = parent->pid;
        t->share_group[k] = parent->share_group[k];
    }
}

void rm__probe_sharing_begin(rm__probe *p)
{
    p->sharing.holder_count = 0;
}

static rm__share_holder *holder_of(const rm__probe *p, size_t kind, pid_t group)
{
    for (size_t i = 0; i < p->sharing.holder_count; i++)
        if (p->sharing.holders[i].kind == kind && p->sharing.holders[i].group == group)
            return &p->sharing.holders[i];
    return NULL;
}

/* t holds its group's levels in this reading.  Without room to note it, no
 * one is left out for it: the others count whole, as before. */
static void note_holder(rm__probe *p, size_t kind, pid_t group, pid_t pid, uint64_t image)
{
    if (p->sharing.holder_count == p->sharing.holder_cap) {
        size_t cap = p->sharing.holder_cap ? p->sharing.holder_cap * 2 : 4;
        rm__share_holder *grown = realloc(p->sharing.holders, cap * sizeof *grown);
        if (!grown)
            return;
        p->sharing.holders = grown;
        p->sharing.holder_cap = cap;
    }
    p->sharing.holders[p->sharing.holder_count++] =
        (rm__share_holder){.group = group, .pid = pid, .kind = kind, .image = image};
}

/* Whether a tracked process other than t is in t's group of kind (a root
 * that stands in after its exit gives way to it). */
static int has_other_member(const rm__probe *p, const rm__tracked *t, size_t kind)
{
    for (size_t i = p->members; i < p->count; i++)
        if (&p->procs[i] != t && !p->procs[i].ending && p->procs[i].share_group[kind] == t->share_group[kind])
            return 1;
    return 0;
}

/* t no longer shares with its group's holder: either t exec'd, or the
 * holder did.  Whether t still shares with another member tells: then the
 * holder left the group, and t holds it now -- the members after it ask t.
 * (Taken for t's exec, a holder's exec counted each of its clones whole.) */
static int holder_left(rm__probe *p, rm__tracked *t, size_t kind, rm__share_holder *holder)
{
    pid_t group = t->share_group[kind];
    for (size_t i = p->members; i < p->count; i++) {
        rm__tracked *other = &p->procs[i];
        if (other == t || other->pid == holder->pid || other->ending || other->share_group[kind] != group ||
            !share(other->pid, t->pid, kind))
            continue;
        rm__tracked *old = rm__probe_find(p, holder->pid);
        if (old)
            old->share_group[kind] = 0; /* its own memory now, counted as it was read */
        holder->pid = t->pid;
        return 1;
    }
    return 0;
}

/* Whether the holder let go of what it shared since it was read in this
 * reading: it is exiting (its statm reads no memory, or it is gone).  Its
 * figures, read a moment before, stand for the group in this reading; the
 * member takes over at the next.  (Taken for the member's exec, the member
 * left the group and both were counted: a root that exited beside its
 * clone read 156 MiB of 78, 10 runs in 30 under ASan, whose exit is slow.)
 * The same for a file table: an exit lets go of the memory (exit_mm)
 * before the table (exit_files), so a holder whose table kcmp no longer
 * finds because it is exiting reads no memory by then -- taken for an
 * exec, its members' table was counted whole beside the part of it the
 * exiting holder had listed (1136 to 1818 descriptors of 1005, 1 run in
 * 8).  A holder that unshared its table (an exec) still has memory: the
 * member leaves, as before -- the two tables are real. */
static int holder_let_go(rm__probe *p, const rm__share_holder *holder)
{
    rm__tracked *h = rm__probe_find(p, holder->pid);
    rm__process_reading now;
    return !h || rm__probe_read_statm(h, &now) < 0 || !now.has_memory;
}

/* Its stat's startstack (0: unknown, hidden or gone): an exec gives a
 * process a new address space, its stack placed anew. */
static uint64_t image_of(rm__tracked *t)
{
    rm__process_reading now;
    return t && rm__probe_read_stat(t, &now) == 0 ? now.st.startstack : 0;
}

/* Whether the holder exec'd since it was read in this reading: then the
 * memory it was read with is the one its members keep, and its figures,
 * read before its exec, stand for that memory in this reading -- the
 * member is left out of it once more, and takes it over at the next
 * reading, which reads the holder's new image.  (Taken for the member's
 * exec, with no other member to hand the group to, the member left and
 * was counted whole beside the holder's figures of the same memory: 403
 * MiB of 301, 2 runs in 32.)  Re-reading the holder instead would undo
 * what it already added to every sum; this way the reading shows the
 * tree as the holder was read, its new image one reading late, as an exec
 * just after the reading would be.  An exec before the holder's reading
 * shows the image it was read with: the member leaves.  The image is read
 * before the statm the holder is counted with (rm__probe_sharing_read has
 * it read again), so an exec between the two -- microseconds -- leaves
 * the old memory out of one reading rather than counting it twice.  Not
 * seen: an exec that places the stack where it was (no ASLR, the same
 * program and arguments), counted twice as before. */
static int holder_execd_since_read(rm__probe *p, const rm__share_holder *holder)
{
    if (!holder->image)
        return 0;
    uint64_t now = image_of(rm__probe_find(p, holder->pid));
    return now && now != holder->image;
}

static void check_unchecked(rm__probe *p, rm__tracked *t)
{
    if (t->sharing_checked_generation == p->generation)
        return; /* no process joined since it was last asked */
    t->sharing_checked_generation = p->generation;
    rm__tracked *parent = rm__probe_find(p, t->ppid);
    if (parent && parent != t && (size_t)(parent - p->procs) >= p->members)
        rm__probe_sharing_join(p, t, parent);
}

unsigned rm__probe_sharing_read(rm__probe *p, rm__tracked *t, int holds_now)
{
    if (t->sharing_unchecked)
        check_unchecked(p, t);
    unsigned left_out = 0, left = 0, reread_holder = 0;
    for (size_t k = 0; k < RM__SHARING_KINDS; k++) {
        pid_t group = t->share_group[k];
        if (!group)
            continue;
        rm__share_holder *holder = holder_of(p, k, group);
        if (holder && holder->pid != t->pid) {
            if (share(holder->pid, t->pid, k) || holder_let_go(p, holder) ||
                (kinds[k].shares == RM__SHARES_MEMORY && holder_execd_since_read(p, holder))) {
                left_out |= kinds[k].shares;
                holder->left_out++;
            } else if (!holds_now || !holder_left(p, t, k, holder)) {
                t->share_group[k] = 0; /* its own now: an exec */
                left |= kinds[k].shares;
            }
        } else if (!holds_now) {
            if (has_other_member(p, t, k)) /* a zombie: the root's last figures stand in, unless a member holds them */
                left_out |= kinds[k].shares;
        } else if (!holder) {
            uint64_t image = 0;
            if (kinds[k].shares == RM__SHARES_MEMORY) {
                image = image_of(t);
                reread_holder = image != 0; /* its statm, after its image (holder_execd_since_read) */
            }
            note_holder(p, k, group, t->pid, image);
        }
    }
    unsigned ended = t->metrics.shares & ~left_out;
    if (ended)
        rm__metrics_sharing_ended(&t->metrics, ended);
    t->metrics.shares = left_out;
    /* Left, its statm may have been read before its exec: the caller reads
     * it again (a vfork child caught so at its first reading counted the
     * parent's 300 MiB whole). */
    return ended | left | (reread_holder ? RM__SHARES_MEMORY : 0u);
}

void rm__probe_sharing_stand_in(rm__probe *p, rm__tracked *root)
{
    unsigned left_out = 0;
    for (size_t k = 0; k < RM__SHARING_KINDS; k++) {
        const rm__share_holder *holder = root->share_group[k] ? holder_of(p, k, root->share_group[k]) : NULL;
        if (holder && holder->pid != root->pid)
            left_out |= kinds[k].shares;
    }
    root->metrics.shares = left_out;
}

void rm__probe_sharing_end(rm__probe *p)
{
    /* A vfork's parent whose child exec'd would otherwise stay in a group
     * of one for the rest of the run, never idle: every process of a
     * build that ever spawned one read in full at every sample. */
    for (size_t i = 0; i < p->sharing.holder_count; i++) {
        const rm__share_holder *h = &p->sharing.holders[i];
        rm__tracked *t = h->left_out ? NULL : rm__probe_find(p, h->pid);
        if (t && t->share_group[h->kind] == h->group && !has_other_member(p, t, h->kind))
            t->share_group[h->kind] = 0;
    }
}

void rm__probe_sharing_free(rm__probe *p)
{
    free(p->sharing.holders);
    p->sharing.holders = NULL;
    p->sharing.holder_count = p->sharing.holder_cap = 0;
}
