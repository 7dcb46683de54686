/*
 * keys.c - the bucket's key names (docs/object-storage-layout.md): making
 * them, and parsing what a listing or a names object returns, which is
 * outside input (any writer of the bucket).  Fuzzed by
 * tests/fuzz/fuzz_bucket_keys.c.
 */
#include "bucket_internal.h"

#include <errno.h>
#include <nettle/sha2.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int bucket_key(char key[BUCKET_KEY_MAX], const char *prefix, const char *fmt, ...)
{
	int n = snprintf(key, BUCKET_KEY_MAX, "%s" BUCKET_LAYOUT, prefix), m;
	va_list ap;

	if (n < 0 || n >= BUCKET_KEY_MAX)
		return -ENAMETOOLONG;
	va_start(ap, fmt);
	m = vsnprintf(key + n, BUCKET_KEY_MAX - (size_t)n, fmt, ap);
	va_end(ap);
	return m < 0 || m >= BUCKET_KEY_MAX - n ? -ENAMETOOLONG : 0;
}

void bucket_sha256_hex(const char *s, char out[STORE_SHA256_HEX])
{
	struct sha256_ctx c;
	uint8_t d[SHA256_DIGEST_SIZE];

	sha256_init(&c);
	sha256_update(&c, strlen(s), (const uint8_t *)s);
	sha256_digest(&c, sizeof(d), d);
	ember_hex_encode(d, sizeof(d), out);
}

static bool is_lower_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

/* A decimal number of 1..3 digits at p[0..n), at most max. */
static int small_number(const char *p, size_t n, unsigned max, unsigned *out)
{
	unsigned v = 0;

	if (n < 1 || n > 3)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -EINVAL;
		v = v * 10 + (unsigned)(p[i] - '0');
	}
	if (v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

int bucket_cand_name_parse(const char *name, size_t len, struct bucket_cand_name *out)
{
	const size_t sha = STORE_SHA256_HEX - 1;
	const char *dash;
	unsigned kinds, origin;

	if (len < sha + 4 || name[sha] != '/')
		return -EINVAL;
	for (size_t i = 0; i < sha; i++)
		if (!is_lower_hex(name[i]))
			return -EINVAL;
	dash = memchr(name + sha + 1, '-', len - sha - 1);
	if (!dash || small_number(name + sha + 1, (size_t)(dash - name) - sha - 1, 255, &kinds) ||
	    small_number(dash + 1, len - (size_t)(dash + 1 - name), 1, &origin))
		return -EINVAL;
	memcpy(out->sha256, name, sha);
	out->sha256[sha] = '\0';
	out->kinds = kinds;
	out->origin = origin;
	return 0;
}

int bucket_names_parse(const uint8_t *p, size_t len,
		       int (*cb)(void *arg, const char *path), void *arg, bool *bad)
{
	char path[4096];
	size_t at = 0;

	if (bad)
		*bad = false;
	while (at < len) {
		const uint8_t *nul = memchr(p + at, '\0', len - at);
		size_t n = nul ? (size_t)(nul - (p + at)) : len - at;
		int ret;

		if (!nul || n >= sizeof(path)) {
			if (bad)
				*bad = true;
			if (!nul)
				break;
			at += n + 1;
			continue;
		}
		memcpy(path, p + at, n + 1);
		at += n + 1;
		if (n && (ret = cb(arg, path)))
			return ret;
	}
	return 0;
}
