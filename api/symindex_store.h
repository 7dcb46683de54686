/*
 * symindex_store.h - symbol indexes kept in the store (private to api/).
 *
 * A build ID's index is made from the best executable (program headers,
 * symbol tables) and the best debug file (DWARF) the store holds.  It is
 * saved as a derived artifact named after the index format version and
 * both inputs' sha256 (docs/symbol-index-format.md), so a restart maps it
 * instead of parsing DWARF, and better debug info arriving later names a
 * new index, built from it.
 */
#ifndef EMBER_SYMINDEX_STORE_H
#define EMBER_SYMINDEX_STORE_H

#include "store.h"
#include "symbolizer.h"

struct symindex_inputs {
	struct store_artifact main, dbg; /* main: the file given to the
					    symbolizer; dbg: its DWARF */
	bool has_dbg;			 /* dbg is another file than main */
	char what[STORE_NAME_MAX];	 /* the derived artifact's name */
};

/* The inputs of build_id's index: 0, -ENOENT when the store has no file
 * with symbols for it, or the store's error. */
int symindex_find_inputs(struct store *s, const char *build_id,
			 struct symindex_inputs *in);

/* How symindex_open() got its index. */
enum symindex_origin {
	SYMINDEX_LOADED,	/* mapped from the saved index */
	SYMINDEX_BUILT,		/* built, saved and mapped back */
	SYMINDEX_BUILT_UNSAVED,	/* built; saving failed (logged), kept in memory */
};

/*
 * The index of build_id for inputs in: the saved one when it exists and
 * loads, else built from the inputs and saved.  A saved index that does
 * not load (damaged, another version) is rebuilt and replaced; one that
 * cannot be saved is served from memory (SYMINDEX_BUILT_UNSAVED).
 * Returns NULL with the symbolizer's error or a negative errno in *err
 * (the store's, when it cannot say whether an index is saved, or a
 * stored file is missing: -EIO).
 */
struct sym_index *symindex_open(struct store *s, const char *build_id,
				const struct symindex_inputs *in,
				enum symindex_origin *origin, int *err);

/*
 * While the store is still opening: the index its pin names for build_id
 * (store_find_pin), mapped, with the name of what it was made from in
 * what.  NULL with a negative errno in *err (-ENOENT: no pin).  The
 * caller checks what against symindex_find_inputs() once the store is
 * open.
 */
struct sym_index *symindex_open_pinned(struct store *s, const char *build_id,
				       char what[STORE_NAME_MAX], int *err);

/* Pin the saved index of in for build_id; gen is the store generation
 * read before in was found.  Failures are logged only: a pin is a hint. */
void symindex_pin(struct store *s, const char *build_id,
		  const struct symindex_inputs *in, uint64_t gen);

#endif /* EMBER_SYMINDEX_STORE_H */
