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
EMBER_VEC_DEF(pstore_reasons, struct pstore_reason);
void pstore_reasons_free(struct pstore_reasons *r);

/* Apply a resolver to d's unresolved locations (those without lines, in
 * a mapping), one call per mapping; *changed says whether any got lines.
 * reasons (may be NULL) collects the failures' reasons per build ID. */
int pstore_resolve_dict(struct pmodel_dict *d, pstore_resolve_fn fn, void *ctx,
		    struct pstore_reasons *reasons, bool *changed, struct ember_diag *diag);

#endif /* EMBER_PSTORE_RESOLVE_H */
