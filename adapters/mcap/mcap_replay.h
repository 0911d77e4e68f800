/* `mcap-replay` ingress: plays an MCAP recording back into the entity table
 * (docs/adapters/mcap.md "Replay").
 *
 * What it plays: the lossless channel (/xrgate/samples, xrgate_msgs/msg/Sample) when the file has
 * one: every sample with its recorded name as the source name (`rename` applies), its kind,
 * parent, flags, velocities, buttons and analogs, in the internal frame. Otherwise every /tf
 * channel (tf2_msgs/msg/TFMessage in CDR, as rosbag2 writes it): each transform's child_frame_id
 * becomes an entity; a frame_id that was itself a child before becomes its parent (the world pose
 * composed along it), any other frame_id is the world; the adapter's `frame` (default `ros`)
 * converts those poses.
 *
 * Timing: a message is played when its log time, relative to the first one of the window
 * (`start_s`, `end_s`), divided by `speed`, has passed on the gateway clock (a one-shot timer at
 * the next message's due time); its capture time is mapped the same way. With `loop` the file
 * starts again after its last message and the table forgets the entities' history. */
#ifndef XG_MCAP_REPLAY_H
#define XG_MCAP_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/conf/conf.h"
#include "core/util/error.h"

struct mcap_replay_state;

/** The configuration of one mcap-replay instance (mcap_conf.c) and its playback state. */
struct mcap_replay {
    char path[1024];
    bool loop;
    double speed;          /* playback factor, > 0 */
    double start_s, end_s; /* window, s from the file's first message; end_s 0 = the end */
    struct mcap_replay_state *st;
};

/** Read the mcap-replay keys into p (zeroed by the caller). 0 or -EINVAL with err naming
 *  file:line:col, key and value. */
int mcap_replay_read_conf(struct mcap_replay *p, const struct xg_conf *conf, struct xg_error *err);

#endif
