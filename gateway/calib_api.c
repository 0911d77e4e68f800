/* Space calibrations: admin API and metrics (gateway/calib.h, docs/admin-api.md
 * "Calibrations", docs/metrics.md). */
#include <inttypes.h>
#include <errno.h>
#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/util/log.h"
#include "gateway/calib_int.h"
#include "gateway/gateway.h"
#include "gateway/gateway_int.h"

#define COMPONENT "calibration"
#define DEG (M_PI / 180)

static json_t *xf(const struct xg_calib_xf *x)
{
    return json_pack("{s:[fff],s:[ffff]}", "position", x->t.x, x->t.y, x->t.z, "orientation",
                     x->q.x, x->q.y, x->q.z, x->q.w);
}

static void set(json_t *o, const char *k, json_t *v)
{
    json_object_set_new(o, k, v ? v : json_null());
}

/* per-axis progress: the RMS rotation of the reference about each axis of its frame against
 * the 10° that make it observable; the last attempt's unobservable axes */
static json_t *observability(const struct xg_calib *c)
{
    static const char *const names[3] = {"pitch", "yaw", "roll"}; /* about x, y (up), z */
    struct xg_calib_opts o;
    xg_calib_opts_default(&o);
    const struct xg_calib_result *r = c->last_rc == 1 && c->have ? &c->res : &c->last;
    bool known = c->last_rc != 1;
    json_t *axes = json_object(), *unobs = json_array();
    for (int a = 0; a < 3; a++) {
        double sp = known ? r->spread_rad[a] : 0;
        set(axes, names[a],
            json_pack("{s:f,s:f,s:b}", "spread_deg", sp / DEG, "progress",
                      fmin(1.0, sp / o.min_spread_rad), "ok", sp >= o.min_spread_rad));
        if (known && c->last_rc == -EDOM && ((r->unobservable >> a) & 1))
            json_array_append_new(unobs, json_string(names[a]));
    }
    json_t *j = json_object();
    set(j, "axes", axes);
    set(j, "unobservable", unobs);
    set(j, "observable",
        json_boolean(c->have || (known && c->last_rc != -EDOM && c->last_rc != -EAGAIN)));
    set(j, "needed_spread_deg", json_real(o.min_spread_rad / DEG));
    return j;
}

static json_t *one(const struct xg_calib *c)
{
    json_t *o = json_object();
    set(o, "name", json_string(c->name));
    set(o, "reference", json_string(c->reference));
    set(o, "target", json_string(c->target));
    set(o, "apply_to", json_string(c->apply_to));
    set(o, "mode", json_string(c->continuous ? "continuous" : "once"));
    set(o, "state", json_string(xg_calib_state_name(c->state)));
    set(o, "applied", json_boolean(c->have && c->apply_index >= 0));
    set(o, "collecting", json_boolean(c->collecting));
    set(o, "transform", c->have ? xf(&c->res.y) : json_null());
    set(o, "object_offset", c->have ? xf(&c->res.x) : json_null());
    set(o, "time_offset_ms", c->have ? json_real(c->res.time_offset_s * 1e3) : json_null());
    set(o, "residual_mm", c->have ? json_real(c->res.residual_m * 1e3) : json_null());
    set(o, "residual_deg", c->have ? json_real(c->res.residual_rad / DEG) : json_null());
    set(o, "pairs", json_integer(c->have ? (json_int_t)c->res.pairs : 0));
    set(o, "solved_unix", c->have ? json_real(c->solved_unix) : json_null());
    set(o, "observability", observability(c));
    double span_r = xg_calib_ring_span(&c->ref), span_t = xg_calib_ring_span(&c->tgt);
    set(o, "collected",
        json_pack("{s:I,s:I,s:f,s:f,s:f}", "reference_samples", (json_int_t)c->ref.n,
                  "target_samples", (json_int_t)c->tgt.n, "reference_s", span_r, "target_s", span_t,
                  "needed_s", c->collect_s));
    set(o, "message", c->last_why[0] ? json_string(c->last_why) : json_null());
    set(o, "solves", json_integer((json_int_t)c->solves));
    set(o, "solve_ms", json_real(c->solve_ms));
    set(o, "solving", json_boolean(c->job != 0));
    set(o, "solves_discarded", json_integer((json_int_t)c->discarded));
    if (c->continuous)
        set(o, "drift",
            json_pack("{s:f,s:f,s:f,s:f,s:I,s:I}", "residual_mm", c->drift_res_m * 1e3,
                      "residual_deg", c->drift_res_rad / DEG, "limit_mm", c->drift_m * 1e3,
                      "limit_deg", c->drift_rad / DEG, "checks", (json_int_t)c->drift_checks,
                      "detected", (json_int_t)c->drifts));
    return o;
}

char *xg_calib_json(struct xg_gateway *gw)
{
    json_t *list = json_array();
    struct xg_calib_set *cs = gw->calib;
    for (int i = 0; cs && i < cs->n; i++)
        json_array_append_new(list, one(cs->items[i]));
    json_t *root = json_object();
    set(root, "calibrations", list);
    set(root, "state_file", cs && cs->state_file[0] ? json_string(cs->state_file) : json_null());
    char *s = json_dumps(root, JSON_COMPACT | JSON_REAL_PRECISION(12));
    json_decref(root);
    return s;
}

static void reply(struct evhttp_request *req, int code, const char *reason, const char *ctype,
                  char *body)
{
    struct evbuffer *b = evbuffer_new();
    if (b && body) evbuffer_add(b, body, strlen(body));
    struct evkeyvalq *h = evhttp_request_get_output_headers(req);
    evhttp_add_header(h, "Content-Type", ctype);
    evhttp_add_header(h, "Cache-Control", "no-store");
    evhttp_send_reply(req, code, reason, b);
    if (b) evbuffer_free(b);
}

void xg_calib_http(struct xg_gateway *gw, struct evhttp_request *req, const char *rest,
                   const char *peer)
{
    enum evhttp_cmd_type cmd = evhttp_request_get_command(req);
    if (!*rest || !strcmp(rest, "/")) {
        if (cmd != EVHTTP_REQ_GET && cmd != EVHTTP_REQ_HEAD) {
            evhttp_add_header(evhttp_request_get_output_headers(req), "Allow", "GET");
            reply(req, 405, "Method Not Allowed", "text/plain",
                  "405 /api/calibrations takes GET (POST /api/calibrations/NAME/start|reset)\n");
            return;
        }
        char *s = xg_calib_json(gw);
        if (!s) {
            reply(req, 500, "Internal Server Error", "text/plain", "500 out of memory\n");
            return;
        }
        reply(req, 200, "OK", "application/json", s);
        free(s);
        return;
    }
    /* /NAME/start | /NAME/reset */
    char name[64], verb[16];
    const char *sl = rest[0] == '/' ? strchr(rest + 1, '/') : NULL;
    if (!sl || (size_t)(sl - rest - 1) >= sizeof name || strlen(sl + 1) >= sizeof verb ||
        (strcmp(sl + 1, "start") && strcmp(sl + 1, "reset"))) {
        reply(req, 404, "Not Found", "text/plain",
              "404 not found (GET /api/calibrations, POST /api/calibrations/NAME/start or "
              "/api/calibrations/NAME/reset)\n");
        return;
    }
    snprintf(name, sizeof name, "%.*s", (int)(sl - rest - 1), rest + 1);
    snprintf(verb, sizeof verb, "%s", sl + 1);
    if (cmd != EVHTTP_REQ_POST) {
        evhttp_add_header(evhttp_request_get_output_headers(req), "Allow", "POST");
        reply(req, 405, "Method Not Allowed", "text/plain",
              "405 /api/calibrations/NAME/start and /reset take POST only\n");
        return;
    }
    if (!xg_admin_same_origin(req)) {
        reply(req, 403, "Forbidden", "text/plain",
              "403 forbidden: a cross-site request (its Origin is not this gateway)\n");
        return;
    }
    struct xg_calib *c = xg_calib_find(gw->calib, name);
    if (!c) {
        reply(req, 404, "Not Found", "text/plain",
              "404 no calibration of that name in the configuration (GET /api/calibrations "
              "lists them)\n");
        return;
    }
    if (!strcmp(verb, "start")) {
        xg_calib_begin(c);
        XG_INFO(COMPONENT, "'%s': collecting again (POST start from %s)%s", c->name, peer,
                c->have ? "; the result in force stays applied until the new one" : "");
    } else {
        xg_calib_reset(gw->calib, c);
        XG_INFO(COMPONENT,
                "'%s': result forgotten, nothing applied, collecting (POST reset from "
                "%s)",
                c->name, peer);
    }
    json_t *j = one(c);
    char *s = json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(12));
    json_decref(j);
    reply(req, 200, "OK", "application/json", s);
    free(s);
}

void xg_calib_metrics(struct xg_gateway *gw, struct evbuffer *out)
{
    struct xg_calib_set *cs = gw->calib;
    if (!cs || !cs->n) return;
    static const struct {
        const char *name, *type, *help;
    } fam[] = {
        {"xrgate_calibration_state", "gauge",
         "1 for the state each calibration is in (collecting, solved, applied, drifting)"},
        {"xrgate_calibration_residual_meters", "gauge",
         "RMS position residual of the result in force"},
        {"xrgate_calibration_residual_radians", "gauge",
         "RMS rotation residual of the result in force"},
        {"xrgate_calibration_time_offset_seconds", "gauge",
         "Target capture time minus reference capture time of one moment (result in force)"},
        {"xrgate_calibration_pairs", "gauge", "Pose pairs the result in force was solved from"},
        {"xrgate_calibration_solves_total", "counter", "Solver runs"},
        {"xrgate_calibration_drifts_total", "counter", "Drifts detected (mode continuous)"},
        {"xrgate_calibration_solve_seconds", "gauge",
         "Duration of the last solve (in the solver thread, not on the event loop)"},
        {"xrgate_calibration_solves_discarded_total", "counter",
         "Solves whose result came after a start or reset of the calibration (discarded)"},
    };
    for (size_t f = 0; f < sizeof fam / sizeof fam[0]; f++) {
        evbuffer_add_printf(out, "# HELP %s %s\n# TYPE %s %s\n", fam[f].name, fam[f].help,
                            fam[f].name, fam[f].type);
        for (int i = 0; i < cs->n; i++) {
            const struct xg_calib *c = cs->items[i];
            char esc[160];
            xg_metrics_escape(c->name, esc, sizeof esc);
            if (f == 0) {
                for (int s = 0; s < 4; s++)
                    evbuffer_add_printf(out, "%s{calibration=\"%s\",state=\"%s\"} %d\n",
                                        fam[f].name, esc, xg_calib_state_name(s),
                                        (int)c->state == s);
                continue;
            }
            double v = f == 1   ? c->res.residual_m
                       : f == 2 ? c->res.residual_rad
                       : f == 3 ? c->res.time_offset_s
                       : f == 4 ? (double)c->res.pairs
                       : f == 5 ? (double)c->solves
                       : f == 6 ? (double)c->drifts
                       : f == 7 ? c->solve_ms * 1e-3
                                : (double)c->discarded;
            if ((f < 5 && !c->have) || (f == 7 && !c->solves)) continue;
            evbuffer_add_printf(out, "%s{calibration=\"%s\"} %.9g\n", fam[f].name, esc, v);
        }
    }
    if (!cs->state_file[0]) return; /* the state file's writes, in the solver thread */
    evbuffer_add_printf(out,
                        "# HELP xrgate_calibration_state_writes_total State file writes done (in "
                        "the solver thread)\n# TYPE xrgate_calibration_state_writes_total "
                        "counter\nxrgate_calibration_state_writes_total %" PRIu64 "\n",
                        cs->writes);
    evbuffer_add_printf(
        out,
        "# HELP xrgate_calibration_state_write_failures_total State file writes "
        "that failed (logged)\n# TYPE xrgate_calibration_state_write_failures_total "
        "counter\nxrgate_calibration_state_write_failures_total %" PRIu64 "\n",
        cs->write_failures);
}
