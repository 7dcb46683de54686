/*
 * profile_query.c - GET /api/v1/query and GET /api/v1/diff over HTTP:
 * the parameters read (format, selection, span and trace IDs, the call
 * path to focus on, rows, thresholds, the flame graph's title, width and
 * orientation, a pprof's max_nodes, the views: through=, hide=,
 * sandwich=, sandwich_side=), the answer asked of the profile
 * service (profsvc_query, profsvc_diff: merged, resolved and written
 * there, whole) and sent with its headers (X-Ember-Profiles and
 * X-Ember-Total, and X-Ember-Hint when it selected nothing for a reason
 * the service names; a diff's X-Ember-Base-Profiles and
 * X-Ember-New-Profiles).
 * docs/http-api.md, "Query" and "Diff".
 */
#include "api_profiles.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_ROWS 100

static bool flag(struct MHD_Connection *c, const char *name)
{
	const char *v = api_param(c, name);

	return v && strcmp(v, "0") && strcmp(v, "false");
}

/* A query's max_nodes (pprof only; absent: 0, the whole profile). */
static int max_nodes_param(struct MHD_Connection *c, const char *format, size_t *out,
			   char *why, size_t size)
{
	const char *v = api_param(c, "max_nodes");
	uint64_t n = 0;

	if (!v)
		return 0;
	if (strcmp(format, "pprof")) {
		snprintf(why, size, "max_nodes: only with format=pprof");
		return -EINVAL;
	}
	if (pyro_parse_uint(v, UINT32_MAX, &n)) {
		snprintf(why, size, "max_nodes: '%.32s' is not a number of nodes", v);
		return -EINVAL;
	}
	*out = (size_t)n;
	return 0;
}

/* unsymbolized=: "module" (absent: the default) groups unsymbolized
 * frames per module, "frames" shows each (profsvc_output). */
static int unsymbolized_param(struct MHD_Connection *c, bool *frames, char *why, size_t size)
{
	const char *v = api_param(c, "unsymbolized");

	*frames = v && strcmp(v, "frames") == 0;
	if (v && !*frames && strcmp(v, "module") != 0) {
		snprintf(why, size, "unsymbolized: '%.32s' is not module or frames", v);
		return -EINVAL;
	}
	return 0;
}

/* The views (docs/http-api.md, "Views"): through=NAME, hide=PATTERN (the
 * profile service compiles it), sandwich=NAME and its
 * sandwich_side=callees (default) or callers. */
static int view_params(struct MHD_Connection *c, struct profsvc_output *o, char *why,
		       size_t size)
{
	const char *side = api_param(c, "sandwich_side");

	o->through = api_param(c, "through");
	o->hide = api_param(c, "hide");
	o->sandwich = api_param(c, "sandwich");
	if (side && strcmp(side, "callees") && strcmp(side, "callers")) {
		snprintf(why, size, "sandwich_side: '%.32s' is not callers or callees", side);
		return -EINVAL;
	}
	o->callers = side && !strcmp(side, "callers");
	return 0;
}

/* The output parameters: limit (rows) of a table, the title of a flame
 * graph, a query's flame graph's width and icicle and its pprof's
 * max_nodes, a diff's normalize, both's unsymbolized.  0 or -EINVAL
 * with why set. */
static int output_params(struct MHD_Connection *c, const char *format, bool diff,
			 struct profsvc_output *o, char *why, size_t size)
{
	const char *rows = api_param(c, "limit"), *width = api_param(c, "width");
	bool table = !strncmp(format, "top", 3) || !strncmp(format, "table", 5);
	uint64_t n = DEFAULT_ROWS, w = 0;

	*o = (struct profsvc_output){ .sz = sizeof(*o), .format = format,
				      .normalize = diff && flag(c, "normalize") };
	o->svg = (struct pmodel_svg_opts){ .sz = sizeof(o->svg), .title = api_param(c, "title"),
					   .icicle = !diff && flag(c, "icicle") };
	if (table && rows && pyro_parse_uint(rows, 1u << 30, &n)) {
		snprintf(why, size, "limit: '%.32s' is not a number of rows", rows);
		return -EINVAL;
	}
	if (!diff && !strcmp(format, "svg") && width &&
	    (pyro_parse_uint(width, 100000, &w) || w < 100)) {
		snprintf(why, size, "width: '%.16s' is not 100 to 100000 pixels", width);
		return -EINVAL;
	}
	o->rows = (size_t)n;
	o->svg.width = (int)w;
	EMBER_FORWARD_IF_ERROR(unsymbolized_param(c, &o->unsymbolized_frames, why, size));
	EMBER_FORWARD_IF_ERROR(view_params(c, o, why, size));
	return diff ? 0 : max_nodes_param(c, format, &o->max_nodes, why, size);
}

static enum MHD_Result unknown_format(struct api_server *srv, struct MHD_Connection *c,
				      const struct api_request *req, const char *f,
				      const char *list)
{
	char why[256];

	snprintf(why, sizeof(why), "format: '%.32s' is not one of %s", f, list);
	return api_profile_error(srv, c, req, -EINVAL, why);
}

/* The answer, or the error of making it (one past the answer's own cap:
 * 500). */
static enum MHD_Result send_answer(struct api_server *srv, struct MHD_Connection *c,
				   const struct api_request *req, const struct api_profile_ctx *x,
				   int err, struct profsvc_answer *a, const char *const *headers,
				   const char *why)
{
	if (err == -E2BIG && !(x->ro.account && x->ro.account->err))
		err = -PSTORE_ERR_CORRUPT;
	return api_profile_answer(srv, c, req, x, err, a, headers, why);
}

enum MHD_Result api_profile_query(struct api_server *srv, struct MHD_Connection *c,
				  struct api_request *req, const struct api_profile_ctx *x)
{
	const char *f = api_param(c, "format") ? api_param(c, "format") : "json";
	struct profsvc_output o;
	struct pstore_selection sel;
	struct api_links links;
	struct api_focus focus;
	struct profsvc_answer a;
	char why[512] = "", profiles[24], total[24];
	const char *headers[] = { "X-Ember-Profiles", profiles, "X-Ember-Total", total, NULL,
				  NULL, NULL };
	int err;

	if (!profsvc_format_known(f, false))
		return unknown_format(srv, c, req, f, "json, pprof, folded, top, top-text, svg");
	if (api_selection_from_params(c, NULL, NULL, &sel, why, sizeof(why)) ||
	    api_links_from_params(c, &links, why, sizeof(why)) ||
	    output_params(c, f, false, &o, why, sizeof(why)))
		return api_profile_error(srv, c, req, -EINVAL, why);
	err = api_focus_from_params(c, NULL, &focus, &sel, why, sizeof(why));
	if (err)
		return api_profile_error(srv, c, req, err, why);
	sel.links = &links.f;
	err = profsvc_query(x->svc, &x->ro, &sel, &o, &a, why, sizeof(why));
	api_focus_release(&focus);
	snprintf(profiles, sizeof(profiles), "%" PRIu64, a.profiles);
	snprintf(total, sizeof(total), "%" PRId64, a.total);
	if (!err && a.hint[0]) { /* why nothing was selected */
		headers[4] = "X-Ember-Hint";
		headers[5] = a.hint;
	}
	return send_answer(srv, c, req, x, err, &a, headers, why);
}

/* ---- diff -------------------------------------------------------------------- */

static int threshold(struct MHD_Connection *c, const char *name, double *out, char *why,
		     size_t size)
{
	const char *v = api_param(c, name);
	char *end;
	double d;

	if (!v)
		return 0;
	d = strtod(v, &end);
	if (end == v || *end || !(d > 0) || !isfinite(d)) {
		snprintf(why, size, "%s: '%.32s' is not a positive number", name, v);
		return -EINVAL;
	}
	*out = d;
	return 0;
}

static int diff_opts(struct MHD_Connection *c, struct pmodel_diff_opts *o, char *why, size_t size)
{
	*o = (struct pmodel_diff_opts){ .sz = sizeof(*o) };
	EMBER_FORWARD_IF_ERROR(threshold(c, "min_abs_pct", &o->min_abs_pct, why, size));
	EMBER_FORWARD_IF_ERROR(threshold(c, "min_rel", &o->min_rel, why, size));
	return threshold(c, "min_z", &o->min_z, why, size);
}

/* Both sides' selections, under Ember's and Pyroscope's names, and
 * their focus (base_focus, new_focus, else focus: into f[0], f[1],
 * released by the caller whatever the result). */
static int diff_selections(struct MHD_Connection *c, struct pstore_selection *bs,
			   struct pstore_selection *ns, struct api_focus f[2], char *why,
			   size_t size)
{
	static const struct api_selection_names left = { "leftQuery", "leftFrom", "leftUntil" };
	static const struct api_selection_names right = { "rightQuery", "rightFrom",
							  "rightUntil" };

	f[0] = f[1] = (struct api_focus){ 0 };
	if (api_selection_from_params(c, "base_", &left, bs, why, size) ||
	    api_selection_from_params(c, "new_", &right, ns, why, size))
		return -EINVAL;
	EMBER_FORWARD_IF_ERROR(api_focus_from_params(c, "base_", &f[0], bs, why, size));
	return api_focus_from_params(c, "new_", &f[1], ns, why, size);
}

enum MHD_Result api_profile_diff(struct api_server *srv, struct MHD_Connection *c,
				 struct api_request *req, const struct api_profile_ctx *x)
{
	const char *f = api_param(c, "format") ? api_param(c, "format") : "table";
	struct pstore_selection bs, ns;
	struct api_focus focus[2];
	struct pmodel_diff_opts d;
	struct profsvc_output o;
	struct profsvc_answer a;
	char why[512] = "", bp[24], np[24];
	const char *headers[] = { "X-Ember-Base-Profiles", bp, "X-Ember-New-Profiles", np, NULL };
	int err;

	if (!profsvc_format_known(f, true))
		return unknown_format(srv, c, req, f, "table, table-text, json, folded, svg, pprof");
	if (diff_opts(c, &d, why, sizeof(why)) || output_params(c, f, true, &o, why, sizeof(why)))
		return api_profile_error(srv, c, req, -EINVAL, why);
	err = diff_selections(c, &bs, &ns, focus, why, sizeof(why));
	if (err) {
		api_focus_release(&focus[0]);
		return api_profile_error(srv, c, req, err, why);
	}
	err = profsvc_diff(x->svc, &x->ro, &bs, &ns, &d, &o, &a, why, sizeof(why));
	api_focus_release(&focus[0]);
	api_focus_release(&focus[1]);
	snprintf(bp, sizeof(bp), "%" PRIu64, a.base_profiles);
	snprintf(np, sizeof(np), "%" PRIu64, a.profiles);
	return send_answer(srv, c, req, x, err, &a, headers, why);
}
