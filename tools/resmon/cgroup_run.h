/*
 * cgroup_run.h -- the command's cgroup: made, entered, read to the end and
 * removed (cgroup_run.c).
 */
#ifndef RESMON_CGROUP_RUN_H
#define RESMON_CGROUP_RUN_H

#include "options.h"
#include "run_result.h"
#include "resmon.h"

/* Makes COMMAND's leaf cgroup before it is forked (none with --no-cgroup or
 * --cgroup).  Returns 0 -- with *cg NULL and the reason in r->cgroup_note
 * when none could be made -- or, having printed one line, EXIT_USAGE when
 * --memory-limit asked for one that cannot be made. */
int cgroup_for_command(const cli_options *o, run_result *r, resmon_cgroup **cg);
/* What the forked, still held COMMAND said of joining the leaf before it may
 * exec (join_rc: 0 or a negative errno; it joins itself, which is cheaper
 * for the kernel than a move by resmon).  On failure the leaf is removed
 * (*cg NULL) and the reason noted; returns EXIT_USAGE (printed) when
 * --memory-limit needs it, else 0. */
int cgroup_enter(const cli_options *o, run_result *r, resmon_cgroup **cg, int join_rc);
/* The cgroup's figures (peak, OOM kills, throttling, I/O: over its life)
 * read again after the orphans the command left were waited for or
 * counted, so that r->summary covers them too; the monitor read them at the
 * command's exit.  path: the run's own leaf (own_leaf: its processes are
 * the tree) or a cgroup given with --cgroup PATH, whose counters are then
 * taken from the start's by cgroup_counters_since, after this. */
void cgroup_read_to_end(const char *path, int own_leaf, run_result *r);
/* A cgroup resmon was given (--cgroup PATH) lived before the run: its
 * counters -- OOM kills, CPU throttling, I/O -- are read as the run starts
 * and taken from the end's, so that the summary's are the run's (its peak
 * stays the cgroup's lifetime peak: no kernel file gives one since a time). */
/* v1 counts an OOM kill in the victim's own cgroup only, and a sub-cgroup
 * removed during the run takes its count out of the cgroup's sum: each
 * cgroup's own count, by identity, so that the run's kills are what rose in
 * those still there and the whole of those made since. */
#define CGROUP_V1_COUNTS_MAX 65536 /* v1 has at most 65535 memory cgroups (its ids' space) */
typedef struct cgroup_kill_count {
    dev_t dev;
    ino_t ino;
    double kills;
} cgroup_kill_count;
typedef struct cgroup_counters {
    int known; /* 0: the cgroup's figures could not be read at the start */
    double oom_kills, throttled_sec, nr_throttled, io_read_bytes, io_write_bytes;
    const char *path;  /* the cgroup (v1: walked again at the end) */
    size_t v1_count;   /* v1: the cgroups at and below path, each one's own count; 0: none read */
    int v1_overflow;   /* v1: more than CGROUP_V1_COUNTS_MAX of them */
    cgroup_kill_count *v1; /* ... sorted by identity (a buffer of cgroup_run.c's, one run at a time) */
} cgroup_counters;
void cgroup_counters_at_start(const char *path, cgroup_counters *start);
/* s's cgroup counters less start's; NAN where the start's are unknown.  On
 * v1 the OOM kills are each cgroup's rise (of those at and below the path at
 * both ends, matched by identity) plus the whole count of those made since:
 * one removed during the run takes the kills it had in it, so none seen
 * then is unknown (NAN, said on stderr), not 0. */
void cgroup_counters_since(const cgroup_counters *start, resmon_summary *s);
/* Removes the leaf and frees cg.  What still runs in it moves to the parent,
 * except under --memory-limit: then it stays in the leaf, under the limit,
 * and the leaf stays until a later resmon finds it empty (said on stderr,
 * its path in r->leaf_kept); any other failure to remove it is said too.
 * Accepts NULL. */
void cgroup_done(const cli_options *o, resmon_cgroup *cg, run_result *r);
/* --repeat (o->leftovers_said_after): cgroup_done keeps a limited leaf that
 * still holds what the run left open in r->kept_cg instead, for the repeat
 * to remove once it has ended them (ended) or as it stops -- here, which
 * frees cg; what still runs stays in the leaf, said.  0 or a negative
 * errno.  Accepts NULL. */
int cgroup_release_kept(resmon_cgroup *cg, int ended);
/* Under --memory-limit: the leaf's limit read back at the end, kept in
 * r->memory_limit_at_end_mb where it is not the one set (a command as root
 * may raise its own limit: the run was then not bound as asked); NAN
 * otherwise. */
void cgroup_check_limit(const cli_options *o, const resmon_cgroup *cg, run_result *r);
/* How many of pids (what the command left running) are outside the leaf
 * and the cgroups below it (resmon_cgroup_holds): moved out by the command,
 * so not bound by --memory-limit nor in the leaf's figures.  The first
 * one's pid goes to *first.  A process that ended meanwhile is not
 * counted. */
int cgroup_moved_out(const resmon_cgroup *cg, const pid_t *pids, int n, pid_t *first);
/* The OOM killer's count of a cgroup now (a leaf kept by cgroup_done: what
 * the command left may be killed there after the run); NAN if unreadable. */
double cgroup_oom_kills_now(const char *path);

#endif
