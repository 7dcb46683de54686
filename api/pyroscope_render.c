/*
 * pyroscope_render.c - Grafana Pyroscope's legacy HTTP query routes, as
 * older Grafana panels and scripts call them (docs/http-api.md,
 * "Pyroscope's render API"): GET /pyroscope/render (the flamebearer
 * JSON with its timeline), GET /pyroscope/render-diff (the flamebearer
 * of format "double": leftQuery, leftFrom, leftUntil against rightQuery,
 * rightFrom, rightUntil, Ember's GET /api/v1/diff underneath), GET
 * /pyroscope/labels and GET /pyroscope/label-values (bare JSON arrays).
 * render takes Ember's focus= too (the flame graph's stacks under a call
 * path; the timeline stays the selection's totals).  Each is Ember's own query
 * underneath: query=TYPE{selector} is the selection of /api/v1/query
 * (the type before the braces, docs/http-api.md "Selections"), or
 * Pyroscope's older APP.TYPE{selector} (APP as service_name); from and
 * until as there (now-1h, epoch seconds or milliseconds, wire/'s
 * pyro_parse_time).  The answers are the profile service's
 * (profsvc_render, profsvc_render_diff, profsvc_label_list).
 */
#include "api_profiles.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define DEFAULT_MAX_NODES 8192
#define MAX_MAX_NODES (1u << 20)
#define MAX_QUERY 4096

/* Pyroscope's APP.TYPE{...} as {service_name="APP",...} of type TYPE
 * into q->selector / q->type; any other query as it is. */
struct legacy_query {
	char selector[MAX_QUERY + 64];
	char type[128];
};

static int legacy_name(const char *query, struct legacy_query *q, struct pstore_selection *sel,
		       char *why, size_t size)
{
	size_t head = strcspn(query, "{");
	const char *dot = memchr(query, '.', head), *rest = query + head;
	const char *last = dot;

	if (!head || !dot || memchr(query, ':', head))
		return 0; /* {..}, TYPE{..} or NAME:TYPE..{..}: Ember's syntax */
	while ((dot = memchr(dot + 1, '.', (size_t)(query + head - dot - 1))))
		last = dot;
	if (strlen(query) > MAX_QUERY || (size_t)(query + head - last) >= sizeof(q->type)) {
		snprintf(why, size, "query: longer than %d bytes\n", MAX_QUERY);
		return -EINVAL;
	}
	snprintf(q->type, sizeof(q->type), "%.*s", (int)(query + head - last - 1), last + 1);
	rest += *rest == '{';
	snprintf(q->selector, sizeof(q->selector), "{service_name=\"%.*s\"%s%s",
		 (int)(last - query), query, *rest && *rest != '}' ? "," : "",
		 *rest ? rest : "}");
	sel->selector = q->selector;
	sel->type = q->type;
	return 0;
}

/* The selection of every route here, under render-diff's names of a
 * side (alt, else NULL): query required. */
static int side_selection(struct MHD_Connection *c, const struct api_selection_names *alt,
			  struct legacy_query *q, struct pstore_selection *sel, char *why,
			  size_t size)
{
	EMBER_FORWARD_IF_ERROR(api_selection_from_params(c, NULL, alt, sel, why, size));
	if (!sel->selector || !*sel->selector) {
		snprintf(why, size, "%s: required (TYPE{selector}, e.g. "
				    "process_cpu:cpu:nanoseconds:cpu:nanoseconds{})\n",
			 alt ? alt->query : "query");
		return -EINVAL;
	}
	return legacy_name(sel->selector, q, sel, why, size);
}

static int selection(struct MHD_Connection *c, struct legacy_query *q,
		     struct pstore_selection *sel, char *why, size_t size)
{
	return side_selection(c, NULL, q, sel, why, size);
}

static int max_nodes(struct MHD_Connection *c, size_t *out, char *why, size_t size)
{
	const char *v = api_param(c, "maxNodes") ? api_param(c, "maxNodes")
						 : api_param(c, "max-nodes");
	uint64_t n = DEFAULT_MAX_NODES;

	if (v && (pyro_parse_uint(v, MAX_MAX_NODES, &n) || !n)) {
		snprintf(why, size, "maxNodes: '%.32s' is not 1 to %u nodes\n", v, MAX_MAX_NODES);
		return -EINVAL;
	}
	*out = (size_t)n;
	return 0;
}

static int render_params(struct MHD_Connection *c, struct legacy_query *q,
			 struct pstore_selection *sel, size_t *nodes, char *why, size_t size)
{
	const char *f = api_param(c, "format");

	if (f && strcmp(f, "json")) {
		snprintf(why, size, "format: '%.32s' is not json\n", f);
		return -EINVAL;
	}
	EMBER_FORWARD_IF_ERROR(selection(c, q, sel, why, size));
	return max_nodes(c, nodes, why, size);
}

enum MHD_Result api_pyroscope_render(struct api_server *srv, struct MHD_Connection *c,
				     struct api_request *req, const struct api_profile_ctx *x)
{
	struct legacy_query q;
	struct pstore_selection sel;
	struct api_focus focus;
	struct profsvc_answer a;
	char why[512] = "";
	size_t nodes;
	int err;

	if (render_params(c, &q, &sel, &nodes, why, sizeof(why)))
		return api_profile_error(srv, c, req, -EINVAL, why);
	err = api_focus_from_params(c, NULL, &focus, &sel, why, sizeof(why));
	if (err)
		return api_profile_error(srv, c, req, err, why);
	err = profsvc_render(x->svc, &x->ro, &sel, nodes, &a, why, sizeof(why));
	api_focus_release(&focus);
	return api_profile_answer(srv, c, req, x, err, &a, NULL, why);
}

enum MHD_Result api_pyroscope_render_diff(struct api_server *srv, struct MHD_Connection *c,
					  struct api_request *req, const struct api_profile_ctx *x)
{
	static const struct api_selection_names left = { "leftQuery", "leftFrom", "leftUntil" };
	static const struct api_selection_names right = { "rightQuery", "rightFrom",
							  "rightUntil" };
	struct legacy_query lq, rq;
	struct pstore_selection ls, rs;
	struct profsvc_answer a;
	char why[512] = "";
	size_t nodes;
	int err;

	if (side_selection(c, &left, &lq, &ls, why, sizeof(why)) ||
	    side_selection(c, &right, &rq, &rs, why, sizeof(why)) ||
	    max_nodes(c, &nodes, why, sizeof(why)))
		return api_profile_error(srv, c, req, -EINVAL, why);
	err = profsvc_render_diff(x->svc, &x->ro, &ls, &rs, nodes, &a, why,
				  sizeof(why));
	return api_profile_answer(srv, c, req, x, err, &a, NULL, why);
}

enum MHD_Result api_pyroscope_labels(struct api_server *srv, struct MHD_Connection *c,
				     struct api_request *req, const struct api_profile_ctx *x)
{
	bool values = req->route.ep == API_EP_PYROSCOPE_LABEL_VALUES;
	const char *name = values ? api_param(c, "label") : NULL;
	struct legacy_query q;
	struct pstore_selection sel;
	struct profsvc_answer a;
	char why[512] = "";
	int err;

	if (values && (!name || !*name))
		return api_profile_error(srv, c, req, -EINVAL, "label: required\n");
	if (selection(c, &q, &sel, why, sizeof(why)))
		return api_profile_error(srv, c, req, -EINVAL, why);
	err = profsvc_label_list(x->svc, &x->ro, &sel, name, &a, why, sizeof(why));
	return api_profile_answer(srv, c, req, x, err, &a, NULL, why);
}
