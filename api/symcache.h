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
 * A reference to the index of build_id in *out.  Returns 0; -ENOENT when
 * the store has no file for it; -E2BIG when its index exceeds the budget;
 * or the symbolizer's error (-SYM_ERR_NO_SYMBOLS, ...).  Failures are not
 * cached: the next request tries again (a better upload may have come).
 */
int symcache_get(struct symcache *c, const char *build_id, struct symcache_entry **out);
const struct sym_index *symcache_index(const struct symcache_entry *e);
void symcache_put(struct symcache *c, struct symcache_entry *e);

struct symcache_stats {
	uint64_t bytes, budget;
	size_t loaded, builds, evictions, refused;
};
void symcache_get_stats(struct symcache *c, struct symcache_stats *st);

#endif /* EMBER_SYMCACHE_H */
