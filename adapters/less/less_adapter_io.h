/* Private to the less adapter: its libevent callbacks (the socket side; less_adapter_priv.h
 * itself includes no libevent header so the session code does not either). */
#ifndef XG_LESS_ADAPTER_IO_H
#define XG_LESS_ADAPTER_IO_H

#include <event2/util.h>

#include "adapters/less/less_adapter_priv.h"

/** Listen mode: a TCP connection was accepted (evconnlistener callback, less_tcp.c). */
void accept_cb(struct evconnlistener *lis, evutil_socket_t fd, struct sockaddr *sa, int salen,
               void *arg);

/** UDP: the socket is readable (less_udp.c); handles up to 64 datagrams. */
void udp_read_cb(evutil_socket_t fd, short what, void *arg);

/** UDP: the periodic timer (less_udp.c): re-sends and keep-alive acks. */
void udp_timer_cb(evutil_socket_t fd, short what, void *arg);

#endif
