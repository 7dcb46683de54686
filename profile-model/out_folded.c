/*
 * out_folded.c - folded stacks as Brendan Gregg's stackcollapse scripts
 * write them and flamegraph.pl reads them: one line per stack with a
 * value, "root;caller;...;leaf value", frames named as in the flame
 * graph, lines in tree order (children sorted by name).
 */
#include "pmodel_internal.h"

#include <inttypes.h>

struct folded {
	const struct pmodel_ntree *t;
	struct pmodel_out *o;
	struct ember_buf path;
};

static int visit(void *ctx, uint32_t n, int depth, bool enter)
{
	struct folded *f = ctx;

	if (!enter || !n || !f->t->self.v[n])
		return 0;
	EMBER_FORWARD_IF_ERROR(pmodel_ntree_path(f->t, n, &f->path));
	pmodel_out_write(f->o, f->path.data, f->path.len);
	return pmodel_out_printf(f->o, " %" PRId64 "\n", f->t->self.v[n]);
	(void)depth;
}

int pmodel_write_folded(const struct pmodel_result *r, pmodel_write_fn fn, void *ctx)
{
	struct pmodel_ntree t;
	struct pmodel_out o;
	struct folded f = { .t = &t, .o = &o };
	int err = pmodel_ntree_build(r, &t);

	pmodel_out_init(&o, fn, ctx);
	ember_buf_init(&f.path, SIZE_MAX / 2);
	if (!err)
		err = pmodel_ntree_walk(&t, visit, &f);
	ember_buf_release(&f.path);
	pmodel_ntree_release(&t);
	return err ? (pmodel_out_finish(&o), err) : pmodel_out_finish(&o);
}
