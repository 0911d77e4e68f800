/* synth adapter, private: the state shared by synth_adapter.c (playback) and synth_conf.c
 * (configuration). */
#ifndef XG_SYNTH_PRIV_H
#define XG_SYNTH_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include "core/conf/conf.h"

struct xg_timer;

struct synth {
    double rate_hz;
    int64_t bodies;
    bool head, hands, send_velocity;
    double noise_m, noise_rad, dropout;
    uint64_t rng;
    int64_t t0_ns;
    struct xg_timer *timer; /* core/net/timer.h */
    int n;                  /* entities */
    int *which;             /* per entity: synth index */
    uint32_t *ids;          /* cached table ids (0 = unknown) */
    char (*names)[32];
    uint64_t ticks, dropouts;
};

/** Read and check a synth adapter's keys from `conf` into `s` (zeroed by the caller, which owns
 *  it and frees it through the adapter's destroy, also on error) and allocate its entity list
 *  (which, ids, names). Returns 0, -EINVAL (or another xg_conf error) with `err` naming the key,
 *  or -ENOMEM. */
int synth_read_conf(struct synth *s, const struct xg_conf *conf, struct xg_error *err);

#endif
