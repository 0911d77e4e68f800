/* `vrpn-server` call-back checks: numeric targets only, no self-calls (vrpn_callback.h). */
#include "adapters/vrpn/vrpn_callback.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <string.h>

int vrpn_callback_target(const char *host, uint16_t port, struct sockaddr_in *out)
{
    memset(out, 0, sizeof *out);
    /* inet_aton accepts only numbers and dots (plus 0x prefixes), never a name */
    if (!host || !host[0] || inet_aton(host, &out->sin_addr) == 0) return -EINVAL;
    out->sin_family = AF_INET;
    out->sin_port = htons(port);
    return 0;
}

bool vrpn_callback_addr_is_local(struct in_addr a)
{
    uint32_t h = ntohl(a.s_addr);
    if (h == INADDR_ANY || (h >> 24) == 127) return true;
    struct ifaddrs *ifs = NULL;
    if (getifaddrs(&ifs) < 0) return false;
    bool local = false;
    for (const struct ifaddrs *i = ifs; i && !local; i = i->ifa_next)
        local = i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
                ((const struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr == a.s_addr;
    freeifaddrs(ifs);
    return local;
}

bool vrpn_callback_is_self(const struct sockaddr_in *target, const struct sockaddr *listen)
{
    if (!listen || listen->sa_family != AF_INET) return false;
    const struct sockaddr_in *l = (const struct sockaddr_in *)listen;
    if (target->sin_port != l->sin_port) return false;
    return target->sin_addr.s_addr == l->sin_addr.s_addr ||
           vrpn_callback_addr_is_local(target->sin_addr);
}
