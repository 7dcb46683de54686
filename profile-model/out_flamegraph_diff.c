/*
 * out_flamegraph_diff.c - a diff's flame graph as Grafana Pyroscope
 * encodes it (querier.v1's FlameGraphDiff, the flamebearer of format
 * "double" its GET /pyroscope/render-diff answers): the union of both
 * sides' trees (diff.c), seven numbers per node, the left (base) side's
 * x offset, total and self, the right (new) side's, and the name index.
 * The walk, the folding into "other" and the delta coding are the plain
 * graph's (out_flamebearer.c), run over two sides.  The legacy route's
 * JSON (profile-service) and the Connect method Diff read it.
 */
#include "pmodel_internal.h"

int pmodel_flamegraph_diff_new(const struct pmodel_diff *d, size_t max_nodes,
			       struct pmodel_flamegraph **out)
{
	const struct pmodel_fg_side side[2] = {
		{ d->ub_self.v, d->ub_total.v },
		{ d->ut.self.v, d->ut.total.v },
	};

	return pmodel_fg_build(&d->ut, side, 2, max_nodes, out);
}

int pmodel_write_flamebearer_diff(const struct pmodel_diff *d, size_t max_nodes,
				  pmodel_write_fn fn, void *ctx)
{
	struct pmodel_flamegraph *g;
	struct pmodel_out o;
	int err = pmodel_flamegraph_diff_new(d, max_nodes, &g);

	if (err)
		return err;
	pmodel_out_init(&o, fn, ctx);
	pmodel_fg_json(g, &o);
	pmodel_flamegraph_free(g);
	return pmodel_out_finish(&o);
}
