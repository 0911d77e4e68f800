/* Clock steps of an adapter's sources: counted and logged once per step (core/adapter/adapter.h).
 */
#include "core/adapter/adapter.h"

#include "core/net/net.h"
#include "core/clock/time_map.h"

void xg_adapter_clock_step(struct xg_adapter *a, const struct xg_time_map *m, const char *peer)
{
    a->clock_steps++;
    double s = (double)m->last_step_ns * 1e-9;
    XG_WARN_PEER(&a->lim_clock, a->name,
                 "%s%sclock stepped %s by %.3f s: re-synchronised (its times map with the new "
                 "offset from now on; counted in clock_steps)",
                 peer ? peer : "", peer ? ": " : "", s > 0 ? "back" : "forward", s > 0 ? s : -s);
}

int64_t xg_adapter_map_time(struct xg_adapter *a, struct xg_time_map *m, int64_t source_ns,
                            int64_t receive_ns, const char *peer)
{
    uint64_t before = m->steps;
    int64_t t = xg_time_map_update(m, source_ns, receive_ns);
    if (m->steps != before) xg_adapter_clock_step(a, m, peer);
    return t;
}
