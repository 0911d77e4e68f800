/* Weak references to the protocol codecs used by the bench programs.
 *
 * tests/CMakeLists.txt links every bench_*.c with the whole gateway, which holds only the adapter
 * folders selected by -DXRGATE_ADAPTERS (e.g. "synth;vrpn" in a developer's build directory).
 * Declaring the codec functions weak lets the bench programs link in any such build; a missing
 * protocol's functions are then NULL and BENCH_HAVE_<PROTO> is false, and the programs skip what
 * needs it (or refuse the option that asks for it). It includes the codec headers it names
 * (clang refuses `#pragma weak` on a function not declared before it). */
#ifndef XG_BENCH_WEAK_H
#define XG_BENCH_WEAK_H

#include <stddef.h>

#include "adapters/less/less_codec.h"
#include "adapters/rgmp/rgmp_codec.h"
#include "adapters/rtp/gamestate_codec.h"
#include "adapters/rtp/rtp.h"
#include "adapters/synth/synth.h"
#include "adapters/vrpn/vrpn_codec.h"

/* adapters/vrpn */
#pragma weak vrpn_body_decode
#pragma weak vrpn_datagram_next
#pragma weak vrpn_encode_body_message
#pragma weak vrpn_cookie_decode
#pragma weak vrpn_cookie_encode
#pragma weak vrpn_encode_description
#pragma weak vrpn_encode_message
#pragma weak vrpn_encode_udp_description
#pragma weak vrpn_lob_decode
#pragma weak vrpn_lob_encode
#pragma weak vrpn_msg_parse
#pragma weak vrpn_stream_check
#pragma weak vrpn_system_decode
/* adapters/rgmp */
#pragma weak rgmp_data_decode
#pragma weak rgmp_data_stream
#pragma weak rgmp_data_type_format
#pragma weak rgmp_definition_decode
#pragma weak rgmp_definition_to_json
#pragma weak rgmp_definition_add_group
#pragma weak rgmp_definition_add_stream
#pragma weak rgmp_definition_free
#pragma weak rgmp_definition_new
#pragma weak rgmp_encode_data
#pragma weak rgmp_frame_split
#pragma weak rgmp_pose_from_values
#pragma weak rgmp_session_free
#pragma weak rgmp_session_handle
#pragma weak rgmp_session_init
#pragma weak rgmp_value_f64
#pragma weak rgmp_value_i64
#pragma weak rgmp_value_u64
/* adapters/less */
#pragma weak less_arena_init
#pragma weak less_decode_msg
#pragma weak less_encode_msg
#pragma weak less_pose_from_props
#pragma weak less_pose_schema
#pragma weak less_pose_to_props
#pragma weak less_udp_decode
#pragma weak less_udp_encode
#pragma weak less_connection_schema
#pragma weak less_msg_iter_init
#pragma weak less_msg_next
#pragma weak less_tcp_decode
#pragma weak less_tcp_encode
#pragma weak less_tcp_split
/* adapters/rtp */
#pragma weak rtp_decode
#pragma weak rtp_gs_decode_one
#pragma weak rtp_gs_encode_object
#pragma weak rtp_gs_ijk_from_quat
#pragma weak rtp_gs_iter_init
#pragma weak rtp_gs_iter_next
#pragma weak rtp_gs_time1_from_wall_ns
#pragma weak rtp_gs_type_tag
#pragma weak rtp_is_rtcp
#pragma weak rtp_write_header
/* adapters/synth */
#pragma weak xg_synth_pose
#pragma weak xg_synth_velocity

/* One library per adapter folder, linked whole: one symbol tells whether the folder is in. */
#define BENCH_HAVE_VRPN (vrpn_body_decode != NULL)
#define BENCH_HAVE_RGMP (rgmp_frame_split != NULL)
#define BENCH_HAVE_LESS (less_encode_msg != NULL)
#define BENCH_HAVE_RTP (rtp_gs_encode_object != NULL)
#define BENCH_HAVE_SYNTH (xg_synth_pose != NULL)

#endif
