/* Egress object IDs of the `rtp` adapter: entity name -> game-state objectID (and the
 * GameControl1 button state last sent for it).
 *
 * IDs are 1, 2, 3... in the order entities are first sent and are never reused within a process.
 * A record lives while its entity does: the adapter removes it when the table reports the entity
 * gone (expired or removed; issue 22 item 9), so churn of short-lived names costs no memory. An
 * entity that comes back under the same name gets a new objectID (receivers time the old one out).
 * Single-threaded (the reactor's thread). */
#ifndef XG_RTP_OIDS_H
#define XG_RTP_OIDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RTP_OID_BUCKETS 1024

/** One entity's egress record. Owned by the map; valid until rtp_oids_remove() of its name. */
struct rtp_oid {
    struct rtp_oid *next;
    uint64_t oid;             /* game-state objectID */
    int64_t buttons;          /* last GameControl1 mask sent */
    uint16_t buttons_changed; /* Time1 of its last change */
    bool sent_buttons;
    char name[]; /* entity name */
};

struct rtp_oids {
    struct rtp_oid *b[RTP_OID_BUCKETS];
    uint64_t next_oid; /* next objectID to assign (starts at 1) */
    size_t n;          /* live records */
};

/** Empty map; the first objectID assigned is 1. */
void rtp_oids_init(struct rtp_oids *m);
/** The record of `name`, created with the next objectID if there is none; NULL on ENOMEM. */
struct rtp_oid *rtp_oids_get(struct rtp_oids *m, const char *name);
/** Forget `name` (its entity is gone). Returns true if it had a record. */
bool rtp_oids_remove(struct rtp_oids *m, const char *name);
/** Free every record. */
void rtp_oids_free(struct rtp_oids *m);

#endif
