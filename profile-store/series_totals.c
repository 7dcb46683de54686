/*
 * series_totals.c - a selection's totals over time, what a UI draws as
 * the line above a flame graph: each matching profile's total of the
 * queried column (kept per profile, so no row is read) added to the
 * point of its time and counted there (an average's divisor), one line
 * per distinct tuple of group_by values.
 *
 * The grid is bounded before a profile is read (pstore.h): the points by
 * the step, the lines by what the points leave of the cells (each line
 * refused as it is met, so no more than the bound is ever allocated), its
 * values taken from the request's memory account.  A series' line is
 * found once per source (line_of), not once per profile.
 */
#include "pstore_query.h"
#include "pstore_series.h"

struct totals {
	struct pstore_series_set *set;
	const char *const *group_by;
	size_t ng;
	int64_t from, step;
	size_t max_lines;		/* what the points leave of the cells */
	struct ember_mem_account *acct;	/* the request's; NULL: none */
	const struct pstore_seriestab *t; /* the source line_of is for */
	int32_t *line_of;		/* per series of t: its line, -1 not yet */
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

	if (set->n_lines >= tt->max_lines)
		return -E2BIG;
	EMBER_FORWARD_IF_ERROR(ember_mem_account_take(
		tt->acct, set->n_points * (sizeof(*l->values) + sizeof(*l->counts))));
	lines = realloc(set->lines, (set->n_lines + 1) * sizeof(*lines));
	if (!lines)
		return -ENOMEM;
	set->lines = lines;
	l = &lines[set->n_lines];
	memset(l, 0, sizeof(*l));
	l->values = calloc(set->n_points, sizeof(*l->values));
	l->counts = calloc(set->n_points, sizeof(*l->counts));
	l->labels = calloc(tt->ng + 1, sizeof(*l->labels));
	if (!l->values || !l->counts || !l->labels) {
		free(l->values);
		free(l->counts);
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

/* The line of series s of t, found (or made) once per source. */
static int line_of(struct totals *tt, const struct pstore_seriestab *t, uint32_t s, size_t *out)
{
	size_t line = 0;

	if (tt->t != t) {
		int32_t *v = realloc(tt->line_of, (t->series.n + 1) * sizeof(*v));

		if (!v)
			return -ENOMEM;
		memset(v, 0xff, (t->series.n + 1) * sizeof(*v)); /* -1: not yet */
		tt->line_of = v;
		tt->t = t;
	}
	if (tt->line_of[s] >= 0) {
		*out = (size_t)tt->line_of[s];
		return 0;
	}
	while (line < tt->set->n_lines &&
	       !same_group(&tt->set->lines[line], t, s, tt->group_by, tt->ng))
		line++;
	if (line == tt->set->n_lines)
		EMBER_FORWARD_IF_ERROR(new_line(tt, t, s, &line));
	tt->line_of[s] = (int32_t)line;
	*out = line;
	return 0;
}

static int on_profile(void *ctx, const struct pstore_seriestab *t, const struct pstore_prof *p,
		      uint64_t count, int32_t col, const int64_t *totals, const struct pstore_cov *cov)
{
	struct totals *tt = ctx;
	size_t line, point = (size_t)((p->time - tt->from) / tt->step);

	(void)cov;
	EMBER_FORWARD_IF_ERROR(line_of(tt, t, p->series, &line));
	if (point < tt->set->n_points) {
		tt->set->lines[line].values[point] =
			pmodel_add(tt->set->lines[line].values[point], totals[col]);
		tt->set->lines[line].counts[point] += (uint32_t)count;
	}
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
		free(set->lines[i].counts);
	}
	free(set->lines);
	free(set->type);
	free(set);
}

/* The grid's points, and the lines they leave of the cells, in tt. */
static int grid(const struct pstore_selection *sel, int64_t step, struct totals *tt,
		struct ember_diag *d)
{
	uint64_t span, points;

	EMBER_FAIL_IF(!sel || !sel->to_ns || sel->to_ns <= sel->from_ns || step <= 0, d,
		      -EINVAL, "series: a time range (from < to) and a step > 0 are needed");
	span = (uint64_t)sel->to_ns - (uint64_t)sel->from_ns;
	points = span / (uint64_t)step + (span % (uint64_t)step != 0);
	EMBER_FAIL_IF(points > PSTORE_SERIES_MAX_POINTS, d, -E2BIG,
		      "series: %llu points, more than %d (a larger step)",
		      (unsigned long long)points, PSTORE_SERIES_MAX_POINTS);
	tt->set->n_points = (size_t)points;
	tt->max_lines = PSTORE_SERIES_MAX_CELLS / tt->set->n_points;
	if (tt->max_lines > PSTORE_SERIES_MAX_LINES)
		tt->max_lines = PSTORE_SERIES_MAX_LINES;
	return 0;
}

/* The error of a scan, said. */
static int scan_failed(const struct totals *tt, int err, struct ember_diag *d)
{
	if (err == -E2BIG && !d->set && tt->set->n_lines < tt->max_lines)
		return EMBER_FAIL(d, err, "series: the grid is past the request's memory share");
	if (err == -E2BIG && !d->set)
		return EMBER_FAIL(d, err,
				  "series: more than %zu lines of %zu points (at most %d values: "
				  "fewer group_by labels, a narrower selector or a larger step)",
				  tt->max_lines, tt->set->n_points, PSTORE_SERIES_MAX_CELLS);
	if (err == -EAGAIN && !d->set)
		return EMBER_FAIL(d, err, "series: the server's memory is taken now");
	return err == -ENOMEM ? EMBER_FAIL(d, err, "out of memory") : err;
}

int pstore_series_totals(struct pstore *s, const struct pstore_selection *sel, int64_t step_ns,
			 const char *const *group_by, size_t n_group_by,
			 struct pstore_series_set **out, char *why, size_t why_size)
{
	struct ember_diag d = ember_diag_make(why, why_size);
	struct totals tt = { .group_by = group_by, .ng = n_group_by, .step = step_ns };
	struct pstore_scan sc = { .profile = on_profile, .ctx = &tt, .grid = step_ns,
				  .rollups = !(sel && sel->full_resolution) };
	struct pstore_snapshot snap;
	int err;

	tt.set = calloc(1, sizeof(*tt.set));
	if (!tt.set)
		return EMBER_FAIL(&d, -ENOMEM, "out of memory");
	err = grid(sel, step_ns, &tt, &d);
	if (!err) {
		tt.from = tt.set->from_ns = sel->from_ns;
		tt.set->step_ns = step_ns;
		tt.acct = EMBER_OPTS_GET(sel->request, account, NULL);
		err = pstore_scan_begin(s, sel, true, &sc, &snap, &d);
	}
	if (!err) {
		err = pstore_scan_run(&snap, &sc);
		tt.set->rollup_only_step = sc.rollup_only_step;
		atomic_fetch_add(&s->profiles_read, sc.q.read);
		atomic_fetch_add(&s->rows_bytes_read, sc.q.rows_bytes);
		if (!err && !(tt.set->type = strdup(sc.q.type)))
			err = -ENOMEM;
		pstore_scan_end(&sc, &snap);
		err = err ? scan_failed(&tt, err, &d) : 0;
	}
	free(tt.line_of);
	if (err) {
		pstore_series_set_free(tt.set);
		return err;
	}
	*out = tt.set;
	return 0;
}
