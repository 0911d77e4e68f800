/* Internals shared by gateway/gateway.c, gateway_conf.c and reload.c (not an API for adapters). */
#ifndef XG_GATEWAY_INT_H
#define XG_GATEWAY_INT_H

#include "gateway/gateway.h"

/** Parse and create adapter `node` (a map of the `adapters:` list) at table index `index`, or
 *  appended after the last one (index < 0, the start-up path, which also refuses a duplicate
 *  name). On error returns a negative errno with err set; the half-built adapter stays in
 *  gw->adapters[] (free it with xg_gw_adapter_free). */
int xg_gw_adapter_load(struct xg_gateway *gw, const struct xg_conf *node, int index,
                       struct xg_error *err);
/** Start one created adapter: its egress tick (sinks with rate_hz > 0), then ops->start. */
int xg_gw_adapter_start(struct xg_gateway *gw, struct xg_gw_adapter *ga, struct xg_error *err);
/** Re-arm a started sink's egress tick after a change of a->rate_hz (0 = send on change). */
int xg_gw_adapter_retick(struct xg_gateway *gw, struct xg_gw_adapter *ga);
/** Stop one adapter (tick and ops->stop; idempotent). */
void xg_gw_adapter_stop(struct xg_gateway *gw, struct xg_gw_adapter *ga);
/** Stop it, drop it from the table (its entities removed, other adapters told; its sink
 *  unregistered), destroy and free it, and empty its slot in gw->adapters[]. */
void xg_gw_adapter_free(struct xg_gateway *gw, struct xg_gw_adapter *ga);
/** A section of the configuration (the gateway map, an adapter, one of its keys) failed with e
 *  and code rc: keep the error in gw->errors (the first one of the file also in err), report
 *  the section's misspelt keys, and mark it read so that the unknown-key pass does not list the
 *  keys its reader did not reach. `first` is the first error's code so far (0: none); returns
 *  the first error's code after this one. */
int xg_gw_section_failed(struct xg_gateway *gw, struct xg_conf *at, const struct xg_error *e,
                         int rc, int first, struct xg_error *err);
/** Read the `gateway:` map of gw->root into gw->conf (gateway/gateway_conf.c): the defaults,
 *  then each part on its own (resolv_conf, id, admin, predict, entity, strict, log_level), so
 *  that one bad key does not hide the errors of the others. Errors go through
 *  xg_gw_section_failed; returns the first error's code (`first` if it was already set). */
int xg_gw_conf_load(struct xg_gateway *gw, int first, struct xg_error *err);
/** Mark sink `sink` due: the next egress pass drains it. */
void xg_gw_make_due(struct xg_gateway *gw, int sink);
struct evhttp_request;
/** POST /api/reload (gateway/reload.c): xg_gateway_reload, answered 200 with its JSON when it
 *  succeeded and 422 when the new configuration was refused or an adapter failed to start; 405
 *  for other methods, 403 for a cross-site browser request (an Origin header that is not this
 *  gateway's Host). `peer` names the client for the log. */
/** Does a POST come from this gateway's own pages? A browser sends Origin on a cross-site POST:
 *  true for none, or one naming the Host the request was sent to (gateway/reload.c). */
bool xg_admin_same_origin(struct evhttp_request *req);
void xg_admin_reload(struct xg_gateway *gw, struct evhttp_request *req, const char *peer);

#endif
