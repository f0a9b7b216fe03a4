/*
 * command_exposition.h -- what the Prometheus outputs render: the library's
 * exposition of the monitor while it lives (a snapshot under the monitor's
 * lock), then of its final state and the final summary, which carries the
 * kernel's exact figures (wait4) the monitor cannot know; followed by the
 * series only the command knows (whether the command still runs, how it
 * ended, resmon's version, the phase).
 */
#ifndef RESMON_COMMAND_EXPOSITION_H
#define RESMON_COMMAND_EXPOSITION_H

#include "resmon.h"

#include <pthread.h>
#include <stddef.h>

typedef struct command_exposition {
    const resmon_label *labels; /* every series carries these (values valid UTF-8); set before the first render */
    size_t label_count;

    pthread_mutex_t lock; /* guards what renders: the monitor or the final state */
    const resmon_monitor *monitor;
    resmon_summary final;
    resmon_sample final_last;
    int have_final, have_final_last;
    char final_phase[RESMON_PHASE_NAME_MAX]; /* the last phase marked; "" without marks */
    int ended;               /* the command (or target) ended: not running any more */
    int have_exit, exit_status;
} command_exposition;

void command_exposition_init(command_exposition *ex);
void command_exposition_destroy(command_exposition *ex);
/* Renders from this monitor from now on.  Accepts NULL. */
void command_exposition_attach(command_exposition *ex, const resmon_monitor *m);
/* Before the monitor is freed: keeps its final state and lets go of it. */
void command_exposition_detach(command_exposition *ex, const resmon_monitor *m);
/* The run is over: final (NULL: keep what the monitor left) and, when
 * have_exit, the command's exit status as the shell sees it. */
void command_exposition_end(command_exposition *ex, const resmon_summary *final, int have_exit, int exit_status);
/* The current exposition in a malloc'ed, NUL-terminated buffer (the caller
 * frees), its length in *len; NULL when out of memory.  The server's render
 * callback (user: the command_exposition), the textfile's and the pushes'
 * text. */
char *command_exposition_render(void *user, resmon_exposition_format format, size_t *len);

#endif
