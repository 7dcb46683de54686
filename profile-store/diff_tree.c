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
#include "pstore_internal.h"

#include <inttypes.h>

struct dtree_out {
	const struct pstore_diff *d;
	struct pstore_out *o;
};

static int visit(void *ctx, uint32_t n, int depth, bool enter)
{
	struct dtree_out *w = ctx;
	const struct pstore_ntree *t = &w->d->ut;

	(void)depth;
	if (!enter)
		return pstore_out_str(w->o, t->first[n] ? "]}" : "}");
	if (n && t->first[t->parent.v[n]] != n)
		pstore_out_str(w->o, ",");
	pstore_out_str(w->o, "{\"name\":");
	pstore_out_json(w->o, n ? pstore_str(&t->names, t->name.v[n]) : "total");
	pstore_out_printf(w->o,
			  ",\"base_self\":%" PRId64 ",\"base_total\":%" PRId64
			  ",\"new_self\":%" PRId64 ",\"new_total\":%" PRId64,
			  w->d->ub_self.v[n], w->d->ub_total.v[n], t->self.v[n], t->total.v[n]);
	if (n && *pstore_ntree_file(t, t->name.v[n])) {
		pstore_out_str(w->o, ",\"file\":");
		pstore_out_json(w->o, pstore_ntree_file(t, t->name.v[n]));
	}
	if (n && t->line.v[n] > 0)
		pstore_out_printf(w->o, ",\"line\":%" PRId64, t->line.v[n]);
	return pstore_out_str(w->o, t->first[n] ? ",\"children\":[" : "");
}

int pstore_write_diff_tree_json(const struct pstore_diff *d, pstore_write_fn fn, void *ctx)
{
	struct pstore_out o;
	struct dtree_out w = { d, &o };
	int err;

	pstore_out_init(&o, fn, ctx);
	err = pstore_ntree_walk(&d->ut, visit, &w);
	return err ? (pstore_out_finish(&o), err) : pstore_out_finish(&o);
}
