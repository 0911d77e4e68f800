/* The admin server's TLS front (admin.tls {cert, key}): evhttp does not speak TLS, so a listener
 * on the admin port terminates TLS (core/net/tls.h) and proxies the plaintext to evhttp over an
 * abstract Unix socket that only this process may use. The details are at the top of
 * gateway/admin_tls.c. */
#ifndef XG_ADMIN_TLS_H
#define XG_ADMIN_TLS_H

#include <stdbool.h>
#include <sys/socket.h>

#include "core/util/error.h"

struct evhttp_request;
struct xg_admin_tls;
struct xg_gateway;

/** Start the TLS front for gw (gw->http must exist): the TLS context from gw->conf.admin_tls_*,
 *  evhttp's internal Unix socket, and the TLS listener bound to `a` (al bytes; `listen` is the
 *  admin.listen text for messages). Sets gw->admin_tls (also on failure: xg_admin_tls_free it)
 *  and *fd to the listening socket. 0, or a negative errno with err saying why (-EADDRINUSE:
 *  the port is taken, xg_admin_listen_error). */
int xg_admin_tls_start(struct xg_gateway *gw, const struct sockaddr *a, socklen_t al,
                       const char *listen, int *fd, struct xg_error *err);

/** With the TLS front on: did req reach evhttp from this process (the front), not from another
 *  local process connecting to the internal socket directly (SO_PEERCRED)? */
bool xg_admin_tls_from_front(struct evhttp_request *req);

/** Close every TLS connection and the listener, and free the front. Safe on NULL. */
void xg_admin_tls_free(struct xg_admin_tls *t);

/** The admin listener on `l` (admin.listen text) could not be had, with errno e (0: taken):
 *  sets err (naming the address, and what to do about a port in use) and returns -EADDRINUSE.
 *  gateway/admin.c. */
int xg_admin_listen_error(const char *l, int e, struct xg_error *err);

#endif
