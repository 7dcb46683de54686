/*
 * symcache.h - loaded symbol indexes, by build ID, under a memory budget.
 *
 * The symbolization API asks here for the index of a build ID.  The first
 * request builds it from the best files the store holds (the executable
 * for its program headers, the best debug file for DWARF); requests that
 * arrive meanwhile wait for that one build.  Indexes live in an LRU whose
 * total size (sym_index_get_stats().bytes) stays under the budget: an
 * index not in use is evicted when a new one needs room, and an index
 * larger than the whole budget is refused (-E2BIG).  Indexes in use are
 * never freed under their users, so the total can exceed the budget by
 * the indexes of requests in flight.
 *
 * Thread-safe.  A reference keeps its index alive until symcache_put().
 */
#ifndef EMBER_SYMCACHE_H
#define EMBER_SYMCACHE_H

#include "store.h"
#include "symbolizer.h"

struct symcache;
struct symcache_entry;

int symcache_new(struct store *s, uint64_t budget_bytes, struct symcache **out);
void symcache_free(struct symcache *c);

/*
 * A reference to the index of build_id in *out: its saved index when the
 * store has one for the current best files, else one built from them and
 * saved (api/symindex_store.h); an index made before better files were
 * uploaded is replaced (while the store cannot say whether better files
 * came, a loaded index is kept).  Returns 0; -ENOENT when the store (and
 * upstream) has no file for it; -EHOSTUNREACH when upstream failed; -E2BIG
 * when its index exceeds the budget; the symbolizer's error
 * (-SYM_ERR_NO_SYMBOLS, ...); or another negative errno: the store (or
 * its files) could not be read or written.  Failures are not cached: the
 * next request tries again (a better upload may have come).
 */
int symcache_get(struct symcache *c, const char *build_id, struct symcache_entry **out);
const struct sym_index *symcache_index(const struct symcache_entry *e);
void symcache_put(struct symcache *c, struct symcache_entry *e);

struct symcache_stats {
	uint64_t bytes, budget;
	size_t loaded;		/* indexes in the LRU */
	size_t builds;		/* indexes built from DWARF and symbol tables */
	size_t evictions, refused;
	size_t disk_loads;	/* indexes mapped from their saved file */
	size_t pin_loads;	/* of which through a pin, the store still opening */
	size_t unsaved;		/* builds that could not be saved (kept in memory) */
	size_t rebuilds;	/* indexes superseded by better uploaded files */
};
void symcache_get_stats(struct symcache *c, struct symcache_stats *st);

/*
 * Ask fn (the upstream debuginfod servers) for the files of a build ID the
 * store does not know, before answering -ENOENT.  fn stores what it gets
 * and returns 0, -ENOENT (nobody has it), -ENOSYS (no upstream),
 * -EHOSTUNREACH or -ECANCELED (upstream failed or is stopped:
 * symcache_get then returns -EHOSTUNREACH), or another negative errno:
 * what arrived could not be stored (symcache_get returns it).
 * Set before the first symcache_get.
 */
typedef int (*symcache_fetch_fn)(void *arg, const char *build_id);
void symcache_set_fetch(struct symcache *c, symcache_fetch_fn fn, void *arg);

#endif /* EMBER_SYMCACHE_H */
