/*
 * out_tree.c - the JSON tree of a result, what a web UI draws its flame
 * graph from: {"name":"total","self":S,"total":T,"children":[...]}
 * ("file" too where the function's source file is known, "line" where
 * the frame's line is, one line for all the locations merged,
 * "frame_type" where its frames carry one, as OTLP's profile.frame.type
 * names it: "native", "kernel", "jvm", ...), children
 * sorted by name, written depth first without recursion.  One JSON value:
 * the document around it (the HTTP answer's envelope, a final newline) is
 * its caller's (profile-service/query_answers.c).
 */
#include "pmodel_internal.h"

#include <inttypes.h>

struct tree_out {
	const struct pmodel_ntree *t;
	struct pmodel_out *o;
};

static int visit(void *ctx, uint32_t n, int depth, bool enter)
{
	struct tree_out *w = ctx;
	const struct pmodel_ntree *t = w->t;

	(void)depth;
	if (!enter)
		return pmodel_out_str(w->o, t->first[n] ? "]}" : "}");
	pmodel_out_str(w->o, "{\"name\":");
	pmodel_out_json(w->o, n ? pmodel_str(&t->names, t->name.v[n]) : "total");
	if (n && *pmodel_ntree_file(t, t->name.v[n])) {
		pmodel_out_str(w->o, ",\"file\":");
		pmodel_out_json(w->o, pmodel_ntree_file(t, t->name.v[n]));
	}
	if (n && t->line.v[n] > 0)
		pmodel_out_printf(w->o, ",\"line\":%" PRId64, t->line.v[n]);
	if (n && *pmodel_ntree_type(t, t->name.v[n])) {
		pmodel_out_str(w->o, ",\"frame_type\":");
		pmodel_out_json(w->o, pmodel_ntree_type(t, t->name.v[n]));
	}
	pmodel_out_printf(w->o, ",\"self\":%" PRId64 ",\"total\":%" PRId64, t->self.v[n],
			  t->total.v[n]);
	return pmodel_out_str(w->o, t->first[n] ? ",\"children\":[" : "");
}

/* Commas: a node that is not its parent's first child is preceded by one. */
static int visit_commas(void *ctx, uint32_t n, int depth, bool enter)
{
	struct tree_out *w = ctx;

	if (enter && n && w->t->first[w->t->parent.v[n]] != n)
		pmodel_out_str(w->o, ",");
	return visit(ctx, n, depth, enter);
}

int pmodel_write_tree_json(const struct pmodel_result *r, pmodel_write_fn fn, void *ctx)
{
	struct pmodel_ntree t;
	struct pmodel_out o;
	struct tree_out w = { &t, &o };
	int err = pmodel_ntree_build(r, &t);

	pmodel_out_init(&o, fn, ctx);
	if (!err)
		err = pmodel_ntree_walk(&t, visit_commas, &w);
	pmodel_ntree_release(&t);
	return err ? (pmodel_out_finish(&o), err) : pmodel_out_finish(&o);
}
