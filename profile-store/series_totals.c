/*
 * series_totals.c - a selection's totals over time, what a UI draws as
 * the line above a flame graph: each matching profile's total of the
 * queried column (kept per profile, so no row is read) added to the
 * point of its time, one line per distinct tuple of group_by values.
 */
#include "pstore_query.h"
#include "pstore_series.h"

#define MAX_POINTS 10000
#define MAX_LINES 10000

struct totals {
	struct pstore_series_set *set;
	const char *const *group_by;
	size_t ng;
	int64_t from, step;
};

static bool same_group(const struct pstore_series_line *l, const struct pstore_seriestab *t,
		       uint32_t s, const char *const *group_by, size_t ng)
{
	for (size_t i = 0; i < ng; i++) {
		const char *v = pstore_series_label(t, s, group_by[i]);

		if (strcmp(l->labels[i].value, v ? v : ""))
			return false;
	}
	return true;
}

static int new_line(struct totals *tt, const struct pstore_seriestab *t, uint32_t s, size_t *out)
{
	struct pstore_series_set *set = tt->set;
	struct pstore_series_line *l, *lines;

	if (set->n_lines >= MAX_LINES)
		return -E2BIG;
	lines = realloc(set->lines, (set->n_lines + 1) * sizeof(*lines));
	if (!lines)
		return -ENOMEM;
	set->lines = lines;
	l = &lines[set->n_lines];
	memset(l, 0, sizeof(*l));
	l->values = calloc(set->n_points, sizeof(*l->values));
	l->labels = calloc(tt->ng + 1, sizeof(*l->labels));
	if (!l->values || !l->labels) {
		free(l->values);
		free(l->labels);
		return -ENOMEM;
	}
	set->n_lines++;
	for (size_t i = 0; i < tt->ng; i++) {
		const char *v = pstore_series_label(t, s, tt->group_by[i]);

		l->labels[i].name = strdup(tt->group_by[i]);
		l->labels[i].value = strdup(v ? v : "");
		l->n_labels++;
		if (!l->labels[i].name || !l->labels[i].value)
			return -ENOMEM;
	}
	*out = set->n_lines - 1;
	return 0;
}

static int on_profile(void *ctx, const struct pstore_seriestab *t, const struct pstore_prof *p,
		      int32_t col, const int64_t *totals, const struct pstore_cov *cov)
{
	struct totals *tt = ctx;
	size_t line = 0, point = (size_t)((p->time - tt->from) / tt->step);

	(void)cov;
	while (line < tt->set->n_lines &&
	       !same_group(&tt->set->lines[line], t, p->series, tt->group_by, tt->ng))
		line++;
	if (line == tt->set->n_lines)
		EMBER_FORWARD_IF_ERROR(new_line(tt, t, p->series, &line));
	if (point < tt->set->n_points)
		tt->set->lines[line].values[point] =
			pmodel_add(tt->set->lines[line].values[point], totals[col]);
	return 0;
}

void pstore_series_set_free(struct pstore_series_set *set)
{
	if (!set)
		return;
	for (size_t i = 0; i < set->n_lines; i++) {
		for (size_t k = 0; k < set->lines[i].n_labels; k++) {
			free((char *)set->lines[i].labels[k].name);
			free((char *)set->lines[i].labels[k].value);
		}
		free(set->lines[i].labels);
		free(set->lines[i].values);
	}
	free(set->lines);
	free(set->type);
	free(set);
}

static int check(const struct pstore_selection *sel, int64_t step, struct ember_diag *d)
{
	EMBER_FAIL_IF(!sel || !sel->to_ns || sel->to_ns <= sel->from_ns || step <= 0, d,
		      -EINVAL, "series: a time range (from < to) and a step > 0 are needed");
	EMBER_FAIL_IF((uint64_t)(sel->to_ns - sel->from_ns) / (uint64_t)step >= MAX_POINTS, d,
		      -E2BIG, "series: more than %d points (a larger step)", MAX_POINTS);
	return 0;
}

int pstore_series_totals(struct pstore *s, const struct pstore_selection *sel, int64_t step_ns,
			 const char *const *group_by, size_t n_group_by,
			 struct pstore_series_set **out, char *why, size_t why_size)
{
	struct ember_diag d = ember_diag_make(why, why_size);
	struct totals tt = { .group_by = group_by, .ng = n_group_by, .step = step_ns };
	struct pstore_scan sc = { .profile = on_profile, .ctx = &tt };
	struct pstore_snapshot snap;
	int err = check(sel, step_ns, &d);

	if (err)
		return err;
	tt.from = sel->from_ns;
	tt.set = calloc(1, sizeof(*tt.set));
	if (!tt.set)
		return EMBER_FAIL(&d, -ENOMEM, "out of memory");
	tt.set->from_ns = sel->from_ns;
	tt.set->step_ns = step_ns;
	tt.set->n_points =
		(size_t)(((uint64_t)(sel->to_ns - sel->from_ns) + (uint64_t)step_ns - 1) /
			 (uint64_t)step_ns);
	err = pstore_scan_begin(s, sel, true, &sc, &snap, &d);
	if (!err) {
		err = pstore_scan_run(&snap, &sc);
		if (!err && !(tt.set->type = strdup(sc.q.type)))
			err = -ENOMEM;
		pstore_scan_end(&sc, &snap);
	}
	if (err == -E2BIG)
		err = EMBER_FAIL(&d, err, "series: more than %d lines", MAX_LINES);
	if (err) {
		pstore_series_set_free(tt.set);
		return err == -ENOMEM ? EMBER_FAIL(&d, err, "out of memory") : err;
	}
	*out = tt.set;
	return 0;
}
