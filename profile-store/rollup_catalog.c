/*
 * rollup_catalog.c - the rollups a store keeps (docs/profile-store.md,
 * "Rollups"): s->rollups, beside the blocks of full resolution and never
 * in their list, so every reader of s->blocks (queries, scans, merges,
 * re-resolution, the log's replay) sees full resolution only.
 *
 * A compaction pass, after the merges, gives each closed partition that
 * holds exactly one block (merged, or alone) a rollup per step of
 * pstore_opts.rollup_steps_ns that divides its length, built from that
 * block (rollup.c).  A rollup is current when its sources are exactly
 * that block; one that is not (the partition was merged again: a late
 * profile, symbols that arrived) is replaced by one built from the block,
 * in the same critical section, so a query sees one rollup a partition
 * and step.  A partition whose block is past the retention of full
 * resolution gets no new rollup: what its rollups sum is kept until
 * rollup_retention_ns, and a block left alone later (a profile older than
 * the retention) never replaces them.  Rollups past rollup_retention_ns
 * are dropped whole, like blocks.
 */
#include "pstore_block.h"
#include "pstore_catalog.h"
#include "pstore_compact.h"
#include "pstore_head.h"
#include "pstore_index.h"

void pstore_rollups_remove(struct pstore *s, size_t i)
{
	struct pstore_block *r = s->rollups.v[i];

	memmove(s->rollups.v + i, s->rollups.v + i + 1,
		(s->rollups.n - i - 1) * sizeof(*s->rollups.v));
	s->rollups.n--;
	r->doomed = !s->index; /* shared: another replica may read it */
	pstore_cache_drop(&s->cache, r);
	pstore_block_unref(r);
	atomic_fetch_add(&s->rollup_drops, 1);
}

/* A rollup and a partition: the same start and length. */
static bool same_partition(const struct pstore_block *a, const struct pstore_block *b)
{
	return a->meta.partition == b->meta.partition &&
	       a->meta.partition_ns == b->meta.partition_ns;
}

bool pstore_rollup_current(const struct pstore_block *r, const struct pstore_block *b,
			   int64_t step)
{
	return !r->corrupt && r->meta.rollup_step == step && same_partition(r, b) &&
	       r->meta.sources.n == 1 && !strcmp(r->meta.sources.v[0], b->name);
}

/* The steps of the store's tiers that divide b's partition (bit i: tier i). */
static unsigned tiers_of(const struct pstore *s, const struct pstore_block *b)
{
	unsigned t = 0;

	for (int i = 0; i < PSTORE_ROLLUP_TIERS; i++) {
		int64_t step = s->opts.rollup_steps_ns[i];

		if (step > 0 && b->meta.partition_ns % step == 0 &&
		    pstore_rollup_bucket(b->meta.partition, step) == b->meta.partition)
			t |= 1u << i;
	}
	return t;
}

/* The tiers block b (the only one of its partition) lacks a current
 * rollup of (under s->mu). */
static unsigned missing(const struct pstore *s, const struct pstore_block *b)
{
	unsigned t = tiers_of(s, b);

	for (size_t i = 0; i < s->rollups.n; i++)
		for (int k = 0; k < PSTORE_ROLLUP_TIERS; k++)
			if ((t & 1u << k) && pstore_rollup_current(s->rollups.v[i], b, s->opts.rollup_steps_ns[k]))
				t &= ~(1u << k);
	return t;
}

/* Whether blocks v[i] is the only block of its partition (under s->mu). */
static bool alone(const struct pstore *s, size_t i)
{
	for (size_t k = 0; k < s->blocks.n; k++)
		if (k != i && same_partition(s->blocks.v[k], s->blocks.v[i]))
			return false;
	return true;
}

/* A block due for rollups: its partition closed and held by it alone, not
 * past the retention, a tier without a current rollup (under s->mu). */
static bool due(const struct pstore *s, size_t i, int64_t now, unsigned *tiers)
{
	const struct pstore_block *b = s->blocks.v[i];
	int64_t lo, hi;

	if (b->corrupt || now < b->meta.partition + b->meta.partition_ns + s->opts.head_max_age_ns)
		return false;
	pstore_block_span(s, b, &lo, &hi);
	if (hi < now - __atomic_load_n(&s->opts.retention_ns, __ATOMIC_RELAXED) || !alone(s, i))
		return false;
	*tiers = missing(s, b);
	return *tiers != 0;
}

static bool tried(const struct pstore_blocks *done, const struct pstore_block *b)
{
	for (size_t i = 0; i < done->n; i++)
		if (done->v[i] == b)
			return true;
	return false;
}

/* The first block due for rollups and not in done (referenced), or NULL. */
static struct pstore_block *pick(struct pstore *s, const struct pstore_blocks *done,
				 unsigned *tiers)
{
	struct pstore_block *b = NULL;
	int64_t now = pstore_now(s);

	pthread_mutex_lock(&s->mu);
	for (size_t i = 0; !b && i < s->blocks.n; i++)
		if (!tried(done, s->blocks.v[i]) && due(s, i, now, tiers))
			b = pstore_block_ref(s->blocks.v[i]);
	pthread_mutex_unlock(&s->mu);
	return b;
}

/* Rollups of b's partition and step that r replaces (none: NULL r). */
static bool replaced_by(const struct pstore_block *old, const struct pstore_block *r)
{
	return old != r && same_partition(old, r) && old->meta.rollup_step == r->meta.rollup_step;
}

/* A local store: r in the list, the rollups it replaces out, at once. */
static int publish_local(struct pstore *s, struct pstore_block *r)
{
	int err;

	pthread_mutex_lock(&s->mu);
	for (size_t i = s->rollups.n; i-- > 0;)
		if (replaced_by(s->rollups.v[i], r))
			pstore_rollups_remove(s, i);
	err = EMBER_VEC_APPEND(&s->rollups, r);
	pthread_mutex_unlock(&s->mu);
	if (err)
		pstore_block_unref(r);
	return err;
}

/* A shared store: the entry "r supersedes the rollups it replaces". */
static int publish_shared(struct pstore *s, struct pstore_block *r, struct ember_diag *d)
{
	struct pstore_blocks old = { 0 };
	int err = 0;

	pthread_mutex_lock(&s->mu);
	for (size_t i = 0; !err && i < s->rollups.n; i++)
		if (replaced_by(s->rollups.v[i], r) &&
		    !(err = EMBER_VEC_APPEND(&old, s->rollups.v[i])))
			pstore_block_ref(s->rollups.v[i]);
	pthread_mutex_unlock(&s->mu);
	if (!err)
		err = pstore_index_add(s, r, old.v, old.n, d);
	pstore_block_unref(r);
	pstore_blocks_release(&old);
	return err;
}

int pstore_rollup_publish(struct pstore *s, struct pstore_block *r, struct ember_diag *d)
{
	int err = s->index ? publish_shared(s, r, d) : publish_local(s, r);

	if (!err)
		atomic_fetch_add(&s->rollups_built, 1);
	return err;
}

/* The rollups of block b's tiers, built from one staging of it. */
static int build(struct pstore *s, struct pstore_block *b, unsigned tiers, struct ember_diag *d)
{
	struct pstore_head *h = NULL;
	char *name = b->name;
	struct pstore_rollup_in in = { .partition = b->meta.partition,
				       .partition_ns = b->meta.partition_ns,
				       .sources = &name, .nsources = 1 };
	int err = pstore_merge_stage(s, &b, 1, &h, d);

	for (int k = 0; !err && k < PSTORE_ROLLUP_TIERS; k++) {
		struct pstore_block *r = NULL;

		if (!(tiers & 1u << k))
			continue;
		in.step = s->opts.rollup_steps_ns[k];
		err = pstore_rollup_write(s, h, &in, &r, d);
		if (!err && r)
			err = pstore_rollup_publish(s, r, d);
	}
	pstore_head_unref(h);
	if (!err && s->index)
		err = pstore_index_refresh(s, NULL, d);
	return err;
}

int pstore_compact_rollups(struct pstore *s)
{
	char why[256] = "";
	struct ember_diag d = ember_diag_make(why, sizeof(why));
	struct pstore_blocks done = { 0 }; /* each block once a pass */
	int err = 0;

	while (!err && !s->opts.no_rollups) {
		unsigned tiers = 0;
		struct pstore_block *b = pick(s, &done, &tiers);

		if (!b)
			break;
		err = build(s, b, tiers, &d);
		if (err || (err = EMBER_VEC_APPEND(&done, b)))
			pstore_block_unref(b);
	}
	pstore_blocks_release(&done);
	if (err)
		pr_warn("pstore: building rollups: %s", why[0] ? why : pstore_strerror(err));
	return err;
}

/* Whether rollup r of a local store is a leftover of a crash between
 * writing the rollup that replaces it and deleting it: another rollup of
 * its partition and step was built from a block the store holds, r was
 * not; or the partition has no block left and another sums more
 * profiles (the later merge). */
static bool leftover(const struct pstore *s, const struct pstore_block *r)
{
	bool has_block = false;

	for (size_t i = 0; i < s->blocks.n; i++)
		if (same_partition(s->blocks.v[i], r)) {
			has_block = true;
			if (pstore_rollup_current(r, s->blocks.v[i], r->meta.rollup_step))
				return false;
		}
	for (size_t k = 0; k < s->rollups.n; k++) {
		const struct pstore_block *o = s->rollups.v[k];

		if (o == r || o->corrupt || !replaced_by(r, o))
			continue;
		for (size_t i = 0; has_block && i < s->blocks.n; i++)
			if (pstore_rollup_current(o, s->blocks.v[i], r->meta.rollup_step))
				return true;
		if (!has_block && (o->meta.rollup_profiles > r->meta.rollup_profiles ||
				   (o->meta.rollup_profiles == r->meta.rollup_profiles &&
				    strcmp(o->name, r->name) < 0)))
			return true;
	}
	return false;
}

void pstore_rollups_tidy(struct pstore *s)
{
	for (size_t i = s->rollups.n; i-- > 0;)
		if (!s->rollups.v[i]->corrupt && leftover(s, s->rollups.v[i])) {
			pr_info("pstore: rollup '%s' was replaced by another: deleting it",
				s->rollups.v[i]->name);
			pstore_rollups_remove(s, i);
		}
}

/* Rollups past the rollup retention (referenced, into old; under s->mu). */
static int expired(struct pstore *s, int64_t cutoff, struct pstore_blocks *old)
{
	for (size_t i = 0; i < s->rollups.n; i++) {
		int64_t lo, hi;

		pstore_block_span(s, s->rollups.v[i], &lo, &hi);
		if (hi < cutoff) {
			EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(old, s->rollups.v[i]));
			pstore_block_ref(s->rollups.v[i]);
		}
	}
	return 0;
}

static void drop_local(struct pstore *s, struct pstore_block *r)
{
	for (size_t i = 0; i < s->rollups.n; i++)
		if (s->rollups.v[i] == r) {
			pstore_rollups_remove(s, i);
			return;
		}
}

int pstore_rollups_retention(struct pstore *s)
{
	struct pstore_blocks old = { 0 };
	char why[256] = "";
	struct ember_diag d = ember_diag_make(why, sizeof(why));
	int err;

	pthread_mutex_lock(&s->mu);
	err = expired(s, pstore_now(s) - __atomic_load_n(&s->opts.rollup_retention_ns, __ATOMIC_RELAXED), &old);
	for (size_t i = 0; !err && !s->index && i < old.n; i++)
		drop_local(s, old.v[i]);
	pthread_mutex_unlock(&s->mu);
	for (size_t i = 0; i < old.n; i++)
		pr_info("pstore: rollup '%s' is past the rollup retention: dropped", old.v[i]->name);
	for (size_t i = 0; !err && s->index && i < old.n; i++)
		err = pstore_index_add(s, NULL, &old.v[i], 1, &d);
	if (!err && s->index && old.n)
		err = pstore_index_refresh(s, NULL, &d);
	pstore_blocks_release(&old);
	if (err)
		pr_warn("pstore: rollup retention: %s", why[0] ? why : pstore_strerror(err));
	return err;
}
