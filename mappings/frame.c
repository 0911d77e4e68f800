#include "mappings/frame.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "mappings/conf_yaml.h"
#include "mappings/presets.h"

void xg_frame_identity(struct xg_frame *f)
{
    memset(f, 0, sizeof *f);
    snprintf(f->name, sizeof f->name, "yup-rh");
    for (int i = 0; i < 3; i++)
        f->m[i][i] = 1.0;
    f->det = 1.0;
    f->scale = 1.0;
    f->rotation = XG_QUAT_IDENTITY;
}

int xg_frame_parse_axes(const char *axes, double m[3][3], double *det, struct xg_error *err)
{
    double mm[3][3] = {{0}};
    int used[3] = {0};
    const char *p = axes;
    for (int i = 0; i < 3; i++) {
        while (*p == ' ')
            p++;
        double sign = 1.0;
        if (*p == '-' || *p == '+') {
            sign = *p == '-' ? -1.0 : 1.0;
            p++;
        }
        int j = (*p == 'x' || *p == 'X')   ? 0
                : (*p == 'y' || *p == 'Y') ? 1
                : (*p == 'z' || *p == 'Z') ? 2
                                           : -1;
        if (j < 0)
            return xg_error_set(err, -EINVAL,
                                "axes '%s': item %d must be x, y or z with an optional sign", axes,
                                i + 1);
        if (used[j]++)
            return xg_error_set(err, -EINVAL, "axes '%s': wire axis '%c' is used twice", axes,
                                "xyz"[j]);
        mm[i][j] = sign;
        p++;
        while (*p == ' ')
            p++;
        if (i < 2) {
            if (*p != ',')
                return xg_error_set(err, -EINVAL, "axes '%s': expected three comma-separated axes",
                                    axes);
            p++;
        } else if (*p) {
            return xg_error_set(err, -EINVAL, "axes '%s': unexpected text after the third axis",
                                axes);
        }
    }
    memcpy(m, mm, sizeof mm);
    *det = xg_mat3_det(mm) > 0 ? 1.0 : -1.0;
    return 0;
}

static const struct xg_embedded_file *find_preset(const char *name)
{
    for (const struct xg_embedded_file *p = xg_embedded_presets; p->name; p++)
        if (strcasecmp(p->name, name) == 0) return p;
    return NULL;
}

const char *xg_frame_preset_names(void)
{
    static char buf[512];
    size_t o = 0;
    buf[0] = '\0';
    for (const struct xg_embedded_file *p = xg_embedded_presets; p->name; p++)
        o += (size_t)snprintf(buf + o, o < sizeof buf ? sizeof buf - o : 0, "%s%s", o ? ", " : "",
                              p->name);
    return buf;
}

static int read_vec(const struct xg_conf *map, const char *key, int n, double *out,
                    struct xg_error *err)
{
    struct xg_conf *v = xg_conf_get(map, key);
    if (!v) return 1; /* absent */
    if (v->type != XG_CONF_SEQ || (int)v->n_items != n)
        return xg_conf_error(err, v, -EINVAL, "'%s' must be a list of %d numbers", key, n);
    for (int i = 0; i < n; i++) {
        int rc = xg_conf_node_double(v->items[i], -1e9, 1e9, &out[i], err);
        if (rc) return rc;
    }
    return 0;
}

/* Apply the keys of a frame map onto f (used for presets and inline frames). */
static int apply_map(const struct xg_conf *node, struct xg_frame *f, struct xg_error *err)
{
    const char *axes;
    int rc = xg_conf_string(node, "axes", NULL, &axes, err);
    if (rc) return rc;
    if (axes) {
        struct xg_error e2 = {0};
        if ((rc = xg_frame_parse_axes(axes, f->m, &f->det, &e2)))
            return xg_conf_error(err, xg_conf_get(node, "axes"), rc, "%s", e2.msg);
    }
    if ((rc = xg_conf_double(node, "scale", f->scale, 1e-12, 1e12, &f->scale, err))) return rc;
    double v[4];
    rc = read_vec(node, "offset", 3, v, err);
    if (rc < 0) return rc;
    if (rc == 0) f->offset = (struct xg_vec3){v[0], v[1], v[2]};
    rc = read_vec(node, "rotation", 4, v, err);
    if (rc < 0) return rc;
    if (rc == 0) {
        struct xg_quat q = {v[0], v[1], v[2], v[3]};
        if (!(xg_quat_dot(q, q) > 1e-12))
            return xg_conf_error(err, xg_conf_get(node, "rotation"), -EINVAL,
                                 "'rotation' must be a non-zero quaternion [x, y, z, w]");
        f->rotation = xg_quat_normalize(q);
    }
    const char *desc;
    return xg_conf_string(node, "description", NULL, &desc, err);
}

int xg_frame_preset(const char *name, struct xg_frame *f, struct xg_error *err)
{
    const struct xg_embedded_file *p = find_preset(name);
    if (!p)
        return xg_error_set(err, -ENOENT, "unknown frame preset '%s' (known: %s)", name,
                            xg_frame_preset_names());
    char fname[96];
    snprintf(fname, sizeof fname, "mappings/presets/%s.yaml", p->name);
    struct xg_conf *root = xg_conf_yaml_parse(p->text, strlen(p->text), fname, err);
    if (!root) return err ? err->code : -EINVAL;
    xg_frame_identity(f);
    int rc = apply_map(root, f, err);
    if (!rc) rc = xg_conf_check_unused(root, err);
    xg_conf_yaml_free(root);
    if (!rc) snprintf(f->name, sizeof f->name, "%s", p->name);
    return rc;
}

int xg_frame_from_conf(const struct xg_conf *node, struct xg_frame *f, struct xg_error *err)
{
    xg_frame_identity(f);
    if (!node) return 0;
    if (node->type == XG_CONF_SCALAR) {
        struct xg_error e2 = {0};
        int rc = xg_frame_preset(node->value, f, &e2);
        return rc ? xg_conf_error(err, node, rc, "%s", e2.msg) : 0;
    }
    if (node->type != XG_CONF_MAP)
        return xg_conf_error(err, node, -EINVAL,
                             "'frame' must be a preset name or a mapping {axes, scale, ...}");
    const char *preset;
    int rc = xg_conf_string(node, "preset", NULL, &preset, err);
    if (rc) return rc;
    if (preset) {
        struct xg_error e2 = {0};
        if ((rc = xg_frame_preset(preset, f, &e2)))
            return xg_conf_error(err, xg_conf_get(node, "preset"), rc, "%s", e2.msg);
    }
    snprintf(f->name, sizeof f->name, "%s", preset ? preset : "custom");
    return apply_map(node, f, err);
}

static struct xg_vec3 mat_mul(const double m[3][3], struct xg_vec3 v)
{
    return (struct xg_vec3){m[0][0] * v.x + m[0][1] * v.y + m[0][2] * v.z,
                            m[1][0] * v.x + m[1][1] * v.y + m[1][2] * v.z,
                            m[2][0] * v.x + m[2][1] * v.y + m[2][2] * v.z};
}

static struct xg_vec3 mat_tmul(const double m[3][3], struct xg_vec3 v)
{
    return (struct xg_vec3){m[0][0] * v.x + m[1][0] * v.y + m[2][0] * v.z,
                            m[0][1] * v.x + m[1][1] * v.y + m[2][1] * v.z,
                            m[0][2] * v.x + m[1][2] * v.y + m[2][2] * v.z};
}

static struct xg_vec3 ref_pos_in(const struct xg_frame *f, struct xg_vec3 p)
{
    return xg_vec3_add(xg_quat_rotate(f->rotation, xg_vec3_scale(mat_mul(f->m, p), f->scale)),
                       f->offset);
}

static struct xg_quat ref_rot_in(const struct xg_frame *f, struct xg_quat q)
{
    struct xg_vec3 v = xg_vec3_scale(mat_mul(f->m, (struct xg_vec3){q.x, q.y, q.z}), f->det);
    return xg_quat_mul(f->rotation, (struct xg_quat){v.x, v.y, v.z, q.w});
}

static struct xg_vec3 ref_vel_in(const struct xg_frame *f, struct xg_vec3 v)
{
    return xg_quat_rotate(f->rotation, xg_vec3_scale(mat_mul(f->m, v), f->scale));
}

static struct xg_vec3 ref_angvel_in(const struct xg_frame *f, struct xg_vec3 w)
{
    return xg_quat_rotate(f->rotation, xg_vec3_scale(mat_mul(f->m, w), f->det));
}

static struct xg_vec3 ref_pos_out(const struct xg_frame *f, struct xg_vec3 p)
{
    struct xg_vec3 r = xg_quat_rotate(xg_quat_conj(f->rotation), xg_vec3_sub(p, f->offset));
    return xg_vec3_scale(mat_tmul(f->m, r), 1.0 / f->scale);
}

static struct xg_quat ref_rot_out(const struct xg_frame *f, struct xg_quat q)
{
    struct xg_quat qm = xg_quat_mul(xg_quat_conj(f->rotation), q);
    struct xg_vec3 v = xg_vec3_scale(mat_tmul(f->m, (struct xg_vec3){qm.x, qm.y, qm.z}), f->det);
    return (struct xg_quat){v.x, v.y, v.z, qm.w};
}

static struct xg_vec3 ref_vel_out(const struct xg_frame *f, struct xg_vec3 v)
{
    struct xg_vec3 r = xg_quat_rotate(xg_quat_conj(f->rotation), v);
    return xg_vec3_scale(mat_tmul(f->m, r), 1.0 / f->scale);
}

static struct xg_vec3 ref_angvel_out(const struct xg_frame *f, struct xg_vec3 w)
{
    struct xg_vec3 r = xg_quat_rotate(xg_quat_conj(f->rotation), w);
    return xg_vec3_scale(mat_tmul(f->m, r), f->det);
}

/* ---- precomputed (xg_frame_finalize) ---- */

static struct xg_vec3 mul3(const double m[3][3], struct xg_vec3 v)
{
    return (struct xg_vec3){m[0][0] * v.x + m[0][1] * v.y + m[0][2] * v.z,
                            m[1][0] * v.x + m[1][1] * v.y + m[1][2] * v.z,
                            m[2][0] * v.x + m[2][1] * v.y + m[2][2] * v.z};
}

static struct xg_quat mul4(const double m[4][4], struct xg_quat q)
{
    return (struct xg_quat){m[0][0] * q.x + m[0][1] * q.y + m[0][2] * q.z + m[0][3] * q.w,
                            m[1][0] * q.x + m[1][1] * q.y + m[1][2] * q.z + m[1][3] * q.w,
                            m[2][0] * q.x + m[2][1] * q.y + m[2][2] * q.z + m[2][3] * q.w,
                            m[3][0] * q.x + m[3][1] * q.y + m[3][2] * q.z + m[3][3] * q.w};
}

/* Column j of a linear map's matrix is the map of the j-th unit vector: the matrices are built by
 * the reference conversions themselves, so both paths share one definition. */
static void columns3(double out[3][3],
                     struct xg_vec3 (*fn)(const struct xg_frame *, struct xg_vec3),
                     const struct xg_frame *f)
{
    for (int j = 0; j < 3; j++) {
        double e[3] = {0, 0, 0};
        e[j] = 1;
        struct xg_vec3 c = fn(f, (struct xg_vec3){e[0], e[1], e[2]});
        out[0][j] = c.x, out[1][j] = c.y, out[2][j] = c.z;
    }
}

static void columns4(double out[4][4],
                     struct xg_quat (*fn)(const struct xg_frame *, struct xg_quat),
                     const struct xg_frame *f)
{
    for (int j = 0; j < 4; j++) {
        double e[4] = {0, 0, 0, 0};
        e[j] = 1;
        struct xg_quat c = fn(f, (struct xg_quat){e[0], e[1], e[2], e[3]});
        out[0][j] = c.x, out[1][j] = c.y, out[2][j] = c.z, out[3][j] = c.w;
    }
}

void xg_frame_finalize(struct xg_frame *f)
{
    columns3(f->pin, ref_vel_in, f);
    columns3(f->win, ref_angvel_in, f);
    columns4(f->qin, ref_rot_in, f);
    columns3(f->pout, ref_vel_out, f);
    columns3(f->wout, ref_angvel_out, f);
    columns4(f->qout, ref_rot_out, f);
    f->ready = true;
}

struct xg_vec3 xg_frame_pos_in(const struct xg_frame *f, struct xg_vec3 p)
{
    return f->ready ? xg_vec3_add(mul3(f->pin, p), f->offset) : ref_pos_in(f, p);
}

struct xg_quat xg_frame_rot_in(const struct xg_frame *f, struct xg_quat q)
{
    return f->ready ? mul4(f->qin, q) : ref_rot_in(f, q);
}

struct xg_vec3 xg_frame_vel_in(const struct xg_frame *f, struct xg_vec3 v)
{
    return f->ready ? mul3(f->pin, v) : ref_vel_in(f, v);
}

struct xg_vec3 xg_frame_angvel_in(const struct xg_frame *f, struct xg_vec3 w)
{
    return f->ready ? mul3(f->win, w) : ref_angvel_in(f, w);
}

struct xg_vec3 xg_frame_pos_out(const struct xg_frame *f, struct xg_vec3 p)
{
    return f->ready ? mul3(f->pout, xg_vec3_sub(p, f->offset)) : ref_pos_out(f, p);
}

struct xg_quat xg_frame_rot_out(const struct xg_frame *f, struct xg_quat q)
{
    return f->ready ? mul4(f->qout, q) : ref_rot_out(f, q);
}

struct xg_vec3 xg_frame_vel_out(const struct xg_frame *f, struct xg_vec3 v)
{
    return f->ready ? mul3(f->pout, v) : ref_vel_out(f, v);
}

struct xg_vec3 xg_frame_angvel_out(const struct xg_frame *f, struct xg_vec3 w)
{
    return f->ready ? mul3(f->wout, w) : ref_angvel_out(f, w);
}

void xg_frame_sample_in(const struct xg_frame *f, struct xg_sample *s)
{
    if (s->flags & XG_SAMPLE_POSITION) s->position = xg_frame_pos_in(f, s->position);
    if (s->flags & XG_SAMPLE_ORIENTATION) s->orientation = xg_frame_rot_in(f, s->orientation);
    if (s->flags & XG_SAMPLE_VELOCITY) s->velocity = xg_frame_vel_in(f, s->velocity);
    if (s->flags & XG_SAMPLE_ANGULAR_VELOCITY)
        s->angular_velocity = xg_frame_angvel_in(f, s->angular_velocity);
}

void xg_frame_pose_out(const struct xg_frame *f, struct xg_pose *p)
{
    p->position = xg_frame_pos_out(f, p->position);
    p->orientation = xg_frame_rot_out(f, p->orientation);
    p->velocity = xg_frame_vel_out(f, p->velocity);
    p->angular_velocity = xg_frame_angvel_out(f, p->angular_velocity);
}
