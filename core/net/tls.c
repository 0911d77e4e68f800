/* TLS over bufferevents with mbedtls 2.28: a filtering bufferevent whose filters drive an
 * mbedtls_ssl_context through a BIO over the underlying socket bufferevent (see tls.h). */
#include "core/net/tls.h"
#include "core/conf/path.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>
#include <mbedtls/error.h>
#include <mbedtls/net_sockets.h>
#include <mbedtls/pk.h>
#include <mbedtls/ssl.h>
#include <mbedtls/x509_crt.h>

struct xg_tls_ctx {
    bool server, verify;
    mbedtls_ssl_config conf;
    mbedtls_entropy_context entropy;
    mbedtls_ctr_drbg_context drbg;
    mbedtls_x509_crt cert, ca;
    mbedtls_pk_context key;
    bool has_cert, has_ca;
    int refs; /* the owner's + one per live session (libevent frees sessions lazily) */
};

struct xg_tls_session {
    struct xg_tls_ctx *ctx;
    mbedtls_ssl_context ssl;
    struct bufferevent *under;  /* ciphertext side (owned by the filter, freed with it) */
    struct bufferevent *filter; /* plaintext side (what the user holds) */
    bool established, failed;
    char peer[96];
    char error[400];
};

static void tls_strerror(int rc, char *buf, size_t size)
{
    mbedtls_strerror(rc, buf, size);
    if (!buf[0]) snprintf(buf, size, "mbedtls error -0x%04x", (unsigned)-rc);
}

static int load_error(struct xg_error *err, const char *what, const char *path, int rc)
{
    char e[200];
    tls_strerror(rc, e, sizeof e);
    return xg_error_set(err,
                        rc == MBEDTLS_ERR_PK_FILE_IO_ERROR || rc == MBEDTLS_ERR_X509_FILE_IO_ERROR
                            ? -ENOENT
                            : -EINVAL,
                        "TLS %s '%s': %s", what, path, e);
}

struct xg_tls_ctx *xg_tls_ctx_new(const struct xg_tls_conf *c, struct xg_error *err)
{
    struct xg_tls_ctx *t = calloc(1, sizeof *t);
    if (t) t->refs = 1;
    if (!t) {
        xg_error_set(err, -ENOMEM, "TLS: out of memory");
        return NULL;
    }
    t->server = c->server;
    t->verify = c->verify;
    mbedtls_ssl_config_init(&t->conf);
    mbedtls_entropy_init(&t->entropy);
    mbedtls_ctr_drbg_init(&t->drbg);
    mbedtls_x509_crt_init(&t->cert);
    mbedtls_x509_crt_init(&t->ca);
    mbedtls_pk_init(&t->key);
    int rc;
    static const char pers[] = "xrgate-tls";
    if ((rc = mbedtls_ctr_drbg_seed(&t->drbg, mbedtls_entropy_func, &t->entropy,
                                    (const unsigned char *)pers, sizeof pers - 1))) {
        load_error(err, "random generator", "-", rc);
        goto fail;
    }
    if (c->server && (!c->cert || !c->key)) {
        xg_error_set(err, -EINVAL, "TLS server needs a certificate and a key");
        goto fail;
    }
    if (!c->server && c->verify && !c->ca) {
        xg_error_set(err, -EINVAL, "TLS client with verification needs a CA file");
        goto fail;
    }
    if ((c->cert == NULL) != (c->key == NULL)) {
        xg_error_set(err, -EINVAL, "TLS: 'cert' and 'key' go together");
        goto fail;
    }
    /* regular files only: mbedtls would block on a FIFO (core/conf/path.h) */
    const char *files[][2] = {{"certificate", c->cert}, {"key", c->key}, {"CA", c->ca}};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        const char *kind = NULL;
        if (files[i][1] && (rc = xg_file_check_regular(files[i][1], &kind))) {
            xg_error_set(err, rc, "TLS %s '%s': %s", files[i][0], files[i][1],
                         xg_file_strerror(rc, kind));
            goto fail;
        }
    }
    if (c->cert) {
        if ((rc = mbedtls_x509_crt_parse_file(&t->cert, c->cert))) {
            load_error(err, "certificate", c->cert, rc);
            goto fail;
        }
        if ((rc = mbedtls_pk_parse_keyfile(&t->key, c->key, NULL))) {
            load_error(err, "key", c->key, rc);
            goto fail;
        }
        if ((rc = mbedtls_pk_check_pair(&t->cert.pk, &t->key))) {
            char e[200];
            tls_strerror(rc, e, sizeof e);
            xg_error_set(err, -EINVAL, "TLS key '%s' does not match certificate '%s': %s", c->key,
                         c->cert, e);
            goto fail;
        }
        t->has_cert = true;
    }
    if (c->ca) {
        if ((rc = mbedtls_x509_crt_parse_file(&t->ca, c->ca))) {
            load_error(err, "CA", c->ca, rc);
            goto fail;
        }
        t->has_ca = true;
    }
    if ((rc = mbedtls_ssl_config_defaults(
             &t->conf, c->server ? MBEDTLS_SSL_IS_SERVER : MBEDTLS_SSL_IS_CLIENT,
             MBEDTLS_SSL_TRANSPORT_STREAM, MBEDTLS_SSL_PRESET_DEFAULT))) {
        load_error(err, "configuration", "-", rc);
        goto fail;
    }
    mbedtls_ssl_conf_min_version(&t->conf, MBEDTLS_SSL_MAJOR_VERSION_3,
                                 MBEDTLS_SSL_MINOR_VERSION_3); /* TLS 1.2+ */
    mbedtls_ssl_conf_rng(&t->conf, mbedtls_ctr_drbg_random, &t->drbg);
    if (!c->verify)
        mbedtls_ssl_conf_authmode(&t->conf, MBEDTLS_SSL_VERIFY_NONE);
    else if (c->server)
        mbedtls_ssl_conf_authmode(&t->conf, t->has_ca ? MBEDTLS_SSL_VERIFY_REQUIRED
                                                      : MBEDTLS_SSL_VERIFY_NONE);
    else
        mbedtls_ssl_conf_authmode(&t->conf, MBEDTLS_SSL_VERIFY_REQUIRED);
    if (t->has_ca) mbedtls_ssl_conf_ca_chain(&t->conf, &t->ca, NULL);
    if (t->has_cert && (rc = mbedtls_ssl_conf_own_cert(&t->conf, &t->cert, &t->key))) {
        load_error(err, "certificate", c->cert, rc);
        goto fail;
    }
    return t;
fail:
    xg_tls_ctx_free(t);
    return NULL;
}

static void ctx_unref(struct xg_tls_ctx *t)
{
    if (--t->refs > 0) return;
    mbedtls_ssl_config_free(&t->conf);
    mbedtls_ctr_drbg_free(&t->drbg);
    mbedtls_entropy_free(&t->entropy);
    mbedtls_x509_crt_free(&t->cert);
    mbedtls_x509_crt_free(&t->ca);
    mbedtls_pk_free(&t->key);
    free(t);
}

void xg_tls_ctx_free(struct xg_tls_ctx *t)
{
    if (t) ctx_unref(t); /* sessions still being freed keep it alive until they are gone */
}

/* ---- BIO over the underlying bufferevent ---- */

/* Ciphertext goes straight to the socket when nothing is queued before it, so that a record
 * is on the wire even if the user frees the bufferevent right after its write callback
 * (libevent's filter reports "written" once the bytes reach the socket bufferevent, and evhttp
 * closes "Connection: close" replies then); the rest is queued in order. */
static int bio_send(void *user, const unsigned char *buf, size_t len)
{
    struct xg_tls_session *s = user;
    struct evbuffer *out = bufferevent_get_output(s->under);
    size_t done = 0;
    evutil_socket_t fd = bufferevent_getfd(s->under);
    if (fd >= 0 && !evbuffer_get_length(out)) {
        ssize_t n = send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) done = (size_t)n;
    }
    if (done < len && evbuffer_add(out, buf + done, len - done)) return -1;
    return (int)len;
}

static int bio_recv(void *user, unsigned char *buf, size_t len)
{
    struct xg_tls_session *s = user;
    int n = evbuffer_remove(bufferevent_get_input(s->under), buf, len);
    if (n <= 0) return MBEDTLS_ERR_SSL_WANT_READ;
    return n;
}

/* Record the failure and tell the user through its event callback (libevent 2.1 does not turn
 * a filter's BEV_ERROR into an event by itself). */
static void set_error(struct xg_tls_session *s, const char *what, int rc)
{
    char e[200];
    tls_strerror(rc, e, sizeof e);
    if (!s->failed && s->filter)
        bufferevent_trigger_event(s->filter, BEV_EVENT_ERROR | BEV_EVENT_READING,
                                  BEV_TRIG_DEFER_CALLBACKS);
    s->failed = true;
    int n = snprintf(s->error, sizeof s->error, "TLS with %s: %s: %s", s->peer, what, e);
    uint32_t flags = mbedtls_ssl_get_verify_result(&s->ssl);
    if (rc == MBEDTLS_ERR_X509_CERT_VERIFY_FAILED && flags && flags != (uint32_t)-1 && n > 0 &&
        (size_t)n < sizeof s->error) {
        char v[256];
        mbedtls_x509_crt_verify_info(v, sizeof v, "", flags);
        size_t l = strlen(v);
        while (l && (v[l - 1] == '\n'))
            v[--l] = '\0';
        for (char *q = v; *q; q++)
            if (*q == '\n') *q = ';';
        snprintf(s->error + n, sizeof s->error - (size_t)n, " (%s)", v);
    }
}

/* Write the plaintext waiting in `src` (after the handshake). */
static int pump_output(struct xg_tls_session *s, struct evbuffer *src)
{
    while (evbuffer_get_length(src)) {
        size_t n = evbuffer_get_length(src);
        if (n > 16384) n = 16384;
        unsigned char *p = evbuffer_pullup(src, (ev_ssize_t)n);
        int rc = mbedtls_ssl_write(&s->ssl, p, n);
        if (rc == MBEDTLS_ERR_SSL_WANT_WRITE || rc == MBEDTLS_ERR_SSL_WANT_READ) return 0;
        if (rc < 0) {
            set_error(s, "write failed", rc);
            return -1;
        }
        evbuffer_drain(src, (size_t)rc);
    }
    return 0;
}

static int do_handshake(struct xg_tls_session *s)
{
    if (s->established) return 1;
    int rc = mbedtls_ssl_handshake(&s->ssl);
    if (rc == MBEDTLS_ERR_SSL_WANT_READ || rc == MBEDTLS_ERR_SSL_WANT_WRITE) return 0;
    if (rc) {
        set_error(s, "handshake failed", rc);
        return -1;
    }
    s->established = true;
    /* plaintext written before the handshake completed */
    if (pump_output(s, bufferevent_get_output(s->filter))) return -1;
    return 1;
}

static enum bufferevent_filter_result in_filter(struct evbuffer *src, struct evbuffer *dst,
                                                ev_ssize_t lim, enum bufferevent_flush_mode mode,
                                                void *ctx)
{
    struct xg_tls_session *s = ctx;
    (void)src; /* the BIO reads the underlying input directly: it is `src` */
    if (s->failed) return BEV_ERROR;
    int h = do_handshake(s);
    if (h < 0) return BEV_ERROR;
    if (h == 0) return BEV_NEED_MORE;
    bool any = false;
    for (;;) {
        unsigned char buf[16384];
        int rc = mbedtls_ssl_read(&s->ssl, buf, sizeof buf);
        if (rc > 0) {
            evbuffer_add(dst, buf, (size_t)rc);
            any = true;
            continue;
        }
        if (rc == MBEDTLS_ERR_SSL_WANT_READ || rc == MBEDTLS_ERR_SSL_WANT_WRITE) break;
        if (rc == 0 || rc == MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY) break; /* EOF follows */
        set_error(s, "read failed", rc);
        return BEV_ERROR;
    }
    return any ? BEV_OK : BEV_NEED_MORE;
}

static enum bufferevent_filter_result out_filter(struct evbuffer *src, struct evbuffer *dst,
                                                 ev_ssize_t lim, enum bufferevent_flush_mode mode,
                                                 void *ctx)
{
    struct xg_tls_session *s = ctx;
    (void)dst; /* the BIO writes the underlying output directly: it is `dst` */
    if (s->failed) return BEV_ERROR;
    if (!s->established) return BEV_NEED_MORE; /* held until the handshake completes */
    if (pump_output(s, src)) return BEV_ERROR;
    return BEV_OK;
}

static void free_session(void *ctx)
{
    struct xg_tls_session *s = ctx;
    mbedtls_ssl_free(&s->ssl);
    ctx_unref(s->ctx);
    free(s);
}

struct bufferevent *xg_tls_wrap(struct xg_tls_ctx *ctx, struct bufferevent *under,
                                const char *server_name, const char *peer,
                                struct xg_tls_session **sess)
{
    struct xg_tls_session *s = calloc(1, sizeof *s);
    if (!s) {
        bufferevent_free(under);
        return NULL;
    }
    s->ctx = ctx;
    s->under = under;
    snprintf(s->peer, sizeof s->peer, "%s", peer ? peer : "?");
    mbedtls_ssl_init(&s->ssl);
    if (mbedtls_ssl_setup(&s->ssl, &ctx->conf) ||
        (!ctx->server && server_name && mbedtls_ssl_set_hostname(&s->ssl, server_name))) {
        mbedtls_ssl_free(&s->ssl);
        free(s);
        bufferevent_free(under);
        return NULL;
    }
    mbedtls_ssl_set_bio(&s->ssl, s, bio_send, bio_recv, NULL);
    /* BEV_OPT_CLOSE_ON_FREE: libevent frees `under` (and closes the socket) after
     * free_session(); without it nothing frees `under` (a socket leaked per session). Records
     * are written straight to the socket when nothing is queued (bio_send), so a reply written
     * just before the free is normally on the wire already. */
    struct bufferevent *f = bufferevent_filter_new(under, in_filter, out_filter,
                                                   BEV_OPT_CLOSE_ON_FREE, free_session, s);
    if (!f) {
        mbedtls_ssl_free(&s->ssl);
        free(s);
        bufferevent_free(under);
        return NULL;
    }
    s->filter = f;
    ctx->refs++; /* released by free_session() */
    if (sess) *sess = s;
    if (!ctx->server) do_handshake(s); /* ClientHello into the underlying output */
    return f;
}

const char *xg_tls_error(const struct xg_tls_session *s)
{
    return s ? s->error : "";
}

bool xg_tls_established(const struct xg_tls_session *s)
{
    return s && s->established;
}

void xg_tls_close_notify(struct xg_tls_session *s)
{
    if (!s || !s->established || s->failed) return;
    (void)mbedtls_ssl_close_notify(&s->ssl); /* bio_send queues it: never WANT_WRITE */
}
