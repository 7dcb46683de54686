/*
 * otlp_grpc.h - the OTLP/gRPC listener (`ember serve --otlp-grpc-listen`):
 * the ProfilesService/Export method of the OTLP profiles signal on a
 * cleartext HTTP/2 listener (prior knowledge, as gRPC clients send without
 * TLS), through libnghttp2.  docs/http-api.md, "OTLP/gRPC", is the
 * contract.
 *
 * The listener owns its socket, its connections and their calls, its
 * threads (one polling every socket, workers running the calls); it
 * stores nothing itself: a call whose message is whole goes to a sink its
 * starter gives (struct otlp_grpc_sink: `ember serve` gives one that
 * stores through the HTTP server's profile routes, api_server_otlp_sink),
 * on a worker thread, and the sink's answer is sent back as gRPC says.
 * It knows no HTTP server: what it needs of one is in the sink.
 */
#ifndef EMBER_OTLP_GRPC_H
#define EMBER_OTLP_GRPC_H

#include "common.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define OTLP_GRPC_MAX_CONNECTIONS 256 /* the default of max_connections */

/* gRPC status codes (google.rpc.Code) the OTLP answers carry: OTLP/HTTP's
 * google.rpc.Status, OTLP/gRPC's grpc-status. */
enum otlp_grpc_code {
	OTLP_GRPC_OK = 0,
	OTLP_GRPC_UNKNOWN = 2,
	OTLP_GRPC_INVALID_ARGUMENT = 3,
	OTLP_GRPC_DEADLINE_EXCEEDED = 4,
	OTLP_GRPC_NOT_FOUND = 5,
	OTLP_GRPC_PERMISSION_DENIED = 7,
	OTLP_GRPC_RESOURCE_EXHAUSTED = 8,
	OTLP_GRPC_UNIMPLEMENTED = 12,
	OTLP_GRPC_INTERNAL = 13,
	OTLP_GRPC_UNAVAILABLE = 14,
	OTLP_GRPC_UNAUTHENTICATED = 16,
};

/* One Export call's request, borrowed by the sink for its export call. */
struct otlp_grpc_request {
	const void *body;	  /* the ExportProfilesServiceRequest as sent */
	size_t len;
	const char *encoding;	  /* its compression: "gzip", or NULL for none */
	uint64_t deadline_ms;	  /* ember_monotonic_ms() the answer is due by */
	struct ember_mem_account *acct; /* the call's (body included): its work's memory */
	const char *tenant;	  /* its x-scope-orgid metadata (NULL: none); a value
				     past 151 bytes is cut there */
	const char *token_tenant; /* the tenant its token writes for (sink.auth), or NULL */
};

/* What the sink made of a request. */
struct otlp_grpc_answer {
	int32_t code;	   /* enum otlp_grpc_code: OTLP_GRPC_OK, or the refusal's */
	bool retry;	   /* a refusal asking again may cure (RetryInfo sent) */
	uint64_t rejected; /* OK: profiles not stored (partial_success), or 0 */
	char message[640]; /* a refusal's reason, or OK's first rejection's */
};

/* Where calls go, and the limits of the calls they take. */
struct otlp_grpc_sink {
	/* Whether an authorization value (NULL: none) may write profiles;
	 * a token of one tenant's writes its tenant into tenant (else "",
	 * untouched when false). */
	bool (*auth)(void *ctx, const char *authorization, char *tenant, size_t tenant_size);
	/* Store rq (answer into *a); called on worker threads, at once. */
	void (*export_request)(void *ctx, const struct otlp_grpc_request *rq,
			       struct otlp_grpc_answer *a);
	void *ctx;			 /* borrowed: it must outlive the listener */
	struct ember_mem_budget *budget; /* a call's account draws on it (borrowed) */
	uint64_t share;			 /* at most this a call */
	uint64_t max_message;		 /* bytes of a request message as sent */
	uint64_t request_ms;		 /* a call's deadline after its head */
};

struct otlp_grpc_opts {
	size_t sz;		  /* sizeof(struct otlp_grpc_opts) */
	int listen_fd;		  /* a listening socket, owned from now on,
				     whatever the result */
	unsigned max_connections; /* 0: OTLP_GRPC_MAX_CONNECTIONS */
	unsigned idle_s;	  /* a connection with no call for this long is closed */
};

struct otlp_grpc_server;

/* Serve on o->listen_fd, calls going to sink (copied; its ctx and budget
 * borrowed until otlp_grpc_stop).  0 with *out the caller's, or a
 * negative errno. */
int otlp_grpc_start(const struct otlp_grpc_opts *o, const struct otlp_grpc_sink *sink,
		    struct otlp_grpc_server **out);
/* Stop the socket thread and the workers (calls in flight dropped, the
 * sink's calls finished first), close the socket, free; NULL-safe. */
void otlp_grpc_stop(struct otlp_grpc_server *g);

/* The gRPC status codes (0..16) a call's answer can carry. */
#define OTLP_GRPC_CODES 17
/* The calls g answered so far with code (0..16): OK and every refusal,
 * the listener's own (a bad request, its size, its deadline) and the
 * sink's; a call its client reset or a connection dropped before an
 * answer is in none.  0 for a code past 16 or a NULL g. */
uint64_t otlp_grpc_answered(const struct otlp_grpc_server *g, unsigned code);
/* Code's name as gRPC spells it ("OK", "INVALID_ARGUMENT", ...; code <
 * OTLP_GRPC_CODES). */
const char *otlp_grpc_code_name(unsigned code);

#endif /* EMBER_OTLP_GRPC_H */
