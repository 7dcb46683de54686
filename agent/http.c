/*
 * http.c - the agent's HTTP client, over Ember's (http-client/httpc.h:
 * libcurl loaded with dlopen at the first agent_http_new(), so an agent
 * without --server never maps libcurl and its TLS libraries), one handle
 * reused so connections stay alive: unwind tables, profile pushes and
 * uploads all go through agent_http_do().  Every reply body lands in a
 * capped buffer; the bearer token goes on every request when one is set,
 * a push's tenant (X-Scope-OrgID) on the pushes.
 */
#include "agent_internal.h"
#include "httpc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct agent_http {
	struct httpc *c;
	char *auth; /* "Authorization: Bearer ..." or NULL */
};

struct agent_http *agent_http_new(const char *token)
{
	struct agent_http *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	if (httpc_new(NULL, &h->c)) {
		agent_http_free(h);
		return NULL;
	}
	if (token && *token) {
		size_t n = strlen(token) + 32;

		h->auth = malloc(n);
		if (h->auth)
			snprintf(h->auth, n, "Authorization: Bearer %s", token);
	}
	if (token && *token && !h->auth) {
		agent_http_free(h);
		return NULL;
	}
	return h;
}

void agent_http_free(struct agent_http *h)
{
	if (!h)
		return;
	httpc_free(h->c);
	free(h->auth);
	free(h);
}

static void on_header(void *ctx, const char *line, size_t n)
{
	struct agent_http_reply *r = ctx;
	const char *v;
	size_t vl;

	if (httpc_header_is(line, n, "ETag", &v, &vl) && vl < sizeof(r->etag)) {
		memcpy(r->etag, v, vl);
		r->etag[vl] = '\0';
	}
	if (httpc_header_is(line, n, "WWW-Authenticate", &v, &vl))
		r->challenge = true;
}

#define AGENT_HTTP_LINES 7
#define AGENT_HTTP_LINE 256

/* The request's header lines into line[] (storage in text). */
static size_t headers_of(const struct agent_http *h, const struct agent_http_req *q,
			 char text[AGENT_HTTP_LINES][AGENT_HTTP_LINE],
			 const char *line[AGENT_HTTP_LINES])
{
	size_t n = 0;

	if (h->auth)
		line[n++] = h->auth;
	if (q->content_type) {
		snprintf(text[n], AGENT_HTTP_LINE, "Content-Type: %s", q->content_type);
		line[n] = text[n], n++;
	}
	if (q->content_encoding) {
		snprintf(text[n], AGENT_HTTP_LINE, "Content-Encoding: %s", q->content_encoding);
		line[n] = text[n], n++;
	}
	if (q->if_none_match && *q->if_none_match) {
		snprintf(text[n], AGENT_HTTP_LINE, "If-None-Match: %s", q->if_none_match);
		line[n] = text[n], n++;
	}
	if (q->tenant) {
		snprintf(text[n], AGENT_HTTP_LINE, "X-Scope-OrgID: %s", q->tenant);
		line[n] = text[n], n++;
	}
	if (q->header)
		line[n++] = q->header;
	line[n++] = "Expect:";
	return n;
}

int agent_http_do(struct agent_http *h, const struct agent_http_req *q,
		  struct agent_http_reply *r)
{
	char text[AGENT_HTTP_LINES][AGENT_HTTP_LINE];
	const char *line[AGENT_HTTP_LINES];
	struct httpc_req hq = { .method = q->method, .url = q->url, .headers = line,
				.body = q->body, .body_len = q->body_len, .reply = &r->body,
				.read = q->read, .read_ctx = q->read_ctx,
				.header = on_header, .header_ctx = r,
				.connect_timeout_ms = 3000,
				.timeout_ms = q->timeout_ms ? (unsigned)q->timeout_ms : 30000,
				.user_agent = "ember-agent" };
	struct httpc_answer a;
	int err;

	memset(r, 0, sizeof(*r));
	ember_buf_init(&r->body, q->max_reply ? q->max_reply : (size_t)1 << 20);
	if (strcmp(q->method, "GET") && !q->body && !q->read)
		hq.body = ""; /* every other verb sends its (maybe empty) body */
	hq.nheaders = headers_of(h, q, text, line);
	err = httpc_do(h->c, &hq, &a);
	if (err) {
		snprintf(r->err, sizeof(r->err), "%s", a.why);
		return err;
	}
	r->status = a.status;
	return 0;
}

void agent_http_reply_release(struct agent_http_reply *r)
{
	ember_buf_release(&r->body);
}
