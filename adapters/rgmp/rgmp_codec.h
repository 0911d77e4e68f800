/* RGMP v2 (Rokoko General Motion Protocol) codec: pure encode/decode, no I/O, no libevent.
 *
 * Implements Rokoko's RGMP v2 page and xrgate's binding wire rules
 * (decisions "D<n>", §2 wire format, §3 transform equation, §7 validity rules "rule <n>" of those
 * rules; documented for users in docs/adapters/rgmp.md). All values on the wire are little-endian;
 * the codec reads them with the bounded core/util/wire.h reader (byte-wise loads, never pointer
 * casts: 64-bit values are only 4-byte aligned, rule 19).
 *
 * Layers:
 *   - framing: 8-byte header (u32 msg_prefix, u32 msg_len) and a streaming splitter for TCP;
 *   - Stream Definition (prefix 1): strict JSON (jansson, duplicate keys rejected) -> struct
 *     rgmp_definition, which owns all its memory (rgmp_definition_free); the reverse builder;
 *   - Data Frame (prefix 2): 16-byte header + the group's tightly packed values, decoded in place
 *     (no allocation) against a definition; the reverse builder;
 *   - Device Disconnect (prefix 3);
 *   - struct rgmp_session: the per-connection device table that applies the rules needing state
 *     (D2 timestamps, D3 re-definition, rules 15 and 21);
 *   - the §3 transform equation (TRANSFORM values -> pose, composition, inverse).
 *
 * Errors: functions return 0 (or a documented positive value) or a negative errno: -EPROTO for a
 * protocol violation (the connection must be closed, D1), -EMSGSIZE for a frame larger than the
 * configured limit or an output buffer that is too small, -ENOMEM, -EINVAL for bad arguments,
 * -EDOM for a rejected sample (D5, not fatal). With a non-NULL struct xg_error the message names
 * the device, the group (index and name), the stream index (or static_data index), the field and
 * the offending value, e.g.
 *   device 305419896, group 1 "status", stream 0: bit_mapping key "32": bit index >= 32, the
 *   width of UINT32 (rule 9f) */
#ifndef XG_RGMP_CODEC_H
#define XG_RGMP_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/util/error.h"
#include "core/util/wire.h"
#include "core/util/xmath.h"

/* ------------------------------------------------------------------------------------------ */
/* Constants                                                                                   */

/** Frame header size: u32 msg_prefix + u32 msg_len (§2). */
#define RGMP_HEADER_LEN 8u
/** Data Frame header size: u32 device_id, u32 group_id, u64 timestamp_us (§2, rule 14). */
#define RGMP_DATA_HEADER_LEN 16u
/** Device Disconnect payload size: u32 device_id (rule 20). */
#define RGMP_DISCONNECT_LEN 4u
/** Default maximum Stream Definition payload: 1 MiB (D8). */
#define RGMP_MAX_DEFINITION_DEFAULT (1u << 20)
/** Default maximum Data Frame payload: 64 KiB (D8). */
#define RGMP_MAX_DATA_DEFAULT (64u << 10)
/** Rokoko's driver port and hand-solver port (D9; not in the spec). */
#define RGMP_DEFAULT_PORT 12276
#define RGMP_HAND_SOLVER_PORT 12277
/** Quaternion norm tolerance of D5: |‖q‖ − 1| above this rejects the sample. */
#define RGMP_QUAT_NORM_TOL 1e-3

/** msg_prefix values (§2, rule 2). */
enum rgmp_msg_prefix {
    RGMP_MSG_DEFINITION = 1,
    RGMP_MSG_DATA = 2,
    RGMP_MSG_DISCONNECT = 3,
};

/** Payload limits (D8, rule 3), checked from the header before anything is allocated. A zero
 *  field means the default. */
struct rgmp_limits {
    uint32_t max_definition_len; /* bytes of JSON; default RGMP_MAX_DEFINITION_DEFAULT */
    uint32_t max_data_len;       /* Data Frame payload bytes; default RGMP_MAX_DATA_DEFAULT */
};

/* ------------------------------------------------------------------------------------------ */
/* Framing (§2, rules 1-3, 14, 20)                                                             */

struct rgmp_header {
    uint32_t msg_prefix; /* enum rgmp_msg_prefix */
    uint32_t msg_len;    /* payload bytes after the 8-byte header */
};

/** Read the 8-byte header at `buf` (no validation). Returns 0, or -EMSGSIZE if len < 8. */
int rgmp_header_decode(const void *buf, size_t len, struct rgmp_header *h);

/** Validate a header against `lim` (NULL = defaults): msg_prefix 1, 2 or 3 (rule 2); msg_len
 *  within the limit of its type (rule 3, D8; -EMSGSIZE); a Data Frame at least 16 bytes (rule 14);
 *  a Device Disconnect exactly 4 bytes (rule 20). Returns 0, -EPROTO or -EMSGSIZE. */
int rgmp_header_check(const struct rgmp_header *h, const struct rgmp_limits *lim,
                      struct xg_error *err);

/** Streaming splitter for a TCP receive buffer. Looks at the `len` bytes at `buf` (the start of a
 *  frame) and returns:
 *    1  a whole frame is available: *h is its header and *frame_len = 8 + msg_len;
 *    0  more bytes are needed: *frame_len = the total bytes needed so far (8 while the header is
 *       incomplete, then 8 + msg_len), so the caller never buffers more than the limit;
 *   <0  the header is invalid (rgmp_header_check), the connection must be closed.
 *  The header is validated as soon as its 8 bytes are present, before the payload arrives. */
int rgmp_frame_split(const void *buf, size_t len, const struct rgmp_limits *lim,
                     struct rgmp_header *h, size_t *frame_len, struct xg_error *err);

/** End of stream with `buffered` bytes of an incomplete frame left (rule 1): 0 when buffered == 0
 *  (a clean session end at a frame boundary), otherwise -EPROTO "truncated frame". */
int rgmp_frame_eof(size_t buffered, struct xg_error *err);

/** Append an 8-byte header. Returns 0 or -EMSGSIZE (writer full). */
int rgmp_encode_header(struct xg_writer *w, uint32_t msg_prefix, uint32_t msg_len);

/* ------------------------------------------------------------------------------------------ */
/* Data types (§2 "Data Types", rule 9a)                                                       */

enum rgmp_base_type {
    RGMP_INT32,
    RGMP_UINT32,
    RGMP_INT64,
    RGMP_UINT64,
    RGMP_FLOAT,  /* IEEE-754 binary32 */
    RGMP_DOUBLE, /* IEEE-754 binary64 */
};

/** A parsed data_type: `TYPE` (rank 0), `TYPE[N]` (rank 1) or `TYPE[N, M]` (rank 2, N*M values,
 *  row-major). Dimensions that are absent are 1. `size` is the exact number of bytes on the wire
 *  and is guaranteed <= 0xFFFFFFFF - 16 (so a one-stream group still fits msg_len, rule 13). */
struct rgmp_data_type {
    enum rgmp_base_type base;
    uint8_t rank;   /* 0, 1 or 2 */
    uint32_t n, m;  /* dimensions, >= 1 */
    uint32_t count; /* n * m values */
    uint32_t size;  /* count * rgmp_base_size(base) bytes */
};

/** Bytes of one value of `base` (4 or 8). */
size_t rgmp_base_size(enum rgmp_base_type base);
/** "INT32", "UINT32", "INT64", "UINT64", "FLOAT", "DOUBLE". */
const char *rgmp_base_name(enum rgmp_base_type base);

/** Parse `text` per rule 9a: BASE (upper case), BASE[N] or BASE[N, M] with decimal N, M >= 1, no
 *  sign, no leading zeros, no spaces except optional spaces after the comma; N*M*size is computed
 *  without overflow and must stay <= 0xFFFFFFFF - 16. Returns 0 or -EPROTO; the message names the
 *  field data_type and the text (the caller prefixes device/group/stream). */
int rgmp_data_type_parse(const char *text, struct rgmp_data_type *t, struct xg_error *err);

/** Canonical text of `t` ("FLOAT", "FLOAT[7]", "DOUBLE[3,3]") into buf (cap bytes, NUL-terminated,
 *  32 bytes always suffice). Returns the length, as snprintf. */
int rgmp_data_type_format(const struct rgmp_data_type *t, char *buf, size_t cap);

/* ------------------------------------------------------------------------------------------ */
/* Measure types (§2 "Measure Types")                                                          */

enum rgmp_measure_type {
    RGMP_MEASURE_UNKNOWN = 0, /* not one of the ten: accepted and skipped by size (D4) */
    RGMP_POSITION,            /* metres, [3] */
    RGMP_ORIENTATION,         /* unit quaternion x, y, z, w, [4] */
    RGMP_TRANSFORM,           /* position (m) then quaternion x, y, z, w, [7] */
    RGMP_ANGULAR_VELOCITY,    /* rad/s */
    RGMP_LINEAR_VELOCITY,     /* m/s */
    RGMP_LINEAR_ACCELERATION, /* m/s² */
    RGMP_PROPER_ACCELERATION, /* m/s², includes gravity */
    RGMP_MAGNETIC_FIELD,      /* Gauss */
    RGMP_STATUS_FLAGS,        /* unitless bit set, UINT32 or UINT64 */
    RGMP_CUSTOM,              /* unitless, named by custom_label */
};

/** Wire name ("TRANSFORM"...), "UNKNOWN" for RGMP_MEASURE_UNKNOWN. */
const char *rgmp_measure_name(enum rgmp_measure_type m);
/** Unit of the measure: "m", "rad/s", "m/s", "m/s^2", "G", "" (unitless), "m;quat" (TRANSFORM). */
const char *rgmp_measure_unit(enum rgmp_measure_type m);
/** Measure type of a wire name (exact, upper case); RGMP_MEASURE_UNKNOWN otherwise. */
enum rgmp_measure_type rgmp_measure_from_name(const char *name);

/* ------------------------------------------------------------------------------------------ */
/* Stream Definition (prefix 1, rules 4-13)                                                    */

/** timestamp_epoch (rule 7, D10). */
enum rgmp_epoch {
    RGMP_EPOCH_OTHER = 0, /* absent or unknown text: treated like device_boot, warn once (D10) */
    RGMP_EPOCH_UNIX,      /* "unix_epoch" */
    RGMP_EPOCH_DEVICE_BOOT,
};

/** One entry of bit_mapping: bit index (below the type's width) -> flag name. */
struct rgmp_bit_name {
    uint32_t bit;
    char *name; /* owned */
};

/** A stream (in a group) or a static_data entry (rule 9). All strings are owned by the
 *  definition. `reference_frame` is normalised (rule 9c): NULL when absent or equal to
 *  target_frame. */
struct rgmp_stream {
    struct rgmp_data_type type;
    enum rgmp_measure_type measure;
    char *measure_name;         /* as on the wire (the only name of an unknown measure, D4) */
    char *target_frame;         /* non-empty */
    char *reference_frame;      /* NULL = intrinsic to target_frame */
    char *custom_label;         /* non-NULL exactly when measure == RGMP_CUSTOM (rules 9d, 9e) */
    struct rgmp_bit_name *bits; /* STATUS_FLAGS only (rule 9f), in wire order */
    size_t n_bits;
    uint32_t offset; /* group streams: byte offset of the values in the Data Frame payload
                        after the 16-byte header; 0 for static_data */
    uint8_t *value;  /* static_data only: type.size bytes in wire encoding (little-endian),
                        read with rgmp_value_*; NULL for group streams */
};

/** A stream group (rule 8). */
struct rgmp_group {
    char *name;
    double expected_rate_hz; /* >= 0, finite; 0 = event-driven */
    struct rgmp_stream *streams;
    size_t n_streams;
    uint32_t values_len; /* Σ stream sizes: a Data Frame's msg_len is 16 + values_len (rule 17) */
    /* Session state for D2 (rgmp_group_check_timestamp): */
    bool has_timestamp;
    uint64_t last_timestamp_us;
    uint32_t back_n;       /* consecutive frames at or before last_timestamp_us, increasing */
    uint64_t back_last_us; /* the newest of them */
};

/** A decoded (or built) Stream Definition. Owns everything it points to; free it with
 *  rgmp_definition_free. Optional top-level strings are NULL when absent. */
struct rgmp_definition {
    uint32_t device_id;
    char *protocol_name;    /* e.g. "RGMP" */
    char *protocol_version; /* major 2 when present (D4) */
    char *device_type;      /* e.g. "smartsuit" */
    char *timestamp_epoch;  /* as on the wire */
    enum rgmp_epoch epoch;
    char *device_info_json; /* the device_info object as compact JSON text, or NULL */
    struct rgmp_stream *static_data;
    size_t n_static;
    struct rgmp_group *groups;
    size_t n_groups;
};

/** Decode and validate a Stream Definition payload (`len` bytes of UTF-8 JSON, no NUL) into a new
 *  definition (*out, owned by the caller). Implements rules 4-13 with decisions 4, 8 and 10:
 *    - rule 4: valid UTF-8, no NUL byte, exactly one JSON object, nothing but whitespace after
 *      it, no duplicate keys at any level (JSON_REJECT_DUPLICATES);
 *    - required: device_id (integer 0..4294967295, rule 5) and groups (array); optional, with
 *      their JSON types checked when present (rule 6): protocol_name, protocol_version (major
 *      must be 2, D4), device_type, timestamp_epoch (unknown text accepted, D10), device_info
 *      (object), static_data (array); other top-level keys are ignored (§8 q1);
 *    - rules 8-13 for every group, stream and static_data entry, with the shape check of D10 for
 *      POSITION, ORIENTATION, TRANSFORM, LINEAR_VELOCITY and ANGULAR_VELOCITY;
 *    - every group's Data Frame (16 + values_len) must fit lim->max_data_len (D8), since such a
 *      group could never be received.
 *  `lim` NULL = defaults; len above lim->max_definition_len is -EMSGSIZE. Returns 0, -EPROTO,
 *  -EMSGSIZE or -ENOMEM; on error *out is NULL. */
int rgmp_definition_decode(const void *json, size_t len, const struct rgmp_limits *lim,
                           struct rgmp_definition **out, struct xg_error *err);

/** Free a definition and everything it owns (NULL is allowed). */
void rgmp_definition_free(struct rgmp_definition *def);

/** Index of the stream with the given key in group `group` (rule 10 lookup: reference_frame NULL
 *  or equal to target_frame means intrinsic; custom_label only for CUSTOM), or -1. */
long rgmp_group_find(const struct rgmp_definition *def, size_t group, const char *measure_type,
                     const char *target_frame, const char *reference_frame,
                     const char *custom_label);

/* ---- building definitions (the server side, D7) ---- */

/** Description of a stream or static_data entry to add; strings are copied. */
struct rgmp_bit_spec {
    uint32_t bit;
    const char *name;
};
struct rgmp_entry_spec {
    const char *data_type;            /* "FLOAT[7]" */
    const char *measure_type;         /* "TRANSFORM" */
    const char *target_frame;         /* required */
    const char *reference_frame;      /* or NULL */
    const char *custom_label;         /* CUSTOM only, else NULL */
    const struct rgmp_bit_spec *bits; /* STATUS_FLAGS only */
    size_t n_bits;
    const void *value; /* static_data only: the value in wire encoding (little-endian) */
    size_t value_len;  /* must equal the data type's size */
};

/** A new empty definition: protocol_name "RGMP", protocol_version "2.0.0", the given device_id,
 *  device_type (copied, may be NULL) and timestamp_epoch ("unix_epoch" for RGMP_EPOCH_UNIX,
 *  "device_boot" otherwise). Returns NULL on allocation failure. */
struct rgmp_definition *rgmp_definition_new(uint32_t device_id, const char *device_type,
                                            enum rgmp_epoch epoch);

/** Append a group (name copied; rate >= 0, finite). Returns its index (>= 0) or -EPROTO/-ENOMEM. */
int rgmp_definition_add_group(struct rgmp_definition *def, const char *name, double rate_hz,
                              struct xg_error *err);

/** Append a stream to group `group`, validated with the same rules as the decoder (9, 10, 12, 13,
 *  D8 with default limits). Returns its index within the group or a negative errno. */
int rgmp_definition_add_stream(struct rgmp_definition *def, size_t group,
                               const struct rgmp_entry_spec *spec, struct xg_error *err);

/** Append a static_data entry (rules 9 and 11: spec->value must be given, value_len == size, FLOAT
 *  and DOUBLE values finite). Returns its index or a negative errno. */
int rgmp_definition_add_static(struct rgmp_definition *def, const struct rgmp_entry_spec *spec,
                               struct xg_error *err);

/** Minified JSON text of `def` (keys in the order of the §6.1 example; numbers in the shortest
 *  form that round-trips, like Python's json.dumps; non-ASCII is written as UTF-8). *json is
 *  malloc'ed, NUL-terminated, owned by the caller; *len excludes the NUL. The §6.1 definition
 *  yields exactly the 1613 bytes of the spec. Returns 0 or -ENOMEM. */
int rgmp_definition_to_json(const struct rgmp_definition *def, char **json, size_t *len,
                            struct xg_error *err);

/** Append a whole Stream Definition frame (header with msg_len = JSON length, then the JSON, no
 *  NUL). Returns 0, -ENOMEM or -EMSGSIZE (writer too small). */
int rgmp_encode_definition(struct xg_writer *w, const struct rgmp_definition *def,
                           struct xg_error *err);

/* ------------------------------------------------------------------------------------------ */
/* Data Frame (prefix 2, rules 14-19)                                                          */

/** A decoded Data Frame; `values` points into the caller's payload buffer (no copy). */
struct rgmp_data_frame {
    uint32_t device_id;
    uint32_t group_id;
    uint64_t timestamp_us; /* µs since the definition's timestamp_epoch */
    const uint8_t *values; /* the group's packed values, values_len bytes */
    uint32_t values_len;
};

/** Read the 16-byte Data Frame header of a payload (rule 14: len >= 16) without a definition,
 *  e.g. to look the device up. Returns 0 or -EPROTO. */
int rgmp_data_peek(const void *payload, size_t len, struct rgmp_data_frame *f,
                   struct xg_error *err);

/** Decode a Data Frame payload against the definition of its device: `def` NULL means the device
 *  has no active definition (rule 15); device_id must equal def->device_id; group_id < n_groups
 *  (rule 16); len == 16 + values_len of the group (rule 17). Returns 0 or -EPROTO. */
int rgmp_data_decode(const void *payload, size_t len, const struct rgmp_definition *def,
                     struct rgmp_data_frame *f, struct xg_error *err);

/** Values of stream `stream` of the frame's group (type.size bytes inside f->values), or NULL if
 *  the index is out of range. Read them with rgmp_value_* or rgmp_pose_from_values. */
const uint8_t *rgmp_data_stream(const struct rgmp_definition *def, const struct rgmp_data_frame *f,
                                size_t stream);

/** Return value of rgmp_group_check_timestamp for a frame to drop and count. */
#define RGMP_OUT_OF_ORDER 1

/** Timestamp monotonicity per (device, group) (rule 18 with D2): returns 0 and records the time
 *  when f->timestamp_us is greater than the group's previous one (or the first); otherwise
 *  RGMP_OUT_OF_ORDER (drop the frame and count rgmp_frames_out_of_order; err is filled for a
 *  debug log), or -EPROTO when `strict`. Clock steps (issue 30): when RGMP_STEP_CONFIRM frames in
 *  a row are at or before the previous time but increase among themselves (the server's clock
 *  stepped back, or one wild timestamp far ahead came before), the last of them is accepted (0)
 *  and becomes the new reference: one wild timestamp never blocks a group for good. */
#define RGMP_STEP_CONFIRM 3
int rgmp_group_check_timestamp(struct rgmp_definition *def, const struct rgmp_data_frame *f,
                               bool strict, struct xg_error *err);

/** Append a whole Data Frame: header (prefix 2, msg_len 16 + values_len), device_id, group_id,
 *  timestamp_us, then `values` (len bytes, already in wire encoding, e.g. written with
 *  xg_write_lef32), which must equal the group's values_len. Returns 0, -EINVAL (bad group or
 *  length) or -EMSGSIZE (writer full). */
int rgmp_encode_data(struct xg_writer *w, const struct rgmp_definition *def, uint32_t group_id,
                     uint64_t timestamp_us, const void *values, size_t len, struct xg_error *err);

/** Element i (< t->count) of the values at `vals` (t->size bytes, wire encoding) as double /
 *  int64 / uint64 (integers converted by C rules; 64-bit integers may round as double). */
double rgmp_value_f64(const struct rgmp_data_type *t, const uint8_t *vals, uint32_t i);
int64_t rgmp_value_i64(const struct rgmp_data_type *t, const uint8_t *vals, uint32_t i);
uint64_t rgmp_value_u64(const struct rgmp_data_type *t, const uint8_t *vals, uint32_t i);

/* ------------------------------------------------------------------------------------------ */
/* Device Disconnect (prefix 3, rules 20-21)                                                   */

/** Decode a Device Disconnect payload (rule 20: exactly 4 bytes). Returns 0 or -EPROTO. */
int rgmp_disconnect_decode(const void *payload, size_t len, uint32_t *device_id,
                           struct xg_error *err);
/** Append a Device Disconnect frame (12 bytes). Returns 0 or -EMSGSIZE. */
int rgmp_encode_disconnect(struct xg_writer *w, uint32_t device_id);

/* ------------------------------------------------------------------------------------------ */
/* Session: the devices of one connection (D2, D3, rules 15, 18, 21)                           */

struct rgmp_session {
    struct rgmp_limits limits;
    bool strict;                      /* D2: out-of-order timestamps are fatal */
    struct rgmp_definition **devices; /* owned */
    size_t n_devices, cap;
    uint64_t frames_out_of_order; /* D2 counter rgmp_frames_out_of_order */
};

enum rgmp_event_type {
    RGMP_EV_DEFINITION, /* ev.def is the new definition (ev.replaced: an active one was replaced) */
    RGMP_EV_DATA,       /* ev.def and ev.frame: a valid, in-order Data Frame */
    RGMP_EV_DROPPED,    /* ev.def and ev.frame: out of order, dropped and counted (D2) */
    RGMP_EV_DISCONNECT, /* ev.device_id removed (its definition is already freed) */
};

/** What rgmp_session_handle saw. ev.def stays valid until the next rgmp_session_handle or
 *  rgmp_session_free; ev.frame.values points into the caller's payload. */
struct rgmp_event {
    enum rgmp_event_type type;
    uint32_t device_id;
    bool replaced;
    const struct rgmp_definition *def;
    struct rgmp_data_frame frame;
};

/** Start an empty session (lim NULL = defaults). */
void rgmp_session_init(struct rgmp_session *s, const struct rgmp_limits *lim, bool strict);
/** Free every definition of the session (all the connection's devices, D1). */
void rgmp_session_free(struct rgmp_session *s);
/** Active definition of device_id, or NULL. */
struct rgmp_definition *rgmp_session_find(const struct rgmp_session *s, uint32_t device_id);

/** Handle one whole frame (header `h` as returned by rgmp_frame_split, then its msg_len payload
 *  bytes): checks the header, decodes and validates the frame, and applies it: a definition
 *  adds or replaces its device (D3); a Data Frame needs an active device (rule 15) and passes the
 *  timestamp check (D2); a disconnect needs an active device (rule 21, D10) and removes it.
 *  Returns 0 (see *ev) or a negative errno: the connection must then be closed (D1). */
int rgmp_session_handle(struct rgmp_session *s, const struct rgmp_header *h, const void *payload,
                        struct rgmp_event *ev, struct xg_error *err);

/* ------------------------------------------------------------------------------------------ */
/* The §3 transform equation                                                                   */

/** A rigid transform T(reference <- target), in RGMP's frame: the coordinates of the stream's
 *  reference_frame (e.g. LTP_ENU: x east, y north, z up, right-handed; or the parent frame such
 *  as `hips`), NOT xrgate's internal Y-up frame (the adapter's frame mapping converts).
 *  `position` (m) is the origin of the target frame expressed in the reference frame;
 *  `orientation` is a unit Hamilton quaternion (x, y, z, w) whose rotation matrix R(q) has the
 *  target frame's axes as columns, so p_ref = R(q)·p_target + position (§3). */
struct rgmp_pose {
    struct xg_vec3 position;
    struct xg_quat orientation;
};

/** R(q) of §3, row-major (R[row][col]), for a unit quaternion q (x, y, z, w). */
void rgmp_rotation_matrix(struct xg_quat q, double R[3][3]);

/** The §3 equation: p_ref = R(q)·p_target + t. */
struct xg_vec3 rgmp_transform_point(const struct rgmp_pose *T, struct xg_vec3 p_target);

/** Chaining (§3): T_a<-c = T_a<-b ∘ T_b<-c, i.e. t = t_ab + R(q_ab)·t_bc, q = q_ab ⊗ q_bc. */
struct rgmp_pose rgmp_transform_compose(const struct rgmp_pose *ab, const struct rgmp_pose *bc);

/** Inverse (§3): t' = -R(q)ᵀ·t, q' = q*. */
struct rgmp_pose rgmp_transform_inverse(const struct rgmp_pose *T);

/** Pose from one stream's values (type.size bytes at `vals`, wire encoding), in the stream's
 *  reference frame (see struct rgmp_pose): TRANSFORM FLOAT/DOUBLE[7] = px, py, pz (m), qx, qy,
 *  qz, qw; POSITION [3] (orientation = identity); ORIENTATION [4] (position = 0).
 *  D5: a NaN/Inf value or a quaternion whose norm differs from 1 by more than 1e-3 returns -EDOM
 *  (reject the sample and count it, not fatal); a quaternion within tolerance is renormalised.
 *  Returns 0, -EDOM, or -EINVAL for a stream that is not a pose of those shapes. */
int rgmp_pose_from_values(const struct rgmp_stream *s, const uint8_t *vals, struct rgmp_pose *out,
                          struct xg_error *err);

/** A FLOAT/DOUBLE[3] vector (velocities in m/s or rad/s, accelerations in m/s², magnetic field in
 *  Gauss, position in m), expressed in the stream's reference frame (§3 "still open": assumed
 *  v_ref = R·v_target). Returns 0, -EDOM (NaN/Inf, D5) or -EINVAL (not a [3] float stream). */
int rgmp_vec3_from_values(const struct rgmp_stream *s, const uint8_t *vals, struct xg_vec3 *out,
                          struct xg_error *err);

#endif
