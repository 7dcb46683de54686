/*
 * rollup_span.c - the rollups of spans of several partitions
 * (docs/profile-store.md, "Rollups"): a UTC day's and each 6 UTC hours'
 * (00, 06, 12, 18), the profiles of every partition of a past span summed
 * per series into one profile, so a query over a day or a week reads a
 * few dictionaries instead of one an hour.  One code path for every span:
 * a span's rollup is built from the span's partition rollups of the
 * coarsest step (staged with their counts, so it reports the profiles and
 * time span of full resolution), once every block of the span has a
 * current one; it names as its sources the blocks those summed, which is
 * what the planner (plan.c) checks: a span's rollup answers only while
 * its span's blocks are exactly its sources.  A later merge of one of
 * them (a late profile) makes it stale until the next pass builds its
 * successor, which replaces it like any rollup of the same partition and
 * step.  A span whose start is past the retention of full resolution
 * gets none (some of its blocks may be gone, and it would then sum less
 * than its partitions' rollups); nor does a span no longer than the
 * store's partitions.
 */
#include "pstore_block.h"
#include "pstore_catalog.h"
#include "pstore_compact.h"
#include "pstore_head.h"
#include "pstore_index.h"

#define HOUR_NS ((int64_t)3600 * 1000000000)

/* The spans, each built from the partitions' rollups (not from one
 * another): 6 hours, so that a range of 24 hours not on a day reads at
 * most 3 of them and the hours at its edges, not 24 hours; and a day. */
static const int64_t SPANS_NS[] = { 6 * HOUR_NS, 24 * HOUR_NS };

/* A span: the partition rollups it is built from (referenced, by name)
 * and the blocks they summed (borrowed names, by name). */
EMBER_VEC_DEF(span_counts, struct pstore_rollup_prof);

struct span {
	int64_t start, len;
	struct pstore_blocks parts;
	struct pstore_strs sources;
};

static void span_release(struct span *d)
{
	pstore_blocks_release(&d->parts);
	EMBER_VEC_FREE(&d->sources);
	memset(d, 0, sizeof(*d));
}

/* The coarsest step of the store's tiers that divides b's partition (0:
 * none). */
static int64_t coarsest_step(const struct pstore *s, const struct pstore_block *b)
{
	int64_t best = 0;

	for (int k = 0; k < PSTORE_ROLLUP_TIERS; k++) {
		int64_t step = s->opts.rollup_steps_ns[k];

		if (step > best && b->meta.partition_ns % step == 0 &&
		    pstore_rollup_bucket(b->meta.partition, step) == b->meta.partition)
			best = step;
	}
	return best;
}

/* The current coarsest rollup of block b, or NULL (under s->mu). */
static struct pstore_block *part_rollup(const struct pstore *s, const struct pstore_block *b)
{
	int64_t step = coarsest_step(s, b);

	for (size_t i = 0; step && i < s->rollups.n; i++)
		if (pstore_rollup_current(s->rollups.v[i], b, step))
			return s->rollups.v[i];
	return NULL;
}

static bool in_span(const struct pstore_block *b, const struct span *d)
{
	return b->meta.partition >= d->start && b->meta.partition < d->start + d->len;
}

/* Block b of span d added, with its partition's rollup; false when
 * the span cannot be built yet (under s->mu). */
static bool add_part(const struct pstore *s, const struct pstore_block *b, struct span *d)
{
	struct pstore_block *r = part_rollup(s, b);

	if (b->corrupt || !r || b->meta.partition + b->meta.partition_ns > d->start + d->len ||
	    EMBER_VEC_APPEND(&d->sources, b->name))
		return false;
	if (EMBER_VEC_APPEND(&d->parts, r))
		return false;
	pstore_block_ref(r);
	return true;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_block(const void *a, const void *b)
{
	return strcmp((*(struct pstore_block *const *)a)->name,
		      (*(struct pstore_block *const *)b)->name);
}

/* Whether rollup r is span d's, summed from exactly d->sources (sorted). */
static bool span_current(const struct pstore_block *r, const struct span *d)
{
	if (r->corrupt || r->meta.partition != d->start || r->meta.partition_ns != d->len ||
	    r->meta.rollup_step != d->len || r->meta.sources.n != d->sources.n)
		return false;
	for (size_t i = 0; i < d->sources.n; i++)
		if (strcmp(r->meta.sources.v[i], d->sources.v[i]))
			return false;
	return true;
}

/* Span d gathered: true when every block of it has a current
 * partition rollup and no current rollup of d exists (under s->mu). */
static bool span_due(const struct pstore *s, struct span *d)
{
	for (size_t i = 0; i < s->blocks.n; i++)
		if (in_span(s->blocks.v[i], d) && !add_part(s, s->blocks.v[i], d))
			return false;
	if (!d->parts.n)
		return false;
	ember_qsort(d->sources.v, d->sources.n, sizeof(*d->sources.v), cmp_str);
	ember_qsort(d->parts.v, d->parts.n, sizeof(*d->parts.v), cmp_block);
	for (size_t i = 1; i < d->parts.n; i++)
		if (d->parts.v[i] == d->parts.v[i - 1])
			return false; /* two blocks share a partition: not merged yet */
	for (size_t i = 0; i < s->rollups.n; i++)
		if (span_current(s->rollups.v[i], d))
			return false;
	return true;
}

/* Whether the span of len starting at t may get a rollup: past (by a
 * head age), within the retention of full resolution, longer than b's
 * partition. */
static bool span_closed(const struct pstore *s, const struct pstore_block *b, int64_t t,
		       int64_t len, int64_t now)
{
	int64_t kept = __atomic_load_n(&s->opts.retention_ns, __ATOMIC_RELAXED);

	return now >= t + len + s->opts.head_max_age_ns && t >= now - kept &&
	       b->meta.partition_ns < len && len % b->meta.partition_ns == 0;
}

/* The first span of len due after those of done (its start appended to
 * done). */
static bool span_pick(struct pstore *s, int64_t len, struct pstore_u64s *done, struct span *d)
{
	int64_t now = pstore_now(s);
	bool found = false;

	pthread_mutex_lock(&s->mu);
	for (size_t i = 0; !found && i < s->blocks.n; i++) {
		int64_t t = pstore_rollup_bucket(s->blocks.v[i]->meta.partition, len);
		bool seen = false;

		for (size_t k = 0; k < done->n; k++)
			seen |= done->v[k] == (uint64_t)t;
		if (seen || !span_closed(s, s->blocks.v[i], t, len, now) ||
		    EMBER_VEC_APPEND(done, (uint64_t)t))
			continue;
		d->start = t;
		d->len = len;
		found = span_due(s, d);
		if (!found)
			span_release(d);
	}
	pthread_mutex_unlock(&s->mu);
	return found;
}

/* What each profile staged from d->parts sums, in the order
 * pstore_merge_stage stages them (rollups in order, series in a rollup's
 * order, profiles in order): counts->n equals the staged profiles. */
static int staged_counts(const struct span *d, struct span_counts *counts,
			 struct ember_diag *dg)
{
	int err = 0;

	for (size_t k = 0; !err && k < d->parts.n; k++) {
		struct pstore_block *r = d->parts.v[k];
		struct pstore_bdata *bd = NULL;

		err = pstore_cache_profiles(NULL, r, &bd, dg); /* compaction's: not kept */
		if (!err && bd->rollup.n != bd->profs.n)
			err = EMBER_FAIL(dg, -EINVAL, "store: '%s' is not a rollup", r->name);
		/* the series' profiles in order are the block's in order */
		for (size_t i = 0; !err && i < bd->series_prof.v[r->series.series.n]; i++)
			err = EMBER_VEC_APPEND(counts, bd->rollup.v[i]);
		pstore_bdata_unref(bd);
	}
	return err;
}

/* Span d's rollup built and published. */
static int span_build(struct pstore *s, const struct span *d, struct ember_diag *dg)
{
	struct span_counts counts = { 0 };
	struct pstore_head *h = NULL;
	struct pstore_block *r = NULL;
	struct pstore_rollup_in in = { .step = d->len, .partition = d->start,
				       .partition_ns = d->len, .sources = d->sources.v,
				       .nsources = d->sources.n };
	int err = staged_counts(d, &counts, dg);

	if (!err)
		err = pstore_merge_stage(s, d->parts.v, d->parts.n, &h, dg);
	if (!err && counts.n != h->profs.n)
		err = EMBER_FAIL(dg, -EINVAL, "store: span %lld: %zu counts for %u staged profiles",
				 (long long)d->start, counts.n, (unsigned)h->profs.n);
	in.counts = counts.v;
	if (!err)
		err = pstore_rollup_write(s, h, &in, &r, dg);
	if (!err && r)
		err = pstore_rollup_publish(s, r, dg);
	if (!err && r && s->index)
		err = pstore_index_refresh(s, NULL, dg);
	pstore_head_unref(h);
	EMBER_VEC_FREE(&counts);
	return err;
}

/* The rollups of every span of len due, built. */
static int compact_span(struct pstore *s, int64_t len, struct ember_diag *dg)
{
	struct pstore_u64s done = { 0 };
	struct span d = { 0 };
	int err = 0;

	while (!err && span_pick(s, len, &done, &d)) {
		err = span_build(s, &d, dg);
		span_release(&d);
	}
	EMBER_VEC_FREE(&done);
	return err;
}

int pstore_compact_spans(struct pstore *s)
{
	char why[256] = "";
	struct ember_diag dg = ember_diag_make(why, sizeof(why));
	size_t n = s->opts.no_rollups ? 0 : sizeof(SPANS_NS) / sizeof(*SPANS_NS);
	int err = 0;

	for (size_t k = 0; !err && k < n; k++)
		err = compact_span(s, SPANS_NS[k], &dg);
	if (err)
		pr_warn("pstore: building span rollups: %s", why[0] ? why : pstore_strerror(err));
	return err;
}
