/* dds adapter, DDS Security: `security: {enclave: DIR}` read and checked at create time (so
 * `--check` sees every problem of the enclave as a file:line:column error), and mapped onto the
 * participant's QoS properties (dds.sec.*, DDS Security 1.1 section 9.3 and 10.4; Cyclone DDS's
 * names) at start. Setting them through the QoS leaves a `config_file`/CYCLONEDDS_URI
 * configuration (interfaces, peers) in force.
 *
 * DIR has the layout of an SROS2 enclave: identity_ca.cert.pem, cert.pem, key.pem,
 * permissions_ca.cert.pem, governance.p7s, permissions.p7s. Checked here with mbedtls: each is a
 * regular, readable file; both certificates parse; the key parses and is the certificate's key;
 * the certificate is signed by the identity CA (and valid now); the permissions document is an
 * S/MIME signed text and one of its grants' <subject_name> is the certificate's subject; the
 * governance document is an S/MIME signed text; both documents are signed by the permissions
 * CA and unchanged since (dds_smime.c). Cyclone's access control plugin verifies them again when
 * the participant is created, with what this check does not see (the XML against the schema,
 * the domain and validity of the grant): a refusal there fails the adapter's start with an
 * error naming the enclave. */
#include "adapters/dds/dds_adapter.h"

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <mbedtls/error.h>
#include <mbedtls/pk.h>
#include <mbedtls/x509_crt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "adapters/dds/dds_smime.h"
#include "core/conf/path.h"

#define SEC_MAX_DOC (1 << 20) /* largest governance/permissions document read */

static const char *const sec_files[] = {
    "identity_ca.cert.pem",    "cert.pem",       "key.pem",
    "permissions_ca.cert.pem", "governance.p7s", "permissions.p7s"};

static void sec_path(const struct dds *d, const char *file, char *out, size_t size)
{
    snprintf(out, size, "%s/%s", d->enclave, file);
}

static const char *tls_err(int rc)
{
    static char buf[160];
    mbedtls_strerror(rc, buf, sizeof buf);
    return buf;
}

/* The file read whole (at most SEC_MAX_DOC bytes), NUL-terminated; NULL on error. */
static char *read_doc(const char *path)
{
    int rc;
    const char *kind;
    FILE *f = xg_file_fopen_regular(path, "rb", false, &rc, &kind);
    if (!f) return NULL;
    char *buf = malloc(SEC_MAX_DOC + 1);
    size_t n = buf ? fread(buf, 1, SEC_MAX_DOC, f) : 0;
    fclose(f);
    if (buf) buf[n] = '\0';
    return buf;
}

/* One relative distinguished name "key=value" of a DN text. */
struct rdn {
    char key[32], value[128];
};

/* Split a DN text ("CN=/x, O=lab" as mbedtls_x509_dn_gets writes it, or as a permissions
 * document's <subject_name> holds it) at ',' into trimmed key=value pairs; -1 when malformed. */
static int dn_split(const char *s, struct rdn *out, int max)
{
    int n = 0;
    while (*s) {
        const char *end = strchr(s, ','), *eq = strchr(s, '=');
        if (!end) end = s + strlen(s);
        if (!eq || eq > end || n == max) return -1;
        const char *k = s, *ke = eq, *v = eq + 1, *ve = end;
        while (k < ke && isspace((unsigned char)*k))
            k++;
        while (ke > k && isspace((unsigned char)ke[-1]))
            ke--;
        while (v < ve && isspace((unsigned char)*v))
            v++;
        while (ve > v && isspace((unsigned char)ve[-1]))
            ve--;
        if (ke == k || (size_t)(ke - k) >= sizeof out[n].key ||
            (size_t)(ve - v) >= sizeof out[n].value)
            return -1;
        snprintf(out[n].key, sizeof out[n].key, "%.*s", (int)(ke - k), k);
        snprintf(out[n].value, sizeof out[n].value, "%.*s", (int)(ve - v), v);
        n++;
        s = *end ? end + 1 : end;
    }
    return n;
}

/* Two DNs name the same subject: the same key=value pairs in any order (as Cyclone DDS compares
 * them: keys and values exactly). */
static bool dn_equal(const char *a, const char *b)
{
    struct rdn ra[16], rb[16];
    int na = dn_split(a, ra, 16), nb = dn_split(b, rb, 16);
    if (na <= 0 || na != nb) return false;
    bool used[16] = {0};
    for (int i = 0; i < na; i++) {
        int j = 0;
        for (; j < nb; j++)
            if (!used[j] && !strcmp(ra[i].key, rb[j].key) && !strcmp(ra[i].value, rb[j].value))
                break;
        if (j == nb) return false;
        used[j] = true;
    }
    return true;
}

/* Spaces next to a ',' or '=' of a DN text, or at its ends (Cyclone DDS 0.10 does not trim
 * them off a permissions document's <subject_name>: such a grant matches no identity). */
static bool loose_spaces(const char *s)
{
    size_t n = strlen(s);
    if (n && (isspace((unsigned char)s[0]) || isspace((unsigned char)s[n - 1]))) return true;
    for (size_t i = 0; i < n; i++)
        if ((s[i] == ',' || s[i] == '=') &&
            ((i > 0 && isspace((unsigned char)s[i - 1])) || isspace((unsigned char)s[i + 1])))
            return true;
    return false;
}

/* An S/MIME signed document as `openssl smime -sign` (and `ros2 security`) write it. */
static bool is_smime(const char *doc)
{
    return strstr(doc, "multipart/signed") && strstr(doc, "pkcs7-signature");
}

/* A signature of the permissions CA `pca` on `doc` (the file `path`), or an error. */
static int check_signed(const char *doc, const char *path, mbedtls_x509_crt *pca,
                        const char *pca_path, const struct xg_conf *at, struct xg_error *err)
{
    const char *why = "";
    if (!dds_smime_verify(doc, pca, &why)) return 0;
    return xg_conf_error(err, at, -EINVAL,
                         "security: '%s' is not signed by the permissions CA '%s': %s", path,
                         pca_path, why);
}

/* The permissions document: S/MIME signed by the permissions CA, and one <subject_name> equal
 * to `subject`. 0 or an error. */
static int check_permissions(const char *path, const char *subject, mbedtls_x509_crt *pca,
                             const char *pca_path, const struct xg_conf *at, struct xg_error *err)
{
    char *doc = read_doc(path);
    if (!doc) return xg_conf_error(err, at, -EIO, "security: cannot read '%s'", path);
    int rc = 0;
    if (!is_smime(doc)) {
        rc = xg_conf_error(err, at, -EINVAL,
                           "security: '%s' is not an S/MIME signed document (sign the XML with "
                           "openssl smime -sign -text ..., see docs/adapters/dds.md)",
                           path);
        goto out;
    }
    if ((rc = check_signed(doc, path, pca, pca_path, at, err))) goto out;
    const char *p = doc, *first = NULL;
    char found[160] = "";
    while ((p = strstr(p, "<subject_name>"))) {
        p += strlen("<subject_name>");
        const char *e = strstr(p, "</subject_name>");
        if (!e) break;
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)(e - p), p);
        if (!first) {
            first = p;
            snprintf(found, sizeof found, "%s", name);
        }
        if (dn_equal(name, subject)) {
            if (loose_spaces(name))
                rc = xg_conf_error(err, at, -EINVAL,
                                   "security: the <subject_name> '%s' of '%s' has spaces around "
                                   "',' or '=': Cyclone DDS compares it as it is written and "
                                   "refuses it (write it without those spaces)",
                                   name, path);
            goto out;
        }
        p = e;
    }
    if (!first)
        rc = xg_conf_error(err, at, -EINVAL, "security: '%s' has no <subject_name> (no grant)",
                           path);
    else
        rc = xg_conf_error(err, at, -EINVAL,
                           "security: no grant of '%s' is for the identity's subject '%s' "
                           "(cert.pem); the first grant's <subject_name> is '%s'",
                           path, subject, found);
out:
    free(doc);
    return rc;
}

/* The certificates and key of the enclave (files already known to be readable). */
static int check_identity(const struct dds *d, const struct xg_conf *at, struct xg_error *err)
{
    char p_ca[PATH_MAX + 32], p_cert[PATH_MAX + 32], p_key[PATH_MAX + 32], p_pca[PATH_MAX + 32],
        p_perm[PATH_MAX + 32], p_gov[PATH_MAX + 32];
    sec_path(d, "identity_ca.cert.pem", p_ca, sizeof p_ca);
    sec_path(d, "cert.pem", p_cert, sizeof p_cert);
    sec_path(d, "key.pem", p_key, sizeof p_key);
    sec_path(d, "permissions_ca.cert.pem", p_pca, sizeof p_pca);
    sec_path(d, "permissions.p7s", p_perm, sizeof p_perm);
    sec_path(d, "governance.p7s", p_gov, sizeof p_gov);
    mbedtls_x509_crt ca, cert, pca;
    mbedtls_pk_context key;
    mbedtls_x509_crt_init(&ca);
    mbedtls_x509_crt_init(&cert);
    mbedtls_x509_crt_init(&pca);
    mbedtls_pk_init(&key);
    int rc = 0, t;
    uint32_t flags = 0;
    char subject[256], why[256];
    char *gov = NULL;
    if ((t = mbedtls_x509_crt_parse_file(&ca, p_ca)))
        rc = xg_conf_error(err, at, -EINVAL, "security: '%s' is not a certificate: %s", p_ca,
                           tls_err(t));
    else if ((t = mbedtls_x509_crt_parse_file(&cert, p_cert)))
        rc = xg_conf_error(err, at, -EINVAL, "security: '%s' is not a certificate: %s", p_cert,
                           tls_err(t));
    else if ((t = mbedtls_x509_crt_parse_file(&pca, p_pca)))
        rc = xg_conf_error(err, at, -EINVAL, "security: '%s' is not a certificate: %s", p_pca,
                           tls_err(t));
    else if ((t = mbedtls_pk_parse_keyfile(&key, p_key, NULL)))
        rc = xg_conf_error(err, at, -EINVAL, "security: '%s' is not an unencrypted private key: %s",
                           p_key, tls_err(t));
    else if ((t = mbedtls_pk_check_pair(&cert.pk, &key)))
        rc = xg_conf_error(err, at, -EINVAL,
                           "security: the key '%s' is not the key of the certificate '%s'", p_key,
                           p_cert);
    else if (mbedtls_x509_crt_verify(&cert, &ca, NULL, NULL, &flags, NULL, NULL)) {
        mbedtls_x509_crt_verify_info(why, sizeof why, "", flags);
        why[strcspn(why, "\n")] = '\0';
        rc = xg_conf_error(err, at, -EINVAL,
                           "security: the certificate '%s' does not verify against the identity "
                           "CA '%s': %s",
                           p_cert, p_ca, why);
    } else if (mbedtls_x509_dn_gets(subject, sizeof subject, &cert.subject) < 0)
        rc = xg_conf_error(err, at, -EINVAL, "security: the subject of '%s' is too long", p_cert);
    else if (!(rc = check_permissions(p_perm, subject, &pca, p_pca, at, err))) {
        if (!(gov = read_doc(p_gov)))
            rc = xg_conf_error(err, at, -EIO, "security: cannot read '%s'", p_gov);
        else if (!is_smime(gov) || !strstr(gov, "domain_access_rules"))
            rc = xg_conf_error(err, at, -EINVAL,
                               "security: '%s' is not an S/MIME signed governance document "
                               "(<domain_access_rules>, signed with openssl smime -sign -text "
                               "..., see docs/adapters/dds.md)",
                               p_gov);
        else
            rc = check_signed(gov, p_gov, &pca, p_pca, at, err);
    }
    free(gov);
    mbedtls_pk_free(&key);
    mbedtls_x509_crt_free(&pca);
    mbedtls_x509_crt_free(&cert);
    mbedtls_x509_crt_free(&ca);
    return rc;
}

int dds_security_conf(struct dds *d, const struct xg_conf *conf, struct xg_error *err)
{
    const struct xg_conf *sec = xg_conf_get(conf, "security");
    if (!sec) return 0;
    int rc = xg_conf_expect(sec, XG_CONF_MAP, "security", err);
    const char *dir;
    if (rc || (rc = xg_conf_string(sec, "enclave", NULL, &dir, err))) return rc;
    const struct xg_conf *at = xg_conf_get(sec, "enclave");
    if (!dir || !*dir)
        return xg_conf_error(err, at ? at : sec, -EINVAL,
                             "security: enclave (the folder of an SROS2 enclave) is required");
    char path[PATH_MAX];
    if (xg_conf_path(at, dir, path, sizeof path))
        return xg_conf_error(err, at, -ENAMETOOLONG, "security: enclave '%s': path too long", dir);
    if (!realpath(path, d->enclave))
        return xg_conf_error(err, at, -errno, "security: enclave '%s': %s", dir, strerror(errno));
    if (strlen(d->enclave) + 32 > sizeof d->enclave)
        return xg_conf_error(err, at, -ENAMETOOLONG, "security: enclave '%s': path too long", dir);
    for (size_t i = 0; i < sizeof sec_files / sizeof sec_files[0]; i++) {
        char f[PATH_MAX + 32];
        const char *kind = NULL;
        sec_path(d, sec_files[i], f, sizeof f);
        int frc = xg_file_check_regular(f, &kind);
        if (frc)
            return xg_conf_error(err, at, frc, "security: enclave '%s': %s: %s", dir, sec_files[i],
                                 xg_file_strerror(frc, kind));
    }
    return check_identity(d, at, err);
}

/* The file of plugin `lib` (e.g. "libdds_security_auth.so"): Debian installs the plugins in
 * libddsc0debian/ beside libddsc, off the loader's path; elsewhere the bare name, which Cyclone
 * hands to the dynamic loader. */
static void plugin_path(const char *lib, char *out, size_t size)
{
    Dl_info info;
    if (dladdr((void *)dds_create_participant, &info) && info.dli_fname) {
        const char *slash = strrchr(info.dli_fname, '/');
        if (slash) {
            snprintf(out, size, "%.*s/libddsc0debian/%s", (int)(slash - info.dli_fname),
                     info.dli_fname, lib);
            if (!access(out, R_OK)) return;
        }
    }
    snprintf(out, size, "%s", lib);
}

static void set_file_prop(dds_qos_t *q, const struct dds *d, const char *name, const char *file)
{
    char v[PATH_MAX + 64];
    snprintf(v, sizeof v, "file:%s/%s", d->enclave, file);
    dds_qset_prop(q, name, v);
}

dds_qos_t *dds_security_qos(const struct dds *d)
{
    if (!d->enclave[0]) return NULL;
    dds_qos_t *q = dds_create_qos();
    if (!q) return NULL;
    static const struct {
        const char *kind, *lib, *init, *fini;
    } plugins[] = {
        {"auth", "libdds_security_auth.so", "init_authentication", "finalize_authentication"},
        {"access", "libdds_security_ac.so", "init_access_control", "finalize_access_control"},
        {"crypto", "libdds_security_crypto.so", "init_crypto", "finalize_crypto"},
    };
    for (size_t i = 0; i < sizeof plugins / sizeof plugins[0]; i++) {
        char name[64], path[PATH_MAX];
        plugin_path(plugins[i].lib, path, sizeof path);
        snprintf(name, sizeof name, "dds.sec.%s.library.path", plugins[i].kind);
        dds_qset_prop(q, name, path);
        snprintf(name, sizeof name, "dds.sec.%s.library.init", plugins[i].kind);
        dds_qset_prop(q, name, plugins[i].init);
        snprintf(name, sizeof name, "dds.sec.%s.library.finalize", plugins[i].kind);
        dds_qset_prop(q, name, plugins[i].fini);
    }
    set_file_prop(q, d, "dds.sec.auth.identity_ca", "identity_ca.cert.pem");
    set_file_prop(q, d, "dds.sec.auth.identity_certificate", "cert.pem");
    set_file_prop(q, d, "dds.sec.auth.private_key", "key.pem");
    set_file_prop(q, d, "dds.sec.access.permissions_ca", "permissions_ca.cert.pem");
    set_file_prop(q, d, "dds.sec.access.governance", "governance.p7s");
    set_file_prop(q, d, "dds.sec.access.permissions", "permissions.p7s");
    return q;
}
