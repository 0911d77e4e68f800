/* Game state over RTP: pure codec of the RTP payload
 * (draft-jennings-dispatch-game-state-over-rtp-01 with xrgate's decided wire rules, "wire-rules"
 * below; documented in docs/adapters/rtp.md).
 *
 * A payload is a sequence of whole objects `Tag(VarUInt) | Length(VarUInt) | body`, no payload
 * header. Everything multi-byte is big-endian. Encoding writes into a caller-owned xg_writer;
 * decoding walks a payload with `struct rtp_gs_iter`, which never allocates and never reads past
 * the end: each call yields one object, an unknown object (skipped), or an error for one dropped
 * object; framing errors (tag 0, bad Length) end the payload. Objects must be applied in the order
 * the iterator yields them (later objects override earlier ones, wire-rules §5.2 step 5).
 *
 * Numbers are decoded as they are: a non-unit Rot1/Rot2 is not a codec error (wire-rules §1).
 * Rotation fields carry the vector part (i, j, k) of a Hamilton quaternion; the real part is
 * w = sqrt(max(0, 1 - i² - j² - k²)) (rtp_gs_quat_from_ijk), senders canonicalise to w >= 0 (D10).
 * Positions are metres, velocities units per second, in the draft's frame (left-handed, Y up);
 * frame conversion happens in mappings/, not here. */
#ifndef XG_RTP_GAMESTATE_CODEC_H
#define XG_RTP_GAMESTATE_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/util/error.h"
#include "core/util/wire.h"
#include "core/util/xmath.h"

/* ---- Tag registry (draft §8.2; encoded as VarUInt, wire-rules §5.2) ---- */

#define RTP_GS_TAG_INVALID 0
#define RTP_GS_TAG_HEAD1 1
#define RTP_GS_TAG_HAND1 2
#define RTP_GS_TAG_OBJECT1 3
#define RTP_GS_TAG_PARENT1 4
#define RTP_GS_TAG_MESH1 128
#define RTP_GS_TAG_HAND2 129
#define RTP_GS_TAG_HEAD_IPD1 130
#define RTP_GS_TAG_OBJECT2 131
#define RTP_GS_TAG_MESH2 132
#define RTP_GS_TAG_GAME_CONTROL1 133
#define RTP_GS_TAG_3DOF1 134
#define RTP_GS_TAG_6DOF1 135
#define RTP_GS_TAG_6DOF_POINTER1 136
/** Decision D1: cisco/gse writes tag 128+n as the number 0x8000+n (`C0 80 0n`). Decoding maps
 *  RTP_GS_TAG_GSE_BASE+n (n = 0..8) to 128+n; encoders never emit it. */
#define RTP_GS_TAG_GSE_BASE 0x8000u

/* ---- Limits (checked on decode and encode) ---- */

/** Longest String/Blob accepted inside an object (bytes). */
#define RTP_GS_MAX_STRING 1024
/** Mesh1 array limits; a mesh must fit one RTP packet (draft §4.1.3), these are generous. */
#define RTP_GS_MESH_MAX_VERTICES 256
#define RTP_GS_MESH_MAX_INDICES 1536
/** Hand2 carries 25 Transform1 joints (draft §4.1.5). */
#define RTP_GS_HAND2_JOINTS 25

/** GameControl1 button bits (draft Table 1, decision D6: table bit n ↔ 1 << (n - 1)). */
enum rtp_gs_button {
    RTP_GS_BTN_MENU = 1 << 0,
    RTP_GS_BTN_VIEW = 1 << 1,
    RTP_GS_BTN_A = 1 << 2,
    RTP_GS_BTN_B = 1 << 3,
    RTP_GS_BTN_X = 1 << 4,
    RTP_GS_BTN_Y = 1 << 5,
    RTP_GS_BTN_DPAD_UP = 1 << 6,
    RTP_GS_BTN_DPAD_DOWN = 1 << 7,
    RTP_GS_BTN_DPAD_LEFT = 1 << 8,
    RTP_GS_BTN_DPAD_RIGHT = 1 << 9,
    RTP_GS_BTN_LEFT_SHOULDER = 1 << 10,
    RTP_GS_BTN_RIGHT_SHOULDER = 1 << 11,
    RTP_GS_BTN_LEFT_STICK = 1 << 12,
    RTP_GS_BTN_RIGHT_STICK = 1 << 13,
    RTP_GS_BTN_LEFT_TRIGGER = 1 << 14,
    RTP_GS_BTN_RIGHT_TRIGGER = 1 << 15,
    RTP_GS_BTN_LEFT_SHOULDER2 = 1 << 16,  /* table bit 17 (repeats LeftShoulder) */
    RTP_GS_BTN_RIGHT_SHOULDER2 = 1 << 17, /* table bit 18 (repeats RightShoulder) */
    RTP_GS_BTN_Z = 1 << 18,
    RTP_GS_BTN_PAUSE = 1 << 19,
};

/** Hand2 joint order (draft §4.1.5): wrist, thumb Tip/IP/MCP/CMC, then index, middle, ring and
 *  pinky each as Tip/DIP/PIP/MCP/CMC. */
enum rtp_gs_joint {
    RTP_GS_JOINT_WRIST = 0,
    RTP_GS_JOINT_THUMB_TIP = 1, /* thumb: TIP, IP, MCP, CMC (1..4) */
    RTP_GS_JOINT_INDEX_TIP = 5, /* index: TIP, DIP, PIP, MCP, CMC (5..9) */
    RTP_GS_JOINT_MIDDLE_TIP = 10,
    RTP_GS_JOINT_RING_TIP = 15,
    RTP_GS_JOINT_PINKY_TIP = 20, /* pinky CMC = 24 */
};

/* ---- Primitives (wire-rules §4, §5.1) ---- */

/** Loc2 / Scale2 (18 bytes): p = x,y,z as Float32; v = rate of change per second as Float16. */
struct rtp_gs_loc2 {
    float p[3];
    float v[3];
};

/** Rot2 (12 bytes, Float16): s = current rotation (i,j,k), e = estimated rotation one second
 *  ahead (i,j,k); a receiver SLERPs from s toward e (draft §3.5). */
struct rtp_gs_rot2 {
    float s[3];
    float e[3];
};

/** A String or Blob borrowed from the decoded packet (or from the caller when encoding): `len`
 *  bytes at `ptr`, not NUL-terminated. */
struct rtp_gs_bytes {
    const uint8_t *ptr;
    size_t len;
};

/** Bytes the VarUInt encoding of v takes (1, 2, 3, 5 or 9; wire-rules §4, shortest form). */
size_t rtp_gs_varuint_size(uint64_t v);
/** Bytes the VarInt encoding of v takes (1, 2, 3, 5 or 9). */
size_t rtp_gs_varint_size(int64_t v);
/** Append v as a VarUInt, shortest form (wire-rules §4). Returns 0 or -EMSGSIZE (writer full). */
int rtp_gs_write_varuint(struct xg_writer *w, uint64_t v);
/** Append v as a VarInt, the smallest form whose signed range holds v. 0 or -EMSGSIZE. */
int rtp_gs_write_varint(struct xg_writer *w, int64_t v);
/** Read a VarUInt (non-minimal forms accepted, D8). Returns 0; -EPROTO for a first byte E0 or
 *  E3-FF (reader left at that byte + 1); -EMSGSIZE when truncated. `what` names the field in the
 *  error text. *v is 0 on error. */
int rtp_gs_read_varuint(struct xg_reader *r, uint64_t *v, const char *what, struct xg_error *err);
/** Read a VarInt (sign-extended from bit 6, 13, 20, or the int32/int64). Errors as above. */
int rtp_gs_read_varint(struct xg_reader *r, int64_t *v, const char *what, struct xg_error *err);

/** Float32 → Float16 bits: round-to-nearest-even, overflow → ±Inf, any NaN → 0x7E00 (§5.1). */
uint16_t rtp_gs_f16_bits(float f);
/** Append a Float16 (big-endian) as rtp_gs_f16_bits. 0 or -EMSGSIZE. */
int rtp_gs_write_f16(struct xg_writer *w, float f);
/** Read a Boolean: `00` false, `01` true, anything else -EPROTO naming `what` (D8). */
int rtp_gs_read_bool(struct xg_reader *r, bool *v, const char *what, struct xg_error *err);
/** Append a String/Blob: VarUInt byte count then the bytes. -EINVAL if len > RTP_GS_MAX_STRING. */
int rtp_gs_write_bytes(struct xg_writer *w, const void *p, size_t len, struct xg_error *err);
/** Read a String (utf8 = true: must be valid UTF-8, else -EPROTO) or Blob of at most `max` bytes;
 *  `out` borrows the reader's buffer. -EPROTO when the count exceeds max, -EMSGSIZE if truncated.
 */
int rtp_gs_read_bytes(struct xg_reader *r, struct rtp_gs_bytes *out, size_t max, bool utf8,
                      const char *what, struct xg_error *err);

/** Time1 (draft §3.10): wall-clock ns since 1970-01-01 UTC → ms modulo 65536. */
uint16_t rtp_gs_time1_from_wall_ns(int64_t wall_ns);
/** Unit quaternion (x,y,z,w Hamilton) from the i,j,k a Rot1/Rot2 carries:
 *  w = sqrt(max(0, 1 - i² - j² - k²)) (wire-rules §5.1). Not normalised further. */
struct xg_quat rtp_gs_quat_from_ijk(const float ijk[3]);
/** i,j,k to send for unit quaternion q, negated first when w < 0 so that the receiver's w >= 0
 *  reconstruction holds (D10). */
void rtp_gs_ijk_from_quat(struct xg_quat q, float ijk[3]);

/* ---- Objects (draft §4, wire-rules §5.3) ---- */

/** Head1 (tag 1), with the optional HeadIPD1 sub-TLV (tag 130). time = Time1 (ms mod 65536). */
struct rtp_gs_head1 {
    uint64_t object_id;
    uint16_t time;
    struct rtp_gs_loc2 loc;
    struct rtp_gs_rot2 rot;
    bool has_ipd;
    float ipd; /* interpupillary distance, metres (Float16) */
};

/** Hand1 (tag 2). */
struct rtp_gs_hand1 {
    uint64_t object_id;
    uint16_t time;
    bool left;              /* true = left hand */
    struct rtp_gs_loc2 loc; /* palm */
    struct rtp_gs_rot2 rot;
};

/** Hand2 (tag 129): Hand1's fields plus 25 Transform1 (tx,ty,tz Float16, relative to the hand
 *  location), indexed by enum rtp_gs_joint. */
struct rtp_gs_hand2 {
    uint64_t object_id;
    uint16_t time;
    bool left;
    struct rtp_gs_loc2 loc;
    struct rtp_gs_rot2 rot;
    float joints[RTP_GS_HAND2_JOINTS][3];
};

/** Object1 (tag 3): Loc1 (Float32), Rot1 (i,j,k Float16), Scale1 (uniform, Float16), active,
 *  optional Parent1 sub-TLV (tag 4). */
struct rtp_gs_object1 {
    uint64_t object_id;
    uint16_t time;
    float loc[3];
    float rot[3];
    float scale;
    bool active;
    bool has_parent;
    uint64_t parent_id;
};

/** Object2 (tag 131): Loc2, Rot2, Scale2, active, optional Parent1. */
struct rtp_gs_object2 {
    uint64_t object_id;
    uint16_t time;
    struct rtp_gs_loc2 loc;
    struct rtp_gs_rot2 rot;
    struct rtp_gs_loc2 scale; /* Scale2: per-axis scale and its rate per second */
    bool active;
    bool has_parent;
    uint64_t parent_id;
};

/** Texture selector of Mesh1/Mesh2 (local decision D2, a UInt8 before the texture). */
enum rtp_gs_texture {
    RTP_GS_TEXTURE_NONE = 0,   /* Mesh2 only */
    RTP_GS_TEXTURE_URL = 1,    /* a String (TextureUrl1) follows */
    RTP_GS_TEXTURE_RTP_PT = 2, /* a UInt8 RTP payload type (TextureRtpPT1) follows */
};

/** Mesh1 (tag 128, no Time1, D12). Arrays are borrowed: on encode from the caller, on decode from
 *  the iterator's scratch (valid until the next rtp_gs_iter_next). num_vertices >= 3; num_normals
 *  and num_uv are 0 or num_vertices; num_indices is a non-zero multiple of 3 counting indices
 *  (not triangles), each < num_vertices; triangles are counter-clockwise. */
struct rtp_gs_mesh1 {
    uint64_t object_id;
    uint8_t texture;                 /* RTP_GS_TEXTURE_URL or RTP_GS_TEXTURE_RTP_PT (mandatory) */
    struct rtp_gs_bytes texture_url; /* UTF-8, when texture == URL */
    uint8_t texture_pt;              /* when texture == RTP_PT */
    size_t num_vertices;
    const float (*vertices)[3]; /* Loc1: x,y,z */
    size_t num_normals;
    const float (*normals)[3]; /* Norm1 (Float16) */
    size_t num_uv;
    const float (*uv)[2]; /* TextureUV1: u,v Float32 (-01, D4) */
    size_t num_indices;
    const uint32_t *indices;
};

/** Mesh2 (tag 132, no Time1): external mesh at mesh_url placed by Loc2/Rot2/Scale2, optional
 *  texture (selector D2: none, URL or RTP PT), optional Parent1. */
struct rtp_gs_mesh2 {
    uint64_t object_id;
    struct rtp_gs_loc2 loc;
    struct rtp_gs_rot2 rot;
    struct rtp_gs_loc2 scale;
    struct rtp_gs_bytes mesh_url;    /* UTF-8 */
    uint8_t texture;                 /* enum rtp_gs_texture */
    struct rtp_gs_bytes texture_url; /* when texture == URL */
    uint8_t texture_pt;              /* when texture == RTP_PT */
    bool has_parent;
    uint64_t parent_id;
};

/** ThreeDOF1 (tag 134): a 3DOF controller. */
struct rtp_gs_threedof1 {
    uint64_t object_id;
    uint16_t time;
    bool left;
    struct rtp_gs_rot2 rot;
};

/** SixDOF1 (tag 135), optional 6DOFpointer1 (`80 88` + Loc1, no Length, D5): the point the
 *  controller points at. */
struct rtp_gs_sixdof1 {
    uint64_t object_id;
    uint16_t time;
    bool left;
    struct rtp_gs_loc2 loc;
    struct rtp_gs_rot2 rot;
    bool has_pointer;
    float pointer[3];
};

/** GameControl1 (tag 133): buttons is the VarInt bitmask as decoded (enum rtp_gs_button bits);
 *  buttons_changed is the Time1 of the last button change; sticks are -1..1 (Float16). */
struct rtp_gs_game_control1 {
    uint64_t object_id;
    uint16_t time;
    int64_t buttons;
    uint16_t buttons_changed;
    float left_x, left_y, right_x, right_y;
};

/** Object kinds the codec knows; RTP_GS_UNKNOWN is any other tag (skipped, body borrowed). */
enum rtp_gs_type {
    RTP_GS_UNKNOWN = 0,
    RTP_GS_HEAD1,
    RTP_GS_HAND1,
    RTP_GS_HAND2,
    RTP_GS_OBJECT1,
    RTP_GS_OBJECT2,
    RTP_GS_MESH1,
    RTP_GS_MESH2,
    RTP_GS_THREEDOF1,
    RTP_GS_SIXDOF1,
    RTP_GS_GAME_CONTROL1,
};

/** One object of a payload. `tag` is the registry number (gse 0x8000+n already mapped, D1);
 *  `gse_tag` is true when its tag or one of its sub-TLV tags arrived in that 3-byte form (count
 *  it in a metric; never emitted). */
struct rtp_gs_object {
    enum rtp_gs_type type;
    uint64_t tag;
    bool gse_tag;
    union {
        struct rtp_gs_head1 head1;
        struct rtp_gs_hand1 hand1;
        struct rtp_gs_hand2 hand2;
        struct rtp_gs_object1 object1;
        struct rtp_gs_object2 object2;
        struct rtp_gs_mesh1 mesh1;
        struct rtp_gs_mesh2 mesh2;
        struct rtp_gs_threedof1 threedof1;
        struct rtp_gs_sixdof1 sixdof1;
        struct rtp_gs_game_control1 game_control1;
        struct rtp_gs_bytes unknown; /* body of an unknown tag */
    } u;
};

/** Name of a type ("Head1", "Mesh2", ..., "unknown"); static storage. */
const char *rtp_gs_type_name(enum rtp_gs_type t);
/** Registry tag of a known type (0 for RTP_GS_UNKNOWN). */
uint64_t rtp_gs_type_tag(enum rtp_gs_type t);

/** Append obj as `Tag | Length | body` (wire-rules §5.2-5.3; tags 128-136 as `80 80`..`80 88`,
 *  D1). Atomic: on any error the writer is left exactly as it was (len and err), so a packer can
 *  flush the packet and retry. Returns 0; -EMSGSIZE when it does not fit; -EINVAL for an object
 *  that cannot be encoded (unknown type, Mesh1 counts/indices/selector, string too long or not
 *  UTF-8), with err naming the field and value. */
int rtp_gs_encode_object(struct xg_writer *w, const struct rtp_gs_object *obj,
                         struct xg_error *err);

/** Scratch arrays a decoded Mesh1 points into. */
struct rtp_gs_mesh_scratch {
    float vertices[RTP_GS_MESH_MAX_VERTICES][3];
    float normals[RTP_GS_MESH_MAX_VERTICES][3];
    float uv[RTP_GS_MESH_MAX_VERTICES][2];
    uint32_t indices[RTP_GS_MESH_MAX_INDICES];
};

/** Payload iterator (wire-rules §5.2). Holds the Mesh1 scratch (~17 KiB), so prefer one per
 *  adapter or a static one to a stack copy in deep call chains. Borrows the payload. */
struct rtp_gs_iter {
    struct xg_reader r;
    bool done;                        /* framing error or end reached */
    size_t objects, unknown, dropped; /* objects decoded, unknown tags skipped, malformed dropped */
    size_t gse_tags;                  /* objects with a gse-form tag (D1), any outcome */
    struct rtp_gs_mesh_scratch scratch;
};

/** Start iterating an RTP payload of `len` bytes (padding already stripped). */
void rtp_gs_iter_init(struct rtp_gs_iter *it, const void *payload, size_t len);

/** Outcomes of rtp_gs_iter_next (besides negative errors). */
#define RTP_GS_END 0
#define RTP_GS_OBJECT 1

/** Decode the next object into *obj (pointers borrow the payload and it->scratch).
 *  Returns RTP_GS_OBJECT (obj->type may be RTP_GS_UNKNOWN: an unknown tag, skipped, body given);
 *  RTP_GS_END at the end of the payload;
 *  -EPROTO: this object is malformed and was dropped (err names tag, field, value and offset);
 *           obj->tag/type say which object; iteration resumes after its Length — call again;
 *  -EBADMSG: framing is broken (tag 0, Length 0 or past the end, bad VarUInt in Tag/Length):
 *           the rest of the payload is discarded and the next call returns RTP_GS_END. */
int rtp_gs_iter_next(struct rtp_gs_iter *it, struct rtp_gs_object *obj, struct xg_error *err);

/** Decode exactly one object from buf (convenience over the iterator; `it` is caller storage).
 *  Returns 0 and fills *obj, or the negative error of rtp_gs_iter_next (-EBADMSG also for an
 *  empty buffer or trailing bytes after the object). */
int rtp_gs_decode_one(struct rtp_gs_iter *it, const void *buf, size_t len,
                      struct rtp_gs_object *obj, struct xg_error *err);

#endif
