/*
 * connect_select.c - the merge methods of Pyroscope's query API over
 * Connect (connect.c routes them; docs/http-api.md, "Pyroscope's query API
 * (Connect)"): SelectMergeStacktraces, the selection's flame graph
 * (profsvc_flamegraph, the graph GET /pyroscope/render writes as JSON)
 * as a querier.v1.FlameGraph, and SelectMergeProfile, the pprof of
 * GET /api/v1/query?format=pprof (profsvc_query) uncompressed: its bytes
 * are the google.v1.Profile message the method answers (written as that
 * message's JSON for the JSON codec: api_connect_reply_packed).  The selection
 * is profile_typeID with label_selector as Ember's selector.
 */
#include "api_profiles.h"
#include "querier.pb-c.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#define DEFAULT_MAX_NODES 8192
#define PROFILE_CAP ((size_t)512 << 20) /* profsvc_query's answer cap */

/* The selection of type between start and end with selector (may be
 * empty); why set on a bad one. */
static int select_of(char *type, char *selector, int64_t start, int64_t end,
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

/* A failed read's answer (Connect's error form, as every answer here). */
static enum MHD_Result read_failed(struct api_server *srv, struct MHD_Connection *c,
				   const struct api_request *req, const struct api_profile_ctx *x,
				   int err, const char *why)
{
	struct profsvc_answer a = { 0 };

	return api_profile_answer(srv, c, req, x, err, &a, NULL, why);
}

/* g as a SelectMergeStacktracesResponse (its arrays borrowed). */
static enum MHD_Result flamegraph_reply(struct api_server *srv, struct MHD_Connection *c,
					const struct api_request *req,
					const struct pmodel_flamegraph *g)
{
	Querier__V1__SelectMergeStacktracesResponse out =
		QUERIER__V1__SELECT_MERGE_STACKTRACES_RESPONSE__INIT;
	Querier__V1__FlameGraph fg = QUERIER__V1__FLAME_GRAPH__INIT;
	Querier__V1__Level *levels = calloc(g->n_levels + 1, sizeof(*levels));
	Querier__V1__Level **lp = calloc(g->n_levels + 1, sizeof(*lp));
	enum MHD_Result ret = MHD_NO;

	if (levels && lp) {
		for (size_t d = 0; d < g->n_levels; d++) {
			querier__v1__level__init(&levels[d]);
			levels[d].values = g->levels[d];
			levels[d].n_values = g->level_len[d];
			lp[d] = &levels[d];
		}
		fg.names = (char **)g->names;
		fg.n_names = g->n_names;
		fg.levels = lp;
		fg.n_levels = g->n_levels;
		fg.total = g->total;
		fg.max_self = g->max_self;
		out.flamegraph = &fg;
		ret = api_connect_reply(srv, c, req, &out.base);
	}
	free(lp);
	free(levels);
	return ret;
}

enum MHD_Result api_connect_select_stacktraces(struct api_server *srv,
					       struct MHD_Connection *c,
					       struct api_request *req,
					       const struct api_profile_ctx *x,
					       const struct ProtobufCMessage *m)
{
	const Querier__V1__SelectMergeStacktracesRequest *in = (const void *)m;
	const char *bad = "";
	struct pmodel_flamegraph *g = NULL;
	struct pstore_selection sel;
	char why[512] = "";
	enum MHD_Result ret;
	int err = select_of(in->profile_typeid, in->label_selector, in->start, in->end, &sel,
			    &bad);

	if (!err && in->format > QUERIER__V1__PROFILE_FORMAT__PROFILE_FORMAT_FLAMEGRAPH)
		ret = api_profile_text(srv, c, req, 501,
				       "only the flame graph format is answered", NULL);
	else if (err)
		ret = api_profile_text(srv, c, req, 400, bad, NULL);
	else if ((err = profsvc_flamegraph(srv->profiles->svc, &x->ro, &sel,
					   in->max_nodes > 0 ? (size_t)in->max_nodes
							     : DEFAULT_MAX_NODES,
					   &g, why, sizeof(why))))
		ret = read_failed(srv, c, req, x, err, why);
	else
		ret = flamegraph_reply(srv, c, req, g);
	pmodel_flamegraph_free(g);
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
	const struct profsvc_output o = { .sz = sizeof(o), .format = "pprof" };
	const char *bad = "";
	struct pstore_selection sel;
	struct profsvc_answer a;
	char why[512] = "";
	enum MHD_Result ret;
	int err = select_of(in->profile_typeid, in->label_selector, in->start, in->end, &sel,
			    &bad);

	if (err)
		ret = api_profile_text(srv, c, req, 400, bad, NULL);
	else if ((err = profsvc_query(srv->profiles->svc, &x->ro, &sel, &o, &a, why,
				      sizeof(why))))
		ret = api_profile_answer(srv, c, req, x, err, &a, NULL, why);
	else
		ret = profile_reply(srv, c, req, &a);
	return ret;
}
