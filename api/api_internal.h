/*
 * api_internal.h - shared between the files of api/ only.
 */
#ifndef EMBER_API_INTERNAL_H
#define EMBER_API_INTERNAL_H

#include "api.h"
#include "store.h"

#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* ---- routing (route.c) ---------------------------------------------------- */

enum api_endpoint {
	API_EP_OTHER = 0,   /* unrecognized */
	API_EP_ROOT,        /* GET /: the web UI's page */
	API_EP_HEALTH,      /* GET /healthz */
	API_EP_METRICS,     /* GET /metrics */
	API_EP_DEBUGINFO,   /* GET /buildid/ID/debuginfo */
	API_EP_EXECUTABLE,  /* GET /buildid/ID/executable */
	API_EP_SOURCE,      /* GET /buildid/ID/source/PATH */
	API_EP_SECTION,     /* GET /buildid/ID/section/NAME */
	API_EP_LIST,        /* GET /api/v1/artifacts/ID */
	API_EP_UPLOAD,      /* PUT /api/v1/artifacts/ID/KIND */
	API_EP_UNWIND,      /* GET /api/v1/unwind/ID */
	API_EP_SYMBOLIZE,   /* POST /api/v1/symbolize */
	API_EP_SYMBOLIZE_PPROF, /* POST /api/v1/symbolize/pprof */
	API_EP_LIST_ALL,    /* GET /api/v1/artifacts: every build ID, a page */
	API_EP_WEB,         /* GET /js/..., /ember.css: the web UI's files */
	/* The profile routes (api_profiles.h, profile_routes.c). */
	API_EP_PROFILE_INGEST,  /* POST /api/v1/profiles */
	API_EP_PYROSCOPE_INGEST, /* POST /ingest */
	API_EP_OTLP_PROFILES,   /* POST /v1development/profiles (OTLP/HTTP) */
	API_EP_PROFILE_QUERY,   /* GET /api/v1/query */
	API_EP_PROFILE_DIFF,    /* GET /api/v1/diff */
	API_EP_PROFILE_LABELS,  /* GET /api/v1/labels, /api/v1/labels/NAME/values */
	API_EP_PROFILE_TYPES,   /* GET /api/v1/profile-types */
	API_EP_PROFILE_SERIES,  /* GET /api/v1/series */
	API_EP_PYROSCOPE_RENDER, /* GET /pyroscope/render */
	API_EP_PYROSCOPE_RENDER_DIFF, /* GET /pyroscope/render-diff */
	API_EP_PYROSCOPE_LABELS, /* GET /pyroscope/labels */
	API_EP_PYROSCOPE_LABEL_VALUES, /* GET /pyroscope/label-values */
	API_EP_PROFILE_COVERAGE, /* GET /api/v1/coverage */
	API_EP_TENANT_USAGE,    /* GET /api/v1/tenants/TENANT/usage */
	API_EP_PROFILE_SOURCE,  /* GET /api/v1/source */
	API_EP_PROFILE_DIFF_SOURCE, /* GET /api/v1/diff/source */
	API_EP_CONNECT,         /* POST /querier.v1.QuerierService/METHOD */
	API_EP_COUNT
};

enum api_upload_kind {
	API_UPLOAD_DEBUGINFO = 1,
	API_UPLOAD_EXECUTABLE,
	API_UPLOAD_SOURCES,
};

/* A parsed request path.  Pointers point into the url given to
 * api_route_parse() except `path`, which is a canonicalized copy. */
struct api_route {
	enum api_endpoint ep;
	int status;                 /* 0, or the error status to answer */
	const char *error;          /* body for that status */
	char build_id[2 * EMBER_BUILD_ID_MAX + 1];
	enum api_upload_kind kind;  /* API_EP_UPLOAD */
	char path[4096];            /* source path or section name */
};

/*
 * Parse url (already percent-decoded by MHD) into r.  Errors follow the
 * debuginfod server: 503 for malformed build IDs, artifact types and
 * unknown paths, 404 for well-formed IDs too long to be stored.
 */
void api_route_parse(const char *url, struct api_route *r);
const char *api_endpoint_name(enum api_endpoint ep);

/* ---- metrics (metrics.c) -------------------------------------------------- */

#define API_STATUS_SLOTS 16

enum api_reject {
	API_REJECT_AUTH,
	API_REJECT_TOO_LARGE,
	API_REJECT_NOT_ELF,
	API_REJECT_BUILD_ID,
	API_REJECT_BAD_ELF,
	API_REJECT_NO_SPACE,
	API_REJECT_ABORTED,
	API_REJECT_OTHER,
	API_REJECT_STORE,	/* the store could not be read or written: 503 */
	API_REJECT_COUNT
};

struct api_metrics {
	_Atomic uint64_t responses[API_EP_COUNT][API_STATUS_SLOTS];
	_Atomic uint64_t bytes_served[API_EP_COUNT];
	_Atomic uint64_t store_errors[API_EP_COUNT]; /* answered 503: the store failed */
	_Atomic uint64_t uploads_accepted;
	_Atomic uint64_t uploads_duplicate;
	_Atomic uint64_t uploads_rejected[API_REJECT_COUNT];
	_Atomic uint64_t upstream_hits;
	_Atomic uint64_t upstream_misses;
	_Atomic uint64_t upstream_errors;
	_Atomic uint64_t upstream_negative_cached;
	_Atomic uint64_t connections_timed_out;	/* head or body not sent in time */
	_Atomic uint64_t unwind_failures_cached; /* answered from a remembered rejection */
	_Atomic uint64_t requests_timed_out;	/* past --request-timeout */
	_Atomic uint64_t requests_cancelled;	/* the client went away */
	/* the OTLP/gRPC listener whose answered calls /metrics shows, or NULL
	 * (api_server_set_otlp_grpc) */
	_Atomic(const struct otlp_grpc_server *) grpc;
};

void api_metrics_count(struct api_metrics *m, enum api_endpoint ep,
		       unsigned status, uint64_t bytes);
void api_metrics_reject(struct api_metrics *m, enum api_reject why);
/* A request of ep (a module of a symbolization batch) failed because the
 * store could not be read or written. */
void api_metrics_store_error(struct api_metrics *m, enum api_endpoint ep);
/* Prometheus text exposition into a malloc'd string (caller frees). */
struct symsvc;
char *api_metrics_render(struct api_metrics *m, struct store *s, struct symsvc *svc,
			 size_t *len);
struct api_server;
struct api_request;
/* GET /metrics: the server's lines, then the profile service's. */
enum MHD_Result api_metrics_serve(struct api_server *srv, struct MHD_Connection *c,
				  struct api_request *req);

/* ---- connection deadlines (conn_guard.c) ---------------------------------- */

struct api_conn;

/* The deadlines of every open connection, and the thread that enforces
 * them by shutting a late connection's socket down. */
struct api_guard {
	pthread_mutex_t mu;
	pthread_cond_t cv;		/* a deadline moved, or stopping */
	pthread_t thread;
	bool running, stopping;
	struct api_conn *conns;		/* open connections (under mu) */
	uint64_t wake_ms;		/* when the thread wakes by itself; 0: never */
	uint64_t header_ms;		/* a request head is due within this */
	uint64_t min_rate;		/* bytes a second an upload averages; 0: any */
	_Atomic uint64_t *timed_out;	/* connections shut down: a metric */
};

/* An upload's body is measured against the minimum rate from this long
 * after its head: a slow start (a client still reading its file) is fine. */
#define API_GUARD_RATE_GRACE_MS 10000

int api_guard_start(struct api_guard *g, unsigned header_timeout_s, unsigned min_rate_kib,
		    _Atomic uint64_t *timed_out);
void api_guard_stop(struct api_guard *g);
/* MHD_OPTION_NOTIFY_CONNECTION's callback (cls: the server). */
void api_guard_notify(void *cls, struct MHD_Connection *mc, void **socket_context,
		      enum MHD_ConnectionNotificationCode code);
/* The request's body is due by at_ms (ember_monotonic_ms()). */
void api_guard_body_due(struct api_guard *g, struct MHD_Connection *mc, uint64_t at_ms);
/* When an upload whose body started at start_ms (ember_monotonic_ms())
 * and has received bytes falls under the minimum rate: start_ms plus the
 * grace or the time those bytes allow at that rate, whichever is later;
 * 0 without a minimum.  Passed to api_guard_body_due(). */
uint64_t api_guard_rate_due(const struct api_guard *g, uint64_t start_ms, uint64_t received);
/* The server works on the request or sends its answer: no deadline. */
void api_guard_working(struct api_guard *g, struct MHD_Connection *mc);
/* Answered: the next request's head is due within the header timeout. */
void api_guard_next_head(struct api_guard *g, struct MHD_Connection *mc);

/* ---- the server ------------------------------------------------------------ */

struct api_upstream;

struct api_server {
	struct MHD_Daemon *daemon;
	struct store *store;
	struct api_metrics metrics;
	struct api_upstream *upstream;    /* NULL without upstream servers */
	struct symsvc *symbols;           /* the symbolization service */
	struct api_profiles *profiles;    /* the profile store (api_profiles.h) or NULL */
	char token[128];
	pthread_mutex_t unwind_mu;        /* one unwind compile at a time */
	struct ember_errcache *unwind_failed; /* rejected inputs, with the reason
						 (under unwind_mu) */
	uint64_t max_upload;
	uint64_t request_timeout_ms;      /* a request's deadline after its head */
	struct ember_mem_budget mem;      /* requests' and builds' memory (docs/security.md) */
	uint64_t request_share;           /* what one request may take of it */
	unsigned max_fetches;             /* upstream build IDs one request may ask */
	struct api_guard guard;
};

struct symjson_parser;

/* Per-request state, from the first callback to MHD's completion. */
struct api_request {
	struct api_route route;
	bool head;                   /* HEAD: headers only */
	bool upload_started;
	struct ember_buf body;       /* a symbolize request's body (capped) */
	struct store_blob *blob;     /* upload being received */
	uint64_t received;
	int upload_err;              /* first failure while receiving */
	enum api_reject reject;
	uint64_t deadline_ms;        /* ember_monotonic_ms() the answer is due by */
	int conn_fd;                 /* the client's socket, to see it close */
	struct ember_mem_account *acct; /* what its work may take of the server's
					   budget (symbolization); handed over to
					   a streamed answer */
	struct symjson_parser *parser;  /* a JSON body being parsed */
	int body_err;                /* the first failure taking the body */
	bool body_drop;              /* refused by its head: the body only read
					(counted in received, under body's cap),
					the refusal answered once it is whole */
	uint64_t body_start_ms;      /* an upload's first call (its rate counts from it) */
	uint64_t body_due_ms;        /* the guard's deadline for its body; 0: none */
	struct profsvc *profiles;    /* a profile route's: its tenant's service
					once known, held (profsvc_tenant) until
					the request completes */
};

/* ---- a request's deadline (deadline.c) ------------------------------------- */

struct symsvc_request_opts;

/* What the check of a request's work reads; copied out of the request,
 * so an answer streamed after it may hold it. */
struct api_deadline {
	uint64_t at_ms;			/* ember_monotonic_ms() */
	int fd;				/* the client's socket */
	struct api_metrics *metrics;
	int stopped;			/* the verdict, once given */
};

void api_deadline_init(struct api_deadline *d, struct api_server *srv,
		       const struct api_request *req);
/* A symsvc_check_fn on a struct api_deadline: 0, -ETIMEDOUT past it, or
 * -ECANCELED when the client's socket closed (each counted). */
int api_deadline_check(void *arg);
/* The symbolization service's request options: d's check, the server's
 * cap on upstream fetches.  d must outlive the work. */
void api_deadline_request_opts(struct api_server *srv, struct api_deadline *d,
			       struct symsvc_request_opts *ro);
/* The answer to work stopped by the check (err): 504 past the deadline;
 * for a client gone, none (MHD_NO closes the connection). */
enum MHD_Result api_respond_stopped(struct api_server *srv, struct MHD_Connection *c,
				    const struct api_request *req, int err);

/* ---- responses (respond.c) ------------------------------------------------- */

/* Queue a text/plain (or given type) response with status; counts it. */
enum MHD_Result api_respond_text(struct api_server *srv, struct MHD_Connection *c,
				 const struct api_request *req, unsigned status,
				 const char *type, const char *body);
/* The same with a body the response takes ownership of (malloc'd). */
enum MHD_Result api_respond_owned(struct api_server *srv, struct MHD_Connection *c,
				  const struct api_request *req, unsigned status,
				  const char *type, char *body, size_t len);

/*
 * The answer of a route that built JSON o (taken) or failed with err:
 * 200 application/json, or 503 "store unavailable" for a store error;
 * -ENOMEM (and a failure to serialize) drops the connection.
 */
struct json_t;
enum MHD_Result api_respond_json_or(struct api_server *srv, struct MHD_Connection *c,
				    const struct api_request *req, int err, struct json_t *o);

/* 503 with Retry-After: what is asked for may be there, ask again. */
#define API_RETRY_AFTER_S "5"
enum MHD_Result api_respond_retry(struct api_server *srv, struct MHD_Connection *c,
				  const struct api_request *req, const char *body);
/*
 * A store that cannot answer (err: its negative errno) is never "not
 * found", which debuginfod clients cache: 503 "store unavailable: REASON"
 * with Retry-After, counted in ember_store_errors_total.  The _msg form
 * takes the reason.
 */
enum MHD_Result api_respond_unavailable(struct api_server *srv, struct MHD_Connection *c,
					const struct api_request *req, int err);
enum MHD_Result api_respond_unavailable_msg(struct api_server *srv,
					    struct MHD_Connection *c,
					    const struct api_request *req, const char *why);
/*
 * The answer to an error of this kind: api_status_of_kind(kind) with
 * body; EMBER_ERRK_UNAVAILABLE as api_respond_unavailable_msg() ("store
 * unavailable: body", counted), EMBER_ERRK_BUSY with Retry-After.
 */
enum MHD_Result api_respond_kind(struct api_server *srv, struct MHD_Connection *c,
				 const struct api_request *req, enum ember_errkind kind,
				 const char *body);
/* ---- statuses from error kinds (status.c) ------------------------------------ */

/* The status answering an error of this kind: the one table
 * (docs/http-api.md); no message text takes part. */
unsigned api_status_of_kind(enum ember_errkind kind);

/* ---- debuginfod GET endpoints (debuginfod.c) -------------------------------- */

/* Answer /buildid/... from the store.  When the store has nothing for the
 * request, *missing is set and no response is queued: the caller answers
 * 404 or asks upstream.  Returns MHD_NO only on a dead connection. */
enum MHD_Result api_serve_buildid(struct api_server *srv, struct MHD_Connection *c,
				  struct api_request *req, bool *missing);

/* Send a stored blob (ETag, Range, 304, MAXSIZE as for debuginfod). */
enum MHD_Result api_serve_stored(struct api_server *srv, struct MHD_Connection *c,
				 const struct api_request *req,
				 const struct store_artifact *a);
/* GET /api/v1/unwind/ID (unwind.c). */
enum MHD_Result api_serve_unwind(struct api_server *srv, struct MHD_Connection *c,
				 struct api_request *req);
/* The kind an error of finding or compiling a table is answered with,
 * from its code alone: the compiler's (unwind_error_kind()) rejections
 * and a busy budget keep theirs; any other failure is the store's or its
 * files': EMBER_ERRK_UNAVAILABLE. */
enum ember_errkind api_unwind_error_kind(int err);

/* POST /api/v1/symbolize once req->body is complete (symbolize.c). */
enum MHD_Result api_symbolize_json(struct api_server *srv, struct MHD_Connection *c,
				   struct api_request *req);
/* POST /api/v1/symbolize/pprof (symbolize_pprof.c). */
enum MHD_Result api_symbolize_pprof(struct api_server *srv, struct MHD_Connection *c,
				    struct api_request *req);
/* The kind an error of symbolizing or re-encoding a profile (not a
 * mapping's store error) is answered with, from its code alone
 * (symsvc_error_kind()): the request's memory share EMBER_ERRK_TOO_LARGE,
 * a budget taken EMBER_ERRK_BUSY, the deadline EMBER_ERRK_TIMEOUT, any
 * other failure EMBER_ERRK_INTERNAL. */
enum ember_errkind api_symbolize_pprof_error_kind(int err);
/* The kind of a mapping's store error (symsvc_pprof_stats.store_err): a
 * budget taken EMBER_ERRK_BUSY, else EMBER_ERRK_UNAVAILABLE (a profile
 * with mappings left unsymbolized is never passed off as complete). */
enum ember_errkind api_symbolize_pprof_store_kind(int store_err);
/* Read a POST body: JSON through req->parser, pprof into req->body, both
 * under req->acct; a declared length over the cap is answered 413 here
 * (body_step.c).  A failure while reading is kept in req->body_err. */
enum MHD_Result api_body_step(struct api_server *srv, struct MHD_Connection *c,
			      struct api_request *req, const char *data, size_t *size,
			      bool *complete);
/* Give back all a request's account took, and free it.  NULL is fine. */
void api_account_free(struct ember_mem_account *a);
/* req->acct made: an account of the server's budget, at most a request's
 * share (freed when the request completes).  0 or -ENOMEM. */
int api_request_account(struct api_server *srv, struct api_request *req);
/* A chunk of a kept body into req->body (JSON: req->parser); after a
 * failure only read; with req->body_drop only read and counted (past the
 * buffer's cap: -EFBIG).  The first failure is kept in req->body_err: the
 * account's (-E2BIG past the share, -EAGAIN the budget taken, answered
 * once the body is whole), or -EFBIG past the buffer's cap itself (the
 * caller closes the connection). */
void api_body_take(struct api_request *req, const char *data, size_t size);
/* The answer to a body that could not be taken (err): 503 with
 * Retry-After for -EAGAIN (the memory budget is taken by others), 413 for
 * -E2BIG, 500 for -ENOMEM, else 400; why says what. */
enum MHD_Result api_respond_body_error(struct api_server *srv, struct MHD_Connection *c,
				       const struct api_request *req, int err, const char *why);
/* Its kind, from the code alone: -EAGAIN busy, -ENOMEM internal, -E2BIG
 * too large, any other malformed. */
enum ember_errkind api_body_error_kind(int err);

/* ---- uploads (artifact_upload.c, artifact_ingest.c) ------------------------------------------ */

enum MHD_Result api_upload_step(struct api_server *srv, struct MHD_Connection *c,
				struct api_request *req, const char *data,
				size_t *size);
void api_upload_abort(struct api_server *srv, struct api_request *req);
enum MHD_Result api_serve_list(struct api_server *srv, struct MHD_Connection *c,
			       struct api_request *req);
/* Append a's JSON (as GET /api/v1/artifacts/ID lists it) to the array
 * arg: 0 or -ENOMEM (artifact_list.c). */
int api_list_add_candidate(const struct store_artifact *a, void *arg);
/* GET /api/v1/artifacts: every build ID, a page at a time (list_all.c). */
enum MHD_Result api_serve_list_all(struct api_server *srv, struct MHD_Connection *c,
				   struct api_request *req);

/* ---- the web UI (web.c) ------------------------------------------------------ */

/* Whether url names one of the web UI's files (web_assets.h). */
bool api_web_path(const char *url);
/* GET/HEAD of a web UI file (url: "/" is the page): 200 or 304 with its
 * ETag, 404 for no such file. */
enum MHD_Result api_serve_web(struct api_server *srv, struct MHD_Connection *c,
			      struct api_request *req, const char *url);

/* The outcome of validating and storing one sealed blob. */
struct api_ingest_result {
	unsigned status;             /* HTTP status to answer */
	enum api_reject reject;      /* when status >= 400 */
	char message[512];           /* reason, or JSON body on success */
	bool is_new;
	int err;                     /* when status >= 400: the negative errno of
					a failure on our side (store, disk), or
					-EINVAL for a file rejected for what it is */
};

/* A validation's turn at the memory budget (artifact_ingest.c): 0, or -EAGAIN when
 * none came by deadline_ms; every 0 is followed by api_validation_end(). */
int api_validation_begin(struct api_server *srv, uint64_t deadline_ms);
void api_validation_end(struct api_server *srv);

/* Validate the sealed blob as an ELF artifact for build_id and store it
 * (consumes b).  kinds: enum store_kind bits; name: X-DEBUGINFOD-FILE. */
void api_ingest_artifact(struct store *s, struct store_blob *b,
			 const char *build_id, unsigned kinds, const char *name,
			 unsigned origin, struct api_ingest_result *res);
/* Unpack a received tar of sources for build_id, storing at most
 * max_bytes unpacked (consumes b). */
void api_ingest_sources(struct store *s, struct store_blob *b,
			const char *build_id, uint64_t max_bytes,
			struct api_ingest_result *res);
/* The kind a failure to unpack and store a tar of sources is answered
 * with (source_archive.c): -E2BIG (over the cap) EMBER_ERRK_TOO_LARGE,
 * -EINVAL (not a tar we read) EMBER_ERRK_UNPROCESSABLE, any other errno
 * (ours) ember_errkind_of_errno(). */
enum ember_errkind api_sources_error_kind(int err);
/* Store a file fetched from upstream (fd stays the caller's): 0, -EINVAL
 * when the file is rejected (logged), or the store's error. */
int api_ingest_fd(struct store *s, int fd, const char *build_id, unsigned kinds,
		  const char *name);
/* Store a source file fetched from upstream for a named path. */
int api_ingest_source_fd(struct store *s, int fd, const char *build_id,
			 const char *path);

/* ---- upstream (federation.c) ---------------------------------------------------- */

struct symsvc_request_opts;

int api_upstream_new(unsigned workers, unsigned miss_ttl_s, uint64_t max_size,
		     uint64_t quota, struct api_upstream **out);
void api_upstream_shutdown(struct api_upstream *u);
void api_upstream_free(struct api_upstream *u);
/*
 * Fetch the file of build_id that want names (debug file or executable)
 * from upstream through the fetch pool (joining a fetch of it in flight),
 * validate and store it, remembered in the miss cache like a debuginfod
 * request's: the symbolization service's upstream fetch (a
 * symsvc_fetch_fn; arg is the server).  0 when it is stored; -ENOENT
 * when no server has it (or that was learnt within the miss TTL);
 * -ENOSYS without upstream; -EHOSTUNREACH when upstream failed (or that
 * was learnt), -ECANCELED when the server stops; -ETIMEDOUT at ro's
 * deadline_ms, or the error of its check (polled), the fetch going on;
 * any other negative errno is the store's: what arrived could not be
 * stored.  ro may be NULL.
 */
int api_upstream_fetch(void *arg, const char *build_id, enum store_want want,
		       const struct symsvc_request_opts *ro);
/*
 * Start (or join) the fetch for req's route and wait, on c's own thread,
 * until it ends.  0: it ended and the file is in the store; -ENOENT: no
 * upstream has it (now, or learnt within the miss TTL), or the
 * X-Forwarded-For hop limit is reached; -EHOSTUNREACH: upstream failed
 * (now or within the TTL); -ECANCELED: the server is stopping;
 * -ETIMEDOUT: the request's deadline came first (the fetch goes on); any
 * other negative errno: what arrived could not be stored (the store's
 * error).
 */
int api_upstream_wait(struct api_server *srv, struct MHD_Connection *c,
		      const struct api_request *req);
/*
 * The kind a debuginfod GET answers api_upstream_wait()'s err with, the
 * store still lacking the file, from the code alone: 0 and -ENOENT
 * EMBER_ERRK_NOT_FOUND, -ETIMEDOUT EMBER_ERRK_TIMEOUT, -EHOSTUNREACH
 * (upstream failed) and -ECANCELED (the server stops) EMBER_ERRK_BUSY
 * (ask again), any other (the store's) EMBER_ERRK_UNAVAILABLE: a GET is
 * never answered 507.
 */
enum ember_errkind api_upstream_error_kind(int err);

/* ---- auth (auth.c) ---------------------------------------------------------------- */

/* Whether the request carries "Authorization: Bearer <token>". */
bool api_auth_ok(const struct api_server *srv, struct MHD_Connection *c);

#endif /* EMBER_API_INTERNAL_H */
