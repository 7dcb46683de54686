/*
 * query_answers.c - the answers of a query and a diff, whole: a selection (two
 * for a diff) merged by the profile store, its unsymbolized frames
 * resolved on the way through the symbolization service (resolver.c), and
 * written in the format asked for (docs/http-api.md, "Query" and "Diff"):
 * the JSON tree in its envelope (type, unit, totals, range), the top
 * table (JSON or text), folded stacks, a flame graph SVG or gzip'd pprof;
 * a diff's regression table, differential tree, diff folded,
 * differential flame graph or diff pprof.  The profile model writes
 * the trees and tables (pmodel_write_*); the envelope around them is here.
 */
#include "profsvc_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define ANSWER_CAP ((size_t)512 << 20)
#define TOO_LARGE "the answer is larger than 512 MiB: narrow the selection"

static const char *const query_formats[] = { "json", "pprof", "folded", "top", "top-text",
					      "svg", NULL };
static const char *const diff_formats[] = { "table", "table-text", "json", "folded", "svg",
					    "pprof", NULL };

bool profsvc_format_known(const char *format, bool diff)
{
	for (const char *const *f = diff ? diff_formats : query_formats; *f; f++)
		if (strcmp(format, *f) == 0)
			return true;
	return false;
}

void profsvc_answer_init(struct profsvc_answer *a, size_t cap, struct ember_mem_account *acct)
{
	*a = (struct profsvc_answer){ .type = "application/json" };
	ember_buf_init_account(&a->body, cap, acct);
}

int profsvc_write_failed(int err, char *why, size_t why_size, const char *msg)
{
	if (err)
		snprintf(why, why_size, "%s", msg);
	return err;
}

/* Field k (0-4) of a full type ID into out. */
static void type_field(const char *type, int k, char *out, size_t size)
{
	const char *p = type;

	for (int i = 0; i < k && p; i++)
		p = strchr(p, ':') ? strchr(p, ':') + 1 : NULL;
	snprintf(out, size, "%.*s", p ? (int)strcspn(p, ":") : 0, p ? p : "");
}

/* {"type":T,"unit":U of type: the opening of both JSON envelopes. */
static int envelope_open(struct ember_buf *b, const char *type)
{
	char unit[128];
	int err;

	type_field(type, 2, unit, sizeof(unit));
	err = ember_buf_appendf(b, "{\"type\":");
	err = err ? err : ember_json_str(b, type, strlen(type));
	err = err ? err : ember_buf_appendf(b, ",\"unit\":");
	return err ? err : ember_json_str(b, unit, strlen(unit));
}

/* ---- query ----------------------------------------------------------------- */

static int tree_json(const struct pmodel_result *r, const struct pstore_selection *sel,
		     struct ember_buf *b)
{
	struct pmodel_result_info ri;
	int err;

	pmodel_result_info(r, &ri);
	err = envelope_open(b, ri.type);
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

/* The output of r in o's format into a. */
static int write_query(const struct pmodel_result *r, const struct pstore_selection *sel,
		       const struct profsvc_output *o, struct profsvc_answer *a)
{
	const char *f = o->format ? o->format : "json";

	if (strcmp(f, "json") == 0)
		return tree_json(r, sel, &a->body);
	if (strcmp(f, "top") == 0 || strcmp(f, "top-text") == 0) {
		a->type = f[3] ? "text/plain" : "application/json";
		return pmodel_write_top(r, o->rows, !f[3], pmodel_write_buf, &a->body);
	}
	if (strcmp(f, "folded") == 0) {
		a->type = "text/plain";
		return pmodel_write_folded(r, pmodel_write_buf, &a->body);
	}
	if (strcmp(f, "pprof") == 0) {
		a->type = "application/octet-stream";
		return pmodel_write_pprof(r, &a->body);
	}
	a->type = "image/svg+xml";
	return pmodel_write_flamegraph(r, &o->svg, pmodel_write_buf, &a->body);
}

/* The selection merged and resolved on the read's behalf into *out. */
static int merge(struct profsvc *s, struct profsvc_read *rd, const struct pstore_selection *sel,
		 struct pmodel_result **out, char *why, size_t why_size)
{
	struct pstore_query_opts qo = profsvc_read_query_opts(rd);
	struct pstore_selection rs = profsvc_read_selection(rd, sel);

	return pstore_query(s->store, &rs, &qo, out, why, why_size);
}

int profsvc_query(struct profsvc *s, const struct symsvc_request_opts *ro,
		  const struct pstore_selection *sel, const struct profsvc_output *o,
		  struct profsvc_answer *a, char *why, size_t why_size)
{
	struct pmodel_result *r = NULL;
	struct pmodel_result_info ri;
	struct profsvc_read rd;
	int err = profsvc_read_begin(s, ro, &rd);

	profsvc_answer_init(a, ANSWER_CAP, profsvc_read_account(&rd));
	err = err ? err : merge(s, &rd, sel, &r, why, why_size);
	profsvc_read_end(&rd);
	if (err)
		return err;
	pmodel_result_info(r, &ri);
	a->profiles = ri.profiles;
	a->total = ri.total;
	err = write_query(r, sel, o, a);
	pmodel_result_free(r);
	return profsvc_write_failed(err, why, why_size, err == -E2BIG ? TOO_LARGE : "");
}

/* ---- diff -------------------------------------------------------------------- */

static int diff_tree(const struct pmodel_diff *d, const struct pmodel_result *base,
		     const struct pmodel_result *new_, struct ember_buf *b)
{
	struct pmodel_result_info bi, ni;
	int err;

	pmodel_result_info(base, &bi);
	pmodel_result_info(new_, &ni);
	err = envelope_open(b, ni.type);
	err = err ? err
		  : ember_buf_appendf(b,
				      ",\"base_total\":%" PRId64 ",\"new_total\":%" PRId64
				      ",\"base_profiles\":%" PRIu64 ",\"new_profiles\":%" PRIu64
				      ",\"tree\":",
				      bi.total, ni.total, bi.profiles, ni.profiles);
	err = err ? err : pmodel_write_diff_tree_json(d, pmodel_write_buf, b);
	return err ? err : ember_buf_appendf(b, "}\n");
}

static int write_diff(const struct pmodel_diff *d, const struct pmodel_result *base,
		      const struct pmodel_result *new_, const struct profsvc_output *o,
		      struct profsvc_answer *a)
{
	const char *f = o->format ? o->format : "table";

	if (strcmp(f, "table") == 0 || strcmp(f, "table-text") == 0) {
		a->type = f[5] ? "text/plain" : "application/json";
		return pmodel_write_diff_table(d, o->rows, !f[5], pmodel_write_buf, &a->body);
	}
	if (strcmp(f, "json") == 0)
		return diff_tree(d, base, new_, &a->body);
	if (strcmp(f, "folded") == 0) {
		a->type = "text/plain";
		return pmodel_write_diff_folded(d, o->normalize, pmodel_write_buf, &a->body);
	}
	if (strcmp(f, "pprof") == 0) {
		a->type = "application/octet-stream";
		return pmodel_write_diff_pprof(d, &a->body);
	}
	a->type = "image/svg+xml";
	return pmodel_write_diff_flamegraph(d, &o->svg, pmodel_write_buf, &a->body);
}

/* Both sides merged: base into *b, new into *n. */
static int diff_sides(struct profsvc *s, struct profsvc_read *rd, const struct pstore_selection *bs,
		      const struct pstore_selection *ns, struct pmodel_result **b,
		      struct pmodel_result **n, char *why, size_t size)
{
	int err = merge(s, rd, bs, b, why, size);

	if (err)
		return err;
	err = merge(s, rd, ns, n, why, size);
	if (err) {
		pmodel_result_free(*b);
		*b = NULL;
	}
	return err;
}

int profsvc_diff(struct profsvc *s, const struct symsvc_request_opts *ro,
		 const struct pstore_selection *base, const struct pstore_selection *new_,
		 const struct pmodel_diff_opts *d, const struct profsvc_output *o,
		 struct profsvc_answer *a, char *why, size_t why_size)
{
	struct pmodel_result *br = NULL, *nr = NULL;
	struct pmodel_diff *diff = NULL;
	struct pmodel_result_info bi, ni;
	struct profsvc_read rd;
	int err = profsvc_read_begin(s, ro, &rd);

	profsvc_answer_init(a, ANSWER_CAP, profsvc_read_account(&rd));
	err = err ? err : diff_sides(s, &rd, base, new_, &br, &nr, why, why_size);
	profsvc_read_end(&rd);
	if (err)
		return err;
	err = pmodel_diff_new(br, nr, d, &diff);
	if (err == -PMODEL_ERR_TYPE)
		snprintf(why, why_size, "the two sides hold different sample types or units");
	pmodel_result_info(br, &bi);
	pmodel_result_info(nr, &ni);
	a->base_profiles = bi.profiles;
	a->profiles = ni.profiles;
	if (!err) {
		err = write_diff(diff, br, nr, o, a);
		profsvc_write_failed(err, why, why_size, err == -E2BIG ? TOO_LARGE : "");
	}
	pmodel_diff_free(diff);
	pmodel_result_free(br);
	pmodel_result_free(nr);
	return err;
}
