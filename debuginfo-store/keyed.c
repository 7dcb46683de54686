/*
 * keyed.c - a blob recorded under a key (tag, build ID, name), whose value
 * is the blob's sha256 in hex and a record (docs/store-format.md): what
 * source files (source_files.c) and derived artifacts (derived.c) are.
 * A damaged record reads as none and is replaced by the next write.
 */
#include "store_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int find_local(struct store *s, enum store_key_tag tag, const char *build_id,
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
	if (tag == STORE_TAG_DERIVED)
		out->kinds |= STORE_KIND_DERIVED;
	free(val);
	return 0;
}

int store_keyed_find(struct store *s, enum store_key_tag tag, const char *build_id,
		     const char *rest, struct store_artifact *out)
{
	struct store_artifact a = { 0 };
	bool is_new;
	int err = find_local(s, tag, build_id, rest, out);

	if (err != -ENOENT || !s->has_backend)
		return err;
	err = store_backend_get_keyed(s, tag, build_id, rest, &a);
	if (!err) /* the blob comes at its first open */
		err = store_keyed_record(s, tag, build_id, rest, &a, &is_new);
	return err ? err : find_local(s, tag, build_id, rest, out);
}

int store_keyed_record(struct store *s, enum store_key_tag tag, const char *build_id,
		       const char *rest, const struct store_artifact *a, bool *is_new)
{
	struct store_artifact old = { 0 };
	char key[STORE_KEY_MAX];
	uint8_t val[STORE_SHA256_HEX + 64 + STORE_NAME_MAX];
	struct store_batch wb;
	size_t vlen;
	int klen = store_key_make(key, tag, build_id, rest);
	int err;

	if (klen < 0)
		return klen;
	memcpy(val, a->sha256, STORE_SHA256_HEX - 1);
	vlen = STORE_SHA256_HEX - 1 +
	       store_record_encode(a, val + STORE_SHA256_HEX - 1,
				   sizeof(val) - STORE_SHA256_HEX + 1);
	pthread_mutex_lock(&s->write_mu);
	err = find_local(s, tag, build_id, rest, &old);
	*is_new = err == -ENOENT;
	if (!err || err == -ENOENT)
		err = store_batch_begin(s, &wb);
	if (!err) {
		store_batch_put(&wb, key, (size_t)klen, (const char *)val, vlen);
		err = store_batch_commit(&wb);
	}
	if (!err && *is_new && tag == STORE_TAG_SOURCE)
		s->n_sources++;
	if (!err && !*is_new && old.origin == STORE_FROM_UPSTREAM) /* replaced */
		s->upstream_bytes -= old.size;
	if (!err && a->origin == STORE_FROM_UPSTREAM)
		s->upstream_bytes += a->size;
	pthread_mutex_unlock(&s->write_mu);
	return err;
}

int store_keyed_add(struct store *s, struct store_blob *b, enum store_key_tag tag,
		    const char *build_id, const char *rest, const char *name,
		    const char sha256[STORE_SHA256_HEX], uint64_t size, unsigned origin,
		    bool *is_new)
{
	struct store_artifact a = { .size = size, .mtime = time(NULL), .origin = origin };
	bool existed;
	int err = store_key_make((char[STORE_KEY_MAX]){ 0 }, tag, build_id, rest);

	snprintf(a.name, sizeof(a.name), "%s", name);
	snprintf(a.sha256, sizeof(a.sha256), "%s", sha256);
	if (err >= 0) /* the backend first: acknowledged only once it holds both */
		err = store_backend_put_keyed(s, b, tag, build_id, rest, &a);
	if (err < 0) {
		store_blob_discard(b);
		return err;
	}
	err = store_blob_commit(s, b, tag == STORE_TAG_DERIVED ? s->derived_fd : s->blobs_fd,
				&existed);
	return err ? err : store_keyed_record(s, tag, build_id, rest, &a, is_new);
}
