/*
 * flatten.c - turning nested scopes and line rows into one flat, sorted
 * segment table, so that a lookup is a single binary search.
 *
 * Per unit (so the temporary intervals never hold more than one unit):
 *   scopes (function and inlined ranges, nested)  --sweep-->  innermost
 *   line rows (disjoint after clipping)            --------->  row
 *   merge both boundary sets --> segments, in blocks that each end with a
 *   gap marker (a unit's code may sit in several address ranges)
 * Then sym_flatten_finish() puts the blocks of all units in address order
 * in place and joins them into seg_start[] + segs[].
 *
 * The frame chain of an address is then segs[i].node followed through
 * nodes[].parent.  See docs/symbol-index.md.
 */
#include "sym_internal.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

void sym_ivals_release(struct sym_ivals *iv)
{
	if (!iv)
		return;
	sym_budget_give(iv->budget, iv->alloc * sizeof(*iv->v));
	free(iv->v);
	iv->v = NULL;
	iv->n = iv->alloc = 0;
}

int sym_ivals_reserve(struct sym_ivals *iv, size_t need)
{
	size_t was = iv->alloc, n = was ? was : 16;
	int err;

	if (need <= was)
		return 0;
	while (n < need)
		n = n > SIZE_MAX / 2 ? need : 2 * n;
	if (n > SIZE_MAX / sizeof(*iv->v))
		return -E2BIG;
	err = sym_budget_charge(iv->budget, (n - was) * sizeof(*iv->v), "intervals");
	if (!err)
		err = ember_vec_reserve((void **)&iv->v, &iv->alloc, n, sizeof(*iv->v));
	if (err) /* (ember_vec_reserve grows as above: alloc is n now) */
		sym_budget_give(iv->budget, (n - was) * sizeof(*iv->v));
	return err;
}

/* Outer scopes before the scopes they contain: by start, depth, end
 * (longest first) and node. */
static inline bool scope_before(const struct sym_ival *a, const struct sym_ival *b)
{
	if (a->lo != b->lo)
		return a->lo < b->lo;
	if (a->b != b->b)
		return a->b < b->b;
	if (a->hi != b->hi)
		return a->hi > b->hi;
	return a->a < b->a;
}

/* End of the sorted run of v[0..n) that starts at i. */
static size_t run_end(const struct sym_ival *v, size_t i, size_t n)
{
	while (i + 1 < n && !scope_before(&v[i + 1], &v[i]))
		i++;
	return i + 1;
}

static void merge_runs(const struct sym_ival *a, size_t na,
		       const struct sym_ival *b, size_t nb, struct sym_ival *out)
{
	size_t i = 0, j = 0;

	while (i < na && j < nb)
		*out++ = scope_before(&b[j], &a[i]) ? b[j++] : a[i++];
	memcpy(out, a + i, (na - i) * sizeof(*out));
	memcpy(out + (na - i), b + j, (nb - j) * sizeof(*out));
}

/*
 * Sort the unit's scopes.  The DIE walk emits them in long sorted runs (a
 * function and what it inlines; functions mostly in address order), so a
 * natural merge sort does a pass or two where qsort did n log n calls.
 * tmp must hold as many; the sorted scopes end up in whichever of the two
 * buffers the last pass wrote, and sort_scopes swaps them into scopes.
 */
static int sort_scopes(struct sym_ivals *scopes, struct sym_ivals *tmp)
{
	size_t n = scopes->n, runs = 2;
	int err;

	if (n < 2 || run_end(scopes->v, 0, n) == n)
		return 0;
	if ((err = sym_ivals_reserve(tmp, n)))
		return err;
	while (runs > 1) {
		struct sym_ivals t = *scopes;

		runs = 0;
		for (size_t i = 0, m, e; i < n; i = e, runs++) {
			m = run_end(scopes->v, i, n);
			e = m < n ? run_end(scopes->v, m, n) : n;
			merge_runs(scopes->v + i, m - i, scopes->v + m, e - m,
				   tmp->v + i);
		}
		*scopes = *tmp;
		*tmp = t;
		scopes->n = n;
		tmp->n = 0;
	}
	return 0;
}

static int line_cmp(const void *pa, const void *pb)
{
	const struct sym_ival *a = pa, *b = pb;

	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	return a->hi < b->hi ? -1 : a->hi > b->hi;
}

/* Append [lo, hi) -> a to out, merging with an equal, adjacent tail. */
static int emit(struct sym_ivals *out, uint64_t lo, uint64_t hi, uint32_t a)
{
	struct sym_ival *t = out->n ? &out->v[out->n - 1] : NULL;

	if (lo >= hi)
		return 0;
	if (t && t->hi == lo && t->a == a) {
		t->hi = hi;
		return 0;
	}
	return sym_ivals_push(out, (struct sym_ival){ lo, hi, a, 0, 0, 0 });
}

/* Disjoint innermost-scope intervals from sorted, nested scopes. */
static int sweep_scopes(const struct sym_ivals *in, struct sym_ivals *out)
{
	struct sym_ivals stack = { 0 };
	uint64_t cur = 0;
	int err = 0;

	for (size_t i = 0; i <= in->n && !err; i++) {
		const struct sym_ival *iv = i < in->n ? &in->v[i] : NULL;

		while (stack.n && (!iv || stack.v[stack.n - 1].hi <= iv->lo)) {
			struct sym_ival *top = &stack.v[--stack.n];

			if (cur < top->lo)
				cur = top->lo;
			err = emit(out, cur, top->hi, top->a);
			if (top->hi > cur)
				cur = top->hi;
		}
		if (!iv || err)
			break;
		if (stack.n && cur < iv->lo)
			err = emit(out, cur, iv->lo, stack.v[stack.n - 1].a);
		if (iv->lo > cur)
			cur = iv->lo;
		if (!err)
			err = sym_ivals_push(&stack, *iv);
	}
	sym_ivals_release(&stack);
	return err;
}

struct run {
	uint64_t lo, hi;
	size_t first, n;
};

static int run_cmp(const void *pa, const void *pb)
{
	const struct run *a = pa, *b = pb;

	return a->lo < b->lo ? -1 : a->lo > b->lo;
}

/*
 * A unit's rows come as sequences, each sorted (one per function section:
 * .text, .text.unlikely, .text.startup).  When the sequences do not
 * overlap, putting whole runs in order is a copy, not a sort.  Returns
 * false when a row-by-row sort is needed.
 */
static bool order_runs(struct sym_ivals *lines, struct sym_ivals *spare)
{
	struct run *runs = NULL;
	size_t nruns = 0, alloc = 0, w = 0;
	bool ok = true;

	for (size_t i = 0; i < lines->n && ok; i++) {
		const struct sym_ival *v = &lines->v[i];

		if (nruns && v->lo >= runs[nruns - 1].hi) {
			runs[nruns - 1].hi = v->hi;
			runs[nruns - 1].n++;
			continue;
		}
		struct run r = { v->lo, v->hi, i, 1 };
		ok = EMBER_VEC_PUSH(runs, nruns, alloc, r) == 0;
	}
	if (ok && nruns > 1) {
		qsort(runs, nruns, sizeof(*runs), run_cmp);
		for (size_t k = 1; k < nruns && ok; k++)
			ok = runs[k].lo >= runs[k - 1].hi;
		ok = ok && sym_ivals_reserve(spare, lines->n) == 0;
		for (size_t k = 0; ok && k < nruns; k++) {
			memcpy(spare->v + w, lines->v + runs[k].first,
			       runs[k].n * sizeof(*spare->v));
			w += runs[k].n;
		}
		if (ok) {
			struct sym_ivals t = *lines;

			*lines = *spare;
			lines->n = w;
			*spare = t;
			spare->n = 0;
		}
	}
	free(runs);
	return ok;
}

/* Clip overlapping line rows so that each address has one row. */
static void clip_lines(struct sym_ivals *lines, struct sym_ivals *spare)
{
	size_t w = 0;

	if (!order_runs(lines, spare))
		qsort(lines->v, lines->n, sizeof(*lines->v), line_cmp);
	for (size_t i = 0; i < lines->n; i++) {
		struct sym_ival *cur = &lines->v[i];

		if (i + 1 < lines->n && lines->v[i + 1].lo < cur->hi)
			cur->hi = lines->v[i + 1].lo;
		if (cur->hi > cur->lo)
			lines->v[w++] = *cur;
	}
	lines->n = w;
}

static const struct sym_seg seg_gap = { SYM_NONE, 0, 0, 0, 0 };

static bool seg_equal(const struct sym_seg *a, const struct sym_seg *b)
{
	return a->node == b->node && a->file == b->file && a->line == b->line &&
	       a->col == b->col && a->disc == b->disc;
}

static bool seg_is_gap(const struct sym_seg *s)
{
	return seg_equal(s, &seg_gap);
}

/* Segments the budget is charged for at a time (1.5 MB). */
#define SEGS_CHARGE ((size_t)1 << 16)

static int segs_charge(struct sym_build *b)
{
	int err = sym_budget_charge(b->budget,
				    SEGS_CHARGE * (sizeof(uint64_t) + sizeof(struct sym_seg)),
				    "segments");

	if (!err)
		b->segs_charged += SEGS_CHARGE;
	return err;
}

static inline int seg_push(struct sym_build *b, uint64_t start,
			   struct sym_seg s)
{
	struct sym_index *idx = b->idx;
	size_t n = idx->nsegs;
	int err;

	if (n > b->block_first && seg_equal(&idx->segs[n - 1], &s))
		return 0;
	if (n + 1 > b->segs_charged && (err = segs_charge(b)))
		return err;
	if (((n + 1) * sizeof(uint64_t) > idx->seg_start_map &&
	     sym_big_grow((void **)&idx->seg_start, &idx->seg_start_map,
			  (n + 1) * sizeof(uint64_t))) ||
	    ((n + 1) * sizeof(struct sym_seg) > idx->segs_map &&
	     sym_big_grow((void **)&idx->segs, &idx->segs_map,
			  (n + 1) * sizeof(struct sym_seg))))
		return -ENOMEM;
	idx->seg_start[n] = start;
	idx->segs[n] = s;
	idx->nsegs = n + 1;
	return 0;
}

/* A gap ends a block: a run of covered segments plus its end marker. */
static int block_close(struct sym_build *b, uint64_t end)
{
	struct sym_block blk;
	int err;

	if (b->idx->nsegs == b->block_first)
		return 0;
	err = seg_push(b, end, seg_gap);
	if (err)
		return err;
	blk = (struct sym_block){ b->idx->seg_start[b->block_first],
				  b->block_first, b->idx->nsegs - b->block_first };
	if (b->nblocks == b->blocks_alloc &&
	    (err = sym_budget_charge(b->budget, (b->blocks_alloc ? b->blocks_alloc : 16) *
					    sizeof(blk), "segment blocks")))
		return err;
	err = EMBER_VEC_PUSH(b->blocks, b->nblocks, b->blocks_alloc, blk);
	b->block_first = b->idx->nsegs;
	return err;
}

/* Next boundary after pos among the current elements of a and b. */
static uint64_t next_boundary(const struct sym_ival *a, const struct sym_ival *b,
			      uint64_t pos)
{
	uint64_t next = UINT64_MAX;
	const struct sym_ival *v[2] = { a, b };

	for (int k = 0; k < 2; k++) {
		if (!v[k])
			continue;
		uint64_t edge = v[k]->lo > pos ? v[k]->lo : v[k]->hi;
		if (edge < next)
			next = edge;
	}
	return next;
}

static uint16_t clamp16(uint32_t v)
{
	return v > UINT16_MAX ? UINT16_MAX : (uint16_t)v;
}

/* Merge one unit's disjoint scope and line intervals into segments. */
static int merge(struct sym_build *b, const struct sym_ivals *sc,
		 const struct sym_ivals *ln)
{
	size_t i = 0, j = 0;
	uint64_t pos = 0;
	int err = 0;

	while ((i < sc->n || j < ln->n) && !err) {
		const struct sym_ival *a = i < sc->n ? &sc->v[i] : NULL;
		const struct sym_ival *l = j < ln->n ? &ln->v[j] : NULL;
		bool in_a, in_l;
		uint64_t next;

		if ((!a || a->lo > pos) && (!l || l->lo > pos)) {
			err = block_close(b, pos);
			pos = a && (!l || a->lo < l->lo) ? a->lo : l->lo;
			continue;
		}
		in_a = a && a->lo <= pos;
		in_l = l && l->lo <= pos;
		next = next_boundary(a, l, pos);
		struct sym_seg s = { in_a ? a->a : SYM_NONE, in_l ? l->a : 0,
				     in_l ? l->b : 0, in_l ? clamp16(l->c) : 0,
				     in_l ? clamp16(l->d) : 0 };
		err = seg_push(b, pos, s);
		pos = next;
		if (a && a->hi <= pos)
			i++;
		if (l && l->hi <= pos)
			j++;
	}
	return err ? err : block_close(b, pos);
}

int sym_flatten_unit(struct sym_build *b)
{
	int err = sort_scopes(&b->scopes, &b->inner);

	b->inner.n = 0;
	if (!err)
		err = sweep_scopes(&b->scopes, &b->inner);
	if (!err) {
		clip_lines(&b->lines, &b->spare);
		err = merge(b, &b->inner, &b->lines);
	}
	b->scopes.n = b->lines.n = b->inner.n = 0;
	return err;
}

static int block_cmp(const void *pa, const void *pb)
{
	const struct sym_block *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->first < b->first ? -1 : a->first > b->first;
}

/*
 * Append segment k of the unit-ordered arrays to the address-ordered
 * output.  A block's first segment replaces the end marker of the block
 * before it when they meet; segments that would go backwards (units whose
 * ranges overlap, which is corrupt DWARF) are dropped.  Returns false for
 * a segment that went backwards.
 */
static bool seg_emit(uint64_t *os, struct sym_seg *og, size_t *on,
		     uint64_t start, const struct sym_seg *s)
{
	size_t n = *on;

	if (n && start < os[n - 1])
		return false;
	if (n && start == os[n - 1]) {
		if (!seg_is_gap(&og[n - 1]))
			return false;
		n--;
	}
	if (n && seg_equal(&og[n - 1], s))
		return true;
	os[n] = start;
	og[n] = *s;
	*on = n + 1;
	return true;
}

/* Move segments [from, from + n) to position to, in both arrays. */
static void seg_move(struct sym_index *idx, size_t to, size_t from, size_t n)
{
	if (to == from || n == 0)
		return;
	memmove(idx->seg_start + to, idx->seg_start + from, n * sizeof(uint64_t));
	memmove(idx->segs + to, idx->segs + from, n * sizeof(struct sym_seg));
}

struct block_lists {
	struct sym_block *main, *side;
	size_t nmain, nside, side_segs;
	size_t *sizes;		/* segments of each block, in address order */
};

/* The blocks that already follow each other in address order (the main
 * chain), and the rest, sorted. */
static int split_blocks(const struct sym_build *b, struct block_lists *l)
{
	l->main = malloc((b->nblocks + 1) * sizeof(*l->main));
	l->side = malloc((b->nblocks + 1) * sizeof(*l->side));
	l->sizes = malloc((b->nblocks + 1) * sizeof(*l->sizes));
	if (!l->main || !l->side || !l->sizes)
		return -ENOMEM;
	for (size_t i = 0; i < b->nblocks; i++) {
		const struct sym_block *blk = &b->blocks[i];

		if (!l->nmain || blk->start > l->main[l->nmain - 1].start) {
			l->main[l->nmain++] = *blk;
		} else {
			l->side[l->nside++] = *blk;
			l->side_segs += blk->count;
		}
	}
	qsort(l->side, l->nside, sizeof(*l->side), block_cmp);
	return 0;
}

/*
 * Put the blocks in address order without a second copy of the table:
 * the side blocks (a unit's .text.unlikely part, say) go to a small
 * buffer, and the two lists are merged from the back straight into
 * place.  A main block only ever moves up: every block before it in the
 * table (a side block broke the chain with a smaller start) stays before
 * it, so the slots it moves into are free or already written.
 */
static int order_blocks(struct sym_index *idx, struct block_lists *l)
{
	uint64_t *ts = malloc((l->side_segs + 1) * sizeof(*ts));
	struct sym_seg *tg = malloc((l->side_segs + 1) * sizeof(*tg));
	size_t w = 0, pos;

	if (!ts || !tg) {
		free(ts);
		free(tg);
		return -ENOMEM;
	}
	for (size_t i = 0; i < l->nside; i++) {
		struct sym_block *s = &l->side[i];

		memcpy(ts + w, idx->seg_start + s->first, s->count * sizeof(*ts));
		memcpy(tg + w, idx->segs + s->first, s->count * sizeof(*tg));
		s->first = w;
		w += s->count;
	}
	pos = idx->nsegs;
	for (size_t i = l->nmain, j = l->nside, k = l->nmain + l->nside; k > 0;) {
		if (j == 0 || (i > 0 && l->main[i - 1].start > l->side[j - 1].start)) {
			pos -= l->main[i - 1].count;
			assert(pos >= l->main[i - 1].first);
			seg_move(idx, pos, l->main[i - 1].first, l->main[i - 1].count);
			l->sizes[--k] = l->main[--i].count;
		} else {
			const struct sym_block *s = &l->side[--j];

			pos -= s->count;
			memcpy(idx->seg_start + pos, ts + s->first, s->count * sizeof(*ts));
			memcpy(idx->segs + pos, tg + s->first, s->count * sizeof(*tg));
			l->sizes[--k] = s->count;
		}
	}
	free(ts);
	free(tg);
	return 0;
}

/*
 * Join the blocks, in address order now, into one table; the output never
 * overtakes the input.  Within a block starts increase and neighbours
 * differ, so a block whose first segment does not go backwards is moved
 * whole; only blocks that overlap the one before (corrupt DWARF) are
 * joined segment by segment.
 */
static void join_blocks(struct sym_index *idx, const size_t *sizes,
			size_t nblocks)
{
	size_t on = 0, k = 0;

	for (size_t i = 0; i < nblocks; k += sizes[i++]) {
		size_t n = sizes[i];

		if (n && seg_emit(idx->seg_start, idx->segs, &on,
				  idx->seg_start[k], &idx->segs[k])) {
			seg_move(idx, on, k + 1, n - 1);
			on += n - 1;
			continue;
		}
		for (size_t j = 1; j < n; j++)
			seg_emit(idx->seg_start, idx->segs, &on,
				 idx->seg_start[k + j], &idx->segs[k + j]);
	}
	idx->nsegs = on;
}

/* The bytes split_blocks and order_blocks take (at most). */
static uint64_t finish_bytes(const struct sym_build *b)
{
	return (uint64_t)(b->nblocks + 1) * (2 * sizeof(struct sym_block) + sizeof(size_t)) +
	       (uint64_t)(b->idx->nsegs + 1) * (sizeof(uint64_t) + sizeof(struct sym_seg));
}

int sym_flatten_finish(struct sym_build *b)
{
	struct sym_index *idx = b->idx;
	struct block_lists l = { 0 };
	uint64_t scratch = finish_bytes(b);
	int err = sym_budget_charge(b->budget, scratch, "ordering the segments");

	if (err)
		return err;
	/* Every segment belongs to a block: the table is their concatenation. */
	err = split_blocks(b, &l);
	if (!err && l.nside)
		err = order_blocks(idx, &l);
	else if (!err)
		for (size_t i = 0; i < l.nmain; i++)
			l.sizes[i] = l.main[i].count;
	if (!err)
		join_blocks(idx, l.sizes, l.nmain + l.nside);
	free(l.main);
	free(l.side);
	free(l.sizes);
	sym_budget_give(b->budget, scratch);
	return err;
}

void sym_build_release(struct sym_build *b)
{
	sym_ivals_release(&b->scopes);
	sym_ivals_release(&b->lines);
	sym_ivals_release(&b->inner);
	sym_ivals_release(&b->spare);
	free(b->blocks);
	b->blocks = NULL;
}
