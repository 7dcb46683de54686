/*
 * pstore_query.h - reading the store: selectors, snapshots, queries and
 * scans.
 *
 *   selector.c       the selector parser; matching a label set
 *   selector_regex.cc  its regexes: RE2 behind C (pstore_regex.h)
 *   match.c          a selector over a label index -> series bitmap
 *   query.c          pstore_query over heads and blocks
 *   block_query.c    one block's share of a query
 *   scan.c           selections without rows: discovery, totals, coverage;
 *                    the request's check (pstore_qctx_check)
 *   label_discovery.c, series_totals.c, coverage_query.c  those three calls
 *
 * Snapshots are taken in pstore.c.  Invariants: a query reads a snapshot
 * (references to blocks and heads taken under s->mu) and does not hold
 * s->mu while it sums, only a head's lock for reading while it reads that
 * head; time ranges are [from, to).
 */
#ifndef EMBER_PSTORE_QUERY_H
#define EMBER_PSTORE_QUERY_H

#include "pstore_series.h"

/* ---- selectors (selector.c, match.c) -------------------------------------- */

enum pstore_match_op { PS_EQ, PS_NE, PS_RE, PS_NRE };

struct pstore_matcher {
	char *name, *value;
	enum pstore_match_op op;
	struct pstore_regex *re; /* PS_RE / PS_NRE (pstore_regex.h) */
};

struct pstore_selector {
	EMBER_VEC(struct pstore_matcher) m;
	char *type; /* "TYPE{...}": a profile type before the braces, or NULL */
};

bool pstore_matcher_value(const struct pstore_matcher *m, const char *value);
/* Series of t matching sel, as a bitmap of nseries bytes (0/1), with ix
 * t's label index.  0 or -ENOMEM. */
int pstore_select_series(const struct pstore_selector *sel, const struct pstore_seriestab *t,
		     const struct pstore_lindex *ix, uint8_t *bitmap);
/* Parse sel->selector (NULL: match all) into *out, its regexes' memory
 * taken from sel->request->account first: -PSTORE_ERR_LIMIT past the
 * account's share, -EAGAIN when the budget has none free. */
int pstore_selection_parse(const struct pstore_selection *sel, struct pstore_selector **out,
		       struct ember_diag *d);

/* A consistent view for queries: references to blocks and heads. */
struct pstore_snapshot {
	EMBER_VEC(struct pstore_block *) blocks;
	EMBER_VEC(struct pstore_head *) heads;
};

int pstore_snapshot_take(struct pstore *s, int64_t from, int64_t to, struct pstore_snapshot *out);
void pstore_snapshot_release(struct pstore_snapshot *snap);

/* ---- queries (query.c, block_query.c) ------------------------------------- */

struct pstore_qctx {
	const struct pstore_selector *sel;
	const char *type; /* resolved full ID; NULL: any (discovery) */
	int64_t from, to; /* [from, to) */
	const struct pstore_link_filter *links; /* NULL or empty: every row */
	struct pmodel_result *r;
	struct pstore_cache *cache;
	struct ember_diag *d;
	const struct pstore_request *req; /* the selection's; NULL: no limits */
	int stopped;	  /* the check's first error, kept */
	unsigned polls;
};

/* The request's check now (0, or its error, kept: every later call
 * returns it), and the same once every few hundred calls, for loops over
 * profiles and series.  Said in q->d when it stops the read. */
int pstore_qctx_check(struct pstore_qctx *q);
int pstore_qctx_poll(struct pstore_qctx *q);

/* Series of t selected by q (and having q->type when set): col[s] is the
 * column of q->type in series s, -1 when s is not selected; *any says
 * whether one is.  col holds t->series.n entries. */
int pstore_plan(const struct pstore_qctx *q, const struct pstore_seriestab *t,
		const struct pstore_lindex *ix, int32_t *col, bool *any);
/* The distinct type IDs of a snapshot, sorted. */
int pstore_snapshot_types(const struct pstore_snapshot *snap, struct pstore_strs *out);
void pstore_strs_free(struct pstore_strs *v);
/* Resolve sel's type (or the selector's "TYPE{...}") against snap. */
int pstore_query_type(const struct pstore_selection *sel, const struct pstore_selector *parsed,
		  const struct pstore_snapshot *snap, char **out, struct ember_diag *d);
/* Whether any profile of [p0, p1) (in time order) lies in [from, to). */
bool pstore_any_in_range(const struct pstore_prof *p, size_t p0, size_t p1, int64_t from,
			 int64_t to);
/* Sum a block's matching rows into q->r. */
int pstore_block_query(struct pstore_block *b, struct pstore_qctx *q);

/* Scans of the profiles of a selection without their rows (scan.c):
 * discovery, series totals, coverage.  series() is called once per
 * source and selected series that has a profile in the time range;
 * profile(), when set, for each such profile. */
struct pstore_scan {
	struct pstore_qctx q;
	int (*series)(void *ctx, const struct pstore_seriestab *t, uint32_t s, int32_t col);
	int (*profile)(void *ctx, const struct pstore_seriestab *t, const struct pstore_prof *p,
		       int32_t col, const int64_t *totals, const struct pstore_cov *cov);
	void *ctx;
};
int pstore_scan_run(const struct pstore_snapshot *snap, struct pstore_scan *sc);
/* Parse sel, take a snapshot over its range and resolve its type (NULL
 * allowed when !need_type) into sc->q; release with pstore_scan_end. */
int pstore_scan_begin(struct pstore *s, const struct pstore_selection *sel, bool need_type,
		  struct pstore_scan *sc, struct pstore_snapshot *snap, struct ember_diag *d);
void pstore_scan_end(struct pstore_scan *sc, struct pstore_snapshot *snap);

#endif /* EMBER_PSTORE_QUERY_H */
