/*
 * diff_gate.h - `ember diff --fail-on-regression` and the diff's CI
 * reports (--format markdown, junit), in ember-client (diff_gate.c).
 *
 * The gate judges nothing itself: it reads the regression table the
 * profile model writes (format=table, docs/http-api.md "Diff": per
 * function the shares, delta, noise, z and `flagged`, past the
 * thresholds min_abs_pct, min_rel, min_z), from the server or from the
 * offline diff, and a regression is a flagged row whose self share grew.
 */
#ifndef EMBER_CLI_DIFF_GATE_H
#define EMBER_CLI_DIFF_GATE_H

#include "common.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The exit code of `ember diff --fail-on-regression` with a regression
 * (1: any other failure, 2: bad usage). */
#define DIFF_GATE_EXIT_REGRESSION 3

struct diff_gate_row {
	const char *name;	/* points into the gate's JSON document */
	double base_self_pct, new_self_pct, delta_self_pct, noise_self_pct, z;
	bool flagged;
};

/* One regression table; rows in the table's order (grown first). */
struct diff_gate {
	const char *type;
	double base_total, new_total, base_profiles, new_profiles;
	double min_abs_pct, min_rel, min_z;
	struct diff_gate_row *rows;
	size_t nrows;
	void *doc;		/* the parsed JSON the strings point into */
};

/* What was compared, for the reports' header: each side a selector and
 * range (against a server) or a file (offline); NULL entries are left out. */
struct diff_gate_sides {
	const char *base, *new_;		/* selector or file */
	const char *base_from, *base_to, *new_from, *new_to;
};

/* Parse the table JSON json[0..len) into *g (diff_gate_release): 0, or
 * -EINVAL with why (a malformed answer). */
int diff_gate_parse(const char *json, size_t len, struct diff_gate *g, char *why, size_t size);
void diff_gate_release(struct diff_gate *g);
/* Whether row r is a regression: flagged and its self share grew. */
bool diff_gate_is_regression(const struct diff_gate_row *r);
/* How many rows are regressions. */
size_t diff_gate_regressions(const struct diff_gate *g);
/* The table as a pull-request comment: a header naming the sides, the
 * thresholds and the verdict, then the first `limit` rows (0: all) and
 * any regression past them. */
int diff_gate_write_markdown(const struct diff_gate *g, const struct diff_gate_sides *s,
			     size_t limit, struct ember_buf *out);
/* A JUnit XML report: one failing testcase per regression, one passing
 * summary case. */
int diff_gate_write_junit(const struct diff_gate *g, const struct diff_gate_sides *s,
			  struct ember_buf *out);
/* "ember diff: N regressions past ...: NAME (+D points, z Z), ..." on f,
 * or nothing without one. */
void diff_gate_report(const struct diff_gate *g, FILE *f);

#endif /* EMBER_CLI_DIFF_GATE_H */
