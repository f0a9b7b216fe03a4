/*
 * push.h -- --push URL: a Pushgateway client (push.c, libcurl loaded when
 * --push is given).
 */
#ifndef RESMON_PUSH_H
#define RESMON_PUSH_H

#include "resmon.h"

#include <stddef.h>

typedef struct pusher pusher;
pusher *pusher_new(const char *base_url, const char *job, const resmon_label *grouping, size_t grouping_count,
                   double timeout_sec, char *err, size_t errcap);
/* PUTs the text to the group; a failure is one line on stderr (the URL
 * without its credentials, the gateway's reply escaped), returned as -1 (it
 * never changes the command's exit status).  A push cut short by
 * pusher_abort says nothing. */
int pusher_push(pusher *p, const char *text, size_t len);
/* From another thread: makes the push in flight (and every later one, until
 * pusher_resume) give up within about a second. */
void pusher_abort(pusher *p);
void pusher_resume(pusher *p);
void pusher_free(pusher *p);

/* Whether url is one --push takes: http:// or https://.  0, or -1 with a
 * sentence in err. */
int push_url_check(const char *url, char *err, size_t errcap);
/* url for a message: any user:password@ replaced by "***@", then shown
 * printable (escape bytes as \xNN), into buf (cap bytes). */
void push_url_redacted(const char *url, char *buf, size_t cap);

#endif
