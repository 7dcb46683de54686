/*
 * source_files.c - source files stored per build ID.
 *
 * When a DWARF candidate is added, the source paths its DWARF names are
 * recorded (N id \0 path).  Only named paths accept uploaded content
 * (S id \0 path -> sha256 + record, keyed.c) and only those are served, so
 * neither an upload nor a request can reach a path the debug info does not
 * list.
 */
#include "store_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int named_local(struct store *s, const char *build_id, const char *path)
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

/* With a backend, the names come with the candidates (backend.c). */
int store_source_named(struct store *s, const char *build_id,
		       const char *path)
{
	bool listed;
	int err = named_local(s, build_id, path);

	if (err != -ENOENT || !s->has_backend)
		return err;
	err = store_backend_refresh(s, build_id, true, &listed);
	return err ? err : named_local(s, build_id, path);
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

int store_add_source(struct store *s, struct store_blob *b,
		     const char *build_id, const char *path,
		     const char sha256[STORE_SHA256_HEX], uint64_t size,
		     unsigned origin, bool *is_new)
{
	return store_keyed_add(s, b, STORE_TAG_SOURCE, build_id, path, base_name(path),
			       sha256, size, origin, is_new);
}

int store_find_source(struct store *s, const char *build_id, const char *path,
		      struct store_artifact *out)
{
	return store_keyed_find(s, STORE_TAG_SOURCE, build_id, path, out);
}

static int count_key(const char *key, size_t klen, const char *val, size_t vlen, void *arg)
{
	(void)key, (void)klen, (void)val, (void)vlen;
	(*(uint64_t *)arg)++;
	return 0;
}

int store_count_sources(struct store *s, const char *build_id, uint64_t *named,
			uint64_t *stored)
{
	char prefix[STORE_KEY_MAX];
	uint64_t n = 0, k = 0;
	int plen = store_key_make(prefix, STORE_TAG_NAMED, build_id, NULL), err;

	if (plen < 0)
		return -EINVAL;
	err = store_db_scan(s, prefix, (size_t)plen, count_key, &n);
	prefix[0] = STORE_TAG_SOURCE;
	if (!err)
		err = store_db_scan(s, prefix, (size_t)plen, count_key, &k);
	if (err)
		return err;
	*named = n;
	*stored = k;
	return 0;
}
