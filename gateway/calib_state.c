/* Space calibrations: the state file (docs/calibration.md "State file"): every result in force
 * written as JSON by the worker thread, and read back at start and reload (gateway/calib_int.h). */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gateway/calib_int.h"
#include "gateway/gateway.h"

#define COMPONENT "calibration"
#define DEG (M_PI / 180)

static json_t *xf_json(const struct xg_calib_xf *xf)
{
    return json_pack("{s:[fff],s:[ffff]}", "position", xf->t.x, xf->t.y, xf->t.z, "orientation",
                     xf->q.x, xf->q.y, xf->q.z, xf->q.w);
}

static int xf_from_json(const json_t *j, struct xg_calib_xf *xf)
{
    double p[3], q[4];
    if (json_unpack((json_t *)j, "{s:[FFF],s:[FFFF]}", "position", &p[0], &p[1], &p[2],
                    "orientation", &q[0], &q[1], &q[2], &q[3]))
        return -EINVAL;
    xf->t = (struct xg_vec3){p[0], p[1], p[2]};
    xf->q = (struct xg_quat){q[0], q[1], q[2], q[3]};
    double n = sqrt(xg_quat_dot(xf->q, xf->q));
    if (!xg_vec3_finite(xf->t) || !(fabs(n - 1) < 1e-3) || fabs(p[0]) > 1e5 || fabs(p[1]) > 1e5 ||
        fabs(p[2]) > 1e5)
        return -EINVAL;
    xf->q = xg_quat_normalize(xf->q);
    return 0;
}

/* a write's outcome, on the loop */
void xg_calib_written(struct xg_calib_set *set, int rc, const char *path)
{
    if (rc) {
        set->write_failures++;
        XG_WARN_PEER(&set->write_lim, COMPONENT,
                     "cannot write the state file '%s' (%s): the result holds until the "
                     "gateway stops",
                     path, strerror(-rc));
    } else {
        set->writes++;
        XG_INFO(COMPONENT, "results written to %s", path);
    }
}

/* serialise every result in force on the loop (cheap) and hand the write (temporary file, fsync,
 * rename) to the worker, in order after the writes before it */
void xg_calib_save(struct xg_calib_set *set)
{
    if (!set->state_file[0]) return;
    json_t *all = json_object(), *root = json_pack("{s:i,s:o}", "version", 1, "calibrations", all);
    if (!root) return;
    for (int i = 0; i < set->n; i++) {
        struct xg_calib *c = set->items[i];
        if (!c->have) continue;
        json_object_set_new(
            all, c->name,
            json_pack("{s:s,s:s,s:s,s:o,s:o,s:f,s:f,s:f,s:I,s:f}", "reference", c->reference,
                      "target", c->target, "apply_to", c->apply_to, "transform", xf_json(&c->res.y),
                      "object_offset", xf_json(&c->res.x), "time_offset_ms",
                      c->res.time_offset_s * 1e3, "residual_mm", c->res.residual_m * 1e3,
                      "residual_deg", c->res.residual_rad / DEG, "pairs", (json_int_t)c->res.pairs,
                      "solved_unix", c->solved_unix));
    }
    char *text = json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(12));
    json_decref(root);
    char *copy = text ? strdup(text) : NULL;
    if (!text || !copy) {
        free(text);
        free(copy);
        xg_calib_written(set, -ENOMEM, set->state_file);
        return;
    }
    size_t len = strlen(text);
    if (!set->worker &&
        !(set->worker = xg_calib_worker_new(set->gw->base, xg_calib_deliver, set))) {
        free(copy); /* no thread: written on the loop, as a last resort */
        xg_calib_written(set, xg_calib_write_file(set->state_file, text, len), set->state_file);
        free(text);
        return;
    }
    if (!xg_calib_worker_write(set->worker, set->state_file, text, len)) {
        free(copy);
        xg_calib_written(set, -ENOMEM, set->state_file);
        return;
    }
    free(set->latest); /* what the file holds once the queued writes are done */
    set->latest = copy;
    set->writes_queued++;
}

void xg_calib_load_state(struct xg_calib_set *set)
{
    if (!set->state_file[0] || (!set->latest && access(set->state_file, F_OK))) return;
    json_error_t je; /* a write still queued: the file is about to hold `latest` */
    json_t *root =
        set->latest ? json_loads(set->latest, 0, &je) : json_load_file(set->state_file, 0, &je);
    json_t *all = root ? json_object_get(root, "calibrations") : NULL;
    if (!json_is_object(all)) {
        XG_WARN(COMPONENT, "state file '%s' ignored: %s", set->state_file,
                root ? "no 'calibrations' object" : je.text);
        json_decref(root);
        return;
    }
    for (int i = 0; i < set->n; i++) {
        struct xg_calib *c = set->items[i];
        json_t *j = json_object_get(all, c->name);
        if (!j || c->have) continue;
        const char *ref = NULL, *tgt = NULL, *app = NULL;
        double off = 0, rm = 0, rd = 0, when = 0;
        json_int_t pairs = 0;
        struct xg_calib_result r = {0};
        if (json_unpack(j, "{s:s,s:s,s:s,s:F,s:F,s:F,s:I,s:F}", "reference", &ref, "target", &tgt,
                        "apply_to", &app, "time_offset_ms", &off, "residual_mm", &rm,
                        "residual_deg", &rd, "pairs", &pairs, "solved_unix", &when) ||
            xf_from_json(json_object_get(j, "transform"), &r.y) ||
            xf_from_json(json_object_get(j, "object_offset"), &r.x) || !isfinite(off) ||
            fabs(off) > 10000) {
            XG_WARN(COMPONENT,
                    "state file '%s': the entry of calibration '%s' is not valid: "
                    "ignored, collecting again",
                    set->state_file, c->name);
            continue;
        }
        if (strcmp(ref, c->reference) || strcmp(tgt, c->target) || strcmp(app, c->apply_to)) {
            XG_INFO(COMPONENT,
                    "state file '%s': calibration '%s' was solved for other entities "
                    "(%s, %s, %s): collecting again",
                    set->state_file, c->name, ref, tgt, app);
            continue;
        }
        r.time_offset_s = off * 1e-3;
        r.residual_m = rm * 1e-3;
        r.residual_rad = rd * DEG;
        r.pairs = (size_t)pairs;
        c->res = r;
        c->have = true;
        c->solved_unix = when;
        c->state = XG_CALIB_APPLIED;
        c->collecting = false;
        c->gen++; /* a solve in flight (a kept entry, after a reload) is late now */
        XG_INFO(COMPONENT,
                "'%s': applying the result of %s to adapter '%s' (residual %.2f mm "
                "%.3f deg, time offset %.1f ms)",
                c->name, set->state_file, c->apply_to, rm, rd, off);
    }
    json_decref(root);
}
