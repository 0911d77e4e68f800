/* The rtp adapter's addresses given by host name: `bind` and `destinations` are parsed
 * numerically at load (no DNS: --check only checks their syntax), and names are resolved at start
 * with the shared non-blocking resolver (core/resolve.h), so a name that does not resolve neither
 * blocks the reactor nor stops the gateway. The destinations are a core/udp_dests.h list (a name
 * is inactive until it resolves, re-resolved on a backoff). A bind host name is resolved first:
 * the socket opens once it has an address. */
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
    return xg_udp_dests_conf(&r->dests, conf, "destinations", 49170,
                             r->bind_host[0] ? AF_UNSPEC : r->bind_ss.ss_family, err);
}

void rtpa_dests_start(struct xg_adapter *a)
{
    struct rtpa *r = a->priv;
    xg_udp_dests_start(&r->dests, a->base, a->name, r->bind_ss.ss_family);
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
    xg_udp_dests_stop(&r->dests);
}

int rtpa_dests_active(const struct rtpa *r)
{
    return xg_udp_dests_active(&r->dests);
}

void rtpa_dests_status(const struct rtpa *r, struct xg_status *st)
{
    xg_udp_dests_status(&r->dests, r->bind_res, r->bind_host[0] != 0, st);
    if (!r->bind_host[0] && !xg_udp_dests_named(&r->dests)) return; /* no names */
    if (r->bind_error[0]) snprintf(st->last_error, sizeof st->last_error, "%s", r->bind_error);
    if (r->fd < 0 && r->bind_res) {
        enum xg_resolve_state s = xg_resolve_state(r->bind_res);
        st->state = r->bind_error[0]       ? "error"
                    : s == XG_RS_BACKOFF   ? "backoff"
                    : s == XG_RS_RESOLVING ? "resolving"
                                           : st->state;
    }
}
