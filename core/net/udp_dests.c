/* UDP destinations given by name or address (udp_dests.h). */
#include "core/net/udp_dests.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/net/net.h"

int xg_udp_dests_conf(struct xg_udp_dests *l, const struct xg_conf *conf, const char *key,
                      int def_port, int bind_family, struct xg_error *err)
{
    const struct xg_conf *dl = xg_conf_get(conf, key);
    if (!dl) return 0;
    int rc;
    /* a single string is accepted as a one-element list */
    if (dl->type != XG_CONF_SCALAR && (rc = xg_conf_expect(dl, XG_CONF_SEQ, key, err))) return rc;
    size_t n = dl->type == XG_CONF_SCALAR ? 1 : dl->n_items;
    if (n > XG_UDP_DESTS_MAX)
        return xg_conf_error(err, dl, -EINVAL, "%s: at most %d", key, XG_UDP_DESTS_MAX);
    for (size_t i = 0; i < n; i++) {
        const struct xg_conf *it = dl->type == XG_CONF_SCALAR ? dl : dl->items[i];
        if (it->type != XG_CONF_SCALAR || !it->value)
            return xg_conf_error(err, it, -EINVAL, "%s: expected \"host:port\"", key);
        struct xg_udp_dest *d = &l->d[l->n];
        memset(d, 0, sizeof *d);
        rc = xg_net_parse_numeric(it->value, NULL, def_port, &d->ss, &d->len, d->host,
                                  sizeof d->host, &d->port, err);
        if (rc < 0) return xg_conf_error(err, it, rc, "%s: %s", key, err->msg);
        if (rc == 0) {
            d->host[0] = 0;
            d->port = xg_net_addr_port((struct sockaddr *)&d->ss);
        }
        if (d->port <= 0)
            return xg_conf_error(err, it, -EINVAL, "%s: '%s' has port 0", key, it->value);
        if (rc == 0) {
            if (bind_family != AF_UNSPEC && d->ss.ss_family != bind_family)
                return xg_conf_error(err, it, -EINVAL,
                                     "%s: '%s' is not of the bind address's family", key,
                                     it->value);
            xg_net_addr_str((struct sockaddr *)&d->ss, d->str, sizeof d->str);
            d->active = true;
        } else {
            char t[sizeof d->str];
            snprintf(t, sizeof t, "%s:%d", d->host, d->port);
            memcpy(d->str, t, sizeof t);
        }
        l->n++;
    }
    return 0;
}

static void resolved(void *arg, const struct sockaddr *sa, socklen_t len)
{
    struct xg_udp_dest *d = arg;
    memcpy(&d->ss, sa, len);
    d->len = len;
    xg_net_addr_str(sa, d->str, sizeof d->str);
    d->active = true;
    XG_INFO(d->list->component, "destination %s:%d resolved to %s: sending to it", d->host, d->port,
            d->str);
}

void xg_udp_dests_start(struct xg_udp_dests *l, struct event_base *base, const char *component,
                        int family)
{
    snprintf(l->component, sizeof l->component, "%s", component);
    for (int i = 0; i < l->n; i++) {
        struct xg_udp_dest *d = &l->d[i];
        d->list = l;
        if (!d->host[0]) {
            /* numeric, checked at load unless bind was a name: of the socket's family? */
            if (d->active && d->ss.ss_family != family) {
                d->active = false;
                XG_ERR(l->component,
                       "destination %s is not of the bind address's family: nothing is sent "
                       "to it",
                       d->str);
            }
            continue;
        }
        if (d->res || d->active) continue;
        struct xg_resolve_conf rc = {.component = l->component,
                                     .what = "destination",
                                     .host = d->host,
                                     .port = d->port,
                                     .family = family,
                                     .socktype = SOCK_DGRAM,
                                     .lim = &l->lim};
        if (!(d->res = xg_resolve_new(base, &rc, resolved, d))) {
            XG_ERR(l->component, "destination %s: out of memory", d->str);
            continue;
        }
        xg_resolve_start(d->res);
    }
}

void xg_udp_dests_stop(struct xg_udp_dests *l)
{
    for (int i = 0; i < l->n; i++) {
        xg_resolve_free(l->d[i].res);
        l->d[i].res = NULL;
    }
}

int xg_udp_dests_active(const struct xg_udp_dests *l)
{
    int n = 0;
    for (int i = 0; i < l->n; i++)
        n += l->d[i].active;
    return n;
}

int xg_udp_dests_unresolved(const struct xg_udp_dests *l)
{
    int n = 0;
    for (int i = 0; i < l->n; i++)
        n += l->d[i].host[0] && !l->d[i].active;
    return n;
}

bool xg_udp_dests_named(const struct xg_udp_dests *l)
{
    for (int i = 0; i < l->n; i++)
        if (l->d[i].host[0]) return true;
    return false;
}

char *xg_udp_dests_str(const struct xg_udp_dests *l, const char *sep, bool mark, char *buf,
                       size_t size)
{
    if (!size) return buf;
    buf[0] = 0;
    size_t n = 0;
    for (int i = 0; i < l->n && n < size; i++) {
        const struct xg_udp_dest *d = &l->d[i];
        int w = snprintf(buf + n, size - n, "%s%s%s", i ? sep : "", d->str,
                         mark && d->host[0] && !d->active ? " (unresolved)" : "");
        if (w < 0) break;
        n += (size_t)w;
    }
    return buf;
}

void xg_udp_dests_status(const struct xg_udp_dests *l, const struct xg_resolve *extra,
                         bool extra_named, struct xg_status *st)
{
    if (!xg_udp_dests_named(l) && !extra_named) return;
    st->client = true; /* last_error applies: the names' resolution */
    const struct xg_resolve *all[XG_UDP_DESTS_MAX + 1];
    int n = 0;
    if (extra) all[n++] = extra;
    for (int i = 0; i < l->n; i++)
        if (l->d[i].res) all[n++] = l->d[i].res;
    uint64_t failures = 0;
    int64_t newest = 0;
    for (int i = 0; i < n; i++) {
        failures += xg_resolve_failures(all[i]);
        if (xg_resolve_last_error_ns(all[i]) > newest) {
            newest = xg_resolve_last_error_ns(all[i]);
            snprintf(st->last_error, sizeof st->last_error, "%s", xg_resolve_last_error(all[i]));
        }
    }
    xg_status_gauge(st, "destinations_unresolved", xg_udp_dests_unresolved(l));
    xg_status_counter(st, "dns_failures", (double)failures);
}

int xg_udp_bind_conf(struct xg_udp_bind *b, const char *text, const char *def_host, int def_port,
                     struct xg_error *err)
{
    int rc = xg_net_parse_numeric(text, def_host, def_port, &b->ss, &b->len, b->host,
                                  sizeof b->host, &b->port, err);
    if (rc < 0) return rc;
    if (rc == 0) {
        b->host[0] = 0;
        b->port = xg_net_addr_port((struct sockaddr *)&b->ss);
    }
    return 0;
}

static void bind_resolved(void *arg, const struct sockaddr *sa, socklen_t len)
{
    struct xg_udp_bind *b = arg;
    memcpy(&b->ss, sa, len);
    b->len = len;
    char as[64];
    XG_INFO(b->component, "bind %s:%d resolved to %s", b->host, b->port,
            xg_net_addr_str(sa, as, sizeof as));
    int rc = b->open(b->arg);
    if (b->starting) {
        b->start_rc = rc;
        return;
    }
    if (rc)
        snprintf(b->error, sizeof b->error, "cannot open the socket on %s: %s", as, strerror(-rc));
}

int xg_udp_bind_start(struct xg_udp_bind *b, struct event_base *base, const char *component,
                      int (*open)(void *arg), void *arg)
{
    snprintf(b->component, sizeof b->component, "%s", component);
    b->open = open;
    b->arg = arg;
    b->error[0] = 0;
    if (!b->host[0]) return open(arg);
    struct xg_resolve_conf rc = {.component = b->component,
                                 .what = "bind",
                                 .host = b->host,
                                 .port = b->port,
                                 .family = AF_UNSPEC,
                                 .socktype = SOCK_DGRAM,
                                 .lim = &b->lim};
    if (!b->res && !(b->res = xg_resolve_new(base, &rc, bind_resolved, b))) return -ENOMEM;
    b->starting = true;
    b->start_rc = 0;
    xg_resolve_start(b->res);
    b->starting = false;
    if (xg_resolve_state(b->res) != XG_RS_RESOLVED)
        XG_INFO(component, "bind %s:%d: resolving the name; the socket opens once it resolves",
                b->host, b->port);
    return b->start_rc;
}

void xg_udp_bind_stop(struct xg_udp_bind *b)
{
    xg_resolve_free(b->res);
    b->res = NULL;
}

bool xg_udp_bind_named(const struct xg_udp_bind *b)
{
    return b->host[0] != 0;
}

const char *xg_udp_bind_state(const struct xg_udp_bind *b, bool open, const char *state,
                              struct xg_status *st)
{
    if (b->error[0]) snprintf(st->last_error, sizeof st->last_error, "%s", b->error);
    if (open || !b->res) return state;
    enum xg_resolve_state s = xg_resolve_state(b->res);
    return b->error[0]            ? "error"
           : s == XG_RS_BACKOFF   ? "backoff"
           : s == XG_RS_RESOLVING ? "resolving"
                                  : state;
}
