/* Rokoko's solved_hand device layout (rgmp_solved_hand.h). */
#include "adapters/rgmp/rgmp_solved_hand.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock/clock.h"

/* XrHandJointEXT order (XR_EXT_hand_tracking): the thumb has no intermediate phalanx. */
static const char *const joint_names[RGMP_HAND_JOINTS] = {
    "palm",
    "wrist",
    "thumb_metacarpal",
    "thumb_proximal",
    "thumb_distal",
    "thumb_tip",
    "index_metacarpal",
    "index_proximal",
    "index_intermediate",
    "index_distal",
    "index_tip",
    "middle_metacarpal",
    "middle_proximal",
    "middle_intermediate",
    "middle_distal",
    "middle_tip",
    "ring_metacarpal",
    "ring_proximal",
    "ring_intermediate",
    "ring_distal",
    "ring_tip",
    "little_metacarpal",
    "little_proximal",
    "little_intermediate",
    "little_distal",
    "little_tip",
};

const char *rgmp_hand_joint_name(int j)
{
    return j >= 0 && j < RGMP_HAND_JOINTS ? joint_names[j] : NULL;
}

int rgmp_hand_joint_index(const char *name)
{
    if (!name) return -1;
    if (!strncmp(name, "xr_", 3)) name += 3;
    for (int j = 0; j < RGMP_HAND_JOINTS; j++)
        if (!strcmp(name, joint_names[j])) return j;
    return -1;
}

int rgmp_hand_joint_parent(int j)
{
    if (j == RGMP_HAND_PALM) return RGMP_HAND_WRIST;
    if (j <= RGMP_HAND_WRIST || j >= RGMP_HAND_JOINTS) return -1;
    /* metacarpals (2, 6, 11, 16, 21) hang off the wrist, every other joint off its predecessor */
    if (j == 2 || j == 6 || j == 11 || j == 16 || j == 21) return RGMP_HAND_WRIST;
    return j - 1;
}

int rgmp_hand_definition(uint32_t device_id, const char *hand, const char *source, double rate_hz,
                         struct rgmp_definition **out, struct xg_error *err)
{
    *out = NULL;
    if (!hand || (strcmp(hand, "left") && strcmp(hand, "right")))
        return xg_error_set(err, -EINVAL, "solved_hand: hand '%s' is not left or right",
                            hand ? hand : "(null)");
    struct rgmp_definition *def =
        rgmp_definition_new(device_id, RGMP_HAND_DEVICE_TYPE, RGMP_EPOCH_UNIX);
    if (!def) return -ENOMEM;
    json_t *info = source ? json_pack("{s:s, s:s}", "hand", hand, "source", source)
                          : json_pack("{s:s}", "hand", hand);
    def->device_info_json = info ? json_dumps(info, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(info);
    int rc = def->device_info_json ? 0 : -ENOMEM;
    if (rc == 0) rc = rgmp_definition_add_group(def, RGMP_HAND_GROUP, rate_hz, err);
    for (int j = 0; j < RGMP_HAND_JOINTS && rc >= 0; j++) {
        char tf[32];
        snprintf(tf, sizeof tf, "xr_%s", joint_names[j]);
        struct rgmp_entry_spec spec = {.data_type = "FLOAT[7]",
                                       .measure_type = "TRANSFORM",
                                       .target_frame = tf,
                                       .reference_frame = RGMP_HAND_REFERENCE_FRAME};
        rc = rgmp_definition_add_stream(def, 0, &spec, err);
    }
    if (rc < 0) {
        rgmp_definition_free(def);
        return rc;
    }
    *out = def;
    return 0;
}

void rgmp_hand_values(const struct xg_pose pose[RGMP_HAND_JOINTS],
                      const bool have[RGMP_HAND_JOINTS], float out[RGMP_HAND_JOINTS * 7])
{
    for (int j = 0; j < RGMP_HAND_JOINTS; j++) {
        int src = j;
        while (src >= 0 && !have[src])
            src = rgmp_hand_joint_parent(src);
        if (src < 0) src = RGMP_HAND_WRIST;
        const struct xg_pose *p = &pose[src];
        struct xg_quat q = xg_quat_normalize(p->orientation);
        float *v = out + 7 * j;
        v[0] = (float)p->position.x;
        v[1] = (float)p->position.y;
        v[2] = (float)p->position.z;
        v[3] = (float)q.x;
        v[4] = (float)q.y;
        v[5] = (float)q.z;
        v[6] = (float)q.w;
    }
}

uint64_t rgmp_next_timestamp_us(uint64_t *last, int64_t mono_ns)
{
    int64_t us = xg_ns_to_us(xg_clock_mono_to_wall_ns(mono_ns));
    uint64_t ts = us > 0 ? (uint64_t)us : 0;
    if (ts <= *last) ts = *last + 1;
    *last = ts;
    return ts;
}
