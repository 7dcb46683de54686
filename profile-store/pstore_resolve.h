/*
 * pstore_resolve.h - the resolver (pstore.h's pstore_resolve_fn) applied
 * to a dictionary: at query time (query.c) and when blocks are rewritten
 * (merge.c, coverage.c).
 *
 *   resolve.c  resolver callbacks applied to a dictionary
 *
 * Invariants: only the locations without lines that lie in a mapping are
 * handed over, one mapping at a time; once a resolver ran, the
 * dictionary's location set is no longer used for interning (a location's
 * key changed).
 */
#ifndef EMBER_PSTORE_RESOLVE_H
#define EMBER_PSTORE_RESOLVE_H

#include "pstore_internal.h"

/* ---- resolution (resolve.c) --------------------------------- */

/* Why a build ID's frames stayed unresolved (the first reason given). */
struct pstore_reason {
	char *build_id, *reason;
};

/* The reasons of a resolution, one per build ID, found through a keyed
 * set (a dictionary of many build IDs costs linear time). */
struct pstore_reasons {
	struct pstore_reason *v;
	size_t n, alloc;
	struct ember_hset set; /* of v, by build ID */
};

/* An empty list: 0 or a negative errno. */
int pstore_reasons_init(struct pstore_reasons *r);
void pstore_reasons_free(struct pstore_reasons *r);
/* The reason given for build_id, or NULL. */
const char *pstore_reasons_find(const struct pstore_reasons *r, const char *build_id);

/* Apply a resolver to d's unresolved locations (those without lines, in
 * a mapping), one call per mapping; *changed says whether any got lines.
 * reasons (may be NULL) collects the failures' reasons per build ID. */
int pstore_resolve_dict(struct pmodel_dict *d, pstore_resolve_fn fn, void *ctx,
		    struct pstore_reasons *reasons, bool *changed, struct ember_diag *diag);

#endif /* EMBER_PSTORE_RESOLVE_H */
