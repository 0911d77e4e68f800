/* The rtp adapter's addresses given by host name: `bind` and `destinations` are parsed
 * numerically at load (no DNS: --check only checks their syntax), and names are resolved at start
 * with the shared non-blocking resolver (core/net/resolve.h), so a name that does not resolve
 * neither blocks the reactor nor stops the gateway. The destinations are a core/net/udp_dests.h
 * list (a name is inactive until it resolves, re-resolved on a backoff). A bind host name is
 * resolved first: the socket opens once it has an address. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "adapters/rtp/rtp_adapter.h"
#include "core/conf/conf.h"
#include "core/util/log.h"
#include "core/net/net.h"
#include "core/net/udp_dests.h"

int rtpa_conf_addrs(struct xg_adapter *a, const struct xg_conf *conf, const char *bind,
                    struct xg_error *err)
{
    struct rtpa *r = a->priv;
    int rc;
    const struct xg_conf *bn = xg_conf_get(conf, "bind");
    if ((rc = xg_udp_bind_conf(&r->bind, bind, "0.0.0.0", 49170, err)) < 0)
        return bn ? xg_conf_error(err, bn, rc, "bind: %s", err->msg) : rc;
    return xg_udp_dests_conf(&r->dests, conf, "destinations", 49170,
                             xg_udp_bind_named(&r->bind) ? AF_UNSPEC : r->bind.ss.ss_family, err);
}

void rtpa_dests_start(struct xg_adapter *a)
{
    struct rtpa *r = a->priv;
    xg_udp_dests_start(&r->dests, a->base, a->name, r->bind.ss.ss_family);
}

int rtpa_bind_start(struct xg_adapter *a, int (*open)(void *a))
{
    struct rtpa *r = a->priv;
    return xg_udp_bind_start(&r->bind, a->base, a->name, open, a);
}

void rtpa_resolvers_stop(struct xg_adapter *a)
{
    struct rtpa *r = a->priv;
    xg_udp_bind_stop(&r->bind);
    xg_udp_dests_stop(&r->dests);
}

int rtpa_dests_active(const struct rtpa *r)
{
    return xg_udp_dests_active(&r->dests);
}

void rtpa_dests_status(const struct rtpa *r, struct xg_status *st)
{
    xg_udp_dests_status(&r->dests, r->bind.res, xg_udp_bind_named(&r->bind), st);
    st->state = xg_udp_bind_state(&r->bind, r->rx.fd >= 0, st->state, st);
}
