/*
 * profile_discovery.c - what the store holds over HTTP (docs/http-api.md,
 * "Discovery", "Totals over time", "Symbolization coverage"): GET
 * /api/v1/labels, /api/v1/labels/NAME/values, /api/v1/profile-types,
 * /api/v1/series and /api/v1/coverage.  The parameters are read here; the
 * answers are the profile service's (profsvc_labels, ...: written there,
 * whole) and sent from here.
 */
#include "api_profiles.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define MAX_GROUP_BY 8

/* The selection of a discovery route (type optional). */
static int selection(struct api_server *srv, struct MHD_Connection *c,
		     const struct api_request *req, struct pstore_selection *sel,
		     enum MHD_Result *ret)
{
	char why[512];

	if (!api_selection_from_params(c, NULL, NULL, sel, why, sizeof(why)))
		return 0;
	*ret = api_profile_error(srv, c, req, -EINVAL, why);
	return -EINVAL;
}

static enum MHD_Result answer_labels(struct api_server *srv, struct MHD_Connection *c,
				     struct api_request *req, const struct api_profile_ctx *x,
				     const char *name)
{
	struct pstore_selection sel;
	struct profsvc_answer a;
	enum MHD_Result ret;
	char why[512] = "";
	int err;

	if (selection(srv, c, req, &sel, &ret))
		return ret;
	err = profsvc_labels(x->svc, &x->ro, &sel, name, &a, why, sizeof(why));
	return api_profile_answer(srv, c, req, x, err, &a, NULL, why);
}

enum MHD_Result api_profile_labels(struct api_server *srv, struct MHD_Connection *c,
				   struct api_request *req, const struct api_profile_ctx *x)
{
	return answer_labels(srv, c, req, x, NULL);
}

enum MHD_Result api_profile_values(struct api_server *srv, struct MHD_Connection *c,
				   struct api_request *req, const struct api_profile_ctx *x)
{
	return answer_labels(srv, c, req, x, req->route.path);
}

enum MHD_Result api_profile_types(struct api_server *srv, struct MHD_Connection *c,
				  struct api_request *req, const struct api_profile_ctx *x)
{
	struct pstore_selection sel;
	struct profsvc_answer a;
	enum MHD_Result ret;
	char why[512] = "";
	int err;

	if (selection(srv, c, req, &sel, &ret))
		return ret;
	err = profsvc_types(x->svc, &x->ro, &sel, &a, why, sizeof(why));
	return api_profile_answer(srv, c, req, x, err, &a, NULL, why);
}

/* ---- series ------------------------------------------------------------------ */

struct group_by {
	char names[MAX_GROUP_BY][129];
	const char *v[MAX_GROUP_BY];
	size_t n;
	bool over;
};

/* Each group_by parameter, comma-separated or repeated. */
static enum MHD_Result take_group(void *cls, enum MHD_ValueKind kind, const char *key,
				  const char *value)
{
	struct group_by *g = cls;

	(void)kind;
	if (strcmp(key, "group_by") || !value)
		return MHD_YES;
	for (const char *p = value; *p;) {
		size_t n = strcspn(p, ",");

		if (n && (g->n == MAX_GROUP_BY || n >= sizeof(g->names[0]))) {
			g->over = true;
			return MHD_NO;
		}
		if (n) {
			memcpy(g->names[g->n], p, n);
			g->names[g->n][n] = '\0';
			g->v[g->n] = g->names[g->n];
			g->n++;
		}
		p += p[n] ? n + 1 : n;
	}
	return MHD_YES;
}

/* aggregation= (sum, average) and limit= of GET /api/v1/series into o. */
static int series_options(struct MHD_Connection *c, struct profsvc_series_opts *o,
			  const char **bad)
{
	const char *agg = api_param(c, "aggregation");
	const char *limit = api_param(c, "limit");
	uint64_t n = 0;

	if (agg && strcmp(agg, "sum") && strcmp(agg, "average")) {
		*bad = "aggregation: sum or average";
		return -EINVAL;
	}
	if (limit && pyro_parse_uint(limit, PSTORE_SERIES_MAX_LINES, &n)) {
		*bad = "limit: not a number of series";
		return -EINVAL;
	}
	o->average = agg && strcmp(agg, "average") == 0;
	o->limit = (size_t)n;
	return 0;
}

enum MHD_Result api_profile_series(struct api_server *srv, struct MHD_Connection *c,
				   struct api_request *req, const struct api_profile_ctx *x)
{
	const char *step_s = api_param(c, "step");
	struct pstore_selection sel;
	struct group_by g = { .n = 0 };
	struct profsvc_series_opts o = { .sz = sizeof(o) };
	struct profsvc_answer a;
	enum MHD_Result ret;
	const char *bad = "";
	char why[512] = "";
	int err;

	if (selection(srv, c, req, &sel, &ret))
		return ret;
	MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, take_group, &g);
	if (g.over)
		return api_profile_error(srv, c, req, -EINVAL,
					 "group_by: at most 8 label names of 128 bytes");
	if (step_s && pyro_parse_duration(step_s, &o.step_ns)) {
		snprintf(why, sizeof(why), "step: '%.32s' is not a duration (10s, 1m, 1h)", step_s);
		return api_profile_error(srv, c, req, -EINVAL, why);
	}
	if (series_options(c, &o, &bad))
		return api_profile_error(srv, c, req, -EINVAL, bad);
	o.group_by = (const char *const *)g.v;
	o.n_group_by = g.n;
	err = profsvc_series(x->svc, &x->ro, &sel, &o, &a, why, sizeof(why));
	return api_profile_answer(srv, c, req, x, err, &a, NULL, why);
}

/* ---- coverage ----------------------------------------------------------------- */

enum MHD_Result api_profile_coverage(struct api_server *srv, struct MHD_Connection *c,
				     struct api_request *req, const struct api_profile_ctx *x)
{
	const char *limit = api_param(c, "limit");
	struct pstore_selection sel;
	struct profsvc_answer a;
	uint64_t rows = 100;
	enum MHD_Result ret;
	char why[512] = "";
	int err;

	if (selection(srv, c, req, &sel, &ret))
		return ret;
	if (limit && pyro_parse_uint(limit, 1u << 30, &rows))
		return api_profile_error(srv, c, req, -EINVAL, "limit: not a number of rows");
	err = profsvc_coverage(x->svc, &x->ro, &sel, (size_t)rows, &a, why, sizeof(why));
	return api_profile_answer(srv, c, req, x, err, &a, NULL, why);
}
