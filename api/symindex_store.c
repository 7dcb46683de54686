/*
 * symindex_store.c - symbol indexes saved in the store (symindex_store.h).
 *
 * A built index is written into a store blob (streamed: never a second
 * copy in memory), committed as a derived artifact, and mapped back from
 * the blob, so the built arrays are freed and the index lives in the page
 * cache, shared with the file.  The freshly written file is loaded with
 * its body checksum verified (its pages are in the cache already); a
 * restart maps it with the header checked only (docs/symbol-index-format.md).
 */
#include "symindex_store.h"
#include "common.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The format version of the saved index is part of the artifact's name. */
#define SYMINDEX_FORMAT 1
#define SYMINDEX_PIN "symidx" /* the kind of its pin */

int symindex_find_inputs(struct store *s, const char *id, struct symindex_inputs *in)
{
	struct store_pair f;

	memset(in, 0, sizeof(*in));
	store_find_pair(s, id, &f);
	if (f.has_exe)
		in->main = f.exe;
	else if (f.has_dbg)
		in->main = f.dbg; /* the debug file is the main file: no other */
	else if (store_find_best(s, id, STORE_WANT_SYMBOLS, &in->main))
		return -ENOENT;
	in->has_dbg = f.has_exe && f.has_dbg;
	if (in->has_dbg)
		in->dbg = f.dbg;
	snprintf(in->what, sizeof(in->what), "symidx-v%d-%.64s-%.64s", SYMINDEX_FORMAT,
		 in->main.sha256, in->has_dbg ? in->dbg.sha256 : "none");
	return 0;
}

/* Map the index saved in blob sha256. */
static struct sym_index *load_blob(struct store *s, const char *sha256, unsigned flags,
				   int *err)
{
	struct sym_index *idx;
	int fd;

	*err = store_blob_open(s, sha256, &fd);
	if (*err)
		return NULL;
	idx = sym_index_load(fd, flags, err);
	close(fd);
	return idx;
}

/* Map the saved index of in->what, if there is one. */
static struct sym_index *load_saved(struct store *s, const char *id, const char *what,
				    unsigned flags, int *err)
{
	struct store_artifact a;

	*err = store_find_derived(s, id, what, &a);
	return *err ? NULL : load_blob(s, a.sha256, flags, err);
}

struct sym_index *symindex_open_pinned(struct store *s, const char *id,
				       char what[STORE_NAME_MAX], int *err)
{
	struct store_pin pin;
	struct sym_index *idx;

	*err = store_find_pin(s, id, SYMINDEX_PIN, &pin);
	if (*err)
		return NULL;
	idx = load_blob(s, pin.sha256, 0, err);
	if (idx)
		memcpy(what, pin.what, STORE_NAME_MAX);
	return idx;
}

void symindex_pin(struct store *s, const char *id, const struct symindex_inputs *in,
		  uint64_t gen)
{
	int err = store_pin_derived(s, id, SYMINDEX_PIN, in->what, gen);

	if (err && err != -ESTALE)
		pr_warn("symbolize: cannot pin the index of %s: %s", id, strerror(-err));
}

/* Build from the stored files; never a search of this machine's
 * /usr/lib/debug. */
static struct sym_index *build(struct store *s, const struct symindex_inputs *in, int *err)
{
	struct sym_open_opts o = { .sz = sizeof(o), .no_debug_search = true };
	char main_path[4096], dbg_path[4096];

	store_blob_path(s, in->main.sha256, main_path, sizeof(main_path));
	if (in->has_dbg) {
		store_blob_path(s, in->dbg.sha256, dbg_path, sizeof(dbg_path));
		o.debug_file = dbg_path;
	}
	return sym_index_open(main_path, &o, err);
}

static int blob_write(void *arg, const void *data, size_t len)
{
	return store_blob_write(arg, data, len);
}

static int produce_index(void *arg, struct store_blob *b)
{
	return sym_index_save(arg, blob_write, b);
}

struct sym_index *symindex_open(struct store *s, const char *id,
				const struct symindex_inputs *in,
				enum symindex_origin *origin, int *err)
{
	struct sym_index *idx = load_saved(s, id, in->what, 0, err), *saved;

	*origin = SYMINDEX_LOADED;
	if (idx)
		return idx;
	if (*err != -ENOENT) { /* there, but not loadable: made again */
		pr_warn("symbolize: saved index %s of %s: %s; rebuilding it", in->what, id,
			sym_strerror(*err));
		store_drop_derived(s, id, in->what);
	}
	idx = build(s, in, err);
	if (!idx)
		return NULL;
	*err = store_put_derived(s, id, in->what, produce_index, idx);
	saved = *err ? NULL : load_saved(s, id, in->what, SYM_LOAD_VERIFY, err);
	if (!saved) {
		pr_warn("symbolize: cannot save the index of %s: %s; serving it from memory",
			id, sym_strerror(*err));
		*origin = SYMINDEX_BUILT_UNSAVED;
		*err = 0;
		return idx;
	}
	sym_index_free(idx);
	*origin = SYMINDEX_BUILT;
	return saved;
}
