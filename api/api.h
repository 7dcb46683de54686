/*
 * api.h - Ember's HTTP server (libmicrohttpd), the HTTP layer only: the
 * debuginfod protocol, CI uploads and artifact listings, the symbolization
 * API, unwind tables, the profile routes, the web UI's files and metrics.
 * docs/http-api.md documents every route.  Every file of api/ speaks
 * libmicrohttpd, but the route table: what is behind the routes is the
 * symbolization service's (symsvc.h), the profile service's (profsvc.h),
 * the debuginfo store's, elf-inspect's and the unwind compiler's; each
 * answer's status comes from an error's kind (api/status.c).  Beside it,
 * OTLP/gRPC's listener (otlp-grpc/, an HTTP/2 server of its own) stores
 * ProfilesService/Export calls into the same profile service through the
 * sink api_server_otlp_sink() gives; `ember serve` wires the two.
 *
 * The server serves one debuginfo store, which it borrows; it makes and
 * frees the symbolization service over it and, with opts->profiles, the
 * profile service.  It owns neither the store nor the environment
 * libdebuginfod reads (DEBUGINFOD_URLS and friends), which `ember serve`
 * sets up before starting it.
 */
#ifndef EMBER_API_H
#define EMBER_API_H

#include "profsvc.h"
#include "store.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct api_server;

#define API_MAX_CONNECTIONS 1024 /* the default of max_connections */
#define API_MAX_PER_CLIENT 64    /* the default of max_per_client */
#define API_HEADER_TIMEOUT 20    /* the default of header_timeout */
#define API_REQUEST_TIMEOUT 60   /* the default of request_timeout */
#define API_MAX_FETCHES 16       /* the default of max_fetches */
#define API_MIN_UPLOAD_RATE 16   /* the default of min_upload_rate */
#define API_MEMORY_LIMIT ((uint64_t)1 << 30) /* the default of memory_limit */
#define API_UPSTREAM_QUOTA ((uint64_t)10 << 30) /* the default of upstream_quota */
#define API_FDS_PER_CONNECTION 2 /* its socket and a file it sends */
#define API_FDS_RESERVED 256     /* the store, RocksDB, libraries */

/* The profile routes of the server (issue 15; docs/http-api.md, "Profiles"). */
struct api_profile_opts {
	size_t sz;			/* sizeof(struct api_profile_opts) */
	const char *ingest_token;	/* also accepted for profile writes; NULL: none */
	/* Every request names its tenant (X-Scope-OrgID; profile_tenant.c);
	 * false: every request is the tenant "anonymous". */
	bool multitenancy;
	/* The profile service behind them (profsvc.h): the store's place,
	 * retention and limits, its files (--limits, --rules, --tokens:
	 * tokens_file needs multitenancy), the --scrape targets, shared block storage
	 * (its context owned by the server from api_server_start on,
	 * whatever its result).  service.dir NULL: no profile routes. */
	struct profsvc_opts service;
};

struct api_server_opts {
	size_t sz;                  /* sizeof(struct api_server_opts) */
	const char *listen_addr;    /* IPv4 or IPv6 literal; NULL: 127.0.0.1 */
	uint16_t port;              /* 0: any free port (api_server_listen says which) */
	const char *token;          /* bearer token uploads must carry */
	uint64_t max_upload;        /* bytes; 0: 4 GiB */
	unsigned max_connections;   /* open connections (a thread each); 0: 1024 */
	bool upstream;              /* ask DEBUGINFOD_URLS servers on a miss */
	unsigned upstream_workers;  /* concurrent upstream fetches; 0: 4 */
	unsigned upstream_miss_ttl; /* seconds a miss is remembered; 0: 600 */
	uint64_t upstream_max_size; /* bytes a fetched file may have; 0: max_upload */
	uint64_t upstream_quota;    /* bytes of fetched files kept (oldest evicted
				       past it; uploads never); 0: 10 GiB */
	uint64_t memory_limit;       /* bytes the server's memory stays under; 0: 1 GiB */
	uint64_t symbol_cache_bytes; /* loaded symbol indexes, part of memory_limit;
					0: half of it */
	unsigned max_per_client;     /* open connections of one client address; 0: 64 */
	unsigned header_timeout;     /* seconds a request head may take (from the
					connection's start or previous answer); 0: 20 */
	unsigned request_timeout;    /* seconds from a request's head to its answer
					(symbolization and profile bodies
					included); 0: 60 */
	int min_upload_rate;         /* KiB a second an upload's body must average
					from 10 s after its head on; 0: 16;
					negative: no minimum */
	unsigned max_fetches;        /* build IDs one symbolization request may have
					fetched from upstream; 0: 16 */
	const struct api_profile_opts *profiles; /* NULL: no profile routes */
};

/*
 * Bind and listen on opts->listen_addr and opts->port (api/listen.c):
 * connections queue from now on, answered once api_server_start() runs
 * on the socket.  *fd is the caller's until given to api_server_start();
 * *port is the port bound.  Returns 0, -EINVAL for a bad address, or -EADDRINUSE / another
 * negative errno.
 */
int api_server_listen(const struct api_server_opts *opts, int *fd, uint16_t *port);

/*
 * Start serving store s (borrowed: it must outlive the server) on
 * listen_fd from api_server_listen(), which the server owns from now on,
 * whatever the result.  On success *out is the caller's, stopped with
 * api_server_stop().  Returns 0 or a negative errno.
 */
int api_server_start(struct store *s, const struct api_server_opts *opts, int listen_fd,
		     struct api_server **out);
/*
 * Stop taking requests: upstream fetches waited on answered -ECANCELED,
 * the HTTP listener stopped with its connections (their requests finished
 * or aborted).  What works through srv from outside it (the OTLP/gRPC
 * listener's calls, api_server_otlp_sink) then ends soon: stop it between
 * this and api_server_stop(), which quiesces first when not done.  NULL
 * is fine.
 */
void api_server_quiesce(struct api_server *srv);
/* Quiesce (when not done), free.  NULL is fine. */
void api_server_stop(struct api_server *srv);

/*
 * The sink of OTLP/gRPC's listener (otlp_grpc.h) storing Export calls as
 * POST /v1development/profiles stores a body (otlp_ingest.c): the profile
 * token, the server's memory budget and a request's share of it, the
 * profile routes' body cap, --request-timeout.  Its ctx is srv, so the
 * listener must be stopped before api_server_stop(srv).  0, or -EINVAL
 * when srv has no profile routes.
 */
/* Read the profile service's files again (SIGHUP; profsvc_reload): the
 * --limits and --rules files' tables every tenant's from now on; a file
 * that cannot be read or parsed changes nothing.  Either way logged.  0
 * (also without them or the profile routes), or the first file's error. */
int api_server_reload(struct api_server *srv);

struct otlp_grpc_sink;
int api_server_otlp_sink(struct api_server *srv, struct otlp_grpc_sink *out);
/* g's answered calls shown in srv's /metrics
 * (ember_otlp_grpc_calls_total{code}); g must stay until
 * api_server_quiesce (it is stopped between that and api_server_stop). */
struct otlp_grpc_server;
void api_server_set_otlp_grpc(struct api_server *srv, const struct otlp_grpc_server *g);

/*
 * The upload token: read from token_file when given, else from
 * DATA/token, else a new random one written to DATA/token (mode 0600).
 * out gets a NUL-terminated token.  *created says a new one was made.
 */
int api_token_setup(const char *data_dir, const char *token_file, char *out,
		    size_t size, bool *created);

#endif /* EMBER_API_H */
