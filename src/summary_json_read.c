/*
 * summary_json_read.c -- resmon_summary from JSON.
 *
 * Reading uses Jansson, a well-kept strict RFC 8259 parser, with an explicit
 * length, so no byte past len is ever read.  (json-c was tried first: even in
 * strict mode it accepts single quotes, "1." and raw control characters in
 * strings.)  Apart from the writer (summary_json.c), so that a program that
 * only writes JSON -- the resmon command -- neither links nor loads Jansson.
 */
#include "figure_fields.h"
#include "json_number.h"
#include "metric_fields.h"
#include "struct_size.h"
#include "resmon.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- reading ------------------------------------------------------------ */

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

static const char *type_name(const json_t *value)
{
    switch (json_typeof(value)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    case JSON_NULL: return "null";
    }
    return "an unknown type";
}

typedef enum key_presence { OPTIONAL, REQUIRED } key_presence;

/* Reads a number (integer or float) at key; null or absent leaves NAN when
 * optional.  Jansson already refuses NaN, Infinity and overflowing numbers. */
static int read_number(const json_t *root, const char *key, key_presence presence, double *out,
                       char *err, size_t errcap)
{
    const json_t *value = json_object_get(root, key);
    if (!value || json_is_null(value)) {
        if (presence == REQUIRED)
            return fail(err, errcap, value ? "key \"%s\": required, got null" : "missing required key \"%s\"", key);
        *out = NAN;
        return 0;
    }
    if (!json_is_number(value))
        return fail(err, errcap, "key \"%s\": expected a number, got %s", key, type_name(value));
    double number = json_number_value(value);
    if (!isfinite(number))
        return fail(err, errcap, "key \"%s\": number out of range", key);
    *out = number;
    return 0;
}

/* Reads a count that may be as large as a uint64_t.  Jansson's integers stop
 * at INT64_MAX, so the document is parsed with every number as a double,
 * which holds any count below 2^53 exactly; a larger one is read again from
 * its own digits in the text (rm__json_find_top_level_value), so what
 * resmon_summary_to_json writes -- up to 2^64-1 -- reads back unchanged. */
static int read_count(const json_t *root, const char *json, size_t len, const char *key, uint64_t *out,
                      char *err, size_t errcap)
{
    const json_t *value = json_object_get(root, key);
    if (!value)
        return fail(err, errcap, "missing required key \"%s\"", key);
    if (!json_is_number(value))
        return fail(err, errcap, "key \"%s\": expected an integer, got %s", key, type_name(value));
    double number = json_number_value(value);
    if (!isfinite(number) || number < 0 || number != floor(number))
        return fail(err, errcap, "key \"%s\": expected a non-negative integer", key);
    if (number < 0x1p53) {
        *out = (uint64_t)number;
        return 0;
    }
    size_t start, end;
    if (rm__json_find_top_level_value(json, len, key, &start, &end) < 0)
        return fail(err, errcap, "key \"%s\": cannot find the number's text", key);
    int rc = rm__json_parse_u64(json + start, end - start, out);
    if (rc == -EINVAL && number < 0x1p64) { /* "1e19", "9007199254740993.0": as exact as that double */
        *out = (uint64_t)number;
        rc = 0;
    }
    if (rc < 0)
        return fail(err, errcap, "key \"%s\": integer out of range (at most 18446744073709551615)", key);
    return 0;
}

/* Reads an optional string key that must be one of choices; *out gets the
 * matching value, or absent_value when the key is absent or null. */
static int read_choice(const json_t *root, const char *key, const char *const *choices, const int *values,
                       int absent_value, int *out, char *err, size_t errcap)
{
    const json_t *value = json_object_get(root, key);
    *out = absent_value;
    if (!value || json_is_null(value))
        return 0;
    const char *text = json_is_string(value) ? json_string_value(value) : "";
    for (size_t i = 0; choices[i]; i++)
        if (strcmp(text, choices[i]) == 0) {
            *out = values[i];
            return 0;
        }
    return fail(err, errcap, "key \"%s\": expected \"%s\" or \"%s\"", key, choices[0], choices[1]);
}

static int read_hwm_scope(const json_t *root, resmon_hwm_scope *out, char *err, size_t errcap)
{
    static const char *const choices[] = {"window", "lifetime", NULL};
    static const int values[] = {RESMON_HWM_WINDOW, RESMON_HWM_LIFETIME};
    int scope;
    int rc = read_choice(root, "hwm_scope", choices, values, RESMON_HWM_UNKNOWN, &scope, err, errcap);
    *out = (resmon_hwm_scope)scope;
    return rc;
}

static int read_energy_source(const json_t *root, resmon_energy_source *out, char *err, size_t errcap)
{
    static const char *const choices[] = {"counter", "integrated", NULL};
    static const int values[] = {RESMON_ENERGY_COUNTER, RESMON_ENERGY_INTEGRATED};
    int source;
    int rc = read_choice(root, "gpu_energy_source", choices, values, RESMON_ENERGY_UNKNOWN, &source, err, errcap);
    *out = (resmon_energy_source)source;
    return rc;
}

/* Reads the figures of a list (figure_fields.h) into s, each as its JSON
 * column says, with the keys that go with some of them. */
static int read_figures(const json_t *root, const char *json, size_t len, const rm__summary_figures *list,
                        resmon_summary *s, char *err, size_t errcap)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < list->count; i++) {
        const rm__summary_figure *f = &list->figures[i];
        void *at = (char *)s + f->offset;
        if (f->is_u64) {
            if (f->json == RM__FIGURE_JSON_REQUIRED || json_object_get(root, f->key))
                rc = read_count(root, json, len, f->key, at, err, errcap);
            continue;
        }
        key_presence presence = f->json == RM__FIGURE_JSON_REQUIRED ? REQUIRED : OPTIONAL;
        double value = NAN;
        rc = read_number(root, f->key, presence, &value, err, errcap);
        memcpy(at, &value, sizeof value);
        if (rc == 0 && f->json == RM__FIGURE_JSON_HWM) {
            rc = read_hwm_scope(root, &s->hwm_scope, err, errcap);
            if (rc == 0 && isnan(s->hwm_rss_mb) != (s->hwm_scope == RESMON_HWM_UNKNOWN))
                rc = fail(err, errcap, "keys \"hwm_rss_mb\" and \"hwm_scope\" must appear together");
        } else if (rc == 0 && f->json == RM__FIGURE_JSON_ENERGY) {
            rc = read_energy_source(root, &s->gpu_energy_source, err, errcap);
        }
    }
    return rc;
}

/* Since 0.4: the cgroup's figures, all optional; cgroup_version 1 or 2
 * when present (the other keys are unknown without it). */
static int read_cgroup(const json_t *root, const char *json, size_t len, resmon_summary *s, char *err,
                       size_t errcap)
{
    double version = NAN;
    int rc = read_number(root, "cgroup_version", OPTIONAL, &version, err, errcap);
    if (rc == 0 && !isnan(version) && version != 1 && version != 2)
        rc = fail(err, errcap, "key \"cgroup_version\" must be 1 or 2");
    s->cgroup_version = isnan(version) ? 0 : (int32_t)version;
    if (rc == 0)
        rc = read_figures(root, json, len, &rm__summary_figures_cgroup, s, err, errcap);
    return rc;
}

static int summary_from_object(const json_t *root, const char *json, size_t len, resmon_summary *s, char *err,
                               size_t errcap)
{
    memset(s, 0, sizeof *s);
    s->struct_size = sizeof *s;
    int rc = read_figures(root, json, len, &rm__summary_figures_base, s, err, errcap);
    for (size_t i = 0; rc == 0 && i < rm__metric_field_count; i++)
        rc = read_number(root, rm__metric_fields[i].summary_field, OPTIONAL, rm__summary_metric(s, &rm__metric_fields[i]),
                         err, errcap);
    if (rc == 0)
        rc = read_cgroup(root, json, len, s, err, errcap);
    return rc;
}

static int is_json_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

int resmon_summary_from_json(const char *json, size_t len, resmon_summary *out, size_t out_size, char *err,
                             size_t errcap)
{
    if (err && errcap)
        err[0] = '\0';
    if (!out || (!json && len) || out_size < RM__SIZE_THROUGH(resmon_summary, peak_gpu_proc_mem_mb))
        return fail(err, errcap, "invalid argument");
    /* What one call allocates grows with the input (Jansson builds the whole
     * tree: tens of bytes per value); a summary is a few hundred bytes. */
    if (len > RESMON_SUMMARY_JSON_MAX_BYTES) {
        fail(err, errcap, "input of %zu bytes is over the limit of %d bytes", len, RESMON_SUMMARY_JSON_MAX_BYTES);
        return -E2BIG;
    }
    /* Anything but an object is refused before a tree is built for it. */
    size_t first = 0;
    while (first < len && is_json_space(json[first]))
        first++;
    if (first < len && json[first] != '{') {
        unsigned char c = (unsigned char)json[first];
        if (c >= 0x20 && c < 0x7f)
            return fail(err, errcap, "expected a JSON object, found '%c' at byte %zu", c, first);
        return fail(err, errcap, "expected a JSON object, found byte 0x%02x at byte %zu", c, first);
    }

    json_error_t jerr;
    /* JSON_DISABLE_EOF_CHECK so that jerr.position tells where the value
     * ended and trailing text can be reported at its own offset;
     * JSON_DECODE_INT_AS_REAL so that an integer beyond int64 is a number,
     * not a syntax error (read_count reads counts exactly).  Without
     * JSON_ALLOW_NUL, NUL bytes and \u0000 are refused. */
    json_t *root = json_loadb(json ? json : "", len, JSON_DISABLE_EOF_CHECK | JSON_DECODE_INT_AS_REAL, &jerr);
    if (!root) {
        if (strstr(jerr.text, "end of file") || strstr(jerr.text, "premature end of input"))
            return fail(err, errcap, "malformed JSON: unexpected end of input at byte %zu", len);
        return fail(err, errcap, "malformed JSON at byte %d: %s", jerr.position, jerr.text);
    }
    size_t end = jerr.position > 0 ? (size_t)jerr.position : 0;
    while (end < len && is_json_space(json[end]))
        end++;
    int rc;
    resmon_summary parsed = {0}; /* filled by summary_from_object before use */
    if (end < len)
        rc = fail(err, errcap, "trailing text at byte %zu", end);
    else if (!json_is_object(root))
        rc = fail(err, errcap, "expected a JSON object, got %s", type_name(root));
    else
        rc = summary_from_object(root, json, len, &parsed, err, errcap);
    json_decref(root);
    if (rc == 0) {
        parsed.struct_size = rm__out_size(out_size, sizeof parsed);
        rm__copy_struct_out(out, out_size, &parsed, sizeof parsed);
    }
    return rc;
}
