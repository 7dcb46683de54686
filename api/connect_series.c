/*
 * connect_series.c - SelectSeries of Pyroscope's query API over Connect
 * (connect.c routes it; docs/http-api.md, "Pyroscope's query API
 * (Connect)"): the selection's totals over time, GET /api/v1/series
 * (profsvc_series_set) with step= in seconds, group_by=, aggregation= and
 * limit=, as querier.v1's SelectSeriesResponse: one Series per line, its
 * labels the group_by labels it has (one without the label has no pair
 * for it, where Ember's route says ""), a Point (milliseconds since the epoch) at
 * the start of each step that holds a profile, as Pyroscope leaves out
 * the steps without one.  A non-empty stack_trace_selector is answered
 * unimplemented: the store's series are the profiles' totals, and a
 * focus needs every profile's stacks.
 */
#include "api_profiles.h"
#include "querier.pb-c.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#define MAX_GROUP_BY 8 /* as GET /api/v1/series */
#define MS_NS 1000000LL

/* The request's options into o; why set on a bad one. */
static int series_options(const Querier__V1__SelectSeriesRequest *in,
			  struct profsvc_series_opts *o, const char **why)
{
	/* Pyroscope's step: seconds, truncated to whole milliseconds */
	if (!(in->step >= 0.001) || in->step > 1e9) {
		*why = "step must be at least 0.001 (seconds)";
		return -EINVAL;
	}
	if (in->aggregation != TYPES__V1__TIME_SERIES_AGGREGATION_TYPE__TIME_SERIES_AGGREGATION_TYPE_SUM &&
	    in->aggregation != TYPES__V1__TIME_SERIES_AGGREGATION_TYPE__TIME_SERIES_AGGREGATION_TYPE_AVERAGE) {
		*why = "aggregation must be TIME_SERIES_AGGREGATION_TYPE_SUM or _AVERAGE";
		return -EINVAL;
	}
	if (in->limit < 0 || in->n_group_by > MAX_GROUP_BY) {
		*why = in->limit < 0 ? "limit must not be negative"
				     : "group_by: at most 8 label names";
		return -EINVAL;
	}
	*o = (struct profsvc_series_opts){
		.sz = sizeof(*o),
		.step_ns = (int64_t)(in->step * 1000) * MS_NS,
		.group_by = (const char *const *)in->group_by,
		.n_group_by = in->n_group_by,
		.average = in->aggregation ==
			   TYPES__V1__TIME_SERIES_AGGREGATION_TYPE__TIME_SERIES_AGGREGATION_TYPE_AVERAGE,
		.limit = in->limit > PSTORE_SERIES_MAX_LINES ? PSTORE_SERIES_MAX_LINES
							     : (size_t)in->limit,
	};
	return 0;
}

/* The points of line l with a profile into pts (room for them). */
static size_t line_points(const struct pstore_series_set *set, size_t l, bool average,
			  Types__V1__Point *pts, Types__V1__Point **pp)
{
	size_t n = 0;

	for (size_t i = 0; i < set->n_points; i++) {
		if (!set->lines[l].counts[i])
			continue;
		types__v1__point__init(&pts[n]);
		pts[n].value = profsvc_series_value(set, l, i, average);
		pts[n].timestamp = (set->from_ns + (int64_t)i * set->step_ns) / MS_NS;
		pp[n] = &pts[n];
		n++;
	}
	return n;
}

/* The points of set that hold a profile. */
static size_t points_held(const struct pstore_series_set *set)
{
	size_t n = 0;

	for (size_t l = 0; l < set->n_lines; l++)
		for (size_t i = 0; i < set->n_points; i++)
			n += set->lines[l].counts[i] != 0;
	return n;
}

/* set as a SelectSeriesResponse answered (its strings borrowed). */
static enum MHD_Result series_reply(struct api_server *srv, struct MHD_Connection *c,
				    const struct api_request *req,
				    const struct pstore_series_set *set, bool average)
{
	Querier__V1__SelectSeriesResponse out = QUERIER__V1__SELECT_SERIES_RESPONSE__INIT;
	size_t nl = set->n_lines, np = points_held(set), ng = nl ? set->lines[0].n_labels : 0;
	size_t at = 0;
	Types__V1__Series *s = calloc(nl + 1, sizeof(*s));
	Types__V1__Series **sp = calloc(nl + 1, sizeof(*sp));
	Types__V1__Point *pts = calloc(np + 1, sizeof(*pts));
	Types__V1__Point **pp = calloc(np + 1, sizeof(*pp));
	Types__V1__LabelPair *lp = calloc(nl * ng + 1, sizeof(*lp));
	Types__V1__LabelPair **lpp = calloc(nl * ng + 1, sizeof(*lpp));
	enum MHD_Result ret = MHD_NO;

	for (size_t l = 0; s && sp && pts && pp && lp && lpp && l < nl; l++) {
		const struct pstore_label *lb = set->lines[l].labels;

		types__v1__series__init(&s[l]);
		s[l].labels = &lpp[l * ng];
		for (size_t k = 0; k < ng; k++) {
			Types__V1__LabelPair *p = &lp[l * ng + s[l].n_labels];

			if (!*lb[k].value)
				continue; /* a series without the label: none, as Pyroscope */
			types__v1__label_pair__init(p);
			p->name = (char *)lb[k].name;
			p->value = (char *)lb[k].value;
			s[l].labels[s[l].n_labels++] = p;
		}
		s[l].points = &pp[at];
		s[l].n_points = line_points(set, l, average, &pts[at], &pp[at]);
		at += s[l].n_points;
		sp[l] = &s[l];
		out.n_series++;
	}
	out.series = sp;
	if (out.n_series == nl && sp)
		ret = api_connect_reply(srv, c, req, &out.base);
	free(lpp);
	free(lp);
	free(pp);
	free(pts);
	free(sp);
	free(s);
	return ret;
}

enum MHD_Result api_connect_select_series(struct api_server *srv, struct MHD_Connection *c,
					  struct api_request *req,
					  const struct api_profile_ctx *x,
					  const struct ProtobufCMessage *m)
{
	const Querier__V1__SelectSeriesRequest *in = (const void *)m;
	struct pstore_series_set *set = NULL;
	struct profsvc_series_opts o;
	struct pstore_selection sel;
	const char *bad = "";
	char why[512] = "";
	enum MHD_Result ret;
	int err = api_connect_select_of(in->profile_typeid, in->label_selector, in->start,
					in->end, &sel, &bad);

	err = err ? err : series_options(in, &o, &bad);
	if (err)
		return api_profile_text(srv, c, req, 400, bad, NULL);
	if (in->stack_trace_selector && in->stack_trace_selector->n_call_site)
		return api_profile_text(srv, c, req, 501,
					"stack_trace_selector: the series are the profiles' totals, "
					"not their stacks'", NULL);
	err = profsvc_series_set(x->svc, &x->ro, &sel, &o, &set, why, sizeof(why));
	if (err)
		return api_connect_read_failed(srv, c, req, x, err, why);
	ret = series_reply(srv, c, req, set, o.average);
	pstore_series_set_free(set);
	return ret;
}
