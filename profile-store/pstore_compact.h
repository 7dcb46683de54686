/*
 * pstore_compact.h - how heads become blocks and blocks change:
 * rotation, flushes, merges, re-resolution, retention, and the thread
 * that runs them.
 *
 *   compact.c     rotation, heads -> blocks, retention
 *   merge.c       a partition's blocks -> one (resolver applied)
 *   reresolve.c   blocks rewritten once their frames' symbols arrive
 *   rollup.c      a partition's profiles summed per series and step
 *   rollup_catalog.c  the rollups a store keeps: built when due, replaced,
 *                 dropped past their retention
 *   rollup_span.c  the rollups of 6 UTC hours and of a UTC day, summed
 *                 from their partitions' rollups
 *   coverage.c    coverage recounted after a compaction's resolver
 *   background.c  the compaction thread
 *
 * Invariants: one compaction runs at a time (s->compact_mu); a head
 * leaves the store only in the critical section where its blocks come in,
 * so a query never misses a profile or counts it twice.
 */
#ifndef EMBER_PSTORE_COMPACT_H
#define EMBER_PSTORE_COMPACT_H

#include "pstore_internal.h"

struct pstore_block_src;
struct pstore_reasons;

/* ---- compaction (compact.c, background.c) -------------------------------- */

int pstore_compact_head(struct pstore *s, struct pstore_head *h);
int pstore_compact_sealed(struct pstore *s);
/* Rotate when due (rotate), flush sealed heads, merge, retention: the
 * background pass and pstore_compact. */
int pstore_compact_pass(struct pstore *s, bool rotate);
/* Seal the active head when due (age, size) or forced. */
int pstore_rotate(struct pstore *s, bool force);
/* Encode src, put it through the storage and open it back (compact.c). */
int pstore_encode_put(struct pstore *s, const struct pstore_block_src *src,
		      struct pstore_block **out, struct ember_diag *d);
int pstore_compact_merge(struct pstore *s);
/* The blocks of v[0..n) (s->blocks, under s->mu) due for a merge, the
 * partition of the first such block in the list: their indexes into out,
 * ascending (none: out->n == 0).  A closed partition (now past its end
 * plus head_age_ns) merges its blocks when it has two, an open one those
 * of a size tier when it has four.  n log n (merge.c). */
int pstore_merge_pick(struct pstore_block *const *v, size_t n, int64_t now, int64_t head_age_ns,
		      struct pstore_u32s *out);
/* The profiles and rows of blocks[0..n) read back into a new head
 * (*out, caller unrefs): their dictionaries interned into one, their
 * series into one table, links kept (merge.c). */
int pstore_merge_stage(struct pstore *s, struct pstore_block *const *blocks, size_t n,
		       struct pstore_head **out, struct ember_diag *d);
/* Rewrite blocks[0..n) as one, the resolver applied (merge.c); with
 * only_if_resolved, nothing is written unless it resolved a frame. */
int pstore_merge_blocks(struct pstore *s, struct pstore_block **blocks, size_t n,
			bool only_if_resolved, struct ember_diag *d);
/* ---- rollups (rollup.c) --------------------------------------------------- */

/* The start of the step-aligned bucket of time t (floor to a multiple of
 * step since the epoch). */
int64_t pstore_rollup_bucket(int64_t t, int64_t step);
/* What a rollup is built of: its step (dividing partition_ns, the
 * partition a multiple of it), partition, and the names of its source
 * blocks (borrowed). */
struct pstore_rollup_in {
	int64_t step, partition, partition_ns;
	char *const *sources;
	size_t nsources;
	/* what each staged profile (h->profs order) sums, when h staged
	 * rollups (a day's from its hours'); NULL: one profile, its time */
	const struct pstore_rollup_prof *counts;
};
/* The rollup of the staged profiles of h (pstore_merge_stage), put and
 * opened: *out a new reference, NULL when h has no profile.  -EINVAL for
 * a step that does not divide the partition. */
int pstore_rollup_write(struct pstore *s, const struct pstore_head *h,
			const struct pstore_rollup_in *in, struct pstore_block **out,
			struct ember_diag *d);
/* Rollups of each closed partition held by one block, for the steps it
 * lacks a current one of; the rollups they replace dropped
 * (rollup_catalog.c: a compaction pass). */
int pstore_compact_rollups(struct pstore *s);
/* Whether rollup r of step was built from exactly block b (its
 * partition's only block). */
bool pstore_rollup_current(const struct pstore_block *r, const struct pstore_block *b,
			   int64_t step);
/* Rollup r (a new reference, taken) listed, the rollups of its partition
 * and step it replaces dropped: at once (a local store) or through the
 * block index (a shared one); counted as built. */
int pstore_rollup_publish(struct pstore *s, struct pstore_block *r, struct ember_diag *d);
/* Span rollups (rollup_span.c): each past span of 6 UTC hours (00, 06,
 * 12, 18) and each past UTC day whose blocks all have a current rollup of
 * their partition's coarsest step, summed from those into one profile a
 * series and span, unless a current one exists. */
int pstore_compact_spans(struct pstore *s);
/* Drop the rollups past opts.rollup_retention_ns. */
int pstore_rollups_retention(struct pstore *s);
/* The same from blocks[0..n) of one partition. */
int pstore_rollup_build(struct pstore *s, struct pstore_block *const *blocks, size_t n,
			int64_t step, struct pstore_block **out, struct ember_diag *d);

/* Blocks naming a build ID whose symbols arrived, rewritten resolved
 * (reresolve.c). */
int pstore_compact_reresolve(struct pstore *s);
void pstore_arrivals_free(struct pstore *s);
int pstore_compact_retention(struct pstore *s);
/* Recount coverage of a staged head after a resolver (coverage.c). */
int pstore_coverage_recount(struct pstore_head *h, const struct pstore_reasons *reasons);
int pstore_background_start(struct pstore *s);
void pstore_background_stop(struct pstore *s);
void pstore_background_kick(struct pstore *s);

#endif /* EMBER_PSTORE_COMPACT_H */
