/*
 * serve.c -- --serve HOST:PORT: GET /metrics for a Prometheus scraper
 * (libmicrohttpd).
 *
 * resmon binds the socket itself, so a port in use is reported with its
 * errno before the command starts, then hands it to libmicrohttpd, which
 * parses HTTP on its own thread.  Limits keep a hostile or broken client
 * from costing resmon memory or other clients their scrape: at most 64
 * connections, 32 KiB of request per connection (a 1 MB request line is
 * refused), and 10 s for an idle connection.  The sampler never waits for a
 * scrape: rendering copies the monitor's snapshot.
 *
 * Anyone who can reach HOST:PORT can read the metrics; there is no
 * authentication, so bind beyond 127.0.0.1 only on a trusted network.
 */
#include "exporters.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if RESMON_HAVE_MICROHTTPD
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

struct metrics_server {
    struct MHD_Daemon *daemon;
    exporters *ex;
};

static const char openmetrics_type[] = "application/openmetrics-text; version=1.0.0; charset=utf-8";
static const char prometheus_type[] = "text/plain; version=0.0.4; charset=utf-8";

static enum MHD_Result reply_text(struct MHD_Connection *c, unsigned status, const char *text)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
    enum MHD_Result rc = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return rc;
}

/* OpenMetrics when the scraper lists it (Prometheus does, first, when it
 * supports it); text 0.0.4 otherwise, which every scraper reads. */
static int wants_openmetrics(struct MHD_Connection *c)
{
    const char *accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
    return accept && strstr(accept, "application/openmetrics-text") != NULL;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_data_size,
                                  void **request_state)
{
    metrics_server *s = cls;
    (void)version, (void)upload_data, (void)upload_data_size, (void)request_state;
    if (strcmp(url, "/metrics") != 0)
        return reply_text(c, MHD_HTTP_NOT_FOUND, "not found: resmon serves /metrics\n");
    if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
        return reply_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed: use GET or HEAD\n");
    int openmetrics = wants_openmetrics(c);
    size_t len;
    char *text = exporters_render(s->ex, openmetrics ? RESMON_EXPOSITION_OPENMETRICS : RESMON_EXPOSITION_PROMETHEUS,
                                  &len);
    if (!text)
        return reply_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
    /* HEAD: libmicrohttpd sends the headers and Content-Length, not the body. */
    struct MHD_Response *r = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(text);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, openmetrics ? openmetrics_type : prometheus_type);
    enum MHD_Result rc = MHD_queue_response(c, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return rc;
}

/* Splits "HOST:PORT" (HOST may be "[v6 address]") and binds a listening
 * socket.  Returns the fd or -1 with err. */
static int bind_address(const char *address, char *err, size_t errcap)
{
    const char *colon = strrchr(address, ':');
    if (!colon || colon == address || colon[1] == '\0') {
        snprintf(err, errcap, "--serve '%s': give HOST:PORT, such as 127.0.0.1:9464", address);
        return -1;
    }
    char host[256];
    size_t host_len = (size_t)(colon - address);
    if (address[0] == '[' && colon[-1] == ']') { /* [::1]:9464 */
        address++;
        host_len -= 2;
    }
    if (host_len >= sizeof host) {
        snprintf(err, errcap, "--serve: host name too long");
        return -1;
    }
    memcpy(host, address, host_len);
    host[host_len] = '\0';
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
    struct addrinfo *found;
    int gai = getaddrinfo(host, colon + 1, &hints, &found);
    if (gai != 0) {
        snprintf(err, errcap, "--serve '%s': %s", host, gai_strerror(gai));
        return -1;
    }
    int fd = socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int on = 1;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) != 0 ||
        bind(fd, found->ai_addr, found->ai_addrlen) != 0 || listen(fd, 64) != 0) {
        snprintf(err, errcap, "--serve %s:%s: %s", host, colon + 1, strerror(errno));
        if (fd >= 0)
            close(fd);
        fd = -1;
    }
    freeaddrinfo(found);
    return fd;
}

metrics_server *metrics_server_start(const char *address, exporters *ex, char *err, size_t errcap)
{
    int fd = bind_address(address, err, errcap);
    if (fd < 0)
        return NULL;
    metrics_server *s = calloc(1, sizeof *s);
    if (!s) {
        close(fd);
        snprintf(err, errcap, "--serve: out of memory");
        return NULL;
    }
    s->ex = ex;
    s->daemon = MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD, 0, NULL, NULL, on_request, s,
                                 MHD_OPTION_LISTEN_SOCKET, fd,
                                 MHD_OPTION_CONNECTION_LIMIT, (unsigned)64,
                                 MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)32768,
                                 MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10,
                                 MHD_OPTION_END);
    if (!s->daemon) {
        snprintf(err, errcap, "--serve %s: cannot start the HTTP server", address);
        close(fd);
        free(s);
        return NULL;
    }
    return s;
}

void metrics_server_stop(metrics_server *s)
{
    if (!s)
        return;
    MHD_stop_daemon(s->daemon); /* closes the listening socket it was given */
    free(s);
}

#else /* built without libmicrohttpd */

metrics_server *metrics_server_start(const char *address, exporters *ex, char *err, size_t errcap)
{
    (void)address, (void)ex;
    snprintf(err, errcap, "--serve is unavailable: resmon was built without libmicrohttpd");
    return NULL;
}

void metrics_server_stop(metrics_server *s)
{
    (void)s;
}

#endif
