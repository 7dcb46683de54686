/*
 * checksum.c - the digests an upload carries: sha256 (SigV4's payload
 * hash, checked by the store, and the object's stored x-amz-meta-sha256)
 * and MD5 (Content-MD5, RFC 1864, checked by the store), over memory or
 * over a file range read with pread in 1 MiB steps, never whole.
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

struct digest_run {
	struct sha256_ctx whole;
	struct sha256_ctx part_sha;
	struct md5_ctx whole_md5, part_md5;
};

/* Three hash passes over each byte at most: a multipart upload never
 * sends the whole body's MD5, so it is computed for a single PUT only. */
static void run_update(struct digest_run *r, const uint8_t *p, size_t n, bool parts)
{
	sha256_update(&r->whole, n, p);
	if (parts) {
		sha256_update(&r->part_sha, n, p);
		md5_update(&r->part_md5, n, p);
	} else {
		md5_update(&r->whole_md5, n, p);
	}
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
		       size_t part_size, struct objstore_digest *parts)
{
	struct digest_run r;
	uint8_t *buf = malloc(DIGEST_STEP);
	uint64_t pos = 0, part_left = part_size;
	size_t part = 0;
	int err = buf ? 0 : -ENOMEM;

	sha256_init(&r.whole);
	md5_init(&r.whole_md5);
	sha256_init(&r.part_sha);
	md5_init(&r.part_md5);
	while (!err && pos < len) {
		size_t n = len - pos < DIGEST_STEP ? (size_t)(len - pos) : DIGEST_STEP;

		if (parts && n > part_left)
			n = (size_t)part_left; /* stop at the part's end */
		err = pread_full(fd, buf, n, offset + (off_t)pos);
		if (err)
			break;
		run_update(&r, buf, n, parts != NULL);
		pos += n;
		if (parts && ((part_left -= n) == 0 || pos == len)) {
			sha256_digest(&r.part_sha, 32, parts[part].sha256);
			md5_digest(&r.part_md5, 16, parts[part].md5);
			part++;
			part_left = part_size;
		}
	}
	if (!err) {
		sha256_digest(&r.whole, sizeof(d->sha256), d->sha256);
		md5_digest(&r.whole_md5, sizeof(d->md5), d->md5); /* parts: unused */
	}
	free(buf);
	return err;
}

void objstore_base64(const uint8_t *data, size_t len, char *out)
{
	base64_encode_raw(out, len, data);
	out[BASE64_ENCODE_RAW_LENGTH(len)] = '\0';
}
