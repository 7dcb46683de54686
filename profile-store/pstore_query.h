/*
 * pstore_query.h - reading the store: selectors, snapshots, queries and
 * scans.
 *
 *   selector.c       the selector parser; matching a label set
 *   selector_regex.cc  its regexes: RE2 behind C (pstore_regex.h)
 *   match.c          a selector over a label index -> series bitmap
 *   query.c          pstore_query over heads and blocks
 *   query_workers.c  a plan's pieces summed by several threads; what a
 *                    query holds taken from its request's account
 *   block_query.c    one block's share of a query
 *   plan.c           which blocks and rollups answer which part of a range
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

/* A consistent view for queries: references to blocks, rollups and
 * heads. */
struct pstore_snapshot {
	EMBER_VEC(struct pstore_block *) blocks;
	EMBER_VEC(struct pstore_block *) rollups;
	EMBER_VEC(struct pstore_head *) heads;
};

int pstore_snapshot_take(struct pstore *s, int64_t from, int64_t to, struct pstore_snapshot *out);
void pstore_snapshot_release(struct pstore_snapshot *snap);

/* ---- queries (query.c, block_query.c) ------------------------------------- */

/* What the threads of one query share (query_workers.c): the request's
 * check and account are used under mu (they are one thread's); halt is
 * set when one of them fails, so the others stop at their next poll. */
struct pstore_qshare {
	pthread_mutex_t mu;
	atomic_int halt;
};

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
	uint64_t read;	  /* profiles of blocks and rollups summed */
	uint64_t rows_bytes; /* bytes of their row streams read */
	/* a piece with whole (pstore_block_query_less) left stacks at 0 in r:
	 * dropped once every piece is summed */
	bool zeros;
	struct pstore_qshare *share; /* NULL: the query runs on one thread */
	bool halted;	  /* stopped because another thread of the query failed */
	uint64_t held;	  /* bytes of a source's sums taken: the most held at once */
	uint64_t charged; /* bytes of r (and stacks) taken */
	/* the stacks of r by key, while sources are summed into it (released
	 * with pstore_qctx_release_stacks) */
	struct pmodel_stack_index stacks;
};

/* What a query holds, taken from its request's account (under the
 * share's lock; said in q->d): -E2BIG past the request's share, -EAGAIN
 * when the server's budget has none free (the account's error, which the
 * HTTP layer maps to 413 and 503).  pstore_qctx_hold: n bytes of sums
 * over a source's nodes, freed before the next source's (only the most
 * held at once is taken); pstore_qctx_charge: what q->r grew to since. */
int pstore_qctx_hold(struct pstore_qctx *q, uint64_t n);
int pstore_qctx_charge(struct pstore_qctx *q);
/* A source's sums self[] (per node of src) added into q->r, the request's
 * check polled every few thousand nodes (a source of many distinct
 * stacks takes long to import), then q->r charged.  keys: src's stack
 * keys under the cache's seed (a cached block's), whose stacks q->r holds
 * already are added by key (q->stacks); NULL: every stack imported. */
int pstore_qctx_add(struct pstore_qctx *q, const struct pmodel_dict *src,
		    const struct pmodel_stack_key *keys, const int64_t *self);
void pstore_qctx_release_stacks(struct pstore_qctx *q);


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
/* The first profile of [p0, p1) (in time order) at t or later (p1:
 * none); whether any lies in [from, to). */
size_t pstore_first_at(const struct pstore_prof *p, size_t p0, size_t p1, int64_t t);
bool pstore_any_in_range(const struct pstore_prof *p, size_t p0, size_t p1, int64_t from,
			 int64_t to);
/* Sum a block's matching rows into q->r. */
int pstore_block_query(struct pstore_block *b, struct pstore_qctx *q);
struct pstore_piece;
/* Piece p (p->whole set) into q->r: its rollup's bucket less its block's
 * profiles there outside [q->from, q->to) (their rows taken off), the
 * profiles inside noted; where a stack is left at 0 (rows with
 * attributes), q->zeros set. */
int pstore_block_query_less(const struct pstore_piece *p, struct pstore_qctx *q);

/* ---- the planner (plan.c) ------------------------------------------------------- */

/* A part [from, to) of a query's range and the block or rollup that
 * answers it; or, whole set, rollup whole's bucket [wfrom, wto) less the
 * profiles of block b there outside [from, to) (the range covers most of
 * the bucket: fewer profiles taken off than summed). */
struct pstore_piece {
	struct pstore_block *b; /* borrowed from the snapshot */
	int64_t from, to;
	struct pstore_block *whole;
	int64_t wfrom, wto;
};
EMBER_VEC_DEF(pstore_pieces, struct pstore_piece);

struct pstore_plan_out {
	struct pstore_pieces pieces;
	uint64_t rollup_pieces;	/* pieces answered by a rollup */
	/* the finest step of the rollups that answered a partition whose
	 * blocks are all gone (past the retention; 0: none): that part of the
	 * range is rounded in to it */
	int64_t rollup_only_step;
};

/*
 * Which blocks and rollups of snap answer [from, to): per partition, the
 * coarsest rollup for the step-aligned middle, finer rollups for what is
 * left, and the blocks for the partial steps at the edges, so that each
 * profile is summed once.  A rollup answers only when the partition's
 * blocks in snap are exactly among those it was summed from (a block it
 * lacks: full resolution); a partition with no block left is answered by
 * its rollups alone, rounded in.  grid > 0 (series totals at a step): only
 * rollups whose step divides grid, and none unless from is a multiple of
 * their step, so that a rollup's profile lies in the point its profiles
 * would.  use_rollups false: every block over [from, to), as before
 * rollups.  less (a query's sums, not a scan's): a partition of one
 * framed block (version 3) whose range covers more than half a bucket of
 * its coarsest rollup at an edge gets that bucket less the block's
 * profiles outside the range (a piece with whole), and its blocks answer
 * only what the rollups leave (their frames there alone are read).  Heads
 * are not planned: their profiles are in no block.
 */
int pstore_plan_range(const struct pstore_snapshot *snap, int64_t from, int64_t to, int64_t grid,
		      bool use_rollups, bool less, struct pstore_plan_out *out);
void pstore_plan_release(struct pstore_plan_out *out);

/* The pieces of a plan summed into q->r in their order, by several
 * threads when the store's options and spare threads allow: the caller
 * starts them (pstore_workers_start), may sum more into q->r (the heads,
 * which come first), then sums the first part itself and merges the
 * others' results in order (pstore_workers_finish, always called once
 * start gave *out, with the error of what the caller did in between:
 * it returns the first error in the pieces' order; a failure stops
 * every thread).  The answer is the one summing the pieces one after
 * another gives. */
struct pstore_workers;
int pstore_workers_start(struct pstore *s, const struct pstore_piece *p, size_t n,
			 struct pstore_qctx *q, struct pstore_workers **out);
int pstore_workers_finish(struct pstore_workers *w, struct pstore_qctx *q, int err);

/* Scans of the profiles of a selection without their rows (scan.c):
 * discovery, series totals, coverage.  series() is called once per
 * source and selected series that has a profile in the time range;
 * profile(), when set, for each such profile. */
struct pstore_scan {
	struct pstore_qctx q;
	int (*series)(void *ctx, const struct pstore_seriestab *t, uint32_t s, int32_t col);
	/* count: the profiles p stands for (a rollup's profile: those it
	 * sums; else 1) */
	int (*profile)(void *ctx, const struct pstore_seriestab *t, const struct pstore_prof *p,
		       uint64_t count, int32_t col, const int64_t *totals,
		       const struct pstore_cov *cov);
	void *ctx;
	/* rollups answer what they can (pstore_plan_range with this grid);
	 * false: blocks only */
	bool rollups;
	int64_t grid;
	int64_t rollup_only_step; /* out: the plan's */
};
int pstore_scan_run(const struct pstore_snapshot *snap, struct pstore_scan *sc);
/* Parse sel, take a snapshot over its range and resolve its type (NULL
 * allowed when !need_type) into sc->q; release with pstore_scan_end. */
int pstore_scan_begin(struct pstore *s, const struct pstore_selection *sel, bool need_type,
		  struct pstore_scan *sc, struct pstore_snapshot *snap, struct ember_diag *d);
void pstore_scan_end(struct pstore_scan *sc, struct pstore_snapshot *snap);

#endif /* EMBER_PSTORE_QUERY_H */
