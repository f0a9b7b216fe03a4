/*
 * proc_tree.h -- finding the descendants of a process.
 *
 * Two ways, chosen once per walker: the kernel's per-thread children lists
 * (/proc/PID/task/TID/children, CONFIG_PROC_CHILDREN), which cost work in
 * proportion to the tree, or, where the kernel lacks them, a scan of every
 * /proc/N/stat for parent pids.  The children lists are best effort (the
 * kernel calls them unreliable while the tree changes); both ways may miss a
 * process born during the walk, which the next walk finds.
 */
#ifndef RESMON_PROC_TREE_H
#define RESMON_PROC_TREE_H

#include <stddef.h>
#include <sys/types.h>

typedef struct rm__tree_walker {
    int proc_fd;              /* the /proc directory (or a fixture tree) */
    int use_children_files;   /* 1: task/TID/children lists; 0: scan /proc */
    pid_t *found;             /* descendants of the last walk (owned) */
    size_t found_len, found_cap;
    pid_t *scan_pid, *scan_ppid; /* scratch for the /proc scan (owned) */
    size_t scan_cap;
} rm__tree_walker;

typedef enum rm__tree_method {
    RM__TREE_AUTO,          /* children lists where the kernel has them, else scan */
    RM__TREE_SCAN,          /* always scan (RESMON_FORCE_PROC_SCAN, tests) */
    RM__TREE_CHILDREN_FILES /* always the children lists (tests with fixtures) */
} rm__tree_method;

/* Prepares a walker over the proc directory proc_fd (borrowed; it must stay
 * open). */
void rm__tree_walker_init(rm__tree_walker *w, int proc_fd, rm__tree_method method);
void rm__tree_walker_free(rm__tree_walker *w);

/* Finds every descendant of root (not root itself) into w->found /
 * w->found_len.  Scratch memory is reused between walks, so a steady tree
 * allocates nothing.  Returns 0 or -ENOMEM; processes that vanish or cannot
 * be read mid-walk are skipped, not errors. */
int rm__tree_walk(rm__tree_walker *w, pid_t root);

#endif
