/* `rgmp-server` configuration (keys at the top of rgmp_server.c): reading, checking and the
 * defaults of every key, with the error texts `xrgate --check` prints. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "adapters/rgmp/rgmp_server_priv.h"
#include "core/adapter/adapter.h"
#include "core/net/net.h"

/* hand_maps: [{hand: left|right, joints: {<OpenXR joint>: <entity name>, ...}}] (wrist required) */
static int parse_hand_maps(struct rgmp_server *s, const struct xg_conf *conf, struct xg_error *err)
{
    const struct xg_conf *l = xg_conf_get(conf, "hand_maps");
    if (!l) return 0;
    int rc = xg_conf_expect(l, XG_CONF_SEQ, "hand_maps", err);
    if (rc) return rc;
    if (l->n_items > MAX_HAND_MAPS)
        return xg_conf_error(err, l, -EINVAL, "hand_maps: at most %d entries", MAX_HAND_MAPS);
    for (size_t i = 0; i < l->n_items; i++) {
        const struct xg_conf *m = l->items[i];
        if ((rc = xg_conf_expect(m, XG_CONF_MAP, "hand_maps entry", err))) return rc;
        const char *side = NULL;
        if ((rc = xg_conf_string(m, "hand", NULL, &side, err))) return rc;
        if (!side || (strcmp(side, "left") && strcmp(side, "right")))
            return xg_conf_error(err, xg_conf_get(m, "hand") ? xg_conf_get(m, "hand") : m, -EINVAL,
                                 "hand_maps[%zu]: hand: '%s' must be left or right", i,
                                 side ? side : "");
        struct hand_map *hm = &s->maps[s->n_maps++];
        snprintf(hm->side, sizeof hm->side, "%s", side);
        const struct xg_conf *js = xg_conf_get(m, "joints");
        if (!js)
            return xg_conf_error(err, m, -EINVAL,
                                 "hand_maps[%zu]: joints: missing (OpenXR joint name: entity "
                                 "name, at least wrist)",
                                 i);
        if ((rc = xg_conf_expect(js, XG_CONF_MAP, "hand_maps joints", err))) return rc;
        for (size_t k = 0; k < js->n_items; k++) {
            const struct xg_conf *it = js->items[k];
            int j = rgmp_hand_joint_index(it->key);
            if (j < 0)
                return xg_conf_error(err, it, -EINVAL,
                                     "hand_maps[%zu]: joints: '%s' is not an OpenXR hand joint "
                                     "(palm, wrist, thumb_metacarpal .. thumb_tip, index_, "
                                     "middle_, ring_, little_ metacarpal .. tip)",
                                     i, it->key);
            const char *v = NULL;
            if ((rc = xg_conf_string(js, it->key, NULL, &v, err))) return rc;
            if (!v || !*v)
                return xg_conf_error(err, it, -EINVAL,
                                     "hand_maps[%zu]: joints: %s: expected an entity name", i,
                                     it->key);
            free(hm->joint[j]);
            if (!(hm->joint[j] = strdup(v))) return -ENOMEM;
        }
        if (!hm->joint[RGMP_HAND_WRIST])
            return xg_conf_error(err, js, -EINVAL, "hand_maps[%zu]: joints: wrist is required", i);
    }
    return 0;
}

int rgmp_server_conf_read(struct rgmp_server *s, const struct xg_conf *conf, struct xg_error *err)
{
    const char *listen, *ref;
    int rc;
    const char *def_ref = !strcasecmp(s->frame->name, "LTP_NED") ? "LTP_NED" : "LTP_ENU";
    if ((rc = xg_conf_string(conf, "listen", "0.0.0.0:12280", &listen, err)) ||
        (rc = xg_conf_int(conf, "max_clients", 16, 1, 4096, &s->max_clients, err)) ||
        (rc = xg_conf_int(conf, "max_output_bytes", 1 << 20, 4096, INT64_C(1) << 30, &s->max_output,
                          err)) ||
        (rc = xg_conf_int(conf, "slow_timeout_ms", 2000, 0, 3600000, &s->slow_timeout_ms, err)) ||
        (rc = xg_conf_string(conf, "reference_frame", def_ref, &ref, err)) ||
        (rc = xg_conf_bool(conf, "solved_hands", false, &s->solved_hands, err)) ||
        (rc = parse_hand_maps(s, conf, err)))
        return rc;
    char host[200];
    int port = -1;
    if (strlen(listen) >= sizeof s->listen ||
        xg_net_split_hostport(listen, host, sizeof host, &port, 12280) < 0 || port < 0 ||
        port > 65535)
        return xg_conf_error(err, xg_conf_get(conf, "listen"), -EINVAL,
                             "listen: '%s' is not host:port", listen);
    if (!ref[0] || strlen(ref) >= sizeof s->reference_frame)
        return xg_conf_error(err, xg_conf_get(conf, "reference_frame"), -EINVAL,
                             "reference_frame: '%s' must be a non-empty name below 64 bytes", ref);
    snprintf(s->listen, sizeof s->listen, "%s", listen);
    snprintf(s->reference_frame, sizeof s->reference_frame, "%s", ref);
    return 0;
}
