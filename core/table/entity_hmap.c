/* The entity table's hash maps (id, origin + source, name -> table slot): chained buckets, a
 * power-of-two bucket count, FNV-1a hashes. Declared in core/table/entity_priv.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/table/entity_priv.h"

uint64_t xg_ent_fnv1a(uint64_t h, const void *data, size_t n)
{
    const uint8_t *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= UINT64_C(0x100000001b3);
    }
    return h;
}

uint64_t xg_ent_hash_str(const char *s)
{
    return xg_ent_fnv1a(UINT64_C(0xcbf29ce484222325), s, strlen(s));
}

uint64_t xg_ent_hash_source(int origin, const char *source)
{
    uint32_t o = (uint32_t)origin;
    return xg_ent_fnv1a(xg_ent_fnv1a(UINT64_C(0xcbf29ce484222325), &o, sizeof o), source,
                        strlen(source));
}

int xg_ent_hmap_grow(struct hmap *m, size_t want)
{
    if (m->nb >= want) return 0;
    size_t nb = m->nb ? m->nb : 64;
    while (nb < want)
        nb *= 2;
    struct hnode **b = calloc(nb, sizeof *b);
    if (!b) return -ENOMEM;
    for (size_t i = 0; i < m->nb; i++) {
        for (struct hnode *n = m->b[i], *next; n; n = next) {
            next = n->next;
            n->next = b[n->h & (nb - 1)];
            b[n->h & (nb - 1)] = n;
        }
    }
    free(m->b);
    m->b = b;
    m->nb = nb;
    return 0;
}

int xg_ent_hmap_put(struct hmap *m, uint64_t h, uint32_t slot)
{
    struct hnode *n = malloc(sizeof *n);
    if (!n) return -ENOMEM;
    n->h = h;
    n->slot = slot;
    n->next = m->b[h & (m->nb - 1)];
    m->b[h & (m->nb - 1)] = n;
    return 0;
}

void xg_ent_hmap_del(struct hmap *m, uint64_t h, uint32_t slot)
{
    for (struct hnode **pp = &m->b[h & (m->nb - 1)]; *pp; pp = &(*pp)->next) {
        if ((*pp)->h == h && (*pp)->slot == slot) {
            struct hnode *n = *pp;
            *pp = n->next;
            free(n);
            return;
        }
    }
}

void xg_ent_hmap_free(struct hmap *m)
{
    for (size_t i = 0; i < m->nb; i++)
        for (struct hnode *n = m->b[i], *next; n; n = next) {
            next = n->next;
            free(n);
        }
    free(m->b);
}
