/* `mcap-replay` ingress: plays an MCAP file back into the entity table (docs/adapters/mcap.md).
 *
 * The lossless channel (/xrgate/samples, xrgate_msgs/msg/Sample) when the file has one: every
 * sample with its recorded name (as the source name; `rename` applies), kind and parent, at its
 * recorded capture time relative to the first one, / speed. Otherwise a /tf channel
 * (tf2_msgs/msg/TFMessage in CDR, as rosbag2 writes it): child_frame_id becomes the name, a
 * frame_id seen as a child before becomes the parent (world pose composed), others are world. */
#ifndef XG_MCAP_REPLAY_H
#define XG_MCAP_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/conf.h"
#include "core/error.h"

struct mcap_replay_state;

struct mcap_replay {
    char path[1024];
    bool loop;
    double speed;          /* playback factor, > 0 */
    double start_s, end_s; /* window, seconds from the first message; end 0 = the end */
    struct mcap_replay_state *st;
};

/** Read the mcap-replay keys into p (zeroed by the caller). 0 or -EINVAL with err naming
 *  file:line:col. */
int mcap_replay_read_conf(struct mcap_replay *p, const struct xg_conf *conf, struct xg_error *err);

#endif
