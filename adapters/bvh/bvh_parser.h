/* BVH (Biovision Hierarchy) motion files: a pure parser, no I/O but bvh_load().
 *
 * Grammar accepted (keywords case-insensitive, tokens separated by any whitespace, CR/LF or LF):
 *
 *     HIERARCHY
 *     ROOT <name> { OFFSET x y z  CHANNELS n <ch>...  (JOINT <name> { ... } | End Site { OFFSET x y
 * z })* } (more ROOT blocks allowed) MOTION Frames: <n> Frame Time: <seconds> <n rows of the
 * channel values, in joint file order then channel order>
 *
 * Channels are Xposition Yposition Zposition Xrotation Yrotation Zrotation in any order and
 * count (0..6, each at most once per joint). Rotations are in degrees. Every ROOT/JOINT/End Site
 * must have an OFFSET; End Sites have no CHANNELS and no children.
 *
 * Joints are stored in file order (a parent always precedes its children). End Sites are joints
 * with end_site = true named "<parent>_End" (suffixed 2, 3... if taken).
 *
 * Whole rows of numbers after the <n> declared rows (a header that undercounts, as some exporters
 * write) are ignored and counted in bvh_file.extra_frames, as assimp's loader reads only the
 * declared rows; anything else after them (a word, a partial row) is an error.
 *
 * Errors: -EPROTO (syntax), -E2BIG (a limit), -ENOMEM, with a message "line N: ... 'token'"
 * naming the 1-based line and the offending token. */
#ifndef BVH_PARSER_H
#define BVH_PARSER_H

#include <stdbool.h>
#include <stddef.h>

#include "core/util/error.h"

#define BVH_NAME_MAX 64 /* joint names incl. NUL */
#define BVH_MAX_JOINT_CHANNELS 6

enum bvh_channel {
    BVH_XPOSITION = 0,
    BVH_YPOSITION,
    BVH_ZPOSITION,
    BVH_XROTATION,
    BVH_YROTATION,
    BVH_ZROTATION
};

/** "Xposition" ... "Zrotation". */
const char *bvh_channel_name(enum bvh_channel c);

/** One ROOT, JOINT or End Site. */
struct bvh_joint {
    char name[BVH_NAME_MAX];
    int parent;       /* index of the parent joint, -1 for a ROOT */
    bool end_site;    /* an End Site (no channels, no children) */
    double offset[3]; /* OFFSET, file units, in the parent's frame */
    int n_channels;   /* 0..6 */
    enum bvh_channel channels[BVH_MAX_JOINT_CHANNELS]; /* declared order */
    int channel_index; /* column of the first channel in a frame row */
    int line;          /* line of its ROOT/JOINT/End keyword */
};

/** Limits checked while parsing (0 fields take the defaults below). */
struct bvh_limits {
    int max_joints;    /* ROOT + JOINT + End Site; default 1024 */
    int max_channels;  /* channels per frame row; default 6144 */
    long max_frames;   /* default 1,000,000 */
    size_t max_values; /* frames × channels; default 32 M (256 MB of doubles) */
};

#define BVH_DEFAULT_MAX_JOINTS 1024
#define BVH_DEFAULT_MAX_CHANNELS 6144
#define BVH_DEFAULT_MAX_FRAMES 1000000L
#define BVH_DEFAULT_MAX_VALUES ((size_t)32 * 1024 * 1024)

/** A parsed file. Owns joints and motion; free with bvh_free(). */
struct bvh_file {
    struct bvh_joint *joints;
    int n_joints;      /* including End Sites */
    int n_channels;    /* values per frame row */
    long n_frames;     /* rows in motion (= the Frames: header) */
    long extra_frames; /* whole rows of numbers after the declared ones, ignored (0 = none) */
    int extra_line;    /* the line the first of them starts on (when extra_frames > 0) */
    double frame_time; /* seconds per frame, > 0 */
    double *motion;    /* n_frames × n_channels values, row-major; NULL if empty */
};

/** Parse `len` bytes of BVH text (need not be NUL-terminated). lim may be NULL (defaults).
 *  On success fills *out (caller frees with bvh_free) and returns 0; on failure returns a negative
 *  errno with err naming the line and token, and *out is left empty. */
int bvh_parse(const char *text, size_t len, const struct bvh_limits *lim, struct bvh_file *out,
              struct xg_error *err);

/** Read and parse a file (at most 1 GiB). Errors as bvh_parse, plus -errno from open/read with
 *  the path named; parse errors are prefixed with the path: "walk.bvh: line 12: ...". */
int bvh_load(const char *path, const struct bvh_limits *lim, struct bvh_file *out,
             struct xg_error *err);

/** Free what a bvh_file owns and zero it (NULL or empty allowed). */
void bvh_free(struct bvh_file *f);

/** Index of the joint named `name` (exact, case-sensitive), or -1. */
int bvh_find_joint(const struct bvh_file *f, const char *name);

/** Row of frame k (0-based, k < n_frames); NULL when the file has no channels (nothing to read). */
static inline const double *bvh_frame(const struct bvh_file *f, long k)
{
    if (!f->motion) return NULL;
    return f->motion + (size_t)k * (size_t)f->n_channels;
}

#endif
