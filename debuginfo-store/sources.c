/*
 * sources.c - source files stored per build ID.
 *
 * When a DWARF candidate is added, the source paths its DWARF names are
 * recorded (N id \0 path).  Only named paths accept uploaded content
 * (S id \0 path -> sha256 + record) and only those are served, so neither
 * an upload nor a request can reach a path the debug info does not list.
 */
#include "store_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int store_source_named(struct store *s, const char *build_id,
		       const char *path)
{
	char key[STORE_KEY_MAX];
	char *val;
	size_t vlen;
	int klen = store_key_make(key, STORE_TAG_NAMED, build_id, path);
	int err;

	if (klen < 0)
		return -ENOENT;
	err = store_db_get(s, key, (size_t)klen, &val, &vlen);
	if (!err)
		free(val);
	return err;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static int find_keyed(struct store *s, enum store_key_tag tag, const char *build_id,
		      const char *rest, struct store_artifact *out)
{
	char key[STORE_KEY_MAX];
	char *val;
	size_t vlen;
	int klen = store_key_make(key, tag, build_id, rest);
	int err;

	if (klen < 0)
		return -ENOENT;
	err = store_db_get(s, key, (size_t)klen, &val, &vlen);
	if (err)
		return err;
	if (vlen < STORE_SHA256_HEX - 1 ||
	    store_record_decode((const uint8_t *)val + STORE_SHA256_HEX - 1,
				vlen - STORE_SHA256_HEX + 1, out)) {
		free(val);
		return -ENOENT;
	}
	memcpy(out->sha256, val, STORE_SHA256_HEX - 1);
	out->sha256[STORE_SHA256_HEX - 1] = '\0';
	snprintf(out->build_id, sizeof(out->build_id), "%s", build_id);
	free(val);
	return 0;
}

/* A blob recorded under (tag, build_id, rest): value = sha256 hex + record. */
static int add_keyed(struct store *s, struct store_blob *b, enum store_key_tag tag,
		     const char *build_id, const char *rest, const char *name,
		     const char sha256[STORE_SHA256_HEX], uint64_t size, bool *is_new)
{
	struct store_artifact a = { .size = size, .mtime = time(NULL) };
	char key[STORE_KEY_MAX];
	uint8_t val[STORE_SHA256_HEX + 64 + STORE_NAME_MAX];
	struct store_batch wb;
	size_t vlen;
	bool existed;
	int klen = store_key_make(key, tag, build_id, rest);
	int err;

	if (klen < 0) {
		store_blob_discard(b);
		return klen;
	}
	snprintf(a.name, sizeof(a.name), "%s", name);
	err = store_blob_commit(s, b, &existed);
	if (err)
		return err;
	memcpy(val, sha256, STORE_SHA256_HEX - 1);
	vlen = STORE_SHA256_HEX - 1 +
	       store_record_encode(&a, val + STORE_SHA256_HEX - 1,
				   sizeof(val) - STORE_SHA256_HEX + 1);
	pthread_mutex_lock(&s->write_mu);
	err = find_keyed(s, tag, build_id, rest, &(struct store_artifact){ 0 });
	*is_new = err == -ENOENT;
	if (!err || err == -ENOENT)
		err = store_batch_begin(s, &wb);
	if (!err) {
		store_batch_put(&wb, key, (size_t)klen, (const char *)val, vlen);
		err = store_batch_commit(&wb);
	}
	if (!err && *is_new && tag == STORE_TAG_SOURCE)
		s->n_sources++;
	pthread_mutex_unlock(&s->write_mu);
	return err;
}

int store_add_source(struct store *s, struct store_blob *b,
		     const char *build_id, const char *path,
		     const char sha256[STORE_SHA256_HEX], uint64_t size,
		     bool *is_new)
{
	return add_keyed(s, b, STORE_TAG_SOURCE, build_id, path, base_name(path), sha256,
			 size, is_new);
}

int store_find_source(struct store *s, const char *build_id, const char *path,
		      struct store_artifact *out)
{
	return find_keyed(s, STORE_TAG_SOURCE, build_id, path, out);
}

int store_add_derived(struct store *s, struct store_blob *b, const char *build_id,
		      const char *what, const char sha256[STORE_SHA256_HEX],
		      uint64_t size, bool *is_new)
{
	return add_keyed(s, b, STORE_TAG_DERIVED, build_id, what, what, sha256, size,
			 is_new);
}

int store_put_derived(struct store *s, const char *build_id, const char *what,
		      store_produce_fn produce, void *arg)
{
	char sha[STORE_SHA256_HEX];
	struct store_blob *b;
	uint64_t size;
	bool is_new;
	int err = store_blob_begin(s, &b);

	if (err)
		return err;
	err = produce(arg, b);
	if (!err)
		err = store_blob_seal(b, sha, &size);
	if (err) {
		store_blob_discard(b);
		return err;
	}
	return store_add_derived(s, b, build_id, what, sha, size, &is_new);
}

int store_find_derived(struct store *s, const char *build_id, const char *what,
		       struct store_artifact *out)
{
	return find_keyed(s, STORE_TAG_DERIVED, build_id, what, out);
}

int store_drop_derived(struct store *s, const char *build_id, const char *what)
{
	struct store_artifact a;
	char key[STORE_KEY_MAX], path[3 + STORE_SHA256_HEX];
	struct store_batch wb;
	int klen = store_key_make(key, STORE_TAG_DERIVED, build_id, what);
	int err;

	if (klen < 0)
		return -ENOENT;
	pthread_mutex_lock(&s->write_mu);
	err = find_keyed(s, STORE_TAG_DERIVED, build_id, what, &a);
	if (!err)
		err = store_pin_drop(s, build_id, what);
	if (!err && !(err = store_batch_begin(s, &wb))) {
		store_batch_delete(&wb, key, (size_t)klen);
		err = store_batch_commit(&wb);
	}
	/* Record first, then the file: a crash between leaves an orphan
	 * blob, never a record without its file. */
	snprintf(path, sizeof(path), "%.2s/%s", a.sha256, a.sha256);
	if (!err && unlinkat(s->blobs_fd, path, 0) && errno != ENOENT)
		err = -errno;
	pthread_mutex_unlock(&s->write_mu);
	return err;
}
