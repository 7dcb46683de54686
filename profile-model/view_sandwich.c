/*
 * view_sandwich.c - a function's callers and callees, the two halves of
 * the sandwich view of Pyroscope and Parca (the UI's sandwich, GET
 * /api/v1/query's sandwich= and sandwich_side=, `ember query --sandwich`).
 *
 * Node by node parent first (restack.c).  A stack is taken from the
 * function's outermost frame, so a recursive one counts once.  Callees:
 * that frame and everything it called, rooted at the function.  Callers:
 * the frames from the function up to the root, in that order, every
 * frame a location of its own (an inlined chain read backwards is no
 * location); once a node has the function, its whole subtree's samples
 * are that caller chain's.
 */
#include "pmodel_internal.h"

static int callees_step(struct pmodel_restack *rs, uint32_t i, void *ctx)
{
	const struct pmodel_dict *d = &rs->r->dict;
	uint32_t p = d->node_parent.v[i], l = d->node_loc.v[i], k;

	if (rs->out[p]) /* the function is above: the whole location */
		return pmodel_restack_push(rs, rs->out[p], l, 0, d->locs.v[l].nlines,
					   &rs->out[i]);
	k = pmodel_loc_find_frame(d, &d->locs.v[l], ctx);
	if (k == UINT32_MAX) /* not (yet) through the function: out 0, dropped */
		return 0;
	return pmodel_restack_push(rs, 0, l, 0, k + 1, &rs->out[i]);
}

/* cur's stack in d extended by location l's frames [first, end) of r,
 * innermost first, each frame a location. */
static int push_reversed(struct pmodel_restack *rs, uint32_t l, uint32_t first, uint32_t end,
			 uint32_t *cur)
{
	for (uint32_t k = first; k < end; k++)
		EMBER_FORWARD_IF_ERROR(pmodel_restack_push(rs, *cur, l, k, 1, cur));
	return 0;
}

static int callers_step(struct pmodel_restack *rs, uint32_t i, void *ctx)
{
	const struct pmodel_dict *d = &rs->r->dict;
	uint32_t p = d->node_parent.v[i], l = d->node_loc.v[i], k, cur = 0;

	if (rs->out[p]) { /* below the function's outermost frame */
		rs->out[i] = rs->out[p];
		return 0;
	}
	k = pmodel_loc_find_frame(d, &d->locs.v[l], ctx);
	if (k == UINT32_MAX)
		return 0;
	EMBER_FORWARD_IF_ERROR(push_reversed(rs, l, k, pmodel_loc_frames(&d->locs.v[l]), &cur));
	for (uint32_t a = p; a; a = d->node_parent.v[a]) {
		uint32_t la = d->node_loc.v[a];

		EMBER_FORWARD_IF_ERROR(
			push_reversed(rs, la, 0, pmodel_loc_frames(&d->locs.v[la]), &cur));
	}
	rs->out[i] = cur;
	return 0;
}

int pmodel_result_sandwich(const struct pmodel_result *r, const char *name,
			   enum pmodel_sandwich_side side, struct pmodel_result **out)
{
	return pmodel_restack(r, side == PMODEL_SANDWICH_CALLERS ? callers_step : callees_step,
			      (void *)name, out);
}
