/* SRTP / SRTCP (RFC 3711) for the rtp adapter, on Debian's libsrtp2 (2.5): no crypto of our own.
 *
 * What this module gives the adapter:
 *  - SDES-style keys (RFC 4568 §6.1 `inline:<base64 key||salt>`): parsed from text or a key file,
 *    formatted back into the SDP `a=crypto:<tag> <suite> inline:<key>` line (RFC 4568 §9.1);
 *  - a send session and a receive session per suite (AES_CM_128_HMAC_SHA1_80, RFC 4568 §6.2.1;
 *    AEAD_AES_128_GCM, RFC 7714 §12), each covering every SSRC of its direction (libsrtp
 *    wildcard ssrc_any_outbound / ssrc_any_inbound);
 *  - protect / unprotect of RTP and RTCP in place on the caller's buffer, with capacity checks
 *    for the trailer, libsrtp's replay protection (default window: 128 packets per SSRC), and
 *    distinct errors + counters for authentication failure, replay and malformed input;
 *  - a reader for the adapter's `srtp:` config section (file:line:col errors).
 *
 * Errors: 0 or a negative errno, with struct xg_error naming the field and the value:
 *   XG_SRTP_EAUTH (-EBADMSG)       authentication failed: wrong key, forged or altered packet,
 *                                  plain RTP/RTCP sent to an SRTP session
 *   XG_SRTP_EREPLAY (-EALREADY)    packet index already seen or older than the replay window
 *   XG_SRTP_EMALFORMED (-EPROTO)   too short for header + tag, version != 2, header past the end
 *   -EMSGSIZE                      protect: the buffer has no room for the trailer
 *   -EKEYEXPIRED                   libsrtp's key usage hard limit (2^48 SRTP / 2^31 SRTCP packets)
 *   -EINVAL                        bad argument (e.g. protect on a receive session)
 *   -EIO                           any other libsrtp failure
 * Threading: none. libsrtp's global state is initialised on first use (reference counted); call
 * everything from one thread (the reactor). */
#ifndef XG_RTP_SRTP_SESSION_H
#define XG_RTP_SRTP_SESSION_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/conf/conf.h"
#include "core/util/error.h"

#define XG_SRTP_EAUTH (-EBADMSG)
#define XG_SRTP_EREPLAY (-EALREADY)
#define XG_SRTP_EMALFORMED (-EPROTO)

/** Crypto suites (RFC 4568 §6.2 names). XG_SRTP_SUITE_NONE means "not chosen yet". */
enum xg_srtp_suite {
    XG_SRTP_SUITE_NONE = 0,
    XG_SRTP_AES_CM_128_HMAC_SHA1_80 = 1, /* AES-128 counter mode + HMAC-SHA1 80-bit tag */
    XG_SRTP_AEAD_AES_128_GCM = 2,        /* AES-128 GCM, 16-byte tag (RFC 7714) */
};

/** Largest master key || salt we handle (AES_CM_128: 16 + 14 bytes). */
#define XG_SRTP_MAX_KEY_LEN 30
/** Largest per-packet growth over both suites: SRTCP with GCM = 16-byte tag + 4-byte E||index.
 *  An adapter that reserves this many bytes below its MTU fits either suite. */
#define XG_SRTP_MAX_OVERHEAD 20

/** A master key and salt for one suite (key bytes first, then salt, as on the SDES line). */
struct xg_srtp_key {
    enum xg_srtp_suite suite;
    uint8_t bytes[XG_SRTP_MAX_KEY_LEN];
    size_t len; /* 30 for AES_CM_128_HMAC_SHA1_80, 28 for AEAD_AES_128_GCM */
};

/** Per-session counters (packets). One session counts only its own direction's fields. */
struct xg_srtp_stats {
    uint64_t rtp_ok, rtcp_ok; /* protected (send) or unprotected (receive) successfully */
    uint64_t auth_fail;       /* XG_SRTP_EAUTH */
    uint64_t replay;          /* XG_SRTP_EREPLAY */
    uint64_t malformed;       /* XG_SRTP_EMALFORMED */
    uint64_t no_room;         /* -EMSGSIZE on protect */
    uint64_t other;           /* -EKEYEXPIRED, -EIO */
};

/** Session direction: a send session only protects, a receive session only unprotects. */
enum xg_srtp_dir { XG_SRTP_SEND, XG_SRTP_RECV };

struct xg_srtp; /* opaque session */

/* ---- suites ---- */

/** RFC 4568 name of a suite ("AES_CM_128_HMAC_SHA1_80"), or "none". */
const char *xg_srtp_suite_name(enum xg_srtp_suite s);

/** Parse a suite name (exact, case-sensitive as in SDP). -EINVAL with err "unknown SRTP suite
 *  'X' (supported: AES_CM_128_HMAC_SHA1_80, AEAD_AES_128_GCM)". */
int xg_srtp_suite_parse(const char *name, enum xg_srtp_suite *out, struct xg_error *err);

/** Master key || salt length in bytes for a suite (30 or 28; 0 for NONE). */
size_t xg_srtp_key_len(enum xg_srtp_suite s);

/** Bytes protect adds: RTP: the tag (10 AES_CM / 16 GCM); RTCP: tag + 4 (E bit and SRTCP
 *  index): 14 / 20. 0 for NONE. */
size_t xg_srtp_overhead(enum xg_srtp_suite s, bool rtcp);

/* ---- keys (RFC 4568 SDES) ---- */

/** Parse key text. Accepted forms (surrounding white space ignored):
 *    `inline:<base64>`            e.g. inline:WVNfX19zZW1jdGwgKCkgewkyMjA7fQp9CnVubGVz
 *    `<base64>`                   the bare key || salt
 *    `<suite> inline:<base64>`    the crypto attribute without its tag
 *    `a=crypto:<tag> <suite> inline:<base64>`   a whole SDP line
 *  Base64 is RFC 4648 §4 (padding optional). The suite is `suite` or, when that is
 *  XG_SRTP_SUITE_NONE, the one the text names; both given and different is an error, as is
 *  neither. Lifetime and MKI parameters (`|2^31|1:1`) and session parameters are refused.
 *  Errors (-EINVAL) name the field: "suite 'X' is unknown ...", "key: bad base64 character '!'
 *  at offset 7", "key: 29 bytes, AES_CM_128_HMAC_SHA1_80 needs 30 (16-byte key + 14-byte salt)",
 *  "key: lifetime/MKI parameters ('|2^20') are not supported". out is zeroed on error. */
int xg_srtp_key_parse(const char *text, enum xg_srtp_suite suite, struct xg_srtp_key *out,
                      struct xg_error *err);

/** Read a key file: its first line that is neither empty nor a `#` comment, parsed by
 *  xg_srtp_key_parse (the file may hold more comment lines; at most 4 KiB is read). Errors:
 *  -errno "key file 'path': <strerror>", or the parse error prefixed with "key file 'path': ".
 *  *world_readable (may be NULL) is set when the file's mode lets group or others read it (the
 *  caller should warn). */
int xg_srtp_key_load(const char *path, enum xg_srtp_suite suite, struct xg_srtp_key *out,
                     bool *world_readable, struct xg_error *err);

/** Fill `out` with `xg_srtp_key_len(suite)` random bytes from the kernel (getrandom). -EINVAL
 *  for NONE, -errno if the kernel fails. */
int xg_srtp_key_generate(enum xg_srtp_suite suite, struct xg_srtp_key *out, struct xg_error *err);

/** Write `inline:<base64>` (padded base64) into buf (capacity cap, NUL-terminated); returns the
 *  length without the NUL, or -EINVAL (bad key) / -EMSGSIZE (cap too small; 48 always fits). */
int xg_srtp_key_format(const struct xg_srtp_key *key, char *buf, size_t cap);

/** Write the SDP attribute line `a=crypto:<tag> <suite> inline:<base64>` + CRLF into buf
 *  (NUL-terminated); tag 1..999999999 (RFC 4568 §9.1). Returns the length without the NUL, or
 *  -EINVAL / -EMSGSIZE (96 bytes always fit). The line carries the key in clear: an SDP with
 *  it must only travel over a protected channel (RFC 4568 §8.3). */
int xg_srtp_sdp_crypto(char *buf, size_t cap, unsigned tag, const struct xg_srtp_key *key);

/** Make an SDP written by rtp_sdp_write() an SRTP one, in place: every `m=` line's
 *  RTP/AVP(F) profile becomes RTP/SAVP(F) (RFC 3711 §12, RFC 5124) and the a=crypto line (tag
 *  1) is appended at the end (media level, after the single m= section). *len is the SDP length
 *  on entry and exit; buf stays NUL-terminated. -EMSGSIZE (buf unchanged) if cap is too small,
 *  -EINVAL if there is no m= line or the key is bad. */
int xg_srtp_sdp_secure(char *buf, size_t cap, size_t *len, const struct xg_srtp_key *key);

/* ---- library and sessions ---- */

/** srtp_init() on the first call (reference counted; sessions call it themselves), installing
 *  a log handler that forwards libsrtp's messages to xg_log (component "srtp"). -EIO with err
 *  if libsrtp fails to initialise (e.g. its self-test of a cipher). */
int xg_srtp_global_init(struct xg_error *err);

/** Drop one reference; srtp_shutdown() when the last one goes. */
void xg_srtp_global_cleanup(void);

/** Create a session for `key` (copied): XG_SRTP_SEND protects packets of any SSRC we send,
 *  XG_SRTP_RECV unprotects packets of any SSRC that authenticates with the key (a stream per
 *  SSRC is created only after its first packet authenticated). Replay window 128; repeated
 *  sequence numbers on send are refused (libsrtp default; the adapter never repeats one).
 *  Returns 0, -EINVAL (bad key or suite), -ENOMEM, -EIO. */
int xg_srtp_session_new(struct xg_srtp **out, enum xg_srtp_dir dir, const struct xg_srtp_key *key,
                        struct xg_error *err);

/** Free a session (NULL allowed): wipes its key copy, drops the library reference. */
void xg_srtp_session_free(struct xg_srtp *s);

/** The session's counters (never NULL for a live session). */
const struct xg_srtp_stats *xg_srtp_session_stats(const struct xg_srtp *s);

/** The session's suite and direction. */
enum xg_srtp_suite xg_srtp_session_suite(const struct xg_srtp *s);
enum xg_srtp_dir xg_srtp_session_dir(const struct xg_srtp *s);

/** Protect the RTP packet pkt[0..*len) in place (send session). cap is the buffer's capacity;
 *  it must be at least *len + xg_srtp_overhead(suite, false) (else -EMSGSIZE, counted in
 *  no_room, packet untouched). On success *len grows by the overhead. -EPROTO for a packet that
 *  is not RTP v2 or whose header (CSRCs, extension) runs past *len; XG_SRTP_EREPLAY (counted in
 *  replay) for a sequence number of that SSRC already protected (libsrtp refuses to encrypt
 *  twice with one index: a restarted sender must pick a new SSRC or a new key). */
int xg_srtp_protect(struct xg_srtp *s, void *pkt, size_t *len, size_t cap, struct xg_error *err);

/** Unprotect the SRTP packet pkt[0..*len) in place (receive session); on success *len is the
 *  plain RTP length. XG_SRTP_EAUTH / XG_SRTP_EREPLAY / XG_SRTP_EMALFORMED (each counted); on
 *  any error the packet must be dropped (its bytes are unspecified). */
int xg_srtp_unprotect(struct xg_srtp *s, void *pkt, size_t *len, struct xg_error *err);

/** Protect a (compound) RTCP packet in place (send session): encrypts everything after the
 *  first 8 bytes and appends E||SRTCP index and the tag; cap must be at least
 *  *len + xg_srtp_overhead(suite, true). Errors as xg_srtp_protect. */
int xg_srtp_protect_rtcp(struct xg_srtp *s, void *pkt, size_t *len, size_t cap,
                         struct xg_error *err);

/** Unprotect an SRTCP packet in place (receive session); errors as xg_srtp_unprotect (an SRTCP
 *  index already seen is XG_SRTP_EREPLAY). */
int xg_srtp_unprotect_rtcp(struct xg_srtp *s, void *pkt, size_t *len, struct xg_error *err);

/* ---- the adapter's `srtp:` config section ---- */

/** What `srtp: {suite, key_file, remote_key_file}` says, keys loaded. */
struct xg_srtp_conf {
    bool enabled;              /* the section is present */
    enum xg_srtp_suite suite;  /* both directions use it */
    struct xg_srtp_key local;  /* key_file: we send with it; the SDP announces it */
    struct xg_srtp_key remote; /* remote_key_file (default: key_file): peers send with it */
    bool shared_key;           /* no remote_key_file: one key for both directions */
    bool world_readable;       /* a key file is readable by group/others (warn) */
    bool key_readable;         /* ... key_file is (then key_path names it) */
    bool remote_key_readable;  /* ... a separate remote_key_file is (remote_key_path) */
    char key_path[512];        /* resolved paths, for messages */
    char remote_key_path[512];
};

/** Read the `srtp` member of an adapter's config map `conf` (marks its keys used). Absent →
 *  out->enabled = false, 0. Keys: suite (default: the suite a key file's a=crypto line names,
 *  else AES_CM_128_HMAC_SHA1_80), key_file (required), remote_key_file (default key_file).
 *  Relative paths are relative to the config file's directory. Errors -EINVAL / -errno as
 *  "file:line:col: srtp.key_file 'k.key': key: 29 bytes, ..." at the offending key. Reads files
 *  but opens no sockets (fine in create() and for --check). */
int xg_srtp_conf_read(const struct xg_conf *conf, struct xg_srtp_conf *out, struct xg_error *err);

/** Wipe the keys of a conf (call when the adapter is destroyed). */
void xg_srtp_conf_wipe(struct xg_srtp_conf *c);

#endif
