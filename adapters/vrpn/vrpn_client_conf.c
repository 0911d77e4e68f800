/* `vrpn-client` configuration (vrpn_client_priv.h; keys at the top of vrpn_client.c): device names
 * (vrpn_client.h) and the connections and devices they make, plus the Velocity rotation increment
 * helper of vrpn_client.h. */

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/net/transport.h"
#include "adapters/vrpn/vrpn_client.h"
#include "adapters/vrpn/vrpn_client_priv.h"
#include "adapters/vrpn/vrpn_codec.h"
#include "core/adapter/adapter.h"
#include "core/clock/clock.h"
#include "core/util/log.h"
#include "core/net/net.h"
#include "core/net/transport_client.h"
#include "mappings/frame.h"

/* ---- config ---- */

bool vrpn_client_angular_velocity(struct xg_quat inc, double dt, struct xg_vec3 *out)
{
    *out = XG_VEC3_ZERO;
    double n2 = xg_quat_dot(inc, inc);
    if (!isfinite(dt) || dt <= 0 || !isfinite(n2) || n2 < 1e-24) return false;
    *out = xg_vec3_scale(xg_quat_log(xg_quat_normalize(inc)), 1.0 / dt);
    return true;
}

int vrpn_client_parse_name(const char *text, struct vrpn_client_name *out)
{
    memset(out, 0, sizeof *out);
    const char *at = text ? strchr(text, '@') : NULL;
    if (!at || at == text || (size_t)(at - text) >= VRPN_CNAME_MAX) return -EINVAL;
    snprintf(out->device, sizeof out->device, "%.*s", (int)(at - text), text);
    const char *loc = at + 1;
    if (!strncmp(loc, "tcp://", 6)) {
        out->tcp_only = true;
        loc += 6;
    } else if (!strncmp(loc, "x-vrpn://", 9)) {
        loc += 9;
    } else if (strstr(loc, "://") || !strncmp(loc, "file:", 5) || !strncmp(loc, "mpi:", 4)) {
        return -EPROTONOSUPPORT;
    }
    if (!*loc || strlen(loc) >= sizeof out->host) return -EINVAL;
    if (xg_net_split_hostport(loc, out->host, sizeof out->host, &out->port, VRPN_DEFAULT_PORT) <
            0 ||
        !out->host[0] || out->port <= 0 || out->port > 65535)
        return -EINVAL;
    return 0;
}

int vrpn_cli_add_device(struct xg_adapter *a, struct vclient *v, const struct xg_conf *at,
                        const char *text, struct xg_error *err)
{
    struct vrpn_client_name nm;
    int rc = vrpn_client_parse_name(text, &nm);
    const char *name = nm.device, *host = nm.host;
    bool tcp_only = nm.tcp_only;
    int port = nm.port;
    if (rc == -EPROTONOSUPPORT)
        return xg_conf_error(err, at, -EINVAL,
                             "devices: '%s': only host[:port], x-vrpn://host[:port] (UDP+TCP) "
                             "and tcp://host[:port] (TCP-only) locations are supported",
                             text);
    if (rc < 0)
        return xg_conf_error(err, at, -EINVAL,
                             "devices: '%s' is not a VRPN name Device@host[:port] or "
                             "Device@tcp://host[:port]",
                             text);
    struct in6_addr a6;
    if (!tcp_only && inet_pton(AF_INET6, host, &a6) == 1)
        return xg_conf_error(err, at, -EINVAL,
                             "devices: '%s': UDP+TCP mode needs an IPv4 server (use "
                             "Device@tcp://host:port)",
                             text);
    if (!strcmp(name, VRPN_NAME_CONTROL))
        return xg_conf_error(err, at, -EINVAL, "devices: '%s': '%s' is reserved", text, name);
    struct vconn *c = NULL;
    for (int i = 0; i < v->n_conns && !c; i++)
        if (v->conns[i]->tcp_only == tcp_only && v->conns[i]->port == port &&
            !strcasecmp(v->conns[i]->host, host))
            c = v->conns[i];
    if (c)
        for (int i = 0; i < c->n_devs; i++)
            if (!strcmp(c->devs[i]->name, name))
                return xg_conf_error(err, at, -EINVAL, "devices: '%s' is listed twice", text);
    for (int i = 0; i < v->n_devs; i++)
        if (!strcmp(v->devs[i]->name, name))
            return xg_conf_error(err, at, -EINVAL,
                                 "devices: '%s': a device named '%s' is already configured (entity "
                                 "names would collide)",
                                 text, name);
    if (!c) {
        struct vconn **nc = realloc(v->conns, (size_t)(v->n_conns + 1) * sizeof *nc);
        if (!nc) return -ENOMEM;
        v->conns = nc;
        c = calloc(1, sizeof *c);
        if (!c) return -ENOMEM;
        v->conns[v->n_conns++] = c;
        c->a = a;
        c->tcp_only = tcp_only;
        snprintf(c->host, sizeof c->host, "%s", host);
        c->port = port;
        c->udp.fd = -1;
        snprintf(c->peer, sizeof c->peer, "%s%.100s:%d", tcp_only ? "tcp://" : "", host, port);
    }
    struct vdev **nd = realloc(c->devs, (size_t)(c->n_devs + 1) * sizeof *nd);
    if (!nd) return -ENOMEM;
    c->devs = nd;
    struct vdev **all = realloc(v->devs, (size_t)(v->n_devs + 1) * sizeof *all);
    if (!all) return -ENOMEM;
    v->devs = all;
    struct vdev *d = calloc(1, sizeof *d);
    if (!d) return -ENOMEM;
    c->devs[c->n_devs++] = d;
    v->devs[v->n_devs++] = d;
    snprintf(d->name, sizeof d->name, "%s", name);
    d->conn = c;
    d->first_sensor = -1;
    return 0;
}
