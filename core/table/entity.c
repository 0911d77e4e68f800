/* The entity table itself (core/table/entity.h): creating and freeing it, its sinks, sample taps
 * and listeners, and looking entities up. The rest of the table lives beside it: samples coming in
 * (core/table/entity_ingest.c), prediction (core/table/entity_predict.c), the sinks' drain
 * (core/table/entity_drain.c), expiry and removal (core/table/entity_remove.c). */
#include "core/table/entity_priv.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/adapter/adapter.h"
#include "core/util/log.h"
#include "core/predict/motion_memory.h"
#include "core/table/pose_cache.h"
#include "core/predict/predict_est.h"
#include "core/table/names.h"

void xg_table_params_default(struct xg_table_params *p)
{
    p->max_horizon_ns = 100 * INT64_C(1000000);
    p->stale_ns = 500 * INT64_C(1000000);
    p->expire_ns = 10000 * INT64_C(1000000);
    p->velocity_window_ns = 100 * INT64_C(1000000);
    p->motion_memory_ns = 2000 * INT64_C(1000000);
    p->max_entities = 65536;
}

struct xg_table *xg_table_new(const struct xg_table_params *params)
{
    struct xg_table *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    if (params)
        t->p = *params;
    else
        xg_table_params_default(&t->p);
    if (t->p.velocity_window_ns <= 0) t->p.velocity_window_ns = 100 * INT64_C(1000000);
    if (!t->p.max_entities) t->p.max_entities = 65536;
    t->next_id = 1;
    t->cut_after = t->cut_next = XG_CUT_AFTER;
    if (xg_ent_hmap_grow(&t->by_id, 64) || xg_ent_hmap_grow(&t->by_source, 64) ||
        xg_ent_hmap_grow(&t->by_name, 64)) {
        xg_table_free(t);
        return NULL;
    }
    return t;
}

void xg_ent_free(struct xg_entity *e)
{
    if (!e) return;
    free(e->buttons);
    free(e->analogs);
    free(e->skel);
    free(e->rot_rel);
    xg_memory_free(e->memory);
    free(e);
}

void xg_table_free(struct xg_table *t)
{
    if (!t) return;
    for (size_t i = 0; i < t->n_slots; i++)
        xg_ent_free(t->slots[i]);
    free(t->slots);
    free(t->free_slots);
    xg_ent_hmap_free(&t->by_id);
    xg_ent_hmap_free(&t->by_source);
    xg_ent_hmap_free(&t->by_name);
    for (int i = 0; i < XG_MAX_ADAPTERS; i++) {
        free(t->sinks[i].list);
        free(t->sinks[i].vals);
    }
    xg_pose_cache_free(t->poses);
    free(t);
}

const struct xg_table_params *xg_table_params(const struct xg_table *t)
{
    return &t->p;
}

int xg_table_set_adapter_name(struct xg_table *t, int index, const char *name)
{
    if (index < 0 || index >= XG_MAX_ADAPTERS) return -EINVAL;
    t->adapter_names[index] = name;
    return 0;
}

const char *xg_table_adapter_name(const struct xg_table *t, int index)
{
    if (index < 0 || index >= XG_MAX_ADAPTERS || !t->adapter_names[index]) return "";
    return t->adapter_names[index];
}

void xg_table_set_namer(struct xg_table *t, xg_namer_fn fn, void *user)
{
    t->namer = fn;
    t->namer_user = user;
}

int xg_table_add_sink(struct xg_table *t, int index, xg_accept_fn accept, xg_wake_fn wake,
                      void *user)
{
    if (index < 0 || index >= XG_MAX_ADAPTERS) return -EINVAL;
    struct sink *s = &t->sinks[index];
    s->on = true;
    s->accept = accept;
    s->wake = wake;
    s->user = user;
    /* existing entities become visible to the new sink */
    for (size_t i = 0; i < t->n_slots; i++) {
        struct xg_entity *e = t->slots[i];
        if (e && e->origin != index && (!accept || accept(user, index, e)))
            e->sink_mask |= UINT64_C(1) << index;
    }
    return 0;
}

int xg_table_set_sample_tap(struct xg_table *t, int sink, xg_sample_tap_fn fn, void *user)
{
    if (sink < 0 || sink >= XG_MAX_ADAPTERS || !t->sinks[sink].on) return -EINVAL;
    t->sinks[sink].tap = fn;
    t->sinks[sink].tap_user = user;
    if (fn)
        t->tap_mask |= UINT64_C(1) << sink;
    else
        t->tap_mask &= ~(UINT64_C(1) << sink);
    return 0;
}

/* The sample taps of the sinks that republish e (xg_table_set_sample_tap). */
void xg_ent_run_taps(struct xg_table *t, const struct xg_entity *e)
{
    uint64_t m = t->tap_mask & e->sink_mask;
    while (m) {
        int i = __builtin_ctzll(m);
        m &= m - 1;
        t->sinks[i].tap(t->sinks[i].tap_user, e, xg_entity_last(e));
    }
}

int xg_table_set_sink_slot_free(struct xg_table *t, int sink, xg_sink_slot_free_fn fn, void *user)
{
    if (sink < 0 || sink >= XG_MAX_ADAPTERS) return -EINVAL;
    t->sinks[sink].val_free = fn;
    t->sinks[sink].val_user = user;
    return 0;
}

uint64_t *xg_table_sink_slot(struct xg_table *t, int sink, const struct xg_entity *e)
{
    if (sink < 0 || sink >= XG_MAX_ADAPTERS || !e) return NULL;
    struct sink *s = &t->sinks[sink];
    if (e->slot >= s->n_vals) {
        size_t n = s->n_vals ? s->n_vals : 64;
        while (n <= e->slot)
            n *= 2;
        uint64_t *v = realloc(s->vals, n * sizeof *v);
        if (!v) return NULL;
        memset(v + s->n_vals, 0, (n - s->n_vals) * sizeof *v);
        s->vals = v;
        s->n_vals = n;
    }
    return &s->vals[e->slot];
}

void xg_ent_sink_val_release(struct sink *s, const struct xg_entity *e)
{
    if (e->slot >= s->n_vals || !s->vals[e->slot]) return;
    uint64_t v = s->vals[e->slot];
    s->vals[e->slot] = 0;
    if (s->val_free) s->val_free(s->val_user, e, v);
}

void xg_table_sink_slots_clear(struct xg_table *t, int sink)
{
    if (!t || sink < 0 || sink >= XG_MAX_ADAPTERS) return;
    struct sink *s = &t->sinks[sink];
    for (size_t i = 0; i < s->n_vals && i < t->n_slots; i++)
        if (t->slots[i]) xg_ent_sink_val_release(s, t->slots[i]);
    if (s->vals) memset(s->vals, 0, s->n_vals * sizeof *s->vals);
}

int xg_table_add_listener(struct xg_table *t, xg_entity_event_fn fn, void *user)
{
    if (t->n_listeners >= MAX_LISTENERS) return -ENOSPC;
    t->listeners[t->n_listeners].fn = fn;
    t->listeners[t->n_listeners].user = user;
    t->n_listeners++;
    return 0;
}

const struct xg_entity *xg_table_get(const struct xg_table *t, uint32_t id)
{
    uint64_t h = id;
    for (struct hnode *n = t->by_id.b[h & (t->by_id.nb - 1)]; n; n = n->next)
        if (n->h == h) return xg_ent_slot(t, n->slot);
    return NULL;
}

struct xg_entity *xg_ent_get_mut(struct xg_table *t, uint32_t id)
{
    return (struct xg_entity *)xg_table_get(t, id);
}

const struct xg_entity *xg_table_find(const struct xg_table *t, const char *name)
{
    uint64_t h = xg_ent_hash_str(name);
    for (struct hnode *n = t->by_name.b[h & (t->by_name.nb - 1)]; n; n = n->next) {
        struct xg_entity *e = xg_ent_slot(t, n->slot);
        if (n->h == h && e && strcmp(e->name, name) == 0) return e;
    }
    return NULL;
}

struct xg_entity *xg_ent_find_source(const struct xg_table *t, int origin, const char *source)
{
    uint64_t h = xg_ent_hash_source(origin, source);
    for (struct hnode *n = t->by_source.b[h & (t->by_source.nb - 1)]; n; n = n->next) {
        struct xg_entity *e = xg_ent_slot(t, n->slot);
        if (n->h == h && e && e->origin == origin && strcmp(e->source, source) == 0) return e;
    }
    return NULL;
}

int xg_table_set_parent(struct xg_table *t, uint32_t id, uint32_t parent_id)
{
    struct xg_entity *e = xg_ent_get_mut(t, id);
    if (!e) return -ENOENT;
    if (parent_id && (parent_id == id || !xg_table_get(t, parent_id))) return -EINVAL;
    e->parent = parent_id;
    return 0;
}

const char *xg_table_parent_name(const struct xg_table *t, const struct xg_entity *e)
{
    const struct xg_entity *p = e->parent ? xg_table_get(t, e->parent) : NULL;
    return p ? p->name : NULL;
}

size_t xg_table_count(const struct xg_table *t)
{
    return t->count;
}

void xg_table_set_params(struct xg_table *t, const struct xg_table_params *params)
{
    struct xg_table_params p = *params;
    if (p.velocity_window_ns <= 0) p.velocity_window_ns = t->p.velocity_window_ns;
    if (!p.max_entities) p.max_entities = t->p.max_entities;
    t->p = p;
}

const struct xg_table_stats *xg_table_stats(const struct xg_table *t)
{
    return &t->stats;
}
