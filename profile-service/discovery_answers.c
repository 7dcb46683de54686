/*
 * discovery_answers.c - the answers of what the store holds, without reading
 * rows (docs/http-api.md, "Discovery", "Totals over time", "Symbolization
 * coverage"), whole: the label names, a label's values, the profile
 * types, the totals at a step (what a UI draws above its flame graph) and
 * the build IDs that leave samples unsymbolized, most samples first, and
 * (of a selection of one type, merged as a query merges it) the share
 * named at the leaf and whole, per module (pmodel_result_coverage).
 */
#include "profsvc_internal.h"
#include "symsvc.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#define ANSWER_CAP ((size_t)256 << 20)
#define MIN_STEP_NS ((int64_t)10 * 1000000000)

static int json_strings(struct ember_buf *b, const struct pstore_strlist *l)
{
	int err = ember_buf_putc(b, '[');

	for (size_t i = 0; !err && i < l->n; i++) {
		err = i ? ember_buf_putc(b, ',') : 0;
		err = err ? err : ember_json_str(b, l->v[i], strlen(l->v[i]));
	}
	return err ? err : ember_buf_putc(b, ']');
}

/* list as {"KEY":[...]} (with a "name" first when name). */
static int list_json(struct ember_buf *b, const struct pstore_strlist *l, const char *key,
		     const char *name)
{
	int err = ember_buf_putc(b, '{');

	if (!err && name) {
		err = ember_buf_appendf(b, "\"name\":");
		err = err ? err : ember_json_str(b, name, strlen(name));
		err = err ? err : ember_buf_putc(b, ',');
	}
	err = err ? err : ember_buf_appendf(b, "\"%s\":", key);
	err = err ? err : json_strings(b, l);
	return err ? err : ember_buf_appendf(b, "}\n");
}

/* What a label read asks: the names (all NULL), name's values, or the
 * label sets restricted to set_names (sets). */
struct label_read {
	const char *name;
	bool sets;
	const char *const *set_names;
	size_t n_set_names;
};

/* The selection's answer to q into *out. */
static int read_labels(struct profsvc *s, const struct symsvc_request_opts *ro,
		       const struct pstore_selection *sel, const struct label_read *q,
		       struct profsvc_answer *a, struct pstore_strlist **out, char *why,
		       size_t why_size)
{
	struct profsvc_read rd;
	struct pstore_selection rs;
	int err = profsvc_read_begin(s, ro, &rd);

	profsvc_answer_init(a, ANSWER_CAP, profsvc_read_account(&rd));
	rs = profsvc_read_selection(&rd, sel);
	err = err ? err : profsvc_read_range(&rd, sel, why, why_size);
	if (!err && q->sets)
		err = pstore_label_sets(s->store, &rs, q->set_names, q->n_set_names, out, why,
					why_size);
	else if (!err)
		err = q->name ? pstore_label_values(s->store, q->name, &rs, out, why, why_size)
			      : pstore_label_names(s->store, &rs, out, why, why_size);
	profsvc_read_end(&rd);
	return err;
}

int profsvc_labels(struct profsvc *s, const struct symsvc_request_opts *ro,
		   const struct pstore_selection *sel, const char *name, struct profsvc_answer *a,
		   char *why, size_t why_size)
{
	const struct label_read q = { .name = name };
	struct pstore_strlist *l = NULL;
	int err = read_labels(s, ro, sel, &q, a, &l, why, why_size);

	if (err)
		return err;
	err = list_json(&a->body, l, name ? "values" : "names", name);
	pstore_strlist_free(l);
	return profsvc_write_failed(err, why, why_size, "out of memory");
}

int profsvc_label_list(struct profsvc *s, const struct symsvc_request_opts *ro,
		       const struct pstore_selection *sel, const char *name,
		       struct profsvc_answer *a, char *why, size_t why_size)
{
	const struct label_read q = { .name = name };
	struct pstore_strlist *l = NULL;
	int err = read_labels(s, ro, sel, &q, a, &l, why, why_size);

	if (err)
		return err;
	err = json_strings(&a->body, l);
	err = err ? err : ember_buf_putc(&a->body, '\n');
	pstore_strlist_free(l);
	return profsvc_write_failed(err, why, why_size, "out of memory");
}

int profsvc_label_sets(struct profsvc *s, const struct symsvc_request_opts *ro,
		       const struct pstore_selection *sel, const char *const *names,
		       size_t n_names, struct profsvc_answer *a, char *why, size_t why_size)
{
	const struct label_read q = { .sets = true, .set_names = names, .n_set_names = n_names };
	struct pstore_strlist *l = NULL;
	int err = read_labels(s, ro, sel, &q, a, &l, why, why_size);

	if (err)
		return err;
	err = ember_buf_appendf(&a->body, "{\"sets\":[");
	for (size_t i = 0; !err && i < l->n; i++) {
		err = i ? ember_buf_putc(&a->body, ',') : 0;
		err = err ? err : ember_buf_append(&a->body, l->v[i], strlen(l->v[i]));
	}
	err = err ? err : ember_buf_appendf(&a->body, "]}\n");
	pstore_strlist_free(l);
	return profsvc_write_failed(err, why, why_size, "out of memory");
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

int profsvc_types(struct profsvc *s, const struct symsvc_request_opts *ro,
		  const struct pstore_selection *sel, struct profsvc_answer *a, char *why,
		  size_t why_size)
{
	struct pstore_strlist *l = NULL;
	struct profsvc_read rd;
	struct pstore_selection rs;
	int err = profsvc_read_begin(s, ro, &rd);

	profsvc_answer_init(a, ANSWER_CAP, profsvc_read_account(&rd));
	rs = profsvc_read_selection(&rd, sel);
	err = err ? err : profsvc_read_range(&rd, sel, why, why_size);
	err = err ? err : pstore_profile_types(s->store, &rs, &l, why, why_size);
	profsvc_read_end(&rd);
	if (err)
		return err;
	err = ember_buf_appendf(&a->body, "{\"types\":[");
	for (size_t i = 0; !err && i < l->n; i++) {
		err = i ? ember_buf_putc(&a->body, ',') : 0;
		err = err ? err : type_object(&a->body, l->v[i]);
	}
	err = err ? err : ember_buf_appendf(&a->body, "]}\n");
	pstore_strlist_free(l);
	return profsvc_write_failed(err, why, why_size, "out of memory");
}

/* ---- series ------------------------------------------------------------------ */

double profsvc_series_value(const struct pstore_series_set *set, size_t line, size_t i,
			    bool average)
{
	const struct pstore_series_line *l = &set->lines[line];

	return average && l->counts[i] ? (double)l->values[i] / l->counts[i]
				       : (double)l->values[i];
}

/* A line's total over the range: the sum of its points (averages when
 * average), the order of a top-N. */
static double line_total(const struct pstore_series_set *set, size_t line, bool average)
{
	double sum = 0;

	for (size_t i = 0; i < set->n_points; i++)
		sum += profsvc_series_value(set, line, i, average);
	return sum;
}

static int labels_cmp(const struct pstore_series_line *a, const struct pstore_series_line *b)
{
	for (size_t k = 0; k < a->n_labels && k < b->n_labels; k++) {
		int c = strcmp(a->labels[k].value, b->labels[k].value);

		if (c)
			return c;
	}
	return (a->n_labels > b->n_labels) - (a->n_labels < b->n_labels);
}

struct ranked {
	struct pstore_series_line line;
	double total;
};

/* Largest total first, then by labels (Pyroscope's TopSeries). */
static int ranked_cmp(const void *pa, const void *pb)
{
	const struct ranked *a = pa, *b = pb;

	if (a->total != b->total)
		return a->total < b->total ? 1 : -1;
	return labels_cmp(&a->line, &b->line);
}

/* set's lines from keep on freed (as a set of their own). */
static int drop_lines(struct pstore_series_set *set, size_t keep)
{
	struct pstore_series_set *drop = calloc(1, sizeof(*drop));

	if (!drop)
		return -ENOMEM;
	drop->n_lines = set->n_lines - keep;
	drop->lines = malloc(drop->n_lines * sizeof(*drop->lines));
	if (!drop->lines) {
		free(drop);
		return -ENOMEM;
	}
	memcpy(drop->lines, set->lines + keep, drop->n_lines * sizeof(*drop->lines));
	set->n_lines = keep;
	pstore_series_set_free(drop);
	return 0;
}

/* set's lines past the limit of largest totals dropped, the rest in
 * that order. */
static int keep_top(struct pstore_series_set *set, size_t limit, bool average)
{
	struct ranked *r;

	if (!limit)
		return 0;
	r = calloc(set->n_lines, sizeof(*r));
	if (!r)
		return -ENOMEM;
	for (size_t i = 0; i < set->n_lines; i++)
		r[i] = (struct ranked){ set->lines[i], line_total(set, i, average) };
	ember_qsort(r, set->n_lines, sizeof(*r), ranked_cmp);
	for (size_t i = 0; i < set->n_lines; i++)
		set->lines[i] = r[i].line;
	free(r);
	return set->n_lines > limit ? drop_lines(set, limit) : 0;
	return 0;
}

static int line_json(struct ember_buf *b, const struct pstore_series_set *set, size_t i,
		     bool average)
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
		err = average ? ember_buf_appendf(b, "%s%.17g", p ? "," : "",
						  profsvc_series_value(set, i, p, true))
			      : ember_buf_appendf(b, "%s%" PRId64, p ? "," : "", l->values[p]);
	return err ? err : ember_buf_appendf(b, "]}");
}

static int series_json(struct ember_buf *b, const struct pstore_series_set *set, bool average)
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
		err = line_json(b, set, i, average);
	return err ? err : ember_buf_appendf(b, "]}\n");
}

int profsvc_series_set(struct profsvc *s, const struct symsvc_request_opts *ro,
		       const struct pstore_selection *sel, const struct profsvc_series_opts *o,
		       struct pstore_series_set **out, char *why, size_t why_size)
{
	struct pstore_series_set *set = NULL;
	struct profsvc_read rd;
	struct pstore_selection rs;
	int64_t step_ns = EMBER_OPTS_GET(o, step_ns, 0);
	int err = profsvc_read_begin(s, ro, &rd);

	*out = NULL;
	if (!step_ns) {
		step_ns = (sel->to_ns - sel->from_ns) / 240;
		step_ns = step_ns < MIN_STEP_NS ? MIN_STEP_NS : step_ns;
	}
	rs = profsvc_read_selection(&rd, sel);
	err = err ? err : profsvc_read_range(&rd, sel, why, why_size);
	err = err ? err
		  : pstore_series_totals(s->store, &rs, step_ns, EMBER_OPTS_GET(o, group_by, NULL),
					 EMBER_OPTS_GET(o, n_group_by, 0), &set, why, why_size);
	profsvc_read_end(&rd);
	if (err == -E2BIG && !(ro && ro->account && ro->account->err))
		return -EINVAL; /* what the request asks is too much: the grid's bounds */
	if (err)
		return err;
	err = keep_top(set, EMBER_OPTS_GET(o, limit, 0), EMBER_OPTS_GET(o, average, false));
	if (err) {
		pstore_series_set_free(set);
		return profsvc_write_failed(err, why, why_size, "out of memory");
	}
	*out = set;
	return 0;
}

int profsvc_series(struct profsvc *s, const struct symsvc_request_opts *ro,
		   const struct pstore_selection *sel, const struct profsvc_series_opts *o,
		   struct profsvc_answer *a, char *why, size_t why_size)
{
	struct pstore_series_set *set = NULL;
	int err;

	profsvc_answer_init(a, ANSWER_CAP, EMBER_OPTS_GET(ro, account, NULL));
	err = profsvc_series_set(s, ro, sel, o, &set, why, why_size);
	if (err)
		return err;
	err = series_json(&a->body, set, EMBER_OPTS_GET(o, average, false));
	pstore_series_set_free(set);
	return profsvc_write_failed(err, why, why_size, "the answer is too large: a larger step");
}

/* ---- stats ------------------------------------------------------------------- */

int profsvc_time_range(struct profsvc *s, struct pstore_time_range *out)
{
	return pstore_time_range(s->store, out);
}

/* ---- coverage ----------------------------------------------------------------- */

static double pct(uint64_t part, uint64_t all)
{
	return all ? 100.0 * (double)part / (double)all : 0;
}

/* The totals and the stored records' rows by build ID; the object left
 * open. */
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
	return err ? err : ember_buf_appendf(b, "]");
}

/* The store's reason for build ID bid ("" none). */
static const char *stored_reason(const struct pstore_coverage *cv, const char *bid)
{
	for (size_t i = 0; *bid && i < cv->n_rows; i++)
		if (!strcmp(cv->rows[i].build_id, bid))
			return cv->rows[i].reason;
	return "";
}

static double share(int64_t part, int64_t all)
{
	return pct(part > 0 ? (uint64_t)part : 0, all > 0 ? (uint64_t)all : 0);
}

static int module_json(struct ember_buf *b, const struct pmodel_coverage_module *m,
		       const char *reason, int64_t total)
{
	int err = ember_buf_appendf(b, "{\"build_id\":");

	err = err ? err : ember_json_str(b, m->build_id, strlen(m->build_id));
	err = err ? err : ember_buf_appendf(b, ",\"file\":");
	err = err ? err : ember_json_str(b, m->file, strlen(m->file));
	err = err ? err : ember_buf_appendf(b, ",\"jit\":%s,\"reason\":", m->jit ? "true" : "false");
	err = err ? err : ember_json_str(b, reason, strlen(reason));
	return err ? err
		   : ember_buf_appendf(b,
				       ",\"value\":%" PRId64 ",\"unnamed\":%" PRId64
				       ",\"unnamed_pct\":%.4f,\"leaf\":%" PRId64
				       ",\"leaf_named\":%" PRId64 ",\"leaf_named_pct\":%.4f"
				       ",\"all_named_pct\":%.4f}",
				       m->value, m->unnamed, share(m->unnamed, total), m->leaf,
				       m->leaf_named, share(m->leaf_named, m->leaf),
				       share(m->value - m->unnamed, m->value));
}

/* What share of r (the selection merged and resolved) is named at the
 * leaf and whole, and its first rows modules (0: all) that leave stacks
 * unnamed: the object's fields "named" and "modules". */
static int names_json(struct ember_buf *b, const struct pmodel_result *r,
		      const struct pstore_coverage *cv, size_t rows)
{
	struct pmodel_coverage *c = NULL;
	int err = pmodel_result_coverage(r, &c);
	size_t k = 0;

	err = err ? err
		  : ember_buf_appendf(b,
				      ",\"named\":{\"total\":%" PRId64 ",\"leaf_named\":%" PRId64
				      ",\"leaf_named_pct\":%.4f,\"all_named\":%" PRId64
				      ",\"all_named_pct\":%.4f},\"modules\":[",
				      c->total, c->leaf_named, share(c->leaf_named, c->total),
				      c->all_named, share(c->all_named, c->total));
	for (size_t i = 0; !err && i < c->m.n && (!rows || k < rows); i++)
		if (c->m.v[i].unnamed > 0) {
			err = k++ ? ember_buf_putc(b, ',') : 0;
			err = err ? err
				  : module_json(b, &c->m.v[i], stored_reason(cv, c->m.v[i].build_id),
						c->total);
		}
	pmodel_coverage_free(c);
	return err ? err : ember_buf_appendf(b, "]");
}

int profsvc_coverage(struct profsvc *s, const struct symsvc_request_opts *ro,
		     const struct pstore_selection *sel, size_t rows, struct profsvc_answer *a,
		     char *why, size_t why_size)
{
	struct pstore_coverage *cv = NULL;
	struct pmodel_result *r = NULL;
	struct profsvc_read rd;
	struct pstore_selection rs;
	int err = profsvc_read_begin(s, ro, &rd);

	profsvc_answer_init(a, ANSWER_CAP, profsvc_read_account(&rd));
	rs = profsvc_read_selection(&rd, sel);
	err = err ? err : profsvc_read_range(&rd, sel, why, why_size);
	err = err ? err : pstore_coverage(s->store, &rs, &cv, why, why_size);
	if (!err && sel->type && *sel->type) /* the names: of one type's merge */
		err = profsvc_read_merge(s, &rd, sel, &r, why, why_size);
	profsvc_read_end(&rd);
	if (err) {
		pstore_coverage_free(cv);
		return err;
	}
	err = coverage_json(&a->body, cv, rows);
	err = err || !r ? err : names_json(&a->body, r, cv, rows);
	err = err ? err : ember_buf_appendf(&a->body, "}\n");
	pmodel_result_free(r);
	pstore_coverage_free(cv);
	return profsvc_write_failed(err, why, why_size, "out of memory");
}
