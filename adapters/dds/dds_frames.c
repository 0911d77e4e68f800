/* The dds adapter's names seen on ingress: an open-addressing hash table (dds_frames.h). */
#include "adapters/dds/dds_frames.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS (DDS_MAX_NAMES * 2) /* a power of two: load factor at most 1/2 */

uint64_t dds_name_hash(const char *s)
{
    uint64_t h = UINT64_C(1469598103934665603);
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * UINT64_C(1099511628211);
    return h;
}

int dds_frames_init(struct dds_frames *f)
{
    memset(f, 0, sizeof *f);
    f->slot = calloc(SLOTS, sizeof *f->slot);
    f->cap = 256;
    f->v = malloc(f->cap * sizeof *f->v);
    if (!f->slot || !f->v) {
        dds_frames_free(f);
        return -ENOMEM;
    }
    return 0;
}

void dds_frames_free(struct dds_frames *f)
{
    free(f->slot);
    free(f->v);
    memset(f, 0, sizeof *f);
}

/* The slot where `name` is, or the empty slot where it would go. */
static uint32_t *probe(const struct dds_frames *f, const char *name, uint64_t h)
{
    uint32_t i = (uint32_t)(h ^ (h >> 32)) & (SLOTS - 1);
    for (;;) {
        uint32_t *s = &f->slot[i];
        if (!*s) return s;
        const struct dds_frame *e = &f->v[*s - 1];
        if (e->hash == h && !strcmp(e->name, name)) return s;
        i = (i + 1) & (SLOTS - 1);
    }
}

struct dds_frame *dds_frames_find(const struct dds_frames *f, const char *name, uint64_t h)
{
    if (!f->slot) return NULL;
    uint32_t *s = probe(f, name, h);
    return *s ? &f->v[*s - 1] : NULL;
}

struct dds_frame *dds_frames_get(struct dds_frames *f, const char *name, uint64_t h)
{
    if (!f->slot) return NULL;
    uint32_t *s = probe(f, name, h);
    if (*s) return &f->v[*s - 1];
    if (f->n >= DDS_MAX_NAMES || strlen(name) >= XG_NAME_MAX) return NULL;
    if (f->n == f->cap) {
        uint32_t cap = f->cap * 2 > DDS_MAX_NAMES ? DDS_MAX_NAMES : f->cap * 2;
        struct dds_frame *v = realloc(f->v, cap * sizeof *v);
        if (!v) return NULL;
        f->v = v;
        f->cap = cap;
    }
    struct dds_frame *e = &f->v[f->n];
    memset(e, 0, sizeof *e);
    e->hash = h;
    memcpy(e->name, name, strlen(name) + 1);
    *s = ++f->n;
    return e;
}
