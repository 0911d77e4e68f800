#include "core/clock/clock.h"

#include <time.h>

static int64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * XG_NS_PER_S + ts.tv_nsec;
}

int64_t xg_clock_mono_ns(void)
{
    return clock_ns(CLOCK_MONOTONIC);
}
int64_t xg_clock_wall_ns(void)
{
    return clock_ns(CLOCK_REALTIME);
}

int64_t xg_clock_mono_to_wall_ns(int64_t mono_ns)
{
    return mono_ns + (xg_clock_wall_ns() - xg_clock_mono_ns());
}

int64_t xg_clock_wall_to_mono_ns(int64_t wall_ns)
{
    return wall_ns - (xg_clock_wall_ns() - xg_clock_mono_ns());
}

int64_t xg_ms16_to_ns(uint16_t ms16, int64_t ref_ns)
{
    uint16_t ref16 = xg_ns_to_ms16(ref_ns);
    int16_t diff = (int16_t)(uint16_t)(ms16 - ref16);
    int64_t ref_ms =
        ref_ns >= 0 ? ref_ns / XG_NS_PER_MS : -((-ref_ns + XG_NS_PER_MS - 1) / XG_NS_PER_MS);
    return (ref_ms + diff) * XG_NS_PER_MS;
}

struct timeval xg_ns_to_timeval(int64_t ns)
{
    int64_t us = xg_ns_to_us(ns);
    int64_t s = us >= 0 ? us / 1000000 : -((-us + 999999) / 1000000);
    struct timeval tv = {.tv_sec = (time_t)s, .tv_usec = (suseconds_t)(us - s * 1000000)};
    return tv;
}

int64_t xg_timeval_to_ns(struct timeval tv)
{
    return (int64_t)tv.tv_sec * XG_NS_PER_S + (int64_t)tv.tv_usec * XG_NS_PER_US;
}

int64_t xg_rtp90k_to_ns(uint32_t ts, int64_t ref_ns)
{
    uint32_t ref = xg_ns_to_rtp90k(ref_ns);
    int32_t diff = (int32_t)(ts - ref);
    /* ticks → ns: ×100000/9 */
    return ref_ns + (int64_t)diff * 100000 / 9;
}
