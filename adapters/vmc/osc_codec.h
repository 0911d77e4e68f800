/* Open Sound Control 1.0 codec: messages and bundles ↔ bytes. Pure: no I/O, no allocation.
 *
 * Wire format (OSC 1.0 specification, "OSC Packets", "OSC Messages", "OSC Bundles"): every
 * field is big-endian and a multiple of 4 bytes. An OSC-string is its bytes, a NUL, then NULs up
 * to the next multiple of 4. A message is an address pattern (OSC-string starting with '/'), a
 * type tag string (OSC-string starting with ','; one character per argument) and the arguments.
 * A bundle is "#bundle\0", a 64-bit NTP time tag, then elements, each an int32 size (a positive
 * multiple of 4) followed by that many bytes holding a message or a nested bundle.
 *
 * Type tags decoded and encoded: i (int32), f (float32), s and S (OSC-string), b (blob: int32
 * size, bytes, NUL padding), h (int64), t (time tag), d (float64), c (ASCII char as int32),
 * r (RGBA colour as uint32), m (MIDI message, 4 bytes), T, F, N, I (no data), and the array
 * brackets [ ] (no data; must balance, nested at most OSC_MAX_ARRAY_DEPTH).
 *
 * Strictness (a codec that re-encodes what it decoded gives back the same bytes): every string
 * ends inside its field and its padding is NUL; every argument and blob lies within the message;
 * a message has no bytes after its last argument; element sizes are positive multiples of 4 and
 * fit the enclosing bundle; bundles nest at most `max_depth` deep. A message with no type tag
 * string at all (only an address) is accepted as a message without arguments; anything else after
 * the address must be a type tag string. */
#ifndef OSC_CODEC_H
#define OSC_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/util/error.h"
#include "core/util/wire.h"

#define OSC_MAX_ARRAY_DEPTH 16  /* nested [ ] in one type tag string */
#define OSC_DEFAULT_MAX_DEPTH 8 /* nested bundles (the outermost bundle is depth 1) */
#define OSC_TIMETAG_IMMEDIATE UINT64_C(1)

/** Why bytes were refused (one counter and one bad-input class each). */
enum osc_error {
    OSC_E_NONE = 0,
    OSC_E_MALFORMED, /* string without NUL in bounds, non-NUL padding, argument or blob past the
                        end, bytes after the last argument, packet length not a multiple of 4 */
    OSC_E_TYPE_TAG, /* no ',' where the type tag string belongs, unknown type tag, [ ] unbalanced */
    OSC_E_ADDRESS,  /* a packet or element that is neither "/..." nor "#bundle" */
    OSC_E_BUNDLE,   /* bundle too short for its header, element size <= 0, not a multiple of 4,
                       or past the end (the rest of that bundle is dropped) */
    OSC_E_DEPTH,    /* bundle nested deeper than max_depth (that element is dropped) */
    OSC_E_COUNT
};

/** "malformed", "type_tag", "address", "bundle", "depth" (static). */
const char *osc_error_name(enum osc_error e);

/** One argument. Strings and blobs point into the decoded buffer (borrowed). */
struct osc_arg {
    char tag; /* the type tag character */
    union {
        int32_t i;  /* i, c */
        uint32_t u; /* r, m; also the raw bits of f */
        float f;    /* f */
        int64_t h;  /* h */
        uint64_t t; /* t; also the raw bits of d */
        double d;   /* d */
        struct {
            const char *p; /* s, S: not NUL-terminated in the buffer view; len bytes */
            size_t len;
        } s;
        struct {
            const uint8_t *p; /* b */
            size_t len;
        } b;
    } v;
};

/** A decoded message (views into the buffer). */
struct osc_message {
    const char *address; /* starts with '/', address_len bytes, NUL follows in the buffer */
    size_t address_len;
    const char *types; /* type tags after the ',' (n_types bytes, NUL follows), "" if none */
    size_t n_types;
    const uint8_t *data; /* argument bytes */
    size_t data_len;
};

/** Decode a whole message of `len` bytes at `buf` (borrowed; the views in *m point into it).
 *  Validates every argument. Returns 0, or -EBADMSG with *cls (may be NULL) set and err naming
 *  the field and offset. */
int osc_decode_message(const uint8_t *buf, size_t len, struct osc_message *m, enum osc_error *cls,
                       struct xg_error *err);

/** Argument cursor over a decoded message. */
struct osc_arg_iter {
    const struct osc_message *m;
    size_t ti; /* next type tag */
    struct xg_reader r;
};
void osc_args_begin(struct osc_arg_iter *it, const struct osc_message *m);
/** Next argument (array brackets included, as arguments without data). 1 = *a set, 0 = end,
 *  -EBADMSG if the message was not validated by osc_decode_message. */
int osc_args_next(struct osc_arg_iter *it, struct osc_arg *a);
/** The first `max` arguments into a[] (brackets included); returns how many were stored, or
 *  -EBADMSG. */
int osc_args_get(const struct osc_message *m, struct osc_arg *a, size_t max);

/** A string argument's (s, S) or the address's bytes equal `s` (NUL-terminated). */
bool osc_str_eq(const char *p, size_t len, const char *s);

/** Visitor of osc_walk_packet(). `timetag` is the innermost enclosing bundle's (IMMEDIATE for a
 *  bare message), `depth` 0 for a bare message. */
struct osc_walk_ops {
    int max_depth; /* <= 0: OSC_DEFAULT_MAX_DEPTH */
    void (*message)(void *user, const struct osc_message *m, uint64_t timetag, int depth);
    /* one call per refused message, element or bundle tail; err names field, value, offset */
    void (*error)(void *user, enum osc_error cls, const struct xg_error *err);
    /* optional: called first for every refused element (count it there); the error text is
     * formatted, and `error` called, only when it returns true (e.g. when a rate limiter lets
     * the log line through: a flood of bad elements costs no formatting) */
    bool (*admit)(void *user, enum osc_error cls);
    void *user;
};

/** Walk one UDP payload: a message, or a bundle whose elements (messages, nested bundles) are
 *  visited in order. A bad element is reported and skipped; a bad element size ends its bundle
 *  (reported once). Returns the number of messages visited. */
size_t osc_walk_packet(const uint8_t *buf, size_t len, const struct osc_walk_ops *ops);

/* ---- encoding (into a bounded writer; -EMSGSIZE when it does not fit, sticky in w->err) ---- */

/** OSC-string of `len` bytes (no NUL inside) with its NUL padding. */
int osc_write_string(struct xg_writer *w, const char *s, size_t len);
/** A message: address, ',' + types, then args[i] for every tag that carries data (n_args must
 *  equal strlen(types); brackets and T F N I take an entry whose value is ignored). -EINVAL for an
 *  unknown tag or a bad address, -EMSGSIZE if it does not fit. */
int osc_encode_message(struct xg_writer *w, const char *address, const char *types,
                       const struct osc_arg *args, size_t n_args);
/** Start a bundle ("#bundle\0" + time tag). */
int osc_bundle_begin(struct xg_writer *w, uint64_t timetag);
/** Open an element of the current bundle: writes a size placeholder and returns its offset in
 *  *at; close it with osc_element_end() after writing the message or bundle. */
int osc_element_begin(struct xg_writer *w, size_t *at);
int osc_element_end(struct xg_writer *w, size_t at);

/** NTP time tag (seconds since 1900 in the high 32 bits, fraction below) of a wall-clock
 *  instant in ns since 1970. */
uint64_t osc_timetag_from_unix_ns(int64_t unix_ns);

#endif
