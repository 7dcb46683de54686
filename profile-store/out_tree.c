/*
 * out_tree.c - the JSON tree of a result, what a web UI draws its flame
 * graph from: {"name":"total","self":S,"total":T,"children":[...]}
 * ("file" too where the function's source file is known, "line" where
 * the frame's line is, one line for all the locations merged), children
 * sorted by name, written depth first without recursion.  One JSON value:
 * the document around it (the HTTP answer's envelope, a final newline) is
 * its caller's (profile-service/query.c).
 */
#include "pstore_internal.h"

#include <inttypes.h>

struct tree_out {
	const struct pstore_ntree *t;
	struct pstore_out *o;
};

static int visit(void *ctx, uint32_t n, int depth, bool enter)
{
	struct tree_out *w = ctx;
	const struct pstore_ntree *t = w->t;

	(void)depth;
	if (!enter)
		return pstore_out_str(w->o, t->first[n] ? "]}" : "}");
	pstore_out_str(w->o, "{\"name\":");
	pstore_out_json(w->o, n ? pstore_str(&t->names, t->name.v[n]) : "total");
	if (n && *pstore_ntree_file(t, t->name.v[n])) {
		pstore_out_str(w->o, ",\"file\":");
		pstore_out_json(w->o, pstore_ntree_file(t, t->name.v[n]));
	}
	if (n && t->line.v[n] > 0)
		pstore_out_printf(w->o, ",\"line\":%" PRId64, t->line.v[n]);
	pstore_out_printf(w->o, ",\"self\":%" PRId64 ",\"total\":%" PRId64, t->self.v[n],
			  t->total.v[n]);
	return pstore_out_str(w->o, t->first[n] ? ",\"children\":[" : "");
}

/* Commas: a node that is not its parent's first child is preceded by one. */
static int visit_commas(void *ctx, uint32_t n, int depth, bool enter)
{
	struct tree_out *w = ctx;

	if (enter && n && w->t->first[w->t->parent.v[n]] != n)
		pstore_out_str(w->o, ",");
	return visit(ctx, n, depth, enter);
}

int pstore_write_tree_json(const struct pstore_result *r, pstore_write_fn fn, void *ctx)
{
	struct pstore_ntree t;
	struct pstore_out o;
	struct tree_out w = { &t, &o };
	int err = pstore_ntree_build(r, &t);

	pstore_out_init(&o, fn, ctx);
	if (!err)
		err = pstore_ntree_walk(&t, visit_commas, &w);
	pstore_ntree_release(&t);
	return err ? (pstore_out_finish(&o), err) : pstore_out_finish(&o);
}
