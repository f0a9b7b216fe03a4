/*
 * phases_json.c -- phases as a JSON array: each phase's name and start, then
 * its summary exactly as resmon_summary_to_json writes one (whatever keys
 * that writer has), so a phase never spells a metric key of its own.
 */
#include "json_number.h"
#include "json_text.h"
#include "resmon.h"
#include "struct_size.h"
#include "utf8.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIN_STRIDE (offsetof(resmon_phase, summary) + RM__SIZE_THROUGH(resmon_summary, peak_gpu_proc_mem_mb))

/* A JSON string: quotes, backslashes and control characters escaped, each
 * byte that is not well-formed UTF-8 as \ufffd. */
static void put_string(rm__json_text *w, const char *text, size_t max)
{
    char tmp[RESMON_PHASE_NAME_MAX];
    size_t len = strnlen(text, max - 1);
    memcpy(tmp, text, len);
    tmp[len] = '\0';
    rm__json_put(w, "\"", 1);
    const unsigned char *s = (const unsigned char *)tmp;
    for (size_t n; *s; s += n) {
        uint32_t cp;
        n = rm__utf8_sequence_length(s, &cp);
        if (n == 0) {
            rm__json_put(w, "\\ufffd", 6);
            n = 1;
        } else if (cp == '"' || cp == '\\') {
            char esc[2] = {'\\', (char)cp};
            rm__json_put(w, esc, 2);
        } else if (cp < 0x20) {
            char esc[8];
            snprintf(esc, sizeof esc, "\\u%04x", (unsigned)cp);
            rm__json_put(w, esc, 6);
        } else {
            rm__json_put(w, (const char *)s, n);
        }
    }
    rm__json_put(w, "\"", 1);
}

int resmon_phases_to_json(const resmon_phase *phases, size_t count, size_t stride, char *buf, size_t cap)
{
    if ((!phases && count) || (count && stride < MIN_STRIDE) || (!buf && cap))
        return -EINVAL;
    rm__json_text w = {buf, cap, 0};
    rm__json_put(&w, "[", 1);
    for (size_t i = 0; i < count; i++) {
        const resmon_phase *ph = (const resmon_phase *)((const unsigned char *)phases + i * stride);
        int len = resmon_summary_to_json(&ph->summary, NULL, 0);
        if (len < 2)
            return len < 0 ? len : -EINVAL;
        char *summary = malloc((size_t)len + 1);
        if (!summary)
            return -ENOMEM;
        resmon_summary_to_json(&ph->summary, summary, (size_t)len + 1);
        rm__json_put(&w, i ? ", {\"name\": " : "{\"name\": ", i ? 11 : 9);
        put_string(&w, ph->name, sizeof ph->name);
        char number[32];
        size_t n = rm__json_format_double(ph->start_sec, number);
        rm__json_put(&w, ", \"start_sec\": ", 15);
        rm__json_put(&w, number, n);
        rm__json_put(&w, ", ", 2);
        rm__json_put(&w, summary + 1, (size_t)len - 1); /* its keys and its closing brace */
        free(summary);
    }
    rm__json_put(&w, "]", 1);
    if (cap)
        buf[w.len < cap ? w.len : cap - 1] = '\0';
    return w.len > INT_MAX ? -ENOSPC : (int)w.len;
}
