/*
 * http.c - the agent's HTTP client (libcurl, one easy handle reused so
 * connections stay alive): unwind tables, profile pushes and uploads all
 * go through agent_http_do().  Every reply body lands in a capped buffer;
 * the bearer token goes on every request when one is set.
 */
#include "agent_internal.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct agent_http {
	CURL *curl;
	char *auth; /* "Authorization: Bearer ..." or NULL */
};

struct agent_http *agent_http_new(const char *token)
{
	struct agent_http *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	curl_global_init(CURL_GLOBAL_DEFAULT);
	h->curl = curl_easy_init();
	if (token && *token) {
		size_t n = strlen(token) + 32;

		h->auth = malloc(n);
		if (h->auth)
			snprintf(h->auth, n, "Authorization: Bearer %s", token);
	}
	if (!h->curl || (token && *token && !h->auth)) {
		agent_http_free(h);
		return NULL;
	}
	return h;
}

void agent_http_free(struct agent_http *h)
{
	if (!h)
		return;
	if (h->curl)
		curl_easy_cleanup(h->curl);
	free(h->auth);
	free(h);
}

static size_t on_body(char *data, size_t size, size_t n, void *ctx)
{
	struct agent_http_reply *r = ctx;

	return ember_buf_append(&r->body, data, size * n) ? 0 : size * n;
}

static size_t on_header(char *data, size_t size, size_t n, void *ctx)
{
	struct agent_http_reply *r = ctx;
	size_t len = size * n;

	if (len > 5 && !strncasecmp(data, "ETag:", 5)) {
		const char *v = data + 5;
		size_t vl = len - 5;

		while (vl && (*v == ' ' || *v == '\t'))
			v++, vl--;
		while (vl && (v[vl - 1] == '\r' || v[vl - 1] == '\n' || v[vl - 1] == ' '))
			vl--;
		if (vl < sizeof(r->etag)) {
			memcpy(r->etag, v, vl);
			r->etag[vl] = '\0';
		}
	}
	return len;
}

static int curl_errno(CURLcode c)
{
	switch (c) {
	case CURLE_COULDNT_CONNECT:
		return -ECONNREFUSED;
	case CURLE_OPERATION_TIMEDOUT:
		return -ETIMEDOUT;
	case CURLE_COULDNT_RESOLVE_HOST:
		return -EHOSTUNREACH;
	case CURLE_WRITE_ERROR:
		return -E2BIG; /* the reply passed its cap */
	case CURLE_OUT_OF_MEMORY:
		return -ENOMEM;
	default:
		return -EIO;
	}
}

static struct curl_slist *headers_of(const struct agent_http *h, const struct agent_http_req *q)
{
	struct curl_slist *l = NULL;
	char line[256];

	if (h->auth)
		l = curl_slist_append(l, h->auth);
	if (q->content_type) {
		snprintf(line, sizeof(line), "Content-Type: %s", q->content_type);
		l = curl_slist_append(l, line);
	}
	if (q->content_encoding) {
		snprintf(line, sizeof(line), "Content-Encoding: %s", q->content_encoding);
		l = curl_slist_append(l, line);
	}
	if (q->if_none_match && *q->if_none_match) {
		snprintf(line, sizeof(line), "If-None-Match: %s", q->if_none_match);
		l = curl_slist_append(l, line);
	}
	return curl_slist_append(l, "Expect:");
}

int agent_http_do(struct agent_http *h, const struct agent_http_req *q,
		  struct agent_http_reply *r)
{
	CURL *c = h->curl;
	struct curl_slist *hdrs;
	CURLcode rc;

	memset(r, 0, sizeof(*r));
	ember_buf_init(&r->body, q->max_reply ? q->max_reply : (size_t)1 << 20);
	hdrs = headers_of(h, q);
	curl_easy_reset(c);
	curl_easy_setopt(c, CURLOPT_URL, q->url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, 3000L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, q->timeout_ms ? q->timeout_ms : 30000L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, r->err);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "ember-agent");
	if (strcmp(q->method, "GET")) {
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, q->method);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, q->body ? q->body : "");
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)q->body_len);
	}
	rc = curl_easy_perform(c);
	curl_slist_free_all(hdrs);
	if (rc != CURLE_OK) {
		if (!r->err[0])
			snprintf(r->err, sizeof(r->err), "%s", curl_easy_strerror(rc));
		return curl_errno(rc);
	}
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
	return 0;
}

void agent_http_reply_release(struct agent_http_reply *r)
{
	ember_buf_release(&r->body);
}
