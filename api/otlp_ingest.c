/*
 * otlp_ingest.c - POST /v1development/profiles, the profiles signal of
 * OTLP/HTTP (the OTLP specification, "OTLP/HTTP", of opentelemetry-proto
 * v1.11.0: docs/formats.md): an ExportProfilesServiceRequest, protobuf
 * (Content-Type application/x-protobuf) or OTLP's JSON encoding
 * (application/json), optionally Content-Encoding gzip or zstd, read into
 * one pprof profile a (resource, scope, profile) (profsvc_otlp_decode,
 * profsvc_otlp_json_decode, wire/otlp.h), each stored with its resource's
 * series labels by the profile service as a pprof push is (profsvc_ingest:
 * the window of times, symbolization at ingest, the store's limits).
 * The token, the body's caps and the request's context (memory account,
 * deadline, upstream cap) are those of POST /api/v1/profiles
 * (profile_routes.c).  docs/http-api.md, "OTLP/HTTP".
 *
 * Answers as the specification gives them, in the request's encoding
 * (protobuf, or JSON for a JSON request): 200 with an
 * ExportProfilesServiceResponse (partial_success when some profiles were
 * refused: their count and the first reason); a refusal of the whole
 * request as a google.rpc.Status body: 400 for what will never be
 * accepted, 413 too large, 429 / 503 with Retry-After when asking again
 * may succeed.  A retryable failure stops the request: answered as such
 * when nothing of it was stored, else a partial success counting what was
 * not stored.
 *
 * What the request becomes is the transport's business only in its
 * answer: otlp_export decodes and stores a request (this file's HTTP
 * route and OTLP/gRPC's listener, otlp-grpc/, through the sink
 * api_server_otlp_sink gives it, both call it) and says what became of
 * it; each transport maps that outcome to its statuses (here
 * api_status_of_kind's HTTP statuses, there gRPC codes: grpc_export).
 */
#include "api_profiles.h"
#include "otlp_grpc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* What became of an OTLP request, whatever brought it (HTTP, gRPC). */
struct api_otlp_outcome {
	int refused;		/* 0, or the request refused whole: a body that did
				   not decode (-EINVAL; -E2BIG, -EAGAIN, -ENOMEM
				   for its memory), or the retryable error that
				   stopped it before any profile was stored */
	size_t accepted, rejected; /* profiles stored, and not (partial success) */
	int stop;		/* the retryable error that stopped it, or 0 */
	char why[640];		/* the refusal's or the first rejection's reason */
};

/* The gRPC code of an HTTP status we answer, as the OTLP specification
 * pairs them. */
static int32_t grpc_code_of_status(unsigned status)
{
	switch (status) {
	case MHD_HTTP_BAD_REQUEST:
	case MHD_HTTP_UNSUPPORTED_MEDIA_TYPE:
		return OTLP_GRPC_INVALID_ARGUMENT;
	case MHD_HTTP_UNAUTHORIZED:
		return OTLP_GRPC_UNAUTHENTICATED;
	case MHD_HTTP_FORBIDDEN:
		return OTLP_GRPC_PERMISSION_DENIED;
	case MHD_HTTP_NOT_FOUND:
		return OTLP_GRPC_NOT_FOUND;
	case MHD_HTTP_METHOD_NOT_ALLOWED:
		return OTLP_GRPC_UNIMPLEMENTED;
	case MHD_HTTP_CONTENT_TOO_LARGE:
	case MHD_HTTP_TOO_MANY_REQUESTS:
	case MHD_HTTP_INSUFFICIENT_STORAGE:
		return OTLP_GRPC_RESOURCE_EXHAUSTED;
	case MHD_HTTP_SERVICE_UNAVAILABLE:
		return OTLP_GRPC_UNAVAILABLE;
	case MHD_HTTP_GATEWAY_TIMEOUT:
		return OTLP_GRPC_DEADLINE_EXCEEDED;
	default:
		return status >= 500 ? OTLP_GRPC_INTERNAL : OTLP_GRPC_UNKNOWN;
	}
}

/* Whether Content-Type ct is want, with or without parameters. */
static bool type_is(const char *ct, const char *want)
{
	size_t n = strlen(want);

	return strncasecmp(ct, want, n) == 0 &&
	       (ct[n] == '\0' || ct[n] == ';' || ct[n] == ' ' || ct[n] == '\t');
}

enum api_otlp_enc api_otlp_encoding(struct MHD_Connection *c)
{
	const char *ct = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						    MHD_HTTP_HEADER_CONTENT_TYPE);

	if (!ct)
		return API_OTLP_UNKNOWN;
	if (type_is(ct, API_OTLP_TYPE))
		return API_OTLP_PROTOBUF;
	return type_is(ct, API_OTLP_JSON_TYPE) ? API_OTLP_JSON : API_OTLP_UNKNOWN;
}

const char *api_otlp_type(enum api_otlp_enc enc)
{
	return enc == API_OTLP_JSON ? API_OTLP_JSON_TYPE : API_OTLP_TYPE;
}

int api_otlp_status_body(enum api_otlp_enc enc, unsigned status, const char *msg,
			 struct ember_buf *b)
{
	int err;

	ember_buf_init(b, 4096);
	err = enc == API_OTLP_JSON ? otlp_status_json(grpc_code_of_status(status), msg, b)
				   : otlp_status_encode(grpc_code_of_status(status), msg, b);
	if (!err)
		return 0;
	ember_buf_release(b);
	return -ENOMEM;
}

/* ---- refusals ------------------------------------------------------------------- */

static bool memory_error(int err)
{
	return err == -E2BIG || err == -EAGAIN || err == -ENOMEM;
}

/* The status of err (the write's memory, its deadline, else the store's kind). */
static unsigned status_of(int err)
{
	enum ember_errkind k = err == -ETIMEDOUT    ? EMBER_ERRK_TIMEOUT
			       : memory_error(err) ? api_body_error_kind(err)
						   : pstore_error_kind(err);

	return api_status_of_kind(k);
}

static bool retryable(int err)
{
	unsigned st = status_of(err);

	return err == -ECANCELED || st == MHD_HTTP_TOO_MANY_REQUESTS ||
	       st == MHD_HTTP_SERVICE_UNAVAILABLE || st == MHD_HTTP_GATEWAY_TIMEOUT;
}

/* The whole request refused: a google.rpc.Status saying why. */
static enum MHD_Result refuse(struct api_server *srv, struct MHD_Connection *c,
			      const struct api_request *req, int err, const char *why)
{
	static const char *const retry[] = { MHD_HTTP_HEADER_RETRY_AFTER, API_RETRY_AFTER_S,
					     NULL };
	unsigned st;

	if (err == -ECANCELED) /* the client is gone */
		return api_respond_stopped(srv, c, req, err);
	st = status_of(err);
	if (st == MHD_HTTP_SERVICE_UNAVAILABLE && !memory_error(err))
		api_metrics_store_error(&srv->metrics, req->route.ep);
	return api_profile_text(srv, c, req, st, why && *why ? why : pstore_strerror(err),
				st == MHD_HTTP_TOO_MANY_REQUESTS || st == MHD_HTTP_SERVICE_UNAVAILABLE
					? retry
					: NULL);
}

/* A body that does not decode (err), counted: refused as malformed, or
 * past a cap (-E2BIG) or for memory (-EAGAIN, -ENOMEM) as such. */
static void not_decoded(struct profsvc *svc, int err, const char *why,
			struct api_otlp_outcome *o)
{
	profsvc_count_reject(svc, profsvc_decode_reject(err));
	o->refused = memory_error(err) ? err : -EINVAL;
	snprintf(o->why, sizeof(o->why), "%s%s",
		 err == -E2BIG	       ? "request too large: "
		 : memory_error(err) ? ""
				     : "not an OTLP ExportProfilesServiceRequest: ",
		 why);
}

/* ---- the profiles ---------------------------------------------------------------- */

static void refused(struct api_otlp_outcome *t, size_t i, int err, const char *why)
{
	if (!t->rejected++)
		snprintf(t->why, sizeof(t->why), "profile %zu: %s", i, why);
	if (retryable(err))
		t->stop = err;
}

/* Profile i of r stored with its labels (or refused, counted in t). */
static void ingest_one(struct api_server *srv, struct otlp_request *r, size_t i,
		       const struct api_profile_ctx *x, size_t bytes, struct api_otlp_outcome *t)
{
	const struct otlp_profile *op = &r->profiles[i];
	struct pstore_label *labels = calloc(op->n_labels ? op->n_labels : 1, sizeof(*labels));
	struct profsvc_in in = { .p = otlp_profile_take(r, i), .labels = labels,
				 .n_labels = op->n_labels, .time_ns = profsvc_now_ns(),
				 .input_bytes = bytes, .route = PROFSVC_ROUTE_OTLP,
				 .request = &x->ro };
	struct profsvc_out out;

	if (!labels || !in.p) {
		pprof_profile_free(in.p);
		free(labels);
		refused(t, i, -ENOMEM, "out of memory");
		return;
	}
	for (size_t k = 0; k < op->n_labels; k++)
		labels[k] = (struct pstore_label){ op->labels[k].name, op->labels[k].value };
	profsvc_ingest(x->svc, &in, &out);
	ember_buf_release(&out.body);
	free(labels);
	if (out.err)
		refused(t, i, out.err, out.why);
	else
		t->accepted++;
}

/* Decode the ExportProfilesServiceRequest body[0..len) (in type:
 * protobuf or OTLP's JSON; encoding: its Content-Encoding, NULL for none)
 * under x's account and store each of its profiles with its resource's
 * labels under x (deadline, upstream cap), stopping at the first
 * retryable failure; what became of it into *o.  A body that does not
 * decode is counted as a reject here. */
static void otlp_export(struct api_server *srv, enum api_otlp_enc type, const void *body,
			size_t len, const char *encoding, const struct api_profile_ctx *x,
			struct api_otlp_outcome *o)
{
	struct otlp_request *r = NULL;
	char why[512];
	int err;

	*o = (struct api_otlp_outcome){ .accepted = 0 };
	err = (type == API_OTLP_JSON ? profsvc_otlp_json_decode : profsvc_otlp_decode)(
		x->svc, body ? body : "", len, encoding, x->ro.account, &r, why,
		sizeof(why));
	if (err) {
		not_decoded(x->svc, err, why, o);
		return;
	}
	for (size_t i = 0; i < r->n_profiles && !o->stop; i++)
		ingest_one(srv, r, i, x, len, o);
	o->rejected += r->n_profiles - o->accepted - o->rejected; /* not tried: stopped */
	otlp_request_free(r);
	if (o->stop && !o->accepted)
		o->refused = o->stop;
}

static enum MHD_Result answer(struct api_server *srv, struct MHD_Connection *c,
			      const struct api_request *req, enum api_otlp_enc enc,
			      const struct api_otlp_outcome *o)
{
	const char *msg = o->rejected ? o->why : "";
	struct ember_buf b;
	int err;

	if (o->refused)
		return refuse(srv, c, req, o->refused, o->why);
	ember_buf_init(&b, 4096);
	err = enc == API_OTLP_JSON ? otlp_response_json((int64_t)o->rejected, msg, &b)
				   : otlp_response_encode((int64_t)o->rejected, msg, &b);
	if (err) {
		ember_buf_release(&b);
		return MHD_NO;
	}
	return api_profile_ok(srv, c, req, api_otlp_type(enc), &b, NULL);
}

enum MHD_Result api_otlp_ingest(struct api_server *srv, struct MHD_Connection *c,
				struct api_request *req)
{
	const char *enc = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						      MHD_HTTP_HEADER_CONTENT_ENCODING);
	enum api_otlp_enc type = api_otlp_encoding(c); /* checked by the first call */
	struct api_otlp_outcome o = { .accepted = 0 };
	struct api_profile_ctx x;

	if (req->body_err) {
		not_decoded(api_profile_svc(srv, req), req->body_err,
			    req->body_err == -E2BIG ? "body larger than the memory the server "
						      "gives one request"
						    : "no memory free for the body now",
			    &o);
		return answer(srv, c, req, type, &o);
	}
	if (api_profile_ctx_init(&x, srv, req)) /* the body's account is there */
		return MHD_NO;
	otlp_export(srv, type, req->body.data, req->body.len, enc, &x, &o);
	return answer(srv, c, req, type, &o);
}

/* ---- OTLP/gRPC's sink (otlp_grpc.h) ----------------------------------------------- */

static bool grpc_auth(void *ctx, const char *authorization, char *tenant, size_t tenant_size)
{
	char t[PROFSVC_TENANT_MAX + 1] = "";
	enum api_writer w = api_profile_writer(ctx, authorization, t);

	if (w == API_WRITER_TENANT)
		snprintf(tenant, tenant_size, "%s", t);
	return w != API_WRITER_NONE;
}

/* rq stored as its tenant's (req.profiles), the outcome into a. */
static void grpc_store(struct api_server *srv, const struct otlp_grpc_request *rq,
		       struct api_request *req, struct otlp_grpc_answer *a)
{
	struct api_otlp_outcome o;
	struct api_profile_ctx x;
	unsigned retry_s;

	if (profsvc_ingest_admit(req->profiles, rq->len, &retry_s, a->message,
				 sizeof(a->message))) {
		a->code = OTLP_GRPC_RESOURCE_EXHAUSTED;
		a->retry = retry_s > 0;
		return;
	}
	api_profile_ctx_init(&x, srv, req); /* the call's account is there: no failure */
	otlp_export(srv, API_OTLP_PROTOBUF, rq->body, rq->len, rq->encoding, &x, &o);
	a->rejected = o.rejected;
	if (o.refused) {
		a->code = grpc_code_of_status(status_of(o.refused));
		a->retry = retryable(o.refused);
		a->rejected = 0;
	}
	snprintf(a->message, sizeof(a->message), "%s", o.why);
}

/* A call's message stored as this route stores a body, in the same
 * request context (its deadline, its account, the server's upstream
 * cap), and the outcome as gRPC codes: the OTLP specification's pairing
 * of the HTTP statuses this route answers with. */
static void grpc_export(void *ctx, const struct otlp_grpc_request *rq,
			struct otlp_grpc_answer *a)
{
	struct api_server *srv = ctx;
	struct api_request req = { .deadline_ms = rq->deadline_ms, .conn_fd = -1,
				   .acct = rq->acct };
	unsigned status;

	*a = (struct otlp_grpc_answer){ .code = OTLP_GRPC_OK };
	if (api_profile_tenant(srv, rq->tenant, rq->token_tenant, true,
			       &req.profiles, &status, a->message, sizeof(a->message))) {
		profsvc_count_reject(srv->profiles->svc, PROFSVC_REJECT_TENANT);
		a->code = grpc_code_of_status(status);
		return;
	}
	grpc_store(srv, rq, &req, a);
	profsvc_tenant_put(req.profiles);
}

int api_server_otlp_sink(struct api_server *srv, struct otlp_grpc_sink *out)
{
	if (!srv->profiles) {
		pr_err("api: OTLP/gRPC needs the profile routes");
		return -EINVAL;
	}
	*out = (struct otlp_grpc_sink){ .auth = grpc_auth, .export_request = grpc_export,
					.ctx = srv, .budget = &srv->mem,
					.share = srv->request_share,
					.max_message = srv->profiles->max_body,
					.request_ms = srv->request_timeout_ms };
	return 0;
}

void api_server_set_otlp_grpc(struct api_server *srv, const struct otlp_grpc_server *g)
{
	atomic_store(&srv->metrics.grpc, g);
}
