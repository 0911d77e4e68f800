/* GET /metrics (see admin_metrics.h; families listed in docs/metrics.md). */
#include "gateway/admin_metrics.h"

#include <dirent.h>
#include <event2/buffer.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "core/clock/clock.h"
#include "core/util/metrics.h"
#include "core/net/net.h"
#include "gateway/admin_conn.h"
#include "gateway/calib.h"
#include "gateway/gateway.h"

#define PREFIX "xrgate_adapter_"

static bool snake_case(const char *s)
{
    if (*s < 'a' || *s > 'z') return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_')) return false;
    return true;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

bool xg_metrics_adapter_family(const char *name, enum xg_status_kind kind, char *buf, size_t size)
{
    if (kind == XG_STATUS_ID || !snake_case(name) || ends_with(name, "_total")) return false;
    int n;
    if (kind == XG_STATUS_COUNTER) {
        /* the gateway's own per-adapter counter */
        if (!strcmp(name, "errors")) return false;
        if (!strncmp(name, "bytes_", 6) && name[6])
            n = snprintf(buf, size, PREFIX "%s_bytes_total", name + 6);
        else
            n = snprintf(buf, size, PREFIX "%s_total", name);
    } else {
        if (!strcmp(name, "up") || !strcmp(name, "info")) return false;
        size_t len = strlen(name);
        if (ends_with(name, "_hz"))
            n = snprintf(buf, size, PREFIX "%.*s_hertz", (int)(len - 3), name);
        else
            n = snprintf(buf, size, PREFIX "%s", name);
    }
    return n > 0 && (size_t)n < size;
}

bool xg_metrics_state_up(const char *state)
{
    static const char *const up[] = {"streaming", "listening", "running", "playing", "recording"};
    for (size_t i = 0; state && i < sizeof up / sizeof up[0]; i++)
        if (!strcmp(state, up[i])) return true;
    return false;
}

static void set_metric(struct xg_gateway *gw, const char *name, const char *help,
                       enum xg_metric_type type, const char *labels, double v)
{
    double *slot = xg_metrics_slot(gw->metrics, name, help, type, labels);
    if (slot) *slot = v;
}

/* Boot time of the host, Unix seconds (/proc/stat btime), 0 if unknown. */
static double boot_time(void)
{
    FILE *f = fopen("/proc/stat", "r");
    char line[256];
    double bt = 0;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "btime ", 6)) bt = strtod(line + 6, NULL);
    if (f) fclose(f);
    return bt;
}

/* The standard process_* families (as Prometheus' client libraries export them), read from
 * /proc/self: CPU time, memory, file descriptors, start time. A file that cannot be read leaves
 * its families out. */
static void process_families(struct xg_gateway *gw)
{
    char buf[1024];
    FILE *f = fopen("/proc/self/stat", "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = '\0';
    /* fields after the command name (which may hold spaces and parentheses): 3 state ... 14
     * utime, 15 stime, 22 starttime (clock ticks), 23 vsize (bytes), 24 rss (pages) */
    const char *p = strrchr(buf, ')');
    double v[25] = {0};
    int field = 3;
    for (p = p ? p + 2 : NULL; p && *p && field <= 24; field++) {
        v[field] = strtod(p, NULL);
        p = strchr(p, ' ');
        if (p) p++;
    }
    long tck = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
    if (field > 24 && tck > 0 && page > 0) {
        set_metric(gw, "process_cpu_seconds_total",
                   "Total user and system CPU time spent in seconds", XG_METRIC_COUNTER, NULL,
                   (v[14] + v[15]) / (double)tck);
        set_metric(gw, "process_virtual_memory_bytes", "Virtual memory size in bytes",
                   XG_METRIC_GAUGE, NULL, v[23]);
        set_metric(gw, "process_resident_memory_bytes", "Resident memory size in bytes",
                   XG_METRIC_GAUGE, NULL, v[24] * (double)page);
        double bt = boot_time();
        if (bt > 0)
            set_metric(gw, "process_start_time_seconds",
                       "Start time of the process since unix epoch in seconds", XG_METRIC_GAUGE,
                       NULL, bt + v[22] / (double)tck);
    }
    DIR *d = opendir("/proc/self/fd");
    if (d) {
        int fds = 0;
        for (struct dirent *e; (e = readdir(d));)
            if (e->d_name[0] != '.') fds++;
        closedir(d);
        set_metric(gw, "process_open_fds", "Number of open file descriptors", XG_METRIC_GAUGE, NULL,
                   fds - 1); /* not the one reading the directory */
    }
    struct rlimit rl;
    if (!getrlimit(RLIMIT_NOFILE, &rl))
        set_metric(gw, "process_max_fds", "Maximum number of open file descriptors",
                   XG_METRIC_GAUGE, NULL,
                   rl.rlim_cur == RLIM_INFINITY ? 1e18 : (double)rl.rlim_cur);
}

static void gateway_families(struct xg_gateway *gw)
{
    const struct xg_table_stats *ts = xg_table_stats(gw->table);
    char lbl[256], esc[2][96];
    snprintf(lbl, sizeof lbl, "version=\"%s\",commit=\"%s\"",
             xg_metrics_escape(XRGATE_VERSION, esc[0], sizeof esc[0]),
             xg_metrics_escape(xg_build_commit, esc[1], sizeof esc[1]));
    set_metric(gw, "xrgate_build_info",
               "Always 1; the gateway's version and the git commit it was built from as labels",
               XG_METRIC_GAUGE, lbl, 1);
    process_families(gw);
    set_metric(gw, "xrgate_up", "1 while the gateway runs (a scrape that answers sees 1)",
               XG_METRIC_GAUGE, NULL, 1);
    set_metric(
        gw, "xrgate_uptime_seconds",
        "Seconds since the gateway started (deprecated: time() - process_start_time_seconds)",
        XG_METRIC_GAUGE, NULL, (double)(xg_clock_mono_ns() - gw->started_ns) * 1e-9);
    set_metric(gw, "xrgate_entities",
               "Entities (rigid bodies, devices, skeleton joints) in the table now",
               XG_METRIC_GAUGE, NULL, (double)xg_table_count(gw->table));
    set_metric(gw, "xrgate_entities_created_total", "Entities created since start",
               XG_METRIC_COUNTER, NULL, (double)ts->created);
    set_metric(gw, "xrgate_entities_expired_total", "Entities removed after entity.expire_ms",
               XG_METRIC_COUNTER, NULL, (double)ts->expired);
    for (int q = 0; q < XG_QUALITY_COUNT; q++) {
        snprintf(lbl, sizeof lbl, "quality=\"%s\"", xg_quality_name((enum xg_quality)q));
        set_metric(gw, "xrgate_predictions_total",
                   "Poses predicted for egress (what the sink adapters sent or answered), by "
                   "quality; the admin API's and the inspector's are in "
                   "xrgate_api_predictions_total",
                   XG_METRIC_COUNTER, lbl, (double)ts->predictions[q]);
        set_metric(gw, "xrgate_api_predictions_total",
                   "Poses predicted for the admin API (/api/entities) and the inspector, by "
                   "quality; not in xrgate_predictions_total",
                   XG_METRIC_COUNTER, lbl, (double)ts->predictions_api[q]);
    }
    set_metric(gw, "xrgate_predictions_shared_total",
               "Poses an egress pass answered from its cache (predicted once for an earlier sink)",
               XG_METRIC_COUNTER, NULL, (double)ts->predictions_shared);
    set_metric(gw, "xrgate_egress_passes_total", "Egress passes (drains of the due sinks)",
               XG_METRIC_COUNTER, NULL, (double)gw->egress_passes);
    set_metric(gw, "xrgate_egress_drains_total",
               "Sink drains in egress passes (a sliced sink drains once per slice)",
               XG_METRIC_COUNTER, NULL, (double)gw->egress_drains);
    set_metric(
        gw, "xrgate_loop_lag_seconds",
        "How late the event loop ran its last 100 ms check timer, seconds (time it was busy)",
        XG_METRIC_GAUGE, NULL, gw->loop_lag_s);
    set_metric(gw, "xrgate_loop_lag_max_seconds",
               "Largest xrgate_loop_lag_seconds since start, seconds", XG_METRIC_GAUGE, NULL,
               gw->loop_lag_max_s);
    struct xg_admin_conn_stats cs = xg_admin_conn_stats(gw);
    set_metric(gw, "xrgate_admin_connections", "Admin HTTP connections open now", XG_METRIC_GAUGE,
               NULL, cs.open);
    set_metric(gw, "xrgate_admin_connections_refused_total",
               "Admin connections refused at admin.max_connections", XG_METRIC_COUNTER, NULL,
               (double)cs.refused);
    set_metric(gw, "xrgate_admin_request_timeouts_total",
               "Admin connections closed at admin.request_timeout_ms", XG_METRIC_COUNTER, NULL,
               (double)cs.timeouts);
    set_metric(gw, "xrgate_config_reloads_total",
               "Configuration reloads (SIGHUP, POST /api/reload), by result", XG_METRIC_COUNTER,
               "result=\"success\"", (double)gw->reloads_ok);
    set_metric(gw, "xrgate_config_reloads_total",
               "Configuration reloads (SIGHUP, POST /api/reload), by result", XG_METRIC_COUNTER,
               "result=\"failure\"", (double)gw->reloads_failed);
    set_metric(gw, "xrgate_config_last_reload_successful",
               "1 if the last configuration load (start or reload) succeeded", XG_METRIC_GAUGE,
               NULL, gw->last_reload_failed ? 0 : 1);
    set_metric(gw, "xrgate_config_last_reload_success_timestamp_seconds",
               "Unix time of the last successful configuration load (start or reload)",
               XG_METRIC_GAUGE, NULL, gw->last_reload_ok_unix);
    set_metric(gw, "xrgate_accept_backoff_total",
               "Times a listener stopped accepting for a while after accept() failed (fd limit)",
               XG_METRIC_COUNTER, NULL, (double)xg_net_accept_backoff_total());
}

/* One adapter's families; its identifiers are appended to `info` as labels. */
static void adapter_families(struct xg_gateway *gw, int i, const char *lbl, struct evbuffer *info)
{
    const struct xg_table_stats *ts = xg_table_stats(gw->table);
    struct xg_gw_adapter *ga = gw->adapters[i];
    struct xg_status st = {.state = ga->started ? "running" : "stopped"};
    if (ga->a.ops->status) ga->a.ops->status(&ga->a, &st);
    set_metric(gw, "xrgate_adapter_up",
               "1 while the adapter is streaming, listening, running or playing; 0 when it is "
               "connecting, in back-off, stopped or done",
               XG_METRIC_GAUGE, lbl, xg_metrics_state_up(st.state ? st.state : "running"));
    set_metric(gw, "xrgate_samples_in_total", "Samples accepted into the table, per origin",
               XG_METRIC_COUNTER, lbl, (double)ts->samples_in[i]);
    if (ga->a.ops->is_sink) /* an ingress-only adapter sends nothing */
        set_metric(gw, "xrgate_samples_out_total",
                   "Samples (poses of entities) the egress adapter sent to its peers",
                   XG_METRIC_COUNTER, lbl, (double)ga->a.samples_out);
    set_metric(
        gw, "xrgate_drops_total",
        "Samples or packets the adapter discarded (over a budget, a full queue, a slow peer)",
        XG_METRIC_COUNTER, lbl, (double)ga->a.drops);
    set_metric(gw, "xrgate_samples_backwards_total",
               "Samples dropped because their capture time did not advance", XG_METRIC_COUNTER, lbl,
               (double)ts->dropped_backwards[i]);
    set_metric(
        gw, "xrgate_samples_rejected_total",
        "Samples not applied because a value was invalid (not finite, out of bounds), per origin",
        XG_METRIC_COUNTER, lbl, (double)ts->rejected[i]);
    set_metric(gw, "xrgate_adapter_errors_total", "Protocol and I/O errors, per adapter",
               XG_METRIC_COUNTER, lbl, (double)ga->a.errors);
    set_metric(gw, "xrgate_entities_refused_total",
               "New entities refused because entity.max_entities was reached, per origin",
               XG_METRIC_COUNTER, lbl, (double)ts->refused[i]);
    set_metric(gw, "xrgate_clock_steps_total",
               "Source clock steps adopted (a source's timestamps jumped forward or back), per "
               "adapter",
               XG_METRIC_COUNTER, lbl, (double)ga->a.clock_steps);
    if (ga->a.ops->is_sink)
        set_metric(gw, "xrgate_dirty_entities", "Entities waiting in a sink's dirty set",
                   XG_METRIC_GAUGE, lbl, (double)xg_table_dirty_count(gw->table, i));
    evbuffer_add_printf(info, "xrgate_adapter_info{%s", lbl);
    for (int k = 0; k < st.n_counters; k++) {
        const char *name = st.counters[k].name;
        double v = st.counters[k].value;
        if (st.counters[k].kind == XG_STATUS_ID) {
            if (snake_case(name)) evbuffer_add_printf(info, ",%s=\"%.0f\"", name, v);
            continue;
        }
        char fam[128], help[192];
        if (!xg_metrics_adapter_family(name, st.counters[k].kind, fam, sizeof fam)) continue;
        char words[64];
        snprintf(words, sizeof words, "%s", name);
        for (char *q = words; *q; q++)
            if (*q == '_') *q = ' ';
        if (st.counters[k].kind == XG_STATUS_COUNTER)
            snprintf(help, sizeof help,
                     "Count of %s since the adapter started (what each adapter type counts: "
                     "docs/metrics.md)",
                     words);
        else
            snprintf(help, sizeof help,
                     "Current %s of the adapter (what each adapter type reports: docs/metrics.md)",
                     words);
        set_metric(gw, fam, help,
                   st.counters[k].kind == XG_STATUS_COUNTER ? XG_METRIC_COUNTER : XG_METRIC_GAUGE,
                   lbl, v);
    }
    evbuffer_add(info, "} 1\n", 4);
}

/* Client adapters' connection state (core/net/transport_client.h), built per scrape outside the
 * registry like xrgate_adapter_info. Their last error is text: it is in /api/adapters
 * (last_error) and the log, not a label (the former xrgate_adapter_last_error_info). */
static void client_families(struct xg_gateway *gw, struct evbuffer *out)
{
    static const char *const states[] = {"connecting", "handshake", "streaming", "backoff"};
    char name[160];
    bool head = false;
    for (int i = 0; i < gw->n_adapters; i++) {
        struct xg_gw_adapter *ga = gw->adapters[i];
        if (!ga) continue;
        struct xg_status st = {.state = ga->started ? "running" : "stopped"};
        if (ga->a.ops->status) ga->a.ops->status(&ga->a, &st);
        if (!st.client) continue;
        if (!head)
            evbuffer_add_printf(out, "%s",
                                "# HELP xrgate_adapter_state Client adapters' connection state: 1 "
                                "for the current one of connecting, handshake, streaming, "
                                "backoff, 0 for the others\n# TYPE xrgate_adapter_state gauge\n");
        head = true;
        xg_metrics_escape(ga->a.name, name, sizeof name);
        for (size_t k = 0; k < sizeof states / sizeof states[0]; k++)
            evbuffer_add_printf(out,
                                "xrgate_adapter_state{adapter=\"%s\",type=\"%s\",state=\"%s\"} "
                                "%d\n",
                                name, ga->a.ops->type, states[k],
                                st.state && !strcmp(st.state, states[k]));
    }
}

void xg_admin_metrics_render(struct xg_gateway *gw, struct evbuffer *out)
{
    char lbl[256], esc[160];
    gateway_families(gw);
    /* identifiers can change (a re-bound port): the info family is built per scrape, outside
     * the registry, so that no series with old labels lingers */
    struct evbuffer *info = evbuffer_new();
    if (!info) return;
    for (int i = 0; i < gw->n_adapters; i++) {
        struct xg_gw_adapter *ga = gw->adapters[i];
        if (!ga) continue;
        snprintf(lbl, sizeof lbl, "adapter=\"%s\",type=\"%s\"",
                 xg_metrics_escape(ga->a.name, esc, sizeof esc), ga->a.ops->type);
        adapter_families(gw, i, lbl, info);
    }
    xg_metrics_render(gw->metrics, out);
    if (gw->n_adapters) {
        evbuffer_add_printf(out, "# HELP xrgate_adapter_info Identifiers of each adapter (bound "
                                 "port, RTP SSRC...) as labels; the value is always 1\n"
                                 "# TYPE xrgate_adapter_info gauge\n");
        evbuffer_add_buffer(out, info);
    }
    evbuffer_free(info);
    client_families(gw, out);
    xg_calib_metrics(gw, out);
}
