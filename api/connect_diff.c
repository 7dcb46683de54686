/*
 * connect_diff.c - Diff of Pyroscope's query API over Connect (connect.c
 * routes it; docs/http-api.md, "Pyroscope's query API (Connect)"): two
 * SelectMergeStacktraces requests, left and right, merged (GET
 * /api/v1/diff's two sides: base_* the left, new_* the right) and
 * answered as querier.v1's FlameGraphDiff (profsvc_flamegraph_diff):
 * seven numbers per node, leftTicks and rightTicks the sides' totals.
 * max_nodes: the left's, else the right's, else 8,192.  Each side's
 * stack_trace_selector focuses its own merge (base_focus=, new_focus=).
 */
#include "api_profiles.h"
#include "querier.pb-c.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#define DEFAULT_MAX_NODES 8192

/* One side's selection and filters into sel (links its IDs, focus its
 * call site); why set for the sender on a bad one. */
static int side_of(const Querier__V1__SelectMergeStacktracesRequest *in, const char *name,
		   struct pstore_selection *sel, struct api_links *links,
		   struct api_focus *focus, char *why, size_t why_size)
{
	const char *bad = "";

	if (!in) {
		snprintf(why, why_size, "%s: the request is required", name);
		return -EINVAL;
	}
	if (api_connect_select_of(in->profile_typeid, in->label_selector, in->start, in->end,
				  sel, &bad)) {
		snprintf(why, why_size, "%s: %s", name, bad);
		return -EINVAL;
	}
	return api_connect_filters(in->stack_trace_selector, in->span_selector,
				   in->n_span_selector, in->trace_id_selector,
				   in->n_trace_id_selector, links, focus, sel, why, why_size);
}

/* g (a diff's graph) as a DiffResponse answered (its arrays borrowed). */
static enum MHD_Result diff_reply(struct api_server *srv, struct MHD_Connection *c,
				  const struct api_request *req, const struct pmodel_flamegraph *g)
{
	Querier__V1__DiffResponse out = QUERIER__V1__DIFF_RESPONSE__INIT;
	Querier__V1__FlameGraphDiff fg = QUERIER__V1__FLAME_GRAPH_DIFF__INIT;
	enum MHD_Result ret = MHD_NO;

	fg.levels = api_connect_levels(g);
	if (fg.levels) {
		fg.names = (char **)g->names;
		fg.n_names = g->n_names;
		fg.n_levels = g->n_levels;
		fg.total = g->total;
		fg.max_self = g->max_self;
		fg.leftticks = g->left_total;
		fg.rightticks = g->right_total;
		out.flamegraph = &fg;
		ret = api_connect_reply(srv, c, req, &out.base);
	}
	free(fg.levels);
	return ret;
}

enum MHD_Result api_connect_diff(struct api_server *srv, struct MHD_Connection *c,
				 struct api_request *req, const struct api_profile_ctx *x,
				 const struct ProtobufCMessage *m)
{
	const Querier__V1__DiffRequest *in = (const void *)m;
	struct pstore_selection left, right;
	struct api_links left_links, right_links;
	struct api_focus focus[2] = { { 0 }, { 0 } };
	struct pmodel_flamegraph *g = NULL;
	int64_t max_nodes = 0;
	char why[512] = "";
	enum MHD_Result ret;
	int err = side_of(in->left, "left", &left, &left_links, &focus[0], why, sizeof(why));

	err = err ? err
		  : side_of(in->right, "right", &right, &right_links, &focus[1], why, sizeof(why));
	if (err) {
		api_focus_release(&focus[0]);
		return api_profile_text(srv, c, req, err == -ENOMEM ? 500 : 400, why, NULL);
	}
	max_nodes = in->left->max_nodes > 0 ? in->left->max_nodes : in->right->max_nodes;
	err = profsvc_flamegraph_diff(x->svc, &x->ro, &left, &right,
				      max_nodes > 0 ? (size_t)max_nodes : DEFAULT_MAX_NODES, &g,
				      why, sizeof(why));
	api_focus_release(&focus[0]);
	api_focus_release(&focus[1]);
	ret = err ? api_connect_read_failed(srv, c, req, x, err, why) : diff_reply(srv, c, req, g);
	pmodel_flamegraph_free(g);
	return ret;
}
