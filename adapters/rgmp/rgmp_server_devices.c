/* `rgmp-server` devices (rgmp_server_priv.h): device ids and the definition frames of origin and
 * solved_hand devices, as described at the top of rgmp_server.c. Sends nothing and logs nothing:
 * rgmp_server.c sends the frames and logs the failures. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapters/rgmp/rgmp_server_priv.h"
#include "core/table/entity.h"

static uint32_t fnv1a(const char *t)
{
    uint32_t h = 2166136261u;
    for (; *t; t++) {
        h ^= (uint8_t)*t;
        h *= 16777619u;
    }
    return h;
}

/* true when a current device other than `self` (an origin or a hand_dev) has device_id id */
static bool device_id_taken(const struct rgmp_server *s, uint32_t id, const void *self)
{
    for (int k = 0; k < XG_MAX_ADAPTERS; k++)
        if ((const void *)&s->origins[k] != self && s->origins[k].def &&
            s->origins[k].device_id == id)
            return true;
    for (int k = 0; k < MAX_HANDS; k++)
        if ((const void *)&s->hands[k] != self && s->hands[k].used && s->hands[k].device_id == id)
            return true;
    return false;
}

uint32_t rgmp_server_device_id(const struct rgmp_server *s, const char *key, const void *self)
{
    uint32_t id = fnv1a(key);
    while (device_id_taken(s, id, self))
        id++;
    return id;
}

/* Encode def as a Definition frame: *frame (malloc'ed) and *len; the JSON above max_json bytes
 * (0: no limit) is refused with -EMSGSIZE, naming n_entities. */
static int encode_frame(const struct rgmp_definition *def, size_t max_json, size_t n_entities,
                        uint8_t **frame_out, size_t *len, struct xg_error *err)
{
    char *json = NULL;
    size_t jlen = 0;
    int rc = rgmp_definition_to_json(def, &json, &jlen, err);
    free(json);
    if (rc < 0) return rc;
    if (max_json && jlen > max_json)
        return xg_error_set(err, -EMSGSIZE,
                            "definition of %zu entities is %zu bytes, above the 1 MiB clients "
                            "accept (D8)",
                            n_entities, jlen);
    size_t cap = jlen + RGMP_HEADER_LEN;
    uint8_t *frame = malloc(cap);
    if (!frame) return -ENOMEM;
    struct xg_writer w;
    xg_writer_init(&w, frame, cap);
    rc = rgmp_encode_definition(&w, def, err);
    if (rc < 0) {
        free(frame);
        return rc;
    }
    *frame_out = frame;
    *len = w.len;
    return 0;
}

int rgmp_server_origin_frame(const struct xg_adapter *a, const struct rgmp_server *s,
                             const struct origin *o, struct rgmp_definition *def, uint8_t **frame,
                             size_t *len, struct xg_error *err)
{
    int rc = 0;
    for (size_t k = 0; k < o->n && rc >= 0; k++) {
        if (k % ENTITIES_PER_GROUP == 0) {
            char gname[32];
            snprintf(gname, sizeof gname, k ? "poses%zu" : "poses", k / ENTITIES_PER_GROUP);
            rc = rgmp_definition_add_group(def, gname, a->rate_hz, err);
            if (rc < 0) break;
        }
        const struct xg_entity *e = xg_table_get(a->table, o->ids[k]);
        char fallback[32];
        snprintf(fallback, sizeof fallback, "entity-%" PRIu32, o->ids[k]);
        const char *tf = e ? xg_entity_name(e) : fallback;
        static const char *const types[] = {"FLOAT[7]", "FLOAT[3]", "FLOAT[3]"};
        static const char *const measures[] = {"TRANSFORM", "LINEAR_VELOCITY", "ANGULAR_VELOCITY"};
        for (int m = 0; m < 3 && rc >= 0; m++) {
            struct rgmp_entry_spec spec = {.data_type = types[m],
                                           .measure_type = measures[m],
                                           .target_frame = tf,
                                           .reference_frame = s->reference_frame};
            rc = rgmp_definition_add_stream(def, def->n_groups - 1, &spec, err);
        }
    }
    if (rc < 0) return rc;
    return encode_frame(def, RGMP_MAX_DEFINITION_DEFAULT, o->n, frame, len, err);
}

int rgmp_server_hand_frame(const struct hand_dev *h, double rate_hz, struct rgmp_definition **def,
                           uint8_t **frame, size_t *len, struct xg_error *err)
{
    *def = NULL;
    int rc = rgmp_hand_definition(h->device_id, h->side, h->source, rate_hz, def, err);
    if (rc == 0) rc = encode_frame(*def, 0, 0, frame, len, err);
    if (rc < 0) {
        rgmp_definition_free(*def);
        *def = NULL;
    }
    return rc;
}
