/* The web inspector: embedded page + /events Server-Sent Events stream (see inspector.h). */
#include "gateway/inspector.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/queue.h>

#include "core/clock/clock.h"
#include "core/table/names.h"
#include "gateway/admin_auth.h"
#include "gateway/admin_conn.h"
#include "gateway/gateway.h"

#define COMPONENT "inspector"
#define ADD_LIT(b, lit) evbuffer_add((b), (lit), sizeof(lit) - 1)
#define RATE_WINDOW_NS 500000000LL /* samples in/out per second: measured over >= 0.5 s */

struct client {
    struct xg_inspector *ins;
    struct evhttp_request *req;
    struct evhttp_connection *evcon;
    int64_t opened_ns;
    int64_t caught_up_ns; /* last tick at which its backlog was at most one frame */
    uint64_t skipped;     /* frames not sent because it was still behind */
};

struct adapter_rate {
    uint64_t in0, out0; /* counters at the start of the window */
    double in_per_s, out_per_s;
};

struct xg_inspector {
    struct xg_gateway *gw;
    struct event *tick;
    struct client *clients[XG_INSPECTOR_MAX_CLIENTS];
    int n_clients;
    struct evbuffer *frame; /* the frame being built (shared by every client) */
    int64_t rate_t0_ns;
    struct adapter_rate rates[XG_MAX_ADAPTERS];
    int64_t last_keepalive_ns;
    uint64_t seq;
    struct xg_inspector_stats stats;
};

/* ---- helpers ----------------------------------------------------------------------------- */

/* JSON string (with quotes): escapes '"', '\\' and control characters; bytes that are not UTF-8
 * become U+FFFD (a frame stays valid JSON: issue 30 item 4); other bytes verbatim. */
static void json_str(struct evbuffer *b, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    ADD_LIT(b, "\"");
    const char *run = s;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c >= 0x80) {
            size_t n = xg_utf8_seq(s, 4); /* a NUL ends a truncated sequence: never read past */
            if (n) {
                s += n - 1;
                continue;
            }
            if (s > run) evbuffer_add(b, run, (size_t)(s - run));
            ADD_LIT(b, "\\ufffd");
            run = s + 1;
            continue;
        }
        if (c >= 0x20 && c != '"' && c != '\\') continue;
        if (s > run) evbuffer_add(b, run, (size_t)(s - run));
        char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
        if (c == '"' || c == '\\') {
            esc[1] = (char)c;
            evbuffer_add(b, esc, 2);
        } else {
            evbuffer_add(b, esc, 6);
        }
        run = s + 1;
    }
    if (s > run) evbuffer_add(b, run, (size_t)(s - run));
    ADD_LIT(b, "\"");
}

static uint64_t fnv1a(const unsigned char *p, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ULL;
    return h;
}

bool xg_inspector_is_asset(const char *path)
{
    return !strncmp(path, "/inspector/", 11) || !strcmp(path, "/favicon.ico");
}

bool xg_inspector_query_token_ok(struct evhttp_request *req, const char *token)
{
    const struct evhttp_uri *u = evhttp_request_get_evhttp_uri(req);
    const char *q = u ? evhttp_uri_get_query(u) : NULL;
    if (!q || !token[0]) return false;
    /* the first `token=` parameter, decoded with its length: a decoded NUL (%00) is part of the
     * value, so "<token>%00<anything>" does not match by prefix */
    for (const char *p = q; *p;) {
        size_t n = strcspn(p, "&");
        if (n > 6 && !strncmp(p, "token=", 6)) {
            char raw[1024];
            if (n - 6 >= sizeof raw) return false;
            memcpy(raw, p + 6, n - 6);
            raw[n - 6] = '\0';
            size_t len = 0;
            char *v = evhttp_uridecode(raw, 1, &len);
            bool ok = v && xg_admin_token_equal(v, len, token);
            free(v);
            return ok;
        }
        p += n + (p[n] == '&');
    }
    return false;
}

/* ---- static files ------------------------------------------------------------------------ */

void xg_inspector_serve(struct xg_gateway *gw, struct evhttp_request *req, const char *path)
{
    (void)gw;
    struct evkeyvalq *out = evhttp_request_get_output_headers(req);
    enum evhttp_cmd_type cmd = evhttp_request_get_command(req);
    if (cmd != EVHTTP_REQ_GET && cmd != EVHTTP_REQ_HEAD) {
        evhttp_add_header(out, "Content-Type", "text/plain");
        evhttp_send_error(req, 405, "only GET is supported");
        return;
    }
    if (!strcmp(path, "/favicon.ico")) {
        /* browsers ask for it on every page of the admin port (the inspector's page links an
         * empty icon): "no icon", cacheable for a day, instead of a 401 or 404 in the console */
        evhttp_add_header(out, "Cache-Control", "max-age=86400");
        evhttp_send_reply(req, 204, "No Content", NULL);
        return;
    }
    const char *want = !strcmp(path, "/") ? "/inspector/index.html" : path;
    const struct xg_web_file *f = NULL;
    for (const struct xg_web_file *w = xg_web_files; w->path; w++)
        if (!strcmp(w->path, want)) f = w;
    if (!f) {
        struct evbuffer *b = evbuffer_new();
        evbuffer_add_printf(b, "404 not found: no such file in the inspector\n");
        evhttp_add_header(out, "Content-Type", "text/plain");
        evhttp_send_reply(req, 404, "Not Found", b);
        evbuffer_free(b);
        return;
    }
    size_t len = (size_t)(f->end - f->data);
    char etag[32];
    snprintf(etag, sizeof etag, "\"%016" PRIx64 "\"", fnv1a(f->data, len));
    evhttp_add_header(out, "ETag", etag);
    evhttp_add_header(out, "Cache-Control", "no-cache");
    const char *inm = evhttp_find_header(evhttp_request_get_input_headers(req), "If-None-Match");
    if (inm && !strcmp(inm, etag)) {
        evhttp_send_reply(req, 304, "Not Modified", NULL);
        return;
    }
    evhttp_add_header(out, "Content-Type", f->content_type);
    struct evbuffer *b = evbuffer_new();
    evbuffer_add_reference(b, f->data, len, NULL, NULL);
    evhttp_send_reply(req, 200, "OK", b);
    evbuffer_free(b);
}

/* ---- /events ----------------------------------------------------------------------------- */

static void tick_cb(evutil_socket_t fd, short what, void *arg);

static struct xg_inspector *inspector_get(struct xg_gateway *gw)
{
    if (gw->inspector) return gw->inspector;
    struct xg_inspector *ins = calloc(1, sizeof *ins);
    if (!ins) return NULL;
    ins->gw = gw;
    ins->tick = event_new(gw->base, -1, EV_PERSIST, tick_cb, ins);
    ins->frame = evbuffer_new();
    if (!ins->tick || !ins->frame) {
        if (ins->tick) event_free(ins->tick);
        if (ins->frame) evbuffer_free(ins->frame);
        free(ins);
        return NULL;
    }
    /* the first rate window runs from the gateway's start: rates are averages until 0.5 s */
    ins->rate_t0_ns = gw->started_ns;
    ins->last_keepalive_ns = xg_clock_mono_ns();
    gw->inspector = ins;
    return ins;
}

static void remove_client(struct xg_inspector *ins, struct client *c)
{
    for (int i = 0; i < ins->n_clients; i++) {
        if (ins->clients[i] == c) {
            ins->clients[i] = ins->clients[--ins->n_clients];
            break;
        }
    }
    ins->stats.clients = ins->n_clients;
    if (!ins->n_clients) event_del(ins->tick);
    free(c);
}

/* The peer closed (or the connection failed). libevent has already detached the unfinished
 * request from the connection (evcon is being freed); finishing it frees it. */
static void close_cb(struct evhttp_connection *evcon, void *arg)
{
    struct client *c = arg;
    struct evhttp_request *req = c->req;
    xg_admin_conn_set_closecb(c->ins->gw, evcon, NULL, NULL);
    XG_DEBUG(COMPONENT, "/events client left after %.1f s (%" PRIu64 " frames skipped)",
             (double)(xg_clock_mono_ns() - c->opened_ns) * 1e-9, c->skipped);
    remove_client(c->ins, c);
    if (evhttp_request_get_connection(req) == NULL) evhttp_send_reply_end(req);
}

/* Drop a client on purpose (slow reader): the connection and its request are freed. */
static void drop_client(struct xg_inspector *ins, struct client *c)
{
    struct evhttp_connection *evcon = c->evcon;
    xg_admin_conn_set_closecb(ins->gw, evcon, NULL, NULL);
    remove_client(ins, c);
    evhttp_connection_free(evcon);
}

static void send_to(struct client *c, const void *data, size_t len)
{
    struct evbuffer *b = evbuffer_new();
    if (!b) return;
    evbuffer_add(b, data, len);
    evhttp_send_reply_chunk(c->req, b);
    evbuffer_free(b);
}

static size_t client_backlog(const struct client *c)
{
    struct bufferevent *bev = evhttp_connection_get_bufferevent(c->evcon);
    return bev ? evbuffer_get_length(bufferevent_get_output(bev)) : 0;
}

static void vec(struct evbuffer *b, const char *key, const double *v, int n)
{
    evbuffer_add_printf(b, ",\"%s\":[", key);
    for (int i = 0; i < n; i++)
        evbuffer_add_printf(b, i ? ",%.6f" : "%.6f", v[i]);
    ADD_LIT(b, "]");
}

struct frame_ctx {
    struct xg_inspector *ins;
    struct evbuffer *b;
    int64_t now;
    int n;
};

static int entity_visit(void *user, const struct xg_entity *e, const struct xg_pose *p)
{
    struct frame_ctx *c = user;
    struct evbuffer *b = c->b;
    struct xg_gateway *gw = c->ins->gw;
    const int origin = xg_entity_origin(e);
    struct xg_entity_info info;
    xg_entity_info(e, &info);
    evbuffer_add_printf(b, "%s{\"id\":%" PRIu32 ",\"name\":", c->n++ ? "," : "", xg_entity_id(e));
    json_str(b, xg_entity_name(e));
    evbuffer_add_printf(b, ",\"kind\":\"%s\",\"origin\":", xg_kind_name(xg_entity_kind(e)));
    json_str(b, origin >= 0 && origin < gw->n_adapters && gw->adapters[origin]
                    ? gw->adapters[origin]->a.name
                    : "?");
    const char *parent = xg_table_parent_name(gw->table, e);
    if (parent) {
        ADD_LIT(b, ",\"parent\":");
        json_str(b, parent);
    }
    double pos[3] = {p->position.x, p->position.y, p->position.z};
    double q[4] = {p->orientation.x, p->orientation.y, p->orientation.z, p->orientation.w};
    vec(b, "position", pos, 3);
    vec(b, "orientation", q, 4);
    evbuffer_add_printf(b, ",\"quality\":\"%s\",\"active\":%s,\"age_ms\":%.1f,\"rate_hz\":%.1f}",
                        xg_quality_name(p->quality), p->active ? "true" : "false",
                        (double)(c->now - p->sample_ns) * 1e-6,
                        info.interval_s > 0 ? 1.0 / info.interval_s : 0.0);
    return 0;
}

static void update_rates(struct xg_inspector *ins, int64_t now)
{
    struct xg_gateway *gw = ins->gw;
    double dt = (double)(now - ins->rate_t0_ns) * 1e-9;
    if (dt * 1e9 < RATE_WINDOW_NS) return;
    const struct xg_table_stats *ts = xg_table_stats(gw->table);
    for (int i = 0; i < gw->n_adapters; i++) {
        struct adapter_rate *r = &ins->rates[i];
        if (!gw->adapters[i]) continue;
        uint64_t in = ts->samples_in[i], out = gw->adapters[i]->a.samples_out;
        r->in_per_s = (double)(in - r->in0) / dt;
        r->out_per_s = (double)(out - r->out0) / dt;
        r->in0 = in;
        r->out0 = out;
    }
    ins->rate_t0_ns = now;
}

static void adapters_json(struct xg_inspector *ins, struct evbuffer *b)
{
    struct xg_gateway *gw = ins->gw;
    const struct xg_table_stats *ts = xg_table_stats(gw->table);
    ADD_LIT(b, "\"adapters\":[");
    int n = 0;
    for (int i = 0; i < gw->n_adapters; i++) {
        struct xg_gw_adapter *ga = gw->adapters[i];
        if (!ga) continue;
        struct xg_status st = {.state = ga->started ? "running" : "stopped"};
        if (ga->a.ops->status) ga->a.ops->status(&ga->a, &st);
        double reconnects = 0, unreachable = 0, file_bytes = 0;
        for (int k = 0; k < st.n_counters; k++) {
            if (!strcmp(st.counters[k].name, "reconnects")) reconnects = st.counters[k].value;
            if (!strcmp(st.counters[k].name, "file_bytes")) /* a recorder's file (mcap-record) */
                file_bytes = st.counters[k].value;
            if (!strcmp(st.counters[k].name, "dest_unreachable"))
                unreachable = st.counters[k].value;
        }
        evbuffer_add_printf(b, "%s{\"index\":%d,\"name\":", n++ ? "," : "", i);
        json_str(b, ga->a.name);
        ADD_LIT(b, ",\"type\":");
        json_str(b, ga->a.ops->type);
        ADD_LIT(b, ",\"state\":");
        json_str(b, st.state ? st.state : "running");
        ADD_LIT(b, ",\"peer\":");
        json_str(b, st.peer);
        evbuffer_add_printf(
            b,
            ",\"sink\":%s,\"samples_in\":%" PRIu64 ",\"samples_out\":%" PRIu64
            ",\"samples_in_per_s\":%.1f,\"samples_out_per_s\":%.1f,\"drops\":%" PRIu64
            ",\"samples_backwards\":%" PRIu64 ",\"errors\":%" PRIu64
            ",\"reconnects\":%.0f,\"unreachable\":%.0f,\"file_bytes\":%.0f}",
            ga->a.ops->is_sink ? "true" : "false", ts->samples_in[i], ga->a.samples_out,
            ins->rates[i].in_per_s, ins->rates[i].out_per_s, ga->a.drops + ts->rejected[i],
            ts->dropped_backwards[i], ga->a.errors, reconnects, unreachable, file_bytes);
    }
    ADD_LIT(b, "]");
}

/* Build one `event: state` frame into ins->frame (cleared first). Ticks advance seq; the frame
 * a new client gets at once repeats the current seq, so every client sees seq advance by one. */
static void build_frame(struct xg_inspector *ins, int64_t now, bool tick)
{
    struct evbuffer *b = ins->frame;
    evbuffer_drain(b, evbuffer_get_length(b));
    update_rates(ins, now);
    evbuffer_add_printf(
        b, "event: state\ndata: {\"seq\":%" PRIu64 ",\"time_ns\":%" PRId64 ",\"entities\":[",
        tick ? ++ins->seq : ins->seq, now);
    struct frame_ctx c = {ins, b, now, 0};
    xg_table_foreach(ins->gw->table, -1, now, entity_visit, &c);
    ADD_LIT(b, "],");
    adapters_json(ins, b);
    ADD_LIT(b, "}\n\n");
    ins->stats.frames++;
}

static void tick_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct xg_inspector *ins = arg;
    int64_t now = xg_clock_mono_ns();
    build_frame(ins, now, true);
    size_t len = evbuffer_get_length(ins->frame);
    const unsigned char *data = evbuffer_pullup(ins->frame, -1);
    bool keepalive = now - ins->last_keepalive_ns >= (int64_t)XG_INSPECTOR_KEEPALIVE_S * 1000000000;
    if (keepalive) ins->last_keepalive_ns = now;
    /* A client still behind by more than a frame skips this one (every frame is a complete
     * snapshot: it loses cadence, not content); one that stays behind for STALL_MS, or whose
     * backlog passes the bound, stopped reading and is dropped. */
    size_t soft = len > 65536 ? len : 65536;
    size_t hard = XG_INSPECTOR_MAX_BUFFERED > 4 * len ? XG_INSPECTOR_MAX_BUFFERED : 4 * len;
    for (int i = ins->n_clients - 1; i >= 0; i--) {
        struct client *c = ins->clients[i];
        size_t backlog = client_backlog(c);
        if (backlog <= soft) c->caught_up_ns = now;
        if (backlog > hard || now - c->caught_up_ns > (int64_t)XG_INSPECTOR_STALL_MS * 1000000) {
            XG_WARN(COMPONENT,
                    "/events client dropped: %zu bytes unsent, not caught up for %.1f s (limits "
                    "%zu bytes, %d ms); it stopped reading",
                    backlog, (double)(now - c->caught_up_ns) * 1e-9, hard, XG_INSPECTOR_STALL_MS);
            ins->stats.clients_dropped++;
            drop_client(ins, c);
            continue;
        }
        if (backlog > soft) {
            c->skipped++;
            ins->stats.frames_skipped++;
            continue;
        }
        if (keepalive) send_to(c, ": keep-alive\n\n", sizeof(": keep-alive\n\n") - 1);
        send_to(c, data, len);
    }
}

static void hello(struct xg_inspector *ins, struct evbuffer *b)
{
    struct xg_gateway *gw = ins->gw;
    const struct xg_table_params *tp = xg_table_params(gw->table);
    evbuffer_add_printf(b, "retry: %d\n: xrgate inspector stream, see docs/inspector.md\n\n",
                        XG_INSPECTOR_RETRY_MS);
    ADD_LIT(b, "event: hello\ndata: {\"gateway\":");
    json_str(b, gw->conf.id);
    evbuffer_add_printf(b,
                        ",\"version\":\"%s\",\"frame\":{\"up\":\"+y\",\"handedness\":\"right\","
                        "\"units\":\"m\"},\"rate_hz\":%.1f,\"stale_ms\":%.0f,"
                        "\"max_horizon_ms\":%.0f}\n\n",
                        XRGATE_VERSION, 1e6 / XG_INSPECTOR_PERIOD_US, (double)tp->stale_ns * 1e-6,
                        (double)tp->max_horizon_ns * 1e-6);
}

void xg_inspector_events(struct xg_gateway *gw, struct evhttp_request *req)
{
    struct evkeyvalq *out = evhttp_request_get_output_headers(req);
    struct xg_inspector *ins = inspector_get(gw);
    if (!ins) {
        evhttp_send_error(req, 500, "out of memory");
        return;
    }
    if (ins->n_clients >= XG_INSPECTOR_MAX_CLIENTS) {
        ins->stats.clients_refused++;
        XG_WARN(COMPONENT, "/events refused: %d streams open (the limit)", ins->n_clients);
        evhttp_add_header(out, "Retry-After", "2");
        evhttp_add_header(out, "Content-Type", "text/plain");
        struct evbuffer *b = evbuffer_new();
        evbuffer_add_printf(b, "503 too many /events streams (limit %d)\n",
                            XG_INSPECTOR_MAX_CLIENTS);
        evhttp_send_reply(req, 503, "Service Unavailable", b);
        evbuffer_free(b);
        return;
    }
    evhttp_add_header(out, "Content-Type", "text/event-stream; charset=utf-8");
    evhttp_add_header(out, "Cache-Control", "no-store");
    evhttp_add_header(out, "X-Accel-Buffering", "no");
    if (evhttp_request_get_command(req) == EVHTTP_REQ_HEAD) {
        evhttp_send_reply(req, 200, "OK", NULL);
        return;
    }
    struct client *c = calloc(1, sizeof *c);
    if (!c) {
        evhttp_send_error(req, 500, "out of memory");
        return;
    }
    c->ins = ins;
    c->req = req;
    c->evcon = evhttp_request_get_connection(req);
    c->opened_ns = xg_clock_mono_ns();
    c->caught_up_ns = c->opened_ns;
    ins->clients[ins->n_clients++] = c;
    ins->stats.clients = ins->n_clients;
    ins->stats.clients_total++;
    xg_admin_conn_set_closecb(gw, c->evcon, close_cb, c);
    evhttp_send_reply_start(req, 200, "OK");

    struct evbuffer *b = evbuffer_new();
    hello(ins, b);
    build_frame(ins, c->opened_ns, false);
    evbuffer_add_buffer(b, ins->frame);
    evhttp_send_reply_chunk(req, b);
    evbuffer_free(b);
    if (ins->n_clients == 1) {
        struct timeval tv = {0, XG_INSPECTOR_PERIOD_US};
        event_add(ins->tick, &tv);
    }
    XG_DEBUG(COMPONENT, "/events client joined (%d open)", ins->n_clients);
}

void xg_inspector_reloaded(struct xg_gateway *gw, const char *json)
{
    struct xg_inspector *ins = gw->inspector;
    if (!ins) return;
    /* adapters were replaced: their rates restart from the counters they have now */
    const struct xg_table_stats *ts = xg_table_stats(gw->table);
    for (int i = 0; i < XG_MAX_ADAPTERS; i++) {
        struct xg_gw_adapter *ga = i < gw->n_adapters ? gw->adapters[i] : NULL;
        ins->rates[i] = (struct adapter_rate){.in0 = ga ? ts->samples_in[i] : 0,
                                              .out0 = ga ? ga->a.samples_out : 0};
    }
    ins->rate_t0_ns = xg_clock_mono_ns();
    if (!ins->n_clients) return;
    /* the new table parameters (hello), the reload's result, then the new adapter set at once */
    struct evbuffer *b = evbuffer_new();
    if (!b) return;
    hello(ins, b);
    ADD_LIT(b, "event: reload\ndata: ");
    evbuffer_add(b, json, strlen(json));
    ADD_LIT(b, "\n\n");
    build_frame(ins, xg_clock_mono_ns(), false);
    evbuffer_add_buffer(b, ins->frame);
    size_t len = evbuffer_get_length(b);
    const unsigned char *data = evbuffer_pullup(b, -1);
    for (int i = 0; i < ins->n_clients; i++)
        send_to(ins->clients[i], data, len);
    evbuffer_free(b);
}

void xg_inspector_stop(struct xg_gateway *gw)
{
    struct xg_inspector *ins = gw->inspector;
    if (!ins) return;
    event_del(ins->tick);
    while (ins->n_clients) {
        struct client *c = ins->clients[0];
        xg_admin_conn_set_closecb(gw, c->evcon, NULL, NULL);
        evhttp_send_reply_end(c->req); /* the connection (and request) go with evhttp_free */
        remove_client(ins, c);
    }
    event_free(ins->tick);
    evbuffer_free(ins->frame);
    free(ins);
    gw->inspector = NULL;
}

struct xg_inspector_stats xg_inspector_stats(const struct xg_gateway *gw)
{
    struct xg_inspector_stats s = {0};
    if (gw->inspector) s = gw->inspector->stats;
    return s;
}
