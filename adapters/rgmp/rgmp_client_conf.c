/* `rgmp-client` configuration (keys at the top of rgmp_client.c): reading, checking and the
 * defaults of every key, with the error texts `xrgate --check` prints. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "adapters/rgmp/rgmp_client_priv.h"
#include "core/adapter/adapter.h"
#include "core/net/net.h"

int rgmp_client_conf_read(struct rgmp_client *c, const struct xg_conf *conf, struct xg_error *err)
{
    const char *connect;
    int64_t maxdef, maxdata;
    int rc;
    if ((rc = xg_conf_string(conf, "connect", "127.0.0.1:12276", &connect, err)) ||
        (rc = xg_conf_bool(conf, "strict", false, &c->strict, err)) ||
        (rc = xg_conf_bool(conf, "compose", true, &c->compose, err)) ||
        (rc = xg_conf_int(conf, "max_devices", 64, 1, 4096, &c->max_devices, err)) ||
        (rc = xg_conf_int(conf, "max_definition_bytes", RGMP_MAX_DEFINITION_DEFAULT, 64, 64 << 20,
                          &maxdef, err)) ||
        (rc = xg_conf_int(conf, "max_data_bytes", RGMP_MAX_DATA_DEFAULT, 16, 16 << 20, &maxdata,
                          err)))
        return rc;
    char host[200];
    int port = 0;
    if (strlen(connect) >= sizeof c->connect ||
        xg_net_split_hostport(connect, host, sizeof host, &port, RGMP_DEFAULT_PORT) < 0 ||
        port <= 0 || port > 65535 || !host[0])
        return xg_conf_error(err, xg_conf_get(conf, "connect"), -EINVAL,
                             "connect: '%s' is not host:port", connect);
    snprintf(c->connect, sizeof c->connect, "%s", connect);
    snprintf(c->peer, sizeof c->peer, "%s", connect);
    snprintf(c->host, sizeof c->host, "%s", host);
    c->port = port;
    c->limits.max_definition_len = (uint32_t)maxdef;
    c->limits.max_data_len = (uint32_t)maxdata;
    c->explicit_frame = xg_conf_get(conf, "frame") != NULL;
    return 0;
}
