/*
 * table_fetch.c - GET SERVER/api/v1/unwind/BUILDID (docs/http-api.md,
 * "Unwind tables"): the compiled table of a build ID, with If-None-Match
 * when the agent holds a cached copy, so an unchanged table costs a 304.
 */
#include "agent_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define TABLE_MAX ((size_t)256 << 20)

int agent_fetch_table(struct agent_http *h, const char *server, const char *build_id,
		      const char *etag, struct ember_buf *image, char *new_etag,
		      size_t new_etag_size, char *why, size_t why_size)
{
	char url[1024];
	struct agent_http_req q = { .method = "GET", .url = url, .if_none_match = etag,
				    .max_reply = TABLE_MAX };
	struct agent_http_reply r;
	int err;

	snprintf(url, sizeof(url), "%s/api/v1/unwind/%s", server, build_id);
	err = agent_http_do(h, &q, &r);
	if (err) {
		snprintf(why, why_size, "%s", r.err);
		agent_http_reply_release(&r);
		return err;
	}
	if (r.status == 200) {
		ember_buf_release(image);
		*image = r.body; /* ownership moves to the caller */
		snprintf(new_etag, new_etag_size, "%s", r.etag);
		return 200;
	}
	snprintf(why, why_size, "%.*s", (int)strcspn(r.body.data ? r.body.data : "", "\n"),
		 r.body.data ? r.body.data : "");
	agent_http_reply_release(&r);
	return (int)r.status;
}
