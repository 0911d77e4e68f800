/* The entity table: every tracked thing, its recent samples, and prediction (docs/prediction.md).
 *
 * Frames and units: internal frame (right-handed, Y up), metres, seconds, radians; quaternions
 * Hamilton x y z w, body→world. Times are gateway-monotonic ns (core/clock/clock.h).
 *
 * Identity: a stable gateway-wide uint32 id (never reused) and a unique name, by default
 * "<adapter>/<source>" then renamed by the gateway's naming rules; a kind; the origin adapter.
 *
 * Ingress: adapters call xg_table_update() (or xg_table_push() with a cached id). Samples whose
 * capture time does not advance are dropped and counted. Sources without velocities get them
 * estimated causally from the history of the last 100 ms of capture times
 * (core/predict/predict_est.h: velocity at the newest sample; angular velocity damped toward
 * holding when unstable).
 *
 * Egress: every sink (an adapter that republishes) has a dirty set; an update marks the entity
 * dirty for every sink but its origin (split horizon) that accepts it; the sink drains the set
 * on its own tick and reads the pose predicted to the send time. Nothing is queued per update.
 *
 * Single-threaded: call from the reactor thread only. */
#ifndef XG_ENTITY_H
#define XG_ENTITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/predict/predict_rot.h"
#include "core/util/xmath.h"

#define XG_MAX_ADAPTERS 64 /* adapters (origins and sinks) per gateway */
#define XG_HISTORY 24      /* samples kept per entity (100 ms at 240 Hz) */
#define XG_NAME_MAX 128    /* entity names, incl. NUL */
#define XG_MAX_BUTTONS 256
#define XG_MAX_ANALOGS 128

/* Ingress bounds (issue 22 item 6): a sample with a flagged field outside them, or not finite, is
 * not a pose. Checked per component; prediction keeps its output inside them too. */
#define XG_POSITION_MAX 1e6   /* |position| per axis, m */
#define XG_VELOCITY_MAX 1e4   /* |velocity| per axis, m/s */
#define XG_ANGVEL_MAX 1e4     /* |angular velocity| per axis, rad/s */
#define XG_SCALE_MAX 1e4      /* |scale| per axis (fits a binary16 egress field) */
#define XG_QUAT_NORM_MIN 1e-6 /* quaternion norm, before normalisation */
#define XG_QUAT_NORM_MAX 1e6
#define XG_ANALOG_MAX 3.4e38 /* |analog value| (fits a float32 egress field) */

struct xg_adapter;

enum xg_kind {
    XG_KIND_RIGID_BODY = 0,
    XG_KIND_HEAD,
    XG_KIND_LEFT_HAND,
    XG_KIND_RIGHT_HAND,
    XG_KIND_CONTROLLER,
    XG_KIND_JOINT,
    XG_KIND_OBJECT,
    XG_KIND_COUNT
};

/** "rigid_body", "head", "left_hand", "right_hand", "controller", "joint", "object". */
const char *xg_kind_name(enum xg_kind k);
/** Parse a kind name; -EINVAL if unknown. */
int xg_kind_parse(const char *s, enum xg_kind *out);

/** How a predicted pose was obtained. */
enum xg_quality {
    XG_QUALITY_EXACT = 0,    /* the query time is a sample's capture time */
    XG_QUALITY_INTERPOLATED, /* between two samples of the history */
    XG_QUALITY_PREDICTED,    /* extrapolated from the newest sample, within the horizon */
    XG_QUALITY_HELD,         /* past the horizon (pose held at the horizon), or no motion known */
    XG_QUALITY_STALE,        /* no sample for entity.stale_ms */
    XG_QUALITY_DAMPED,       /* extrapolated like PREDICTED, but the rotation's estimate was
                                unstable (core/predict/predict_est.h): it was extrapolated over a shorter
                                horizon, i.e. blended toward holding (issue 23) */
    XG_QUALITY_MATCHED,      /* extrapolated like PREDICTED, with the rotation's rate blended with
                                the rate after the matching earlier moment of the skeleton's
                                motion memory (core/predict/motion_memory.h, issue 23) */
    XG_QUALITY_COUNT
};

/** "EXACT", "INTERPOLATED", "PREDICTED", "HELD", "STALE", "DAMPED", "MATCHED". */
const char *xg_quality_name(enum xg_quality q);

/* xg_sample.flags: which fields are set */
#define XG_SAMPLE_POSITION (1u << 0)
#define XG_SAMPLE_ORIENTATION (1u << 1)
#define XG_SAMPLE_VELOCITY (1u << 2)
#define XG_SAMPLE_ANGULAR_VELOCITY (1u << 3)
#define XG_SAMPLE_SCALE (1u << 4)
#define XG_SAMPLE_INACTIVE (1u << 5) /* source reports the entity as not tracked */
#define XG_SAMPLE_POSE (XG_SAMPLE_POSITION | XG_SAMPLE_ORIENTATION)

/** What an adapter reports. Fields not flagged are ignored: a sample with only position keeps the
 *  last orientation; a sample with only velocities updates the reported velocities. */
struct xg_sample {
    int64_t capture_ns;              /* source time mapped to the gateway clock, ns */
    int64_t receive_ns;              /* gateway clock at receipt, ns (0: use capture_ns) */
    uint32_t flags;                  /* XG_SAMPLE_* */
    struct xg_vec3 position;         /* m */
    struct xg_quat orientation;      /* unit, x y z w */
    struct xg_vec3 velocity;         /* m/s */
    struct xg_vec3 angular_velocity; /* rad/s, world frame */
    struct xg_vec3 scale;            /* unitless */
};

/** A pose at a requested time (output of prediction). */
struct xg_pose {
    int64_t t_ns;                    /* the time asked for */
    int64_t sample_ns;               /* capture time of the newest sample */
    struct xg_vec3 position;         /* m */
    struct xg_quat orientation;      /* unit, x y z w */
    struct xg_vec3 velocity;         /* m/s (reported or estimated; zero if unknown) */
    struct xg_vec3 angular_velocity; /* rad/s, world frame */
    struct xg_vec3 scale;
    enum xg_quality quality;
    bool active;
    bool has_velocity, has_angular_velocity; /* reported or estimated, not just zero */
};

/** How an adapter names an entity it reports. */
struct xg_entity_key {
    const char *source;         /* name inside the adapter, e.g. "Tracker0/0" */
    enum xg_kind kind;          /* suggested kind (naming rules may change it) */
    const char *origin_gateway; /* for federated entities (LESS): the gateway that first saw it;
                                   NULL = this gateway */
    bool has_sensor;            /* the source numbers it: `sensor` is that number (VRPN tracker
                                   sensor), kept so that a relay can keep it */
    int32_t sensor;             /* >= 0 when has_sensor */
    bool controls_only;         /* the source has buttons/analogs but no pose for it (a VRPN
                                   button/analog/dial device): the pose is a placeholder */
};

/** One history entry: a pose sample and the velocities in force while it was the newest
 *  (reported, or estimated from the history up to it), for queries of past times. */
struct xg_hist {
    int64_t t_ns;
    struct xg_vec3 p;
    struct xg_quat q;
    float v[3], w[3]; /* m/s, rad/s (world frame); single precision (issue 19 item 5): only
                         past-time queries read them */
};

/** Running state of the incremental motion estimator (core/predict/predict_est.h,
 * xg_motion_update(); issue 19 item 2). Zero-initialised = empty. Sums over the samples of the
 * window, centred on an anchor sample (times in s and positions in m relative to it, rotation
 * vectors R = log(q ⊗ q_anchor*)); the rotation sums carry the weights exp(age / 10 ms) relative to
 * the newest sample and are rescaled on every push. */
struct xg_motion_acc {
    int64_t anchor_ns, newest_ns; /* capture times; newest_ns 0 = empty */
    struct xg_vec3 anchor_p;
    struct xg_quat anchor_q;
    double r0[3];              /* R of the newest sample */
    unsigned m, pushes;        /* samples in the window; pushes since the last exact rebuild */
    int64_t rescale_dt_ns[2];  /* the last two intervals between newest samples, ns, and */
    double rescale[2];         /* their weight factors exp(-interval / 10 ms) (a fixed rate
                                  rounded to whole ns alternates two intervals) */
    int64_t drop_age_ns;       /* the age of the last sample that left the window, ns, and */
    double drop_w;             /* its weight exp(-age / 10 ms) (a fixed rate repeats it) */
    int64_t newest_q_ns;       /* the newest sample's capture time and orientation as decoded */
    struct xg_quat newest_q;   /* (the next sample's previous one: not decoded again) */
    double s[5], y[3][3];      /* Σ τ^k (k = 0..4); Σ τ^k P (k = 0..2) per axis */
    double a[3], b0[3], b1[3]; /* weighted: Σ w τ^k; Σ w R; Σ w τ R */
};

/** An entity: opaque outside the table (core/table/entity_priv.h); read it through the
 * xg_entity_*() accessors below. */
struct xg_entity;

/* Accessors (core/table/entity_view.c). `e` is an entity from the table (a visitor's or listener's
 * argument, xg_table_get(), xg_table_find()); strings are borrowed and valid as long as e. */
/** Stable gateway-wide id, > 0, never reused. */
uint32_t xg_entity_id(const struct xg_entity *e);
/** Unique final name (after the naming rules). Never NULL. */
const char *xg_entity_name(const struct xg_entity *e);
/** The origin adapter's name for it (xg_entity_key.source). Never NULL. */
const char *xg_entity_source(const struct xg_entity *e);
/** The gateway that first saw it (federation, LESS); "" = this gateway. */
const char *xg_entity_origin_gateway(const struct xg_entity *e);
/** The source's sensor number (xg_entity_key.sensor), -1 = none. */
int32_t xg_entity_source_sensor(const struct xg_entity *e);
/** xg_entity_key.controls_only: buttons/analogs only, the pose is a placeholder. */
bool xg_entity_controls_only(const struct xg_entity *e);
enum xg_kind xg_entity_kind(const struct xg_entity *e);
/** Index of the origin adapter. */
int xg_entity_origin(const struct xg_entity *e);
/** Id of the parent entity in the source's hierarchy (xg_table_set_parent()), 0 = none. */
uint32_t xg_entity_parent(const struct xg_entity *e);
/** Does sink `sink` (adapter index) republish e (split horizon and the sink's filter)? */
bool xg_entity_for_sink(const struct xg_entity *e, int sink);
/** Button states (0/1) of e: returns how many (highest index set + 1, 0 = none) and, if states
 *  is not NULL, points *states at them (borrowed; NULL when none). */
int xg_entity_buttons(const struct xg_entity *e, const uint8_t **states);
/** Analog values of e, like xg_entity_buttons(). */
int xg_entity_analogs(const struct xg_entity *e, const double **values);

/** Bookkeeping of one entity, for the admin API and the inspector. */
struct xg_entity_info {
    uint64_t samples;           /* pose/velocity samples applied */
    uint64_t dropped_backwards; /* samples whose capture time did not advance */
    double interval_s;          /* EWMA of the spacing of capture times, s (0 = unknown) */
    uint32_t last_flags;        /* XG_SAMPLE_* fields ever set (and INACTIVE of the newest) */
    int64_t created_ns, last_receive_ns;                 /* gateway clock */
    bool has_velocity, has_angular_velocity;             /* used for prediction */
    bool velocity_estimated, angular_velocity_estimated; /* from the history, not reported */
    bool rot_damped;  /* the estimated angular velocity was damped (core/predict/predict_est.h) */
    unsigned history; /* samples in the pose history */
};
/** Fill *out with e's bookkeeping. */
void xg_entity_info(const struct xg_entity *e, struct xg_entity_info *out);

struct xg_table;

/** Table configuration (gateway.predict / gateway.entity). */
struct xg_table_params {
    int64_t max_horizon_ns;     /* default 100 ms */
    int64_t stale_ns;           /* default 500 ms */
    int64_t expire_ns;          /* default 10 s */
    int64_t velocity_window_ns; /* default 100 ms */
    int64_t motion_memory_ns;   /* a skeleton's motion memory span (core/predict/motion_memory.h):
                                   default 2 s, 0 = none */
    uint32_t max_entities;      /* default 65536; creation beyond it fails with -ENOSPC */
};

/** Defaults as documented in docs/configuration.md (`gateway.entity`, `gateway.predict`). */
void xg_table_params_default(struct xg_table_params *p);

/** Naming rule hook: given origin adapter index, the default name "<adapter>/<source>" and the
 *  suggested kind, write the final name (NUL-terminated, < size) and kind. */
typedef void (*xg_namer_fn)(void *user, int origin, const char *default_name, char *name,
                            size_t size, enum xg_kind *kind);
/** Sink filter hook: does sink `sink` (adapter index) republish entity e? */
typedef bool (*xg_accept_fn)(void *user, int sink, const struct xg_entity *e);
/** Called when a sink's dirty set goes from empty to non-empty (for send-on-change sinks). */
typedef void (*xg_wake_fn)(void *user, int sink);
/** Lifecycle listener: entity added (after its first sample) or removed (expired/removed). */
typedef void (*xg_entity_event_fn)(void *user, const struct xg_entity *e, bool added);
/** Visitor for drains and iteration. Return non-zero to stop. */
typedef int (*xg_visit_fn)(void *user, const struct xg_entity *e, const struct xg_pose *pose);

/** New table with params (NULL = defaults). Returns NULL on ENOMEM. */
struct xg_table *xg_table_new(const struct xg_table_params *params);
void xg_table_free(struct xg_table *t);
const struct xg_table_params *xg_table_params(const struct xg_table *t);

/** Names of adapter indices (for "<adapter>/<source>" names); the string is borrowed. */
int xg_table_set_adapter_name(struct xg_table *t, int index, const char *name);
void xg_table_set_namer(struct xg_table *t, xg_namer_fn fn, void *user);
/** Name of adapter `index` as set by xg_table_set_adapter_name(), or "" (borrowed). */
const char *xg_table_adapter_name(const struct xg_table *t, int index);
/** Register adapter `index` as a sink; `accept` may be NULL (all), `wake` may be NULL. */
int xg_table_add_sink(struct xg_table *t, int index, xg_accept_fn accept, xg_wake_fn wake,
                      void *user);
/** Called for a non-zero per-sink entity slot (xg_table_sink_slot()) when its entity leaves the
 *  table (after the lifecycle listeners ran) or the sink clears its slots: release what `value`
 *  refers to. The table zeroes the slot afterwards. */
typedef void (*xg_sink_slot_free_fn)(void *user, const struct xg_entity *e, uint64_t value);
/** Release callback of sink `sink`'s slots (fn may be NULL: nothing to release). -EINVAL if
 *  `sink` is out of range. */
int xg_table_set_sink_slot_free(struct xg_table *t, int sink, xg_sink_slot_free_fn fn, void *user);
/** The per-entity slot that sink `sink` owns for entity e: a 64-bit value for its egress caches
 *  (an index + 1, or a pointer), 0 = nothing cached, 0 for a new entity. The pointer is valid
 *  until the next xg_table_sink_slot() call or table call that may create or remove entities; the
 * table zeroes it when e leaves (after calling the sink's release callback) so that a slot never
 * outlives its entity. NULL if `sink` is out of range or on ENOMEM (the sink then works without a
 * cache). */
uint64_t *xg_table_sink_slot(struct xg_table *t, int sink, const struct xg_entity *e);
/** Release (callback) and zero every non-zero slot of sink `sink`: call from the sink's stop or
 *  destroy (xg_table_free() calls no callbacks; adapters are destroyed before the table). */
void xg_table_sink_slots_clear(struct xg_table *t, int sink);
/** Merged newest sample of e: every field valid per its flags (a field never reported holds its
 *  default: identity orientation, unit scale, zero). Borrowed, valid as long as e. */
const struct xg_sample *xg_entity_last(const struct xg_entity *e);
/** Per-sample hook of a sink (a recorder, which must see every sample, not the newest at its
 *  tick): called after a sample (or a button / analog change) of entity e is applied, with e's
 *  merged newest sample (xg_entity_last()), for each sink that republishes e (split horizon and
 *  the sink's filter, as its dirty set). Must not call back into the table's update functions. */
typedef void (*xg_sample_tap_fn)(void *user, const struct xg_entity *e, const struct xg_sample *s);
/** Set (fn non-NULL) or clear sink `sink`'s sample tap. -EINVAL if `sink` is out of range or not a
 *  sink (xg_table_add_sink()). */
int xg_table_set_sample_tap(struct xg_table *t, int sink, xg_sample_tap_fn fn, void *user);
/** Add a lifecycle listener (up to 8). */
int xg_table_add_listener(struct xg_table *t, xg_entity_event_fn fn, void *user);

/** Find or create the entity (origin, key->source) and apply sample s. On success returns 0 and
 *  stores the id in *id (may be NULL). Errors: -EINVAL (bad key, origin out of range, or a value
 *  that is not a pose: see xg_sample_check(); counted in stats.rejected with one rate-limited
 *  warning per origin naming adapter, entity, field and value), -ENOSPC (max_entities: counted in
 *  stats.refused, rate-limited warning per origin), -ENOMEM, -EAGAIN (dropped: capture time did
 *  not advance). Quaternions are normalised. key->source must be shorter than XG_NAME_MAX: build
 *  it from peer strings with xg_name_fitf() (core/table/names.h) so that distinct names stay
 * distinct. */
int xg_table_update(struct xg_table *t, const struct xg_adapter *a, const struct xg_entity_key *key,
                    const struct xg_sample *s, uint32_t *id);
/** Same with an origin index instead of an adapter. */
int xg_table_update_origin(struct xg_table *t, int origin, const struct xg_entity_key *key,
                           const struct xg_sample *s, uint32_t *id);
/** Ingest hook (the space calibration, gateway/calib.c, docs/calibration.md): called for every
 *  sample of an origin whose bit is set in `origins` (bit i = adapter index i), after the sample
 *  passed xg_sample_check() and its entity was found or created, before the table applies it.
 *  It may observe the sample and rewrite the copy `s` it is given (positions, orientations,
 *  velocities in the internal frame; the capture time); what it writes must stay a pose (finite,
 *  within the XG_*_MAX bounds). Samples of other origins cost one bit test. fn NULL or origins 0
 *  removes it. */
typedef void (*xg_ingest_fn)(void *user, const struct xg_entity *e, struct xg_sample *s);
void xg_table_set_ingest_hook(struct xg_table *t, uint64_t origins, xg_ingest_fn fn, void *user);
/** Apply a sample to an existing entity. -ENOENT if the id is unknown (expired). */
int xg_table_push(struct xg_table *t, uint32_t id, const struct xg_sample *s);
/** Set button `index` (0..255) / analog `index` (0..127) of an entity and mark it dirty. An
 *  analog value that is not finite or beyond ±XG_ANALOG_MAX is -EINVAL, counted as rejected. */
int xg_table_set_button(struct xg_table *t, uint32_t id, int index, bool pressed);
int xg_table_set_analog(struct xg_table *t, uint32_t id, int index, double value);

/** Record that entity `id`'s parent in its source's hierarchy is entity `parent_id` (a BVH
 *  joint's nearest selected ancestor, an RGMP frame's reference frame); 0 clears it. Shown as
 *  the entity's `parent` (the parent's name) in /api/entities and the inspector, which draws
 *  bones along it. Errors: -ENOENT (id unknown), -EINVAL (parent_id unknown or id itself). */
int xg_table_set_parent(struct xg_table *t, uint32_t id, uint32_t parent_id);
/** Name of e's parent entity, or NULL when it has none or the parent is gone (borrowed, valid
 *  as for xg_table_get()). */
const char *xg_table_parent_name(const struct xg_table *t, const struct xg_entity *e);

/** Entity by id / by final name, or NULL. The pointer is valid until the next table call that
 *  may remove entities (xg_table_expire / xg_table_remove). */
const struct xg_entity *xg_table_get(const struct xg_table *t, uint32_t id);
const struct xg_entity *xg_table_find(const struct xg_table *t, const char *name);
size_t xg_table_count(const struct xg_table *t);

/** Predict entity `id` to time t_ns into *pose (docs/prediction.md). -ENOENT if unknown. */
int xg_entity_predict(struct xg_table *t, uint32_t id, int64_t t_ns, struct xg_pose *pose);
/** Same for an entity pointer. */
void xg_entity_predict_at(struct xg_table *t, const struct xg_entity *e, int64_t t_ns,
                          struct xg_pose *pose);

/** Visit every dirty entity of sink `sink` with its pose predicted to now_ns, and empty the set.
 *  Returns the number visited. */
size_t xg_table_drain(struct xg_table *t, int sink, int64_t now_ns, xg_visit_fn fn, void *user);
/** Cut-through egress (issue 19 item 1, docs/performance.md "Cut-through egress"): while `max`
 *  is non-zero, each xg_table_drain() of sink `sink` visits at most `max` dirty entities, oldest
 *  mark first, and leaves the rest in the set in order; 0 (the default) = the whole set. The
 *  gateway's egress pass (core/table/egress_pass.h) sets it around the drains of sliced sinks. */
void xg_table_set_drain_limit(struct xg_table *t, int sink, size_t max);

/** Updates of one ingress batch after which the cut-through hook first runs (default); each
 *  further cut of the same batch waits twice as many, up to XG_CUT_MAX. */
#define XG_CUT_AFTER 64
#define XG_CUT_MAX 4096

/** Cut-through hook (docs/performance.md "Cut-through egress"): called at the end of
 *  xg_table_update*(), xg_table_push(), xg_table_set_button() and xg_table_set_analog() once
 *  xg_table_set_cut_after() updates have been made since a sink's dirty set went from empty to
 *  non-empty (bit i of `woken` = sink i, every sink woken since the hook last ran), i.e. in the
 *  middle of a long ingress batch: the table is consistent then, and those sinks may send what
 *  is marked before the caller pushes the rest of its batch. A batch shorter than that never
 *  calls it (the egress pass after the read sends it whole). Each call doubles the updates the
 *  next one waits for (up to XG_CUT_MAX), until xg_table_pass_begin() outside the hook (the pass
 *  after the read: a new batch) forgets the woken sinks and the count and starts again at
 *  xg_table_set_cut_after(). `origin` is the updating adapter. Not called from within the hook
 *  or during an egress pass. */
typedef void (*xg_cut_fn)(void *user, uint64_t woken, int origin);
void xg_table_set_cut_through(struct xg_table *t, xg_cut_fn fn, void *user);
/** Updates before the hook runs: 1 = at the end of the update that woke a sink; 0 is taken as 1.
 *  Default XG_CUT_AFTER. */
void xg_table_set_cut_after(struct xg_table *t, unsigned updates);

/** Egress pass (issue 19 item 3): from xg_table_pass_begin() to xg_table_pass_end(), every
 *  xg_table_drain() and every xg_table_foreach() with sink >= 0 predicts to the pass time
 *  `now_ns` (gateway-monotonic ns) instead of its own now_ns argument, and an entity is predicted
 *  once per pass: the sinks drained in the pass share that pose (counted in
 *  stats.predictions_shared). A new sample of the entity invalidates it. Passes do not nest: a
 *  second begin just starts a new pass. The pose cache is allocated on the first pass
 *  (-ENOMEM: the pass runs uncached). */
int xg_table_pass_begin(struct xg_table *t, int64_t now_ns);
void xg_table_pass_end(struct xg_table *t);

/** Number of entities waiting in sink's dirty set. */
size_t xg_table_dirty_count(const struct xg_table *t, int sink);
/** Visit every entity (ascending id). sink >= 0 applies split horizon and the sink's filter
 *  (for full refreshes); sink < 0 visits all (the readers that send nothing: the admin API, the
 *  inspector; their answers are counted in stats.predictions_api, not stats.predictions, so that
 *  a viewer does not move the egress counts). Poses predicted to now_ns. */
size_t xg_table_foreach(struct xg_table *t, int sink, int64_t now_ns, xg_visit_fn fn, void *user);

/** Remove entities with no sample received for expire_ns before now_ns; listeners are told.
 *  Returns how many were removed. */
size_t xg_table_expire(struct xg_table *t, int64_t now_ns);
/** Forget entity `id`'s pose history because the source jumped (e.g. a replayed take looped back
 *  to its start): velocities are estimated again from the samples after this call only, so none
 *  is estimated across the jump. The newest state is kept. -ENOENT if the id is unknown. */
int xg_table_forget_history(struct xg_table *t, uint32_t id);
/** Remove one entity (e.g. the source said it is gone). */
int xg_table_remove(struct xg_table *t, uint32_t id);
/** Remove every entity of an origin adapter. */
size_t xg_table_remove_origin(struct xg_table *t, int origin);
/** Forget adapter `index` entirely (configuration reload, gateway/reload.c): remove every entity
 *  it originated (the lifecycle listeners are told, as on expiry), unregister it as a sink (its
 *  slots released through its callback, its dirty set dropped), clear its name and zero its
 *  per-origin counters, so that the index can be given to another adapter. Returns the number of
 *  entities removed; out-of-range indices are ignored. */
size_t xg_table_drop_adapter(struct xg_table *t, int index);
/** Apply a changed filter of sink `sink` (its accept hook now answers differently, e.g. new
 *  include/exclude globs on a reload) to the entities in the table: one it no longer accepts
 *  leaves its view as if it had been removed (told(user, e, false) first, then the sink's slot
 *  released and its dirty mark dropped); one it now accepts enters as if it had appeared (marked
 *  dirty for this sink alone, then told(user, e, true)). `told` may be NULL. Returns the number
 *  of entities whose membership changed; 0 for an index that is not a sink. */
size_t xg_table_refilter_sink(struct xg_table *t, int sink, xg_entity_event_fn told, void *user);
/** Replace the table parameters (configuration reload): they apply from the next update,
 *  prediction and expiry pass on. A velocity window <= 0 or max_entities 0 keep the old value. */
void xg_table_set_params(struct xg_table *t, const struct xg_table_params *params);

/** Counters. */
struct xg_table_stats {
    uint64_t samples_in[XG_MAX_ADAPTERS];        /* accepted samples per origin */
    uint64_t dropped_backwards[XG_MAX_ADAPTERS]; /* capture time did not advance */
    uint64_t rejected[XG_MAX_ADAPTERS];          /* invalid values (xg_sample_check) */
    uint64_t refused[XG_MAX_ADAPTERS];           /* new entities refused: max_entities reached */
    uint64_t predictions[XG_QUALITY_COUNT];      /* answers by quality (egress: everything but
                                                  * xg_table_foreach with sink < 0) */
    uint64_t predictions_api[XG_QUALITY_COUNT];  /* answers of xg_table_foreach with sink < 0 (the
                                                  * admin API, the inspector), by quality */
    uint64_t predictions_shared; /* answers of an egress pass taken from its pose cache (computed
                                    once for an earlier sink of the same pass) */
    uint64_t created, expired, removed;
};
const struct xg_table_stats *xg_table_stats(const struct xg_table *t);

/** Is s a pose? Checks every flagged field: finite and within the XG_*_MAX bounds above
 *  (position, velocity, angular velocity, scale per axis; quaternion norm within
 *  [XG_QUAT_NORM_MIN, XG_QUAT_NORM_MAX]). Returns 0, or -EINVAL with the offending field's name
 *  ("position.x", "orientation.norm", ...; static string) in *field and its value in *value. */
int xg_sample_check(const struct xg_sample *s, const char **field, double *value);
/** x clamped to [-max, max] (NaN becomes 0). */
static inline double xg_clamp1(double x, double max)
{
    if (isnan(x)) return 0;
    return x > max ? max : x < -max ? -max : x;
}
/** Clamp each component of v to [-max, max] (NaN becomes 0). */
static inline struct xg_vec3 xg_vec3_clamp(struct xg_vec3 v, double max)
{
    return (struct xg_vec3){xg_clamp1(v.x, max), xg_clamp1(v.y, max), xg_clamp1(v.z, max)};
}

#endif
