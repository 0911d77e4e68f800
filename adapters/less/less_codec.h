/* LESS (Live Entity State Stream) codec: pure encode/decode, no I/O, no allocation.
 *
 * Implements draft-ietf-mmox-less-protocol-00 §3 (text of draft-jwatte-less-protocol-01) with the
 * xrgate's binding LESS profile (its rules cited below as "P<n>"; documented in
 * docs/adapters/less.md).
 *
 * Layers, bottom up:
 *   - base types: INTEGER (varint), STRING, FLOAT16/32/64, OBJECT-ID, LIST, VECTOR, FIXED-BINARY,
 *     STANDALONE-VARIANT, VARIABLE-BINARY, UUID, and type descriptors (P6);
 *   - schemas: a type URI -> components -> properties with descriptors (P8), needed because
 *     CONTEXT-DEPENDENT-VARIANT values carry no type; `urn:xrgate:lods:pose:1` and the connection
 *     schema `urn:xrgate:less:connection:1` are built in;
 *   - messages 1..12 (12 = connection-control, P5) against a struct less_context that resolves
 *     type ids and entity ids to schemas;
 *   - packets: header (signature, timestamp, message-count), TCP framing (packet-length, plus a
 *     streaming splitter) and UDP framing (sequence, ack, 64-bit ack bitmask), HMAC-SHA-256/64
 *     signatures (P3, mbedtls), and the 64-packet ack window (draft §4, P13).
 *
 * Decoded strings, lists, binaries and variants live in a caller-provided struct less_arena
 * (a fixed buffer, typically on the stack); nothing is malloc'ed. Every function returns 0 (or
 * a documented positive value) or a negative errno: -EPROTO for malformed input (framing error,
 * draft §5), -EMSGSIZE for truncated input / full output, -ENOBUFS for a full arena, -EINVAL for
 * bad arguments, -EACCES for a signature that does not verify. With a non-NULL struct xg_error
 * the reason names the field, the offending value and the byte offset where known. */
#ifndef XG_LESS_CODEC_H
#define XG_LESS_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/util/error.h"
#include "core/util/wire.h"
#include "core/util/xmath.h"

/* ------------------------------------------------------------------------------------------ */
/* Limits                                                                                      */

/** Longest INTEGER accepted by the decoders (P1). */
#define LESS_INT_MAX_BYTES 10
/** Deepest nesting of type descriptors / values (LIST of LIST ..., variants in variants). */
#define LESS_MAX_DEPTH 8
/** Longest component-id-path carried in a message. */
#define LESS_MAX_PATH 8
/** Largest VECTOR / FIXED-BINARY count accepted in a descriptor (schema or wire). */
#define LESS_MAX_COUNT 65536
/** Signature size in bytes (P3). */
#define LESS_SIG_LEN 8
/** Default maximum UDP datagram (P9). */
#define LESS_UDP_DEFAULT_MTU 1200
/** Session key size bounds in bytes (P3). */
#define LESS_KEY_MIN 16
#define LESS_KEY_MAX 64

/* ------------------------------------------------------------------------------------------ */
/* Scratch arena for decoded data                                                              */

/** Bump allocator over a caller-owned buffer; decoded values point into it (and, for binary
 *  data, into the input buffer), so both must outlive the decoded message. */
struct less_arena {
    uint8_t *buf; /* borrowed */
    size_t cap;
    size_t used;
};

/** Start an arena over `buf` of `cap` bytes (borrowed). */
void less_arena_init(struct less_arena *a, void *buf, size_t cap);
/** Forget everything allocated (pointers into the arena become invalid). */
static inline void less_arena_reset(struct less_arena *a)
{
    a->used = 0;
}
/** `n` bytes aligned for any type, or NULL when the arena is full. */
void *less_arena_alloc(struct less_arena *a, size_t n);

/* ------------------------------------------------------------------------------------------ */
/* INTEGER (draft §3 pseudo-code; decoder per P1 / wire-rules §4.1)                            */

/** Append `v` in the draft's canonical INTEGER form (1..10 bytes). Returns 0 or -EMSGSIZE. */
int less_put_int(struct xg_writer *w, int64_t v);
/** Append `v` in the unsigned form (flag 0x80 above 127; used for counts, lengths, STRING
 *  elements and the 64-bit ack bitmask, P1/P11). Returns 0 or -EMSGSIZE. */
int less_put_uint(struct xg_writer *w, uint64_t v);
/** Encoded size in bytes of less_put_int(v) / less_put_uint(v). */
size_t less_int_size(int64_t v);
size_t less_uint_size(uint64_t v);
/** Read a signed INTEGER (int64). Accepts non-canonical forms (e.g. `85 00` = 5); rejects more
 *  than 10 bytes and values outside int64 with -EPROTO, truncation with -EMSGSIZE. `what` names
 *  the field in the error message. */
int less_get_int(struct xg_reader *r, int64_t *out, const char *what, struct xg_error *err);
/** Read an unsigned INTEGER (up to UINT64_MAX); the negative form (first byte 0xC0..0xFF) is
 *  rejected with -EPROTO (P11). */
int less_get_uint(struct xg_reader *r, uint64_t *out, const char *what, struct xg_error *err);

/* ------------------------------------------------------------------------------------------ */
/* Types and values                                                                            */

/** Type codes (draft §3 table), serialized as INTEGER. */
enum less_type_code {
    LESS_T_NULL = 0,
    LESS_T_OBJECT_ID = 1,
    LESS_T_INTEGER = 2,
    LESS_T_STRING = 3,
    LESS_T_FLOAT16 = 4,
    LESS_T_FLOAT32 = 5,
    LESS_T_FLOAT64 = 6,
    LESS_T_LIST = 7,      /* + element descriptor */
    LESS_T_VECTOR = 8,    /* + count + element descriptor (P6) */
    LESS_T_VARIANT = 9,   /* STANDALONE-VARIANT: descriptor, data length, data */
    LESS_T_VARBIN = 10,   /* VARIABLE-BINARY: length + bytes */
    LESS_T_FIXEDBIN = 11, /* FIXED-BINARY + count */
    LESS_T_UUID = 12,     /* 16 bytes, RFC 4122 textual order */
};

/** A type descriptor (P6): `code`, `count` for VECTOR / FIXED-BINARY, `elem` for LIST / VECTOR.
 *  Schemas use static descriptors; decoded ones live in the arena. */
struct less_type {
    uint8_t code;                 /* enum less_type_code */
    uint32_t count;               /* VECTOR elements / FIXED-BINARY bytes, else 0 */
    const struct less_type *elem; /* LIST / VECTOR element type, else NULL */
};

/** Printable name of a type code ("FLOAT32"), "?" when unknown. */
const char *less_type_name(unsigned code);
/** Structural equality of two descriptors. */
bool less_type_equal(const struct less_type *a, const struct less_type *b);

/** A value of a known type. The union member follows `type->code`:
 *  OBJECT-ID / INTEGER -> i; FLOAT16/32/64 -> f (FLOAT16/32 rounded on encode);
 *  STRING -> str (UTF-8, `len` bytes, NUL-terminated copy when decoded);
 *  VARIABLE-/FIXED-BINARY -> bin (FIXED: len must equal type->count);
 *  UUID -> uuid; LIST / VECTOR -> list (VECTOR: count must equal type->count);
 *  STANDALONE-VARIANT -> variant (the inner value, which carries its own type). NULL: nothing.
 *  All pointers are borrowed. */
struct less_value {
    const struct less_type *type;
    union {
        int64_t i;
        double f;
        struct {
            const char *p;
            size_t len;
        } str;
        struct {
            const uint8_t *p;
            size_t len;
        } bin;
        uint8_t uuid[16];
        struct {
            const struct less_value *items;
            size_t count;
        } list;
        const struct less_value *variant;
    } u;
};

/** Append the descriptor `t` (code then parameters, recursively, P6). -EINVAL for a malformed
 *  descriptor (unknown code, depth > LESS_MAX_DEPTH, count > LESS_MAX_COUNT). */
int less_put_type(struct xg_writer *w, const struct less_type *t, struct xg_error *err);
/** Read a descriptor into the arena. -EPROTO on an unknown code / too deep / count too big. */
int less_get_type(struct xg_reader *r, struct less_arena *a, const struct less_type **out,
                  struct xg_error *err);
/** Append the data of `v` as type `t` (CONTEXT-DEPENDENT-VARIANT: data only). `v->type`, when
 *  set, must equal `t` (else -EINVAL). STRING must be valid UTF-8 without NUL bytes. */
int less_put_value(struct xg_writer *w, const struct less_type *t, const struct less_value *v,
                   struct xg_error *err);
/** Read the data of a value of type `t` into `v` (strings/lists/variants in the arena, binary
 *  data borrowed from the reader's buffer). Counts and lengths larger than the bytes left,
 *  negative unsigned fields, STRING elements > 255, invalid UTF-8 or NUL in a STRING, and a
 *  variant whose data length does not match its content are -EPROTO. */
int less_get_value(struct xg_reader *r, const struct less_type *t, struct less_arena *a,
                   struct less_value *v, struct xg_error *err);
/** STANDALONE-VARIANT: descriptor of `v->type`, byte length of the data, data (P6). */
int less_put_variant(struct xg_writer *w, const struct less_value *v, struct xg_error *err);
int less_get_variant(struct xg_reader *r, struct less_arena *a, struct less_value *v,
                     struct xg_error *err);

/** STRING helpers (P2): length in bytes, then each byte as an unsigned INTEGER 0..255. The
 *  decoded string is a NUL-terminated copy in the arena. */
int less_put_string(struct xg_writer *w, const char *s, size_t len, struct xg_error *err);
int less_get_string(struct xg_reader *r, struct less_arena *a, const char **s, size_t *len,
                    struct xg_error *err);

/** Shared descriptors for the scalar types (and VECTOR(3|4, FLOAT32) of the pose schema). */
extern const struct less_type less_type_null, less_type_object_id, less_type_integer,
    less_type_string, less_type_float16, less_type_float32, less_type_float64, less_type_variant,
    less_type_varbin, less_type_uuid, less_type_vec3f, less_type_vec4f;

/* ------------------------------------------------------------------------------------------ */
/* Schemas (P8)                                                                                */

/** A property: its id is its index in the component. */
struct less_property {
    const char *name;
    struct less_type type;
};

/** A component (LODS "interface"): its id is its index in the schema. Also used for the
 *  property sets of interactions (P7). */
struct less_component {
    const char *name;
    const struct less_property *props;
    size_t n_props;
};

/** An object type schema: URI, components, and the interactions it declares (interaction-id =
 *  index; the pose schema declares none). Methods are not described: method-invocation
 *  arguments are standalone variants and need no schema. */
struct less_schema {
    const char *uri;
    const struct less_component *components;
    size_t n_components;
    const struct less_component *interactions;
    size_t n_interactions;
};

/** Pose schema property ids (component 0) of `urn:xrgate:lods:pose:1` (P8). */
enum less_pose_prop {
    LESS_POSE_NAME = 0,             /* STRING */
    LESS_POSE_KIND = 1,             /* INTEGER, enum less_pose_kind */
    LESS_POSE_POSITION = 2,         /* VECTOR(3, FLOAT32), metres */
    LESS_POSE_VELOCITY = 3,         /* VECTOR(3, FLOAT32), m/s */
    LESS_POSE_ORIENTATION = 4,      /* VECTOR(4, FLOAT32), x y z w */
    LESS_POSE_ANGULAR_VELOCITY = 5, /* VECTOR(3, FLOAT32), rad/s, world frame */
    LESS_POSE_ACTIVE = 6,           /* INTEGER 0/1 */
    LESS_POSE_ORIGIN = 7,           /* STRING, gateway id + adapter (loop prevention) */
    LESS_POSE_SAMPLE_TIME = 8,      /* INTEGER, sender timestamp quanta */
    LESS_POSE_N_PROPS = 9
};

enum less_pose_kind {
    LESS_KIND_OBJECT = 0,
    LESS_KIND_HEAD = 1,
    LESS_KIND_LEFT_HAND = 2,
    LESS_KIND_RIGHT_HAND = 3,
    LESS_KIND_CONTROLLER = 4,
    LESS_KIND_RIGID_BODY = 5
};

/** Connection schema property ids (P5). */
enum less_conn_prop {
    LESS_CONN_SCHEMA = 0,     /* STRING, schema/version */
    LESS_CONN_FIRST_SEQ = 1,  /* INTEGER, first UDP sequence number */
    LESS_CONN_QUANTUM_NS = 2, /* INTEGER, timestamp quantum in ns (1000) */
    LESS_CONN_KEY_ID = 3,     /* STRING */
    LESS_CONN_RATE_HZ = 4,    /* INTEGER, requested update rate */
    LESS_CONN_N_PROPS = 5
};

#define LESS_POSE_URI "urn:xrgate:lods:pose:1"
#define LESS_CONNECTION_URI "urn:xrgate:less:connection:1"

/** The built-in schemas (static, never freed). The connection schema has one component 0 whose
 *  properties are those of enum less_conn_prop. */
const struct less_schema *less_pose_schema(void);
const struct less_schema *less_connection_schema(void);

/** Check a schema loaded from elsewhere: URI set, every descriptor well formed (known codes,
 *  LIST/VECTOR with an element, counts <= LESS_MAX_COUNT, depth <= LESS_MAX_DEPTH). -EINVAL. */
int less_schema_validate(const struct less_schema *s, struct xg_error *err);

/* ------------------------------------------------------------------------------------------ */
/* Messages (draft §3, P5, P7)                                                                 */

enum less_msg_code {
    LESS_MSG_INTRODUCE_TYPE = 1,
    LESS_MSG_SUBSCRIBE_TYPE = 2,
    LESS_MSG_UNSUBSCRIBE_TYPE = 3,
    LESS_MSG_INTRODUCE_ENTITY = 4,
    LESS_MSG_REMOVE_ENTITY = 5,
    LESS_MSG_UPDATE_ENTITY = 6,
    LESS_MSG_REQUEST_ENTITY = 7,
    LESS_MSG_METHOD_INVOCATION = 8,
    LESS_MSG_METHOD_RESULT = 9,
    LESS_MSG_INTERACTION = 10,
    LESS_MSG_TWEAK_ENTITY = 11,
    LESS_MSG_CONNECTION_CONTROL = 12, /* xrgate code (P5) */
};

/** Printable message name ("update-entity"), "?" when unknown. */
const char *less_msg_name(unsigned code);

/** component-id-path: `len` component ids (len <= LESS_MAX_PATH). */
struct less_path {
    size_t len;
    int64_t ids[LESS_MAX_PATH];
};

/** property-value: property id + CONTEXT-DEPENDENT-VARIANT value. */
struct less_prop_value {
    int64_t property_id;
    struct less_value value;
};

/** property-value-list. */
struct less_prop_list {
    const struct less_prop_value *items;
    size_t count;
};

/** component-property-value-list: one component id + its properties. */
struct less_comp_values {
    int64_t component_id;
    struct less_prop_list props;
};

/** component-property-value-list-list. */
struct less_comp_values_list {
    const struct less_comp_values *items;
    size_t count;
};

/** component-property-id-list of subscribe-type: path + property ids (an empty list subscribes
 *  to no property, P15). */
struct less_comp_subscription {
    struct less_path path;
    const int64_t *property_ids;
    size_t count;
};

/** One decoded / to-be-encoded message. Pointers are borrowed (arena or caller). */
struct less_msg {
    enum less_msg_code code;
    union {
        struct {
            int64_t typeid;
            const char *uri;
            size_t uri_len;
        } introduce_type;
        struct {
            int64_t typeid;
            const struct less_comp_subscription *components;
            size_t count;
        } subscribe_type;
        struct {
            int64_t typeid;
        } unsubscribe_type;
        struct {
            int64_t typeid;
            int64_t entity_id;
            struct less_comp_values_list components;
        } introduce_entity;
        struct {
            int64_t entity_id;
        } remove_entity, request_entity;
        struct {
            int64_t entity_id;
            struct less_comp_values_list components;
        } update_entity;
        struct {
            int64_t request_id;
            int64_t entity_id;
            struct less_path path;
            int64_t property_id;
            const struct less_value *args; /* standalone variants (exactly one list, P7) */
            size_t argc;
        } method_invocation;
        struct {
            int64_t request_id;
            int64_t status; /* 0 ok; else an HTTP-like code and a STRING return value */
            struct less_value ret;
        } method_result;
        struct {
            int64_t interaction_id;
            struct less_prop_list props;
        } interaction;
        struct {
            int64_t entity_id;
            struct less_path path;
            int64_t property_id;
            struct less_value value;
        } tweak_entity;
        struct {
            struct less_prop_list props;
        } connection_control;
    } u;
};

/** How messages find the schemas of context-dependent values. "Sender" is whoever produced the
 *  packet (the peer when decoding, us when encoding); the adapter keeps the tables. A callback
 *  returns NULL / non-zero when the id is unknown, which is a framing error (P8, P16).
 *    - sender_type:   typeids introduced by the sender (introduce-entity);
 *    - receiver_type: typeids introduced by the receiver (subscribe-type, unsubscribe-type);
 *    - sender_entity_type / receiver_entity_type: entity id -> typeid of entities introduced by
 *      the sender (update-entity) / the receiver (tweak-entity);
 *    - interaction_schema: schema whose `interactions` define interaction ids (NULL: none);
 *    - connection_schema: NULL means less_connection_schema().
 *  Messages that need no schema (1, 5, 7, 8, 9) never call back. Lookups happen while a message
 *  is decoded, so an entity introduced earlier in the same packet must already resolve (the
 *  adapter records introductions as it decodes, and applies nothing until the whole packet has
 *  decoded, P14). */
struct less_context {
    const struct less_schema *(*sender_type)(void *user, int64_t typeid);
    const struct less_schema *(*receiver_type)(void *user, int64_t typeid);
    int (*sender_entity_type)(void *user, int64_t entity_id, int64_t *typeid);
    int (*receiver_entity_type)(void *user, int64_t entity_id, int64_t *typeid);
    const struct less_schema *interaction_schema;
    const struct less_schema *connection_schema;
    void *user;
};

/** Append one message (code + fields). Values are checked against the schema (unknown
 *  component / property, type mismatch: -EINVAL). Returns 0, -EINVAL or -EMSGSIZE; on failure
 *  the writer is left exactly as it was (same len, err 0), so a caller filling a datagram can
 *  stop at the first message that does not fit. less_put_value / less_put_variant and the
 *  frame encoders behave the same way. */
int less_encode_msg(struct xg_writer *w, const struct less_context *ctx, const struct less_msg *m,
                    struct xg_error *err);
/** Read one message. Unknown message codes, typeids, entity ids (for values), components or
 *  properties, bad values and path lengths > LESS_MAX_PATH are -EPROTO (draft §5). Schema-
 *  bound paths (subscribe, tweak) must have length 1 (P16). */
int less_decode_msg(struct xg_reader *r, const struct less_context *ctx, struct less_arena *a,
                    struct less_msg *m, struct xg_error *err);

/* ------------------------------------------------------------------------------------------ */
/* Pose entity state <-> property-value-list of `urn:xrgate:lods:pose:1` component 0           */

/** Bit for property `id` in struct less_pose.present. */
#define LESS_POSE_BIT(id) (1u << (id))
#define LESS_POSE_ALL ((1u << LESS_POSE_N_PROPS) - 1)

/** The pose schema's properties as C values (P8). Bit LESS_POSE_BIT(id) of `present` says which
 *  fields are set. Vectors are in the wire frame and units (metres, m/s, rad/s world frame);
 *  orientation is a Hamilton quaternion x y z w, as received (not renormalised). FLOAT32 on
 *  the wire, so encoding rounds to float. Strings are borrowed (UTF-8, not NUL-terminated
 *  unless decoded). */
struct less_pose {
    uint32_t present;
    const char *name;
    size_t name_len;
    int64_t kind; /* enum less_pose_kind; other values are passed through */
    struct xg_vec3 position;
    struct xg_vec3 velocity;
    struct xg_quat orientation;
    struct xg_vec3 angular_velocity;
    int64_t active; /* 0 or 1 */
    const char *origin;
    size_t origin_len;
    int64_t sample_time; /* sender timestamp quanta */
};

/** Storage for the property-value-list built by less_pose_to_props (no allocation). */
struct less_pose_props {
    struct less_prop_value items[LESS_POSE_N_PROPS];
    struct less_value elems[3 + 3 + 4 + 3];
    struct less_prop_list list; /* points into items */
};

/** Build the property-value-list for the properties in `p->present & mask`, in id order.
 *  `out->list` borrows `out` and `p`'s strings. */
void less_pose_to_props(const struct less_pose *p, uint32_t mask, struct less_pose_props *out);

/** Apply a decoded property-value-list (of pose component 0) to `p`: set each field and its
 *  `present` bit; fields not in the list are left as they were (update-entity semantics).
 *  -EPROTO when a value does not have the pose schema's type, a float is not finite, or
 *  `active` is not 0/1; `p` is unchanged then. */
int less_pose_from_props(const struct less_prop_list *l, struct less_pose *p, struct xg_error *err);

/* ------------------------------------------------------------------------------------------ */
/* Keys and signatures (P3)                                                                    */

/** A session key; len 0 means `signature: none` (all-zero signatures). */
struct less_key {
    uint8_t bytes[LESS_KEY_MAX];
    size_t len;
};

/** Parse a key file's text: hex digits, whitespace ignored, 16..64 bytes. -EINVAL with the
 *  offending character/length. */
int less_key_from_hex(const char *text, size_t len, struct less_key *key, struct xg_error *err);

/** HMAC-SHA-256 over `frame[0..len)` with the 8 bytes at `sig_off` taken as zero, truncated to
 *  its first 8 bytes (as they come out of HMAC). With key->len == 0 (or key NULL) the result is
 *  all zero. Returns 0 or -EINVAL (sig_off + 8 > len, mbedtls failure). */
int less_sign(const struct less_key *key, const uint8_t *frame, size_t len, size_t sig_off,
              uint8_t sig[LESS_SIG_LEN], struct xg_error *err);
/** Compare the signature at `frame + sig_off` with the expected one in constant time.
 *  Returns 0 or -EACCES. */
int less_verify(const struct less_key *key, const uint8_t *frame, size_t len, size_t sig_off,
                struct xg_error *err);

/* ------------------------------------------------------------------------------------------ */
/* Framing and packets                                                                         */

/** A decoded frame: framing fields, header, and the (still encoded) messages. */
struct less_frame {
    /* UDP framing only */
    uint8_t seq;
    uint8_t ack_last;
    uint64_t ack_bitmask;
    /* header */
    uint8_t signature[LESS_SIG_LEN];
    int64_t timestamp; /* sender monotonic microseconds (P4) */
    uint64_t message_count;
    /* borrowed from the input frame */
    const uint8_t *messages;
    size_t messages_len;
    size_t packet_len; /* TCP: value of packet-length */
    size_t sig_off;    /* offset of the signature in the frame */
    bool authentic;    /* the signature verified (valid even when decode failed later) */
};

/** TCP streaming splitter (P10): look at the `avail` bytes buffered so far. Returns 1 and sets
 *  *frame_len (packet-length field + packet) when a whole frame is there, 0 when more bytes are
 *  needed, or -EPROTO when the packet-length is malformed, negative, smaller than a header
 *  (9 bytes) or larger than `max_packet`. Never reads beyond `avail`, nor beyond the first
 *  LESS_INT_MAX_BYTES bytes of `buf` (the packet-length): only those need to be contiguous. */
int less_tcp_split(const uint8_t *buf, size_t avail, size_t max_packet, size_t *frame_len,
                   struct xg_error *err);

/** Decode one TCP frame (exactly `len` bytes as delimited by less_tcp_split): packet-length,
 *  then verify the signature (-EACCES), then timestamp and message-count. */
int less_tcp_decode(const uint8_t *frame, size_t len, const struct less_key *key,
                    struct less_frame *f, struct xg_error *err);
/** Decode one UDP datagram: sequence, ack-last, ack-previous-bitmask (unsigned INTEGER), then the
 *  signature (-EACCES; f->authentic false), then the header. A datagram over `mtu` bytes is
 *  -EMSGSIZE. If the header fails to parse after a good signature, f->authentic is true and
 *  f->seq valid (the packet is to be acknowledged and dropped, P14). */
int less_udp_decode(const uint8_t *dgram, size_t len, size_t mtu, const struct less_key *key,
                    struct less_frame *f, struct xg_error *err);

/** Append one signed TCP frame: packet-length, signature, timestamp, message-count and the
 *  `msgs_len` bytes of already encoded messages. */
int less_tcp_encode(struct xg_writer *w, const struct less_key *key, int64_t timestamp,
                    uint64_t message_count, const uint8_t *msgs, size_t msgs_len,
                    struct xg_error *err);
/** Append one signed UDP datagram. The writer capacity is the MTU. */
int less_udp_encode(struct xg_writer *w, const struct less_key *key, uint8_t seq, uint8_t ack_last,
                    uint64_t ack_bitmask, int64_t timestamp, uint64_t message_count,
                    const uint8_t *msgs, size_t msgs_len, struct xg_error *err);

/** Iterate over the messages of a decoded frame. */
struct less_msg_iter {
    struct xg_reader r;
    uint64_t left;
    uint64_t index;
};

void less_msg_iter_init(struct less_msg_iter *it, const struct less_frame *f);
/** Decode the next message: 1 with *m filled, 0 at the end (after checking that no bytes trail
 *  the last message, else -EPROTO), or a negative errno (the error names the message index). */
int less_msg_next(struct less_msg_iter *it, const struct less_context *ctx, struct less_arena *a,
                  struct less_msg *m, struct xg_error *err);

/* ------------------------------------------------------------------------------------------ */
/* UDP 64-packet ack window (draft §4, P13)                                                    */

/** Receive-side window: `last` is the highest sequence received (mod 256), bit i of `mask`
 *  acknowledges sequence last-1-i. */
struct less_ack_window {
    uint8_t last;
    uint64_t mask;
    bool any; /* `last` itself has been received (false right after less_ack_init) */
};

enum less_ack_result {
    LESS_ACK_NEW = 0,       /* first time seen: process it */
    LESS_ACK_DUPLICATE = 1, /* already recorded: drop (already acknowledged) */
    LESS_ACK_TOO_OLD = 2,   /* more than 64 behind `last` (or 128+ away): drop */
};

/** Start with ack-last = first_seq - 1 and an empty bitmask (P13). */
void less_ack_init(struct less_ack_window *w, uint8_t first_seq);
/** Record a received sequence number (serial arithmetic mod 256: up to 127 ahead is newer). */
enum less_ack_result less_ack_record(struct less_ack_window *w, uint8_t seq);
/** Receive side of the stale-packet rule (P4, P12, draft §4: "the timestamp in the header must
 *  be monotonically increasing", which is what tells a packet from one 256 sequence numbers
 *  earlier). Zero-initialise with less_rx_times_init(). */
struct less_rx_times {
    int64_t ts[256]; /* timestamp of the packet accepted under each sequence number */
    int64_t newest;  /* newest accepted timestamp (INT64_MIN: none) */
    int64_t floor;   /* newest timestamp of the accepted packets that left the window */
};

enum less_rx_class {
    LESS_RX_NEW = 0,       /* newer than `last` and newer in time: apply, the window moves */
    LESS_RX_LATE = 1,      /* a gap in the window filled in time order: apply, but its property
                              sets are older than the newest ones (P12: skip them) */
    LESS_RX_DUPLICATE = 2, /* already received: drop (already acknowledged) */
    LESS_RX_STALE = 3,     /* its timestamp is not newer than a packet sent before it (a replay
                              from an earlier lap of the 8-bit sequence, say): apply nothing;
                              acknowledged only when it is a gap inside the window */
};

void less_rx_times_init(struct less_rx_times *t);
/** Classify and record an authentic packet (sequence `seq`, header timestamp `ts`) in the ack
 *  window w. Serially newer sequence numbers must carry a timestamp newer than every accepted
 *  one, else they are STALE and do not move the window (with 8-bit numbers a packet 130 old looks
 *  126 newer); a gap behind `last` must be newer than the nearest accepted packet before it. */
enum less_rx_class less_rx_record(struct less_ack_window *w, struct less_rx_times *t, uint8_t seq,
                                  int64_t ts);
/** The ack fields to send. */
static inline void less_ack_fields(const struct less_ack_window *w, uint8_t *ack_last,
                                   uint64_t *mask)
{
    *ack_last = w->last;
    *mask = w->mask;
}
/** Sender side: does the peer's (ack_last, mask) acknowledge our sequence `seq`? True when
 *  seq == ack_last or it is 1..64 behind with its bit set. */
bool less_ack_covers(uint8_t ack_last, uint64_t mask, uint8_t seq);

#endif
