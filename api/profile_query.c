/*
 * profile_query.c - GET /api/v1/query and GET /api/v1/diff: a selection
 * (two for a diff) merged by the profile store, its unsymbolized frames
 * resolved through the symbolization service on the way, and written in
 * the format asked for (docs/http-api.md, "Query" and "Diff"): the JSON
 * tree, the top table (JSON or text), folded stacks, a flame graph SVG or
 * gzip'd pprof (what `go tool pprof URL` reads); a diff's regression
 * table, differential tree, diff folded, differential flame graph or diff
 * pprof.
 */
#include "api_profiles.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ANSWER_CAP ((size_t)512 << 20)
#define DEFAULT_ROWS 100

static const char *const pprof_headers_names[] = { "X-Ember-Profiles", "X-Ember-Total" };

/* Field k (0-4) of a full type ID into out. */
static void type_field(const char *type, int k, char *out, size_t size)
{
	const char *p = type;

	for (int i = 0; i < k && p; i++)
		p = strchr(p, ':') ? strchr(p, ':') + 1 : NULL;
	snprintf(out, size, "%.*s", p ? (int)strcspn(p, ":") : 0, p ? p : "");
}

static int rows_param(struct MHD_Connection *c, size_t *out, char *why, size_t size)
{
	const char *v = api_param(c, "limit");
	uint64_t n = DEFAULT_ROWS;

	if (v && api_parse_uint(v, 1u << 30, &n)) {
		snprintf(why, size, "limit: '%.32s' is not a number of rows", v);
		return -EINVAL;
	}
	*out = (size_t)n;
	return 0;
}

static struct pstore_query_opts resolver_opts(struct api_server *srv)
{
	return (struct pstore_query_opts){ .sz = sizeof(struct pstore_query_opts),
					   .resolver = api_profile_resolve,
					   .resolver_ctx = srv->symbols };
}

/* ---- query ----------------------------------------------------------------- */

static int tree_json(const struct pmodel_result *r, const struct pstore_selection *sel,
		     struct ember_buf *b)
{
	struct pmodel_result_info ri;
	char unit[128];
	int err;

	pmodel_result_info(r, &ri);
	type_field(ri.type, 2, unit, sizeof(unit));
	err = ember_buf_appendf(b, "{\"type\":");
	err = err ? err : ember_json_str(b, ri.type, strlen(ri.type));
	err = err ? err : ember_buf_appendf(b, ",\"unit\":");
	err = err ? err : ember_json_str(b, unit, strlen(unit));
	err = err ? err
		  : ember_buf_appendf(b,
				      ",\"period\":%" PRId64 ",\"total\":%" PRId64
				      ",\"profiles\":%" PRIu64 ",\"stacks\":%" PRIu64
				      ",\"from_ms\":%" PRId64 ",\"to_ms\":%" PRId64,
				      ri.period, ri.total, ri.profiles, ri.stacks,
				      sel->from_ns / 1000000, sel->to_ns / 1000000);
	if (!err && ri.profiles)
		err = ember_buf_appendf(b, ",\"min_time_ms\":%" PRId64 ",\"max_time_ms\":%" PRId64,
					ri.min_time_ns / 1000000, ri.max_time_ns / 1000000);
	err = err ? err : ember_buf_appendf(b, ",\"tree\":");
	err = err ? err : pmodel_write_tree_json(r, pmodel_write_buf, b);
	return err ? err : ember_buf_appendf(b, "}\n");
}

/* The output of r in format f into b, and its content type. */
static int write_query(struct MHD_Connection *c, const struct pmodel_result *r,
		       const struct pstore_selection *sel, const char *f, struct ember_buf *b,
		       const char **type, char *why, size_t why_size)
{
	struct pmodel_svg_opts so = { .sz = sizeof(so), .title = api_param(c, "title") };
	const char *width = api_param(c, "width"), *icicle = api_param(c, "icicle");
	uint64_t w = 0;
	size_t rows;

	*type = "application/json";
	if (strcmp(f, "json") == 0)
		return tree_json(r, sel, b);
	if (strcmp(f, "top") == 0 || strcmp(f, "top-text") == 0) {
		EMBER_FORWARD_IF_ERROR(rows_param(c, &rows, why, why_size));
		*type = f[3] ? "text/plain" : "application/json";
		return pmodel_write_top(r, rows, !f[3], pmodel_write_buf, b);
	}
	if (strcmp(f, "folded") == 0) {
		*type = "text/plain";
		return pmodel_write_folded(r, pmodel_write_buf, b);
	}
	if (strcmp(f, "pprof") == 0) {
		*type = "application/octet-stream";
		return pmodel_write_pprof(r, b);
	}
	if (width && (api_parse_uint(width, 100000, &w) || w < 100)) {
		snprintf(why, why_size, "width: '%.16s' is not 100 to 100000 pixels", width);
		return -EINVAL;
	}
	so.width = (int)w;
	so.icicle = icicle && strcmp(icicle, "0") && strcmp(icicle, "false");
	*type = "image/svg+xml";
	return pmodel_write_flamegraph(r, &so, pmodel_write_buf, b);
}

static bool format_known(const char *f, const char *const *names)
{
	for (; *names; names++)
		if (strcmp(f, *names) == 0)
			return true;
	return false;
}

static enum MHD_Result unknown_format(struct api_server *srv, struct MHD_Connection *c,
				      const struct api_request *req, const char *f,
				      const char *list)
{
	char why[256];

	snprintf(why, sizeof(why), "format: '%.32s' is not one of %s", f, list);
	return api_profile_error(srv, c, req, -EINVAL, why);
}

/* The answer, or the error of writing it. */
static enum MHD_Result send_answer(struct api_server *srv, struct MHD_Connection *c,
			    const struct api_request *req, int err, const char *type,
			    struct ember_buf *b, const char *const *headers, const char *why)
{
	if (!err)
		return api_profile_ok(srv, c, req, type, b, headers);
	ember_buf_release(b);
	if (err == -E2BIG)
		return api_profile_error(srv, c, req, -PSTORE_ERR_CORRUPT,
					 "the answer is larger than 512 MiB: narrow the selection");
	return api_profile_error(srv, c, req, err, why);
}

enum MHD_Result api_profile_query(struct api_server *srv, struct MHD_Connection *c,
				  struct api_request *req)
{
	static const char *const formats[] = { "json", "pprof", "folded", "top", "top-text",
					       "svg", NULL };
	const char *f = api_param(c, "format") ? api_param(c, "format") : "json";
	struct pstore_query_opts qo = resolver_opts(srv);
	struct pstore_selection sel;
	struct pmodel_result *r = NULL;
	struct pmodel_result_info ri;
	char why[512] = "", profiles[24], total[24];
	const char *headers[] = { pprof_headers_names[0], profiles, pprof_headers_names[1],
				  total, NULL };
	const char *type = "text/plain";
	struct ember_buf b;
	int err;

	if (!format_known(f, formats))
		return unknown_format(srv, c, req, f, "json, pprof, folded, top, top-text, svg");
	if (api_selection_from_params(c, NULL, NULL, &sel, why, sizeof(why)))
		return api_profile_error(srv, c, req, -EINVAL, why);
	err = pstore_query(srv->profiles->store, &sel, &qo, &r, why, sizeof(why));
	if (err)
		return api_profile_error(srv, c, req, err, why);
	pmodel_result_info(r, &ri);
	snprintf(profiles, sizeof(profiles), "%" PRIu64, ri.profiles);
	snprintf(total, sizeof(total), "%" PRId64, ri.total);
	ember_buf_init(&b, ANSWER_CAP);
	err = write_query(c, r, &sel, f, &b, &type, why, sizeof(why));
	pmodel_result_free(r);
	return send_answer(srv, c, req, err, type, &b, headers, why);
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

static int diff_tree(const struct pmodel_diff *d, const struct pmodel_result *base,
		     const struct pmodel_result *new_, struct ember_buf *b)
{
	struct pmodel_result_info bi, ni;
	char unit[128];
	int err;

	pmodel_result_info(base, &bi);
	pmodel_result_info(new_, &ni);
	type_field(ni.type, 2, unit, sizeof(unit));
	err = ember_buf_appendf(b, "{\"type\":");
	err = err ? err : ember_json_str(b, ni.type, strlen(ni.type));
	err = err ? err : ember_buf_appendf(b, ",\"unit\":");
	err = err ? err : ember_json_str(b, unit, strlen(unit));
	err = err ? err
		  : ember_buf_appendf(b,
				      ",\"base_total\":%" PRId64 ",\"new_total\":%" PRId64
				      ",\"base_profiles\":%" PRIu64 ",\"new_profiles\":%" PRIu64
				      ",\"tree\":",
				      bi.total, ni.total, bi.profiles, ni.profiles);
	err = err ? err : pmodel_write_diff_tree_json(d, pmodel_write_buf, b);
	return err ? err : ember_buf_appendf(b, "}\n");
}

static int write_diff(struct MHD_Connection *c, const struct pmodel_diff *d,
		      const struct pmodel_result *base, const struct pmodel_result *new_,
		      const char *f, struct ember_buf *b, const char **type, char *why,
		      size_t why_size)
{
	const char *norm = api_param(c, "normalize");
	struct pmodel_svg_opts so = { .sz = sizeof(so), .title = api_param(c, "title") };
	size_t rows;

	*type = "application/json";
	if (strcmp(f, "table") == 0 || strcmp(f, "table-text") == 0) {
		EMBER_FORWARD_IF_ERROR(rows_param(c, &rows, why, why_size));
		*type = f[5] ? "text/plain" : "application/json";
		return pmodel_write_diff_table(d, rows, !f[5], pmodel_write_buf, b);
	}
	if (strcmp(f, "json") == 0)
		return diff_tree(d, base, new_, b);
	if (strcmp(f, "folded") == 0) {
		*type = "text/plain";
		return pmodel_write_diff_folded(d, norm && strcmp(norm, "0") && strcmp(norm, "false"),
						pmodel_write_buf, b);
	}
	if (strcmp(f, "pprof") == 0) {
		*type = "application/octet-stream";
		return pmodel_write_diff_pprof(d, b);
	}
	*type = "image/svg+xml";
	return pmodel_write_diff_flamegraph(d, &so, pmodel_write_buf, b);
}

/* Both sides merged: base into *b, new into *n. */
static int diff_sides(struct api_server *srv, struct MHD_Connection *c,
		      struct pmodel_result **b, struct pmodel_result **n, char *why, size_t size)
{
	static const struct api_selection_names left = { "leftQuery", "leftFrom", "leftUntil" };
	static const struct api_selection_names right = { "rightQuery", "rightFrom",
							  "rightUntil" };
	struct pstore_query_opts qo = resolver_opts(srv);
	struct pstore_selection bs, ns;
	int err;

	if (api_selection_from_params(c, "base_", &left, &bs, why, size) ||
	    api_selection_from_params(c, "new_", &right, &ns, why, size))
		return -EINVAL;
	err = pstore_query(srv->profiles->store, &bs, &qo, b, why, size);
	if (err)
		return err;
	err = pstore_query(srv->profiles->store, &ns, &qo, n, why, size);
	if (err) {
		pmodel_result_free(*b);
		*b = NULL;
	}
	return err;
}

enum MHD_Result api_profile_diff(struct api_server *srv, struct MHD_Connection *c,
				 struct api_request *req)
{
	static const char *const formats[] = { "table", "table-text", "json", "folded", "svg",
					       "pprof", NULL };
	const char *f = api_param(c, "format") ? api_param(c, "format") : "table";
	struct pmodel_result *base = NULL, *new_ = NULL;
	struct pmodel_diff *d = NULL;
	struct pmodel_diff_opts o;
	struct pmodel_result_info bi, ni;
	char why[512] = "", bp[24], np[24];
	const char *headers[] = { "X-Ember-Base-Profiles", bp, "X-Ember-New-Profiles", np, NULL };
	const char *type = "text/plain";
	struct ember_buf b;
	int err;

	if (!format_known(f, formats))
		return unknown_format(srv, c, req, f, "table, table-text, json, folded, svg, pprof");
	if (diff_opts(c, &o, why, sizeof(why)))
		return api_profile_error(srv, c, req, -EINVAL, why);
	err = diff_sides(srv, c, &base, &new_, why, sizeof(why));
	if (err)
		return api_profile_error(srv, c, req, err, why);
	err = pmodel_diff_new(base, new_, &o, &d);
	if (err == -PSTORE_ERR_TYPE)
		snprintf(why, sizeof(why), "the two sides hold different sample types or units");
	pmodel_result_info(base, &bi);
	pmodel_result_info(new_, &ni);
	snprintf(bp, sizeof(bp), "%" PRIu64, bi.profiles);
	snprintf(np, sizeof(np), "%" PRIu64, ni.profiles);
	ember_buf_init(&b, ANSWER_CAP);
	if (!err)
		err = write_diff(c, d, base, new_, f, &b, &type, why, sizeof(why));
	pmodel_diff_free(d);
	pmodel_result_free(base);
	pmodel_result_free(new_);
	return send_answer(srv, c, req, err, type, &b, headers, why);
}
