/*
 * plan.c - the query planner (docs/profile-store.md, "Queries"): which
 * blocks and rollups of a snapshot answer which part of a query's range.
 * Per partition (a start and a length), the rollups summed from exactly
 * the partition's blocks answer, coarsest first, the parts of the range
 * aligned to their steps (1 hour, then 1 minute at its edges), and the
 * blocks only what is left: the partial minutes at the range's edges.
 * Buckets are aligned to multiples of the step since the epoch and lie
 * in one partition, and a rollup's profile is summed only when its time
 * (the time of the first profile of its bucket) lies in the part given
 * it, so every profile is summed exactly once, from a rollup or from its
 * block.  A partition whose blocks are all gone (past the retention) is
 * answered by its rollups alone, its edges rounded in to the finest step,
 * and the plan says so.
 *
 * A query's plan (less) may take profiles off: where the range covers
 * more than half a bucket of a partition's coarsest rollup at an edge,
 * and the partition is one framed block, that bucket answers less the
 * block's profiles in it outside the range (pstore_block_query_less),
 * which reads far fewer rows than summing those inside.  A framed block
 * reads only the frames of its part of the range, so its partition is
 * answered by its rollups for the whole steps and by the block only for
 * what they leave.
 *
 * Rollups that span several partitions (a UTC day's and 6 UTC hours':
 * rollup_span.c) form an outer partition holding no block: it answers
 * the whole spans the range covers when it sums exactly the blocks of the
 * partitions nested in it, and what is nested in it is planned the same
 * way for the rest (the range's edges), or for all of it when it cannot
 * answer: a day's 6-hour spans, then their partitions, coarsest first.
 */
#include "pstore_block.h"
#include "pstore_catalog.h"
#include "pstore_compact.h"
#include "pstore_query.h"

/* A block or rollup of the snapshot, by partition. */
struct ent {
	int64_t start, len;
	struct pstore_block *b;
};

EMBER_VEC_DEF(plan_ents, struct ent);

/* By partition start, the longest first (an outer partition before those
 * nested in it); blocks before rollups; rollups coarsest first. */
static int cmp_ent(const void *a, const void *b)
{
	const struct ent *x = a, *y = b;
	int64_t sx = x->b->meta.rollup_step, sy = y->b->meta.rollup_step;
	bool rx = pstore_is_rollup_name(x->b->name), ry = pstore_is_rollup_name(y->b->name);

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->len != y->len)
		return x->len > y->len ? -1 : 1;
	if (rx != ry)
		return rx ? 1 : -1;
	if (sx != sy)
		return sx > sy ? -1 : 1;
	return strcmp(x->b->name, y->b->name);
}

/* One partition of the plan: its blocks, and one rollup a step usable;
 * an outer partition: the blocks of those nested in it, and them. */
struct part {
	int64_t lo, hi;		/* the query's range within the partition */
	struct pstore_block *const *blocks;
	size_t nblocks;
	struct pstore_block *tier[PSTORE_ROLLUP_TIERS];
	size_t ntiers;
	const struct ent *inner; /* an outer partition's nested entries */
	size_t ninner;
	int64_t grid;
	bool opt_less;	/* the plan's less: for the partitions nested */
	bool less;	/* a bucket of tier 0 less the block's profiles */
	bool framed;	/* every block framed: read in part cheaply */
	struct pstore_plan_out *out;
};

static int plan_groups(const struct ent *e, size_t n, int64_t from, int64_t to, int64_t grid,
		       bool less, struct pstore_plan_out *out);

static int64_t ceil_to(int64_t t, int64_t step)
{
	int64_t b = pstore_rollup_bucket(t, step);

	return b == t ? t : b + step;
}

static int add(struct pstore_plan_out *out, struct pstore_block *b, int64_t from, int64_t to)
{
	if (from >= to)
		return 0;
	if (pstore_is_rollup_name(b->name))
		out->rollup_pieces++;
	return EMBER_VEC_APPEND(&out->pieces,
				((struct pstore_piece){ .b = b, .from = from, .to = to }));
}

static int cover(struct part *p, int64_t lo, int64_t hi, size_t t);

/* [lo, hi), inside one bucket of tier t and not all of it: that bucket
 * less the block's profiles outside [lo, hi) when it covers more than half
 * of it at tier 0 (p->less), else the finer tiers and the blocks. */
static int edge(struct part *p, int64_t lo, int64_t hi, size_t t)
{
	int64_t step = p->tier[t]->meta.rollup_step, b = pstore_rollup_bucket(lo, step);

	if (lo >= hi || !p->less || t || (hi - lo) <= step / 2)
		return cover(p, lo, hi, t + 1);
	p->out->rollup_pieces++;
	return EMBER_VEC_APPEND(&p->out->pieces,
				((struct pstore_piece){ .b = p->blocks[0], .from = lo, .to = hi,
							.whole = p->tier[t], .wfrom = b,
							.wto = b + step }));
}

/* [lo, hi) answered by tiers t.. and, for what they leave, the blocks. */
static int cover(struct part *p, int64_t lo, int64_t hi, size_t t)
{
	int64_t step, a, z;

	if (lo >= hi)
		return 0;
	if (t == p->ntiers && p->inner)
		return plan_groups(p->inner, p->ninner, lo, hi, p->grid, p->opt_less, p->out);
	if (t == p->ntiers) {
		for (size_t i = 0; i < p->nblocks; i++)
			EMBER_FORWARD_IF_ERROR(add(p->out, p->blocks[i], lo, hi));
		return 0;
	}
	step = p->tier[t]->meta.rollup_step;
	a = ceil_to(lo, step);
	z = pstore_rollup_bucket(hi, step);
	if (a >= z)
		return edge(p, lo, hi, t);
	EMBER_FORWARD_IF_ERROR(add(p->out, p->tier[t], a, z));
	EMBER_FORWARD_IF_ERROR(edge(p, lo, a, t));
	return edge(p, z, hi, t);
}

/* Whether rollup r sums every block of the partition. */
static bool sums_all(const struct pstore_block *r, struct pstore_block *const *blocks, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		bool found = false;

		for (size_t k = 0; !found && k < r->meta.sources.n; k++)
			found = !strcmp(r->meta.sources.v[k], blocks[i]->name);
		if (!found)
			return false;
	}
	return true;
}

/* Whether a rollup of step serves a grid (series totals at a step) from. */
static bool on_grid(int64_t step, int64_t grid, int64_t from)
{
	return !grid || (grid % step == 0 && pstore_rollup_bucket(from, step) == from);
}

/* The usable rollups of v[0..n) (sorted coarsest first), one a step. */
static void pick_tiers(struct part *p, struct pstore_block *const *v, size_t n, int64_t grid,
		       int64_t from)
{
	for (size_t i = 0; i < n && p->ntiers < PSTORE_ROLLUP_TIERS; i++) {
		const struct pstore_block *r = v[i];
		int64_t step = r->meta.rollup_step;

		if (r->corrupt || !sums_all(r, p->blocks, p->nblocks) ||
		    (p->nblocks && !on_grid(step, grid, from)) ||
		    (p->ntiers && p->tier[p->ntiers - 1]->meta.rollup_step == step))
			continue;
		p->tier[p->ntiers++] = v[i];
	}
}

/* The partition's rollups alone (its blocks are gone): a corrupt one
 * fails the query rather than leave its part out. */
static int rollups_only(struct part *p, struct pstore_block *const *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (v[i]->corrupt)
			return add(p->out, v[i], p->lo, p->hi);
	if (!p->ntiers)
		return 0;
	EMBER_FORWARD_IF_ERROR(cover(p, p->lo, p->hi, 0));
	if (!p->out->rollup_only_step ||
	    p->tier[p->ntiers - 1]->meta.rollup_step < p->out->rollup_only_step)
		p->out->rollup_only_step = p->tier[p->ntiers - 1]->meta.rollup_step;
	return 0;
}

/* Whether tiers t.. leave part of [lo, hi) to the blocks. */
static bool leaves_blocks(const struct part *p, int64_t lo, int64_t hi, size_t t)
{
	int64_t step, a, z;

	if (lo >= hi)
		return false;
	if (t == p->ntiers)
		return true;
	step = p->tier[t]->meta.rollup_step;
	a = ceil_to(lo, step);
	z = pstore_rollup_bucket(hi, step);
	if (a >= z)
		return leaves_blocks(p, lo, hi, t + 1);
	return leaves_blocks(p, lo, a, t + 1) || leaves_blocks(p, z, hi, t + 1);
}

/* Partition p (its blocks and the usable rollups of v[0..nr) picked)
 * planned.  Where its blocks are read anyway (the range's edges in it
 * are not on its finest step) and are not framed (each of their streams
 * read whole), they answer its whole part: a rollup's dictionary beside
 * the block's costs more than the profiles it saves (docs/profile-store.md,
 * "Queries"). */
static int plan_blocks(struct part *p, struct pstore_block *const *v, size_t nr, int64_t from,
		       int64_t to)
{
	if (!p->nblocks)
		return rollups_only(p, v, nr);
	if (p->ntiers && (p->framed || !leaves_blocks(p, p->lo, p->hi, 0)))
		return cover(p, p->lo, p->hi, 0);
	for (size_t i = 0; i < p->nblocks; i++) /* as before rollups */
		EMBER_FORWARD_IF_ERROR(add(p->out, p->blocks[i], from, to));
	return 0;
}

/* Entries e[0..n) of one partition: blocks, then rollups. */
static int plan_part(const struct ent *e, size_t n, int64_t from, int64_t to, int64_t grid,
		     bool less, struct pstore_plan_out *out)
{
	struct pstore_block **v = malloc((n + 1) * sizeof(*v));
	size_t nb = 0;
	struct part p = { .lo = from > e->start ? from : e->start,
			  .hi = to < e->start + e->len ? to : e->start + e->len, .grid = grid,
			  .out = out };
	bool corrupt = false;
	int err;

	if (!v)
		return -ENOMEM;
	p.framed = less;
	for (size_t i = 0; i < n; i++) {
		bool block = !pstore_is_rollup_name(e[i].b->name);

		v[i] = e[i].b;
		nb += block;
		corrupt |= block && e[i].b->corrupt;
		p.framed &= !block || pstore_meta_framed(&e[i].b->meta);
	}
	p.blocks = v;
	p.nblocks = nb;
	p.less = p.framed && nb == 1 && !corrupt;
	if (!corrupt) /* a corrupt block's partition may be a guess: no rollups */
		pick_tiers(&p, v + nb, n - nb, grid, from);
	err = plan_blocks(&p, v + nb, corrupt ? 0 : n - nb, from, to);
	free(v);
	return err;
}

static int collect(const struct pstore_snapshot *snap, bool use_rollups, struct plan_ents *v)
{
	for (size_t i = 0; i < snap->blocks.n; i++) {
		struct pstore_block *b = snap->blocks.v[i];

		EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(
			v, ((struct ent){ b->meta.partition, b->meta.partition_ns, b })));
	}
	for (size_t i = 0; use_rollups && i < snap->rollups.n; i++) {
		struct pstore_block *b = snap->rollups.v[i];

		EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(
			v, ((struct ent){ b->meta.partition, b->meta.partition_ns, b })));
	}
	return 0;
}

/* Outer partition e[0..n) (rollups alone) over the entries nested in it,
 * inner[0..ninner): its rollups for the whole steps of the range they
 * answer, the nested partitions for the rest. */
static int plan_outer(const struct ent *e, size_t n, const struct ent *inner, size_t ninner,
		      int64_t from, int64_t to, int64_t grid, bool less,
		      struct pstore_plan_out *out)
{
	struct pstore_block **v = malloc((n + ninner + 1) * sizeof(*v));
	struct part p = { .lo = from > e->start ? from : e->start,
			  .hi = to < e->start + e->len ? to : e->start + e->len, .inner = inner,
			  .ninner = ninner, .grid = grid, .opt_less = less, .out = out };
	bool usable = true;
	int err;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < ninner; i++) {
		bool block = !pstore_is_rollup_name(inner[i].b->name);

		if (block)
			v[p.nblocks++] = inner[i].b;
		usable &= !(block && inner[i].b->corrupt) &&
			  inner[i].start + inner[i].len <= e->start + e->len;
	}
	for (size_t i = 0; i < n; i++)
		v[p.nblocks + i] = e[i].b;
	p.blocks = v;
	if (usable)
		pick_tiers(&p, v + p.nblocks, n, grid, from);
	err = p.ntiers ? cover(&p, p.lo, p.hi, 0)
		       : plan_groups(inner, ninner, from, to, grid, less, out);
	free(v);
	return err;
}

/* The end of the partition starting at e[i] (same start and length). */
static size_t group_end(const struct ent *e, size_t n, size_t i)
{
	size_t j = i + 1;

	while (j < n && e[j].start == e[i].start && e[j].len == e[i].len)
		j++;
	return j;
}

/* The end of the entries nested in partition e[i..j) (j: none), which
 * is outer when it holds rollups alone and others start inside it. */
static size_t nested_end(const struct ent *e, size_t n, size_t i, size_t j)
{
	size_t k = j;

	for (size_t x = i; x < j; x++)
		if (!pstore_is_rollup_name(e[x].b->name))
			return j;
	while (k < n && e[k].start < e[i].start + e[i].len)
		k++;
	return k;
}

static int plan_groups(const struct ent *e, size_t n, int64_t from, int64_t to, int64_t grid,
		       bool less, struct pstore_plan_out *out)
{
	int err = 0;

	for (size_t i = 0, j, k; !err && i < n; i = k) {
		j = group_end(e, n, i);
		k = nested_end(e, n, i, j);
		err = k > j ? plan_outer(e + i, j - i, e + j, k - j, from, to, grid, less, out)
			    : plan_part(e + i, j - i, from, to, grid, less, out);
	}
	return err;
}

int pstore_plan_range(const struct pstore_snapshot *snap, int64_t from, int64_t to, int64_t grid,
		      bool use_rollups, bool less, struct pstore_plan_out *out)
{
	struct plan_ents v = { 0 };
	int err;

	memset(out, 0, sizeof(*out));
	err = collect(snap, use_rollups, &v);
	if (!err)
		ember_qsort(v.v, v.n, sizeof(*v.v), cmp_ent);
	if (!err)
		err = plan_groups(v.v, v.n, from, to, grid, less && use_rollups, out);
	EMBER_VEC_FREE(&v);
	if (err)
		pstore_plan_release(out);
	return err;
}

void pstore_plan_release(struct pstore_plan_out *out)
{
	EMBER_VEC_FREE(&out->pieces);
}
