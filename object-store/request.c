/*
 * request.c - one S3 request, one attempt: the URL (path style or virtual
 * host), the signed headers (sigv4.c), the body from memory or from a file
 * with pread, the answer's headers and its body into the request's sink
 * (a capped buffer, a file descriptor, or nowhere), an error answer's XML
 * into its own capped buffer.  retry.c runs attempts; the operations
 * (object.c, list.c, multipart.c) build requests.
 */
#include "objstore_internal.h"

#include "curl_dl.h"
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

static size_t on_header(char *buf, size_t size, size_t nitems, void *ud)
{
	struct os_request *r = ud;
	size_t n = size * nitems;
	int code;

	if (n > 5 && memcmp(buf, "HTTP/", 5) == 0) {
		/* a new answer (after 100 Continue too): forget the last one's */
		const char *sp = memchr(buf, ' ', n);

		if (sp && sscanf(sp, " %3d", &code) == 1)
			r->http = code;
		r->etag[0] = r->meta_sha256[0] = '\0';
		r->has_content_length = r->has_range_total = false;
		return n;
	}
	os_answer_header(r, buf, n);
	return n;
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

struct os_attempt {
	struct os_request *r;
	int sink_err; /* why on_write stopped the transfer */
	int body_err; /* why on_read did */
};

static size_t on_write(char *p, size_t size, size_t nmemb, void *ud)
{
	struct os_attempt *a = ud;
	struct os_request *r = a->r;
	size_t n = size * nmemb;
	int err = 0;

	if (r->http < 200 || r->http >= 300) {
		/* an error's XML: past the cap the rest is dropped, it is only read */
		(void)ember_buf_append(&r->errbuf, p, n);
		return n;
	}
	if (r->sink == OS_SINK_BUF)
		err = ember_buf_append(r->sink_buf, p, n);
	else if (r->sink == OS_SINK_FD)
		err = sink_fd_write(r, p, n);
	if (err) {
		a->sink_err = err;
		return 0; /* curl fails the transfer with CURLE_WRITE_ERROR */
	}
	r->sink_written += n;
	return n;
}

static size_t on_read(char *buf, size_t size, size_t nitems, void *ud)
{
	struct os_attempt *a = ud;
	struct os_request *r = a->r;
	uint64_t left = r->body_len - r->body_pos;
	size_t n = size * nitems < left ? size * nitems : (size_t)left;
	ssize_t got;

	if (n == 0)
		return 0;
	if (r->body_mem) {
		memcpy(buf, (const char *)r->body_mem + r->body_pos, n);
		r->body_pos += n;
		return n;
	}
	do
		got = pread(r->body_fd, buf, n, r->body_off + (off_t)r->body_pos);
	while (got < 0 && errno == EINTR);
	if (got <= 0) {
		a->body_err = got < 0 ? -errno : -EIO; /* the file shrank */
		return CURL_READFUNC_ABORT;
	}
	r->body_pos += (uint64_t)got;
	return (size_t)got;
}

static int on_seek(void *ud, curl_off_t off, int origin)
{
	struct os_attempt *a = ud;

	if (origin != SEEK_SET || off < 0 || (uint64_t)off > a->r->body_len)
		return CURL_SEEKFUNC_CANTSEEK;
	a->r->body_pos = (uint64_t)off;
	return CURL_SEEKFUNC_OK;
}

void os_request_sink_buf(struct os_request *r, struct ember_buf *b, size_t cap)
{
	ember_buf_init(b, cap);
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
	r->body_pos = 0;
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

/* The headers to sign and send: the request's own, plus Host, the date,
 * the payload hash and the session token. */
static int request_headers(const struct objstore *s, const struct os_request *r,
			   const char *path, struct curl_slist **list)
{
	struct sigv4_header h[OS_MAX_HEADERS + 4];
	struct sigv4_scope sc = { .access_key = s->creds.access_key,
				  .secret_key = s->creds.secret_key,
				  .region = s->region, .service = "s3" };
	struct sigv4_request sr = { .method = r->method, .path = path,
				    .params = r->params, .nparams = r->nparams,
				    .headers = h, .payload_hash = r->payload_hash };
	struct ember_buf line;
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
	ember_buf_init(&line, 64 << 10);
	for (size_t i = 0; i <= n && !err; i++) {
		struct curl_slist *nl;

		ember_buf_reset(&line);
		if (i < n)
			err = ember_buf_appendf(&line, "%s: %s", h[i].name, h[i].value);
		else
			err = ember_buf_append(&line, "Authorization: ", 15);
		if (!err && i == n)
			err = sigv4_authorization(&sc, &sr, &line);
		if (err)
			break;
		nl = curl_slist_append(*list, line.data);
		if (!nl)
			err = -ENOMEM;
		else
			*list = nl;
	}
	ember_buf_release(&line);
	return err;
}

static void setup_body(CURL *c, struct os_request *r, struct os_attempt *a)
{
	if (strcmp(r->method, "PUT") == 0) {
		curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
		curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, (curl_off_t)r->body_len);
	} else if (strcmp(r->method, "POST") == 0) {
		curl_easy_setopt(c, CURLOPT_POST, 1L);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->body_len);
	} else if (strcmp(r->method, "HEAD") == 0) {
		curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	} else if (strcmp(r->method, "GET") != 0) {
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, r->method);
	}
	if (r->has_body) {
		curl_easy_setopt(c, CURLOPT_READFUNCTION, on_read);
		curl_easy_setopt(c, CURLOPT_READDATA, a);
		curl_easy_setopt(c, CURLOPT_SEEKFUNCTION, on_seek);
		curl_easy_setopt(c, CURLOPT_SEEKDATA, a);
	}
}

static void setup_transfer(const struct objstore *s, CURL *c, struct os_attempt *a)
{
	long stall_s = (long)((s->stall_timeout_ms + 999) / 1000);

	curl_easy_setopt(c, CURLOPT_SHARE, s->share);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)s->connect_timeout_ms);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, stall_s > 0 ? stall_s : 1L);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, a->r);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, a);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "ember-objstore/1");
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
}

static int transport_errno(CURLcode rc, const struct os_attempt *a)
{
	switch (rc) {
	case CURLE_WRITE_ERROR:
		return a->sink_err ? a->sink_err : -EIO;
	case CURLE_READ_ERROR:
	case CURLE_ABORTED_BY_CALLBACK:
		return a->body_err ? a->body_err : -EIO;
	case CURLE_COULDNT_CONNECT:
		return -ECONNREFUSED;
	case CURLE_COULDNT_RESOLVE_HOST:
		return -EHOSTUNREACH;
	case CURLE_OPERATION_TIMEDOUT:
		return -ETIMEDOUT;
	case CURLE_OUT_OF_MEMORY:
		return -ENOMEM;
	default:
		return -EIO;
	}
}

int os_request_once(struct objstore *s, struct os_request *r)
{
	struct os_attempt a = { .r = r };
	struct ember_buf path, url;
	struct curl_slist *hdrs = NULL;
	CURL *c = curl_easy_init();
	CURLcode rc;
	int err;

	if (!c)
		return -ENOMEM;
	r->http = 0;
	r->transport_err = 0;
	ember_buf_init(&path, 8192);
	ember_buf_init(&url, 16384);
	err = request_path(s, r, &path);
	if (!err)
		err = request_url(s, r, path.data, &url);
	if (!err)
		err = request_headers(s, r, path.data, &hdrs);
	if (err)
		goto out;
	curl_easy_setopt(c, CURLOPT_URL, url.data);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
	setup_transfer(s, c, &a);
	setup_body(c, r, &a);
	rc = curl_easy_perform(c);
	r->transport_err = (int)rc;
	if (rc != CURLE_OK) {
		err = transport_errno(rc, &a);
		r->http = 0;
	}
out:
	curl_slist_free_all(hdrs);
	curl_easy_cleanup(c);
	ember_buf_release(&path);
	ember_buf_release(&url);
	return err;
}
