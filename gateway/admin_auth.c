/* Admin API access rules (see gateway/admin_auth.h). */
#include "gateway/admin_auth.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

bool xg_admin_token_equal(const char *got, size_t n, const char *want)
{
    size_t lw = strlen(want);
    unsigned char diff = (unsigned char)(n != lw);
    for (size_t i = 0; i < lw; i++)
        diff |= (unsigned char)(got[i < n ? i : 0] ^ want[i]);
    return n > 0 && diff == 0;
}

bool xg_admin_bearer_ok(const char *auth, const char *token)
{
    if (!auth || !token[0] || strncasecmp(auth, "Bearer", 6) || auth[6] != ' ') return false;
    const char *t = auth + 6;
    while (*t == ' ')
        t++;
    return xg_admin_token_equal(t, strlen(t), token);
}

static bool name_eq(const char *a, size_t n, const char *b)
{
    return strlen(b) == n && !strncasecmp(a, b, n);
}

bool xg_admin_host_ok(const char *host, const char *bound_host)
{
    if (!host) return true;
    char h[256];
    const char *port = NULL;
    size_t n;
    if (host[0] == '[') {
        const char *rb = strchr(host, ']');
        if (!rb) return false;
        n = (size_t)(rb - host - 1);
        if (rb[1] == ':')
            port = rb + 2;
        else if (rb[1])
            return false;
        if (n >= sizeof h) return false;
        memcpy(h, host + 1, n);
        h[n] = '\0';
        struct in6_addr a6;
        if (inet_pton(AF_INET6, h, &a6) != 1) return false;
    } else {
        const char *colon = strchr(host, ':');
        n = colon ? (size_t)(colon - host) : strlen(host);
        if (colon) port = colon + 1;
        if (!n || n >= sizeof h) return false;
        memcpy(h, host, n);
        h[n] = '\0';
    }
    if (port) {
        if (!*port || strspn(port, "0123456789") != strlen(port)) return false;
    }
    if (host[0] == '[') return true; /* an IPv6 literal */
    if (h[n - 1] == '.') h[--n] = '\0';
    struct in_addr a4;
    if (inet_pton(AF_INET, h, &a4) == 1) return true; /* an IPv4 literal: no DNS involved */
    if (name_eq(h, n, "localhost")) return true;
    if (n > 10 && !strcasecmp(h + n - 10, ".localhost")) return true;
    if (bound_host && name_eq(h, n, bound_host)) return true;
    char me[256];
    if (gethostname(me, sizeof me) == 0) {
        me[sizeof me - 1] = '\0';
        if (me[0] && name_eq(h, n, me)) return true;
        char *dot = strchr(me, '.');
        if (dot && dot > me) {
            *dot = '\0'; /* the short name */
            if (name_eq(h, n, me)) return true;
        }
    }
    return false;
}

const char *xg_admin_host_form(int n_host, const char *uri_host, const char *bound_host)
{
    if (n_host == 0) return "no Host header";
    if (n_host > 1) return "more than one Host header";
    if (uri_host && !xg_admin_host_ok(uri_host, bound_host))
        return "the request target names another host";
    return NULL;
}
