/*
 * file_id.c - the OpenTelemetry eBPF profiler's file ID of an executable
 * (its mapping attribute process.executable.build_id.htlhash), computed
 * for every executable the store records and indexed to the build ID, so
 * that a frame the profiler names by file ID only can be symbolized.
 *
 * The ID, as opentelemetry-ebpf-profiler defines it (libpf/fileid.go,
 * FileIDFromExecutableReader): SHA-256 over, in this order,
 *   1. the file's first min(size, 4096) bytes,
 *   2. its last min(size, 4096) bytes (a file under 8 KiB has some bytes
 *      in both parts, and one under 4 KiB is hashed twice whole),
 *   3. its size as 8 bytes, big-endian;
 * the ID is the digest's first 16 bytes, which the profiler writes as 32
 * lowercase hex digits in byte order (basehash.Hash128.StringNoQuotes:
 * the two big-endian 64-bit halves, zero-padded).  It hashes the file it
 * mapped: an executable or a library as installed, never a separate
 * debug file, whose ID no profiler sends.
 *
 * Keys (docs/store-format.md, "The file-ID index"):
 *   F FILE_ID \0 BUILD_ID   -> the executable's sha256 (64 hex digits)
 *   H BUILD_ID \0 SHA256    -> FILE_ID (so the entry goes with the artifact)
 *   M file-id-index \0      -> "1": the records held at open were indexed
 * written in the batch of the artifact record, deleted in the eviction's.
 */
#include "store_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PART 4096 /* bytes hashed at each end */
#define META_ID "file-id-index"

/* ---- the hash ------------------------------------------------------------------- */

/* Hash len bytes of fd at off: 0, or -EIO when the file is shorter than
 * its size said, or the read's -errno. */
static int hash_range(struct sha256_ctx *h, int fd, uint64_t off, size_t len)
{
	uint8_t buf[PART];
	size_t got = 0;

	while (got < len) {
		ssize_t n = pread(fd, buf + got, len - got, (off_t)(off + got));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		got += (size_t)n;
	}
	sha256_update(h, len, buf);
	return 0;
}

int store_file_id_fd(int fd, uint64_t size, char out[STORE_FILE_ID_HEX])
{
	struct sha256_ctx h;
	uint8_t digest[SHA256_DIGEST_SIZE], be[8];
	size_t part = size < PART ? (size_t)size : PART;
	int err;

	sha256_init(&h);
	err = hash_range(&h, fd, 0, part);
	if (!err)
		err = hash_range(&h, fd, size - part, part);
	if (err)
		return err;
	for (int i = 0; i < 8; i++)
		be[i] = (uint8_t)(size >> (56 - 8 * i));
	sha256_update(&h, sizeof(be), be);
	sha256_digest(&h, sizeof(digest), digest);
	ember_hex_encode(digest, STORE_FILE_ID_BYTES, out);
	return 0;
}

bool store_file_id_normalize(const char *s, char out[STORE_FILE_ID_HEX])
{
	uint8_t id[STORE_FILE_ID_BYTES];

	if (!s || strlen(s) != 2 * STORE_FILE_ID_BYTES ||
	    ember_hex_decode(s, id, sizeof(id)))
		return false;
	ember_hex_encode(id, sizeof(id), out);
	return true;
}

/* ---- the index ------------------------------------------------------------------ */

void store_file_id_put(struct store_batch *wb, const struct store_artifact *a,
		       const char *file_id)
{
	char key[STORE_KEY_MAX];
	int klen = store_key_make(key, STORE_TAG_FILE_ID, file_id, a->build_id);

	if (klen > 0)
		store_batch_put(wb, key, (size_t)klen, a->sha256, STORE_SHA256_HEX - 1);
	klen = store_key_make(key, STORE_TAG_HAS_FILE_ID, a->build_id, a->sha256);
	if (klen > 0)
		store_batch_put(wb, key, (size_t)klen, file_id, 2 * STORE_FILE_ID_BYTES);
}

int store_file_id_drop(struct store *s, struct store_batch *wb, const char *build_id,
		       const char *sha256)
{
	char key[STORE_KEY_MAX], fid[STORE_FILE_ID_HEX];
	char *val;
	size_t vlen;
	int klen = store_key_make(key, STORE_TAG_HAS_FILE_ID, build_id, sha256);
	int err = klen < 0 ? -ENOENT : store_db_get(s, key, (size_t)klen, &val, &vlen);

	if (err)
		return err == -ENOENT ? 0 : err; /* never indexed */
	store_batch_delete(wb, key, (size_t)klen);
	if (vlen == sizeof(fid) - 1) {
		memcpy(fid, val, vlen);
		fid[vlen] = '\0';
		klen = store_key_make(key, STORE_TAG_FILE_ID, fid, build_id);
		if (klen > 0)
			store_batch_delete(wb, key, (size_t)klen);
	}
	free(val);
	return 0;
}

/* The first build ID under an F prefix. */
static int first_build_id(const char *key, size_t klen, const char *val, size_t vlen,
			  void *arg)
{
	size_t idlen = strnlen(key + 1, klen - 1), blen = klen - 2 - idlen;
	char *out = arg;

	(void)val;
	(void)vlen;
	if (idlen + 2 > klen || !blen || blen >= STORE_BUILD_ID_HEX)
		return 0; /* a damaged key: the next one */
	memcpy(out, key + 2 + idlen, blen);
	out[blen] = '\0';
	return 1;
}

int store_find_file_id(struct store *s, const char *file_id, char build_id[STORE_BUILD_ID_HEX])
{
	char fid[STORE_FILE_ID_HEX], prefix[STORE_KEY_MAX], found[STORE_BUILD_ID_HEX];
	int plen, err;

	if (!store_file_id_normalize(file_id, fid))
		return -EINVAL;
	plen = store_key_make(prefix, STORE_TAG_FILE_ID, fid, NULL);
	err = store_db_scan(s, prefix, (size_t)plen, first_build_id, found);
	if (err < 0)
		return err;
	if (err == 0)
		return -ENOENT;
	memcpy(build_id, found, sizeof(found));
	return 0;
}

struct ids_walk {
	int (*cb)(const char *file_id, void *arg);
	void *arg;
};

static int one_file_id(const char *key, size_t klen, const char *val, size_t vlen, void *arg)
{
	struct ids_walk *w = arg;
	char fid[STORE_FILE_ID_HEX];

	(void)key;
	(void)klen;
	if (vlen != sizeof(fid) - 1)
		return 0;
	memcpy(fid, val, vlen);
	fid[vlen] = '\0';
	return w->cb(fid, w->arg);
}

int store_list_file_ids(struct store *s, const char *build_id,
			int (*cb)(const char *file_id, void *arg), void *arg)
{
	char prefix[STORE_KEY_MAX];
	struct ids_walk w = { cb, arg };
	int plen = store_key_make(prefix, STORE_TAG_HAS_FILE_ID, build_id, NULL);

	return plen < 0 ? 0 : store_db_scan(s, prefix, (size_t)plen, one_file_id, &w);
}

/* ---- what an older store holds (once, on the opening thread) --------------------- */

/* The executables of the records met, to index once the walk is over. */
struct backfill {
	struct store *s;
	struct store_artifact *v;
	size_t n, alloc;
};

static int note_executable(const char *key, size_t klen, const char *val, size_t vlen,
			   void *arg)
{
	struct backfill *w = arg;
	struct store_artifact a;
	size_t idlen = strnlen(key + 1, klen - 1);

	if (idlen >= STORE_BUILD_ID_HEX || klen != 2 + idlen + STORE_SHA256_HEX - 1 ||
	    store_record_decode((const uint8_t *)val, vlen, &a) || !(a.flags & STORE_HAS_TEXT))
		return 0;
	memcpy(a.build_id, key + 1, idlen + 1);
	memcpy(a.sha256, key + 2 + idlen, STORE_SHA256_HEX - 1);
	a.sha256[STORE_SHA256_HEX - 1] = '\0';
	if (ember_vec_grow((void **)&w->v, &w->alloc, w->n, sizeof(*w->v)))
		return -ENOMEM;
	w->v[w->n++] = a;
	return 0;
}

/* Index a's blob in wb when it is here (with a backend, one not cached
 * is skipped: docs/store-format.md). */
static void index_one(struct store *s, struct store_batch *wb, const struct store_artifact *a)
{
	char path[3 + STORE_SHA256_HEX], fid[STORE_FILE_ID_HEX];
	int fd;

	snprintf(path, sizeof(path), "%.2s/%s", a->sha256, a->sha256);
	fd = openat(s->blobs_fd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (store_file_id_fd(fd, a->size, fid) == 0)
		store_file_id_put(wb, a, fid);
	close(fd);
}

int store_file_id_backfill(struct store *s)
{
	char key[STORE_KEY_MAX];
	struct backfill w = { .s = s };
	struct store_batch wb;
	char *val;
	size_t vlen;
	int klen = store_key_make(key, STORE_TAG_META, META_ID, NULL);
	int err = store_db_get_opened(s, key, (size_t)klen, &val, &vlen);

	if (err != -ENOENT) { /* done before, or the DB cannot say */
		if (!err)
			free(val);
		return err;
	}
	err = store_db_scan_opened(s, "A", 1, note_executable, &w);
	if (!err) {
		store_batch_begin_opened(s, &wb);
		for (size_t i = 0; i < w.n; i++)
			index_one(s, &wb, &w.v[i]);
		store_batch_put(&wb, key, (size_t)klen, "1", 1);
		err = store_batch_commit(&wb);
	}
	if (!err && w.n)
		pr_info("store: indexed the file IDs of %zu executables", w.n);
	free(w.v);
	return err;
}
