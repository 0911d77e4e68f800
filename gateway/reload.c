/* Configuration reload: SIGHUP and POST /api/reload (docs/configuration.md "Reloading").
 *
 * 1. The file the gateway was started with is loaded into a scratch gateway exactly as
 *    `xrgate --check` loads it (xg_gateway_load: parse, every key, every adapter's create(), the
 *    insecure-settings audit). If that fails nothing changes: the process-wide state the load
 *    touched (log level, resolver file) is put back and the error is logged, returned, counted.
 * 2. Each running adapter is compared with the new one of the same name by a canonical text of
 *    its YAML node (map keys sorted, scalars with their quoting; ${VAR} already expanded): equal
 *    and the same type = unchanged (nothing is touched: sockets, sessions, clients, entities,
 *    history); a sink whose only differences are `rate_hz` (unless its type announces the rate
 *    to its peers), `include` and `exclude` = updated in place (xg_table_refilter_sink: the
 *    entities it no longer sends leave its view as on expiry, new ones enter as new); anything else
 * = restarted on its table index (stop, its entities removed and the other adapters told, destroy,
 * create, start). New names start on a free index, missing ones stop.
 * 3. Gateway keys: log_level, predict.*, entity.*, admin.token_file (the token),
 *    admin.max_connections, admin.request_timeout_ms and strict apply; id, admin.listen,
 *    admin.tls and resolv_conf keep their old value and are reported in needs_restart.
 *
 * Configuration trees: an unchanged adapter keeps reading the tree it was created from, so the
 * older trees live on in gw->old_roots until no adapter uses them. */
#include <errno.h>
#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock/clock.h"
#include "core/net/transport_client.h"
#include "gateway/calib.h"
#include "gateway/gateway_int.h"
#include "gateway/inspector.h"
#include "mappings/conf_yaml.h"

#define COMPONENT "gateway"

/* ---- canonical text of a configuration node ---- */

struct canon {
    char *p;
    size_t n, cap;
    bool oom;
};

static void put(struct canon *c, const char *s, size_t n)
{
    if (c->oom) return;
    if (c->n + n + 1 > c->cap) {
        size_t cap = (c->n + n + 1) * 2;
        char *p = realloc(c->p, cap);
        if (!p) {
            c->oom = true;
            return;
        }
        c->p = p;
        c->cap = cap;
    }
    memcpy(c->p + c->n, s, n);
    c->n += n;
    c->p[c->n] = '\0';
}

/* a string as "<length>:<bytes>", so that no value can imitate the structure around it */
static void put_str(struct canon *c, const char *s)
{
    char len[24];
    size_t n = s ? strlen(s) : 0;
    put(c, len, (size_t)snprintf(len, sizeof len, "%zu:", n));
    if (n) put(c, s, n);
}

static int key_cmp(const void *a, const void *b)
{
    const struct xg_conf *x = *(const struct xg_conf *const *)a;
    const struct xg_conf *y = *(const struct xg_conf *const *)b;
    return strcmp(x->key ? x->key : "", y->key ? y->key : "");
}

/* `skip`: keys of this map (only) left out, a NULL-terminated list (or NULL) */
static bool skipped(const char *const *skip, const char *key)
{
    for (; skip && *skip; skip++)
        if (key && !strcmp(key, *skip)) return true;
    return false;
}

static void canon_node(struct canon *c, const struct xg_conf *n, const char *const *skip)
{
    if (n->type == XG_CONF_SCALAR) {
        put(c, n->quoted ? "Q" : "S", 1);
        put_str(c, n->value);
        return;
    }
    if (n->type == XG_CONF_SEQ) {
        put(c, "[", 1);
        for (size_t i = 0; i < n->n_items; i++)
            canon_node(c, n->items[i], NULL);
        put(c, "]", 1);
        return;
    }
    const struct xg_conf **items = malloc((n->n_items ? n->n_items : 1) * sizeof *items);
    if (!items) {
        c->oom = true;
        return;
    }
    memcpy(items, n->items, n->n_items * sizeof *items);
    qsort(items, n->n_items, sizeof *items, key_cmp);
    put(c, "{", 1);
    for (size_t i = 0; i < n->n_items; i++) {
        if (skipped(skip, items[i]->key)) continue;
        put_str(c, items[i]->key);
        canon_node(c, items[i], NULL);
    }
    put(c, "}", 1);
    free(items);
}

/* Are a and b the same configuration (but for the keys `skip` of the top map)? false on
 * ENOMEM. */
static bool same_conf(const struct xg_conf *a, const struct xg_conf *b, const char *const *skip)
{
    if (!a || !b) return a == b; /* an absent key */
    struct canon x = {0}, y = {0};
    canon_node(&x, a, skip);
    canon_node(&y, b, skip);
    bool same = !x.oom && !y.oom && x.n == y.n && (!x.n || !memcmp(x.p, y.p, x.n));
    free(x.p);
    free(y.p);
    return same;
}

/* ---- the diff ---- */

enum change { KEEP, UPDATE, RESTART };

/* Sink types that tell their peers the rate (RGMP definitions, LESS connection config): a new
 * rate_hz needs a new session there. */
static bool rate_announced(const char *type)
{
    return !strcmp(type, "rgmp-server") || !strcmp(type, "less");
}

/* The keys of a sink's entry the gateway itself applies to a running adapter. */
static const char *const live_keys[] = {"rate_hz", "include", "exclude", NULL};

static enum change classify(const struct xg_gw_adapter *old, const struct xg_gw_adapter *neu)
{
    if (old->a.ops != neu->a.ops) return RESTART;
    if (same_conf(old->conf, neu->conf, NULL)) return KEEP;
    if (!old->a.ops->is_sink || !same_conf(old->conf, neu->conf, live_keys)) return RESTART;
    if (old->a.rate_hz != neu->a.rate_hz && rate_announced(old->a.ops->type)) return RESTART;
    return UPDATE;
}

/* A sink's view changed by new include/exclude globs: it alone is told, as on expiry. */
static void tell_sink(void *user, const struct xg_entity *e, bool added)
{
    struct xg_gw_adapter *ga = user;
    if (ga->started && ga->a.ops->entity_event) ga->a.ops->entity_event(&ga->a, e, added);
}

/* Apply what changed of a sink's live keys (classify() said UPDATE); neu is the scratch
 * gateway's adapter of the new entry, whose parsed globs are taken over. */
static void update_sink(struct xg_gateway *gw, struct xg_gw_adapter *ga, struct xg_gw_adapter *neu,
                        json_t *errors)
{
    char what[160] = "";
    if (ga->a.rate_hz != neu->a.rate_hz) {
        snprintf(what, sizeof what, "rate_hz %g -> %g", ga->a.rate_hz, neu->a.rate_hz);
        ga->a.rate_hz = neu->a.rate_hz;
        if (ga->started && xg_gw_adapter_retick(gw, ga))
            json_array_append_new(errors,
                                  json_sprintf("adapter '%s': cannot add its tick", ga->a.name));
    }
    if (!same_conf(xg_conf_get(ga->conf, "include"), xg_conf_get(neu->conf, "include"), NULL) ||
        !same_conf(xg_conf_get(ga->conf, "exclude"), xg_conf_get(neu->conf, "exclude"), NULL)) {
        struct xg_globs in = ga->include, ex = ga->exclude;
        ga->include = neu->include; /* the scratch gateway frees the old ones */
        ga->exclude = neu->exclude;
        neu->include = in;
        neu->exclude = ex;
        size_t n = xg_table_refilter_sink(gw->table, ga->a.index, tell_sink, ga);
        size_t len = strlen(what);
        snprintf(what + len, sizeof what - len, "%sinclude/exclude (%zu entities in or out)",
                 len ? ", " : "", n);
    }
    XG_INFO(ga->a.name, "%s (updated in place)", what[0] ? what : "no effective change");
    ga->conf = neu->conf; /* compared next time; create() read the old tree (ga->root) */
    ga->conf_root = gw->root;
    if (ga->a.rate_hz <= 0 && xg_table_dirty_count(gw->table, ga->a.index))
        xg_gw_make_due(gw, ga->a.index);
}

static struct xg_gw_adapter *by_name(struct xg_gateway *gw, const char *name)
{
    for (int i = 0; i < gw->n_adapters; i++)
        if (gw->adapters[i] && !strcmp(gw->adapters[i]->a.name, name)) return gw->adapters[i];
    return NULL;
}

static int free_index(const struct xg_gateway *gw)
{
    for (int i = 0; i < XG_MAX_ADAPTERS; i++)
        if (i >= gw->n_adapters || !gw->adapters[i]) return i;
    return -1;
}

/* Create and start the adapter of node `node` on table index `index`; on failure it is gone
 * again and the reason is appended to `errors`. */
static int bring_up(struct xg_gateway *gw, const struct xg_conf *node, const char *name, int index,
                    json_t *errors)
{
    struct xg_error err = {0};
    int rc = index < 0 ? -ENOSPC : xg_gw_adapter_load(gw, node, index, &err);
    if (index < 0) xg_error_set(&err, rc, "too many adapters (at most %d)", XG_MAX_ADAPTERS);
    if (!rc && !(rc = xg_gw_adapter_start(gw, gw->adapters[index], &err))) {
        struct xg_gw_adapter *ga = gw->adapters[index];
        /* what the table holds already reaches a new send-on-change sink at once */
        if (ga->a.ops->is_sink && ga->a.rate_hz <= 0 && xg_table_dirty_count(gw->table, index))
            xg_gw_make_due(gw, index);
        return 0;
    }
    XG_ERR(COMPONENT, "reload: adapter '%s' did not start: %s", name,
           err.msg[0] ? err.msg : strerror(-rc));
    json_array_append_new(
        errors, json_sprintf("adapter '%s': %s", name, err.msg[0] ? err.msg : strerror(-rc)));
    if (index >= 0 && index < XG_MAX_ADAPTERS && gw->adapters[index]) {
        gw->adapters[index]->started = true; /* a half-done start() is undone by stop() */
        xg_gw_adapter_free(gw, gw->adapters[index]);
    }
    return rc ? rc : -EIO;
}

/* The gateway keys: live ones into gw->conf (names appended to `updated`), the others into
 * `needs`. */
static void apply_gateway(struct xg_gateway *gw, const struct xg_gateway_conf *n,
                          bool resolv_changed, json_t *updated, json_t *needs)
{
    struct xg_gateway_conf *o = &gw->conf;
    if (strcmp(o->id, n->id)) json_array_append_new(needs, json_string("gateway.id"));
    if (strcmp(o->admin_listen, n->admin_listen))
        json_array_append_new(needs, json_string("gateway.admin.listen"));
    if (strcmp(o->admin_tls_cert, n->admin_tls_cert) || strcmp(o->admin_tls_key, n->admin_tls_key))
        json_array_append_new(needs, json_string("gateway.admin.tls"));
    if (resolv_changed) json_array_append_new(needs, json_string("gateway.resolv_conf"));
#define LIVE(cond, key, assign)                                                                    \
    do {                                                                                           \
        if (cond) {                                                                                \
            assign;                                                                                \
            json_array_append_new(updated, json_string(key));                                      \
        }                                                                                          \
    } while (0)
    LIVE(o->log_level != n->log_level, "gateway.log_level", o->log_level = n->log_level);
    LIVE(strcmp(o->admin_token, n->admin_token), "gateway.admin.token",
         memcpy(o->admin_token, n->admin_token, sizeof o->admin_token));
    LIVE(o->admin_max_connections != n->admin_max_connections, "gateway.admin.max_connections",
         o->admin_max_connections = n->admin_max_connections);
    LIVE(o->admin_request_timeout_ms != n->admin_request_timeout_ms,
         "gateway.admin.request_timeout_ms",
         o->admin_request_timeout_ms = n->admin_request_timeout_ms);
    LIVE(o->strict != n->strict, "gateway.strict", o->strict = n->strict);
    struct xg_table_params *ot = &o->table;
    const struct xg_table_params *nt = &n->table;
    LIVE(ot->max_horizon_ns != nt->max_horizon_ns, "gateway.predict.max_horizon_ms",
         ot->max_horizon_ns = nt->max_horizon_ns);
    LIVE(ot->velocity_window_ns != nt->velocity_window_ns, "gateway.predict.velocity_window_ms",
         ot->velocity_window_ns = nt->velocity_window_ns);
    LIVE(ot->motion_memory_ns != nt->motion_memory_ns, "gateway.predict.motion_memory_ms",
         ot->motion_memory_ns = nt->motion_memory_ns);
    LIVE(ot->stale_ns != nt->stale_ns, "gateway.entity.stale_ms", ot->stale_ns = nt->stale_ns);
    LIVE(ot->expire_ns != nt->expire_ns, "gateway.entity.expire_ms", ot->expire_ns = nt->expire_ns);
    LIVE(ot->max_entities != nt->max_entities, "gateway.entity.max_entities",
         ot->max_entities = nt->max_entities);
#undef LIVE
    xg_table_set_params(gw->table, ot);
}

static bool root_used(const struct xg_gateway *gw, const struct xg_conf *root)
{
    for (int i = 0; i < gw->n_adapters; i++)
        if (gw->adapters[i] &&
            (gw->adapters[i]->root == root || gw->adapters[i]->conf_root == root))
            return true;
    return false;
}

/* Free the old configuration trees no adapter reads any more; keep `prev` (the tree that was
 * current until now) while an adapter uses it. Each adapter holds at most two trees (the one it
 * was created from and the one of its in-place update), so XG_OLD_ROOTS slots always suffice. */
static void retire_roots(struct xg_gateway *gw, struct xg_conf *prev)
{
    for (int k = 0; k < XG_OLD_ROOTS; k++)
        if (gw->old_roots[k] && !root_used(gw, gw->old_roots[k])) {
            xg_conf_yaml_free(gw->old_roots[k]);
            gw->old_roots[k] = NULL;
        }
    if (!prev || !root_used(gw, prev)) {
        xg_conf_yaml_free(prev);
        return;
    }
    for (int k = 0; k < XG_OLD_ROOTS; k++)
        if (!gw->old_roots[k]) {
            gw->old_roots[k] = prev;
            return;
        }
    /* not reached (see above); were it, keeping the tree (a leak) beats freeing what is read */
    XG_WARN(COMPONENT, "reload: more configuration trees in use than expected; one is kept");
}

static void names_str(const json_t *a, char *buf, size_t size)
{
    size_t i, off = 0;
    json_t *v;
    buf[0] = '\0';
    json_array_foreach(a, i, v)
    {
        int n = snprintf(buf + off, size - off, "%s%s", i ? ", " : "", json_string_value(v));
        if (n < 0 || (size_t)n >= size - off) break;
        off += (size_t)n;
    }
}

static void log_result(const json_t *res, const char *trigger, const char *file, double ms)
{
    static const char *const keys[] = {"added", "removed", "restarted", "updated", "needs_restart"};
    char parts[5][512];
    for (int k = 0; k < 5; k++)
        names_str(json_object_get(res, keys[k]), parts[k], sizeof parts[k]);
    XG_INFO(COMPONENT,
            "configuration reloaded (%s) from '%s' in %.1f ms: added [%s], removed [%s], "
            "restarted [%s], updated [%s], %zu unchanged",
            trigger, file, ms, parts[0], parts[1], parts[2], parts[3],
            json_array_size(json_object_get(res, "unchanged")));
    if (parts[4][0])
        XG_WARN(COMPONENT, "reload: changed keys that only a restart applies (old values kept): %s",
                parts[4]);
}

/* The reply and the /events announcement: the result and the adapter set now. */
static char *announce(struct xg_gateway *gw, json_t *res)
{
    char *reply = json_dumps(res, JSON_COMPACT);
    json_t *set = json_array();
    for (int i = 0; i < gw->n_adapters; i++) {
        struct xg_gw_adapter *ga = gw->adapters[i];
        if (ga)
            json_array_append_new(set, json_pack("{s:i, s:s, s:s}", "index", i, "name", ga->a.name,
                                                 "type", ga->a.ops->type));
    }
    json_object_set_new(res, "adapters", set);
    char *event = json_dumps(res, JSON_COMPACT);
    if (event) xg_inspector_reloaded(gw, event);
    free(event);
    return reply;
}

char *xg_gateway_reload(struct xg_gateway *gw, const char *trigger, bool *ok_out)
{
    const int64_t t0 = xg_clock_mono_ns();
    json_t *res = json_object();
    json_t *added = json_array(), *removed = json_array(), *restarted = json_array();
    json_t *updated = json_array(), *unchanged = json_array(), *needs = json_array();
    json_t *errors = json_array();
    json_object_set_new(res, "added", added);
    json_object_set_new(res, "removed", removed);
    json_object_set_new(res, "restarted", restarted);
    json_object_set_new(res, "updated", updated);
    json_object_set_new(res, "unchanged", unchanged);
    json_object_set_new(res, "needs_restart", needs);
    json_object_set_new(res, "errors", errors);
    const char *file = gw->opts && gw->opts->config_path   ? gw->opts->config_path
                       : gw->opts && gw->opts->config_name ? gw->opts->config_name
                                                           : "<embedded>";
    bool ok = false;
    struct xg_gateway *cand = calloc(1, sizeof *cand);
    /* the process-wide state a load sets: put back unless the reload applies it */
    const enum xg_log_level old_level = xg_log_get_level();
    char old_resolv[512];
    snprintf(old_resolv, sizeof old_resolv, "%s", xg_tclient_resolv_conf());
    struct xg_error err = {0};
    int rc = !cand || !gw->opts ? xg_error_set(&err, -ENOMEM, "out of memory")
                                : xg_gateway_load(cand, gw->opts, &err);
    xg_log_set_level(old_level);
    const bool resolv_changed = strcmp(old_resolv, xg_tclient_resolv_conf()) != 0;
    xg_tclient_set_resolv_conf(old_resolv[0] ? old_resolv : NULL);
    if (rc) {
        json_array_append_new(errors, json_string(err.msg[0] ? err.msg : strerror(-rc)));
        /* every further error of the file, as xrgate --check lists them */
        for (int i = 0; cand && i < cand->n_errors; i++)
            if (strcmp(cand->errors[i], err.msg))
                json_array_append_new(errors, json_string(cand->errors[i]));
        for (int i = 0; cand && rc == -EPERM && i < cand->n_warnings; i++)
            json_array_append_new(errors,
                                  json_sprintf("insecure configuration: %s", cand->warnings[i]));
        XG_ERR(COMPONENT, "configuration reload (%s) refused, nothing changed: %s", trigger,
               err.msg[0] ? err.msg : strerror(-rc));
        goto out;
    }

    /* what goes, what changes; then stop before start, so that ports are free again */
    int plan[XG_MAX_ADAPTERS]; /* per old index: enum change, -1 = removed */
    struct {
        char name[64];
        int index;
    } again[XG_MAX_ADAPTERS]; /* restarted adapters: they come back on their index */
    memset(again, 0, sizeof again);
    int n_again = 0;
    bool any_replaced = false;
    for (int i = 0; i < XG_MAX_ADAPTERS; i++)
        plan[i] = KEEP;
    for (int i = 0; i < gw->n_adapters; i++) {
        struct xg_gw_adapter *ga = gw->adapters[i];
        if (!ga) continue;
        struct xg_gw_adapter *neu = by_name(cand, ga->a.name);
        plan[i] = neu ? (int)classify(ga, neu) : -1;
        if (plan[i] == -1 || plan[i] == RESTART) any_replaced = true;
    }
    for (int i = 0; i < gw->n_adapters; i++) {
        struct xg_gw_adapter *ga = gw->adapters[i];
        if (!ga || (plan[i] != -1 && plan[i] != RESTART)) continue;
        json_array_append_new(plan[i] == -1 ? removed : restarted, json_string(ga->a.name));
        size_t before = xg_table_count(gw->table);
        char name[64];
        snprintf(name, sizeof name, "%s", ga->a.name);
        if (plan[i] == RESTART) {
            snprintf(again[n_again].name, sizeof again[n_again].name, "%s", name);
            again[n_again++].index = i;
        }
        xg_gw_adapter_free(gw, ga);
        XG_INFO(name, "adapter %s by the reload (%zu entities removed)",
                plan[i] == -1 ? "stopped" : "stopping to restart",
                before - xg_table_count(gw->table));
    }
    /* the level set at run time (or by the last load) stays unless log_level changed */
    const bool level_changed = gw->conf.log_level != cand->conf.log_level;
    apply_gateway(gw, &cand->conf, resolv_changed, updated, needs);
    struct xg_conf *prev = gw->root;
    gw->root = cand->root; /* the adapters made from now on read the new tree */
    cand->root = NULL;
    /* restarted adapters first, back on their own index; then the new ones on free indices */
    for (int i = 0; i < 2 * cand->n_adapters; i++) {
        struct xg_gw_adapter *neu = cand->adapters[i % cand->n_adapters];
        struct xg_gw_adapter *ga = by_name(gw, neu->a.name);
        int index = -1;
        for (int k = 0; k < n_again; k++)
            if (!strcmp(again[k].name, neu->a.name)) index = again[k].index;
        if ((i < cand->n_adapters) != (ga || index >= 0)) continue;
        if (ga && plan[ga->a.index] == KEEP) {
            json_array_append_new(unchanged, json_string(ga->a.name));
        } else if (ga) { /* UPDATE: a sink's rate or filters */
            json_array_append_new(updated, json_string(ga->a.name));
            update_sink(gw, ga, neu, errors);
        } else {
            if (index < 0) json_array_append_new(added, json_string(neu->a.name));
            any_replaced = true;
            bring_up(gw, neu->conf, neu->a.name, index >= 0 ? index : free_index(gw), errors);
        }
    }
    xg_calib_reload(gw, cand); /* after the adapters: their indices are final */
    retire_roots(gw, prev);
    if (level_changed) xg_log_set_level(gw->conf.log_level);
    /* the new audit's findings replace the old ones */
    for (int i = 0; i < gw->n_warnings; i++)
        free(gw->warnings[i]);
    free(gw->warnings);
    gw->warnings = cand->warnings;
    gw->n_warnings = cand->n_warnings;
    cand->warnings = NULL;
    cand->n_warnings = 0;
    for (int i = 0; i < gw->n_warnings; i++)
        XG_WARN(COMPONENT, "insecure configuration: %s", gw->warnings[i]);
    if (any_replaced) { /* no series of a gone adapter lingers in /metrics */
        struct xg_metrics *m = xg_metrics_new();
        if (m) {
            xg_metrics_free(gw->metrics);
            gw->metrics = m;
        }
    }
    ok = json_array_size(errors) == 0;
    const double ms = (double)(xg_clock_mono_ns() - t0) * 1e-6;
    log_result(res, trigger, file, ms);
out:
    if (cand) xg_gateway_free(cand);
    free(cand);
    if (ok) {
        gw->reloads_ok++;
        gw->last_reload_ok_unix = (double)xg_clock_wall_ns() * 1e-9;
    } else {
        gw->reloads_failed++;
    }
    gw->last_reload_failed = !ok;
    json_object_set_new(res, "ok", json_boolean(ok));
    json_object_set_new(res, "file", json_string(file));
    json_object_set_new(res, "duration_ms", json_real((double)(xg_clock_mono_ns() - t0) * 1e-6));
    char *reply = announce(gw, res);
    json_decref(res);
    if (ok_out) *ok_out = ok;
    return reply;
}

/* ---- POST /api/reload ---- */

static void reply_text(struct evhttp_request *req, int code, const char *reason, const char *text)
{
    struct evbuffer *b = evbuffer_new();
    if (b) evbuffer_add(b, text, strlen(text));
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", "text/plain");
    evhttp_send_reply(req, code, reason, b);
    if (b) evbuffer_free(b);
}

/* A browser sends Origin on a cross-site POST (a "simple request" needs no CORS preflight):
 * accept none, or one naming the Host this request was sent to. */
bool xg_admin_same_origin(struct evhttp_request *req)
{
    struct evkeyvalq *in = evhttp_request_get_input_headers(req);
    const char *origin = evhttp_find_header(in, "Origin");
    const char *host = evhttp_find_header(in, "Host");
    if (!origin) return true;
    const char *sep = strstr(origin, "://");
    return sep && host && !strcmp(sep + 3, host) &&
           (!strncmp(origin, "http://", 7) || !strncmp(origin, "https://", 8));
}

void xg_admin_reload(struct xg_gateway *gw, struct evhttp_request *req, const char *peer)
{
    if (evhttp_request_get_command(req) != EVHTTP_REQ_POST) {
        evhttp_add_header(evhttp_request_get_output_headers(req), "Allow", "POST");
        reply_text(req, 405, "Method Not Allowed", "405 /api/reload takes POST only\n");
        return;
    }
    if (!xg_admin_same_origin(req)) {
        reply_text(req, 403, "Forbidden",
                   "403 forbidden: a cross-site request (its Origin is not this gateway)\n");
        return;
    }
    char trigger[160];
    snprintf(trigger, sizeof trigger, "POST /api/reload from %s", peer);
    bool ok = false;
    char *json = xg_gateway_reload(gw, trigger, &ok);
    if (!json) {
        reply_text(req, 500, "Internal Server Error", "500 out of memory\n");
        return;
    }
    struct evbuffer *b = evbuffer_new();
    if (b) evbuffer_add(b, json, strlen(json));
    struct evkeyvalq *h = evhttp_request_get_output_headers(req);
    evhttp_add_header(h, "Content-Type", "application/json");
    evhttp_add_header(h, "Cache-Control", "no-store");
    evhttp_send_reply(req, ok ? 200 : 422, ok ? "OK" : "Unprocessable Entity", b);
    if (b) evbuffer_free(b);
    free(json);
}
