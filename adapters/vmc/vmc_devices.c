#include "adapters/vmc/vmc_devices.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h ^ (h >> 29);
}

int vmc_devices_init(struct vmc_devices *v, size_t max)
{
    memset(v, 0, sizeof *v);
    if (!max) max = 1;
    size_t cap = 16;
    while (cap < 2 * max)
        cap *= 2;
    v->max = max;
    v->index_mask = cap - 1;
    v->d = calloc(max, sizeof *v->d);
    v->index = calloc(cap, sizeof *v->index);
    v->pend = calloc(max, sizeof *v->pend);
    return v->d && v->index && v->pend ? 0 : -ENOMEM;
}

void vmc_devices_free(struct vmc_devices *v)
{
    free(v->d);
    free(v->index);
    free(v->pend);
    memset(v, 0, sizeof *v);
}

long vmc_devices_find(const struct vmc_devices *v, const char *src)
{
    if (!v->index) return -1;
    for (size_t h = (size_t)hash(src) & v->index_mask;; h = (h + 1) & v->index_mask) {
        uint32_t e = v->index[h];
        if (!e) return -1;
        if (strcmp(v->d[e - 1].src, src) == 0) return (long)(e - 1);
    }
}

static void put(struct vmc_devices *v, size_t i)
{
    size_t h = (size_t)hash(v->d[i].src) & v->index_mask;
    while (v->index[h])
        h = (h + 1) & v->index_mask;
    v->index[h] = (uint32_t)i + 1;
}

long vmc_devices_add(struct vmc_devices *v, const char *src, uint8_t kind)
{
    if (v->n_used >= v->max) return -1;
    size_t i = v->hint < v->max ? v->hint : 0;
    while (v->d[i].used) /* n_used < max: a free slot exists */
        i = i + 1 < v->max ? i + 1 : 0;
    v->hint = i + 1;
    struct vmc_device *d = &v->d[i];
    memset(d, 0, sizeof *d);
    d->used = true;
    d->kind = kind;
    size_t n = strlen(src);
    if (n >= sizeof d->src) n = sizeof d->src - 1;
    memcpy(d->src, src, n);
    d->src[n] = '\0';
    v->n_used++;
    put(v, i);
    return (long)i;
}

void vmc_devices_release(struct vmc_devices *v, size_t i)
{
    if (!v->d[i].used) return;
    memset(&v->d[i], 0, sizeof v->d[i]);
    v->n_used--;
}

void vmc_devices_reindex(struct vmc_devices *v)
{
    memset(v->index, 0, (v->index_mask + 1) * sizeof *v->index);
    for (size_t i = 0; i < v->max; i++)
        if (v->d[i].used) put(v, i);
}

void vmc_devices_mark(struct vmc_devices *v, size_t i)
{
    if (v->d[i].pending) return;
    v->d[i].pending = true;
    v->pend[v->n_pend++] = (uint32_t)i;
}
