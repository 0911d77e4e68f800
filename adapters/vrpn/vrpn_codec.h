/* VRPN 07.38 wire codec: pure encode/decode of bytes <-> structs, no I/O, no libevent.
 *
 * Implements VRPN 07.38 as mainline VRPN (vrpn_Connection.C) puts it on the wire; "§n" below are
 * sections of the project's VRPN wire notes, the behaviour is documented in docs/adapters/vrpn.md.
 * Everything on the wire is big-endian; doubles are IEEE binary64; quaternions are x, y, z, w (w
 * scalar, identity 0,0,0,1). A message is a 24-byte header plus a body padded to a multiple of 8;
 * the header's `length` is 24 + the *unpadded* body length, and the padding bytes are stale garbage
 * that is skipped by length and never checked (§5.2).
 *
 * Conventions: every function returns 0 (or a documented non-negative value) on success and a
 * negative errno on failure (-EPROTO for a protocol violation, -EMSGSIZE for a truncated input or a
 * full output buffer, -EINVAL for a bad argument, -ENOMEM), filling the optional `struct xg_error`
 * with a message naming the field and the offending value. Decoders never read past the end of
 * their input and never allocate; only the id map (vrpn_id_map_*) allocates, when names are
 * registered. Encoders append to a caller-owned struct xg_writer and write zero padding. */
#ifndef XG_VRPN_CODEC_H
#define XG_VRPN_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/util/error.h"
#include "core/util/wire.h"
#include "core/util/xmath.h"

/* ---- Limits and constants (§3, §4, §8) ---- */

#define VRPN_COOKIE_SIZE 24              /**< magic cookie, both directions (§4) */
#define VRPN_HEADER_SIZE 24              /**< message header incl. sequence number (§5.1) */
#define VRPN_ALIGN 8                     /**< body padding alignment (§3) */
#define VRPN_CNAME_MAX 100               /**< sender/type name size incl. NUL (vrpn_CNAME, §3) */
#define VRPN_MAX_SENDERS 2000            /**< sender ids per connection and side (§3) */
#define VRPN_MAX_TYPES 2000              /**< type ids per connection and side (§3) */
#define VRPN_MAX_ANALOG 128              /**< analog channels (§3) */
#define VRPN_MAX_BUTTONS 256             /**< buttons (§3) */
#define VRPN_UDP_MAX 1472                /**< largest data datagram VRPN sends (§3, §6.3) */
#define VRPN_TCP_BUFLEN 64000            /**< VRPN output buffer: no message can be larger (§3) */
#define VRPN_MAX_MESSAGE VRPN_TCP_BUFLEN /**< largest accepted padded message, header included */
#define VRPN_TEXT_PAYLOAD 1032 /**< text message body size mainline always sends (§8.6) */
#define VRPN_TEXT_MAX 1024     /**< text string capacity incl. NUL (§8.6) */
#define VRPN_LOB_MAX 150       /**< largest accepted UDP connection request datagram (§6.3) */

/** The 16-byte magic and the full version this codec speaks (§4). */
#define VRPN_MAGIC "vrpn: ver. 07.38"
#define VRPN_MAGIC_MAJOR_PREFIX "vrpn: ver. 07."

/** System message types (negative type ids, §5.3–§5.6). */
enum vrpn_system_type {
    VRPN_SENDER_DESCRIPTION = -1, /**< sender = id described, body = u32 n + name + NUL */
    VRPN_TYPE_DESCRIPTION = -2,   /**< sender = id described, body = u32 n + name + NUL */
    VRPN_UDP_DESCRIPTION = -3,    /**< sender = UDP port, body = IPv4 dotted string + NUL */
    VRPN_LOG_DESCRIPTION = -4,    /**< sender = log mode, body = i32 lin, i32 lout, names */
    VRPN_DISCONNECT_MESSAGE = -5, /**< log files only, empty body */
};

/** Names of the registered types and senders used by this codec (§8.7, exact spelling). */
#define VRPN_NAME_CONTROL "VRPN Control"
#define VRPN_TYPE_GOT_FIRST_CONNECTION "VRPN_Connection_Got_First_Connection"
#define VRPN_TYPE_GOT_CONNECTION "VRPN_Connection_Got_Connection"
#define VRPN_TYPE_DROPPED_CONNECTION "VRPN_Connection_Dropped_Connection"
#define VRPN_TYPE_DROPPED_LAST_CONNECTION "VRPN_Connection_Dropped_Last_Connection"
#define VRPN_TYPE_POS_QUAT "vrpn_Tracker Pos_Quat"
#define VRPN_TYPE_VELOCITY "vrpn_Tracker Velocity"
#define VRPN_TYPE_ACCELERATION "vrpn_Tracker Acceleration"
#define VRPN_TYPE_BUTTON_CHANGE "vrpn_Button Change"
#define VRPN_TYPE_BUTTON_STATES "vrpn_Button States"
#define VRPN_TYPE_ANALOG_CHANNEL "vrpn_Analog Channel"
#define VRPN_TYPE_DIAL "vrpn_Dial update"
#define VRPN_TYPE_PING "vrpn_Base ping_message"
#define VRPN_TYPE_PONG "vrpn_Base pong_message"
#define VRPN_TYPE_TEXT "vrpn_Base text_message"

/** The message types a gateway registers on every connection; the local type id of each is its
 *  index in vrpn_std_types[] (both roles). The first VRPN_T_CLIENT_COUNT are the types a mainline
 *  remote registers, in its order (fixtures *_c2s.bin, §8.7); a server also registers
 *  "vrpn_Button Alert". */
enum vrpn_std_type {
    VRPN_T_GOT_FIRST_CONNECTION = 0,
    VRPN_T_GOT_CONNECTION,
    VRPN_T_DROPPED_CONNECTION,
    VRPN_T_DROPPED_LAST_CONNECTION,
    VRPN_T_POS_QUAT,
    VRPN_T_VELOCITY,
    VRPN_T_ACCELERATION,
    VRPN_T_TO_ROOM,
    VRPN_T_UNIT_TO_SENSOR,
    VRPN_T_REQUEST_TO_ROOM,
    VRPN_T_REQUEST_UNIT_TO_SENSOR,
    VRPN_T_WORKSPACE,
    VRPN_T_REQUEST_WORKSPACE,
    VRPN_T_SET_UPDATE_RATE,
    VRPN_T_RESET_ORIGIN,
    VRPN_T_TEXT,
    VRPN_T_PING,
    VRPN_T_PONG,
    VRPN_T_ANALOG,
    VRPN_T_BUTTON_CHANGE,
    VRPN_T_BUTTON_STATES,
    VRPN_T_BUTTON_ADMIN,
    VRPN_T_DIAL,
    VRPN_T_CLIENT_COUNT,                       /**< types a client registers (0..22) */
    VRPN_T_BUTTON_ALERT = VRPN_T_CLIENT_COUNT, /**< server only */
    VRPN_T_COUNT,                              /**< types a server registers (0..23) */
};

/** Names of enum vrpn_std_type, indexed by it (exact §8.7 spelling). */
extern const char *const vrpn_std_types[VRPN_T_COUNT];

/* ---- Cookie (§4) ---- */

/** A decoded magic cookie. */
struct vrpn_cookie {
    int minor;          /**< the two minor-version digits as a number, -1 if not two digits */
    int log_mode;       /**< remote logging mode requested from us: 0 none, 1 in, 2 out, 3 both */
    bool minor_differs; /**< minor version is not "38": mainline only prints a note */
};

/** Append the 24-byte cookie "vrpn: ver. 07.38  <log_mode>" + 5 NULs (§4). log_mode must be 0..3
 *  (a gateway sends 0). Returns 0, -EINVAL (bad log_mode) or -EMSGSIZE (writer full). */
int vrpn_cookie_encode(struct xg_writer *w, int log_mode, struct xg_error *err);

/** Check a peer's cookie as mainline does (§4): exactly 24 bytes are needed (-EMSGSIZE if fewer);
 *  the text through the last '.' must be "vrpn: ver. 07." (any minor accepted, other major →
 *  -EPROTO); byte 18, the log mode, must be '0'..'3' (else -EPROTO "invalid log mode").
 *  Reads exactly VRPN_COOKIE_SIZE bytes; `out` may be NULL. */
int vrpn_cookie_decode(const uint8_t *buf, size_t len, struct vrpn_cookie *out,
                       struct xg_error *err);

/* ---- Header and framing (§5.1, §5.2, §3) ---- */

/** The 24-byte message header (§5.1). */
struct vrpn_header {
    uint32_t length;  /**< 24 + unpadded body length (decode: as read; encode: ignored) */
    uint32_t tv_sec;  /**< report time, wall clock seconds */
    uint32_t tv_usec; /**< microseconds */
    int32_t sender;   /**< sender id in the sending peer's numbering, or a system parameter */
    int32_t type;     /**< type id in the sending peer's numbering; negative = system message */
    uint32_t seq;     /**< per-channel sequence number (never validated by receivers) */
};

/** One framed message: header plus a borrowed view of its body. */
struct vrpn_msg {
    struct vrpn_header hdr;
    const uint8_t *body; /**< borrowed from the input buffer; hdr.length - 24 bytes */
    size_t body_len;     /**< unpadded body length */
    size_t wire_size;    /**< bytes the message occupies in its stream/datagram (padded) */
};

/** Wall-clock time of a header (tv_sec/tv_usec, the device's report time, §5.1) in ns since the
 *  Unix epoch. */
static inline int64_t vrpn_header_wall_ns(const struct vrpn_header *h)
{
    return (int64_t)h->tv_sec * INT64_C(1000000000) + (int64_t)h->tv_usec * 1000;
}

/** Set tv_sec/tv_usec from ns since the Unix epoch (truncated to µs; ns >= 0). */
static inline void vrpn_header_set_wall_ns(struct vrpn_header *h, int64_t ns)
{
    h->tv_sec = (uint32_t)(ns / INT64_C(1000000000));
    h->tv_usec = (uint32_t)((ns % INT64_C(1000000000)) / 1000);
}

/** Padded wire size of a message whose header says `length` (24 + ceil8(length - 24)). */
static inline size_t vrpn_padded_size(uint32_t length)
{
    return (size_t)VRPN_HEADER_SIZE +
           (((size_t)length - VRPN_HEADER_SIZE + (VRPN_ALIGN - 1)) & ~(size_t)(VRPN_ALIGN - 1));
}

/** Decode a 24-byte header. -EMSGSIZE if fewer than 24 bytes; -EPROTO if length < 24 or the
 *  padded size exceeds VRPN_MAX_MESSAGE. */
int vrpn_header_decode(const uint8_t *buf, size_t len, struct vrpn_header *h, struct xg_error *err);

/** TCP stream splitter: given the bytes buffered after the cookie, report whether one whole
 *  message (header + padded body) is available. Returns 1 and sets *wire_size to its padded size
 *  when it is, 0 when more bytes are needed (*wire_size = bytes needed in total if the header was
 *  readable, else 24), or -EPROTO when the header's length is < 24 or the message would exceed
 *  VRPN_MAX_MESSAGE (the connection must be dropped). Reads nothing past `len`. */
int vrpn_stream_check(const uint8_t *buf, size_t len, size_t *wire_size, struct xg_error *err);

/** Parse the whole message at the start of `buf` (as reported by vrpn_stream_check): header
 *  checks of vrpn_header_decode, and the padded message must fit in `len` (-EMSGSIZE). */
int vrpn_msg_parse(const uint8_t *buf, size_t len, struct vrpn_msg *m, struct xg_error *err);

/** UDP datagram iterator: parse the message at *off in a datagram of `len` bytes and advance *off.
 *  Returns 1 with *m filled, 0 at the end of the datagram, -EPROTO (bad length) or -EMSGSIZE
 *  (message truncated by the datagram end: messages never span datagrams, §6.3). A last message
 *  whose padding is cut off by the datagram end is accepted (the padding is meaningless). */
int vrpn_datagram_next(const uint8_t *dg, size_t len, size_t *off, struct vrpn_msg *m,
                       struct xg_error *err);

/** Append one message: header from h (length computed, h->length ignored; seq from *seq, which is
 *  then incremented, or h->seq when seq is NULL), the body bytes, and zero padding to 8.
 *  -EMSGSIZE if the writer is full or the message would exceed VRPN_MAX_MESSAGE. On error the
 *  writer keeps its sticky error and *seq is unchanged. */
int vrpn_encode_message(struct xg_writer *w, const struct vrpn_header *h, uint32_t *seq,
                        const void *body, size_t body_len, struct xg_error *err);

/* ---- System messages (§5.3–§5.6) ---- */

/** A decoded system message; which fields are set depends on `type`. */
struct vrpn_system_msg {
    int32_t type;              /**< enum vrpn_system_type */
    int32_t id;                /**< -1/-2: the describing peer's id being described */
    char name[VRPN_CNAME_MAX]; /**< -1/-2: the name (NUL-terminated); -3: the IPv4 host */
    uint16_t udp_port;         /**< -3: the peer's UDP data port */
    int32_t log_mode;          /**< -4: log mode (header sender field) */
    const char *log_in_name;   /**< -4: borrowed from the body, NUL-terminated */
    const char *log_out_name;  /**< -4: borrowed from the body, NUL-terminated */
};

/** Decode the body of a system message (m->hdr.type < 0). -EPROTO on: unknown system type
 *  (< -5); a description whose id is outside 0..1999, whose u32 name length n is 0 or > 100
 *  (VRPN_CNAME_MAX), whose body is not exactly 4 + n bytes or whose name is not NUL-terminated
 *  exactly at n-1; a UDP description whose port is not 1..65535 or whose body is not a 1..99 char
 *  string + NUL; a log description whose lengths disagree with the body; a non-empty disconnect. */
int vrpn_system_decode(const struct vrpn_msg *m, struct vrpn_system_msg *out, struct xg_error *err);

/** Append a SENDER_DESCRIPTION (type VRPN_SENDER_DESCRIPTION) or TYPE_DESCRIPTION: the header's
 *  sender field is `id`, the body u32 strlen(name)+1, name, NUL (§5.3). h supplies the time (and
 *  seq when seq is NULL); h->sender/type are ignored. -EINVAL for another type, an id outside
 *  0..1999 or a name of 0 or >= 100 chars. */
int vrpn_encode_description(struct xg_writer *w, const struct vrpn_header *h, uint32_t *seq,
                            int32_t type, int32_t id, const char *name, struct xg_error *err);

/** Append a UDP_DESCRIPTION: sender field = udp_port, body = host + NUL (§5.4). -EINVAL for port 0
 *  or an empty/too long (>= 100) host. */
int vrpn_encode_udp_description(struct xg_writer *w, const struct vrpn_header *h, uint32_t *seq,
                                uint16_t udp_port, const char *host, struct xg_error *err);

/** Append a LOG_DESCRIPTION: sender field = log_mode, body = i32 strlen(in), i32 strlen(out),
 *  in + NUL, out + NUL (§5.5). Names may be empty, not NULL. */
int vrpn_encode_log_description(struct xg_writer *w, const struct vrpn_header *h, uint32_t *seq,
                                int32_t log_mode, const char *in_name, const char *out_name,
                                struct xg_error *err);

/** Append a DISCONNECT message (type -5, empty body; log files only, §5.6). */
int vrpn_encode_disconnect(struct xg_writer *w, const struct vrpn_header *h, uint32_t *seq,
                           struct xg_error *err);

/* ---- UDP+TCP connection request datagram (§6.3) ---- */

/** A decoded connection request ("lob"): where the server must connect back over TCP. */
struct vrpn_lob {
    char host[VRPN_CNAME_MAX]; /**< letters, digits and dots only */
    uint16_t tcp_port;         /**< >= 1024 */
};

/** Append "<host> <tcp_port>" + NUL (16 bytes for "127.0.0.1 43459"). -EINVAL for a host that is
 *  empty, too long or not made of letters/digits/dots, or a port < 1024. */
int vrpn_lob_encode(struct xg_writer *w, const char *host, uint16_t tcp_port, struct xg_error *err);

/** Decode a connection request datagram: exactly one NUL, as its last byte; "<host> <port>" with
 *  host of 1..99 letters/digits/dots and a decimal port 1024..65535; at most VRPN_LOB_MAX bytes.
 *  -EPROTO otherwise. */
int vrpn_lob_decode(const uint8_t *buf, size_t len, struct vrpn_lob *out, struct xg_error *err);

/* ---- Device message bodies (§8) ---- */

/** The message bodies this codec knows, selected by the *type name* (ids differ per peer). */
enum vrpn_body_kind {
    VRPN_BODY_UNKNOWN = 0,   /**< a type this codec does not decode (ignore it) */
    VRPN_BODY_POS_QUAT,      /**< "vrpn_Tracker Pos_Quat", 64 bytes */
    VRPN_BODY_VELOCITY,      /**< "vrpn_Tracker Velocity", 72 bytes */
    VRPN_BODY_ACCELERATION,  /**< "vrpn_Tracker Acceleration", 72 bytes */
    VRPN_BODY_BUTTON_CHANGE, /**< "vrpn_Button Change", 8 bytes */
    VRPN_BODY_BUTTON_STATES, /**< "vrpn_Button States", 4 + 4N bytes */
    VRPN_BODY_ANALOG,        /**< "vrpn_Analog Channel", 8(N+1) bytes */
    VRPN_BODY_DIAL,          /**< "vrpn_Dial update", 12 bytes */
    VRPN_BODY_PING,          /**< "vrpn_Base ping_message", empty */
    VRPN_BODY_PONG,          /**< "vrpn_Base pong_message", empty */
    VRPN_BODY_TEXT,          /**< "vrpn_Base text_message", 1032 bytes as sent by mainline */
};

/** Kind of a type name (exact, case-sensitive match of §8.7 spellings); VRPN_BODY_UNKNOWN for
 *  any other name or NULL. */
enum vrpn_body_kind vrpn_body_kind_of(const char *type_name);
/** The type name of a kind, or NULL for VRPN_BODY_UNKNOWN. */
const char *vrpn_body_type_name(enum vrpn_body_kind kind);

/** Tracker Pos_Quat (§8.1): position (tracker units, usually m) and orientation x,y,z,w. */
struct vrpn_pos_quat {
    int32_t sensor;      /**< >= 0 */
    int32_t filler;      /**< decode: the alignment word as received (mainline: sensor again);
                              encode: ignored, the sensor number is written again */
    struct xg_vec3 pos;  /**< f64 pos[3] */
    struct xg_quat quat; /**< f64 quat[4], x y z w */
};

/** Tracker Velocity / Acceleration (§8.1): linear rate and an *incremental* rotation `quat`
 *  applied over `quat_dt` seconds (not an angular rate). */
struct vrpn_tracker_rate {
    int32_t sensor;      /**< >= 0 */
    int32_t filler;      /**< as in struct vrpn_pos_quat */
    struct xg_vec3 vec;  /**< velocity (units/s) or acceleration (units/s²) */
    struct xg_quat quat; /**< rotation increment, x y z w */
    double quat_dt;      /**< seconds the increment spans */
};

/** Button Change (§8.2): one (button, state) pair per message. */
struct vrpn_button_change {
    int32_t button; /**< button number */
    int32_t state;  /**< 0 released / 1 pressed (other values passed through) */
};

/** Button States (§8.2): all buttons of a device. */
struct vrpn_button_states {
    int32_t count;                    /**< 0..VRPN_MAX_BUTTONS */
    int32_t states[VRPN_MAX_BUTTONS]; /**< first `count` valid */
};

/** Analog Channel (§8.3): f64 count then the channels. */
struct vrpn_analog {
    int32_t count;                    /**< 0..VRPN_MAX_ANALOG (an integral f64 on the wire) */
    double channels[VRPN_MAX_ANALOG]; /**< first `count` valid */
};

/** Dial update (§8.4): f64 delta (revolutions) first, then i32 dial number. */
struct vrpn_dial {
    double delta;
    int32_t dial;
};

/** Text message (§8.6). */
struct vrpn_text {
    uint32_t severity; /**< 0 normal, 1 warning, 2 error */
    uint32_t level;
    char text[VRPN_TEXT_MAX]; /**< NUL-terminated, at most 1023 chars */
};

/** One decoded device message body. */
struct vrpn_body {
    enum vrpn_body_kind kind;
    union {
        struct vrpn_pos_quat pos_quat;    /**< VRPN_BODY_POS_QUAT */
        struct vrpn_tracker_rate rate;    /**< VRPN_BODY_VELOCITY / ACCELERATION */
        struct vrpn_button_change button; /**< VRPN_BODY_BUTTON_CHANGE */
        struct vrpn_button_states states; /**< VRPN_BODY_BUTTON_STATES */
        struct vrpn_analog analog;        /**< VRPN_BODY_ANALOG */
        struct vrpn_dial dial;            /**< VRPN_BODY_DIAL */
        struct vrpn_text text;            /**< VRPN_BODY_TEXT */
    } u;
};

/** Class of service mainline uses for a kind (§6.4): true for the "low latency" reports that go
 *  over UDP once the receiver's UDP_DESCRIPTION has arrived (tracker Pos_Quat, Velocity,
 *  Acceleration; analog), false for "reliable" ones that always use TCP (buttons, dial, ping,
 *  pong, text, and all system messages). */
bool vrpn_body_low_latency(enum vrpn_body_kind kind);

/** Decode a device message body of the given kind, checking its exact size as mainline does
 *  (a wrong size drops the connection, §8): Pos_Quat 64, Velocity/Acceleration 72 and sensor
 *  >= 0; Button Change 8; Button States 4+4N with N 0..256; Analog 8(N+1) with N an integer
 *  0..128; Dial 12; ping/pong 0; text 9..1032 bytes with a NUL within the first 1024 string bytes.
 *  -EPROTO with the field and value otherwise; -EINVAL for VRPN_BODY_UNKNOWN. */
int vrpn_body_decode(enum vrpn_body_kind kind, const uint8_t *body, size_t len,
                     struct vrpn_body *out, struct xg_error *err);

/** Encode a body (without header) into `w` as mainline does: Pos_Quat/Velocity/Acceleration
 *  write the sensor twice; text is zero-filled to VRPN_TEXT_PAYLOAD. -EINVAL for values that
 *  mainline could not send (negative sensor, counts out of range, text too long). */
int vrpn_body_encode(struct xg_writer *w, const struct vrpn_body *b, struct xg_error *err);

/** Append a whole device message: header from h (as vrpn_encode_message; h->type must be the
 *  local id of the body's type name) and the encoded body of b. */
int vrpn_encode_body_message(struct xg_writer *w, const struct vrpn_header *h, uint32_t *seq,
                             const struct vrpn_body *b, struct xg_error *err);

/* ---- Per-connection id maps (§5.3, §6.1, §6.2) ---- */

/** Which namespace an id belongs to. */
enum vrpn_id_kind {
    VRPN_ID_SENDER = 0,
    VRPN_ID_TYPE = 1,
};

/** One namespace (senders or types) of one connection: our local names by local id (dense,
 *  0..n_local-1, in registration order) and the peer's ids mapped both ways. */
struct vrpn_id_table {
    char (*names)[VRPN_CNAME_MAX];           /**< heap; local id -> name */
    uint16_t n_local;                        /**< registered local names */
    uint16_t cap;                            /**< allocated entries of names */
    int16_t remote_to_local[VRPN_MAX_TYPES]; /**< peer id -> local id, -1 if not described */
    int16_t local_to_remote[VRPN_MAX_TYPES]; /**< local id -> peer id, -1 if peer has not
                                                  described that name */
};

/** Both namespaces of one connection. Ids are local to each side: the peer's numbering is
 *  learned from its descriptions, ours is what we describe. Limits: VRPN_MAX_SENDERS /
 *  VRPN_MAX_TYPES per side, names < VRPN_CNAME_MAX bytes. The struct itself is ~16 KiB (embed
 *  it in the connection, not on a small stack); names live on the heap (100 B each). */
struct vrpn_id_map {
    struct vrpn_id_table t[2]; /**< indexed by enum vrpn_id_kind */
};

/** Initialise an empty map (no allocation). */
void vrpn_id_map_init(struct vrpn_id_map *m);
/** Free the names; the map is empty (and reusable) afterwards. */
void vrpn_id_map_free(struct vrpn_id_map *m);

/** Register a local name; returns its local id (the existing one if already registered), or
 *  -EINVAL (empty or >= 100 chars), -ENOSPC (2000 names) or -ENOMEM. */
int vrpn_id_map_register(struct vrpn_id_map *m, enum vrpn_id_kind kind, const char *name,
                         struct xg_error *err);

/** Local id of a name, or -ENOENT. Linear search: cache the result. */
int vrpn_id_map_find(const struct vrpn_id_map *m, enum vrpn_id_kind kind, const char *name);

/** Name of a local id, or NULL if out of range. */
const char *vrpn_id_map_name(const struct vrpn_id_map *m, enum vrpn_id_kind kind, int32_t local);

/** Number of local names of a kind. */
int vrpn_id_map_count(const struct vrpn_id_map *m, enum vrpn_id_kind kind);

/** Apply a peer's SENDER/TYPE_DESCRIPTION: map its `remote_id` to `name`, auto-registering the
 *  name locally if unknown (*is_new = true: the caller should describe it back, §6.2). A
 *  re-description of the same remote id replaces the old mapping. Returns the local id, or
 *  -EPROTO (remote id outside 0..1999, bad name) / -ENOSPC / -ENOMEM. */
int vrpn_id_map_describe(struct vrpn_id_map *m, enum vrpn_id_kind kind, int32_t remote_id,
                         const char *name, bool *is_new, struct xg_error *err);

/** Local id for a peer's id: >= 0, -ENOENT if the peer never described that id (mainline
 *  ignores such messages, §5.3), -EPROTO if the id is outside 0..1999. */
int vrpn_id_map_to_local(const struct vrpn_id_map *m, enum vrpn_id_kind kind, int32_t remote_id,
                         struct xg_error *err);

/** The peer's id for one of our local ids, or -ENOENT if the peer has not described that name. */
int vrpn_id_map_to_remote(const struct vrpn_id_map *m, enum vrpn_id_kind kind, int32_t local_id);

/** The names the peer has described for `kind` (in our local id order), each quoted as
 *  'name' and separated by ", ", into buf (always terminated; "" when there are none). Names
 *  equal to `skip` (may be NULL; e.g. "VRPN Control") are left out. When buf is too small the
 *  list ends with ", ..." after the last name that fits. Returns the number of names listed. */
int vrpn_id_map_described_names(const struct vrpn_id_map *m, enum vrpn_id_kind kind,
                                const char *skip, char *buf, size_t size);

/** Append our SENDER_DESCRIPTIONs (ids 0..n-1) then TYPE_DESCRIPTIONs (0..m-1), the handshake
 *  burst of §6.1 step 3, each stamped with h's time and consecutive sequence numbers from *seq. */
int vrpn_id_map_encode_descriptions(const struct vrpn_id_map *m, struct xg_writer *w,
                                    const struct vrpn_header *h, uint32_t *seq,
                                    struct xg_error *err);

#endif
