/*
 * body_step.c - the body of a symbolization request, read under the
 * request's memory account (uploads stream to disk instead, artifact_upload.c);
 * a profile write's body is taken the same way (api_request_account,
 * api_body_take: profile_routes.c).
 *
 * A JSON body is parsed as it arrives (wire/'s streamed parser): it is
 * never held whole, and the parse stops at its first error, the rest of
 * the body only read.  A pprof body is kept, in a buffer that grows
 * through the account.  A declared Content-Length over the cap (or over
 * the request's share) is answered 413 before the body is read; a
 * chunked body crossing the cap closes the connection.  What the body
 * costs past the request's share is answered 413 once it is whole, and
 * what the server cannot give now (its memory budget taken by others)
 * 503 with Retry-After.
 */
#include "api_internal.h"
#include "symbolize_json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BODY_CAP ((size_t)32 << 20) /* the JSON request limit of wire/ */

void api_account_free(struct ember_mem_account *a)
{
	ember_mem_account_release(a);
	free(a);
}

int api_request_account(struct api_server *srv, struct api_request *req)
{
	req->acct = calloc(1, sizeof(*req->acct));
	if (!req->acct)
		return -ENOMEM;
	ember_mem_account_init(req->acct, &srv->mem, srv->request_share);
	return 0;
}

static enum MHD_Result first_step(struct api_server *srv, struct MHD_Connection *c,
				  struct api_request *req)
{
	const char *len = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						      MHD_HTTP_HEADER_CONTENT_LENGTH);
	unsigned long long n = len ? strtoull(len, NULL, 10) : 0;
	char msg[160];

	req->upload_started = true;
	if (n > BODY_CAP || n > srv->request_share) {
		snprintf(msg, sizeof(msg), "request body larger than %llu bytes\n",
			 (unsigned long long)(BODY_CAP < srv->request_share ? BODY_CAP
									    : srv->request_share));
		return api_respond_text(srv, c, req, MHD_HTTP_CONTENT_TOO_LARGE, NULL, msg);
	}
	req->body_err = api_request_account(srv, req);
	if (!req->body_err && req->route.ep == API_EP_SYMBOLIZE)
		req->body_err = symjson_parser_new(NULL, req->acct, &req->parser);
	ember_buf_init_account(&req->body, BODY_CAP, req->acct);
	return req->body_err == -ENOMEM ? MHD_NO : MHD_YES;
}

void api_body_take(struct api_request *req, const char *data, size_t size)
{
	if (req->body_err)
		return;
	if (req->body_drop) { /* refused by its head: only read, under the cap */
		req->received += size;
		req->body_err = req->received > req->body.cap ? -EFBIG : 0;
		return;
	}
	if (req->parser)
		req->body_err = symjson_parser_feed(req->parser, data, size);
	else
		req->body_err = ember_buf_append(&req->body, data, size);
	if (req->body_err && !req->parser && req->body_err == -E2BIG && !req->acct->err)
		req->body_err = -EFBIG; /* past the cap itself: the connection closes */
}

enum MHD_Result api_body_step(struct api_server *srv, struct MHD_Connection *c,
			      struct api_request *req, const char *data, size_t *size,
			      bool *complete)
{
	*complete = false;
	if (!req->upload_started) /* the first call: headers only */
		return first_step(srv, c, req);
	if (*size) {
		api_body_take(req, data, *size);
		*size = 0;
		return req->body_err == -EFBIG ? MHD_NO : MHD_YES;
	}
	*complete = true;
	return MHD_YES;
}

enum ember_errkind api_body_error_kind(int err)
{
	switch (err) {
	case -EAGAIN:
		return EMBER_ERRK_BUSY;
	case -ENOMEM:
		return EMBER_ERRK_INTERNAL;
	case -E2BIG:
		return EMBER_ERRK_TOO_LARGE;
	default:
		return EMBER_ERRK_MALFORMED;
	}
}

enum MHD_Result api_respond_body_error(struct api_server *srv, struct MHD_Connection *c,
				       const struct api_request *req, int err, const char *why)
{
	enum ember_errkind kind = api_body_error_kind(err);
	char msg[600];

	if (kind == EMBER_ERRK_BUSY) /* others hold the memory now: ask again */
		snprintf(msg, sizeof(msg), "server busy: %s\n", why);
	else if (kind == EMBER_ERRK_INTERNAL)
		snprintf(msg, sizeof(msg), "out of memory\n");
	else
		snprintf(msg, sizeof(msg), "%s%s", why,
			 why[0] && why[strlen(why) - 1] == '\n' ? "" : "\n");
	return api_respond_kind(srv, c, req, kind, msg);
}
