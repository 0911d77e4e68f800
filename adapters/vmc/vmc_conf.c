/* The vmc adapter's configuration keys, read and checked when the adapter is created (the keys
 * and their defaults are listed in vmc_adapter.c's top comment and docs/adapters/vmc.md). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "adapters/vmc/vmc.h"
#include "adapters/vmc/vmc_adapter_priv.h"
#include "core/conf/conf.h"
#include "core/net/udp_dests.h"

static int parse_trackers(struct vmca *r, const struct xg_conf *conf, struct xg_error *err)
{
    const struct xg_conf *tl = xg_conf_get(conf, "trackers");
    if (!tl) return 0;
    int rc;
    if ((rc = xg_conf_expect(tl, XG_CONF_SEQ, "trackers", err))) return rc;
    struct vmc_egress *eg = &r->out;
    if (!(eg->rules = calloc(tl->n_items ? tl->n_items : 1, sizeof *eg->rules))) return -ENOMEM;
    for (size_t i = 0; i < tl->n_items; i++) {
        const struct xg_conf *it = tl->items[i];
        if ((rc = xg_conf_expect(it, XG_CONF_MAP, "trackers item", err))) return rc;
        const char *match = NULL;
        int64_t idx;
        if ((rc = xg_conf_string(it, "match", NULL, &match, err)) ||
            (rc = xg_conf_int(it, "index", -1, 0, VMT_TRACKERS - 1, &idx, err)))
            return rc;
        if (!match || idx < 0)
            return xg_conf_error(err, it, -EINVAL,
                                 "trackers: each item needs match: (a glob on entity names) and "
                                 "index: (0..%d)",
                                 VMT_TRACKERS - 1);
        if (!(eg->rules[i].match = strdup(match))) return -ENOMEM;
        eg->rules[i].index = (int)idx;
        eg->n_rules++;
    }
    return 0;
}

static int parse_bones(struct vmca *r, const struct xg_conf *conf, struct xg_error *err)
{
    const struct xg_conf *m = xg_conf_get(conf, "bones");
    if (!m) return 0;
    int rc;
    if ((rc = xg_conf_expect(m, XG_CONF_MAP, "bones", err))) return rc;
    for (size_t i = 0; i < m->n_items; i++) {
        const struct xg_conf *it = m->items[i];
        int b = vmc_bone_find(it->key, strlen(it->key));
        if (b < 0 || strcmp(vmc_bones[b].name, it->key) != 0)
            return xg_conf_error(err, it, -EINVAL,
                                 "bones: '%s' is not a HumanBodyBones name (Hips, Spine, Chest, "
                                 "UpperChest, Neck, Head, LeftUpperArm, ...)",
                                 it->key);
        const char *seg = NULL;
        if ((rc = xg_conf_string(m, it->key, NULL, &seg, err))) return rc;
        if (!seg || !*seg || strchr(seg, '/') || strlen(seg) >= XG_NAME_MAX)
            return xg_conf_error(err, it, -EINVAL,
                                 "bones: %s: '%s' is not the last segment of an entity name",
                                 it->key, seg ? seg : "");
        free(r->out.bone_seg[b]);
        if (!(r->out.bone_seg[b] = strdup(seg))) return -ENOMEM;
    }
    return 0;
}

int vmc_conf_read(struct vmca *r, struct xg_adapter *a, const struct xg_conf *conf,
                  struct xg_error *err)
{
    int rc;
    const char *profile = NULL, *bind = NULL, *skeleton = NULL;
    int64_t mtu, depth, max_devices;
    if ((rc = xg_conf_string(conf, "profile", "vmc", &profile, err)) ||
        (rc = xg_conf_string(conf, "bind", "0.0.0.0:39539", &bind, err)) ||
        (rc = xg_conf_int(conf, "mtu", 1200, 256, 65507, &mtu, err)) ||
        (rc = xg_conf_int(conf, "max_bundle_depth", OSC_DEFAULT_MAX_DEPTH, 1, 64, &depth, err)) ||
        (rc = xg_conf_int(conf, "max_devices", 64, 1, 4096, &max_devices, err)) ||
        (rc = xg_conf_string(conf, "skeleton", NULL, &skeleton, err)))
        return rc;
    enum vmc_profile prof;
    if (!strcasecmp(profile, "vmc"))
        prof = VMC_PROFILE_VMC;
    else if (!strcasecmp(profile, "vmt"))
        prof = VMC_PROFILE_VMT;
    else
        return xg_conf_error(err, xg_conf_get(conf, "profile"), -EINVAL,
                             "profile '%s' is not vmc or vmt", profile);
    const struct xg_conf *bn = xg_conf_get(conf, "bind");
    /* no DNS at load (--check checks the syntax): names resolve at start without blocking */
    if ((rc = xg_udp_bind_conf(&r->bind, bind, "0.0.0.0", 39539, err)))
        return bn ? xg_conf_error(err, bn, rc, "bind: %s", err->msg) : rc;
    if ((rc = xg_udp_dests_conf(&r->dests, conf, "destinations", 0,
                                xg_udp_bind_named(&r->bind) ? AF_UNSPEC : r->bind.ss.ss_family,
                                err)))
        return rc;
    if ((rc = vmc_egress_init(&r->out, a, prof, (size_t)mtu)) ||
        (rc = vmc_ingress_init(&r->in, a, (int)depth, (size_t)max_devices)))
        return rc;
    if ((rc = parse_trackers(r, conf, err)) || (rc = parse_bones(r, conf, err))) return rc;
    if (xg_conf_get(conf, "bones") && prof != VMC_PROFILE_VMC)
        return xg_conf_error(err, xg_conf_get(conf, "bones"), -EINVAL,
                             "bones: only with profile: vmc");
    if (r->out.n_rules && prof != VMC_PROFILE_VMT)
        return xg_conf_error(err, xg_conf_get(conf, "trackers"), -EINVAL,
                             "trackers: only with profile: vmt");
    if (skeleton) {
        if (prof != VMC_PROFILE_VMC)
            return xg_conf_error(err, xg_conf_get(conf, "skeleton"), -EINVAL,
                                 "skeleton: only with profile: vmc");
        if (!*skeleton || strlen(skeleton) >= XG_NAME_MAX)
            return xg_conf_error(err, xg_conf_get(conf, "skeleton"), -EINVAL,
                                 "skeleton: '%s' is not an entity-name prefix", skeleton);
        if (!(r->out.skeleton = strdup(skeleton))) return -ENOMEM;
        r->out.skeleton_auto = false;
    }
    return 0;
}
