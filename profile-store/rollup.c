/*
 * rollup.c - a rollup: the profiles of one partition's blocks summed per
 * series and step-aligned bucket of time (docs/profile-store-format.md,
 * "Rollups"), so a query over a long range reads one profile a series and
 * step instead of every profile.  The blocks are read back into a staging
 * head (merge.c), the profiles of each (series, bucket) become one: their
 * rows summed per (stack, attribute set), their totals, durations,
 * samples and coverage summed, and the count of profiles and the time of
 * the last kept beside it (the ROLLUP section), so that a query answered
 * from rollups gives the same sums, profile count and time span as one
 * of full resolution.  A sample's span and trace are dropped (a rollup
 * cannot answer a link filter); its attribute set is kept.  The rollup is
 * a block of the same format named "rollups/<partition>-<sha256>.pblk",
 * put and read back like a block, with no log ranges and no parents: it
 * replaces nothing, and names its sources in the ROLLUP section.
 */
#include "pstore_block.h"
#include "pstore_catalog.h"
#include "pstore_compact.h"
#include "pstore_head.h"
#include "pstore_series.h"

struct agg {
	const struct pstore_head *h; /* the staged blocks */
	int64_t step;
	const struct pstore_rollup_prof *staged; /* pstore_rollup_in's counts */
	EMBER_VEC(struct pstore_prof) profs;
	EMBER_VEC(struct pstore_rollup_prof) counts;
	EMBER_VEC(uint32_t) row_node;
	EMBER_VEC(int64_t) row_val;
	EMBER_VEC(uint32_t) row_link;
	EMBER_VEC(int64_t) totals;
	struct pstore_covs cov, scratch_cov;
	struct pstore_linktab links;	/* attribute sets only: no span, no trace */
	uint32_t *link_map;		/* staged link id -> ours, UINT32_MAX unset */
	struct pstore_rows rows;	/* one bucket's rows, summed */
};

int64_t pstore_rollup_bucket(int64_t t, int64_t step)
{
	int64_t m = t % step;

	return t - (m < 0 ? m + step : m);
}

/* Staged profiles by series, bucket, then time. */
static int cmp_staged(const void *a, const void *b, void *ctx)
{
	const struct agg *g = ctx;
	const struct pstore_prof *x = &g->h->profs.v[*(const uint32_t *)a],
				 *y = &g->h->profs.v[*(const uint32_t *)b];
	int64_t bx = pstore_rollup_bucket(x->time, g->step), by = pstore_rollup_bucket(y->time, g->step);

	if (x->series != y->series)
		return x->series < y->series ? -1 : 1;
	if (bx != by)
		return bx < by ? -1 : 1;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* Our id for staged link l: its attribute set alone (0: it has none). */
static int map_link(struct agg *g, uint32_t l, uint32_t *out)
{
	const char *a = pstore_linktab_attrs_of(&g->h->links, l);
	struct pstore_link k = { 0 };

	if (g->link_map[l] != UINT32_MAX) {
		*out = g->link_map[l];
		return 0;
	}
	if (a)
		EMBER_FORWARD_IF_ERROR(pstore_linktab_attrs(&g->links, a, strlen(a),
							    PSTORE_MAX_ATTR_SETS, &k.attrs));
	*out = 0;
	if (k.attrs)
		EMBER_FORWARD_IF_ERROR(pstore_linktab_intern(&g->links, &k, out));
	g->link_map[l] = *out;
	return 0;
}

/* Profile p's rows into g->rows (links mapped). */
static int gather_rows(struct agg *g, const struct pstore_prof *p, uint32_t ncols)
{
	const struct pstore_head *h = g->h;

	for (uint32_t r = 0; r < p->nrows; r++) {
		uint32_t link = 0;

		if (p->link_off != PS_NO_LINKS && h->row_link.v[p->link_off + r])
			EMBER_FORWARD_IF_ERROR(map_link(g, h->row_link.v[p->link_off + r], &link));
		EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&g->rows.node, h->row_node.v[p->row_off + r]));
		EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&g->rows.link, link));
		for (uint32_t c = 0; c < ncols; c++)
			EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&g->rows.val,
						h->row_val.v[p->val_off + (size_t)r * ncols + c]));
	}
	return 0;
}

/* The summed rows as the rollup profile np's. */
static int put_rows(struct agg *g, struct pstore_prof *np, uint32_t ncols)
{
	bool any = false;

	EMBER_FORWARD_IF_ERROR(pstore_rows_normalize(&g->rows));
	np->nrows = (uint32_t)g->rows.node.n;
	np->row_off = g->row_node.n;
	np->val_off = g->row_val.n;
	for (size_t r = 0; r < g->rows.link.n; r++)
		any |= g->rows.link.v[r] != 0;
	np->link_off = any ? g->row_link.n : PS_NO_LINKS;
	for (size_t r = 0; r < g->rows.node.n; r++) {
		EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&g->row_node, g->rows.node.v[r]));
		if (any)
			EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&g->row_link, g->rows.link.v[r]));
	}
	for (size_t v = 0; v < (size_t)np->nrows * ncols; v++)
		EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&g->row_val, g->rows.val.v[v]));
	return 0;
}

static int cmp_cov(const void *a, const void *b)
{
	const struct pstore_cov *x = a, *y = b;

	if (x->build_id != y->build_id)
		return x->build_id < y->build_id ? -1 : 1;
	return x->reason < y->reason ? -1 : x->reason > y->reason;
}

/* The coverage gathered in scratch_cov, summed per (build ID, reason). */
static int put_cov(struct agg *g, struct pstore_prof *np)
{
	struct pstore_covs *c = &g->scratch_cov;

	ember_qsort(c->v, c->n, sizeof(*c->v), cmp_cov);
	np->cov_off = (uint32_t)g->cov.n;
	for (size_t i = 0; i < c->n; i++) {
		if (g->cov.n > np->cov_off && !cmp_cov(&g->cov.v[g->cov.n - 1], &c->v[i])) {
			g->cov.v[g->cov.n - 1].samples += c->v[i].samples;
			continue;
		}
		EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&g->cov, c->v[i]));
	}
	np->ncov = (uint32_t)(g->cov.n - np->cov_off);
	return 0;
}

/* Staged profiles idx[0..n) (one series and bucket, in time order) as one. */
static int put_bucket(struct agg *g, const uint32_t *idx, size_t n)
{
	const struct pstore_head *h = g->h;
	struct pstore_prof np = h->profs.v[idx[0]];
	uint32_t ncols = h->series.series.v[np.series].ntypes;
	struct pstore_rollup_prof rp = { 0, INT64_MIN };

	g->rows.node.n = g->rows.val.n = g->rows.link.n = 0;
	g->rows.ncols = ncols;
	g->scratch_cov.n = 0;
	np.duration = np.samples = np.resolved = 0;
	np.tot_off = (uint32_t)g->totals.n;
	for (uint32_t c = 0; c < ncols; c++)
		EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&g->totals, 0));
	for (size_t i = 0; i < n; i++) {
		const struct pstore_prof *p = &h->profs.v[idx[i]];
		struct pstore_rollup_prof sums = { 1, p->time };

		if (g->staged)
			sums = g->staged[idx[i]];
		rp.count += sums.count;
		rp.last = sums.last > rp.last ? sums.last : rp.last;
		np.duration += p->duration;
		np.samples += p->samples;
		np.resolved += p->resolved;
		for (uint32_t c = 0; c < ncols; c++)
			g->totals.v[np.tot_off + c] = pmodel_add(g->totals.v[np.tot_off + c],
								 h->totals.v[p->tot_off + c]);
		for (uint32_t k = 0; k < p->ncov; k++)
			EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&g->scratch_cov, h->cov.v[p->cov_off + k]));
		EMBER_FORWARD_IF_ERROR(gather_rows(g, p, ncols));
	}
	EMBER_FORWARD_IF_ERROR(put_rows(g, &np, ncols));
	EMBER_FORWARD_IF_ERROR(put_cov(g, &np));
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&g->counts, rp));
	return EMBER_VEC_APPEND(&g->profs, np);
}

/* Every staged profile summed into its (series, bucket)'s. */
static int aggregate(struct agg *g)
{
	const struct pstore_head *h = g->h;
	struct pstore_u32s ord = { 0 };
	int err = 0;

	g->link_map = malloc((h->links.v.n + 1) * sizeof(*g->link_map));
	if (!g->link_map)
		return -ENOMEM;
	memset(g->link_map, 0xff, (h->links.v.n + 1) * sizeof(*g->link_map));
	g->link_map[0] = 0;
	for (uint32_t i = 0; !err && i < h->profs.n; i++)
		if (h->state.v[i] == PS_VISIBLE)
			err = EMBER_VEC_APPEND(&ord, i);
	if (!err)
		ember_qsort_r(ord.v, ord.n, sizeof(*ord.v), cmp_staged, g);
	for (size_t i = 0, j; !err && i < ord.n; i = j) {
		const struct pstore_prof *p = &h->profs.v[ord.v[i]];
		int64_t b = pstore_rollup_bucket(p->time, g->step);

		for (j = i + 1; j < ord.n; j++) {
			const struct pstore_prof *q = &h->profs.v[ord.v[j]];

			if (q->series != p->series || pstore_rollup_bucket(q->time, g->step) != b)
				break;
		}
		err = put_bucket(g, ord.v + i, j - i);
	}
	EMBER_VEC_FREE(&ord);
	return err;
}

static void agg_release(struct agg *g)
{
	EMBER_VEC_FREE(&g->profs);
	EMBER_VEC_FREE(&g->counts);
	EMBER_VEC_FREE(&g->row_node);
	EMBER_VEC_FREE(&g->row_val);
	EMBER_VEC_FREE(&g->row_link);
	EMBER_VEC_FREE(&g->totals);
	EMBER_VEC_FREE(&g->cov);
	EMBER_VEC_FREE(&g->scratch_cov);
	pstore_linktab_release(&g->links);
	pstore_rows_release(&g->rows);
	free(g->link_map);
}

static int write_rollup(struct pstore *s, const struct agg *g, const struct pstore_rollup_in *in,
			struct pstore_block **out, struct ember_diag *d)
{
	struct pstore_u32s sel = { 0 };
	struct pstore_block_src src;
	int err = 0;

	for (uint32_t i = 0; !err && i < g->profs.n; i++)
		err = EMBER_VEC_APPEND(&sel, i);
	src = (struct pstore_block_src){
		.dict = &g->h->dict,
		.series = &g->h->series,
		.profs = g->profs.v,
		.sel = sel.v,
		.nsel = sel.n,
		.row_node = g->row_node.v,
		.row_val = g->row_val.v,
		.row_link = g->row_link.v,
		.links = &g->links,
		.totals = g->totals.v,
		.cov = g->cov.v,
		.partition = in->partition,
		.partition_ns = in->partition_ns,
		.zstd_level = s->opts.zstd_level,
		.rollup_step = g->step,
		.rollup = g->counts.v,
		.sources = in->sources,
		.nsources = in->nsources,
	};
	if (!err)
		err = pstore_encode_put(s, &src, out, d);
	EMBER_VEC_FREE(&sel);
	return err;
}

int pstore_rollup_write(struct pstore *s, const struct pstore_head *h,
			const struct pstore_rollup_in *in, struct pstore_block **out,
			struct ember_diag *d)
{
	struct agg g = { .h = h, .step = in->step, .staged = in->counts };
	int err;

	*out = NULL;
	EMBER_FAIL_IF(in->step <= 0 || in->partition_ns % in->step ||
			      pstore_rollup_bucket(in->partition, in->step) != in->partition,
		      d, -EINVAL, "store: a rollup step of %lld ns does not divide the partition",
		      (long long)in->step);
	err = aggregate(&g);
	if (!err && g.profs.n)
		err = write_rollup(s, &g, in, out, d);
	agg_release(&g);
	return err;
}

int pstore_rollup_build(struct pstore *s, struct pstore_block *const *blocks, size_t n,
			int64_t step, struct pstore_block **out, struct ember_diag *d)
{
	struct pstore_strs names = { 0 };
	struct pstore_head *h = NULL;
	struct pstore_rollup_in in;
	int err = n ? 0 : -EINVAL;

	for (size_t i = 0; !err && i < n; i++)
		err = EMBER_VEC_APPEND(&names, blocks[i]->name);
	if (!err)
		err = pstore_merge_stage(s, blocks, n, &h, d);
	if (!err) {
		in = (struct pstore_rollup_in){ .step = step, .partition = blocks[0]->meta.partition,
						.partition_ns = blocks[0]->meta.partition_ns,
						.sources = names.v, .nsources = names.n };
		err = pstore_rollup_write(s, h, &in, out, d);
	}
	pstore_head_unref(h);
	EMBER_VEC_FREE(&names);
	return err;
}
