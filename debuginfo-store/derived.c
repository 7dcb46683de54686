/*
 * derived.c - derived artifacts: files the server computes from what is
 * stored (a symbol index, an unwind table), recorded under a name that
 * encodes their inputs (D id \0 what -> sha256 + record, keyed.c), with
 * blobs of their own, in derived/ (never shared with uploads), dropped
 * with them (store.h, "Derived").
 */
#include "store_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int store_add_derived(struct store *s, struct store_blob *b, const char *build_id,
		      const char *what, const char sha256[STORE_SHA256_HEX],
		      uint64_t size, bool *is_new)
{
	int err = store_keyed_add(s, b, STORE_TAG_DERIVED, build_id, what, what, sha256, size,
				  STORE_FROM_UPLOAD, is_new);

	if (!err && (err = store_derived_supersede(s, build_id, what))) {
		pr_warn("store: cannot drop what '%s' of '%s' supersedes: %s", what, build_id,
			strerror(-err));
		err = 0; /* recorded all the same: the garbage waits for the next try */
	}
	return err;
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
	return store_keyed_find(s, STORE_TAG_DERIVED, build_id, what, out);
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
	err = store_keyed_find(s, STORE_TAG_DERIVED, build_id, what, &a);
	if (!err)
		err = store_pin_drop(s, build_id, what);
	if (!err && !(err = store_batch_begin(s, &wb))) {
		store_batch_delete(&wb, key, (size_t)klen);
		err = store_batch_commit(&wb);
	}
	/* Record first, then the file: a crash between leaves an orphan
	 * blob, never a record without its file. */
	snprintf(path, sizeof(path), "%.2s/%s", a.sha256, a.sha256);
	if (!err && unlinkat(s->derived_fd, path, 0) && errno != ENOENT)
		err = -errno;
	pthread_mutex_unlock(&s->write_mu);
	return err;
}
