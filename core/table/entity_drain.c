/* The sinks' side of the entity table: egress passes (one predicted pose per entity per pass),
 * draining a sink's dirty set and visiting every entity a sink accepts. */
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

void xg_table_set_drain_limit(struct xg_table *t, int sink, size_t max)
{
    if (sink >= 0 && sink < XG_MAX_ADAPTERS) t->sinks[sink].limit = max;
}

int xg_table_pass_begin(struct xg_table *t, int64_t now_ns)
{
    t->in_pass = true;
    if (!t->in_cut) { /* the pass after a read: it drains what woke them; a new batch follows */
        t->woken = 0;
        t->cut_count = 0;
        t->cut_next = t->cut_after;
    }
    t->pass_ns = now_ns;
    int rc = xg_pose_cache_reserve(&t->poses, t->n_slots);
    if (t->poses) xg_pose_cache_new_pass(t->poses);
    return rc;
}

void xg_table_pass_end(struct xg_table *t)
{
    t->in_pass = false;
    if (t->poses) xg_pose_cache_new_pass(t->poses); /* nothing answers outside a pass */
}

/* The pose a sink gets: inside a pass, predicted to the pass time once and shared. */
static void sink_predict(struct xg_table *t, const struct xg_entity *e, int64_t now_ns,
                         struct xg_pose *pose)
{
    if (!t->in_pass) {
        xg_entity_predict_at(t, e, now_ns, pose);
        return;
    }
    const struct xg_pose *c =
        t->poses ? xg_pose_cache_get(t->poses, e->slot, e->id, e->samples, t->pass_ns) : NULL;
    if (c) {
        *pose = *c;
        t->stats.predictions[c->quality]++;
        t->stats.predictions_shared++;
        return;
    }
    xg_entity_predict_at(t, e, t->pass_ns, pose);
    if (t->poses) xg_pose_cache_put(t->poses, e->slot, e->id, e->samples, pose);
}

size_t xg_table_drain(struct xg_table *t, int sink, int64_t now_ns, xg_visit_fn fn, void *user)
{
    if (sink < 0 || sink >= XG_MAX_ADAPTERS) return 0;
    struct sink *s = &t->sinks[sink];
    uint64_t bit = UINT64_C(1) << sink;
    size_t visited = 0, i = s->head;
    int stop = 0;
    for (; i < s->n && !stop && (!s->limit || visited < s->limit); i++) {
        struct xg_entity *e = xg_ent_slot(t, s->list[i]);
        if (!e || !(e->dirty_mask & bit)) continue; /* removed since it was marked */
        e->dirty_mask &= ~bit;
        struct xg_pose pose;
        sink_predict(t, e, now_ns, &pose);
        visited++;
        stop = fn(user, e, &pose);
    }
    /* keep what was not visited (the visitor stopped early, or the limit was reached) in order:
     * the next drain starts at list[head] (no move per slice) */
    s->head = i;
    if (s->head == s->n) s->head = s->n = 0;
    return visited;
}

size_t xg_table_dirty_count(const struct xg_table *t, int sink)
{
    return sink >= 0 && sink < XG_MAX_ADAPTERS ? t->sinks[sink].n - t->sinks[sink].head : 0;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

size_t xg_table_foreach(struct xg_table *t, int sink, int64_t now_ns, xg_visit_fn fn, void *user)
{
    if (!t->count) return 0;
    uint32_t *ids = malloc(t->count * sizeof *ids);
    if (!ids) return 0;
    size_t n = 0;
    for (size_t i = 0; i < t->n_slots; i++) {
        struct xg_entity *e = t->slots[i];
        if (!e) continue;
        if (sink >= 0 && !(e->sink_mask & (UINT64_C(1) << sink))) continue;
        ids[n++] = e->id;
    }
    qsort(ids, n, sizeof *ids, cmp_u32);
    size_t visited = 0;
    for (size_t i = 0; i < n; i++) {
        const struct xg_entity *e = xg_table_get(t, ids[i]);
        if (!e) continue;
        struct xg_pose pose;
        if (sink >= 0)
            sink_predict(t, e, now_ns, &pose);
        else { /* a reader that sends nothing: not an egress prediction */
            xg_entity_predict_at(t, e, now_ns, &pose);
            t->stats.predictions[pose.quality]--;
            t->stats.predictions_api[pose.quality]++;
        }
        visited++;
        if (fn(user, e, &pose)) break;
    }
    free(ids);
    return visited;
}
