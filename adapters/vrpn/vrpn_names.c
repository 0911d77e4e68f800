/* vrpn-server sensor names (vrpn_names.h). */
#include "adapters/vrpn/vrpn_names.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint32_t fnv1a(const char *t)
{
    uint32_t h = 2166136261u;
    for (; *t; t++) {
        h ^= (uint8_t)*t;
        h *= 16777619u;
    }
    return h;
}

int vrpn_names_init(struct vrpn_names *n, int dep_max)
{
    memset(n, 0, sizeof *n);
    n->free_head = n->dep_head = n->dep_tail = -1;
    n->dep_max = dep_max < 0 ? 0 : dep_max;
    n->heads = malloc(VRPN_NAMES_BUCKETS * sizeof *n->heads);
    if (!n->heads) return -ENOMEM;
    for (int i = 0; i < VRPN_NAMES_BUCKETS; i++)
        n->heads[i] = -1;
    return 0;
}

void vrpn_names_free(struct vrpn_names *n)
{
    free(n->slots);
    free(n->heads);
    memset(n, 0, sizeof *n);
}

int vrpn_names_find(const struct vrpn_names *n, const char *name)
{
    if (!n->heads) return -1;
    for (int i = n->heads[fnv1a(name) % VRPN_NAMES_BUCKETS]; i >= 0; i = n->slots[i].next)
        if (!strcmp(n->slots[i].name, name)) return i;
    return -1;
}

int vrpn_names_add(struct vrpn_names *n, const char *name, int tracker, int sensor, uint32_t id)
{
    int i;
    if (n->free_head >= 0) {
        i = n->free_head;
        n->free_head = n->slots[i].next;
        n->n_free--;
    } else {
        if (n->n_slots == n->cap_slots) {
            int nc = n->cap_slots ? n->cap_slots * 2 : 64;
            struct vrpn_name *ns = realloc(n->slots, (size_t)nc * sizeof *ns);
            if (!ns) return -ENOMEM;
            n->slots = ns;
            n->cap_slots = nc;
        }
        i = n->n_slots++;
    }
    struct vrpn_name *s = &n->slots[i];
    memset(s, 0, sizeof *s);
    size_t len = strnlen(name, sizeof s->name - 1);
    memcpy(s->name, name, len);
    s->name[len] = '\0';
    s->id = id;
    s->tracker = tracker;
    s->sensor = sensor;
    s->ctl = -1;
    s->dprev = s->dnext = -1;
    uint32_t b = fnv1a(s->name) % VRPN_NAMES_BUCKETS;
    s->next = n->heads[b];
    n->heads[b] = i;
    return i;
}

static void dep_unlink(struct vrpn_names *n, int i)
{
    struct vrpn_name *s = &n->slots[i];
    if (!s->departed) return;
    if (s->dprev >= 0)
        n->slots[s->dprev].dnext = s->dnext;
    else
        n->dep_head = s->dnext;
    if (s->dnext >= 0)
        n->slots[s->dnext].dprev = s->dprev;
    else
        n->dep_tail = s->dprev;
    s->departed = false;
    s->dprev = s->dnext = -1;
    n->n_dep--;
}

void vrpn_names_live(struct vrpn_names *n, int i, uint32_t id)
{
    dep_unlink(n, i);
    n->slots[i].id = id;
}

/* Forget name i: out of the hash and the departed list, its storage on the free list. */
static void forget(struct vrpn_names *n, int i, vrpn_names_forget_fn fn, void *user)
{
    struct vrpn_name *s = &n->slots[i];
    dep_unlink(n, i);
    for (int *pp = &n->heads[fnv1a(s->name) % VRPN_NAMES_BUCKETS]; *pp >= 0;
         pp = &n->slots[*pp].next)
        if (*pp == i) {
            *pp = s->next;
            break;
        }
    int tracker = s->tracker, sensor = s->sensor;
    s->name[0] = '\0';
    s->id = 0;
    s->tracker = s->sensor = s->ctl = -1;
    s->next = n->free_head;
    n->free_head = i;
    n->n_free++;
    if (fn) fn(user, i, tracker, sensor);
}

void vrpn_names_depart(struct vrpn_names *n, int i, vrpn_names_forget_fn fn, void *user)
{
    struct vrpn_name *s = &n->slots[i];
    if (!s->name[0]) return; /* free */
    s->id = 0;
    if (!s->departed) {
        s->departed = true;
        s->dnext = -1;
        s->dprev = n->dep_tail;
        if (n->dep_tail >= 0)
            n->slots[n->dep_tail].dnext = i;
        else
            n->dep_head = i;
        n->dep_tail = i;
        n->n_dep++;
    }
    while (n->n_dep > n->dep_max)
        forget(n, n->dep_head, fn, user);
}

void vrpn_names_forget(struct vrpn_names *n, int i, vrpn_names_forget_fn fn, void *user)
{
    if (i >= 0 && i < n->n_slots && n->slots[i].name[0] && n->slots[i].departed)
        forget(n, i, fn, user);
}

int vrpn_names_holder(const struct vrpn_names *n, int tracker, int sensor)
{
    for (int i = 0; i < n->n_slots; i++)
        if (n->slots[i].name[0] && n->slots[i].tracker == tracker && n->slots[i].sensor == sensor)
            return i;
    return -1;
}

int vrpn_names_count(const struct vrpn_names *n)
{
    return n->n_slots - n->n_free;
}
