/*
 * serve.h -- --serve HOST:PORT: an HTTP endpoint for Prometheus scrapers
 * (serve.c).  It knows nothing of what it serves: each scrape asks the
 * render callback for the exposition (exporters.c passes its own).
 */
#ifndef RESMON_SERVE_H
#define RESMON_SERVE_H

#include "resmon.h"

#include <stddef.h>

/* The exposition in format as a malloc'ed buffer the server frees, its
 * length in *len; NULL when out of memory.  Called on the server's thread. */
typedef char *metrics_render_fn(void *user, resmon_exposition_format format, size_t *len);

typedef struct metrics_server metrics_server;
/* Binds HOST:PORT and serves GET/HEAD /metrics on its own thread, each reply
 * from render(user, ...).  NULL with one sentence in err on failure. */
metrics_server *metrics_server_start(const char *address, metrics_render_fn *render, void *user, char *err,
                                     size_t errcap);
/* Stops serving and frees s.  Accepts NULL. */
void metrics_server_stop(metrics_server *s);

#endif
