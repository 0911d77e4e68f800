/* `rgmp-server` adapter, private to its source files (rgmp_server.c: adapter ops, clients,
 * device membership and egress; rgmp_server_conf.c: configuration; rgmp_server_devices.c: device
 * ids and definition frames). The behaviour is described at the top of
 * rgmp_server.c; nothing outside adapters/rgmp includes this. */
#ifndef XG_RGMP_SERVER_PRIV_H
#define XG_RGMP_SERVER_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/net/transport.h"
#include "adapters/rgmp/rgmp_codec.h"
#include "adapters/rgmp/rgmp_solved_hand.h"
#include "core/adapter/adapter.h"
#include "core/table/egress_controls.h"
#include "core/util/log.h"
#include "core/net/timer.h"
#include "core/net/transport_server.h"
#include "mappings/frame.h"

#define ENTITIES_PER_GROUP 1000u
#define ENTITY_BYTES 52u /* 7 + 3 + 3 floats */
#define MAX_HANDS 64     /* solved_hand devices (one bit each in client.known_hands) */
#define MAX_HAND_MAPS 16

struct origin {
    uint32_t *ids; /* entity ids, ascending */
    size_t n, cap;
    uint32_t *new_ids; /* membership being rebuilt */
    size_t new_n, new_cap;
    char name[64];
    uint32_t device_id;
    struct rgmp_definition *def;
    uint8_t *def_frame; /* encoded definition frame */
    size_t def_len;
    uint64_t last_ts_us;
    bool dirty; /* an entity was updated since the last data frame */
    bool too_big_warned;
};

/* A solved_hand device (rgmp_solved_hand.h): one hand entity (`solved_hands`) or one of the
 * `hand_maps`, identified by its source (the entity's name, or "hand_maps[i]"). */
struct hand_dev {
    bool used;
    char side[8];                     /* "left" / "right" */
    char source[XG_NAME_MAX + 16];    /* device_info.source */
    uint32_t joint[RGMP_HAND_JOINTS]; /* entity ids, 0 = none (the wrist is never 0) */
    uint32_t device_id;
    struct rgmp_definition *def;
    uint8_t *def_frame;
    size_t def_len;
    uint64_t last_ts_us;
    bool dirty;
};

/* One entry of `hand_maps`: entity names per OpenXR joint (NULL = not mapped). */
struct hand_map {
    char side[8];
    char *joint[RGMP_HAND_JOINTS];
};

struct client {
    struct bufferevent *bev;
    char peer[64];
    uint64_t known;         /* origins whose definition this client has */
    uint64_t known_hands;   /* solved_hand devices whose definition this client has */
    uint64_t pending;       /* origins whose data frames were skipped (slow client) */
    uint64_t pending_hands; /* solved_hand devices whose data frames were skipped */
    int64_t slow_since;     /* slow-client state (xg_slow_decide) */
    bool skip;              /* this drain skips the client (above max_output_bytes) */
    uint64_t skipped;
    struct client *next;
};

struct rgmp_server {
    struct xg_egress_controls controls; /* RGMP v2 carries no buttons/analogs */
    char listen[256];
    int64_t max_clients, max_output, slow_timeout_ms;
    char reference_frame[64];
    const struct xg_frame *frame;
    struct xg_tserver *ts; /* listener, client cap, slow-client policy (transport_server.h) */
    struct xg_timer *kick; /* core/net/timer.h; drains after an entity event when rate_hz is 0 */
    char bound[128];
    struct client *clients;
    int n_clients;
    struct origin origins[XG_MAX_ADAPTERS];
    bool solved_hands; /* every left_hand / right_hand entity is also a solved_hand device */
    struct hand_map maps[MAX_HAND_MAPS];
    int n_maps;
    struct hand_dev hands[MAX_HANDS];
    uint32_t *hand_ids; /* hand entities seen by the last membership rebuild */
    size_t n_hand_ids, cap_hand_ids;
    bool hands_full_warned;
    bool members_dirty;
    uint8_t *buf; /* scratch for data frames */
    size_t buf_cap;
    uint64_t frames_sent, frames_skipped, frames_coalesced, definitions_sent, disconnects_sent;
    /* lines a client can trigger, one rate limiter per kind (core/util/log.h) */
    struct xg_log_limit lim_conn;
};

/** Read and check the configuration keys (listed at the top of rgmp_server.c) into s, with their
 *  defaults; s->frame must be set (the reference_frame default follows it). 0, or a negative
 *  errno with err naming the key and the value (-ENOMEM on allocation failure). */
int rgmp_server_conf_read(struct rgmp_server *s, const struct xg_conf *conf, struct xg_error *err);

/** A device_id for key (an origin's name, or "solved_hand/<source>"): FNV-1a of key, stable across
 *  restarts, incremented until no current device other than self (an origin or a hand_dev of s)
 *  has it. */
uint32_t rgmp_server_device_id(const struct rgmp_server *s, const char *key, const void *self);

/** Fill def (owned by the caller, empty) with origin o's groups of ENTITIES_PER_GROUP entities
 *  (three streams each, relative to s->reference_frame, at a->rate_hz) and encode it as a
 *  Definition frame: *frame (malloc'ed, the caller frees it) of *len bytes. Errors: negative
 *  errno with err set (-EMSGSIZE: the JSON is above the 1 MiB clients accept, D8), nothing
 *  allocated. */
int rgmp_server_origin_frame(const struct xg_adapter *a, const struct rgmp_server *s,
                             const struct origin *o, struct rgmp_definition *def, uint8_t **frame,
                             size_t *len, struct xg_error *err);

/** The definition (*def) and its encoded Definition frame (*frame, *len) of solved_hand device h
 *  at rate_hz (rgmp_solved_hand.h); both owned by the caller. Errors: negative errno (err set
 *  when the codec reports it), nothing allocated. */
int rgmp_server_hand_frame(const struct hand_dev *h, double rate_hz, struct rgmp_definition **def,
                           uint8_t **frame, size_t *len, struct xg_error *err);

#endif
