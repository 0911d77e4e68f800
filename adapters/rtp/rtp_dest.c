/* The rtp adapter's addresses given by host name: `bind` and `destinations` are parsed
 * numerically at load (no DNS: --check only checks their syntax), and names are resolved at start
 * with the shared non-blocking resolver (core/resolve.h), so a name that does not resolve neither
 * blocks the reactor nor stops the gateway. A destination by name is inactive (nothing is sent to
 * it; destinations_unresolved counts it) until its name resolves, re-resolved on a backoff while
 * it fails (dns_failures, last_error, one rate-limited warning per attempt logged). A bind host
 * name is resolved first: the socket opens once it has an address. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "adapters/rtp/rtp_adapter.h"
#include "core/conf.h"
#include "core/log.h"
#include "core/net.h"
#include "core/resolve.h"

int rtpa_conf_addrs(struct xg_adapter *a, const struct xg_conf *conf, const char *bind,
                    struct xg_error *err)
{
    struct rtpa *r = a->priv;
    int rc;
    const struct xg_conf *bn = xg_conf_get(conf, "bind");
    rc = xg_net_parse_numeric(bind, "0.0.0.0", 49170, &r->bind_ss, &r->bind_len, r->bind_host,
                              sizeof r->bind_host, &r->bind_port, err);
    if (rc < 0) return bn ? xg_conf_error(err, bn, rc, "bind: %s", err->msg) : rc;
    if (rc == 0) r->bind_host[0] = 0;
    const struct xg_conf *dl = xg_conf_get(conf, "destinations");
    if (!dl) return 0;
    if (dl->type == XG_CONF_SCALAR) {
        /* a single string is accepted as a one-element list */
    } else if ((rc = xg_conf_expect(dl, XG_CONF_SEQ, "destinations", err)))
        return rc;
    size_t n = dl->type == XG_CONF_SCALAR ? 1 : dl->n_items;
    if (n > RTPA_MAX_DEST)
        return xg_conf_error(err, dl, -EINVAL, "destinations: at most %d", RTPA_MAX_DEST);
    for (size_t i = 0; i < n; i++) {
        const struct xg_conf *it = dl->type == XG_CONF_SCALAR ? dl : dl->items[i];
        if (it->type != XG_CONF_SCALAR || !it->value)
            return xg_conf_error(err, it, -EINVAL, "destinations: expected \"host:port\"");
        struct rtpa_dest *d = &r->dest[r->n_dest];
        rc = xg_net_parse_numeric(it->value, NULL, 49170, &d->ss, &d->len, d->host, sizeof d->host,
                                  &d->port, err);
        if (rc < 0) return xg_conf_error(err, it, rc, "destinations: %s", err->msg);
        if (rc == 0) {
            d->host[0] = 0;
            d->port = xg_net_addr_port((struct sockaddr *)&d->ss);
        }
        if (d->port == 0)
            return xg_conf_error(err, it, -EINVAL, "destinations: '%s' has port 0", it->value);
        if (rc == 0) {
            if (!r->bind_host[0] && d->ss.ss_family != r->bind_ss.ss_family)
                return xg_conf_error(err, it, -EINVAL,
                                     "destinations: '%s' is not of the bind address's family",
                                     it->value);
            xg_net_addr_str((struct sockaddr *)&d->ss, d->str, sizeof d->str);
            d->active = true;
        } else {
            char t[sizeof d->str];
            snprintf(t, sizeof t, "%s:%d", d->host, d->port);
            memcpy(d->str, t, sizeof t);
        }
        r->n_dest++;
    }
    return 0;
}

static void dest_resolved(void *arg, const struct sockaddr *sa, socklen_t len)
{
    struct rtpa_dest *d = arg;
    memcpy(&d->ss, sa, len);
    d->len = len;
    xg_net_addr_str(sa, d->str, sizeof d->str);
    d->active = true;
    XG_INFO(d->a->name, "destination %s:%d resolved to %s: sending to it", d->host, d->port,
            d->str);
}

void rtpa_dests_start(struct xg_adapter *a)
{
    struct rtpa *r = a->priv;
    int family = r->bind_ss.ss_family;
    for (int i = 0; i < r->n_dest; i++) {
        struct rtpa_dest *d = &r->dest[i];
        d->a = a;
        if (!d->host[0]) {
            /* numeric, checked at load unless bind was a name: of the socket's family? */
            if (d->active && d->ss.ss_family != family) {
                d->active = false;
                XG_ERR(a->name,
                       "destination %s is not of the bind address's family: nothing is sent "
                       "to it",
                       d->str);
            }
            continue;
        }
        if (d->res) continue;
        struct xg_resolve_conf rc = {.component = a->name,
                                     .what = "destination",
                                     .host = d->host,
                                     .port = d->port,
                                     .family = family,
                                     .socktype = SOCK_DGRAM,
                                     .lim = &r->lim_dns};
        d->res = xg_resolve_new(a->base, &rc, dest_resolved, d);
        if (!d->res) {
            XG_ERR(a->name, "destination %s: out of memory", d->str);
            continue;
        }
        xg_resolve_start(d->res);
    }
}

/* The bind name resolved: open the socket (open_fn of rtpa_bind_start). */
static void bind_resolved(void *arg, const struct sockaddr *sa, socklen_t len)
{
    struct xg_adapter *a = arg;
    struct rtpa *r = a->priv;
    memcpy(&r->bind_ss, sa, len);
    r->bind_len = len;
    char as[64];
    XG_INFO(a->name, "bind %s:%d resolved to %s", r->bind_host, r->bind_port,
            xg_net_addr_str(sa, as, sizeof as));
    int rc = r->open_fn(a);
    if (r->starting) {
        r->start_rc = rc;
        return;
    }
    if (rc)
        snprintf(r->bind_error, sizeof r->bind_error, "cannot open the socket on %s: %s", as,
                 strerror(-rc));
}

int rtpa_bind_start(struct xg_adapter *a, int (*open)(struct xg_adapter *))
{
    struct rtpa *r = a->priv;
    if (!r->bind_host[0]) return open(a);
    r->open_fn = open;
    r->bind_error[0] = 0;
    struct xg_resolve_conf rc = {.component = a->name,
                                 .what = "bind",
                                 .host = r->bind_host,
                                 .port = r->bind_port,
                                 .family = AF_UNSPEC,
                                 .socktype = SOCK_DGRAM,
                                 .lim = &r->lim_dns};
    if (!r->bind_res && !(r->bind_res = xg_resolve_new(a->base, &rc, bind_resolved, a)))
        return -ENOMEM;
    r->starting = true;
    r->start_rc = 0;
    xg_resolve_start(r->bind_res);
    r->starting = false;
    if (xg_resolve_state(r->bind_res) != XG_RS_RESOLVED)
        XG_INFO(a->name, "bind %s:%d: resolving the name; the socket opens once it resolves",
                r->bind_host, r->bind_port);
    return r->start_rc;
}

void rtpa_resolvers_stop(struct xg_adapter *a)
{
    struct rtpa *r = a->priv;
    xg_resolve_free(r->bind_res);
    r->bind_res = NULL;
    for (int i = 0; i < r->n_dest; i++) {
        struct rtpa_dest *d = &r->dest[i];
        xg_resolve_free(d->res);
        d->res = NULL;
    }
}

int rtpa_dests_active(const struct rtpa *r)
{
    int n = 0;
    for (int i = 0; i < r->n_dest; i++)
        n += r->dest[i].active;
    return n;
}

void rtpa_dests_status(const struct rtpa *r, struct xg_status *st)
{
    bool named = r->bind_host[0] != 0;
    for (int i = 0; i < r->n_dest; i++)
        named |= r->dest[i].host[0] != 0;
    if (!named) return;
    st->client = true; /* last_error applies: the names' resolution */
    uint64_t failures = 0;
    int64_t newest = 0;
    int unresolved = 0;
    const struct xg_resolve *all[RTPA_MAX_DEST + 1];
    int n = 0;
    if (r->bind_res) all[n++] = r->bind_res;
    for (int i = 0; i < r->n_dest; i++) {
        if (r->dest[i].host[0] && !r->dest[i].active) unresolved++;
        if (r->dest[i].res) all[n++] = r->dest[i].res;
    }
    for (int i = 0; i < n; i++) {
        failures += xg_resolve_failures(all[i]);
        if (xg_resolve_last_error_ns(all[i]) > newest) {
            newest = xg_resolve_last_error_ns(all[i]);
            snprintf(st->last_error, sizeof st->last_error, "%s", xg_resolve_last_error(all[i]));
        }
    }
    if (r->bind_error[0]) snprintf(st->last_error, sizeof st->last_error, "%s", r->bind_error);
    if (r->fd < 0 && r->bind_res) {
        enum xg_resolve_state s = xg_resolve_state(r->bind_res);
        st->state = r->bind_error[0]       ? "error"
                    : s == XG_RS_BACKOFF   ? "backoff"
                    : s == XG_RS_RESOLVING ? "resolving"
                                           : st->state;
    }
    xg_status_gauge(st, "destinations_unresolved", unresolved);
    xg_status_counter(st, "dns_failures", (double)failures);
}
