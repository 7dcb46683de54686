/*
 * upload.c - an upload from a file: one pass with pread computes the
 * whole body's sha256 (stored as x-amz-meta-sha256) and each part's MD5
 * and sha256; then one PUT below the multipart threshold, else a
 * multipart upload whose parts are sent from the file again, each retried
 * on its own, the upload aborted when it fails.  Memory: one 1 MiB read
 * buffer and 48 bytes a part, whatever the file's size.
 */
#include "objstore_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
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

static int send_parts(struct objstore *s, struct objstore_upload *u, int fd,
		      off_t offset, uint64_t len, const struct objstore_digest *parts,
		      unsigned nparts, const struct objstore_put_opts *opts,
		      struct objstore_status *st)
{
	for (unsigned i = 0; i < nparts; i++) {
		uint64_t off = (uint64_t)i * s->part_size;
		size_t n = len - off < s->part_size ? (size_t)(len - off) : s->part_size;
		int err = os_upload_part(s, u, i + 1, fd, offset + (off_t)off, n, &parts[i],
					 st);

		if (err)
			return err;
		if (opts && opts->on_part)
			opts->on_part(opts->on_part_ctx, i + 1, nparts);
	}
	return 0;
}

static int put_multipart(struct objstore *s, const char *key, int fd, off_t offset,
			 uint64_t len, const struct objstore_put_opts *opts,
			 const struct objstore_digest *whole,
			 const struct objstore_digest *parts, unsigned nparts,
			 bool *existed, struct objstore_status *st)
{
	bool create_only = opts && (opts->flags & OBJSTORE_PUT_CREATE_ONLY);
	struct objstore_upload u;
	int err;

	if (create_only) { /* no parts sent for a key already there */
		err = os_head(s, key, NULL, st);
		if (err != -ENOENT)
			return os_put_outcome(err ? err : -EEXIST, existed, st);
	}
	err = os_upload_create(s, key, whole->sha256, &u, st);
	if (err)
		return err;
	err = send_parts(s, &u, fd, offset, len, parts, nparts, opts, st);
	if (!err) {
		err = os_upload_complete(s, &u, create_only, existed, st);
		if (err == -ESRCH && complete_was_done(s, key, whole->sha256))
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
	struct objstore_digest whole, *parts = NULL;
	unsigned nparts = 0;
	struct stat sb;
	int err;

	os_status_begin(st);
	if (fstat(fd, &sb) != 0)
		return local_failure(st, key, -errno, "cannot stat the file");
	if (!S_ISREG(sb.st_mode) && !S_ISBLK(sb.st_mode))
		return local_failure(st, key, -ESPIPE, "not a regular file (a pipe cannot "
				     "be read twice)");
	if (len >= s->multipart_threshold) {
		uint64_t n = (len + s->part_size - 1) / s->part_size;

		if (n > 10000) /* S3's part count limit */
			return local_failure(st, key, -EFBIG, "more than 10,000 parts: "
					     "raise the part size");
		nparts = (unsigned)n;
		parts = calloc(nparts, sizeof(*parts));
		if (!parts)
			return -ENOMEM;
	}
	err = objstore_digest_fd(fd, offset, len, &whole, s->part_size, parts);
	if (err)
		local_failure(st, key, err, "cannot read the file");
	if (!err && opts && opts->sha256)
		memcpy(whole.sha256, opts->sha256, 32);
	if (!err && !parts)
		err = put_single(s, key, fd, offset, len, opts, &whole, existed, st);
	else if (!err)
		err = put_multipart(s, key, fd, offset, len, opts, &whole, parts, nparts,
				    existed, st);
	free(parts);
	return err;
}
