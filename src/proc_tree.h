/*
 * proc_tree.h -- finding the descendants of a process.
 *
 * Two ways, chosen once per walker: the kernel's per-thread children lists
 * (/proc/PID/task/TID/children, CONFIG_PROC_CHILDREN), which cost work in
 * proportion to the tree, or, where the kernel lacks them, a scan of every
 * /proc/N/stat for parent pids.  The children lists are best effort (the
 * kernel calls them unreliable while the tree changes); both ways may miss a
 * process born during the walk, which the next walk finds.
 *
 * The children lists, walked per process: a process whose task directory
 * counts one thread (its link count is 2 + threads) and whose latest listing
 * was that one thread costs one fstat and one pread of the leader's children
 * file, kept open; a process of many threads (RM__WALK_SCAN_THREADS, or a
 * third of the processes /proc listed last) has its children found from the
 * parent links of one /proc listing per walk, as the scan does, since a
 * children file per thread costs more; the others list their threads and
 * read each thread's file.  A process the caller vouches did not run since
 * its lists were last read (rm__tree_walker_note_clock) costs nothing: its
 * lists are reused.
 *
 * A third membership source replaces both where a cgroup's processes are the
 * tree (rm__tree_walker_use_cgroup): each walk lists its cgroup.procs -- one
 * open and read a walk, whatever the tree's shape.
 */
#ifndef RESMON_PROC_TREE_H
#define RESMON_PROC_TREE_H

#include "pid_index.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct rm__parent_link {
    pid_t pid, ppid;
} rm__parent_link;

/* A process the children walk visits: its task directory and the children
 * files of its first threads, kept open between walks within the walker's
 * budget of descriptors (past it, none: task_fd -1, its lists read by pid
 * when they cannot be reused). */
#define RM__CACHED_THREADS 8
/* Above this many threads (or a third of the processes /proc listed last,
 * if more), a process's children are found from a listing of /proc (its
 * children's parent links), not from a file per thread. */
#define RM__WALK_SCAN_THREADS 64
typedef struct rm__walked_process {
    pid_t pid;
    int task_fd;           /* -1: no descriptor kept (past the budget) */
    unsigned seen_walk;
    size_t thread_count;   /* threads whose children file is cached */
    size_t listed_threads; /* threads its latest task listing found (0: none yet) */
    pid_t tids[RM__CACHED_THREADS];
    int children_fd[RM__CACHED_THREADS];
    pid_t parent;         /* whose list had it in the latest walk (0: a root) */
    /* Its children as its latest whole reading of its lists found them,
     * and its CPU clock noted before that walk (rm__tree_walker_note_clock):
     * reused, unread, while the clock stands and nothing below it changed. */
    pid_t *listed;
    size_t listed_len, listed_cap;
    int listed_valid;
    uint64_t listed_clock_ns;
    uint64_t clock_ns;     /* the clock noted for the walk clock_walk */
    unsigned clock_walk;
    unsigned changed_walk; /* it or a process below it ran or ended before this walk */
} rm__walked_process;

typedef struct rm__tree_walker {
    int proc_fd;              /* the /proc directory (or a fixture tree) */
    int use_children_files;   /* 1: task/TID/children lists; 0: scan /proc */
    pid_t *found;             /* descendants of the last walk (owned) */
    pid_t *found_parent;      /* whose list had each (children mode; 0: none) */
    size_t found_len, found_cap;
    rm__pid_index found_index; /* pid -> found, so that a pid listed twice
                                  is kept once without a scan */
    /* The /proc scan's parent links, sorted by pid: this walk's and the
     * previous one's.  A pid listed in both keeps its parent without its
     * stat being read again, so a steady system costs one directory listing
     * per walk plus one stat read per new process.  (A pid reused between
     * two walks -- the pid space wrapping within one interval -- would keep
     * a stale parent; stat would have to be read for every pid every walk
     * to rule that out.) */
    struct rm__parent_link *links, *previous_links;
    size_t link_count, previous_count, link_cap;
    unsigned long stat_reads; /* stat files read by scans (for tests, benchmarks) */
    rm__walked_process *walked; /* children mode */
    size_t walked_count, walked_cap;
    rm__pid_index walked_index; /* pid -> walked, reset after a walk forgot some */
    char *children_text;      /* one children file, read whole (reused) */
    size_t children_text_cap;
    unsigned walk_number;
    unsigned links_walk;      /* the walk that last built the links (children mode: for a process of many threads) */
    int members_fd;           /* a cgroup's directory: its processes are the tree; -1: none */
    /* Descriptors the children walk keeps open between walks, and how many
     * it may: a quarter of the hard limit on open files, so that the walk
     * never takes the last ones (the probe keeps files per process too).
     * Past the budget a process's lists are read with files opened and
     * closed at once. */
    size_t kept_fds, kept_budget;
    /* The latest walk's processes whose children could not be listed for
     * want of a descriptor (the hard limit reached): their subtrees may be
     * missing, and this says so (the probe counts them as unreadable).  A
     * /proc listing whose stats could not all be read counts one. */
    unsigned unwalked;
    size_t links_unread;     /* the latest /proc listing's stats not read for want of a descriptor */
    /* This process, where it adopts the tree's orphans (a subreaper walked
     * as a root; 0: none), and when all its threads' lists were last read
     * (CLOCK_MONOTONIC ns): see rm__tree_walker_note_reaper. */
    pid_t reaper, reaper_root;
    uint64_t reaper_listed_ns;
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

/* From now on a walk finds the processes listed in dir's cgroup.procs (a
 * cgroup of either layout, or a fixture directory holding such a file), not
 * descendants; the roots are still left out.  0, or the negative errno of
 * opening the file (-ENOENT: not a cgroup, -EACCES). */
int rm__tree_walker_use_cgroup(rm__tree_walker *w, const char *dir);

/* Finds every descendant of root (not root itself) into w->found /
 * w->found_len.  Scratch memory is reused between walks, so a steady tree
 * allocates nothing.  Returns 0 or -ENOMEM; processes that vanish or cannot
 * be read mid-walk are skipped, not errors. */
int rm__tree_walk(rm__tree_walker *w, pid_t root);

/* The same from several roots at once: every descendant of any of them, the
 * roots themselves left out (unless one descends from another), each once. */
int rm__tree_walk_from(rm__tree_walker *w, const pid_t *roots, size_t root_count);

/* Before a walk (children mode): pid's CPU clock now (known: 0 when it
 * could not be read, ended).  A process whose clock stood still since the
 * walk that last read its children lists cannot have forked, so the next
 * walk takes those lists unread -- unless a process below it ran or ended
 * since: a child's clone(CLONE_PARENT) and the orphans handed to a
 * subreaper add to a list without its owner running, so a change marks
 * every process above it to be read afresh.  (A child reaped without its
 * parent running -- SIGCHLD ignored -- stays listed until then; the caller
 * finds it ended by its own reading.)  A process never noted is read
 * afresh. */
void rm__tree_walker_note_clock(rm__tree_walker *w, pid_t pid, int known, uint64_t cpu_ns);

/* Whether walks read children lists, so that notes help (children mode
 * without a cgroup). */
int rm__tree_walker_takes_notes(const rm__tree_walker *w);

/* self, walked as a root because it is the child subreaper of the tree
 * root (the resmon command), is listed by its main thread's children file
 * alone, and by every thread's once a second: the kernel hands an orphan to
 * the subreaper's first live thread (find_alive_thread: the main one unless
 * it exited).  That holds while the main thread's list has root in it --
 * proof that the main thread forked it and is alive (an exiting thread's
 * children go to a live one); else every thread's list is read, each walk.
 * Its other threads' children (none in the command) are found within the
 * second; one read a walk instead of a task listing and a read per thread.
 * (Older kernels, before find_alive_thread, handed an orphan to the
 * subreaper's thread among its ancestors -- the one that forked the root:
 * the main one too whenever the fast read is used.) */
void rm__tree_walker_note_reaper(rm__tree_walker *w, pid_t self, pid_t root);

/* A process the latest walk did not reach is alive with parent ppid, read
 * from its own stat.  Where that walk went by parent links (the /proc scan,
 * or a process of many threads) and kept another parent for pid, the link
 * is set right and 1 is returned: walk again to find pid's descendants.
 * Else 0. */
int rm__tree_walker_note_parent(rm__tree_walker *w, pid_t pid, pid_t ppid);

#endif
