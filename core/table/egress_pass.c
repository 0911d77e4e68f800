#include "core/table/egress_pass.h"

static void drain_one(struct xg_table *t, int sink, size_t limit, xg_egress_drain_fn fn, void *user,
                      struct xg_egress_result *r)
{
    xg_table_set_drain_limit(t, sink, limit);
    fn(user, sink);
    xg_table_set_drain_limit(t, sink, 0);
    r->drains++;
}

static size_t slice_of(const struct xg_egress_plan *plan, int i)
{
    return plan->slice[i] ? plan->slice[i] : XG_EGRESS_SLICE;
}

void xg_egress_pass_run(struct xg_table *t, int64_t now_ns, const struct xg_egress_plan *plan,
                        xg_egress_drain_fn fn, void *user, struct xg_egress_result *res)
{
    struct xg_egress_result r = {0};
    uint64_t sliced = plan->due & plan->sliced;
    (void)xg_table_pass_begin(t, now_ns); /* without its cache, the pass predicts per sink */
    /* round 1: every due sink once, in configuration order; sliced ones send their first slice */
    uint64_t more = 0;
    for (uint64_t m = plan->due; m; m &= m - 1) {
        int i = __builtin_ctzll(m);
        bool sl = (sliced >> i) & 1;
        size_t lim = !sl ? 0 : plan->first_slice ? plan->first_slice : slice_of(plan, i);
        size_t before = xg_table_dirty_count(t, i);
        drain_one(t, i, lim, fn, user, &r);
        size_t after = xg_table_dirty_count(t, i);
        if (sl && after && after < before) more |= UINT64_C(1) << i;
    }
    r.rounds = 1;
    /* then slices, interleaved, until the sets are empty */
    while (more) {
        r.rounds++;
        for (uint64_t m = more; m; m &= m - 1) {
            int i = __builtin_ctzll(m);
            size_t before = xg_table_dirty_count(t, i);
            drain_one(t, i, slice_of(plan, i), fn, user, &r);
            size_t after = xg_table_dirty_count(t, i);
            if (!after || after >= before) more &= ~(UINT64_C(1) << i);
        }
    }
    xg_table_pass_end(t);
    if (res) *res = r;
}
