/* The transport module's umbrella header: the one door from an adapter to the reactor.
 *
 * Layers (docs/development.md "Layers"): transport (this header, which includes no libevent
 * header: core/net/transport_client.h for outgoing TCP with DNS and
 * backoff, core/net/transport_server.h for listeners with client caps, read caps and the
 * slow-client policy, core/net/tcp_conn.h for driving one connection (callbacks, reading, writing,
 * freeing), core/net/udp_endpoint.h and core/net/udp_batch.h for UDP sockets, core/net/timer.h for
 * timers and the cross-thread wake-up, core/net/resolve.h for names) -> session
 * (<proto>_session.c: bytes and time in, bytes, events and deadlines out; no sockets, no
 * libevent) -> adapter glue (<proto>_adapter.c, client/server files: wires transport to session
 * to table) -> entity table (core/table/entity.h).
 *
 * Adapter sources include this header, never <event2/...> directly; codecs and sessions include
 * neither. tests/static/check_layers.sh enforces both rules (ctest static/layers). */
#ifndef XG_TRANSPORT_H
#define XG_TRANSPORT_H

#include "core/net/tcp_conn.h"
#include "core/net/timer.h"
#include "core/net/transport_client.h"
#include "core/net/transport_server.h"
#include "core/net/udp_batch.h"
#include "core/net/udp_dests.h"
#include "core/net/udp_endpoint.h"

#endif
