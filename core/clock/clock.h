/* Clocks and protocol time conversions.
 *
 * The gateway clock is CLOCK_MONOTONIC in nanoseconds (int64). Wall-clock time is CLOCK_REALTIME in
 * nanoseconds since the Unix epoch. Protocol times: VRPN struct timeval (wall clock), RGMP µs,
 * game-state Time1 (ms mod 65536), the RTP 90 kHz media clock. */
#ifndef XG_CLOCK_H
#define XG_CLOCK_H

#include <stdint.h>
#include <sys/time.h>

#define XG_NS_PER_S INT64_C(1000000000)
#define XG_NS_PER_MS INT64_C(1000000)
#define XG_NS_PER_US INT64_C(1000)

/** Gateway monotonic clock, ns. */
int64_t xg_clock_mono_ns(void);
/** Wall clock, ns since 1970-01-01 UTC. */
int64_t xg_clock_wall_ns(void);
/** Wall-clock ns for a monotonic instant (using the current offset between the two clocks). */
int64_t xg_clock_mono_to_wall_ns(int64_t mono_ns);
/** Monotonic ns for a wall-clock instant. */
int64_t xg_clock_wall_to_mono_ns(int64_t wall_ns);

/** ns → µs (floor). */
static inline int64_t xg_ns_to_us(int64_t ns)
{
    return ns >= 0 ? ns / 1000 : -((-ns + 999) / 1000);
}
/** ns → game-state Time1: milliseconds modulo 65536. */
static inline uint16_t xg_ns_to_ms16(int64_t ns)
{
    int64_t ms = ns >= 0 ? ns / XG_NS_PER_MS : -((-ns + XG_NS_PER_MS - 1) / XG_NS_PER_MS);
    return (uint16_t)(uint64_t)ms;
}
/** Unwrap a 16-bit ms timestamp to the ns instant nearest to `ref_ns` (within ±32.768 s). */
int64_t xg_ms16_to_ns(uint16_t ms16, int64_t ref_ns);
/** ns → struct timeval (tv_usec in [0, 1e6)). */
struct timeval xg_ns_to_timeval(int64_t ns);
/** struct timeval → ns. */
int64_t xg_timeval_to_ns(struct timeval tv);
/** ns → RTP 90 kHz ticks modulo 2^32. */
static inline uint32_t xg_ns_to_rtp90k(int64_t ns)
{
    return (uint32_t)(uint64_t)((ns / 1000) * 9 / 100);
}
/** Unwrap a 90 kHz RTP timestamp to the ns instant nearest to `ref_ns`. */
int64_t xg_rtp90k_to_ns(uint32_t ts, int64_t ref_ns);

#endif
