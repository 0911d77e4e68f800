/* VRPN 07.38 wire codec, sender and type id maps (see vrpn_codec.h): names registered locally,
 * the peer's descriptions mapped to local ids and back, our descriptions encoded. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapters/vrpn/vrpn_codec.h"
#include "adapters/vrpn/vrpn_codec_priv.h"

/* ---- id maps ---- */

static const char *kind_label(enum vrpn_id_kind kind)
{
    return kind == VRPN_ID_SENDER ? "sender" : "type";
}

static int kind_max(enum vrpn_id_kind kind)
{
    return kind == VRPN_ID_SENDER ? VRPN_MAX_SENDERS : VRPN_MAX_TYPES;
}

void vrpn_id_map_init(struct vrpn_id_map *m)
{
    for (int k = 0; k < 2; k++) {
        struct vrpn_id_table *t = &m->t[k];
        t->names = NULL;
        t->n_local = 0;
        t->cap = 0;
        for (int i = 0; i < VRPN_MAX_TYPES; i++) {
            t->remote_to_local[i] = -1;
            t->local_to_remote[i] = -1;
        }
    }
}

void vrpn_id_map_free(struct vrpn_id_map *m)
{
    for (int k = 0; k < 2; k++)
        free(m->t[k].names);
    vrpn_id_map_init(m);
}

int vrpn_id_map_find(const struct vrpn_id_map *m, enum vrpn_id_kind kind, const char *name)
{
    if ((unsigned)kind > 1 || !name) return -ENOENT;
    const struct vrpn_id_table *t = &m->t[kind];
    for (int i = 0; i < t->n_local; i++)
        if (strcmp(t->names[i], name) == 0) return i;
    return -ENOENT;
}

const char *vrpn_id_map_name(const struct vrpn_id_map *m, enum vrpn_id_kind kind, int32_t local)
{
    if ((unsigned)kind > 1 || local < 0 || local >= m->t[kind].n_local) return NULL;
    return m->t[kind].names[local];
}

int vrpn_id_map_count(const struct vrpn_id_map *m, enum vrpn_id_kind kind)
{
    return (unsigned)kind > 1 ? 0 : m->t[kind].n_local;
}

int vrpn_id_map_register(struct vrpn_id_map *m, enum vrpn_id_kind kind, const char *name,
                         struct xg_error *err)
{
    if ((unsigned)kind > 1)
        return xg_error_set(err, -EINVAL, "vrpn id map: bad kind %d", (int)kind);
    int rc = vrpn_check_name(name, kind_label(kind), err);
    if (rc) return rc;
    int id = vrpn_id_map_find(m, kind, name);
    if (id >= 0) return id;
    struct vrpn_id_table *t = &m->t[kind];
    if (t->n_local >= kind_max(kind))
        return xg_error_set(err, -ENOSPC, "vrpn id map: more than %d %s names, cannot add '%s'",
                            kind_max(kind), kind_label(kind), name);
    if (t->n_local == t->cap) {
        int ncap = t->cap ? t->cap * 2 : 16;
        if (ncap > kind_max(kind)) ncap = kind_max(kind);
        void *p = realloc(t->names, (size_t)ncap * sizeof t->names[0]);
        if (!p) return xg_error_set(err, -ENOMEM, "vrpn id map: out of memory");
        t->names = p;
        t->cap = (uint16_t)ncap;
    }
    id = t->n_local++;
    memset(t->names[id], 0, sizeof t->names[id]);
    strcpy(t->names[id], name);
    return id;
}

int vrpn_id_map_describe(struct vrpn_id_map *m, enum vrpn_id_kind kind, int32_t remote_id,
                         const char *name, bool *is_new, struct xg_error *err)
{
    if (is_new) *is_new = false;
    if ((unsigned)kind > 1)
        return xg_error_set(err, -EINVAL, "vrpn id map: bad kind %d", (int)kind);
    if (remote_id < 0 || remote_id >= kind_max(kind))
        return xg_error_set(err, -EPROTO, "vrpn %s description: remote id %d out of range 0..%d",
                            kind_label(kind), remote_id, kind_max(kind) - 1);
    if (vrpn_check_name(name, kind_label(kind), err))
        return xg_error_set(err, -EPROTO,
                            "vrpn %s description: remote id %d has a name of bad "
                            "length (1..%d)",
                            kind_label(kind), remote_id, VRPN_CNAME_MAX - 1);
    int local = vrpn_id_map_find(m, kind, name);
    if (local < 0) {
        local = vrpn_id_map_register(m, kind, name, err);
        if (local < 0) return local;
        if (is_new) *is_new = true;
    }
    struct vrpn_id_table *t = &m->t[kind];
    int old_local = t->remote_to_local[remote_id];
    if (old_local >= 0 && t->local_to_remote[old_local] == remote_id)
        t->local_to_remote[old_local] = -1;
    int old_remote = t->local_to_remote[local];
    if (old_remote >= 0 && old_remote != remote_id && t->remote_to_local[old_remote] == local)
        t->remote_to_local[old_remote] = -1;
    t->remote_to_local[remote_id] = (int16_t)local;
    t->local_to_remote[local] = (int16_t)remote_id;
    return local;
}

int vrpn_id_map_to_local(const struct vrpn_id_map *m, enum vrpn_id_kind kind, int32_t remote_id,
                         struct xg_error *err)
{
    if ((unsigned)kind > 1)
        return xg_error_set(err, -EINVAL, "vrpn id map: bad kind %d", (int)kind);
    if (remote_id < 0 || remote_id >= kind_max(kind))
        return xg_error_set(err, -EPROTO, "vrpn header: %s id %d out of range 0..%d",
                            kind_label(kind), remote_id, kind_max(kind) - 1);
    int local = m->t[kind].remote_to_local[remote_id];
    if (local < 0)
        return xg_error_set(err, -ENOENT, "vrpn header: %s id %d was never described",
                            kind_label(kind), remote_id);
    return local;
}

int vrpn_id_map_to_remote(const struct vrpn_id_map *m, enum vrpn_id_kind kind, int32_t local_id)
{
    if ((unsigned)kind > 1 || local_id < 0 || local_id >= m->t[kind].n_local) return -ENOENT;
    int r = m->t[kind].local_to_remote[local_id];
    return r >= 0 ? r : -ENOENT;
}

int vrpn_id_map_encode_descriptions(const struct vrpn_id_map *m, struct xg_writer *w,
                                    const struct vrpn_header *h, uint32_t *seq,
                                    struct xg_error *err)
{
    static const int32_t sys[2] = {VRPN_SENDER_DESCRIPTION, VRPN_TYPE_DESCRIPTION};
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < m->t[k].n_local; i++) {
            int rc = vrpn_encode_description(w, h, seq, sys[k], i, m->t[k].names[i], err);
            if (rc) return rc;
        }
    return 0;
}

int vrpn_id_map_described_names(const struct vrpn_id_map *m, enum vrpn_id_kind kind,
                                const char *skip, char *buf, size_t size)
{
    if (!size) return 0;
    buf[0] = '\0';
    if ((unsigned)kind > 1) return 0;
    const struct vrpn_id_table *t = &m->t[kind];
    size_t len = 0;
    int listed = 0;
    for (int l = 0; l < t->n_local; l++) {
        if (t->local_to_remote[l] < 0 || (skip && !strcmp(t->names[l], skip))) continue;
        /* room for this name and, should another follow that does not fit, ", ..." */
        size_t need = (listed ? 2 : 0) + strlen(t->names[l]) + 2;
        if (len + need + 5 >= size) {
            if (len + 5 < size) memcpy(buf + len, ", ...", 6);
            return listed;
        }
        len += (size_t)snprintf(buf + len, size - len, "%s'%s'", listed ? ", " : "", t->names[l]);
        listed++;
    }
    return listed;
}
