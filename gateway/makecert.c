/* `xrgate --make-cert HOST DIR`: a self-signed certificate and key for admin.tls (gateway.h).
 *
 * An ECDSA P-256 key and an X.509 v3 certificate signed by it (SHA-256), written with mbedtls'
 * key and x509 writers: subject CN=HOST, subjectAltName HOST (an iPAddress when HOST is an IPv4
 * or IPv6 address, else a dNSName: browsers match the name against it, not the CN), basic
 * constraints CA:FALSE, valid from now for 825 days, a random 128-bit serial. Files
 * DIR/HOST.crt (0644) and DIR/HOST.key (0600); an existing file is not overwritten. */
#include "gateway/gateway.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <mbedtls/asn1write.h>
#include <mbedtls/ctr_drbg.h>
#include <mbedtls/ecp.h>
#include <mbedtls/entropy.h>
#include <mbedtls/error.h>
#include <mbedtls/oid.h>
#include <mbedtls/pk.h>
#include <mbedtls/x509_crt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The subjectAltName extension's value for `host` into the end of buf; its start in *start. */
static int san_value(const char *host, unsigned char *buf, size_t size, unsigned char **start)
{
    unsigned char *p = buf + size;
    unsigned char ip[16];
    int len = 0, rc;
    if (inet_pton(AF_INET, host, ip) == 1 || inet_pton(AF_INET6, host, ip) == 1) {
        size_t n = strchr(host, ':') ? 16 : 4;
        if ((rc = mbedtls_asn1_write_raw_buffer(&p, buf, ip, n)) < 0) return rc;
        len += rc;
        if ((rc = mbedtls_asn1_write_len(&p, buf, n)) < 0) return rc;
        len += rc;
        if ((rc = mbedtls_asn1_write_tag(&p, buf, MBEDTLS_ASN1_CONTEXT_SPECIFIC | 7)) < 0)
            return rc;
        len += rc;
    } else {
        size_t n = strlen(host);
        if ((rc = mbedtls_asn1_write_raw_buffer(&p, buf, (const unsigned char *)host, n)) < 0)
            return rc;
        len += rc;
        if ((rc = mbedtls_asn1_write_len(&p, buf, n)) < 0) return rc;
        len += rc;
        if ((rc = mbedtls_asn1_write_tag(&p, buf, MBEDTLS_ASN1_CONTEXT_SPECIFIC | 2)) < 0)
            return rc;
        len += rc;
    }
    if ((rc = mbedtls_asn1_write_len(&p, buf, (size_t)len)) < 0) return rc;
    len += rc;
    if ((rc = mbedtls_asn1_write_tag(&p, buf, MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SEQUENCE)) <
        0)
        return rc;
    len += rc;
    *start = p;
    return len;
}

static int write_file(const char *path, const unsigned char *data, mode_t mode,
                      struct xg_error *err)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd < 0) return xg_error_set(err, -errno, "cannot create %s: %s", path, strerror(errno));
    size_t n = strlen((const char *)data);
    ssize_t w = write(fd, data, n);
    int e = errno;
    if (close(fd) || w != (ssize_t)n)
        return xg_error_set(err, -EIO, "cannot write %s: %s", path, strerror(e));
    return 0;
}

/* mkdir -p dir (0755 for what it creates). */
static int make_dirs(const char *dir, struct xg_error *err)
{
    char path[4096];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path)
        return xg_error_set(err, -ENAMETOOLONG, "directory name too long");
    for (char *p = path + 1;; p++) {
        if (*p == '/' || !*p) {
            char c = *p;
            *p = '\0';
            if (mkdir(path, 0755) && errno != EEXIST)
                return xg_error_set(err, -errno, "cannot create directory %s: %s", path,
                                    strerror(errno));
            if (!c) break;
            *p = c;
        }
    }
    return 0;
}

static int mbed_err(struct xg_error *err, const char *what, int rc)
{
    char m[128];
    mbedtls_strerror(rc, m, sizeof m);
    return xg_error_set(err, -EINVAL, "%s: %s", what, m);
}

int xg_make_cert(const char *host, const char *dir, char *crt_path, char *key_path, size_t size,
                 struct xg_error *err)
{
    if (!*host || strlen(host) > 253 || strpbrk(host, "/ \t\r\n,=+\"\\<>;#"))
        return xg_error_set(err, -EINVAL, "host name '%s' is not a DNS name or an IP address",
                            host);
    int rc = make_dirs(dir, err);
    if (rc) return rc;
    snprintf(crt_path, size, "%s/%s.crt", dir, host);
    snprintf(key_path, size, "%s/%s.key", dir, host);
    mbedtls_entropy_context entropy;
    mbedtls_ctr_drbg_context drbg;
    mbedtls_pk_context key;
    mbedtls_x509write_cert crt;
    mbedtls_mpi serial;
    mbedtls_entropy_init(&entropy);
    mbedtls_ctr_drbg_init(&drbg);
    mbedtls_pk_init(&key);
    mbedtls_x509write_crt_init(&crt);
    mbedtls_mpi_init(&serial);
    static unsigned char pem_crt[4096], pem_key[2048];
    unsigned char san[600], *san_start = NULL, rnd[16];
    char subject[300], from[16], to[16];
    int r;
    if ((r = mbedtls_ctr_drbg_seed(&drbg, mbedtls_entropy_func, &entropy,
                                   (const unsigned char *)"xrgate-make-cert", 16))) {
        rc = mbed_err(err, "random generator", r);
        goto out;
    }
    if ((r = mbedtls_pk_setup(&key, mbedtls_pk_info_from_type(MBEDTLS_PK_ECKEY))) ||
        (r = mbedtls_ecp_gen_key(MBEDTLS_ECP_DP_SECP256R1, mbedtls_pk_ec(key),
                                 mbedtls_ctr_drbg_random, &drbg))) {
        rc = mbed_err(err, "key generation", r);
        goto out;
    }
    time_t now = time(NULL) - 3600; /* an hour back: clocks of headsets differ a little */
    time_t end = now + (time_t)825 * 86400;
    struct tm a, b;
    gmtime_r(&now, &a);
    gmtime_r(&end, &b);
    strftime(from, sizeof from, "%Y%m%d%H%M%S", &a);
    strftime(to, sizeof to, "%Y%m%d%H%M%S", &b);
    snprintf(subject, sizeof subject, "CN=%s,O=xrgate", host);
    int san_len = san_value(host, san, sizeof san, &san_start);
    mbedtls_ctr_drbg_random(&drbg, rnd, sizeof rnd);
    rnd[0] &= 0x7f; /* positive */
    mbedtls_x509write_crt_set_version(&crt, MBEDTLS_X509_CRT_VERSION_3);
    mbedtls_x509write_crt_set_md_alg(&crt, MBEDTLS_MD_SHA256);
    mbedtls_x509write_crt_set_subject_key(&crt, &key);
    mbedtls_x509write_crt_set_issuer_key(&crt, &key);
    if (san_len < 0 || (r = mbedtls_mpi_read_binary(&serial, rnd, sizeof rnd)) ||
        (r = mbedtls_x509write_crt_set_serial(&crt, &serial)) ||
        (r = mbedtls_x509write_crt_set_subject_name(&crt, subject)) ||
        (r = mbedtls_x509write_crt_set_issuer_name(&crt, subject)) ||
        (r = mbedtls_x509write_crt_set_validity(&crt, from, to)) ||
        (r = mbedtls_x509write_crt_set_basic_constraints(&crt, 0, -1)) ||
        (r = mbedtls_x509write_crt_set_subject_key_identifier(&crt)) ||
        (r = mbedtls_x509write_crt_set_extension(&crt, MBEDTLS_OID_SUBJECT_ALT_NAME,
                                                 MBEDTLS_OID_SIZE(MBEDTLS_OID_SUBJECT_ALT_NAME), 0,
                                                 san_start, (size_t)san_len)) ||
        (r = mbedtls_x509write_crt_pem(&crt, pem_crt, sizeof pem_crt, mbedtls_ctr_drbg_random,
                                       &drbg)) ||
        (r = mbedtls_pk_write_key_pem(&key, pem_key, sizeof pem_key))) {
        rc = mbed_err(err, "certificate", san_len < 0 ? san_len : r);
        goto out;
    }
    if ((rc = write_file(key_path, pem_key, 0600, err))) goto out;
    if ((rc = write_file(crt_path, pem_crt, 0644, err))) {
        unlink(key_path);
        goto out;
    }
out:
    mbedtls_platform_zeroize(pem_key, sizeof pem_key);
    mbedtls_mpi_free(&serial);
    mbedtls_x509write_crt_free(&crt);
    mbedtls_pk_free(&key);
    mbedtls_ctr_drbg_free(&drbg);
    mbedtls_entropy_free(&entropy);
    return rc;
}
