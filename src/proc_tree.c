/*
 * proc_tree.c -- finding the descendants of a process (see proc_tree.h).
 */
#include "proc_tree.h"
#include "procfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

static int append_found(rm__tree_walker *w, pid_t pid)
{
    for (size_t i = 0; i < w->found_len; i++) /* the lists can repeat a pid mid-change */
        if (w->found[i] == pid)
            return 0;
    if (grow_pids(&w->found, &w->found_cap, w->found_len + 1) < 0)
        return -ENOMEM;
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
    free(w->scan_pid);
    free(w->scan_ppid);
    memset(w, 0, sizeof *w);
    w->proc_fd = -1;
}

struct children_visit {
    rm__tree_walker *walker;
    int error;
};

static int visit_child(pid_t pid, void *user)
{
    struct children_visit *v = user;
    if (append_found(v->walker, pid) < 0) {
        v->error = -ENOMEM;
        return 1;
    }
    return 0;
}

/* Appends the children of every thread of pid (a child forked by a worker
 * thread is listed under that thread, not under the main one). */
static int add_children_of(rm__tree_walker *w, pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "%d/task", (int)pid);
    int task_fd = openat(w->proc_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (task_fd < 0)
        return 0; /* gone, or not ours to read */
    DIR *tasks = fdopendir(task_fd);
    if (!tasks) {
        close(task_fd);
        return 0;
    }
    struct children_visit visit = {w, 0};
    struct dirent *entry;
    while ((entry = readdir(tasks)) != NULL) {
        pid_t tid = pid_from_name(entry->d_name);
        if (!tid)
            continue;
        char list[4096];
        snprintf(path, sizeof path, "%d/children", (int)tid);
        ssize_t n = rm__read_file_at(task_fd, path, list, sizeof list);
        if (n <= 0)
            continue; /* thread ended mid-walk */
        /* A garbled list (it cannot be, but the kernel calls it unreliable)
         * yields the pids before the garbage. */
        rm__parse_pid_list(list, (size_t)n, visit_child, &visit);
        if (visit.error)
            break;
    }
    closedir(tasks);
    return visit.error;
}

static int walk_children_files(rm__tree_walker *w, pid_t root)
{
    int rc = add_children_of(w, root);
    for (size_t i = 0; rc == 0 && i < w->found_len; i++)
        rc = add_children_of(w, w->found[i]);
    return rc;
}

static int walk_scan(rm__tree_walker *w, pid_t root)
{
    int dup_fd = openat(w->proc_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dup_fd < 0)
        return -errno;
    DIR *proc = fdopendir(dup_fd);
    if (!proc) {
        close(dup_fd);
        return -ENOMEM;
    }
    size_t count = 0;
    int rc = 0;
    struct dirent *entry;
    while ((entry = readdir(proc)) != NULL) {
        pid_t pid = pid_from_name(entry->d_name);
        if (!pid || pid == root)
            continue;
        char path[32], stat_text[1024];
        snprintf(path, sizeof path, "%d/stat", (int)pid);
        ssize_t n = rm__read_file_at(w->proc_fd, path, stat_text, sizeof stat_text);
        rm__proc_stat st;
        if (n <= 0 || rm__parse_stat(stat_text, (size_t)n, &st) < 0)
            continue; /* vanished, hidden (hidepid) or garbled: skip */
        if (count == w->scan_cap) {
            size_t new_cap = w->scan_cap ? w->scan_cap * 2 : 256;
            pid_t *pids = realloc(w->scan_pid, new_cap * sizeof *pids);
            if (pids)
                w->scan_pid = pids;
            pid_t *ppids = pids ? realloc(w->scan_ppid, new_cap * sizeof *ppids) : NULL;
            if (!ppids) {
                rc = -ENOMEM;
                break;
            }
            w->scan_ppid = ppids;
            w->scan_cap = new_cap;
        }
        w->scan_pid[count] = pid;
        w->scan_ppid[count] = st.ppid;
        count++;
    }
    closedir(proc);
    if (rc < 0)
        return rc;
    /* Breadth first from root over the parent links: each round adds the
     * children of the processes the previous round found. */
    size_t frontier_start = 0;
    pid_t parent = root;
    for (;;) {
        for (size_t i = 0; i < count; i++)
            if (w->scan_ppid[i] == parent && append_found(w, w->scan_pid[i]) < 0)
                return -ENOMEM;
        if (frontier_start >= w->found_len)
            break;
        parent = w->found[frontier_start++];
    }
    return 0;
}

int rm__tree_walk(rm__tree_walker *w, pid_t root)
{
    w->found_len = 0;
    return w->use_children_files ? walk_children_files(w, root) : walk_scan(w, root);
}
