/*
 * cgroup_nesting.h -- how deep resmon follows the cgroups below one it
 * walks, and what it says of a tree deeper than that.
 *
 * cgroupfs sets no depth of its own (v2's cgroup.max.depth is unlimited
 * unless set, v1 has none), and every walk below a cgroup -- removing a
 * leaf with what its command made in it, counting v1's OOM kills cgroup by
 * cgroup, listing a --cgroup PATH's processes, telling whether anything
 * still runs there -- holds a descriptor a level.  So each stops at
 * RM_CGROUP_NESTING_MAX levels below where it began, far deeper than any
 * systemd slice or container runtime nests (attack 73: 16 was reached by a
 * command's `mkdir -p` of 17 levels), and where it stops with cgroups still
 * below (rm_cgroup_has_child) it says so instead of taking the part it did
 * not see for empty: a leaf kept and said, kills unknown rather than 0,
 * the members counted unreadable.
 *
 * Shared by the library and the resmon command, header-only (static
 * inline), as regular_file.h is.
 */
#ifndef RESMON_CGROUP_NESTING_H
#define RESMON_CGROUP_NESTING_H

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#define RM_CGROUP_NESTING_MAX 64

/* Whether a directory entry of a cgroup may be a cgroup below it: any name
 * but "." and "..".  A cgroup may be named ".hidden" (mkdir takes it), and
 * the walks that skipped every name with a leading dot missed it: a leaf
 * said busy for good, its kills and processes unseen (attack 73). */
static inline int rm_cgroup_child_entry(const struct dirent *e)
{
    const char *n = e->d_name;
    if (n[0] == '.' && (n[1] == '\0' || (n[1] == '.' && n[2] == '\0')))
        return 0;
    return e->d_type == DT_DIR || e->d_type == DT_UNKNOWN;
}

/* Whether the cgroup open at dir has a cgroup below it: 1, 0, or 1 when it
 * cannot be listed (nothing below it can be said to be empty). */
static inline int rm_cgroup_has_child(int dir)
{
    int listing = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = listing >= 0 ? fdopendir(listing) : NULL;
    if (!d) {
        if (listing >= 0)
            close(listing);
        return 1;
    }
    int found = 0;
    for (struct dirent *e; !found && (e = readdir(d)) != NULL;)
        found = rm_cgroup_child_entry(e);
    closedir(d);
    return found;
}

#endif
