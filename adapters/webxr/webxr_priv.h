/* State shared by the webxr adapter's files (webxr_adapter.c: listener, handshake, WebSocket;
 * webxr_ingress.c: frames into the table, the clock offset). */
#ifndef XG_WEBXR_PRIV_H
#define XG_WEBXR_PRIV_H

#include <stdbool.h>
#include <stdint.h>
#include <wslay/wslay.h>

#include "adapters/webxr/webxr_codec.h"
#include "core/adapter/adapter.h"
#include "core/net/net.h"
#include "core/clock/time_map.h"

#define WEBXR_PONGS 16 /* pongs whose smallest round trip gives the clock offset */

/** The clock offset estimate of one connection (page clock -> gateway clock). */
struct webxr_clock {
    uint32_t seq;                   /* last PING sequence sent */
    int64_t sent_ns[8];             /* gateway time each of the last 8 PINGs left (by seq & 7) */
    uint32_t sent_seq[8];           /* and their sequence numbers */
    int64_t rtt_ns[WEBXR_PONGS];    /* round trip of the last pongs (ring) */
    int64_t off_ns[WEBXR_PONGS];    /* gateway − page offset each of them gave */
    unsigned n, next;               /* pongs in the ring, next slot */
    int64_t offset_ns, best_rtt_ns; /* the estimate in force (best_rtt_ns 0: none yet) */
    struct xg_time_map fallback;    /* before the first pong: min(receive − source) */
};

/** Gateway time of a FRAME of page time `page_ms` received at `receive_ns`: the page time plus the
 *  offset of the pong with the smallest round trip among the last WEBXR_PONGS, never after
 *  receive_ns; before any pong, xg_adapter_map_time() (min of receive − source). */
int64_t webxr_clock_map(struct xg_adapter *a, struct webxr_clock *c, double page_ms,
                        int64_t receive_ns, const char *peer);
/** A PONG (`seq`, page time `page_ms`) arrived at `now_ns`: add its round trip and offset. False
 *  when `seq` is not one of the last 8 PINGs sent (ignored). */
bool webxr_clock_pong(struct webxr_clock *c, uint32_t seq, double page_ms, int64_t now_ns);

/** Entity ids of one session (0 = not reported yet). */
struct webxr_ids {
    uint32_t head;
    uint32_t controller[3];               /* by handedness: none, left, right */
    uint32_t joint[3][WEBXR_JOINTS];      /* by handedness */
    uint32_t parent_set[3][WEBXR_JOINTS]; /* the id whose parent was recorded */
};

/** Put one decoded FRAME of session `session` into the table (a->frame applied): the head, each
 *  input source's grip pose with its buttons and analogs, each hand's joints with their
 *  parents. Returns the samples pushed. */
int webxr_ingest(struct xg_adapter *a, const char *session, struct webxr_ids *ids,
                 const struct webxr_frame *f, int64_t capture_ns, int64_t receive_ns);

#endif
