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
 * A query's or a diff's views (through=, hide=, sandwich=) rewrite each
 * merge first (query_view.c).
 * Pyroscope's GET /pyroscope/render: the flamebearer (pmodel_write_flamebearer)
 * with its metadata and timeline (profsvc_render), and GET
 * /pyroscope/render-diff: a diff's flamebearer of format "double"
 * (pmodel_write_flamebearer_diff, profsvc_render_diff); querier.v1's flame
 * graph (profsvc_flamegraph, pmodel_flamegraph_new) and its diff
 * (profsvc_flamegraph_diff, pmodel_flamegraph_diff_new).
 */
#include "profsvc_internal.h"
#include "symsvc.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define ANSWER_CAP ((size_t)512 << 20)
#define SEC_NS ((int64_t)1000000000)
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
		     const char *hint, struct ember_buf *b)
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
	if (!err && *hint) {
		err = ember_buf_appendf(b, ",\"hint\":");
		err = err ? err : ember_json_str(b, hint, strlen(hint));
	}
	if (!err && ri.rollup_only_step) /* past the retention: from the rollups alone */
		err = ember_buf_appendf(b, ",\"rollup_only_step_ms\":%" PRId64,
					ri.rollup_only_step / 1000000);
	err = err ? err : ember_buf_appendf(b, ",\"tree\":");
	err = err ? err : pmodel_write_tree_json(r, pmodel_write_buf, b);
	return err ? err : ember_buf_appendf(b, "}\n");
}

/* The pprof of r cut to max_nodes nodes into b. */
static int write_truncated(const struct pmodel_result *r, size_t max_nodes, struct ember_buf *b)
{
	struct pmodel_result *c;
	int err = pmodel_result_truncate(r, max_nodes, &c);

	if (err)
		return err;
	err = pmodel_write_pprof(c, b);
	pmodel_result_free(c);
	return err;
}

/* The output of r in o's format into a. */
static int write_query(const struct pmodel_result *r, const struct pstore_selection *sel,
		       const struct profsvc_output *o, struct profsvc_answer *a)
{
	const char *f = o->format ? o->format : "json";

	if (strcmp(f, "json") == 0)
		return tree_json(r, sel, a->hint, &a->body);
	if (strcmp(f, "top") == 0 || strcmp(f, "top-text") == 0) {
		a->type = f[3] ? "text/plain" : "application/json";
		if (f[3] && *a->hint) /* the reason, not a table of 0 of 0 functions */
			return ember_buf_appendf(&a->body, "%s\n", a->hint);
		return pmodel_write_top(r, o->rows, !f[3], pmodel_write_buf, &a->body);
	}
	if (strcmp(f, "folded") == 0) {
		a->type = "text/plain";
		return pmodel_write_folded(r, pmodel_write_buf, &a->body);
	}
	if (strcmp(f, "pprof") == 0) {
		a->type = "application/octet-stream";
		return o->max_nodes ? write_truncated(r, o->max_nodes, &a->body)
				    : pmodel_write_pprof(r, &a->body);
	}
	a->type = "image/svg+xml";
	return pmodel_write_flamegraph(r, &o->svg, pmodel_write_buf, &a->body);
}

/* Whether o's output groups unsymbolized frames per module: all but
 * pprof (exact for `go tool pprof`), unless o asks for them one by one. */
static bool groups_unresolved(const struct profsvc_output *o, const char *dflt)
{
	return !o->unsymbolized_frames && strcmp(o->format ? o->format : dflt, "pprof") != 0;
}

/* *r replaced by its frames grouped (pmodel_result_group_unresolved),
 * when it has any to group, the copy charged to acct. */
static int group_unresolved(struct ember_mem_account *acct, struct pmodel_result **r, char *why,
			    size_t why_size)
{
	struct pmodel_result *g;
	int err;

	if (!pmodel_result_has_unresolved(*r))
		return 0;
	err = pmodel_result_group_unresolved(*r, &g);
	if (err) {
		snprintf(why, why_size, "grouping unsymbolized frames: out of memory");
		return err;
	}
	return profsvc_result_replace(acct, r, g, why, why_size);
}

int profsvc_read_merge(struct profsvc *s, struct profsvc_read *rd,
		       const struct pstore_selection *sel, struct pmodel_result **out, char *why,
		       size_t why_size)
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
	struct profsvc_view view = { 0 };
	struct profsvc_read rd;
	int err = profsvc_read_begin(s, ro, &rd);

	profsvc_answer_init(a, ANSWER_CAP, profsvc_read_account(&rd));
	err = err ? err : profsvc_view_init(&view, o, why, why_size);
	err = err ? err : profsvc_read_range(&rd, sel, why, why_size);
	err = err ? err : profsvc_read_merge(s, &rd, sel, &r, why, why_size);
	/* the views see the frames as the output names them: grouped first */
	if (!err && groups_unresolved(o, "json"))
		err = group_unresolved(profsvc_read_account(&rd), &r, why, why_size);
	err = err ? err : profsvc_view_apply(&view, profsvc_read_account(&rd), &r, why, why_size);
	if (!err)
		pmodel_result_info(r, &ri);
	if (!err && !ri.profiles)
		err = profsvc_empty_hint(s, &rd, sel, a->hint, sizeof(a->hint), why, why_size);
	profsvc_read_end(&rd);
	profsvc_view_release(&view);
	if (err) {
		pmodel_result_free(r);
		return err;
	}
	a->profiles = ri.profiles;
	a->total = ri.total;
	err = write_query(r, sel, o, a);
	pmodel_result_free(r);
	return profsvc_write_failed(err, why, why_size, err == -E2BIG ? TOO_LARGE : "");
}

/* ---- Pyroscope's render ----------------------------------------------------- */

/* Pyroscope's units and sample rate of a type (its ExportToFlamebearer). */
static void render_units(const char *type, char *units, size_t size, unsigned *rate)
{
	char st[128];

	type_field(type, 1, st, sizeof(st));
	*rate = strcmp(st, "cpu") == 0 ? 1000000000u : 100u;
	if (strcmp(st, "cpu") == 0)
		snprintf(units, size, "samples");
	else if (!strcmp(st, "inuse_objects") || !strcmp(st, "alloc_objects") ||
		 !strcmp(st, "goroutine") || !strcmp(st, "samples"))
		snprintf(units, size, "objects");
	else
		type_field(type, 2, units, size);
}

/* format: "single", or "double" (a diff's) */
static int render_metadata(struct ember_buf *b, const char *type, const char *format)
{
	char units[128];
	unsigned rate;
	int err;

	render_units(type, units, sizeof(units), &rate);
	err = ember_buf_appendf(b, ",\"metadata\":{\"format\":\"%s\",\"spyName\":\"\","
				   "\"sampleRate\":%u,\"units\":", format, rate);
	err = err ? err : ember_json_str(b, units, strlen(units));
	return err ? err : ember_buf_appendf(b, "}");
}

/* {"startTime":S,"samples":[..],"durationDelta":D} of the one line of set. */
static int render_timeline(struct ember_buf *b, const struct pstore_series_set *set)
{
	int err = ember_buf_appendf(b, ",\"timeline\":{\"startTime\":%" PRId64 ",\"samples\":[",
				    set->from_ns / SEC_NS);

	for (size_t i = 0; !err && i < set->n_points; i++)
		err = ember_buf_appendf(b, "%s%" PRId64, i ? "," : "",
					set->n_lines ? set->lines[0].values[i] : 0);
	return err ? err
		   : ember_buf_appendf(b, "],\"durationDelta\":%" PRId64 "}",
				       set->step_ns / SEC_NS);
}

/* The timeline's step: whole seconds, the range / 240, at least 10 s. */
static int64_t render_step(const struct pstore_selection *sel)
{
	int64_t step = (sel->to_ns - sel->from_ns) / 240 / SEC_NS * SEC_NS;

	return step < 10 * SEC_NS ? 10 * SEC_NS : step;
}

/* The merged tree and its timeline, of the one type r was read as. */
static int render_sides(struct profsvc *s, struct profsvc_read *rd,
			const struct pstore_selection *sel, struct pmodel_result **r,
			struct pstore_series_set **set, char *why, size_t why_size)
{
	struct pmodel_result_info ri;
	struct pstore_selection rs;
	int err = profsvc_read_merge(s, rd, sel, r, why, why_size);

	if (err)
		return err;
	pmodel_result_info(*r, &ri);
	rs = profsvc_read_selection(rd, sel);
	rs.type = ri.type;
	err = pstore_series_totals(s->store, &rs, render_step(sel), NULL, 0, set, why, why_size);
	if (err) {
		pmodel_result_free(*r);
		*r = NULL;
	}
	return err;
}

static int render_json(const struct pmodel_result *r, const struct pstore_series_set *set,
		       size_t max_nodes, struct ember_buf *b)
{
	struct pmodel_result_info ri;
	int err = ember_buf_appendf(b, "{\"version\":1,\"flamebearer\":");

	pmodel_result_info(r, &ri);
	err = err ? err : pmodel_write_flamebearer(r, max_nodes, pmodel_write_buf, b);
	err = err ? err : render_metadata(b, ri.type, "single");
	err = err ? err : render_timeline(b, set);
	return err ? err : ember_buf_appendf(b, "}\n");
}

int profsvc_render(struct profsvc *s, const struct symsvc_request_opts *ro,
		   const struct pstore_selection *sel, size_t max_nodes,
		   struct profsvc_answer *a, char *why, size_t why_size)
{
	struct pmodel_result *r = NULL;
	struct pstore_series_set *set = NULL;
	struct pmodel_result_info ri;
	struct pstore_selection whole = *sel;
	struct profsvc_read rd;
	int err = profsvc_read_begin(s, ro, &rd);

	/* from in whole seconds, as Pyroscope counts it: the timeline's
	 * startTime is where its first point begins */
	whole.from_ns -= ((whole.from_ns % SEC_NS) + SEC_NS) % SEC_NS;
	profsvc_answer_init(a, ANSWER_CAP, profsvc_read_account(&rd));
	err = err ? err : profsvc_read_range(&rd, sel, why, why_size);
	err = err ? err : render_sides(s, &rd, &whole, &r, &set, why, why_size);
	profsvc_read_end(&rd);
	if (err == -E2BIG && !(ro && ro->account && ro->account->err))
		return -EINVAL; /* the timeline's grid past the store's bounds */
	if (err)
		return err;
	pmodel_result_info(r, &ri);
	a->profiles = ri.profiles;
	a->total = ri.total;
	err = render_json(r, set, max_nodes, &a->body);
	pstore_series_set_free(set);
	pmodel_result_free(r);
	return profsvc_write_failed(err, why, why_size, err == -E2BIG ? TOO_LARGE : "");
}

int profsvc_flamegraph(struct profsvc *s, const struct symsvc_request_opts *ro,
		       const struct pstore_selection *sel, size_t max_nodes,
		       struct pmodel_flamegraph **out, char *why, size_t why_size)
{
	struct pmodel_result *r = NULL;
	struct profsvc_read rd;
	int err = profsvc_read_begin(s, ro, &rd);

	*out = NULL;
	err = err ? err : profsvc_read_range(&rd, sel, why, why_size);
	err = err ? err : profsvc_read_merge(s, &rd, sel, &r, why, why_size);
	profsvc_read_end(&rd);
	if (err)
		return err;
	err = pmodel_flamegraph_new(r, max_nodes, out);
	pmodel_result_free(r);
	return profsvc_write_failed(err, why, why_size, "the flame graph: out of memory");
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

/* Writes a diff's answer into a; ctx the writer's own. */
typedef int (*diff_write_fn)(const struct pmodel_diff *d, const struct pmodel_result *base,
			     const struct pmodel_result *new_, const void *ctx,
			     struct profsvc_answer *a);

/* In the profsvc_output ctx's format. */
static int write_diff(const struct pmodel_diff *d, const struct pmodel_result *base,
		      const struct pmodel_result *new_, const void *ctx, struct profsvc_answer *a)
{
	const struct profsvc_output *o = ctx;
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
	int err = profsvc_read_merge(s, rd, bs, b, why, size);

	if (err)
		return err;
	err = profsvc_read_merge(s, rd, ns, n, why, size);
	if (err) {
		pmodel_result_free(*b);
		*b = NULL;
	}
	return err;
}

/* A diff's two merges and their comparison. */
struct diff_parts {
	struct pmodel_result *base, *new_;
	struct pmodel_diff *diff;
};

/* Both sides merged (under rd), their unsymbolized frames grouped alike
 * when group, and compared under d into *p (released by diff_parts_free,
 * also on error). */
static int diff_parts_new(struct profsvc *s, struct profsvc_read *rd,
			  const struct pstore_selection *base, const struct pstore_selection *new_,
			  const struct pmodel_diff_opts *d, bool group, const struct profsvc_view *view,
			  struct diff_parts *p, char *why, size_t why_size)
{
	struct ember_mem_account *acct = profsvc_read_account(rd);
	int err = diff_sides(s, rd, base, new_, &p->base, &p->new_, why, why_size);

	if (!err && group) {
		err = group_unresolved(acct, &p->base, why, why_size);
		err = err ? err : group_unresolved(acct, &p->new_, why, why_size);
	}
	err = err ? err : profsvc_view_apply(view, acct, &p->base, why, why_size);
	err = err ? err : profsvc_view_apply(view, acct, &p->new_, why, why_size);
	err = err ? err : pmodel_diff_new(p->base, p->new_, d, &p->diff);
	if (err == -PMODEL_ERR_TYPE)
		snprintf(why, why_size, "the two sides hold different sample types or units");
	return err;
}

static void diff_parts_free(struct diff_parts *p)
{
	pmodel_diff_free(p->diff);
	pmodel_result_free(p->base);
	pmodel_result_free(p->new_);
}

/* Both sides merged (grouped when group: diff_parts_new), viewed under
 * o's views (NULL: none), compared under d and written by write. */
static int diff_answer(struct profsvc *s, const struct symsvc_request_opts *ro,
		       const struct pstore_selection *base, const struct pstore_selection *new_,
		       const struct pmodel_diff_opts *d, bool group, const struct profsvc_output *o,
		       diff_write_fn write, const void *ctx, struct profsvc_answer *a, char *why,
		       size_t why_size)
{
	struct diff_parts p = { 0 };
	struct pmodel_result_info bi, ni;
	struct profsvc_view view = { 0 };
	struct profsvc_read rd;
	int err = profsvc_read_begin(s, ro, &rd);

	profsvc_answer_init(a, ANSWER_CAP, profsvc_read_account(&rd));
	err = err ? err : profsvc_view_init(&view, o, why, why_size);
	err = err ? err : profsvc_read_range(&rd, base, why, why_size);
	err = err ? err : profsvc_read_range(&rd, new_, why, why_size);
	err = err ? err : diff_parts_new(s, &rd, base, new_, d, group, &view, &p, why, why_size);
	profsvc_read_end(&rd);
	profsvc_view_release(&view);
	if (p.base && p.new_) {
		pmodel_result_info(p.base, &bi);
		pmodel_result_info(p.new_, &ni);
		a->base_profiles = bi.profiles;
		a->profiles = ni.profiles;
	}
	if (!err) {
		err = write(p.diff, p.base, p.new_, ctx, a);
		profsvc_write_failed(err, why, why_size, err == -E2BIG ? TOO_LARGE : "");
	}
	diff_parts_free(&p);
	return err;
}

int profsvc_diff(struct profsvc *s, const struct symsvc_request_opts *ro,
		 const struct pstore_selection *base, const struct pstore_selection *new_,
		 const struct pmodel_diff_opts *d, const struct profsvc_output *o,
		 struct profsvc_answer *a, char *why, size_t why_size)
{
	return diff_answer(s, ro, base, new_, d, groups_unresolved(o, "table"), o, write_diff, o,
			   a, why, why_size);
}

/* Pyroscope's render-diff answer; ctx the max_nodes (size_t). */
static int render_diff_json(const struct pmodel_diff *d, const struct pmodel_result *base,
			    const struct pmodel_result *new_, const void *ctx,
			    struct profsvc_answer *a)
{
	struct ember_buf *b = &a->body;
	struct pmodel_result_info ri;
	int64_t left, right;
	int err = ember_buf_appendf(b, "{\"version\":1,\"flamebearer\":");

	(void)base;
	pmodel_result_info(new_, &ri);
	pmodel_diff_totals(d, &left, &right);
	err = err ? err : pmodel_write_flamebearer_diff(d, *(const size_t *)ctx, pmodel_write_buf, b);
	err = err ? err : render_metadata(b, ri.type, "double");
	return err ? err
		   : ember_buf_appendf(b,
				       ",\"timeline\":null,\"leftTicks\":%" PRId64
				       ",\"rightTicks\":%" PRId64 "}\n",
				       left, right);
}

int profsvc_render_diff(struct profsvc *s, const struct symsvc_request_opts *ro,
			const struct pstore_selection *left, const struct pstore_selection *right,
			size_t max_nodes, struct profsvc_answer *a, char *why, size_t why_size)
{
	return diff_answer(s, ro, left, right, NULL, false, NULL, render_diff_json, &max_nodes, a,
			   why, why_size);
}

int profsvc_flamegraph_diff(struct profsvc *s, const struct symsvc_request_opts *ro,
			    const struct pstore_selection *left,
			    const struct pstore_selection *right, size_t max_nodes,
			    struct pmodel_flamegraph **out, char *why, size_t why_size)
{
	struct diff_parts p = { 0 };
	struct profsvc_read rd;
	int err = profsvc_read_begin(s, ro, &rd);

	*out = NULL;
	err = err ? err : profsvc_read_range(&rd, left, why, why_size);
	err = err ? err : profsvc_read_range(&rd, right, why, why_size);
	err = err ? err : diff_parts_new(s, &rd, left, right, NULL, false, NULL, &p, why, why_size);
	profsvc_read_end(&rd);
	if (!err)
		err = profsvc_write_failed(pmodel_flamegraph_diff_new(p.diff, max_nodes, out), why,
					   why_size, "the flame graph: out of memory");
	diff_parts_free(&p);
	return err;
}
