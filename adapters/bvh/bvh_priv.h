/* bvh adapter, private: the state shared by bvh_adapter.c (playback) and bvh_conf.c
 * (configuration). */
#ifndef XG_BVH_PRIV_H
#define XG_BVH_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include "adapters/bvh/bvh_fk.h"
#include "adapters/bvh/bvh_parser.h"
#include "core/conf/conf.h"
#include "core/table/entity.h"

struct xg_timer;

struct bvh_sel {
    int joint;                 /* index in the file */
    char source[BVH_NAME_MAX]; /* entity source name */
    enum xg_kind kind;
    uint32_t id;    /* cached table id, 0 = unknown */
    int parent_sel; /* index in sel[] of the nearest selected ancestor joint, -1 = none */
    uint32_t linked_id, linked_parent; /* the ids xg_table_set_parent() was last called with */
};

struct bvh_state {
    char path[1024];
    struct bvh_file f;
    struct bvh_sel *sel;
    int n_sel;
    double scale, rate;
    bool loop;
    bool central; /* velocities: central (else causal: poses only) */
    long start;   /* first frame of each loop */
    /* playback */
    struct xg_timer *timer; /* core/net/timer.h */
    int64_t t0_ns;          /* gateway time of frame `start` in the first loop */
    int64_t played;         /* frames since t0 of the last emitted frame (-1: none) */
    long frame;             /* last emitted frame index */
    uint64_t loops, skipped, emitted;
    bool done;
    struct bvh_fk_work work;
    struct xg_vec3 *pos, *vel, *angvel;
    struct xg_quat *rot;
};

/** Read and check a bvh adapter's keys from `conf` into `s` (zeroed by the caller, which owns
 *  it and frees it through the adapter's destroy, also on error): resolve and load `file`, read
 *  units/scale, rate, loop, velocities and start, select the `joints` (sel, n_sel) and link each
 *  to its nearest selected ancestor. `name` is the adapter's name for the "'file' is required"
 *  error. Returns 0, -EINVAL (or the parser's or another xg_conf error) with `err` naming the key
 *  or file, or -ENOMEM. */
int bvh_read_conf(struct bvh_state *s, const char *name, const struct xg_conf *conf,
                  struct xg_error *err);

#endif
