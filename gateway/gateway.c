#include "gateway/gateway.h"

#include <ctype.h>
#include <errno.h>
#include <event2/event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock/clock.h"
#include "core/table/egress_pass.h"
#include "gateway/calib.h"
#include "gateway/gateway_int.h"
#include "mappings/conf_yaml.h"

#define COMPONENT "gateway"

/* ---- naming / filtering hooks for the table ---- */

static void namer(void *user, int origin, const char *def, char *name, size_t size,
                  enum xg_kind *kind)
{
    struct xg_gateway *gw = user;
    struct xg_gw_adapter *ga = origin < gw->n_adapters ? gw->adapters[origin] : NULL;
    xg_rename_apply(ga ? &ga->rename : NULL, def, name, size, kind);
}

static bool sink_accept(void *user, int sink, const struct xg_entity *e)
{
    struct xg_gateway *gw = user;
    struct xg_gw_adapter *ga = gw->adapters[sink];
    if (ga->include.n && !xg_globs_match(&ga->include, xg_entity_name(e))) return false;
    return !xg_globs_match(&ga->exclude, xg_entity_name(e));
}

/* Sink `sink` has something to send: the next egress pass drains it (after the callback that is
 * running now, e.g. the ingress read that pushed the batch). */
void xg_gw_make_due(struct xg_gateway *gw, int sink)
{
    gw->egress_due |= UINT64_C(1) << sink;
    if (gw->pass_ev) event_active(gw->pass_ev, EV_TIMEOUT, 0); /* once, however often called */
}

static void wake(void *user, int sink)
{
    struct xg_gateway *gw = user;
    struct xg_gw_adapter *ga = gw->adapters[sink];
    if (ga->started && ga->a.rate_hz <= 0) xg_gw_make_due(gw, sink);
}

static void entity_event(void *user, const struct xg_entity *e, bool added)
{
    struct xg_gateway *gw = user;
    for (int i = 0; i < gw->n_adapters; i++) {
        struct xg_gw_adapter *ga = gw->adapters[i];
        if (ga && ga->started && ga->a.ops->entity_event && xg_entity_origin(e) != i)
            ga->a.ops->entity_event(&ga->a, e, added);
    }
    XG_DEBUG(COMPONENT, "entity %u '%s' %s", xg_entity_id(e), xg_entity_name(e),
             added ? "added" : "removed");
}

static void cut_through(void *user, uint64_t woken, int origin); /* runtime, below */

/* ---- configuration: the adapters and calibrations (the gateway: map is gateway_conf.c) ---- */

static bool valid_name(const char *s)
{
    if (!*s || strlen(s) >= 64) return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-' && *s != '.') return false;
    return true;
}

/* xg_gw_adapter_load; check_unused: also fail on the node's first unknown key (else the caller
 * reports them). */
static int adapter_load(struct xg_gateway *gw, const struct xg_conf *node, int index,
                        bool check_unused, struct xg_error *err)
{
    int rc;
    if ((rc = xg_conf_expect(node, XG_CONF_MAP, "adapters item", err))) return rc;
    const char *name, *type;
    if ((rc = xg_conf_string(node, "name", NULL, &name, err)) ||
        (rc = xg_conf_string(node, "type", NULL, &type, err)))
        return rc;
    if (!name) return xg_conf_error(err, node, -EINVAL, "adapter needs a 'name'");
    if (!valid_name(name))
        return xg_conf_error(err, xg_conf_get(node, "name"), -EINVAL,
                             "adapter name '%s' must be 1-63 characters of [A-Za-z0-9_.-]", name);
    if (!type)
        return xg_conf_error(err, node, -EINVAL, "adapter '%s' needs a 'type' (one of: %s)", name,
                             xg_registry_types());
    const struct xg_adapter_ops *ops = xg_registry_find(type);
    if (!ops)
        return xg_conf_error(err, xg_conf_get(node, "type"), -EINVAL,
                             "unknown adapter type '%s' (known: %s)", type, xg_registry_types());
    for (int i = 0; index < 0 && i < gw->n_adapters; i++)
        if (gw->adapters[i] && !strcmp(gw->adapters[i]->a.name, name))
            return xg_conf_error(err, xg_conf_get(node, "name"), -EINVAL,
                                 "duplicate adapter name '%s'", name);
    if (index >= XG_MAX_ADAPTERS || (index >= 0 && gw->adapters[index]))
        return xg_error_set(err, -EINVAL, "adapter '%s': index %d is taken", name, index);
    if (index < 0 && gw->n_adapters >= XG_MAX_ADAPTERS)
        return xg_conf_error(err, node, -ENOSPC, "too many adapters (at most %d)", XG_MAX_ADAPTERS);

    struct xg_gw_adapter *ga = calloc(1, sizeof *ga);
    if (!ga) return -ENOMEM;
    ga->gw = gw;
    ga->conf = node;
    ga->root = ga->conf_root = gw->root;
    ga->a.ops = ops;
    ga->a.index = index >= 0 ? index : gw->n_adapters;
    ga->a.base = gw->base;
    ga->a.table = gw->table;
    snprintf(ga->a.name, sizeof ga->a.name, "%s", name);
    ga->a.frame = &ga->frame;
    ga->a.gateway_id = gw->conf.id;
    ga->a.admin_token = gw->conf.admin_token;
    ga->a.admin_tls_cert = gw->conf.admin_tls_cert;
    ga->a.admin_tls_key = gw->conf.admin_tls_key;
    ga->a.whole_frames = ops->whole_frames;
    gw->adapters[ga->a.index] = ga;
    if (ga->a.index >= gw->n_adapters) gw->n_adapters = ga->a.index + 1;
    xg_table_set_adapter_name(gw->table, ga->a.index, ga->a.name);

    /* the type's defaults (ops) for the keys the gateway owns, checked by xg_registry_check() */
    const struct xg_conf *frame = xg_conf_get(node, "frame");
    if (!frame && ops->default_frame)
        rc = xg_frame_preset(ops->default_frame, &ga->frame, err);
    else
        rc = xg_frame_from_conf(frame, &ga->frame, err);
    if (rc || (rc = xg_rename_from_conf(xg_conf_get(node, "rename"), &ga->rename, err))) return rc;
    xg_frame_finalize(&ga->frame);
    if (ops->is_sink) {
        double rate = ops->default_rate_hz > 0 ? ops->default_rate_hz : XG_DEFAULT_RATE_HZ;
        if ((rc = xg_conf_double(node, "rate_hz", rate, 0.0, 100000.0, &ga->a.rate_hz, err)) ||
            (rc = xg_globs_from_conf(xg_conf_get(node, "include"), &ga->include, err)) ||
            (rc = xg_globs_from_conf(xg_conf_get(node, "exclude"), &ga->exclude, err)))
            return rc;
    }
    struct xg_error e2 = {0};
    ga->created = true; /* destroy() runs even if create() fails half-way */
    rc = ops->create(&ga->a, node, &e2);
    if (rc) return xg_error_set(err, rc, "%s", e2.msg[0] ? e2.msg : "adapter create failed");
    if (check_unused && (rc = xg_conf_check_unused(node, err))) return rc;
    if (ops->is_sink && (rc = xg_table_add_sink(gw->table, ga->a.index, sink_accept, wake, gw)))
        return rc;
    return 0;
}

int xg_gw_adapter_load(struct xg_gateway *gw, const struct xg_conf *node, int index,
                       struct xg_error *err)
{
    return adapter_load(gw, node, index, true, err);
}

/* Append e to gw->errors (a message already there is not repeated; on ENOMEM it is dropped:
 * the first error is always in xg_gateway_load's err). */
static void add_error(void *user, const struct xg_error *e)
{
    struct xg_gateway *gw = user;
    for (int i = 0; i < gw->n_errors; i++)
        if (!strcmp(gw->errors[i], e->msg)) return;
    char **list = realloc(gw->errors, (size_t)(gw->n_errors + 1) * sizeof *list);
    if (!list) return;
    gw->errors = list;
    if ((list[gw->n_errors] = strdup(e->msg[0] ? e->msg : "invalid configuration"))) gw->n_errors++;
}

/* A section (the gateway map, an adapter) failed with e: keep the error (the first one also in
 * err), report its misspelt keys (a reader stops at its first error, so only keys that are
 * certainly typos), and mark it read so that the unknown-key pass does not list the keys it did
 * not reach. Returns the first error's code. */
int xg_gw_section_failed(struct xg_gateway *gw, struct xg_conf *at, const struct xg_error *e,
                         int rc, int first, struct xg_error *err)
{
    if (!first && err) *err = *e;
    if (!first && err) err->code = rc;
    add_error(gw, e);
    if (at) {
        xg_conf_unused_each(at, true, add_error, gw);
        xg_conf_mark_used(at);
    }
    return first ? first : rc;
}

int xg_gateway_load(struct xg_gateway *gw, const struct xg_gateway_opts *opts, struct xg_error *err)
{
    memset(gw, 0, sizeof *gw);
    if ((gw->opts = malloc(sizeof *gw->opts))) *gw->opts = *opts;
    if (opts->config_path)
        gw->root = xg_conf_yaml_load(opts->config_path, err);
    else
        gw->root = xg_conf_yaml_parse(opts->config_text, strlen(opts->config_text),
                                      opts->config_name ? opts->config_name : "<embedded>", err);
    if (!gw->root) return err && err->code ? err->code : -EINVAL;

    /* every error of the file (xrgate --check lists them, gw->errors): the gateway keys, then
     * each adapter on its own, then every unknown key; the first one is returned in err */
    int first = 0, rc;
    struct xg_error e = {0};
    first = xg_gw_conf_load(gw, first, err);
    if (opts->admin_listen)
        snprintf(gw->conf.admin_listen, sizeof gw->conf.admin_listen, "%s", opts->admin_listen);
    if (opts->admin_token)
        snprintf(gw->conf.admin_token, sizeof gw->conf.admin_token, "%s", opts->admin_token);
    if (opts->log_level && xg_log_parse_level(opts->log_level, &gw->conf.log_level)) {
        xg_error_set(&e, -EINVAL, "log level '%s' must be error, warn, info, debug or trace",
                     opts->log_level);
        first = xg_gw_section_failed(gw, NULL, &e, -EINVAL, first, err);
    }
    if (!first) xg_log_set_level(gw->conf.log_level);
    gw->conf.strict = gw->conf.strict || opts->strict;

    /* precise timers (timerfd on Linux): egress ticks and replay frames fire within
     * microseconds of their due time instead of the next millisecond */
    struct event_config *ec = event_config_new();
    if (ec) {
        event_config_set_flag(ec, EVENT_BASE_FLAG_PRECISE_TIMER);
        gw->base = event_base_new_with_config(ec);
        event_config_free(ec);
    }
    if (!gw->base) gw->base = event_base_new();
    gw->table = xg_table_new(&gw->conf.table);
    gw->metrics = xg_metrics_new();
    if (!gw->base || !gw->table || !gw->metrics) return xg_error_set(err, -ENOMEM, "out of memory");
    xg_table_set_namer(gw->table, namer, gw);
    xg_table_set_cut_through(gw->table, cut_through, gw);
    xg_table_add_listener(gw->table, entity_event, gw);

    if ((rc = xg_registry_check(err))) return rc;
    struct xg_conf *adapters = xg_conf_get(gw->root, "adapters");
    if (adapters && (rc = xg_conf_expect(adapters, XG_CONF_SEQ, "adapters", &e)))
        first = xg_gw_section_failed(gw, adapters, &e, rc, first, err);
    else if (adapters)
        for (size_t i = 0; i < adapters->n_items; i++) {
            struct xg_conf *node = adapters->items[i];
            xg_error_clear(&e);
            if ((rc = adapter_load(gw, node, -1, false, &e))) {
                if (rc == -ENOMEM) return xg_gw_section_failed(gw, node, &e, rc, first, err);
                first = xg_gw_section_failed(gw, node, &e, rc, first, err);
            } else if (xg_conf_unused_each(node, false, add_error, gw)) {
                /* its unknown keys, each an error */
                if (!first)
                    xg_error_set(err, -EINVAL, "%s", gw->n_errors ? gw->errors[0] : "unknown key");
                first = first ? first : -EINVAL;
                xg_conf_mark_used(node);
            }
        }
    struct xg_conf *calibs = xg_conf_get(gw->root, "calibrations"); /* after the adapters */
    xg_error_clear(&e);
    if (calibs && (rc = xg_conf_expect(calibs, XG_CONF_SEQ, "calibrations", &e)))
        first = xg_gw_section_failed(gw, calibs, &e, rc, first, err);
    else if (calibs)
        for (size_t i = 0; i < calibs->n_items; i++) { /* each item on its own, as adapters */
            xg_error_clear(&e);
            if ((rc = xg_calib_load(gw, calibs->items[i], &e))) {
                if (rc == -ENOMEM)
                    return xg_gw_section_failed(gw, calibs->items[i], &e, rc, first, err);
                first = xg_gw_section_failed(gw, calibs->items[i], &e, rc, first, err);
            }
        }
    if (xg_conf_unused_each(gw->root, false, add_error, gw) && !first) {
        first = -EINVAL;
        if (gw->n_errors) xg_error_set(err, first, "%s", gw->errors[0]);
    }
    if (first) return first;
    return xg_gateway_audit(gw, opts, err);
}

/* ---- runtime ---- */

static void tick_cb(evutil_socket_t fd, short what, void *arg)
{
    struct xg_gw_adapter *ga = arg;
    if (ga->started) xg_gw_make_due(ga->gw, ga->a.index);
}

static void pass_drain(void *user, int sink)
{
    struct xg_gateway *gw = user;
    struct xg_gw_adapter *ga = gw->adapters[sink];
    if (ga && ga->started && ga->a.ops->drain) ga->a.ops->drain(&ga->a);
}

/* Send-on-change sinks that drain in slices (core/table/egress_pass.h). */
static uint64_t sliced_sinks(struct xg_gateway *gw)
{
    uint64_t m = 0;
    for (int i = 0; i < gw->n_adapters; i++) {
        struct xg_gw_adapter *ga = gw->adapters[i];
        if (ga && ga->started && ga->a.ops->is_sink && ga->a.rate_hz <= 0 && !ga->a.whole_frames)
            m |= UINT64_C(1) << i;
    }
    return m;
}

/* Cut-through (xg_table_set_cut_through): a long ingress batch has pushed XG_CUT_AFTER updates
 * since it woke sinks; the sliced ones other than the updating adapter send what is marked now,
 * before the ingress callback pushes the rest of its batch. The pass event, already active, sends
 * what remains after the read. */
static void cut_through(void *user, uint64_t woken, int origin)
{
    struct xg_gateway *gw = user;
    /* everything marked since the last cut, in one drain per sink (not sliced) */
    struct xg_egress_plan plan = {.due = woken & sliced_sinks(gw)};
    if (origin >= 0 && origin < XG_MAX_ADAPTERS) plan.due &= ~(UINT64_C(1) << origin);
    if (!plan.due) return;
    struct xg_egress_result r;
    xg_egress_pass_run(gw->table, xg_clock_mono_ns(), &plan, pass_drain, gw, &r);
    gw->egress_passes++;
    gw->egress_drains += r.drains;
}

/* The egress pass: every due sink, send-on-change ones in interleaved slices unless they send
 * whole frames, rate-limited ones whole; one pass time, one prediction per entity. */
static void pass_cb(evutil_socket_t fd, short what, void *arg)
{
    struct xg_gateway *gw = arg;
    struct xg_egress_plan plan = {0};
    for (int i = 0; i < gw->n_adapters; i++) {
        struct xg_gw_adapter *ga = gw->adapters[i];
        uint64_t bit = UINT64_C(1) << i;
        if (!(gw->egress_due & bit) || !ga || !ga->started) continue;
        /* a send-on-change sink whose set a cut-through emptied has nothing left to send */
        if (ga->a.rate_hz <= 0 && !xg_table_dirty_count(gw->table, i)) continue;
        plan.due |= bit;
        if (ga->a.rate_hz <= 0 && !ga->a.whole_frames) plan.sliced |= bit;
        plan.slice[i] = ga->a.egress_slice;
    }
    gw->egress_due = 0;
    if (!plan.due) return;
    struct xg_egress_result r;
    xg_egress_pass_run(gw->table, xg_clock_mono_ns(), &plan, pass_drain, gw, &r);
    gw->egress_passes++;
    gw->egress_drains += r.drains;
}

static void expire_cb(evutil_socket_t fd, short what, void *arg)
{
    struct xg_gateway *gw = arg;
    xg_table_expire(gw->table, xg_clock_mono_ns());
}

#define LAG_PERIOD_NS (100 * XG_NS_PER_MS)

static void lag_cb(evutil_socket_t fd, short what, void *arg)
{
    struct xg_gateway *gw = arg;
    int64_t now = xg_clock_mono_ns();
    double lag = (double)(now - gw->lag_expected_ns) * 1e-9;
    if (lag < 0) lag = 0;
    gw->loop_lag_s = lag;
    if (lag > gw->loop_lag_max_s) gw->loop_lag_max_s = lag;
    gw->lag_expected_ns = now + LAG_PERIOD_NS;
    struct timeval tv = {0, LAG_PERIOD_NS / 1000};
    evtimer_add(gw->lag_ev, &tv);
}

static void signal_cb(evutil_socket_t sig, short what, void *arg)
{
    struct xg_gateway *gw = arg;
    XG_INFO(COMPONENT, "received %s, stopping", sig == SIGINT ? "SIGINT" : "SIGTERM");
    xg_gateway_request_stop(gw);
}

/* SIGHUP reloads the configuration (gateway/reload.c; the reload logs what it did). SIGUSR1 and
 * SIGUSR2: their default action would kill the daemon without a word, so they are logged —
 * through a limiter, as anyone allowed to signal us could send thousands — and ignored. */
static void signal_ignored_cb(evutil_socket_t sig, short what, void *arg)
{
    struct xg_gateway *gw = arg;
    if (sig == SIGHUP) { /* after this callback: signals caught together make one reload */
        if (gw->reload_ev) event_active(gw->reload_ev, EV_TIMEOUT, 0);
        return;
    }
    XG_WARN_PEER(&gw->signal_log, COMPONENT, "%s ignored: xrgate defines no action for it",
                 sig == SIGUSR1 ? "SIGUSR1" : "SIGUSR2");
}

static void reload_cb(evutil_socket_t fd, short what, void *arg)
{
    bool ok;
    free(xg_gateway_reload(arg, "SIGHUP", &ok));
}

int xg_gw_adapter_retick(struct xg_gateway *gw, struct xg_gw_adapter *ga)
{
    if (ga->tick) event_del(ga->tick);
    if (!ga->a.ops->is_sink || ga->a.rate_hz <= 0) return 0;
    if (!ga->tick && !(ga->tick = event_new(gw->base, -1, EV_PERSIST, tick_cb, ga))) return -ENOMEM;
    double period = 1.0 / ga->a.rate_hz;
    struct timeval tv = {(time_t)period, (suseconds_t)((period - (time_t)period) * 1e6)};
    if (!tv.tv_sec && !tv.tv_usec) tv.tv_usec = 1;
    return event_add(ga->tick, &tv) ? -ENOMEM : 0;
}

int xg_gw_adapter_start(struct xg_gateway *gw, struct xg_gw_adapter *ga, struct xg_error *err)
{
    int rc;
    if (!ga) return 0;
    if (xg_gw_adapter_retick(gw, ga))
        return xg_error_set(err, -ENOMEM, "adapter '%s': cannot add tick", ga->a.name);
    if (ga->a.ops->start && (rc = ga->a.ops->start(&ga->a))) {
        if (ga->tick) event_del(ga->tick);
        return xg_error_set(err, rc, "adapter '%s' (%s) failed to start: %s", ga->a.name,
                            ga->a.ops->type, strerror(-rc));
    }
    ga->started = true;
    XG_INFO(ga->a.name, "%s adapter started (frame %s)", ga->a.ops->type, ga->a.frame->name);
    return 0;
}

int xg_gateway_start(struct xg_gateway *gw, struct xg_error *err)
{
    int rc;
    signal(SIGPIPE, SIG_IGN);
    gw->started_ns = xg_clock_mono_ns();
    gw->last_reload_ok_unix = (double)xg_clock_wall_ns() * 1e-9;
    gw->sigint_ev = evsignal_new(gw->base, SIGINT, signal_cb, gw);
    gw->sigterm_ev = evsignal_new(gw->base, SIGTERM, signal_cb, gw);
    gw->sighup_ev = evsignal_new(gw->base, SIGHUP, signal_ignored_cb, gw);
    gw->sigusr1_ev = evsignal_new(gw->base, SIGUSR1, signal_ignored_cb, gw);
    gw->sigusr2_ev = evsignal_new(gw->base, SIGUSR2, signal_ignored_cb, gw);
    gw->expire_ev = event_new(gw->base, -1, EV_PERSIST, expire_cb, gw);
    gw->lag_ev = evtimer_new(gw->base, lag_cb, gw);
    gw->pass_ev = event_new(gw->base, -1, 0, pass_cb, gw);
    gw->reload_ev = event_new(gw->base, -1, 0, reload_cb, gw);
    if (!gw->pass_ev || !gw->reload_ev || !gw->sigint_ev || !gw->sigterm_ev || !gw->sighup_ev ||
        !gw->sigusr1_ev || !gw->sigusr2_ev || !gw->expire_ev || !gw->lag_ev)
        return xg_error_set(err, -ENOMEM, "out of memory");
    struct event *sigs[] = {gw->sigint_ev, gw->sigterm_ev, gw->sighup_ev, gw->sigusr1_ev,
                            gw->sigusr2_ev};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        if (evsignal_add(sigs[i], NULL))
            return xg_error_set(err, -EIO, "cannot install signal handler %d",
                                (int)event_get_signal(sigs[i]));
    for (int i = 0; i < gw->n_warnings; i++)
        XG_WARN(COMPONENT, "insecure configuration: %s", gw->warnings[i]);
    struct timeval tv100 = {0, 100000};
    event_add(gw->expire_ev, &tv100);
    gw->lag_expected_ns = gw->started_ns + LAG_PERIOD_NS;
    evtimer_add(gw->lag_ev, &tv100);

    if ((rc = xg_admin_start(gw, err))) return rc;
    if ((rc = xg_calib_start(gw))) return xg_error_set(err, rc, "calibrations: out of memory");

    for (int i = 0; i < gw->n_adapters; i++)
        if ((rc = xg_gw_adapter_start(gw, gw->adapters[i], err))) return rc;
    /* a source may have produced samples while later sinks were still starting: their wake-up
     * was dropped then, so send-on-change sinks with a non-empty dirty set drain now */
    for (int i = 0; i < gw->n_adapters; i++) {
        struct xg_gw_adapter *ga = gw->adapters[i];
        if (ga && ga->a.ops->is_sink && ga->a.rate_hz <= 0 &&
            xg_table_dirty_count(gw->table, ga->a.index))
            xg_gw_make_due(gw, ga->a.index);
    }
    XG_INFO(COMPONENT, "xrgate %s '%s' running with %d adapter(s)", XRGATE_VERSION, gw->conf.id,
            gw->n_adapters);
    return 0;
}

int xg_gateway_run(struct xg_gateway *gw)
{
    event_base_dispatch(gw->base);
    return 0;
}

void xg_gw_adapter_stop(struct xg_gateway *gw, struct xg_gw_adapter *ga)
{
    (void)gw;
    if (!ga) return;
    if (ga->tick) event_del(ga->tick);
    if (ga->started && ga->a.ops->stop) ga->a.ops->stop(&ga->a);
    ga->started = false;
}

/* Free one adapter's own memory (after stop; the table is the caller's business). */
static void adapter_destroy(struct xg_gw_adapter *ga)
{
    if (ga->created && ga->a.ops->destroy) ga->a.ops->destroy(&ga->a);
    if (ga->tick) event_free(ga->tick);
    xg_rename_free(&ga->rename);
    xg_globs_free(&ga->include);
    xg_globs_free(&ga->exclude);
    free(ga);
}

void xg_gw_adapter_free(struct xg_gateway *gw, struct xg_gw_adapter *ga)
{
    if (!ga) return;
    int i = ga->a.index;
    xg_gw_adapter_stop(gw, ga);
    xg_table_drop_adapter(gw->table, i);
    gw->egress_due &= ~(UINT64_C(1) << i);
    adapter_destroy(ga);
    gw->adapters[i] = NULL;
    while (gw->n_adapters > 0 && !gw->adapters[gw->n_adapters - 1])
        gw->n_adapters--;
}

static void stop_adapters(struct xg_gateway *gw)
{
    for (int i = gw->n_adapters - 1; i >= 0; i--)
        xg_gw_adapter_stop(gw, gw->adapters[i]);
}

void xg_gateway_request_stop(struct xg_gateway *gw)
{
    if (gw->stopping) return;
    gw->stopping = true;
    stop_adapters(gw);
    xg_admin_stop(gw);
    event_base_loopexit(gw->base, NULL);
}

void xg_gateway_free(struct xg_gateway *gw)
{
    stop_adapters(gw);
    xg_admin_stop(gw);
    for (int i = 0; i < gw->n_adapters; i++)
        if (gw->adapters[i]) adapter_destroy(gw->adapters[i]);
    gw->n_adapters = 0;
    struct event **evs[] = {&gw->pass_ev,    &gw->expire_ev,  &gw->lag_ev,
                            &gw->sigint_ev,  &gw->sigterm_ev, &gw->sighup_ev,
                            &gw->sigusr1_ev, &gw->sigusr2_ev, &gw->reload_ev};
    for (size_t i = 0; i < sizeof evs / sizeof evs[0]; i++)
        if (*evs[i]) {
            event_free(*evs[i]);
            *evs[i] = NULL;
        }
    xg_calib_free(gw);
    xg_table_free(gw->table);
    gw->table = NULL;
    xg_metrics_free(gw->metrics);
    gw->metrics = NULL;
    if (gw->base) event_base_free(gw->base);
    gw->base = NULL;
    xg_conf_yaml_free(gw->root);
    gw->root = NULL;
    for (int i = 0; i < XG_OLD_ROOTS; i++) {
        xg_conf_yaml_free(gw->old_roots[i]);
        gw->old_roots[i] = NULL;
    }
    free(gw->opts);
    gw->opts = NULL;
    for (int i = 0; i < gw->n_warnings; i++)
        free(gw->warnings[i]);
    free(gw->warnings);
    gw->warnings = NULL;
    gw->n_warnings = 0;
    for (int i = 0; i < gw->n_errors; i++)
        free(gw->errors[i]);
    free(gw->errors);
    gw->errors = NULL;
    gw->n_errors = 0;
}
