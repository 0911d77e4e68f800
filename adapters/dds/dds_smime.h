/* dds adapter, DDS Security: S/MIME signature check of governance and permissions documents
 * (dds_smime.c). Not a public interface. */
#ifndef XG_DDS_SMIME_H
#define XG_DDS_SMIME_H

#include <mbedtls/x509_crt.h>

/** Verify that `doc` (a NUL-terminated S/MIME multipart/signed text with a detached PKCS#7
 *  SignedData, RFC 5751 / RFC 5652) was signed by `ca` — with its key, or with a certificate
 *  carried in the signature that `ca` signed — and not changed since: the digest of the signed
 *  part (line breaks as CRLF) equals the signed messageDigest attribute, and the signature over
 *  the signed attributes verifies. Returns 0, or -1 with `*why` (static text) saying what is
 *  wrong. */
int dds_smime_verify(const char *doc, mbedtls_x509_crt *ca, const char **why);

#endif
