/*
 * httpc.c - a handle (one reused libcurl easy handle) and one request on
 * it: the method and its body (from memory, or streamed from a read
 * callback that can be rewound), the header lines, the answer into a
 * capped buffer or a write callback, the timeouts, and libcurl's result
 * as a negative errno (the table in httpc.h).  Every option is set again
 * for each request (curl_easy_reset), so a request never inherits the
 * last one's; the connections stay.
 */
#include "httpc_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct httpc {
	CURL *curl;
	CURLSH *share; /* NULL: none */
	char errbuf[CURL_ERROR_SIZE];
};

/* One request's state, for the callbacks. */
struct httpc_call {
	const struct httpc_req *q;
	uint64_t pos;	/* of the next body byte read */
	int cb_err;	/* why a callback stopped the transfer */
};

int httpc_new(struct httpc_share *share, struct httpc **out)
{
	struct httpc *h;
	int err = httpc_load();

	if (err)
		return err;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->curl = httpc_lib()->curl_easy_init();
	if (!h->curl) {
		free(h);
		return -ENOMEM;
	}
	h->share = httpc_share_curl(share);
	*out = h;
	return 0;
}

void httpc_free(struct httpc *h)
{
	if (!h)
		return;
	httpc_lib()->curl_easy_cleanup(h->curl);
	free(h);
}

/* ---- callbacks ---------------------------------------------------------------- */

static size_t on_write(char *p, size_t size, size_t nmemb, void *ud)
{
	struct httpc_call *k = ud;
	const struct httpc_req *q = k->q;
	size_t n = size * nmemb;
	int err = 0;

	if (q->reply)
		err = ember_buf_append(q->reply, p, n);
	else if (q->write)
		err = q->write(q->write_ctx, p, n);
	if (err) {
		k->cb_err = err;
		return 0; /* libcurl fails the transfer with CURLE_WRITE_ERROR */
	}
	return n;
}

static size_t on_read(char *buf, size_t size, size_t nitems, void *ud)
{
	struct httpc_call *k = ud;
	uint64_t left = k->q->body_len - k->pos;
	size_t n = size * nitems < left ? size * nitems : (size_t)left;
	ssize_t got;

	if (n == 0)
		return 0;
	got = k->q->read(k->q->read_ctx, k->pos, buf, n);
	if (got <= 0 || (size_t)got > n) {
		k->cb_err = got < 0 ? (int)got : -EIO;
		return CURL_READFUNC_ABORT;
	}
	k->pos += (uint64_t)got;
	return (size_t)got;
}

static int on_seek(void *ud, curl_off_t off, int origin)
{
	struct httpc_call *k = ud;

	if (origin != SEEK_SET || off < 0 || (uint64_t)off > k->q->body_len)
		return CURL_SEEKFUNC_CANTSEEK;
	k->pos = (uint64_t)off;
	return CURL_SEEKFUNC_OK;
}

static size_t on_header(char *line, size_t size, size_t nitems, void *ud)
{
	struct httpc_call *k = ud;

	k->q->header(k->q->header_ctx, line, size * nitems);
	return size * nitems;
}

static int on_progress(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	struct httpc_call *k = ud;

	(void)dt, (void)dn;
	if (!k->q->progress(k->q->progress_ctx, un > 0 ? (uint64_t)un : 0,
			    ut > 0 ? (uint64_t)ut : 0))
		return 0;
	k->cb_err = -ECANCELED;
	return 1;
}

/* ---- the request ---------------------------------------------------------------- */

static bool method_is(const struct httpc_req *q, const char *m)
{
	return strcmp(q->method ? q->method : "GET", m) == 0;
}

static void setup_body(const struct httpc_lib *L, CURL *c, const struct httpc_req *q,
		       struct httpc_call *k)
{
	if (q->read) {
		if (method_is(q, "POST")) {
			L->curl_easy_setopt(c, CURLOPT_POST, 1L);
			L->curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)q->body_len);
		} else {
			L->curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
			L->curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, (curl_off_t)q->body_len);
		}
		L->curl_easy_setopt(c, CURLOPT_READFUNCTION, on_read);
		L->curl_easy_setopt(c, CURLOPT_READDATA, k);
		L->curl_easy_setopt(c, CURLOPT_SEEKFUNCTION, on_seek);
		L->curl_easy_setopt(c, CURLOPT_SEEKDATA, k);
	} else if (q->body) {
		L->curl_easy_setopt(c, CURLOPT_POSTFIELDS, q->body);
		L->curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)q->body_len);
	} else if (method_is(q, "POST")) {
		L->curl_easy_setopt(c, CURLOPT_POST, 1L);
		L->curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)0);
	} else if (method_is(q, "HEAD")) {
		L->curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	}
	/* The verb libcurl's own choice (GET, POST, PUT for an upload) does
	 * not already send. */
	if (!method_is(q, "GET") && !method_is(q, "HEAD") && !method_is(q, "POST") &&
	    !(method_is(q, "PUT") && q->read))
		L->curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, q->method);
}

static void setup_answer(const struct httpc_lib *L, CURL *c, const struct httpc_req *q,
			 struct httpc_call *k)
{
	L->curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_write);
	L->curl_easy_setopt(c, CURLOPT_WRITEDATA, k);
	if (q->header) {
		L->curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
		L->curl_easy_setopt(c, CURLOPT_HEADERDATA, k);
	}
	if (q->progress) {
		L->curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
		L->curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
		L->curl_easy_setopt(c, CURLOPT_XFERINFODATA, k);
	}
}

static void setup_transfer(const struct httpc_lib *L, struct httpc *h,
			   const struct httpc_req *q, struct curl_slist *hdrs)
{
	CURL *c = h->curl;

	L->curl_easy_setopt(c, CURLOPT_URL, q->url);
	L->curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
	L->curl_easy_setopt(c, CURLOPT_SHARE, h->share);
	L->curl_easy_setopt(c, CURLOPT_ERRORBUFFER, h->errbuf);
	L->curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	L->curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	if (q->user_agent)
		L->curl_easy_setopt(c, CURLOPT_USERAGENT, q->user_agent);
	if (q->connect_timeout_ms)
		L->curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)q->connect_timeout_ms);
	if (q->timeout_ms)
		L->curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)q->timeout_ms);
	if (q->stall_ms) {
		L->curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
		L->curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, (long)((q->stall_ms + 999) / 1000));
	}
}

static int header_list(const struct httpc_lib *L, const struct httpc_req *q,
		       struct curl_slist **out)
{
	struct curl_slist *l = NULL;

	for (size_t i = 0; i < q->nheaders; i++) {
		struct curl_slist *nl = L->curl_slist_append(l, q->headers[i]);

		if (!nl) {
			L->curl_slist_free_all(l);
			return -ENOMEM;
		}
		l = nl;
	}
	*out = l;
	return 0;
}

static int errno_of(CURLcode rc, int cb_err)
{
	switch (rc) {
	case CURLE_WRITE_ERROR:
	case CURLE_READ_ERROR:
	case CURLE_ABORTED_BY_CALLBACK:
		return cb_err ? cb_err : -EIO;
	case CURLE_COULDNT_CONNECT:
		return -ECONNREFUSED;
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY:
		return -EHOSTUNREACH;
	case CURLE_OPERATION_TIMEDOUT:
		return -ETIMEDOUT;
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
		return -ECONNRESET;
	case CURLE_OUT_OF_MEMORY:
		return -ENOMEM;
	default:
		return -EIO;
	}
}

int httpc_do(struct httpc *h, const struct httpc_req *q, struct httpc_answer *a)
{
	const struct httpc_lib *L = httpc_lib();
	struct httpc_call k = { .q = q };
	struct curl_slist *hdrs = NULL;
	CURLcode rc;
	int err;

	memset(a, 0, sizeof(*a));
	err = header_list(L, q, &hdrs);
	if (err) {
		snprintf(a->why, sizeof(a->why), "%s", strerror(-err));
		return err;
	}
	L->curl_easy_reset(h->curl);
	h->errbuf[0] = '\0';
	setup_transfer(L, h, q, hdrs);
	setup_body(L, h->curl, q, &k);
	setup_answer(L, h->curl, q, &k);
	rc = L->curl_easy_perform(h->curl);
	L->curl_easy_setopt(h->curl, CURLOPT_HTTPHEADER, (struct curl_slist *)NULL);
	L->curl_slist_free_all(hdrs);
	if (rc != CURLE_OK) {
		snprintf(a->why, sizeof(a->why), "%s",
			 h->errbuf[0] ? h->errbuf : L->curl_easy_strerror(rc));
		return errno_of(rc, k.cb_err);
	}
	L->curl_easy_getinfo(h->curl, CURLINFO_RESPONSE_CODE, &a->status);
	L->curl_easy_getinfo(h->curl, CURLINFO_CONNECT_TIME, &a->connect_s);
	return 0;
}

/* ---- helpers -------------------------------------------------------------------- */

int httpc_escape(struct ember_buf *out, const char *s)
{
	char *v;
	int err = httpc_load();

	if (err)
		return err;
	v = httpc_lib()->curl_easy_escape(NULL, s, 0); /* no handle needed since 7.82 */
	if (!v)
		return -ENOMEM;
	err = ember_buf_append(out, v, strlen(v));
	httpc_lib()->curl_free(v);
	return err;
}

bool httpc_header_is(const char *line, size_t n, const char *name, const char **value,
		     size_t *vlen)
{
	size_t k = strlen(name);
	const char *v, *e = line + n;

	if (n <= k || strncasecmp(line, name, k) != 0 || line[k] != ':')
		return false;
	for (v = line + k + 1; v < e && (*v == ' ' || *v == '\t'); v++)
		;
	while (e > v && (e[-1] == '\r' || e[-1] == '\n' || e[-1] == ' '))
		e--;
	*value = v;
	*vlen = (size_t)(e - v);
	return true;
}

time_t httpc_date(const char *s)
{
	return httpc_load() ? (time_t)-1 : httpc_lib()->curl_getdate(s, NULL);
}
