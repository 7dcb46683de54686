/*
 * checksum.c - the digests an upload carries: sha256 (SigV4's payload
 * hash, checked by the store, and the object's stored x-amz-meta-sha256)
 * and MD5 (Content-MD5, RFC 1864, checked by the store), over memory or
 * over a file range read with pread in 1 MiB steps, never whole.  The MD5
 * is optional over a file: the whole body's digest of a multipart upload
 * is its sha256 alone.
 */
#include "objstore_internal.h"

#include <errno.h>
#include <nettle/base64.h>
#include <nettle/md5.h>
#include <nettle/sha2.h>
#include <stdlib.h>
#include <unistd.h>

#define DIGEST_STEP ((size_t)1 << 20)

void objstore_digest_mem(const void *data, size_t len, struct objstore_digest *d)
{
	struct sha256_ctx s;
	struct md5_ctx m;

	sha256_init(&s);
	md5_init(&m);
	sha256_update(&s, len, data);
	md5_update(&m, len, data);
	sha256_digest(&s, sizeof(d->sha256), d->sha256);
	md5_digest(&m, sizeof(d->md5), d->md5);
}

static int pread_full(int fd, uint8_t *buf, size_t n, off_t off)
{
	size_t done = 0;

	while (done < n) {
		ssize_t got = pread(fd, buf + done, n - done, off + (off_t)done);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -errno;
		if (got == 0)
			return -EIO; /* the file is shorter than it was said to be */
		done += (size_t)got;
	}
	return 0;
}

int objstore_digest_fd(int fd, off_t offset, uint64_t len, struct objstore_digest *d,
		       bool with_md5)
{
	uint8_t *buf = malloc(DIGEST_STEP);
	struct sha256_ctx sha;
	struct md5_ctx md5;
	uint64_t pos = 0;
	int err = buf ? 0 : -ENOMEM;

	sha256_init(&sha);
	md5_init(&md5);
	while (!err && pos < len) {
		size_t n = len - pos < DIGEST_STEP ? (size_t)(len - pos) : DIGEST_STEP;

		err = pread_full(fd, buf, n, offset + (off_t)pos);
		if (err)
			break;
		sha256_update(&sha, n, buf);
		if (with_md5)
			md5_update(&md5, n, buf);
		pos += n;
	}
	if (!err) {
		sha256_digest(&sha, sizeof(d->sha256), d->sha256);
		md5_digest(&md5, sizeof(d->md5), d->md5);
	}
	free(buf);
	return err;
}

void objstore_base64(const uint8_t *data, size_t len, char *out)
{
	base64_encode_raw(out, len, data);
	out[BASE64_ENCODE_RAW_LENGTH(len)] = '\0';
}
