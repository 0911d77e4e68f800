/* The static adapter registry (no dlopen).
 *
 * Every adapter type is listed here. Types whose folder is not built (XRGATE_ADAPTERS) are weak
 * references that resolve to NULL and are skipped, so a partial build still links. */
#include <stdio.h>
#include <string.h>

#include "gateway/gateway.h"

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
    X(xg_dds_ops)

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
