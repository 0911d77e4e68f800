/* TLS over bufferevents with mbedtls 2.28.
 *
 * libevent 2.1 has no mbedtls binding, so xrgate wraps a connected (or connecting) socket
 * bufferevent in a *filtering* bufferevent (bufferevent_filter_new) whose filters drive an
 * mbedtls_ssl_context: ciphertext is read from / written to the underlying bufferevent's
 * buffers through a custom BIO, plaintext appears in the filtering bufferevent. Callers use
 * the returned bufferevent exactly like a plain one (bufferevent_write, read callbacks,
 * watermarks); data written before the handshake completes is held and sent after it.
 *
 * Roles: server (certificate + key required; `ca` set → client certificates are requested and
 * verified when verify is on) and client (`ca` required when verify is on; the server
 * certificate is checked against `server_name` (CN / DNS SAN) when given).
 *
 * Errors: a handshake or record failure makes the filtering bufferevent report
 * BEV_EVENT_ERROR; xg_tls_error() then gives one line naming the peer and mbedtls's error
 * string (and the X.509 verification flags, e.g. "The certificate is not correctly signed by
 * the trusted CA"). Single-threaded (the reactor thread). */
#ifndef XG_TLS_H
#define XG_TLS_H

#include <stdbool.h>

#include "core/util/error.h"

struct bufferevent;
struct event_base;

/** Configuration of one TLS endpoint. Paths are PEM (or DER) files; strings are borrowed
 *  for the duration of xg_tls_ctx_new() only. */
struct xg_tls_conf {
    bool server;      /* server role (accepting side) */
    const char *cert; /* own certificate (chain); required for servers, optional for clients */
    const char *key;  /* private key matching cert (unencrypted) */
    const char *ca;   /* trusted CA certificate(s) used to verify the peer */
    bool verify;      /* verify the peer (default true in configs); off = no check at all */
};

/** Shared state of one endpoint configuration (certificates, RNG, mbedtls_ssl_config). */
struct xg_tls_ctx;

/** Load certificates and keys and build the context. -EINVAL / -ENOENT with a message naming
 *  the file and mbedtls's reason; NULL on failure. Free with xg_tls_ctx_free(). */
struct xg_tls_ctx *xg_tls_ctx_new(const struct xg_tls_conf *conf, struct xg_error *err);
/** Free a context (NULL allowed). Every bufferevent made from it must be freed first. */
void xg_tls_ctx_free(struct xg_tls_ctx *ctx);

/** One TLS session (owned by its filtering bufferevent; freed with it). */
struct xg_tls_session;

/** Wrap `under` (a socket bufferevent, connected or connecting; ownership passes to the
 *  result, which frees it) in a TLS filtering bufferevent. `server_name` (clients only, may
 *  be NULL) is checked against the server certificate and sent as SNI; `peer` names the
 *  remote end in error messages (copied). *sess (optional) receives the session for
 *  xg_tls_error(). A client starts its handshake at once. Returns NULL on ENOMEM (and then
 *  frees `under`). */
struct bufferevent *xg_tls_wrap(struct xg_tls_ctx *ctx, struct bufferevent *under,
                                const char *server_name, const char *peer,
                                struct xg_tls_session **sess);

/** The last error of a session ("" if none): "TLS with 127.0.0.1:7000: handshake failed:
 *  X509 - Certificate verification failed (...)". Valid until the bufferevent is freed. */
const char *xg_tls_error(const struct xg_tls_session *sess);
/** True once the handshake has completed. */
bool xg_tls_established(const struct xg_tls_session *sess);
/** Queue a close_notify alert (established sessions only; no-op otherwise) into the underlying
 *  output, for a clean end of the TLS stream before the caller frees the bufferevent once
 *  bufferevent_get_underlying()'s output has drained. */
void xg_tls_close_notify(struct xg_tls_session *sess);

#endif
