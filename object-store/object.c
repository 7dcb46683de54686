/*
 * object.c - the single-request object operations: HEAD, GET (to a file
 * descriptor or to memory, whole or a range, verified against the stored
 * sha256), PUT from memory (create-only with If-None-Match: *) and DELETE.
 * S3 API Reference: HeadObject, GetObject, PutObject, DeleteObject.
 */
#include "objstore_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void os_status_begin(struct objstore_status *st)
{
	if (st)
		memset(st, 0, sizeof(*st));
}

/* What the answer's headers say about the object. */
static void info_from_answer(const struct os_request *r, struct objstore_object_info *info)
{
	memset(info, 0, sizeof(*info));
	info->size = r->has_range_total ? r->range_total : r->content_length;
	snprintf(info->etag, sizeof(info->etag), "%s", r->etag);
	info->last_modified = r->last_modified > 0 ? r->last_modified : 0;
	if (strlen(r->meta_sha256) == 64 && ember_hex_decode(r->meta_sha256, info->sha256, 32) == 0)
		info->has_sha256 = true;
}

/* A 404 on HEAD has no body: ask whether the bucket is there, so that a
 * missing bucket is never reported as a missing key. */
static int head_bucket_after_404(struct objstore *s, const char *key,
				 struct objstore_status *st)
{
	struct os_request r;
	struct objstore_status bst = { 0 };
	int err;

	os_request_init(&r, "HEAD", NULL);
	err = os_request_run(s, &r, &bst);
	if (err == -ENOENT) {
		objstore_status_set(st, 404, "NoSuchBucket",
				    "objstore: HEAD '%s': 404 NoSuchBucket: bucket '%s' "
				    "does not exist", key, s->bucket);
		err = -ENXIO;
	} else if (err) {
		if (st)
			*st = bst;
	}
	os_request_release(&r);
	return err ? err : -ENOENT;
}

int os_head(struct objstore *s, const char *key, struct objstore_object_info *info,
	    struct objstore_status *st)
{
	struct os_request r;
	int err;

	os_request_init(&r, "HEAD", key);
	err = os_request_run(s, &r, st);
	if (err == -ENOENT)
		err = head_bucket_after_404(s, key, st);
	else if (!err && info)
		info_from_answer(&r, info);
	os_request_release(&r);
	return err;
}

int objstore_head(struct objstore *s, const char *key, struct objstore_object_info *info,
		  struct objstore_status *st)
{
	os_status_begin(st);
	return os_head(s, key, info, st);
}

static int range_header(const struct objstore_range *range, char *buf, size_t size)
{
	if (!range || !range->set)
		return 0;
	if (range->last == UINT64_MAX)
		snprintf(buf, size, "bytes=%" PRIu64 "-", range->first);
	else if (range->last >= range->first)
		snprintf(buf, size, "bytes=%" PRIu64 "-%" PRIu64, range->first, range->last);
	else
		return -EINVAL;
	return 1;
}

/* A whole object's bytes against its stored sha256. */
static int verify_download(struct objstore_status *st, const char *key,
			   const struct objstore_object_info *info, const uint8_t got[32])
{
	char want_hex[65], got_hex[65];

	if (!info->has_sha256 || memcmp(info->sha256, got, 32) == 0)
		return 0;
	ember_hex_encode(info->sha256, 32, want_hex);
	ember_hex_encode(got, 32, got_hex);
	objstore_status_set(st, 200, "", "objstore: GET '%s': checksum mismatch: stored "
			    "sha256 %s, received %s", key, want_hex, got_hex);
	return -EBADMSG;
}

/* A body past the caller's cap: say which bound, not only E2BIG. */
static int get_outcome(int err, const struct os_request *r, uint64_t cap,
		       struct objstore_status *st)
{
	if (err == -E2BIG && r->transport_err == -E2BIG)
		objstore_status_set(st, 0, "", "objstore: GET '%s': the object is larger "
				    "than the %" PRIu64 " bytes accepted for it%s", r->key, cap,
				    r->has_content_length ? " (Content-Length)" : "");
	return err;
}

int objstore_get_fd(struct objstore *s, const char *key,
		    const struct objstore_range *range, int fd, uint64_t cap,
		    struct objstore_object_info *info, uint64_t *written,
		    struct objstore_status *st)
{
	struct objstore_object_info got_info;
	struct os_request r;
	char rh[64];
	uint8_t sha[32];
	int has_range, err;

	os_status_begin(st);
	os_request_init(&r, "GET", key);
	has_range = range_header(range, rh, sizeof(rh));
	err = has_range < 0 ? has_range : os_request_sink_fd(&r, fd);
	r.sink_cap = cap;
	if (!err && has_range)
		err = os_request_header(&r, "Range", rh);
	if (!err)
		err = get_outcome(os_request_run(s, &r, st), &r, cap, st);
	if (!err) {
		info_from_answer(&r, &got_info);
		os_request_sink_sha256(&r, sha);
		if (!has_range)
			err = verify_download(st, key, &got_info, sha);
		if (r.sink_seekable)
			lseek(fd, r.sink_start + (off_t)r.sink_written, SEEK_SET);
	}
	if (!err && info)
		*info = got_info;
	if (!err && written)
		*written = r.sink_written;
	os_request_release(&r);
	return err;
}

int objstore_get_mem(struct objstore *s, const char *key,
		     const struct objstore_range *range, size_t cap, void **data,
		     size_t *len, struct objstore_status *st)
{
	struct objstore_object_info info;
	struct ember_buf b;
	struct os_request r;
	char rh[64];
	int has_range, err;

	os_status_begin(st);
	os_request_init(&r, "GET", key);
	os_request_sink_buf(&r, &b, cap);
	has_range = range_header(range, rh, sizeof(rh));
	err = has_range < 0 ? has_range : has_range ? os_request_header(&r, "Range", rh) : 0;
	if (!err)
		err = get_outcome(os_request_run(s, &r, st), &r, cap, st);
	if (!err && !has_range) {
		struct objstore_digest d;

		info_from_answer(&r, &info);
		objstore_digest_mem(b.data ? b.data : "", b.len, &d);
		err = verify_download(st, key, &info, d.sha256);
	}
	if (!err && !b.data && (err = ember_buf_reserve(&b, 0)) == 0)
		b.data[0] = '\0'; /* an empty object: still a buffer to free */
	if (!err) {
		*data = b.data;
		*len = b.len;
	} else {
		ember_buf_release(&b);
	}
	os_request_release(&r);
	return err;
}

/* A create-only PUT that found the key: success for content addressing. */
int os_put_outcome(int err, bool *existed, struct objstore_status *st)
{
	if (existed)
		*existed = err == -EEXIST;
	if (err == -EEXIST) {
		if (st)
			st->msg[0] = st->code[0] = '\0';
		return 0;
	}
	return err;
}

int objstore_put_mem(struct objstore *s, const char *key, const void *data, size_t len,
		     const struct objstore_put_opts *opts, bool *existed,
		     struct objstore_status *st)
{
	struct objstore_digest d;
	struct os_request r;
	char md5[25], meta[65];
	unsigned flags = opts ? opts->flags : 0;
	int err;

	os_status_begin(st);
	objstore_digest_mem(data, len, &d);
	if (opts && opts->sha256)
		memcpy(d.sha256, opts->sha256, 32);
	ember_hex_encode(d.sha256, 32, meta);
	os_request_init(&r, "PUT", key);
	os_request_body_mem(&r, data, len, &d, md5);
	err = os_request_header(&r, "Content-Type", opts && opts->content_type ?
				opts->content_type : "application/octet-stream");
	if (!err)
		err = os_request_header(&r, "x-amz-meta-sha256", meta);
	if (!err && (flags & OBJSTORE_PUT_CREATE_ONLY))
		err = os_request_header(&r, "If-None-Match", "*");
	if (!err)
		err = os_request_run(s, &r, st);
	os_request_release(&r);
	return os_put_outcome(err, existed, st);
}

int objstore_delete(struct objstore *s, const char *key, struct objstore_status *st)
{
	struct os_request r;
	int err;

	os_status_begin(st);
	os_request_init(&r, "DELETE", key);
	err = os_request_run(s, &r, st);
	os_request_release(&r);
	return err;
}
