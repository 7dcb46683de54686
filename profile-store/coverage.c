/*
 * coverage.c - symbolization coverage recounted over a staged head, after
 * a compaction's resolver named frames that were addresses: per profile,
 * the samples whose every frame resolved, and per build ID the samples
 * with one of its frames unresolved and why (the resolver's reason, else
 * the one recorded at ingest).  Samples are the values of the profile's
 * first "count" column, else one per stack.  The set of unresolved build
 * IDs along each stack is shared between a node and its parent when the
 * node adds nothing, so the count is one pass over the nodes and one over
 * the rows; a profile's build IDs are found through a slot per string of
 * the series table, stamped with the profile, so a profile of many build
 * IDs costs linear time.
 */
#include "pstore_compact.h"
#include "pstore_head.h"
#include "pstore_resolve.h"
#include "pstore_series.h"

struct cset {
	uint32_t bid;  /* string id in the series table */
	int32_t next;  /* the rest of the set, -1 when none */
};

/* Per build ID string, what the profile being recounted (stamp) has. */
struct bid_slot {
	uint32_t stamp, pos;	      /* its row in the new coverage */
	uint32_t old_stamp, old_reason; /* its reason in the old coverage */
};

struct recount {
	struct pstore_head *h;
	EMBER_VEC(struct cset) pool;
	int32_t *node_set;  /* per node: its set, -1 empty */
	uint32_t *loc_bid;  /* per location: build ID string, UINT32_MAX resolved */
	struct bid_slot *slot; /* per string of the series table (as loc_bids left it) */
	uint32_t stamp;	    /* the profile being recounted, + 1 */
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
			   uint32_t bid)
{
	const char *b = pmodel_str(&rc->h->series.str, bid);
	const char *r = reasons ? pstore_reasons_find(reasons, b) : NULL;
	uint32_t id = 0;

	if (r && !pmodel_strtab_intern0(&rc->h->series.str, r, &id))
		return id;
	if (rc->slot[bid].old_stamp == rc->stamp)
		return rc->slot[bid].old_reason;
	pmodel_strtab_intern0(&rc->h->series.str, *b ? "unsymbolized" : "no_build_id", &id);
	return id;
}

/* The weight w of a row under build ID bid, its coverage row added when new. */
static int add_weight(struct recount *rc, struct pstore_covs *out, uint32_t bid, uint64_t w)
{
	struct bid_slot *sl = &rc->slot[bid];

	if (sl->stamp != rc->stamp) {
		EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(out, ((struct pstore_cov){ bid, 0, 0 })));
		sl->stamp = rc->stamp;
		sl->pos = (uint32_t)(out->n - 1);
	}
	out->v[sl->pos].samples += w;
	return 0;
}

static int recount_profile(struct recount *rc, struct pstore_prof *p, const struct pstore_cov *old,
			   const struct pstore_reasons *reasons, struct pstore_covs *out)
{
	const struct pstore_head *h = rc->h;
	int col = count_col(&h->series, p->series);
	uint32_t ncols = h->series.series.v[p->series].ntypes;
	size_t start = out->n;

	for (size_t i = p->ncov; i-- > 0;) { /* backwards: the first of a build ID wins */
		rc->slot[old[p->cov_off + i].build_id].old_stamp = rc->stamp;
		rc->slot[old[p->cov_off + i].build_id].old_reason = old[p->cov_off + i].reason;
	}
	p->samples = p->resolved = 0;
	for (uint32_t r = 0; r < p->nrows; r++) {
		int32_t set = rc->node_set[h->row_node.v[p->row_off + r]];
		uint64_t w = col < 0 ? 1
				     : (uint64_t)llabs(
					       h->row_val.v[p->val_off + (size_t)r * ncols + col]);

		p->samples += w;
		p->resolved += set < 0 ? w : 0;
		for (; set >= 0; set = rc->pool.v[set].next)
			EMBER_FORWARD_IF_ERROR(add_weight(rc, out, rc->pool.v[set].bid, w));
	}
	for (size_t k = start; k < out->n; k++)
		out->v[k].reason = reason_for(rc, reasons, out->v[k].build_id);
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
	/* every build ID is in the table by now: the old coverage's and loc_bids' */
	if (!err && !(rc.slot = calloc(pmodel_strtab_count(&h->series.str) + 1, sizeof(*rc.slot))))
		err = -ENOMEM;
	if (!err && h->profs.n >= UINT32_MAX)
		err = -E2BIG;
	for (size_t i = 0; !err && i < h->profs.n; i++) {
		rc.stamp = (uint32_t)i + 1;
		err = recount_profile(&rc, &h->profs.v[i], h->cov.v, reasons, &cov);
	}
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
	free(rc.slot);
	EMBER_VEC_FREE(&rc.pool);
	return err;
}
