/*
 * diff_tree.c - the differential JSON tree of a diff, what a web UI draws
 * its differential flame graph from: the union of both sides' trees,
 * each node with both sides' raw self and total values (a frame that
 * vanished has new values 0, a new one base values 0), children sorted
 * by name, written depth first without recursion:
 * {"name":"total","base_self":..,"base_total":..,"new_self":..,
 *  "new_total":..,"children":[...]}, with "file" and "line" as the plain
 * tree gives them (out_tree.c), from either side.  One JSON value, as
 * out_tree.c's: the document around it is its caller's.
 */
#include "pmodel_internal.h"

#include <inttypes.h>

struct dtree_out {
	const struct pmodel_diff *d;
	struct pmodel_out *o;
};

static int visit(void *ctx, uint32_t n, int depth, bool enter)
{
	struct dtree_out *w = ctx;
	const struct pmodel_ntree *t = &w->d->ut;

	(void)depth;
	if (!enter)
		return pmodel_out_str(w->o, t->first[n] ? "]}" : "}");
	if (n && t->first[t->parent.v[n]] != n)
		pmodel_out_str(w->o, ",");
	pmodel_out_str(w->o, "{\"name\":");
	pmodel_out_json(w->o, n ? pmodel_str(&t->names, t->name.v[n]) : "total");
	pmodel_out_printf(w->o,
			  ",\"base_self\":%" PRId64 ",\"base_total\":%" PRId64
			  ",\"new_self\":%" PRId64 ",\"new_total\":%" PRId64,
			  w->d->ub_self.v[n], w->d->ub_total.v[n], t->self.v[n], t->total.v[n]);
	if (n && *pmodel_ntree_file(t, t->name.v[n])) {
		pmodel_out_str(w->o, ",\"file\":");
		pmodel_out_json(w->o, pmodel_ntree_file(t, t->name.v[n]));
	}
	if (n && t->line.v[n] > 0)
		pmodel_out_printf(w->o, ",\"line\":%" PRId64, t->line.v[n]);
	return pmodel_out_str(w->o, t->first[n] ? ",\"children\":[" : "");
}

int pmodel_write_diff_tree_json(const struct pmodel_diff *d, pmodel_write_fn fn, void *ctx)
{
	struct pmodel_out o;
	struct dtree_out w = { d, &o };
	int err;

	pmodel_out_init(&o, fn, ctx);
	err = pmodel_ntree_walk(&d->ut, visit, &w);
	return err ? (pmodel_out_finish(&o), err) : pmodel_out_finish(&o);
}
