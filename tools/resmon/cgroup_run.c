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
#include "options.h"
#include "run_result.h"
#include "text_output.h"

#include <errno.h>
#include <math.h>
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

/* One more window, on the leaf's processes (cgroup_members), opened and
 * closed at once: the monitor's own end-of-window reading of the cgroup,
 * the one implementation of it, now that the orphans are done. */
void cgroup_read_to_end(const resmon_cgroup *cg, run_result *r)
{
    resmon_options opts = RESMON_OPTIONS_INIT;
    opts.cgroup_path = resmon_cgroup_path(cg);
    opts.cgroup_members = 1;
    opts.sample_interval_sec = 1e6; /* the window's two edges only */
    resmon_monitor *m = NULL;
    resmon_summary end;
    if (resmon_monitor_new(&m, &opts) < 0 || resmon_monitor_start(m) < 0) {
        resmon_monitor_free(m);
        return; /* the figures stay the command's exit's */
    }
    resmon_monitor_stop(m);
    resmon_monitor_get_summary(m, &end, sizeof end);
    resmon_monitor_free(m);
    resmon_summary *s = &r->summary;
    if (end.cgroup_error || end.cgroup_version != s->cgroup_version)
        return;
    if (!isnan(end.cgroup_peak_mb) && !(end.cgroup_peak_mb <= s->cgroup_peak_mb))
        s->cgroup_peak_mb = end.cgroup_peak_mb;
    double *now[] = {&end.cgroup_oom_kills, &end.cgroup_throttled_sec, &end.cgroup_nr_throttled,
                     &end.cgroup_io_read_bytes, &end.cgroup_io_write_bytes};
    double *kept[] = {&s->cgroup_oom_kills, &s->cgroup_throttled_sec, &s->cgroup_nr_throttled,
                      &s->cgroup_io_read_bytes, &s->cgroup_io_write_bytes};
    for (size_t i = 0; i < sizeof now / sizeof *now; i++)
        if (!isnan(*now[i])) /* counters over the leaf's life: the later reading holds the earlier */
            *kept[i] = *now[i];
}

void cgroup_done(const cli_options *o, resmon_cgroup *cg)
{
    if (!cg)
        return;
    char dir[RESMON_ERR_MAX];
    snprintf(dir, sizeof dir, "%s", resmon_cgroup_path(cg));
    int rc = resmon_cgroup_remove(cg);
    if (rc == -EBUSY && o->memory_limit_bytes) {
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
