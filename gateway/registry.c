/* The static adapter registry (no dlopen).
 *
 * Every adapter type is listed here. Types whose folder is not built (XRGATE_ADAPTERS) are weak
 * references that resolve to NULL and are skipped, so a partial build still links. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gateway/gateway.h"
#include "mappings/frame.h"

#define XG_ADAPTER_TYPES(X)                                                                        \
    X(xg_synth_ops)                                                                                \
    X(xg_bvh_ops)                                                                                  \
    X(xg_vrpn_client_ops)                                                                          \
    X(xg_vrpn_server_ops)                                                                          \
    X(xg_rgmp_client_ops)                                                                          \
    X(xg_rgmp_server_ops)                                                                          \
    X(xg_less_ops)                                                                                 \
    X(xg_rtp_ops)                                                                                  \
    X(xg_vmc_ops)                                                                                  \
    X(xg_dds_ops)                                                                                  \
    X(xg_webxr_ops)                                                                                \
    X(xg_mcap_record_ops)                                                                          \
    X(xg_mcap_replay_ops)

#define X(sym) extern const struct xg_adapter_ops sym __attribute__((weak));
XG_ADAPTER_TYPES(X)
#undef X

#define X(sym) &sym,
static const struct xg_adapter_ops *const registry[] = {XG_ADAPTER_TYPES(X)};
#undef X

#define N_TYPES (sizeof registry / sizeof registry[0])

const struct xg_adapter_ops *xg_registry_find(const char *type)
{
    for (size_t i = 0; i < N_TYPES; i++)
        if (registry[i] && type && strcmp(registry[i]->type, type) == 0) return registry[i];
    return NULL;
}

const char *xg_registry_types(void)
{
    static char buf[256];
    size_t o = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < N_TYPES; i++)
        if (registry[i])
            o += (size_t)snprintf(buf + o, o < sizeof buf ? sizeof buf - o : 0, "%s%s",
                                  o ? ", " : "", registry[i]->type);
    return buf;
}

int xg_registry_check_ops(const struct xg_adapter_ops *ops, struct xg_error *err)
{
    if (!ops->type || !*ops->type)
        return xg_error_set(err, -EINVAL, "adapter ops without a type name");
    const char *t = ops->type;
    const struct {
        const char *name;
        bool present;
    } need[] = {
        {"create", ops->create != NULL}, {"start", ops->start != NULL},
        {"stop", ops->stop != NULL},     {"destroy", ops->destroy != NULL},
        {"status", ops->status != NULL},
    };
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
        if (!need[i].present)
            return xg_error_set(err, -EINVAL, "adapter type '%s': missing op '%s'", t,
                                need[i].name);
    if (ops->is_sink && !ops->drain)
        return xg_error_set(err, -EINVAL, "adapter type '%s': missing op 'drain' (it is a sink)",
                            t);
    if (!ops->is_sink && ops->drain)
        return xg_error_set(err, -EINVAL,
                            "adapter type '%s': op 'drain' set but the type is not a sink", t);
    if (!isfinite(ops->default_rate_hz) || ops->default_rate_hz < 0)
        return xg_error_set(err, -EINVAL, "adapter type '%s': default_rate_hz %g is not >= 0", t,
                            ops->default_rate_hz);
    if (!ops->is_sink && ops->default_rate_hz != 0)
        return xg_error_set(err, -EINVAL,
                            "adapter type '%s': default_rate_hz set but the type is not a sink", t);
    if (ops->default_frame) {
        struct xg_frame f;
        struct xg_error e2 = {0};
        if (xg_frame_preset(ops->default_frame, &f, &e2))
            return xg_error_set(err, -EINVAL, "adapter type '%s': default_frame: %s", t, e2.msg);
    }
    return 0;
}

int xg_registry_check(struct xg_error *err)
{
    for (size_t i = 0; i < N_TYPES; i++) {
        if (!registry[i]) continue;
        int rc = xg_registry_check_ops(registry[i], err);
        if (rc) return rc;
        for (size_t j = 0; j < i; j++)
            if (registry[j] && !strcmp(registry[j]->type, registry[i]->type))
                return xg_error_set(err, -EINVAL, "adapter type '%s' registered twice",
                                    registry[i]->type);
    }
    return 0;
}
