/*
 * block_query.c - one block's share of a query: the series its label
 * index selects that have the queried type, the profiles of each in the
 * time range (a series' profiles are in time order, so those outside are
 * skipped without reading the series' streams when none is inside), and
 * the sum of the queried column stack by stack into an array over the
 * block's nodes, then imported into the result.  Only the stack stream
 * and the one value stream needed are read and decompressed.
 */
#include "pstore_block.h"
#include "pstore_catalog.h"
#include "pstore_query.h"
#include "pstore_series.h"

bool pstore_any_in_range(const struct pstore_prof *p, size_t p0, size_t p1, int64_t from,
			 int64_t to)
{
	size_t lo = p0, hi = p1;

	while (lo < hi) { /* first profile with time >= from */
		size_t mid = lo + (hi - lo) / 2;

		if (p[mid].time < from)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < p1 && p[lo].time < to;
}

/* The value stream of column col and its multiplier (a derived column
 * reads its reference). */
static const struct pstore_stream *value_stream(const struct pstore_bdata *bd, uint32_t first,
					    int32_t col, int64_t *factor)
{
	const struct pstore_stream *st = &bd->streams.v[first + 1 + col];

	*factor = st->factor;
	if (st->kind == PS_STREAM_DERIVED) {
		st = &bd->streams.v[first + 1 + st->ref];
		*factor = pstore_mul(*factor, st->factor);
	}
	return st;
}

static int sum_series(struct pstore_block *b, struct pstore_bdata *bd, uint32_t s, int32_t col,
		      struct pstore_qctx *q, int64_t *self, struct ember_buf *sb,
		      struct ember_buf *vb)
{
	size_t p0 = bd->series_prof.v[s], p1 = bd->series_prof.v[s + 1];
	uint32_t first = bd->series_stream.v[s];
	struct pstore_sum_in in = { .profs = bd->profs.v, .p_first = p0, .p_end = p1,
				.from = q->from, .to = q->to,
				.nnodes = (uint32_t)pmodel_dict_nodes(&bd->dict), .r = q->r };
	const struct pstore_stream *vst;

	if (p0 == p1 || !pstore_any_in_range(bd->profs.v, p0, p1, q->from, q->to))
		return 0;
	vst = value_stream(bd, first, col, &in.factor);
	EMBER_FORWARD_IF_ERROR(pstore_block_read_stream(b, &bd->streams.v[first], sb, q->d));
	EMBER_FORWARD_IF_ERROR(pstore_block_read_stream(b, vst, vb, q->d));
	in.stacks = (const uint8_t *)sb->data;
	in.stacks_end = in.stacks + sb->len;
	in.vals = (const uint8_t *)vb->data;
	in.vals_end = in.vals + vb->len;
	return pstore_rows_sum(&in, self, q->d);
}

static int sum_block(struct pstore_block *b, struct pstore_bdata *bd, const int32_t *col,
		     struct pstore_qctx *q)
{
	int64_t *self = calloc(pmodel_dict_nodes(&bd->dict), sizeof(*self));
	struct ember_buf sb, vb;
	int err = self ? 0 : -ENOMEM;

	ember_buf_init(&sb, 0);
	ember_buf_init(&vb, 0);
	for (uint32_t s = 0; !err && s < b->series.series.n; s++)
		if (col[s] >= 0 && !(err = pstore_qctx_poll(q)))
			err = sum_series(b, bd, s, col[s], q, self, &sb, &vb);
	if (!err)
		err = pmodel_result_add(q->r, &bd->dict, self);
	if (err == -PSTORE_ERR_CORRUPT)
		err = EMBER_FAIL(q->d, err, "block '%s' is corrupt", b->name);
	ember_buf_release(&sb);
	ember_buf_release(&vb);
	free(self);
	return err;
}

int pstore_block_query(struct pstore_block *b, struct pstore_qctx *q)
{
	int32_t *col;
	struct pstore_bdata *bd = NULL;
	bool any;
	int err;

	EMBER_FAIL_IF(b->corrupt, q->d, -PSTORE_ERR_CORRUPT, "block '%s' is corrupt: %s",
		      b->name, b->why);
	col = malloc((b->series.series.n + 1) * sizeof(*col));
	if (!col)
		return -ENOMEM;
	err = pstore_plan(q, &b->series, &b->lindex, col, &any);
	if (!err && any)
		err = pstore_cache_data(q->cache, b, &bd, q->d);
	if (!err && any)
		err = sum_block(b, bd, col, q);
	pstore_bdata_unref(bd);
	free(col);
	return err;
}
