/*
 * url.c - the --storage URL: s3://BUCKET[/PREFIX].  Bucket names follow
 * S3's rules for new buckets (3..63 of [a-z0-9.-], a letter or digit at
 * each end); the prefix is kept to [A-Za-z0-9._-] and '/' (no "..", no
 * empty segment), so every key the backend makes is plain.
 */
#include "bucket_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define FAIL(...) do { if (msg) snprintf(msg, msg_size, __VA_ARGS__); return -EINVAL; } while (0)

static bool bucket_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-';
}

static bool prefix_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '-' || c == '_' || c == '/';
}

static bool bucket_ok(const char *b, size_t n)
{
	if (n < 3 || n >= BUCKET_NAME_MAX || b[0] == '.' || b[0] == '-' ||
	    b[n - 1] == '.' || b[n - 1] == '-')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!bucket_char(b[i]))
			return false;
	return true;
}

static bool prefix_ok(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!prefix_char(p[i]) || (p[i] == '/' && i + 1 < n && p[i + 1] == '/'))
			return false;
	return !(n && p[0] == '/') && !memmem(p, n, "..", 2);
}

int bucket_url_parse(const char *url, char bucket[BUCKET_NAME_MAX],
		     char prefix[BUCKET_PREFIX_MAX], char *msg, size_t msg_size)
{
	const char *b, *slash, *p;
	size_t blen, plen;

	if (strncmp(url, "s3://", 5) != 0)
		FAIL("'%s' is not an s3:// URL", url);
	b = url + 5;
	slash = strchr(b, '/');
	blen = slash ? (size_t)(slash - b) : strlen(b);
	if (!bucket_ok(b, blen))
		FAIL("'%.*s' is not a bucket name (3 to 63 of a-z, 0-9, '.', '-')", (int)blen, b);
	p = slash ? slash + 1 : "";
	plen = strlen(p);
	while (plen && p[plen - 1] == '/')
		plen--;
	if (!prefix_ok(p, plen))
		FAIL("prefix '%.*s': only A-Z, a-z, 0-9, '.', '-', '_' and single '/', no '..'",
		     (int)plen, p);
	if (plen + 2 > BUCKET_PREFIX_MAX)
		FAIL("prefix '%.*s' is too long", (int)plen, p);
	memcpy(bucket, b, blen);
	bucket[blen] = '\0';
	memcpy(prefix, p, plen);
	prefix[plen] = '\0';
	if (plen)
		strcat(prefix, "/");
	return 0;
}
