/* Admin HTTP server on libevent's evhttp (docs/admin-api.md).
 *
 *   GET /healthz        "ok" (never needs the token)
 *   GET /metrics        Prometheus text
 *   GET /api/entities   {"time_ns":..., "entities":[...]} predicted to the request time
 *   GET /api/adapters   {"adapters":[{"name","type","state","peer","counters":{...}}]}
 *   GET /               the web inspector page; /inspector/<file> its static assets
 *   GET /events         Server-Sent Events for the inspector (gateway/inspector.h)
 *   POST /api/reload    re-read the configuration (gateway/reload.c: xg_admin_reload)
 *
 * With a token configured (admin.token_file or XRGATE_ADMIN_TOKEN), every path but /healthz, the
 * inspector page `/` and its static assets (code only, no data) needs `Authorization: Bearer
 * <token>` (scheme case-insensitive, compared in constant time) and answers 401 otherwise;
 * `/events` also accepts `?token=<token>` (EventSource cannot set headers). Without a token,
 * every path but /healthz checks the Host header (gateway/admin_auth.h: DNS rebinding) and
 * answers 403 to a name that is not this gateway's. A request target that is not a valid URI
 * gets 400. Every response carries `X-Content-Type-Options: nosniff`; error bodies never echo
 * the request. Connections: gateway/admin_conn.h (cap, request deadline).
 *
 * With admin.tls {cert, key} the same API is served over TLS only (HTTPS): see "TLS front"
 * gateway/admin_tls.c (the core TLS layer terminates TLS and proxies plaintext to evhttp). */
#include <errno.h>
#include <inttypes.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>
#include <event2/util.h>
#include <jansson.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/clock/clock.h"
#include "core/table/names.h"
#include "core/net/net.h"
#include "core/net/resolve.h"
#include "core/net/tls.h"
#include "gateway/admin_auth.h"
#include "gateway/admin_conn.h"
#include "gateway/admin_metrics.h"
#include "gateway/admin_tls.h"
#include "gateway/calib.h"
#include "gateway/gateway.h"
#include "gateway/gateway_int.h"
#include "gateway/inspector.h"

#define COMPONENT "admin"

/* Peer-triggered lines of the admin server (one admin server per process). */
static struct xg_log_limit bad_uri_lim, bad_host_lim, bad_host_form_lim;

static void send_text(struct evhttp_request *req, int code, const char *reason, const char *ctype,
                      const char *text)
{
    struct evbuffer *b = evbuffer_new();
    evbuffer_add(b, text, strlen(text));
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", ctype);
    evhttp_send_reply(req, code, reason, b);
    evbuffer_free(b);
}

static void send_json(struct evhttp_request *req, json_t *j)
{
    char *s = json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(9));
    json_decref(j);
    if (!s) {
        send_text(req, 500, "Internal Server Error", "text/plain", "out of memory\n");
        return;
    }
    struct evbuffer *b = evbuffer_new();
    evbuffer_add_reference(b, s, strlen(s), (evbuffer_ref_cleanup_cb)(void (*)(void))free, NULL);
    struct evkeyvalq *h = evhttp_request_get_output_headers(req);
    evhttp_add_header(h, "Content-Type", "application/json");
    evhttp_add_header(h, "Cache-Control", "no-store");
    evhttp_send_reply(req, 200, "OK", b);
    evbuffer_free(b);
}

/* A JSON string, never NULL: bytes that are not UTF-8 become U+FFFD (jansson refuses such a
 * string, and the key would then be dropped without a word: issue 30 item 4). */
static json_t *jstr(const char *s)
{
    if (!s) s = "";
    size_t n = strlen(s);
    if (xg_utf8_valid(s, n)) return json_stringn(s, n);
    char *t = malloc(3 * n + 1);
    json_t *j = t ? json_stringn(t, xg_utf8_repair(t, s, n)) : NULL;
    free(t);
    return j;
}

/* Set key of object o to v: a key is never dropped silently (a value that could not be built,
 * out of memory, is null and logged). */
static void set(json_t *o, const char *key, json_t *v)
{
    if (!v) {
        XG_WARN("admin", "JSON key '%s': value could not be built (out of memory): null", key);
        v = json_null();
    }
    if (json_object_set_new(o, key, v)) XG_WARN("admin", "JSON key '%s' could not be set", key);
}

static json_t *vec3(struct xg_vec3 v)
{
    return json_pack("[fff]", v.x, v.y, v.z);
}

struct ent_ctx {
    struct xg_gateway *gw;
    json_t *list;
    int64_t now;
};

static int entity_visit(void *user, const struct xg_entity *e, const struct xg_pose *p)
{
    struct ent_ctx *c = user;
    struct xg_entity_info info;
    xg_entity_info(e, &info);
    json_t *o = json_object();
    set(o, "id", json_integer(xg_entity_id(e)));
    set(o, "name", jstr(xg_entity_name(e)));
    set(o, "kind", jstr(xg_kind_name(xg_entity_kind(e))));
    set(o, "origin", jstr(c->gw->adapters[xg_entity_origin(e)]->a.name));
    if (xg_entity_origin_gateway(e)[0]) set(o, "origin_gateway", jstr(xg_entity_origin_gateway(e)));
    set(o, "source", jstr(xg_entity_source(e)));
    const char *parent = xg_table_parent_name(c->gw->table, e);
    if (parent) set(o, "parent", jstr(parent));
    set(o, "position", vec3(p->position));
    set(o, "orientation",
        json_pack("[ffff]", p->orientation.x, p->orientation.y, p->orientation.z,
                  p->orientation.w));
    set(o, "velocity", vec3(p->velocity));
    set(o, "angular_velocity", vec3(p->angular_velocity));
    set(o, "velocity_estimated", json_boolean(info.velocity_estimated));
    set(o, "angular_velocity_estimated", json_boolean(info.angular_velocity_estimated));
    set(o, "quality", jstr(xg_quality_name(p->quality)));
    set(o, "active", json_boolean(p->active));
    /* the sample's age at the time asked for: 0 when asked for a time before the sample (a past
     * t_ns answered from the history), never negative (docs/admin-api.md) */
    set(o, "age_ms",
        json_real(c->now > p->sample_ns ? (double)(c->now - p->sample_ns) * 1e-6 : 0.0));
    set(o, "sample_ns", json_integer(p->sample_ns));
    set(o, "rate_hz", json_real(info.interval_s > 0 ? 1.0 / info.interval_s : 0.0));
    set(o, "samples", json_integer((json_int_t)info.samples));
    if (info.last_flags & XG_SAMPLE_SCALE) set(o, "scale", vec3(p->scale));
    json_t *extra = json_object();
    const uint8_t *buttons;
    const double *analogs;
    int nb = xg_entity_buttons(e, &buttons), na = xg_entity_analogs(e, &analogs);
    if (nb) {
        json_t *b = json_array();
        for (int i = 0; i < nb; i++)
            json_array_append_new(b, json_integer(buttons[i]));
        set(extra, "buttons", b);
    }
    if (na) {
        json_t *a = json_array();
        for (int i = 0; i < na; i++)
            json_array_append_new(a, json_real(analogs[i]));
        set(extra, "analogs", a);
    }
    set(o, "extra", extra);
    json_array_append_new(c->list, o);
    return 0;
}

/* GET /api/entities[?t_ns=T]: poses predicted to now, or to gateway-clock time T (ns, the
 * clock of "time_ns" and "sample_ns"; a past T is answered from the history: EXACT at a
 * sample's capture time, INTERPOLATED between two). */
static void handle_entities(struct xg_gateway *gw, struct evhttp_request *req)
{
    int64_t now = xg_clock_mono_ns(), at = now;
    struct evkeyvalq q;
    const char *uq = evhttp_uri_get_query(evhttp_request_get_evhttp_uri(req));
    if (uq && evhttp_parse_query_str(uq, &q) == 0) {
        const char *t = evhttp_find_header(&q, "t_ns");
        char *end = NULL;
        long long v = t ? strtoll(t, &end, 10) : 0;
        bool bad = t && (!*t || *end || v <= 0);
        evhttp_clear_headers(&q);
        if (bad) {
            send_text(req, 400, "Bad Request", "text/plain",
                      "400 t_ns must be a positive integer (gateway clock, ns)\n");
            return;
        }
        if (t) at = v;
    }
    struct ent_ctx c = {gw, json_array(), at};
    xg_table_foreach(gw->table, -1, c.now, entity_visit, &c);
    json_t *root = json_object();
    set(root, "time_ns", json_integer(c.now));
    set(root, "entities", c.list);
    send_json(req, root);
}

static void handle_adapters(struct xg_gateway *gw, struct evhttp_request *req)
{
    json_t *list = json_array();
    for (int i = 0; i < gw->n_adapters; i++) {
        struct xg_gw_adapter *ga = gw->adapters[i];
        if (!ga) continue; /* a hole left by a reload */
        struct xg_status st = {.state = ga->started ? "running" : "stopped"};
        if (ga->a.ops->status) ga->a.ops->status(&ga->a, &st);
        json_t *o = json_object();
        set(o, "name", jstr(ga->a.name));
        set(o, "type", jstr(ga->a.ops->type));
        set(o, "state", jstr(st.state ? st.state : "running"));
        set(o, "peer", jstr(st.peer));
        if (st.client) set(o, "last_error", jstr(st.last_error));
        set(o, "frame", jstr(ga->a.frame->name));
        set(o, "sink", json_boolean(ga->a.ops->is_sink));
        if (ga->a.ops->is_sink) set(o, "rate_hz", json_real(ga->a.rate_hz));
        json_t *cnt = json_object();
        const struct xg_table_stats *ts = xg_table_stats(gw->table);
        set(cnt, "samples_in", json_integer((json_int_t)ts->samples_in[i]));
        set(cnt, "samples_out", json_integer((json_int_t)ga->a.samples_out));
        set(cnt, "drops",
            json_integer((json_int_t)(ga->a.drops + ts->dropped_backwards[i] + ts->rejected[i])));
        set(cnt, "errors", json_integer((json_int_t)ga->a.errors));
        set(cnt, "entities_refused", json_integer((json_int_t)ts->refused[i]));
        set(cnt, "clock_steps", json_integer((json_int_t)ga->a.clock_steps));
        for (int k = 0; k < st.n_counters; k++) {
            double v = st.counters[k].value;
            set(cnt, st.counters[k].name,
                v == floor(v) && fabs(v) < 9e15 ? json_integer((json_int_t)v) : json_real(v));
        }
        set(o, "counters", cnt);
        json_array_append_new(list, o);
    }
    json_t *root = json_object();
    set(root, "adapters", list);
    send_json(req, root);
}

/* GET /api/sdp/<adapter>: the session description of an adapter that has one (RTP). */
static void handle_sdp(struct xg_gateway *gw, struct evhttp_request *req, const char *name)
{
    for (int i = 0; i < gw->n_adapters; i++) {
        struct xg_gw_adapter *ga = gw->adapters[i];
        if (!ga || strcmp(ga->a.name, name)) continue;
        if (!ga->a.ops->sdp) {
            send_text(req, 404, "Not Found", "text/plain",
                      "404 this adapter has no session description\n");
            return;
        }
        char buf[4096];
        int n = ga->a.ops->sdp(&ga->a, buf, sizeof buf);
        if (n < 0) {
            char msg[128];
            snprintf(msg, sizeof msg, "500 cannot describe the session: %s\n", strerror(-n));
            send_text(req, 500, "Internal Server Error", "text/plain", msg);
            return;
        }
        send_text(req, 200, "OK", "application/sdp", buf);
        return;
    }
    send_text(req, 404, "Not Found", "text/plain", "404 no such adapter\n");
}

static void handle_metrics(struct xg_gateway *gw, struct evhttp_request *req)
{
    struct evbuffer *b = evbuffer_new();
    xg_admin_metrics_render(gw, b);
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
                      "text/plain; version=0.0.4; charset=utf-8");
    evhttp_send_reply(req, 200, "OK", b);
    evbuffer_free(b);
}

/* "ip:port" of the client for log lines ("via TLS" behind the TLS front: that one logs the
 * TLS peer itself). */
static const char *req_peer(struct xg_gateway *gw, struct evhttp_request *req, char *buf,
                            size_t size)
{
    struct evhttp_connection *evcon = evhttp_request_get_connection(req);
    char *addr = NULL;
    ev_uint16_t port = 0;
    if (evcon) evhttp_connection_get_peer(evcon, &addr, &port);
    if (gw->admin_tls)
        snprintf(buf, size, "(via the TLS front)");
    else
        snprintf(buf, size, strchr(addr ? addr : "", ':') ? "[%s]:%u" : "%s:%u", addr ? addr : "?",
                 port);
    return buf;
}

static void handle(struct evhttp_request *req, void *arg)
{
    struct xg_gateway *gw = arg;
    char peer[96];
    xg_admin_conn_request(gw, req);
    struct evkeyvalq *out = evhttp_request_get_output_headers(req);
    evhttp_add_header(out, "X-Content-Type-Options", "nosniff");
    const char *uri = evhttp_request_get_uri(req);
    /* the strict parser: evhttp's own (lenient) one lets through what we do not want to route */
    struct evhttp_uri *u = uri ? evhttp_uri_parse(uri) : NULL;
    if (!u) {
        XG_INFO_PEER(&bad_uri_lim, COMPONENT,
                     "admin client %s: request target '%.200s' is not a valid URI: answered 400",
                     req_peer(gw, req, peer, sizeof peer), uri ? uri : "");
        send_text(req, 400, "Bad Request", "text/plain",
                  "400 bad request: the request target is not a valid URI (RFC 3986)\n");
        return;
    }
    const char *path = evhttp_uri_get_path(u);
    char p[256];
    snprintf(p, sizeof p, "%s", path && *path ? path : "/");
    /* an absolute-form target (RFC 9112 §3.2.2) names a host: checked below like Host */
    const char *uh = evhttp_uri_get_host(u);
    char uri_host[272];
    if (uh)
        snprintf(uri_host, sizeof uri_host, strchr(uh, ':') && uh[0] != '[' ? "[%.256s]" : "%.256s",
                 uh);
    evhttp_uri_free(u);

    if (gw->admin_tls && !xg_admin_tls_from_front(req)) {
        send_text(req, 403, "Forbidden", "text/plain",
                  "403 this gateway serves its admin API over TLS only\n");
        return;
    }
    if (!strcmp(p, "/healthz")) {
        if (evhttp_request_get_command(req) != EVHTTP_REQ_GET &&
            evhttp_request_get_command(req) != EVHTTP_REQ_HEAD)
            send_text(req, 405, "Method Not Allowed", "text/plain", "405 only GET is supported\n");
        else
            send_text(req, 200, "OK", "text/plain", "ok\n");
        return;
    }
    struct evkeyvalq *in = evhttp_request_get_input_headers(req);
    if (!gw->conf.admin_token[0]) {
        char host[128];
        const char *colon = strrchr(gw->admin_bound, ':');
        snprintf(host, sizeof host, "%.*s",
                 (int)(colon ? (size_t)(colon - gw->admin_bound) : strlen(gw->admin_bound)),
                 gw->admin_bound);
        const char *h = evhttp_find_header(in, "Host");
        int n_host = 0;
        for (struct evkeyval *kv = in->tqh_first; kv; kv = kv->next.tqe_next)
            if (!evutil_ascii_strcasecmp(kv->key, "Host")) n_host++;
        const char *why = xg_admin_host_form(n_host, uh ? uri_host : NULL, host);
        if (why) {
            /* RFC 9112 §3.2: which host the request is for cannot be told: not served */
            XG_WARN_PEER(&bad_host_form_lim, COMPONENT,
                         "admin client %s: %s%s%.200s%s: answered 400",
                         req_peer(gw, req, peer, sizeof peer), why, uh && n_host == 1 ? " ('" : "",
                         uh && n_host == 1 ? uri_host : "", uh && n_host == 1 ? "')" : "");
            char body[160];
            snprintf(body, sizeof body,
                     "400 bad request: %s (RFC 9112 section 3.2; without admin.token_file the Host "
                     "must name this gateway)\n",
                     why);
            send_text(req, 400, "Bad Request", "text/plain", body);
            return;
        }
        if (!xg_admin_host_ok(h, host)) {
            XG_WARN_PEER(&bad_host_lim, COMPONENT,
                         "admin client %s: Host '%.200s' is not an address of this gateway "
                         "(DNS rebinding?): answered 403",
                         req_peer(gw, req, peer, sizeof peer), h);
            send_text(req, 403, "Forbidden", "text/plain",
                      "403 forbidden: the Host header does not name this gateway. Use its IP "
                      "address, localhost or its host name, or configure admin.token_file "
                      "(docs/admin-api.md)\n");
            return;
        }
    }
    if (xg_inspector_is_asset(p) || !strcmp(p, "/")) {
        xg_inspector_serve(gw, req, p); /* static code, no data: no token needed */
        return;
    }
    if (gw->conf.admin_token[0]) {
        const char *auth = evhttp_find_header(in, "Authorization");
        if (!xg_admin_bearer_ok(auth, gw->conf.admin_token) &&
            !(!strcmp(p, "/events") && xg_inspector_query_token_ok(req, gw->conf.admin_token))) {
            evhttp_add_header(out, "WWW-Authenticate", "Bearer realm=\"xrgate\"");
            send_text(req, 401, "Unauthorized", "text/plain",
                      auth && strncasecmp(auth, "Bearer ", 7)
                          ? "401 unauthorized: the scheme must be Bearer ('Authorization: Bearer "
                            "<token>'), not the one given\n"
                      : auth ? "401 unauthorized: the bearer token does not match\n"
                             : "401 unauthorized: this endpoint needs 'Authorization: Bearer "
                               "<token>' (/events also takes ?token=<token>)\n");
            return;
        }
    }
    if (!strncmp(p, "/api/calibrations", 17) && (!p[17] || p[17] == '/')) {
        xg_calib_http(gw, req, p + 17, req_peer(gw, req, peer, sizeof peer));
        return;
    }
    if (!strcmp(p, "/api/reload")) {
        xg_admin_reload(gw, req, req_peer(gw, req, peer, sizeof peer));
        return;
    }
    if (evhttp_request_get_command(req) != EVHTTP_REQ_GET &&
        evhttp_request_get_command(req) != EVHTTP_REQ_HEAD) {
        send_text(req, 405, "Method Not Allowed", "text/plain", "405 only GET is supported\n");
        return;
    }
    if (!strcmp(p, "/metrics"))
        handle_metrics(gw, req);
    else if (!strcmp(p, "/api/entities"))
        handle_entities(gw, req);
    else if (!strcmp(p, "/api/adapters"))
        handle_adapters(gw, req);
    else if (!strncmp(p, "/api/sdp/", 9))
        handle_sdp(gw, req, p + 9);
    else if (!strcmp(p, "/events"))
        xg_inspector_events(gw, req);
    else
        send_text(req, 404, "Not Found", "text/plain",
                  "404 not found (try /, /events, /healthz, /metrics, /api/entities, "
                  "/api/adapters, /api/calibrations, POST /api/reload)\n");
}

int xg_admin_listen_error(const char *l, int e, struct xg_error *err)
{
    if (!e) e = EADDRINUSE;
    return xg_error_set(err, -EADDRINUSE, "admin: cannot listen on %s (%s)%s", l, strerror(e),
                        e == EADDRINUSE
                            ? ": another program, or another gateway, listens on this port (stop "
                              "it, or give admin.listen or XRGATE_ADMIN_LISTEN another port)"
                            : "");
}

int xg_admin_start(struct xg_gateway *gw, struct xg_error *err)
{
    const char *l = gw->conf.admin_listen;
    if (!l[0] || !strcmp(l, "off")) return 0;
    char host[128];
    int port;
    const char *colon = strrchr(l, ':');
    if (!colon || colon == l)
        return xg_error_set(err, -EINVAL, "admin listen '%s' must be host:port", l);
    snprintf(host, sizeof host, "%.*s", (int)(colon - l), l);
    if (host[0] == '[' && host[strlen(host) - 1] == ']') {
        memmove(host, host + 1, strlen(host));
        host[strlen(host) - 1] = '\0';
    }
    char *end;
    long pl = strtol(colon + 1, &end, 10);
    if (*end || pl < 0 || pl > 65535)
        return xg_error_set(err, -EINVAL, "admin listen '%s': bad port", l);
    port = (int)pl;
    /* numeric or /etc/hosts only: no DNS query on the reactor (core/net/resolve.h); evhttp then
     * binds the numeric address */
    struct sockaddr_storage a;
    socklen_t al;
    if (xg_resolve_listen_addr(l, NULL, -1, &a, &al, err))
        return xg_error_prefix(err, "admin listen: ");
    const void *ap = a.ss_family == AF_INET6 ? (const void *)&((struct sockaddr_in6 *)&a)->sin6_addr
                                             : (const void *)&((struct sockaddr_in *)&a)->sin_addr;
    if (!evutil_inet_ntop(a.ss_family, ap, host, sizeof host))
        return xg_error_set(err, -EINVAL, "admin listen '%s': bad address", l);
    gw->http = evhttp_new(gw->base);
    if (!gw->http) return xg_error_set(err, -ENOMEM, "out of memory");
    evhttp_set_gencb(gw->http, handle, gw);
    if (xg_admin_conns_init(gw, !gw->conf.admin_tls_cert[0]))
        return xg_error_set(err, -ENOMEM, "out of memory");
    evhttp_set_allowed_methods(gw->http, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD | EVHTTP_REQ_POST |
                                             EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE);
    evhttp_set_timeout(gw->http, 30);
    /* bounded requests: the API takes no bodies, and headers beyond 16 KiB are refused */
    evhttp_set_max_headers_size(gw->http, 16384);
    evhttp_set_max_body_size(gw->http, 65536);
    int fd;
    if (gw->conf.admin_tls_cert[0]) {
        int rc = xg_admin_tls_start(gw, (struct sockaddr *)&a, al, l, &fd, err);
        if (rc) return rc;
    } else {
        struct evhttp_bound_socket *bs =
            evhttp_bind_socket_with_handle(gw->http, host, (uint16_t)port);
        if (!bs) return xg_admin_listen_error(l, errno, err);
        fd = evhttp_bound_socket_get_fd(bs);
        gw->admin_listener = evhttp_bound_socket_get_listener(bs);
        if (xg_net_listener_guard(gw->admin_listener, COMPONENT)) {
            gw->admin_listener = NULL;
            return xg_error_set(err, -ENOMEM, "out of memory");
        }
    }
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    int bound_port = port;
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
        bound_port = ss.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
                                              : ntohs(((struct sockaddr_in *)&ss)->sin_port);
    snprintf(gw->admin_bound, sizeof gw->admin_bound, "%s:%d", host, bound_port);
    XG_INFO(COMPONENT, "admin API listening on %s://%s%s", gw->admin_tls ? "https" : "http",
            gw->admin_bound, gw->conf.admin_token[0] ? " (bearer token required)" : "");
    return 0;
}

void xg_admin_stop(struct xg_gateway *gw)
{
    xg_inspector_stop(gw);
    xg_admin_tls_free(gw->admin_tls);
    gw->admin_tls = NULL;
    xg_net_listener_unguard(gw->admin_listener); /* evhttp frees the listener */
    gw->admin_listener = NULL;
    if (gw->http) {
        evhttp_free(gw->http);
        gw->http = NULL;
    }
    xg_admin_conns_free(gw);
}
