/* The static adapter registry (DESIGN §4: no dlopen). Add new adapter types here. */
#include <stdio.h>
#include <string.h>

#include "gateway/gateway.h"

extern const struct xg_adapter_ops xg_synth_ops;

static const struct xg_adapter_ops *const registry[] = {
    &xg_synth_ops,
};

const struct xg_adapter_ops *xg_registry_find(const char *type)
{
    for (size_t i = 0; i < sizeof registry / sizeof registry[0]; i++)
        if (type && strcmp(registry[i]->type, type) == 0) return registry[i];
    return NULL;
}

const char *xg_registry_types(void)
{
    static char buf[256];
    size_t o = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof registry / sizeof registry[0]; i++)
        o += (size_t)snprintf(buf + o, o < sizeof buf ? sizeof buf - o : 0, "%s%s", i ? ", " : "",
                              registry[i]->type);
    return buf;
}
