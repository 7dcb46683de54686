/*
 * upload_http.c - the HTTP side of `ember upload`, on libcurl: a GET for
 * what the server has, and a streamed PUT with a bearer token and, on a
 * terminal, a progress line.
 */
#include "upload.h"

#include <curl/curl.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REPLY_MAX (1 << 20)

struct reply_buf {
	char *data;
	size_t len, max;
};

struct put_state {
	int fd;
	uint64_t off;
	const char *label;
	bool progress;
};

int upload_http_init(void)
{
	return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -EIO;
}

void upload_http_cleanup(void)
{
	curl_global_cleanup();
}

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
	struct reply_buf *b = arg;
	size_t len = size * n;
	char *d;

	if (b->len + len > (b->max ? b->max : REPLY_MAX))
		return 0; /* curl reports a write error */
	d = realloc(b->data, b->len + len + 1);
	if (!d)
		return 0;
	memcpy(d + b->len, p, len);
	b->len += len;
	d[b->len] = '\0';
	b->data = d;
	return len;
}

static size_t on_read(char *p, size_t size, size_t n, void *arg)
{
	struct put_state *s = arg;
	ssize_t got = pread(s->fd, p, size * n, (off_t)s->off);

	if (got < 0)
		return CURL_READFUNC_ABORT;
	s->off += (uint64_t)got;
	return (size_t)got;
}

static int on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow,
		       curl_off_t ultotal, curl_off_t ulnow)
{
	struct put_state *s = arg;

	if (s->progress && ultotal > 0)
		fprintf(stderr, "\r%s: %3d%% (%.1f of %.1f MB)", s->label,
			(int)(100 * ulnow / ultotal), ulnow / 1e6, ultotal / 1e6);
	return 0;
}

static CURL *new_handle(const struct upload_http *h, const char *path,
			struct curl_slist **hdrs, struct reply_buf *b)
{
	CURL *c = curl_easy_init();
	char url[8192], auth[512];

	if (!c)
		return NULL;
	snprintf(url, sizeof(url), "%s%s", h->server, path);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, b);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "ember-upload");
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 10L);
	if (h->token) {
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s", h->token);
		*hdrs = curl_slist_append(*hdrs, auth);
	}
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, *hdrs);
	return c;
}

static int perform(CURL *c, struct curl_slist *hdrs, struct reply_buf *b,
		   struct upload_reply *out)
{
	CURLcode rc = curl_easy_perform(c);
	int err = 0;

	out->status = 0;
	if (rc == CURLE_OK) {
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out->status);
		out->body = b->data ? b->data : strdup("");
		out->len = b->len;
	} else {
		free(b->data);
		out->body = strdup(curl_easy_strerror(rc));
		out->len = out->body ? strlen(out->body) : 0;
		err = -EIO;
	}
	curl_slist_free_all(hdrs);
	curl_easy_cleanup(c);
	return out->body ? err : -ENOMEM;
}

int upload_http_get(const struct upload_http *h, const char *path,
		    struct upload_reply *out)
{
	struct reply_buf b = { .max = h->max_reply };
	struct curl_slist *hdrs = NULL;
	CURL *c = new_handle(h, path, &hdrs, &b);

	if (!c)
		return -ENOMEM;
	return perform(c, hdrs, &b, out);
}

int upload_http_put(const struct upload_http *h, const char *path, int fd,
		    uint64_t size, const char *label, struct upload_reply *out)
{
	struct reply_buf b = { 0 };
	struct curl_slist *hdrs = NULL;
	struct put_state s = { fd, 0, label, h->progress };
	CURL *c = new_handle(h, path, &hdrs, &b);
	int err;

	if (!c)
		return -ENOMEM;
	curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
	curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, (curl_off_t)size);
	curl_easy_setopt(c, CURLOPT_READFUNCTION, on_read);
	curl_easy_setopt(c, CURLOPT_READDATA, &s);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, h->progress ? 0L : 1L);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(c, CURLOPT_XFERINFODATA, &s);
	err = perform(c, hdrs, &b, out);
	if (h->progress)
		fputc('\n', stderr);
	return err;
}
