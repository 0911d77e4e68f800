/* The messages xrgate records, as ROS 2 messages in CDR (OMG DDS-XTYPES plain CDR, little-endian,
 * with the 4-byte encapsulation header 00 01 00 00; alignment counted from after the header),
 * and their message definitions as rosbag2 stores them (schema encoding `ros2msg`: the type's
 * .msg text, then each dependency after a line of 80 '=' and "MSG: pkg/Type").
 *
 * - tf2_msgs/msg/TFMessage on /tf: transforms[] of geometry_msgs/TransformStamped
 *   (header.stamp sec/nanosec, header.frame_id, child_frame_id, translation xyz, rotation xyzw).
 * - xrgate_msgs/msg/Sample on /xrgate/samples: one sample of one entity, lossless
 *   (docs/adapters/mcap.md lists its fields).
 *
 * Pure: no I/O. Decoders are bounded and return -EPROTO with err naming the field. */
#ifndef XG_MCAP_CDR_H
#define XG_MCAP_CDR_H

#include <stdbool.h>
#include <stdint.h>

#include "adapters/mcap/mcap_codec.h"
#include "core/table/entity.h"
#include "core/util/error.h"

#define MCAP_TF_SCHEMA "tf2_msgs/msg/TFMessage"
#define MCAP_SAMPLE_SCHEMA "xrgate_msgs/msg/Sample"
#define MCAP_TF_TOPIC "/tf"
#define MCAP_SAMPLE_TOPIC "/xrgate/samples"

/** The ros2msg definition texts (NUL-terminated, static). */
extern const char mcap_tf_definition[];
extern const char mcap_sample_definition[];

/** One geometry_msgs/TransformStamped. Strings borrowed (encode) or NUL-terminated copies
 *  truncated to XG_NAME_MAX - 1 bytes (decode). */
struct mcap_tf {
    int64_t stamp_ns; /* header.stamp as ns since the Unix epoch */
    char frame_id[XG_NAME_MAX], child_frame_id[XG_NAME_MAX];
    double t[3]; /* translation, m */
    double q[4]; /* rotation x y z w */
};

/** Append a TFMessage with one transform (encapsulation header included). */
void mcap_cdr_tf(struct mcap_buf *b, const struct mcap_tf *tf);
/** Append an empty TFMessage (encapsulation header, no transform); returns its offset in b, for
 *  mcap_cdr_tf_add(). */
size_t mcap_cdr_tf_begin(struct mcap_buf *b);
/** Append one transform to the TFMessage that starts at offset `at` of b and ends at b's end
 *  (its count goes up by one): header.stamp (ns since the Unix epoch), header.frame_id and
 *  child_frame_id (lengths without NUL, s[len] must be the NUL), translation t (m), rotation q
 *  (x y z w). What a tf broadcaster sends: many transforms of one moment in one message. */
void mcap_cdr_tf_add(struct mcap_buf *b, size_t at, int64_t stamp_ns, const char *frame_id,
                     size_t frame_len, const char *child_frame_id, size_t child_len,
                     const double t[3], const double q[4]);
/** Decode transform `i` (0-based) of a TFMessage; *count receives the number of transforms.
 *  0, -ENOENT when i >= count, -EPROTO (err names the field) on a malformed message. */
int mcap_cdr_tf_decode(const uint8_t *p, size_t n, uint32_t i, uint32_t *count, struct mcap_tf *out,
                       struct xg_error *err);

/** One xrgate_msgs/msg/Sample: the entity's identity, its times (ns since the Unix epoch) and
 *  the merged newest sample (internal frame: right-handed, Y up, m, rad, x y z w). */
struct mcap_sample {
    char name[XG_NAME_MAX], source[XG_NAME_MAX], origin[64], origin_gateway[64], kind[16],
        parent[XG_NAME_MAX];
    int64_t capture_time, receive_time;
    uint32_t flags; /* XG_SAMPLE_* the source has reported */
    int32_t sensor; /* the source's sensor number, -1 = none */
    double position[3], orientation[4], velocity[3], angular_velocity[3], scale[3];
    uint8_t buttons[XG_MAX_BUTTONS];
    uint32_t n_buttons;
    double analogs[XG_MAX_ANALOGS];
    uint32_t n_analogs;
};

/** Append a Sample message (encapsulation header included). */
void mcap_cdr_sample(struct mcap_buf *b, const struct mcap_sample *s);
/** Append the CDR of a Sample's identity strings, str[] = {name, source, origin,
 *  origin_gateway, kind} (NUL-terminated), as they follow the encapsulation header; returns its
 *  length (0 when memory is short). An entity's prefix never changes: the recorder encodes it
 *  once and passes it to mcap_cdr_sample_with(). */
size_t mcap_cdr_sample_prefix(struct mcap_buf *b, const char *const str[5]);
/** Append a Sample message made of a prefix (mcap_cdr_sample_prefix(), n bytes), the parent's
 *  name (parent_len bytes without NUL, parent[parent_len] the NUL) and s's other fields (its
 *  strings are not read). The same bytes as mcap_cdr_sample(). */
void mcap_cdr_sample_with(struct mcap_buf *b, const uint8_t *prefix, size_t n, const char *parent,
                          size_t parent_len, const struct mcap_sample *s);
/** Decode a Sample message. 0 or -EPROTO (err names the field and value). */
int mcap_cdr_sample_decode(const uint8_t *p, size_t n, struct mcap_sample *out,
                           struct xg_error *err);

#endif
