/*
 * api_profiles.h - the profile routes of the server (issue 15), shared
 * between api/'s profile_*.c and pyroscope_ingest.c only: the HTTP side
 * of POST /api/v1/profiles, Pyroscope's POST /ingest, the query,
 * discovery, series, diff and coverage routes.  docs/http-api.md,
 * "Profiles", is the contract.
 *
 * Everything behind the HTTP requests is the profile service's
 * (profile-service/profsvc.h): the store's start and stop, ingest, the
 * query-time resolver, the scraper and every answer's body.  These files
 * read requests (parameters, headers, bodies through libmicrohttpd), call
 * the service, and send what it answers with a status chosen from its
 * error (api_profile_error).
 */
#ifndef EMBER_API_PROFILES_H
#define EMBER_API_PROFILES_H

#include "api_internal.h"
#include "profsvc.h"
#include "symsvc.h"

/* The profile routes' state in the server. */
#define API_TOKEN_MAX EMBER_TOKEN_MAX	/* a token's bytes and its NUL */

struct api_profiles {
	struct profsvc *svc;
	char ingest_token[API_TOKEN_MAX]; /* "" when none */
	uint64_t max_body;		/* bytes of a profile as received */
	bool multitenancy;		/* X-Scope-OrgID names each request's tenant */
};

/* ---- the tenant (profile_tenant.c) ------------------------------------------- */

struct api_profile_ctx;

/* The service of req's tenant; before it is known (a refusal of its
 * head), the server's (the tenant anonymous's), which counts it. */
static inline struct profsvc *api_profile_svc(const struct api_server *srv,
					      const struct api_request *req)
{
	return req->profiles ? req->profiles : srv->profiles->svc;
}

#define API_TENANT_HEADER "X-Scope-OrgID"
/* The service of tenant id (NULL or "": none given; read only with
 * --multitenancy, else the tenant is "anonymous") into *out, held
 * (profsvc_tenant_put; a write's store made, a read's not: PROFSVC_TENANT_CREATE); a write with a tenant's token (token_tenant, else
 * NULL) is that tenant's, id given or not.  0, or a refusal: -EACCES
 * (none given: 401), -EINVAL (not a tenant ID: 400), -EPERM (a tenant's
 * token for another tenant: 403), -EUSERS (a new tenant past
 * --max-tenants: 429), the tenant store's open error (its status), with
 * *status and msg set for the sender. */
int api_profile_tenant(struct api_server *srv, const char *id, const char *token_tenant,
		       bool write, struct profsvc **out, unsigned *status, char *msg,
		       size_t msg_size);
/* The tenant of req's header into req->profiles (token_tenant as for
 * api_profile_tenant; a read's NULL); or, req->profiles left NULL, the
 * refusal answered (the returned result) and req->upload_err set, so a
 * write's body is not read; a write's (write) counted as a reject. */
enum MHD_Result api_profile_tenant_of(struct api_server *srv, struct MHD_Connection *c,
				      struct api_request *req, const char *token_tenant,
				      bool write);

/* A write of req's body (whole) admitted by its tenant's ingest rate
 * (profsvc_ingest_admit): MHD_YES with *admitted set, or the refusal
 * answered (429 with Retry-After; a write that never fits its burst,
 * without). */
enum MHD_Result api_profile_admit(struct api_server *srv, struct MHD_Connection *c,
				  struct api_request *req, bool *admitted);

/* GET /api/v1/tenants/TENANT/usage (TENANT in req->route.path): the
 * usage of the request's tenant, which it must name (403 for another
 * with --multitenancy; without, 404 for a tenant but anonymous). */
enum MHD_Result api_tenant_usage(struct api_server *srv, struct MHD_Connection *c,
				 struct api_request *req, const struct api_profile_ctx *x);

/* ---- lifecycle (profile_routes.c) ------------------------------------------- */

/* Start the profile service (o->dir) into srv->profiles; o NULL: no
 * profile routes.  0 or a negative errno, logged with the reason. */
int api_profiles_start(struct api_server *srv, const struct api_profile_opts *o);
/* Stop the service (NULL-safe). */
void api_profiles_stop(struct api_server *srv);
/* The debug info of build_id was stored (an upload, a fetch). */
void api_profiles_symbols_arrived(struct api_server *srv, const char *build_id);

/* ---- a request's context (profile_routes.c) ----------------------------------- */

/*
 * The one request context of every profile route, as the symbolization
 * routes have it: the deadline (--request-timeout from the request's
 * head) and the client-gone check (deadline.c: each stop counted in
 * ember_requests_stopped_total), the server's cap on upstream fetches
 * (--upstream-fetches-per-request) and the request's memory account
 * (req->acct: the request's share of --memory-limit-mb), all in ro, the
 * symbolization service's request options, which the profile service's
 * answers take (profsvc.h) and pass down to the store (the check, the
 * account: pstore_request) and to the query-time resolver (the check, the
 * cap).  Built once by api_profile_next when the request is whole, before
 * its route runs; the routes only pass it on.  A write route takes it the
 * same way once its body is whole: its body's account (req->acct, when
 * it made one) is kept.
 */
struct api_profile_ctx {
	struct profsvc *svc;		/* the request's tenant's (req->profiles) */
	struct api_deadline deadline;	/* what ro's check reads */
	struct symsvc_request_opts ro;
};

/* x for req: 0, or -ENOMEM (no account could be made). */
int api_profile_ctx_init(struct api_profile_ctx *x, struct api_server *srv,
			 struct api_request *req);
/* A read's answer a (its body taken), or the error err of making it: the
 * check's stop (504, or nothing for a client gone: api_respond_stopped),
 * the request's memory share (413) or the server's budget (503 with
 * Retry-After), else api_profile_error(err, why).  headers as for
 * api_profile_ok. */
enum MHD_Result api_profile_answer(struct api_server *srv, struct MHD_Connection *c,
				   const struct api_request *req,
				   const struct api_profile_ctx *x, int err,
				   struct profsvc_answer *a, const char *const *headers,
				   const char *why);

/* ---- routing (profile_routes.c) --------------------------------------------- */

/* Whether ep is one of the profile routes. */
bool api_profile_endpoint(enum api_endpoint ep);
/* Set r for a profile route's path (the NAME of /labels/NAME/values in
 * r->path); false when url is none of them. */
bool api_profile_route_parse(const char *url, struct api_route *r);
/* The first call of a request to a profile route (headers only). */
enum MHD_Result api_profile_first(struct api_server *srv, struct MHD_Connection *c,
				  struct api_request *req, const char *method);
/* Every later call: body pieces, then the answer. */
enum MHD_Result api_profile_next(struct api_server *srv, struct MHD_Connection *c,
				 struct api_request *req, const char *data, size_t *size);

/* The body of req read from now on under the profile limit and the
 * request's memory account.  0 or -ENOMEM. */
int api_profile_body_begin(struct api_server *srv, struct api_request *req);

/* ---- Pyroscope's query API over Connect (connect.c) ---------------------- */

struct Types__V1__StackTraceSelector;
struct Querier__V1__Level;
struct api_links;
struct api_focus;

/* Whether url is /querier.v1.QuerierService/METHOD: r set (METHOD in
 * r->path, "" when too long). */
bool api_connect_route_parse(const char *url, struct api_route *r);
/* The first call (headers only): method, Content-Type, encoding, size. */
enum MHD_Result api_connect_first(struct api_server *srv, struct MHD_Connection *c,
				  struct api_request *req, const char *method);
/* The answer once the body is whole. */
enum MHD_Result api_connect_answer(struct api_server *srv, struct MHD_Connection *c,
				   struct api_request *req);
/* Connect's error body {"code":..,"message":msg} for an HTTP status
 * status into b (initialized here; the caller frees b->data), and the
 * status its code maps to into *out_status.  0 or -ENOMEM. */
int api_connect_error_body(unsigned status, const char *msg, struct ember_buf *b,
			   unsigned *out_status);

/* The selection of matchers (at most one, Ember's selector: the discovery
 * methods take the union of several, one selection each) between start and
 * end (milliseconds; 0: the last hour up to now); why set on an error. */
int api_connect_selection(size_t n, char **matchers, int64_t start, int64_t end,
			  struct pstore_selection *sel, const char **why);
/* The message m as the answer, in the request's codec (application/proto
 * packed, or application/json in proto3's JSON mapping). */
enum MHD_Result api_connect_reply(struct api_server *srv, struct MHD_Connection *c,
				  const struct api_request *req,
				  const struct ProtobufCMessage *m);
/* The same of a message of md already packed (packed taken): its bytes
 * as they are for application/proto, unpacked and written as JSON for
 * application/json. */
enum MHD_Result api_connect_reply_packed(struct api_server *srv, struct MHD_Connection *c,
					 const struct api_request *req,
					 const struct ProtobufCMessageDescriptor *md,
					 struct ember_buf *packed);
/* SelectMergeStacktraces and SelectMergeProfile (connect_select.c): the
 * request m (querier_decode's message of the method) answered. */
enum MHD_Result api_connect_select_stacktraces(struct api_server *srv,
					       struct MHD_Connection *c,
					       struct api_request *req,
					       const struct api_profile_ctx *x,
					       const struct ProtobufCMessage *m);
enum MHD_Result api_connect_select_profile(struct api_server *srv, struct MHD_Connection *c,
					   struct api_request *req,
					   const struct api_profile_ctx *x,
					   const struct ProtobufCMessage *m);

/* The selection of type (required: why says so) between start and end
 * with selector (may be empty); why set on a bad one (connect_select.c). */
int api_connect_select_of(char *type, char *selector, int64_t start, int64_t end,
			  struct pstore_selection *sel, const char **why);
/* A select's filters on sel: the samples linked to spans[0, n_span) or
 * traces[0, n_trace) (hex IDs, into links, which sel then points into),
 * and those whose stack begins with stack's call site (NULL or empty:
 * every stack; its names, borrowed from stack, into focus, which sel
 * then points into: api_focus_release it once sel is answered, also
 * after an error).  0, or -EINVAL / -ENOMEM with why set for the
 * sender. */
int api_connect_filters(const struct Types__V1__StackTraceSelector *stack, char *const *spans,
			size_t n_span, char *const *traces, size_t n_trace,
			struct api_links *links, struct api_focus *focus,
			struct pstore_selection *sel, char *why, size_t why_size);
/* sel's flame graph (max_nodes: 0 or less, 8,192) answered as
 * SelectMergeStacktracesResponse, or SelectMergeSpanProfileResponse when
 * span. */
enum MHD_Result api_connect_flamegraph(struct api_server *srv, struct MHD_Connection *c,
				       struct api_request *req, const struct api_profile_ctx *x,
				       const struct pstore_selection *sel, int64_t max_nodes,
				       bool span);
/* g's levels as Level messages borrowing g's arrays: n_levels pointers
 * (one block with the messages: free() it), NULL on -ENOMEM. */
struct Querier__V1__Level **api_connect_levels(const struct pmodel_flamegraph *g);
/* A failed read's answer (Connect's error form). */
enum MHD_Result api_connect_read_failed(struct api_server *srv, struct MHD_Connection *c,
					const struct api_request *req,
					const struct api_profile_ctx *x, int err, const char *why);
/* SelectSeries (connect_series.c), SelectMergeSpanProfile
 * (connect_span.c), Diff (connect_diff.c), GetProfileStats
 * (connect_stats.c): the request m answered, as above. */
enum MHD_Result api_connect_select_series(struct api_server *srv, struct MHD_Connection *c,
					  struct api_request *req,
					  const struct api_profile_ctx *x,
					  const struct ProtobufCMessage *m);
enum MHD_Result api_connect_select_span(struct api_server *srv, struct MHD_Connection *c,
					struct api_request *req, const struct api_profile_ctx *x,
					const struct ProtobufCMessage *m);
enum MHD_Result api_connect_diff(struct api_server *srv, struct MHD_Connection *c,
				 struct api_request *req, const struct api_profile_ctx *x,
				 const struct ProtobufCMessage *m);
enum MHD_Result api_connect_profile_stats(struct api_server *srv, struct MHD_Connection *c,
					  struct api_request *req,
					  const struct api_profile_ctx *x,
					  const struct ProtobufCMessage *m);

/* ---- parameters (profile_params.c) ------------------------------------------ */

/* A query parameter (the first of its name), or NULL. */
const char *api_param(struct MHD_Connection *c, const char *name);
/* Whether every query parameter is one route ep takes (Ember's profile
 * read routes; any other route: yes, unchecked; profile_param_names.c):
 * 0, or -EINVAL with why naming the first unknown one and the names
 * taken. */
int api_params_check(struct MHD_Connection *c, enum api_endpoint ep, char *why,
		     size_t why_size);
/* A selection from the parameters: query (selector), type, from, to (or
 * until), each read under prefix (e.g. "base_"), falling back to the
 * unprefixed names, then to alt[] (Pyroscope's names, may be NULL).  The
 * strings point into the request.  0, or -EINVAL with why set for the
 * sender. */
struct api_selection_names {
	const char *query, *from, *to; /* alternatives, or NULL */
};
int api_selection_from_params(struct MHD_Connection *c, const char *prefix,
			      const struct api_selection_names *alt,
			      struct pstore_selection *sel, char *why, size_t why_size);
/* The span_id and trace_id parameters (each repeatable, each value one ID
 * or a comma-separated list: 16 and 32 hex digits) as a link filter in
 * out->f (pointing into out), at most PSTORE_MAX_LINK_IDS IDs in all.  0,
 * or -EINVAL with why set for the sender. */
struct api_links {
	struct pstore_link_filter f;
	uint8_t span[PSTORE_MAX_LINK_IDS][8];
	uint8_t trace[PSTORE_MAX_LINK_IDS][16];
};
int api_links_from_params(struct MHD_Connection *c, struct api_links *out, char *why,
			  size_t why_size);
/* The same of lists of IDs (Connect's span_selector, trace_id_selector:
 * one ID a string). */
int api_links_from_lists(char *const *spans, size_t n_span, char *const *traces,
			 size_t n_trace, struct api_links *out, char *why, size_t why_size);

/* A call path, frame names root first, that a selection's focus points
 * into (sel->focus = v, sel->n_focus = n): the parameter focus=
 * ("main;work;inner", frames separated by ';' as folded stacks write
 * them), or Connect's stack_trace_selector (api_connect_filters).  Zeroed
 * by its reader; api_focus_release frees it (a zeroed one too) once the
 * selection is answered. */
struct api_focus {
	char *text;		/* the parameter's copy, split at ';' (NULL: borrowed names) */
	const char **v;
	size_t n;		/* 0: no focus */
};
/* focus= under prefix (e.g. "base_"), else unprefixed, into out (n 0
 * when absent or empty), sel's focus pointing into it.  0, -EINVAL (an
 * empty frame name) or -ENOMEM, with why set for the sender. */
int api_focus_from_params(struct MHD_Connection *c, const char *prefix, struct api_focus *out,
			  struct pstore_selection *sel, char *why, size_t why_size);
void api_focus_release(struct api_focus *f);

/* ---- ingest (profile_ingest.c, pyroscope_ingest.c) ------------------------- */

/* A write's limits while the service decodes, symbolizes and stores it:
 * its deadline and client check, the server's cap on upstream fetches
 * (--upstream-fetches-per-request) and its memory account (req->acct),
 * in the form the symbolization service takes (request.account,
 * request.max_fetches). */
/* A write refused (err: the service's, the store's, or the write's own
 * limits') answered: -E2BIG 413, -EAGAIN 503 with Retry-After (never
 * counted as a store error), -ETIMEDOUT 504 (-ECANCELED: none, the client
 * is gone), -ENOMEM 500, a store's error by its kind; why says what.
 * The caller counts the reject. */
enum MHD_Result api_profile_refuse(struct api_server *srv, struct MHD_Connection *c,
				   const struct api_request *req, int err, const char *why);
/* A write whose body the account refused (req->body_err), counted and
 * answered (413, 503 with Retry-After). */
enum MHD_Result api_profile_body_refused(struct api_server *srv, struct MHD_Connection *c,
					 const struct api_request *req);
/* Who may write with an Authorization value (NULL: none; the HTTP
 * routes' header, OTLP/gRPC's authorization metadata): nobody, the
 * holder of a token of every tenant (the upload or the ingest token), or
 * of a tenant's token (--tokens), whose tenant is then copied into
 * tenant[PROFSVC_TENANT_MAX + 1]. */
enum api_writer { API_WRITER_NONE, API_WRITER_ANY, API_WRITER_TENANT };
enum api_writer api_profile_writer(const struct api_server *srv, const char *authorization,
				   char *tenant);
/* POST /api/v1/profiles once the body is whole. */
enum MHD_Result api_profile_ingest(struct api_server *srv, struct MHD_Connection *c,
				   struct api_request *req);
/* Answer out (consumed) to c. */
enum MHD_Result api_profile_respond(struct api_server *srv, struct MHD_Connection *c,
				    const struct api_request *req, struct profsvc_out *out);
/* POST /ingest once the body is whole. */
enum MHD_Result api_pyroscope_ingest(struct api_server *srv, struct MHD_Connection *c,
				     struct api_request *req);

/* ---- OTLP/HTTP (otlp_ingest.c) ---------------------------------------------- */

#define API_OTLP_TYPE "application/x-protobuf"
#define API_OTLP_JSON_TYPE "application/json"
/* The encoding of an OTLP/HTTP body, by its Content-Type (parameters
 * such as charset allowed); its answers are in the same one. */
enum api_otlp_enc { API_OTLP_UNKNOWN = 0, API_OTLP_PROTOBUF, API_OTLP_JSON };
/* POST /v1development/profiles once the body is whole. */
enum MHD_Result api_otlp_ingest(struct api_server *srv, struct MHD_Connection *c,
				struct api_request *req);
/* The encoding of the request's Content-Type. */
enum api_otlp_enc api_otlp_encoding(struct MHD_Connection *c);
/* The Content-Type of an answer in enc (protobuf for API_OTLP_UNKNOWN). */
const char *api_otlp_type(enum api_otlp_enc enc);
/* The google.rpc.Status body of an OTLP refusal of HTTP status status
 * (its gRPC code) saying msg, in enc (protobuf for API_OTLP_UNKNOWN), into
 * b (initialized here; its data malloc'd, the caller frees it).  0 or
 * -ENOMEM. */
int api_otlp_status_body(enum api_otlp_enc enc, unsigned status, const char *msg,
			 struct ember_buf *b);

/* ---- reads (profile_query.c, profile_discovery.c, profile_source.c) ----------- */

/* Each takes the request's context x (built by api_profile_next) and
 * passes x->ro to the profile service. */
enum MHD_Result api_profile_query(struct api_server *srv, struct MHD_Connection *c,
				  struct api_request *req, const struct api_profile_ctx *x);
enum MHD_Result api_profile_diff(struct api_server *srv, struct MHD_Connection *c,
				 struct api_request *req, const struct api_profile_ctx *x);
enum MHD_Result api_profile_labels(struct api_server *srv, struct MHD_Connection *c,
				   struct api_request *req, const struct api_profile_ctx *x);
enum MHD_Result api_profile_values(struct api_server *srv, struct MHD_Connection *c,
				   struct api_request *req, const struct api_profile_ctx *x);
enum MHD_Result api_profile_types(struct api_server *srv, struct MHD_Connection *c,
				  struct api_request *req, const struct api_profile_ctx *x);
enum MHD_Result api_profile_series(struct api_server *srv, struct MHD_Connection *c,
				   struct api_request *req, const struct api_profile_ctx *x);
enum MHD_Result api_profile_coverage(struct api_server *srv, struct MHD_Connection *c,
				     struct api_request *req, const struct api_profile_ctx *x);
/* GET /api/v1/source and /api/v1/diff/source (profile_source.c). */
enum MHD_Result api_profile_source(struct api_server *srv, struct MHD_Connection *c,
				   struct api_request *req, const struct api_profile_ctx *x);
/* Pyroscope's GET /pyroscope/render, /pyroscope/render-diff, and
 * /pyroscope/labels and /pyroscope/label-values by req->route.ep
 * (pyroscope_render.c). */
enum MHD_Result api_pyroscope_render(struct api_server *srv, struct MHD_Connection *c,
				     struct api_request *req, const struct api_profile_ctx *x);
enum MHD_Result api_pyroscope_render_diff(struct api_server *srv, struct MHD_Connection *c,
					  struct api_request *req,
					  const struct api_profile_ctx *x);
enum MHD_Result api_pyroscope_labels(struct api_server *srv, struct MHD_Connection *c,
				     struct api_request *req, const struct api_profile_ctx *x);

/* A store error (err: a negative errno or PSTORE_ERR) answered: its
 * status, api_profile_error_status(err) (400 for what the request got
 * wrong, 413, 429, 500 corrupt, 503 with Retry-After, 507), and the
 * reason, why (pstore_strerror(err) when NULL or empty).  why is only
 * said: it never decides the status. */
enum MHD_Result api_profile_error(struct api_server *srv, struct MHD_Connection *c,
				  const struct api_request *req, int err, const char *why);
/* The status of a store error: its pstore_error_kind() through
 * api_status_of_kind(). */
unsigned api_profile_error_status(int err);
/* A text/plain answer of status (one line; OTLP's route: a
 * google.rpc.Status) with extra headers as for api_profile_ok. */
enum MHD_Result api_profile_text(struct api_server *srv, struct MHD_Connection *c,
				 const struct api_request *req, unsigned status, const char *msg,
				 const char *const *headers);
/* A 200 answer of type with b's bytes (taken) and extra headers
 * (name/value pairs, NULL-terminated; may be NULL). */
enum MHD_Result api_profile_ok(struct api_server *srv, struct MHD_Connection *c,
			       const struct api_request *req, const char *type,
			       struct ember_buf *b, const char *const *headers);

#endif /* EMBER_API_PROFILES_H */
