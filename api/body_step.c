/*
 * body_step.c - a request body read into memory under a cap (the
 * symbolization requests; uploads stream to disk instead, upload.c).
 * A declared Content-Length over the cap is answered 413 before the body
 * is read; a chunked body crossing it closes the connection.
 */
#include "api_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define BODY_CAP ((size_t)32 << 20) /* the JSON request limit of wire/ */

enum MHD_Result api_body_step(struct api_server *srv, struct MHD_Connection *c,
			      struct api_request *req, const char *data, size_t *size,
			      bool *complete)
{
	const char *len;

	*complete = false;
	if (!req->upload_started) { /* the first call: headers only */
		req->upload_started = true;
		ember_buf_init(&req->body, BODY_CAP);
		len = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						  MHD_HTTP_HEADER_CONTENT_LENGTH);
		if (len && strtoull(len, NULL, 10) > BODY_CAP)
			return api_respond_text(srv, c, req, MHD_HTTP_CONTENT_TOO_LARGE, NULL,
						"request body larger than 32 MiB\n");
		return MHD_YES;
	}
	if (*size) {
		int err = ember_buf_append(&req->body, data, *size);

		*size = 0;
		return err ? MHD_NO : MHD_YES;
	}
	*complete = true;
	return MHD_YES;
}
