/*
 * web.c - the browser UI's files at / (web/, embedded at build time:
 * web_assets.h): GET and HEAD, with the asset's ETag and
 * "Cache-Control: no-cache" (a browser keeps its copy and revalidates it:
 * 304 on If-None-Match until the server carries other bytes), and a
 * Content-Security-Policy that lets the page load nothing but this
 * server's own files (no CDN, no inline script).  docs/web-ui.md.
 */
#include "api_internal.h"
#include "web_assets.h"

#include <string.h>

#define WEB_CSP                                                                       \
	"default-src 'self'; script-src 'self'; worker-src 'self'; style-src 'self'; " \
	"img-src 'self' data: blob:; connect-src 'self'; object-src 'none'; "          \
	"base-uri 'none'; frame-ancestors 'none'; form-action 'self'"

bool api_web_path(const char *url)
{
	return web_asset_find(url) != NULL;
}

/* Whether If-None-Match names etag (or is "*"). */
static bool not_modified(struct MHD_Connection *c, const char *etag)
{
	const char *inm = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						      MHD_HTTP_HEADER_IF_NONE_MATCH);

	return inm && (strstr(inm, etag) || strcmp(inm, "*") == 0);
}

enum MHD_Result api_serve_web(struct api_server *srv, struct MHD_Connection *c,
			      struct api_request *req, const char *url)
{
	const struct web_asset *a = web_asset_find(url);
	bool same = a && not_modified(c, a->etag);
	struct MHD_Response *r;
	enum MHD_Result ret;
	unsigned status = same ? MHD_HTTP_NOT_MODIFIED : MHD_HTTP_OK;

	if (!a)
		return api_respond_text(srv, c, req, MHD_HTTP_NOT_FOUND, NULL, "not found");
	/* the table is static: MHD sends from it without a copy */
	r = MHD_create_response_from_buffer(same ? 0 : a->len, (void *)a->data,
					    MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, a->type);
	MHD_add_response_header(r, MHD_HTTP_HEADER_ETAG, a->etag);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, "Content-Security-Policy", WEB_CSP);
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	api_metrics_count(&srv->metrics, req->route.ep, status, same ? 0 : a->len);
	return ret;
}
