/* less_imap.h: the less adapter's int64 -> uint32 open-addressing map (linear probing, capacity
 * a power of two, at most half full). */
#include "adapters/less/less_imap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static size_t imap_hash(int64_t k, size_t cap)
{
    uint64_t x = (uint64_t)k * UINT64_C(0x9E3779B97F4A7C15);
    return (size_t)(x >> 17) & (cap - 1);
}

void less_imap_free(struct less_imap *m)
{
    free(m->keys);
    free(m->vals);
    free(m->used);
    memset(m, 0, sizeof *m);
}

static int imap_grow(struct less_imap *m)
{
    struct less_imap n = {0};
    n.cap = m->cap ? m->cap * 2 : 64;
    n.keys = calloc(n.cap, sizeof *n.keys);
    n.vals = calloc(n.cap, sizeof *n.vals);
    n.used = calloc(n.cap, 1);
    if (!n.keys || !n.vals || !n.used) {
        less_imap_free(&n);
        return -ENOMEM;
    }
    for (size_t i = 0; i < m->cap; i++)
        if (m->used[i]) less_imap_put(&n, m->keys[i], m->vals[i]);
    less_imap_free(m);
    *m = n;
    return 0;
}

int less_imap_put(struct less_imap *m, int64_t k, uint32_t v)
{
    if ((m->n + 1) * 2 > m->cap && imap_grow(m)) return -ENOMEM;
    size_t i = imap_hash(k, m->cap);
    while (m->used[i] && m->keys[i] != k)
        i = (i + 1) & (m->cap - 1);
    if (!m->used[i]) m->n++;
    m->used[i] = 1;
    m->keys[i] = k;
    m->vals[i] = v;
    return 0;
}

bool less_imap_get(const struct less_imap *m, int64_t k, uint32_t *v)
{
    if (!m->cap) return false;
    size_t i = imap_hash(k, m->cap);
    while (m->used[i]) {
        if (m->keys[i] == k) {
            if (v) *v = m->vals[i];
            return true;
        }
        i = (i + 1) & (m->cap - 1);
    }
    return false;
}

void less_imap_del(struct less_imap *m, int64_t k)
{
    if (!m->cap) return;
    size_t i = imap_hash(k, m->cap);
    while (m->used[i] && m->keys[i] != k)
        i = (i + 1) & (m->cap - 1);
    if (!m->used[i]) return;
    m->used[i] = 0;
    m->n--;
    /* backward-shift the cluster that follows */
    size_t j = i;
    for (;;) {
        j = (j + 1) & (m->cap - 1);
        if (!m->used[j]) break;
        size_t h = imap_hash(m->keys[j], m->cap);
        bool move = (i <= j) ? (h <= i || h > j) : (h <= i && h > j);
        if (move) {
            m->keys[i] = m->keys[j];
            m->vals[i] = m->vals[j];
            m->used[i] = 1;
            m->used[j] = 0;
            i = j;
        }
    }
}
