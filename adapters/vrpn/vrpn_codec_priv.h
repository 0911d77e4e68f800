/* Shared by the VRPN codec's files only (vrpn_codec.c, vrpn_codec_body.c, vrpn_codec_ids.c). */
#ifndef XG_VRPN_CODEC_PRIV_H
#define XG_VRPN_CODEC_PRIV_H

#include "adapters/vrpn/vrpn_codec.h"
#include "core/util/error.h"
#include "core/util/wire.h"

/** The writer w ran out of room (or failed) while writing `what`: err names it, with the bytes
 *  used and the capacity. Returns w's error or -EMSGSIZE. */
int vrpn_wr_fail(struct xg_writer *w, struct xg_error *err, const char *what);
/** A sender or type name (`what`: "sender", "type") must be 1..VRPN_CNAME_MAX-1 bytes. 0 or
 *  -EINVAL with err set. */
int vrpn_check_name(const char *name, const char *what, struct xg_error *err);

#endif
