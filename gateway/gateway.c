#include "gateway/gateway.h"

#include <ctype.h>
#include <errno.h>
#include <event2/event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock/clock.h"
#include "core/table/egress_pass.h"
#include "core/net/net.h"
#include "core/conf/path.h"
#include "core/net/transport_client.h"
#include "core/net/tls.h"
#include "gateway/calib.h"
#include "gateway/gateway_int.h"
#include "mappings/conf_yaml.h"

#define COMPONENT "gateway"

/* ---- naming / filtering hooks for the table ---- */

static void namer(void *user, int origin, const char *def, char *name, size_t size,
                  enum xg_kind *kind)
{
    struct xg_gateway *gw = user;
    struct xg_gw_adapter *ga = origin < gw->n_adapters ? gw->adapters[origin] : NULL;
    xg_rename_apply(ga ? &ga->rename : NULL, def, name, size, kind);
}

static bool sink_accept(void *user, int sink, const struct xg_entity *e)
{
    struct xg_gateway *gw = user;
    struct xg_gw_adapter *ga = gw->adapters[sink];
    if (ga->include.n && !xg_globs_match(&ga->include, xg_entity_name(e))) return false;
    return !xg_globs_match(&ga->exclude, xg_entity_name(e));
}

/* Sink `sink` has something to send: the next egress pass drains it (after the callback that is
 * running now, e.g. the ingress read that pushed the batch). */
void xg_gw_make_due(struct xg_gateway *gw, int sink)
{
    gw->egress_due |= UINT64_C(1) << sink;
    if (gw->pass_ev) event_active(gw->pass_ev, EV_TIMEOUT, 0); /* once, however often called */
}

static void wake(void *user, int sink)
{
    struct xg_gateway *gw = user;
    struct xg_gw_adapter *ga = gw->adapters[sink];
    if (ga->started && ga->a.rate_hz <= 0) xg_gw_make_due(gw, sink);
}

static void entity_event(void *user, const struct xg_entity *e, bool added)
{
    struct xg_gateway *gw = user;
    for (int i = 0; i < gw->n_adapters; i++) {
        struct xg_gw_adapter *ga = gw->adapters[i];
        if (ga && ga->started && ga->a.ops->entity_event && xg_entity_origin(e) != i)
            ga->a.ops->entity_event(&ga->a, e, added);
    }
    XG_DEBUG(COMPONENT, "entity %u '%s' %s", xg_entity_id(e), xg_entity_name(e),
             added ? "added" : "removed");
}

static void cut_through(void *user, uint64_t woken, int origin); /* runtime, below */

/* ---- configuration ---- */

/* The token is the file's first line (a trailing CR/LF is not part of it; anything after the
 * first line is ignored, e.g. a comment). */
static int read_secret_file(const char *path, char *out, size_t size, const struct xg_conf *at,
                            struct xg_error *err)
{
    int orc = 0;
    const char *kind = NULL;
    FILE *f = xg_file_fopen_regular(path, "r", false, &orc, &kind); /* never blocks (a FIFO) */
    if (!f)
        return xg_conf_error(err, at, orc, "cannot read token_file '%s': %s", path,
                             xg_file_strerror(orc, kind));
    char line[1024];
    bool got = fgets(line, sizeof line, f) != NULL;
    fclose(f);
    size_t n = got ? strcspn(line, "\r\n") : 0;
    bool whole = got && (line[n] != '\0' || strlen(line) < sizeof line - 1);
    line[n] = '\0';
    if (!n)
        return xg_conf_error(err, at, -EINVAL,
                             "token_file '%s': the first line (the token) is empty", path);
    if (strspn(line, " \t\v\f") == n) /* every request would then get 401 */
        return xg_conf_error(err, at, -EINVAL,
                             "token_file '%s': the first line (the token) is only whitespace",
                             path);
    if (!whole || n >= size)
        return xg_conf_error(err, at, -EINVAL,
                             "token_file '%s': the token (first line) is longer than %zu bytes",
                             path, size - 1);
    memcpy(out, line, n + 1);
    return 0;
}

/* A path from the configuration, relative to the configuration file's folder (core/conf/path.h). */
static int conf_path(const struct xg_conf *at, const char *path, char *out, size_t size,
                     struct xg_error *err)
{
    int rc = xg_conf_path(at, path, out, size);
    if (rc == -ENAMETOOLONG)
        return xg_conf_error(err, at, rc, "'%s': the path is longer than %zu bytes", path,
                             size - 1);
    if (rc) return xg_conf_error(err, at, rc, "the path is empty");
    return 0;
}

/* gateway.resolv_conf: the resolver of the client adapters' host names
 * (core/net/transport_client.h). Must be readable now, so that `xrgate --check` reports it. */
static int load_resolv_conf(const struct xg_conf *g, struct xg_error *err)
{
    const char *s;
    char path[512];
    int rc;
    if ((rc = xg_conf_string(g, "resolv_conf", NULL, &s, err))) return rc;
    if (!s) return xg_tclient_set_resolv_conf(NULL);
    const struct xg_conf *at = xg_conf_get(g, "resolv_conf");
    if ((rc = conf_path(at, s, path, sizeof path, err))) return rc;
    const char *kind = NULL;
    if ((rc = xg_file_check_regular(path, &kind)))
        return xg_conf_error(err, at, rc, "resolv_conf '%s': %s", path, xg_file_strerror(rc, kind));
    return xg_tclient_set_resolv_conf(path);
}

/* The defaults of every gateway key. */
static void gateway_defaults(struct xg_gateway_conf *c)
{
    xg_table_params_default(&c->table);
    snprintf(c->id, sizeof c->id, "xrgate");
    snprintf(c->admin_listen, sizeof c->admin_listen, "127.0.0.1:8080");
    c->admin_max_connections = 64;
    c->admin_request_timeout_ms = 10000;
    c->log_level = XG_LOG_INFO;
    xg_tclient_set_resolv_conf(NULL);
}

/* The gateway section is read in parts (one key each: a scalar, or a map read up to its first
 * error), so that one bad key does not hide the errors of the others (xrgate --check lists them
 * all) and no key is left unread by an error before it. */

/* resolv_conf */
static int gateway_resolv(struct xg_gateway_conf *c, const struct xg_conf *g, struct xg_error *err)
{
    (void)c;
    return load_resolv_conf(g, err);
}

/* id */
static int gateway_id(struct xg_gateway_conf *c, const struct xg_conf *g, struct xg_error *err)
{
    int rc;
    const char *s;
    if ((rc = xg_conf_string(g, "id", NULL, &s, err))) return rc;
    if (s) {
        bool ok = *s && strlen(s) < sizeof c->id;
        for (const char *q = s; ok && *q; q++)
            ok = (unsigned char)*q > 0x20 && *q != 0x7f;
        if (!ok)
            return xg_conf_error(err, xg_conf_get(g, "id"), -EINVAL,
                                 "gateway id must be 1-%zu printable characters without spaces",
                                 sizeof c->id - 1);
        snprintf(c->id, sizeof c->id, "%s", s);
    }
    return 0;
}

/* admin: listen, token_file, max_connections, request_timeout_ms, tls */
static int gateway_admin(struct xg_gateway_conf *c, const struct xg_conf *g, struct xg_error *err)
{
    int rc;
    const char *s;
    const struct xg_conf *admin = xg_conf_get(g, "admin");
    if (admin) {
        if ((rc = xg_conf_expect(admin, XG_CONF_MAP, "admin", err))) return rc;
        if ((rc = xg_conf_string(admin, "listen", NULL, &s, err))) return rc;
        if (s) {
            char host[128];
            int port = -1;
            if (strcmp(s, "off") &&
                (xg_net_split_hostport(s, host, sizeof host, &port, -1) || port < 0))
                return xg_conf_error(err, xg_conf_get(admin, "listen"), -EINVAL,
                                     "admin listen '%s' must be host:port (or \"off\")", s);
            snprintf(c->admin_listen, sizeof c->admin_listen, "%s", s);
        }
        if ((rc = xg_conf_string(admin, "token_file", NULL, &s, err))) return rc;
        char tp[1024];
        if (s && !getenv("XRGATE_ADMIN_TOKEN") &&
            ((rc = conf_path(xg_conf_get(admin, "token_file"), s, tp, sizeof tp, err)) ||
             (rc = read_secret_file(tp, c->admin_token, sizeof c->admin_token,
                                    xg_conf_get(admin, "token_file"), err))))
            return rc;
        int64_t v;
        if ((rc = xg_conf_int(admin, "max_connections", 64, 1, 4096, &v, err))) return rc;
        c->admin_max_connections = (int)v;
        if ((rc = xg_conf_int(admin, "request_timeout_ms", 10000, 100, 600000, &v, err))) return rc;
        c->admin_request_timeout_ms = (int)v;
        const struct xg_conf *tls = xg_conf_get(admin, "tls");
        if (tls) {
            if ((rc = xg_conf_expect(tls, XG_CONF_MAP, "tls", err))) return rc;
            const char *cert, *key;
            if ((rc = xg_conf_string(tls, "cert", NULL, &cert, err)) ||
                (rc = xg_conf_string(tls, "key", NULL, &key, err)))
                return rc;
            if (!cert || !key)
                return xg_conf_error(err, tls, -EINVAL, "admin.tls needs both 'cert' and 'key'");
            if ((rc = conf_path(xg_conf_get(tls, "cert"), cert, c->admin_tls_cert,
                                sizeof c->admin_tls_cert, err)) ||
                (rc = conf_path(xg_conf_get(tls, "key"), key, c->admin_tls_key,
                                sizeof c->admin_tls_key, err)))
                return rc;
            /* load them now, so that `xrgate --check` reports a bad certificate or key */
            struct xg_tls_conf tc = {
                .server = true, .cert = c->admin_tls_cert, .key = c->admin_tls_key};
            struct xg_error terr = {0};
            struct xg_tls_ctx *t = xg_tls_ctx_new(&tc, &terr);
            if (!t) return xg_conf_error(err, tls, terr.code, "admin.tls: %s", terr.msg);
            xg_tls_ctx_free(t);
        }
    }
    return 0;
}

/* predict: max_horizon_ms, velocity_window_ms, motion_memory_ms */
static int gateway_predict(struct xg_gateway_conf *c, const struct xg_conf *g, struct xg_error *err)
{
    int rc;
    const struct xg_conf *predict = xg_conf_get(g, "predict");
    if (predict) {
        int64_t v;
        if ((rc = xg_conf_expect(predict, XG_CONF_MAP, "predict", err)) ||
            (rc = xg_conf_int(predict, "max_horizon_ms", 100, 0, 10000, &v, err)))
            return rc;
        c->table.max_horizon_ns = v * XG_NS_PER_MS;
        if ((rc = xg_conf_int(predict, "velocity_window_ms", 100, 1, 10000, &v, err))) return rc;
        c->table.velocity_window_ns = v * XG_NS_PER_MS;
        if ((rc = xg_conf_int(predict, "motion_memory_ms", 2000, 0, 60000, &v, err))) return rc;
        c->table.motion_memory_ns = v * XG_NS_PER_MS;
    }
    return 0;
}

/* entity: stale_ms, expire_ms, max_entities */
static int gateway_entity(struct xg_gateway_conf *c, const struct xg_conf *g, struct xg_error *err)
{
    int rc;
    const struct xg_conf *entity = xg_conf_get(g, "entity");
    if (entity) {
        int64_t v;
        if ((rc = xg_conf_expect(entity, XG_CONF_MAP, "entity", err)) ||
            (rc = xg_conf_int(entity, "stale_ms", 500, 1, 3600000, &v, err)))
            return rc;
        c->table.stale_ns = v * XG_NS_PER_MS;
        if ((rc = xg_conf_int(entity, "expire_ms", 10000, 1, 86400000, &v, err))) return rc;
        c->table.expire_ns = v * XG_NS_PER_MS;
        if ((rc = xg_conf_int(entity, "max_entities", 65536, 1, 16777216, &v, err))) return rc;
        c->table.max_entities = (uint32_t)v;
        if (c->table.expire_ns < c->table.stale_ns)
            return xg_conf_error(err, xg_conf_get(entity, "expire_ms"), -EINVAL,
                                 "expire_ms (%lld) must not be less than stale_ms (%lld)",
                                 (long long)(c->table.expire_ns / XG_NS_PER_MS),
                                 (long long)(c->table.stale_ns / XG_NS_PER_MS));
    }
    return 0;
}

/* strict */
static int gateway_strict(struct xg_gateway_conf *c, const struct xg_conf *g, struct xg_error *err)
{
    return xg_conf_bool(g, "strict", false, &c->strict, err);
}

/* log_level */
static int gateway_log_level(struct xg_gateway_conf *c, const struct xg_conf *g,
                             struct xg_error *err)
{
    int rc;
    const char *s;
    if ((rc = xg_conf_string(g, "log_level", "info", &s, err))) return rc;
    if (xg_log_parse_level(s, &c->log_level))
        return xg_conf_error(err, xg_conf_get(g, "log_level"), -EINVAL,
                             "log_level '%s' must be error, warn, info, debug or trace", s);
    return 0;
}

static bool valid_name(const char *s)
{
    if (!*s || strlen(s) >= 64) return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-' && *s != '.') return false;
    return true;
}

/* xg_gw_adapter_load; check_unused: also fail on the node's first unknown key (else the caller
 * reports them). */
static int adapter_load(struct xg_gateway *gw, const struct xg_conf *node, int index,
                        bool check_unused, struct xg_error *err)
{
    int rc;
    if ((rc = xg_conf_expect(node, XG_CONF_MAP, "adapters item", err))) return rc;
    const char *name, *type;
    if ((rc = xg_conf_string(node, "name", NULL, &name, err)) ||
        (rc = xg_conf_string(node, "type", NULL, &type, err)))
        return rc;
    if (!name) return xg_conf_error(err, node, -EINVAL, "adapter needs a 'name'");
    if (!valid_name(name))
        return xg_conf_error(err, xg_conf_get(node, "name"), -EINVAL,
                             "adapter name '%s' must be 1-63 characters of [A-Za-z0-9_.-]", name);
    if (!type)
        return xg_conf_error(err, node, -EINVAL, "adapter '%s' needs a 'type' (one of: %s)", name,
                             xg_registry_types());
    const struct xg_adapter_ops *ops = xg_registry_find(type);
    if (!ops)
        return xg_conf_error(err, xg_conf_get(node, "type"), -EINVAL,
                             "unknown adapter type '%s' (known: %s)", type, xg_registry_types());
    for (int i = 0; index < 0 && i < gw->n_adapters; i++)
        if (gw->adapters[i] && !strcmp(gw->adapters[i]->a.name, name))
            return xg_conf_error(err, xg_conf_get(node, "name"), -EINVAL,
                                 "duplicate adapter name '%s'", name);
    if (index >= XG_MAX_ADAPTERS || (index >= 0 && gw->adapters[index]))
        return xg_error_set(err, -EINVAL, "adapter '%s': index %d is taken", name, index);
    if (index < 0 && gw->n_adapters >= XG_MAX_ADAPTERS)
        return xg_conf_error(err, node, -ENOSPC, "too many adapters (at most %d)", XG_MAX_ADAPTERS);

    struct xg_gw_adapter *ga = calloc(1, sizeof *ga);
    if (!ga) return -ENOMEM;
    ga->gw = gw;
    ga->conf = node;
    ga->root = ga->conf_root = gw->root;
    ga->a.ops = ops;
    ga->a.index = index >= 0 ? index : gw->n_adapters;
    ga->a.base = gw->base;
    ga->a.table = gw->table;
    snprintf(ga->a.name, sizeof ga->a.name, "%s", name);
    ga->a.frame = &ga->frame;
    ga->a.gateway_id = gw->conf.id;
    ga->a.admin_token = gw->conf.admin_token;
    ga->a.admin_tls_cert = gw->conf.admin_tls_cert;
    ga->a.admin_tls_key = gw->conf.admin_tls_key;
    ga->a.whole_frames = ops->whole_frames;
    gw->adapters[ga->a.index] = ga;
    if (ga->a.index >= gw->n_adapters) gw->n_adapters = ga->a.index + 1;
    xg_table_set_adapter_name(gw->table, ga->a.index, ga->a.name);

    /* the type's defaults (ops) for the keys the gateway owns, checked by xg_registry_check() */
    const struct xg_conf *frame = xg_conf_get(node, "frame");
    if (!frame && ops->default_frame)
        rc = xg_frame_preset(ops->default_frame, &ga->frame, err);
    else
        rc = xg_frame_from_conf(frame, &ga->frame, err);
    if (rc || (rc = xg_rename_from_conf(xg_conf_get(node, "rename"), &ga->rename, err))) return rc;
    xg_frame_finalize(&ga->frame);
    if (ops->is_sink) {
        double rate = ops->default_rate_hz > 0 ? ops->default_rate_hz : XG_DEFAULT_RATE_HZ;
        if ((rc = xg_conf_double(node, "rate_hz", rate, 0.0, 100000.0, &ga->a.rate_hz, err)) ||
            (rc = xg_globs_from_conf(xg_conf_get(node, "include"), &ga->include, err)) ||
            (rc = xg_globs_from_conf(xg_conf_get(node, "exclude"), &ga->exclude, err)))
            return rc;
    }
    struct xg_error e2 = {0};
    ga->created = true; /* destroy() runs even if create() fails half-way */
    rc = ops->create(&ga->a, node, &e2);
    if (rc) return xg_error_set(err, rc, "%s", e2.msg[0] ? e2.msg : "adapter create failed");
    if (check_unused && (rc = xg_conf_check_unused(node, err))) return rc;
    if (ops->is_sink && (rc = xg_table_add_sink(gw->table, ga->a.index, sink_accept, wake, gw)))
        return rc;
    return 0;
}

int xg_gw_adapter_load(struct xg_gateway *gw, const struct xg_conf *node, int index,
                       struct xg_error *err)
{
    return adapter_load(gw, node, index, true, err);
}

/* Append e to gw->errors (a message already there is not repeated; on ENOMEM it is dropped:
 * the first error is always in xg_gateway_load's err). */
static void add_error(void *user, const struct xg_error *e)
{
    struct xg_gateway *gw = user;
    for (int i = 0; i < gw->n_errors; i++)
        if (!strcmp(gw->errors[i], e->msg)) return;
    char **list = realloc(gw->errors, (size_t)(gw->n_errors + 1) * sizeof *list);
    if (!list) return;
    gw->errors = list;
    if ((list[gw->n_errors] = strdup(e->msg[0] ? e->msg : "invalid configuration"))) gw->n_errors++;
}

/* A section (the gateway map, an adapter) failed with e: keep the error (the first one also in
 * err), report its misspelt keys (a reader stops at its first error, so only keys that are
 * certainly typos), and mark it read so that the unknown-key pass does not list the keys it did
 * not reach. Returns the first error's code. */
static int section_failed(struct xg_gateway *gw, struct xg_conf *at, const struct xg_error *e,
                          int rc, int first, struct xg_error *err)
{
    if (!first && err) *err = *e;
    if (!first && err) err->code = rc;
    add_error(gw, e);
    if (at) {
        xg_conf_unused_each(at, true, add_error, gw);
        xg_conf_mark_used(at);
    }
    return first ? first : rc;
}

int xg_gateway_load(struct xg_gateway *gw, const struct xg_gateway_opts *opts, struct xg_error *err)
{
    memset(gw, 0, sizeof *gw);
    if ((gw->opts = malloc(sizeof *gw->opts))) *gw->opts = *opts;
    if (opts->config_path)
        gw->root = xg_conf_yaml_load(opts->config_path, err);
    else
        gw->root = xg_conf_yaml_parse(opts->config_text, strlen(opts->config_text),
                                      opts->config_name ? opts->config_name : "<embedded>", err);
    if (!gw->root) return err && err->code ? err->code : -EINVAL;

    /* every error of the file (xrgate --check lists them, gw->errors): the gateway keys, then
     * each adapter on its own, then every unknown key; the first one is returned in err */
    int first = 0, rc;
    struct xg_error e = {0};
    static const struct {
        int (*load)(struct xg_gateway_conf *c, const struct xg_conf *g, struct xg_error *err);
        const char *map; /* the part's own map (left unread after its error), or NULL */
    } parts[] = {{gateway_resolv, NULL},       {gateway_id, NULL},         {gateway_admin, "admin"},
                 {gateway_predict, "predict"}, {gateway_entity, "entity"}, {gateway_strict, NULL},
                 {gateway_log_level, NULL}}; /* a part without a map reads one key */
    struct xg_conf *g = xg_conf_get(gw->root, "gateway");
    gateway_defaults(&gw->conf);
    if (g && (rc = xg_conf_expect(g, XG_CONF_MAP, "gateway", &e)))
        first = section_failed(gw, g, &e, rc, first, err);
    else if (g)
        for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
            xg_error_clear(&e);
            if ((rc = parts[i].load(&gw->conf, g, &e)))
                first = section_failed(gw, parts[i].map ? xg_conf_get(g, parts[i].map) : NULL, &e,
                                       rc, first, err);
        }
    if (opts->admin_listen)
        snprintf(gw->conf.admin_listen, sizeof gw->conf.admin_listen, "%s", opts->admin_listen);
    if (opts->admin_token)
        snprintf(gw->conf.admin_token, sizeof gw->conf.admin_token, "%s", opts->admin_token);
    if (opts->log_level && xg_log_parse_level(opts->log_level, &gw->conf.log_level)) {
        xg_error_set(&e, -EINVAL, "log level '%s' must be error, warn, info, debug or trace",
                     opts->log_level);
        first = section_failed(gw, NULL, &e, -EINVAL, first, err);
    }
    if (!first) xg_log_set_level(gw->conf.log_level);
    gw->conf.strict = gw->conf.strict || opts->strict;

    /* precise timers (timerfd on Linux): egress ticks and replay frames fire within
     * microseconds of their due time instead of the next millisecond */
    struct event_config *ec = event_config_new();
    if (ec) {
        event_config_set_flag(ec, EVENT_BASE_FLAG_PRECISE_TIMER);
        gw->base = event_base_new_with_config(ec);
        event_config_free(ec);
    }
    if (!gw->base) gw->base = event_base_new();
    gw->table = xg_table_new(&gw->conf.table);
    gw->metrics = xg_metrics_new();
    if (!gw->base || !gw->table || !gw->metrics) return xg_error_set(err, -ENOMEM, "out of memory");
    xg_table_set_namer(gw->table, namer, gw);
    xg_table_set_cut_through(gw->table, cut_through, gw);
    xg_table_add_listener(gw->table, entity_event, gw);

    if ((rc = xg_registry_check(err))) return rc;
    struct xg_conf *adapters = xg_conf_get(gw->root, "adapters");
    if (adapters && (rc = xg_conf_expect(adapters, XG_CONF_SEQ, "adapters", &e)))
        first = section_failed(gw, adapters, &e, rc, first, err);
    else if (adapters)
        for (size_t i = 0; i < adapters->n_items; i++) {
            struct xg_conf *node = adapters->items[i];
            xg_error_clear(&e);
            if ((rc = adapter_load(gw, node, -1, false, &e))) {
                if (rc == -ENOMEM) return section_failed(gw, node, &e, rc, first, err);
                first = section_failed(gw, node, &e, rc, first, err);
            } else if (xg_conf_unused_each(node, false, add_error, gw)) {
                /* its unknown keys, each an error */
                if (!first)
                    xg_error_set(err, -EINVAL, "%s", gw->n_errors ? gw->errors[0] : "unknown key");
                first = first ? first : -EINVAL;
                xg_conf_mark_used(node);
            }
        }
    struct xg_conf *calibs = xg_conf_get(gw->root, "calibrations"); /* after the adapters */
    xg_error_clear(&e);
    if (calibs && (rc = xg_conf_expect(calibs, XG_CONF_SEQ, "calibrations", &e)))
        first = section_failed(gw, calibs, &e, rc, first, err);
    else if (calibs)
        for (size_t i = 0; i < calibs->n_items; i++) { /* each item on its own, as adapters */
            xg_error_clear(&e);
            if ((rc = xg_calib_load(gw, calibs->items[i], &e))) {
                if (rc == -ENOMEM) return section_failed(gw, calibs->items[i], &e, rc, first, err);
                first = section_failed(gw, calibs->items[i], &e, rc, first, err);
            }
        }
    if (xg_conf_unused_each(gw->root, false, add_error, gw) && !first) {
        first = -EINVAL;
        if (gw->n_errors) xg_error_set(err, first, "%s", gw->errors[0]);
    }
    if (first) return first;
    return xg_gateway_audit(gw, opts, err);
}

/* ---- runtime ---- */

static void tick_cb(evutil_socket_t fd, short what, void *arg)
{
    struct xg_gw_adapter *ga = arg;
    if (ga->started) xg_gw_make_due(ga->gw, ga->a.index);
}

static void pass_drain(void *user, int sink)
{
    struct xg_gateway *gw = user;
    struct xg_gw_adapter *ga = gw->adapters[sink];
    if (ga && ga->started && ga->a.ops->drain) ga->a.ops->drain(&ga->a);
}

/* Send-on-change sinks that drain in slices (core/table/egress_pass.h). */
static uint64_t sliced_sinks(struct xg_gateway *gw)
{
    uint64_t m = 0;
    for (int i = 0; i < gw->n_adapters; i++) {
        struct xg_gw_adapter *ga = gw->adapters[i];
        if (ga && ga->started && ga->a.ops->is_sink && ga->a.rate_hz <= 0 && !ga->a.whole_frames)
            m |= UINT64_C(1) << i;
    }
    return m;
}

/* Cut-through (xg_table_set_cut_through): a long ingress batch has pushed XG_CUT_AFTER updates
 * since it woke sinks; the sliced ones other than the updating adapter send what is marked now,
 * before the ingress callback pushes the rest of its batch. The pass event, already active, sends
 * what remains after the read. */
static void cut_through(void *user, uint64_t woken, int origin)
{
    struct xg_gateway *gw = user;
    /* everything marked since the last cut, in one drain per sink (not sliced) */
    struct xg_egress_plan plan = {.due = woken & sliced_sinks(gw)};
    if (origin >= 0 && origin < XG_MAX_ADAPTERS) plan.due &= ~(UINT64_C(1) << origin);
    if (!plan.due) return;
    struct xg_egress_result r;
    xg_egress_pass_run(gw->table, xg_clock_mono_ns(), &plan, pass_drain, gw, &r);
    gw->egress_passes++;
    gw->egress_drains += r.drains;
}

/* The egress pass: every due sink, send-on-change ones in interleaved slices unless they send
 * whole frames, rate-limited ones whole; one pass time, one prediction per entity. */
static void pass_cb(evutil_socket_t fd, short what, void *arg)
{
    struct xg_gateway *gw = arg;
    struct xg_egress_plan plan = {0};
    for (int i = 0; i < gw->n_adapters; i++) {
        struct xg_gw_adapter *ga = gw->adapters[i];
        uint64_t bit = UINT64_C(1) << i;
        if (!(gw->egress_due & bit) || !ga || !ga->started) continue;
        /* a send-on-change sink whose set a cut-through emptied has nothing left to send */
        if (ga->a.rate_hz <= 0 && !xg_table_dirty_count(gw->table, i)) continue;
        plan.due |= bit;
        if (ga->a.rate_hz <= 0 && !ga->a.whole_frames) plan.sliced |= bit;
        plan.slice[i] = ga->a.egress_slice;
    }
    gw->egress_due = 0;
    if (!plan.due) return;
    struct xg_egress_result r;
    xg_egress_pass_run(gw->table, xg_clock_mono_ns(), &plan, pass_drain, gw, &r);
    gw->egress_passes++;
    gw->egress_drains += r.drains;
}

static void expire_cb(evutil_socket_t fd, short what, void *arg)
{
    struct xg_gateway *gw = arg;
    xg_table_expire(gw->table, xg_clock_mono_ns());
}

#define LAG_PERIOD_NS (100 * XG_NS_PER_MS)

static void lag_cb(evutil_socket_t fd, short what, void *arg)
{
    struct xg_gateway *gw = arg;
    int64_t now = xg_clock_mono_ns();
    double lag = (double)(now - gw->lag_expected_ns) * 1e-9;
    if (lag < 0) lag = 0;
    gw->loop_lag_s = lag;
    if (lag > gw->loop_lag_max_s) gw->loop_lag_max_s = lag;
    gw->lag_expected_ns = now + LAG_PERIOD_NS;
    struct timeval tv = {0, LAG_PERIOD_NS / 1000};
    evtimer_add(gw->lag_ev, &tv);
}

static void signal_cb(evutil_socket_t sig, short what, void *arg)
{
    struct xg_gateway *gw = arg;
    XG_INFO(COMPONENT, "received %s, stopping", sig == SIGINT ? "SIGINT" : "SIGTERM");
    xg_gateway_request_stop(gw);
}

/* SIGHUP reloads the configuration (gateway/reload.c; the reload logs what it did). SIGUSR1 and
 * SIGUSR2: their default action would kill the daemon without a word, so they are logged —
 * through a limiter, as anyone allowed to signal us could send thousands — and ignored. */
static void signal_ignored_cb(evutil_socket_t sig, short what, void *arg)
{
    struct xg_gateway *gw = arg;
    if (sig == SIGHUP) { /* after this callback: signals caught together make one reload */
        if (gw->reload_ev) event_active(gw->reload_ev, EV_TIMEOUT, 0);
        return;
    }
    XG_WARN_PEER(&gw->signal_log, COMPONENT, "%s ignored: xrgate defines no action for it",
                 sig == SIGUSR1 ? "SIGUSR1" : "SIGUSR2");
}

static void reload_cb(evutil_socket_t fd, short what, void *arg)
{
    bool ok;
    free(xg_gateway_reload(arg, "SIGHUP", &ok));
}

int xg_gw_adapter_retick(struct xg_gateway *gw, struct xg_gw_adapter *ga)
{
    if (ga->tick) event_del(ga->tick);
    if (!ga->a.ops->is_sink || ga->a.rate_hz <= 0) return 0;
    if (!ga->tick && !(ga->tick = event_new(gw->base, -1, EV_PERSIST, tick_cb, ga))) return -ENOMEM;
    double period = 1.0 / ga->a.rate_hz;
    struct timeval tv = {(time_t)period, (suseconds_t)((period - (time_t)period) * 1e6)};
    if (!tv.tv_sec && !tv.tv_usec) tv.tv_usec = 1;
    return event_add(ga->tick, &tv) ? -ENOMEM : 0;
}

int xg_gw_adapter_start(struct xg_gateway *gw, struct xg_gw_adapter *ga, struct xg_error *err)
{
    int rc;
    if (!ga) return 0;
    if (xg_gw_adapter_retick(gw, ga))
        return xg_error_set(err, -ENOMEM, "adapter '%s': cannot add tick", ga->a.name);
    if (ga->a.ops->start && (rc = ga->a.ops->start(&ga->a))) {
        if (ga->tick) event_del(ga->tick);
        return xg_error_set(err, rc, "adapter '%s' (%s) failed to start: %s", ga->a.name,
                            ga->a.ops->type, strerror(-rc));
    }
    ga->started = true;
    XG_INFO(ga->a.name, "%s adapter started (frame %s)", ga->a.ops->type, ga->a.frame->name);
    return 0;
}

int xg_gateway_start(struct xg_gateway *gw, struct xg_error *err)
{
    int rc;
    signal(SIGPIPE, SIG_IGN);
    gw->started_ns = xg_clock_mono_ns();
    gw->last_reload_ok_unix = (double)xg_clock_wall_ns() * 1e-9;
    gw->sigint_ev = evsignal_new(gw->base, SIGINT, signal_cb, gw);
    gw->sigterm_ev = evsignal_new(gw->base, SIGTERM, signal_cb, gw);
    gw->sighup_ev = evsignal_new(gw->base, SIGHUP, signal_ignored_cb, gw);
    gw->sigusr1_ev = evsignal_new(gw->base, SIGUSR1, signal_ignored_cb, gw);
    gw->sigusr2_ev = evsignal_new(gw->base, SIGUSR2, signal_ignored_cb, gw);
    gw->expire_ev = event_new(gw->base, -1, EV_PERSIST, expire_cb, gw);
    gw->lag_ev = evtimer_new(gw->base, lag_cb, gw);
    gw->pass_ev = event_new(gw->base, -1, 0, pass_cb, gw);
    gw->reload_ev = event_new(gw->base, -1, 0, reload_cb, gw);
    if (!gw->pass_ev || !gw->reload_ev || !gw->sigint_ev || !gw->sigterm_ev || !gw->sighup_ev ||
        !gw->sigusr1_ev || !gw->sigusr2_ev || !gw->expire_ev || !gw->lag_ev)
        return xg_error_set(err, -ENOMEM, "out of memory");
    struct event *sigs[] = {gw->sigint_ev, gw->sigterm_ev, gw->sighup_ev, gw->sigusr1_ev,
                            gw->sigusr2_ev};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        if (evsignal_add(sigs[i], NULL))
            return xg_error_set(err, -EIO, "cannot install signal handler %d",
                                (int)event_get_signal(sigs[i]));
    for (int i = 0; i < gw->n_warnings; i++)
        XG_WARN(COMPONENT, "insecure configuration: %s", gw->warnings[i]);
    struct timeval tv100 = {0, 100000};
    event_add(gw->expire_ev, &tv100);
    gw->lag_expected_ns = gw->started_ns + LAG_PERIOD_NS;
    evtimer_add(gw->lag_ev, &tv100);

    if ((rc = xg_admin_start(gw, err))) return rc;
    if ((rc = xg_calib_start(gw))) return xg_error_set(err, rc, "calibrations: out of memory");

    for (int i = 0; i < gw->n_adapters; i++)
        if ((rc = xg_gw_adapter_start(gw, gw->adapters[i], err))) return rc;
    /* a source may have produced samples while later sinks were still starting: their wake-up
     * was dropped then, so send-on-change sinks with a non-empty dirty set drain now */
    for (int i = 0; i < gw->n_adapters; i++) {
        struct xg_gw_adapter *ga = gw->adapters[i];
        if (ga && ga->a.ops->is_sink && ga->a.rate_hz <= 0 &&
            xg_table_dirty_count(gw->table, ga->a.index))
            xg_gw_make_due(gw, ga->a.index);
    }
    XG_INFO(COMPONENT, "xrgate %s '%s' running with %d adapter(s)", XRGATE_VERSION, gw->conf.id,
            gw->n_adapters);
    return 0;
}

int xg_gateway_run(struct xg_gateway *gw)
{
    event_base_dispatch(gw->base);
    return 0;
}

void xg_gw_adapter_stop(struct xg_gateway *gw, struct xg_gw_adapter *ga)
{
    (void)gw;
    if (!ga) return;
    if (ga->tick) event_del(ga->tick);
    if (ga->started && ga->a.ops->stop) ga->a.ops->stop(&ga->a);
    ga->started = false;
}

/* Free one adapter's own memory (after stop; the table is the caller's business). */
static void adapter_destroy(struct xg_gw_adapter *ga)
{
    if (ga->created && ga->a.ops->destroy) ga->a.ops->destroy(&ga->a);
    if (ga->tick) event_free(ga->tick);
    xg_rename_free(&ga->rename);
    xg_globs_free(&ga->include);
    xg_globs_free(&ga->exclude);
    free(ga);
}

void xg_gw_adapter_free(struct xg_gateway *gw, struct xg_gw_adapter *ga)
{
    if (!ga) return;
    int i = ga->a.index;
    xg_gw_adapter_stop(gw, ga);
    xg_table_drop_adapter(gw->table, i);
    gw->egress_due &= ~(UINT64_C(1) << i);
    adapter_destroy(ga);
    gw->adapters[i] = NULL;
    while (gw->n_adapters > 0 && !gw->adapters[gw->n_adapters - 1])
        gw->n_adapters--;
}

static void stop_adapters(struct xg_gateway *gw)
{
    for (int i = gw->n_adapters - 1; i >= 0; i--)
        xg_gw_adapter_stop(gw, gw->adapters[i]);
}

void xg_gateway_request_stop(struct xg_gateway *gw)
{
    if (gw->stopping) return;
    gw->stopping = true;
    stop_adapters(gw);
    xg_admin_stop(gw);
    event_base_loopexit(gw->base, NULL);
}

void xg_gateway_free(struct xg_gateway *gw)
{
    stop_adapters(gw);
    xg_admin_stop(gw);
    for (int i = 0; i < gw->n_adapters; i++)
        if (gw->adapters[i]) adapter_destroy(gw->adapters[i]);
    gw->n_adapters = 0;
    struct event **evs[] = {&gw->pass_ev,    &gw->expire_ev,  &gw->lag_ev,
                            &gw->sigint_ev,  &gw->sigterm_ev, &gw->sighup_ev,
                            &gw->sigusr1_ev, &gw->sigusr2_ev, &gw->reload_ev};
    for (size_t i = 0; i < sizeof evs / sizeof evs[0]; i++)
        if (*evs[i]) {
            event_free(*evs[i]);
            *evs[i] = NULL;
        }
    xg_calib_free(gw);
    xg_table_free(gw->table);
    gw->table = NULL;
    xg_metrics_free(gw->metrics);
    gw->metrics = NULL;
    if (gw->base) event_base_free(gw->base);
    gw->base = NULL;
    xg_conf_yaml_free(gw->root);
    gw->root = NULL;
    for (int i = 0; i < XG_OLD_ROOTS; i++) {
        xg_conf_yaml_free(gw->old_roots[i]);
        gw->old_roots[i] = NULL;
    }
    free(gw->opts);
    gw->opts = NULL;
    for (int i = 0; i < gw->n_warnings; i++)
        free(gw->warnings[i]);
    free(gw->warnings);
    gw->warnings = NULL;
    gw->n_warnings = 0;
    for (int i = 0; i < gw->n_errors; i++)
        free(gw->errors[i]);
    free(gw->errors);
    gw->errors = NULL;
    gw->n_errors = 0;
}
