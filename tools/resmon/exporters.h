/*
 * exporters.h -- the command's Prometheus outputs: a scrape endpoint
 * (--serve), a Pushgateway client (--push) and a node_exporter textfile
 * (--textfile), all rendering the one monitor through the library's
 * resmon_monitor_exposition.
 *
 * The exporters read the monitor's snapshot (summary and latest sample under
 * the monitor's lock, a copy of a few hundred bytes); they never run on the
 * sampler thread, so a slow scraper or a hung Pushgateway cannot delay a
 * sample.
 */
#ifndef RESMON_EXPORTERS_H
#define RESMON_EXPORTERS_H

#include "exporter_options.h"
#include "resmon.h"

#include <stddef.h>
#include <sys/types.h>

/* ---- the running exporters (outputs.c calls these) ---- */

typedef struct exporters exporters;

/* Starts what the options ask for -- binds the endpoint, checks that the
 * textfile's directory is writable, prepares the push -- before the command
 * starts, so a port in use is a usage error.  The command label is argv0's
 * basename, or the comm of pid when argv0 is NULL.  Returns NULL with
 * *out_none = 1 when nothing is asked for; NULL with *out_none = 0 after
 * printing one line on failure. */
exporters *exporters_start(const exporter_options *o, double sample_interval_sec, const char *argv0,
                           pid_t pid, int *out_none);

/* Renders from this monitor from now on.  Accepts NULLs. */
void exporters_attach(exporters *ex, const resmon_monitor *m);

/* Before the monitor is freed: keeps its final state and lets go of it. */
void exporters_detach(exporters *ex, const resmon_monitor *m);

/* The run is over: render final (the summary with the kernel's exact
 * figures) and, when have_exit, the command's exit status (as the shell
 * sees it), write the textfile and push a last time, serve for the linger
 * time, then stop and free everything.  A push in flight is abandoned for
 * the final one, so this returns at most --push-timeout plus about a second
 * after it is called (plus the linger).  Accepts NULL.  Returns -1 when the
 * textfile's last write failed (its line printed), else 0. */
int exporters_finish(exporters *ex, const resmon_summary *final, int have_exit, int exit_status);

/* Stops and frees without a final push (nothing ran).  Accepts NULL. */
void exporters_discard(exporters *ex);

#endif
