/* RGMP v2 receiver session: the active definitions of one connection (see rgmp_codec.h). */
#include "adapters/rgmp/rgmp_codec_priv.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------ */
/* Session                                                                                     */

void rgmp_session_init(struct rgmp_session *s, const struct rgmp_limits *lim, bool strict)
{
    memset(s, 0, sizeof *s);
    rgmp_limits_or_default(lim, &s->limits);
    s->strict = strict;
}

void rgmp_session_free(struct rgmp_session *s)
{
    for (size_t i = 0; i < s->n_devices; i++)
        rgmp_definition_free(s->devices[i]);
    free(s->devices);
    s->devices = NULL;
    s->n_devices = s->cap = 0;
}

static long session_index(const struct rgmp_session *s, uint32_t device_id)
{
    for (size_t i = 0; i < s->n_devices; i++)
        if (s->devices[i]->device_id == device_id) return (long)i;
    return -1;
}

struct rgmp_definition *rgmp_session_find(const struct rgmp_session *s, uint32_t device_id)
{
    long i = session_index(s, device_id);
    return i < 0 ? NULL : s->devices[i];
}

int rgmp_session_handle(struct rgmp_session *s, const struct rgmp_header *h, const void *payload,
                        struct rgmp_event *ev, struct xg_error *err)
{
    memset(ev, 0, sizeof *ev);
    int rc = rgmp_header_check(h, &s->limits, err);
    if (rc < 0) return rc;
    switch (h->msg_prefix) {
    case RGMP_MSG_DEFINITION: {
        struct rgmp_definition *def;
        rc = rgmp_definition_decode(payload, h->msg_len, &s->limits, &def, err);
        if (rc < 0) return rc;
        long i = session_index(s, def->device_id);
        if (i >= 0) { /* D3: a new session replaces the active one */
            rgmp_definition_free(s->devices[i]);
            s->devices[i] = def;
            ev->replaced = true;
        } else {
            if (s->n_devices == s->cap) {
                size_t cap = s->cap ? s->cap * 2 : 4;
                struct rgmp_definition **nd = realloc(s->devices, cap * sizeof *nd);
                if (!nd) {
                    rgmp_definition_free(def);
                    struct rgmp_loc l = rgmp_loc_none();
                    return rgmp_fail(err, -ENOMEM, &l, "out of memory");
                }
                s->devices = nd;
                s->cap = cap;
            }
            s->devices[s->n_devices++] = def;
        }
        ev->type = RGMP_EV_DEFINITION;
        ev->device_id = def->device_id;
        ev->def = def;
        return 0;
    }
    case RGMP_MSG_DATA: {
        struct rgmp_data_frame f;
        rc = rgmp_data_peek(payload, h->msg_len, &f, err);
        if (rc < 0) return rc;
        struct rgmp_definition *def = rgmp_session_find(s, f.device_id);
        rc = rgmp_data_decode(payload, h->msg_len, def, &f, err);
        if (rc < 0) return rc;
        rc = rgmp_group_check_timestamp(def, &f, s->strict, err);
        if (rc < 0) return rc;
        ev->type = rc == RGMP_OUT_OF_ORDER ? RGMP_EV_DROPPED : RGMP_EV_DATA;
        if (rc == RGMP_OUT_OF_ORDER) s->frames_out_of_order++;
        ev->device_id = f.device_id;
        ev->def = def;
        ev->frame = f;
        return 0;
    }
    default: { /* RGMP_MSG_DISCONNECT (rgmp_header_check allows nothing else) */
        uint32_t id;
        rc = rgmp_disconnect_decode(payload, h->msg_len, &id, err);
        if (rc < 0) return rc;
        long i = session_index(s, id);
        if (i < 0) {
            struct rgmp_loc l = rgmp_loc_none();
            l.has_device = true;
            l.device_id = id;
            return rgmp_fail(err, -EPROTO, &l,
                             "device_id = %" PRIu32 ": disconnect for a device with no active "
                             "definition (rule 21)",
                             id);
        }
        rgmp_definition_free(s->devices[i]);
        s->devices[i] = s->devices[--s->n_devices];
        ev->type = RGMP_EV_DISCONNECT;
        ev->device_id = id;
        return 0;
    }
    }
}
