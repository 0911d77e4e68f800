/* `rtp` adapter configuration (keys at the top of rtp_adapter.c; the addresses are rtp_dest.c's
 * rtpa_conf_addrs): reading, checking and the defaults of every key, with the error texts
 * `xrgate --check` prints. Reads the SRTP key files; opens no sockets. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "adapters/rtp/gamestate_codec.h"
#include "adapters/rtp/rtp_adapter.h"
#include "adapters/rtp/srtp_session.h"
#include "core/adapter/adapter.h"
#include "core/util/log.h"

/* egress object types a kind can map to */
static const enum rtp_gs_type egress_types[] = {RTP_GS_HEAD1,    RTP_GS_HAND1,   RTP_GS_HAND2,
                                                RTP_GS_OBJECT1,  RTP_GS_OBJECT2, RTP_GS_SIXDOF1,
                                                RTP_GS_THREEDOF1};

static const char *type_conf_name(enum rtp_gs_type t)
{
    return rtp_gs_type_name(t);
}

static int parse_objects(struct rtpa *r, const struct xg_conf *conf, struct xg_error *err)
{
    for (int k = 0; k < XG_KIND_COUNT; k++)
        r->kind_type[k] = RTP_GS_OBJECT2;
    r->kind_type[XG_KIND_HEAD] = RTP_GS_HEAD1;
    r->kind_type[XG_KIND_LEFT_HAND] = RTP_GS_HAND1;
    r->kind_type[XG_KIND_RIGHT_HAND] = RTP_GS_HAND1;
    r->kind_type[XG_KIND_CONTROLLER] = RTP_GS_SIXDOF1;
    const struct xg_conf *m = xg_conf_get(conf, "objects");
    if (!m) return 0;
    int rc = xg_conf_expect(m, XG_CONF_MAP, "objects", err);
    if (rc) return rc;
    for (size_t i = 0; i < m->n_items; i++) {
        const struct xg_conf *it = m->items[i];
        enum xg_kind kind;
        if (xg_kind_parse(it->key, &kind))
            return xg_conf_error(err, it, -EINVAL,
                                 "objects: '%s' is not an entity kind (head, left_hand, "
                                 "right_hand, controller, rigid_body, joint, object)",
                                 it->key);
        const char *v = NULL;
        if ((rc = xg_conf_string(m, it->key, NULL, &v, err))) return rc;
        bool found = false;
        for (size_t t = 0; t < sizeof egress_types / sizeof egress_types[0]; t++)
            if (v && !strcasecmp(v, type_conf_name(egress_types[t]))) {
                r->kind_type[kind] = egress_types[t];
                found = true;
            }
        if (!found)
            return xg_conf_error(err, it, -EINVAL,
                                 "objects: %s: '%s' is not an object type (Head1, Hand1, Hand2, "
                                 "Object1, Object2, SixDOF1, ThreeDOF1)",
                                 it->key, v ? v : "");
    }
    return 0;
}

int rtpa_conf_read(struct xg_adapter *a, const struct xg_conf *conf, int64_t *ssrc_out,
                   struct xg_error *err)
{
    struct rtpa *r = a->priv;
    int rc;
    const char *bind = NULL, *iface = NULL, *sdp_addr = NULL;
    int64_t pt, ssrc;
    *ssrc_out = -1;
    if ((rc = xg_conf_string(conf, "bind", "0.0.0.0:49170", &bind, err)) ||
        (rc = xg_conf_string(conf, "interface", NULL, &iface, err)) ||
        (rc = xg_conf_int(conf, "payload_type", 98, 96, 127, &pt, err)) ||
        (rc = xg_conf_int(conf, "ssrc", -1, 0, UINT32_MAX, &ssrc, err)) ||
        (rc = xg_conf_int(conf, "refresh_ms", 200, 0, 3600000, &r->refresh_ms, err)) ||
        (rc = xg_conf_int(conf, "rtcp_interval_ms", 5000, 0, 3600000, &r->rtcp_interval_ms, err)) ||
        (rc = xg_conf_int(conf, "mtu", 1200, 256, 65507, &r->mtu, err)) ||
        (rc = xg_conf_int(conf, "ttl", 1, 0, 255, &r->ttl, err)) ||
        (rc = xg_conf_int(conf, "ssrc_timeout_ms", 5000, 100, 3600000, &r->ssrc_timeout_ms, err)) ||
        (rc = xg_conf_int(conf, "max_ssrcs", 64, 1, 100000, &r->max_ssrcs, err)) ||
        (rc = xg_conf_int(conf, "max_objects", 4096, 1, 1000000, &r->max_objects, err)) ||
        (rc = xg_conf_int(conf, "max_objects_per_ssrc", 1024, 1, 1000000, &r->max_objects_per_ssrc,
                          err)) ||
        (rc = xg_conf_string(conf, "sdp_address", NULL, &sdp_addr, err)) ||
        (rc = parse_objects(r, conf, err)))
        return rc;
    r->pt = (int)pt;
    snprintf(r->bind_text, sizeof r->bind_text, "%s", bind);
    if (iface) {
        struct in_addr tmp;
        if (inet_pton(AF_INET, iface, &tmp) != 1)
            return xg_conf_error(err, xg_conf_get(conf, "interface"), -EINVAL,
                                 "interface '%s' must be an IPv4 address", iface);
        snprintf(r->iface, sizeof r->iface, "%s", iface);
        r->has_iface = true;
    }
    if (sdp_addr) {
        if (!*sdp_addr || strpbrk(sdp_addr, " \t\r\n") || strlen(sdp_addr) >= sizeof r->sdp_address)
            return xg_conf_error(err, xg_conf_get(conf, "sdp_address"), -EINVAL,
                                 "sdp_address '%s' is not an address", sdp_addr);
        snprintf(r->sdp_address, sizeof r->sdp_address, "%s", sdp_addr);
    }
    /* addresses: numeric ones parsed here, host names only checked (resolved at start without
     * blocking, rtp_dest.c), so --check catches typos */
    if ((rc = rtpa_conf_addrs(a, conf, bind, err))) return rc;
    const struct xg_conf *al = xg_conf_get(conf, "allow_ssrc");
    if (al) {
        if ((rc = xg_conf_expect(al, XG_CONF_SEQ, "allow_ssrc", err))) return rc;
        if (al->n_items > RTPA_MAX_ALLOW)
            return xg_conf_error(err, al, -EINVAL, "allow_ssrc: at most %d", RTPA_MAX_ALLOW);
        for (size_t i = 0; i < al->n_items; i++) {
            int64_t v;
            if ((rc = xg_conf_node_int(al->items[i], 0, UINT32_MAX, &v, err))) return rc;
            r->allow[r->n_allow++] = (uint32_t)v;
        }
        if (!r->n_allow)
            return xg_conf_error(err, al, -EINVAL,
                                 "allow_ssrc: empty list (remove the key to "
                                 "accept any SSRC)");
    }
    /* SRTP (static SDES keys from files; reads files, opens no sockets: fine for --check) */
    bool allow_fixed = false;
    if ((rc = xg_conf_bool(conf, "allow_fixed_ssrc_with_srtp", false, &allow_fixed, err)) ||
        (rc = xg_srtp_conf_read(conf, &r->srtp, err)))
        return rc;
    r->pack_len = (size_t)r->mtu;
    if (r->srtp.enabled) {
        if (ssrc >= 0 && !allow_fixed)
            return xg_conf_error(
                err, xg_conf_get(conf, "ssrc"), -EINVAL,
                "ssrc: a fixed SSRC with srtp is refused: after a restart the same static key, "
                "SSRC and sequence numbers would encrypt new packets with the keystream of old "
                "ones (remove ssrc: to get a random one, or set allow_fixed_ssrc_with_srtp: true "
                "if the key is changed at every start)");
        /* one line per file, naming it and its key (not "a or b") */
        if (r->srtp.key_readable)
            XG_WARN(a->name,
                    "srtp: key file '%s' (srtp.key_file) can be read by group or others "
                    "(chmod 600 it)",
                    r->srtp.key_path);
        if (r->srtp.remote_key_readable)
            XG_WARN(a->name,
                    "srtp: key file '%s' (srtp.remote_key_file) can be read by group or others "
                    "(chmod 600 it)",
                    r->srtp.remote_key_path);
        r->pack_len = (size_t)r->mtu - xg_srtp_overhead(r->srtp.suite, false);
    }
    *ssrc_out = ssrc;
    return 0;
}
