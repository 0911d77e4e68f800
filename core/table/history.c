/* Compact pose history (see history.h). */
#include "core/table/history.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/util/float16.h"

#define P_SCALE 1099511627776.0 /* 2^40 position units per metre */
#define P_OFF_MAX ((INT64_C(1) << 47) - 1)
#define Q_BITS 42
#define Q_MAX ((INT64_C(1) << (Q_BITS - 1)) - 1)
#define Q_MASK ((UINT64_C(1) << Q_BITS) - 1)
#define SQRT1_2 0.70710678118654752440
#define SQRT2 1.41421356237309504880

/* ---- 48-bit offsets ---- */

static void put48(uint16_t d[3], int64_t v)
{
    uint64_t u = (uint64_t)v;
    d[0] = (uint16_t)u, d[1] = (uint16_t)(u >> 16), d[2] = (uint16_t)(u >> 32);
}

static int64_t get48(const uint16_t d[3])
{
    uint64_t u = (uint64_t)d[0] | (uint64_t)d[1] << 16 | (uint64_t)d[2] << 32;
    if (u & (UINT64_C(1) << 47)) u |= ~UINT64_C(0) << 48; /* sign-extend */
    return (int64_t)u;
}

/* x rounded to the nearest integer (halves away from zero); |x| < 2^62. A conversion rather
 * than llround(), a libm call: this runs six times per pushed sample. */
static int64_t round_i64(double x)
{
    return x < 0 ? -(int64_t)(0.5 - x) : (int64_t)(x + 0.5);
}

/* a position in units (|p| <= XG_POSITION_MAX: fits easily) */
static int64_t to_units(double p)
{
    return round_i64(p * P_SCALE);
}

/* ---- orientation: smallest three in 128 bits ----
 * lo: bits 0-1 the dropped component, 2-43 the first kept one, 44-63 the second's low 20 bits;
 * hi: bits 0-21 the second's high 22 bits, 22-63 the third. */

static void quat_pack(struct xg_quat q, uint32_t out[4])
{
    double c[4] = {q.x, q.y, q.z, q.w};
    int big = 0;
    for (int i = 1; i < 4; i++)
        if (fabs(c[i]) > fabs(c[big])) big = i;
    /* q and -q are one rotation: the dropped component made >= 0 */
    const double scale = (c[big] < 0 ? -SQRT2 : SQRT2) * (double)Q_MAX;
    uint64_t m[3];
    for (int i = 0, k = 0; i < 4; i++) {
        if (i == big) continue;
        double v = c[i] * scale; /* in [-Q_MAX, Q_MAX] for a unit quaternion */
        if (v > (double)Q_MAX) v = (double)Q_MAX;
        if (v < -(double)Q_MAX) v = -(double)Q_MAX;
        m[k++] = (uint64_t)(round_i64(v) + Q_MAX) & Q_MASK;
    }
    uint64_t lo = (uint64_t)big | m[0] << 2 | m[1] << 44, hi = m[1] >> 20 | m[2] << 22;
    out[0] = (uint32_t)lo, out[1] = (uint32_t)(lo >> 32);
    out[2] = (uint32_t)hi, out[3] = (uint32_t)(hi >> 32);
}

static struct xg_quat quat_unpack(const uint32_t in[4])
{
    uint64_t lo = (uint64_t)in[0] | (uint64_t)in[1] << 32,
             hi = (uint64_t)in[2] | (uint64_t)in[3] << 32;
    const uint64_t m[3] = {lo >> 2 & Q_MASK, (lo >> 44 | hi << 20) & Q_MASK, hi >> 22 & Q_MASK};
    /* the three kept components in order, then the dropped one (straight-line: this runs for
     * every sample the estimator reads) */
    const double a = (double)((int64_t)m[0] - Q_MAX) * (SQRT1_2 / (double)Q_MAX),
                 b = (double)((int64_t)m[1] - Q_MAX) * (SQRT1_2 / (double)Q_MAX),
                 c = (double)((int64_t)m[2] - Q_MAX) * (SQRT1_2 / (double)Q_MAX);
    const double ss = a * a + b * b + c * c, d = ss < 1 ? sqrt(1 - ss) : 0;
    switch (lo & 3) { /* unit to rounding */
    case 0:
        return (struct xg_quat){d, a, b, c};
    case 1:
        return (struct xg_quat){a, d, b, c};
    case 2:
        return (struct xg_quat){a, b, d, c};
    default:
        return (struct xg_quat){a, b, c, d};
    }
}

/* ---- ring ---- */

/* ring index of position i (head + n - 1 - k, always < 2 XG_HISTORY): no division, this runs
 * on every push */
static unsigned wrap(unsigned i)
{
    return i >= XG_HISTORY ? i - XG_HISTORY : i;
}

static struct xg_hist_entry *entry(struct xg_history *h, unsigned k)
{
    return &h->e[wrap(h->head + h->n - 1u - k)]; /* k = 0 is the newest */
}

static const struct xg_hist_entry *centry(const struct xg_history *h, unsigned k)
{
    return &h->e[wrap(h->head + h->n - 1u - k)];
}

void xg_history_clear(struct xg_history *h)
{
    memset(h, 0, sizeof *h);
}

/* d / 2^s rounded to nearest (s = 0: d) */
static int64_t shr_round(int64_t d, unsigned s)
{
    if (!s) return d;
    const int64_t half = INT64_C(1) << (s - 1);
    return d >= 0 ? (d + half) >> s : -((-d + half) >> s);
}

/* exact capture time (ns) and position (units) of the entry k places back */
static int64_t entry_t(const struct xg_history *h, const struct xg_hist_entry *x)
{
    return h->base_ns + (int64_t)x->t * (INT64_C(1) << h->tshift);
}

static int64_t entry_u(const struct xg_history *h, const struct xg_hist_entry *x, int axis)
{
    return h->base_u[axis] + get48(&x->p[3 * axis]) * (INT64_C(1) << h->pshift);
}

struct xg_hist xg_history_pose_at(const struct xg_history *h, unsigned k)
{
    const struct xg_hist_entry *x = centry(h, k);
    struct xg_hist o;
    o.t_ns = entry_t(h, x);
    o.p = (struct xg_vec3){(double)entry_u(h, x, 0) / P_SCALE, (double)entry_u(h, x, 1) / P_SCALE,
                           (double)entry_u(h, x, 2) / P_SCALE};
    o.q = quat_unpack(x->q);
    o.v[0] = o.v[1] = o.v[2] = o.w[0] = o.w[1] = o.w[2] = 0;
    return o;
}

struct xg_hist xg_history_at(const struct xg_history *h, unsigned k)
{
    const struct xg_hist_entry *x = centry(h, k);
    struct xg_hist o = xg_history_pose_at(h, k);
    for (int i = 0; i < 3; i++) {
        o.v[i] = xg_f16_to_float(x->v[i]);
        o.w[i] = xg_f16_to_float(x->w[i]);
    }
    return o;
}

/* the smallest shift s with |d| / 2^s <= max */
static unsigned shift_for(uint64_t d, uint64_t max)
{
    unsigned s = 0;
    while ((d + ((UINT64_C(1) << s) >> 1)) >> s > max)
        s++;
    return s;
}

/* Re-encode every entry against the bases (t_ns, u) with the smallest shifts that hold them all
 * (and the sample about to be pushed at the bases): exact while the shifts do not grow. */
static void rebase(struct xg_history *h, int64_t t_ns, const int64_t u[3])
{
    int64_t ts[XG_HISTORY] = {0}, us[XG_HISTORY][3] = {{0}};
    uint64_t dt = 0, du = 0;
    for (unsigned k = 0; k < h->n; k++) {
        const struct xg_hist_entry *x = centry(h, k);
        ts[k] = entry_t(h, x);
        uint64_t a = (uint64_t)(t_ns - ts[k]); /* older: >= 0 */
        dt = a > dt ? a : dt;
        for (int i = 0; i < 3; i++) {
            us[k][i] = entry_u(h, x, i);
            int64_t d = us[k][i] - u[i];
            uint64_t ad = d < 0 ? (uint64_t)-d : (uint64_t)d;
            du = ad > du ? ad : du;
        }
    }
    h->tshift = (uint8_t)shift_for(dt, INT32_MAX);
    h->pshift = (uint8_t)shift_for(du, P_OFF_MAX);
    h->base_ns = t_ns;
    memcpy(h->base_u, u, sizeof h->base_u);
    for (unsigned k = 0; k < h->n; k++) {
        struct xg_hist_entry *x = entry(h, k);
        x->t = (int32_t)shr_round(ts[k] - t_ns, h->tshift);
        for (int i = 0; i < 3; i++)
            put48(&x->p[3 * i], shr_round(us[k][i] - u[i], h->pshift));
    }
}

bool xg_history_push(struct xg_history *h, int64_t t_ns, struct xg_vec3 p, struct xg_quat q,
                     struct xg_hist *evicted)
{
    const int64_t u[3] = {to_units(p.x), to_units(p.y), to_units(p.z)};
    bool full = h->n == XG_HISTORY;
    if (full) { /* the oldest goes first: it no longer bounds the shifts */
        if (evicted) *evicted = xg_history_pose_at(h, h->n - 1);
        h->head = (uint8_t)wrap(h->head + 1u);
        h->n--;
    }
    if (!h->n) {
        h->base_ns = t_ns;
        memcpy(h->base_u, u, sizeof h->base_u);
        h->tshift = h->pshift = 0;
    } else {
        int64_t dt = t_ns - h->base_ns;
        bool fit = !h->tshift && !h->pshift && dt >= 0 && dt <= INT32_MAX;
        for (int i = 0; i < 3 && fit; i++)
            fit = u[i] - h->base_u[i] >= -P_OFF_MAX && u[i] - h->base_u[i] <= P_OFF_MAX;
        /* a sample that does not fit at full precision, or a history held at a coarser one
         * (a jump of more than 128 m, or samples more than 2.1 s apart): new bases at this
         * sample, the shifts as small as the remaining samples allow */
        if (!fit) rebase(h, t_ns, u);
    }
    struct xg_hist_entry *x = &h->e[wrap(h->head + h->n)];
    h->n++;
    memset(x, 0, sizeof *x);
    x->t = (int32_t)shr_round(t_ns - h->base_ns, h->tshift);
    for (int i = 0; i < 3; i++)
        put48(&x->p[3 * i], shr_round(u[i] - h->base_u[i], h->pshift));
    quat_pack(q, x->q);
    return full;
}

/* binary16 of a double, straight from its bits for the common case (a normal binary16, round
 * to nearest even; subnormals and zero too), the rest (overflow, NaN) by xg_f16_from_float(). Six
 * of these run on every push: going through float and back to integer bits cost about 45 ns per
 * push in bench_table. */
static uint16_t f16_of(double d)
{
    uint64_t x;
    memcpy(&x, &d, 8);
    const uint16_t sign = (uint16_t)(x >> 48 & 0x8000u);
    const unsigned e = (unsigned)(x >> 52 & 0x7ffu);
    if (e < 1023 - 25) return sign; /* |d| < 2^-25: binary16 zero */
    if (e < 1023 - 14)              /* a binary16 subnormal: |d| / 2^-24, rounded (2^-25 up) */
        return (uint16_t)(sign | (uint16_t)(fabs(d) * 0x1p24 + 0.5));
    if (e > 1023 + 15) return xg_f16_from_float((float)d); /* overflow, Inf, NaN */
    const uint64_t man = x & ((UINT64_C(1) << 52) - 1), rem = man & ((UINT64_C(1) << 42) - 1);
    uint32_t half = (uint32_t)(e - (1023 - 15)) << 10 | (uint32_t)(man >> 42);
    half += rem > UINT64_C(1) << 41 || (rem == UINT64_C(1) << 41 && (half & 1u)); /* a carry is
                                                                                    right too */
    return (uint16_t)(sign | half);
}

void xg_history_set_velocity(struct xg_history *h, struct xg_vec3 v, struct xg_vec3 w)
{
    if (!h->n) return;
    struct xg_hist_entry *x = entry(h, 0);
    x->v[0] = f16_of(v.x);
    x->v[1] = f16_of(v.y);
    x->v[2] = f16_of(v.z);
    xg_history_set_angular_velocity(h, w);
}

void xg_history_set_angular_velocity(struct xg_history *h, struct xg_vec3 w)
{
    if (!h->n) return;
    struct xg_hist_entry *x = entry(h, 0);
    x->w[0] = f16_of(w.x);
    x->w[1] = f16_of(w.y);
    x->w[2] = f16_of(w.z);
}

enum xg_history_place xg_history_around(const struct xg_history *h, int64_t t_ns, struct xg_hist *a,
                                        struct xg_hist *b)
{
    if (!h->n) return XG_HISTORY_NONE;
    if (t_ns > xg_history_time(h, 0)) {
        *a = xg_history_at(h, 0);
        return XG_HISTORY_AFTER;
    }
    for (unsigned k = 0; k < h->n; k++) {
        int64_t tk = xg_history_time(h, k);
        if (t_ns == tk) {
            *a = xg_history_at(h, k);
            return XG_HISTORY_AT;
        }
        if (t_ns > tk) {
            *a = xg_history_at(h, k);
            *b = xg_history_at(h, k - 1);
            return XG_HISTORY_BETWEEN;
        }
    }
    *a = xg_history_at(h, h->n - 1);
    return XG_HISTORY_BEFORE;
}
