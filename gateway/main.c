/* xrgate: multi-protocol translation gateway for live pose data. */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <pwd.h>
#include <netdb.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>
#include <mbedtls/error.h>
#include <mbedtls/net_sockets.h>
#include <mbedtls/ssl.h>

#include "core/conf/conf.h"
#include "core/util/error.h"
#include "core/util/log.h"
#include "gateway/gateway.h"

extern const unsigned char xg_embedded_default_conf[];

/* One GET /healthz over TLS on the connected socket `fd` (no certificate verification: this
 * checks liveness of the local daemon, not its identity). Reply (start) into buf. */
static bool healthcheck_tls(int fd, char *buf, size_t size)
{
    mbedtls_net_context net = {.fd = fd};
    mbedtls_entropy_context entropy;
    mbedtls_ctr_drbg_context drbg;
    mbedtls_ssl_config conf;
    mbedtls_ssl_context ssl;
    mbedtls_entropy_init(&entropy);
    mbedtls_ctr_drbg_init(&drbg);
    mbedtls_ssl_config_init(&conf);
    mbedtls_ssl_init(&ssl);
    static const char pers[] = "xrgate-healthcheck";
    const char req[] = "GET /healthz HTTP/1.0\r\nHost: localhost\r\n\r\n";
    bool ok =
        !mbedtls_ctr_drbg_seed(&drbg, mbedtls_entropy_func, &entropy, (const unsigned char *)pers,
                               sizeof pers - 1) &&
        !mbedtls_ssl_config_defaults(&conf, MBEDTLS_SSL_IS_CLIENT, MBEDTLS_SSL_TRANSPORT_STREAM,
                                     MBEDTLS_SSL_PRESET_DEFAULT);
    if (ok) {
        mbedtls_ssl_conf_authmode(&conf, MBEDTLS_SSL_VERIFY_NONE);
        mbedtls_ssl_conf_rng(&conf, mbedtls_ctr_drbg_random, &drbg);
        ok = !mbedtls_ssl_setup(&ssl, &conf);
    }
    if (ok) {
        mbedtls_ssl_set_bio(&ssl, &net, mbedtls_net_send, mbedtls_net_recv, NULL);
        int rc = mbedtls_ssl_handshake(&ssl);
        if (rc) {
            char e[160];
            mbedtls_strerror(rc, e, sizeof e);
            snprintf(buf, size, "TLS handshake: %s", e);
            ok = false;
        }
    }
    if (ok)
        ok = mbedtls_ssl_write(&ssl, (const unsigned char *)req, sizeof req - 1) ==
             (int)(sizeof req - 1);
    if (ok) {
        size_t got = 0;
        while (got < size - 1) {
            int n = mbedtls_ssl_read(&ssl, (unsigned char *)buf + got, size - 1 - got);
            if (n <= 0) break;
            got += (size_t)n;
        }
        buf[got] = '\0';
        mbedtls_ssl_close_notify(&ssl);
    }
    mbedtls_ssl_free(&ssl);
    mbedtls_ssl_config_free(&conf);
    mbedtls_ctr_drbg_free(&drbg);
    mbedtls_entropy_free(&entropy);
    return ok;
}

/* Connect to host:port and GET /healthz, over TLS or plain HTTP. True on a 200 answer; the
 * reply's first bytes (or the failure) in buf. */
static bool healthcheck_once(const char *host, const char *port, bool tls, char *buf, size_t size)
{
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res = NULL;
    buf[0] = '\0';
    if (getaddrinfo(host, port, &hints, &res) || !res) {
        snprintf(buf, size, "cannot resolve %s", host);
        return false;
    }
    int fd = socket(res->ai_family, SOCK_STREAM, 0);
    struct timeval tv = {3, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    bool ok = fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) == 0;
    freeaddrinfo(res);
    if (!ok) snprintf(buf, size, "%s", strerror(errno));
    if (ok && tls) {
        ok = healthcheck_tls(fd, buf, size);
    } else if (ok) {
        const char req[] = "GET /healthz HTTP/1.0\r\nHost: localhost\r\n\r\n";
        ok = send(fd, req, sizeof req - 1, 0) == (ssize_t)(sizeof req - 1);
        ssize_t n = ok ? recv(fd, buf, size - 1, 0) : -1;
        buf[n > 0 ? n : 0] = '\0';
        if (n == 0) snprintf(buf, size, "closed without an answer");
    }
    if (fd >= 0) close(fd);
    return ok && strlen(buf) > 12 && !strncmp(buf, "HTTP/1.", 7) && !strncmp(buf + 9, "200", 3);
}

/* `xrgate --healthcheck [[http://|https://]HOST:PORT]`: GET /healthz on the admin server (for
 * container HEALTHCHECKs, without curl in the image). https:// speaks TLS (admin.tls; the
 * certificate is not verified: this checks liveness, not identity), http:// plain HTTP, and
 * without a scheme TLS is tried first, then plain HTTP (so the image's HEALTHCHECK works
 * either way; a TLS ClientHello to a plain evhttp server just gets a 400). 0 if it answers 200,
 * 1 otherwise (port 0 is refused with a message: the port the server chose is unknown here). */
static int healthcheck(const char *addr)
{
    char host[256] = "127.0.0.1", port[16] = "8080";
    int mode = 0; /* 0 auto, 1 plain, 2 TLS */
    if (addr && !strncmp(addr, "https://", 8)) {
        mode = 2;
        addr += 8;
    } else if (addr && !strncmp(addr, "http://", 7)) {
        mode = 1;
        addr += 7;
    }
    if (addr && *addr) {
        const char *colon = strrchr(addr, ':');
        if (!colon) {
            fprintf(stderr, "xrgate: --healthcheck needs [https://]host:port, not '%s'\n", addr);
            return 1;
        }
        snprintf(host, sizeof host, "%.*s", (int)(colon - addr), addr);
        snprintf(port, sizeof port, "%s", colon + 1);
        port[strcspn(port, "/")] = '\0';
        if (!host[0] || !strcmp(host, "0.0.0.0")) snprintf(host, sizeof host, "127.0.0.1");
        if (!strcmp(host, "[::]") || !strcmp(host, "::")) snprintf(host, sizeof host, "::1");
        if (host[0] == '[') {
            memmove(host, host + 1, strlen(host));
            host[strcspn(host, "]")] = '\0';
        }
    }
    /* port 0 means "a free port chosen at start": nothing here knows which one it was */
    if (!strcmp(port, "0")) {
        fprintf(stderr,
                "xrgate: --healthcheck: admin address %s:0 has no fixed port (port 0 is chosen at "
                "start); give XRGATE_ADMIN_LISTEN (or --healthcheck) a fixed port\n",
                host);
        return 1;
    }
    char buf[160];
    bool ok = healthcheck_once(host, port, mode != 1, buf, sizeof buf);
    if (!ok && mode == 0) ok = healthcheck_once(host, port, false, buf, sizeof buf);
    if (!ok) {
        fprintf(stderr, "xrgate: healthcheck %s%s:%s failed%s%s\n",
                mode == 2   ? "https://"
                : mode == 1 ? "http://"
                            : "",
                host, port, buf[0] ? ": " : "", strtok(buf, "\r\n") ? buf : "");
        return 1;
    }
    printf("ok\n");
    return 0;
}

/* Drop root privileges to `user` (after every listening socket is bound). 0 or -1 (printed). */
static int drop_privileges(const char *user)
{
    struct passwd *pw = getpwnam(user);
    if (!pw) {
        xg_log(XG_LOG_ERROR, "gateway", "--user: no such user '%s'", user);
        return -1;
    }
    if (getuid() != 0 && geteuid() != 0) {
        if (geteuid() == pw->pw_uid) return 0;
        xg_log(XG_LOG_ERROR, "gateway", "--user %s: not running as root, cannot switch user", user);
        return -1;
    }
    if (setgroups(0, NULL) || setgid(pw->pw_gid) || setuid(pw->pw_uid)) {
        xg_log(XG_LOG_ERROR, "gateway", "--user %s: cannot drop privileges: %s", user,
               strerror(errno));
        return -1;
    }
    if (setuid(0) == 0) {
        xg_log(XG_LOG_ERROR, "gateway", "--user %s: root could be regained; refusing to run", user);
        return -1;
    }
    xg_log(XG_LOG_INFO, "gateway", "running as user %s (uid %u, gid %u)", user,
           (unsigned)pw->pw_uid, (unsigned)pw->pw_gid);
    return 0;
}

/* The start-up log names the configuration that was loaded: the file (as given, and resolved)
 * and where its name came from, or the embedded default. */
static void log_config_source(const char *config, const char *from)
{
    if (!config) {
        xg_log(XG_LOG_INFO, "gateway",
               "configuration: embedded default config (no --config, no XRGATE_CONFIG, no "
               "conf/xrgate.yaml in the working directory)");
        return;
    }
    char *abs = realpath(config, NULL);
    if (abs && strcmp(abs, config))
        xg_log(XG_LOG_INFO, "gateway", "configuration: file '%s' (%s; %s)", config, from, abs);
    else
        xg_log(XG_LOG_INFO, "gateway", "configuration: file '%s' (%s)", config, from);
    free(abs);
}

/* A configuration without adapters is valid (the admin API runs) but does nothing useful: say
 * so, at the `adapters:` key when there is one (--check: on stderr; the daemon: in its log). */
static void warn_no_adapters(struct xg_gateway *gw, const char *name, bool check)
{
    if (gw->n_adapters) return;
    const struct xg_conf *n = xg_conf_get(gw->root, "adapters");
    char where[600];
    if (n)
        snprintf(where, sizeof where, "%s:%d:%d", n->file ? n->file : name, n->key_line,
                 n->key_column);
    else
        snprintf(where, sizeof where, "%s", name);
    static const char what[] = "no adapters configured: the gateway reads and serves no pose "
                               "data, only its admin API (add entries under 'adapters:')";
    if (check)
        fprintf(stderr, "xrgate: warning: %s: %s\n", where, what);
    else
        xg_log(XG_LOG_WARN, "gateway", "%s: %s", where, what);
}

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: xrgate [--config FILE] [--check] [--strict] [--log-level LEVEL]\n"
        "              [--log-format text|json] [--user NAME] [--sdp ADAPTER]\n"
        "              [--healthcheck [[http://|https://]HOST:PORT]] [--make-cert HOST DIR]\n"
        "              [--mcap-info FILE] [--version] [--help]\n"
        "\n"
        "  -c, --config FILE     configuration (default: $XRGATE_CONFIG, else conf/xrgate.yaml\n"
        "                        if it exists, else the embedded default)\n"
        "      --check           validate the configuration and exit (0 = valid); insecure\n"
        "                        settings are printed as warnings\n"
        "      --strict          insecure settings are errors (exit 1), as gateway.strict\n"
        "  -l, --log-level LVL   error, warn, info, debug, trace ($XRGATE_LOG_LEVEL)\n"
        "      --log-format FMT  text (default) or json: one JSON object per line\n"
        "  -u, --user NAME       drop root privileges to user NAME once every socket is bound\n"
        "                        ($XRGATE_USER)\n"
        "      --sdp ADAPTER     print the SDP session description of an rtp adapter and exit\n"
        "      --mcap-info FILE  print an MCAP recording's channels, message counts, duration\n"
        "                        and time range, and exit\n"
        "      --healthcheck [[http://|https://]HOST:PORT]\n"
        "                        GET /healthz on a running gateway's admin API (default\n"
        "                        $XRGATE_ADMIN_LISTEN, else 127.0.0.1:8080); exit 0 if healthy\n"
        "      --make-cert HOST DIR\n"
        "                        write a self-signed certificate and key for HOST (a name or an\n"
        "                        address) to DIR/HOST.crt and DIR/HOST.key for admin.tls, exit\n"
        "  -V, --version         print the version and the git commit it was built from, exit\n"
        "  -h, --help            print this help and exit\n"
        "\n"
        "environment: XRGATE_CONFIG, XRGATE_LOG_LEVEL, XRGATE_ADMIN_LISTEN, XRGATE_ADMIN_TOKEN,\n"
        "XRGATE_USER;\n"
        "${VAR} and ${VAR:-default} are expanded inside the YAML file.\n"
        "Manual: man 8 xrgate, man 5 xrgate.yaml, docs/ in the source tree.\n");
}

/* adapters/mcap/mcap_info.c; weak: NULL when the mcap adapter folder is not built */
int xg_mcap_info(const char *path, FILE *out, struct xg_error *err) __attribute__((weak));

/* --mcap-info FILE: a summary of a recording (docs/adapters/mcap.md) */
static int mcap_info(const char *path)
{
    if (!xg_mcap_info) {
        fprintf(stderr, "xrgate: --mcap-info: the mcap adapter is not in this build\n");
        return 2;
    }
    struct xg_error err = {0};
    if (xg_mcap_info(path, stdout, &err)) {
        fprintf(stderr, "xrgate: --mcap-info: %s\n", err.msg);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    enum {
        OPT_CHECK = 256,
        OPT_LOG_FORMAT,
        OPT_HEALTHCHECK,
        OPT_SDP,
        OPT_STRICT,
        OPT_MAKE_CERT,
        OPT_MCAP_INFO
    };
    static const struct option longopts[] = {
        {"config", required_argument, NULL, 'c'},
        {"check", no_argument, NULL, OPT_CHECK},
        {"strict", no_argument, NULL, OPT_STRICT},
        {"healthcheck", optional_argument, NULL, OPT_HEALTHCHECK},
        {"sdp", required_argument, NULL, OPT_SDP},
        {"make-cert", required_argument, NULL, OPT_MAKE_CERT},
        {"mcap-info", required_argument, NULL, OPT_MCAP_INFO},
        {"log-level", required_argument, NULL, 'l'},
        {"log-format", required_argument, NULL, OPT_LOG_FORMAT},
        {"user", required_argument, NULL, 'u'},
        {"version", no_argument, NULL, 'V'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *config = getenv("XRGATE_CONFIG");
    const char *config_from = "XRGATE_CONFIG"; /* where `config` came from, for the log */
    const char *log_level = getenv("XRGATE_LOG_LEVEL");
    bool check = false, strict = false;
    const char *sdp = NULL;
    const char *user = getenv("XRGATE_USER");
    /* a peer closing a socket we write to (healthcheck, adapters) must give EPIPE, not kill us */
    signal(SIGPIPE, SIG_IGN);
    int c;
    while ((c = getopt_long(argc, argv, "c:l:u:Vh", longopts, NULL)) != -1) {
        switch (c) {
        case 'c':
            config = optarg;
            config_from = "--config";
            break;
        case 'l':
            log_level = optarg;
            break;
        case OPT_CHECK:
            check = true;
            break;
        case OPT_STRICT:
            strict = true;
            break;
        case OPT_SDP:
            sdp = optarg;
            break;
        case OPT_MCAP_INFO:
            return mcap_info(optarg);
        case OPT_HEALTHCHECK: {
            const char *a = optarg ? optarg : getenv("XRGATE_ADMIN_LISTEN");
            if (!optarg && optind < argc && argv[optind][0] != '-') a = argv[optind++];
            return healthcheck(a);
        }
        case OPT_MAKE_CERT: {
            if (optind >= argc) {
                fprintf(stderr, "xrgate: --make-cert HOST DIR: the directory is missing\n");
                return 2;
            }
            char crt[4200], key[4200];
            struct xg_error e = {0};
            if (xg_make_cert(optarg, argv[optind], crt, key, sizeof crt, &e)) {
                fprintf(stderr, "xrgate: --make-cert: %s\n", e.msg);
                return 1;
            }
            printf("wrote %s and %s (self-signed for %s); in the configuration:\n"
                   "gateway:\n  admin:\n    tls: {cert: %s, key: %s}\n",
                   crt, key, optarg, crt, key);
            return 0;
        }
        case OPT_LOG_FORMAT:
            if (!strcmp(optarg, "json"))
                xg_log_set_json(true);
            else if (strcmp(optarg, "text")) {
                fprintf(stderr, "xrgate: --log-format must be text or json, not '%s'\n", optarg);
                return 2;
            }
            break;
        case 'u':
            user = optarg;
            break;
        case 'V':
            /* the first line as before (scripts, the man pages' footer); the commit on its own */
            printf("xrgate %s\ncommit %s\n", XRGATE_VERSION, xg_build_commit);
            return 0;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "xrgate: unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        return 2;
    }
    if (config && !*config) config = NULL;
    if (!config && access("conf/xrgate.yaml", R_OK) == 0) {
        config = "conf/xrgate.yaml";
        config_from = "found in the working directory";
    }
    if (log_level && !*log_level) log_level = NULL;

    struct xg_gateway_opts opts = {
        .config_path = config,
        .config_text = (const char *)xg_embedded_default_conf,
        .config_name = "<embedded conf/xrgate.yaml>",
        .admin_listen = getenv("XRGATE_ADMIN_LISTEN"),
        .admin_token = getenv("XRGATE_ADMIN_TOKEN"),
        .log_level = log_level,
        .strict = strict,
    };
    if (opts.admin_listen && !*opts.admin_listen) opts.admin_listen = NULL;
    if (opts.admin_token && !*opts.admin_token) opts.admin_token = NULL;

    if (user && *user && !getpwnam(user)) {
        fprintf(stderr, "xrgate: --user: no such user '%s'\n", user);
        return 1;
    }
    struct xg_gateway gw;
    struct xg_error err = {0};
    int rc = xg_gateway_load(&gw, &opts, &err);
    /* insecure settings: warnings for --check (the daemon logs them at start), errors when strict
     * refused them (then err says so) */
    if (check || rc)
        for (int i = 0; i < gw.n_warnings; i++)
            fprintf(stderr, "xrgate: %s: insecure configuration: %s\n", rc ? "error" : "warning",
                    gw.warnings[i]);
    if (rc) {
        /* every error of the file, the first one first (scripts read the first line) */
        if (gw.n_errors == 0)
            fprintf(stderr, "xrgate: %s\n", err.msg[0] ? err.msg : "invalid configuration");
        for (int i = 0; i < gw.n_errors; i++)
            fprintf(stderr, "xrgate: %s\n", gw.errors[i]);
        if (gw.n_errors > 1)
            fprintf(stderr, "xrgate: %d errors in %s\n", gw.n_errors,
                    config ? config : opts.config_name);
        xg_gateway_free(&gw);
        return 1;
    }
    if (sdp) {
        const struct xg_adapter *a = NULL;
        for (int i = 0; i < gw.n_adapters; i++)
            if (!strcmp(gw.adapters[i]->a.name, sdp)) a = &gw.adapters[i]->a;
        char buf[4096];
        int n = !a ? -ENOENT : a->ops->sdp ? a->ops->sdp(a, buf, sizeof buf) : -ENOTSUP;
        if (n == -ENOENT)
            fprintf(stderr, "xrgate: --sdp: no adapter named '%s'\n", sdp);
        else if (n == -ENOTSUP)
            fprintf(stderr, "xrgate: --sdp %s: this adapter has no session description\n", sdp);
        else if (n < 0)
            fprintf(stderr, "xrgate: --sdp %s: %s\n", sdp, strerror(-n));
        else
            fputs(buf, stdout);
        xg_gateway_free(&gw);
        return n < 0;
    }
    warn_no_adapters(&gw, config ? config : opts.config_name, check);
    if (check) {
        printf("%s: configuration OK (%d adapter%s", config ? config : opts.config_name,
               gw.n_adapters, gw.n_adapters == 1 ? "" : "s");
        if (gw.n_warnings)
            printf(", %d insecure setting%s: see the warnings", gw.n_warnings,
                   gw.n_warnings == 1 ? "" : "s");
        printf(")\n");
        xg_gateway_free(&gw);
        return 0;
    }
    log_config_source(config, config_from);
    rc = xg_gateway_start(&gw, &err);
    if (rc) {
        xg_log(XG_LOG_ERROR, "gateway", "%s", err.msg[0] ? err.msg : "start failed");
        xg_gateway_free(&gw);
        return 1;
    }
    if (user && *user && drop_privileges(user)) {
        xg_gateway_free(&gw);
        return 1;
    }
    xg_gateway_run(&gw);
    xg_gateway_free(&gw);
    xg_log(XG_LOG_INFO, "gateway", "stopped");
    return 0;
}
