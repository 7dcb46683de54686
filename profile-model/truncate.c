/*
 * truncate.c - a result cut to its largest nodes, as Grafana Pyroscope
 * cuts the pprof of SelectMergeProfile when the request sets maxNodes
 * (its symdb pprofTree): the nodes of the result's tree of frame names
 * (ntree.c: inlined functions separate nodes) are ranked by total as the
 * flame graph ranks them (pmodel_ntree_cutoff), and on every stack the
 * frames below the cut-off, a leaf-side suffix of its path, are replaced
 * by one location of a function named "other".  Stacks that come out
 * equal merge, so the total is kept.
 *
 * Where Ember differs from Pyroscope's code: exactly the cut frames go
 * (its truncateLocations keeps one location more than it cut, seemingly
 * by mistake), a location whose inlined frames are cut in part keeps its
 * other lines (Pyroscope cuts whole locations), and "other" has no
 * mapping (Pyroscope gives it mapping 1, adding one to a profile with
 * none).
 */
#include "pmodel_internal.h"

#define OTHER "other"

struct trunc {
	const struct pmodel_result *r;
	struct pmodel_ntree t;
	int64_t cutoff;		/* 0: nothing cut */
	uint32_t *leaf;		/* per node of r: the tree node of its leaf frame */
	uint32_t *out;		/* per node of r: its stack in d */
	bool *cut;		/* per node of r: its stack in d ends in "other" */
	struct pmodel_dict d;	/* the cut stacks */
	struct pmodel_import im; /* r's dictionary into d */
	uint32_t other;		/* the location "other" of d */
};

/* The location "other" of d. */
static int other_loc(struct pmodel_dict *d, uint32_t *out)
{
	struct pmodel_func f = { 0 };
	struct pmodel_line ln = { 0, 0 };

	EMBER_FORWARD_IF_ERROR(pmodel_strtab_intern0(&d->str, OTHER, &f.name));
	f.system_name = f.name;
	EMBER_FORWARD_IF_ERROR(pmodel_dict_func(d, &f, &ln.func));
	return pmodel_dict_loc(d, 0, 0, 0, &ln, 1, out);
}

/* The tree, its cut-off and the maps from r's nodes. */
static int trunc_init(struct trunc *tr, const struct pmodel_result *r, size_t max_nodes)
{
	size_t n = pmodel_dict_nodes(&r->dict), tn;
	int64_t *v;

	tr->r = r;
	tr->leaf = malloc(n * sizeof(*tr->leaf));
	tr->out = calloc(n, sizeof(*tr->out));
	tr->cut = calloc(n, sizeof(*tr->cut));
	if (!tr->leaf || !tr->out || !tr->cut)
		return -ENOMEM;
	EMBER_FORWARD_IF_ERROR(pmodel_ntree_build_leaves(r, &tr->t, tr->leaf));
	EMBER_FORWARD_IF_ERROR(pmodel_dict_init(&tr->d));
	EMBER_FORWARD_IF_ERROR(pmodel_import_init(&tr->im, &r->dict, &tr->d));
	EMBER_FORWARD_IF_ERROR(other_loc(&tr->d, &tr->other));
	tn = pmodel_ntree_count(&tr->t);
	v = malloc(tn * sizeof(*v));
	if (!v)
		return -ENOMEM;
	memcpy(v, tr->t.total.v + 1, (tn - 1) * sizeof(*v));
	tr->cutoff = pmodel_ntree_cutoff(v, tn - 1, max_nodes);
	free(v);
	return 0;
}

static void trunc_release(struct trunc *tr)
{
	pmodel_ntree_release(&tr->t);
	free(tr->leaf);
	free(tr->out);
	free(tr->cut);
	pmodel_import_release(&tr->im);
	pmodel_dict_release(&tr->d);
}

/* How many of node i's frames (outermost first) stay: those before the
 * outermost one below the cut-off. */
static uint32_t kept_frames(const struct trunc *tr, uint32_t i)
{
	const struct pmodel_loc *l = &tr->r->dict.locs.v[tr->r->dict.node_loc.v[i]];
	uint32_t k = l->nlines ? l->nlines : 1, keep = k, tn = tr->leaf[i];

	if (!tr->cutoff)
		return k;
	for (uint32_t j = 0; j < k; j++, tn = tr->t.parent.v[tn]) /* j: from the leaf */
		if (tr->t.total.v[tn] < tr->cutoff)
			keep = k - 1 - j;
	return keep;
}

/* The stack of node i of r in d: its parent's, then its location whole,
 * or the frames it keeps and "other". */
static int cut_node(struct trunc *tr, uint32_t i)
{
	const struct pmodel_dict *rd = &tr->r->dict;
	uint32_t p = rd->node_parent.v[i], l = rd->node_loc.v[i], loc, cur = tr->out[p];
	uint32_t nlines = rd->locs.v[l].nlines, keep;

	if (tr->cut[p]) {
		tr->out[i] = cur;
		tr->cut[i] = true;
		return 0;
	}
	keep = kept_frames(tr, i);
	if (keep == (nlines ? nlines : 1)) {
		EMBER_FORWARD_IF_ERROR(pmodel_import_loc(&tr->im, l, &loc));
		return pmodel_dict_node(&tr->d, cur, loc, &tr->out[i]);
	}
	if (keep) { /* the outermost lines of an inlined chain: the last ones */
		EMBER_FORWARD_IF_ERROR(
			pmodel_import_loc_lines(&tr->im, l, nlines - keep, keep, &loc));
		EMBER_FORWARD_IF_ERROR(pmodel_dict_node(&tr->d, cur, loc, &cur));
	}
	tr->cut[i] = true;
	return pmodel_dict_node(&tr->d, cur, tr->other, &tr->out[i]);
}

/* Every node of r cut into d. */
static int cut_all(struct trunc *tr)
{
	for (uint32_t i = 1; i < pmodel_dict_nodes(&tr->r->dict); i++)
		EMBER_FORWARD_IF_ERROR(cut_node(tr, i));
	return 0;
}

int pmodel_result_truncate(const struct pmodel_result *r, size_t max_nodes,
			   struct pmodel_result **out)
{
	struct trunc tr = { 0 };
	struct pmodel_result *c = NULL;
	int err = trunc_init(&tr, r, max_nodes);

	err = err ? err : cut_all(&tr);
	/* r's values and attributed parts moved to their cut stacks in c */
	err = err ? err : pmodel_result_remap(r, &tr.d, tr.out, &c);
	trunc_release(&tr);
	if (!err)
		*out = c;
	return err;
}
