/*
 * respond.c - small responses (text, JSON, errors), counted in metrics.
 * File bodies are answered by debuginfod.c straight from their fds.
 */
#include "api_internal.h"

#include <string.h>

enum MHD_Result api_respond_owned(struct api_server *srv, struct MHD_Connection *c,
				  const struct api_request *req, unsigned status,
				  const char *type, char *body, size_t len)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				type ? type : "text/plain");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	api_metrics_count(&srv->metrics, req->route.ep, status, len);
	return ret;
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
