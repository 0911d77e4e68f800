/* The adapter interface.
 *
 * An adapter type is a `const struct xg_adapter_ops` with designated initialisers, registered
 * statically in gateway/registry.c. The gateway allocates one struct xg_adapter per configured
 * instance, fills the common fields (name, index, base, table, frame, rate; a key that is absent
 * takes the type's default from the ops), then calls create() with the instance's config node: the
 * adapter reads its own keys through core/conf/conf.h getters (unknown keys become errors
 * afterwards). start() opens sockets on a->base; drain() sends the dirty entities (xg_table_drain)
 * predicted to now; status() reports state, peer and counters for /api/adapters and /metrics;
 * stop() closes sockets (must be quick: the process stops within 1 s); destroy() frees a->priv — it
 * is called whenever create() was called, also when create() failed half-way, so it must cope with
 * partially built state.
 *
 * Ingress: xg_table_update(a->table, a, &key, &sample, &id) with the sample already converted to
 * the internal frame (mappings/frame.h, a->frame). */
#ifndef XG_ADAPTER_H
#define XG_ADAPTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/conf/conf.h"
#include "core/table/entity.h"
#include "core/util/error.h"
#include "core/util/log.h"
#include "core/clock/time_map.h"

struct event_base;
struct event;
struct xg_frame;
struct xg_adapter;

#define XG_STATUS_MAX_COUNTERS 40

/** What a status value means, which decides how /metrics exposes it (docs/metrics.md):
 *  a counter only grows while the adapter runs (`xrgate_adapter_<name>_total`, a name
 *  `bytes_<dir>` becomes `xrgate_adapter_<dir>_bytes_total`); a gauge goes up and down or is a
 *  property of the source (`xrgate_adapter_<name>`, `_hz` spelled `_hertz`); an identifier
 *  (port, SSRC) is a label of `xrgate_adapter_info`. /api/adapters lists all three alike. */
enum xg_status_kind { XG_STATUS_COUNTER = 0, XG_STATUS_GAUGE, XG_STATUS_ID };

/** State and counters of one adapter instance, for /api/adapters and /metrics. */
struct xg_status {
    const char *state; /* "running", "connecting", "handshake", "streaming", "backoff", "listening",
                          "done", "error"... (static string) */
    char peer[128];    /* remote address(es) or file, "" if none */
    bool client;       /* a client adapter (core/net/transport_client.h): last_error applies */
    char last_error[200]; /* client adapters: the most recent connection failure, "" if none */
    struct {
        const char *name; /* static string, snake_case, e.g. "reconnects" */
        double value;
        enum xg_status_kind kind;
    } counters[XG_STATUS_MAX_COUNTERS];
    int n_counters;
};

/** Add a value of the given kind to a status (ignored past XG_STATUS_MAX_COUNTERS). */
static inline void xg_status_value(struct xg_status *st, const char *name, double value,
                                   enum xg_status_kind kind)
{
    if (st->n_counters < XG_STATUS_MAX_COUNTERS) {
        st->counters[st->n_counters].name = name;
        st->counters[st->n_counters].value = value;
        st->counters[st->n_counters].kind = kind;
        st->n_counters++;
    }
}

/** Add a counter (a count of events since the adapter started: only grows). */
static inline void xg_status_counter(struct xg_status *st, const char *name, double value)
{
    xg_status_value(st, name, value, XG_STATUS_COUNTER);
}

/** Add a gauge (a current value: connections open, entities, the source's frame rate). */
static inline void xg_status_gauge(struct xg_status *st, const char *name, double value)
{
    xg_status_value(st, name, value, XG_STATUS_GAUGE);
}

/** Add an identifier (a bound port, an SSRC): a label of xrgate_adapter_info in /metrics. */
static inline void xg_status_id(struct xg_status *st, const char *name, double value)
{
    xg_status_value(st, name, value, XG_STATUS_ID);
}

/** Egress rate of a sink whose ops leave default_rate_hz at 0 and whose config has no rate_hz. */
#define XG_DEFAULT_RATE_HZ 60.0

/** An adapter type. Mandatory (checked at startup by xg_registry_check(), which names the type
 *  and the missing op): type, create, start, stop, destroy, status; drain exactly when is_sink.
 *  The default_* fields are the type's defaults for keys the gateway owns: the gateway applies
 *  them before create() when the key is absent, adapters never write a->rate_hz or a->frame. */
struct xg_adapter_ops {
    const char *type; /* "synth", "vrpn-client", "vrpn-server", "rgmp-client", ... */
    bool is_sink;     /* republishes the table (gets a dirty set, rate_hz, include/exclude) */
    /* sinks: egress rate in Hz when `rate_hz` is absent; 0 = XG_DEFAULT_RATE_HZ */
    double default_rate_hz;
    /* frame preset name (mappings/presets) when `frame` is absent; NULL = the internal frame
     * (yup-rh). An unknown preset name is a startup error of xg_registry_check(). */
    const char *default_frame;
    bool whole_frames; /* a send-on-change drain must see the whole dirty set (it builds one frame
                          of all of it: rgmp-server, less, dds, vmc), so the gateway does not
                          drain it in slices (core/table/egress_pass.h); default false: sliced */
    int (*create)(struct xg_adapter *a, const struct xg_conf *conf, struct xg_error *err);
    int (*start)(struct xg_adapter *a);  /* open sockets / connect, on a->base */
    void (*drain)(struct xg_adapter *a); /* egress: send dirty entities, predicted to now */
    void (*status)(const struct xg_adapter *a, struct xg_status *out);
    void (*stop)(struct xg_adapter *a);
    void (*destroy)(struct xg_adapter *a);
    /* optional: an entity appeared / is gone (expired or removed), for sinks that announce or
     * retract entities (LESS remove-entity, VRPN sensor numbering) */
    void (*entity_event)(struct xg_adapter *a, const struct xg_entity *e, bool added);
    /* optional: write a session description (SDP text for RTP sessions) into buf (NUL-terminated,
     * < size); returns its length or a negative errno. Served as GET /api/sdp/<adapter> and by
     * `xrgate --sdp NAME`. May be called after create() without start(). */
    int (*sdp)(const struct xg_adapter *a, char *buf, size_t size);
};

/** One configured adapter instance. Common fields are set by the gateway before create(). */
struct xg_adapter {
    const struct xg_adapter_ops *ops;
    char name[64];                /* unique; entity names start with "<name>/" */
    int index;                    /* 0..XG_MAX_ADAPTERS-1: origin/sink index in the table */
    struct event_base *base;      /* the reactor */
    struct xg_table *table;       /* the entity table */
    const struct xg_frame *frame; /* wire frame → internal frame (never NULL) */
    double rate_hz;               /* egress rate; 0 = send on change */
    bool whole_frames;      /* egress policy of this instance: ops->whole_frames, set by the gateway
                               before create(), which may set it (e.g. a mode that sends every entity
                               per drain); read after create() */
    unsigned egress_slice;  /* entities per slice when drained in slices; 0 = XG_EGRESS_SLICE.
                               create() may set it,
                               e.g. to what fills its packets (core/table/egress_pass.h) */
    const char *gateway_id; /* gateway.id (borrowed, lives as long as the gateway) */
    /* the admin server's bearer token and TLS files (borrowed from the gateway's configuration;
       "" = none), for an adapter that serves the inspector's page on a port of its own (webxr) */
    const char *admin_token, *admin_tls_cert, *admin_tls_key;
    void *priv; /* adapter-owned state */
    /* common counters, maintained by the adapter */
    uint64_t samples_in, samples_out, drops, errors;
    uint64_t clock_steps;          /* source clock steps adopted (xg_adapter_map_time), all peers */
    struct xg_log_limit lim_clock; /* the lines of those steps */
};

struct xg_time_map;
/** Source time → gateway time through `m` (xg_time_map_update(), core/net/net.h) for adapter `a`:
 *  when the map adopts a clock step (a source whose stamps jumped forward or back), counts it in
 *  a->clock_steps (/api/adapters and /metrics `clock_steps`) and logs one rate-limited line
 *  naming `peer` (the source: an address, a device, a DDS writer; NULL = none) and the step.
 *  Returns the mapped capture time (ns, gateway clock, never after receive_ns). */
int64_t xg_adapter_map_time(struct xg_adapter *a, struct xg_time_map *m, int64_t source_ns,
                            int64_t receive_ns, const char *peer);
/** The counting and logging part of xg_adapter_map_time(), for an adapter that calls
 *  xg_time_map_update() itself and saw m->steps change (e.g. to name the peer only when the line
 *  is printed). */
void xg_adapter_clock_step(struct xg_adapter *a, const struct xg_time_map *m, const char *peer);

#endif
