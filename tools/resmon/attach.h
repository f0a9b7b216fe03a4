/*
 * attach.h -- monitoring a running process: --pid (attach.c).
 */
#ifndef RESMON_ATTACH_H
#define RESMON_ATTACH_H

#include "options.h"
#include "outputs.h"
#include "run_result.h"

#include <sys/types.h>

/* Whether pid can be monitored (resmon_process_check): 0, or prints one
 * line with the library's words and returns EXIT_USAGE (no such process, a
 * kernel thread, already exited). */
int attach_check_target(pid_t pid);
/* Monitors o->pid until it exits, --duration passes, or a signal; returns 0
 * or EXIT_USAGE (printed) when the target cannot be monitored. */
int attach_process(const cli_options *o, outputs *out, run_result *r);

#endif
