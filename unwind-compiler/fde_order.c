/*
 * fde_order.c - from FDEs to the logical row table, applying the
 * normalizations of docs/unwind-format.md ("Rows"):
 *
 *  1. .debug_frame FDEs that overlap any .eh_frame FDE are dropped
 *     (.eh_frame wins where both cover a range);
 *  2. FDEs are taken in address order; of FDEs starting at the same
 *     address the first (.eh_frame, then lower offset) is kept, and
 *     each FDE holds until the next one starts;
 *  3. a gap between FDEs of at most UNWIND_GAP_BRIDGE_MAX bytes
 *     (alignment padding) is bridged: the previous row extends over it;
 *     a wider gap, and the end of the last FDE, get an END row;
 *  4. a row whose rule equals the previous row's is dropped (by the
 *     row sink, table_write.c).
 *
 * Rows come out in address order, so no sort of rows is ever needed;
 * only the FDEs are ordered (a sort of their indexes by start address,
 * skipped when the sections are already in order).
 */
#include "unwind_internal.h"

#include <stdlib.h>

void unwind_build_init(struct unwind_build *b, const struct unwind_input *in,
		       struct ember_diag *d)
{
	memset(b, 0, sizeof(*b));
	b->in = in;
	b->diag = d;
}

void unwind_build_release(struct unwind_build *b)
{
	if (!b)
		return;
	for (int i = 0; i < 2; i++)
		free(b->cfi[i].cies);
	free(b->fdes);
	free(b->order);
	unwind_writer_free(b->writer);
	memset(b, 0, sizeof(*b));
}

/* qsort_r order: start, then index (so the sort is stable). */
static int order_cmp(const void *pa, const void *pb, void *ctx)
{
	const struct unwind_fde *f = ctx;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;

	if (f[a].start != f[b].start)
		return f[a].start < f[b].start ? -1 : 1;
	return a < b ? -1 : a > b;
}

/*
 * b->order: the FDEs by start address, stably (b->fdes is built in
 * (section, offset) order, so equal starts keep .eh_frame first, then
 * lower offsets).  Sorting an index keeps the FDEs where they are.
 */
static int fdes_order(struct unwind_build *b)
{
	bool in_order = true;
	size_t n = b->nfdes;

	b->order = malloc((n ? n : 1) * sizeof(*b->order));
	if (!b->order)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		b->order[i] = (uint32_t)i;
		in_order &= i == 0 || b->fdes[i - 1].start <= b->fdes[i].start;
	}
	b->norder = n;
	if (!in_order)
		qsort_r(b->order, n, sizeof(*b->order), order_cmp, b->fdes);
	return 0;
}

/* The i-th FDE in address order. */
static struct unwind_fde *fde_at(const struct unwind_build *b, size_t i)
{
	return &b->fdes[b->order[i]];
}

/* Rule 1: mark .debug_frame FDEs that overlap an .eh_frame FDE. */
static void drop_debug_overlaps(struct unwind_build *b)
{
	uint64_t max_eh_end = 0, min_eh_start = UINT64_MAX;
	size_t i;

	for (i = 0; i < b->norder; i++) {	/* eh FDEs starting before */
		struct unwind_fde *f = fde_at(b, i);

		if (f->sec == UNWIND_SEC_EH)
			max_eh_end = f->end > max_eh_end ? f->end : max_eh_end;
		else if (max_eh_end > f->start)
			f->dropped = true;
	}
	for (i = b->norder; i-- > 0;) {		/* eh FDEs starting after */
		struct unwind_fde *f = fde_at(b, i);

		if (f->sec == UNWIND_SEC_EH)
			min_eh_start = f->start;
		else if (min_eh_start < f->end)
			f->dropped = true;
	}
}

/* Rule 2: drop marked FDEs and same-start duplicates from the order. */
static void fdes_compact(struct unwind_build *b)
{
	size_t n = 0;

	for (size_t i = 0; i < b->norder; i++) {
		const struct unwind_fde *f = fde_at(b, i);

		if (f->dropped || (n && b->fdes[b->order[n - 1]].start == f->start)) {
			b->stats.fdes_dropped++;
			continue;
		}
		b->order[n++] = b->order[i];
	}
	b->norder = n;
}

/* Rule 3 before FDE f, whose predecessor ended at prev_end. */
static int bridge_gap(struct unwind_build *b, uint64_t prev_end,
		      const struct unwind_fde *f)
{
	struct unwind_rule end = { .cfa_kind = UNWIND_CFA_END };

	if (f->start == prev_end)
		return 0;
	if (f->start - prev_end <= UNWIND_GAP_BRIDGE_MAX) {
		b->stats.gaps_bridged++;
		return 0;
	}
	return unwind_rows_push(b, prev_end, &end);
}

int unwind_table_build(struct unwind_build *b)
{
	struct unwind_rule end = { .cfa_kind = UNWIND_CFA_END };
	uint64_t prev_end = 0;
	int err = fdes_order(b);

	if (err)
		return err;
	drop_debug_overlaps(b);
	fdes_compact(b);
	for (size_t i = 0; i < b->norder; i++) {
		const struct unwind_fde *f = fde_at(b, i);
		uint64_t stop = f->end;

		if (i + 1 < b->norder && fde_at(b, i + 1)->start < stop)
			stop = fde_at(b, i + 1)->start;
		err = i ? bridge_gap(b, prev_end, f) : 0;
		if (!err)
			err = unwind_program_run(b, f, stop);
		if (err)
			return err;
		prev_end = stop;
		b->stats.fdes++;
		b->stats.fdes_debug_frame += f->sec == UNWIND_SEC_DEBUG;
	}
	if (b->norder)
		return unwind_rows_push(b, prev_end, &end);
	return 0;
}
