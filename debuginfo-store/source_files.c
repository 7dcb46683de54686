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
