/*
 * profile_discovery.c - what the store holds, without reading rows
 * (docs/http-api.md, "Discovery", "Totals over time", "Symbolization
 * coverage"): GET /api/v1/labels, /api/v1/labels/NAME/values,
 * /api/v1/profile-types, /api/v1/series (the totals at a step, what a UI
 * draws above its flame graph) and /api/v1/coverage (the build IDs that
 * leave samples unsymbolized, most samples first).
 */
#include "api_profiles.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define ANSWER_CAP ((size_t)256 << 20)
#define MIN_STEP_NS ((int64_t)10 * 1000000000)
#define MAX_GROUP_BY 8

static int json_strings(struct ember_buf *b, const struct pstore_strlist *l)
{
	int err = ember_buf_putc(b, '[');

	for (size_t i = 0; !err && i < l->n; i++) {
		err = i ? ember_buf_putc(b, ',') : 0;
		err = err ? err : ember_json_str(b, l->v[i], strlen(l->v[i]));
	}
	return err ? err : ember_buf_putc(b, ']');
}

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

/* Answer list as {"KEY":[...]} (with a "name" first when name). */
static enum MHD_Result answer_list(struct api_server *srv, struct MHD_Connection *c,
				   const struct api_request *req, int err,
				   struct pstore_strlist *l, const char *key, const char *name,
				   const char *why)
{
	struct ember_buf b;

	if (err)
		return api_profile_error(srv, c, req, err, why);
	ember_buf_init(&b, ANSWER_CAP);
	err = ember_buf_putc(&b, '{');
	if (!err && name) {
		err = ember_buf_appendf(&b, "\"name\":");
		err = err ? err : ember_json_str(&b, name, strlen(name));
		err = err ? err : ember_buf_putc(&b, ',');
	}
	err = err ? err : ember_buf_appendf(&b, "\"%s\":", key);
	err = err ? err : json_strings(&b, l);
	err = err ? err : ember_buf_appendf(&b, "}\n");
	pstore_strlist_free(l);
	if (err) {
		ember_buf_release(&b);
		return api_profile_error(srv, c, req, err, "out of memory");
	}
	return api_profile_ok(srv, c, req, "application/json", &b, NULL);
}

enum MHD_Result api_profile_labels(struct api_server *srv, struct MHD_Connection *c,
				   struct api_request *req)
{
	struct pstore_selection sel;
	struct pstore_strlist *l = NULL;
	enum MHD_Result ret;
	char why[512] = "";
	int err;

	if (selection(srv, c, req, &sel, &ret))
		return ret;
	err = pstore_label_names(srv->profiles->store, &sel, &l, why, sizeof(why));
	return answer_list(srv, c, req, err, l, "names", NULL, why);
}

enum MHD_Result api_profile_values(struct api_server *srv, struct MHD_Connection *c,
				   struct api_request *req)
{
	struct pstore_selection sel;
	struct pstore_strlist *l = NULL;
	enum MHD_Result ret;
	char why[512] = "";
	int err;

	if (selection(srv, c, req, &sel, &ret))
		return ret;
	err = pstore_label_values(srv->profiles->store, req->route.path, &sel, &l, why,
				  sizeof(why));
	return answer_list(srv, c, req, err, l, "values", req->route.path, why);
}

/* {"id":..,"name":..,...} of one full type ID. */
static int type_object(struct ember_buf *b, const char *id)
{
	static const char *const fields[5] = { "name", "sample_type", "sample_unit",
					       "period_type", "period_unit" };
	const char *p = id;
	int err = ember_buf_appendf(b, "{\"id\":");

	err = err ? err : ember_json_str(b, id, strlen(id));
	for (int k = 0; !err && k < 5; k++) {
		size_t n = strcspn(p, ":");

		err = ember_buf_appendf(b, ",\"%s\":", fields[k]);
		err = err ? err : ember_json_str(b, p, n);
		p += p[n] ? n + 1 : n;
	}
	return err ? err : ember_buf_putc(b, '}');
}

enum MHD_Result api_profile_types(struct api_server *srv, struct MHD_Connection *c,
				  struct api_request *req)
{
	struct pstore_selection sel;
	struct pstore_strlist *l = NULL;
	enum MHD_Result ret;
	struct ember_buf b;
	char why[512] = "";
	int err;

	if (selection(srv, c, req, &sel, &ret))
		return ret;
	err = pstore_profile_types(srv->profiles->store, &sel, &l, why, sizeof(why));
	if (err)
		return api_profile_error(srv, c, req, err, why);
	ember_buf_init(&b, ANSWER_CAP);
	err = ember_buf_appendf(&b, "{\"types\":[");
	for (size_t i = 0; !err && i < l->n; i++) {
		err = i ? ember_buf_putc(&b, ',') : 0;
		err = err ? err : type_object(&b, l->v[i]);
	}
	err = err ? err : ember_buf_appendf(&b, "]}\n");
	pstore_strlist_free(l);
	if (err) {
		ember_buf_release(&b);
		return api_profile_error(srv, c, req, err, "out of memory");
	}
	return api_profile_ok(srv, c, req, "application/json", &b, NULL);
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

static int step_param(struct MHD_Connection *c, const struct pstore_selection *sel,
		      int64_t *step, char *why, size_t size)
{
	const char *v = api_param(c, "step");

	*step = (sel->to_ns - sel->from_ns) / 240;
	if (*step < MIN_STEP_NS)
		*step = MIN_STEP_NS;
	if (v && api_parse_duration(v, step)) {
		snprintf(why, size, "step: '%.32s' is not a duration (10s, 1m, 1h)", v);
		return -EINVAL;
	}
	return 0;
}

static int line_json(struct ember_buf *b, const struct pstore_series_set *set, size_t i)
{
	const struct pstore_series_line *l = &set->lines[i];
	int err = ember_buf_appendf(b, "%s{\"labels\":{", i ? "," : "");

	for (size_t k = 0; !err && k < l->n_labels; k++) {
		err = k ? ember_buf_putc(b, ',') : 0;
		err = err ? err : ember_json_str(b, l->labels[k].name, strlen(l->labels[k].name));
		err = err ? err : ember_buf_putc(b, ':');
		err = err ? err
			  : ember_json_str(b, l->labels[k].value, strlen(l->labels[k].value));
	}
	err = err ? err : ember_buf_appendf(b, "},\"values\":[");
	for (size_t p = 0; !err && p < set->n_points; p++)
		err = ember_buf_appendf(b, "%s%" PRId64, p ? "," : "", l->values[p]);
	return err ? err : ember_buf_appendf(b, "]}");
}

static int series_json(struct ember_buf *b, const struct pstore_series_set *set)
{
	const char *u = set->type;
	int err;

	for (int k = 0; k < 2 && u; k++)
		u = strchr(u, ':') ? strchr(u, ':') + 1 : NULL;
	err = ember_buf_appendf(b, "{\"type\":");
	err = err ? err : ember_json_str(b, set->type, strlen(set->type));
	err = err ? err : ember_buf_appendf(b, ",\"unit\":");
	err = err ? err : ember_json_str(b, u ? u : "", u ? strcspn(u, ":") : 0);
	err = err ? err
		  : ember_buf_appendf(b,
				      ",\"from_ms\":%" PRId64 ",\"step_ms\":%" PRId64
				      ",\"points\":%zu,\"series\":[",
				      set->from_ns / 1000000, set->step_ns / 1000000,
				      set->n_points);
	for (size_t i = 0; !err && i < set->n_lines; i++)
		err = line_json(b, set, i);
	return err ? err : ember_buf_appendf(b, "]}\n");
}

enum MHD_Result api_profile_series(struct api_server *srv, struct MHD_Connection *c,
				   struct api_request *req)
{
	struct pstore_series_set *set = NULL;
	struct pstore_selection sel;
	struct group_by g = { .n = 0 };
	enum MHD_Result ret;
	struct ember_buf b;
	char why[512] = "";
	int64_t step;
	int err;

	if (selection(srv, c, req, &sel, &ret))
		return ret;
	MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, take_group, &g);
	if (g.over)
		return api_profile_error(srv, c, req, -EINVAL,
					 "group_by: at most 8 label names of 128 bytes");
	if (step_param(c, &sel, &step, why, sizeof(why)))
		return api_profile_error(srv, c, req, -EINVAL, why);
	err = pstore_series_totals(srv->profiles->store, &sel, step, g.v, g.n, &set, why,
				   sizeof(why));
	if (err)
		return api_profile_error(srv, c, req, err == -E2BIG ? -EINVAL : err, why);
	ember_buf_init(&b, ANSWER_CAP);
	err = series_json(&b, set);
	pstore_series_set_free(set);
	if (err) {
		ember_buf_release(&b);
		return api_profile_error(srv, c, req, err, "the answer is too large: a larger step");
	}
	return api_profile_ok(srv, c, req, "application/json", &b, NULL);
}

/* ---- coverage ----------------------------------------------------------------- */

static double pct(uint64_t part, uint64_t all)
{
	return all ? 100.0 * (double)part / (double)all : 0;
}

static int coverage_json(struct ember_buf *b, const struct pstore_coverage *cv, size_t rows)
{
	int err = ember_buf_appendf(b,
				    "{\"profiles\":%" PRIu64 ",\"samples\":%" PRIu64
				    ",\"resolved_samples\":%" PRIu64 ",\"resolved_pct\":%.4f"
				    ",\"build_ids\":[",
				    cv->profiles, cv->samples, cv->resolved_samples,
				    pct(cv->resolved_samples, cv->samples));

	for (size_t i = 0; !err && i < cv->n_rows && (!rows || i < rows); i++) {
		const struct pstore_coverage_row *r = &cv->rows[i];

		err = ember_buf_appendf(b, "%s{\"build_id\":", i ? "," : "");
		err = err ? err : ember_json_str(b, r->build_id, strlen(r->build_id));
		err = err ? err : ember_buf_appendf(b, ",\"reason\":");
		err = err ? err : ember_json_str(b, r->reason, strlen(r->reason));
		err = err ? err
			  : ember_buf_appendf(b, ",\"samples\":%" PRIu64 ",\"pct\":%.4f}",
					      r->samples, pct(r->samples, cv->samples));
	}
	return err ? err : ember_buf_appendf(b, "]}\n");
}

enum MHD_Result api_profile_coverage(struct api_server *srv, struct MHD_Connection *c,
				     struct api_request *req)
{
	struct pstore_coverage *cv = NULL;
	struct pstore_selection sel;
	const char *limit = api_param(c, "limit");
	uint64_t rows = 100;
	enum MHD_Result ret;
	struct ember_buf b;
	char why[512] = "";
	int err;

	if (selection(srv, c, req, &sel, &ret))
		return ret;
	if (limit && api_parse_uint(limit, 1u << 30, &rows))
		return api_profile_error(srv, c, req, -EINVAL, "limit: not a number of rows");
	err = pstore_coverage(srv->profiles->store, &sel, &cv, why, sizeof(why));
	if (err)
		return api_profile_error(srv, c, req, err, why);
	ember_buf_init(&b, ANSWER_CAP);
	err = coverage_json(&b, cv, (size_t)rows);
	pstore_coverage_free(cv);
	if (err) {
		ember_buf_release(&b);
		return api_profile_error(srv, c, req, err, "out of memory");
	}
	return api_profile_ok(srv, c, req, "application/json", &b, NULL);
}
