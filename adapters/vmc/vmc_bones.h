/* Unity's humanoid skeleton (HumanBodyBones, the bone names of the VMC protocol) and its
 * hierarchy. VMC sends every bone's pose local to its parent transform; a bone an avatar does not
 * have (Chest, UpperChest, Neck, shoulders, toes, eyes, jaw, fingers are optional in Unity's
 * humanoid) is skipped, so the parent of a bone is its nearest ancestor that the sender has. */
#ifndef VMC_BONES_H
#define VMC_BONES_H

#include <stddef.h>

#define VMC_BONES 55 /* HumanBodyBones.Hips (0) .. UpperChest (54); LastBone is not a bone */

struct vmc_bone_def {
    const char *name; /* HumanBodyBones enum name, e.g. "LeftUpperArm" */
    int parent;       /* canonical parent bone index, -1 for Hips (its parent is the root) */
};

/** The 55 bones in HumanBodyBones order. */
extern const struct vmc_bone_def vmc_bones[VMC_BONES];

/** Bone index of `len` bytes at `name` (exact, then ASCII case-insensitive), or -1. */
int vmc_bone_find(const char *name, size_t len);

#endif
