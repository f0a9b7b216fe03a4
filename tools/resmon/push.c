/*
 * push.c -- --push: PUT the exposition to a Prometheus Pushgateway (libcurl,
 * loaded only when --push is given).
 *
 * A batch job ends before a scraper comes by, so it pushes: the gateway keeps
 * the last push per group (job plus the user's labels) for Prometheus to
 * scrape.  PUT replaces the whole group, so a metric that became unknown does
 * not linger from an earlier push.  Every grouping value is sent base64url
 * encoded ("name@base64/..."), the gateway's one encoding that carries any
 * value, '/' and the empty string included.
 *
 * A push never changes the command's exit status and never waits longer than
 * the timeout: a dead or slow gateway is one line on stderr.
 */
#include "push.h"
#include "optional_library.h"
#include "text_output.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int push_url_check(const char *url, char *err, size_t errcap)
{
    /* libcurl would take ftp://, file://, smtp:// ... and fail at the first
     * push, after the command ran; and a URL without a scheme is a guess. */
    if (strncasecmp(url, "http://", 7) == 0 || strncasecmp(url, "https://", 8) == 0)
        return 0;
    char shown[256];
    push_url_redacted(url, shown, sizeof shown);
    snprintf(err, errcap, "--push '%s': give the Pushgateway's http:// or https:// URL", shown);
    return -1;
}

void push_url_redacted(const char *url, char *buf, size_t cap)
{
    /* userinfo is what lies between "//" and the first '@' before the path */
    const char *authority = strstr(url, "//");
    char *copy = NULL;
    if (authority) {
        authority += 2;
        size_t host_end = strcspn(authority, "/?#");
        const char *at = memchr(authority, '@', host_end);
        for (const char *p = at; p && (p = memchr(p + 1, '@', host_end - (size_t)(p - authority))) != NULL;)
            at = p; /* the last '@' of the authority ends the userinfo */
        if (at && (copy = malloc(strlen(url) + 4)) != NULL)
            sprintf(copy, "%.*s***%s", (int)(authority - url), url, at);
    }
    printable_copy(buf, cap, copy ? copy : url);
    free(copy);
}

#if RESMON_HAVE_CURL
#define CURL_DISABLE_TYPECHECK 1 /* calls go through pointers, not the checking macros */
#include <curl/curl.h>
#include <stdatomic.h>

/* libcurl, loaded when --push is given (optional_library.c). */
static struct {
    __typeof__(curl_global_init) *global_init;
    __typeof__(curl_global_cleanup) *global_cleanup;
    __typeof__(curl_easy_init) *easy_init;
    __typeof__(curl_easy_setopt) *easy_setopt;
    __typeof__(curl_easy_perform) *easy_perform;
    __typeof__(curl_easy_getinfo) *easy_getinfo;
    __typeof__(curl_easy_strerror) *easy_strerror;
    __typeof__(curl_easy_cleanup) *easy_cleanup;
    __typeof__(curl_slist_append) *slist_append;
    __typeof__(curl_slist_free_all) *slist_free_all;
    __typeof__(curl_url) *url;
    __typeof__(curl_url_set) *url_set;
    __typeof__(curl_url_cleanup) *url_cleanup;
    __typeof__(curl_url_strerror) *url_strerror;
} curl;
static const char *const curl_names[] = {
    "curl_global_init",
    "curl_global_cleanup",
    "curl_easy_init",
    "curl_easy_setopt",
    "curl_easy_perform",
    "curl_easy_getinfo",
    "curl_easy_strerror",
    "curl_easy_cleanup",
    "curl_slist_append",
    "curl_slist_free_all",
    "curl_url",
    "curl_url_set",
    "curl_url_cleanup",
    "curl_url_strerror",
};
static int load_curl(char *err, size_t errcap)
{
    return OPTIONAL_LIBRARY_LOAD("--push", "libcurl.so.4", "RESMON_CURL_LIBRARY", curl_names, &curl, err, errcap);
}

struct pusher {
    CURL *curl;
    char *url;
    char shown_url[512]; /* for messages: credentials redacted, printable */
    atomic_int abandon; /* pusher_abort (another thread): give up the transfer */
    struct curl_slist *headers;
    char reply[160]; /* the start of the gateway's answer, for the error line */
    size_t reply_len;
};

/* base64url of value, or "=" for the empty value as the gateway asks. */
static size_t base64url(const char *value, char *out)
{
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const unsigned char *in = (const unsigned char *)value;
    size_t n = strlen(value), o = 0;
    if (n == 0) {
        out[o++] = '=';
    }
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)in[i] << 16 | (i + 1 < n ? (unsigned)in[i + 1] << 8 : 0) | (i + 2 < n ? in[i + 2] : 0);
        out[o++] = alphabet[v >> 18 & 63];
        out[o++] = alphabet[v >> 12 & 63];
        out[o++] = i + 1 < n ? alphabet[v >> 6 & 63] : '=';
        out[o++] = i + 2 < n ? alphabet[v & 63] : '=';
    }
    out[o] = '\0';
    return o;
}

/* Appends "/name@base64/<value>" to url at *len (room checked by the caller). */
static void append_group(char *url, size_t *len, const char *name, const char *value)
{
    *len += (size_t)sprintf(url + *len, "/%s@base64/", name);
    *len += base64url(value, url + *len);
}

static char *group_url(const char *base, const char *job, const resmon_label *grouping, size_t count)
{
    size_t base_len = strlen(base);
    while (base_len && base[base_len - 1] == '/')
        base_len--;
    size_t room = base_len + sizeof "/metrics" + strlen(job) * 2 + 32;
    for (size_t i = 0; i < count; i++)
        room += strlen(grouping[i].name) + strlen(grouping[i].value) * 2 + 16;
    char *url = malloc(room);
    if (!url)
        return NULL;
    memcpy(url, base, base_len);
    size_t len = base_len;
    len += (size_t)sprintf(url + len, "/metrics");
    append_group(url, &len, "job", job);
    for (size_t i = 0; i < count; i++)
        append_group(url, &len, grouping[i].name, grouping[i].value);
    return url;
}

/* libcurl calls this about once a second or more often, connecting too. */
static int keep_going(void *user, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
    (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
    const pusher *p = user;
    return atomic_load(&p->abandon) ? 1 : 0;
}

void pusher_abort(pusher *p)
{
    if (p)
        atomic_store(&p->abandon, 1);
}

void pusher_resume(pusher *p)
{
    if (p)
        atomic_store(&p->abandon, 0);
}

static size_t keep_reply(char *data, size_t size, size_t n, void *user)
{
    pusher *p = user;
    size_t total = size * n, room = sizeof p->reply - 1 - p->reply_len;
    size_t take = total < room ? total : room;
    memcpy(p->reply + p->reply_len, data, take);
    p->reply_len += take;
    p->reply[p->reply_len] = '\0';
    return total; /* read the rest too, so the connection ends cleanly */
}

pusher *pusher_new(const char *base_url, const char *job, const resmon_label *grouping, size_t grouping_count,
                   double timeout_sec, char *err, size_t errcap)
{
    if (load_curl(err, errcap) < 0)
        return NULL;
    /* Called before any thread of resmon's starts, as curl_global_init wants. */
    if (curl.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        snprintf(err, errcap, "--push: cannot initialise libcurl");
        return NULL;
    }
    pusher *p = calloc(1, sizeof *p);
    if (!p) {
        curl.global_cleanup();
        snprintf(err, errcap, "--push: out of memory");
        return NULL;
    }
    if (!(p->curl = curl.easy_init()) || !(p->url = group_url(base_url, job, grouping, grouping_count)) ||
        !(p->headers = curl.slist_append(NULL, "Content-Type: text/plain; version=0.0.4; charset=utf-8"))) {
        snprintf(err, errcap, "--push: out of memory");
        pusher_free(p);
        return NULL;
    }
    push_url_redacted(p->url, p->shown_url, sizeof p->shown_url);
    long timeout_ms = (long)(timeout_sec * 1000.0);
    CURL *c = p->curl;
    curl.easy_setopt(c, CURLOPT_URL, p->url);
    curl.easy_setopt(c, CURLOPT_CUSTOMREQUEST, "PUT");
    curl.easy_setopt(c, CURLOPT_HTTPHEADER, p->headers);
    curl.easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl.easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
    curl.easy_setopt(c, CURLOPT_NOSIGNAL, 1L); /* pushes run on the exporter thread */
    curl.easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl.easy_setopt(c, CURLOPT_WRITEFUNCTION, keep_reply);
    curl.easy_setopt(c, CURLOPT_WRITEDATA, p);
    curl.easy_setopt(c, CURLOPT_XFERINFOFUNCTION, keep_going);
    curl.easy_setopt(c, CURLOPT_XFERINFODATA, p);
    curl.easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    curl.easy_setopt(c, CURLOPT_USERAGENT, "resmon/" RESMON_VERSION_STRING);
    /* The URL is the user's; a typo should fail here, not at the first push. */
    CURLU *parsed = curl.url();
    CURLUcode bad = parsed ? curl.url_set(parsed, CURLUPART_URL, p->url, 0) : CURLUE_OUT_OF_MEMORY;
    curl.url_cleanup(parsed);
    if (bad) {
        char shown[256];
        push_url_redacted(base_url, shown, sizeof shown);
        snprintf(err, errcap, "--push: invalid URL '%s': %s", shown, curl.url_strerror(bad));
        pusher_free(p);
        return NULL;
    }
    return p;
}

int pusher_push(pusher *p, const char *text, size_t len)
{
    p->reply_len = 0;
    p->reply[0] = '\0';
    curl.easy_setopt(p->curl, CURLOPT_POSTFIELDS, text);
    curl.easy_setopt(p->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    CURLcode rc = curl.easy_perform(p->curl);
    long status = 0;
    curl.easy_getinfo(p->curl, CURLINFO_RESPONSE_CODE, &status);
    if (rc == CURLE_OK && status >= 200 && status < 300)
        return 0;
    if (rc == CURLE_ABORTED_BY_CALLBACK && atomic_load(&p->abandon))
        return -1; /* given up for the final push, which reports */
    if (rc != CURLE_OK) {
        fprintf(stderr, "resmon: push to %s failed: %s\n", p->shown_url, curl.easy_strerror(rc));
    } else {
        /* The gateway's reply is anyone's bytes: shown escaped, first line only. */
        char shown[sizeof p->reply * 4];
        p->reply[strcspn(p->reply, "\r\n")] = '\0';
        printable_copy(shown, sizeof shown, p->reply);
        fprintf(stderr, "resmon: push to %s failed: HTTP %ld%s%s\n", p->shown_url, status, shown[0] ? ": " : "",
                shown);
    }
    return -1;
}

void pusher_free(pusher *p)
{
    if (!p)
        return;
    curl.slist_free_all(p->headers);
    if (p->curl)
        curl.easy_cleanup(p->curl);
    free(p->url);
    free(p);
    curl.global_cleanup();
}

#else /* built without libcurl */

pusher *pusher_new(const char *base_url, const char *job, const resmon_label *grouping, size_t grouping_count,
                   double timeout_sec, char *err, size_t errcap)
{
    (void)base_url, (void)job, (void)grouping, (void)grouping_count, (void)timeout_sec;
    snprintf(err, errcap, "--push is unavailable: resmon was built without libcurl");
    return NULL;
}

int pusher_push(pusher *p, const char *text, size_t len)
{
    (void)p, (void)text, (void)len;
    return -1;
}

void pusher_abort(pusher *p)
{
    (void)p;
}

void pusher_resume(pusher *p)
{
    (void)p;
}

void pusher_free(pusher *p)
{
    (void)p;
}

#endif
