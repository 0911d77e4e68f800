/* The entity's layout: private to the entity table's own files (core/table/entity*.c: the table,
 * ingest, prediction, drain, removal, views). Adapters, the gateway and tests read entities through
 * the accessors of core/table/entity.h and keep their own per-entity state in the table's per-sink
 * slots (xg_table_sink_slot()). */
#ifndef XG_ENTITY_PRIV_H
#define XG_ENTITY_PRIV_H

#include "core/table/entity.h"
#include "core/table/history.h"
#include "core/util/log.h"
#include "core/predict/predict_gate.h"
#include "core/predict/predict_skel.h"

/** An entity. Written by the table only. */
struct xg_entity {
    uint32_t id; /* stable, never reused, > 0 */
    /* names, NUL-terminated, allocated at their length with the entity (issue 19 item 5):
     * never NULL, shorter than XG_NAME_MAX (origin_gateway: than 64) */
    const char *name;           /* unique */
    const char *source;         /* the adapter's name for it */
    const char *origin_gateway; /* "" = this gateway */
    int32_t source_sensor;      /* the source's sensor number (xg_entity_key.sensor), -1 = none */
    bool controls_only;         /* xg_entity_key.controls_only: the pose is a placeholder */
    enum xg_kind kind;
    int origin; /* origin adapter index */
    /* newest state */
    struct xg_sample last; /* merged newest sample (all fields valid per last.flags) */
    struct xg_vec3 velocity, angular_velocity; /* used for prediction */
    bool has_velocity, has_angular_velocity;
    bool velocity_estimated, angular_velocity_estimated;
    bool rot_damped;  /* the estimated angular velocity was damped (core/predict/predict_rot.h) */
    bool rot_matched; /* the estimated angular velocity was blended with the skeleton's motion
                         memory at the newest sample (core/table/entity_memory.c) */
    int64_t reported_vel_ns, reported_angvel_ns; /* capture time of reported velocities, 0 = none */
    struct xg_history hist;                      /* compact pose history (core/table/history.h) */
    struct xg_motion_acc est; /* running sums of the velocity estimator over the history */
    struct xg_rot_state rot;  /* how far the estimated angular velocity is extrapolated */
    struct xg_vel_gate vgate; /* how far the estimated velocity is (core/predict/predict_gate.h) */
    int64_t created_ns, last_receive_ns;
    double interval_s; /* EWMA of sample spacing (capture times) */
    uint64_t samples, dropped_backwards;
    uint32_t parent; /* id of the parent entity in the source's hierarchy (a skeleton's parent
                        joint), 0 = none: see xg_table_set_parent() */
    /* skeleton-informed rotation (core/table/entity_skel.c): set up at the first child whose bone
     * turns with this entity, NULL before */
    struct xg_rot_skel *skel;
    /* the learned share of its own turn relative to its parent that a joint without children
     * extrapolates (xg_rot_skel_rel_gain()): set up the first time it turns with its parent */
    struct xg_rot_state *rot_rel;
    struct xg_vec3 bone_local; /* position - parent's position, in the parent's frame (m) */
    /* a skeleton root's motion memory (core/predict/motion_memory.h): set up when a joint below it
     * first has a sample, NULL before and for every entity with a parent */
    struct xg_motion_memory *memory;
    int64_t bone_t_ns; /* capture time of bone_local, 0 = none */
    /* protocol extras: buttons / analogs (NULL until first set) */
    uint8_t *buttons;         /* XG_MAX_BUTTONS states */
    double *analogs;          /* XG_MAX_ANALOGS values */
    int n_buttons, n_analogs; /* highest index set + 1 */
    /* egress bookkeeping */
    uint64_t sink_mask;  /* sinks that accept this entity */
    uint64_t dirty_mask; /* sinks for which it is in the dirty set */
    uint32_t slot;
    char names[]; /* storage of name, source and origin_gateway */
};

/* The table's hash maps (core/table/entity_hmap.c): hash -> table slot, chained, power-of-two
 * buckets. */
struct hnode {
    uint64_t h;
    uint32_t slot;
    struct hnode *next;
};

struct hmap {
    struct hnode **b;
    size_t nb;
};

/* The table and its sinks (core/table/entity.c; ingest in core/table/entity_ingest.c, drain in
 * core/table/entity_drain.c, removal in core/table/entity_remove.c). */
#define MAX_LISTENERS 8

struct sink {
    bool on;
    xg_accept_fn accept;
    xg_wake_fn wake;
    void *user;
    uint32_t *list; /* slots of dirty entities: list[head..n) */
    size_t head, n, cap;
    size_t limit;   /* entities per xg_table_drain(), 0 = all (xg_table_set_drain_limit) */
    uint64_t *vals; /* per-entity values the sink owns (xg_table_sink_slot), by entity slot */
    size_t n_vals;
    xg_sink_slot_free_fn val_free;
    void *val_user;
    xg_sample_tap_fn tap; /* per-sample hook (xg_table_set_sample_tap), NULL = none */
    void *tap_user;
};

struct xg_table {
    struct xg_table_params p;
    struct xg_entity **slots;
    size_t n_slots, cap_slots;
    uint32_t *free_slots;
    size_t n_free;
    size_t count;
    uint32_t next_id;
    struct hmap by_id, by_source, by_name;
    const char *adapter_names[XG_MAX_ADAPTERS];
    xg_namer_fn namer;
    void *namer_user;
    struct sink sinks[XG_MAX_ADAPTERS];
    struct {
        xg_entity_event_fn fn;
        void *user;
    } listeners[MAX_LISTENERS];
    int n_listeners;
    struct xg_table_stats stats;
    uint64_t tap_mask; /* sinks with a sample tap */
    /* egress pass (xg_table_pass_begin): its time, and one predicted pose per entity */
    bool in_pass, in_cut;
    int64_t pass_ns;
    xg_cut_fn cut; /* cut-through hook (xg_table_set_cut_through) */
    void *cut_user;
    xg_ingest_fn ingest; /* ingest hook (xg_table_set_ingest_hook), for origins in ingest_mask */
    void *ingest_user;
    uint64_t ingest_mask;
    uint64_t woken;     /* sinks whose set became non-empty since the last cut or pass */
    unsigned cut_after; /* updates of a batch before the hook runs (xg_table_set_cut_after) */
    unsigned cut_count; /* updates since a sink was woken, while woken != 0 */
    unsigned cut_next;  /* updates before the next cut of this batch */
    struct xg_pose_cache *poses; /* NULL until the first pass, or when it could not be had */
    /* peer-triggered warnings, one limiter per kind and origin adapter */
    struct xg_log_limit reject_lim[XG_MAX_ADAPTERS], refuse_lim[XG_MAX_ADAPTERS];
};

/** FNV-1a of n bytes, continuing from h. */
uint64_t xg_ent_fnv1a(uint64_t h, const void *data, size_t n);
/** Hash of an entity name / of (origin adapter, source name). */
uint64_t xg_ent_hash_str(const char *s);
uint64_t xg_ent_hash_source(int origin, const char *source);
/** At least `want` buckets (rehashing): 0 or -ENOMEM. */
int xg_ent_hmap_grow(struct hmap *m, size_t want);
/** Add (h, slot): 0 or -ENOMEM. */
int xg_ent_hmap_put(struct hmap *m, uint64_t h, uint32_t slot);
/** Remove the node (h, slot) if present. */
void xg_ent_hmap_del(struct hmap *m, uint64_t h, uint32_t slot);
/** Free every node and the buckets. */
void xg_ent_hmap_free(struct hmap *m);

struct xg_motion_est;

/** Another entity's sample refined e's angular velocity at e's newest sample (a skeleton's
 *  child, core/table/entity_skel.c; its motion memory, core/table/entity_memory.c): set it to w
 * (rad/s, world frame; has_angular_velocity), store it with e's newest pose in the history (for
 *  past-time queries) and mark e changed for every sink that accepts it, so that a sink that
 *  has already sent e is woken to send it again. core/table/entity_ingest.c. */
void xg_ent_refine_angular_velocity(struct xg_table *t, struct xg_entity *e, struct xg_vec3 w);
/** After e's sample at capture time e->last.capture_ns was applied (`m`: its estimate when its
 *  angular velocity was estimated, else NULL): if e's parent has a sample at the same time and
 *  e's bone turns with it, refine the parent's extrapolated angular velocity from e's bone
 *  (core/predict/predict_skel.h); then, until a child of e's own refines it, e turns with its
 * parent: held while the parent is held, else the parent's angular velocity plus a learned share of
 *  e's own fitted turn relative to the parent (xg_rot_skel_rel_gain()). Sets e's
 *  angular_velocity and rot_damped; the caller then stores e's velocities with its newest pose
 *  (the parent's it stores itself). core/table/entity_skel.c. */
void xg_ent_skel_update(struct xg_table *t, struct xg_entity *e, const struct xg_motion_est *m);
/** The skeleton's inputs of e's newest sample (core/table/entity_skel.c): call after every sample
 *  with a pose; `m` = the estimate when the angular velocity was estimated, else NULL. */
void xg_ent_skel_sample(struct xg_entity *e, const struct xg_motion_est *m);

/** After e's sample with an orientation (its velocities stored): record that orientation in
 *  the motion memory of e's skeleton root, set up on first use with span t's motion_memory_ns
 *  (nothing when that is 0, or when e has neither parent nor memory; a root that has got a
 *  parent since frees its own first). When e's sample completes the skeleton's frame and the
 *  memory finds a match (core/predict/motion_memory.h), every joint of the frame whose angular
 * velocity is estimated and whose analog rate turns at least XG_MEMORY_TURN_MIN gets its angular
 *  velocity blended XG_MEMORY_BLEND of the way toward that rate, rot_matched set
 *  (xg_ent_refine_angular_velocity()). core/table/entity_memory.c. */
void xg_ent_memory_sample(struct xg_table *t, struct xg_entity *e);
/** e's poses jumped (its history was forgotten): its skeleton's memory starts again. */
void xg_ent_memory_forget(struct xg_table *t, struct xg_entity *e);

/** Free an entity and what it owns (not its table links). core/table/entity.c. */
void xg_ent_free(struct xg_entity *e);
/** Release and zero sink s's per-entity value for e (its val_free called). core/table/entity.c. */
void xg_ent_sink_val_release(struct sink *s, const struct xg_entity *e);
/** Queue e in the dirty set of every sink that accepts it and has not queued it yet (waking a
 *  sink whose set was empty). core/table/entity_ingest.c. */
void xg_ent_mark_dirty(struct xg_table *t, struct xg_entity *e);
/** The entity with id `id`, writable, or NULL. core/table/entity.c. */
struct xg_entity *xg_ent_get_mut(struct xg_table *t, uint32_t id);
/** The entity of origin adapter `origin` named `source` by it, or NULL. core/table/entity.c. */
struct xg_entity *xg_ent_find_source(const struct xg_table *t, int origin, const char *source);
/** Run the sample taps of the sinks that republish e (xg_table_set_sample_tap).
 * core/table/entity.c. */
void xg_ent_run_taps(struct xg_table *t, const struct xg_entity *e);
/** The entity in table slot `slot`, or NULL (a free slot, or past the end). */
static inline struct xg_entity *xg_ent_slot(const struct xg_table *t, uint32_t slot)
{
    return slot < t->n_slots ? t->slots[slot] : NULL;
}

#endif
