/*
 * respond.c - small responses (text, JSON, errors), counted in metrics.
 * File bodies are answered by debuginfod.c straight from their fds.
 */
#include "api_internal.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

/* The body (malloc'd) with status, type and, when retry_after, the
 * Retry-After header of a 503. */
static enum MHD_Result respond(struct api_server *srv, struct MHD_Connection *c,
			       const struct api_request *req, unsigned status,
			       const char *type, char *body, size_t len, bool retry_after)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				type ? type : "text/plain");
	if (retry_after)
		MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, API_RETRY_AFTER_S);
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	api_metrics_count(&srv->metrics, req->route.ep, status, len);
	return ret;
}

enum MHD_Result api_respond_owned(struct api_server *srv, struct MHD_Connection *c,
				  const struct api_request *req, unsigned status,
				  const char *type, char *body, size_t len)
{
	return respond(srv, c, req, status, type, body, len, false);
}

enum MHD_Result api_respond_text(struct api_server *srv, struct MHD_Connection *c,
				 const struct api_request *req, unsigned status,
				 const char *type, const char *body)
{
	char *copy = strdup(body);

	if (!copy)
		return MHD_NO;
	return api_respond_owned(srv, c, req, status, type, copy, strlen(copy));
}

/* The status of kind with body (copied) and Retry-After: ask again. */
static enum MHD_Result respond_retry(struct api_server *srv, struct MHD_Connection *c,
				     const struct api_request *req, enum ember_errkind kind,
				     const char *body)
{
	char *copy = strdup(body);

	if (!copy)
		return MHD_NO;
	return respond(srv, c, req, api_status_of_kind(kind), NULL, copy, strlen(copy), true);
}

enum MHD_Result api_respond_retry(struct api_server *srv, struct MHD_Connection *c,
				  const struct api_request *req, const char *body)
{
	return respond_retry(srv, c, req, EMBER_ERRK_BUSY, body);
}

enum MHD_Result api_respond_unavailable_msg(struct api_server *srv,
					    struct MHD_Connection *c,
					    const struct api_request *req, const char *why)
{
	char body[700];

	snprintf(body, sizeof(body), "store unavailable: %s%s", why,
		 why[0] && why[strlen(why) - 1] == '\n' ? "" : "\n");
	api_metrics_store_error(&srv->metrics, req->route.ep);
	return respond_retry(srv, c, req, EMBER_ERRK_UNAVAILABLE, body);
}

enum MHD_Result api_respond_unavailable(struct api_server *srv, struct MHD_Connection *c,
					const struct api_request *req, int err)
{
	return api_respond_unavailable_msg(srv, c, req, strerror(-err));
}

enum MHD_Result api_respond_kind(struct api_server *srv, struct MHD_Connection *c,
				 const struct api_request *req, enum ember_errkind kind,
				 const char *body)
{
	switch (kind) {
	case EMBER_ERRK_UNAVAILABLE:
		return api_respond_unavailable_msg(srv, c, req, body);
	case EMBER_ERRK_BUSY:
		return api_respond_retry(srv, c, req, body);
	default:
		return api_respond_text(srv, c, req, api_status_of_kind(kind), NULL, body);
	}
}

enum MHD_Result api_respond_json_or(struct api_server *srv, struct MHD_Connection *c,
				    const struct api_request *req, int err, json_t *o)
{
	char *text;

	if (err) {
		json_decref(o);
		return err == -ENOMEM ? MHD_NO : api_respond_unavailable(srv, c, req, err);
	}
	text = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (!text)
		return MHD_NO;
	return api_respond_owned(srv, c, req, MHD_HTTP_OK, "application/json", text,
				 strlen(text));
}
