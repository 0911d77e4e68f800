/* Space calibrations (docs/calibration.md): the `calibrations:` list of the configuration, the
 * pose pairs collected from the table's ingest hook, the solver run (core/calib/calib_solve.h), the
 * result applied to every sample of `apply_to`'s entities, the state file next to the
 * configuration, and the admin API (GET /api/calibrations, POST /api/calibrations/NAME/start and
 * /reset) and metrics.
 *
 * Life cycle: xg_calib_load() reads and checks the list (xrgate --check); xg_calib_start()
 * (from xg_gateway_start) loads the state file, installs the ingest hook and the 1 s solve
 * timer; xg_calib_reload() hands the running state over to a reloaded list; xg_calib_free(). */
#ifndef XG_GATEWAY_CALIB_H
#define XG_GATEWAY_CALIB_H

#include <stdbool.h>

#include "core/conf/conf.h"
#include "core/util/error.h"

struct xg_gateway;
struct xg_calib_set;
struct evhttp_request;
struct evbuffer;

/** Parse one item of the `calibrations:` list (a map) and add it to gw->calib, checking every key
 *  against the adapters gw has loaded and the items before it: errors are
 *  `file:line:column: message` (an unknown adapter in apply_to, a duplicate name, a bad mode, an
 *  unknown key...). Returns 0 or a negative errno. */
int xg_calib_load(struct xg_gateway *gw, const struct xg_conf *node, struct xg_error *err);
/** Start: the state file (`<config>.calibration.json`), the ingest hook, the timer. 0 or
 *  -ENOMEM. A gateway without calibrations does nothing here and installs no hook. */
int xg_calib_start(struct xg_gateway *gw);
/** After a configuration reload (gateway/reload.c): calibrations whose entry is unchanged keep
 *  their state and result, changed and new ones start again (from the state file when it has a
 *  result for the same entry), removed ones stop applying. `cand` is the scratch gateway the new
 *  file was loaded into (its set is taken over). Also re-resolves adapter indices. */
void xg_calib_reload(struct xg_gateway *gw, struct xg_gateway *cand);
/** Free gw->calib (removes the hook and the timer). */
void xg_calib_free(struct xg_gateway *gw);

/** /api/calibrations[/NAME/start|reset] (the path after "/api/calibrations"): GET the list,
 *  POST start or reset one. `peer` names the client for the log. */
void xg_calib_http(struct xg_gateway *gw, struct evhttp_request *req, const char *rest,
                   const char *peer);
/** The calibrations as the JSON text of GET /api/calibrations (malloc'd; NULL on ENOMEM). */
char *xg_calib_json(struct xg_gateway *gw);
/** Append the xrgate_calibration_* families to a /metrics body (nothing without calibrations). */
void xg_calib_metrics(struct xg_gateway *gw, struct evbuffer *out);

#endif
