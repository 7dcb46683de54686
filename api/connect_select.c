/*
 * connect_select.c - the merge methods of Pyroscope's query API over
 * Connect (connect.c routes them; docs/http-api.md, "Pyroscope's query API
 * (Connect)"): SelectMergeStacktraces, the selection's flame graph
 * (profsvc_flamegraph, the graph GET /pyroscope/render writes as JSON)
 * as a querier.v1.FlameGraph, and SelectMergeProfile, the pprof of
 * GET /api/v1/query?format=pprof&max_nodes= (profsvc_query; max_nodes
 * absent or 0: the whole profile, as Pyroscope's default) uncompressed: its bytes
 * are the google.v1.Profile message the method answers (written as that
 * message's JSON for the JSON codec: api_connect_reply_packed).  The
 * selection is profile_typeID with label_selector as Ember's selector, its
 * samples those linked to span_selector's spans or trace_id_selector's
 * traces when given, and those whose stack begins with
 * stack_trace_selector's call site (Ember's focus=, pstore_selection's
 * focus: applied to the merge) when it is not empty (api_connect_filters,
 * shared with the other selects).
 */
#include "api_profiles.h"
#include "querier.pb-c.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#define DEFAULT_MAX_NODES 8192
#define PROFILE_CAP ((size_t)512 << 20) /* profsvc_query's answer cap */

int api_connect_select_of(char *type, char *selector, int64_t start, int64_t end,
			  struct pstore_selection *sel, const char **why)
{
	if (!*type) {
		*why = "profile_typeID is required (name:sample_type:sample_unit:period_type:"
		       "period_unit)";
		return -EINVAL;
	}
	EMBER_FORWARD_IF_ERROR(api_connect_selection(1, &selector, start, end, sel, why));
	sel->type = type;
	return 0;
}

enum MHD_Result api_connect_read_failed(struct api_server *srv, struct MHD_Connection *c,
					const struct api_request *req,
					const struct api_profile_ctx *x, int err, const char *why)
{
	struct profsvc_answer a = { 0 };

	return api_profile_answer(srv, c, req, x, err, &a, NULL, why);
}

Querier__V1__Level **api_connect_levels(const struct pmodel_flamegraph *g)
{
	Querier__V1__Level **lp = calloc(1, (g->n_levels + 1) * (sizeof(*lp) + sizeof(**lp)));
	Querier__V1__Level *levels = (Querier__V1__Level *)(lp + g->n_levels + 1);

	for (size_t d = 0; lp && d < g->n_levels; d++) {
		querier__v1__level__init(&levels[d]);
		levels[d].values = g->levels[d];
		levels[d].n_values = g->level_len[d];
		lp[d] = &levels[d];
	}
	return lp;
}

/* g as a SelectMergeStacktracesResponse, or (span) the same bytes as
 * SelectMergeSpanProfileResponse (its arrays borrowed). */
static enum MHD_Result flamegraph_reply(struct api_server *srv, struct MHD_Connection *c,
					const struct api_request *req,
					const struct pmodel_flamegraph *g, bool span)
{
	Querier__V1__SelectMergeStacktracesResponse out =
		QUERIER__V1__SELECT_MERGE_STACKTRACES_RESPONSE__INIT;
	Querier__V1__SelectMergeSpanProfileResponse sout =
		QUERIER__V1__SELECT_MERGE_SPAN_PROFILE_RESPONSE__INIT;
	Querier__V1__FlameGraph fg = QUERIER__V1__FLAME_GRAPH__INIT;
	enum MHD_Result ret = MHD_NO;

	fg.levels = api_connect_levels(g);
	if (fg.levels) {
		fg.names = (char **)g->names;
		fg.n_names = g->n_names;
		fg.n_levels = g->n_levels;
		fg.total = g->total;
		fg.max_self = g->max_self;
		out.flamegraph = &fg;
		sout.flamegraph = &fg;
		ret = api_connect_reply(srv, c, req, span ? &sout.base : &out.base);
	}
	free(fg.levels);
	return ret;
}

enum MHD_Result api_connect_flamegraph(struct api_server *srv, struct MHD_Connection *c,
				       struct api_request *req, const struct api_profile_ctx *x,
				       const struct pstore_selection *sel, int64_t max_nodes,
				       bool span)
{
	struct pmodel_flamegraph *g = NULL;
	char why[512] = "";
	enum MHD_Result ret;
	int err = profsvc_flamegraph(x->svc, &x->ro, sel,
				     max_nodes > 0 ? (size_t)max_nodes : DEFAULT_MAX_NODES, &g, why,
				     sizeof(why));

	ret = err ? api_connect_read_failed(srv, c, req, x, err, why)
		  : flamegraph_reply(srv, c, req, g, span);
	pmodel_flamegraph_free(g);
	return ret;
}

/* stack's call site (its names borrowed) as focus, sel's focus. */
static int call_site_focus(const struct Types__V1__StackTraceSelector *stack,
			   struct api_focus *focus, struct pstore_selection *sel, char *why,
			   size_t why_size)
{
	size_t n = stack ? stack->n_call_site : 0;

	*focus = (struct api_focus){ 0 };
	if (!n)
		return 0;
	focus->v = malloc(n * sizeof(*focus->v));
	if (!focus->v) {
		snprintf(why, why_size, "stack_trace_selector: out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		focus->v[i] = stack->call_site[i]->name;
	focus->n = n;
	sel->focus = focus->v;
	sel->n_focus = n;
	return 0;
}

int api_connect_filters(const struct Types__V1__StackTraceSelector *stack, char *const *spans,
			size_t n_span, char *const *traces, size_t n_trace,
			struct api_links *links, struct api_focus *focus,
			struct pstore_selection *sel, char *why, size_t why_size)
{
	*focus = (struct api_focus){ 0 };
	EMBER_FORWARD_IF_ERROR(api_links_from_lists(spans, n_span, traces, n_trace, links, why,
						    why_size));
	sel->links = &links->f;
	return call_site_focus(stack, focus, sel, why, why_size);
}

/* The answer of a refused request: 501 when what it asks is not read. */
static enum MHD_Result refused(struct api_server *srv, struct MHD_Connection *c,
			       const struct api_request *req, int err, const char *why)
{
	return api_profile_text(srv, c, req,
				err == -ENOTSUP ? 501 : err == -ENOMEM ? 500 : 400, why, NULL);
}

enum MHD_Result api_connect_select_stacktraces(struct api_server *srv,
					       struct MHD_Connection *c,
					       struct api_request *req,
					       const struct api_profile_ctx *x,
					       const struct ProtobufCMessage *m)
{
	const Querier__V1__SelectMergeStacktracesRequest *in = (const void *)m;
	const char *bad = "";
	struct pstore_selection sel;
	struct api_links links;
	struct api_focus focus;
	char why[256] = "";
	enum MHD_Result ret;
	int err = api_connect_select_of(in->profile_typeid, in->label_selector, in->start,
					in->end, &sel, &bad);

	if (err)
		return api_profile_text(srv, c, req, 400, bad, NULL);
	if (in->format > QUERIER__V1__PROFILE_FORMAT__PROFILE_FORMAT_FLAMEGRAPH)
		return api_profile_text(srv, c, req, 501,
					"only the flame graph format is answered", NULL);
	err = api_connect_filters(in->stack_trace_selector, in->span_selector,
				  in->n_span_selector, in->trace_id_selector,
				  in->n_trace_id_selector, &links, &focus, &sel, why, sizeof(why));
	if (err)
		return refused(srv, c, req, err, why);
	ret = api_connect_flamegraph(srv, c, req, x, &sel, in->max_nodes, false);
	api_focus_release(&focus);
	return ret;
}

/* The gzip'd pprof of a (released) uncompressed into an answer. */
static enum MHD_Result profile_reply(struct api_server *srv, struct MHD_Connection *c,
				     const struct api_request *req, struct profsvc_answer *a)
{
	struct ember_buf plain;
	char why[256] = "";
	int err;

	ember_buf_init_account(&plain, PROFILE_CAP, req->acct);
	err = pprof_decompress(a->body.data, a->body.len, &plain, why, sizeof(why));
	ember_buf_release(&a->body);
	if (err) {
		ember_buf_release(&plain);
		return api_profile_text(srv, c, req, 500, "the merged pprof does not decompress",
					NULL);
	}
	return api_connect_reply_packed(srv, c, req, &perftools__profiles__profile__descriptor,
					&plain);
}

enum MHD_Result api_connect_select_profile(struct api_server *srv, struct MHD_Connection *c,
					   struct api_request *req,
					   const struct api_profile_ctx *x,
					   const struct ProtobufCMessage *m)
{
	const Querier__V1__SelectMergeProfileRequest *in = (const void *)m;
	const struct profsvc_output o = {
		.sz = sizeof(o), .format = "pprof",
		.max_nodes = in->max_nodes > 0 ? (size_t)in->max_nodes : 0, /* absent: whole */
	};
	const char *bad = "";
	struct pstore_selection sel;
	struct profsvc_answer a;
	struct api_links links;
	struct api_focus focus;
	char why[512] = "";
	int err = api_connect_select_of(in->profile_typeid, in->label_selector, in->start,
					in->end, &sel, &bad);

	if (err)
		return api_profile_text(srv, c, req, 400, bad, NULL);
	err = api_connect_filters(in->stack_trace_selector, NULL, 0, in->trace_id_selector,
				  in->n_trace_id_selector, &links, &focus, &sel, why, sizeof(why));
	if (err)
		return refused(srv, c, req, err, why);
	err = profsvc_query(x->svc, &x->ro, &sel, &o, &a, why, sizeof(why));
	api_focus_release(&focus);
	if (err)
		return api_profile_answer(srv, c, req, x, err, &a, NULL, why);
	return profile_reply(srv, c, req, &a);
}
