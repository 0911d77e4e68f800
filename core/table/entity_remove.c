/* The entity table: entities leaving it (expiry, removal, an adapter dropped by a reload) and a
 * sink's view re-filtered (core/table/entity.h). Split from core/table/entity.c; the table's layout
 * is in core/table/entity_priv.h. */
#include "core/table/entity_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void remove_entity(struct xg_table *t, struct xg_entity *e)
{
    for (int i = 0; i < t->n_listeners; i++)
        t->listeners[i].fn(t->listeners[i].user, e, false);
    for (int i = 0; i < XG_MAX_ADAPTERS; i++) /* per-sink slots die with their entity */
        xg_ent_sink_val_release(&t->sinks[i], e);
    xg_ent_hmap_del(&t->by_id, e->id, e->slot);
    xg_ent_hmap_del(&t->by_source, xg_ent_hash_source(e->origin, e->source), e->slot);
    xg_ent_hmap_del(&t->by_name, xg_ent_hash_str(e->name), e->slot);
    t->slots[e->slot] = NULL;
    t->free_slots[t->n_free++] = e->slot;
    t->count--;
    /* stale slot references in dirty lists are skipped: a reused slot has a fresh dirty_mask,
     * and a list entry for a reused slot is harmless (the new entity is just visited once). */
    xg_ent_free(e);
}

size_t xg_table_expire(struct xg_table *t, int64_t now_ns)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n_slots; i++) {
        struct xg_entity *e = t->slots[i];
        if (e && now_ns - e->last_receive_ns > t->p.expire_ns) {
            remove_entity(t, e);
            t->stats.expired++;
            n++;
        }
    }
    return n;
}

int xg_table_remove(struct xg_table *t, uint32_t id)
{
    struct xg_entity *e = xg_ent_get_mut(t, id);
    if (!e) return -ENOENT;
    remove_entity(t, e);
    t->stats.removed++;
    return 0;
}

size_t xg_table_remove_origin(struct xg_table *t, int origin)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n_slots; i++) {
        struct xg_entity *e = t->slots[i];
        if (e && e->origin == origin) {
            remove_entity(t, e);
            t->stats.removed++;
            n++;
        }
    }
    return n;
}

size_t xg_table_drop_adapter(struct xg_table *t, int index)
{
    if (!t || index < 0 || index >= XG_MAX_ADAPTERS) return 0;
    size_t n = xg_table_remove_origin(t, index);
    struct sink *s = &t->sinks[index];
    const uint64_t bit = UINT64_C(1) << index;
    for (size_t i = 0; i < t->n_slots; i++) {
        struct xg_entity *e = t->slots[i];
        if (!e) continue;
        xg_ent_sink_val_release(s, e);
        e->sink_mask &= ~bit;
        e->dirty_mask &= ~bit;
    }
    free(s->list);
    free(s->vals);
    t->tap_mask &= ~(UINT64_C(1) << index);
    memset(s, 0, sizeof *s);
    t->woken &= ~bit;
    t->adapter_names[index] = NULL;
    t->stats.samples_in[index] = t->stats.dropped_backwards[index] = 0;
    t->stats.rejected[index] = t->stats.refused[index] = 0;
    return n;
}

size_t xg_table_refilter_sink(struct xg_table *t, int sink, xg_entity_event_fn told, void *user)
{
    if (!t || sink < 0 || sink >= XG_MAX_ADAPTERS || !t->sinks[sink].on) return 0;
    struct sink *s = &t->sinks[sink];
    const uint64_t bit = UINT64_C(1) << sink;
    size_t n = 0;
    for (size_t i = 0; i < t->n_slots; i++) {
        struct xg_entity *e = t->slots[i];
        if (!e || e->origin == sink) continue;
        bool was = e->sink_mask & bit, now = !s->accept || s->accept(s->user, sink, e);
        if (was == now) continue;
        n++;
        if (was) { /* as if it had left the table, for this sink only */
            if (told) told(user, e, false);
            xg_ent_sink_val_release(s, e);
            e->sink_mask &= ~bit;
            e->dirty_mask &= ~bit;
        } else { /* as if it had just appeared: announced, and due to this sink alone */
            const uint64_t others = e->sink_mask;
            e->sink_mask = bit;
            xg_ent_mark_dirty(t, e);
            e->sink_mask = others | bit;
            if (told) told(user, e, true);
        }
    }
    return n;
}
