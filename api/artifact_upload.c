/*
 * artifact_upload.c - PUT/POST /api/v1/artifacts/ID/KIND: the CI upload, streamed.
 *
 * The body goes straight from the socket into a temporary blob (never all
 * in memory) under a byte cap.  Authorization and a declared
 * Content-Length over the cap are refused before any body is read, so a
 * client sending "Expect: 100-continue" sends nothing; a chunked body
 * that crosses the cap is cut off.  A body that falls under the minimum
 * average rate (--min-upload-rate-kb, after a grace of 10 s: large files
 * may take long, but not for ever) has its connection closed by
 * conn_guard.c.  Once complete the blob is sealed,
 * validated and stored by artifact_ingest.c.  A request that ends early (client
 * gone, server stopping) discards its blob: nothing partial is kept.
 */
#include "api_internal.h"
#include "api_profiles.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *kind_name(enum api_upload_kind k)
{
	return k == API_UPLOAD_EXECUTABLE ? "executable"
	       : k == API_UPLOAD_SOURCES ? "sources" : "debuginfo";
}

/* Each upload's outcome at info level: what, and the reason a client got
 * when it was refused (msg ends with a newline). */
static void log_outcome(const struct api_request *req, unsigned status, const char *how,
			const char *msg)
{
	pr_info("api: upload of '%s' (%s) %s (%u)%s%.*s", req->route.build_id,
		kind_name(req->route.kind), how, status, msg ? ": " : "",
		msg ? (int)strcspn(msg, "\n") : 0, msg ? msg : "");
}

static enum MHD_Result reject(struct api_server *srv, struct MHD_Connection *c,
			      struct api_request *req, unsigned status,
			      enum api_reject why, const char *msg)
{
	log_outcome(req, status, "refused", msg);
	api_metrics_reject(&srv->metrics, why);
	store_blob_discard(req->blob);
	req->blob = NULL;
	if (status == MHD_HTTP_SERVICE_UNAVAILABLE) /* the store failed: try again */
		return api_respond_unavailable_msg(srv, c, req, msg);
	return api_respond_text(srv, c, req, status, NULL, msg);
}

/* The upload could not be stored (err < 0): 507 when the disk is full,
 * 503 (try again) when the store failed otherwise. */
static enum MHD_Result reject_stored(struct api_server *srv, struct MHD_Connection *c,
				     struct api_request *req, int err)
{
	enum ember_errkind kind = ember_errkind_of_errno(err);
	char msg[160];

	snprintf(msg, sizeof(msg), "cannot store the upload: %s\n", strerror(-err));
	return reject(srv, c, req, api_status_of_kind(kind),
		      kind == EMBER_ERRK_NO_SPACE ? API_REJECT_NO_SPACE : API_REJECT_STORE, msg);
}

static bool declared_too_large(struct api_server *srv, struct MHD_Connection *c)
{
	const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						    MHD_HTTP_HEADER_CONTENT_LENGTH);

	return h && strtoull(h, NULL, 10) > srv->max_upload;
}

static enum MHD_Result begin(struct api_server *srv, struct MHD_Connection *c,
			     struct api_request *req)
{
	char msg[128];
	int err;

	if (!api_auth_ok(srv, c))
		return reject(srv, c, req, MHD_HTTP_UNAUTHORIZED, API_REJECT_AUTH,
			      "missing or wrong bearer token\n");
	if (declared_too_large(srv, c)) {
		snprintf(msg, sizeof(msg), "upload larger than the limit of %llu bytes\n",
			 (unsigned long long)srv->max_upload);
		return reject(srv, c, req, api_status_of_kind(EMBER_ERRK_TOO_LARGE),
			      API_REJECT_TOO_LARGE, msg);
	}
	err = store_blob_begin(srv->store, &req->blob);
	if (err)
		return reject_stored(srv, c, req, err);
	return MHD_YES;
}

/* Write a chunk; on the first failure the blob is dropped at once (its
 * disk space back) and the rest of the body only read. */
static void receive(struct api_server *srv, struct api_request *req,
		    const char *data, size_t size)
{
	int err;

	if (req->upload_err) {
		req->received += size; /* only read now, at the minimum rate still */
		return;
	}
	err = size > srv->max_upload - req->received ? -E2BIG
						     : store_blob_write(req->blob, data, size);
	req->received += size;
	if (err) {
		req->upload_err = err;
		store_blob_discard(req->blob);
		req->blob = NULL;
	}
}

/* The upload's ?name= as the store keeps it (escaped: any bytes may come,
 * a header and JSON must carry it), else the kind's name. */
static const char *upload_name(struct MHD_Connection *c, const struct api_request *req,
			       char out[STORE_NAME_MAX])
{
	const char *n = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "name");

	if (n && *n && !strchr(n, '/') && ember_name_escape(n, out, STORE_NAME_MAX) > 0)
		return out;
	return req->route.kind == API_UPLOAD_EXECUTABLE ? "executable" : "debuginfo";
}

static enum MHD_Result finish(struct api_server *srv, struct MHD_Connection *c,
			      struct api_request *req)
{
	struct api_ingest_result res = { 0 };
	struct store_blob *b = req->blob;
	char name[STORE_NAME_MAX];
	unsigned kinds = req->route.kind == API_UPLOAD_EXECUTABLE
				 ? STORE_KIND_EXECUTABLE : STORE_KIND_DEBUGINFO;

	req->blob = NULL;
	/* a long upload's head is long past: its validation's wait counts from now */
	if (api_validation_begin(srv, ember_monotonic_ms() + srv->request_timeout_ms)) {
		store_blob_discard(b);
		log_outcome(req, MHD_HTTP_SERVICE_UNAVAILABLE, "refused", "server busy\n");
		return api_respond_retry(srv, c, req, "server busy: no memory free to validate "
						      "the upload now\n");
	}
	if (req->route.kind == API_UPLOAD_SOURCES)
		api_ingest_sources(srv->store, b, req->route.build_id, srv->max_upload,
				   &res);
	else
		api_ingest_artifact(srv->store, b, req->route.build_id, kinds,
				    upload_name(c, req, name), STORE_FROM_UPLOAD, &res);
	api_validation_end(srv);
	if (res.status >= 400)
		api_metrics_reject(&srv->metrics, res.reject);
	else if (res.is_new)
		srv->metrics.uploads_accepted++;
	if (res.is_new && req->route.kind != API_UPLOAD_SOURCES) /* stored profiles' frames */
		api_profiles_symbols_arrived(srv, req->route.build_id);
	else
		srv->metrics.uploads_duplicate++;
	log_outcome(req, res.status,
		    res.status >= 400 ? "refused" : res.is_new ? "accepted" : "already stored",
		    res.status >= 400 ? res.message : NULL);
	if (res.status == MHD_HTTP_SERVICE_UNAVAILABLE)
		return api_respond_unavailable_msg(srv, c, req, res.message);
	return api_respond_text(srv, c, req, res.status,
				res.status < 400 ? "application/json" : NULL,
				res.message);
}

/* The body's deadline from its rate so far: moved (the guard's lock
 * taken) only once it has fallen behind what the bytes received allow,
 * and then a second past it, so a fast upload takes the lock about once
 * a second of allowance and a connection is never closed while its body
 * keeps the rate. */
static void rate_due(struct api_server *srv, struct MHD_Connection *c, struct api_request *req)
{
	uint64_t at = api_guard_rate_due(&srv->guard, req->body_start_ms, req->received);

	if (!at || at <= req->body_due_ms)
		return;
	req->body_due_ms = at + 1000;
	api_guard_body_due(&srv->guard, c, req->body_due_ms);
}

enum MHD_Result api_upload_step(struct api_server *srv, struct MHD_Connection *c,
				struct api_request *req, const char *data,
				size_t *size)
{
	if (!req->upload_started) { /* the first call: headers only */
		enum MHD_Result r;

		req->upload_started = true;
		r = begin(srv, c, req);
		req->body_start_ms = ember_monotonic_ms();
		if (req->blob) /* taken: it must keep the minimum rate */
			rate_due(srv, c, req);
		else /* refused: what it still sends must come by the deadline */
			api_guard_body_due(&srv->guard, c, req->deadline_ms);
		return r;
	}
	if (!req->blob && !req->upload_err)
		return MHD_YES; /* refused at the start: drop whatever arrives */
	if (*size) {
		receive(srv, req, data, *size);
		*size = 0;
		rate_due(srv, c, req);
		/* A body without a declared length crossed the cap: MHD cannot
		 * answer in the middle of a body, so the connection is closed
		 * rather than reading on without end. */
		if (req->upload_err == -E2BIG) {
			log_outcome(req, MHD_HTTP_CONTENT_TOO_LARGE, "cut off",
				    "chunked body past the upload limit\n");
			api_metrics_reject(&srv->metrics, API_REJECT_TOO_LARGE);
			return MHD_NO;
		}
		return MHD_YES;
	}
	api_guard_working(&srv->guard, c); /* whole: validating and storing take their time */
	return req->upload_err ? reject_stored(srv, c, req, req->upload_err)
			       : finish(srv, c, req);
}

void api_upload_abort(struct api_server *srv, struct api_request *req)
{
	if (!req->blob)
		return;
	store_blob_discard(req->blob);
	req->blob = NULL;
	api_metrics_reject(&srv->metrics, API_REJECT_ABORTED); /* after: tests wait on it */
}
