#include "core/table/pose_cache.h"

#include <errno.h>
#include <stdlib.h>

struct entry {
    uint64_t epoch; /* pass that wrote it; 0 = never */
    uint64_t gen;
    uint32_t id;
    struct xg_pose pose;
};

struct xg_pose_cache {
    uint64_t epoch; /* current pass, >= 1 */
    size_t mask;    /* size - 1 */
    struct entry e[];
};

static size_t round_size(size_t n)
{
    size_t s = 64;
    while (s < n && s < XG_POSE_CACHE_MAX)
        s *= 2;
    return s;
}

struct xg_pose_cache *xg_pose_cache_new(size_t entries)
{
    size_t n = round_size(entries);
    struct xg_pose_cache *c = calloc(1, sizeof *c + n * sizeof c->e[0]);
    if (!c) return NULL;
    c->epoch = 1;
    c->mask = n - 1;
    return c;
}

void xg_pose_cache_free(struct xg_pose_cache *c)
{
    free(c);
}

int xg_pose_cache_reserve(struct xg_pose_cache **c, size_t entries)
{
    if (*c && xg_pose_cache_size(*c) >= round_size(entries)) return 0;
    struct xg_pose_cache *n = xg_pose_cache_new(entries);
    if (!n) return -ENOMEM;
    if (*c) n->epoch = (*c)->epoch;
    xg_pose_cache_free(*c);
    *c = n;
    return 0;
}

size_t xg_pose_cache_size(const struct xg_pose_cache *c)
{
    return c->mask + 1;
}

void xg_pose_cache_new_pass(struct xg_pose_cache *c)
{
    c->epoch++;
}

const struct xg_pose *xg_pose_cache_get(const struct xg_pose_cache *c, uint32_t slot, uint32_t id,
                                        uint64_t gen, int64_t t_ns)
{
    const struct entry *e = &c->e[slot & c->mask];
    if (e->epoch != c->epoch || e->id != id || e->gen != gen || e->pose.t_ns != t_ns) return NULL;
    return &e->pose;
}

void xg_pose_cache_put(struct xg_pose_cache *c, uint32_t slot, uint32_t id, uint64_t gen,
                       const struct xg_pose *pose)
{
    struct entry *e = &c->e[slot & c->mask];
    e->epoch = c->epoch;
    e->id = id;
    e->gen = gen;
    e->pose = *pose;
}
