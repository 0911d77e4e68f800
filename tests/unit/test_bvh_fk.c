/* BVH forward kinematics: hand-computed poses of a 2-joint chain in two channel orders
 * (tests/vectors/bvh/chain_*.bvh), the position-channel and scale rules, velocities and angular
 * velocities by central differences, and plausible human geometry and walking speed for the CMU
 * walk in tests/vectors/mocap. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "adapters/bvh/bvh_fk.h"
#include "adapters/bvh/bvh_parser.h"

#define VEC_DIR XG_SOURCE_DIR "/tests/vectors/bvh/"
#define CMU_FILE XG_VECTORS_DIR "/mocap/cmu_08_10_walk.bvh"
#define CMU_SCALE (0.0254 / 0.45) /* the adapter's default `units: cmu` */
#define DEG (M_PI / 180.0)

static void load(const char *path, struct bvh_file *f)
{
    struct xg_error err = {0};
    if (bvh_load(path, NULL, f, &err)) fail_msg("%s", err.msg);
}

static void assert_vec(struct xg_vec3 v, double x, double y, double z, double tol)
{
    if (fabs(v.x - x) > tol || fabs(v.y - y) > tol || fabs(v.z - z) > tol)
        fail_msg("got (%.9f, %.9f, %.9f), want (%.9f, %.9f, %.9f)", v.x, v.y, v.z, x, y, z);
}

/* Same rotation (q or -q). */
static void assert_quat(struct xg_quat q, double x, double y, double z, double w, double tol)
{
    double s = (q.w * w + q.x * x + q.y * y + q.z * z) < 0 ? -1.0 : 1.0;
    if (fabs(s * q.x - x) > tol || fabs(s * q.y - y) > tol || fabs(s * q.z - z) > tol ||
        fabs(s * q.w - w) > tol)
        fail_msg("got (%.9f, %.9f, %.9f, %.9f), want (%.9f, %.9f, %.9f, %.9f)", q.x, q.y, q.z, q.w,
                 x, y, z, w);
}

/* Root at (1,2,3), B 10 units up the root's Y, B's End Site 5 further.
 * ZXY with Z=90, X=90: R = Rz(90)·Rx(90); Rx(90) takes +Y to +Z, Rz(90) keeps +Z:
 *   B = (1,2,3) + (0,0,10) = (1,2,13), End = (1,2,18), q = qz⊗qx = (½,½,½,½).
 * XYZ with X=90, Z=90: R = Rx(90)·Rz(90); Rz(90) takes +Y to −X, Rx(90) keeps −X:
 *   B = (1,2,3) + (−10,0,0) = (−9,2,3), End = (−14,2,3), q = qx⊗qz = (½,−½,½,½). */
static void test_chain_orders(void **state)
{
    (void)state;
    struct bvh_file zxy, xyz;
    load(VEC_DIR "chain_zxy.bvh", &zxy);
    load(VEC_DIR "chain_xyz.bvh", &xyz);
    struct xg_vec3 p[3];
    struct xg_quat q[3];
    bvh_fk(&zxy, bvh_frame(&zxy, 0), 1.0, p, q);
    assert_vec(p[0], 1, 2, 3, 1e-12);
    assert_vec(p[1], 1, 2, 13, 1e-12);
    assert_vec(p[2], 1, 2, 18, 1e-12);
    assert_quat(q[0], 0.5, 0.5, 0.5, 0.5, 1e-12);
    assert_quat(q[1], 0.5, 0.5, 0.5, 0.5, 1e-12);
    assert_quat(q[2], 0.5, 0.5, 0.5, 0.5, 1e-12);

    bvh_fk(&xyz, bvh_frame(&xyz, 0), 1.0, p, q);
    assert_vec(p[1], -9, 2, 3, 1e-12);
    assert_vec(p[2], -14, 2, 3, 1e-12);
    assert_quat(q[0], 0.5, -0.5, 0.5, 0.5, 1e-12);

    /* frame 2: only B turns, 90° about Z, in both files: same poses.
     * B = (1,12,3); End = B + Rz(90)·(0,5,0) = (−4,12,3); q_B = (0,0,√½,√½) */
    const double h = sqrt(0.5);
    struct xg_vec3 p2[3];
    struct xg_quat q2[3];
    bvh_fk(&zxy, bvh_frame(&zxy, 1), 1.0, p, q);
    bvh_fk(&xyz, bvh_frame(&xyz, 1), 1.0, p2, q2);
    for (int i = 0; i < 3; i++) {
        assert_vec(p2[i], p[i].x, p[i].y, p[i].z, 1e-12);
        assert_quat(q2[i], q[i].x, q[i].y, q[i].z, q[i].w, 1e-12);
    }
    assert_vec(p[1], 1, 12, 3, 1e-12);
    assert_vec(p[2], -4, 12, 3, 1e-12);
    assert_quat(q[0], 0, 0, 0, 1, 1e-12);
    assert_quat(q[1], 0, 0, h, h, 1e-12);

    /* scale applies to offsets and position channels alike */
    bvh_fk(&zxy, bvh_frame(&zxy, 0), 0.01, p, q);
    assert_vec(p[0], 0.01, 0.02, 0.03, 1e-14);
    assert_vec(p[2], 0.01, 0.02, 0.18, 1e-14);
    /* local rotation alone: intrinsic product in declared order */
    struct xg_quat lq = bvh_local_rotation(&zxy.joints[0], bvh_frame(&zxy, 0));
    struct xg_quat want = xg_quat_mul(xg_quat_from_axis_angle((struct xg_vec3){0, 0, 1}, M_PI / 2),
                                      xg_quat_from_axis_angle((struct xg_vec3){1, 0, 0}, M_PI / 2));
    assert_quat(lq, want.x, want.y, want.z, want.w, 1e-12);
    bvh_free(&zxy);
    bvh_free(&xyz);
}

/* Position channels replace the OFFSET component they name; the others keep it. Child joints
 * with position channels work the same way. A general three-angle case against matrices. */
static void test_position_channels_and_matrices(void **state)
{
    (void)state;
    const char *t = "HIERARCHY\nROOT R\n{\n OFFSET 5 6 7\n CHANNELS 4 Yposition Xrotation "
                    "Yrotation Zrotation\n JOINT C\n {\n  OFFSET 1 2 3\n  CHANNELS 2 Zposition "
                    "Yrotation\n  End Site\n  {\n   OFFSET 0 0 1\n  }\n }\n}\nMOTION\nFrames: 1\n"
                    "Frame Time: 0.1\n-1 30 -45 60 9 20\n";
    struct bvh_file f;
    struct xg_error err = {0};
    assert_int_equal(bvh_parse(t, strlen(t), NULL, &f, &err), 0);
    struct xg_vec3 p[3];
    struct xg_quat q[3];
    bvh_fk(&f, bvh_frame(&f, 0), 1.0, p, q);
    assert_vec(p[0], 5, -1, 7, 1e-12);
    /* R = Rx(30)·Ry(-45)·Rz(60) as matrices */
    double a = 30 * DEG, b = -45 * DEG, c = 60 * DEG;
    double rx[3][3] = {{1, 0, 0}, {0, cos(a), -sin(a)}, {0, sin(a), cos(a)}};
    double ry[3][3] = {{cos(b), 0, sin(b)}, {0, 1, 0}, {-sin(b), 0, cos(b)}};
    double rz[3][3] = {{cos(c), -sin(c), 0}, {sin(c), cos(c), 0}, {0, 0, 1}};
    double t1[3][3] = {{0}}, r[3][3] = {{0}};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 3; k++)
                t1[i][j] += rx[i][k] * ry[k][j];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 3; k++)
                r[i][j] += t1[i][k] * rz[k][j];
    double m[3][3];
    xg_quat_to_mat3(q[0], m);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            assert_true(fabs(m[i][j] - r[i][j]) < 1e-12);
    /* C: local translation (1, 2, 9) (Zposition replaces 3) rotated by R */
    struct xg_vec3 lc = {1, 2, 9};
    struct xg_vec3 want = {r[0][0] * lc.x + r[0][1] * lc.y + r[0][2] * lc.z + 5,
                           r[1][0] * lc.x + r[1][1] * lc.y + r[1][2] * lc.z - 1,
                           r[2][0] * lc.x + r[2][1] * lc.y + r[2][2] * lc.z + 7};
    assert_vec(p[1], want.x, want.y, want.z, 1e-12);
    /* End Site: C's rotation is R·Ry(20) */
    struct xg_vec3 e = xg_quat_rotate(
        xg_quat_mul(q[0], xg_quat_from_axis_angle((struct xg_vec3){0, 1, 0}, 20 * DEG)),
        (struct xg_vec3){0, 0, 1});
    assert_vec(p[2], p[1].x + e.x, p[1].y + e.y, p[1].z + e.z, 1e-12);
    bvh_free(&f);
}

/* Root X at 0, 1, 2, 4 (frame time 0.5 s) and Y rotation 0, 10, 20, 20 degrees. */
static void test_velocities(void **state)
{
    (void)state;
    const char *t = "HIERARCHY ROOT R { OFFSET 0 0 0 CHANNELS 2 Xposition Yrotation\n"
                    "End Site { OFFSET 0 0 1 } }\nMOTION\nFrames: 4\nFrame Time: 0.5\n"
                    "0 0\n1 10\n2 20\n4 20\n";
    struct bvh_file f;
    struct xg_error err = {0};
    assert_int_equal(bvh_parse(t, strlen(t), NULL, &f, &err), 0);
    struct bvh_fk_work w;
    assert_int_equal(bvh_fk_work_init(&w, &f), 0);
    struct xg_vec3 p[2], v[2], av[2];
    struct xg_quat q[2];
    const double wy = 20 * DEG;                       /* 10°/0.5 s */
    bvh_fk_motion(&f, 0, 0, 3, 2.0, &w, p, q, v, av); /* forward difference */
    assert_vec(v[0], 4, 0, 0, 1e-12);                 /* 1 unit × 2 / 0.5 s */
    assert_vec(av[0], 0, wy, 0, 1e-12);
    bvh_fk_motion(&f, 1, 0, 3, 2.0, &w, p, q, v, av); /* central */
    assert_vec(p[0], 2, 0, 0, 1e-12);
    assert_vec(v[0], 4, 0, 0, 1e-12);
    assert_vec(av[0], 0, wy, 0, 1e-12);
    /* the End Site moves with the root and swings: v = v_root + ω × r, within the secant error */
    assert_true(fabs(v[1].x - (4 + wy * 2.0 * cos(10 * DEG))) < 0.05);
    bvh_fk_motion(&f, 2, 0, 3, 2.0, &w, p, q, v, av); /* central over 1..3 */
    assert_vec(v[0], 6, 0, 0, 1e-12);
    assert_vec(av[0], 0, 10 * DEG, 0, 1e-12);
    bvh_fk_motion(&f, 3, 0, 3, 2.0, &w, p, q, v, av); /* backward */
    assert_vec(v[0], 8, 0, 0, 1e-12);
    assert_vec(av[0], 0, 0, 0, 1e-12);
    bvh_fk_motion(&f, 2, 2, 2, 2.0, &w, p, q, v, av); /* single frame: at rest */
    assert_vec(v[0], 0, 0, 0, 0);
    bvh_fk_motion(&f, 2, 1, 3, 2.0, &w, p, q, NULL, NULL); /* poses only */
    assert_vec(p[0], 4, 0, 0, 1e-12);
    bvh_fk_work_free(&w);
    bvh_free(&f);
}

static bool have_cmu(void)
{
    FILE *fp = fopen(CMU_FILE, "rb");
    if (!fp) return false;
    fclose(fp);
    return true;
}

/* CMU 08_10 (walk), default scale: a human-sized figure walking at walking speed. Frame 0 is the
 * converter's T-pose and is left out (as `start: 1f` does in the adapter). */
static void test_cmu_geometry(void **state)
{
    (void)state;
    if (!have_cmu()) fail_msg("%s absent (tests/vectors/mocap)", CMU_FILE);
    struct bvh_file f;
    load(CMU_FILE, &f);
    int n = f.n_joints;
    int hips = bvh_find_joint(&f, "Hips"), head = bvh_find_joint(&f, "Head"),
        top = bvh_find_joint(&f, "Head_End"), lfoot = bvh_find_joint(&f, "LeftFoot"),
        rfoot = bvh_find_joint(&f, "RightFoot"), ltoe = bvh_find_joint(&f, "LeftToeBase"),
        rtoe = bvh_find_joint(&f, "RightToeBase"), lhand = bvh_find_joint(&f, "LeftHand"),
        rhand = bvh_find_joint(&f, "RightHand");
    assert_true(hips == 0 && head > 0 && top > 0 && lfoot > 0 && rfoot > 0 && lhand > 0 &&
                rhand > 0 && ltoe > 0 && rtoe > 0);
    struct xg_vec3 *p = calloc((size_t)n, sizeof *p), *v = calloc((size_t)n, sizeof *v),
                   *av = calloc((size_t)n, sizeof *av);
    struct xg_quat *q = calloc((size_t)n, sizeof *q);
    struct bvh_fk_work w;
    assert_int_equal(bvh_fk_work_init(&w, &f), 0);
    double min_head = 1e9, max_head = -1e9, min_foot = 1e9, max_top = -1e9, min_top = 1e9;
    double max_w = 0, min_hip_y = 1e9, max_hip_y = -1e9, max_vel_err = 0;
    struct xg_vec3 first = {0}, last = {0};
    for (long k = 1; k < f.n_frames; k++) {
        bvh_fk_motion(&f, k, 1, f.n_frames - 1, CMU_SCALE, &w, p, q, v, av);
        double dh = p[head].y - p[hips].y;
        min_head = fmin(min_head, dh);
        max_head = fmax(max_head, dh);
        min_top = fmin(min_top, p[top].y);
        max_top = fmax(max_top, p[top].y);
        min_hip_y = fmin(min_hip_y, p[hips].y);
        max_hip_y = fmax(max_hip_y, p[hips].y);
        /* the lower foot is near the floor */
        double low = fmin(fmin(p[ltoe].y, p[rtoe].y), fmin(p[lfoot].y, p[rfoot].y));
        min_foot = fmin(min_foot, low);
        assert_true(low > -0.10 && low < 0.20);
        /* both hands below the head, the head above both feet */
        assert_true(p[lhand].y < p[head].y && p[rhand].y < p[head].y);
        /* unit quaternions, bounded angular speed (the ±360° channel wraps are no spin) */
        for (int i = 0; i < n; i++) {
            double qn = sqrt(xg_quat_dot(q[i], q[i]));
            assert_true(fabs(qn - 1) < 1e-9);
            max_w = fmax(max_w, xg_vec3_norm(av[i]));
        }
        if (k == 1) first = p[hips];
        last = p[hips];
        /* the reported velocity is the central difference of the positions */
        if (k > 1 && k < f.n_frames - 1) {
            struct xg_vec3 pa[64], pb[64];
            struct xg_quat qa[64], qb[64];
            assert_true(n <= 64);
            bvh_fk(&f, bvh_frame(&f, k - 1), CMU_SCALE, pa, qa);
            bvh_fk(&f, bvh_frame(&f, k + 1), CMU_SCALE, pb, qb);
            struct xg_vec3 d = xg_vec3_scale(xg_vec3_sub(pb[hips], pa[hips]), 0.5 / f.frame_time);
            max_vel_err = fmax(max_vel_err, xg_vec3_norm(xg_vec3_sub(d, v[hips])));
        }
    }
    double secs = (double)(f.n_frames - 2) * f.frame_time;
    double dx = last.x - first.x, dz = last.z - first.z;
    double speed = sqrt(dx * dx + dz * dz) / secs;
    print_message("CMU walk: head-hips %.3f..%.3f m, head top %.3f..%.3f m, hips %.3f..%.3f m, "
                  "lowest foot %.3f m, walking %.2f m/s, max angular speed %.2f rad/s\n",
                  min_head, max_head, min_top, max_top, min_hip_y, max_hip_y, min_foot, speed,
                  max_w);
    assert_true(min_head > 0.4 && max_head < 0.8);
    /* the head's End Site (CMU puts it a little below the crown): a person of 1.4-2 m */
    assert_true(min_top > 1.3 && max_top < 2.0);
    assert_true(min_hip_y > 0.75 && max_hip_y < 1.15);
    assert_true(min_foot > -0.10 && min_foot < 0.10);
    assert_true(speed > 0.5 && speed < 2.0);
    assert_true(dz > 0); /* along +Z, as in the README */
    /* toes at heel strike reach ~30 rad/s in this take; a ±360° channel wrap taken for a spin
     * would show as 2π / (2 × frame time) ≈ 377 rad/s */
    assert_true(max_w < 60.0);
    assert_true(max_vel_err < 1e-12);
    bvh_fk_work_free(&w);
    free(p);
    free(v);
    free(av);
    free(q);
    bvh_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chain_orders),
        cmocka_unit_test(test_position_channels_and_matrices),
        cmocka_unit_test(test_velocities),
        cmocka_unit_test(test_cmu_geometry),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
