/*
 * coverage.c - symbolization coverage recounted over a staged head, after
 * a compaction's resolver named frames that were addresses: per profile,
 * the samples whose every frame resolved, and per build ID the samples
 * with one of its frames unresolved and why (the resolver's reason, else
 * the one recorded at ingest).  Samples are the values of the profile's
 * first "count" column, else one per stack.  The set of unresolved build
 * IDs along each stack is shared between a node and its parent when the
 * node adds nothing, so the count is one pass over the nodes and one over
 * the rows.
 */
#include "pstore_compact.h"
#include "pstore_head.h"
#include "pstore_resolve.h"
#include "pstore_series.h"

struct cset {
	uint32_t bid;  /* string id in the series table */
	int32_t next;  /* the rest of the set, -1 when none */
};

struct recount {
	struct pstore_head *h;
	EMBER_VEC(struct cset) pool;
	int32_t *node_set;  /* per node: its set, -1 empty */
	uint32_t *loc_bid;  /* per location: build ID string, UINT32_MAX resolved */
};

static bool in_set(const struct recount *rc, int32_t set, uint32_t bid)
{
	for (; set >= 0; set = rc->pool.v[set].next)
		if (rc->pool.v[set].bid == bid)
			return true;
	return false;
}

static int loc_bids(struct recount *rc)
{
	const struct pmodel_dict *d = &rc->h->dict;

	rc->loc_bid = malloc((d->locs.n + 1) * sizeof(*rc->loc_bid));
	if (!rc->loc_bid)
		return -ENOMEM;
	for (size_t i = 0; i < d->locs.n; i++) {
		const struct pmodel_loc *l = &d->locs.v[i];
		const char *bid =
			l->mapping ? pmodel_str(&d->str, d->maps.v[l->mapping - 1].build_id) : "";

		rc->loc_bid[i] = UINT32_MAX;
		if (!l->nlines)
			EMBER_FORWARD_IF_ERROR(pmodel_strtab_intern0(&rc->h->series.str, bid, &rc->loc_bid[i]));
	}
	return 0;
}

static int node_sets(struct recount *rc)
{
	const struct pmodel_dict *d = &rc->h->dict;
	size_t n = pmodel_dict_nodes(d);

	rc->node_set = malloc(n * sizeof(*rc->node_set));
	if (!rc->node_set)
		return -ENOMEM;
	rc->node_set[0] = -1;
	for (size_t i = 1; i < n; i++) {
		int32_t parent = rc->node_set[d->node_parent.v[i]];
		uint32_t bid = rc->loc_bid[d->node_loc.v[i]];

		rc->node_set[i] = parent;
		if (bid == UINT32_MAX || in_set(rc, parent, bid))
			continue;
		if (rc->pool.n >= INT32_MAX)
			return -E2BIG;
		EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&rc->pool, ((struct cset){ bid, parent })));
		rc->node_set[i] = (int32_t)(rc->pool.n - 1);
	}
	return 0;
}

static int count_col(const struct pstore_seriestab *t, uint32_t series)
{
	const struct pstore_series *s = &t->series.v[series];

	for (uint32_t c = 0; c < s->ntypes; c++)
		if (pmodel_type_is_count(
			    pmodel_str(&t->str, t->types.v[t->type_ids.v[s->type_off + c]].f[2])))
			return (int)c;
	return -1;
}

static uint32_t reason_for(struct recount *rc, const struct pstore_reasons *reasons,
			   const struct pstore_cov *old, size_t nold, uint32_t bid)
{
	const char *b = pmodel_str(&rc->h->series.str, bid);
	uint32_t id = 0;

	for (size_t i = 0; reasons && i < reasons->n; i++)
		if (strcmp(reasons->v[i].build_id, b) == 0 &&
		    !pmodel_strtab_intern0(&rc->h->series.str, reasons->v[i].reason, &id))
			return id;
	for (size_t i = 0; i < nold; i++)
		if (old[i].build_id == bid)
			return old[i].reason;
	pmodel_strtab_intern0(&rc->h->series.str, *b ? "unsymbolized" : "no_build_id", &id);
	return id;
}

static int recount_profile(struct recount *rc, struct pstore_prof *p, const struct pstore_cov *old,
			   const struct pstore_reasons *reasons, struct pstore_covs *out)
{
	const struct pstore_head *h = rc->h;
	int col = count_col(&h->series, p->series);
	uint32_t ncols = h->series.series.v[p->series].ntypes;
	const struct pstore_cov *prev = old + p->cov_off;
	size_t nprev = p->ncov, start = out->n;

	p->samples = p->resolved = 0;
	for (uint32_t r = 0; r < p->nrows; r++) {
		int32_t set = rc->node_set[h->row_node.v[p->row_off + r]];
		uint64_t w = col < 0 ? 1
				     : (uint64_t)llabs(
					       h->row_val.v[p->val_off + (size_t)r * ncols + col]);

		p->samples += w;
		p->resolved += set < 0 ? w : 0;
		for (; set >= 0; set = rc->pool.v[set].next) {
			size_t k = start;

			for (; k < out->n && out->v[k].build_id != rc->pool.v[set].bid; k++)
				;
			if (k == out->n)
				EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(
					out, ((struct pstore_cov){ rc->pool.v[set].bid, 0, 0 })));
			out->v[k].samples += w;
		}
	}
	for (size_t k = start; k < out->n; k++)
		out->v[k].reason = reason_for(rc, reasons, prev, nprev, out->v[k].build_id);
	p->cov_off = (uint32_t)start;
	p->ncov = (uint32_t)(out->n - start);
	return 0;
}

int pstore_coverage_recount(struct pstore_head *h, const struct pstore_reasons *reasons)
{
	struct recount rc = { .h = h };
	struct pstore_covs cov = { 0 };
	int err = loc_bids(&rc);

	if (!err)
		err = node_sets(&rc);
	for (size_t i = 0; !err && i < h->profs.n; i++)
		err = recount_profile(&rc, &h->profs.v[i], h->cov.v, reasons, &cov);
	if (!err) {
		free(h->cov.v);
		h->cov.v = cov.v;
		h->cov.n = cov.n;
		h->cov.alloc = cov.alloc;
	} else {
		EMBER_VEC_FREE(&cov);
	}
	free(rc.node_set);
	free(rc.loc_bid);
	EMBER_VEC_FREE(&rc.pool);
	return err;
}
