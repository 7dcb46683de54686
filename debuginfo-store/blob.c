/*
 * blob.c - content-addressed blob files.
 *
 * A blob is streamed into DIR/tmp/ under a unique name while its sha256 is
 * computed, fsynced when sealed, and renamed to DIR/blobs/xx/SHA (xx = the
 * first two hex digits) when committed; the directory is fsynced before
 * the caller records it in RocksDB.  Identical content is stored once.
 * Blobs are the store's own (0600 in directories of 0700): the server
 * serves them, nobody else on the machine needs to read them.
 */
#include "store_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct store_blob {
	struct store *s;
	int fd;
	char tmp_name[64];
	struct sha256_ctx sha;
	uint64_t size;
	bool sealed;
	char sha256[STORE_SHA256_HEX];
};

int store_blob_begin(struct store *s, struct store_blob **out)
{
	struct store_blob *b = calloc(1, sizeof(*b));
	uint8_t rnd[12];

	if (!b)
		return -ENOMEM;
	if (getentropy(rnd, sizeof(rnd))) {
		free(b);
		return -errno;
	}
	memcpy(b->tmp_name, "up-", 3);
	ember_hex_encode(rnd, sizeof(rnd), b->tmp_name + 3);
	b->fd = openat(s->tmp_fd, b->tmp_name,
		       O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (b->fd < 0) {
		int err = -errno;

		pr_warn("store: cannot create a temporary blob: %s", strerror(errno));
		free(b);
		return err;
	}
	b->s = s;
	sha256_init(&b->sha);
	*out = b;
	return 0;
}

int store_blob_write(struct store_blob *b, const void *data, size_t len)
{
	int err;

	if (b->sealed)
		return -EINVAL;
	err = ember_write_all(b->fd, data, len);
	if (err)
		return err;
	sha256_update(&b->sha, len, data);
	b->size += len;
	return 0;
}

int store_blob_write_fd(struct store_blob *b, int fd)
{
	char buf[1 << 16];
	off_t off = 0;

	for (;;) {
		ssize_t n = pread(fd, buf, sizeof(buf), off);
		int err;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : 0;
		err = store_blob_write(b, buf, (size_t)n);
		if (err)
			return err;
		off += n;
	}
}

int store_blob_seal(struct store_blob *b, char sha256[STORE_SHA256_HEX],
		    uint64_t *size)
{
	uint8_t digest[SHA256_DIGEST_SIZE];

	if (!b->sealed) {
		if (fsync(b->fd))
			return -errno;
		sha256_digest(&b->sha, sizeof(digest), digest);
		ember_hex_encode(digest, sizeof(digest), b->sha256);
		b->sealed = true;
	}
	memcpy(sha256, b->sha256, STORE_SHA256_HEX);
	*size = b->size;
	return 0;
}

int store_blob_seal_fetched(struct store_blob *b, const char *sha256, uint64_t size)
{
	if (b->sealed || strlen(sha256) != STORE_SHA256_HEX - 1)
		return -EINVAL;
	if (fsync(b->fd))
		return -errno;
	memcpy(b->sha256, sha256, STORE_SHA256_HEX);
	b->size = size;
	b->sealed = true;
	return 0;
}

int store_blob_fd(const struct store_blob *b)
{
	return b->fd;
}

void store_blob_discard(struct store_blob *b)
{
	if (!b)
		return;
	unlinkat(b->s->tmp_fd, b->tmp_name, 0);
	close(b->fd);
	free(b);
}

/*
 * The same content is stored already: make sure its directory entries
 * are durable before the caller acknowledges (the writer that renamed it
 * may still be before its own fsync), and mark it as used now, so the
 * garbage collection's grace period (gc.c) protects it until the record
 * that refers to it is written.
 */
static int sync_existing(int blobs_fd, const char *sub, const char *dest)
{
	int err = ember_sync_dir(blobs_fd, sub);

	if (!err)
		err = ember_sync_dir(blobs_fd, ".");
	if (!err && utimensat(blobs_fd, dest, NULL, 0))
		err = -errno;
	return err;
}

int store_blob_commit(struct store *s, struct store_blob *b, int ns_fd, bool *existed)
{
	char sub[3] = { b->sha256[0], b->sha256[1], 0 };
	char dest[3 + STORE_SHA256_HEX];
	struct stat st;
	int err = 0;

	if (!b->sealed) {
		store_blob_discard(b);
		return -EINVAL;
	}
	if (mkdirat(ns_fd, sub, 0700) == 0)
		err = ember_sync_dir(ns_fd, ".");
	else if (errno != EEXIST)
		err = -errno;
	if (err)
		goto out;
	snprintf(dest, sizeof(dest), "%s/%s", sub, b->sha256);
	*existed = fstatat(ns_fd, dest, &st, 0) == 0 && (uint64_t)st.st_size == b->size;
	if (*existed) { /* durable only once its entry is: another writer may
			   not have synced it yet */
		err = sync_existing(ns_fd, sub, dest);
		goto out;
	}
	if (renameat(s->tmp_fd, b->tmp_name, ns_fd, dest)) {
		err = -errno;
		pr_warn("store: cannot move blob '%s' into place: %s", dest,
			strerror(errno));
		goto out;
	}
	err = ember_sync_dir(ns_fd, sub);
out:
	if (!err)
		store_cache_use(s, ns_fd, b->sha256, b->size, true);
	store_blob_discard(b); /* after a rename the unlink finds nothing */
	return err;
}

/* NS/xx/SHA, relative to the namespace's directory. */
static int rel_path(const char *sha256, char path[3 + STORE_SHA256_HEX])
{
	if (strlen(sha256) != STORE_SHA256_HEX - 1)
		return -EINVAL;
	snprintf(path, 3 + STORE_SHA256_HEX, "%.2s/%s", sha256, sha256);
	return 0;
}

/* With a backend, a blob missing here is fetched first (fetch.c). */
static int ensure_local(struct store *s, int ns_fd, const char *sha256)
{
	char path[3 + STORE_SHA256_HEX];
	int err = rel_path(sha256, path);

	if (err || !s->has_backend)
		return err;
	if (faccessat(ns_fd, path, F_OK, 0) == 0) {
		store_cache_use(s, ns_fd, sha256, 0, false);
		return 0;
	}
	if (errno != ENOENT)
		return -errno;
	return store_backend_fetch(s, sha256, ns_fd);
}

static int open_in(struct store *s, int ns_fd, const char *sha256, int *fd)
{
	char path[3 + STORE_SHA256_HEX];
	int err = rel_path(sha256, path);

	if (err)
		return err;
	*fd = openat(ns_fd, path, O_RDONLY | O_CLOEXEC);
	if (*fd >= 0) {
		store_cache_use(s, ns_fd, sha256, 0, false);
		return 0;
	}
	err = -errno;
	if (err != -ENOENT || !s->has_backend)
		return err;
	err = store_backend_fetch(s, sha256, ns_fd); /* the commit counts it used */
	if (err)
		return err;
	*fd = openat(ns_fd, path, O_RDONLY | O_CLOEXEC);
	return *fd >= 0 ? 0 : -errno;
}

static int path_in(struct store *s, const char *ns, const char *sha256, char *out, size_t size)
{
	int err = ensure_local(s, strcmp(ns, "blobs") == 0 ? s->blobs_fd : s->derived_fd,
			       sha256);

	if (err)
		return err;
	if (snprintf(out, size, "%s/%s/%.2s/%s", s->dir, ns, sha256, sha256) >= (int)size)
		return -ENAMETOOLONG;
	return 0;
}

int store_blob_open(struct store *s, const char *sha256, int *fd)
{
	return open_in(s, s->blobs_fd, sha256, fd);
}

int store_blob_path(struct store *s, const char *sha256, char *out, size_t size)
{
	return path_in(s, "blobs", sha256, out, size);
}

int store_derived_open(struct store *s, const char *sha256, int *fd)
{
	return open_in(s, s->derived_fd, sha256, fd);
}

int store_derived_path(struct store *s, const char *sha256, char *out, size_t size)
{
	return path_in(s, "derived", sha256, out, size);
}

int store_artifact_open(struct store *s, const struct store_artifact *a, int *fd)
{
	return open_in(s, a->kinds & STORE_KIND_DERIVED ? s->derived_fd : s->blobs_fd,
		       a->sha256, fd);
}
