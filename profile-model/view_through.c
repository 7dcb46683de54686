/*
 * view_through.c - the samples whose stack passes through a frame of one
 * name anywhere in it, each whole: pprof's -focus by a function's name,
 * the UI's "only stacks through this frame" and GET /api/v1/query's
 * through=.  focus.c keeps a root-first call path instead (focus=).
 *
 * Node by node parent first (restack.c): a node's stack passes through
 * the frame when its parent's does or its own location has the frame.
 */
#include "pmodel_internal.h"

static int through_step(struct pmodel_restack *rs, uint32_t i, void *ctx)
{
	const struct pmodel_dict *d = &rs->r->dict;
	uint32_t p = d->node_parent.v[i], l = d->node_loc.v[i];
	bool through = (p && !rs->drop[p]) ||
		       pmodel_loc_find_frame(d, &d->locs.v[l], ctx) != UINT32_MAX;

	rs->drop[i] = !through;
	return pmodel_restack_push(rs, rs->out[p], l, 0, d->locs.v[l].nlines, &rs->out[i]);
}

int pmodel_result_through(const struct pmodel_result *r, const char *name,
			  struct pmodel_result **out)
{
	return pmodel_restack(r, through_step, (void *)name, out);
}
