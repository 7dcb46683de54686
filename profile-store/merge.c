/*
 * merge.c - the merge compaction: the blocks of one time partition read
 * back into a staging head (each block's dictionary interned into one,
 * its series into one table, every row decoded), the caller's resolver
 * applied to the staged dictionary (the coverage recounted when it
 * resolved something), the rows' links (spans) staged with them, and the
 * whole written as one block whose parents
 * are the blocks it replaces.  A closed partition (its end plus one head
 * age in the past) is merged as soon as it has two blocks; the current
 * one once it has four, which bounds both the blocks a query opens and
 * the rewriting.
 */
#include "pstore_block.h"
#include "pstore_catalog.h"
#include "pstore_compact.h"
#include "pstore_head.h"
#include "pstore_index.h"
#include "pstore_resolve.h"
#include "pstore_series.h"

#define OPEN_MERGE_AT 4


struct stage {
	struct pstore_head *h;
	struct pmodel_import im;
	uint32_t *series;	/* block series -> staged series */
	struct ember_buf sb, vb;
};

/* Column c of series s decoded into vals (stride ncols). */
static int load_column(struct stage *st, struct pstore_block *b, const struct pstore_bdata *bd,
		       uint32_t first, uint32_t c, uint32_t ncols, uint64_t nrows, int64_t *vals,
		       struct ember_diag *d)
{
	const struct pstore_stream *vs = &bd->streams.v[first + 1 + c];
	int64_t factor = vs->factor;

	if (vs->kind == PS_STREAM_DERIVED) {
		vs = &bd->streams.v[first + 1 + vs->ref];
		factor = pstore_mul(factor, vs->factor);
	}
	EMBER_FORWARD_IF_ERROR(pstore_block_read_stream(b, bd, vs, &st->vb, d));
	return pstore_rows_decode_values((const uint8_t *)st->vb.data,
				     (const uint8_t *)st->vb.data + st->vb.len, nrows, factor,
				     vals + c, ncols, d);
}

/* A series' link stream decoded into *out (nrows ids, caller frees). */
static int load_links(struct stage *st, struct pstore_block *b, const struct pstore_bdata *bd,
		      const struct pstore_stream *ls, uint64_t nrows, uint32_t **out,
		      struct ember_diag *d)
{
	uint32_t *links = malloc((nrows + 1) * sizeof(*links));
	int err = links ? pstore_block_read_stream(b, bd, ls, &st->vb, d) : -ENOMEM;

	if (!err)
		err = pstore_rows_decode_links((const uint8_t *)st->vb.data,
					       (const uint8_t *)st->vb.data + st->vb.len, nrows,
					       (uint32_t)bd->links.v.n, links, d);
	if (err) {
		free(links);
		return err;
	}
	*out = links;
	return 0;
}

static int copy_cov(struct stage *st, const struct pstore_block *b, const struct pstore_bdata *bd,
		    const struct pstore_prof *p, struct pstore_prof *np)
{
	np->cov_off = (uint32_t)st->h->cov.n;
	for (uint32_t k = 0; k < p->ncov; k++) {
		struct pstore_cov c = bd->cov.v[p->cov_off + k];

		EMBER_FORWARD_IF_ERROR(pmodel_strtab_intern0(&st->h->series.str,
					     pmodel_str(&b->series.str, c.build_id), &c.build_id));
		EMBER_FORWARD_IF_ERROR(pmodel_strtab_intern0(&st->h->series.str,
					     pmodel_str(&b->series.str, c.reason), &c.reason));
		EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&st->h->cov, c));
	}
	return 0;
}

/* The links of a profile's rows (links: block ids, NULL when the series
 * has none) as the staged head's: none when no row has one. */
static int stage_links(struct stage *st, const struct pstore_bdata *bd, const uint32_t *links,
		       uint32_t nrows, struct pstore_prof *np)
{
	bool any = false;

	np->link_off = PS_NO_LINKS;
	for (uint32_t r = 0; links && r < nrows; r++)
		any |= links[r] != 0;
	if (!any)
		return 0;
	np->link_off = st->h->row_link.n;
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_RESERVE(&st->h->row_link, st->h->row_link.n + nrows));
	for (uint32_t r = 0; r < nrows; r++) {
		uint32_t id = 0;

		if (links[r])
			EMBER_FORWARD_IF_ERROR(pstore_linktab_copy(&st->h->links, &bd->links,
								   links[r], &id));
		st->h->row_link.v[st->h->row_link.n++] = id;
	}
	return 0;
}

/* The profiles of series s, their rows from nodes/vals/links. */
static int stage_profiles(struct stage *st, const struct pstore_block *b,
			  const struct pstore_bdata *bd, uint32_t s, const uint32_t *nodes,
			  const int64_t *vals, const uint32_t *links, uint32_t ncols)
{
	size_t row = 0;

	for (size_t i = bd->series_prof.v[s]; i < bd->series_prof.v[s + 1]; i++) {
		const struct pstore_prof *p = &bd->profs.v[i];
		struct pstore_prof np = *p;

		np.series = st->series[s];
		np.row_off = st->h->row_node.n;
		np.val_off = st->h->row_val.n;
		np.tot_off = (uint32_t)st->h->totals.n;
		EMBER_FORWARD_IF_ERROR(stage_links(st, bd, links ? links + row : NULL, p->nrows, &np));
		for (uint32_t r = 0; r < p->nrows; r++, row++) {
			uint32_t to;

			EMBER_FORWARD_IF_ERROR(pmodel_import_node(&st->im, nodes[row], &to));
			EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&st->h->row_node, to));
		}
		EMBER_FORWARD_IF_ERROR(EMBER_VEC_RESERVE(&st->h->row_val,
					  st->h->row_val.n + (size_t)p->nrows * ncols));
		if (p->nrows)
			memcpy(st->h->row_val.v + st->h->row_val.n, vals + (row - p->nrows) * ncols,
			       (size_t)p->nrows * ncols * sizeof(*vals));
		st->h->row_val.n += (size_t)p->nrows * ncols;
		for (uint32_t c = 0; c < ncols; c++)
			EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&st->h->totals, bd->totals.v[p->tot_off + c]));
		EMBER_FORWARD_IF_ERROR(copy_cov(st, b, bd, p, &np));
		EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&st->h->state, PS_VISIBLE));
		EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&st->h->profs, np));
		st->h->visible++;
	}
	return 0;
}

static int stage_rows(struct stage *st, struct pstore_block *b, const struct pstore_bdata *bd,
		      uint32_t s, struct ember_diag *d)
{
	uint32_t first = bd->series_stream.v[s], ncols = b->series.series.v[s].ntypes;
	uint64_t nrows = 0;
	uint32_t *nodes, *links = NULL;
	int64_t *vals;
	const struct pstore_stream *ls = pstore_link_stream(bd, &b->series, s);
	int err;

	for (size_t i = bd->series_prof.v[s]; i < bd->series_prof.v[s + 1]; i++)
		nrows += bd->profs.v[i].nrows;
	nodes = malloc((nrows + 1) * sizeof(*nodes));
	vals = malloc((nrows * ncols + 1) * sizeof(*vals));
	err = nodes && vals ? pstore_block_read_stream(b, bd, &bd->streams.v[first], &st->sb, d)
			    : -ENOMEM;
	if (!err)
		err = pstore_rows_decode_stacks((const uint8_t *)st->sb.data,
					    (const uint8_t *)st->sb.data + st->sb.len, bd->profs.v,
					    bd->series_prof.v[s], bd->series_prof.v[s + 1],
					    (uint32_t)pmodel_dict_nodes(&bd->dict), nodes, d);
	for (uint32_t c = 0; !err && c < ncols; c++)
		err = load_column(st, b, bd, first, c, ncols, nrows, vals, d);
	if (!err && ls)
		err = load_links(st, b, bd, ls, nrows, &links, d);
	if (!err)
		err = stage_profiles(st, b, bd, s, nodes, vals, links, ncols);
	free(nodes);
	free(vals);
	free(links);
	return err;
}

static int stage_block(struct stage *st, struct pstore_block *b, struct ember_diag *d)
{
	struct pstore_bdata *bd = NULL;
	int err = pstore_block_load(b, &bd, d);

	if (!err)
		err = pmodel_import_init(&st->im, &bd->dict, &st->h->dict);
	if (!err && !(st->series = malloc((b->series.series.n + 1) * sizeof(*st->series))))
		err = -ENOMEM;
	for (uint32_t s = 0; !err && s < b->series.series.n; s++)
		err = pstore_seriestab_copy(&st->h->series, &b->series, s, &st->series[s]);
	for (uint32_t s = 0; !err && s < b->series.series.n; s++)
		if (bd->series_prof.v[s] < bd->series_prof.v[s + 1])
			err = stage_rows(st, b, bd, s, d);
	pmodel_import_release(&st->im);
	free(st->series);
	st->series = NULL;
	pstore_bdata_unref(bd);
	return err;
}

static int cmp_range(const void *a, const void *b)
{
	const struct pstore_walrange *x = a, *y = b;
	int c = memcmp(x->writer, y->writer, 16);

	return c ? c : x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The union of the blocks' log ranges, adjacent ranges joined. */
static int wal_union(struct pstore_block **blocks, size_t n, struct pstore_walranges *out)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < blocks[i]->meta.wal.n; j++)
			EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(out, blocks[i]->meta.wal.v[j]));
	ember_qsort(out->v, out->n, sizeof(*out->v), cmp_range);
	for (size_t i = 0; i < out->n; i++) {
		if (k && !memcmp(out->v[k - 1].writer, out->v[i].writer, 16) &&
		    out->v[i].lo <= out->v[k - 1].hi + 1) {
			if (out->v[i].hi > out->v[k - 1].hi)
				out->v[k - 1].hi = out->v[i].hi;
			continue;
		}
		out->v[k++] = out->v[i];
	}
	out->n = k;
	return 0;
}

static int resolve_stage(struct pstore *s, struct pstore_head *h, bool *changed,
			 struct ember_diag *d)
{
	struct pstore_reasons reasons;
	int err;

	*changed = false;
	if (!s->opts.resolver)
		return 0;
	err = pstore_reasons_init(&reasons);
	err = err ? err : pstore_resolve_dict(&h->dict, s->opts.resolver, s->opts.resolver_ctx, &reasons,
			      changed, d);
	if (!err && *changed)
		err = pstore_coverage_recount(h, &reasons);
	pstore_reasons_free(&reasons);
	return err;
}

static int write_merged(struct pstore *s, const struct pstore_head *h, struct pstore_block **blocks,
			size_t n, struct pstore_block **out, struct ember_diag *d)
{
	struct pstore_walranges wal = { 0 };
	struct pstore_strs parents = { 0 };
	struct pstore_u32s sel = { 0 };
	struct pstore_block_src src;
	int err = wal_union(blocks, n, &wal);

	for (size_t i = 0; !err && i < n; i++)
		err = EMBER_VEC_APPEND(&parents, blocks[i]->name);
	for (uint32_t i = 0; !err && i < h->profs.n; i++)
		err = EMBER_VEC_APPEND(&sel, i);
	if (!err) {
		src = (struct pstore_block_src){
			.dict = &h->dict,
			.series = &h->series,
			.profs = h->profs.v,
			.sel = sel.v,
			.nsel = sel.n,
			.row_node = h->row_node.v,
			.row_val = h->row_val.v,
			.row_link = h->row_link.v,
			.links = &h->links,
			.totals = h->totals.v,
			.cov = h->cov.v,
			.partition = blocks[0]->meta.partition,
			/* the parents' (their log ranges cover that span) */
			.partition_ns = blocks[0]->meta.partition_ns,
			.parents = parents.v,
			.nparents = parents.n,
			.wal = wal.v,
			.nwal = wal.n,
			.zstd_level = s->opts.zstd_level,
		};
		err = pstore_encode_put(s, &src, out, d);
	}
	EMBER_VEC_FREE(&wal);
	EMBER_VEC_FREE(&parents);
	EMBER_VEC_FREE(&sel);
	return err;
}

/* A shared store: the entry "merged supersedes blocks", then the list
 * from the index (where the entry is skipped when another replica's
 * merge of these blocks came first: merged is then left unreferenced). */
static int publish_shared(struct pstore *s, struct pstore_block *merged,
			  struct pstore_block **blocks, size_t n, struct ember_diag *d)
{
	int err = pstore_index_add(s, merged, blocks, n, d);

	pstore_block_unref(merged);
	if (!err)
		err = pstore_index_refresh(s, NULL, d);
	if (!err)
		atomic_fetch_add(&s->merges, 1);
	return err;
}

static int cmp_block_name(const void *a, const void *b)
{
	return strcmp((*(struct pstore_block *const *)a)->name,
		      (*(struct pstore_block *const *)b)->name);
}

int pstore_merge_stage(struct pstore *s, struct pstore_block *const *blocks, size_t n,
		       struct pstore_head **out, struct ember_diag *d)
{
	struct stage st = { .h = pstore_head_new(0, 0, &s->ident) };
	int err = st.h ? 0 : -ENOMEM;

	ember_buf_init(&st.sb, 0);
	ember_buf_init(&st.vb, 0);
	for (size_t i = 0; !err && i < n; i++)
		err = stage_block(&st, blocks[i], d);
	ember_buf_release(&st.sb);
	ember_buf_release(&st.vb);
	if (err) {
		pstore_head_unref(st.h);
		return err;
	}
	*out = st.h;
	return 0;
}

int pstore_merge_blocks(struct pstore *s, struct pstore_block **blocks, size_t n,
			bool only_if_resolved, struct ember_diag *d)
{
	struct pstore_head *h = NULL;
	struct pstore_block *merged = NULL;
	bool changed = false;
	int err;

	/* replicas merging the same blocks write the same bytes: one name */
	if (s->index)
		qsort(blocks, n, sizeof(*blocks), cmp_block_name);
	err = pstore_merge_stage(s, blocks, n, &h, d);
	if (!err)
		err = resolve_stage(s, h, &changed, d);
	if (!err && (changed || !only_if_resolved))
		err = write_merged(s, h, blocks, n, &merged, d);
	pstore_head_unref(h);
	if (err || !merged)
		return err;
	if (s->index)
		return publish_shared(s, merged, blocks, n, d);
	pthread_mutex_lock(&s->mu);
	for (size_t k = 0; k < n; k++)
		for (size_t i = 0; i < s->blocks.n; i++)
			if (s->blocks.v[i] == blocks[k]) {
				pstore_catalog_remove(s, i);
				break;
			}
	err = pstore_catalog_add(s, merged);
	pthread_mutex_unlock(&s->mu);
	atomic_fetch_add(&s->merges, 1);
	return err;
}

/* Size tier of a block: sizes within a factor of 4 share one. */
static int tier(const struct pstore_block *b)
{
	int t = 0;

	for (uint64_t sz = b->size / 4096; sz >= 4; sz /= 4)
		t++;
	return t;
}

/* Whether block k belongs to the merge of b's partition: a closed
 * partition merges all its blocks, an open one the blocks of a size tier
 * that has OPEN_MERGE_AT of them (so a growing partition's big block is
 * not rewritten at every merge: each row is rewritten about log4 times,
 * not once per merge).  A partition is a start and a length: blocks
 * written with another partition_ns are never merged with these (their
 * log ranges cover other spans). */
static bool picked(const struct pstore_block *k, const struct pstore_block *b, bool closed,
		   int t)
{
	return !k->corrupt && k->meta.partition == b->meta.partition &&
	       k->meta.partition_ns == b->meta.partition_ns && (closed || tier(k) == t);
}

/* Blocks by partition (start, length), tier, then list position. */
static int cmp_pick(const void *a, const void *b, void *ctx)
{
	struct pstore_block *const *v = ctx;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	const struct pstore_block *x = v[i], *y = v[j];

	if (x->meta.partition_ns != y->meta.partition_ns)
		return x->meta.partition_ns < y->meta.partition_ns ? -1 : 1;
	if (x->meta.partition != y->meta.partition)
		return x->meta.partition < y->meta.partition ? -1 : 1;
	if (tier(x) != tier(y))
		return tier(x) < tier(y) ? -1 : 1;
	return i < j ? -1 : i > j;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The end of the run of blocks sorted from `from` on that b picks. */
static size_t run_end(struct pstore_block *const *v, const uint32_t *ord, size_t n, size_t from,
		      bool closed)
{
	const struct pstore_block *b = v[ord[from]];
	size_t j = from;

	while (j < n && picked(v[ord[j]], b, closed, tier(b)))
		j++;
	return j;
}

int pstore_merge_pick(struct pstore_block *const *v, size_t n, int64_t now, int64_t head_age_ns,
		      struct pstore_u32s *out)
{
	struct pstore_u32s ord = { 0 };
	size_t best = 0, best_end = 0, best_first = SIZE_MAX;

	for (uint32_t i = 0; i < n; i++)
		if (!v[i]->corrupt)
			EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&ord, i));
	ember_qsort_r(ord.v, ord.n, sizeof(*ord.v), cmp_pick, (void *)v);
	for (size_t i = 0, j; i < ord.n; i = j) {
		const struct pstore_block *b = v[ord.v[i]];
		bool closed = now >= b->meta.partition + b->meta.partition_ns + head_age_ns;
		uint32_t first = UINT32_MAX;

		j = run_end(v, ord.v, ord.n, i, closed);
		for (size_t k = i; k < j; k++)
			first = ord.v[k] < first ? ord.v[k] : first;
		if (j - i >= (closed ? 2 : OPEN_MERGE_AT) && first < best_first) {
			best = i;
			best_end = j;
			best_first = first;
		}
	}
	out->n = 0;
	for (size_t k = best; k < best_end; k++)
		if (EMBER_VEC_APPEND(out, ord.v[k])) {
			EMBER_VEC_FREE(&ord);
			return -ENOMEM;
		}
	ember_qsort(out->v, out->n, sizeof(*out->v), cmp_u32);
	EMBER_VEC_FREE(&ord);
	return 0;
}

/* The blocks of the first partition due for a merge (referenced): the
 * blocks sorted once, so a pass costs n log n, not a count of the list
 * per block (issue 23: 0.2 s of CPU every pass at 7,000 blocks, under
 * the store's mutex). */
static int pick_partition(struct pstore *s, struct pstore_blocks *out)
{
	struct pstore_u32s sel = { 0 };
	int err;

	pthread_mutex_lock(&s->mu);
	err = pstore_merge_pick(s->blocks.v, s->blocks.n, pstore_now(s), s->opts.head_max_age_ns,
				&sel);
	for (size_t k = 0; !err && k < sel.n; k++)
		if (!(err = EMBER_VEC_APPEND(out, s->blocks.v[sel.v[k]])))
			pstore_block_ref(s->blocks.v[sel.v[k]]);
	pthread_mutex_unlock(&s->mu);
	EMBER_VEC_FREE(&sel);
	return err;
}

int pstore_compact_merge(struct pstore *s)
{
	char why[256];
	struct ember_diag d = ember_diag_make(why, sizeof(why));
	int err = 0;

	while (!err) {
		struct pstore_blocks todo = { 0 };

		err = pick_partition(s, &todo);
		if (err || !todo.n) {
			pstore_blocks_release(&todo);
			break;
		}
		err = pstore_merge_blocks(s, todo.v, todo.n, false, &d);
		pstore_blocks_release(&todo);
	}
	if (err)
		pr_warn("pstore: merging blocks: %s", why[0] ? why : pstore_strerror(err));
	return err;
}
