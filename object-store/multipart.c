/*
 * multipart.c - multipart uploads step by step (S3 API Reference:
 * CreateMultipartUpload, UploadPart, CompleteMultipartUpload,
 * AbortMultipartUpload, ListMultipartUploads).  Each part carries its own
 * MD5 and sha256, so the store checks every part; each part is retried on
 * its own by the request engine.  An upload that is never completed holds
 * storage until it is aborted: objstore_upload_cleanup() aborts those
 * older than a cutoff.
 */
#include "objstore_internal.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void objstore_upload_release(struct objstore_upload *u)
{
	if (!u)
		return;
	for (unsigned i = 0; i < u->alloc; i++)
		free(u->etags[i]);
	free(u->etags);
	free(u->key);
	free(u->upload_id);
	memset(u, 0, sizeof(*u));
}

int os_upload_create(struct objstore *s, const char *key, const uint8_t *sha256,
		     struct objstore_upload *u, struct objstore_status *st)
{
	struct ember_diag d;
	struct ember_buf b;
	struct os_request r;
	char meta[65];
	int err;

	memset(u, 0, sizeof(*u));
	os_request_init(&r, "POST", key);
	os_request_sink_buf(&r, &b, OBJSTORE_ERROR_BODY_CAP);
	err = os_request_param(&r, "uploads", "");
	if (!err)
		err = os_request_header(&r, "Content-Type", "application/octet-stream");
	if (!err && sha256) {
		ember_hex_encode(sha256, 32, meta);
		err = os_request_header(&r, "x-amz-meta-sha256", meta);
	}
	if (!err)
		err = os_request_run(s, &r, st);
	if (!err) {
		d = ember_diag_make(st ? st->msg : NULL, st ? sizeof(st->msg) : 0);
		err = objstore_xml_parse_initiate(b.data ? b.data : "", b.len, &u->upload_id,
						  &d);
	}
	if (!err && !(u->key = strdup(key)))
		err = -ENOMEM;
	if (err)
		objstore_upload_release(u);
	ember_buf_release(&b);
	os_request_release(&r);
	return err;
}

int os_upload_reserve(struct objstore_upload *u, unsigned nparts)
{
	unsigned n = u->alloc;
	char **e;

	if (nparts <= n)
		return 0;
	while (n < nparts)
		n = n ? n * 2 : 16;
	e = realloc(u->etags, n * sizeof(*e));
	if (!e)
		return -ENOMEM;
	memset(e + u->alloc, 0, (n - u->alloc) * sizeof(*e));
	u->etags = e;
	u->alloc = n;
	return 0;
}

int os_upload_set_etag(struct objstore_upload *u, unsigned part, const char *etag)
{
	char *e;

	assert(part >= 1 && part <= u->alloc);
	e = strdup(etag);
	if (!e)
		return -ENOMEM;
	free(u->etags[part - 1]);
	u->etags[part - 1] = e;
	if (part > u->nparts)
		u->nparts = part;
	return 0;
}

int os_upload_part(struct objstore *s, const struct objstore_upload *u, unsigned part,
		   int fd, off_t offset, size_t len, const struct objstore_digest *d,
		   char etag[80], struct objstore_status *st)
{
	struct os_request r;
	char num[16], md5[25];
	int err;

	if (part < 1 || part > 10000)
		return -EINVAL; /* S3's part numbers */
	snprintf(num, sizeof(num), "%u", part);
	os_request_init(&r, "PUT", u->key);
	os_request_body_fd(&r, fd, offset, len, d, md5);
	err = os_request_param(&r, "partNumber", num);
	if (!err)
		err = os_request_param(&r, "uploadId", u->upload_id);
	if (!err)
		err = os_request_run(s, &r, st);
	if (!err && !r.etag[0]) {
		objstore_status_set(st, r.http, "", "objstore: PUT '%s' part %u: no ETag "
				    "in the answer", u->key, part);
		err = -EPROTO;
	}
	if (!err)
		memcpy(etag, r.etag, sizeof(r.etag));
	os_request_release(&r);
	return err;
}

int objstore_upload_part_fd(struct objstore *s, struct objstore_upload *u, unsigned part,
			    int fd, off_t offset, size_t len, struct objstore_status *st)
{
	struct objstore_digest d;
	char etag[80];
	int err;

	os_status_begin(st);
	err = objstore_digest_fd(fd, offset, len, &d, true);
	if (!err)
		err = os_upload_reserve(u, part);
	if (!err)
		err = os_upload_part(s, u, part, fd, offset, len, &d, etag, st);
	if (!err)
		err = os_upload_set_etag(u, part, etag);
	return err;
}

static int complete_body(const struct objstore_upload *u, struct ember_buf *b)
{
	int err = ember_buf_appendf(b, "<CompleteMultipartUpload>");

	for (unsigned i = 0; i < u->nparts && !err; i++) {
		if (!u->etags[i])
			return -EINVAL; /* a part never stored */
		err = ember_buf_appendf(b, "<Part><PartNumber>%u</PartNumber>"
					"<ETag>\"%s\"</ETag></Part>", i + 1, u->etags[i]);
	}
	if (!err)
		err = ember_buf_appendf(b, "</CompleteMultipartUpload>");
	return err;
}

/* S3 may answer 200 and then an Error document: read the body. */
static int complete_answer(const struct os_request *r, const struct ember_buf *b,
			   struct objstore_status *st)
{
	struct objstore_xml_error e;
	struct ember_diag d = ember_diag_make(st ? st->msg : NULL, st ? sizeof(st->msg) : 0);
	bool is_error = false;
	int err;

	err = objstore_xml_parse_complete(b->data ? b->data : "", b->len, &is_error, &e, &d);
	if (err || !is_error)
		return err;
	err = objstore_errno_of(500, e.code);
	objstore_status_set(st, r->http, e.code, "objstore: POST '%s' (complete): %s: %s",
			    r->key, e.code, e.message);
	return err;
}

int os_upload_complete(struct objstore *s, struct objstore_upload *u, bool create_only,
		       bool *existed, struct objstore_status *st)
{
	struct objstore_digest d;
	struct ember_buf body, answer;
	struct os_request r;
	char md5[25];
	int err;

	ember_buf_init(&body, (size_t)u->nparts * 128 + 128);
	ember_buf_init(&answer, OBJSTORE_ERROR_BODY_CAP);
	err = complete_body(u, &body);
	if (err)
		goto out;
	objstore_digest_mem(body.data, body.len, &d);
	os_request_init(&r, "POST", u->key);
	r.sink = OS_SINK_BUF;
	r.sink_buf = &answer;
	os_request_body_mem(&r, body.data, body.len, &d, md5);
	err = os_request_param(&r, "uploadId", u->upload_id);
	if (!err)
		err = os_request_header(&r, "Content-Type", "application/xml");
	if (!err && create_only)
		err = os_request_header(&r, "If-None-Match", "*");
	if (!err)
		err = os_request_run(s, &r, st);
	if (!err)
		err = complete_answer(&r, &answer, st);
	os_request_release(&r);
	err = os_put_outcome(create_only ? err : err == -EEXIST ? -EIO : err, existed, st);
out:
	ember_buf_release(&body);
	ember_buf_release(&answer);
	return err;
}

int os_upload_abort(struct objstore *s, const struct objstore_upload *u,
		    struct objstore_status *st)
{
	struct os_request r;
	int err;

	os_request_init(&r, "DELETE", u->key);
	err = os_request_param(&r, "uploadId", u->upload_id);
	if (!err)
		err = os_request_run(s, &r, st);
	os_request_release(&r);
	return err;
}

/* The public steps: each reports on its own (st zeroed first). */
int objstore_upload_create(struct objstore *s, const char *key, const uint8_t *sha256,
			   struct objstore_upload *u, struct objstore_status *st)
{
	os_status_begin(st);
	return os_upload_create(s, key, sha256, u, st);
}

int objstore_upload_complete(struct objstore *s, struct objstore_upload *u,
			     bool create_only, bool *existed, struct objstore_status *st)
{
	os_status_begin(st);
	return os_upload_complete(s, u, create_only, existed, st);
}

int objstore_upload_abort(struct objstore *s, const struct objstore_upload *u,
			  struct objstore_status *st)
{
	os_status_begin(st);
	return os_upload_abort(s, u, st);
}

/* ---- cleanup ------------------------------------------------------------------ */

struct cleanup_ctx {
	struct objstore *s;
	time_t cutoff;
	unsigned aborted;
	struct objstore_status *st;
};

static int cleanup_one(void *ctx, const char *key, const char *id, time_t initiated)
{
	struct cleanup_ctx *c = ctx;
	struct objstore_upload u = { .key = (char *)key, .upload_id = (char *)id };
	int err;

	if (!initiated || initiated >= c->cutoff)
		return 0;
	err = os_upload_abort(c->s, &u, c->st);
	if (err == -ESRCH)
		return 0; /* someone else aborted or completed it meanwhile */
	if (!err)
		c->aborted++;
	return err;
}

static int uploads_page(struct cleanup_ctx *c, const char *prefix,
			struct objstore_xml_uploads *page, const char *key_marker,
			const char *id_marker)
{
	struct sigv4_param p[4] = { { "uploads", "" }, { "prefix", prefix ? prefix : "" } };
	struct ember_diag d;
	struct ember_buf b;
	size_t n = 2;
	int err;

	if (key_marker)
		p[n++] = (struct sigv4_param){ "key-marker", key_marker };
	if (id_marker)
		p[n++] = (struct sigv4_param){ "upload-id-marker", id_marker };
	err = os_bucket_get_xml(c->s, p, n, &b, c->st);
	if (!err) {
		/* parsed, then aborted one by one: the page is all read by then */
		d = ember_diag_make(c->st ? c->st->msg : NULL, c->st ? sizeof(c->st->msg) : 0);
		err = objstore_xml_parse_uploads(b.data ? b.data : "", b.len, cleanup_one, c,
						 page, &d);
	}
	ember_buf_release(&b);
	return err;
}

/* The two markers of a page as one token for os_list_next_ok ("key\nid";
 * NULL when the page names no key marker), into out. */
static const char *markers_token(const char *key, const char *id, char *out, size_t size)
{
	if (!key || !*key)
		return NULL;
	snprintf(out, size, "%s\n%s", key, id ? id : "");
	return out;
}

int objstore_upload_cleanup(struct objstore *s, const char *prefix, time_t cutoff,
			    unsigned *aborted, struct objstore_status *st)
{
	struct cleanup_ctx c = { .s = s, .cutoff = cutoff, .st = st };
	char *km = NULL, *im = NULL;
	char sent[2048], next[2048];
	unsigned n = 0;
	int err;

	os_status_begin(st);
	for (;;) {
		struct objstore_xml_uploads page = { 0 };

		err = uploads_page(&c, prefix, &page, km, im);
		n++;
		if (!err && page.truncated) /* bounded like every listing (list.c) */
			err = os_list_next_ok(s, prefix ? prefix : "", n,
					      markers_token(km, im, sent, sizeof(sent)),
					      markers_token(page.next_key, page.next_id, next,
							    sizeof(next)),
					      st);
		free(km);
		free(im);
		km = im = NULL;
		if (err || !page.truncated) {
			objstore_xml_uploads_release(&page);
			break;
		}
		km = page.next_key;
		im = page.next_id;
		page.next_key = page.next_id = NULL;
	}
	if (aborted)
		*aborted = c.aborted;
	return err;
}
