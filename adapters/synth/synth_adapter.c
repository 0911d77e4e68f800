/* `synth` adapter: the embedded default source and load generator.
 *
 * Config keys: rate_hz (samples per second per entity, default 120), bodies (rigid bodies, default
 * 3), head / hands (booleans, default true), send_velocity (report analytic velocities, default
 * true; false makes the table estimate them), noise_mm / noise_deg (Gaussian noise, default 0),
 * dropout (probability that a sample is skipped, default 0), seed (PRNG seed, default 1). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/net/transport.h"
#include "adapters/synth/synth.h"
#include "adapters/synth/synth_priv.h"
#include "core/adapter/adapter.h"
#include "core/clock/clock.h"
#include "core/util/log.h"
#include "core/net/timer.h"
#include "mappings/frame.h"

/* ---- the paths ---- */

static struct xg_quat axis_angle(double x, double y, double z, double a)
{
    return xg_quat_from_axis_angle((struct xg_vec3){x, y, z}, a);
}

void xg_synth_pose(int which, double t, struct xg_vec3 *p, struct xg_quat *q)
{
    if (which == XG_SYNTH_HEAD) {
        *p = (struct xg_vec3){0.3 * sin(0.5 * t), 1.7 + 0.02 * sin(2.0 * t), 0.3 * sin(0.35 * t)};
        *q = xg_quat_mul(axis_angle(0, 1, 0, 0.6 * sin(0.4 * t)),
                         axis_angle(1, 0, 0, 0.2 * sin(0.7 * t)));
        return;
    }
    if (which == XG_SYNTH_LEFT_HAND || which == XG_SYNTH_RIGHT_HAND) {
        double s = which == XG_SYNTH_LEFT_HAND ? -1.0 : 1.0;
        double ph = which == XG_SYNTH_LEFT_HAND ? 0.0 : 1.3;
        struct xg_vec3 head;
        struct xg_quat hq;
        xg_synth_pose(XG_SYNTH_HEAD, t, &head, &hq);
        *p = (struct xg_vec3){head.x + s * (0.25 + 0.1 * cos(1.3 * t + ph)),
                              head.y - 0.45 + 0.15 * sin(1.3 * t + ph),
                              head.z - 0.3 + 0.1 * sin(0.9 * t + ph)};
        *q = xg_quat_mul(axis_angle(0, 0, 1, s * 0.8 * sin(1.1 * t + ph)),
                         axis_angle(1, 0, 0, -0.5 + 0.3 * sin(0.6 * t)));
        return;
    }
    int i = which - XG_SYNTH_BODY0;
    double r = 1.0 + 0.25 * (i % 8), w = 0.5 + 0.1 * (i % 5), ph = 0.7 * i;
    *p = (struct xg_vec3){r * cos(w * t + ph), 1.0 + 0.1 * (i % 4) + 0.15 * sin(2.0 * w * t + ph),
                          r * sin(w * t + ph)};
    /* constant angular velocity about a tilted axis (exact for prediction tests) */
    struct xg_vec3 axis = {sin(0.9 * i + 0.3), 1.0, cos(1.7 * i + 0.2)};
    double rate = 0.8 + 0.2 * (i % 3);
    *q = xg_quat_mul(xg_quat_from_axis_angle(axis, rate * t), axis_angle(0, 1, 0, ph));
}

void xg_synth_velocity(int which, double t, struct xg_vec3 *v, struct xg_vec3 *w)
{
    const double h = 1e-4;
    struct xg_vec3 p0, p1;
    struct xg_quat q0, q1;
    xg_synth_pose(which, t - h, &p0, &q0);
    xg_synth_pose(which, t + h, &p1, &q1);
    *v = xg_vec3_scale(xg_vec3_sub(p1, p0), 1.0 / (2 * h));
    *w = xg_quat_angular_velocity(q0, q1, 2 * h);
}

/* ---- the adapter ---- */

static uint64_t rng_next(uint64_t *s)
{
    /* xorshift64* */
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * UINT64_C(2685821657736338717);
}

static double rng_uniform(uint64_t *s)
{
    return (double)(rng_next(s) >> 11) * 0x1.0p-53;
}

static double rng_gauss(uint64_t *s)
{
    double u1 = rng_uniform(s), u2 = rng_uniform(s);
    if (u1 < 1e-300) u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

static int synth_create(struct xg_adapter *a, const struct xg_conf *conf, struct xg_error *err)
{
    struct synth *s = calloc(1, sizeof *s);
    if (!s) return -ENOMEM;
    a->priv = s;
    return synth_read_conf(s, conf, err);
}

static enum xg_kind kind_of(int which)
{
    return which == XG_SYNTH_HEAD         ? XG_KIND_HEAD
           : which == XG_SYNTH_LEFT_HAND  ? XG_KIND_LEFT_HAND
           : which == XG_SYNTH_RIGHT_HAND ? XG_KIND_RIGHT_HAND
                                          : XG_KIND_RIGID_BODY;
}

static void synth_tick(void *arg)
{
    struct xg_adapter *a = arg;
    struct synth *s = a->priv;
    int64_t now = xg_clock_mono_ns();
    double t = (double)(now - s->t0_ns) * 1e-9;
    s->ticks++;
    for (int k = 0; k < s->n; k++) {
        if (s->dropout > 0 && rng_uniform(&s->rng) < s->dropout) {
            s->dropouts++;
            continue;
        }
        struct xg_sample smp = {.capture_ns = now, .receive_ns = now, .flags = XG_SAMPLE_POSE};
        xg_synth_pose(s->which[k], t, &smp.position, &smp.orientation);
        if (s->send_velocity) {
            xg_synth_velocity(s->which[k], t, &smp.velocity, &smp.angular_velocity);
            smp.flags |= XG_SAMPLE_VELOCITY | XG_SAMPLE_ANGULAR_VELOCITY;
        }
        if (s->noise_m > 0) {
            smp.position.x += s->noise_m * rng_gauss(&s->rng);
            smp.position.y += s->noise_m * rng_gauss(&s->rng);
            smp.position.z += s->noise_m * rng_gauss(&s->rng);
        }
        if (s->noise_rad > 0) {
            struct xg_vec3 r = {s->noise_rad * rng_gauss(&s->rng),
                                s->noise_rad * rng_gauss(&s->rng),
                                s->noise_rad * rng_gauss(&s->rng)};
            smp.orientation = xg_quat_mul(xg_quat_exp(r), smp.orientation);
        }
        xg_frame_sample_in(a->frame, &smp);
        int rc = -ENOENT;
        if (s->ids[k]) rc = xg_table_push(a->table, s->ids[k], &smp);
        if (rc == -ENOENT) {
            struct xg_entity_key key = {.source = s->names[k], .kind = kind_of(s->which[k])};
            rc = xg_table_update(a->table, a, &key, &smp, &s->ids[k]);
        }
        if (rc == 0)
            a->samples_in++;
        else
            a->drops++;
    }
}

static int synth_start(struct xg_adapter *a)
{
    struct synth *s = a->priv;
    s->t0_ns = xg_clock_mono_ns();
    s->timer = xg_timer_new(a->base, synth_tick, a);
    if (!s->timer) return -ENOMEM;
    double period = 1.0 / s->rate_hz;
    uint64_t us = (uint64_t)period * 1000000 + (uint64_t)((period - floor(period)) * 1e6);
    if (xg_timer_every(s->timer, us ? us : 1)) return -EIO;
    XG_INFO(a->name, "synthetic rig: %d entities at %.1f Hz%s", s->n, s->rate_hz,
            s->send_velocity ? "" : " (velocities estimated by the table)");
    return 0;
}

static void synth_status(const struct xg_adapter *a, struct xg_status *st)
{
    const struct synth *s = a->priv;
    st->state = s->timer ? "running" : "stopped";
    snprintf(st->peer, sizeof st->peer, "synthetic (%d %s)", s->n,
             s->n == 1 ? "entity" : "entities");
    xg_status_counter(st, "ticks", (double)s->ticks);
    xg_status_counter(st, "dropouts", (double)s->dropouts);
    xg_status_gauge(st, "entities", (double)s->n);
}

static void synth_stop(struct xg_adapter *a)
{
    struct synth *s = a->priv;
    if (s && s->timer) {
        xg_timer_free(s->timer);
        s->timer = NULL;
    }
}

static void synth_destroy(struct xg_adapter *a)
{
    struct synth *s = a->priv;
    if (!s) return;
    synth_stop(a);
    free(s->which);
    free(s->ids);
    free(s->names);
    free(s);
    a->priv = NULL;
}

const struct xg_adapter_ops xg_synth_ops = {
    .type = "synth",
    .is_sink = false,
    .create = synth_create,
    .start = synth_start,
    .status = synth_status,
    .stop = synth_stop,
    .destroy = synth_destroy,
};
