/*
 * cgroup_run.c -- the command's own leaf cgroup: made before COMMAND is
 * forked, entered by COMMAND itself while it is held before exec (so nothing
 * it runs escapes), read by the monitor (and again after the orphans the
 * command left), and removed at the end on every path -- a normal exit, a
 * command killed by a signal or by the OOM killer, and resmon interrupted
 * (the signal is forwarded and resmon still ends through here) -- unless
 * processes still run in it under --memory-limit: the limit binds them for
 * as long as they live, and the next resmon removes the empty leaf.  Where none can be made the run goes on without, and the table
 * says once why.
 */
#include "cgroup_run.h"
#include "cli.h"
#include "option_values.h"
#include "options.h"
#include "run_result.h"
#include "text_output.h"
#include "cgroup_nesting.h"
#include "regular_file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

int cgroup_for_command(const cli_options *o, run_result *r, resmon_cgroup **cg)
{
    *cg = NULL;
    r->cgroup_note[0] = '\0';
    if (o->no_cgroup || o->cgroup_path)
        return 0;
    char err[RESMON_ERR_MAX];
    if (resmon_cgroup_create(cg, o->memory_limit_bytes, err, sizeof err) == 0)
        return 0;
    if (o->memory_limit_bytes) {
        fprintf(stderr, "resmon: --memory-limit needs a cgroup for the command: %s\n", err);
        return EXIT_USAGE;
    }
    snprintf(r->cgroup_note, sizeof r->cgroup_note, "%s", err);
    return 0;
}

int cgroup_enter(const cli_options *o, run_result *r, resmon_cgroup **cg, int join_rc)
{
    if (!*cg)
        return 0;
    int rc = join_rc;
    if (rc == 0)
        return 0;
    snprintf(r->cgroup_note, sizeof r->cgroup_note, "cannot move the command into %s: %s",
             resmon_cgroup_path(*cg), strerror(-rc));
    resmon_cgroup_remove(*cg);
    *cg = NULL;
    if (o->memory_limit_bytes) {
        fprintf(stderr, "resmon: --memory-limit: %s\n", r->cgroup_note);
        return EXIT_USAGE;
    }
    return 0;
}

/* One window opened and closed at once, for the monitor's own end-of-window
 * reading of a cgroup (peak, OOM kills, throttling, I/O) -- the one
 * implementation of it.  members: the cgroup's processes are the tree (the
 * leaf's, after its orphans); else this process alone, so that reading a
 * given cgroup's counters costs no walk of whoever is in it.  Returns 0, or
 * -1 when the cgroup's figures could not be read (end untouched). */
static int read_cgroup_figures(const char *path, int members, resmon_summary *end)
{
    resmon_options opts = RESMON_OPTIONS_INIT;
    opts.cgroup_path = path;
    opts.cgroup_members = members;
    opts.sample_interval_sec = 1e6; /* the window's two edges only */
    resmon_monitor *m = NULL;
    resmon_summary s;
    int rc = resmon_monitor_new(&m, &opts);
    if (rc == 0)
        rc = resmon_monitor_start(m);
    if (rc == 0) {
        resmon_monitor_stop(m);
        rc = resmon_monitor_get_summary(m, &s, sizeof s);
    }
    resmon_monitor_free(m);
    if (rc < 0 || s.cgroup_error || !s.cgroup_version)
        return -1;
    *end = s;
    return 0;
}

void cgroup_read_to_end(const char *path, int own_leaf, run_result *r)
{
    resmon_summary end;
    resmon_summary *s = &r->summary;
    if (!path || !s->cgroup_version)
        return; /* no cgroup figures in the window: none to bring up to date */
    if (read_cgroup_figures(path, own_leaf, &end) < 0 || end.cgroup_version != s->cgroup_version)
        return; /* the figures stay the command's exit's */
    if (!isnan(end.cgroup_peak_mb) && !(end.cgroup_peak_mb <= s->cgroup_peak_mb))
        s->cgroup_peak_mb = end.cgroup_peak_mb;
    double *now[] = {&end.cgroup_oom_kills, &end.cgroup_throttled_sec, &end.cgroup_nr_throttled,
                     &end.cgroup_io_read_bytes, &end.cgroup_io_write_bytes};
    double *kept[] = {&s->cgroup_oom_kills, &s->cgroup_throttled_sec, &s->cgroup_nr_throttled,
                      &s->cgroup_io_read_bytes, &s->cgroup_io_write_bytes};
    for (size_t i = 0; i < sizeof now / sizeof *now; i++)
        if (!isnan(*now[i])) /* counters over the cgroup's life: the later reading holds the earlier */
            *kept[i] = *now[i];
}

/* Calls visit on the cgroup open at dir and on every cgroup below it, at
 * most depth levels down, each opened without following a link, until a
 * visit returns other than 0; returns that, -1 when cgroups go on deeper
 * (not followed: cgroup_nesting.h) or one could not be opened for want of
 * a descriptor, or 0. */
static int each_cgroup(int dir, int depth, int (*visit)(int dir, void *context), void *context)
{
    int rc = visit(dir, context);
    if (rc == 0 && depth == 0)
        return rm_cgroup_has_child(dir) ? -1 : 0;
    int listing = rc == 0 ? openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    DIR *d = listing >= 0 ? fdopendir(listing) : NULL;
    if (!d) {
        if (rc == 0 && (errno == EMFILE || errno == ENFILE))
            rc = -1; /* no descriptor left: what is below is unseen, not none (review 75) */
        if (listing >= 0)
            close(listing);
        return rc;
    }
    for (struct dirent *e; rc == 0 && (e = readdir(d)) != NULL;) {
        if (!rm_cgroup_child_entry(e))
            continue;
        int sub = openat(dir, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub >= 0) {
            rc = each_cgroup(sub, depth - 1, visit, context);
            close(sub);
        } else if (errno == EMFILE || errno == ENFILE) {
            rc = -1;
        }
    }
    closedir(d);
    return rc;
}

typedef struct kill_counts {
    cgroup_kill_count *at;
    size_t have;
} kill_counts;

/* each_cgroup's visit: the v1 cgroup's own OOM kill count (memory.oom_control's
 * oom_kill, read only if a regular file: never waited on), by identity; -1
 * when there are more than CGROUP_V1_COUNTS_MAX (as each_cgroup's for a
 * tree too deep: either way not all are seen). */
static int add_kill_count(int dir, void *context)
{
    kill_counts *counts = context;
    struct stat st;
    int fd = rm__open_regular_at(dir, "memory.oom_control", NULL);
    char text[512];
    ssize_t n = fd < 0 ? -1 : read(fd, text, sizeof text - 1);
    if (fd >= 0)
        close(fd);
    const char *at = n > 0 ? (text[n] = '\0', strstr(text, "oom_kill ")) : NULL;
    if (!at || fstat(dir, &st) != 0)
        return 0;
    if (counts->have >= CGROUP_V1_COUNTS_MAX)
        return -1;
    counts->at[counts->have++] = (cgroup_kill_count){st.st_dev, st.st_ino, strtod(at + 9, NULL)};
    return 0;
}

/* Each own OOM kill count (add_kill_count) at and below the v1 cgroup at path: how many, 0 when it cannot say, -1
 * when there are more than CGROUP_V1_COUNTS_MAX or they nest deeper than RM_CGROUP_NESTING_MAX. */
static long v1_kill_counts_of(const char *path, cgroup_kill_count *counts)
{
    int dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    kill_counts found = {counts, 0};
    long got = dir < 0 ? 0 : each_cgroup(dir, RM_CGROUP_NESTING_MAX, add_kill_count, &found) < 0 ? -1 : (long)found.have;
    if (dir >= 0)
        close(dir);
    return got;
}

/* Both ends' counts: static, one run's at a time (the command's main
 * thread), never on the stack (1.5 MiB each at most, touched as used). */
static cgroup_kill_count v1_counts_at_start[CGROUP_V1_COUNTS_MAX], v1_counts_at_end[CGROUP_V1_COUNTS_MAX];

static int by_identity(const void *a, const void *b)
{
    const cgroup_kill_count *x = a, *y = b;
    if (x->dev != y->dev)
        return x->dev < y->dev ? -1 : 1;
    return x->ino < y->ino ? -1 : x->ino > y->ino;
}

/* The entry of counts (n, sorted by identity) for one, or NULL. */
static const cgroup_kill_count *v1_find(const cgroup_kill_count *counts, size_t n, const cgroup_kill_count *one)
{
    return n ? bsearch(one, counts, n, sizeof *counts, by_identity) : NULL;
}

void cgroup_counters_at_start(const char *path, cgroup_counters *start)
{
    resmon_summary s;
    start->path = path;
    start->v1_count = 0;
    start->known = read_cgroup_figures(path, 0, &s) == 0;
    if (!start->known)
        return;
    start->v1 = v1_counts_at_start;
    long got = s.cgroup_version == 1 ? v1_kill_counts_of(path, start->v1) : 0;
    start->v1_count = got > 0 ? (size_t)got : 0;
    start->v1_overflow = got < 0;
    qsort(start->v1, start->v1_count, sizeof *start->v1, by_identity);
    start->oom_kills = s.cgroup_oom_kills;
    start->throttled_sec = s.cgroup_throttled_sec;
    start->nr_throttled = s.cgroup_nr_throttled;
    start->io_read_bytes = s.cgroup_io_read_bytes;
    start->io_write_bytes = s.cgroup_io_write_bytes;
}

void cgroup_counters_since(const cgroup_counters *start, resmon_summary *s)
{
    if (!s->cgroup_version)
        return; /* no figures at the end: nothing to take from */
    double *end[] = {&s->cgroup_oom_kills, &s->cgroup_throttled_sec, &s->cgroup_nr_throttled,
                     &s->cgroup_io_read_bytes, &s->cgroup_io_write_bytes};
    const double before[] = {start->oom_kills, start->throttled_sec, start->nr_throttled, start->io_read_bytes,
                             start->io_write_bytes};
    for (size_t i = 0; i < sizeof end / sizeof *end; i++) {
        if (!start->known || isnan(before[i]))
            *end[i] = NAN; /* the run's share cannot be told from the cgroup's life */
        else if (!isnan(*end[i])) /* (v1's kills below, when each cgroup's were read) */
            *end[i] = *end[i] > before[i] ? *end[i] - before[i] : 0;
    }
    if (s->cgroup_version != 1 || !start->known || isnan(s->cgroup_oom_kills))
        return;
    /* A sub-cgroup removed during the run took its kills out of the sum:
     * 3 before it, 1 in the run, 0 said (attack 70).  Each cgroup's rise. */
    cgroup_kill_count *now = v1_counts_at_end;
    long count = start->v1_overflow || !start->v1 ? -1 : v1_kill_counts_of(start->path, now);
    int some_unseen = count < 0; /* too many or too deep to follow: the sum above, a lower bound */
    if (count > 0 && start->v1_count) {
        qsort(now, (size_t)count, sizeof *now, by_identity);
        double kills = 0;
        for (long i = 0; i < count; i++) {
            const cgroup_kill_count *was = v1_find(start->v1, start->v1_count, &now[i]);
            double had = was ? was->kills : 0; /* made during the run: all of its count is the run's */
            kills += now[i].kills > had ? now[i].kills - had : 0;
        }
        for (size_t j = 0; j < start->v1_count && !some_unseen; j++) /* one removed took the kills it had */
            some_unseen = !v1_find(now, (size_t)count, &start->v1[j]);
        s->cgroup_oom_kills = kills;
    }
    /* None seen where some may have been (the systemd pattern: a scope
     * OOM-killed, then removed): unknown, not 0 (review 71).  A count seen
     * stands, as the least there were. */
    if (some_unseen && s->cgroup_oom_kills == 0) {
        s->cgroup_oom_kills = NAN;
        fputs("resmon: the OOM kills in the cgroup during the run are unknown: cgroup v1 counts a kill in its "
              "victim's cgroup only, and ", stderr);
        fputs(count < 0 ? "more cgroups are below it, or nested deeper, than resmon follows\n"
                        : "a cgroup below it was removed during the run, with its count\n", stderr);
    }
}

/* A limit file of the leaf, in bytes (UINT64_MAX for "max"); -1 when it
 * cannot be read (absent: no swap accounting). */
static int read_leaf_limit(const resmon_cgroup *cg, const char *name, unsigned long long *bytes)
{
    char path[PATH_MAX], text[64];
    snprintf(path, sizeof path, "%s/%s", resmon_cgroup_path(cg), name);
    /* resmon's own leaf: its files are the kernel's, but never wait on one */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
    ssize_t n = fd < 0 ? -1 : read(fd, text, sizeof text - 1);
    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return -1;
    text[n] = '\0';
    char *end;
    errno = 0;
    *bytes = strncmp(text, "max", 3) == 0 ? UINT64_MAX : strtoull(text, &end, 10);
    if (*bytes >= MEMORY_LIMIT_BOUND)
        *bytes = UINT64_MAX; /* v1's "none" is ~2^63; no limit asked is this large */
    return errno ? -1 : 0;
}

void cgroup_check_limit(const cli_options *o, const resmon_cgroup *cg, run_result *r)
{
    r->memory_limit_at_end_mb = r->swap_allowed_at_end_mb = NAN;
    if (!cg || !o->memory_limit_bytes)
        return;
    int v2 = r->summary.cgroup_version == 2;
    unsigned long long now, swap;
    if (read_leaf_limit(cg, v2 ? "memory.max" : "memory.limit_in_bytes", &now) < 0)
        return;
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    uint64_t set = o->memory_limit_bytes / page * page; /* the kernel keeps whole pages */
    if (now != set && now != o->memory_limit_bytes)
        r->memory_limit_at_end_mb = now == UINT64_MAX ? INFINITY : (double)now / 1048576.0;
    /* The leaf was made with no swap beside its memory (v2 memory.swap.max
     * 0; v1 memory.memsw.limit_in_bytes, memory and swap together, equal to
     * the memory limit): swap let in during the run stretches the limit
     * (attack 70).  Absent where the kernel keeps no swap account. */
    if (v2 ? read_leaf_limit(cg, "memory.swap.max", &swap) < 0
           : read_leaf_limit(cg, "memory.memsw.limit_in_bytes", &swap) < 0)
        return;
    /* v1: memory and swap together beyond the larger of the limit asked and
     * the limit now (a limit lowered leaves the asked bound on both: review
     * 71 said swap let in there). */
    unsigned long long bound = now == UINT64_MAX ? UINT64_MAX : now > set ? now : set;
    if (!v2 && swap != UINT64_MAX)
        swap = bound == UINT64_MAX ? 0 : swap > bound ? swap - bound : 0;
    if (swap != 0)
        r->swap_allowed_at_end_mb = swap == UINT64_MAX ? INFINITY : (double)swap / 1048576.0;
}

int cgroup_moved_out(const resmon_cgroup *cg, const pid_t *pids, int n, pid_t *first)
{
    int moved = 0;
    for (int i = 0; i < n; i++)
        if (resmon_cgroup_holds(cg, pids[i]) == 0 && moved++ == 0) /* < 0: ended meanwhile, or unknown */
            *first = pids[i];
    return moved;
}

/* The leaf left because its command nested cgroups in it deeper than
 * removal follows (resmon_cgroup_remove's -ELOOP): nothing runs within
 * reach, and no later resmon removes it either (attack 73). */
static void say_nested_too_deep(const char *dir)
{
    fputs("resmon: the command's cgroup ", stderr);
    print_printable(stderr, dir);
    fprintf(stderr, " is left: the cgroups the command made in it nest more than %d levels deep, past what resmon "
                    "follows; what runs there is not seen, and any limit still binds it (remove them, deepest "
                    "first, with rmdir, once nothing runs there)\n", RM_CGROUP_NESTING_MAX);
}

int cgroup_release_kept(resmon_cgroup *cg, int ended)
{
    if (!cg)
        return 0;
    char dir[RESMON_ERR_MAX];
    snprintf(dir, sizeof dir, "%s", resmon_cgroup_path(cg));
    int rc = resmon_cgroup_remove(cg);
    if (rc == -ELOOP)
        say_nested_too_deep(dir);
    else if (rc == -EBUSY) { /* still holds what was not ended: kept, under the limit, for a later resmon */
        fputs("resmon: the cgroup ", stderr);
        print_printable(stderr, dir);
        fprintf(stderr, " still holds processes %s: kept under the memory limit (a later resmon removes it once "
                        "empty)\n", ended ? "the repeat could not end" : "a run left running as the repeat stops");
    } else if (rc < 0) {
        fputs("resmon: cannot remove the command's cgroup ", stderr);
        print_printable(stderr, dir);
        fprintf(stderr, ": %s\n", strerror(-rc));
    }
    return rc;
}

double cgroup_oom_kills_now(const char *path)
{
    resmon_summary s;
    return read_cgroup_figures(path, 0, &s) == 0 ? s.cgroup_oom_kills : NAN;
}

/* each_cgroup's visit: 1 when the cgroup lists a process. */
static int lists_a_process(int dir, void *context)
{
    (void)context;
    char byte;
    int fd = rm__open_regular_at(dir, "cgroup.procs", NULL);
    ssize_t n = fd < 0 ? -1 : read(fd, &byte, 1);
    if (fd >= 0)
        close(fd);
    return n == 1;
}

void cgroup_done(const cli_options *o, resmon_cgroup *cg, run_result *r)
{
    r->leaf_kept[0] = '\0';
    r->kept_cg = NULL;
    if (!cg)
        return;
    char dir[RESMON_ERR_MAX];
    snprintf(dir, sizeof dir, "%s", resmon_cgroup_path(cg));
    if (o->leftovers_said_after && o->memory_limit_bytes && r->orphans_left > 0) {
        /* --repeat ends what a run left before the next one: the leaf, still
         * open, goes then (cgroup_release_kept), not with some later resmon
         * (attack 70: a --repeat 10000 left 10000 empty memory cgroups). */
        snprintf(r->leaf_kept, sizeof r->leaf_kept, "%s", dir);
        r->kept_cg = cg;
        int at = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        /* all moved out: nothing stays (review 72); nested too deep to tell: it may */
        int held = at >= 0 && each_cgroup(at, RM_CGROUP_NESTING_MAX, lists_a_process, NULL);
        if (at >= 0)
            close(at);
        if (held) {
            fputs("resmon: what the command left running stays under the memory limit in ", stderr);
            print_printable(stderr, dir);
            fputs(" (removed once the repeat has ended it)\n", stderr);
        }
        return;
    }
    int rc = resmon_cgroup_remove(cg);
    /* Cgroups not followed for want of descriptors, and what the command
     * left running is somewhere there: it stays as below (review 76). */
    if ((rc == -EMFILE || rc == -ENFILE) && o->memory_limit_bytes && r->orphans_left > 0)
        rc = -EBUSY;
    if (rc == -ELOOP)
        say_nested_too_deep(dir);
    else if (rc == -EBUSY && o->memory_limit_bytes) {
        snprintf(r->leaf_kept, sizeof r->leaf_kept, "%s", dir);
        fputs("resmon: what the command left running stays under the memory limit in ", stderr);
        print_printable(stderr, dir);
        fputs(" (a later resmon removes it once empty)\n", stderr);
    } else if (rc == -EBUSY) { /* kept on purpose too: a limit the command set there binds what it left */
        fputs("resmon: the command's cgroup ", stderr);
        print_printable(stderr, dir);
        fputs(" still holds processes it left running, kept there (under any limit it set) until they end "
              "(a later resmon removes it once empty)\n", stderr);
    } else if (rc < 0) {
        fputs("resmon: cannot remove the command's cgroup ", stderr);
        print_printable(stderr, dir);
        fprintf(stderr, ": %s\n", strerror(-rc));
    }
}
