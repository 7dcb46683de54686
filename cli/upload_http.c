/*
 * upload_http.c - the HTTP side of `ember upload` and `ember query`,
 * through Ember's HTTP client (http-client/httpc.h): a GET for what the
 * server has, and a streamed PUT with a bearer token and, on a terminal,
 * a progress line.
 */
#include "upload.h"
#include "httpc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REPLY_MAX (1 << 20)

struct put_state {
	int fd;
	const char *label;
	bool progress;
};

int upload_http_init(void)
{
	return httpc_load();
}

static ssize_t on_read(void *arg, uint64_t off, char *p, size_t n)
{
	struct put_state *s = arg;
	ssize_t got;

	do
		got = pread(s->fd, p, n, (off_t)off);
	while (got < 0 && errno == EINTR);
	return got < 0 ? -errno : got;
}

static int on_progress(void *arg, uint64_t now, uint64_t total)
{
	struct put_state *s = arg;

	if (s->progress && total > 0)
		fprintf(stderr, "\r%s: %3d%% (%.1f of %.1f MB)", s->label,
			(int)(100 * now / total), now / 1e6, total / 1e6);
	return 0;
}

/* Send q to server+path with the token and the tenant: the answer into out. */
static int perform(const struct upload_http *h, const char *path, struct httpc_req *q,
		   struct upload_reply *out)
{
	char url[8192], auth[512], tenant[200];
	const char *line[2];
	size_t n = 0;
	struct ember_buf b;
	struct httpc_answer a;
	struct httpc *c;
	int err = httpc_new(NULL, &c);

	memset(out, 0, sizeof(*out));
	if (err)
		return err;
	snprintf(url, sizeof(url), "%s%s", h->server, path);
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", h->token ? h->token : "");
	snprintf(tenant, sizeof(tenant), "X-Scope-OrgID: %s", h->tenant ? h->tenant : "");
	if (h->token)
		line[n++] = auth;
	if (h->tenant)
		line[n++] = tenant;
	ember_buf_init(&b, h->max_reply ? h->max_reply : REPLY_MAX);
	q->url = url;
	q->headers = line;
	q->nheaders = n;
	q->reply = &b;
	q->connect_timeout_ms = 10000;
	q->user_agent = "ember-upload";
	err = httpc_do(c, q, &a);
	httpc_free(c);
	out->status = a.status;
	if (err) {
		ember_buf_release(&b);
		out->body = strdup(a.why);
	} else {
		out->body = b.data ? b.data : strdup(""); /* the buffer's malloc'd bytes */
		out->len = b.len;
	}
	if (err && out->body)
		out->len = strlen(out->body);
	return out->body ? err : -ENOMEM;
}

int upload_http_get(const struct upload_http *h, const char *path,
		    struct upload_reply *out)
{
	struct httpc_req q = { .method = "GET" };

	return perform(h, path, &q, out);
}

int upload_http_put(const struct upload_http *h, const char *path, int fd,
		    uint64_t size, const char *label, struct upload_reply *out)
{
	struct put_state s = { fd, label, h->progress };
	struct httpc_req q = { .method = "PUT", .body_len = size, .read = on_read,
			       .read_ctx = &s };
	int err;

	if (h->progress) {
		q.progress = on_progress;
		q.progress_ctx = &s;
	}
	err = perform(h, path, &q, out);
	if (h->progress)
		fputc('\n', stderr);
	return err;
}
