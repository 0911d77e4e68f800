/* Unity HumanBodyBones names and hierarchy (vmc_bones.h). */
#include "adapters/vmc/vmc_bones.h"

#include <string.h>
#include <strings.h>

const struct vmc_bone_def vmc_bones[VMC_BONES] = {
    {"Hips", -1},                    /* 0 */
    {"LeftUpperLeg", 0},             /* 1 */
    {"RightUpperLeg", 0},            /* 2 */
    {"LeftLowerLeg", 1},             /* 3 */
    {"RightLowerLeg", 2},            /* 4 */
    {"LeftFoot", 3},                 /* 5 */
    {"RightFoot", 4},                /* 6 */
    {"Spine", 0},                    /* 7 */
    {"Chest", 7},                    /* 8 */
    {"Neck", 54},                    /* 9 */
    {"Head", 9},                     /* 10 */
    {"LeftShoulder", 54},            /* 11 */
    {"RightShoulder", 54},           /* 12 */
    {"LeftUpperArm", 11},            /* 13 */
    {"RightUpperArm", 12},           /* 14 */
    {"LeftLowerArm", 13},            /* 15 */
    {"RightLowerArm", 14},           /* 16 */
    {"LeftHand", 15},                /* 17 */
    {"RightHand", 16},               /* 18 */
    {"LeftToes", 5},                 /* 19 */
    {"RightToes", 6},                /* 20 */
    {"LeftEye", 10},                 /* 21 */
    {"RightEye", 10},                /* 22 */
    {"Jaw", 10},                     /* 23 */
    {"LeftThumbProximal", 17},       /* 24 */
    {"LeftThumbIntermediate", 24},   /* 25 */
    {"LeftThumbDistal", 25},         /* 26 */
    {"LeftIndexProximal", 17},       /* 27 */
    {"LeftIndexIntermediate", 27},   /* 28 */
    {"LeftIndexDistal", 28},         /* 29 */
    {"LeftMiddleProximal", 17},      /* 30 */
    {"LeftMiddleIntermediate", 30},  /* 31 */
    {"LeftMiddleDistal", 31},        /* 32 */
    {"LeftRingProximal", 17},        /* 33 */
    {"LeftRingIntermediate", 33},    /* 34 */
    {"LeftRingDistal", 34},          /* 35 */
    {"LeftLittleProximal", 17},      /* 36 */
    {"LeftLittleIntermediate", 36},  /* 37 */
    {"LeftLittleDistal", 37},        /* 38 */
    {"RightThumbProximal", 18},      /* 39 */
    {"RightThumbIntermediate", 39},  /* 40 */
    {"RightThumbDistal", 40},        /* 41 */
    {"RightIndexProximal", 18},      /* 42 */
    {"RightIndexIntermediate", 42},  /* 43 */
    {"RightIndexDistal", 43},        /* 44 */
    {"RightMiddleProximal", 18},     /* 45 */
    {"RightMiddleIntermediate", 45}, /* 46 */
    {"RightMiddleDistal", 46},       /* 47 */
    {"RightRingProximal", 18},       /* 48 */
    {"RightRingIntermediate", 48},   /* 49 */
    {"RightRingDistal", 49},         /* 50 */
    {"RightLittleProximal", 18},     /* 51 */
    {"RightLittleIntermediate", 51}, /* 52 */
    {"RightLittleDistal", 52},       /* 53 */
    {"UpperChest", 8},               /* 54 */
};

int vmc_bone_find(const char *name, size_t len)
{
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < VMC_BONES; i++) {
            const char *b = vmc_bones[i].name;
            if (strlen(b) != len) continue;
            if (pass == 0 ? memcmp(b, name, len) == 0 : strncasecmp(b, name, len) == 0) return i;
        }
    return -1;
}
