/* ROS 2 names and stamps for the dds adapter: pure functions, no Cyclone DDS, unit-tested.
 *
 * ROS 2 topic names map to DDS topic names by prefixing "rt" ("/tf" → "rt/tf"; ROS 2 design
 * article "Topic and Service name mapping to DDS"). A ROS 2 name is tokens of [A-Za-z0-9_]
 * separated by '/', no token starting with a digit, no empty token, no trailing '/'.
 * TF frame ids (REP 105) follow the same character rules without a leading '/'.
 * builtin_interfaces/Time is seconds (int32) plus nanoseconds (uint32, below 1e9). */
#ifndef XG_DDS_NAMES_H
#define XG_DDS_NAMES_H

#include <stddef.h>
#include <stdint.h>

#define DDS_TOPIC_MAX 256 /* longest DDS topic name, bytes without the NUL (RTPS limit) */

/** Map any string (an entity name) to a legal ROS 2 name without leading '/': bytes outside
 *  [A-Za-z0-9_/] become '_', empty tokens (leading, trailing or repeated '/') are left out, a
 *  token starting with a digit gets a '_' in front; an empty result is "_". Writes at most
 *  size - 1 bytes and a NUL (size >= 2; a longer result is cut). Returns the length written.
 *  Example: "demo/body 0" → "demo/body_0", "rig/3/x" → "rig/_3/x". */
size_t dds_ros_name(char *out, size_t size, const char *in);

/** Check a ROS 2 topic name and write its DDS topic name ("rt" + the fully qualified name; a
 *  relative name is taken from the root namespace: "robot/pose" → "rt/robot/pose") into out
 *  (size >= DDS_TOPIC_MAX + 1). Returns 0, or -EINVAL with a static reason in *why (empty, a
 *  character outside [A-Za-z0-9_/], an empty token, a token starting with a digit, a trailing
 *  '/', or longer than DDS_TOPIC_MAX). */
int dds_topic_from_ros(const char *ros, char *out, size_t size, const char **why);

/** Wall-clock ns since the Unix epoch → builtin_interfaces/Time (sec, nanosec in [0, 1e9)).
 *  Seconds outside int32 are clamped. */
void dds_stamp_from_ns(int64_t ns, int32_t *sec, uint32_t *nanosec);
/** builtin_interfaces/Time → ns since the sender's epoch. -EINVAL if nanosec >= 1e9. */
int dds_stamp_to_ns(int32_t sec, uint32_t nanosec, int64_t *ns);

#endif
