/*
 * profiles.c - the profile store's block storage on a bucket
 * (struct pstore_blockio, profile-store/blockio/pstore_blockio.h; keys:
 * docs/object-storage-layout.md, "Profiles"): NAME is kept at
 * PREFIXv1/profiles/NAME, so blocks at v1/profiles/blocks/... and the
 * block index at v1/profiles/index/PART/SEQ.
 *
 *   put:   a create-only PUT with the body's sha256 (checked by the
 *          store); a 412 is another replica's write of the same name,
 *          which for a content-named block is the same bytes: success.
 *   claim: a create-only PUT; a 412 is -EEXIST (an index SEQ taken).
 *   get:   from the local cache when the block is there, else a range
 *          GET (a block's header at open), or a whole GET into the cache
 *          (verified against the object's sha256) for a read to the end.
 *   fetch: the whole block into the cache (a query or a merge is about
 *          to read it at length).
 *   list:  ListObjectsV2 under the prefix; del: DELETE.
 *
 * The cache is the directory given (DATA/profiles/cache): one file per
 * block, written to a temporary name and renamed (a crash leaves
 * temporary files, removed at the next open; no fsync: the bucket is the
 * truth), counted in a bounded cache of local files (common.h's struct
 * ember_fcache; the server's is shared with the debuginfo store's blob
 * files under one --cache-mb): past its budget the least recently used
 * files not read within its grace are removed.  A file removed while a
 * reader has it open stays readable to it.
 */
#include "bucket_internal.h"
#include "pstore_blockio.h"

#include <errno.h>
#include <fcntl.h>
#include <nettle/sha2.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ENTRY_CAP ((size_t)1 << 20) /* a whole read of a non-block object */

struct bucket_pio {
	struct objstore *os;
	char prefix[BUCKET_PREFIX_MAX];
	int cache_fd;
	struct ember_fcache *cache; /* the caller's, or own_cache */
	bool own_cache;
	int cache_ns;		    /* cache_fd's namespace in it */
	atomic_uint seq;
};

static int key_of(const struct bucket_pio *io, const char *name, char key[BUCKET_KEY_MAX])
{
	return bucket_key(key, io->prefix, "profiles/%s", name);
}

/* Blocks are cached under their base name; nothing else is. */
static const char *cache_name(const char *name)
{
	return strncmp(name, "blocks/", 7) == 0 && !strchr(name + 7, '/') ? name + 7 : NULL;
}

static void warn_status(const char *what, const char *key, int err,
			const struct objstore_status *st)
{
	pr_warn("bucket: %s '%s': %s", what, key, st->msg[0] ? st->msg : objstore_strerror(err));
}

/* ---- the cache ------------------------------------------------------------------- */

static void tmp_name(struct bucket_pio *io, const char *file, char tmp[300])
{
	snprintf(tmp, 300, "%s.tmp.%d.%u", file, (int)getpid(), atomic_fetch_add(&io->seq, 1));
}

/* data into the cache as file (best effort: the bucket has it). */
static void cache_write(struct bucket_pio *io, const char *file, const void *data, size_t len)
{
	char tmp[300];
	int fd, err;

	tmp_name(io, file, tmp);
	fd = openat(io->cache_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	err = fd < 0 ? -errno : ember_write_all(fd, data, len);
	if (fd >= 0)
		close(fd);
	if (!err && renameat(io->cache_fd, tmp, io->cache_fd, file) < 0)
		err = -errno;
	if (err) {
		unlinkat(io->cache_fd, tmp, 0);
		pr_debug("bucket: cannot cache '%s': %s", file, strerror(-err));
		return;
	}
	ember_fcache_written(io->cache, io->cache_ns, file, len);
}

/* The whole object of key into the cache as file, verified. */
static int cache_fetch(struct bucket_pio *io, const char *key, const char *file)
{
	struct objstore_object_info info;
	struct objstore_status st;
	uint64_t written = 0;
	char tmp[300];
	int fd, err;

	tmp_name(io, file, tmp);
	fd = openat(io->cache_fd, tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	err = objstore_get_fd(io->os, key, NULL, fd, BUCKET_BLOCK_MAX, &info, &written, &st);
	if (err && err != -ENOENT)
		warn_status("cannot fetch", key, err, &st);
	if (!err && !info.has_sha256) {
		pr_warn("bucket: '%s' does not carry its sha256: not taken", key);
		err = -EBADMSG;
	}
	close(fd);
	if (!err && renameat(io->cache_fd, tmp, io->cache_fd, file) < 0)
		err = -errno;
	if (err) {
		unlinkat(io->cache_fd, tmp, 0);
		return err;
	}
	ember_fcache_written(io->cache, io->cache_ns, file, written);
	return 0;
}

/* Bytes [off, off + len) (len 0: to the end) of a cached file; -ENOENT
 * when it is not cached. */
static int cache_read(struct bucket_pio *io, const char *file, uint64_t off, size_t len,
		      struct ember_buf *out)
{
	struct stat st;
	int fd = openat(io->cache_fd, file, O_RDONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		err = -errno;
	if (!err && off > (uint64_t)st.st_size)
		off = (uint64_t)st.st_size;
	if (!err && (!len || len > (uint64_t)st.st_size - off))
		len = (size_t)((uint64_t)st.st_size - off);
	if (!err)
		err = ember_buf_reserve(out, len);
	while (!err && len) {
		ssize_t n = pread(fd, out->data + out->len, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : -EIO; /* the file is whole or absent */
			break;
		}
		out->len += (size_t)n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	if (!err && out->data)
		out->data[out->len] = '\0';
	close(fd);
	if (!err)
		ember_fcache_used(io->cache, io->cache_ns, file);
	return err;
}

/* ---- struct pstore_blockio --------------------------------------------------------- */

static int put_obj(struct bucket_pio *io, const char *name, const void *data, size_t len,
		   bool *existed)
{
	struct sha256_ctx c;
	uint8_t digest[SHA256_DIGEST_SIZE];
	struct objstore_put_opts po = { .sz = sizeof(po),
					.flags = existed ? OBJSTORE_PUT_CREATE_ONLY : 0,
					.sha256 = digest };
	struct objstore_status st;
	char key[BUCKET_KEY_MAX];
	int err = key_of(io, name, key);

	if (err)
		return err;
	sha256_init(&c);
	sha256_update(&c, len, data);
	sha256_digest(&c, sizeof(digest), digest);
	err = objstore_put_mem(io->os, key, data, len, &po, existed, &st);
	if (err)
		warn_status("cannot write", key, err, &st);
	return err;
}

static int pio_put(void *ctx, const char *name, const void *data, size_t len)
{
	struct bucket_pio *io = ctx;
	const char *file = cache_name(name);
	bool existed = false;
	int err = put_obj(io, name, data, len, &existed);

	/* another replica's object is read back from the bucket (and cached
	 * then); ours, checked by the store against its sha256, is cached now */
	if (!err && !existed && file)
		cache_write(io, file, data, len);
	return err;
}

static int pio_claim(void *ctx, const char *name, const void *data, size_t len)
{
	bool existed = false;
	int err = put_obj(ctx, name, data, len, &existed);

	return !err && existed ? -EEXIST : err;
}

/* A plain PUT, replacing the object (a writer's lease). */
static int pio_renew(void *ctx, const char *name, const void *data, size_t len)
{
	return put_obj(ctx, name, data, len, NULL);
}

/* The object's Last-Modified, by the bucket's clock. */
static int pio_mtime(void *ctx, const char *name, int64_t *sec)
{
	struct bucket_pio *io = ctx;
	struct objstore_object_info info;
	struct objstore_status st;
	char key[BUCKET_KEY_MAX];
	int err = key_of(io, name, key);

	if (!err)
		err = objstore_head(io->os, key, &info, &st);
	if (err && err != -ENOENT)
		warn_status("cannot read the time of", key, err, &st);
	if (!err && !info.last_modified)
		err = -EPROTO; /* no Last-Modified: no lease can be judged */
	if (!err)
		*sec = (int64_t)info.last_modified;
	return err;
}

static int get_remote(struct bucket_pio *io, const char *key, uint64_t off, size_t len,
		      struct ember_buf *out)
{
	struct objstore_range r = { .first = off, .last = off + len - 1, .set = true };
	struct objstore_status st;
	void *data = NULL;
	size_t n = 0;
	int err = objstore_get_mem(io->os, key, len ? &r : NULL, len ? len : ENTRY_CAP, &data,
				   &n, &st);

	if (err == -ERANGE)
		err = 0; /* past the end: no bytes */
	else if (err && err != -ENOENT)
		warn_status("cannot read", key, err, &st);
	if (!err && n)
		err = ember_buf_append(out, data, n);
	free(data);
	return err;
}

static int pio_get(void *ctx, const char *name, uint64_t off, size_t len, struct ember_buf *out)
{
	struct bucket_pio *io = ctx;
	const char *file = cache_name(name);
	char key[BUCKET_KEY_MAX];
	int err = key_of(io, name, key);

	if (err)
		return err;
	if (file) {
		err = cache_read(io, file, off, len, out);
		if (err != -ENOENT)
			return err;
		if (!len) { /* to the end: the whole block, then from the cache */
			EMBER_FORWARD_IF_ERROR(cache_fetch(io, key, file));
			return cache_read(io, file, off, len, out);
		}
	}
	return get_remote(io, key, off, len, out);
}

static int pio_fetch(void *ctx, const char *name)
{
	struct bucket_pio *io = ctx;
	const char *file = cache_name(name);
	char key[BUCKET_KEY_MAX];
	int err;

	if (!file || faccessat(io->cache_fd, file, F_OK, 0) == 0)
		return 0;
	err = key_of(io, name, key);
	return err ? err : cache_fetch(io, key, file);
}

struct list_ctx {
	size_t strip;
	int (*fn)(void *arg, const char *name, uint64_t size);
	void *arg;
};

static int on_entry(void *ctx, const struct objstore_list_entry *e)
{
	struct list_ctx *l = ctx;

	if (strlen(e->key) <= l->strip)
		return 0;
	return l->fn(l->arg, e->key + l->strip, e->size);
}

static int pio_list(void *ctx, const char *prefix,
		    int (*fn)(void *arg, const char *name, uint64_t size), void *arg)
{
	struct bucket_pio *io = ctx;
	char key[BUCKET_KEY_MAX], base[BUCKET_KEY_MAX];
	struct objstore_status st;
	struct list_ctx l = { .fn = fn, .arg = arg };
	int err = key_of(io, prefix, key);

	if (!err)
		err = key_of(io, "", base);
	if (err)
		return err;
	l.strip = strlen(base);
	err = objstore_list(io->os, key, 0, on_entry, &l, NULL, &st);
	if (err < 0 && st.msg[0])
		warn_status("cannot list", key, err, &st);
	return err;
}

static int pio_del(void *ctx, const char *name)
{
	struct bucket_pio *io = ctx;
	const char *file = cache_name(name);
	struct objstore_status st;
	char key[BUCKET_KEY_MAX];
	int err = key_of(io, name, key);

	if (err)
		return err;
	if (file)
		ember_fcache_remove(io->cache, io->cache_ns, file);
	err = objstore_delete(io->os, key, &st);
	if (err)
		warn_status("cannot delete", key, err, &st);
	return err;
}

static void pio_release(void *ctx)
{
	struct bucket_pio *io = ctx;

	if (!io)
		return;
	if (io->own_cache)
		ember_fcache_free(io->cache);
	if (io->cache_fd >= 0)
		close(io->cache_fd);
	free(io);
}

/* The cache directory counted in the caller's cache (or one of its own,
 * without a bound): its files noted (their mtime as their last use), the
 * temporary files a crash left removed. */
static int cache_attach(struct bucket_pio *io, struct ember_fcache *shared)
{
	io->cache = shared ? shared : ember_fcache_new(0, 0);
	io->own_cache = !shared;
	if (!io->cache)
		return -ENOMEM;
	io->cache_ns = ember_fcache_add_dir(io->cache, io->cache_fd, EMBER_FCACHE_DROP_TEMP);
	return io->cache_ns < 0 ? io->cache_ns : 0;
}

int bucket_profile_blockio(const struct bucket_profile_opts *o, struct pstore_blockio *out)
{
	struct bucket_pio *io;
	int err;

	if (!o || !o->os || !o->cache_dir || strlen(o->prefix ? o->prefix : "") >= BUCKET_PREFIX_MAX)
		return -EINVAL;
	if (mkdir(o->cache_dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	io = calloc(1, sizeof(*io));
	if (!io)
		return -ENOMEM;
	io->os = o->os;
	snprintf(io->prefix, sizeof(io->prefix), "%s", o->prefix ? o->prefix : "");
	io->cache_fd = open(o->cache_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	err = io->cache_fd < 0 ? -errno : cache_attach(io, o->cache);
	if (err) {
		pio_release(io);
		return err;
	}
	*out = (struct pstore_blockio){ .sz = sizeof(*out), .ctx = io, .put = pio_put,
					.get = pio_get, .list = pio_list, .del = pio_del,
					.release = pio_release, .claim = pio_claim,
					.fetch = pio_fetch, .renew = pio_renew,
					.mtime = pio_mtime };
	return 0;
}
