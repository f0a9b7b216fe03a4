/*
 * json_text.h -- writing JSON text into a caller's buffer the snprintf way:
 * what fits is written (the writer NUL-terminates at its end), and len counts
 * what the whole text needs, so a caller may ask with cap 0 first.  Shared by
 * the summary's and the phases' writers (summary_json.c, phases_json.c).
 */
#ifndef RESMON_JSON_TEXT_H
#define RESMON_JSON_TEXT_H

#include <stddef.h>
#include <string.h>

typedef struct rm__json_text {
    char *buf;
    size_t cap;
    size_t len; /* the length the full text needs, even past cap */
} rm__json_text;

static inline void rm__json_put(rm__json_text *w, const char *text, size_t n)
{
    if (w->len < w->cap) {
        size_t room = w->cap - 1 - w->len;
        memcpy(w->buf + w->len, text, n < room ? n : room);
    }
    w->len += n;
}

#endif
