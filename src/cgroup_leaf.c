/*
 * cgroup_leaf.c -- resmon_cgroup: a leaf memory cgroup of resmon's own,
 * made for a command before it starts and removed after it ends (see
 * resmon.h, "Cgroups").
 *
 * The leaf is made below the caller's own memory cgroup (v1: the memory
 * hierarchy; v2: the unified one when it offers the memory controller), so
 * a delegated subtree is enough and nothing outside the caller's part of the
 * tree is touched.  Its name carries the caller's pid, pid namespace, start
 * time and a counter; a name that exists already is never reused, so the
 * directory removed at the end is always one this object made.  A resmon
 * killed by SIGKILL cannot remove its leaf, and one with a memory limit
 * leaves it, limit and all, to the processes still in it: the next one made
 * below the same parent removes every empty leaf whose creator is gone (see
 * rm__cgroup_sweep_stale).
 */
#include "cgroup.h"
#include "cgroup_nesting.h"
#include "fileio.h"
#include "procfs.h"
#include "resmon.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct resmon_cgroup {
    int version;
    rm__cgroup_leaf_owner owner; /* this process: pid, pid namespace, start time */
    int procs_fd; /* the leaf's cgroup.procs, for resmon_cgroup_join */
    int tasks_fd; /* v1: the leaf's tasks, for a single-threaded caller joining itself; else -1 */
    int limited; /* made with a memory limit: processes are never moved out of it */
    char parent[RM__CGROUP_PATH_MAX];
    char dir[RM__CGROUP_PATH_MAX];
    char path[RM__CGROUP_PATH_MAX]; /* the leaf as /proc/PID/cgroup names it (resmon_cgroup_holds); "": unknown */
    /* v1: a leaf of the same name in the cpuacct hierarchy (below the
     * caller's cpuacct cgroup), joined with the memory leaf, so that the
     * tree's CPU is one read (cpuacct.usage) whatever its size; cpu_dir
     * empty when there is none (no cpuacct hierarchy, refused).  v2's leaf
     * has its CPU total itself (cpu.stat). */
    int cpu_tasks_fd;
    char cpu_parent[RM__CGROUP_PATH_MAX];
    char cpu_dir[RM__CGROUP_PATH_MAX];
};

/* How many names to try when earlier ones exist (a leaf a killed resmon of
 * the same pid left with processes still in it). */
#define NAME_ATTEMPTS 100
/* How long removal waits for the kernel to let go of exiting processes. */
#define REMOVE_WAIT_NS 2000000000LL

static int say(char *err, size_t errcap, int rc, const char *fmt, ...)
{
    if (err && errcap) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errcap, fmt, ap);
        va_end(ap);
    }
    return rc;
}

static int write_text_at(const char *dir, const char *name, const char *text)
{
    char path[RM__CGROUP_PATH_MAX + 64];
    int n = snprintf(path, sizeof path, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= sizeof path)
        return -ENAMETOOLONG;
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    size_t len = strlen(text);
    ssize_t w = write(fd, text, len);
    int rc = w == (ssize_t)len ? 0 : (w < 0 ? -errno : -EIO);
    close(fd);
    return rc;
}

static int file_exists_at(const char *dir, const char *name)
{
    char path[RM__CGROUP_PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

/* v2: a child of parent gets memory files only when the parent hands the
 * controller down (cgroup.subtree_control).  Enabling it is refused in a
 * non-root cgroup that holds processes itself (the caller's own, usually):
 * that is the "no delegation" case. */
static int v2_enable_memory(const char *parent, char *err, size_t errcap)
{
    char control[1024];
    char path[RM__CGROUP_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/cgroup.subtree_control", parent);
    ssize_t n = rm__read_file_at(AT_FDCWD, path, control, sizeof control);
    if (n >= 0 && strstr(control, "memory"))
        return 0;
    int rc = write_text_at(parent, "cgroup.subtree_control", "+memory");
    if (rc < 0)
        return say(err, errcap, rc,
                   "cgroup v2: the memory controller is not delegated below %s (enabling it: %s)", parent,
                   strerror(-rc));
    return 0;
}

static int set_limit(resmon_cgroup *cg, uint64_t limit_bytes, char *err, size_t errcap)
{
    char value[32];
    snprintf(value, sizeof value, "%" PRIu64, limit_bytes);
    const char *file = rm__cgroup_limit_file(cg->version);
    int rc = write_text_at(cg->dir, file, value);
    if (rc < 0)
        return say(err, errcap, rc, "cannot set %s/%s: %s", cg->dir, file, strerror(-rc));
    /* The limit is of memory, not of memory that may spill to swap. */
    if (cg->version == 1 && file_exists_at(cg->dir, "memory.memsw.limit_in_bytes"))
        rc = write_text_at(cg->dir, "memory.memsw.limit_in_bytes", value);
    else if (cg->version == 2 && file_exists_at(cg->dir, "memory.swap.max"))
        rc = write_text_at(cg->dir, "memory.swap.max", "0");
    if (rc < 0)
        return say(err, errcap, rc, "cannot keep the limit's memory out of swap in %s: %s", cg->dir,
                   strerror(-rc));
    return 0;
}

/* ---- names, and the leaves a killed resmon left ---------------------------- */

int rm__cgroup_leaf_name(char *out, size_t cap, const rm__cgroup_leaf_owner *owner)
{
    int n = snprintf(out, cap, "resmon-%ld-%" PRIu64 "-%" PRIu64 "-%u", owner->pid, owner->pidns, owner->starttime,
                     owner->counter);
    return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

/* A decimal number without sign or leading zero, up to the next '-' or the
 * end; advances *text past it. */
static int parse_number(const char **text, uint64_t max, uint64_t *value)
{
    const char *p = *text;
    if (*p < '0' || *p > '9' || (p[0] == '0' && p[1] >= '0' && p[1] <= '9'))
        return -EINVAL;
    uint64_t v = 0;
    for (; *p >= '0' && *p <= '9'; p++) {
        uint64_t digit = (uint64_t)(*p - '0');
        if (v > (max - digit) / 10)
            return -EINVAL;
        v = v * 10 + digit;
    }
    *text = p;
    *value = v;
    return 0;
}

int rm__cgroup_leaf_name_parse(const char *name, rm__cgroup_leaf_owner *out)
{
    static const char prefix[] = "resmon-";
    if (strncmp(name, prefix, sizeof prefix - 1) != 0)
        return -EINVAL;
    const char *p = name + sizeof prefix - 1;
    uint64_t pid, pidns, starttime, counter;
    if (parse_number(&p, INT32_MAX, &pid) < 0 || pid == 0 || *p++ != '-' || parse_number(&p, UINT64_MAX, &pidns) < 0 ||
        *p++ != '-' || parse_number(&p, UINT64_MAX, &starttime) < 0 || *p++ != '-' ||
        parse_number(&p, UINT32_MAX, &counter) < 0 || *p != '\0')
        return -EINVAL;
    *out = (rm__cgroup_leaf_owner){(long)pid, pidns, starttime, (unsigned)counter};
    return 0;
}

/* This process (the one whose /proc directory is proc_dir): pid, pid
 * namespace and start time.  A field that cannot be read stays 0 (a pid
 * namespace 0 turns the sweep off). */
static void own_identity(const char *proc_dir, rm__cgroup_leaf_owner *owner)
{
    memset(owner, 0, sizeof *owner);
    owner->pid = (long)getpid();
    char path[RM__CGROUP_PATH_MAX + 16], text[1024];
    struct stat st;
    snprintf(path, sizeof path, "%s/ns/pid", proc_dir);
    if (stat(path, &st) == 0)
        owner->pidns = (uint64_t)st.st_ino;
    snprintf(path, sizeof path, "%s/stat", proc_dir);
    ssize_t n = rm__read_file_at(AT_FDCWD, path, text, sizeof text);
    rm__proc_stat ps;
    if (n > 0 && rm__parse_stat(text, (size_t)n, &ps) == 0)
        owner->starttime = ps.starttime;
}

/* Whether the creator named by owner is gone: no process of that pid, or
 * one started at another time (the pid was reused).  A process that cannot
 * be read (EACCES) counts as alive, and so does one whose start time its
 * name does not know (0): nothing is removed on a doubt.  (hidepid, which
 * makes another user's processes read as absent, is ruled out by the
 * caller.) */
static int creator_gone(const char *proc_root, const rm__cgroup_leaf_owner *owner)
{
    char path[RM__CGROUP_PATH_MAX + 32], text[1024];
    if (owner->starttime == 0)
        return 0;
    snprintf(path, sizeof path, "%s/%ld/stat", proc_root, owner->pid);
    ssize_t n = rm__read_file_at(AT_FDCWD, path, text, sizeof text);
    if (n == -ENOENT || n == -ESRCH)
        return 1;
    rm__proc_stat ps;
    if (n <= 0 || rm__parse_stat(text, (size_t)n, &ps) < 0)
        return 0;
    return ps.starttime != owner->starttime;
}

/* Whether the cgroup open at dir lists a process in its cgroup.procs (a
 * file that cannot be read lists none: rmdir still refuses a cgroup in
 * use). */
static int holds_processes_at(int dir)
{
    char text[64];
    ssize_t n = rm__read_file_at(dir, "cgroup.procs", text, sizeof text);
    for (ssize_t i = 0; i < n; i++)
        if (text[i] >= '0' && text[i] <= '9')
            return 1;
    return 0;
}

/* The walks below a leaf go by descriptor, each cgroup opened relative to
 * its parent without following a link: a path built by name stops at
 * PATH_MAX, and 17 levels of 250-byte names passed it well within the
 * levels followed -- the cgroups past it were skipped, the leaf kept for
 * good and said busy (attack 74). */
static int open_below(int dir, const char *name)
{
    return openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* A listing of the cgroup open at dir (its own descriptor), or NULL. */
static DIR *list_cgroup(int dir)
{
    int listing = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = listing >= 0 ? fdopendir(listing) : NULL;
    if (!d && listing >= 0)
        close(listing);
    return d;
}

/* Whether the cgroup open at dir or one below it (depth levels down) lists
 * a process: on v2 a leaf that hands controllers down holds none of its own
 * (the no-internal-process rule), its processes are in its children.
 * *unreached is set where cgroups below could not be followed (deeper, or
 * not opened): nothing can be said of them. */
static int subtree_holds_processes_at(int dir, int depth, int *unreached)
{
    if (holds_processes_at(dir))
        return 1;
    if (depth == 0) {
        *unreached |= rm_cgroup_has_child(dir);
        return 0;
    }
    DIR *d = list_cgroup(dir);
    if (!d) {
        *unreached = 1;
        return 0;
    }
    int found = 0;
    for (struct dirent *e; !found && (e = readdir(d)) != NULL;) {
        if (!rm_cgroup_child_entry(e))
            continue;
        int sub = open_below(dir, e->d_name);
        if (sub < 0) {
            *unreached |= errno != ENOENT && errno != ENOTDIR; /* not removed meanwhile, nor a file */
            continue;
        }
        found = subtree_holds_processes_at(sub, depth - 1, unreached);
        close(sub);
    }
    closedir(d);
    return found;
}

/* subtree_holds_processes_at for the cgroup at path, RM_CGROUP_NESTING_MAX
 * levels down. */
static int subtree_holds_processes(const char *path, int *unreached)
{
    int dir = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dir < 0) {
        *unreached = 1;
        return 0;
    }
    int found = subtree_holds_processes_at(dir, RM_CGROUP_NESTING_MAX, unreached);
    close(dir);
    return found;
}

/* holds_processes_at for the cgroup at path (the leaf's own). */
static int holds_processes(const char *path)
{
    int dir = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int held = dir >= 0 && holds_processes_at(dir);
    if (dir >= 0)
        close(dir);
    return held;
}

static int remove_below(const resmon_cgroup *cg, const char *path, const char *to_parent, int limited_above,
                        int *held_left, int *unfollowed);

int rm__cgroup_sweep_stale(const char *parent, const char *proc_root, uint64_t own_pidns)
{
    if (own_pidns == 0)
        return 0;
    DIR *d = opendir(parent);
    if (!d)
        return 0;
    int removed = 0, init_seen = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        rm__cgroup_leaf_owner owner;
        if (rm__cgroup_leaf_name_parse(e->d_name, &owner) < 0 || owner.pidns != own_pidns ||
            !creator_gone(proc_root, &owner))
            continue;
        /* With hidepid=2 (or invisible) another user's processes are absent
         * from /proc, so a live creator would read as gone: pid 1 always
         * exists in this namespace, and when it cannot be seen, nothing is
         * swept.  Asked at the first leaf that seems stale: a parent
         * without one (every run but the one after a killed resmon) costs
         * only its listing. */
        if (!init_seen) {
            char init_stat[RM__CGROUP_PATH_MAX + 32], text[1024];
            snprintf(init_stat, sizeof init_stat, "%s/1/stat", proc_root);
            if (rm__read_file_at(AT_FDCWD, init_stat, text, sizeof text) <= 0)
                break;
            init_seen = 1;
        }
        char dir[RM__CGROUP_PATH_MAX];
        int n = snprintf(dir, sizeof dir, "%s/%s", parent, e->d_name);
        struct stat st;
        /* A leaf whose command still runs in cgroups below it is no stale one
         * (review 58: the sweep removed a running workload's empty job
         * cgroups between their making and their use). */
        int unreached = 0; /* nested past what is followed: what runs there cannot be told, so it stays */
        if (n < 0 || (size_t)n >= sizeof dir || lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode) ||
            subtree_holds_processes(dir, &unreached) || unreached)
            continue;
        int held = 0, unfollowed = 0;
        remove_below(NULL, dir, NULL, 0, &held, &unfollowed); /* the empty cgroups its command made in it */
        removed += rmdir(dir) == 0;
    }
    closedir(d);
    return removed;
}

/* Makes the leaf directory, under a name no one has taken. */
static int make_leaf(resmon_cgroup *cg, char *err, size_t errcap)
{
    static unsigned counter; /* names within one process; a clash only costs a retry */
    for (int attempt = 0; attempt < NAME_ATTEMPTS; attempt++) {
        char name[128];
        cg->owner.counter = __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED);
        rm__cgroup_leaf_name(name, sizeof name, &cg->owner);
        int n = snprintf(cg->dir, sizeof cg->dir, "%s/%s", cg->parent, name);
        if (n < 0 || (size_t)n >= sizeof cg->dir)
            return say(err, errcap, -ENAMETOOLONG, "cgroup path too long below %s", cg->parent);
        if (mkdir(cg->dir, 0755) == 0)
            return 0;
        if (errno != EEXIST) {
            int rc = -errno;
            return say(err, errcap, rc, "cannot create a cgroup below %s: %s", cg->parent, strerror(-rc));
        }
    }
    return say(err, errcap, -EEXIST, "cannot create a cgroup below %s: every name is taken", cg->parent);
}

/* v1: the cpuacct leaf of the memory leaf's name, below the caller's
 * cpuacct cgroup.  Best effort: without it the tree's CPU is read per
 * process, as before (cpu_dir stays empty). */
static void make_cpu_leaf(resmon_cgroup *cg, const char *proc_dir, const char *fs_prefix, const char *proc_root)
{
    rm__cgroup_place place;
    const char *name = strrchr(cg->dir, '/') + 1; /* made as parent/name */
    if (rm__cgroup_locate_v1(proc_dir, fs_prefix, "cpuacct", &place) < 0)
        return;
    memcpy(cg->cpu_parent, place.dir, sizeof cg->cpu_parent);
    if (strcmp(cg->cpu_parent, cg->parent) == 0)
        return; /* memory and cpuacct mounted together: the leaf is both */
    rm__cgroup_sweep_stale(cg->cpu_parent, proc_root, cg->owner.starttime ? cg->owner.pidns : 0);
    char dir[RM__CGROUP_PATH_MAX], path[RM__CGROUP_PATH_MAX + 16];
    int n = snprintf(dir, sizeof dir, "%s/%s", cg->cpu_parent, name);
    if (n < 0 || (size_t)n >= sizeof dir || mkdir(dir, 0755) != 0)
        return;
    snprintf(path, sizeof path, "%s/tasks", dir);
    cg->cpu_tasks_fd = open(path, O_WRONLY | O_CLOEXEC);
    if (cg->cpu_tasks_fd < 0) {
        rmdir(dir);
        return;
    }
    memcpy(cg->cpu_dir, dir, sizeof cg->cpu_dir);
}

/* The /proc directory that holds proc_dir ("/proc" for "/proc/self"). */
static void proc_root_of(const char *proc_dir, char *out, size_t cap)
{
    snprintf(out, cap, "%s", proc_dir);
    char *slash = strrchr(out, '/');
    if (slash && slash != out)
        *slash = '\0';
    else if (slash)
        slash[1] = '\0';
}

int rm__cgroup_leaf_create_at(resmon_cgroup **out, const char *proc_dir, const char *fs_prefix,
                              uint64_t memory_limit_bytes, char *err, size_t errcap)
{
    if (err && errcap)
        err[0] = '\0';
    if (!out)
        return say(err, errcap, -EINVAL, "invalid argument");
    resmon_cgroup *cg = calloc(1, sizeof *cg);
    if (!cg)
        return say(err, errcap, -ENOMEM, "out of memory");
    cg->procs_fd = cg->tasks_fd = cg->cpu_tasks_fd = -1;
    rm__cgroup_place place;
    int rc = rm__cgroup_locate(proc_dir, fs_prefix, &place);
    if (rc < 0) {
        free(cg);
        if (rc == -ENOTSUP)
            return say(err, errcap, rc, "cgroup v2 without the memory controller, and no v1 memory hierarchy");
        return say(err, errcap, rc, "no memory cgroup found for this process (%s)", strerror(-rc));
    }
    cg->version = place.version;
    memcpy(cg->parent, place.dir, sizeof cg->parent);
    if (cg->version == 2 && (rc = v2_enable_memory(cg->parent, err, errcap)) < 0) {
        free(cg);
        return rc;
    }
    own_identity(proc_dir, &cg->owner);
    char proc_root[RM__CGROUP_PATH_MAX];
    proc_root_of(proc_dir, proc_root, sizeof proc_root);
    /* what a killed resmon left; not when this process's own identity is
     * unknown (its leaves would carry no start time to be judged by) */
    rm__cgroup_sweep_stale(cg->parent, proc_root, cg->owner.starttime ? cg->owner.pidns : 0);
    if ((rc = make_leaf(cg, err, errcap)) < 0) {
        free(cg);
        return rc;
    }
    if (cg->version == 2 && !file_exists_at(cg->dir, "memory.peak"))
        rc = say(err, errcap, -ENOTSUP, "cgroup v2 without memory.peak (Linux before 5.19)");
    if (rc == 0 && memory_limit_bytes)
        rc = set_limit(cg, memory_limit_bytes, err, errcap);
    cg->limited = memory_limit_bytes != 0;
    if (rc == 0) {
        char path[RM__CGROUP_PATH_MAX + 16];
        snprintf(path, sizeof path, "%s/cgroup.procs", cg->dir);
        cg->procs_fd = open(path, O_WRONLY | O_CLOEXEC);
        if (cg->procs_fd < 0)
            rc = say(err, errcap, -errno, "cannot open %s: %s", path, strerror(errno));
        if (rc == 0 && cg->version == 1) { /* absent or refused: join uses cgroup.procs */
            snprintf(path, sizeof path, "%s/tasks", cg->dir);
            cg->tasks_fd = open(path, O_WRONLY | O_CLOEXEC);
        }
    }
    if (rc < 0) {
        if (cg->procs_fd >= 0)
            close(cg->procs_fd);
        rmdir(cg->dir); /* made just now, empty */
        free(cg);
        return rc;
    }
    if (cg->version == 1)
        make_cpu_leaf(cg, proc_dir, fs_prefix, proc_root);
    /* The leaf as a process's cgroup file will name it: the creator's path
     * (the leaf's parent) and the leaf's name. */
    char own[RM__CGROUP_PATH_MAX];
    const char *name = strrchr(cg->dir, '/');
    if (name && rm__cgroup_path_of(proc_dir, cg->version, own, sizeof own) == 0) {
        int n = snprintf(cg->path, sizeof cg->path, "%s%s", strcmp(own, "/") == 0 ? "" : own, name);
        if (n < 0 || (size_t)n >= sizeof cg->path)
            cg->path[0] = '\0';
    }
    *out = cg;
    return 0;
}

int rm__cgroup_leaf_cpu_dir(const char *memory_dir, int version, int root, char *out, size_t cap)
{
    const char *slash = strrchr(memory_dir, '/');
    const char *name = slash ? slash + 1 : memory_dir;
    rm__cgroup_leaf_owner owner;
    if (rm__cgroup_leaf_name_parse(name, &owner) < 0 || owner.pid != (long)getpid())
        return -ENOENT; /* not a leaf of this process's making: it may hold others */
    rm__cgroup_place place;
    char root_dir[64];
    snprintf(root_dir, sizeof root_dir, "/proc/%d", root);
    int rc;
    if (version == 2) {
        rc = rm__cgroup_locate(root_dir, "", &place);
        if (rc == 0 && (place.version != 2 || strcmp(place.dir, memory_dir) != 0))
            rc = -ENOENT;
    } else {
        rc = rm__cgroup_locate_v1(root_dir, "", "cpuacct", &place);
        slash = strrchr(place.dir, '/');
        if (rc == 0 && (!slash || strcmp(slash + 1, name) != 0))
            rc = -ENOENT; /* the root is not in a cpuacct leaf of that name */
    }
    if (rc < 0)
        return rc;
    int n = snprintf(out, cap, "%s", place.dir);
    return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

int resmon_cgroup_create(resmon_cgroup **out, uint64_t memory_limit_bytes, char *err, size_t errcap)
{
    return rm__cgroup_leaf_create_at(out, "/proc/self", "", memory_limit_bytes, err, errcap);
}

const char *resmon_cgroup_path(const resmon_cgroup *cg)
{
    return cg ? cg->dir : NULL;
}

int resmon_cgroup_version(const resmon_cgroup *cg)
{
    return cg ? cg->version : 0;
}

int rm__cgroup_leaf_holds_at(const resmon_cgroup *cg, const char *proc_dir)
{
    if (!cg || !proc_dir)
        return -EINVAL;
    if (!cg->path[0])
        return -ENOTSUP; /* the creator's own cgroup path could not be read */
    /* Its cgroup file, by path: one read, no mount table (a process in a
     * private mount namespace sees other mounts: review 71), and the path
     * is the reader's view, as the leaf's was taken (review 72: a mount
     * table read per process took 27 s for 2000 leftovers). */
    char path[RM__CGROUP_PATH_MAX];
    int rc = rm__cgroup_path_of(proc_dir, cg->version, path, sizeof path);
    if (rc == -ENOENT) {
        struct stat st; /* gone, or no memory line: elsewhere */
        return stat(proc_dir, &st) < 0 && errno == ENOENT ? -ESRCH : 0;
    }
    if (rc < 0)
        return rc == -ESRCH ? -ESRCH : rc;
    size_t n = strlen(cg->path);
    if (strncmp(path, cg->path, n) == 0 && (path[n] == '\0' || path[n] == '/'))
        return 1;
    /* An exited process (a zombie its parent has not reaped, or one caught
     * exiting) is no longer in any cgroup's figures and v1 shows it in the
     * root: ended, not moved out (review 72). */
    char stat_path[RM__CGROUP_PATH_MAX + 8], text[512];
    snprintf(stat_path, sizeof stat_path, "%s/stat", proc_dir);
    int fd = open(stat_path, O_RDONLY | O_CLOEXEC);
    ssize_t got = fd < 0 ? -1 : read(fd, text, sizeof text - 1);
    if (fd >= 0)
        close(fd);
    if (got <= 0)
        return -ESRCH;
    text[got] = '\0';
    const char *close_paren = strrchr(text, ')'); /* the name may hold anything, ')' too */
    char state = close_paren && close_paren[1] == ' ' ? close_paren[2] : '?';
    return state == 'Z' || state == 'X' || state == 'x' ? -ESRCH : 0;
}

int resmon_cgroup_holds(const resmon_cgroup *cg, pid_t pid)
{
    if (pid <= 0)
        return -EINVAL;
    char proc_dir[32];
    snprintf(proc_dir, sizeof proc_dir, "/proc/%d", (int)pid);
    return rm__cgroup_leaf_holds_at(cg, proc_dir);
}

/* Whether the calling process has one thread: /proc/PID/task has 2 + the
 * number of threads as its link count.  0 when /proc cannot say.  One
 * stat(2): async-signal-safe.  (Only the caller could start a thread, and it
 * is here: the answer cannot change before the write that follows.) */
static int single_threaded(void)
{
    struct stat st;
    return stat("/proc/self/task", &st) == 0 && st.st_nlink == 3;
}

/* Writes a pid ("0": the writer) to an open tasks or cgroup.procs file:
 * digits by hand and one write(2), as this may run between fork and exec. */
static int write_pid(int fd, pid_t pid)
{
    char text[24];
    size_t n = sizeof text;
    unsigned long value = (unsigned long)pid;
    do {
        text[--n] = (char)('0' + value % 10);
        value /= 10;
    } while (value);
    ssize_t written = write(fd, text + n, sizeof text - n);
    if (written != (ssize_t)(sizeof text - n))
        return written < 0 ? -errno : -EIO;
    return 0;
}

/* v1: the cpuacct leaf too (after the memory leaf).  A process that could
 * not join it would be missing from its CPU total, which the monitor takes
 * for the tree's: its refusal is the join's. */
static int join_cpu_leaf(const resmon_cgroup *cg, pid_t pid, int single)
{
    if (cg->cpu_tasks_fd < 0)
        return 0;
    /* tasks moves one thread: only for a single-threaded writer moving
     * itself; any other process is moved whole through cgroup.procs. */
    if (pid == 0 && single)
        return write_pid(cg->cpu_tasks_fd, 0);
    char path[RM__CGROUP_PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/cgroup.procs", cg->cpu_dir);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    int rc = write_pid(fd, pid);
    close(fd);
    return rc;
}

static int join_memory_leaf(const resmon_cgroup *cg, pid_t pid, int single);

int resmon_cgroup_join(const resmon_cgroup *cg, pid_t pid)
{
    if (!cg || cg->procs_fd < 0 || pid < 0)
        return -EINVAL;
    int single = pid == 0 && single_threaded();
    int rc = join_memory_leaf(cg, pid, single);
    return rc == 0 ? join_cpu_leaf(cg, pid, single) : rc;
}

static int join_memory_leaf(const resmon_cgroup *cg, pid_t pid, int single)
{
    /* v1, a single-threaded caller moving itself (a child between fork and
     * exec): "0" into tasks moves its one thread, that is the whole process,
     * and the kernel then takes no global lock.  A write to cgroup.procs
     * (or of another pid) write-locks every thread group of the system,
     * which waits for an RCU grace period when none was taken recently:
     * 6-15 ms for a one-shot run here, against 0.1 ms. */
    if (pid == 0 && cg->tasks_fd >= 0 && single) {
        ssize_t w = write(cg->tasks_fd, "0", 1);
        return w == 1 ? 0 : (w < 0 ? -errno : -EIO);
    }
    /* "0" is the writer itself, in both layouts. */
    return write_pid(cg->procs_fd, pid);
}

/* Moves every process still in the leaf to its parent (an orphan the
 * command left running, or one resmon was told not to wait for), so the
 * leaf can go.  Under a limit (limited: resmon's, or one the command set on
 * its own leaf) only the caller itself goes -- the pytest plugin's process,
 * which joined the leaf; that limit was asked for the whole run, and the
 * parent has none.  Returns how many were listed. */
static int move_out_at(int dir, const char *parent, int limited)
{
    int fd = openat(dir, "cgroup.procs", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
    if (!f) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    int count = 0;
    long pid;
    while (fscanf(f, "%ld", &pid) == 1) {
        if (limited && pid != (long)getpid()) {
            count++;
            continue;
        }
        char text[24];
        snprintf(text, sizeof text, "%ld", pid);
        write_text_at(parent, "cgroup.procs", text); /* ESRCH: it has just ended */
        count++;
    }
    fclose(f);
    return count;
}

/* move_out_at for the cgroup at path (the leaf's own). */
static int move_out(const char *path, const char *parent, int limited)
{
    int dir = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int count = dir >= 0 ? move_out_at(dir, parent, limited) : 0;
    if (dir >= 0)
        close(dir);
    return count;
}

/* Whether a cgroup the command made sets a limit of its own: a memory,
 * swap, pids or CPU bound in any file of them it has (v2: "max" is none;
 * v1: -1, or a byte count past 2^62, the kernel's "unlimited", is none). */
static int sets_a_limit_at(int dir)
{
    static const char *const files[] = {"memory.max", "memory.high", "memory.swap.max", "pids.max", "cpu.max",
                                        "memory.limit_in_bytes", "memory.memsw.limit_in_bytes", "cpu.cfs_quota_us"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char text[64];
        ssize_t n = rm__read_file_at(dir, files[i], text, sizeof text - 1);
        if (n <= 0)
            continue;
        text[n] = '\0';
        if (strncmp(text, "max", 3) == 0 || strncmp(text, "-1", 2) == 0)
            continue;
        char *end;
        errno = 0;
        unsigned long long value = strtoull(text, &end, 10);
        if (end != text && errno == 0 && value >= (1ULL << 62))
            continue;
        return 1;
    }
    return 0;
}

/* sets_a_limit_at for the cgroup at path (the leaf's own). */
static int sets_a_limit(const char *path)
{
    int dir = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int sets = dir >= 0 && sets_a_limit_at(dir);
    if (dir >= 0)
        close(dir);
    return sets;
}

/* Removes the cgroups a command made below its leaf (a container runtime,
 * a test harness), deepest first: rmdir refuses a cgroup that has any, so
 * one empty cgroup left there kept the leaf for ever (attack 57b).  With
 * to_parent (and cg), each is first emptied into it as the leaf is
 * (move_out: never under a limit) -- unless it, or one between it and the
 * leaf, sets a limit of its own (sets_a_limit: a process the command put
 * under a 50 MiB bound ran on in resmon's cgroup without it, review 57c):
 * then only the caller's own process leaves (a test that put pytest there
 * kept the session under its bound, and the next test's leaf was made
 * below it, attack 59);
 * without to_parent, only empty ones go (a sweep).  cgroupfs holds no
 * links; an entry that is not a directory is skipped.  Returns how many
 * are left, each holding processes; held_left counts those a limit of
 * their own keeps; *unfollowed is set to why cgroups below were not
 * followed: ELOOP where they go on below depth levels (cgroup_nesting.h),
 * EMFILE where no descriptor was left to open one (review 75: taken for
 * none there, the leaf was said to hold processes, the kills below 0). */
static int remove_below_at(const resmon_cgroup *cg, int dir, const char *to_parent, int depth, int held_above,
                           int *held_left, int *unfollowed)
{
    if (depth == 0) {
        if (rm_cgroup_has_child(dir))
            *unfollowed = ELOOP;
        return 0;
    }
    DIR *d = list_cgroup(dir);
    if (!d) {
        if (errno == EMFILE || errno == ENFILE)
            *unfollowed = errno;
        return 0;
    }
    int left = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (!rm_cgroup_child_entry(e))
            continue;
        int sub = open_below(dir, e->d_name);
        if (sub < 0) {
            if (errno == EMFILE || errno == ENFILE)
                *unfollowed = errno;
            continue; /* else removed meanwhile, or not a directory */
        }
        int held = held_above || (cg && to_parent && sets_a_limit_at(sub));
        left += remove_below_at(cg, sub, to_parent, depth - 1, held, held_left, unfollowed);
        if (cg && to_parent) /* under a limit, only this process (the pytest plugin's) leaves */
            move_out_at(sub, to_parent, held || cg->limited);
        close(sub);
        int stays = unlinkat(dir, e->d_name, AT_REMOVEDIR) != 0 && errno != ENOENT;
        left += stays;
        *held_left += stays && held;
    }
    closedir(d);
    return left;
}

/* remove_below_at for the cgroup at path (a leaf), RM_CGROUP_NESTING_MAX
 * levels down; limited_above: the leaf's own limit binds what is below. */
static int remove_below(const resmon_cgroup *cg, const char *path, const char *to_parent, int limited_above,
                        int *held_left, int *unfollowed)
{
    int dir = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dir < 0)
        return 0;
    int left = remove_below_at(cg, dir, to_parent, RM_CGROUP_NESTING_MAX, limited_above, held_left, unfollowed);
    close(dir);
    return left;
}

/* Empties (move_out) and removes one leaf with the cgroups below it,
 * waiting up to REMOVE_WAIT_NS for the kernel to let go of exiting
 * processes. */
static int remove_leaf(const resmon_cgroup *cg, const char *dir, const char *parent, int limited)
{
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    int rc;
    for (;;) {
        move_out(dir, parent, limited);
        int held = 0, unfollowed = 0;
        int below = remove_below(cg, dir, parent, limited, &held, &unfollowed);
        if (rmdir(dir) == 0 || errno == ENOENT) {
            rc = 0;
            break;
        }
        rc = -errno;
        clock_gettime(CLOCK_MONOTONIC, &now);
        long long waited = (now.tv_sec - start.tv_sec) * 1000000000LL + (now.tv_nsec - start.tv_nsec);
        /* Cgroups not followed (nested past what is, or no descriptor left)
         * keep the leaf, whatever runs there: that reason (-ELOOP,
         * -EMFILE) where nothing within reach holds a process, so that the
         * caller does not say processes still run (attack 73); else as
         * below, an exiting one waited for. */
        int unreached = 0;
        if (rc == -EBUSY && unfollowed && !subtree_holds_processes(dir, &unreached)) {
            rc = -unfollowed;
            break;
        }
        /* A limited leaf that still lists processes keeps them, and itself,
         * under the limit until they end: a later create sweeps it.  So
         * does a cgroup below it with a limit of its own (held). */
        if (rc != -EBUSY || waited > REMOVE_WAIT_NS || held || (limited && (holds_processes(dir) || below)))
            break;
        /* An exiting process is still charged to the group for a moment. */
        struct timespec pause = {0, 5000000};
        nanosleep(&pause, NULL);
    }
    return rc;
}

int resmon_cgroup_remove(resmon_cgroup *cg)
{
    if (!cg)
        return 0;
    /* A limit the command set on the leaf itself binds what it leaves as
     * resmon's own does (review 58: a daemon left under a bound its command
     * wrote to its own cgroup ran on without it). */
    int limited = cg->limited || sets_a_limit(cg->dir) || (cg->cpu_tasks_fd >= 0 && sets_a_limit(cg->cpu_dir));
    if (cg->procs_fd >= 0)
        close(cg->procs_fd);
    if (cg->tasks_fd >= 0)
        close(cg->tasks_fd);
    if (cg->cpu_tasks_fd >= 0)
        close(cg->cpu_tasks_fd);
    int rc = remove_leaf(cg, cg->dir, cg->parent, limited);
    /* The cpuacct leaf is its memory leaf's shadow: what stays in one stays
     * in the other, and the next create sweeps both. */
    if (cg->cpu_tasks_fd >= 0)
        remove_leaf(cg, cg->cpu_dir, cg->cpu_parent, limited);
    free(cg);
    return rc;
}
