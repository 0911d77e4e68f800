/* `vrpn-server` UDP+TCP call-back checks (wire rules §6.3), pure enough to unit-test
 * (tests/unit/test_vrpn_callback.c): which address a connection request names, and whether
 * calling it back would call the server itself. Nothing here resolves names or blocks. */
#ifndef XG_VRPN_CALLBACK_H
#define XG_VRPN_CALLBACK_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

/** The call-back target of a connection request host (letters, digits and dots, as
 *  vrpn_lob_decode() leaves it) and TCP port: *out = that IPv4 address and port. Numeric
 *  addresses only, in any inet_aton(3) spelling ("127.0.0.1", "127.1", "2130706433"), so that
 *  spelling variants compare equal once parsed; no name is ever resolved (that would block the
 *  reactor). Returns 0, or -EINVAL for a host that is not a numeric IPv4 address. */
int vrpn_callback_target(const char *host, uint16_t port, struct sockaddr_in *out);

/** True if `a` is an address of this host: 0.0.0.0, 127.0.0.0/8, or an address of one of its
 *  interfaces (getifaddrs(3), read at each call; no I/O beyond a netlink dump). */
bool vrpn_callback_addr_is_local(struct in_addr a);

/** True if calling `target` back would connect to the server listening on `listen` (its bound
 *  TCP address): the same port, and the same address or any local address
 *  (vrpn_callback_addr_is_local()). `listen` must be AF_INET; other families return false. */
bool vrpn_callback_is_self(const struct sockaddr_in *target, const struct sockaddr *listen);

#endif
