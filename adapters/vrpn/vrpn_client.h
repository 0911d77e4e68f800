/* `vrpn-client` adapter helpers that are pure functions (unit-tested in
 * tests/unit/test_vrpn_client.c). The adapter itself is `xg_vrpn_client_ops`
 * (core/adapter/adapter.h). */
#ifndef XG_VRPN_CLIENT_H
#define XG_VRPN_CLIENT_H

#include <stdbool.h>

#include "adapters/vrpn/vrpn_codec.h"
#include "core/util/xmath.h"

#define VRPN_DEFAULT_PORT 3883 /**< VRPN's well-known TCP/UDP port */

/** A parsed VRPN device name. */
struct vrpn_client_name {
    char device[VRPN_CNAME_MAX]; /**< the part before '@' (1..99 chars) */
    char host[200];              /**< host name or address, without brackets */
    int port;                    /**< 1..65535, VRPN_DEFAULT_PORT when absent */
    bool tcp_only;               /**< "tcp://" location: TCP-only mode; else UDP+TCP */
};

/** Parse "Device@host[:port]", "Device@x-vrpn://host[:port]" (UDP+TCP, mainline's default) or
 *  "Device@tcp://host[:port]" (TCP-only); "[v6]:port" hosts are accepted. Returns 0, -EINVAL
 *  (not that syntax, empty device or host, port out of range) or -EPROTONOSUPPORT (another
 *  location scheme such as file: or mpi:). */
int vrpn_client_parse_name(const char *text, struct vrpn_client_name *out);

/** World-frame angular velocity (rad/s, wire frame) of a VRPN Velocity/Acceleration rotation
 *  increment `inc` (x y z w, need not be unit) applied over `dt` seconds, q(t+dt) = inc ⊗ q(t)
 *  (wire rules §8.1, §10): log(inc)/dt along the shortest arc. Returns false (and zero) for
 *  dt <= 0, a zero or non-finite quaternion. */
bool vrpn_client_angular_velocity(struct xg_quat inc, double dt, struct xg_vec3 *out);

#endif
