/*
 * objstore_internal.h - what the files of object-store/ share: the SigV4
 * signer (sigv4.c), the request engine (request.c) and its retry policy
 * (retry.c), the S3 error mapping (error.c), the XML answers (xml.c) and
 * the checksums (checksum.c).  Nothing outside this folder includes it
 * but the unit test and the fuzz target.
 */
#ifndef EMBER_OBJSTORE_INTERNAL_H
#define EMBER_OBJSTORE_INTERNAL_H

#include "common.h"
#include "httpc.h"
#include "objstore.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#ifndef TESTABLE
#define TESTABLE static
#endif

#define OBJSTORE_SHA256_HEX "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define OBJSTORE_ERROR_BODY_CAP ((size_t)64 << 10)   /* an error answer's XML */
#define OBJSTORE_XML_ANSWER_CAP ((size_t)16 << 20)   /* a list answer's XML */

/* ---- the handle ---------------------------------------------------------- */

struct objstore {
	char *scheme_host;  /* "http://127.0.0.1:8000" (path style) or with the bucket */
	char *host;	    /* the Host header: "127.0.0.1:8000", "b.s3.amazonaws.com" */
	char *path_prefix;  /* "/bucket" (path style) or "" */
	char *bucket;
	char *region;
	struct objstore_creds creds;
	unsigned max_attempts, retry_base_ms, retry_max_ms;
	unsigned connect_timeout_ms, stall_timeout_ms;
	size_t part_size, multipart_threshold;
	unsigned part_concurrency;
	unsigned max_list_pages, max_list_keys;
	objstore_clock_fn clock;
	void *clock_ctx;
	struct httpc_share *share; /* connections and DNS, across threads */
};

/* ---- SigV4 (sigv4.c) ------------------------------------------------------ */

/* One header as sent: any case, value untrimmed (folded lines allowed). */
struct sigv4_header {
	const char *name;
	const char *value;
};

/* One query parameter, decoded (the signer encodes it). */
struct sigv4_param {
	const char *name;
	const char *value;
};

struct sigv4_request {
	const char *method;
	const char *path; /* decoded, from '/'; encoded byte by byte, '/' kept */
	const struct sigv4_param *params;
	size_t nparams;
	const struct sigv4_header *headers; /* include host (and x-amz-date for
					     * header signing) */
	size_t nheaders;
	const char *payload_hash; /* lowercase hex, or UNSIGNED-PAYLOAD */
};

struct sigv4_scope {
	const char *access_key, *secret_key, *region, *service;
	const char *session_token; /* presigning adds X-Amz-Security-Token; NULL */
	char amz_date[17];	   /* YYYYMMDDTHHMMSSZ */
};

/* t as YYYYMMDDTHHMMSSZ (UTC). */
void sigv4_amz_date(time_t t, char out[17]);
/* S3's URI encoding of s[0..n): every byte but A-Z a-z 0-9 - . _ ~ as %XX
 * (uppercase), '/' kept when keep_slash. */
int sigv4_uri_encode(struct ember_buf *b, const char *s, size_t n, bool keep_slash);
/* The canonical request of r plus extra params (presigning), and its
 * signed header list ("host;x-amz-date"). */
int sigv4_canonical_request(const struct sigv4_request *r,
			    const struct sigv4_param *extra, size_t nextra,
			    struct ember_buf *out, struct ember_buf *signed_headers);
int sigv4_string_to_sign(const struct sigv4_scope *sc, const char *canonical,
			 size_t len, struct ember_buf *out);
/* The hex signature of a string to sign under sc's derived key. */
void sigv4_signature(const struct sigv4_scope *sc, const char *sts, size_t len,
		     char hex[65]);
/* The Authorization header's value for r. */
int sigv4_authorization(const struct sigv4_scope *sc, const struct sigv4_request *r,
			struct ember_buf *out);
/* The query string to append to r's URL to presign it for expires seconds
 * (X-Amz-Algorithm ... X-Amz-Signature, encoded, '&'-joined). */
int sigv4_presign_query(const struct sigv4_scope *sc, const struct sigv4_request *r,
			unsigned expires, struct ember_buf *out);

/* ---- checksums (checksum.c) ---------------------------------------------- */

struct objstore_digest {
	uint8_t sha256[32];
	uint8_t md5[16];
};

void objstore_digest_mem(const void *data, size_t len, struct objstore_digest *d);
/* The digests of len bytes of fd at offset (pread), MD5 only when
 * with_md5 (else d->md5 is that of nothing).  0, -EIO (short file), -errno. */
int objstore_digest_fd(int fd, off_t offset, uint64_t len, struct objstore_digest *d,
		       bool with_md5);
/* Standard base64 of len bytes (NUL-terminated; out holds 4*ceil(len/3)+1). */
void objstore_base64(const uint8_t *data, size_t len, char *out);

/* ---- S3 errors (error.c) -------------------------------------------------- */

/* The negative errno of an S3 error answer (code may be ""). */
int objstore_errno_of(int http, const char *code);
/* Whether an answer (or a transport failure: http == 0 and httpc's
 * negative errno) is worth another attempt. */
bool objstore_retriable(int http, const char *code, int transport_err);
/* Fill st with "objstore: METHOD 'key': HTTP CODE: message". */
void objstore_status_set(struct objstore_status *st, int http, const char *code,
			 const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* ---- XML answers (xml.c, expat) -------------------------------------------
 * Each parser reads one S3 answer document from outside, checks it is the
 * expected root element, and fills its struct; bounded by the caller's
 * capped buffer.  0 or -EPROTO with diag saying what is wrong. */

struct objstore_xml_error {
	char code[64];
	char message[256];
	char request_id[96];
};
int objstore_xml_parse_error(const char *xml, size_t len, struct objstore_xml_error *e,
			     struct ember_diag *d);

/* ListBucketResult (ListObjectsV2): the page's keys go to fn. */
struct objstore_xml_list {
	bool truncated;
	char *next_token; /* malloc'd, NULL when none */
	unsigned nkeys;
};
int objstore_xml_parse_list(const char *xml, size_t len, objstore_list_fn fn, void *ctx,
			    struct objstore_xml_list *out, struct ember_diag *d);
void objstore_xml_list_release(struct objstore_xml_list *l);

/* InitiateMultipartUploadResult: *upload_id (malloc'd). */
int objstore_xml_parse_initiate(const char *xml, size_t len, char **upload_id,
				struct ember_diag *d);
/* CompleteMultipartUploadResult, or an Error inside a 200: *is_error and
 * *e then say which. */
int objstore_xml_parse_complete(const char *xml, size_t len, bool *is_error,
				struct objstore_xml_error *e, struct ember_diag *d);

/* ListMultipartUploadsResult: each upload (key, id, initiated time or 0). */
typedef int (*objstore_xml_upload_fn)(void *ctx, const char *key, const char *id,
				      time_t initiated);
struct objstore_xml_uploads {
	bool truncated;
	char *next_key, *next_id; /* malloc'd markers, NULL when none */
};
int objstore_xml_parse_uploads(const char *xml, size_t len, objstore_xml_upload_fn fn,
			       void *ctx, struct objstore_xml_uploads *out,
			       struct ember_diag *d);
void objstore_xml_uploads_release(struct objstore_xml_uploads *u);
/* An ISO 8601 time of S3 ("2024-01-02T03:04:05.000Z"): 0 or -EINVAL. */
int objstore_parse_iso8601(const char *s, time_t *out);

/* ---- the request engine (request.c, retry.c) ------------------------------ */

enum os_sink_kind {
	OS_SINK_DISCARD = 0,
	OS_SINK_BUF,	/* into sink_buf (capped) */
	OS_SINK_FD,	/* to sink_fd, hashed */
};

#define OS_MAX_HEADERS 12
#define OS_MAX_PARAMS 8

struct os_request {
	const char *method;
	const char *key; /* NULL: the bucket itself */
	struct sigv4_param params[OS_MAX_PARAMS];
	size_t nparams;
	struct sigv4_header headers[OS_MAX_HEADERS]; /* besides host, date, auth */
	size_t nheaders;
	char payload_hash[65];
	/* body: mem (body_mem) or fd (body_fd at body_off), body_len bytes */
	const void *body_mem;
	int body_fd;
	off_t body_off;
	uint64_t body_len;
	bool has_body;
	/* where a 2xx answer's body goes */
	enum os_sink_kind sink;
	struct ember_buf *sink_buf;
	int sink_fd;
	uint64_t sink_cap; /* bytes of a 2xx body, 0: unbounded (-E2BIG past it) */
	/* filled by each attempt */
	int http;
	int transport_err; /* httpc's errno of the last attempt, or 0 */
	char etag[80];
	uint64_t content_length;
	bool has_content_length;
	uint64_t range_total; /* from Content-Range, when has_range_total */
	bool has_range_total;
	char meta_sha256[65];  /* x-amz-meta-sha256 */
	time_t last_modified;
	struct objstore_xml_error err;
	/* private to request.c */
	uint64_t sink_written;
	off_t sink_start;
	bool sink_seekable;
	void *sink_sha; /* struct sha256_ctx * while hashing */
	struct ember_buf errbuf;
};

/* A request for key with no body; the caller adds params and headers. */
void os_request_init(struct os_request *r, const char *method, const char *key);
void os_request_release(struct os_request *r);
int os_request_param(struct os_request *r, const char *name, const char *value);
int os_request_header(struct os_request *r, const char *name, const char *value);
/* The body and its digest (which sets the payload hash and Content-MD5). */
void os_request_body_mem(struct os_request *r, const void *data, size_t len,
			 const struct objstore_digest *d, char md5_b64[25]);
void os_request_body_fd(struct os_request *r, int fd, off_t off, uint64_t len,
			const struct objstore_digest *d, char md5_b64[25]);

/* Answers of 2xx go to b, initialized with cap (the caller releases it). */
void os_request_sink_buf(struct os_request *r, struct ember_buf *b, size_t cap);
/* GET on the bucket with these query parameters (the listings): the
 * answer's XML into *answer, initialized here, released by the caller. */
/*
 * After page n (from 1) of a truncated listing whose request sent the
 * continuation token sent (NULL on the first page): 0 when the page's next
 * token may be asked for; -EPROTO when it is empty or repeats sent, -E2BIG
 * past the handle's max_list_pages; st says which (list.c).
 */
int os_list_next_ok(const struct objstore *s, const char *prefix, unsigned n,
		    const char *sent, const char *next, struct objstore_status *st);
int os_bucket_get_xml(struct objstore *s, const struct sigv4_param *params, size_t n,
		      struct ember_buf *answer, struct objstore_status *st);
/* Answers of 2xx go to fd from its current offset, hashed on the way. */
int os_request_sink_fd(struct os_request *r, int fd);
/* The sha256 of what went to the fd sink (once, after the last attempt). */
void os_request_sink_sha256(struct os_request *r, uint8_t out[32]);

/* One header line of an answer (answer.c): the fields r keeps. */
void os_answer_header(struct os_request *r, const char *line, size_t n);

/* Send r, retrying transient failures (retry.c): 0 on a 2xx, else the
 * errno of the answer, st filled either way. */
int os_request_run(struct objstore *s, struct os_request *r, struct objstore_status *st);
/* One attempt (request.c): 0 when an answer came (r->http set), else the
 * negative errno of the transport failure. */
int os_request_once(struct objstore *s, struct os_request *r);
/* Rewind the body and the sink for another attempt: 0, or -EIO when the
 * sink cannot be rewound (a pipe that got bytes). */
int os_request_rewind(struct os_request *r);
/* Zero st at the start of a public operation. */
void os_status_begin(struct objstore_status *st);
/* -EEXIST of a create-only write is success with *existed (object.c). */
int os_put_outcome(int err, bool *existed, struct objstore_status *st);
/* The steps of the public operations without zeroing st, so that a
 * composite operation (objstore_put_fd) adds up its attempts. */
int os_head(struct objstore *s, const char *key, struct objstore_object_info *info,
	    struct objstore_status *st);
int os_upload_create(struct objstore *s, const char *key, const uint8_t *sha256,
		     struct objstore_upload *u, struct objstore_status *st);
int os_upload_complete(struct objstore *s, struct objstore_upload *u, bool create_only,
		       bool *existed, struct objstore_status *st);
int os_upload_abort(struct objstore *s, const struct objstore_upload *u,
		    struct objstore_status *st);
/* UploadPart with its digest already known (multipart.c): the part's
 * ETag into etag (80 bytes).  It does not touch u, so that parts can be
 * sent from several threads; the caller records the ETag
 * (os_upload_set_etag, after os_upload_reserve for all the parts). */
int os_upload_part(struct objstore *s, const struct objstore_upload *u, unsigned part,
		   int fd, off_t offset, size_t len, const struct objstore_digest *d,
		   char etag[80], struct objstore_status *st);
int os_upload_reserve(struct objstore_upload *u, unsigned nparts);
int os_upload_set_etag(struct objstore_upload *u, unsigned part, const char *etag);

/* The delay before attempt (from 1) under s's policy: full jitter. */
unsigned os_retry_delay_ms(const struct objstore *s, unsigned attempt);

#endif /* EMBER_OBJSTORE_INTERNAL_H */
