/* Internal to the game-state codec files (gamestate_codec.c: primitives and the type table;
 * gamestate_encode.c; gamestate_decode.c). Not for the adapter or tests: use gamestate_codec.h. */
#ifndef XG_RTP_GAMESTATE_PRIV_H
#define XG_RTP_GAMESTATE_PRIV_H

#include "adapters/rtp/gamestate_codec.h"

/* Returns from the calling function with x's value when x is not 0. */
#define TRY(x)                                                                                     \
    do {                                                                                           \
        int rc_ = (x);                                                                             \
        if (rc_) return rc_;                                                                       \
    } while (0)

/** Strict UTF-8 (RFC 3629): no overlongs, no surrogates, <= U+10FFFF. Returns the offset of the
 *  first bad byte in s[0..len), or len when valid. */
size_t rtp_gs_utf8_bad_at(const uint8_t *s, size_t len);

/** The object type of a wire tag (after rtp_gs_map_gse_tag), or RTP_GS_UNKNOWN. */
enum rtp_gs_type rtp_gs_type_of_tag(uint64_t tag);

/** Decision D1: a gse-style tag 0x8000+n (n = 0..8) is read as the draft's 128+n, and *gse is
 *  set to true; any other tag is returned unchanged (*gse untouched). */
uint64_t rtp_gs_map_gse_tag(uint64_t tag, bool *gse);

#endif
