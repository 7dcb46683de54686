/*
 * profile_ingest.c - POST /api/v1/profiles over HTTP: the token of a
 * profile write (Bearer, or Basic as Grafana Alloy sends it), every query
 * parameter a label, the body handed to the profile service
 * (profsvc_decode, profsvc_ingest: decoded, symbolized, appended; the
 * answer's body written there) and its answer sent.  All of it runs under
 * the request's context (api_profile_ctx): the request's memory account
 * (made when its head arrived, profile_routes.c) bears the body, its
 * decompression, the decoded profile and its symbolization, which asks
 * upstream for at most --upstream-fetches-per-request build IDs and
 * stops at the deadline.  docs/http-api.md, "Ingest".
 */
#include "api_profiles.h"

#include <errno.h>
#include <nettle/base64.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* ---- the token ------------------------------------------------------------- */

/* The password of "Basic base64(user:password)", into out. */
static bool basic_password(const char *b64, char *out, size_t size, size_t *len)
{
	struct base64_decode_ctx ctx;
	uint8_t buf[512];
	size_t n = sizeof(buf);
	const char *colon;

	if (strlen(b64) > BASE64_ENCODE_LENGTH(sizeof(buf) - 2))
		return false;
	base64_decode_init(&ctx);
	if (!base64_decode_update(&ctx, &n, buf, strlen(b64), b64) || !base64_decode_final(&ctx))
		return false;
	colon = memchr(buf, ':', n);
	if (!colon || (size_t)(buf + n - (const uint8_t *)colon - 1) >= size)
		return false;
	*len = (size_t)(buf + n - (const uint8_t *)colon - 1);
	memcpy(out, colon + 1, *len);
	return true;
}

static enum api_writer writer_of(const struct api_server *srv, const char *given, size_t len,
				  char *tenant)
{
	/* every token compared, whatever the first says */
	bool up = ember_token_equal(given, len, srv->token);
	bool in = ember_token_equal(given, len, srv->profiles->ingest_token);
	bool mine = profsvc_token_tenant(srv->profiles->svc, given, len, tenant);

	if (up || in)
		return API_WRITER_ANY;
	return mine ? API_WRITER_TENANT : API_WRITER_NONE;
}

enum api_writer api_profile_writer(const struct api_server *srv, const char *h, char *tenant)
{
	char pw[512];
	size_t n;

	if (h && strncasecmp(h, "Bearer ", 7) == 0)
		return writer_of(srv, h + 7, strlen(h + 7), tenant);
	if (h && strncasecmp(h, "Basic ", 6) == 0 && basic_password(h + 6, pw, sizeof(pw), &n))
		return writer_of(srv, pw, n, tenant);
	return API_WRITER_NONE;
}

/* The write's memory, not the store's: -E2BIG its share, -EAGAIN the
 * budget taken by others, -ENOMEM. */
static bool memory_error(int err)
{
	return err == -E2BIG || err == -EAGAIN || err == -ENOMEM;
}

enum MHD_Result api_profile_refuse(struct api_server *srv, struct MHD_Connection *c,
				   const struct api_request *req, int err, const char *why)
{
	if (err == -ETIMEDOUT || err == -ECANCELED)
		return api_respond_stopped(srv, c, req, err);
	if (memory_error(err)) /* never "store unavailable", never a store error */
		return api_respond_body_error(srv, c, req, err, why);
	return api_profile_error(srv, c, req, err, why);
}

enum MHD_Result api_profile_respond(struct api_server *srv, struct MHD_Connection *c,
				    const struct api_request *req, struct profsvc_out *out)
{
	enum MHD_Result ret;

	if (!out->err)
		return api_profile_ok(srv, c, req, "application/json", &out->body, NULL);
	ret = api_profile_refuse(srv, c, req, out->err, out->why);
	ember_buf_release(&out->body);
	return ret;
}

/* A body that does not decode: 400; past the decompression cap or the
 * write's memory 413, the memory budget taken 503. */
static enum MHD_Result bad_profile(struct api_server *srv, struct MHD_Connection *c,
				   const struct api_request *req, int err, const char *why)
{
	char msg[600];

	profsvc_count_reject(api_profile_svc(srv, req), profsvc_decode_reject(err));
	if (err == -E2BIG)
		snprintf(msg, sizeof(msg), "profile too large once decompressed: %s", why);
	else if (!memory_error(err))
		snprintf(msg, sizeof(msg), "not a pprof profile: %s", why);
	return api_profile_refuse(srv, c, req, memory_error(err) ? err : -EINVAL,
				  err == -EAGAIN || err == -ENOMEM ? why : msg);
}

enum MHD_Result api_profile_body_refused(struct api_server *srv, struct MHD_Connection *c,
					 const struct api_request *req)
{
	profsvc_count_reject(api_profile_svc(srv, req), profsvc_decode_reject(req->body_err));
	return api_profile_refuse(srv, c, req, req->body_err,
				  req->body_err == -E2BIG
					  ? "profile body larger than the memory the server gives "
					    "one request"
					  : "no memory free for the profile body now");
}

/* Every query parameter a label. */
struct label_walk {
	struct pstore_label v[64];
	size_t n;
	bool over;
};

static enum MHD_Result take_label(void *cls, enum MHD_ValueKind kind, const char *key,
				  const char *value)
{
	struct label_walk *w = cls;

	(void)kind;
	if (w->n == sizeof(w->v) / sizeof(w->v[0])) {
		w->over = true;
		return MHD_NO;
	}
	w->v[w->n++] = (struct pstore_label){ key, value ? value : "" };
	return MHD_YES;
}

/* "X-Ember-Check: 1": check the write (token, labels, body), store nothing. */
static bool check_only(struct MHD_Connection *c)
{
	const char *v = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Ember-Check");

	return v && strcmp(v, "1") == 0;
}

enum MHD_Result api_profile_ingest(struct api_server *srv, struct MHD_Connection *c,
				   struct api_request *req)
{
	const char *enc = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						      MHD_HTTP_HEADER_CONTENT_ENCODING);
	struct label_walk lw = { .n = 0 };
	struct profsvc_in in = { .route = PROFSVC_ROUTE_PROFILES };
	struct api_profile_ctx x;
	struct profsvc_out out;
	char why[512];
	int err;

	if (req->body_err)
		return api_profile_body_refused(srv, c, req);
	MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, take_label, &lw);
	if (lw.over)
		return api_profile_error(srv, c, req, -PSTORE_ERR_LIMIT,
					 "more than 64 query parameters (labels)");
	err = profsvc_decode(api_profile_svc(srv, req), req->body.data ? req->body.data : "",
			     req->body.len, enc, req->acct, &in.p, why, sizeof(why));
	if (err)
		return bad_profile(srv, c, req, err, why);
	in.labels = lw.v;
	in.n_labels = lw.n;
	in.check_only = check_only(c);
	in.time_ns = profsvc_now_ns();
	in.input_bytes = req->body.len;
	if (profsvc_encoding_identity(enc)) { /* else not what the log replays */
		in.body = req->body.data;
		in.body_len = req->body.len;
	}
	if (api_profile_ctx_init(&x, srv, req)) /* the body's account is there */
		return MHD_NO;
	in.request = &x.ro;
	profsvc_ingest(api_profile_svc(srv, req), &in, &out);
	return api_profile_respond(srv, c, req, &out);
}
