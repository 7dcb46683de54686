/*
 * block_rows.c - the sample rows of one series in a block, as streams:
 * the stack nodes (per profile ascending, delta-coded: the first node as
 * is, then the gaps) and one stream per value column, each value
 * zigzag-coded after division by the column's greatest common divisor
 * (so nanoseconds of a 10 ms period cost what sample counts cost), all
 * LEB128 varints, in a zstd frame per PS_FRAME_PROFILES profiles (version
 * 3: a query decodes the frames of the profiles in its range alone, the
 * others skipped by their frame headers).  A column that is another column times
 * a constant (a Go CPU profile's cpu = samples x period) is stored as
 * that relation and no bytes (PS_STREAM_DERIVED).  A version 2 block adds
 * a stream of link ids a series (PS_STREAM_LINKS: rows of one stack with
 * different links are rows of their own, in source order; no bytes when
 * no row of the series has a link).  A query decompresses only the
 * stacks, the one column it needs (and the links when it asks for spans),
 * and sums them into an array over the block's nodes.
 */
#include "pstore_block.h"
#include "pstore_series.h"

#include <zstd.h>

/* ---- encoding -------------------------------------------------------------- */

static int64_t gcd64(int64_t a, int64_t b)
{
	uint64_t x = a < 0 ? -(uint64_t)a : (uint64_t)a, y = b < 0 ? -(uint64_t)b : (uint64_t)b;

	while (y) {
		uint64_t t = x % y;

		x = y;
		y = t;
	}
	return x > INT64_MAX ? 1 : (int64_t)x;
}

/* raw[cut[g], cut[g + 1]) for each group g of PS_FRAME_PROFILES
 * profiles, a frame each, appended to rows as stream st. */
static int compress_frames(void *cctx, const struct ember_buf *raw, const size_t *cut,
			   size_t ngroups, struct ember_buf *rows, struct pstore_stream *st)
{
	st->off = rows->len;
	for (size_t g = 0; g < ngroups; g++) {
		size_t len = cut[g + 1] - cut[g], bound = ZSTD_compressBound(len), n;

		EMBER_FORWARD_IF_ERROR(ember_buf_reserve(rows, bound));
		n = ZSTD_compress2(cctx, rows->data + rows->len, bound,
				   raw->data ? raw->data + cut[g] : "", len);
		if (ZSTD_isError(n))
			return -ENOMEM;
		rows->len += n;
	}
	st->stored = rows->len - st->off;
	st->raw = raw->len;
	return 0;
}

/* Where the group of profile pi starts, when pi starts one. */
static void cut_at(size_t *cut, size_t pi, const struct ember_buf *raw)
{
	if (pi % PS_FRAME_PROFILES == 0)
		cut[pi / PS_FRAME_PROFILES] = raw->len;
}

/* The rows of every profile in block-node order: perm[base + i] is the
 * source row of the i-th, keys[base + i] its block node (base: the sum
 * of the earlier profiles' rows); and where each group of profiles
 * starts in the stream being written (ngroups + 1 entries). */
struct order {
	uint32_t *perm, *keys;
	size_t *cut, ngroups;
};

static int cmp_perm(const void *a, const void *b, void *ctx)
{
	const uint32_t *keys = ctx, i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	uint32_t x = keys[i], y = keys[j];

	if (x == y) /* one stack, two links: in source order */
		return i < j ? -1 : i > j;
	return x < y ? -1 : x > y;
}

static int build_order(const struct pstore_rows_in *in, struct order *o, uint32_t *tmp)
{
	size_t base = 0;

	for (size_t pi = 0; pi < in->nprofs; pi++) {
		const struct pstore_prof *p = in->profs[pi];
		bool sorted = true;

		for (uint32_t i = 0; i < p->nrows; i++) {
			tmp[i] = in->node_map[in->row_node[p->row_off + i]];
			o->perm[base + i] = i;
			sorted &= !i || tmp[i - 1] < tmp[i];
		}
		if (!sorted)
			ember_qsort_r(o->perm + base, p->nrows, sizeof(uint32_t), cmp_perm, tmp);
		for (uint32_t i = 0; i < p->nrows; i++)
			o->keys[base + i] = tmp[o->perm[base + i]];
		base += p->nrows;
	}
	return 0;
}

static int put_stacks(const struct pstore_rows_in *in, const struct order *o, struct ember_buf *raw)
{
	size_t base = 0;

	ember_buf_reset(raw);
	for (size_t pi = 0; pi < in->nprofs; pi++) {
		uint32_t prev = 0;

		cut_at(o->cut, pi, raw);
		for (uint32_t i = 0; i < in->profs[pi]->nrows; i++) {
			EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(raw, o->keys[base + i] - prev));
			prev = o->keys[base + i];
		}
		base += in->profs[pi]->nrows;
	}
	o->cut[o->ngroups] = raw->len;
	return 0;
}

static int64_t val_at(const struct pstore_rows_in *in, const struct pstore_prof *p, uint32_t row,
		      uint32_t c)
{
	return in->row_val[p->val_off + (size_t)row * in->ncols + c];
}

/* Whether column c is column k times f for every row (f from the first
 * row where k is not 0; every column all 0 is column 0 times 0). */
static bool derived(const struct pstore_rows_in *in, uint32_t c, uint32_t k, int64_t *f)
{
	bool have = false;

	*f = 0;
	for (size_t pi = 0; pi < in->nprofs; pi++) {
		const struct pstore_prof *p = in->profs[pi];

		for (uint32_t r = 0; r < p->nrows; r++) {
			int64_t a = val_at(in, p, r, k), b = val_at(in, p, r, c);

			if (!have && a) {
				if (b % a || (a == -1 && b == INT64_MIN))
					return false;
				*f = b / a;
				have = true;
			}
			if (pstore_mul(a, *f) != b)
				return false;
		}
	}
	return true;
}

static int64_t column_gcd(const struct pstore_rows_in *in, uint32_t c)
{
	int64_t g = 0;

	for (size_t pi = 0; pi < in->nprofs; pi++)
		for (uint32_t r = 0; r < in->profs[pi]->nrows; r++)
			g = gcd64(g, val_at(in, in->profs[pi], r, c));
	return g ? g : 1;
}

static int put_column(const struct pstore_rows_in *in, uint32_t c, int64_t factor,
		      const struct order *o, struct ember_buf *raw)
{
	size_t base = 0;

	ember_buf_reset(raw);
	for (size_t pi = 0; pi < in->nprofs; pi++) {
		const struct pstore_prof *p = in->profs[pi];

		cut_at(o->cut, pi, raw);
		for (uint32_t i = 0; i < p->nrows; i++)
			EMBER_FORWARD_IF_ERROR(ember_buf_put_zigzag(raw,
						  val_at(in, p, o->perm[base + i], c) / factor));
		base += p->nrows;
	}
	o->cut[o->ngroups] = raw->len;
	return 0;
}

/* Column c: derived from a plain earlier column when it is one's
 * multiple, else its values. */
static int encode_column(const struct pstore_rows_in *in, uint32_t c, const struct order *o,
			 const struct pstore_stream *cols, struct ember_buf *raw,
			 struct ember_buf *rows, struct pstore_stream *st)
{
	for (uint32_t k = 0; k < c; k++) {
		int64_t f;

		if (cols[k].kind != PS_STREAM_DERIVED && derived(in, c, k, &f)) {
			*st = (struct pstore_stream){
				.kind = PS_STREAM_DERIVED, .ref = k, .factor = f };
			return 0;
		}
	}
	*st = (struct pstore_stream){ .kind = PS_STREAM_VALUES, .factor = column_gcd(in, c) };
	EMBER_FORWARD_IF_ERROR(put_column(in, c, st->factor, o, raw));
	return compress_frames(in->cctx, raw, o->cut, o->ngroups, rows, st);
}

/* The block's id of source link id (0: none), interned when first met. */
static int block_link(const struct pstore_rows_in *in, uint32_t id, uint32_t *out)
{
	if (!id) {
		*out = 0;
		return 0;
	}
	if (in->link_map[id] == UINT32_MAX)
		EMBER_FORWARD_IF_ERROR(pstore_linktab_copy(in->links, in->src_links, id,
							   &in->link_map[id]));
	*out = in->link_map[id];
	return 0;
}

/* The link stream: the link of every row in the stacks' order (0 for the
 * rows of a profile without links); no bytes when no profile has one. */
static int encode_links(const struct pstore_rows_in *in, const struct order *o,
			struct ember_buf *raw, struct ember_buf *rows, struct pstore_stream *st)
{
	size_t base = 0;
	bool any = false;

	*st = (struct pstore_stream){ .kind = PS_STREAM_LINKS, .factor = 1 };
	for (size_t pi = 0; pi < in->nprofs; pi++)
		any |= in->profs[pi]->link_off != PS_NO_LINKS;
	if (!any)
		return 0;
	ember_buf_reset(raw);
	for (size_t pi = 0; pi < in->nprofs; pi++) {
		const struct pstore_prof *p = in->profs[pi];

		cut_at(o->cut, pi, raw);
		for (uint32_t i = 0; i < p->nrows; i++) {
			uint32_t id = 0;

			if (p->link_off != PS_NO_LINKS)
				EMBER_FORWARD_IF_ERROR(block_link(in,
					in->row_link[p->link_off + o->perm[base + i]], &id));
			EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(raw, id));
		}
		base += p->nrows;
	}
	o->cut[o->ngroups] = raw->len;
	return compress_frames(in->cctx, raw, o->cut, o->ngroups, rows, st);
}

static int encode_all(const struct pstore_rows_in *in, const struct order *o,
		      struct ember_buf *raw, struct ember_buf *rows, struct pstore_streams *streams)
{
	struct pstore_stream st = { .kind = PS_STREAM_STACKS, .factor = 1 };
	size_t first;

	EMBER_FORWARD_IF_ERROR(put_stacks(in, o, raw));
	EMBER_FORWARD_IF_ERROR(compress_frames(in->cctx, raw, o->cut, o->ngroups, rows, &st));
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(streams, st));
	first = streams->n;
	for (uint32_t c = 0; c < in->ncols; c++) {
		EMBER_FORWARD_IF_ERROR(encode_column(in, c, o, streams->v + first, raw, rows, &st));
		EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(streams, st));
	}
	if (!in->links)
		return 0; /* no link stream */
	EMBER_FORWARD_IF_ERROR(encode_links(in, o, raw, rows, &st));
	return EMBER_VEC_APPEND(streams, st);
}

int pstore_rows_encode(const struct pstore_rows_in *in, struct ember_buf *rows,
		   struct pstore_streams *streams)
{
	size_t total = 0, maxrows = 1;
	struct order o;
	uint32_t *tmp;
	struct ember_buf raw;
	int err;

	for (size_t i = 0; i < in->nprofs; i++) {
		total += in->profs[i]->nrows;
		if (in->profs[i]->nrows > maxrows)
			maxrows = in->profs[i]->nrows;
	}
	o.perm = malloc((total + 1) * sizeof(uint32_t));
	o.keys = malloc((total + 1) * sizeof(uint32_t));
	o.ngroups = (in->nprofs + PS_FRAME_PROFILES - 1) / PS_FRAME_PROFILES;
	o.cut = malloc((o.ngroups + 1) * sizeof(size_t));
	tmp = malloc(maxrows * sizeof(uint32_t));
	ember_buf_init(&raw, (size_t)PS_SECTION_MAX_RAW);
	err = o.perm && o.keys && o.cut && tmp ? build_order(in, &o, tmp) : -ENOMEM;
	if (!err)
		err = encode_all(in, &o, &raw, rows, streams);
	ember_buf_release(&raw);
	free(o.perm);
	free(o.keys);
	free(o.cut);
	free(tmp);
	return err;
}

/* ---- decoding --------------------------------------------------------------- */

/* Frames of stored[0..len) decompressed into out after what it holds,
 * at most cap bytes in all; the input must end with a whole frame. */
static int load_frames(ZSTD_DCtx *dctx, const uint8_t *stored, size_t len, size_t cap,
		       struct ember_buf *out, struct ember_diag *d)
{
	ZSTD_inBuffer in = { stored, len, 0 };
	size_t zr = 0;

	ZSTD_DCtx_reset(dctx, ZSTD_reset_session_only);
	while (in.pos < in.size || (zr && out->len < cap)) {
		ZSTD_outBuffer ob = { out->data, cap, out->len };
		size_t before = in.pos, outbefore = ob.pos;

		zr = ZSTD_decompressStream(dctx, &ob, &in);
		out->len = ob.pos;
		if (ZSTD_isError(zr) || (before == in.pos && outbefore == ob.pos))
			break;
	}
	EMBER_FAIL_IF(ZSTD_isError(zr), d, -PSTORE_ERR_CORRUPT, "row stream: %s",
		      ZSTD_getErrorName(zr));
	EMBER_FAIL_IF(zr || in.pos != in.size, d, -PSTORE_ERR_CORRUPT,
		      "row stream: a frame ends early or runs past %llu bytes",
		      (unsigned long long)cap);
	return 0;
}

/* out sized for st's decoded bytes; dctx the caller's or a new one. */
static int load_begin(const struct pstore_stream *st, ZSTD_DCtx **dctx, struct ember_buf *out,
		      struct ember_diag *d)
{
	EMBER_FAIL_IF(st->raw > PS_SECTION_MAX_RAW, d, -PSTORE_ERR_CORRUPT,
		      "row stream of %llu bytes is too large", (unsigned long long)st->raw);
	ember_buf_reset(out);
	out->cap = (size_t)st->raw;
	EMBER_FORWARD_IF_ERROR(ember_buf_reserve(out, (size_t)st->raw));
	if (!*dctx && !(*dctx = ZSTD_createDCtx()))
		return -ENOMEM;
	return 0;
}

/* The offset in stored[0..len) of frame f, counting from offset from
 * (len: one past the last). */
static int frame_at(const uint8_t *stored, size_t len, size_t f, size_t from, size_t *at,
		    struct ember_diag *d)
{
	size_t pos = from;

	for (size_t i = 0; i < f && pos < len; i++) {
		size_t n = ZSTD_findFrameCompressedSize(stored + pos, len - pos);

		EMBER_FAIL_IF(ZSTD_isError(n), d, -PSTORE_ERR_CORRUPT, "row stream frame: %s",
			      ZSTD_getErrorName(n));
		pos += n;
	}
	*at = pos;
	return 0;
}

/* Where frames [f0, f1) of stored[0..len) lie, [*a, *z); f1 SIZE_MAX:
 * from f0 to the end, at least one frame. */
static int frames_span(const uint8_t *stored, size_t len, size_t f0, size_t f1, size_t *a,
		       size_t *z, struct ember_diag *d)
{
	EMBER_FORWARD_IF_ERROR(frame_at(stored, len, f0, 0, a, d));
	if (f1 == SIZE_MAX)
		*z = len;
	else
		EMBER_FORWARD_IF_ERROR(frame_at(stored, len, f1 - f0, *a, z, d));
	EMBER_FAIL_IF((*a == *z) != (f0 == f1), d, -PSTORE_ERR_CORRUPT,
		      "row stream: fewer than %zu frames", f1 == SIZE_MAX ? f0 + 1 : f1);
	return 0;
}

/* Every frame of stored[a, z) (a part of st's bytes) into out. */
static int load_span(const struct pstore_stream *st, const uint8_t *stored, size_t a, size_t z,
		     ZSTD_DCtx *reuse, struct ember_buf *out, struct ember_diag *d)
{
	ZSTD_DCtx *dctx = reuse;
	int err = load_begin(st, &dctx, out, d);

	if (!err && a < z)
		err = load_frames(dctx, stored + a, z - a, (size_t)st->raw, out, d);
	if (dctx != reuse)
		ZSTD_freeDCtx(dctx);
	return err;
}

int pstore_stream_load_part(const struct pstore_stream *st, const uint8_t *part, size_t len,
			    ZSTD_DCtx *reuse, struct ember_buf *out, struct ember_diag *d)
{
	return load_span(st, part, 0, len, reuse, out, d);
}

int pstore_stream_load_frames(const struct pstore_stream *st, const uint8_t *stored, size_t len,
			      size_t f0, size_t f1, ZSTD_DCtx *reuse, struct ember_buf *out,
			      struct ember_diag *d)
{
	size_t a = 0, z = 0;

	EMBER_FORWARD_IF_ERROR(frames_span(stored, len, f0, f1, &a, &z, d));
	EMBER_FORWARD_IF_ERROR(load_span(st, stored, a, z, reuse, out, d));
	EMBER_FAIL_IF(f0 == 0 && f1 == SIZE_MAX && out->len != st->raw, d, -PSTORE_ERR_CORRUPT,
		      "row stream: %zu bytes decompressed, %llu expected", out->len,
		      (unsigned long long)st->raw);
	return 0;
}

int pstore_stream_load(const struct pstore_stream *st, const uint8_t *stored, size_t len,
		   ZSTD_DCtx *reuse, struct ember_buf *out, struct ember_diag *d)
{
	return pstore_stream_load_frames(st, stored, len, 0, SIZE_MAX, reuse, out, d);
}

/* The read positions in a series' streams (l: the link stream, with a
 * link filter). */
struct cursors {
	const uint8_t *s, *v, *l;
};

/* Skip the rows of one profile in every stream. */
static int skip_rows(const struct pstore_sum_in *in, struct cursors *c, uint32_t n)
{
	uint64_t x;

	for (uint32_t i = 0; i < n; i++) {
		EMBER_FORWARD_IF_ERROR(ember_cur_uleb(&c->s, in->stacks_end, &x));
		if (c->v)
			EMBER_FORWARD_IF_ERROR(ember_cur_uleb(&c->v, in->vals_end, &x));
		if (in->want)
			EMBER_FORWARD_IF_ERROR(ember_cur_uleb(&c->l, in->links_end, &x));
	}
	return 0;
}

/* One profile's rows summed into self: the loop of every query without a
 * link filter, kept free of the filter's work (one loop for both cost
 * 9-13% of a query's CPU: docs/performance-notes.md). */
static int sum_profile(const struct pstore_sum_in *in, struct cursors *c, uint32_t n,
		       int64_t *self)
{
	uint64_t node = 0, delta, raw;

	for (uint32_t i = 0; i < n; i++) {
		EMBER_FORWARD_IF_ERROR(ember_cur_uleb(&c->s, in->stacks_end, &delta));
		node += delta;
		if (node >= in->nnodes)
			return -PSTORE_ERR_CORRUPT;
		EMBER_FORWARD_IF_ERROR(ember_cur_uleb(&c->v, in->vals_end, &raw));
		self[node] = pmodel_add(self[node], pstore_mul(ember_unzigzag(raw), in->factor));
	}
	return 0;
}

/* The same for the rows whose link is wanted; *any says whether one was. */
static int sum_profile_linked(const struct pstore_sum_in *in, struct cursors *c, uint32_t n,
			      int64_t *self, bool *any)
{
	uint64_t node = 0, delta, raw, link;
	int64_t v;

	*any = false;
	for (uint32_t i = 0; i < n; i++) {
		EMBER_FORWARD_IF_ERROR(ember_cur_uleb(&c->s, in->stacks_end, &delta));
		node += delta;
		if (node >= in->nnodes)
			return -PSTORE_ERR_CORRUPT;
		EMBER_FORWARD_IF_ERROR(ember_cur_uleb(&c->v, in->vals_end, &raw));
		EMBER_FORWARD_IF_ERROR(ember_cur_uleb(&c->l, in->links_end, &link));
		if (link > in->nlinks)
			return -PSTORE_ERR_CORRUPT;
		if (!in->want[link])
			continue;
		*any = true;
		v = pstore_mul(ember_unzigzag(raw), in->factor);
		self[node] = pmodel_add(self[node], v);
		if (in->parts)
			EMBER_FORWARD_IF_ERROR(pstore_attr_part(in->parts, in->tab, (uint32_t)node,
								(uint32_t)link, v));
	}
	return 0;
}

/* Profile i noted in the result: a rollup's as the profiles it sums. */
static void note(const struct pstore_sum_in *in, size_t i)
{
	const struct pstore_rollup_prof *rp = in->rollup ? &in->rollup[i] : NULL;

	if (!in->r)
		return;
	pstore_result_note(in->r, &in->profs[i]);
	if (!rp)
		return;
	in->r->profiles += rp->count - 1;
	if (rp->last > in->r->max_time)
		in->r->max_time = rp->last;
}

int pstore_rows_sum(const struct pstore_sum_in *in, int64_t *self, struct ember_diag *d)
{
	struct cursors c = { in->stacks, in->vals, in->links };
	int err = 0;
	bool any;

	for (size_t i = in->p_first; !err && i < in->p_end; i++) {
		const struct pstore_prof *p = &in->profs[i];

		if (p->time >= in->to)
			break; /* a series' profiles are in time order */
		if (p->time < in->from) {
			err = skip_rows(in, &c, p->nrows);
			continue;
		}
		any = true;
		if (in->read)
			(*in->read)++;
		err = in->want ? sum_profile_linked(in, &c, p->nrows, self, &any)
			       : sum_profile(in, &c, p->nrows, self);
		if (!err && any)
			note(in, i);
	}
	EMBER_FAIL_IF(err, d, -PSTORE_ERR_CORRUPT,
		      "row streams end early or name a stack past the dictionary");
	return 0;
}

int pstore_rows_decode_stacks(const uint8_t *p, const uint8_t *end, const struct pstore_prof *profs,
			  size_t p_first, size_t p_end, uint32_t nnodes, uint32_t *nodes,
			  struct ember_diag *d)
{
	size_t k = 0;

	for (size_t i = p_first; i < p_end; i++) {
		uint64_t node = 0, delta;

		for (uint32_t r = 0; r < profs[i].nrows; r++) {
			EMBER_FAIL_IF(ember_cur_uleb(&p, end, &delta) ||
					      (node += delta) >= nnodes,
				      d, -PSTORE_ERR_CORRUPT, "stack stream corrupt at row %zu",
				      k);
			nodes[k++] = (uint32_t)node;
		}
	}
	return 0;
}

int pstore_rows_decode_links(const uint8_t *p, const uint8_t *end, uint64_t nrows,
			     uint32_t nlinks, uint32_t *links, struct ember_diag *d)
{
	for (uint64_t i = 0; i < nrows; i++) {
		uint64_t l;

		EMBER_FAIL_IF(ember_cur_uleb(&p, end, &l) || l > nlinks, d, -PSTORE_ERR_CORRUPT,
			      "link stream corrupt at row %llu", (unsigned long long)i);
		links[i] = (uint32_t)l;
	}
	return 0;
}

int pstore_rows_decode_values(const uint8_t *p, const uint8_t *end, uint64_t nrows,
			  int64_t factor, int64_t *vals, size_t stride, struct ember_diag *d)
{
	for (uint64_t i = 0; i < nrows; i++) {
		int64_t v;

		EMBER_FAIL_IF(ember_cur_zigzag(&p, end, &v), d, -PSTORE_ERR_CORRUPT,
			      "value stream corrupt at row %llu", (unsigned long long)i);
		vals[i * stride] = pstore_mul(v, factor);
	}
	return 0;
}
