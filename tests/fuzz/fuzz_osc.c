/* libFuzzer target for the OSC 1.0 codec (adapters/vmc/osc_codec.c).
 *
 * The input is walked as a UDP payload (a message or nested bundles, depth bound 8) and also
 * decoded as one bare message. Every message that decodes must re-encode from its decoded
 * arguments to exactly the bytes it was decoded from (the codec is strict: NUL padding, exact
 * lengths, so decode ∘ encode is the identity), and every reported error must carry a class and
 * a message. Seeds: tests/fuzz/seeds/fuzz_osc/ (VMC and VMT bundles, every type tag).
 * Build and run: `make fuzz SECONDS=N` (target fuzz_osc in build-fuzz/). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "adapters/vmc/osc_codec.h"

static uint8_t enc[1 << 16];
static struct osc_arg args[1 << 14];
static char addr[1 << 16], tags[1 << 16];

static void check_message(const struct osc_message *m)
{
    if (m->address_len >= sizeof addr || m->n_types >= sizeof tags) abort();
    if (m->n_types > sizeof args / sizeof args[0]) return; /* longer than this target keeps */
    int n = osc_args_get(m, args, sizeof args / sizeof args[0]);
    if (n < 0 || (size_t)n != m->n_types) abort(); /* validated messages always iterate */
    memcpy(addr, m->address, m->address_len);
    addr[m->address_len] = 0;
    memcpy(tags, m->types, m->n_types);
    tags[m->n_types] = 0;
    struct xg_writer w;
    xg_writer_init(&w, enc, sizeof enc);
    if (osc_encode_message(&w, addr, tags, args, (size_t)n)) abort();
    /* a message without a type tag string re-encodes with an empty one (",\0\0\0") */
    size_t orig = (size_t)((m->data + m->data_len) - (const uint8_t *)m->address);
    if (m->n_types == 0 && w.len == orig + 4) return;
    if (w.len != orig || memcmp(enc, m->address, orig) != 0) abort();
}

static void on_message(void *user, const struct osc_message *m, uint64_t tt, int depth)
{
    (void)user;
    (void)tt;
    if (depth < 0 || depth > 8) abort();
    check_message(m);
}

static void on_error(void *user, enum osc_error cls, const struct xg_error *err)
{
    (void)user;
    if (cls <= OSC_E_NONE || cls >= OSC_E_COUNT || !err->msg[0]) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const struct osc_walk_ops ops = {
        .max_depth = 8, .message = on_message, .error = on_error, .user = NULL};
    osc_walk_packet(data, size, &ops);
    struct osc_message m;
    enum osc_error cls;
    struct xg_error err = {0};
    if (osc_decode_message(data, size, &m, &cls, &err) == 0)
        check_message(&m);
    else if (cls <= OSC_E_NONE || cls >= OSC_E_COUNT || !err.msg[0])
        abort();
    return 0;
}
