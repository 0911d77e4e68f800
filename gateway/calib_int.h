/* Internals shared by gateway/calib.c (collection, solving, applying), gateway/calib_conf.c
 * (configuration), gateway/calib_state.c (state file) and gateway/calib_api.c (admin API,
 * metrics). */
#ifndef XG_GATEWAY_CALIB_INT_H
#define XG_GATEWAY_CALIB_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "core/calib/calib_solve.h"
#include "core/table/entity.h"
#include "core/util/log.h"
#include "gateway/calib.h"
#include "gateway/calib_worker.h"

/** States (docs/calibration.md "States"). */
enum xg_calib_state {
    XG_CALIB_COLLECTING = 0, /* no result in force yet (or a new one being collected) */
    XG_CALIB_SOLVED,         /* solved in this run, in force */
    XG_CALIB_APPLIED,        /* loaded from the state file, in force */
    XG_CALIB_DRIFTING,       /* continuous: new pairs disagree with the result in force */
};

const char *xg_calib_state_name(enum xg_calib_state s);

/** A ring of samples of one stream (newest overwrite oldest). */
struct xg_calib_ring {
    struct xg_calib_sample *s;
    size_t cap, head, n; /* head: next write */
};

struct xg_calib {
    /* configuration */
    char name[64];
    char reference[XG_NAME_MAX], target[XG_NAME_MAX], apply_to[64];
    bool continuous;
    double drift_m, drift_rad; /* continuous: residuals that mean drift */
    double max_offset_s;
    double collect_s; /* seconds of both streams before a solve */
    /* runtime */
    int apply_index;            /* apply_to's adapter index, -1 = not running */
    int ref_origin, tgt_origin; /* adapters by name prefix, -1 = any */
    uint32_t ref_id, tgt_id;    /* the entities last matched by name */
    struct xg_calib_ring ref, tgt;
    bool collecting; /* pairs are gathered for a solve */
    enum xg_calib_state state;
    bool have;                         /* a result in force (applied to apply_to's samples) */
    struct xg_calib_result res;        /* in force */
    double solved_unix;                /* wall-clock time of the result, s */
    struct xg_calib_result last;       /* the last attempt (progress, observability) */
    int last_rc;                       /* its return (0, -EAGAIN, -EDOM, ...), 1 = none yet */
    char last_why[240];                /* why the last attempt gave no result */
    double drift_res_m, drift_res_rad; /* continuous: the last check's residuals */
    int drift_strikes;
    int64_t last_check_ns;
    uint64_t solves, solve_failures, drift_checks, drifts;
    uint64_t pushed, tried_at; /* samples recorded; `pushed` at the last solve attempt */
    double solve_ms;           /* duration of the last solve (in the worker thread), ms */
    uint64_t job;              /* the solve in flight in the worker (its id), 0 = none */
    uint64_t gen;              /* bumped by begin/reset: a result of an older one is late */
    uint64_t discarded;        /* late results dropped (a reset or start while solving) */
    double apply_ms;           /* the last result's handling on the loop (state file incl.), ms */
};

struct xg_calib_set {
    struct xg_gateway *gw;
    struct xg_calib **items;
    int n;
    struct event *timer;
    struct xg_calib_worker
        *worker;           /* the solver thread (gateway/calib_worker.h), NULL = none yet */
    char state_file[1100]; /* "" = none (embedded configuration) */
    bool started;
    /* the state file's writes (in the worker; carried over at a reload) */
    char *latest;           /* the newest contents submitted while writes are pending, else NULL */
    unsigned writes_queued; /* writes submitted, outcome not yet delivered */
    uint64_t writes, write_failures; /* outcomes delivered: written, failed */
    double write_ms;                 /* wall time of the last write in the worker */
    struct xg_log_limit write_lim;   /* its failures' log lines */
};

/** Seconds between the oldest and the newest sample of a ring (0 with fewer than two). */
double xg_calib_ring_span(const struct xg_calib_ring *r);
/** Start collecting afresh (rings emptied; a result in force stays applied until the new one). */
void xg_calib_begin(struct xg_calib *c);
/** Forget the result: nothing applied, collecting again; the state file is rewritten. */
void xg_calib_reset(struct xg_calib_set *set, struct xg_calib *c);
/** The 1 s timer's work (also called by tests): a calibration that is collecting and has enough
 *  new samples gets its newest 20 s snapshotted and submitted to the worker (at most one solve in
 *  flight per calibration); a continuous one with a result checks drift (on the loop). */
void xg_calib_tick(struct xg_calib_set *set);
/** Find by name, or NULL. */
struct xg_calib *xg_calib_find(struct xg_calib_set *set, const char *name);

/** The index in gw->adapters of the adapter named `name`, or -1 (gateway/calib_conf.c). */
int xg_calib_adapter_index(const struct xg_gateway *gw, const char *name);
/** The index of the adapter named by entity name `entity`'s first component ("mocap/hmd" ->
 *  mocap), or -1 (gateway/calib_conf.c). */
int xg_calib_prefix_index(const struct xg_gateway *gw, const char *entity);
/** Free a set: its timer, its worker (joined: a solve being run finishes and the queued
 *  state-file writes are completed) and every calibration in it. Safe on NULL
 *  (gateway/calib_conf.c). */
void xg_calib_set_free(struct xg_calib_set *set);

/** The worker's outcome of a job of set `user` (a solve or a state-file write), on the loop
 *  (gateway/calib.c). */
void xg_calib_deliver(void *user, const struct xg_calib_job *j);
/** A state-file write's outcome (rc 0 or a negative errno) counted and logged
 *  (gateway/calib_state.c). */
void xg_calib_written(struct xg_calib_set *set, int rc, const char *path);
/** Serialise every result in force (on the loop) and queue the state file's write to the
 *  worker (a temporary file, fsync, rename), after the writes before it. Nothing without a state
 *  file (gateway/calib_state.c). */
void xg_calib_save(struct xg_calib_set *set);
/** Apply the results of the state file (or of the newest write still queued) to the set's
 *  calibrations that have none in force and match an entry's name, reference, target and
 *  apply_to; a missing file is not an error, a bad one or a bad entry is logged and ignored
 *  (gateway/calib_state.c). */
void xg_calib_load_state(struct xg_calib_set *set);

#endif
