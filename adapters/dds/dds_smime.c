/* dds adapter, DDS Security: the signature of an S/MIME signed document (governance.p7s,
 * permissions.p7s as `openssl smime -sign` and `ros2 security` write them: multipart/signed, a
 * detached PKCS#7 SignedData, RFC 5751 and RFC 5652) checked with mbedtls's ASN.1, message digest
 * and public key functions (mbedtls 2.28 has no PKCS#7 module). Used by `--check`; Cyclone DDS's
 * access control plugin verifies the same documents again when the participant is created. */
#include "adapters/dds/dds_smime.h"

#include <mbedtls/asn1.h>
#include <mbedtls/base64.h>
#include <mbedtls/md.h>
#include <mbedtls/oid.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define OID_SIGNED_DATA "\x2a\x86\x48\x86\xf7\x0d\x01\x07\x02"    /* 1.2.840.113549.1.7.2 */
#define OID_MESSAGE_DIGEST "\x2a\x86\x48\x86\xf7\x0d\x01\x09\x04" /* 1.2.840.113549.1.9.4 */

struct span {
    const char *p;
    size_t n;
};

/* The delimiter line "--<boundary>" that starts at a line start at or after `from`, or NULL. */
static const char *find_delim(const char *doc, const char *from, const char *delim)
{
    for (const char *p = from; (p = strstr(p, delim)); p++)
        if (p == doc || p[-1] == '\n') return p;
    return NULL;
}

/* After the end of the line that holds p ("" at the end of the text). */
static const char *next_line(const char *p)
{
    const char *nl = strchr(p, '\n');
    return nl ? nl + 1 : p + strlen(p);
}

/* Split doc into the signed part (its MIME headers included, the line break before the next
 * delimiter excluded) and the base64 body of the signature part. */
static int split_mime(const char *doc, struct span *content, struct span *sig, const char **why)
{
    const char *b = strstr(doc, "boundary=");
    const char *hdr_end = strstr(doc, "\n\n");
    if (!b || (hdr_end && b > hdr_end)) return *why = "no multipart boundary", -1;
    b += strlen("boundary=");
    bool quoted = *b == '"';
    if (quoted) b++;
    size_t blen = quoted ? strcspn(b, "\"\r\n") : strcspn(b, "; \t\r\n");
    if (!blen || blen > 200) return *why = "a malformed multipart boundary", -1;
    char delim[204] = "--";
    memcpy(delim + 2, b, blen);
    delim[blen + 2] = '\0';
    const char *d1 = find_delim(doc, b + blen, delim);
    if (!d1) return *why = "no signed part", -1;
    content->p = next_line(d1);
    const char *d2 = find_delim(doc, content->p, delim);
    if (!d2) return *why = "no signature part", -1;
    const char *end = d2;
    if (end > content->p && end[-1] == '\n') end--;
    if (end > content->p && end[-1] == '\r') end--;
    content->n = (size_t)(end - content->p);
    /* the signature part: its headers, a blank line, base64 up to the closing delimiter */
    const char *h = next_line(d2), *body = strstr(h, "\n\n"), *body_crlf = strstr(h, "\r\n\r\n");
    if (body_crlf && (!body || body_crlf < body)) body = body_crlf + 2;
    if (!body) return *why = "a signature part without a body", -1;
    body += 2;
    const char *d3 = find_delim(doc, body, delim);
    sig->p = body;
    sig->n = d3 ? (size_t)(d3 - body) : strlen(body);
    return 0;
}

/* The signed part as it was signed: line breaks as CRLF (RFC 5751 section 3.1.1). */
static unsigned char *canonical(struct span c, size_t *out_n)
{
    unsigned char *o = malloc(2 * c.n + 1);
    if (!o) return NULL;
    size_t n = 0;
    for (size_t i = 0; i < c.n; i++) {
        if (c.p[i] == '\n' && (i == 0 || c.p[i - 1] != '\r')) o[n++] = '\r';
        o[n++] = (unsigned char)c.p[i];
    }
    *out_n = n;
    return o;
}

/* The DER of the signature part (base64 characters only, then decoded); NULL on error. */
static unsigned char *decode_b64(struct span s, size_t *out_n)
{
    unsigned char *clean = malloc(s.n + 1), *der = malloc(s.n + 1);
    size_t k = 0;
    if (!clean || !der) goto fail;
    for (size_t i = 0; i < s.n; i++) {
        char c = s.p[i];
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
            c == '+' || c == '/' || c == '=')
            clean[k++] = (unsigned char)c;
    }
    if (mbedtls_base64_decode(der, s.n + 1, out_n, clean, k) || !*out_n) goto fail;
    free(clean);
    return der;
fail:
    free(clean);
    free(der);
    return NULL;
}

/* The parts of a SignedData's first SignerInfo that a verification needs. */
struct signer {
    mbedtls_md_type_t md;
    const unsigned char *attrs; /* signedAttrs TLV ([0] IMPLICIT SET), or NULL */
    size_t attrs_len;
    const unsigned char *digest; /* messageDigest attribute value */
    size_t digest_len;
    const unsigned char *sig;
    size_t sig_len;
    const unsigned char *certs; /* contents of [0] certificates, or NULL */
    size_t certs_len;
};

/* Skip one TLV of any tag. */
static int skip_any(unsigned char **p, const unsigned char *end)
{
    size_t len;
    if (end - *p < 1) return -1;
    (*p)++;
    if (mbedtls_asn1_get_len(p, end, &len)) return -1;
    *p += len;
    return 0;
}

static int parse_attrs(struct signer *s)
{
    unsigned char *p = (unsigned char *)s->attrs, *end = p + s->attrs_len;
    size_t len;
    if (mbedtls_asn1_get_tag(&p, end, &len,
                             MBEDTLS_ASN1_CONTEXT_SPECIFIC | MBEDTLS_ASN1_CONSTRUCTED | 0))
        return -1;
    while (p < end) {
        unsigned char *a_end;
        if (mbedtls_asn1_get_tag(&p, end, &len, MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SEQUENCE))
            return -1;
        a_end = p + len;
        mbedtls_asn1_buf oid;
        if (mbedtls_asn1_get_tag(&p, a_end, &oid.len, MBEDTLS_ASN1_OID)) return -1;
        oid.p = p;
        p += oid.len;
        if (oid.len == sizeof OID_MESSAGE_DIGEST - 1 &&
            !memcmp(oid.p, OID_MESSAGE_DIGEST, oid.len)) {
            if (mbedtls_asn1_get_tag(&p, a_end, &len,
                                     MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SET) ||
                mbedtls_asn1_get_tag(&p, a_end, &s->digest_len, MBEDTLS_ASN1_OCTET_STRING))
                return -1;
            s->digest = p;
        }
        p = a_end;
    }
    return s->digest ? 0 : -1;
}

/* ContentInfo { signedData, [0] SignedData { version, digestAlgorithms, encapContentInfo,
 * [0] certificates OPTIONAL, [1] crls OPTIONAL, signerInfos { SignerInfo, ... } } }. */
static int parse_signed_data(unsigned char *p, const unsigned char *end, struct signer *s)
{
    size_t len;
    int ver;
    mbedtls_asn1_buf alg, params;
    const int seq = MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SEQUENCE;
    const int set = MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SET;
    const int ctx0 = MBEDTLS_ASN1_CONTEXT_SPECIFIC | MBEDTLS_ASN1_CONSTRUCTED | 0;
    if (mbedtls_asn1_get_tag(&p, end, &len, seq) ||
        mbedtls_asn1_get_tag(&p, end, &len, MBEDTLS_ASN1_OID) ||
        len != sizeof OID_SIGNED_DATA - 1 || memcmp(p, OID_SIGNED_DATA, len))
        return -1;
    p += len;
    if (mbedtls_asn1_get_tag(&p, end, &len, ctx0) || mbedtls_asn1_get_tag(&p, end, &len, seq) ||
        mbedtls_asn1_get_int(&p, end, &ver) || skip_any(&p, end) || skip_any(&p, end))
        return -1;
    if (p < end && *p == ctx0) {
        if (mbedtls_asn1_get_tag(&p, end, &s->certs_len, ctx0)) return -1;
        s->certs = p;
        p += s->certs_len;
    }
    if (p < end && *p == (ctx0 | 1) && skip_any(&p, end)) return -1;
    if (mbedtls_asn1_get_tag(&p, end, &len, set) || mbedtls_asn1_get_tag(&p, end, &len, seq))
        return -1;
    const unsigned char *si_end = p + len;
    if (mbedtls_asn1_get_int(&p, si_end, &ver) || skip_any(&p, si_end) ||
        mbedtls_asn1_get_alg(&p, si_end, &alg, &params) || mbedtls_oid_get_md_alg(&alg, &s->md))
        return -1;
    if (p < si_end && *p == ctx0) {
        s->attrs = p;
        unsigned char *q = p + 1;
        if (mbedtls_asn1_get_len(&q, si_end, &len)) return -1;
        s->attrs_len = (size_t)(q - p) + len;
        p = q + len;
        if (parse_attrs(s)) return -1;
    }
    if (mbedtls_asn1_get_alg(&p, si_end, &alg, &params) ||
        mbedtls_asn1_get_tag(&p, si_end, &s->sig_len, MBEDTLS_ASN1_OCTET_STRING))
        return -1;
    s->sig = p;
    return 0;
}

/* Does the signature verify with `pk` over `hash` (of the signed attributes or content)? */
static bool sig_ok(mbedtls_pk_context *pk, const struct signer *s, const unsigned char *hash,
                   size_t hash_len)
{
    return !mbedtls_pk_verify(pk, s->md, hash, hash_len, s->sig, s->sig_len);
}

/* Verify with the CA's key, else with a certificate of the document that the CA signed. */
static bool signed_by(mbedtls_x509_crt *ca, const struct signer *s, const unsigned char *hash,
                      size_t hash_len)
{
    if (sig_ok(&ca->pk, s, hash, hash_len)) return true;
    unsigned char *p = (unsigned char *)s->certs, *end = p ? p + s->certs_len : NULL;
    bool ok = false;
    while (p && p < end && !ok) {
        unsigned char *c = p;
        if (skip_any(&p, end) || p > end) break;
        mbedtls_x509_crt crt;
        uint32_t flags;
        mbedtls_x509_crt_init(&crt);
        ok = !mbedtls_x509_crt_parse_der(&crt, c, (size_t)(p - c)) &&
             !mbedtls_x509_crt_verify(&crt, ca, NULL, NULL, &flags, NULL, NULL) &&
             sig_ok(&crt.pk, s, hash, hash_len);
        mbedtls_x509_crt_free(&crt);
    }
    return ok;
}

int dds_smime_verify(const char *doc, mbedtls_x509_crt *ca, const char **why)
{
    struct span content, b64;
    if (split_mime(doc, &content, &b64, why)) return -1;
    size_t der_len = 0, text_len = 0;
    unsigned char *der = decode_b64(b64, &der_len), *text = NULL;
    struct signer s = {0};
    unsigned char hash[MBEDTLS_MD_MAX_SIZE], attr_hash[MBEDTLS_MD_MAX_SIZE];
    int rc = -1;
    const mbedtls_md_info_t *md;
    if (!der) {
        *why = "the signature part is not base64";
    } else if (parse_signed_data(der, der + der_len, &s) ||
               !(md = mbedtls_md_info_from_type(s.md))) {
        *why = "the signature is not a PKCS#7 SignedData this check reads";
    } else if (!(text = canonical(content, &text_len)) || mbedtls_md(md, text, text_len, hash)) {
        *why = "out of memory";
    } else if (s.attrs &&
               (s.digest_len != mbedtls_md_get_size(md) || memcmp(s.digest, hash, s.digest_len))) {
        *why = "the document was changed after it was signed (its digest differs from the "
               "signed one)";
    } else if (s.attrs) {
        /* the signature covers the DER of the signed attributes as a SET (RFC 5652 5.4) */
        unsigned char *a = malloc(s.attrs_len);
        if (!a) {
            *why = "out of memory";
        } else {
            memcpy(a, s.attrs, s.attrs_len);
            a[0] = MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SET;
            if (!mbedtls_md(md, a, s.attrs_len, attr_hash) &&
                signed_by(ca, &s, attr_hash, mbedtls_md_get_size(md)))
                rc = 0;
            else
                *why = "the signature does not verify with the permissions CA's key";
            free(a);
        }
    } else if (signed_by(ca, &s, hash, mbedtls_md_get_size(md))) {
        rc = 0;
    } else {
        *why = "the signature does not verify with the permissions CA's key";
    }
    free(text);
    free(der);
    return rc;
}
