/* The source-clock map: a sender's timestamps mapped to the gateway clock (core/clock/clock.h), one
 * map per sender (a peer, an SSRC, a DDS writer). Pure computation: no sockets, no reactor, so
 * socket-free sessions use it. core/clock/time_map.c. */
#ifndef XG_TIME_MAP_H
#define XG_TIME_MAP_H

#include <stdbool.h>
#include <stdint.h>

/** Source clock → gateway clock: the offset is the minimum of (receive − source)
 *  over a sliding window, so network delay spikes do not move it.
 *
 *  Clock steps (issue 30): a source time more than XG_TIME_STEP_AHEAD_NS ahead of that estimate
 *  is an outlier mapped to its receive time (the sample is still applied), one more than
 *  XG_TIME_STEP_BEHIND_NS behind it that would not advance past the last mapped time (a sim-time
 *  reset, an NTP step, a restarted source, or just an old sample) is mapped into the past as
 *  before (dropped as not advancing; a sample that is only delayed still advances and maps as
 *  usual), until
 *  XG_TIME_STEP_CONFIRM samples in a row agree on the new clock (within ±100 ms; a step back also
 *  needs them to span XG_TIME_STEP_SPAN_NS of receive time, so a burst of delayed samples after a
 *  stall is not taken for one), which is then adopted at once: `steps` counts it and
 *  `last_step_ns` is its size (new offset − old offset: positive when the source went back). A
 *  single wild timestamp, even years off and even the very first one, therefore never moves the
 *  estimate for good, and a real step is applied again within a few samples (well within 1 s at
 *  10 Hz or more). Mapped times never go before the samples held meanwhile. */
#define XG_TIME_STEP_AHEAD_NS INT64_C(100000000)  /* 100 ms */
#define XG_TIME_STEP_BEHIND_NS INT64_C(250000000) /* 250 ms */
#define XG_TIME_STEP_SPAN_NS INT64_C(30000000)    /* 30 ms */
#define XG_TIME_STEP_CONFIRM 3
struct xg_time_map {
    int64_t window_ns;    /* default 10 s when 0 */
    int64_t offset_ns;    /* current estimate: gateway = source + offset */
    int64_t best_ns;      /* minimum in the current window */
    int64_t prev_best_ns; /* minimum of the previous window */
    int64_t window_start; /* receive time the window began */
    int64_t last_mapped;  /* last gateway time returned */
    int64_t cand_ns;      /* a source clock that stepped: its offset, until confirmed */
    int64_t cand_rx;      /* receive time of the candidate's first sample */
    int cand_n;           /* consecutive samples agreeing with cand_ns (0: none pending) */
    bool valid;
    uint64_t steps;       /* clock steps adopted (kept by xg_time_map_reset) */
    int64_t last_step_ns; /* size of the last step adopted (new offset − old offset) */
};
/** Map a source time to the gateway clock given the gateway receive time. Returns the mapped
 *  capture time, never later than receive_ns. */
int64_t xg_time_map_update(struct xg_time_map *m, int64_t source_ns, int64_t receive_ns);
/** Forget the peer (e.g. after a reconnect: its clock may have changed). */
void xg_time_map_reset(struct xg_time_map *m);

#endif
