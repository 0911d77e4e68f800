/* less adapter, configuration: the keys of a `less` adapter read and checked at create time (mode,
 * addresses, keys and rotation, signature, tls, schemas, limits; see docs/adapters/less.md).
 * Relative paths resolve against the configuration file's folder (core/conf/path.h). */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "adapters/less/less_adapter_priv.h"
#include "adapters/less/less_codec.h"
#include "adapters/less/less_imap.h"
#include "adapters/less/less_mapping.h"
#include "core/adapter/adapter.h"
#include "core/clock/clock.h"
#include "core/table/egress_controls.h"
#include "core/util/log.h"
#include "core/table/names.h"
#include "core/net/net.h"
#include "core/conf/path.h"
#include "core/net/tls.h"
#include "core/net/transport_client.h"
#include "mappings/frame.h"

static bool host_is_loopback(const char *text)
{
    char host[256];
    int port;
    if (xg_net_split_hostport(text, host, sizeof host, &port, 0) < 0) return false;
    if (strcmp(host, "localhost") == 0 || strcmp(host, "::1") == 0) return true;
    struct in_addr ia;
    if (inet_pton(AF_INET, host, &ia) == 1) return (ntohl(ia.s_addr) >> 24) == 127;
    return false;
}

static int read_key_file(const char *path, struct less_key *key, const struct xg_conf *at,
                         struct xg_error *err)
{
    int orc = 0;
    const char *kind = NULL;
    FILE *f = xg_file_fopen_regular(path, "r", false, &orc, &kind); /* never blocks */
    if (!f)
        return xg_conf_error(err, at, orc, "key_file '%s': %s", path, xg_file_strerror(orc, kind));
    char buf[1024];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    struct xg_error e2 = {0};
    int rc = less_key_from_hex(buf, n, key, &e2);
    if (rc) return xg_conf_error(err, at, rc, "key_file '%s': %s", path, e2.msg);
    return 0;
}

/* Relative paths in the config are relative to the config file's folder (core/conf/path.h); one
 * too long to fit is cut to "" (and then fails to open, naming the key). */
static void resolve_path(const struct xg_conf *at, const char *path, char *out, size_t size)
{
    xg_conf_path(at, path, out, size);
}

static int copy_conf(char *dst, size_t size, const char *s, const struct xg_conf *conf,
                     const char *key, struct xg_error *err)
{
    if (strlen(s) >= size)
        return xg_conf_error(err, xg_conf_get(conf, key), -EINVAL, "%s: '%s' is too long", key, s);
    snprintf(dst, size, "%s", s);
    return 0;
}

int less_create(struct xg_adapter *a, const struct xg_conf *conf, struct xg_error *err)
{
    struct less_adapter *la = calloc(1, sizeof *la);
    if (la) xg_egress_controls_init(&la->controls, 0, 0, "LESS entity state has no field for them");
    if (!la) return -ENOMEM;
    a->priv = la;
    la->env.a = a;
    la->udp.fd = -1;
    la->state = "stopped";
    const char *mode, *connect, *listen, *bind, *peer, *key_file, *signature, *key_id;
    int rc;
    if ((rc = xg_conf_string(conf, "mode", "connect", &mode, err))) return rc;
    if (strcmp(mode, "connect") == 0)
        la->env.mode = LESS_MODE_CONNECT;
    else if (strcmp(mode, "listen") == 0)
        la->env.mode = LESS_MODE_LISTEN;
    else if (strcmp(mode, "udp") == 0)
        la->env.mode = LESS_MODE_UDP;
    else
        return xg_conf_error(err, xg_conf_get(conf, "mode"), -EINVAL,
                             "mode '%s' must be connect, listen or udp", mode);
    if ((rc = xg_conf_string(conf, "connect", NULL, &connect, err)) ||
        (rc = xg_conf_string(conf, "listen", NULL, &listen, err)) ||
        (rc = xg_conf_string(conf, "bind", NULL, &bind, err)) ||
        (rc = xg_conf_string(conf, "peer", NULL, &peer, err)) ||
        (rc = xg_conf_string(conf, "key_file", NULL, &key_file, err)) ||
        (rc = xg_conf_string(conf, "signature", "hmac-sha256-64", &signature, err)) ||
        (rc = xg_conf_string(conf, "key_id", "", &key_id, err)) ||
        (rc = xg_conf_bool(conf, "insecure", false, &la->insecure, err)) ||
        (rc = xg_conf_int(conf, "max_peers", 16, 1, 4096, &la->max_peers, err)) ||
        (rc = xg_conf_int(conf, "max_packet", 1 << 20, 64, 64 << 20, &la->max_packet, err)) ||
        (rc =
             xg_conf_int(conf, "max_output_bytes", 4 << 20, 4096, 1 << 30, &la->max_output, err)) ||
        (rc = xg_conf_int(conf, "slow_timeout_ms", 2000, 0, 3600000, &la->slow_timeout_ms, err)) ||
        (rc = xg_conf_int(conf, "mtu", LESS_UDP_DEFAULT_MTU, 64, 65507, &la->env.mtu, err)))
        return rc;
    const char *addr = NULL, *addr_key = NULL;
    if (la->env.mode == LESS_MODE_CONNECT) addr = connect, addr_key = "connect";
    if (la->env.mode == LESS_MODE_LISTEN) addr = listen, addr_key = "listen";
    if (la->env.mode == LESS_MODE_UDP) addr = bind, addr_key = "bind";
    if (!addr)
        return xg_conf_error(err, conf, -EINVAL, "less adapter in mode '%s' needs '%s:'", mode,
                             addr_key);
    const char *other[3] = {"connect", "listen", "bind"};
    for (int i = 0; i < 3; i++)
        if (strcmp(other[i], addr_key) && xg_conf_get(conf, other[i]))
            return xg_conf_error(err, xg_conf_get(conf, other[i]), -EINVAL,
                                 "'%s:' does not apply to mode '%s' (use '%s:')", other[i], mode,
                                 addr_key);
    if (peer && la->env.mode != LESS_MODE_UDP)
        return xg_conf_error(err, xg_conf_get(conf, "peer"), -EINVAL,
                             "'peer:' only applies to mode 'udp'");
    char host[256];
    int port;
    if (xg_net_split_hostport(addr, host, sizeof host, &port, -1) < 0 || port < 0 || port > 65535)
        return xg_conf_error(err, xg_conf_get(conf, addr_key), -EINVAL, "%s: '%s' is not host:port",
                             addr_key, addr);
    if ((rc = copy_conf(la->target, sizeof la->target, addr, conf, addr_key, err))) return rc;
    if (la->env.mode ==
        LESS_MODE_UDP) { /* syntax only (--check): names resolve at start, no DNS here */
        if ((rc = xg_udp_bind_conf(&la->ubind, addr, "0.0.0.0", 0, err)))
            return xg_conf_error(err, xg_conf_get(conf, "bind"), rc, "bind: %s", err->msg);
        struct xg_udp_bind pb = {0};
        if (peer && ((rc = xg_udp_bind_conf(&pb, peer, "127.0.0.1", 0, err)) || pb.port <= 0))
            return xg_conf_error(err, xg_conf_get(conf, "peer"), -EINVAL, "peer: %s",
                                 rc ? err->msg : "port 0");
    }
    if (peer && (rc = copy_conf(la->udp_peer, sizeof la->udp_peer, peer, conf, "peer", err)))
        return rc;
    if ((rc = copy_conf(la->env.key_id, sizeof la->env.key_id, key_id, conf, "key_id", err)))
        return rc;
    /* TLS */
    const struct xg_conf *tls = xg_conf_get(conf, "tls");
    if (tls) {
        const char *cert, *key, *ca, *sn;
        if ((rc = xg_conf_expect(tls, XG_CONF_MAP, "tls", err)) ||
            (rc = xg_conf_string(tls, "cert", NULL, &cert, err)) ||
            (rc = xg_conf_string(tls, "key", NULL, &key, err)) ||
            (rc = xg_conf_string(tls, "ca", NULL, &ca, err)) ||
            (rc = xg_conf_string(tls, "server_name", NULL, &sn, err)) ||
            (rc = xg_conf_bool(tls, "verify", true, &la->tls_verify, err)))
            return rc;
        if (la->env.mode == LESS_MODE_UDP)
            return xg_conf_error(err, tls, -EINVAL, "tls applies to TCP modes only (not udp)");
        if (la->env.mode == LESS_MODE_LISTEN && (!cert || !key))
            return xg_conf_error(err, tls, -EINVAL, "tls in listen mode needs 'cert' and 'key'");
        if (la->env.mode == LESS_MODE_CONNECT && la->tls_verify && !ca)
            return xg_conf_error(err, tls, -EINVAL,
                                 "tls with verify: true needs 'ca' (the CA that signed the peer)");
        if (cert) resolve_path(xg_conf_get(tls, "cert"), cert, la->tls_cert, sizeof la->tls_cert);
        if (key) resolve_path(xg_conf_get(tls, "key"), key, la->tls_key, sizeof la->tls_key);
        if (ca) resolve_path(xg_conf_get(tls, "ca"), ca, la->tls_ca, sizeof la->tls_ca);
        if (sn)
            snprintf(la->server_name, sizeof la->server_name, "%s", sn);
        else if (la->env.mode == LESS_MODE_CONNECT)
            snprintf(la->server_name, sizeof la->server_name, "%s", host);
        la->tls_on = true;
        /* load the files now so that --check reports bad certificates */
        struct xg_tls_conf tc = {.server = la->env.mode == LESS_MODE_LISTEN,
                                 .cert = cert ? la->tls_cert : NULL,
                                 .key = key ? la->tls_key : NULL,
                                 .ca = ca ? la->tls_ca : NULL,
                                 .verify = la->tls_verify};
        struct xg_error e2 = {0};
        la->tls = xg_tls_ctx_new(&tc, &e2);
        if (!la->tls) return xg_conf_error(err, tls, e2.code ? e2.code : -EINVAL, "%s", e2.msg);
    }
    /* signature */
    if (strcmp(signature, "none") == 0) {
        if (key_file)
            return xg_conf_error(err, xg_conf_get(conf, "signature"), -EINVAL,
                                 "signature: none contradicts key_file");
        la->signature_none = true;
        bool loop = host_is_loopback(addr) && (!peer || host_is_loopback(peer));
        if (la->env.mode == LESS_MODE_LISTEN && !host_is_loopback(addr)) loop = false;
        if (!loop && !la->tls_on && !la->insecure)
            return xg_conf_error(
                err, xg_conf_get(conf, "signature"), -EPERM,
                "signature: none on the non-loopback, non-TLS address '%s' is refused (anyone "
                "could inject entities); use key_file, tls, or set insecure: true to force it",
                addr);
        if (xg_conf_get(conf, "keys"))
            return xg_conf_error(err, xg_conf_get(conf, "keys"), -EINVAL,
                                 "signature: none contradicts keys");
        la->env.key.len = 0;
        la->n_keys = 1;
    } else if (strcmp(signature, "hmac-sha256-64") == 0) {
        if (key_file) {
            char kp[512];
            resolve_path(xg_conf_get(conf, "key_file"), key_file, kp, sizeof kp);
            if ((rc = read_key_file(kp, &la->keys[0], xg_conf_get(conf, "key_file"), err)))
                return rc;
            snprintf(la->key_ids[0], sizeof la->key_ids[0], "%s", la->env.key_id);
            la->n_keys = 1;
        }
        const struct xg_conf *keys = xg_conf_get(conf, "keys");
        if (keys) {
            if ((rc = xg_conf_expect(keys, XG_CONF_SEQ, "keys", err))) return rc;
            for (size_t i = 0; i < keys->n_items; i++) {
                const struct xg_conf *it = keys->items[i];
                const char *id, *file;
                if ((rc = xg_conf_expect(it, XG_CONF_MAP, "keys item", err)) ||
                    (rc = xg_conf_string(it, "id", NULL, &id, err)) ||
                    (rc = xg_conf_string(it, "file", NULL, &file, err)))
                    return rc;
                if (!id || !file || strlen(id) >= sizeof la->key_ids[0])
                    return xg_conf_error(err, it, -EINVAL,
                                         "keys: each item needs 'id' (< 64 bytes) and 'file'");
                if (la->n_keys == LESS_MAX_KEYS)
                    return xg_conf_error(err, it, -EINVAL, "keys: at most %d keys", LESS_MAX_KEYS);
                for (int k = 0; k < la->n_keys; k++)
                    if (strcmp(la->key_ids[k], id) == 0)
                        return xg_conf_error(err, xg_conf_get(it, "id"), -EINVAL,
                                             "keys: duplicate key id '%s'", id);
                char kp[512];
                resolve_path(xg_conf_get(it, "file"), file, kp, sizeof kp);
                if ((rc = read_key_file(kp, &la->keys[la->n_keys], xg_conf_get(it, "file"), err)))
                    return rc;
                snprintf(la->key_ids[la->n_keys], sizeof la->key_ids[0], "%s", id);
                la->n_keys++;
            }
        }
        if (!la->n_keys)
            return xg_conf_error(err, conf, -EINVAL,
                                 "less adapter needs 'key_file:' (hex key, 16..64 bytes), "
                                 "'keys:' or 'signature: none'");
        int send = -1;
        for (int k = 0; k < la->n_keys; k++)
            if (strcmp(la->key_ids[k], la->env.key_id) == 0) send = k;
        if (send < 0)
            return xg_conf_error(err,
                                 xg_conf_get(conf, "key_id") ? xg_conf_get(conf, "key_id") : conf,
                                 -EINVAL, "key_id '%s' is not among the keys", la->env.key_id);
        la->env.key = la->keys[send];
    } else {
        return xg_conf_error(err, xg_conf_get(conf, "signature"), -EINVAL,
                             "signature '%s' must be hmac-sha256-64 or none", signature);
    }
    const struct xg_conf *schemas = xg_conf_get(conf, "schemas");
    if (schemas) {
        if ((rc = xg_conf_expect(schemas, XG_CONF_SEQ, "schemas", err))) return rc;
        la->env.mappings = calloc(schemas->n_items + 1, sizeof *la->env.mappings);
        if (!la->env.mappings) return -ENOMEM;
        for (size_t i = 0; i < schemas->n_items; i++) {
            const struct xg_conf *it = schemas->items[i];
            if (it->type != XG_CONF_SCALAR || !it->value)
                return xg_conf_error(err, it, -EINVAL, "schemas: expected a file name");
            char mp[512];
            resolve_path(it, it->value, mp, sizeof mp);
            struct xg_error e2 = {0};
            rc = less_mapping_load(mp, &la->env.mappings[la->env.n_mappings], &e2);
            if (rc) return xg_conf_error(err, it, rc, "schema mapping: %s", e2.msg);
            la->env.n_mappings++;
        }
    }
    la->env.arena_buf = malloc(LESS_ARENA_SIZE);
    if (!la->env.arena_buf) return -ENOMEM;
    return 0;
}
