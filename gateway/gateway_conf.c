/* The gateway: section of the configuration (docs/configuration.md, "gateway"): the admin
 * server, its token and TLS files, the resolver, the gateway id, prediction and entity
 * parameters, strict mode and the log level. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock/clock.h"
#include "core/conf/path.h"
#include "core/net/net.h"
#include "core/net/tls.h"
#include "core/net/transport_client.h"
#include "gateway/gateway_int.h"

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

/* A duration key in milliseconds (default and bounds in ms) into *ns, nanoseconds. */
static int conf_ms(const struct xg_conf *m, const char *key, int64_t def, int64_t min, int64_t max,
                   int64_t *ns, struct xg_error *err)
{
    int64_t v;
    int rc = xg_conf_int(m, key, def, min, max, &v, err);
    if (!rc) *ns = v * XG_NS_PER_MS;
    return rc;
}

/* predict: max_horizon_ms, velocity_window_ms, motion_memory_ms */
static int gateway_predict(struct xg_gateway_conf *c, const struct xg_conf *g, struct xg_error *err)
{
    int rc;
    const struct xg_conf *predict = xg_conf_get(g, "predict");
    if (predict) {
        if ((rc = xg_conf_expect(predict, XG_CONF_MAP, "predict", err)) ||
            (rc = conf_ms(predict, "max_horizon_ms", 100, 0, 10000, &c->table.max_horizon_ns,
                          err)) ||
            (rc = conf_ms(predict, "velocity_window_ms", 100, 1, 10000,
                          &c->table.velocity_window_ns, err)) ||
            (rc = conf_ms(predict, "motion_memory_ms", 2000, 0, 60000, &c->table.motion_memory_ns,
                          err)))
            return rc;
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
            (rc = conf_ms(entity, "stale_ms", 500, 1, 3600000, &c->table.stale_ns, err)) ||
            (rc = conf_ms(entity, "expire_ms", 10000, 1, 86400000, &c->table.expire_ns, err)))
            return rc;
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

int xg_gw_conf_load(struct xg_gateway *gw, int first, struct xg_error *err)
{
    int rc;
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
        first = xg_gw_section_failed(gw, g, &e, rc, first, err);
    else if (g)
        for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
            xg_error_clear(&e);
            if ((rc = parts[i].load(&gw->conf, g, &e)))
                first = xg_gw_section_failed(gw, parts[i].map ? xg_conf_get(g, parts[i].map) : NULL,
                                             &e, rc, first, err);
        }
    return first;
}
