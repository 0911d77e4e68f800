/* The source-clock map (core/clock/time_map.h): a sender's timestamps
 * mapped to the gateway clock with a windowed minimum offset and step confirmation. Kept apart
 * from net.c's sockets so that a socket-free session (LESS, tests/unit/test_less_session.c)
 * links no socket call. */
#include "core/clock/time_map.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

static int64_t sat_add(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r)) return b > 0 ? INT64_MAX : INT64_MIN;
    return r;
}

/* A sample whose offset is off the estimate by a step: held at its receive time until
 * XG_TIME_STEP_CONFIRM samples in a row agree, then adopted. Returns true when adopted. */
static bool time_map_candidate(struct xg_time_map *m, int64_t d, int64_t receive_ns, bool back)
{
    const int64_t agree = INT64_C(100000000); /* 100 ms */
    if (m->cand_n && d >= m->cand_ns - agree && d <= m->cand_ns + agree) {
        m->cand_n++;
        if (d < m->cand_ns) m->cand_ns = d;
    } else {
        m->cand_ns = d;
        m->cand_n = 1;
        m->cand_rx = receive_ns;
    }
    if (m->cand_n < XG_TIME_STEP_CONFIRM) return false;
    if (back && receive_ns - m->cand_rx < XG_TIME_STEP_SPAN_NS) return false;
    m->last_step_ns = m->cand_ns - m->offset_ns;
    m->steps++;
    m->best_ns = m->prev_best_ns = m->offset_ns = m->cand_ns;
    m->window_start = receive_ns;
    m->cand_n = 0;
    return true;
}

int64_t xg_time_map_update(struct xg_time_map *m, int64_t source_ns, int64_t receive_ns)
{
    int64_t window = m->window_ns > 0 ? m->window_ns : INT64_C(10000000000);
    /* receive − source; saturated so that a wild stamp (INT64 range) cannot overflow */
    int64_t d;
    if (__builtin_sub_overflow(receive_ns, source_ns, &d))
        d = source_ns < 0 ? INT64_MAX / 4 : INT64_MIN / 4;
    if (d > INT64_MAX / 4) d = INT64_MAX / 4;
    if (d < INT64_MIN / 4) d = INT64_MIN / 4;
    bool ahead = m->valid && d < m->offset_ns - XG_TIME_STEP_AHEAD_NS;
    /* behind the clock so far, and so far that it would not advance: a step back (a sample
     * that is only late by a delay spike still advances and maps as usual) */
    bool behind = m->valid && d > m->offset_ns + XG_TIME_STEP_BEHIND_NS &&
                  sat_add(source_ns, m->offset_ns) <= m->last_mapped;
    if (ahead || behind) {
        /* the source claims a time well ahead of / behind what its clock has been: a wild
         * stamp or a step; applied at its receive time until confirmed */
        if (!time_map_candidate(m, d, receive_ns, behind)) {
            if (behind) {
                /* older than the clock so far: a late sample (dropped as not advancing) until
                 * the step is confirmed */
                int64_t t = sat_add(source_ns, m->offset_ns);
                return t > receive_ns ? receive_ns : t;
            }
            if (receive_ns > m->last_mapped) m->last_mapped = receive_ns;
            return receive_ns;
        }
        /* the samples held at their receive times meanwhile must not look newer than this one */
        int64_t t = sat_add(source_ns, m->offset_ns);
        if (t <= m->last_mapped) t = m->last_mapped + 1;
        if (t > receive_ns) t = receive_ns;
        m->last_mapped = t;
        return t;
    }
    m->cand_n = 0;
    if (!m->valid) {
        m->valid = true;
        m->best_ns = m->prev_best_ns = m->offset_ns = d;
        m->window_start = receive_ns;
    } else {
        if (receive_ns - m->window_start > window) {
            m->prev_best_ns = m->best_ns;
            m->best_ns = d;
            m->window_start = receive_ns;
        } else if (d < m->best_ns) {
            m->best_ns = d;
        }
        /* the estimate is the minimum over the current and the previous window */
        m->offset_ns = m->best_ns < m->prev_best_ns ? m->best_ns : m->prev_best_ns;
    }
    int64_t t = sat_add(source_ns, m->offset_ns);
    if (t > receive_ns) t = receive_ns;
    m->last_mapped = t;
    return t;
}

void xg_time_map_reset(struct xg_time_map *m)
{
    int64_t w = m->window_ns;
    uint64_t steps = m->steps;
    memset(m, 0, sizeof *m);
    m->window_ns = w;
    m->steps = steps;
}
