/* `rgmp-client` adapter, private to its source files (rgmp_client.c: adapter ops, connection
 * and device mapping; rgmp_client_conf.c: configuration). The behaviour is described at the top of
 * rgmp_client.c; nothing outside adapters/rgmp includes this. */
#ifndef XG_RGMP_CLIENT_PRIV_H
#define XG_RGMP_CLIENT_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/net/transport.h"
#include "adapters/rgmp/rgmp_codec.h"
#include "core/adapter/adapter.h"
#include "core/clock/clock.h"
#include "core/util/log.h"
#include "core/table/names.h"
#include "core/net/net.h"
#include "core/net/transport_client.h"
#include "core/clock/time_map.h"
#include "mappings/frame.h"

#define MAX_WARNED 64
#define MAX_DEPTH 16
#define CONNECT_TIMEOUT_NS (5 * XG_NS_PER_S)

/* One pose entity of a device: a target_frame with a pose stream. */
struct ent {
    char *frame; /* target_frame (borrowed from the definition) */
    char *ref;   /* reference frame of its pose stream (NULL: intrinsic) */
    long parent; /* index of the entity named by ref, -1 if ref is not streamed */
    char source[XG_NAME_MAX];
    uint32_t id;     /* table id, 0 until the first sample */
    int next_button; /* extras allocation */
    int next_analog;
    /* latest local pose (in ref coordinates) and its root-frame composition */
    bool has_local, has_root;
    struct rgmp_pose local, root;
    /* per data frame accumulator */
    bool touched;
    struct xg_sample smp;
    bool has_v, has_w;
    struct xg_vec3 v, w;
    char *v_ref, *w_ref; /* reference frames of the velocity values this frame */
};

/* Where one stream of a group goes. */
enum sroute { R_NONE, R_POSE, R_VEL, R_ANGVEL, R_FLAGS, R_CUSTOM };
struct route {
    enum sroute kind;
    long ent;  /* entity index */
    int base;  /* first button / analog index */
    int count; /* buttons / analogs used */
};

struct dev {
    uint32_t device_id;
    const struct rgmp_definition *def; /* owned by the session */
    struct ent *ents;
    size_t n_ents;
    long root;             /* default entity for extras, -1 if none */
    struct route **routes; /* per group, per stream */
    struct xg_frame frame; /* wire frame of this device */
    struct xg_time_map tmap;
    int64_t last_mapped; /* last capture time from tmap */
    bool clock_fallback_warned;
};

struct rgmp_client {
    char connect[256];
    bool strict, compose, explicit_frame;
    int64_t max_devices;
    struct rgmp_limits limits;
    char host[200];
    int port;
    char peer[300]; /* the server's address (core/net/transport_client.h) */

    struct xg_tclient *tc; /* connecting, backoff, state (core/net/transport_client.h) */
    struct bufferevent *bev;
    struct rgmp_session sess;
    bool sess_live;
    struct dev *devs;
    size_t n_devs;

    char *warned[MAX_WARNED]; /* keys already warned about (D4, D10) */
    size_t n_warned;

    uint64_t disconnects, protocol_errors, definitions, redefinitions, frames, out_of_order,
        rejected, device_disconnects, bytes_in, unresolved, extras_dropped;
    /* lines the server can trigger, one rate limiter per kind (core/util/log.h) */
    struct xg_log_limit lim_definition, lim_mapping, lim_device, lim_protocol;
};

/** Read and check the configuration keys (listed at the top of rgmp_client.c) into c, with their
 *  defaults: connect (also c->host, c->port and the initial c->peer), strict, compose,
 *  max_devices, the frame limits and whether `frame:` is explicit. 0, or a negative errno with
 *  err naming the key and the value. */
int rgmp_client_conf_read(struct rgmp_client *c, const struct xg_conf *conf, struct xg_error *err);

#endif
