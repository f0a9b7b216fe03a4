/*
 * summary_json.c -- resmon_summary to and from JSON.
 *
 * Writing is done by hand (a fixed set of keys in a fixed order, numbers that
 * round-trip); reading uses json-c, a well-kept parser, in strict mode with a
 * depth limit and an explicit length, so no byte past len is ever read.
 */
#include "json_number.h"
#include "resmon.h"

#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- writing ------------------------------------------------------------ */

typedef struct json_writer {
    char *buf;
    size_t cap;
    size_t len; /* the length the full text needs, even past cap */
} json_writer;

static void put(json_writer *w, const char *text, size_t n)
{
    if (w->len < w->cap) {
        size_t room = w->cap - 1 - w->len;
        memcpy(w->buf + w->len, text, n < room ? n : room);
    }
    w->len += n;
}

static void put_key(json_writer *w, const char *key)
{
    put(w, w->len > 1 ? ", \"" : "\"", w->len > 1 ? 3 : 1);
    put(w, key, strlen(key));
    put(w, "\": ", 3);
}

static void put_double(json_writer *w, const char *key, double value)
{
    char number[32];
    size_t n = rm__json_format_double(value, number);
    put_key(w, key);
    put(w, number, n);
}

int resmon_summary_to_json(const resmon_summary *s, char *buf, size_t cap)
{
    if (!s || (!buf && cap))
        return -EINVAL;
    json_writer w = {buf, cap, 0};
    put(&w, "{", 1);
    /* The seed's to_dict() keys, in its order. */
    put_double(&w, "peak_rss_mb", s->peak_rss_mb);
    put_double(&w, "mean_rss_mb", s->mean_rss_mb);
    put_double(&w, "peak_gpu_mem_mb", s->peak_gpu_mem_mb);
    put_double(&w, "mean_gpu_util", s->mean_gpu_util);
    put_double(&w, "memory_growth_mb", s->memory_growth_mb);
    char count[24];
    int count_len = snprintf(count, sizeof count, "%llu", (unsigned long long)s->num_samples);
    put_key(&w, "num_samples");
    put(&w, count, (size_t)count_len);
    put_double(&w, "duration_sec", s->duration_sec);
    if (!isnan(s->mean_gpu_clock_mhz))
        put_double(&w, "mean_gpu_clock_mhz", s->mean_gpu_clock_mhz);
    if (!isnan(s->mean_gpu_power_w))
        put_double(&w, "mean_gpu_power_w", s->mean_gpu_power_w);
    /* Beyond the seed, only when known. */
    if (isfinite(s->hwm_rss_mb) && s->hwm_scope != RESMON_HWM_UNKNOWN) {
        put_double(&w, "hwm_rss_mb", s->hwm_rss_mb);
        put_key(&w, "hwm_scope");
        if (s->hwm_scope == RESMON_HWM_WINDOW)
            put(&w, "\"window\"", 8);
        else
            put(&w, "\"lifetime\"", 10);
    }
    put(&w, "}", 1);
    if (cap)
        buf[w.len < cap ? w.len : cap - 1] = '\0';
    return w.len > INT_MAX ? -ENOSPC : (int)w.len;
}

/* ---- reading ------------------------------------------------------------ */

#define MAX_JSON_DEPTH 64

static int fail(char *err, size_t errcap, const char *fmt, ...)
{
    if (err && errcap) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errcap, fmt, ap);
        va_end(ap);
    }
    return -EINVAL;
}

typedef enum key_presence { OPTIONAL, REQUIRED } key_presence;

/* Reads a finite number (integer or float) at key; null or absent leaves
 * NAN when optional. */
static int read_number(struct json_object *root, const char *key, key_presence presence,
                       double *out, char *err, size_t errcap)
{
    struct json_object *value;
    if (!json_object_object_get_ex(root, key, &value) || value == NULL) {
        if (presence == REQUIRED)
            return fail(err, errcap, "missing required key \"%s\"", key);
        *out = NAN;
        return 0;
    }
    enum json_type type = json_object_get_type(value);
    if (type != json_type_double && type != json_type_int)
        return fail(err, errcap, "key \"%s\": expected a number, got %s", key,
                    json_type_to_name(type));
    double number = json_object_get_double(value);
    if (!isfinite(number))
        return fail(err, errcap, "key \"%s\": number out of range", key);
    *out = number;
    return 0;
}

static int read_count(struct json_object *root, const char *key, uint64_t *out, char *err,
                      size_t errcap)
{
    struct json_object *value;
    if (!json_object_object_get_ex(root, key, &value) || value == NULL)
        return fail(err, errcap, "missing required key \"%s\"", key);
    enum json_type type = json_object_get_type(value);
    if (type == json_type_int) {
        errno = 0;
        if (json_object_get_int64(value) < 0)
            return fail(err, errcap, "key \"%s\": expected a non-negative integer", key);
        *out = json_object_get_uint64(value);
        return 0;
    }
    if (type == json_type_double) {
        double number = json_object_get_double(value);
        if (!isfinite(number) || number < 0 || number != floor(number) || number >= 0x1p64)
            return fail(err, errcap, "key \"%s\": expected a non-negative integer", key);
        *out = (uint64_t)number;
        return 0;
    }
    return fail(err, errcap, "key \"%s\": expected an integer, got %s", key,
                json_type_to_name(type));
}

static int read_hwm_scope(struct json_object *root, resmon_hwm_scope *out, char *err,
                          size_t errcap)
{
    struct json_object *value;
    *out = RESMON_HWM_UNKNOWN;
    if (!json_object_object_get_ex(root, "hwm_scope", &value) || value == NULL)
        return 0;
    const char *text = json_object_is_type(value, json_type_string) ? json_object_get_string(value) : "";
    if (strcmp(text, "window") == 0)
        *out = RESMON_HWM_WINDOW;
    else if (strcmp(text, "lifetime") == 0)
        *out = RESMON_HWM_LIFETIME;
    else
        return fail(err, errcap, "key \"hwm_scope\": expected \"window\" or \"lifetime\"");
    return 0;
}

static int summary_from_object(struct json_object *root, resmon_summary *s, char *err,
                               size_t errcap)
{
    memset(s, 0, sizeof *s);
    int rc = 0;
    if (rc == 0) rc = read_number(root, "peak_rss_mb", REQUIRED, &s->peak_rss_mb, err, errcap);
    if (rc == 0) rc = read_number(root, "mean_rss_mb", REQUIRED, &s->mean_rss_mb, err, errcap);
    if (rc == 0) rc = read_number(root, "peak_gpu_mem_mb", OPTIONAL, &s->peak_gpu_mem_mb, err, errcap);
    if (rc == 0) rc = read_number(root, "mean_gpu_util", OPTIONAL, &s->mean_gpu_util, err, errcap);
    if (rc == 0) rc = read_number(root, "memory_growth_mb", REQUIRED, &s->memory_growth_mb, err, errcap);
    if (rc == 0) rc = read_count(root, "num_samples", &s->num_samples, err, errcap);
    if (rc == 0) rc = read_number(root, "duration_sec", REQUIRED, &s->duration_sec, err, errcap);
    if (rc == 0) rc = read_number(root, "mean_gpu_clock_mhz", OPTIONAL, &s->mean_gpu_clock_mhz, err, errcap);
    if (rc == 0) rc = read_number(root, "mean_gpu_power_w", OPTIONAL, &s->mean_gpu_power_w, err, errcap);
    if (rc == 0) rc = read_number(root, "hwm_rss_mb", OPTIONAL, &s->hwm_rss_mb, err, errcap);
    if (rc == 0) rc = read_hwm_scope(root, &s->hwm_scope, err, errcap);
    if (rc == 0 && isnan(s->hwm_rss_mb) != (s->hwm_scope == RESMON_HWM_UNKNOWN))
        rc = fail(err, errcap, "keys \"hwm_rss_mb\" and \"hwm_scope\" must appear together");
    /* Not part of the serialised form: recomputable only from samples. */
    s->mean_cpu_percent = s->peak_cpu_percent = s->cpu_time_sec = NAN;
    return rc;
}

static int is_json_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

int resmon_summary_from_json(const char *json, size_t len, resmon_summary *out, char *err,
                             size_t errcap)
{
    if (err && errcap)
        err[0] = '\0';
    if (!out || (!json && len))
        return fail(err, errcap, "invalid argument");
    if (len > INT_MAX)
        return fail(err, errcap, "input too large (%zu bytes)", len);

    struct json_tokener *tok = json_tokener_new_ex(MAX_JSON_DEPTH);
    if (!tok) {
        fail(err, errcap, "out of memory");
        return -ENOMEM;
    }
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
    struct json_object *root = json_tokener_parse_ex(tok, json ? json : "", (int)len);
    enum json_tokener_error jerr = json_tokener_get_error(tok);
    size_t end = json_tokener_get_parse_end(tok);
    json_tokener_free(tok);

    int rc = 0;
    if (jerr == json_tokener_continue) {
        rc = fail(err, errcap, "malformed JSON: unexpected end of input at byte %zu", len);
    } else if (jerr != json_tokener_success || !root) {
        rc = fail(err, errcap, "malformed JSON at byte %zu: %s", end, json_tokener_error_desc(jerr));
    } else {
        size_t i = end;
        while (i < len && is_json_space(json[i]))
            i++;
        if (i < len)
            rc = fail(err, errcap, "trailing text at byte %zu", i);
        else if (!json_object_is_type(root, json_type_object))
            rc = fail(err, errcap, "expected a JSON object, got %s",
                      json_type_to_name(json_object_get_type(root)));
    }
    resmon_summary parsed;
    if (rc == 0)
        rc = summary_from_object(root, &parsed, err, errcap);
    json_object_put(root);
    if (rc == 0)
        *out = parsed;
    return rc;
}
