/* A skeleton's motion memory (see motion_memory.h and docs/prediction.md).
 *
 * Measured on the CMU walk in tests/vectors/mocap (bench_bvh_prediction, 30 Hz, 33 ms, all
 * joints; rotation mean / p95 x hold / worse than hold): the rules alone 0.541 / 0.579 / 4.1 %;
 * with the rate after the match blended half way where it turns at least 1.05 rad/s, 0.457 /
 * 0.494 / 4.0 % (played backwards 0.468 / 0.512 / 3.8 %). In a scratch model of the benchmark,
 * the rate after the match on its own (no blend) was 0.43 / 0.47 but worse than holding in 9 %;
 * a match per joint (each joint's own pose history) instead of the whole skeleton's: 0.61 and
 * 13 % worse; the turn at exactly the query's horizon instead of a fixed span: the same at 33 ms,
 * better at 100 ms, but one angular velocity per answer is what the wire carries. Scaling the span
 * by the motion's speed ratio cost 0.003 of the mean on the take and lowered the share worse than
 * holding on the take replayed at a varying speed (--warp) from 6.3 to 5.0 %. */
#include "core/predict/motion_memory.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* the turn after a candidate must be kept at the fastest speed: XG_MEMORY_GAP_NS >=
 * XG_MEMORY_SPEED_MAX (2.0) x XG_MEMORY_RATE_SPAN_NS (integers only: a constant expression with
 * a floating-point operand is not an integer constant expression for clang) */
_Static_assert(XG_MEMORY_GAP_NS >= 2 * XG_MEMORY_RATE_SPAN_NS,
               "the turn after a candidate must be kept at the fastest speed");

struct xg_motion_memory {
    int64_t span_ns, spacing_ns;
    unsigned n_joints, cap_joints;
    unsigned next_slot; /* the slot after the joint recorded last: the next one's, usually */
    uint32_t *ids, *parent_ids; /* [cap_joints] */
    int *parent_slot;           /* [cap_joints]: the parent's slot, -1 = none in the memory */
    bool parents_valid;
    bool avx;        /* the processor has AVX: distance_avx() (asked once, by xg_memory_new()) */
    unsigned n_feat; /* joints with a parent in the memory (3 feature components each) */
    /* the frame ring: head = the newest frame; frames before it are complete */
    unsigned head, n_frames;
    int64_t t_ns[XG_MEMORY_FRAMES];
    unsigned n_set[XG_MEMORY_FRAMES];
    float *q; /* [XG_MEMORY_FRAMES][cap_joints][4]: world orientation, x y z w */
    float
        *f; /* [XG_MEMORY_FRAMES][cap_joints][3]: rotation relative to the parent, rad (0: none) */
    uint8_t *set; /* [XG_MEMORY_FRAMES][cap_joints] */
    /* the newest frame's match */
    bool matched;       /* a match was found for the newest frame (cleared by a new frame) */
    unsigned match_age; /* frames between the match and the newest */
    double match_d;
    double match_speed; /* how much faster the pose changes now than at the match */
    double scratch[XG_MEMORY_FRAMES];
};

static bool have_avx(void); /* the processor has AVX (below, with distance_avx()) */

static unsigned idx(const struct xg_motion_memory *m, unsigned age)
{
    return (m->head + XG_MEMORY_FRAMES - age) % XG_MEMORY_FRAMES;
}

static struct xg_quat load_q(const struct xg_motion_memory *m, unsigned frame, unsigned slot)
{
    const float *p = m->q + ((size_t)frame * m->cap_joints + slot) * 4;
    return (struct xg_quat){p[0], p[1], p[2], p[3]};
}

/* frame's features: 3 per joint slot, 0 for a joint without a parent in the memory */
static float *feat(const struct xg_motion_memory *m, unsigned frame)
{
    return m->f + (size_t)frame * m->cap_joints * 3;
}

struct xg_motion_memory *xg_memory_new(int64_t span_ns)
{
    if (span_ns <= 0) return NULL;
    struct xg_motion_memory *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    m->span_ns = span_ns;
    m->spacing_ns = span_ns / XG_MEMORY_FRAMES;
    m->avx = have_avx();
    return m;
}

bool xg_memory_set_avx(struct xg_motion_memory *m, bool avx)
{
    m->avx = avx && have_avx();
    return m->avx;
}

void xg_memory_free(struct xg_motion_memory *m)
{
    if (!m) return;
    free(m->ids);
    free(m->parent_ids);
    free(m->parent_slot);
    free(m->q);
    free(m->f);
    free(m->set);
    free(m);
}

void xg_memory_reset(struct xg_motion_memory *m)
{
    m->n_joints = 0;
    m->n_frames = 0;
    m->n_feat = 0;
    m->parents_valid = false;
    m->matched = false;
}

/* keep only the newest frame (the joints or their links changed: older frames lack them) */
static void keep_newest(struct xg_motion_memory *m)
{
    if (m->n_frames > 1) m->n_frames = 1;
    m->parents_valid = false;
    m->matched = false;
}

static int find_slot(const struct xg_motion_memory *m, uint32_t id)
{
    for (unsigned i = 0; i < m->n_joints; i++)
        if (m->ids[i] == id) return (int)i;
    return -1;
}

/* room for `want` joints; the newest frame's data moves to the new layout */
static int grow(struct xg_motion_memory *m, unsigned want)
{
    unsigned cap = m->cap_joints ? m->cap_joints : 8;
    while (cap < want)
        cap *= 2;
    if (cap > XG_MEMORY_MAX_JOINTS) cap = XG_MEMORY_MAX_JOINTS;
    if (cap < want) return -ENOSPC;
    if (cap == m->cap_joints) return 0;
    uint32_t *ids = realloc(m->ids, cap * sizeof *ids);
    if (ids) m->ids = ids;
    uint32_t *pids = realloc(m->parent_ids, cap * sizeof *pids);
    if (pids) m->parent_ids = pids;
    int *ps = realloc(m->parent_slot, cap * sizeof *ps);
    if (ps) m->parent_slot = ps;
    float *q = calloc((size_t)XG_MEMORY_FRAMES * cap * 4, sizeof *q);
    float *f = calloc((size_t)XG_MEMORY_FRAMES * cap * 3, sizeof *f);
    uint8_t *set = calloc((size_t)XG_MEMORY_FRAMES * cap, 1);
    if (!ids || !pids || !ps || !q || !f || !set) {
        free(q);
        free(f);
        free(set);
        return -ENOMEM;
    }
    /* the newest frame only: keep_newest() follows (nothing before the first joint: m->q is
     * still NULL then, and a memcpy() from NULL is undefined even for 0 bytes) */
    if (m->n_frames && m->n_joints) {
        const size_t h = m->head;
        memcpy(q + h * cap * 4, m->q + h * m->cap_joints * 4, m->n_joints * 4 * sizeof *q);
        memcpy(set + h * cap, m->set + h * m->cap_joints, m->n_joints);
    }
    free(m->q);
    free(m->f);
    free(m->set);
    m->q = q;
    m->f = f;
    m->set = set;
    m->cap_joints = cap;
    return 0;
}

/* a new frame at t_ns after the newest */
static void open_frame(struct xg_motion_memory *m, int64_t t_ns)
{
    const unsigned cap = m->cap_joints;
    if (m->n_frames && m->n_set[m->head] < m->n_joints) {
        /* a joint skipped the newest frame (or left): the joints it had are the memory now */
        const uint8_t *s = m->set + (size_t)m->head * cap;
        unsigned n = 0;
        for (unsigned i = 0; i < m->n_joints; i++)
            if (s[i]) {
                m->ids[n] = m->ids[i];
                m->parent_ids[n] = m->parent_ids[i];
                n++;
            }
        m->n_joints = n;
        m->n_frames = 0;
        m->parents_valid = false;
    }
    if (m->n_frames >= 2 && m->t_ns[m->head] - m->t_ns[idx(m, 1)] < m->spacing_ns) {
        /* the newest frame is closer than spacing_ns to the one before it: the new frame
         * replaces it, so that kept frames are at least spacing_ns apart */
    } else {
        m->head = (m->head + 1) % XG_MEMORY_FRAMES;
        if (m->n_frames < XG_MEMORY_FRAMES) m->n_frames++;
    }
    while (m->n_frames > 1 && t_ns - m->t_ns[idx(m, m->n_frames - 1)] > m->span_ns)
        m->n_frames--;
    m->t_ns[m->head] = t_ns;
    m->n_set[m->head] = 0;
    if (cap) memset(m->set + (size_t)m->head * cap, 0, cap);
    m->matched = false;
}

static void resolve_parents(struct xg_motion_memory *m)
{
    m->n_feat = 0;
    for (unsigned i = 0; i < m->n_joints; i++) {
        m->parent_slot[i] = m->parent_ids[i] ? find_slot(m, m->parent_ids[i]) : -1;
        m->n_feat += m->parent_slot[i] >= 0;
    }
    m->parents_valid = true;
}

/* the newest frame's features: each joint's rotation relative to its parent */
static void features(struct xg_motion_memory *m)
{
    if (!m->parents_valid) resolve_parents(m);
    const unsigned h = m->head;
    float *f = feat(m, h);
    for (unsigned i = 0; i < m->n_joints; i++) {
        const int p = m->parent_slot[i];
        const struct xg_vec3 r =
            p < 0 ? XG_VEC3_ZERO
                  : xg_quat_log(
                        xg_quat_mul(xg_quat_conj(load_q(m, h, (unsigned)p)), load_q(m, h, i)));
        f[i * 3] = (float)r.x;
        f[i * 3 + 1] = (float)r.y;
        f[i * 3 + 2] = (float)r.z;
    }
    /* zeros up to a multiple of 8 components (within the frame: 3 x cap_joints is one) for
     * distance()'s vector loop */
    for (unsigned c = 3 * m->n_joints; c % 8; c++)
        f[c] = 0;
}

int xg_memory_record(struct xg_motion_memory *m, uint32_t id, uint32_t parent_id, int64_t t_ns,
                     struct xg_quat q)
{
    if (m->n_frames && t_ns < m->t_ns[m->head]) return 0; /* late: that frame is done */
    if (!m->n_frames || t_ns > m->t_ns[m->head]) open_frame(m, t_ns);
    /* a source pushes its joints in the same order every frame: try the slot after the last */
    int slot = m->next_slot < m->n_joints && m->ids[m->next_slot] == id ? (int)m->next_slot
                                                                        : find_slot(m, id);
    if (slot < 0) {
        int rc = grow(m, m->n_joints + 1);
        if (rc == -ENOMEM) {
            xg_memory_reset(m);
            return rc;
        }
        if (rc) return rc;
        slot = (int)m->n_joints++;
        m->ids[slot] = id;
        m->parent_ids[slot] = parent_id;
        keep_newest(m);
    } else if (m->parent_ids[slot] != parent_id) {
        m->parent_ids[slot] = parent_id;
        keep_newest(m);
    }
    m->next_slot = (unsigned)slot + 1;
    const size_t at = (size_t)m->head * m->cap_joints + (size_t)slot;
    if (m->set[at]) return 0; /* again at the same time: the first sample stands */
    float *p = m->q + at * 4;
    p[0] = (float)q.x;
    p[1] = (float)q.y;
    p[2] = (float)q.z;
    p[3] = (float)q.w;
    m->set[at] = 1;
    if (++m->n_set[m->head] < m->n_joints) return 0;
    features(m);
    return 1;
}

/* the median of v[0..n) (n > 0; v is reordered): the k-th smallest by quickselect (Hoare's
 * partition), and for an even n the mean of the two middle values */
static double median_of(double *v, unsigned n)
{
    const unsigned k = n / 2;
    unsigned lo = 0, hi = n - 1;
    while (lo < hi) {
        const double pivot = v[lo + (hi - lo) / 2];
        unsigned i = lo, j = hi;
        while (i <= j) {
            while (v[i] < pivot)
                i++;
            while (v[j] > pivot)
                j--;
            if (i <= j) {
                const double x = v[i];
                v[i] = v[j];
                v[j] = x;
                i++;
                if (j == 0) break;
                j--;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            break; /* v[k] == pivot */
    }
    if (n % 2) return v[k];
    double below = v[0]; /* the largest of v[0..k), all <= v[k] */
    for (unsigned i = 1; i < k; i++)
        if (v[i] > below) below = v[i];
    return 0.5 * (below + v[k]);
}

/* 4 floats as one SSE / NEON register (GCC and Clang vector extension) */
typedef float xg_v4f __attribute__((vector_size(16)));

/* mean squared feature difference between frames a and b (rad²). Summed in float, 8 lanes in two
 * vector registers: features are floats already, and 8 partial sums of at most a dozen terms each
 * keep the relative rounding near 1e-6. This runs for every kept frame at every complete frame:
 * the motion memory's largest cost. */
static double distance(const struct xg_motion_memory *m, unsigned a, unsigned b)
{
    const float *fa = feat(m, a), *fb = feat(m, b);
    /* a joint without a parent adds 0, and so do the zeros features() writes after the last
     * joint up to a multiple of 8 (3 x cap_joints is one: cap_joints is a power of 2, >= 8) */
    const unsigned n = (3 * m->n_joints + 7) & ~7u;
    xg_v4f s0 = {0, 0, 0, 0}, s1 = {0, 0, 0, 0};
    for (unsigned c = 0; c < n; c += 8) {
        xg_v4f x0, x1, y0, y1;
        memcpy(&x0, fa + c, sizeof x0);
        memcpy(&x1, fa + c + 4, sizeof x1);
        memcpy(&y0, fb + c, sizeof y0);
        memcpy(&y1, fb + c + 4, sizeof y1);
        x0 -= y0;
        x1 -= y1;
        s0 += x0 * x0;
        s1 += x1 * x1;
    }
    s0 += s1;
    const double d = (double)s0[0] + (double)s0[1] + (double)s0[2] + (double)s0[3];
    return d / (3.0 * m->n_feat);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/* distance() with the 8 lanes in one AVX register, where the processor has AVX: lanes 0-3 are
 * s0's and 4-7 s1's, every lane sees the same operations in the same order (AVX alone has no
 * fused multiply-add), so the result is bit for bit distance()'s, in half the instructions. */
typedef float xg_v8f __attribute__((vector_size(32)));

__attribute__((target("avx"))) static double distance_avx(const struct xg_motion_memory *m,
                                                          unsigned a, unsigned b)
{
    const float *fa = feat(m, a), *fb = feat(m, b);
    const unsigned n = (3 * m->n_joints + 7) & ~7u;
    xg_v8f s = {0, 0, 0, 0, 0, 0, 0, 0};
    for (unsigned c = 0; c < n; c += 8) {
        xg_v8f x, y;
        memcpy(&x, fa + c, sizeof x);
        memcpy(&y, fb + c, sizeof y);
        x -= y;
        s += x * x;
    }
    const float l0 = s[0] + s[4], l1 = s[1] + s[5], l2 = s[2] + s[6], l3 = s[3] + s[7];
    const double d = (double)l0 + (double)l1 + (double)l2 + (double)l3;
    return d / (3.0 * m->n_feat);
}

static bool have_avx(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx");
}
#else
static bool have_avx(void)
{
    return false;
}
#define distance_avx distance
#endif

/* the age of the newest frame at least `back` ns older than the frame at `age`, or 0 if none */
static unsigned age_before(const struct xg_motion_memory *m, unsigned age, int64_t back)
{
    const int64_t t = m->t_ns[idx(m, age)] - back;
    for (unsigned a = age + 1; a < m->n_frames; a++)
        if (m->t_ns[idx(m, a)] <= t) return a;
    return 0;
}

/* how much faster the pose changes now than at the matched frame (age): the ratio of the pose's
 * speeds (feature change per second) over the XG_MEMORY_SPEED_SPAN_NS before each, clamped to
 * [XG_MEMORY_SPEED_MIN, XG_MEMORY_SPEED_MAX]; 1 when the span before the match is not kept, the
 * pose did not change then, or it changes the other way now */
static double speed(const struct xg_motion_memory *m, unsigned age)
{
    const unsigned an = age_before(m, 0, XG_MEMORY_SPEED_SPAN_NS),
                   ak = age_before(m, age, XG_MEMORY_SPEED_SPAN_NS);
    if (!an || !ak) return 1;
    const unsigned n0 = idx(m, 0), n1 = idx(m, an), k0 = idx(m, age), k1 = idx(m, ak);
    const double dtn = (double)(m->t_ns[n0] - m->t_ns[n1]),
                 dtk = (double)(m->t_ns[k0] - m->t_ns[k1]);
    const float *a0 = feat(m, n0), *a1 = feat(m, n1), *b0 = feat(m, k0), *b1 = feat(m, k1);
    double nn = 0, kk = 0, nk = 0;
    for (unsigned c = 0; c < 3 * m->n_joints; c++) {
        const double vn = ((double)a0[c] - (double)a1[c]) / dtn;
        const double vk = ((double)b0[c] - (double)b1[c]) / dtk;
        nn += vn * vn;
        kk += vk * vk;
        nk += vn * vk;
    }
    if (!(kk > 0) || !(nk > 0)) return 1;
    const double r = sqrt(nn / kk);
    return r < XG_MEMORY_SPEED_MIN   ? XG_MEMORY_SPEED_MIN
           : r > XG_MEMORY_SPEED_MAX ? XG_MEMORY_SPEED_MAX
                                     : r;
}

bool xg_memory_match(struct xg_motion_memory *m)
{
    m->matched = false;
    if (!m->n_frames || m->n_set[m->head] < m->n_joints || !m->n_feat || !m->parents_valid)
        return false;
    const int64_t tn = m->t_ns[m->head];
    unsigned nc = 0, best_age = 0;
    double best = INFINITY, away = 0; /* away: the farthest the pose went, newer than the frame */
    const bool avx = m->avx;
    for (unsigned age = 1; age < m->n_frames; age++) {
        const unsigned k = idx(m, age);
        const double d = avx ? distance_avx(m, m->head, k) : distance(m, m->head, k);
        if (m->t_ns[k] <= tn - XG_MEMORY_GAP_NS && m->t_ns[k] + XG_MEMORY_RATE_SPAN_NS <= tn &&
            away >= XG_MEMORY_AWAY) {
            m->scratch[nc++] = d;
            if (d < best) best = d, best_age = age;
        }
        if (d > away) away = d;
    }
    if (nc < XG_MEMORY_MIN_CANDIDATES || !(best <= XG_MEMORY_MATCH_MAX)) return false;
    const double median = median_of(m->scratch, nc);
    if (!(best < XG_MEMORY_DISTINCT * median)) return false; /* the best must stand out */
    m->matched = true;
    m->match_age = best_age;
    m->match_d = best;
    m->match_speed = speed(m, best_age);
    return true;
}

unsigned xg_memory_count(const struct xg_motion_memory *m)
{
    return m->n_joints;
}

uint32_t xg_memory_joint(const struct xg_motion_memory *m, unsigned slot)
{
    return slot < m->n_joints ? m->ids[slot] : 0;
}

bool xg_memory_rate(const struct xg_motion_memory *m, unsigned slot, struct xg_vec3 *w)
{
    if (!m->matched || slot >= m->n_joints) return false;
    const unsigned k = idx(m, m->match_age);
    /* the turn over the span the motion now covers in XG_MEMORY_RATE_SPAN_NS */
    const int64_t target = m->t_ns[k] + (int64_t)llround(m->match_speed * XG_MEMORY_RATE_SPAN_NS);
    /* the frames around target (it is within the kept frames: xg_memory_match() checked) */
    unsigned age = m->match_age - 1;
    while (age > 0 && m->t_ns[idx(m, age)] < target)
        age--;
    const unsigned b = idx(m, age), a = idx(m, age + 1);
    struct xg_quat qr = load_q(m, b, slot);
    if (m->t_ns[b] > target) { /* t_ns[a] < target <= t_ns[b] */
        /* normalised linear interpolation: frames are at most a few tens of ms apart, where it
         * is within 1e-5 rad of a slerp and costs no trigonometry */
        const double u = (double)(target - m->t_ns[a]) / (double)(m->t_ns[b] - m->t_ns[a]);
        const struct xg_quat qa = load_q(m, a, slot);
        const double sg = xg_quat_dot(qa, qr) < 0 ? -u : u;
        qr = xg_quat_normalize(
            (struct xg_quat){(1 - u) * qa.x + sg * qr.x, (1 - u) * qa.y + sg * qr.y,
                             (1 - u) * qa.z + sg * qr.z, (1 - u) * qa.w + sg * qr.w});
    }
    /* the turn after the match in the joint's own frame, then in its frame now */
    const struct xg_vec3 d = xg_quat_log(xg_quat_mul(xg_quat_conj(load_q(m, k, slot)), qr));
    const struct xg_vec3 r = xg_quat_rotate(load_q(m, m->head, slot), d);
    *w = xg_vec3_scale(r, 1e9 / (double)XG_MEMORY_RATE_SPAN_NS);
    return xg_vec3_finite(*w);
}

bool xg_memory_last_match(const struct xg_motion_memory *m, int64_t *t_ns, double *distance)
{
    if (!m->matched) return false;
    if (t_ns) *t_ns = m->t_ns[idx(m, m->match_age)];
    if (distance) *distance = m->match_d;
    return true;
}

size_t xg_memory_bytes(const struct xg_motion_memory *m)
{
    const size_t per = (size_t)XG_MEMORY_FRAMES * (4 * sizeof(float) + 3 * sizeof(float) + 1);
    return sizeof *m + m->cap_joints * (2 * sizeof(uint32_t) + sizeof(int) + per);
}
