/*
 * request.c - one S3 request, one attempt: the URL (path style or virtual
 * host), the signed headers (sigv4.c), the body from memory or from a file
 * with pread, the answer's headers and its body into the request's sink
 * (a capped buffer, a file descriptor, or nowhere), an error answer's XML
 * into its own capped buffer; sent through the HTTP client (httpc.h).  retry.c runs attempts; the operations
 * (object.c, list.c, multipart.c) build requests.
 */
#include "objstore_internal.h"

#include <errno.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

void os_request_init(struct os_request *r, const char *method, const char *key)
{
	memset(r, 0, sizeof(*r));
	r->method = method;
	r->key = key;
	r->body_fd = -1;
	r->sink_fd = -1;
	strcpy(r->payload_hash, OBJSTORE_SHA256_HEX);
	ember_buf_init(&r->errbuf, OBJSTORE_ERROR_BODY_CAP);
}

void os_request_release(struct os_request *r)
{
	if (!r)
		return;
	ember_buf_release(&r->errbuf);
	free(r->sink_sha);
	r->sink_sha = NULL;
}

int os_request_param(struct os_request *r, const char *name, const char *value)
{
	if (r->nparams == OS_MAX_PARAMS)
		return -E2BIG;
	r->params[r->nparams++] = (struct sigv4_param){ name, value };
	return 0;
}

int os_request_header(struct os_request *r, const char *name, const char *value)
{
	if (r->nheaders == OS_MAX_HEADERS)
		return -E2BIG;
	r->headers[r->nheaders++] = (struct sigv4_header){ name, value };
	return 0;
}

static void body_digest(struct os_request *r, const struct objstore_digest *d,
			char md5_b64[25])
{
	ember_hex_encode(d->sha256, 32, r->payload_hash);
	objstore_base64(d->md5, 16, md5_b64);
	os_request_header(r, "Content-MD5", md5_b64);
	r->has_body = true;
}

void os_request_body_mem(struct os_request *r, const void *data, size_t len,
			 const struct objstore_digest *d, char md5_b64[25])
{
	r->body_mem = data;
	r->body_len = len;
	body_digest(r, d, md5_b64);
}

void os_request_body_fd(struct os_request *r, int fd, off_t off, uint64_t len,
			const struct objstore_digest *d, char md5_b64[25])
{
	r->body_fd = fd;
	r->body_off = off;
	r->body_len = len;
	body_digest(r, d, md5_b64);
}

/* ---- the answer ------------------------------------------------------------ */

/* The status of a status line ("HTTP/1.1 200 OK", n bytes, not
 * NUL-terminated): up to 3 digits after the first blanks, or -1. */
static int status_of(const char *line, size_t n)
{
	const char *p = memchr(line, ' ', n), *e = line + n;
	int code = 0, digits = 0;

	if (!p)
		return -1;
	while (p < e && *p == ' ')
		p++;
	for (; p < e && digits < 3 && *p >= '0' && *p <= '9'; p++, digits++)
		code = code * 10 + (*p - '0');
	return digits ? code : -1;
}

static void on_header(void *ud, const char *buf, size_t n)
{
	struct os_request *r = ud;

	if (n > 5 && memcmp(buf, "HTTP/", 5) == 0) {
		/* a new answer (after 100 Continue too): forget the last one's */
		int code = status_of(buf, n);

		if (code >= 0)
			r->http = code;
		r->etag[0] = r->meta_sha256[0] = '\0';
		r->has_content_length = r->has_range_total = false;
		return;
	}
	os_answer_header(r, buf, n);
}

static int sink_fd_write(struct os_request *r, const char *p, size_t n)
{
	size_t done = 0;

	while (done < n) {
		ssize_t w = r->sink_seekable
			? pwrite(r->sink_fd, p + done, n - done,
				 r->sink_start + (off_t)(r->sink_written + done))
			: write(r->sink_fd, p + done, n - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		done += (size_t)w;
	}
	sha256_update(r->sink_sha, n, (const uint8_t *)p);
	return 0;
}

static int on_write(void *ud, const char *p, size_t n)
{
	struct os_request *r = ud;
	int err = 0;

	if (r->http < 200 || r->http >= 300) {
		/* an error's XML: past the cap the rest is dropped, it is only read */
		(void)ember_buf_append(&r->errbuf, p, n);
		return 0;
	}
	if (r->sink_cap && (n > r->sink_cap - r->sink_written ||
			    (r->has_content_length && r->content_length > r->sink_cap)))
		return -E2BIG; /* past the caller's bound: nothing more is kept */
	if (r->sink == OS_SINK_BUF)
		err = ember_buf_append(r->sink_buf, p, n);
	else if (r->sink == OS_SINK_FD)
		err = sink_fd_write(r, p, n);
	if (err)
		return err; /* httpc_do fails with it */
	r->sink_written += n;
	return 0;
}

static ssize_t on_read(void *ud, uint64_t off, char *buf, size_t n)
{
	struct os_request *r = ud;
	ssize_t got;

	if (r->body_mem) {
		memcpy(buf, (const char *)r->body_mem + off, n);
		return (ssize_t)n;
	}
	do
		got = pread(r->body_fd, buf, n, r->body_off + (off_t)off);
	while (got < 0 && errno == EINTR);
	return got < 0 ? -errno : got; /* 0: the file shrank, httpc's -EIO */
}

void os_request_sink_buf(struct os_request *r, struct ember_buf *b, size_t cap)
{
	ember_buf_init(b, cap);
	r->sink_cap = cap;
	r->sink = OS_SINK_BUF;
	r->sink_buf = b;
}

int os_bucket_get_xml(struct objstore *s, const struct sigv4_param *params, size_t n,
		      struct ember_buf *answer, struct objstore_status *st)
{
	struct os_request r;
	int err = 0;

	os_request_init(&r, "GET", NULL);
	os_request_sink_buf(&r, answer, OBJSTORE_XML_ANSWER_CAP);
	for (size_t i = 0; i < n && !err; i++)
		err = os_request_param(&r, params[i].name, params[i].value);
	if (!err)
		err = os_request_run(s, &r, st);
	os_request_release(&r);
	return err;
}

int os_request_sink_fd(struct os_request *r, int fd)
{
	struct stat st;
	off_t at = lseek(fd, 0, SEEK_CUR);

	r->sink_sha = malloc(sizeof(struct sha256_ctx));
	if (!r->sink_sha)
		return -ENOMEM;
	sha256_init(r->sink_sha);
	r->sink = OS_SINK_FD;
	r->sink_fd = fd;
	r->sink_seekable = at >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
	r->sink_start = r->sink_seekable ? at : 0;
	return 0;
}

void os_request_sink_sha256(struct os_request *r, uint8_t out[32])
{
	sha256_digest(r->sink_sha, 32, out);
}

int os_request_rewind(struct os_request *r)
{
	ember_buf_reset(&r->errbuf);
	memset(&r->err, 0, sizeof(r->err));
	if (r->sink == OS_SINK_BUF)
		ember_buf_reset(r->sink_buf);
	if (r->sink == OS_SINK_FD) {
		if (r->sink_written && !r->sink_seekable)
			return -EIO; /* bytes already went down a pipe */
		sha256_init(r->sink_sha);
		if (r->sink_seekable && r->sink_written &&
		    ftruncate(r->sink_fd, r->sink_start) != 0 && errno != EINVAL)
			return -errno;
	}
	r->sink_written = 0;
	return 0;
}

/* ---- the request ------------------------------------------------------------ */

/* "/bucket/key" (path style) or "/key": decoded, as SigV4 signs it. */
static int request_path(const struct objstore *s, const struct os_request *r,
			struct ember_buf *b)
{
	int err = ember_buf_appendf(b, "%s/", s->path_prefix);

	if (!err && r->key)
		err = ember_buf_append(b, r->key, strlen(r->key));
	return err;
}

static int request_url(const struct objstore *s, const struct os_request *r,
		       const char *path, struct ember_buf *url)
{
	int err = ember_buf_append(url, s->scheme_host, strlen(s->scheme_host));

	if (!err)
		err = sigv4_uri_encode(url, path, strlen(path), true);
	for (size_t i = 0; i < r->nparams && !err; i++) {
		const struct sigv4_param *p = &r->params[i];

		err = ember_buf_putc(url, i ? '&' : '?');
		if (!err)
			err = sigv4_uri_encode(url, p->name, strlen(p->name), false);
		if (!err && p->value) {
			err = ember_buf_putc(url, '=');
			if (!err)
				err = sigv4_uri_encode(url, p->value, strlen(p->value), false);
		}
	}
	return err;
}

#define OS_MAX_LINES (OS_MAX_HEADERS + 5) /* + Host, date, hash, token, auth */

/* The header lines to sign and send ("Name: value", NUL-separated in
 * lines, line[i] pointing into it): the request's own, plus Host, the
 * date, the payload hash, the session token and the Authorization. */
static int request_headers(const struct objstore *s, const struct os_request *r,
			   const char *path, struct ember_buf *lines,
			   const char *line[OS_MAX_LINES], size_t *nlines)
{
	struct sigv4_header h[OS_MAX_HEADERS + 4];
	struct sigv4_scope sc = { .access_key = s->creds.access_key,
				  .secret_key = s->creds.secret_key,
				  .region = s->region, .service = "s3" };
	struct sigv4_request sr = { .method = r->method, .path = path,
				    .params = r->params, .nparams = r->nparams,
				    .headers = h, .payload_hash = r->payload_hash };
	size_t off[OS_MAX_LINES];
	size_t n = 0;
	int err = 0;

	sigv4_amz_date(s->clock ? s->clock(s->clock_ctx) : time(NULL), sc.amz_date);
	h[n++] = (struct sigv4_header){ "Host", s->host };
	h[n++] = (struct sigv4_header){ "x-amz-date", sc.amz_date };
	h[n++] = (struct sigv4_header){ "x-amz-content-sha256", r->payload_hash };
	if (s->creds.session_token)
		h[n++] = (struct sigv4_header){ "x-amz-security-token",
						s->creds.session_token };
	for (size_t i = 0; i < r->nheaders; i++)
		h[n++] = r->headers[i];
	sr.nheaders = n;
	for (size_t i = 0; i <= n && !err; i++) {
		off[i] = lines->len;
		if (i < n)
			err = ember_buf_appendf(lines, "%s: %s", h[i].name, h[i].value);
		else
			err = ember_buf_append(lines, "Authorization: ", 15);
		if (!err && i == n)
			err = sigv4_authorization(&sc, &sr, lines);
		if (!err)
			err = ember_buf_putc(lines, '\0');
	}
	for (size_t i = 0; i <= n && !err; i++)
		line[i] = lines->data + off[i];
	if (!err)
		*nlines = n + 1;
	return err;
}

int os_request_once(struct objstore *s, struct os_request *r)
{
	const char *line[OS_MAX_LINES];
	struct httpc_req q = { .method = r->method, .header = on_header, .header_ctx = r,
			       .write = on_write, .write_ctx = r,
			       .connect_timeout_ms = s->connect_timeout_ms,
			       .stall_ms = s->stall_timeout_ms,
			       .user_agent = "ember-objstore/1", .headers = line };
	struct ember_buf path, url, lines;
	struct httpc_answer a;
	struct httpc *h;
	int err = httpc_new(s->share, &h);

	if (err)
		return err;
	r->http = 0;
	r->transport_err = 0;
	ember_buf_init(&path, 8192);
	ember_buf_init(&url, 16384);
	ember_buf_init(&lines, 64 << 10);
	err = request_path(s, r, &path);
	if (!err)
		err = request_url(s, r, path.data, &url);
	if (!err)
		err = request_headers(s, r, path.data, &lines, line, &q.nheaders);
	if (err)
		goto out;
	q.url = url.data;
	if (r->has_body) {
		q.read = on_read;
		q.read_ctx = r;
		q.body_len = r->body_len;
	}
	err = httpc_do(h, &q, &a);
	if (err) {
		r->transport_err = err;
		r->http = 0;
		if (err == -ECONNRESET)
			err = -EIO; /* objstore.h's table: a broken transfer is -EIO */
	}
out:
	httpc_free(h);
	ember_buf_release(&path);
	ember_buf_release(&url);
	ember_buf_release(&lines);
	return err;
}
