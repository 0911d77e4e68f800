/* `vrpn-server` configuration (keys at the top of vrpn_server.c): reading, checking and the
 * defaults of every key, with the error texts `xrgate --check` prints. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapters/vrpn/vrpn_codec.h"
#include "adapters/vrpn/vrpn_sensor_map.h"
#include "adapters/vrpn/vrpn_server_priv.h"
#include "core/adapter/adapter.h"
#include "core/table/names.h"
#include "core/net/net.h"

static int parse_rules(struct vrpn_server *s, const struct xg_conf *node, struct xg_error *err)
{
    if (!node) return 0;
    int rc = xg_conf_expect(node, XG_CONF_SEQ, "trackers", err);
    if (rc) return rc;
    s->rules = calloc(node->n_items + 1, sizeof *s->rules);
    if (!s->rules) return -ENOMEM;
    for (size_t i = 0; i < node->n_items; i++) {
        const struct xg_conf *it = node->items[i];
        if ((rc = xg_conf_expect(it, XG_CONF_MAP, "trackers item", err))) return rc;
        const char *match, *tracker;
        struct rule *r = &s->rules[s->n_rules++];
        r->sensor = -1;
        if ((rc = xg_conf_string(it, "match", NULL, &match, err)) ||
            (rc = xg_conf_string(it, "tracker", NULL, &tracker, err)) ||
            (rc = xg_conf_int(it, "sensor", -1, 0, INT32_MAX, &r->sensor, err)))
            return rc;
        if (!match || !match[0])
            return xg_conf_error(err, it, -EINVAL, "trackers: every rule needs 'match: GLOB'");
        if (tracker && (!tracker[0] || strlen(tracker) >= VRPN_CNAME_MAX))
            return xg_conf_error(err, xg_conf_get(it, "tracker"), -EINVAL,
                                 "trackers: tracker '%s' must be 1..%d characters", tracker,
                                 VRPN_CNAME_MAX - 1);
        char key[48];
        snprintf(key, sizeof key, "trackers[%zu].tracker", i);
        if (tracker && (rc = xg_name_template_check(tracker, xg_conf_get(it, "tracker"), key, err)))
            return rc;
        r->match = strdup(match);
        r->tracker = tracker ? strdup(tracker) : NULL;
        if (!r->match || (tracker && !r->tracker)) return -ENOMEM;
    }
    return 0;
}

int vrpn_srv_conf_read(struct xg_adapter *a, struct vrpn_server *s, const struct xg_conf *conf,
                       struct xg_error *err)
{
    const char *listen, *tname;
    int rc;
    if ((rc = xg_conf_string(conf, "listen", "0.0.0.0:3883", &listen, err)) ||
        (rc = xg_conf_int(conf, "max_clients", 64, 1, 4096, &s->max_clients, err)) ||
        (rc = xg_conf_int(conf, "max_output_bytes", 256 * 1024, 4096, INT64_C(1) << 30,
                          &s->max_output, err)) ||
        (rc = xg_conf_int(conf, "slow_timeout_ms", 2000, 0, 3600000, &s->slow_timeout_ms, err)) ||
        (rc = xg_conf_int(conf, "handshake_timeout_ms", 10000, 100, 600000, &s->handshake_ms,
                          err)) ||
        (rc = xg_conf_string(conf, "tracker_name", "{origin}", &tname, err)) ||
        (rc = xg_conf_bool(conf, "send_velocity", false, &s->send_velocity, err)) ||
        (rc = xg_conf_bool(conf, "send_all", false, &s->send_all, err)) ||
        (rc = parse_rules(s, xg_conf_get(conf, "trackers"), err)))
        return rc;
    if (s->send_all) a->whole_frames = true; /* every sensor per drain: never sliced */
    /* slices of four full datagrams (16 Pos_Quat of 88 bytes each in 1472): a UDP client still
     * gets full datagrams, four per sendmmsg call */
    a->egress_slice = 4 * (1472 / (VRPN_HEADER_SIZE + POS_QUAT_LEN));
    char host[200];
    int port = -1;
    if (strlen(listen) >= sizeof s->listen ||
        xg_net_split_hostport(listen, host, sizeof host, &port, 3883) < 0 || port < 0 ||
        port > 65535)
        return xg_conf_error(err, xg_conf_get(conf, "listen"), -EINVAL,
                             "listen: '%s' is not host:port", listen);
    if (!tname[0] || strlen(tname) >= VRPN_CNAME_MAX)
        return xg_conf_error(err, xg_conf_get(conf, "tracker_name"), -EINVAL,
                             "tracker_name: '%s' must be 1..%d characters", tname,
                             VRPN_CNAME_MAX - 1);
    if ((rc =
             xg_name_template_check(tname, xg_conf_get(conf, "tracker_name"), "tracker_name", err)))
        return rc;
    snprintf(s->listen, sizeof s->listen, "%s", listen);
    s->tracker_name = strdup(tname);
    if (!s->tracker_name) return -ENOMEM;
    return 0;
}
