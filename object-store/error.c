/*
 * error.c - S3's answers as errnos (the table in objstore.h), which of
 * them are worth another attempt, and the status message.  The codes are
 * those of the S3 API Reference's "Error responses" list; Ceph RGW sends
 * the same ones.
 */
#include "objstore_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

struct code_errno {
	const char *code;
	int err;
};

static const struct code_errno code_table[] = {
	{ "NoSuchKey", -ENOENT },
	{ "NoSuchBucket", -ENXIO },
	{ "NoSuchUpload", -ESRCH },
	{ "AccessDenied", -EACCES },
	{ "InvalidAccessKeyId", -EACCES },
	{ "SignatureDoesNotMatch", -EACCES },
	{ "ExpiredToken", -EACCES },
	{ "InvalidToken", -EACCES },
	{ "RequestTimeTooSkewed", -ETIME },
	{ "BadDigest", -EBADMSG },
	{ "InvalidDigest", -EBADMSG },
	{ "XAmzContentSHA256Mismatch", -EBADMSG },
	{ "InvalidRange", -ERANGE },
	{ "SlowDown", -EBUSY },
	{ "Throttling", -EBUSY },
	{ "ThrottlingException", -EBUSY },
	{ "RequestLimitExceeded", -EBUSY },
	{ "TooManyRequests", -EBUSY },
	{ "PreconditionFailed", -EEXIST },
	{ "RequestTimeout", -ETIMEDOUT },
	{ "EntityTooSmall", -EINVAL },
	{ "EntityTooLarge", -EFBIG },
	{ "InvalidPart", -EINVAL },
	{ "InvalidPartOrder", -EINVAL },
};

int objstore_errno_of(int http, const char *code)
{
	for (size_t i = 0; code && i < sizeof(code_table) / sizeof(code_table[0]); i++)
		if (strcmp(code, code_table[i].code) == 0)
			return code_table[i].err;
	if (http == 404)
		return -ENOENT; /* HEAD has no body: a key the caller asked about */
	if (http == 403 || http == 401)
		return -EACCES;
	if (http == 412)
		return -EEXIST;
	if (http == 416)
		return -ERANGE;
	if (http == 429 || http == 503)
		return -EBUSY;
	if (http >= 500)
		return -EIO;
	if (http >= 300)
		return -EINVAL;
	return -EPROTO;
}

bool objstore_retriable(int http, const char *code, int transport_err)
{
	static const char *const codes[] = {
		"SlowDown", "Throttling", "ThrottlingException", "RequestLimitExceeded",
		"TooManyRequests", "RequestTimeout", "InternalError", "ServiceUnavailable",
	};

	if (http == 0) {
		switch (transport_err) {
		case -ECONNREFUSED:
		case -ETIMEDOUT:
		case -ECONNRESET: /* httpc: a send, a receive, nothing or a part */
		case -EHOSTUNREACH:
			return true;
		default:
			return false;
		}
	}
	if (http >= 500 || http == 429)
		return true;
	for (size_t i = 0; code && i < sizeof(codes) / sizeof(codes[0]); i++)
		if (strcmp(code, codes[i]) == 0)
			return true;
	return false;
}

void objstore_status_set(struct objstore_status *st, int http, const char *code,
			 const char *fmt, ...)
{
	va_list ap;

	if (!st)
		return;
	st->http = http;
	snprintf(st->code, sizeof(st->code), "%s", code ? code : "");
	va_start(ap, fmt);
	vsnprintf(st->msg, sizeof(st->msg), fmt, ap);
	va_end(ap);
}

const char *objstore_strerror(int err)
{
	switch (err) {
	case 0: return "success";
	case -ENOENT: return "no such key";
	case -ENXIO: return "no such bucket";
	case -ESRCH: return "no such multipart upload";
	case -EACCES: return "access denied (credentials or signature refused)";
	case -ETIME: return "request time too skewed from the store's clock";
	case -EBADMSG: return "checksum mismatch";
	case -ERANGE: return "range not satisfiable";
	case -EBUSY: return "throttled by the store";
	case -EIO: return "server error";
	case -ETIMEDOUT: return "timed out";
	case -ECONNREFUSED: return "connection refused";
	case -EHOSTUNREACH: return "endpoint unreachable";
	case -EPROTO: return "unexpected answer from the store";
	case -EEXIST: return "the key exists (precondition failed)";
	default: return strerror(-err);
	}
}
