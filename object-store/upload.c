/*
 * upload.c - an upload from a file, never whole in memory.  Below the
 * multipart threshold: one pread pass computes the body's sha256 and MD5,
 * then one PUT sends it.  From the threshold up: the whole body's sha256
 * (the caller's, else a first sha256-only pass) goes into
 * CreateMultipartUpload as x-amz-meta-sha256; then part_concurrency
 * threads take the parts in order, each hashing its part (sha256 and MD5)
 * just before sending it, so that one part is hashed while another is on
 * the wire; each part is retried on its own; the first failure stops the
 * others and the upload is aborted.  Memory: a 1 MiB read buffer a thread
 * and 80 bytes of ETag a part.
 */
#include "objstore_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int put_single(struct objstore *s, const char *key, int fd, off_t offset,
		      uint64_t len, const struct objstore_put_opts *opts,
		      const struct objstore_digest *d, bool *existed,
		      struct objstore_status *st)
{
	struct os_request r;
	char md5[25], meta[65];
	int err;

	ember_hex_encode(d->sha256, 32, meta);
	os_request_init(&r, "PUT", key);
	os_request_body_fd(&r, fd, offset, len, d, md5);
	err = os_request_header(&r, "Content-Type", opts && opts->content_type ?
				opts->content_type : "application/octet-stream");
	if (!err)
		err = os_request_header(&r, "x-amz-meta-sha256", meta);
	if (!err && opts && (opts->flags & OBJSTORE_PUT_CREATE_ONLY))
		err = os_request_header(&r, "If-None-Match", "*");
	if (!err)
		err = os_request_run(s, &r, st);
	os_request_release(&r);
	return os_put_outcome(err, existed, st);
}

/* A complete whose answer was lost and whose retry finds no upload: the
 * first one may have worked.  The object with our sha256 says it did. */
static int complete_was_done(struct objstore *s, const char *key, const uint8_t sha[32])
{
	struct objstore_object_info info;

	return objstore_head(s, key, &info, NULL) == 0 && info.has_sha256 &&
	       memcmp(info.sha256, sha, 32) == 0;
}

/* ---- the parts, on part_concurrency threads -------------------------------- */

struct parts_run {
	struct objstore *s;
	struct objstore_upload *u;
	int fd;
	off_t offset;
	uint64_t len;
	unsigned nparts;
	const struct objstore_put_opts *opts;
	pthread_mutex_t lock; /* guards what follows, and u's ETags */
	unsigned next;	      /* the next part to send, from 0 */
	int err;	      /* the first failure; it stops every thread */
	struct objstore_status err_st;
	unsigned attempts;
};

/* Hash part i and send it: 0 or the failure, *pst filled. */
static int send_part(struct parts_run *p, unsigned i, struct objstore_status *pst)
{
	uint64_t off = (uint64_t)i * p->s->part_size;
	size_t n = p->len - off < p->s->part_size ? (size_t)(p->len - off) : p->s->part_size;
	struct objstore_digest d;
	char etag[80];
	int err;

	err = objstore_digest_fd(p->fd, p->offset + (off_t)off, n, &d, true);
	if (err) {
		objstore_status_set(pst, 0, "", "objstore: PUT '%s' part %u: cannot read "
				    "the file: %s", p->u->key, i + 1, strerror(-err));
		return err;
	}
	err = os_upload_part(p->s, p->u, i + 1, p->fd, p->offset + (off_t)off, n, &d, etag,
			     pst);
	if (!err) {
		pthread_mutex_lock(&p->lock);
		err = os_upload_set_etag(p->u, i + 1, etag);
		pthread_mutex_unlock(&p->lock);
	}
	return err;
}

static void *parts_worker(void *arg)
{
	struct parts_run *p = arg;

	for (;;) {
		struct objstore_status pst = { 0 };
		unsigned i;
		int err;

		pthread_mutex_lock(&p->lock);
		i = p->next < p->nparts && !p->err ? p->next++ : p->nparts;
		pthread_mutex_unlock(&p->lock);
		if (i == p->nparts)
			return NULL;
		err = send_part(p, i, &pst);
		pthread_mutex_lock(&p->lock);
		p->attempts += pst.attempts;
		if (err && !p->err) {
			p->err = err;
			p->err_st = pst;
		}
		pthread_mutex_unlock(&p->lock);
		if (!err && p->opts && p->opts->on_part)
			p->opts->on_part(p->opts->on_part_ctx, i + 1, p->nparts);
	}
}

static int send_parts(struct parts_run *p, struct objstore_status *st)
{
	unsigned nthreads = p->s->part_concurrency < p->nparts ? p->s->part_concurrency :
			    p->nparts;
	pthread_t *t = calloc(nthreads, sizeof(*t));
	unsigned started = 0;

	if (!t)
		return -ENOMEM;
	pthread_mutex_init(&p->lock, NULL);
	/* the first part on this thread, the others' beside it */
	while (started + 1 < nthreads &&
	       pthread_create(&t[started], NULL, parts_worker, p) == 0)
		started++;
	parts_worker(p);
	for (unsigned i = 0; i < started; i++)
		pthread_join(t[i], NULL);
	pthread_mutex_destroy(&p->lock);
	free(t);
	if (st) {
		st->attempts += p->attempts;
		if (p->err) {
			unsigned attempts = st->attempts;

			*st = p->err_st;
			st->attempts = attempts;
		}
	}
	return p->err;
}

static int put_multipart(struct objstore *s, const char *key, int fd, off_t offset,
			 uint64_t len, const struct objstore_put_opts *opts,
			 const uint8_t sha256[32], unsigned nparts, bool *existed,
			 struct objstore_status *st)
{
	bool create_only = opts && (opts->flags & OBJSTORE_PUT_CREATE_ONLY);
	struct objstore_upload u;
	struct parts_run p = { .s = s, .u = &u, .fd = fd, .offset = offset, .len = len,
			       .nparts = nparts, .opts = opts };
	int err;

	if (create_only) { /* no parts sent for a key already there */
		err = os_head(s, key, NULL, st);
		if (err != -ENOENT)
			return os_put_outcome(err ? err : -EEXIST, existed, st);
	}
	err = os_upload_create(s, key, sha256, &u, st);
	if (err)
		return err;
	err = os_upload_reserve(&u, nparts);
	if (!err)
		err = send_parts(&p, st);
	if (!err) {
		err = os_upload_complete(s, &u, create_only, existed, st);
		if (err == -ESRCH && complete_was_done(s, key, sha256))
			err = 0;
	}
	if (err) {
		struct objstore_status ast;

		/* best effort: the first error is the one reported */
		if (objstore_upload_abort(s, &u, &ast) != 0)
			pr_warn("%s", ast.msg);
	}
	objstore_upload_release(&u);
	return err;
}

static int local_failure(struct objstore_status *st, const char *key, int err,
			 const char *why)
{
	objstore_status_set(st, 0, "", "objstore: PUT '%s': %s: %s", key, why,
			    strerror(-err));
	return err;
}

int objstore_put_fd(struct objstore *s, const char *key, int fd, off_t offset,
		    uint64_t len, const struct objstore_put_opts *opts, bool *existed,
		    struct objstore_status *st)
{
	bool multipart = len >= s->multipart_threshold;
	uint64_t nparts = multipart ? (len + s->part_size - 1) / s->part_size : 0;
	struct objstore_digest d;
	struct stat sb;
	int err = 0;

	os_status_begin(st);
	if (fstat(fd, &sb) != 0)
		return local_failure(st, key, -errno, "cannot stat the file");
	if (!S_ISREG(sb.st_mode) && !S_ISBLK(sb.st_mode))
		return local_failure(st, key, -ESPIPE, "not a regular file (a pipe cannot "
				     "be read twice)");
	if (nparts > 10000) /* S3's part count limit */
		return local_failure(st, key, -EFBIG, "more than 10,000 parts: raise the "
				     "part size");
	/* a multipart upload needs no whole-body MD5, nor a pass for a sha256
	 * the caller already knows */
	if (!multipart || !(opts && opts->sha256))
		err = objstore_digest_fd(fd, offset, len, &d, !multipart);
	if (err)
		return local_failure(st, key, err, "cannot read the file");
	if (opts && opts->sha256)
		memcpy(d.sha256, opts->sha256, 32);
	if (!multipart)
		return put_single(s, key, fd, offset, len, opts, &d, existed, st);
	return put_multipart(s, key, fd, offset, len, opts, d.sha256, (unsigned)nparts,
			     existed, st);
}
