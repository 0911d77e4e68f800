/* synth adapter, configuration: the keys of a `synth` adapter read and checked at create time
 * (rate_hz, bodies, head, hands, send_velocity, noise_mm, noise_deg, dropout, seed; see the
 * comment at the top of synth_adapter.c), and the entity list they make. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "adapters/synth/synth.h"
#include "adapters/synth/synth_priv.h"
#include "core/conf/conf.h"

int synth_read_conf(struct synth *s, const struct xg_conf *conf, struct xg_error *err)
{
    int64_t seed;
    double noise_mm, noise_deg;
    int rc;
    if ((rc = xg_conf_double(conf, "rate_hz", 120.0, 0.01, 10000.0, &s->rate_hz, err)) ||
        (rc = xg_conf_int(conf, "bodies", 3, 0, 1000000, &s->bodies, err)) ||
        (rc = xg_conf_bool(conf, "head", true, &s->head, err)) ||
        (rc = xg_conf_bool(conf, "hands", true, &s->hands, err)) ||
        (rc = xg_conf_bool(conf, "send_velocity", true, &s->send_velocity, err)) ||
        (rc = xg_conf_double(conf, "noise_mm", 0.0, 0.0, 1000.0, &noise_mm, err)) ||
        (rc = xg_conf_double(conf, "noise_deg", 0.0, 0.0, 180.0, &noise_deg, err)) ||
        (rc = xg_conf_double(conf, "dropout", 0.0, 0.0, 1.0, &s->dropout, err)) ||
        (rc = xg_conf_int(conf, "seed", 1, 0, INT64_MAX, &seed, err)))
        return rc;
    s->noise_m = noise_mm * 1e-3;
    s->noise_rad = noise_deg * M_PI / 180.0;
    s->rng = (uint64_t)seed * UINT64_C(0x9E3779B97F4A7C15) + 1;
    s->n = (s->head ? 1 : 0) + (s->hands ? 2 : 0) + (int)s->bodies;
    s->which = calloc((size_t)s->n + 1, sizeof *s->which);
    s->ids = calloc((size_t)s->n + 1, sizeof *s->ids);
    s->names = calloc((size_t)s->n + 1, sizeof *s->names);
    if (!s->which || !s->ids || !s->names) return -ENOMEM;
    int k = 0;
    if (s->head) {
        s->which[k] = XG_SYNTH_HEAD;
        snprintf(s->names[k++], 32, "head");
    }
    if (s->hands) {
        s->which[k] = XG_SYNTH_LEFT_HAND;
        snprintf(s->names[k++], 32, "left_hand");
        s->which[k] = XG_SYNTH_RIGHT_HAND;
        snprintf(s->names[k++], 32, "right_hand");
    }
    for (int64_t i = 0; i < s->bodies; i++) {
        s->which[k] = XG_SYNTH_BODY0 + (int)i;
        snprintf(s->names[k++], 32, "body%lld", (long long)i);
    }
    return 0;
}
