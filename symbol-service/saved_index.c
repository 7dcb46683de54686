/*
 * saved_index.c - symbol indexes saved in the store (symsvc_internal.h).
 *
 * A built index is written into a store blob (streamed: never a second
 * copy in memory), committed as a derived artifact, and mapped back from
 * the blob, so the built arrays are freed and the index lives in the page
 * cache, shared with the file.  The freshly written file is loaded with
 * its body checksum verified (its pages are in the cache already); a
 * restart maps it with the header checked only (docs/symbol-index-format.md).
 */
#include "symsvc_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The format version of the saved index is part of the artifact's name. */
#define SYMINDEX_FORMAT SYM_INDEX_FORMAT_VERSION
#define SYMINDEX_PIN "symidx" /* the kind of its pin */

int symsvc_inputs_find(struct store *s, const char *id, struct symsvc_inputs *in)
{
	struct store_pair f;
	int err = store_find_pair(s, id, &f);

	if (err)
		return err;
	memset(in, 0, sizeof(*in));
	if (f.has_exe)
		in->main = f.exe;
	else if (f.has_dbg)
		in->main = f.dbg; /* the debug file is the main file: no other */
	else if ((err = store_find_best(s, id, STORE_WANT_SYMBOLS, &in->main)))
		return err;
	in->has_dbg = f.has_exe && f.has_dbg;
	if (in->has_dbg)
		in->dbg = f.dbg;
	snprintf(in->what, sizeof(in->what), "symidx-v%d-%.64s-%.64s", SYMINDEX_FORMAT,
		 in->main.sha256, in->has_dbg ? in->dbg.sha256 : "none");
	return 0;
}

/* Map the index saved in blob sha256; a refused file's reason (which
 * check failed) into why. */
static struct sym_index *load_blob(struct store *s, const char *sha256, unsigned flags,
				   char *why, size_t why_size, int *err)
{
	struct ember_diag d = ember_diag_make(why, why_size);
	struct sym_index *idx;
	int fd;

	*err = store_derived_open(s, sha256, &fd);
	if (*err)
		return NULL;
	idx = sym_index_load_diag(fd, flags, &d, err);
	close(fd);
	return idx;
}

/* The file itself is bad (not a failure to read it: EMFILE, ENOMEM, EIO
 * say nothing of the file, which stays). */
static bool is_damage(int err)
{
	return err == -SYM_ERR_BAD_INDEX || err == -SYM_ERR_INDEX_VERSION;
}

/*
 * Map the saved index of what: NULL with -ENOENT when there is none, or
 * with the store's (or the loader's) error in *err; NULL with *damaged
 * set when the file is there but damaged or of another version (the
 * error in *err, which check refused it in why).
 */
static struct sym_index *load_saved(struct store *s, const char *id, const char *what,
				    unsigned flags, char *why, size_t why_size, int *err,
				    bool *damaged)
{
	struct store_artifact a;
	struct sym_index *idx;

	*damaged = false;
	why[0] = '\0';
	*err = store_find_derived(s, id, what, &a);
	if (*err)
		return NULL;
	idx = load_blob(s, a.sha256, flags, why, why_size, err);
	*damaged = !idx && is_damage(*err);
	return idx;
}

struct sym_index *symsvc_saved_open_pinned(struct store *s, const char *id,
				       char what[STORE_NAME_MAX], int *err)
{
	struct store_pin pin;
	struct sym_index *idx;
	char why[192];

	*err = store_find_pin(s, id, SYMINDEX_PIN, &pin);
	if (*err)
		return NULL;
	idx = load_blob(s, pin.sha256, 0, why, sizeof(why), err);
	if (idx)
		memcpy(what, pin.what, STORE_NAME_MAX);
	else if (is_damage(*err)) /* the open store drops it (symsvc_saved_open) */
		pr_info("symsvc: pinned index of %s refused: %s", id, why);
	return idx;
}

void symsvc_saved_pin(struct store *s, const char *id, const struct symsvc_inputs *in,
		  uint64_t gen)
{
	int err = store_pin_derived(s, id, SYMINDEX_PIN, in->what, gen);

	if (err && err != -ESTALE)
		pr_warn("symsvc: cannot pin the index of %s: %s", id, strerror(-err));
}

/*
 * What a build is expected to take of the budget: twice its input files
 * and 8 MiB, at most the build's bound (which the symbolizer is given,
 * sym_open_opts.max_bytes), so small builds do not wait behind the bound
 * of large ones.
 */
static uint64_t build_estimate(const struct symsvc_inputs *in,
			       const struct symsvc_build_limits *bl)
{
	uint64_t est = 2 * (in->main.size + (in->has_dbg ? in->dbg.size : 0)) + (8 << 20);

	if (!bl || !bl->bytes)
		return 0;
	return est < bl->bytes ? est : bl->bytes;
}

/* Build from the stored files; never a search of this machine's
 * /usr/lib/debug.  The build's share of the budget is taken first. */
static struct sym_index *build(struct store *s, const struct symsvc_inputs *in,
			       const struct symsvc_build_limits *bl, int *err)
{
	struct sym_open_opts o = { .sz = sizeof(o), .no_debug_search = true,
				   .max_bytes = bl ? bl->bytes : 0 };
	char main_path[4096], dbg_path[4096];
	struct sym_index *idx;
	uint64_t take = build_estimate(in, bl);
	bool took = bl && bl->budget && take;

	*err = store_blob_path(s, in->main.sha256, main_path, sizeof(main_path));
	if (!*err && in->has_dbg) {
		*err = store_blob_path(s, in->dbg.sha256, dbg_path, sizeof(dbg_path));
		o.debug_file = dbg_path;
	}
	if (!*err && took && ember_mem_budget_take(bl->budget, take))
		*err = -EAGAIN; /* other work holds the memory: ask again */
	if (*err)
		return NULL;
	idx = sym_index_open(main_path, &o, err);
	if (took)
		ember_mem_budget_give(bl->budget, take);
	if (!idx && *err == -ENOENT) { /* recorded, so the files must be there */
		pr_warn("symsvc: a stored file of %s is missing", in->main.build_id);
		*err = -EIO;
	}
	return idx;
}

static int blob_write(void *arg, const void *data, size_t len)
{
	return store_blob_write(arg, data, len);
}

static int produce_index(void *arg, struct store_blob *b)
{
	return sym_index_save(arg, blob_write, b);
}

/* A saved index that does not load (damaged, another version) is dropped,
 * to be made again. */
static void drop_damaged(struct store *s, const char *id, const char *what, int why,
			 const char *reason)
{
	int err;

	pr_warn("symsvc: saved index %s of %s: %s%s%s; rebuilding it", what, id,
		sym_strerror(why), reason[0] ? ": " : "", reason);
	err = store_drop_derived(s, id, what);
	if (err && err != -ENOENT) /* saving the new one replaces the record */
		pr_warn("symsvc: cannot drop the saved index %s of %s: %s", what, id,
			strerror(-err));
}

struct sym_index *symsvc_saved_open(struct store *s, const char *id,
				const struct symsvc_inputs *in,
				const struct symsvc_build_limits *bl,
				enum symsvc_origin *origin, int *err)
{
	char why[192];
	bool damaged;
	struct sym_index *idx = load_saved(s, id, in->what, 0, why, sizeof(why), err,
					   &damaged),
			 *saved;

	*origin = SYMSVC_LOADED;
	if (idx)
		return idx;
	if (damaged)
		drop_damaged(s, id, in->what, *err, why);
	else if (*err != -ENOENT)
		return NULL; /* the store cannot say whether one is saved, or the
				file could not be read now: it stays */
	idx = build(s, in, bl, err);
	if (!idx)
		return NULL;
	*err = store_put_derived(s, id, in->what, produce_index, idx);
	saved = *err ? NULL
		     : load_saved(s, id, in->what, SYM_LOAD_VERIFY, why, sizeof(why), err,
				  &damaged);
	if (!saved) {
		pr_warn("symsvc: cannot save the index of %s: %s; serving it from memory",
			id, sym_strerror(*err));
		*origin = SYMSVC_BUILT_UNSAVED;
		*err = 0;
		return idx;
	}
	sym_index_free(idx);
	*origin = SYMSVC_BUILT;
	return saved;
}
