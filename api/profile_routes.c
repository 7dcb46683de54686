/*
 * profile_routes.c - the profile routes' paths, methods and request
 * bodies (docs/http-api.md, "Profiles"), and their answers: the errors of
 * the store mapped to statuses, and 200s with their headers.
 *
 * A write (POST /api/v1/profiles, POST /ingest, POST
 * /v1development/profiles) is checked on its first call, before any byte
 * of the body is read: the token (401), a declared Content-Length past
 * the profile limit (413), OTLP's Content-Type and the Content-Encoding
 * (415); OTLP's refusals are google.rpc.Status bodies, JSON for a JSON
 * request (otlp_ingest.c).  The body is then read into memory under that limit and the
 * request's memory account (body_step.c, as for the symbolization
 * routes: a chunked body crossing the limit closes the connection, one
 * the account refuses is answered 413 or 503 once whole; the account
 * then bears the decoding and symbolization, profile_ingest.c), and must
 * be whole by the request's deadline
 * (--request-timeout, from its head: server.c sets it, conn_guard.c closes
 * a connection past it), so a token holder cannot trickle one for ever.
 * Reads take no body, but for the Connect calls (connect.c), POST bodies
 * read the same way without a token.  Every read runs in one request context (struct
 * api_profile_ctx: deadline, client-gone check, upstream cap, memory
 * account), built here before its route is called.
 *
 * The routes exist while the profile service does: started with the
 * server (api_profiles_start), stopped after its last request.
 */
#include "api_profiles.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	const char *path;
	enum api_endpoint ep;
} routes[] = {
	{ "/api/v1/profiles", API_EP_PROFILE_INGEST },
	{ "/ingest", API_EP_PYROSCOPE_INGEST },
	{ "/v1development/profiles", API_EP_OTLP_PROFILES },
	{ "/api/v1/query", API_EP_PROFILE_QUERY },
	{ "/api/v1/diff", API_EP_PROFILE_DIFF },
	{ "/api/v1/labels", API_EP_PROFILE_LABELS },
	{ "/api/v1/profile-types", API_EP_PROFILE_TYPES },
	{ "/api/v1/series", API_EP_PROFILE_SERIES },
	{ "/api/v1/coverage", API_EP_PROFILE_COVERAGE },
	{ "/api/v1/source", API_EP_PROFILE_SOURCE },
	{ "/api/v1/diff/source", API_EP_PROFILE_DIFF_SOURCE },
	{ "/pyroscope/render", API_EP_PYROSCOPE_RENDER },
	{ "/pyroscope/render-diff", API_EP_PYROSCOPE_RENDER_DIFF },
	{ "/pyroscope/labels", API_EP_PYROSCOPE_LABELS },
	{ "/pyroscope/label-values", API_EP_PYROSCOPE_LABEL_VALUES },
};

bool api_profile_endpoint(enum api_endpoint ep)
{
	return ep >= API_EP_PROFILE_INGEST && ep <= API_EP_CONNECT;
}

static bool is_write(enum api_endpoint ep)
{
	return ep == API_EP_PROFILE_INGEST || ep == API_EP_PYROSCOPE_INGEST ||
	       ep == API_EP_OTLP_PROFILES || ep == API_EP_CONNECT; /* a body read */
}

/* "PREFIX NAME SUFFIX" (NAME without '/'): NAME into r->path, r->ep ep. */
static bool named_route(const char *url, const char *prefix, const char *suffix,
			enum api_endpoint ep, struct api_route *r)
{
	size_t pn = strlen(prefix), n;
	const char *name = url + pn, *slash;

	if (strncmp(url, prefix, pn))
		return false;
	slash = strchr(name, '/');
	n = slash ? (size_t)(slash - name) : 0;
	if (!slash || strcmp(slash, suffix) || !n || n >= sizeof(r->path))
		return false;
	memcpy(r->path, name, n);
	r->path[n] = '\0';
	r->ep = ep;
	return true;
}

bool api_profile_route_parse(const char *url, struct api_route *r)
{
	for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++)
		if (strcmp(url, routes[i].path) == 0) {
			r->ep = routes[i].ep;
			return true;
		}
	if (named_route(url, "/api/v1/labels/", "/values", API_EP_PROFILE_LABELS, r) ||
	    /* TENANT checked by the answer */
	    named_route(url, "/api/v1/tenants/", "/usage", API_EP_TENANT_USAGE, r) ||
	    api_connect_route_parse(url, r))
		return true;
	if (strncmp(url, "/api/v1/", 8) == 0) { /* ours, not debuginfod's */
		r->status = 404;
		r->error = "unknown route under /api/v1/ (docs/http-api.md)\n";
		return true;
	}
	return false;
}

/* ---- lifecycle ------------------------------------------------------------ */

/* o with a push's limits for a scrape: the server's budget, a request's
 * share of it, its cap on upstream fetches. */
static const struct profsvc_opts *scrape_limits(struct api_server *srv,
						const struct profsvc_opts *o,
						struct profsvc_opts *out)
{
	*out = *o;
	out->sz = sizeof(*out);
	out->budget = &srv->mem;
	out->write_bytes = srv->request_share;
	out->max_fetches = srv->max_fetches;
	return out;
}

int api_server_reload(struct api_server *srv)
{
	return srv->profiles ? profsvc_reload(srv->profiles->svc) : 0;
}

/* What the routes keep of o before the service starts: the ingest
 * token, --multitenancy (which --tokens needs).  0 or -EINVAL. */
static int routes_setup(struct api_profiles *pr, const struct api_profile_opts *o)
{
	if (o->ingest_token && strlen(o->ingest_token) >= sizeof(pr->ingest_token))
		return -EINVAL;
	snprintf(pr->ingest_token, sizeof(pr->ingest_token), "%s",
		 o->ingest_token ? o->ingest_token : "");
	pr->multitenancy = EMBER_OPTS_GET(o, multitenancy, false);
	return o->service.tokens_file && !pr->multitenancy ? -EINVAL : 0;
}

static void profiles_free(struct api_profiles *pr)
{
	if (!pr)
		return;
	profsvc_free(pr->svc);
	free(pr);
}

int api_profiles_start(struct api_server *srv, const struct api_profile_opts *o)
{
	const struct pstore_blockio *blocks = o ? o->service.blocks : NULL;
	struct api_profiles *pr;
	struct profsvc_opts so;
	int err;

	if (!o || !o->service.dir)
		return 0;
	pr = calloc(1, sizeof(*pr));
	err = !pr ? -ENOMEM : routes_setup(pr, o);
	scrape_limits(srv, &o->service, &so);
	if (err) {
		if (blocks && blocks->release) /* the service would have owned them */
			blocks->release(blocks->ctx);
		profiles_free(pr);
		return err;
	}
	err = profsvc_new(srv->symbols, &so, &pr->svc);
	if (err) {
		profiles_free(pr);
		return err;
	}
	pr->max_body = profsvc_max_body(pr->svc);
	srv->profiles = pr;
	return 0;
}

void api_profiles_stop(struct api_server *srv)
{
	profiles_free(srv->profiles);
	srv->profiles = NULL;
}

void api_profiles_symbols_arrived(struct api_server *srv, const char *build_id)
{
	if (srv->profiles)
		profsvc_symbols_arrived(srv->profiles->svc, build_id);
}

/* ---- answers -------------------------------------------------------------- */

static enum MHD_Result queue(struct api_server *srv, struct MHD_Connection *c,
			     const struct api_request *req, unsigned status, const char *type,
			     char *data, size_t len, const char *const *headers)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, data ? data : (char *)"",
								 data ? MHD_RESPMEM_MUST_FREE
								      : MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ret;

	if (!r) {
		free(data);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	for (; headers && headers[0]; headers += 2)
		MHD_add_response_header(r, headers[0], headers[1]);
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	api_metrics_count(&srv->metrics, req->route.ep, status, len);
	return ret;
}

enum MHD_Result api_profile_ok(struct api_server *srv, struct MHD_Connection *c,
			       const struct api_request *req, const char *type,
			       struct ember_buf *b, const char *const *headers)
{
	char *data = b->data;
	size_t len = b->len;

	b->data = NULL; /* taken */
	ember_buf_release(b);
	return queue(srv, c, req, MHD_HTTP_OK, type, data, len, headers);
}

static enum MHD_Result text(struct api_server *srv, struct MHD_Connection *c,
			    const struct api_request *req, unsigned status, const char *msg,
			    const char *const *headers);

enum MHD_Result api_profile_text(struct api_server *srv, struct MHD_Connection *c,
				 const struct api_request *req, unsigned status, const char *msg,
				 const char *const *headers)
{
	return text(srv, c, req, status, msg, headers);
}

static enum MHD_Result text(struct api_server *srv, struct MHD_Connection *c,
			    const struct api_request *req, unsigned status, const char *msg,
			    const char *const *headers)
{
	size_t n = strlen(msg);
	char *copy;
	struct ember_buf b;

	if (req->route.ep == API_EP_OTLP_PROFILES) { /* OTLP/HTTP: a google.rpc.Status */
		enum api_otlp_enc enc = api_otlp_encoding(c);

		if (api_otlp_status_body(enc, status, msg, &b))
			return MHD_NO;
		return queue(srv, c, req, status, api_otlp_type(enc), b.data, b.len, headers);
	}
	if (req->route.ep == API_EP_CONNECT) { /* Connect's error form */
		if (api_connect_error_body(status, msg, &b, &status))
			return MHD_NO;
		return queue(srv, c, req, status, "application/json", b.data, b.len, headers);
	}
	copy = malloc(n + 2);
	if (!copy)
		return MHD_NO;
	memcpy(copy, msg, n + 1);
	if (!n || msg[n - 1] != '\n') { /* one line, ended */
		copy[n++] = '\n';
		copy[n] = '\0';
	}
	return queue(srv, c, req, status, "text/plain", copy, n, headers);
}

unsigned api_profile_error_status(int err)
{
	return api_status_of_kind(profsvc_error_kind(err));
}

enum MHD_Result api_profile_error(struct api_server *srv, struct MHD_Connection *c,
				  const struct api_request *req, int err, const char *why)
{
	static const char *const retry[] = { MHD_HTTP_HEADER_RETRY_AFTER, API_RETRY_AFTER_S,
					     NULL };
	unsigned status = api_profile_error_status(err);
	char msg[768];

	snprintf(msg, sizeof(msg), "%s", why && *why ? why : profsvc_strerror(err));
	if (status == MHD_HTTP_SERVICE_UNAVAILABLE) {
		snprintf(msg, sizeof(msg), "profile store unavailable: %s",
			 why && *why ? why : pstore_strerror(err));
		api_metrics_store_error(&srv->metrics, req->route.ep);
	}
	return text(srv, c, req, status, msg, status == MHD_HTTP_SERVICE_UNAVAILABLE ? retry : NULL);
}

/* ---- requests --------------------------------------------------------------- */

static bool encoding_known(const char *e)
{
	return !e || !*e || strcasecmp(e, "gzip") == 0 || strcasecmp(e, "zstd") == 0 ||
	       strcasecmp(e, "identity") == 0 || strcasecmp(e, "x-gzip") == 0;
}

static enum MHD_Result first_write(struct api_server *srv, struct MHD_Connection *c,
				   struct api_request *req, const char *method)
{
	static const char *const allow[] = { "Allow", "POST", NULL };
	static const char *const bearer[] = { MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer", NULL };
	struct api_profiles *pr = srv->profiles;
	const char *len = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						      MHD_HTTP_HEADER_CONTENT_LENGTH);
	const char *enc = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						      MHD_HTTP_HEADER_CONTENT_ENCODING);
	uint64_t limit = pr->max_body < srv->request_share ? pr->max_body : srv->request_share;
	char msg[160], token_tenant[PROFSVC_TENANT_MAX + 1] = "";
	enum MHD_Result ret;

	req->upload_err = -EACCES; /* answered now, unless the checks pass */
	if (strcmp(method, "POST") && strcmp(method, "PUT"))
		return text(srv, c, req, MHD_HTTP_METHOD_NOT_ALLOWED, "send profiles with POST",
			    allow);
	if (api_profile_writer(srv, MHD_lookup_connection_value(c, MHD_HEADER_KIND,
								MHD_HTTP_HEADER_AUTHORIZATION),
			       token_tenant) == API_WRITER_NONE) {
		profsvc_count_reject(pr->svc, PROFSVC_REJECT_AUTH);
		return text(srv, c, req, MHD_HTTP_UNAUTHORIZED,
			    "a profile write needs Authorization: Bearer TOKEN (the upload, "
			    "the ingest or a tenant's token)", bearer);
	}
	if (len && strtoull(len, NULL, 10) > limit) {
		profsvc_count_reject(pr->svc, PROFSVC_REJECT_TOO_LARGE);
		snprintf(msg, sizeof(msg), "profile of %s bytes, larger than the limit of %llu",
			 len, (unsigned long long)limit);
		return text(srv, c, req, MHD_HTTP_CONTENT_TOO_LARGE, msg, NULL);
	}
	if (req->route.ep == API_EP_OTLP_PROFILES && !api_otlp_encoding(c))
		return text(srv, c, req, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE,
			    "OTLP profiles are read as Content-Type: application/x-protobuf "
			    "or application/json", NULL);
	if (!encoding_known(enc)) {
		snprintf(msg, sizeof(msg), "Content-Encoding '%.40s': only gzip and zstd are read",
			 enc);
		return text(srv, c, req, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, msg, NULL);
	}
	ret = api_profile_tenant_of(srv, c, req, token_tenant[0] ? token_tenant : NULL, true);
	if (!req->profiles)
		return ret; /* refused: answered */
	req->upload_err = 0;
	return api_profile_body_begin(srv, req) ? MHD_NO : MHD_YES;
}

int api_profile_body_begin(struct api_server *srv, struct api_request *req)
{
	req->upload_started = true;
	EMBER_FORWARD_IF_ERROR(api_request_account(srv, req));
	ember_buf_init_account(&req->body, srv->profiles->max_body, req->acct);
	return 0;
}

enum MHD_Result api_profile_first(struct api_server *srv, struct MHD_Connection *c,
				  struct api_request *req, const char *method)
{
	static const char *const allow[] = { "Allow", "GET, HEAD", NULL };

	if (!srv->profiles)
		return text(srv, c, req, MHD_HTTP_NOT_FOUND, "this server keeps no profiles",
			    NULL);
	if (req->route.ep == API_EP_CONNECT) /* its tenant once its body is read */
		return api_connect_first(srv, c, req, method);
	if (is_write(req->route.ep))
		return first_write(srv, c, req, method);
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return text(srv, c, req, MHD_HTTP_METHOD_NOT_ALLOWED, "read with GET", allow);
	return api_profile_tenant_of(srv, c, req, NULL, false); /* refused, or answered once
							     the request is whole */
}

/* ---- the request's context ---------------------------------------------------- */

int api_profile_ctx_init(struct api_profile_ctx *x, struct api_server *srv,
			 struct api_request *req)
{
	if (!req->acct)
		EMBER_FORWARD_IF_ERROR(api_request_account(srv, req));
	x->svc = req->profiles;
	api_deadline_init(&x->deadline, srv, req);
	api_deadline_request_opts(srv, &x->deadline, &x->ro);
	x->ro.account = req->acct;
	return 0;
}

enum MHD_Result api_profile_answer(struct api_server *srv, struct MHD_Connection *c,
				   const struct api_request *req,
				   const struct api_profile_ctx *x, int err,
				   struct profsvc_answer *a, const char *const *headers,
				   const char *why)
{
	if (!err)
		return api_profile_ok(srv, c, req, a->type, &a->body, headers);
	ember_buf_release(&a->body);
	if (x->deadline.stopped && err == x->deadline.stopped)
		return api_respond_stopped(srv, c, req, err);
	if (x->ro.account && x->ro.account->err && err == x->ro.account->err)
		return api_respond_kind(srv, c, req,
					err == -EAGAIN ? EMBER_ERRK_BUSY : EMBER_ERRK_TOO_LARGE,
					err == -EAGAIN ? "the server's memory is taken by other "
							 "requests now: ask again"
						       : "the merge or its answer needs more than a request's "
							 "share of the server's memory "
							 "(--memory-limit-mb) or its tenant's "
							 "max_query_bytes: narrow the selection");
	return api_profile_error(srv, c, req, err, why);
}

static enum MHD_Result answer_read(struct api_server *srv, struct MHD_Connection *c,
				   struct api_request *req)
{
	struct api_profile_ctx x;
	char why[512];

	if (api_params_check(c, req->route.ep, why, sizeof(why)))
		return api_profile_error(srv, c, req, -EINVAL, why);
	if (api_profile_ctx_init(&x, srv, req))
		return MHD_NO;
	switch (req->route.ep) {
	case API_EP_PROFILE_QUERY:
		return api_profile_query(srv, c, req, &x);
	case API_EP_PROFILE_DIFF:
		return api_profile_diff(srv, c, req, &x);
	case API_EP_PROFILE_LABELS:
		return req->route.path[0] ? api_profile_values(srv, c, req, &x)
					  : api_profile_labels(srv, c, req, &x);
	case API_EP_PROFILE_TYPES:
		return api_profile_types(srv, c, req, &x);
	case API_EP_PROFILE_SERIES:
		return api_profile_series(srv, c, req, &x);
	case API_EP_PYROSCOPE_RENDER:
		return api_pyroscope_render(srv, c, req, &x);
	case API_EP_PYROSCOPE_RENDER_DIFF:
		return api_pyroscope_render_diff(srv, c, req, &x);
	case API_EP_PYROSCOPE_LABELS:
	case API_EP_PYROSCOPE_LABEL_VALUES:
		return api_pyroscope_labels(srv, c, req, &x);
	case API_EP_TENANT_USAGE:
		return api_tenant_usage(srv, c, req, &x);
	case API_EP_PROFILE_SOURCE:
	case API_EP_PROFILE_DIFF_SOURCE:
		return api_profile_source(srv, c, req, &x);
	default:
		return api_profile_coverage(srv, c, req, &x);
	}
}

enum MHD_Result api_profile_next(struct api_server *srv, struct MHD_Connection *c,
				 struct api_request *req, const char *data, size_t *size)
{
	if (!is_write(req->route.ep)) {
		if (*size || !req->profiles) { /* a body on a read is ignored; refused */
			*size = 0;
			return MHD_YES;
		}
		return answer_read(srv, c, req);
	}
	if (req->upload_err) { /* answered at the first call: the body is not read */
		*size = 0;
		return MHD_YES;
	}
	if (*size) {
		api_body_take(req, data, *size);
		*size = 0;
		if (req->body_err != -EFBIG)
			return MHD_YES; /* an account's refusal is answered once whole */
		profsvc_count_reject(api_profile_svc(srv, req), PROFSVC_REJECT_TOO_LARGE);
		return MHD_NO; /* past the limit: the connection closes */
	}
	api_guard_working(&srv->guard, c); /* the body came by its deadline */
	if (req->route.ep != API_EP_CONNECT && !req->body_err) {
		bool admitted;
		enum MHD_Result ret = api_profile_admit(srv, c, req, &admitted);

		if (!admitted)
			return ret;
	}
	if (req->route.ep == API_EP_OTLP_PROFILES)
		return api_otlp_ingest(srv, c, req);
	if (req->route.ep == API_EP_CONNECT)
		return api_connect_answer(srv, c, req);
	return req->route.ep == API_EP_PROFILE_INGEST ? api_profile_ingest(srv, c, req)
						      : api_pyroscope_ingest(srv, c, req);
}
