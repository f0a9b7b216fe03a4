/*
 * serve.c -- --serve HOST:PORT: GET /metrics for a Prometheus scraper
 * (libmicrohttpd, loaded only when --serve is given).
 *
 * resmon binds the socket itself, so a port in use is reported with its
 * errno before the command starts, then hands it to libmicrohttpd, which
 * parses HTTP on its own thread.  Limits keep a hostile or broken client
 * from costing resmon memory or other clients their scrape: 32 KiB of
 * request per connection (a 1 MB request line is refused), 10 s for an idle
 * connection, and at most SERVE_MAX_CONNECTIONS connections, of which at
 * most SERVE_MAX_PER_ADDRESS from one client address.  Slow clients
 * (slowloris: a request trickled a byte at a time, which resets any idle
 * timeout) cannot keep a scraper out: when a new connection would pass
 * either bound, the connection idle the longest -- one without a request in
 * progress, from that address first -- is shut down to make room, and one
 * idle for more than 10 s since it connected or last finished a request is
 * shut down whenever a new one arrives.  The daemon is told to keep an
 * inter-thread channel (MHD_USE_ITC), so stopping is prompt even when the
 * connection limit has taken the listening socket out of its poll set.
 * The sampler never waits for a scrape: rendering copies the monitor's
 * snapshot.
 *
 * Anyone who can reach HOST:PORT can read the metrics; there is no
 * authentication, so bind beyond 127.0.0.1 only on a trusted network.
 */
#include "serve.h"
#include "optional_library.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if RESMON_HAVE_MICROHTTPD
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* libmicrohttpd, loaded when --serve is given (optional_library.c). */
static struct {
    __typeof__(MHD_create_response_from_buffer) *create_response_from_buffer;
    __typeof__(MHD_add_response_header) *add_response_header;
    __typeof__(MHD_queue_response) *queue_response;
    __typeof__(MHD_destroy_response) *destroy_response;
    __typeof__(MHD_lookup_connection_value) *lookup_connection_value;
    __typeof__(MHD_get_connection_info) *get_connection_info;
    __typeof__(MHD_start_daemon) *start_daemon;
    __typeof__(MHD_stop_daemon) *stop_daemon;
} mhd;
static const char *const mhd_names[] = {
    "MHD_create_response_from_buffer",
    "MHD_add_response_header",
    "MHD_queue_response",
    "MHD_destroy_response",
    "MHD_lookup_connection_value",
    "MHD_get_connection_info",
    "MHD_start_daemon",
    "MHD_stop_daemon",
};
static int load_microhttpd(char *err, size_t errcap)
{
    return OPTIONAL_LIBRARY_LOAD("--serve", "libmicrohttpd.so.12", "RESMON_MICROHTTPD_LIBRARY", mhd_names, &mhd, err,
                                 errcap);
}

#define SERVE_MAX_CONNECTIONS 64
#define SERVE_MAX_PER_ADDRESS 16
#define SERVE_IDLE_DEADLINE_SEC 10.0
/* libmicrohttpd's own limit has room for the connections shut down to make
 * room, until it has closed them. */
#define SERVE_DAEMON_LIMIT (2 * SERVE_MAX_CONNECTIONS)

/* What resmon knows of one connection.  Every callback runs on the daemon's
 * one thread (no thread per connection, no pool), so none needs a lock. */
typedef struct connection_record {
    int in_use, evicted, busy; /* busy: a request in progress */
    int fd;
    struct sockaddr_storage address;
    double idle_since;         /* connected or last finished a request */
} connection_record;

struct metrics_server {
    struct MHD_Daemon *daemon;
    metrics_render_fn *render;
    void *render_user;
    connection_record records[SERVE_DAEMON_LIMIT];
};

static double now_sec(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Whether two client addresses are one host (the port aside). */
static int same_host(const struct sockaddr *a, const struct sockaddr *b)
{
    if (a->sa_family != b->sa_family)
        return 0;
    if (a->sa_family == AF_INET)
        return ((const struct sockaddr_in *)a)->sin_addr.s_addr == ((const struct sockaddr_in *)b)->sin_addr.s_addr;
    if (a->sa_family == AF_INET6)
        return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr, &((const struct sockaddr_in6 *)b)->sin6_addr,
                      sizeof(struct in6_addr)) == 0;
    return 0;
}

/* Shuts the connection down; libmicrohttpd sees its end and closes it. */
static void evict(connection_record *r)
{
    shutdown(r->fd, SHUT_RDWR);
    r->evicted = 1;
}

/* The idle connection (from host, when not NULL) idle the longest, or NULL. */
static connection_record *longest_idle(metrics_server *s, const struct sockaddr *host)
{
    connection_record *oldest = NULL;
    for (size_t i = 0; i < SERVE_DAEMON_LIMIT; i++) {
        connection_record *r = &s->records[i];
        if (r->in_use && !r->evicted && !r->busy && (!host || same_host((const struct sockaddr *)&r->address, host)) &&
            (!oldest || r->idle_since < oldest->idle_since))
            oldest = r;
    }
    return oldest;
}

/* Before libmicrohttpd takes a new connection: room is made for it within
 * the bounds, at the cost of the longest idle connections. */
static enum MHD_Result on_accept(void *cls, const struct sockaddr *address, socklen_t address_len)
{
    metrics_server *s = cls;
    (void)address_len;
    double now = now_sec();
    size_t total = 0, from_host = 0;
    for (size_t i = 0; i < SERVE_DAEMON_LIMIT; i++) {
        connection_record *r = &s->records[i];
        if (!r->in_use || r->evicted)
            continue;
        if (!r->busy && now - r->idle_since > SERVE_IDLE_DEADLINE_SEC) {
            evict(r); /* connected long ago, and still no (further) request */
            continue;
        }
        total++;
        from_host += same_host((const struct sockaddr *)&r->address, address);
    }
    if (from_host >= SERVE_MAX_PER_ADDRESS || total >= SERVE_MAX_CONNECTIONS) {
        connection_record *victim = longest_idle(s, from_host >= SERVE_MAX_PER_ADDRESS ? address : NULL);
        if (!victim)
            return MHD_NO; /* every slot is serving a request: refused */
        evict(victim);
    }
    return MHD_YES;
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    metrics_server *s = cls;
    if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
        connection_record *r = *socket_context;
        if (r)
            memset(r, 0, sizeof *r);
        return;
    }
    *socket_context = NULL;
    const union MHD_ConnectionInfo *fd_info = mhd.get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    const union MHD_ConnectionInfo *address_info = mhd.get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    for (size_t i = 0; i < SERVE_DAEMON_LIMIT && fd_info; i++) {
        connection_record *r = &s->records[i];
        if (r->in_use)
            continue;
        memset(r, 0, sizeof *r);
        r->in_use = 1;
        r->fd = fd_info->connect_fd;
        r->address.ss_family = AF_UNSPEC;
        if (address_info && address_info->client_addr) {
            const struct sockaddr *a = address_info->client_addr;
            memcpy(&r->address, a, a->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in));
        }
        r->idle_since = now_sec();
        *socket_context = r;
        return;
    }
}

static connection_record *record_of(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *info = mhd.get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info ? info->socket_context : NULL;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **request_state,
                         enum MHD_RequestTerminationCode toe)
{
    (void)cls, (void)request_state, (void)toe;
    connection_record *r = record_of(c);
    if (r) {
        r->busy = 0;
        r->idle_since = now_sec();
    }
}

static const char openmetrics_type[] = "application/openmetrics-text; version=1.0.0; charset=utf-8";
static const char prometheus_type[] = "text/plain; version=0.0.4; charset=utf-8";

static enum MHD_Result reply_text(struct MHD_Connection *c, unsigned status, const char *text)
{
    struct MHD_Response *r = mhd.create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
    if (!r)
        return MHD_NO;
    mhd.add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
        mhd.add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
    enum MHD_Result rc = mhd.queue_response(c, status, r);
    mhd.destroy_response(r);
    return rc;
}

/* OpenMetrics when the scraper lists it (Prometheus does, first, when it
 * supports it); text 0.0.4 otherwise, which every scraper reads. */
static int wants_openmetrics(struct MHD_Connection *c)
{
    const char *accept = mhd.lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
    return accept && strstr(accept, "application/openmetrics-text") != NULL;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_data_size,
                                  void **request_state)
{
    metrics_server *s = cls;
    (void)version, (void)upload_data, (void)upload_data_size, (void)request_state;
    connection_record *record = record_of(c);
    if (record)
        record->busy = 1; /* until on_completed */
    if (strcmp(url, "/metrics") != 0)
        return reply_text(c, MHD_HTTP_NOT_FOUND, "not found: resmon serves /metrics\n");
    if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
        return reply_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed: use GET or HEAD\n");
    int openmetrics = wants_openmetrics(c);
    size_t len;
    char *text = s->render(s->render_user,
                           openmetrics ? RESMON_EXPOSITION_OPENMETRICS : RESMON_EXPOSITION_PROMETHEUS, &len);
    if (!text)
        return reply_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
    /* HEAD: libmicrohttpd sends the headers and Content-Length, not the body. */
    struct MHD_Response *r = mhd.create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(text);
        return MHD_NO;
    }
    mhd.add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, openmetrics ? openmetrics_type : prometheus_type);
    enum MHD_Result rc = mhd.queue_response(c, MHD_HTTP_OK, r);
    mhd.destroy_response(r);
    return rc;
}

/* Whether a bound address is the wildcard (0.0.0.0 or ::). */
static int every_interface(const struct sockaddr *a)
{
    if (a->sa_family == AF_INET)
        return ((const struct sockaddr_in *)a)->sin_addr.s_addr == htonl(INADDR_ANY);
    if (a->sa_family == AF_INET6)
        return IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)a)->sin6_addr);
    return 0;
}

/* Splits "HOST:PORT" (HOST may be "[v6 address]") and binds a listening
 * socket.  Returns the fd or -1 with err. */
static int bind_address(const char *address, char *err, size_t errcap)
{
    const char *given = address;
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
    /* getaddrinfo takes "99999" and binds port 34463 (99999 mod 65536), "0"
     * a random one: only 1 to 65535, in decimal digits. */
    const char *port_text = colon + 1;
    long port = 0;
    for (const char *p = port_text; *p && port <= 65535; p++)
        port = *p >= '0' && *p <= '9' ? port * 10 + (*p - '0') : 65536;
    if (port < 1 || port > 65535 || strlen(port_text) > 5) {
        snprintf(err, errcap, "--serve '%s': the port must be a number from 1 to 65535", given);
        return -1;
    }
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
    if (fd >= 0 && every_interface(found->ai_addr))
        fprintf(stderr, "resmon: warning: --serve %s:%s listens on every network interface; anyone who can reach "
                "it reads the metrics (no authentication)\n", host, port_text);
    freeaddrinfo(found);
    return fd;
}

metrics_server *metrics_server_start(const char *address, metrics_render_fn *render, void *user, char *err,
                                     size_t errcap)
{
    if (load_microhttpd(err, errcap) < 0)
        return NULL;
    int fd = bind_address(address, err, errcap);
    if (fd < 0)
        return NULL;
    metrics_server *s = calloc(1, sizeof *s);
    if (!s) {
        close(fd);
        snprintf(err, errcap, "--serve: out of memory");
        return NULL;
    }
    s->render = render;
    s->render_user = user;
    s->daemon = mhd.start_daemon(MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ITC, 0, on_accept, s, on_request, s,
                                 MHD_OPTION_LISTEN_SOCKET, fd,
                                 MHD_OPTION_CONNECTION_LIMIT, (unsigned)SERVE_DAEMON_LIMIT,
                                 MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)32768,
                                 MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)SERVE_IDLE_DEADLINE_SEC,
                                 MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
                                 MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
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
    mhd.stop_daemon(s->daemon); /* closes the listening socket it was given */
    free(s);
}

#else /* built without libmicrohttpd */

metrics_server *metrics_server_start(const char *address, metrics_render_fn *render, void *user, char *err,
                                     size_t errcap)
{
    (void)address, (void)render, (void)user;
    snprintf(err, errcap, "--serve is unavailable: resmon was built without libmicrohttpd");
    return NULL;
}

void metrics_server_stop(metrics_server *s)
{
    (void)s;
}

#endif
