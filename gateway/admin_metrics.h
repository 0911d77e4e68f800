/* GET /metrics: the gateway's state as Prometheus text exposition format 0.0.4, accepted by
 * `promtool check metrics` (docs/metrics.md lists every family).
 *
 * Gateway-wide families, per-adapter families with labels {adapter, type}, and the values an
 * adapter reports in its status (core/adapter/adapter.h, enum xg_status_kind): a counter becomes
 * `xrgate_adapter_<name>_total`, a gauge `xrgate_adapter_<name>`, an identifier a label of
 * `xrgate_adapter_info`. `xrgate_adapter_up` is 1 while an adapter is streaming, listening,
 * running or playing. */
#ifndef XG_ADMIN_METRICS_H
#define XG_ADMIN_METRICS_H

#include <stdbool.h>
#include <stddef.h>

#include "core/adapter/adapter.h"

struct xg_gateway;
struct evbuffer;

/** The metric family name of an adapter status value `name` of kind `kind` into buf
 *  (NUL-terminated): "packets_in" counter -> "xrgate_adapter_packets_in_total", "bytes_out"
 *  counter -> "xrgate_adapter_out_bytes_total", "clients" gauge -> "xrgate_adapter_clients",
 *  "frame_rate_hz" gauge -> "xrgate_adapter_frame_rate_hertz". Returns false for an identifier
 *  (no family of its own: a label of xrgate_adapter_info), for a name that is not snake_case
 *  ([a-z0-9_], starting with a letter), for one that would collide with the gateway's own
 *  families (up, info, errors, the common counters) or when buf is too small. */
bool xg_metrics_adapter_family(const char *name, enum xg_status_kind kind, char *buf, size_t size);

/** True if an adapter in `state` (xg_status.state) counts as up: "streaming", "listening",
 *  "running" or "playing". */
bool xg_metrics_state_up(const char *state);

/** Append the whole /metrics body for gw to out. */
void xg_admin_metrics_render(struct xg_gateway *gw, struct evbuffer *out);

#endif
