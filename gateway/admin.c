/* Admin HTTP server on libevent's evhttp (DESIGN §6 "Admin API").
 *
 *   GET /healthz        "ok" (never needs the token)
 *   GET /metrics        Prometheus text
 *   GET /api/entities   {"time_ns":..., "entities":[...]} predicted to the request time
 *   GET /api/adapters   {"adapters":[{"name","type","state","peer","counters":{...}}]}
 *   GET /               the web inspector page; /inspector/<file> its static assets
 *   GET /events         Server-Sent Events for the inspector (gateway/inspector.h)
 *
 * With a token configured (admin.token_file or XRGATE_ADMIN_TOKEN), every path but /healthz and
 * the inspector's static assets needs `Authorization: Bearer <token>` (compared in constant time)
 * and answers 401 otherwise; `/` and `/events` also accept `?token=<token>` (EventSource cannot
 * set headers). */
#include <errno.h>
#include <event2/buffer.h>
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
#include <sys/socket.h>

#include "core/clock.h"
#include "gateway/gateway.h"
#include "gateway/inspector.h"

#define COMPONENT "admin"

static bool ct_equal(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    unsigned char diff = (unsigned char)(la != lb);
    for (size_t i = 0; i < lb; i++)
        diff |= (unsigned char)(a[i < la ? i : 0] ^ b[i]);
    return diff == 0;
}

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
    json_t *o = json_object();
    json_object_set_new(o, "id", json_integer(e->id));
    json_object_set_new(o, "name", json_string(e->name));
    json_object_set_new(o, "kind", json_string(xg_kind_name(e->kind)));
    json_object_set_new(o, "origin", json_string(c->gw->adapters[e->origin]->a.name));
    if (e->origin_gateway[0])
        json_object_set_new(o, "origin_gateway", json_string(e->origin_gateway));
    json_object_set_new(o, "source", json_string(e->source));
    json_object_set_new(o, "position", vec3(p->position));
    json_object_set_new(o, "orientation",
                        json_pack("[ffff]", p->orientation.x, p->orientation.y, p->orientation.z,
                                  p->orientation.w));
    json_object_set_new(o, "velocity", vec3(p->velocity));
    json_object_set_new(o, "angular_velocity", vec3(p->angular_velocity));
    json_object_set_new(o, "velocity_estimated", json_boolean(e->velocity_estimated));
    json_object_set_new(o, "angular_velocity_estimated",
                        json_boolean(e->angular_velocity_estimated));
    json_object_set_new(o, "quality", json_string(xg_quality_name(p->quality)));
    json_object_set_new(o, "active", json_boolean(p->active));
    json_object_set_new(o, "age_ms", json_real((double)(c->now - p->sample_ns) * 1e-6));
    json_object_set_new(o, "sample_ns", json_integer(p->sample_ns));
    json_object_set_new(o, "rate_hz", json_real(e->interval_s > 0 ? 1.0 / e->interval_s : 0.0));
    json_object_set_new(o, "samples", json_integer((json_int_t)e->samples));
    if (e->last.flags & XG_SAMPLE_SCALE) json_object_set_new(o, "scale", vec3(p->scale));
    json_t *extra = json_object();
    if (e->n_buttons) {
        json_t *b = json_array();
        for (int i = 0; i < e->n_buttons; i++)
            json_array_append_new(b, json_integer(e->buttons[i]));
        json_object_set_new(extra, "buttons", b);
    }
    if (e->n_analogs) {
        json_t *a = json_array();
        for (int i = 0; i < e->n_analogs; i++)
            json_array_append_new(a, json_real(e->analogs[i]));
        json_object_set_new(extra, "analogs", a);
    }
    json_object_set_new(o, "extra", extra);
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
    json_object_set_new(root, "time_ns", json_integer(c.now));
    json_object_set_new(root, "entities", c.list);
    send_json(req, root);
}

static void handle_adapters(struct xg_gateway *gw, struct evhttp_request *req)
{
    json_t *list = json_array();
    for (int i = 0; i < gw->n_adapters; i++) {
        struct xg_gw_adapter *ga = gw->adapters[i];
        struct xg_status st = {.state = ga->started ? "running" : "stopped"};
        if (ga->a.ops->status) ga->a.ops->status(&ga->a, &st);
        json_t *o = json_object();
        json_object_set_new(o, "name", json_string(ga->a.name));
        json_object_set_new(o, "type", json_string(ga->a.ops->type));
        json_object_set_new(o, "state", json_string(st.state ? st.state : "running"));
        json_object_set_new(o, "peer", json_string(st.peer));
        json_object_set_new(o, "frame", json_string(ga->a.frame->name));
        json_object_set_new(o, "sink", json_boolean(ga->a.ops->is_sink));
        if (ga->a.ops->is_sink) json_object_set_new(o, "rate_hz", json_real(ga->a.rate_hz));
        json_t *cnt = json_object();
        const struct xg_table_stats *ts = xg_table_stats(gw->table);
        json_object_set_new(cnt, "samples_in", json_integer((json_int_t)ts->samples_in[i]));
        json_object_set_new(cnt, "samples_out", json_integer((json_int_t)ga->a.samples_out));
        json_object_set_new(
            cnt, "drops",
            json_integer((json_int_t)(ga->a.drops + ts->dropped_backwards[i] + ts->rejected[i])));
        json_object_set_new(cnt, "errors", json_integer((json_int_t)ga->a.errors));
        for (int k = 0; k < st.n_counters; k++) {
            double v = st.counters[k].value;
            json_object_set_new(cnt, st.counters[k].name,
                                v == floor(v) && fabs(v) < 9e15 ? json_integer((json_int_t)v)
                                                                : json_real(v));
        }
        json_object_set_new(o, "counters", cnt);
        json_array_append_new(list, o);
    }
    json_t *root = json_object();
    json_object_set_new(root, "adapters", list);
    send_json(req, root);
}

/* GET /api/sdp/<adapter>: the session description of an adapter that has one (RTP). */
static void handle_sdp(struct xg_gateway *gw, struct evhttp_request *req, const char *name)
{
    for (int i = 0; i < gw->n_adapters; i++) {
        struct xg_gw_adapter *ga = gw->adapters[i];
        if (strcmp(ga->a.name, name)) continue;
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

static void set_metric(struct xg_gateway *gw, const char *name, const char *help,
                       enum xg_metric_type type, const char *labels, double v)
{
    double *slot = xg_metrics_slot(gw->metrics, name, help, type, labels);
    if (slot) *slot = v;
}

static void handle_metrics(struct xg_gateway *gw, struct evhttp_request *req)
{
    const struct xg_table_stats *ts = xg_table_stats(gw->table);
    char lbl[256], esc[160];
    set_metric(gw, "xrgate_up", "1 while the gateway runs", XG_METRIC_GAUGE, NULL, 1);
    set_metric(gw, "xrgate_uptime_seconds", "Seconds since start", XG_METRIC_GAUGE, NULL,
               (double)(xg_clock_mono_ns() - gw->started_ns) * 1e-9);
    set_metric(gw, "xrgate_entities", "Entities in the table", XG_METRIC_GAUGE, NULL,
               (double)xg_table_count(gw->table));
    set_metric(gw, "xrgate_entities_created_total", "Entities created", XG_METRIC_COUNTER, NULL,
               (double)ts->created);
    set_metric(gw, "xrgate_entities_expired_total", "Entities removed after entity.expire_ms",
               XG_METRIC_COUNTER, NULL, (double)ts->expired);
    for (int q = 0; q < XG_QUALITY_COUNT; q++) {
        snprintf(lbl, sizeof lbl, "quality=\"%s\"", xg_quality_name((enum xg_quality)q));
        set_metric(gw, "xrgate_predictions_total", "Poses answered, by quality", XG_METRIC_COUNTER,
                   lbl, (double)ts->predictions[q]);
    }
    set_metric(gw, "xrgate_loop_lag_seconds", "Reactor lag of the last 100 ms timer",
               XG_METRIC_GAUGE, NULL, gw->loop_lag_s);
    set_metric(gw, "xrgate_loop_lag_max_seconds", "Largest reactor lag seen", XG_METRIC_GAUGE, NULL,
               gw->loop_lag_max_s);
    for (int i = 0; i < gw->n_adapters; i++) {
        struct xg_gw_adapter *ga = gw->adapters[i];
        snprintf(lbl, sizeof lbl, "adapter=\"%s\",type=\"%s\"",
                 xg_metrics_escape(ga->a.name, esc, sizeof esc), ga->a.ops->type);
        set_metric(gw, "xrgate_samples_in_total", "Samples accepted into the table, per origin",
                   XG_METRIC_COUNTER, lbl, (double)ts->samples_in[i]);
        set_metric(gw, "xrgate_samples_out_total", "Samples sent, per egress adapter",
                   XG_METRIC_COUNTER, lbl, (double)ga->a.samples_out);
        set_metric(gw, "xrgate_drops_total", "Samples or packets dropped, per adapter",
                   XG_METRIC_COUNTER, lbl, (double)ga->a.drops);
        set_metric(gw, "xrgate_samples_backwards_total",
                   "Samples dropped because their capture time did not advance", XG_METRIC_COUNTER,
                   lbl, (double)ts->dropped_backwards[i]);
        set_metric(gw, "xrgate_samples_rejected_total", "Samples with invalid values",
                   XG_METRIC_COUNTER, lbl, (double)ts->rejected[i]);
        set_metric(gw, "xrgate_adapter_errors_total", "Protocol and I/O errors, per adapter",
                   XG_METRIC_COUNTER, lbl, (double)ga->a.errors);
        if (ga->a.ops->is_sink)
            set_metric(gw, "xrgate_dirty_entities", "Entities waiting in a sink's dirty set",
                       XG_METRIC_GAUGE, lbl, (double)xg_table_dirty_count(gw->table, i));
        struct xg_status st = {.state = "running"};
        if (ga->a.ops->status) ga->a.ops->status(&ga->a, &st);
        for (int k = 0; k < st.n_counters; k++) {
            char l2[400];
            snprintf(l2, sizeof l2, "%s,counter=\"%s\"", lbl, st.counters[k].name);
            set_metric(gw, "xrgate_adapter_counter", "Adapter-specific counters", XG_METRIC_GAUGE,
                       l2, st.counters[k].value);
        }
    }
    struct evbuffer *b = evbuffer_new();
    xg_metrics_render(gw->metrics, b);
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
                      "text/plain; version=0.0.4; charset=utf-8");
    evhttp_send_reply(req, 200, "OK", b);
    evbuffer_free(b);
}

static void handle(struct evhttp_request *req, void *arg)
{
    struct xg_gateway *gw = arg;
    const char *uri = evhttp_request_get_uri(req);
    struct evhttp_uri *u = evhttp_uri_parse(uri);
    const char *path = u ? evhttp_uri_get_path(u) : NULL;
    char p[256];
    snprintf(p, sizeof p, "%s", path && *path ? path : "/");
    evhttp_uri_free(u);

    if (!strcmp(p, "/healthz")) {
        send_text(req, 200, "OK", "text/plain", "ok\n");
        return;
    }
    if (xg_inspector_is_asset(p)) {
        xg_inspector_serve(gw, req, p);
        return;
    }
    bool inspector = !strcmp(p, "/") || !strcmp(p, "/events");
    if (gw->conf.admin_token[0]) {
        const char *auth =
            evhttp_find_header(evhttp_request_get_input_headers(req), "Authorization");
        if ((!auth || strncmp(auth, "Bearer ", 7) || !ct_equal(auth + 7, gw->conf.admin_token)) &&
            !(inspector && xg_inspector_query_token_ok(req, gw->conf.admin_token))) {
            evhttp_add_header(evhttp_request_get_output_headers(req), "WWW-Authenticate",
                              "Bearer realm=\"xrgate\"");
            send_text(req, 401, "Unauthorized", "text/plain",
                      auth ? "401 unauthorized: the bearer token does not match\n"
                           : "401 unauthorized: this endpoint needs 'Authorization: Bearer "
                             "<token>' (/ and /events also take ?token=<token>)\n");
            return;
        }
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
    else if (!strcmp(p, "/"))
        xg_inspector_serve(gw, req, p);
    else
        send_text(req, 404, "Not Found", "text/plain",
                  "404 not found (try /, /events, /healthz, /metrics, /api/entities, "
                  "/api/adapters)\n");
}

int xg_admin_start(struct xg_gateway *gw, struct xg_error *err)
{
    const char *l = gw->conf.admin_listen;
    if (!l[0] || !strcmp(l, "off")) return 0;
    if (gw->conf.admin_tls_cert[0])
        XG_WARN(COMPONENT, "admin.tls is configured but not served yet: serving plain HTTP");
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
    gw->http = evhttp_new(gw->base);
    if (!gw->http) return xg_error_set(err, -ENOMEM, "out of memory");
    evhttp_set_gencb(gw->http, handle, gw);
    evhttp_set_allowed_methods(gw->http, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD | EVHTTP_REQ_POST |
                                             EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE);
    evhttp_set_timeout(gw->http, 30);
    struct evhttp_bound_socket *bs = evhttp_bind_socket_with_handle(gw->http, host, (uint16_t)port);
    if (!bs)
        return xg_error_set(err, -EADDRINUSE, "admin: cannot listen on %s (%s)", l,
                            strerror(errno ? errno : EADDRINUSE));
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    evutil_socket_t fd = evhttp_bound_socket_get_fd(bs);
    int bound_port = port;
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
        bound_port = ss.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
                                              : ntohs(((struct sockaddr_in *)&ss)->sin_port);
    snprintf(gw->admin_bound, sizeof gw->admin_bound, "%s:%d", host, bound_port);
    XG_INFO(COMPONENT, "admin API listening on http://%s%s", gw->admin_bound,
            gw->conf.admin_token[0] ? " (bearer token required)" : "");
    return 0;
}

void xg_admin_stop(struct xg_gateway *gw)
{
    xg_inspector_stop(gw);
    if (gw->http) {
        evhttp_free(gw->http);
        gw->http = NULL;
    }
}
