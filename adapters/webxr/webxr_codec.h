/* The webxr adapter's binary messages (docs/adapters/webxr.md "Message layout") and the
 * WebSocket opening handshake (RFC 6455 section 4.2). Pure: bytes in, structs out; no I/O.
 *
 * Every message is one binary WebSocket message; all numbers little-endian; floats IEEE 754.
 * Its first byte is the message type:
 *
 *   page -> gateway
 *     0x01 HELLO  u8 version (1), u8 n, n bytes session name ("" = assign one)
 *     0x02 FRAME  u8 flags (bit0 viewer pose valid), u8 n_sources (<= 8), f64 XRFrame time (ms,
 *                 the page's performance.now() clock), viewer pose (7 x f32: px py pz qx qy qz
 *                 qw), then per input source: u8 handedness (0 none, 1 left, 2 right), u8 flags
 *                 (bit0 grip pose valid, bit1 hand joints follow), u8 n_buttons (<= 32),
 *                 u8 n_axes (<= 16), [grip pose 7 x f32 when bit0], n_buttons x (u8 bits
 *                 (bit0 pressed, bit1 touched), f32 value), n_axes x f32, [when bit1: 25 joints
 *                 in WebXR order, each u8 valid, 7 x f32 pose, f32 radius (m)]
 *     0x03 PONG   u32 sequence (as in the PING), f64 page time (ms) when the PING arrived
 *
 *   gateway -> page
 *     0x81 WELCOME u8 version (1), u8 n, n bytes session name (as used in entity names)
 *     0x82 PING    u32 sequence
 *
 * Poses are in the session's `local-floor` reference space: right-handed, +Y up, metres,
 * quaternions (x, y, z, w) rotating body to reference space. */
#ifndef XG_WEBXR_CODEC_H
#define XG_WEBXR_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/util/error.h"

#define WEBXR_VERSION 1
#define WEBXR_MSG_HELLO 0x01
#define WEBXR_MSG_FRAME 0x02
#define WEBXR_MSG_PONG 0x03
#define WEBXR_MSG_WELCOME 0x81
#define WEBXR_MSG_PING 0x82

#define WEBXR_MAX_SOURCES 8
#define WEBXR_MAX_BUTTONS 32
#define WEBXR_MAX_AXES 16
#define WEBXR_JOINTS 25
#define WEBXR_SESSION_MAX 32 /* session name bytes, without the NUL */

/** Analog index of axis j of an input source (button i's value is analog i). */
#define WEBXR_AXIS_ANALOG(j) (WEBXR_MAX_BUTTONS + (j))

/** A pose: position (m) and unit quaternion (x, y, z, w), local-floor space. */
struct webxr_pose {
    double p[3];
    double q[4];
};

/** One hand joint (WebXR XRHand order, webxr_joint_names). */
struct webxr_joint {
    bool valid;
    struct webxr_pose pose;
    double radius; /* m */
};

/** One input source of a frame. */
struct webxr_source {
    uint8_t handedness; /* 0 none, 1 left, 2 right */
    bool has_grip, has_hand;
    struct webxr_pose grip;
    uint8_t n_buttons, n_axes;
    bool pressed[WEBXR_MAX_BUTTONS], touched[WEBXR_MAX_BUTTONS];
    double value[WEBXR_MAX_BUTTONS];
    double axes[WEBXR_MAX_AXES];
    struct webxr_joint joints[WEBXR_JOINTS];
};

/** A decoded FRAME. */
struct webxr_frame {
    double time_ms; /* XRFrame time, page clock (ms) */
    bool has_viewer;
    struct webxr_pose viewer;
    uint8_t n_sources;
    struct webxr_source sources[WEBXR_MAX_SOURCES];
};

/** A decoded page -> gateway message. */
struct webxr_msg {
    uint8_t type;                        /* WEBXR_MSG_HELLO, _FRAME or _PONG */
    char session[WEBXR_SESSION_MAX + 1]; /* HELLO */
    uint32_t seq;                        /* PONG */
    double page_ms;                      /* PONG */
    struct webxr_frame frame;            /* FRAME */
};

/** The 25 WebXR hand joint names ("wrist", "thumb-metacarpal", ... "pinky-finger-tip"). */
extern const char *const webxr_joint_names[WEBXR_JOINTS];
/** Parent joint index of each joint, -1 for the wrist (metacarpals hang off the wrist, each
 *  further joint off the one before it on its finger). */
extern const int8_t webxr_joint_parent[WEBXR_JOINTS];

/** Decode one message of `len` bytes into *m. 0, or -EPROTO/-EMSGSIZE with err naming the field
 *  and value ("source 1 n_buttons 40 > 32", "frame truncated at byte 12 of 20"). A value that is
 *  not finite, a quaternion of norm outside [0.5, 2], a session name that is not
 *  [A-Za-z0-9_-]{1,32} and trailing bytes are errors too: the caller closes the connection. */
int webxr_decode(const uint8_t *buf, size_t len, struct webxr_msg *m, struct xg_error *err);

/** Encode WELCOME with `session` into out (cap >= 3 + WEBXR_SESSION_MAX); returns its length. */
size_t webxr_encode_welcome(uint8_t *out, size_t cap, const char *session);
/** Encode PING with `seq` into out (cap >= 5); returns 5. */
size_t webxr_encode_ping(uint8_t *out, size_t cap, uint32_t seq);
/** Encode a FRAME (for tests, the fuzzer's seeds and the benchmark) into out; returns its length,
 *  0 when cap is too small. */
size_t webxr_encode_frame(uint8_t *out, size_t cap, const struct webxr_frame *f);

/** True when `s` is a valid session name: 1 to 32 of [A-Za-z0-9_-]. */
bool webxr_session_name_ok(const char *s);

/* ---- the WebSocket opening handshake (RFC 6455 section 4.2.1) ---- */

/** What the handshake request carried. */
struct webxr_upgrade {
    char key[64];    /* Sec-WebSocket-Key (24 base64 characters of 16 bytes) */
    char token[256]; /* ?token= of the request target, or "Bearer" of Authorization; "" = none */
    char path[128];  /* the request target's path ("/" or "/webxr") */
};

/** Parse an HTTP/1.1 GET request head (up to and including the blank line; `len` bytes, not
 *  NUL-terminated) as a WebSocket upgrade: method GET, HTTP/1.1, `Upgrade: websocket`,
 *  `Connection` containing `upgrade`, `Sec-WebSocket-Version: 13`, a key of 16 bytes in base64
 *  (header names and the Upgrade/Connection values case-insensitive). 0, or -EPROTO with err
 *  naming the header and its value (the caller answers 400 and closes). */
int webxr_upgrade_parse(const char *head, size_t len, struct webxr_upgrade *u,
                        struct xg_error *err);
/** Sec-WebSocket-Accept for `key`: base64(SHA-1(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
 *  into out (>= 29 bytes, NUL-terminated). 0 or -EINVAL. */
int webxr_accept_key(const char *key, char *out, size_t size);
/** Constant-time comparison of a presented token with the configured one (true when equal). */
bool webxr_token_equal(const char *given, const char *want);

#endif
