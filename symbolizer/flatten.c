/*
 * flatten.c - turning nested scopes and line rows into one flat, sorted
 * segment table, so that a lookup is a single binary search.
 *
 *   scopes (function and inlined ranges, nested)  --sweep-->  innermost
 *   line rows (disjoint after clipping)            --------->  row
 *   merge both boundary sets --> seg_start[] + segs[] (node, file/line/col)
 *
 * The frame chain of an address is then segs[i].node followed through
 * nodes[].parent.  See docs/symbol-index.md.
 */
#include "sym_internal.h"

#include <stdlib.h>

int sym_ivals_push(struct sym_ivals *iv, struct sym_ival x)
{
	return SYM_VEC_PUSH(iv->v, iv->n, iv->alloc, x);
}

void sym_ivals_release(struct sym_ivals *iv)
{
	if (!iv)
		return;
	free(iv->v);
	iv->v = NULL;
	iv->n = iv->alloc = 0;
}

/* Outer scopes before the scopes they contain. */
static int scope_cmp(const void *pa, const void *pb)
{
	const struct sym_ival *a = pa, *b = pb;

	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	if (a->b != b->b)
		return a->b < b->b ? -1 : 1;
	if (a->hi != b->hi)
		return a->hi > b->hi ? -1 : 1;
	return a->a < b->a ? -1 : a->a > b->a;
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

static bool ivals_sorted(const struct sym_ivals *iv,
			 int (*cmp)(const void *, const void *))
{
	for (size_t i = 1; i < iv->n; i++)
		if (cmp(&iv->v[i - 1], &iv->v[i]) > 0)
			return false;
	return true;
}

/* Clip overlapping line rows so that each address has one row. */
static void clip_lines(struct sym_ivals *lines)
{
	size_t w = 0;

	/* Units usually come in address order with sorted rows: skip the sort. */
	if (!ivals_sorted(lines, line_cmp))
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

struct seg_builder {
	struct sym_index *idx;
	size_t alloc_start, alloc_segs;
};

static int seg_push(struct seg_builder *sb, uint64_t start, struct sym_seg s)
{
	struct sym_index *idx = sb->idx;
	size_t n = idx->nsegs;

	if (n) {
		const struct sym_seg *p = &idx->segs[n - 1];

		if (p->node == s.node && p->file == s.file &&
		    p->line == s.line && p->col == s.col && p->disc == s.disc)
			return 0;
	}
	if (sym_vec_grow((void **)&idx->seg_start, &sb->alloc_start, n,
			 sizeof(uint64_t)) ||
	    sym_vec_grow((void **)&idx->segs, &sb->alloc_segs, n,
			 sizeof(struct sym_seg)))
		return -ENOMEM;
	idx->seg_start[n] = start;
	idx->segs[n] = s;
	idx->nsegs = n + 1;
	return 0;
}

static const struct sym_seg seg_gap = { SYM_NONE, 0, 0, 0, 0 };

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

/* Merge disjoint scope and line intervals into the segment table. */
static int merge(struct sym_index *idx, const struct sym_ivals *sc,
		 const struct sym_ivals *ln)
{
	struct seg_builder sb = { idx, 0, 0 };
	size_t i = 0, j = 0;
	uint64_t pos = 0;
	int err = 0;

	while ((i < sc->n || j < ln->n) && !err) {
		const struct sym_ival *a = i < sc->n ? &sc->v[i] : NULL;
		const struct sym_ival *b = j < ln->n ? &ln->v[j] : NULL;
		bool in_a, in_b;
		uint64_t next;

		if ((!a || a->lo > pos) && (!b || b->lo > pos)) {
			uint64_t lo = a && (!b || a->lo < b->lo) ? a->lo : b->lo;

			if (idx->nsegs)
				err = seg_push(&sb, pos, seg_gap);
			pos = lo;
			continue;
		}
		in_a = a && a->lo <= pos;
		in_b = b && b->lo <= pos;
		next = next_boundary(a, b, pos);
		struct sym_seg s = { in_a ? a->a : SYM_NONE, in_b ? b->a : 0,
				     in_b ? b->b : 0, in_b ? b->c : 0,
				     in_b ? b->d : 0 };
		err = seg_push(&sb, pos, s);
		pos = next;
		if (a && a->hi <= pos)
			i++;
		if (b && b->hi <= pos)
			j++;
	}
	if (!err && idx->nsegs)
		err = seg_push(&sb, pos, seg_gap);
	return err;
}

int sym_flatten(struct sym_index *idx, struct sym_ivals *scopes,
		struct sym_ivals *lines)
{
	struct sym_ivals inner = { 0 };
	int err;

	if (scopes->n)
		qsort(scopes->v, scopes->n, sizeof(*scopes->v), scope_cmp);
	err = sweep_scopes(scopes, &inner);
	if (!err) {
		clip_lines(lines);
		err = merge(idx, &inner, lines);
	}
	sym_ivals_release(&inner);
	return err;
}
