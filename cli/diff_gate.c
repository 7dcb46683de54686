/*
 * diff_gate.c - the regression gate of `ember diff` (docs/cli.md, "A
 * regression gate in CI"): the regression table's JSON (format=table of
 * GET /api/v1/diff, or the offline diff's own, pmodel_write_diff_table)
 * read back, its verdict (a flagged row whose self share grew: the
 * model's thresholds and noise estimate, never recomputed here), and two
 * reports of it for CI: a Markdown pull-request comment and a JUnit XML
 * report (the schema Jenkins, GitLab and GitHub's test reporters read:
 * testsuites > testsuite > testcase > failure).
 */
#include "diff_gate.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- reading the table ----------------------------------------------------- */

static double num(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : 0;
}

static int parse_row(json_t *j, struct diff_gate_row *r)
{
	json_t *name = json_object_get(j, "name");

	if (!json_is_string(name) || !json_is_boolean(json_object_get(j, "flagged")))
		return -EINVAL;
	*r = (struct diff_gate_row){
		.name = json_string_value(name),
		.base_self_pct = num(j, "base_self_pct"),
		.new_self_pct = num(j, "new_self_pct"),
		.delta_self_pct = num(j, "delta_self_pct"),
		.noise_self_pct = num(j, "noise_self_pct"),
		.z = num(j, "z"),
		.flagged = json_is_true(json_object_get(j, "flagged")),
	};
	return 0;
}

static int parse_rows(json_t *doc, struct diff_gate *g, char *why, size_t size)
{
	json_t *rows = json_object_get(doc, "rows"), *j;
	size_t i;

	if (!json_is_array(rows) || !json_is_string(json_object_get(doc, "type"))) {
		snprintf(why, size, "no \"rows\" or \"type\": not a regression table");
		return -EINVAL;
	}
	g->rows = calloc(json_array_size(rows) + 1, sizeof(*g->rows));
	if (!g->rows)
		return -ENOMEM;
	json_array_foreach(rows, i, j) {
		if (parse_row(j, &g->rows[i])) {
			snprintf(why, size, "row %zu: no \"name\" or \"flagged\"", i);
			return -EINVAL;
		}
	}
	g->nrows = json_array_size(rows);
	return 0;
}

int diff_gate_parse(const char *json, size_t len, struct diff_gate *g, char *why, size_t size)
{
	json_error_t e;
	json_t *doc = json_loadb(json, len, 0, &e);
	int err;

	*g = (struct diff_gate){ 0 };
	if (!doc) {
		snprintf(why, size, "not JSON: %s (line %d)", e.text, e.line);
		return -EINVAL;
	}
	g->doc = doc;
	err = parse_rows(doc, g, why, size);
	if (err) {
		diff_gate_release(g);
		return err;
	}
	g->type = json_string_value(json_object_get(doc, "type"));
	g->base_total = num(doc, "base_total");
	g->new_total = num(doc, "new_total");
	g->base_profiles = num(doc, "base_profiles");
	g->new_profiles = num(doc, "new_profiles");
	g->min_abs_pct = num(doc, "min_abs_pct");
	g->min_rel = num(doc, "min_rel");
	g->min_z = num(doc, "min_z");
	return 0;
}

void diff_gate_release(struct diff_gate *g)
{
	if (!g)
		return;
	free(g->rows);
	json_decref(g->doc);
	*g = (struct diff_gate){ 0 };
}

bool diff_gate_is_regression(const struct diff_gate_row *r)
{
	return r->flagged && r->delta_self_pct > 0;
}

size_t diff_gate_regressions(const struct diff_gate *g)
{
	size_t n = 0;

	for (size_t i = 0; i < g->nrows; i++)
		n += diff_gate_is_regression(&g->rows[i]);
	return n;
}

/* ---- shared text -------------------------------------------------------------- */

/* "0.5 points, 10% and 3 sigma": the thresholds as the table states them. */
static int put_thresholds(const struct diff_gate *g, struct ember_buf *b)
{
	return ember_buf_appendf(b, "%g points, %g%% and %g sigma", g->min_abs_pct,
				 100 * g->min_rel, g->min_z);
}

/* z as a number, or "inf" (the table's 1e9: a change with no noise). */
static int put_z(double z, struct ember_buf *b)
{
	if (z >= 1e9 || z <= -1e9)
		return ember_buf_appendf(b, "%sinf", z < 0 ? "-" : "");
	return ember_buf_appendf(b, "%.1f", z);
}

/* "SIDE (FROM to TO)" of one side, through esc (Markdown or XML text). */
static int put_side(struct ember_buf *b, const char *what, const char *from, const char *to,
		    int (*esc)(struct ember_buf *, const char *))
{
	int err = esc(b, what ? what : "{}");

	if (!err && (from || to))
		err = ember_buf_appendf(b, " (");
	if (!err && (from || to))
		err = esc(b, from ? from : "now-1h");
	if (!err && (from || to))
		err = ember_buf_appendf(b, " to ");
	if (!err && (from || to))
		err = esc(b, to ? to : "now");
	if (!err && (from || to))
		err = ember_buf_putc(b, ')');
	return err;
}

/* ---- Markdown ------------------------------------------------------------------ */

/* s as a code span: fenced by one more backtick than its longest run, '|'
 * escaped (GitHub's tables split on it even inside code), newlines as
 * spaces (and a space inside the fence when the name has backticks). */
static int md_code(struct ember_buf *b, const char *s)
{
	size_t run = 0, longest = 0;
	int err = 0;

	for (const char *c = s; *c; c++) {
		run = *c == '`' ? run + 1 : 0;
		longest = run > longest ? run : longest;
	}
	for (size_t i = 0; !err && i <= longest; i++)
		err = ember_buf_putc(b, '`');
	if (!err && longest)
		err = ember_buf_putc(b, ' ');
	for (const char *c = s; !err && *c; c++)
		err = *c == '|'	 ? ember_buf_appendf(b, "\\|")
		      : *c == '\n' || *c == '\r' ? ember_buf_putc(b, ' ')
						 : ember_buf_putc(b, *c);
	if (!err && longest)
		err = ember_buf_putc(b, ' ');
	for (size_t i = 0; !err && i <= longest; i++)
		err = ember_buf_putc(b, '`');
	return err;
}

static int md_header(const struct diff_gate *g, const struct diff_gate_sides *s, size_t k,
		     struct ember_buf *b)
{
	int err = ember_buf_appendf(b, "### Ember profile diff: %s\n\n",
				    k ? "regression" : "no regression");

	if (!err)
		err = ember_buf_appendf(b, "Base ");
	if (!err)
		err = put_side(b, s->base, s->base_from, s->base_to, md_code);
	if (!err)
		err = ember_buf_appendf(b, ", %.0f profile%s; new ", g->base_profiles,
					g->base_profiles == 1 ? "" : "s");
	if (!err)
		err = put_side(b, s->new_, s->new_from, s->new_to, md_code);
	if (!err)
		err = ember_buf_appendf(b, ", %.0f profile%s; type ", g->new_profiles,
					g->new_profiles == 1 ? "" : "s");
	if (!err)
		err = md_code(b, g->type);
	if (!err)
		err = ember_buf_appendf(b, ".\n\n**%s**: %zu function%s whose self share grew past ",
					k ? "FAIL" : "PASS", k, k == 1 ? "" : "s");
	if (!err)
		err = put_thresholds(g, b);
	if (!err)
		err = ember_buf_appendf(b, " of noise.\n\n| | function | self before | self after |"
					   " delta (points) | noise | z |\n"
					   "|---|---|---:|---:|---:|---:|---:|\n");
	return err;
}

static int md_row(const struct diff_gate_row *r, struct ember_buf *b)
{
	int err = ember_buf_appendf(b, "| %s | ", diff_gate_is_regression(r) ? "**regressed**"
						 : r->flagged		     ? "improved"
									     : "");

	if (!err)
		err = md_code(b, r->name);
	if (!err)
		err = ember_buf_appendf(b, " | %.2f%% | %.2f%% | %+.2f | %.2f | ", r->base_self_pct,
					r->new_self_pct, r->delta_self_pct, r->noise_self_pct);
	if (!err)
		err = put_z(r->z, b);
	return err ? err : ember_buf_appendf(b, " |\n");
}

int diff_gate_write_markdown(const struct diff_gate *g, const struct diff_gate_sides *s,
			     size_t limit, struct ember_buf *out)
{
	size_t shown = 0;
	int err = md_header(g, s, diff_gate_regressions(g), out);

	for (size_t i = 0; !err && i < g->nrows; i++) {
		if (limit && shown >= limit && !diff_gate_is_regression(&g->rows[i]))
			continue;
		err = md_row(&g->rows[i], out);
		shown++;
	}
	if (!err && shown < g->nrows)
		err = ember_buf_appendf(out, "\n%zu of %zu functions shown.\n", shown, g->nrows);
	return err;
}

/* ---- JUnit XML ------------------------------------------------------------------- */

/* s as XML character data or an attribute value (common's escaping). */
static int xml_text(struct ember_buf *b, const char *s)
{
	return ember_xml_str(b, s, strlen(s));
}

static int junit_failure(const struct diff_gate *g, const struct diff_gate_row *r,
			 struct ember_buf *b)
{
	int err = ember_buf_appendf(b, "    <testcase classname=\"ember.diff.regression\" name=\"");

	if (!err)
		err = xml_text(b, r->name);
	if (!err)
		err = ember_buf_appendf(b, "\">\n      <failure type=\"regression\" message=\"self share"
					   " %.2f%% -&gt; %.2f%% (%+.2f points, z ",
					r->base_self_pct, r->new_self_pct, r->delta_self_pct);
	if (!err)
		err = put_z(r->z, b);
	if (!err)
		err = ember_buf_appendf(b, ")\">self share grew past ");
	if (!err)
		err = put_thresholds(g, b);
	if (!err)
		err = ember_buf_appendf(b, " of noise (noise %.2f points)</failure>\n"
					   "    </testcase>\n", r->noise_self_pct);
	return err;
}

static int junit_summary(const struct diff_gate *g, const struct diff_gate_sides *s,
			 struct ember_buf *b)
{
	int err = ember_buf_appendf(b, "    <testcase classname=\"ember.diff\" name=\"%zu functions"
				       " compared: base ", g->nrows);

	if (!err)
		err = put_side(b, s->base, s->base_from, s->base_to, xml_text);
	if (!err)
		err = ember_buf_appendf(b, ", new ");
	if (!err)
		err = put_side(b, s->new_, s->new_from, s->new_to, xml_text);
	return err ? err : ember_buf_appendf(b, "\"/>\n");
}

int diff_gate_write_junit(const struct diff_gate *g, const struct diff_gate_sides *s,
			  struct ember_buf *out)
{
	size_t k = diff_gate_regressions(g);
	int err = ember_buf_appendf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
				    "<testsuites name=\"ember diff\" tests=\"%zu\" failures=\"%zu\">\n"
				    "  <testsuite name=\"ember diff ", k + 1, k);

	if (!err)
		err = xml_text(out, g->type);
	if (!err)
		err = ember_buf_appendf(out, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\""
					     " skipped=\"0\">\n", k + 1, k);
	if (!err)
		err = junit_summary(g, s, out);
	for (size_t i = 0; !err && i < g->nrows; i++)
		if (diff_gate_is_regression(&g->rows[i]))
			err = junit_failure(g, &g->rows[i], out);
	return err ? err : ember_buf_appendf(out, "  </testsuite>\n</testsuites>\n");
}

void diff_gate_report(const struct diff_gate *g, FILE *f)
{
	size_t k = diff_gate_regressions(g), said = 0;

	if (!k)
		return;
	fprintf(f, "ember diff: %zu regression%s (self share grew past %g points, %g%% and %g sigma):",
		k, k == 1 ? "" : "s", g->min_abs_pct, 100 * g->min_rel, g->min_z);
	for (size_t i = 0; i < g->nrows; i++) {
		const struct diff_gate_row *r = &g->rows[i];

		if (!diff_gate_is_regression(r))
			continue;
		fprintf(f, "%s '%s' (%+.2f points, z %.1f)", said++ ? "," : "", r->name,
			r->delta_self_pct, r->z);
	}
	fputc('\n', f);
}
