/*
 * push.c - the profiles to POST SERVER/api/v1/profiles, zstd- or
 * gzip-compressed, with the bearer token.  Profiles wait in a bounded
 * queue (--buffer-kb) while the server is down; retries back off
 * exponentially (1 s doubling to 5 min, reset by a success).  When the
 * queue would pass its cap the oldest profiles are dropped and counted;
 * a profile the server refuses (4xx other than 404, 408 and 429) is
 * dropped at once, counted, and its reason logged; a refusal no later
 * push can change (400, 401, 403: the token or the labels) is kept for
 * the agent to stop on (agent_push_refusal).  agent_push_check asks the
 * server before sampling starts whether it takes the token and labels
 * (X-Ember-Check: checked as a push, nothing stored).  With --tenant,
 * every push and the check name it (X-Scope-OrgID, docs/http-api.md
 * "Tenants"); a server with --multitenancy refuses one without (401,
 * told from the token's 401 by its lack of WWW-Authenticate).
 */
#include "agent_internal.h"
#include "httpc.h"
#include "pprof.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>
#include <zlib.h>

#define BACKOFF_MIN_MS 1000
#define BACKOFF_MAX_MS (5 * 60 * 1000)

struct queued {
	char *data;
	size_t len;
};

struct agent_push {
	struct agent_http *http;
	char url[1024];
	char tenant[EMBER_TENANT_MAX + 1]; /* "": none */
	bool gzip;
	size_t cap;
	struct queued *q; /* a ring would do; profiles are few */
	size_t n, alloc, bytes;
	uint64_t next_ms, backoff_ms;
	uint64_t streak; /* failures in a row */
	char status_buf[16];
	char refusal[1600]; /* a permanent refusal's reason, "" while none */
	struct agent_push_stats st;
};

struct agent_push *agent_push_new(struct agent_http *h, const char *server, const char *tenant,
				  bool gzip, size_t cap_bytes, int *err)
{
	struct agent_push *p = calloc(1, sizeof(*p));

	if (!p) {
		*err = -ENOMEM;
		return NULL;
	}
	p->http = h;
	snprintf(p->url, sizeof(p->url), "%s/api/v1/profiles", server);
	snprintf(p->tenant, sizeof(p->tenant), "%s", tenant ? tenant : "");
	p->gzip = gzip;
	p->cap = cap_bytes;
	return p;
}

void agent_push_free(struct agent_push *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		free(p->q[i].data);
	free(p->q);
	free(p);
}

static void drop_front(struct agent_push *p)
{
	p->bytes -= p->q[0].len;
	free(p->q[0].data);
	memmove(p->q, p->q + 1, (p->n - 1) * sizeof(*p->q));
	p->n--;
}

static int compress_zstd(const struct ember_buf *raw, struct queued *out)
{
	size_t bound = ZSTD_compressBound(raw->len), n;

	out->data = malloc(bound ? bound : 1);
	if (!out->data)
		return -ENOMEM;
	n = ZSTD_compress(out->data, bound, raw->data, raw->len, 3);
	if (ZSTD_isError(n)) {
		free(out->data);
		return -EIO;
	}
	out->len = n;
	return 0;
}

static int compress_gzip(const struct ember_buf *raw, struct queued *out)
{
	z_stream z = { 0 };
	size_t bound = raw->len + raw->len / 100 + 64;
	int rc;

	out->data = malloc(bound);
	if (!out->data || deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY)) {
		free(out->data);
		return -ENOMEM;
	}
	z.next_in = (Bytef *)raw->data;
	z.avail_in = (uInt)raw->len;
	z.next_out = (Bytef *)out->data;
	z.avail_out = (uInt)bound;
	rc = deflate(&z, Z_FINISH);
	out->len = bound - z.avail_out;
	deflateEnd(&z);
	if (rc != Z_STREAM_END) {
		free(out->data);
		return -EIO;
	}
	return 0;
}

int agent_push_enqueue(struct agent_push *p, const struct ember_buf *raw)
{
	struct queued e;
	int err = p->gzip ? compress_gzip(raw, &e) : compress_zstd(raw, &e);

	if (err)
		return err;
	if (e.len > p->cap) {
		p->st.dropped++;
		p->st.dropped_bytes += e.len;
		free(e.data);
		return -E2BIG;
	}
	while (p->n && p->bytes + e.len > p->cap) {
		p->st.dropped++;
		p->st.dropped_bytes += p->q[0].len;
		drop_front(p);
	}
	if (EMBER_VEC_PUSH(p->q, p->n, p->alloc, e)) {
		free(e.data);
		return -ENOMEM;
	}
	p->bytes += e.len;
	return 0;
}

#define status_text(st) (snprintf(p->status_buf, sizeof(p->status_buf), "%ld", (st)), p->status_buf)

/* A status worth retrying: the server may take it later. */
static bool retryable(long status)
{
	return status == 404 || status == 408 || status == 429 || status >= 500;
}

static void backoff(struct agent_push *p, uint64_t now_ms)
{
	p->backoff_ms = p->backoff_ms ? p->backoff_ms * 2 : BACKOFF_MIN_MS;
	if (p->backoff_ms > BACKOFF_MAX_MS)
		p->backoff_ms = BACKOFF_MAX_MS;
	p->next_ms = now_ms + p->backoff_ms;
	p->st.failed_attempts++;
}

/* A refusal no later push can change: the token, the labels, the tenant. */
static bool permanent(long status)
{
	return status == 400 || status == 401 || status == 403;
}

/* What the agent's user can give to lift a refusal: the token for a 401
 * with a challenge (WWW-Authenticate), the tenant for one without (a
 * server with --multitenancy and no X-Scope-OrgID); "" otherwise. */
static const char *refusal_hint(const struct agent_push *p, const struct agent_http_reply *r)
{
	if (r->status != 401)
		return "";
	if (r->challenge)
		return " (give --token, --token-file or EMBER_TOKEN)";
	return p->tenant[0] ? "" : " (give --tenant NAME)";
}

/* "HTTP 401: the server's reason" into out, its body's first line. */
static void refusal_text(const struct agent_push *p, const struct agent_http_reply *r, char *out,
			 size_t size)
{
	const char *body = r->body.data ? r->body.data : "";
	int n = (int)strcspn(body, "\r\n");

	snprintf(out, size, "HTTP %ld: %.*s%s", r->status, n > 300 ? 300 : n, body,
		 refusal_hint(p, r));
}

/* The tenant of p's requests: NULL for none. */
static const char *tenant_of(const struct agent_push *p)
{
	return p->tenant[0] ? p->tenant : NULL;
}

/* Send the oldest profile: 0 sent or dropped, 1 to retry later. */
static int send_one(struct agent_push *p, uint64_t now_ms)
{
	struct agent_http_req q = { .method = "POST", .url = p->url, .body = p->q[0].data,
				    .body_len = p->q[0].len,
				    .content_type = "application/octet-stream",
				    .content_encoding = p->gzip ? "gzip" : "zstd",
				    .tenant = tenant_of(p), .max_reply = 64 << 10 };
	struct agent_http_reply r;
	int err = agent_http_do(p->http, &q, &r);

	p->st.last_status = err ? 0 : r.status;
	if (err || retryable(r.status)) {
		p->streak++;
		if ((p->streak & (p->streak - 1)) == 0) /* the 1st, 2nd, 4th, ... failure */
			pr_warn("agent: cannot push a profile to '%s': %s%s (failure %" PRIu64
				"); retrying with backoff",
				p->url, err ? r.err : "HTTP ",
				err ? "" : r.status == 404 ? "404: the server has no profile ingest route"
							   : status_text(r.status),
				p->streak);
		agent_http_reply_release(&r);
		backoff(p, now_ms);
		return 1;
	}
	p->streak = 0;
	if (r.status >= 200 && r.status < 300) {
		p->st.sent++;
	} else {
		char why[400];

		p->st.refused++;
		refusal_text(p, &r, why, sizeof(why));
		pr_err("agent: '%s' refused a profile: %s", p->url, why);
		if (permanent(r.status))
			snprintf(p->refusal, sizeof(p->refusal), "agent: '%s' refused a profile: %s",
				 p->url, why);
	}
	agent_http_reply_release(&r);
	drop_front(p);
	p->backoff_ms = 0;
	p->next_ms = 0;
	return 0;
}

long agent_push_run(struct agent_push *p, uint64_t now_ms)
{
	while (p->n && !p->refusal[0]) {
		if (now_ms < p->next_ms)
			return (long)(p->next_ms - now_ms);
		if (send_one(p, now_ms))
			return (long)(p->next_ms - now_ms);
	}
	return -1;
}

void agent_push_stats(const struct agent_push *p, struct agent_push_stats *s)
{
	*s = p->st;
	s->queued = p->n;
	s->queued_bytes = p->bytes;
	s->backoff_ms = p->backoff_ms;
}

const char *agent_push_refusal(const struct agent_push *p)
{
	return p->refusal[0] ? p->refusal : NULL;
}

/* The URL of the check: the labels as query parameters. */
/* Whether labels[i]'s name comes earlier in the order the check sends
 * them: the plain labels first, then those of one service (a series holds
 * each name once: a service's label replaces a plain one of its name). */
static bool check_sends_earlier(const struct agent_label *labels, size_t n, size_t i)
{
	for (size_t j = 0; j < n; j++) {
		bool before = !labels[j].service == !labels[i].service ? j < i : !labels[j].service;

		if (j != i && before && strcmp(labels[j].key, labels[i].key) == 0)
			return true;
	}
	return false;
}

/* The check's URL: every label name once, with a value it may have. */
static int check_url(const struct agent_push *p, const struct agent_label *labels, size_t n,
		     struct ember_buf *url)
{
	int err = ember_buf_appendf(url, "%s", p->url);
	char sep = '?';

	for (size_t i = 0; i < n && !err; i++) {
		if (check_sends_earlier(labels, n, i))
			continue;
		err = ember_buf_appendf(url, "%c", sep);
		err = err ? err : httpc_escape(url, labels[i].key);
		err = err ? err : ember_buf_appendf(url, "=");
		err = err ? err : httpc_escape(url, labels[i].value);
		sep = '&';
	}
	return err ? err : ember_buf_append_grow(url, "", 1);
}

int agent_push_check(struct agent_push *p, const struct ember_buf *empty,
		     const struct agent_label *labels, size_t n, char *why, size_t why_size)
{
	struct agent_http_req q = { .method = "POST", .body = empty->data,
				    .body_len = empty->len, .header = "X-Ember-Check: 1",
				    .content_type = "application/octet-stream",
				    .tenant = tenant_of(p), .max_reply = 64 << 10,
				    .timeout_ms = 10000 };
	struct agent_http_reply r;
	struct ember_buf url;
	char text[400];
	int err;

	ember_buf_init(&url, 64 << 10);
	err = check_url(p, labels, n, &url);
	if (err) {
		ember_buf_release(&url);
		snprintf(why, why_size, "agent: cannot make the check's URL: %s", strerror(-err));
		return err;
	}
	q.url = url.data;
	err = agent_http_do(p->http, &q, &r);
	ember_buf_release(&url);
	if (err) {
		snprintf(why, why_size, "agent: cannot check the token and labels with '%s': %s",
			 p->url, r.err);
		agent_http_reply_release(&r);
		return -EAGAIN;
	}
	err = r.status >= 200 && r.status < 300 ? 0 : retryable(r.status) ? -EAGAIN : -EACCES;
	refusal_text(p, &r, text, sizeof(text));
	if (err)
		snprintf(why, why_size, "agent: '%s' %s the token and labels: %s", p->url,
			 err == -EACCES ? "refuses" : "cannot check", text);
	agent_http_reply_release(&r);
	return err;
}
