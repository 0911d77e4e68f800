/* Insecure-configuration audit: settings that are valid but let someone on the network read or
 * inject poses, or let local users read a secret. Each finding is one warning naming the key's
 * file:line:column (or the environment variable it came from); `xrgate --check` prints them,
 * the daemon logs them at start, and strict mode (--strict / gateway.strict) refuses them.
 *
 * The audit reads the configuration tree after every adapter accepted it, so it only looks at
 * values that are already known to be well-formed; defaults are the adapters' documented ones. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/net/net.h"
#include "core/conf/path.h"
#include "gateway/gateway.h"

static void add_warning(struct xg_gateway *gw, const struct xg_conf *at, const char *origin,
                        const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Append "file:line:col: message" (at), "origin: message" or "message" to gw->warnings. */
static void add_warning(struct xg_gateway *gw, const struct xg_conf *at, const char *origin,
                        const char *fmt, ...)
{
    char msg[XG_WARNING_MAX], *w = malloc(XG_WARNING_MAX);
    char **list = realloc(gw->warnings, (size_t)(gw->n_warnings + 1) * sizeof *list);
    if (!w || !list) {
        free(w);
        if (list) gw->warnings = list;
        return;
    }
    gw->warnings = list;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (at)
        snprintf(w, XG_WARNING_MAX, "%s:%d:%d: %s", at->file ? at->file : "<config>", at->line,
                 at->column, msg);
    else if (origin)
        snprintf(w, XG_WARNING_MAX, "%s: %s", origin, msg);
    else
        snprintf(w, XG_WARNING_MAX, "%s", msg);
    gw->warnings[gw->n_warnings++] = w;
}

/* True for "localhost", ::1 and 127.0.0.0/8 (an address that only this host can reach). */
static bool is_loopback(const char *hostport)
{
    char host[256];
    int port;
    if (!hostport || xg_net_split_hostport(hostport, host, sizeof host, &port, 0) < 0) return false;
    if (!strcmp(host, "localhost") || !strcmp(host, "::1")) return true;
    struct in_addr ia;
    return inet_pton(AF_INET, host, &ia) == 1 && (ntohl(ia.s_addr) >> 24) == 127;
}

static const char *scalar(const struct xg_conf *map, const char *key)
{
    const struct xg_conf *n = xg_conf_get(map, key);
    return n && n->type == XG_CONF_SCALAR ? n->value : NULL;
}

/* Warn when the secret file named by map[key] can be read by every local user. Relative paths
 * are resolved against the config file's folder, as everywhere (core/conf/path.h). */
static void check_secret_file(struct xg_gateway *gw, const struct xg_conf *map, const char *key,
                              const char *what)
{
    const struct xg_conf *n = xg_conf_get(map, key);
    if (!n || n->type != XG_CONF_SCALAR || !n->value || !*n->value) return;
    char path[1024];
    if (xg_conf_path(n, n->value, path, sizeof path)) return;
    struct stat st;
    if (stat(path, &st) || !(st.st_mode & S_IROTH)) return;
    add_warning(gw, n, NULL,
                "%s '%s' is readable by every user on this host (mode %04o): chmod 600 it "
                "(or 640 with a group the gateway runs in)",
                what, path, (unsigned)(st.st_mode & 07777));
}

static void audit_admin(struct xg_gateway *gw, const struct xg_gateway_opts *opts)
{
    const struct xg_conf *admin = xg_conf_get(xg_conf_get(gw->root, "gateway"), "admin");
    const char *listen = gw->conf.admin_listen;
    if (strcmp(listen, "off") && !is_loopback(listen)) {
        const struct xg_conf *at = opts->admin_listen ? NULL : xg_conf_get(admin, "listen");
        const char *origin = opts->admin_listen ? "XRGATE_ADMIN_LISTEN" : NULL;
        if (!gw->conf.admin_token[0])
            add_warning(gw, at, origin,
                        "admin API on the non-loopback address '%s' without a token: anyone who "
                        "can reach it can read every pose (set admin.token_file or "
                        "XRGATE_ADMIN_TOKEN, or listen on 127.0.0.1)",
                        listen);
        else if (!gw->conf.admin_tls_cert[0])
            add_warning(gw, at, origin,
                        "admin API on the non-loopback address '%s' over plain HTTP: the bearer "
                        "token crosses the network in clear text (set admin.tls, or put a TLS "
                        "proxy in front and listen on 127.0.0.1)",
                        listen);
    }
    if (!opts->admin_token) check_secret_file(gw, admin, "token_file", "admin.token_file");
    check_secret_file(gw, xg_conf_get(admin, "tls"), "key", "admin.tls.key");
}

static void audit_less(struct xg_gateway *gw, const struct xg_conf *a, const char *name)
{
    const char *mode = scalar(a, "mode");
    if (!mode) mode = "connect";
    const char *addr_key = !strcmp(mode, "listen") ? "listen"
                           : !strcmp(mode, "udp")  ? "bind"
                                                   : "connect";
    const char *addr = scalar(a, addr_key), *peer = scalar(a, "peer");
    const char *sig = scalar(a, "signature");
    const struct xg_conf *tls = xg_conf_get(a, "tls");
    bool loop = is_loopback(addr) && (!peer || is_loopback(peer));
    bool unsigned_ = sig && !strcmp(sig, "none");
    check_secret_file(gw, a, "key_file", "key_file");
    const struct xg_conf *keys = xg_conf_get(a, "keys");
    for (size_t i = 0; keys && keys->type == XG_CONF_SEQ && i < keys->n_items; i++)
        check_secret_file(gw, keys->items[i], "file", "keys: file");
    check_secret_file(gw, tls, "key", "tls.key");
    if (!unsigned_ || loop) return;
    const struct xg_conf *sig_node = xg_conf_get(a, "signature");
    if (!tls) {
        /* only reachable with insecure: true: the adapter refuses it otherwise */
        add_warning(gw, xg_conf_get(a, "insecure"), NULL,
                    "less adapter '%s': signature: none on the non-loopback, non-TLS address "
                    "'%s' (forced by insecure: true): anyone who can reach it can inject "
                    "entities",
                    name, addr);
        return;
    }
    bool verify = true; /* already validated by the adapter: cannot fail here */
    xg_conf_bool(tls, "verify", true, &verify, NULL);
    bool no_verify = !verify;
    if (!strcmp(mode, "listen") && (!scalar(tls, "ca") || no_verify))
        add_warning(gw, sig_node, NULL,
                    "less adapter '%s': signature: none on the TLS listener '%s' without client "
                    "certificates (tls.ca%s): any client that completes the handshake can inject "
                    "entities (set tls.ca to require client certificates, or use key_file)",
                    name, addr, no_verify ? " with verify: true" : "");
    else if (strcmp(mode, "listen") && no_verify)
        add_warning(gw, xg_conf_get(tls, "verify"), NULL,
                    "less adapter '%s': tls.verify: false with signature: none: the peer '%s' is "
                    "not authenticated, anyone in the path can read and inject entities (set "
                    "tls.ca with verify: true, or use key_file)",
                    name, addr);
}

static void audit_rtp(struct xg_gateway *gw, const struct xg_conf *a)
{
    const struct xg_conf *srtp = xg_conf_get(a, "srtp");
    check_secret_file(gw, srtp, "key_file", "srtp.key_file");
    check_secret_file(gw, srtp, "remote_key_file", "srtp.remote_key_file");
}

/* A dds adapter without `security`: every participant discovery reaches reads and writes it. */
static void audit_dds(struct xg_gateway *gw, const struct xg_conf *a, const char *name)
{
    const struct xg_conf *enclave = xg_conf_get(xg_conf_get(a, "security"), "enclave");
    char dir[1024], key[1100];
    struct stat st;
    if (enclave && enclave->type == XG_CONF_SCALAR && enclave->value &&
        !xg_conf_path(enclave, enclave->value, dir, sizeof dir)) {
        snprintf(key, sizeof key, "%s/key.pem", dir);
        if (!stat(key, &st) && (st.st_mode & S_IROTH))
            add_warning(gw, enclave, NULL,
                        "security.enclave: the private key '%s' is readable by every user on "
                        "this host (mode %04o): chmod 600 it (or 640 with a group the gateway "
                        "runs in)",
                        key, (unsigned)(st.st_mode & 07777));
    }
    if (xg_conf_get(a, "security")) return;
    const struct xg_conf *at = xg_conf_get(a, "type");
    add_warning(gw, at ? at : a, NULL,
                "dds adapter '%s' without security: its DDS domain is open, any participant "
                "that discovery reaches can read every pose and inject transforms (set "
                "security.enclave to an SROS2 enclave, see docs/adapters/dds.md)",
                name);
}

int xg_gateway_audit(struct xg_gateway *gw, const struct xg_gateway_opts *opts,
                     struct xg_error *err)
{
    audit_admin(gw, opts);
    for (int i = 0; i < gw->n_adapters; i++) {
        const struct xg_gw_adapter *ga = gw->adapters[i];
        if (!strcmp(ga->a.ops->type, "less")) audit_less(gw, ga->conf, ga->a.name);
        if (!strcmp(ga->a.ops->type, "rtp")) audit_rtp(gw, ga->conf);
        if (!strcmp(ga->a.ops->type, "dds")) audit_dds(gw, ga->conf, ga->a.name);
    }
    if (gw->n_warnings && gw->conf.strict)
        return xg_error_set(err, -EPERM,
                            "strict mode (%s): %d insecure setting%s refused, see above",
                            opts->strict ? "--strict" : "gateway.strict: true", gw->n_warnings,
                            gw->n_warnings == 1 ? "" : "s");
    return 0;
}
