/*
 * proc_tree.c -- finding the descendants of a process (see proc_tree.h).
 */
#include "proc_tree.h"
#include "fileio.h"
#include "cgroup_nesting.h"
#include "regular_file.h"
#include "procfs.h"
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

static void close_walked(rm__tree_walker *w, rm__walked_process *e);

static int grow_pids(pid_t **array, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 0;
    size_t new_cap = *cap ? *cap : 64;
    while (new_cap < need)
        new_cap *= 2;
    pid_t *grown = realloc(*array, new_cap * sizeof **array);
    if (!grown)
        return -ENOMEM;
    *array = grown;
    *cap = new_cap;
    return 0;
}

/* Whether pid is listed in found already, through found_index. */
static int found_has(const rm__tree_walker *w, pid_t pid)
{
    const rm__pid_index *ix = &w->found_index;
    for (size_t s = rm__pid_index_first(ix, pid); ix->slots[s]; s = rm__pid_index_next(ix, s))
        if (w->found[ix->slots[s] - 1] == pid)
            return 1;
    return 0;
}

static int append_found(rm__tree_walker *w, pid_t pid, pid_t parent)
{
    if (!rm__pid_index_fits(&w->found_index, w->found_len + 1)) { /* grown, and filled again from found */
        if (rm__pid_index_reset(&w->found_index, 2 * (w->found_len + 1)) < 0)
            return -ENOMEM;
        for (size_t i = 0; i < w->found_len; i++)
            rm__pid_index_add(&w->found_index, w->found[i], i);
    }
    if (found_has(w, pid)) /* the lists can repeat a pid mid-change */
        return 0;
    size_t cap = w->found_cap;
    if (grow_pids(&w->found, &w->found_cap, w->found_len + 1) < 0)
        return -ENOMEM;
    if (w->found_cap != cap) {
        size_t parent_cap = cap;
        if (grow_pids(&w->found_parent, &parent_cap, w->found_cap) < 0) {
            w->found_cap = cap; /* found keeps its larger room unused */
            return -ENOMEM;
        }
    }
    rm__pid_index_add(&w->found_index, pid, w->found_len);
    w->found_parent[w->found_len] = parent;
    w->found[w->found_len++] = pid;
    return 0;
}

/* Parses a decimal directory name; 0 when it is not a pid. */
static pid_t pid_from_name(const char *name)
{
    if (*name < '1' || *name > '9')
        return 0;
    long value = 0;
    for (const char *c = name; *c; c++) {
        if (*c < '0' || *c > '9' || value > INT32_MAX / 10)
            return 0;
        value = value * 10 + (*c - '0');
    }
    return value > INT32_MAX ? 0 : (pid_t)value;
}

void rm__tree_walker_init(rm__tree_walker *w, int proc_fd, rm__tree_method method)
{
    memset(w, 0, sizeof *w);
    w->proc_fd = proc_fd;
    w->members_fd = -1;
    struct rlimit files;
    w->kept_budget = getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_max != RLIM_INFINITY ?
                     (size_t)files.rlim_max / 4 : SIZE_MAX / 2;
    if (method == RM__TREE_AUTO) {
        /* The children lists exist for every thread or for none, so checking
         * our own main thread tells whether this kernel has them. */
        char path[64];
        snprintf(path, sizeof path, "%d/task/%d/children", (int)getpid(), (int)getpid());
        w->use_children_files = faccessat(proc_fd, path, R_OK, 0) == 0;
    } else {
        w->use_children_files = method == RM__TREE_CHILDREN_FILES;
    }
}

void rm__tree_walker_free(rm__tree_walker *w)
{
    free(w->found);
    free(w->found_parent);
    rm__pid_index_free(&w->found_index);
    free(w->links);
    free(w->previous_links);
    for (size_t i = 0; i < w->walked_count; i++)
        close_walked(w, &w->walked[i]);
    free(w->walked);
    rm__pid_index_free(&w->walked_index);
    free(w->children_text);
    if (w->members_fd >= 0)
        close(w->members_fd);
    memset(w, 0, sizeof *w);
    w->proc_fd = -1;
    w->members_fd = -1;
}

int rm__tree_walker_use_cgroup(rm__tree_walker *w, const char *dir)
{
    char path[4200];
    int n = snprintf(path, sizeof path, "%s/cgroup.procs", dir);
    if (n < 0 || (size_t)n >= sizeof path)
        return -ENAMETOOLONG;
    int fd = rm__open_regular_at(AT_FDCWD, path, NULL); /* there and readable: a cgroup, or a fixture of one */
    if (fd < 0)
        return fd;
    close(fd);
    fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    if (w->members_fd >= 0)
        close(w->members_fd);
    w->members_fd = fd;
    return 0;
}

struct children_visit {
    rm__tree_walker *walker;
    rm__walked_process *listing; /* the process whose lists are read, kept for reuse; NULL: not kept */
    pid_t pid;                   /* its pid */
    int error;
};

/* Keeps pid in listing's list of children, for the walks that reuse it. */
static void keep_listed(rm__walked_process *e, pid_t pid)
{
    if (e->listed_len == e->listed_cap) {
        size_t cap = e->listed_cap ? 2 * e->listed_cap : 8;
        pid_t *grown = realloc(e->listed, cap * sizeof *grown);
        if (!grown) {
            e->listed_valid = 0; /* not whole: never reused */
            return;
        }
        e->listed = grown;
        e->listed_cap = cap;
    }
    e->listed[e->listed_len++] = pid;
}

static int visit_child(pid_t pid, void *user)
{
    struct children_visit *v = user;
    if (v->listing)
        keep_listed(v->listing, pid);
    if (append_found(v->walker, pid, v->pid) < 0) {
        v->error = -ENOMEM;
        return 1;
    }
    return 0;
}

/* visit_child, noting whether the reaper's root is among the children. */
struct reaper_visit {
    struct children_visit children;
    pid_t root;
    int has_root;
};

static int visit_reaper_child(pid_t pid, void *user)
{
    struct reaper_visit *v = user;
    v->has_root |= pid == v->root;
    return visit_child(pid, &v->children);
}

/* Refills the pid index of walked (room for walked_cap): -ENOMEM leaves
 * the old one, still right for the entries it holds. */
static int walked_index_rebuild(rm__tree_walker *w)
{
    if (rm__pid_index_reset(&w->walked_index, w->walked_cap) < 0)
        return -ENOMEM;
    for (size_t i = 0; i < w->walked_count; i++)
        rm__pid_index_add(&w->walked_index, w->walked[i].pid, i);
    return 0;
}

/* The kept-open files of a process the children walk visits, found by pid
 * through a hash (a walk of 10 000 processes looks each one up: a scan
 * made that quadratic). */
static rm__walked_process *walked_find(rm__tree_walker *w, pid_t pid)
{
    const rm__pid_index *ix = &w->walked_index;
    if (ix->cap) {
        for (size_t s = rm__pid_index_first(ix, pid); ix->slots[s]; s = rm__pid_index_next(ix, s))
            if (w->walked[ix->slots[s] - 1].pid == pid)
                return &w->walked[ix->slots[s] - 1];
    } else {
        for (size_t i = 0; i < w->walked_count; i++) /* no index: memory ran out */
            if (w->walked[i].pid == pid)
                return &w->walked[i];
    }
    return NULL;
}

/* Lets e's kept files go: it stays walked, its lists read by pid from now
 * on and its latest one still reused while it sleeps. */
static void release_descriptors(rm__tree_walker *w, rm__walked_process *e)
{
    if (e->task_fd < 0)
        return;
    for (size_t i = 0; i < e->thread_count; i++)
        close(e->children_fd[i]);
    close(e->task_fd);
    w->kept_fds -= e->thread_count + 1;
    e->thread_count = 0;
    e->listed_threads = 0;
    e->task_fd = -1;
}

/* No descriptor was left (the hard limit on open files reached, by the
 * walker or by whatever else the process holds open): lets go the kept
 * files of half the walked processes that hold any, except current's, and
 * keeps no more from now on, so the processes still to list are read with
 * files opened and closed at once.  The entries stay, with their lists
 * (dropping whole entries closed nothing once most of them held no
 * descriptor).  Returns current. */
static rm__walked_process *make_room(rm__tree_walker *w, rm__walked_process *current)
{
    size_t holding = 0, kept = 0;
    for (size_t i = 0; i < w->walked_count; i++)
        holding += w->walked[i].task_fd >= 0 && &w->walked[i] != current;
    for (size_t i = 0; i < w->walked_count; i++) {
        rm__walked_process *e = &w->walked[i];
        if (e->task_fd < 0 || e == current)
            continue;
        if (kept < holding / 2)
            kept++;
        else
            release_descriptors(w, e);
    }
    w->kept_budget = w->kept_fds; /* no new kept files */
    return current;
}

/* pid's entry, made when it has none: its task directory opened and kept
 * within the budget of kept descriptors, else none kept (task_fd -1: its
 * lists are read with files opened and closed at once, and reused like any
 * entry's while it sleeps -- without an entry, each of 7500 of 10 000
 * sleepers past a hard limit of 20 000 was read afresh at every walk, 70 %
 * of a --pid run's CPU).  NULL when out of memory, or, when its directory
 * was to be kept, gone or unreadable; *starved then tells the caller to
 * read it uncached (no descriptor was left, or none was to be kept).  An
 * entry without descriptors may be made for a process already gone: its
 * reading fails, is never reused, and the walk that no longer lists it
 * forgets it. */
static rm__walked_process *walked_entry(rm__tree_walker *w, pid_t pid, int *starved)
{
    *starved = 0;
    rm__walked_process *known = walked_find(w, pid);
    if (known)
        return known;
    int keep = w->kept_fds + 1 + RM__CACHED_THREADS <= w->kept_budget;
    *starved = !keep; /* out of memory below: read uncached, as before entries without descriptors */
    if (w->walked_count == w->walked_cap) {
        size_t cap = w->walked_cap ? w->walked_cap * 2 : 16;
        rm__walked_process *grown = realloc(w->walked, cap * sizeof *grown);
        if (!grown)
            return NULL;
        w->walked = grown;
        w->walked_cap = cap;
    }
    if (!rm__pid_index_fits(&w->walked_index, w->walked_cap) && walked_index_rebuild(w) < 0)
        return NULL; /* no room to find it again: not walked this time */
    int task_fd = -1;
    if (keep) {
        char path[32];
        snprintf(path, sizeof path, "%d/task", (int)pid);
        task_fd = rm__openat(w->proc_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (task_fd < 0) {
            *starved = errno == EMFILE || errno == ENFILE;
            if (*starved)
                make_room(w, NULL);
            return NULL; /* gone, not ours to read, or no descriptor left */
        }
        w->kept_fds++;
    }
    rm__walked_process *e = &w->walked[w->walked_count++];
    memset(e, 0, sizeof *e);
    e->pid = pid;
    e->task_fd = task_fd;
    rm__pid_index_add(&w->walked_index, pid, w->walked_count - 1);
    return e;
}

static void close_walked(rm__tree_walker *w, rm__walked_process *e)
{
    w->kept_fds -= e->thread_count + (e->task_fd >= 0);
    for (size_t i = 0; i < e->thread_count; i++)
        close(e->children_fd[i]);
    if (e->task_fd >= 0)
        close(e->task_fd);
    free(e->listed);
}

void rm__tree_walker_note_clock(rm__tree_walker *w, pid_t pid, int known, uint64_t cpu_ns)
{
    rm__walked_process *e = walked_find(w, pid);
    if (!e)
        return; /* not walked yet: read afresh */
    unsigned next = w->walk_number + 1;
    e->clock_ns = cpu_ns;
    e->clock_walk = known ? next : 0;
    if (known && e->listed_valid && e->listed_clock_ns == cpu_ns)
        return;
    /* It ran or ended: its lists and those of every process above it are
     * read afresh (an entry already marked has its ancestors marked). */
    while (e && e->changed_walk != next) {
        e->changed_walk = next;
        e = e->parent ? walked_find(w, e->parent) : NULL;
    }
}

void rm__tree_walker_note_reaper(rm__tree_walker *w, pid_t self, pid_t root)
{
    w->reaper = self;
    w->reaper_root = root;
    w->reaper_listed_ns = 0;
}

#define REAPER_ALL_THREADS_NS 1000000000u

/* The reaper's main-thread children file, when its threads were all listed
 * within the second (the file is cached from that listing); else -1, and
 * the caller lists them all now. */
static int reaper_main_thread_fd(rm__tree_walker *w, const rm__walked_process *e)
{
    uint64_t now_ns = rm__now_ns();
    if (w->reaper_listed_ns != 0 && now_ns - w->reaper_listed_ns < REAPER_ALL_THREADS_NS)
        for (size_t i = 0; i < e->thread_count; i++)
            if (e->tids[i] == e->pid)
                return e->children_fd[i];
    w->reaper_listed_ns = now_ns;
    return -1;
}

int rm__tree_walker_takes_notes(const rm__tree_walker *w)
{
    return w->use_children_files && w->members_fd < 0;
}

/* Whether e's children are taken from its latest reading of its lists:
 * noted before this walk, and neither it (its clock moved) nor anything
 * below it changed (rm__tree_walker_note_clock). */
static int reuses_listed(const rm__tree_walker *w, const rm__walked_process *e)
{
    return e->listed_valid && e->clock_walk == w->walk_number && e->changed_walk != w->walk_number;
}

/* The children file of thread tid, kept open across walks for the first
 * RM__CACHED_THREADS threads of a process.  Returns an fd, or -1.  *owned
 * tells the caller to close it (an uncached thread). */
static int children_fd(rm__walked_process *e, pid_t tid, const pid_t *old_tids, const int *old_fds,
                       size_t old_count, int *owned)
{
    for (size_t i = 0; i < old_count; i++)
        if (old_tids[i] == tid) {
            *owned = 0;
            return old_fds[i];
        }
    char path[32];
    snprintf(path, sizeof path, "%d/children", (int)tid);
    int fd = rm__openat(e->task_fd, path, O_RDONLY | O_CLOEXEC);
    *owned = 1;
    return fd;
}

/* More than any one record of a children list or cgroup.procs ("2147483647 "). */
#define SHORT_READ_SLACK 64

/* The longest pid list there can be: every pid the kernel can give
 * (pid_max is at most 2^22), each at most 7 digits and a newline.  A
 * "cgroup.procs" that is longer is not one (a link to /dev/zero in a
 * --cgroup directory grew the buffer to 2 GB, past SIGTERM). */
#define PID_LIST_MAX_BYTES ((size_t)(1u << 22) * 8)

/* Reads a children file from its start to its end into w->children_text,
 * growing the buffer as needed: a thread with a thousand children lists
 * more than a page, and a single read stops at one.  Returns the length
 * (NUL-terminated), or a negative errno; -ENOMEM keeps what was read,
 * -E2BIG is a file longer than any pid list. */
static ssize_t read_children_file(rm__tree_walker *w, int fd)
{
    size_t used = 0;
    for (;;) {
        if (used >= PID_LIST_MAX_BYTES)
            return -E2BIG;
        if (w->children_text_cap - used < 2) {
            size_t cap = w->children_text_cap ? w->children_text_cap * 2 : 4096;
            char *grown = realloc(w->children_text, cap);
            if (!grown)
                break;
            w->children_text = grown;
            w->children_text_cap = cap;
        }
        size_t room = w->children_text_cap - 1 - used;
        ssize_t n = pread(fd, w->children_text + used, room, (off_t)used);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return used ? (ssize_t)used : -errno;
        if (n == 0)
            break;
        used += (size_t)n;
        /* A seq_file read stops short of the room asked only at its end or
         * where its buffer (a page at first) is full; a first read that
         * stops well inside both is the whole list, and the read that would
         * return 0 is saved (a regular file, a fixture, ends the same way). */
        if (used == (size_t)n && (size_t)n + SHORT_READ_SLACK < room && (size_t)n + SHORT_READ_SLACK < 4096)
            break;
    }
    if (!w->children_text)
        return -ENOMEM;
    w->children_text[used] = '\0';
    return (ssize_t)used;
}

static int build_links(rm__tree_walker *w);

/* How many threads make a process's children cheaper to find from a /proc
 * listing: a children file per thread costs about what three /proc entries
 * do (an open, a read and a close beyond the first RM__CACHED_THREADS), so
 * the bound follows the latest listing's size. */
static size_t many_threads(const rm__tree_walker *w)
{
    return w->link_count / 3 > RM__WALK_SCAN_THREADS ? w->link_count / 3 : RM__WALK_SCAN_THREADS;
}

/* The children of a process of many threads, from the parent links of a
 * /proc listing (made once per walk, the first time such a process is met;
 * see many_threads).  A link the listing kept from an earlier walk goes
 * stale only when a process is handed to a new parent (its parent ended);
 * the probe tells the walker such a parent when it finds one
 * (rm__tree_walker_note_parent) and walks again. */
static int add_children_by_links(rm__tree_walker *w, rm__walked_process *e, size_t threads)
{
    for (size_t i = 0; i < e->thread_count; i++)
        close(e->children_fd[i]);
    w->kept_fds -= e->thread_count;
    e->thread_count = 0;
    e->listed_threads = threads;
    e->listed_valid = 0; /* many threads: the links are read each walk anyway */
    if (w->links_walk != w->walk_number) {
        int rc = build_links(w);
        if (rc < 0)
            return rc == -ENOMEM ? rc : 0;
    }
    for (size_t i = 0; i < w->link_count; i++)
        if (w->links[i].ppid == e->pid && append_found(w, w->links[i].pid, e->pid) < 0)
            return -ENOMEM;
    return 0;
}

/* The process behind e's kept-open task directory ended (it lists nothing),
 * yet its pid was listed in this walk: the pid was reused, by a process
 * reaped and replaced within one interval.  Kept, the old descriptors read
 * nothing at every walk that listed the new process, and its descendants
 * were never found.  Its files are opened afresh by pid: 0, or -1 when
 * that fails too (gone; the old ones stay, and the walk that no longer
 * lists it forgets it). */
static int reopen_reused(rm__tree_walker *w, rm__walked_process *e)
{
    char path[32];
    snprintf(path, sizeof path, "%d/task", (int)e->pid);
    int task_fd = rm__openat(w->proc_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (task_fd < 0)
        return -1;
    for (size_t i = 0; i < e->thread_count; i++)
        close(e->children_fd[i]);
    close(e->task_fd);
    w->kept_fds -= e->thread_count;
    e->task_fd = task_fd;
    e->thread_count = 0;
    return 0;
}

/* The children of every thread of pid, read with files opened and closed at
 * once: a process past the budget of kept descriptors.  One that cannot be
 * read for want of a descriptor is counted in w->unwalked.  listing: its
 * entry (without descriptors), which keeps what is listed for reuse when
 * the reading is whole; NULL: none. */
/* openat for a read by pid: when no descriptor is left and entries hold
 * kept files, half of those go (make_room; listing, the entry being read,
 * holds none) and the open is tried once more -- else, past a spent budget,
 * every read by pid failed at every walk while the kept files stayed. */
static int open_for_read(rm__tree_walker *w, rm__walked_process *listing, int dir_fd, const char *path, int flags)
{
    int fd = rm__openat(dir_fd, path, flags);
    if (fd < 0 && (errno == EMFILE || errno == ENFILE) && w->kept_fds > 0) {
        make_room(w, listing);
        fd = rm__openat(dir_fd, path, flags);
    }
    return fd;
}

static int add_children_uncached(rm__tree_walker *w, pid_t pid, rm__walked_process *listing)
{
    char path[32];
    snprintf(path, sizeof path, "%d/task", (int)pid);
    int task_fd = open_for_read(w, listing, w->proc_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (task_fd < 0) {
        w->unwalked += errno == EMFILE || errno == ENFILE;
        if (listing)
            listing->listed_valid = 0;
        return 0; /* gone, or not ours to read */
    }
    struct children_visit visit = {w, listing, pid, 0};
    int whole = 1;
    char dirents[16384];
    int starved = 0;
    ssize_t len;
    while (!visit.error && (len = getdents64(task_fd, dirents, sizeof dirents)) > 0) {
        for (ssize_t off = 0; off < len && !visit.error;) {
            const struct dirent64 *d = (const struct dirent64 *)(dirents + off);
            off += d->d_reclen;
            pid_t tid = pid_from_name(d->d_name);
            if (!tid)
                continue;
            snprintf(path, sizeof path, "%d/children", (int)tid);
            int fd = open_for_read(w, listing, task_fd, path, O_RDONLY | O_CLOEXEC);
            if (fd < 0) {
                starved |= errno == EMFILE || errno == ENFILE; /* else the thread ended */
                whole = 0;
                continue;
            }
            ssize_t n = read_children_file(w, fd);
            close(fd);
            if (n > 0)
                rm__parse_pid_list(w->children_text, (size_t)n, visit_child, &visit);
            if (n < 0)
                whole = 0;
            if (n == -ENOMEM)
                visit.error = -ENOMEM;
        }
    }
    if (len < 0)
        whole = 0;
    close(task_fd);
    w->unwalked += starved;
    if (listing) /* keep_listed clears listed_valid when out of memory */
        listing->listed_valid = whole && listing->listed_valid && !visit.error;
    return visit.error;
}

/* Appends the children of every thread of pid (a child forked by a worker
 * thread is listed under that thread, not under the main one).  The task
 * directory and the children files stay open between walks: a walk of a
 * steady process is one lseek, one getdents and one pread per thread. */
static int add_children_of(rm__tree_walker *w, pid_t pid, pid_t parent)
{
    int no_room;
    rm__walked_process *e = walked_entry(w, pid, &no_room);
    if (!e)
        return no_room ? add_children_uncached(w, pid, NULL) : 0;
    e->seen_walk = w->walk_number;
    e->parent = parent;
    if (reuses_listed(w, e)) {
        for (size_t i = 0; i < e->listed_len; i++)
            if (append_found(w, e->listed[i], pid) < 0)
                return -ENOMEM;
        return 0;
    }
    /* Read afresh: reusable later when its clock was noted for this walk
     * and the reading is whole (a failed read or the links clear it). */
    e->listed_len = 0;
    e->listed_valid = e->clock_walk == w->walk_number;
    e->listed_clock_ns = e->clock_ns;
    if (e->task_fd < 0 && w->kept_fds + 1 + RM__CACHED_THREADS <= w->kept_budget) {
        /* Room again (processes that held files ended): it may keep its own. */
        char path[32];
        snprintf(path, sizeof path, "%d/task", (int)pid);
        e->task_fd = rm__openat(w->proc_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (e->task_fd >= 0)
            w->kept_fds++;
        else if (errno == EMFILE || errno == ENFILE)
            make_room(w, NULL); /* none left: half the kept files go, for the reads by pid */
        else
            return e->listed_valid = 0, 0; /* gone, or not ours to read: no second try by pid */
    }
    if (e->task_fd < 0) /* past the budget: nothing kept open */
        return add_children_uncached(w, pid, e);
    struct children_visit visit = {w, e, pid, 0};
    int reaper_fd = pid == w->reaper ? reaper_main_thread_fd(w, e) : -1;
    if (reaper_fd >= 0) {
        ssize_t n = read_children_file(w, reaper_fd);
        if (n == -ENOMEM)
            return e->listed_valid = 0, -ENOMEM;
        /* The main thread stands for all only while the root is its child:
         * one that forked it from another thread, or a main thread that
         * exited (its children, the root among them, handed to a live
         * thread, as the orphans are from then on), is read in full. */
        struct reaper_visit reaper = {visit, w->reaper_root, 0};
        if (n > 0)
            rm__parse_pid_list(w->children_text, (size_t)n, visit_reaper_child, &reaper);
        e->listed_valid = 0; /* never reused: its clock is not noted */
        if (reaper.has_root || reaper.children.error)
            return reaper.children.error;
        /* Those found stay found (a pid listed again is kept once); the
         * listing below starts its own list. */
        e->listed_len = 0;
        w->reaper_listed_ns = 0; /* every thread, now and at the next walk */
    }
    /* /proc counts a process's threads in the link count of its task
     * directory (2 + threads): one fstat tells how to find its children
     * where its latest listing found one thread, many, or none yet. */
    size_t before = e->listed_threads, many = many_threads(w);
    struct stat st;
    if ((before <= 1 || before > many) && fstat(e->task_fd, &st) == 0 && st.st_nlink > 2) {
        size_t threads = (size_t)st.st_nlink - 2;
        if (threads == 1 && before == 1 && e->thread_count == 1 && e->tids[0] == pid) {
            /* A process of one thread is its leader alone (the leader is
             * counted until the whole group ends; an exec from another
             * thread hands that thread the leader's id), whose children
             * file lists every child -- a thread that ended handed its
             * children to a live one.  So the fstat stands in for the
             * lseek and getdents. */
            ssize_t n = read_children_file(w, e->children_fd[0]);
            if (n > 0)
                rm__parse_pid_list(w->children_text, (size_t)n, visit_child, &visit);
            if (n == -ENOMEM)
                return e->listed_valid = 0, -ENOMEM;
            if (n >= 0) {
                if (visit.error)
                    e->listed_valid = 0;
                return visit.error;
            }
            e->listed_len = 0; /* read again below */
        } else if (threads > many) {
            return add_children_by_links(w, e, threads);
        } /* else a thread came or went, or it ended: list its threads */
    }
    e->listed_threads = 0;
    char dirents[16384];
    int whole = 1; /* every thread's list read */
    int starved = 0; /* a thread's list not read for want of a descriptor */
    if (lseek(e->task_fd, 0, SEEK_SET) < 0)
        return e->listed_valid = 0, 0;
    ssize_t len = getdents64(e->task_fd, dirents, sizeof dirents);
    if (len <= 0 && reopen_reused(w, e) == 0)
        len = getdents64(e->task_fd, dirents, sizeof dirents);
    if (len <= 0)
        return e->listed_valid = 0, 0; /* ended: it is forgotten after the walk */
    /* The threads listed now replace the cached ones; a cached thread that
     * is no longer listed has ended and its file is closed. */
    pid_t old_tids[RM__CACHED_THREADS];
    int old_fds[RM__CACHED_THREADS];
    size_t old_count = e->thread_count;
    memcpy(old_tids, e->tids, sizeof old_tids);
    memcpy(old_fds, e->children_fd, sizeof old_fds);
    int reused[RM__CACHED_THREADS] = {0};
    e->thread_count = 0;
    size_t listed = 0;
    for (;;) {
        for (ssize_t off = 0; off < len;) {
            const struct dirent64 *d = (const struct dirent64 *)(dirents + off);
            off += d->d_reclen;
            pid_t tid = pid_from_name(d->d_name);
            if (!tid)
                continue;
            listed++;
            int owned;
            int fd = children_fd(e, tid, old_tids, old_fds, old_count, &owned);
            if (fd < 0 && (errno == EMFILE || errno == ENFILE) && w->kept_budget > w->kept_fds) {
                visit.listing = e = make_room(w, e); /* once: the budget is spent after it */
                fd = children_fd(e, tid, old_tids, old_fds, old_count, &owned);
            }
            if (fd < 0) {
                starved |= errno == EMFILE || errno == ENFILE;
                whole = 0;
                continue; /* thread ended mid-walk, or no descriptor left */
            }
            for (size_t i = 0; !owned && i < old_count; i++)
                if (old_fds[i] == fd)
                    reused[i] = 1;
            ssize_t n = read_children_file(w, fd);
            if (n > 0) /* a garbled list yields the pids before the garbage */
                rm__parse_pid_list(w->children_text, (size_t)n, visit_child, &visit);
            if (n < 0)
                whole = 0;
            /* A new file is kept only within the budget (after make_room, none
             * is): the rest are read and closed, leaving descriptors for
             * the processes still to list. */
            int within_budget = !owned || w->kept_fds - old_count + e->thread_count + 1 <= w->kept_budget;
            if (e->thread_count < RM__CACHED_THREADS && within_budget) {
                e->tids[e->thread_count] = tid;
                e->children_fd[e->thread_count++] = fd;
            } else if (owned) {
                close(fd);
            } else { /* cached before, no room now: let it go (closed below, once) */
                for (size_t i = 0; i < old_count; i++)
                    if (old_fds[i] == fd)
                        reused[i] = 0;
            }
            if (visit.error)
                break;
        }
        /* One getdents fills the buffer with every thread unless there are
         * hundreds; only a full buffer needs another call. */
        if (visit.error || (size_t)len < sizeof dirents - 512)
            break;
        len = getdents64(e->task_fd, dirents, sizeof dirents);
        if (len <= 0) {
            whole = whole && len == 0;
            break;
        }
    }
    for (size_t i = 0; i < old_count; i++)
        if (!reused[i])
            close(old_fds[i]);
    w->kept_fds += e->thread_count;
    w->kept_fds -= old_count;
    if (w->kept_fds > w->kept_budget) {
        /* Kept before the budget was spent (make_room, above): let them go,
         * for the processes still to list. */
        for (size_t i = 0; i < e->thread_count; i++)
            close(e->children_fd[i]);
        w->kept_fds -= e->thread_count;
        e->thread_count = 0;
    }
    w->unwalked += starved;
    e->listed_threads = visit.error ? 0 : listed;
    /* keep_listed clears listed_valid when out of memory */
    e->listed_valid = whole && e->listed_valid && !visit.error;
    return visit.error;
}

static int walk_children_files(rm__tree_walker *w, const pid_t *roots, size_t root_count)
{
    w->walk_number++;
    w->unwalked = 0;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < root_count; i++)
        rc = add_children_of(w, roots[i], 0);
    for (size_t i = 0; rc == 0 && i < w->found_len; i++)
        rc = add_children_of(w, w->found[i], w->found_parent[i]);
    /* Forget the processes this walk did not reach: ended or reparented. */
    size_t before = w->walked_count;
    for (size_t i = w->walked_count; i-- > 0;)
        if (w->walked[i].seen_walk != w->walk_number) {
            close_walked(w, &w->walked[i]);
            w->walked[i] = w->walked[--w->walked_count];
        }
    if (w->walked_count != before && walked_index_rebuild(w) < 0) {
        /* Not reached (the index keeps its size), but a stale index must
         * not stay: without one, walked_entry scans. */
        rm__pid_index_free(&w->walked_index);
    }
    return rc;
}

static int compare_links(const void *a, const void *b)
{
    pid_t x = ((const rm__parent_link *)a)->pid, y = ((const rm__parent_link *)b)->pid;
    return (x > y) - (x < y);
}

/* The first of count links (sorted by pid) whose pid is not below pid:
 * count when there is none. */
static size_t link_index(const rm__parent_link *links, size_t count, pid_t pid)
{
    size_t low = 0, high = count;
    while (low < high) {
        size_t mid = low + (high - low) / 2;
        if (links[mid].pid < pid)
            low = mid + 1;
        else
            high = mid;
    }
    return low;
}

/* A parent not known this walk: the stat could not be read for want of a
 * descriptor or of memory.  Links to nothing, and is read again next walk. */
#define PARENT_NOT_READ_YET ((pid_t)-2)

/* The parent of pid: from the previous walk when it was listed there (the
 * previous links are sorted by pid), else from its stat file.  A process
 * whose stat cannot be read (hidepid, another user's, garbled) gets parent
 * -1, which links it to nothing, and is not read again while it lives; one
 * that could not be read for want of a descriptor (the hard limit on open
 * files reached) is counted in w->unwalked and read again next time. */
static void parent_of(rm__tree_walker *w, pid_t pid, pid_t *ppid)
{
    size_t low = link_index(w->previous_links, w->previous_count, pid);
    if (low < w->previous_count && w->previous_links[low].pid == pid &&
        w->previous_links[low].ppid != PARENT_NOT_READ_YET) {
        *ppid = w->previous_links[low].ppid;
        return;
    }
    char path[32], stat_text[1024];
    snprintf(path, sizeof path, "%d/stat", (int)pid);
    ssize_t n = rm__read_kernel_file_at(w->proc_fd, path, stat_text, sizeof stat_text);
    w->stat_reads++;
    rm__proc_stat st;
    if (n == -EMFILE || n == -ENFILE || n == -ENOMEM) {
        *ppid = PARENT_NOT_READ_YET;
        w->links_unread++;
        return;
    }
    *ppid = n > 0 && rm__parse_stat(stat_text, (size_t)n, &st) == 0 ? st.ppid : -1;
}

static int is_root(const pid_t *roots, size_t root_count, pid_t pid)
{
    for (size_t i = 0; i < root_count; i++)
        if (roots[i] == pid)
            return 1;
    return 0;
}

/* Lists /proc and links every process to its parent (w->links, sorted by
 * pid), reading the stat only of pids the previous listing did not have.
 * 0, or a negative errno (the links are then empty). */
static int build_links(rm__tree_walker *w)
{
    int dup_fd = rm__openat(w->proc_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dup_fd < 0)
        return -errno;
    DIR *proc = fdopendir(dup_fd);
    if (!proc) {
        close(dup_fd);
        return -ENOMEM;
    }
    /* This walk's links go into the spare array; the previous walk's stay
     * readable until the swap at the end. */
    rm__parent_link *previous = w->links;
    w->links = w->previous_links;
    w->previous_links = previous;
    /* Only the links of the walk just before are kept: older ones (children
     * mode builds links only in walks that meet a process of many threads)
     * may name the parent of a pid that has since ended and been reused, and
     * a child never tracked is never corrected (rm__tree_walker_note_parent). */
    w->previous_count = w->links_walk + 1 == w->walk_number ? w->link_count : 0;
    w->link_count = 0;
    w->links_unread = 0;
    int rc = 0;
    int sorted = 1; /* /proc lists pids in ascending order; a fixture may not */
    struct dirent *entry;
    while ((entry = readdir(proc)) != NULL) {
        pid_t pid = pid_from_name(entry->d_name);
        if (!pid)
            continue;
        pid_t ppid;
        parent_of(w, pid, &ppid);
        if (w->link_count && w->links[w->link_count - 1].pid > pid)
            sorted = 0;
        if (w->link_count == w->link_cap) {
            size_t new_cap = w->link_cap ? w->link_cap * 2 : 256;
            rm__parent_link *grown = realloc(w->links, new_cap * sizeof *grown);
            rm__parent_link *grown_previous = grown ? realloc(w->previous_links, new_cap * sizeof *grown) : NULL;
            if (grown)
                w->links = grown;
            if (!grown_previous) {
                rc = -ENOMEM;
                break;
            }
            w->previous_links = grown_previous;
            w->link_cap = new_cap;
        }
        w->links[w->link_count++] = (rm__parent_link){pid, ppid};
    }
    closedir(proc);
    /* Stats not read for want of a descriptor: which of them are in the
     * tree cannot be told (most are the machine's other processes), so the
     * walk counts one: its tree may be missing some. */
    w->unwalked += w->links_unread > 0;
    if (rc < 0) {
        w->link_count = 0; /* next walk reads every stat afresh */
        return rc;
    }
    if (!sorted)
        qsort(w->links, w->link_count, sizeof *w->links, compare_links);
    w->links_walk = w->walk_number;
    return 0;
}

static int walk_scan(rm__tree_walker *w, const pid_t *roots, size_t root_count)
{
    w->walk_number++;
    w->unwalked = 0;
    int rc = build_links(w);
    if (rc < 0)
        return rc;
    /* Breadth first from the roots over the parent links: each round adds
     * the children of the processes the previous round found. */
    size_t frontier_start = 0, next_root = 0;
    for (;;) {
        pid_t parent;
        if (next_root < root_count)
            parent = roots[next_root++];
        else if (frontier_start < w->found_len)
            parent = w->found[frontier_start++];
        else
            break;
        for (size_t i = 0; i < w->link_count; i++)
            if (w->links[i].ppid == parent && !is_root(roots, root_count, w->links[i].pid) &&
                append_found(w, w->links[i].pid, parent) < 0)
                return -ENOMEM;
    }
    return 0;
}

struct members_visit {
    rm__tree_walker *walker;
    const pid_t *roots;
    size_t root_count;
};

static int visit_member(pid_t pid, void *user)
{
    struct members_visit *v = user;
    if (is_root(v->roots, v->root_count, pid))
        return 0;
    return append_found(v->walker, pid, 0) < 0 ? -ENOMEM : 0;
}


/* The processes of the cgroup at dir_fd and of every cgroup below it: each
 * cgroup.procs read whole (v1 may list a pid twice while it moves; each is
 * kept once).  Opened afresh each walk: v1 keeps the list it built for an
 * open file while that file is read again within a second
 * (cgroup_pidlist), so a file kept open and re-read every sample would show
 * its first list for ever.  cgroup.procs lists only a cgroup's own members,
 * so the descendants are walked too: under v2 a service's or a container's
 * processes often sit in child cgroups only, and the cgroup's memory figure
 * counts them. */
static int walk_cgroup_dir(rm__tree_walker *w, int dir_fd, const pid_t *roots, size_t root_count, int depth)
{
    int fd = rm__openat(dir_fd, "cgroup.procs", RM__READ_FLAGS); /* non-blocking: no fstat a walk */
    if (fd < 0)
        return -errno; /* -ENOENT once the cgroup is removed */
    ssize_t n = read_children_file(w, fd);
    close(fd);
    if (n < 0)
        return (int)n;
    struct members_visit visit = {w, roots, root_count};
    if (rm__parse_pid_list(w->children_text, (size_t)n, visit_member, &visit) == -ENOMEM)
        return -ENOMEM; /* a garbled list yields the pids before the garbage */
    /* Deeper cgroups are not followed (cgroup_nesting.h: the stack, the
     * descriptors, the work per sample): counted as one unwalked, as a
     * cgroup whose members could not be listed. */
    if (depth >= RM_CGROUP_NESTING_MAX) {
        w->unwalked += rm_cgroup_has_child(dir_fd);
        return 0;
    }
    int list_fd = rm__openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *dir = list_fd >= 0 ? fdopendir(list_fd) : NULL;
    if (!dir) {
        w->unwalked += list_fd < 0 && (errno == EMFILE || errno == ENFILE);
        if (list_fd >= 0)
            close(list_fd);
        return 0; /* this cgroup's own members are found; its children cannot be listed */
    }
    int rc = 0;
    for (struct dirent *e; rc != -ENOMEM && (e = readdir(dir));) {
        if (!rm_cgroup_child_entry(e))
            continue;
        int child_fd = rm__openat(dirfd(dir), e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (child_fd < 0) {
            w->unwalked += errno == EMFILE || errno == ENFILE;
            continue; /* not a directory, removed meanwhile, or no descriptor left */
        }
        int child_rc = walk_cgroup_dir(w, child_fd, roots, root_count, depth + 1);
        close(child_fd);
        if (child_rc == -EMFILE || child_rc == -ENFILE)
            w->unwalked++; /* its members could not be listed */
        if (child_rc == -ENOMEM)
            rc = child_rc; /* a child cgroup removed meanwhile (-ENOENT) is no error */
    }
    closedir(dir);
    return rc;
}

static int walk_cgroup(rm__tree_walker *w, const pid_t *roots, size_t root_count)
{
    w->unwalked = 0;
    return walk_cgroup_dir(w, w->members_fd, roots, root_count, 0);
}

int rm__tree_walker_note_parent(rm__tree_walker *w, pid_t pid, pid_t ppid)
{
    if (w->links_walk != w->walk_number || w->members_fd >= 0)
        return 0; /* the latest walk did not go by the links */
    size_t low = link_index(w->links, w->link_count, pid);
    if (low == w->link_count || w->links[low].pid != pid || w->links[low].ppid == ppid)
        return 0;
    w->links[low].ppid = ppid;
    return 1;
}

int rm__tree_walk_from(rm__tree_walker *w, const pid_t *roots, size_t root_count)
{
    w->found_len = 0;
    if (w->found_index.cap)
        rm__pid_index_reset(&w->found_index, 0); /* clears, keeping its room: cannot fail */
    if (w->members_fd >= 0)
        return walk_cgroup(w, roots, root_count);
    return w->use_children_files ? walk_children_files(w, roots, root_count) : walk_scan(w, roots, root_count);
}

int rm__tree_walk(rm__tree_walker *w, pid_t root)
{
    return rm__tree_walk_from(w, &root, 1);
}
