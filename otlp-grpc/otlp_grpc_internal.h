/*
 * otlp_grpc_internal.h - what otlp-grpc/'s files (and the fuzz target)
 * share; otlp_grpc.h is the listener's public side.
 *
 * grpc_session.c: one nghttp2 server session a connection, fed bytes and
 * drained of bytes (no sockets: the fuzz target drives it the same way),
 * each stream a call: its head checked (path, content type, encoding,
 * token, deadline), its one length-prefixed message gathered under the
 * message cap and a memory account, then handed to dispatch; the answer
 * sent back as gRPC says (headers, the message, trailers grpc-status and
 * grpc-message).  grpc_server.c: the listener, the one socket thread
 * polling every connection, their caps and timeouts, and the worker
 * threads that hand what calls sent to the sink (grpc_export.c), so an
 * ingest that fsyncs never stalls another connection.
 *
 * A call is the session's from its stream's first header on; while a
 * worker has it (OTLP_GRPC_QUEUED) the worker alone touches its message
 * and answer, and its stream or connection may go meanwhile: the socket
 * thread then frees it when the worker gives it back.
 */
#ifndef EMBER_OTLP_GRPC_INTERNAL_H
#define EMBER_OTLP_GRPC_INTERNAL_H

#include "otlp_grpc.h"

#include <nghttp2/nghttp2.h>

#define OTLP_GRPC_EXPORT_PATH \
	"/opentelemetry.proto.collector.profiles.v1development.ProfilesService/Export"

/* The limits of one connection (docs/security.md). */
struct otlp_grpc_limits {
	uint64_t max_message;	  /* bytes of a request message as sent */
	unsigned max_streams;	  /* SETTINGS_MAX_CONCURRENT_STREAMS, and calls at work */
	uint32_t max_header_list; /* bytes of a stream's headers (RFC 9113 count) */
	uint64_t request_ms;	  /* a call's deadline after its head */
};

enum otlp_grpc_state {
	OTLP_GRPC_HEAD,	   /* headers arriving */
	OTLP_GRPC_BODY,	   /* its message arriving */
	OTLP_GRPC_QUEUED,   /* a worker's (dispatched) */
	OTLP_GRPC_ANSWERED, /* the answer submitted */
};

struct otlp_grpc_conn;

struct otlp_grpc_call {
	struct otlp_grpc_conn *conn; /* NULL once the connection is gone */
	struct otlp_grpc_call *next; /* the connection's calls */
	struct otlp_grpc_call *qnext; /* the owner's queue and done list */
	int32_t stream_id;
	enum otlp_grpc_state state;
	bool stream_gone;	    /* closed while a worker had it */
	bool path_ok, type_ok, auth_ok, post;
	char encoding[16];	    /* grpc-encoding; "" none */
	/* x-scope-orgid, the tenant ("" none; a longer value is cut to
	 * 151 bytes, which no tenant ID has: refused by the sink) */
	char tenant[152];
	char token_tenant[152];	    /* its token's tenant (sink.auth); "" none */
	uint32_t header_bytes;
	uint64_t deadline_ms;	    /* ember_monotonic_ms() */
	uint8_t prefix[5];	    /* the message's compressed flag and length */
	uint8_t prefix_len;
	struct ember_buf msg;	    /* the message (under acct) */
	struct ember_mem_account acct;
	/* the answer (the worker's while queued) */
	int32_t code;		    /* enum otlp_grpc_code (otlp_grpc.h) */
	bool retry;		    /* a retryable refusal: RetryInfo sent */
	char message[640];
	struct ember_buf reply;	    /* code OK: the length-prefixed response */
	size_t reply_off;
};

/* A connection's session and what it needs of its owner. */
struct otlp_grpc_conn {
	nghttp2_session *session;
	const struct otlp_grpc_limits *lim;
	struct ember_mem_budget *budget; /* a call's account draws on it */
	uint64_t share;			 /* at most this a call */
	/* Whether an authorization value (NULL: none) may write profiles,
	 * and the tenant of its token (otlp_grpc_sink.auth). */
	bool (*auth)(void *arg, const char *authorization, char *tenant, size_t tenant_size);
	/* A call whose message is whole, now the owner's (state QUEUED):
	 * answered later through otlp_grpc_call_done. */
	void (*dispatch)(void *arg, struct otlp_grpc_call *call);
	void *arg;
	/* the owner's count of calls answered, by grpc-status code */
	_Atomic uint64_t *answered;
	struct otlp_grpc_call *calls; /* every call of the connection */
	unsigned working;	     /* calls dispatched, not yet back */
	uint64_t quiet_since_ms;     /* no call since (0: one is open) */
};

/* ---- the session (grpc_session.c) ---------------------------------------- */

/* c's session made (c's other fields set by the caller), its SETTINGS
 * queued: 0 or -ENOMEM. */
int otlp_grpc_conn_init(struct otlp_grpc_conn *c);
/* End c: its calls freed, but those a worker has (conn set NULL: the
 * owner frees them when they come back); NULL-safe. */
void otlp_grpc_conn_release(struct otlp_grpc_conn *c);
/* Bytes from the client: 0, or a negative errno (close the connection). */
int otlp_grpc_conn_recv(struct otlp_grpc_conn *c, const void *data, size_t len);
/* The next bytes for the client into out (appended): 0 or a negative
 * errno (close). */
int otlp_grpc_conn_send(struct otlp_grpc_conn *c, struct ember_buf *out);
/* Whether the session is over (GOAWAY both ways, or an error). */
bool otlp_grpc_conn_over(const struct otlp_grpc_conn *c);
/* Calls past their deadline at now_ms answered DEADLINE_EXCEEDED;
 * -ETIMEDOUT when one's head is still arriving (close the connection). */
int otlp_grpc_conn_expire(struct otlp_grpc_conn *c, uint64_t now_ms);
/* The answer of a call the owner had (code, message, reply set): sent on
 * its stream, or the call freed when its stream or connection is gone. */
void otlp_grpc_call_done(struct otlp_grpc_call *call);
/* Free a call (its message, account and reply). */
void otlp_grpc_call_free(struct otlp_grpc_call *call);

/* ---- the call's work (grpc_export.c) -------------------------------------- */

/* Hand call's message to sink (past its deadline already: refused
 * DEADLINE_EXCEEDED) and set its answer: the response message, or the
 * refusal. */
void otlp_grpc_export(const struct otlp_grpc_sink *sink, struct otlp_grpc_call *call);

#endif /* EMBER_OTLP_GRPC_INTERNAL_H */
