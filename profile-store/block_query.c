/*
 * block_query.c - one block's share of a query: the series its label
 * index selects that have the queried type, the profiles of each in the
 * time range (a series' profiles are in time order, so those outside are
 * skipped without reading the series' streams when none is inside), and
 * the sum of the queried column stack by stack into an array over the
 * block's nodes, then added into the result by stack key (what the result
 * lacks imported).  Only the stack stream and the one value stream needed
 * are read and decompressed (from one read of the block when they lie
 * close together; of a framed block, only the frames of the profiles in
 * the range), and with a link filter the series' link stream (a block
 * none of whose links is wanted, or a series without links, is not read
 * at all).  A piece of a rollup's bucket less a block's profiles outside
 * the range (plan.c) sums the bucket without noting its profiles, then
 * the block's rows outside the range negated, and notes those inside
 * from the block's profile table.
 */
#include "pstore_block.h"
#include "pstore_catalog.h"
#include "pstore_query.h"
#include "pstore_series.h"

#include <zstd.h>

size_t pstore_first_at(const struct pstore_prof *p, size_t p0, size_t p1, int64_t t)
{
	size_t lo = p0, hi = p1;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p[mid].time < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

bool pstore_any_in_range(const struct pstore_prof *p, size_t p0, size_t p1, int64_t from,
			 int64_t to)
{
	size_t lo = pstore_first_at(p, p0, p1, from);

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

/* How a block's rows are summed: for a bucket less profiles
 * (bucket_sums), its profiles not noted in the result (quiet), its values
 * negated (negate), while beside bytes of other sums are held. */
struct how {
	bool quiet, negate;
	uint64_t beside;
};

/* The streams a series' sum reads, and the reader of them all (one zstd
 * context, and the rows of a block read at once: rows_window); of a
 * framed block, only frames [f0, f1) (f1 SIZE_MAX: all). */
struct bufs {
	struct ember_buf s, v, l;
	struct pstore_rows_reader rd;
	size_t f0, f1;
	struct how how;
};

/* Stream st (one of bd's), only bf's frames, as [*p, *end): its rows
 * decoded at load where bd has them (no copy), else read through bf's
 * reader into out. */
static int read_stream(struct pstore_block *b, struct pstore_bdata *bd,
		       const struct pstore_stream *st, struct bufs *bf, struct ember_buf *out,
		       const uint8_t **p, const uint8_t **end, struct ember_diag *d)
{
	size_t si = (size_t)(st - bd->streams.v), len;

	if (bf->f0 || !pstore_rows_decoded_get(bd, si, p, &len)) { /* decoded: one frame */
		EMBER_FORWARD_IF_ERROR(pstore_block_read_frames_z(b, bd, si, bf->f0, bf->f1,
								  &bf->rd, out, d));
		*p = (const uint8_t *)out->data;
		len = out->len;
	}
	*end = *p + len;
	return 0;
}

/* Of a framed block, the frames [*f0, *f1) that hold the profiles in
 * [from, to) of those [p0, p1) of a series; of another, every frame. */
static void frame_range(const struct pstore_bdata *bd, size_t p0, size_t p1, int64_t from,
			int64_t to, size_t *f0, size_t *f1)
{
	size_t i0, i1;

	*f0 = 0;
	*f1 = SIZE_MAX;
	if (!bd->framed)
		return;
	i0 = pstore_first_at(bd->profs.v, p0, p1, from);
	i1 = pstore_first_at(bd->profs.v, i0, p1, to);
	*f0 = (i0 - p0) / PS_FRAME_PROFILES;
	*f1 = (i1 - p0 + PS_FRAME_PROFILES - 1) / PS_FRAME_PROFILES;
}

/* Of a framed block, the frames that hold in's profiles in [from, to)
 * into bf, in's profiles narrowed to them; of another, every frame. */
static void frames_of(const struct pstore_bdata *bd, struct pstore_sum_in *in, struct bufs *bf)
{
	size_t p0 = in->p_first;

	frame_range(bd, p0, in->p_end, in->from, in->to, &bf->f0, &bf->f1);
	if (!bd->framed)
		return;
	in->p_first = p0 + bf->f0 * PS_FRAME_PROFILES;
	if (in->p_end - p0 > bf->f1 * PS_FRAME_PROFILES)
		in->p_end = p0 + bf->f1 * PS_FRAME_PROFILES;
}

/* With a filter (want), the series' link stream into in. */
static int read_links(struct pstore_block *b, struct pstore_bdata *bd, uint32_t s,
		      const uint8_t *want, struct bufs *bf, struct pstore_sum_in *in,
		      struct ember_diag *d)
{
	const struct pstore_stream *ls = pstore_link_stream(bd, &b->series, s);

	if (!ls)
		return 1; /* no row of the series has a link */
	EMBER_FORWARD_IF_ERROR(read_stream(b, bd, ls, bf, &bf->l, &in->links, &in->links_end, d));
	in->want = want;
	in->nlinks = (uint32_t)bd->links.v.n;
	return 0;
}

/* want: NULL, every row; else the links wanted (every one when the
 * block's links have attributes and the query no filter: their parts go
 * to parts). */
static int sum_series(struct pstore_block *b, struct pstore_bdata *bd, uint32_t s, int32_t col,
		      struct pstore_qctx *q, const uint8_t *want, int64_t *self, struct bufs *bf,
		      struct pstore_attr_parts *parts)
{
	int err;
	size_t p0 = bd->series_prof.v[s], p1 = bd->series_prof.v[s + 1];
	uint32_t first = bd->series_stream.v[s];
	struct pstore_sum_in in = { .profs = bd->profs.v, .p_first = p0, .p_end = p1,
				.from = q->from, .to = q->to,
				.nnodes = (uint32_t)pmodel_dict_nodes(&bd->dict),
				.r = bf->how.quiet ? NULL : q->r,
				.rollup = bd->rollup.n ? bd->rollup.v : NULL, .read = &q->read };
	const struct pstore_stream *vst;

	if (p0 == p1 || !pstore_any_in_range(bd->profs.v, p0, p1, q->from, q->to))
		return 0;
	frames_of(bd, &in, bf);
	if (want && (err = read_links(b, bd, s, want, bf, &in, q->d))) {
		if (err < 0 || pstore_link_filter_on(q->links))
			return err > 0 ? 0 : err;
		in.want = NULL; /* no link stream: no attributes either */
	}
	if (in.want && parts) {
		in.tab = &bd->links;
		in.parts = parts;
	}
	vst = value_stream(bd, first, col, &in.factor);
	if (bf->how.negate)
		in.factor = pstore_mul(in.factor, -1);
	EMBER_FORWARD_IF_ERROR(read_stream(b, bd, &bd->streams.v[first], bf, &bf->s, &in.stacks,
					   &in.stacks_end, q->d));
	EMBER_FORWARD_IF_ERROR(read_stream(b, bd, vst, bf, &bf->v, &in.vals, &in.vals_end, q->d));
	return pstore_rows_sum(&in, self, q->d);
}

/* What a block's sum holds: its sums over the block's nodes and the
 * streams read, taken from the request's account (the most at once). */
static int hold(struct pstore_qctx *q, size_t nodes, const struct bufs *bf)
{
	return pstore_qctx_hold(q, nodes * sizeof(int64_t) + bf->s.alloc + bf->v.alloc +
					   bf->l.alloc + bf->rd.win.alloc + bf->how.beside);
}

/* What a window must hold: [lo, hi) of the ROWS section, need bytes of
 * it wanted. */
struct span {
	uint64_t lo, hi, need;
};

/* sp widened to frames [f0, f1) of stream st of bd (where its frame
 * table says they lie; not known: the whole stream). */
static void span_of(const struct pstore_bdata *bd, const struct pstore_stream *st, size_t f0,
		    size_t f1, struct span *sp)
{
	uint64_t a = 0, z = st->stored;

	pstore_frames_span(&bd->frames, (size_t)(st - bd->streams.v), f0, f1, &a, &z);
	sp->lo = st->off + a < sp->lo ? st->off + a : sp->lo;
	sp->hi = st->off + z > sp->hi ? st->off + z : sp->hi;
	sp->need += z - a;
}

/* The rows of the selected series with a profile in a range rg[k] (the
 * frames of them in their stack and value streams) read at once into
 * bf's window when little else lies between them (what lies between is
 * read too: at most as much again as they hold, and 64 KiB): one read a
 * block instead of two or three a series. */
static int rows_window(struct pstore_block *b, const struct pstore_bdata *bd, const int32_t *col,
		       const int64_t (*rg)[2], size_t nrg, struct bufs *bf, struct pstore_qctx *q)
{
	struct span sp = { UINT64_MAX, 0, 0 };
	int64_t factor;
	size_t f0, f1;

	if (bd->decoded.off)
		return 0; /* its rows are in memory */
	for (uint32_t s = 0; s < b->series.series.n; s++) {
		uint32_t first = bd->series_stream.v[s];
		size_t p0 = bd->series_prof.v[s], p1 = bd->series_prof.v[s + 1];

		for (size_t k = 0; col[s] >= 0 && k < nrg; k++) {
			if (!pstore_any_in_range(bd->profs.v, p0, p1, rg[k][0], rg[k][1]))
				continue;
			frame_range(bd, p0, p1, rg[k][0], rg[k][1], &f0, &f1);
			span_of(bd, &bd->streams.v[first], f0, f1, &sp);
			span_of(bd, value_stream(bd, first, col[s], &factor), f0, f1, &sp);
		}
	}
	if (sp.hi <= sp.lo || sp.hi - sp.lo > 2 * sp.need + 65536)
		return 0;
	EMBER_FORWARD_IF_ERROR(pstore_qctx_hold(q, q->held + (sp.hi - sp.lo)));
	return pstore_block_read_rows(b, sp.lo, sp.hi - sp.lo, &bf->rd, q->d);
}

/* The selected series' rows in each range rg[k] (k < nrg, in time order)
 * summed into self; q's range is rg's while they are. */
static int sum_ranges(struct pstore_block *b, struct pstore_bdata *bd, const int32_t *col,
		      const uint8_t *want, struct pstore_qctx *q, const int64_t (*rg)[2],
		      size_t nrg, int64_t *self, struct bufs *bf, struct pstore_attr_parts *pp)
{
	int64_t from = q->from, to = q->to;
	size_t nodes = pmodel_dict_nodes(&bd->dict);
	int err;

	err = rows_window(b, bd, col, rg, nrg, bf, q);
	for (uint32_t s = 0; !err && s < b->series.series.n; s++)
		for (size_t k = 0; !err && col[s] >= 0 && k < nrg; k++) {
			q->from = rg[k][0];
			q->to = rg[k][1];
			if (!(err = pstore_qctx_poll(q)) &&
			    !(err = sum_series(b, bd, s, col[s], q, want, self, bf, pp)))
				err = hold(q, nodes, bf);
		}
	q->from = from;
	q->to = to;
	return err;
}

/* A block's sums: per node, and the parts of them rows with attributes
 * gave (empty when the block has none). */
struct bsum {
	int64_t *self;
	struct pstore_attr_parts parts;
};

static void bsum_release(struct bsum *sm)
{
	free(sm->self);
	EMBER_VEC_FREE(&sm->parts);
	memset(sm, 0, sizeof(*sm));
}

/* A block's rows in ranges rg[0..nrg) summed into *sm as how says
 * (NULL: noted, as they are). */
static int block_sums(struct pstore_block *b, struct pstore_bdata *bd, const int32_t *col,
		      const uint8_t *want, struct pstore_qctx *q, const int64_t (*rg)[2],
		      size_t nrg, const struct how *how, struct bsum *sm)
{
	size_t nodes = pmodel_dict_nodes(&bd->dict);
	struct pstore_attr_parts *pp = NULL;
	uint8_t *all = NULL;
	struct bufs bf = { .rd.z = ZSTD_createDCtx(), .how = how ? *how : (struct how){ 0 } };
	int err = bf.rd.z ? hold(q, nodes, &bf) : -ENOMEM;

	if (!err && !(sm->self = calloc(nodes, sizeof(*sm->self))))
		err = -ENOMEM;
	if (!err && pstore_linktab_has_attrs(&bd->links)) {
		pp = &sm->parts;
		if (!want && !(want = all = malloc(bd->links.v.n + 1)))
			err = -ENOMEM;
		else if (all)
			memset(all, 1, bd->links.v.n + 1);
	}
	ember_buf_init(&bf.s, 0);
	ember_buf_init(&bf.v, 0);
	ember_buf_init(&bf.l, 0);
	ember_buf_init(&bf.rd.win, 0);
	if (!err)
		err = sum_ranges(b, bd, col, want, q, rg, nrg, sm->self, &bf, pp);
	if (err == -PSTORE_ERR_CORRUPT)
		err = EMBER_FAIL(q->d, err, "block '%s' is corrupt", b->name);
	q->rows_bytes += bf.rd.bytes;
	ember_buf_release(&bf.s);
	ember_buf_release(&bf.v);
	ember_buf_release(&bf.l);
	ember_buf_release(&bf.rd.win);
	ZSTD_freeDCtx(bf.rd.z);
	free(all);
	if (err)
		bsum_release(sm);
	return err;
}

/* A block's sums added into q->r. */
static int add_sums(struct pstore_bdata *bd, struct pstore_qctx *q, const struct bsum *sm)
{
	EMBER_FORWARD_IF_ERROR(pstore_qctx_add(q, &bd->dict, bd->keys, sm->self));
	EMBER_FORWARD_IF_ERROR(pmodel_result_add_attrs(q->r, &bd->dict, sm->parts.v, sm->parts.n));
	return pstore_qctx_charge(q);
}

/* A block's rows in ranges rg[0..nrg) into q->r. */
static int sum_block(struct pstore_block *b, struct pstore_bdata *bd, const int32_t *col,
		     const uint8_t *want, struct pstore_qctx *q, const int64_t (*rg)[2],
		     size_t nrg)
{
	struct bsum sm = { 0 };
	int err = block_sums(b, bd, col, want, q, rg, nrg, NULL, &sm);

	if (!err)
		err = add_sums(bd, q, &sm);
	bsum_release(&sm);
	return err;
}

/* The column of each series of b the query selects (*col, malloc'ed,
 * -1: none) and, when it selects any (*any), b's data (*bd, a reference,
 * else NULL). */
static int select_series(struct pstore_block *b, struct pstore_qctx *q, int32_t **col, bool *any,
			 struct pstore_bdata **bd)
{
	int err;

	*bd = NULL;
	EMBER_FAIL_IF(b->corrupt, q->d, -PSTORE_ERR_CORRUPT, "block '%s' is corrupt: %s",
		      b->name, b->why);
	if (!(*col = malloc((b->series.series.n + 1) * sizeof(**col))))
		return -ENOMEM;
	err = pstore_plan(q, &b->series, &b->lindex, *col, any);
	if (!err && *any && pstore_link_filter_on(q->links) && !pstore_meta_linked(&b->meta))
		*any = false; /* a block without links */
	if (!err && *any)
		err = pstore_cache_data(q->cache, b, bd, q->d);
	return err;
}

int pstore_block_query(struct pstore_block *b, struct pstore_qctx *q)
{
	int32_t *col = NULL;
	struct pstore_bdata *bd = NULL;
	uint8_t *want = NULL;
	bool any = false, none = false;
	int err = select_series(b, q, &col, &any, &bd);

	if (!err && any)
		err = pstore_links_want(bd->links.v.v, bd->links.v.n, q->links, &want, &none);
	if (!err && any && !none)
		err = sum_block(b, bd, col, want, q, (const int64_t[][2]){ { q->from, q->to } }, 1);
	pstore_bdata_unref(bd);
	free(want);
	free(col);
	return err;
}

/* The selected profiles of bd in [from, to) noted in q->r. */
static void note_inside(const struct pstore_block *b, const struct pstore_bdata *bd,
			const int32_t *col, int64_t from, int64_t to, struct pstore_qctx *q)
{
	for (uint32_t s = 0; s < b->series.series.n; s++) {
		size_t p0 = bd->series_prof.v[s], p1 = bd->series_prof.v[s + 1];
		size_t i = pstore_first_at(bd->profs.v, p0, p1, from);

		for (; col[s] >= 0 && i < p1 && bd->profs.v[i].time < to; i++)
			pstore_result_note(q->r, &bd->profs.v[i]);
	}
}

/* The rollup's sums of p's bucket (*rs, its data *rd; none when it
 * selects no series) and the block's rows there outside the range,
 * negated (*bs), neither noted. */
static int bucket_sums(const struct pstore_piece *p, struct pstore_bdata *bd, const int32_t *col,
		       struct pstore_qctx *q, struct pstore_bdata **rd, struct bsum *rs,
		       struct bsum *bs)
{
	const int64_t bucket[1][2] = { { p->wfrom, p->wto } };
	const int64_t off[2][2] = { { p->wfrom, q->from }, { q->to, p->wto } };
	struct how quiet = { .quiet = true }, less = { .quiet = true, .negate = true };
	int32_t *rcol = NULL;
	bool rany = false;
	int err = select_series(p->whole, q, &rcol, &rany, rd);

	if (!err && rany)
		err = block_sums(p->whole, *rd, rcol, NULL, q, bucket, 1, &quiet, rs);
	if (rs->self)
		less.beside = pmodel_dict_nodes(&(*rd)->dict) * sizeof(int64_t);
	if (!err)
		err = block_sums(p->b, bd, col, NULL, q, off, 2, &less, bs);
	free(rcol);
	return err;
}

/* The rollup's bucket of p less the block's profiles there outside the
 * range, the profiles inside noted.  The block's sums are taken off the
 * rollup's by stack key before either is added, so no stack is left at
 * 0 in q->r; where that cannot be (rows with attributes, or a stack of
 * the block the rollup lacks), both are added and q->zeros says that
 * the result must drop its stacks at 0. */
static int bucket_less(const struct pstore_piece *p, struct pstore_bdata *bd, const int32_t *col,
		       struct pstore_qctx *q)
{
	struct pstore_bdata *rd = NULL;
	struct bsum rs = { 0 }, bs = { 0 };
	bool taken = false;
	int err = bucket_sums(p, bd, col, q, &rd, &rs, &bs);

	if (!err)
		note_inside(p->b, bd, col, q->from, q->to, q);
	if (!err && rs.self && !rs.parts.n && !bs.parts.n && rd->keys && bd->keys)
		err = pmodel_self_take_off(rd->keys, rs.self, pmodel_dict_nodes(&rd->dict),
					   bd->keys, bs.self, pmodel_dict_nodes(&bd->dict),
					   &taken);
	if (!err && rs.self)
		err = add_sums(rd, q, &rs);
	if (!err && !taken) {
		err = add_sums(bd, q, &bs);
		q->zeros = true;
	}
	bsum_release(&rs);
	bsum_release(&bs);
	pstore_bdata_unref(rd);
	return err;
}

int pstore_block_query_less(const struct pstore_piece *p, struct pstore_qctx *q)
{
	struct pstore_bdata *bd = NULL;
	int32_t *col = NULL;
	bool any = false;
	int err = select_series(p->b, q, &col, &any, &bd);

	if (!err && any)
		err = bucket_less(p, bd, col, q);
	pstore_bdata_unref(bd);
	free(col);
	return err;
}
