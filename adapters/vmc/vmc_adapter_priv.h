/* The vmc adapter's own state, shared by its glue (vmc_adapter.c) and its configuration
 * reading (vmc_conf.c). Not for other adapters. */
#ifndef XG_VMC_ADAPTER_PRIV_H
#define XG_VMC_ADAPTER_PRIV_H

#include <stdint.h>

#include "adapters/vmc/vmc.h"
#include "core/adapter/adapter.h"
#include "core/conf/conf.h"
#include "core/util/error.h"
#include "core/net/ingress_budget.h"
#include "core/net/timer.h"
#include "core/net/udp_dests.h"
#include "core/net/udp_endpoint.h"

struct vmca {
    struct xg_udp_bind bind;   /* `bind` (core/net/udp_dests.h) */
    struct xg_udp_dests dests; /* `destinations` (core/net/udp_dests.h) */
    struct xg_udp_rx
        rx; /* the socket and its reading (core/net/udp_endpoint.h); rx.fd -1 = closed */
    uint16_t bound_port;
    struct xg_timer *sweep; /* 1 s: devices that went quiet (core/net/timer.h) */
    struct vmc_ingress in;
    struct xg_ingress_budget budget; /* per wake-up of rx_cb (core/net/ingress_budget.h) */
    struct vmc_egress out;
    uint64_t send_errors;
};

/** Read and check the adapter's configuration keys (see vmc_adapter.c's top comment) into r,
 *  which vmca_create allocated zeroed: profile, bind, destinations (syntax only, no DNS), mtu,
 *  max_bundle_depth, max_devices, skeleton, bones, trackers; initialises r->in and r->out.
 *  0, or a negative errno with the message (naming the key) in err. */
int vmc_conf_read(struct vmca *r, struct xg_adapter *a, const struct xg_conf *conf,
                  struct xg_error *err);

#endif
