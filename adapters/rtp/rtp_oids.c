/* Egress object IDs of the `rtp` adapter (rtp_oids.h). */
#include "adapters/rtp/rtp_oids.h"

#include <stdlib.h>
#include <string.h>

static uint32_t hash_name(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    return h % RTP_OID_BUCKETS;
}

void rtp_oids_init(struct rtp_oids *m)
{
    memset(m, 0, sizeof *m);
    m->next_oid = 1;
}

struct rtp_oid *rtp_oids_get(struct rtp_oids *m, const char *name)
{
    uint32_t h = hash_name(name);
    for (struct rtp_oid *o = m->b[h]; o; o = o->next)
        if (!strcmp(o->name, name)) return o;
    size_t n = strlen(name);
    struct rtp_oid *o = calloc(1, sizeof *o + n + 1);
    if (!o) return NULL;
    memcpy(o->name, name, n + 1);
    o->oid = m->next_oid++;
    o->next = m->b[h];
    m->b[h] = o;
    m->n++;
    return o;
}

bool rtp_oids_remove(struct rtp_oids *m, const char *name)
{
    for (struct rtp_oid **pp = &m->b[hash_name(name)]; *pp; pp = &(*pp)->next)
        if (!strcmp((*pp)->name, name)) {
            struct rtp_oid *o = *pp;
            *pp = o->next;
            free(o);
            m->n--;
            return true;
        }
    return false;
}

void rtp_oids_free(struct rtp_oids *m)
{
    for (size_t i = 0; i < RTP_OID_BUCKETS; i++)
        for (struct rtp_oid *o = m->b[i], *nx; o; o = nx) {
            nx = o->next;
            free(o);
        }
    memset(m->b, 0, sizeof m->b);
    m->n = 0;
}
