/* The gateway: configuration, adapter instances, the reactor, and the admin HTTP server.
 *
 * Life cycle: xg_gateway_load() parses and validates the whole configuration and creates every
 * adapter (no sockets yet) — this is all `xrgate --check` does; xg_gateway_start() binds the admin
 * server and starts the adapters; xg_gateway_run() runs the reactor until SIGINT/SIGTERM or
 * xg_gateway_request_stop(); xg_gateway_free() stops and frees everything. */
#ifndef XG_GATEWAY_H
#define XG_GATEWAY_H

#include <stdbool.h>
#include <stdint.h>

#include "core/adapter/adapter.h"
#include "core/conf/conf.h"
#include "core/table/entity.h"
#include "core/util/error.h"
#include "core/util/log.h"
#include "core/util/metrics.h"
#include "mappings/frame.h"
#include "mappings/naming.h"

struct event_base;
struct event;
struct evhttp;
struct evconnlistener;
struct xg_inspector;
struct xg_calib_set;
struct xg_admin_tls;
struct xg_admin_conns;

/** Per-instance bookkeeping around an adapter (the adapter is the first member). */
struct xg_gw_adapter {
    struct xg_adapter a;
    struct xg_gateway *gw;
    const struct xg_conf *conf;
    struct xg_frame frame;
    struct xg_rename_rules rename;
    struct xg_globs include, exclude;
    struct event *tick; /* egress tick (rate_hz > 0): makes the sink due in the next pass */
    bool created, started;
    struct xg_conf *root;      /* the configuration tree it was created from (gw->root or an old
                                  one: create() may keep pointers into it) */
    struct xg_conf *conf_root; /* the tree `conf` belongs to (another after an in-place update) */
};

/** The `gateway:` section. */
struct xg_gateway_conf {
    char id[64];
    char admin_listen[128];       /* "host:port"; "" or "off" disables the admin server */
    char admin_token[256];        /* bearer token, "" = none */
    char admin_tls_cert[1024];    /* admin.tls.cert: PEM certificate (chain); "" = plain HTTP */
    char admin_tls_key[1024];     /* admin.tls.key: its unencrypted private key */
    int admin_max_connections;    /* admin.max_connections: open connections (default 64) */
    int admin_request_timeout_ms; /* admin.request_timeout_ms: request head+body deadline */
    struct xg_table_params table;
    enum xg_log_level log_level;
    bool strict; /* gateway.strict (or --strict): insecure-setting warnings are errors */
};

/** Configuration trees older than the current one that adapters may still read (two each). */
#define XG_OLD_ROOTS (2 * XG_MAX_ADAPTERS)

struct xg_gateway {
    struct event_base *base;
    struct xg_conf *root; /* parsed YAML */
    struct xg_gateway_conf conf;
    struct xg_table *table;
    struct xg_metrics *metrics;
    struct xg_gw_adapter *adapters[XG_MAX_ADAPTERS];
    int n_adapters;
    struct evhttp *http;
    char admin_bound[128];          /* actual "host:port" after bind */
    struct xg_calib_set *calib;     /* space calibrations (gateway/calib.h), NULL = none */
    struct xg_inspector *inspector; /* web inspector state (gateway/inspector.c), NULL until used */
    struct xg_admin_tls
        *admin_tls; /* TLS front of the admin server (gateway/admin_tls.c), or NULL */
    struct xg_admin_conns *admin_conns;    /* admin connection cap and deadlines (admin_conn.c) */
    struct evconnlistener *admin_listener; /* evhttp's listener (owned by evhttp), guarded */
    struct event
        *pass_ev; /* the egress pass (core/table/egress_pass.h), active while sinks are due */
    uint64_t egress_due;                   /* sinks (bit = adapter index) the next pass drains */
    uint64_t egress_passes, egress_drains; /* passes run, drains in them (/metrics) */
    struct event *expire_ev, *lag_ev, *sigint_ev, *sigterm_ev;
    struct event *sighup_ev, *sigusr1_ev, *sigusr2_ev; /* HUP reloads, USR1/2 logged */
    struct event *reload_ev;        /* SIGHUP's reload, run once for signals that arrive together */
    struct xg_log_limit signal_log; /* one limiter for those lines */
    char **warnings;                /* insecure-configuration findings (xg_gateway_audit), owned */
    int n_warnings;
    char **errors; /* every configuration error xg_gateway_load found, in order (owned; the
                    * first is also in its err); empty when it failed otherwise (ENOMEM, strict) */
    int n_errors;
    int64_t lag_expected_ns;
    double loop_lag_s, loop_lag_max_s;
    int64_t started_ns;
    bool stopping;
    /* configuration reload (gateway/reload.c): gw->adapters[] may have holes (NULL) after one,
     * n_adapters is one past the highest index in use */
    struct xg_gateway_opts *opts;            /* what the file was loaded with (owned copy) */
    struct xg_conf *old_roots[XG_OLD_ROOTS]; /* earlier trees still used by kept adapters */
    uint64_t reloads_ok, reloads_failed;     /* xrgate_config_reloads_total{result} */
    bool last_reload_failed;                 /* xrgate_config_last_reload_successful = 0 */
    double last_reload_ok_unix;              /* time of the last successful load, s */
};

/** The git commit the binary was built from ("0123456789ab", "...-dirty" with local changes,
 *  "unknown" outside a checkout): generated at build time by cmake/commit.cmake. */
extern const char xg_build_commit[];

/** Options from the command line / environment that override the file. */
struct xg_gateway_opts {
    const char *config_path;  /* NULL: use config_text */
    const char *config_text;  /* embedded default when config_path is NULL */
    const char *config_name;  /* name for errors when using config_text */
    const char *admin_listen; /* override (XRGATE_ADMIN_LISTEN), NULL = keep */
    const char *admin_token;  /* override (XRGATE_ADMIN_TOKEN), NULL = keep */
    const char *log_level;    /* override (--log-level / XRGATE_LOG_LEVEL), NULL = keep */
    bool strict;              /* --strict: insecure settings are errors (as gateway.strict) */
};

/** Re-read the configuration the gateway was loaded with (SIGHUP, POST /api/reload;
 *  gateway/reload.c, docs/configuration.md "Reloading"). The new file is checked exactly as
 *  `xrgate --check` checks it (xg_gateway_load on a scratch gateway); if it is invalid nothing
 *  changes. Otherwise adapters whose configuration node is unchanged keep running untouched,
 *  changed ones restart (or, for a sink's rate_hz, include and exclude, are updated in place),
 *  added ones start,
 *  removed ones stop (their entities removed, every other adapter told); live gateway keys
 *  apply, admin.listen, admin.tls, id and resolv_conf are reported as needing a restart.
 *  `trigger` names the cause for the log ("SIGHUP", "POST /api/reload from ..."). Returns the
 *  result as a malloc'd JSON text {ok, added, removed, restarted, updated, unchanged,
 *  needs_restart, errors} (NULL on ENOMEM); *ok tells whether it succeeded. */
char *xg_gateway_reload(struct xg_gateway *gw, const char *trigger, bool *ok);

/** Longest insecure-configuration warning, in bytes (with its file:line:column). */
#define XG_WARNING_MAX 640

/** Parse, validate, and create every adapter, then audit the result (xg_gateway_audit). `opts`
 *  is copied, its strings are not: they must live as long as the gateway (xg_gateway_reload
 *  loads with them again). On
 *  error returns a negative errno with `file:line:column: message` in err; the gateway must
 *  still be freed. In strict mode insecure settings fail with -EPERM (gw->warnings lists them). */
int xg_gateway_load(struct xg_gateway *gw, const struct xg_gateway_opts *opts,
                    struct xg_error *err);
/** Insecure-configuration audit of a loaded gateway (gateway/audit.c): appends one message per
 *  finding to gw->warnings, "file:line:column: what is insecure (how to fix it)" — or
 *  "XRGATE_ADMIN_LISTEN: ..." when the value came from the environment. Findings: admin API on
 *  a non-loopback address without a token (or with a token over plain HTTP); LESS
 *  `signature: none` off loopback on a TLS listener without client certificates, with
 *  `tls.verify: false`, or forced by `insecure: true`; secret files (token, TLS keys, LESS and
 *  SRTP keys, a dds enclave's key.pem) readable by every user; a dds adapter without `security`
 *  (an open DDS domain).
 *  Returns 0, or -EPERM with err set when there are findings and gw->conf.strict. */
int xg_gateway_audit(struct xg_gateway *gw, const struct xg_gateway_opts *opts,
                     struct xg_error *err);
/** Bind the admin server, install signal handlers and timers, log gw->warnings, start
 *  adapters. SIGINT/SIGTERM stop the gateway; SIGHUP reloads the configuration
 *  (xg_gateway_reload; SIGHUPs that arrive before the reload ran make one reload); SIGUSR1 and
 *  SIGUSR2 are logged (rate limited) and ignored; SIGPIPE is ignored. */
int xg_gateway_start(struct xg_gateway *gw, struct xg_error *err);
/** Run the reactor until stopped. Returns 0. */
int xg_gateway_run(struct xg_gateway *gw);
/** Stop adapters and leave the loop (safe from callbacks). */
void xg_gateway_request_stop(struct xg_gateway *gw);
/** Stop (if running) and free everything the gateway owns (not gw itself). */
void xg_gateway_free(struct xg_gateway *gw);

/** The adapter registry: ops by type name, NULL if unknown. */
const struct xg_adapter_ops *xg_registry_find(const char *type);
/** Comma-separated list of known types (static buffer). */
const char *xg_registry_types(void);
/** Check one adapter type: the mandatory ops exist (type, create, start, stop, destroy, status;
 *  drain exactly when is_sink), default_rate_hz is finite and >= 0 and default_frame (if set)
 *  names a known frame preset. Returns 0, or -EINVAL with err naming the type and the missing op
 *  or bad default ("adapter type 'x': missing op 'start'"). */
int xg_registry_check_ops(const struct xg_adapter_ops *ops, struct xg_error *err);
/** xg_registry_check_ops() on every registered type (xg_gateway_load() runs it first). */
int xg_registry_check(struct xg_error *err);

/** Admin HTTP server (gateway/admin.c): bind on gw->conf.admin_listen. */
int xg_admin_start(struct xg_gateway *gw, struct xg_error *err);
/** `xrgate --make-cert HOST DIR` (gateway/makecert.c): write a self-signed ECDSA P-256
 *  certificate for HOST (CN and subjectAltName: iPAddress for an address, else dNSName; 825
 *  days) and its key to DIR/HOST.crt (0644) and DIR/HOST.key (0600; DIR is created when
 *  missing), paths into crt_path and
 *  key_path (`size` bytes each). Never overwrites: -EEXIST. 0 or a negative errno with err. */
int xg_make_cert(const char *host, const char *dir, char *crt_path, char *key_path, size_t size,
                 struct xg_error *err);
void xg_admin_stop(struct xg_gateway *gw);

#endif
