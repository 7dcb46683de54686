/*
 * objstore.h - Ember's S3 client: the object operations the scale-out
 * storage backend needs (issue 18), against AWS S3 or any S3-compatible
 * store (Ceph RGW, MinIO), over libcurl with AWS Signature Version 4
 * computed here (sigv4.c; docs/object-store.md says why no library).
 *
 * A handle (struct objstore) names one bucket on one endpoint with one set
 * of credentials.  It is safe to use from many threads at once: each
 * operation runs its own curl easy handle, and the handle's connection
 * cache is shared under a lock.
 *
 * Errors: every int function returns 0 or a negative errno, and fills the
 * caller's struct objstore_status (which may be NULL) with the HTTP status,
 * the S3 error code and a message ("objstore: GET 'key': 403
 * SignatureDoesNotMatch: ...").  The errno says what happened:
 *   -ENOENT        the key does not exist (NoSuchKey, 404 on HEAD); never
 *                  used for anything else
 *   -ENXIO         the bucket does not exist (NoSuchBucket)
 *   -ESRCH         the multipart upload does not exist (NoSuchUpload)
 *   -EACCES        the store refused the credentials or the signature
 *                  (AccessDenied, InvalidAccessKeyId, SignatureDoesNotMatch)
 *   -ETIME         the request's time is too far from the store's clock
 *                  (RequestTimeTooSkewed)
 *   -EBADMSG       a checksum did not match: the store rejected the body
 *                  (BadDigest, XAmzContentSHA256Mismatch), or a download's
 *                  bytes are not what was stored
 *   -ERANGE        a range outside the object (InvalidRange)
 *   -EBUSY         still throttled after the last retry (SlowDown, 503)
 *   -EIO           still a server error (5xx) after the last retry
 *   -ETIMEDOUT     connect timeout or a transfer stalled
 *   -ECONNREFUSED, -EHOSTUNREACH  the endpoint cannot be reached
 *   -EPROTO        an answer that is not what S3 sends (bad XML, a
 *                  truncated listing whose continuation token is empty or
 *                  repeats the last one, ...)
 *   -E2BIG         an answer past a bound: an object larger than the
 *                  caller's cap, a listing longer than max_list_pages or
 *                  max_list_keys (a hostile or broken store)
 *   -EINVAL        a bad argument or an S3 400 with another code
 * Transient failures (5xx, 503 SlowDown, throttling codes, connection
 * failures and timeouts) are retried with capped exponential backoff and
 * full jitter before they are reported.
 */
#ifndef EMBER_OBJSTORE_H
#define EMBER_OBJSTORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

struct objstore;

enum objstore_addressing {
	/* Path style for an explicit endpoint, virtual host for AWS. */
	OBJSTORE_ADDRESSING_AUTO = 0,
	OBJSTORE_ADDRESSING_PATH,	  /* http://endpoint/bucket/key */
	OBJSTORE_ADDRESSING_VIRTUAL_HOST, /* http://bucket.endpoint/key */
};

/* Credentials; strings owned by whoever filled the struct (objstore_creds_load:
 * the caller, released with objstore_creds_release). */
struct objstore_creds {
	char *access_key;
	char *secret_key;
	char *session_token; /* NULL when none */
};

/*
 * Load credentials the way the AWS CLI does: AWS_ACCESS_KEY_ID,
 * AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN when the first two are set;
 * else the profile (profile, else $AWS_PROFILE, else "default") of the
 * shared credentials file ($AWS_SHARED_CREDENTIALS_FILE, else
 * ~/.aws/credentials).  0; -ENOENT when none is found (msg says where it
 * looked); -EINVAL for a profile without both keys; -EIO, -ENOMEM.
 * msg (msg_size bytes, may be NULL) explains a failure.
 */
int objstore_creds_load(struct objstore_creds *c, const char *profile,
			char *msg, size_t msg_size);
/* Parse the text of a credentials file (INI, as the AWS CLI reads it) for
 * profile: 0, -ENOENT (no such profile), -EINVAL (incomplete), -ENOMEM. */
int objstore_creds_parse(struct objstore_creds *c, const char *text, size_t len,
			 const char *profile);
void objstore_creds_release(struct objstore_creds *c);

/* The clock requests are signed with (tests use it for clock skew). */
typedef time_t (*objstore_clock_fn)(void *ctx);

struct objstore_opts {
	size_t sz; /* sizeof(struct objstore_opts) */
	/* "http://127.0.0.1:8000", "https://s3.example.com"; NULL: AWS,
	 * https://s3.REGION.amazonaws.com */
	const char *endpoint;
	const char *region;    /* NULL: $AWS_REGION, $AWS_DEFAULT_REGION, us-east-1 */
	const char *bucket;    /* required */
	enum objstore_addressing addressing;
	/* NULL: objstore_creds_load(profile); copied into the handle */
	const struct objstore_creds *creds;
	const char *profile;
	unsigned max_attempts;	  /* per request, 0: 5 */
	unsigned retry_base_ms;	  /* first backoff cap, 0: 100 */
	unsigned retry_max_ms;	  /* backoff cap, 0: 5000 */
	unsigned connect_timeout_ms; /* 0: 5000 */
	/* A transfer that moves no byte for this long fails (-ETIMEDOUT); 0: 30000 */
	unsigned stall_timeout_ms;
	size_t part_size;	  /* multipart part size, 0: 8 MiB (S3's minimum is 5 MiB) */
	size_t multipart_threshold; /* uploads from this size are multipart, 0: 16 MiB */
	unsigned part_concurrency; /* parts of one upload sent at once, 0: 2 */
	/* One objstore_list fails with -E2BIG past this many pages (requests)
	 * or keys: a store answering endless pages cannot make a caller loop.
	 * 0: 10,000 pages, 1,000,000 keys (docs/security.md). */
	unsigned max_list_pages;
	unsigned max_list_keys;
	objstore_clock_fn clock;  /* NULL: time() */
	void *clock_ctx;
};

/* What one operation did, for messages and tests.  Filled by every
 * operation that takes one (it may be NULL). */
struct objstore_status {
	int http;	  /* the last HTTP status, 0 when none came */
	unsigned attempts; /* requests sent (retries included) */
	char code[64];	  /* S3 error code ("NoSuchKey"), "" on success */
	char msg[320];	  /* the failure, "" on success */
};

/* A new handle; NULL with *err set (and msg filled) on failure: -EINVAL
 * for a bad option, -ENOENT without credentials, -ENOMEM, -ENOSYS when
 * libcurl cannot be loaded.  The first call loads and initializes libcurl
 * (httpc_load, once per process). */
struct objstore *objstore_new(const struct objstore_opts *opts, int *err,
			      char *msg, size_t msg_size);
void objstore_free(struct objstore *s);

/* What objstore_head / objstore_get tell about an object. */
struct objstore_object_info {
	uint64_t size;	      /* the whole object's size */
	char etag[80];	      /* as the store sent it, quotes removed */
	uint8_t sha256[32];   /* the stored checksum, when has_sha256 */
	bool has_sha256;
	time_t last_modified; /* 0 when not sent */
};

/* HEAD: 0 with *info filled, -ENOENT when the key does not exist. */
int objstore_head(struct objstore *s, const char *key,
		  struct objstore_object_info *info, struct objstore_status *st);

/* A byte range of an object, as in HTTP: [first, last], last == UINT64_MAX
 * meaning the end.  A zero struct means the whole object. */
struct objstore_range {
	uint64_t first, last;
	bool set;
};

/*
 * GET key (or a range of it) and write its bytes to fd as they arrive,
 * from fd's current offset (pwrite on a regular file, so a retried
 * transfer rewrites the same bytes; a pipe is retried only when nothing
 * was written yet).  At most cap bytes: an answer whose Content-Length
 * is larger fails with -E2BIG before a byte is written, and one that
 * sends more than it said fails with -E2BIG at the cap (the bytes up to
 * it are written; the caller drops the file).  A whole-object GET is verified against the object's
 * stored sha256 (the x-amz-meta-sha256 this client writes with every
 * object; an object without it is not checked): -EBADMSG on a mismatch.  info (may be NULL) is filled
 * on success; *written (may be NULL) is the number of bytes written.
 */
int objstore_get_fd(struct objstore *s, const char *key,
		    const struct objstore_range *range, int fd, uint64_t cap,
		    struct objstore_object_info *info, uint64_t *written,
		    struct objstore_status *st);

/* GET into memory, for small objects: at most cap bytes (-E2BIG past it,
 * before any byte is read when the Content-Length says so).
 * *data (caller frees) and *len are written only on success. */
int objstore_get_mem(struct objstore *s, const char *key,
		     const struct objstore_range *range, size_t cap, void **data,
		     size_t *len, struct objstore_status *st);

enum objstore_put_flags {
	/* If-None-Match: *: write only if the key does not exist.  A 412
	 * means someone else wrote the key first: for content-addressed
	 * keys the same bytes, so this is success with *existed = true. */
	OBJSTORE_PUT_CREATE_ONLY = 1 << 0,
};

struct objstore_put_opts {
	size_t sz;
	unsigned flags;		    /* enum objstore_put_flags */
	const char *content_type;   /* NULL: application/octet-stream */
	/* The body's sha256 when the caller knows it (content addressing):
	 * sent and checked by the store instead of being computed; a wrong
	 * one fails with -EBADMSG.  A multipart upload stores it without a
	 * pass of its own, and the store checks each part instead (a wrong
	 * one then shows at the first whole GET, as -EBADMSG). */
	const uint8_t *sha256;
	/* Multipart uploads: called after each part is stored (tests use it
	 * to kill an upload at a known point). */
	void (*on_part)(void *ctx, unsigned part, unsigned nparts);
	void *on_part_ctx;
};

/* PUT from memory.  *existed (may be NULL) tells a create-only PUT that
 * found the key already there. */
int objstore_put_mem(struct objstore *s, const char *key, const void *data,
		     size_t len, const struct objstore_put_opts *opts,
		     bool *existed, struct objstore_status *st);

/*
 * Upload len bytes of fd from offset (a regular file, read with pread and
 * never whole in memory): one PUT below the multipart threshold, else a
 * multipart upload of part_size parts, part_concurrency of them at once
 * (each on its own thread, hashed there just before it is sent), each
 * retried on its own, the upload aborted when one fails.  The sha256 of
 * the whole body is stored with the object (x-amz-meta-sha256: opts->sha256
 * when given, else computed in a first pass), each request carries its
 * body's sha256 and MD5, which the store checks.  opts->on_part may then
 * be called from those threads.  Create-only multipart uploads check the key
 * first and again at completion (S3's CompleteMultipartUpload honours
 * If-None-Match; radosgw 16 does not, docs/object-store.md).  -ESPIPE for a
 * fd that is not a regular file, -EFBIG past 10,000 parts.
 */
int objstore_put_fd(struct objstore *s, const char *key, int fd, off_t offset,
		    uint64_t len, const struct objstore_put_opts *opts,
		    bool *existed, struct objstore_status *st);

/* DELETE: 0 whether or not the key existed (S3 says nothing else). */
int objstore_delete(struct objstore *s, const char *key, struct objstore_status *st);

/* ---- listing ------------------------------------------------------------- */

struct objstore_list_entry {
	const char *key; /* valid during the callback only */
	uint64_t size;
	const char *etag;
};

/* Called for each key in order; a nonzero return stops the listing and is
 * returned by objstore_list. */
typedef int (*objstore_list_fn)(void *ctx, const struct objstore_list_entry *e);

/* ListObjectsV2 of every key under prefix, page after page (page_size
 * keys a request, 0: 1000), following continuation tokens.  *pages (may
 * be NULL) counts the requests.  -E2BIG past max_list_pages pages or
 * max_list_keys keys, -EPROTO for a truncated page whose token is empty
 * or the one just sent: st's message names the prefix and the bound. */
int objstore_list(struct objstore *s, const char *prefix, unsigned page_size,
		  objstore_list_fn fn, void *ctx, unsigned *pages,
		  struct objstore_status *st);

/* ---- multipart uploads, step by step -------------------------------------- */

/* An upload in progress; the strings are owned by it. */
struct objstore_upload {
	char *key;
	char *upload_id;
	char **etags;	/* etags[i] of part i + 1, NULL until stored */
	unsigned nparts;
	unsigned alloc;
};

/* CreateMultipartUpload: 0 with *u filled (release with
 * objstore_upload_release), or a negative errno.  sha256 (may be NULL)
 * is stored as the object's x-amz-meta-sha256. */
int objstore_upload_create(struct objstore *s, const char *key,
			   const uint8_t *sha256, struct objstore_upload *u,
			   struct objstore_status *st);
/* UploadPart number part (from 1) from len bytes of fd at offset, with
 * its MD5 and sha256 (checked by the store), retried on transient
 * failures. */
int objstore_upload_part_fd(struct objstore *s, struct objstore_upload *u,
			    unsigned part, int fd, off_t offset, size_t len,
			    struct objstore_status *st);
/* CompleteMultipartUpload of parts 1..nparts; create_only adds
 * If-None-Match: * (*existed as for PUT).  A 200 whose body is an Error is
 * a failure (S3 documents that it can be). */
int objstore_upload_complete(struct objstore *s, struct objstore_upload *u,
			     bool create_only, bool *existed,
			     struct objstore_status *st);
/* AbortMultipartUpload: 0, or -ESRCH when there is no such upload. */
int objstore_upload_abort(struct objstore *s, const struct objstore_upload *u,
			  struct objstore_status *st);
void objstore_upload_release(struct objstore_upload *u);

/* Abort every multipart upload under prefix started before cutoff
 * (ListMultipartUploads; uploads whose start time cannot be read are
 * kept).  *aborted (may be NULL) counts them. */
int objstore_upload_cleanup(struct objstore *s, const char *prefix, time_t cutoff,
			    unsigned *aborted, struct objstore_status *st);

/* A short description of an errno this client returns. */
const char *objstore_strerror(int err);

#endif /* EMBER_OBJSTORE_H */
