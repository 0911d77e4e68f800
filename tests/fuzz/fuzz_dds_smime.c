/* libFuzzer target for the dds adapter's S/MIME signature check (adapters/dds/dds_smime.c),
 * which reads a DDS Security enclave's governance.p7s and permissions.p7s at `--check` and load.
 *
 * The input is any byte string taken as such a document. dds_smime_verify() must return 0 or -1
 * with a reason, never read outside the text or the decoded DER, and never accept a document
 * here: the CA is empty (no key), so no signature can verify. Seeds: tests/fuzz/seeds/
 * fuzz_dds_smime/ (a governance document signed by a throwaway CA; its public certificate only).
 */
// From the repository root:
//   clang -fsanitize=fuzzer,address,undefined -I. tests/fuzz/fuzz_dds_smime.c \
//     adapters/dds/dds_smime.c -lmbedx509 -lmbedcrypto
//   ./a.out -max_total_time=60 corpus/
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "adapters/dds/dds_smime.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *doc = malloc(size + 1);
    if (!doc) return 0;
    memcpy(doc, data, size);
    doc[size] = '\0';
    mbedtls_x509_crt ca;
    mbedtls_x509_crt_init(&ca);
    const char *why = NULL;
    int rc = dds_smime_verify(doc, &ca, &why);
    if (rc != -1 || !why || !*why) abort();
    mbedtls_x509_crt_free(&ca);
    free(doc);
    return 0;
}
