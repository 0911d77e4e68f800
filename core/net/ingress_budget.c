#include "core/net/ingress_budget.h"

#include "core/adapter/adapter.h"

void xg_ingress_begin(struct xg_ingress_budget *b)
{
    b->msgs = b->bytes = b->datagrams = 0;
    b->wakes++;
}

bool xg_ingress_more(struct xg_ingress_budget *b)
{
    if (!b->datagrams) return true;
    uint32_t mm = b->max_msgs ? b->max_msgs : XG_INGRESS_MSGS;
    uint32_t mb = b->max_bytes ? b->max_bytes : XG_INGRESS_BYTES;
    uint32_t md = b->max_datagrams ? b->max_datagrams : XG_INGRESS_DATAGRAMS;
    if (b->msgs < mm && b->bytes < mb && b->datagrams < md) return true;
    b->yields++;
    return false;
}

void xg_ingress_charge(struct xg_ingress_budget *b, size_t bytes, size_t msgs)
{
    if (!msgs) msgs = 1;
    b->datagrams++;
    b->bytes = bytes >= UINT32_MAX - b->bytes ? UINT32_MAX : b->bytes + (uint32_t)bytes;
    b->msgs = msgs >= UINT32_MAX - b->msgs ? UINT32_MAX : b->msgs + (uint32_t)msgs;
}

void xg_ingress_status(const struct xg_ingress_budget *b, struct xg_status *st)
{
    xg_status_counter(st, "rx_wakes", (double)b->wakes);
    xg_status_counter(st, "rx_yields", (double)b->yields);
}
