/*
 * tcp_proxy.h - a TCP proxy on loopback for the object store tests: it
 * forwards bytes between the client and the real radosgw unchanged, and
 * injects one network fault when asked, so that the client's retries and
 * checks are tested against the real server (no S3 mock anywhere):
 *   TCP_PROXY_CUT       close a connection once it has carried more than
 *                       arg bytes upstream (a part upload cut mid-body)
 *   TCP_PROXY_FLIP      flip one bit of the byte at downstream offset arg
 *                       of the first connection (a corrupted download)
 *   TCP_PROXY_SLOWDOWN  answer the first request itself with 503 SlowDown
 *                       (throttling), forward the rest
 *   TCP_PROXY_STALL     accept, read, never answer
 * Each fault fires once; tcp_proxy_faults() says whether it did.
 */
#ifndef EMBER_TEST_TCP_PROXY_H
#define EMBER_TEST_TCP_PROXY_H

#include <stdint.h>

enum tcp_proxy_fault {
	TCP_PROXY_NONE = 0,
	TCP_PROXY_CUT,
	TCP_PROXY_FLIP,
	TCP_PROXY_SLOWDOWN,
	TCP_PROXY_STALL,
};

struct tcp_proxy;

/* A proxy to 127.0.0.1:upstream_port on a free loopback port (*port);
 * NULL on failure. */
struct tcp_proxy *tcp_proxy_start(int upstream_port, enum tcp_proxy_fault fault,
				  uint64_t arg, int *port);
/* Faults injected so far (0 or 1). */
unsigned tcp_proxy_faults(struct tcp_proxy *p);
/* Connections accepted so far. */
unsigned tcp_proxy_connections(struct tcp_proxy *p);
void tcp_proxy_stop(struct tcp_proxy *p);

#endif
