/* Admin API access rules (docs/admin-api.md, SECURITY.md): the bearer token and, when no token
 * is configured, the Host check against DNS rebinding. Pure functions (no I/O but
 * gethostname()). */
#ifndef XG_ADMIN_AUTH_H
#define XG_ADMIN_AUTH_H

#include <stdbool.h>
#include <stddef.h>

/** True if `auth` (an Authorization header value; NULL = absent) is `Bearer <token>`: the
 *  scheme is matched case-insensitively (RFC 7235 §2.1), followed by one or more spaces, then
 *  exactly the token (constant-time comparison of the bytes). `token` must not be empty. */
bool xg_admin_bearer_ok(const char *auth, const char *token);

/** True if the `n` bytes at `got` (which may hold NULs) are exactly the NUL-terminated `want`;
 *  constant time in the length of `want`. */
bool xg_admin_token_equal(const char *got, size_t n, const char *want);

/** DNS-rebinding check for a gateway without a token: true if the Host header value `host`
 *  (NULL = absent, allowed: browsers always send one) names this gateway: an IPv4 or [IPv6]
 *  literal, `localhost` or a name under `.localhost`, `bound_host` (the admin listen host), or
 *  this machine's host name (gethostname(), also without its domain); case-insensitive, a
 *  trailing dot and a `:port` (digits) are allowed. Anything else (a DNS name a page could have
 *  rebound to 127.0.0.1) is false. */
bool xg_admin_host_ok(const char *host, const char *bound_host);

/** The request-target and Host rules of RFC 9112 §3.2 (§3.2.2: absolute-form), checked, like
 *  the Host check above, when no token is configured: NULL when the request may go on, else
 *  the reason it is answered 400: "no Host header" (n_host 0), "more than one Host header"
 *  (n_host > 1), "the request target names another host" (`uri_host`, the host of an
 *  absolute-form target such as http://evil.example/api, fails xg_admin_host_ok; NULL for the
 *  usual origin-form "/api"). */
const char *xg_admin_host_form(int n_host, const char *uri_host, const char *bound_host);

#endif
