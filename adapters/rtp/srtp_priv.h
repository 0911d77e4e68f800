/* Shared by srtp_key.c and srtp_session.c only (the rtp adapter's SRTP module, srtp_session.h). */
#ifndef XG_RTP_SRTP_PRIV_H
#define XG_RTP_SRTP_PRIV_H

#include <stdbool.h>

#include "adapters/rtp/srtp_session.h"

/** A usable key: its length is the one its suite needs (xg_srtp_key_len). */
bool srtp_key_ok(const struct xg_srtp_key *key);

#endif
