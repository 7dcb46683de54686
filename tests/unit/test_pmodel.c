/*
 * test_pmodel.c - unit tests of profile-model/: results made from pprof
 * files, the top table (recursion counted once), the JSON tree and
 * folded stacks, the flame graph (checked by xmllint), and diffs (their
 * noise estimate, their folded and flame-graph outputs), a result
 * focused on a call path (pmodel_result_focus) and one cut to its largest
 * nodes (pmodel_result_truncate), and a dictionary's import, whose
 * guesses are taken only when equal.  The outputs of results a store merged, and the diff's pprof against
 * `go tool pprof -diff_base`, are test_pstore.c's.
 */
#include "pmodel_internal.h"
#include "pprof.h"
#include "unit.h"
/* after unit.h, whose parameters would shadow its globals */
#include "profile_fixture.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- outputs -------------------------------------------------------------------------- */


static struct pmodel_result *offline(const char *const *stacks, const int64_t *counts, size_t n,
				     const char *type)
{
	struct pprof_profile *p = mkprof(stacks, counts, n, T0);
	struct pmodel_result *r = NULL;
	char why[256];

	if (p && pmodel_result_from_pprof(p, type, &r, why, sizeof(why)))
		fprintf(stderr, "pmodel_result_from_pprof: %s\n", why);
	pprof_profile_free(p);
	return r;
}

static int test_pmodel__top_counts_recursion_once(void)
{
	struct pmodel_result *r = offline(SREC, CREC, 3, "samples");
	struct pmodel_top_row *rows;
	size_t n;
	struct ember_buf b;

	CHECK(r);
	CHECK_INT(pmodel_result_top(r, 0, &rows, &n), ==, 0);
	CHECK_INT(n, ==, 4);
	CHECK_STR(rows[0].name, "leaf");
	CHECK_INT(rows[0].self, ==, 9);
	CHECK_INT(rows[0].total, ==, 9);
	CHECK(fabs(rows[0].self_pct - 90) < 1e-9);
	CHECK_STR(rows[1].name, "other");
	CHECK_STR(rows[2].name, "main");
	CHECK_INT(rows[2].total, ==, 10);
	CHECK_STR(rows[3].name, "rec");
	CHECK_INT(rows[3].self, ==, 0);
	CHECK_INT(rows[3].total, ==, 9); /* not 15: "rec;rec" counts once */
	free(rows);
	CHECK_INT(pmodel_result_top(r, 2, &rows, &n), ==, 0);
	CHECK_INT(n, ==, 2);
	free(rows);
	ember_buf_init(&b, 1 << 20);
	CHECK_INT(pmodel_write_top(r, 0, true, pmodel_write_buf, &b), ==, 0);
	CHECK(strstr(b.data, "{\"name\":\"rec\",\"file\":\"rec.c\",\"self\":0,\"self_pct\":0.0000,"
			     "\"total\":9,\"total_pct\":90.0000}"));
	CHECK(strstr(b.data, "\"total\":10,\"profiles\":1,\"rows\":["));
	ember_buf_reset(&b);
	CHECK_INT(pmodel_write_top(r, 0, false, pmodel_write_buf, &b), ==, 0);
	CHECK(strstr(b.data, "             9  90.00%  90.00%              9  90.00%  leaf\n"));
	ember_buf_release(&b);
	pmodel_result_free(r);
	return 0;
}

/* A frame's line is in the JSON tree where every location merged into its
 * node names the same one: "a" called from line 10 and from line 20 has
 * none, "main" and "b" keep theirs. */
static int test_pmodel__tree_json_line_only_where_one(void)
{
	static const char *const st[] = { "main;a", "main;b" };
	static const int64_t c[] = { 1, 1 };
	struct pprof_profile *p = mkprof(st, c, 2, T0);
	struct pprof_line ln = { 0, 20, 0 };
	struct pmodel_result *r = NULL;
	uint64_t locs[2];
	int64_t v[2] = { 1, 10 * MS };
	struct ember_buf b;
	char why[256];

	CHECK(p);
	CHECK_INT(func_of(p, "a", &ln.function_id), ==, 0);
	CHECK_INT(pprof_add_location(p, 1, 0x402000, &locs[0]), ==, 0);
	CHECK_INT(pprof_location_set_lines(p, locs[0], &ln, 1), ==, 0);
	CHECK_INT(loc_of(p, 1, "main", &locs[1]), ==, 0);
	CHECK_INT(pprof_add_sample(p, locs, 2, v, 2), ==, 0);
	CHECK_INT(pmodel_result_from_pprof(p, "samples", &r, why, sizeof(why)), ==, 0);
	pprof_profile_free(p);
	ember_buf_init(&b, 1 << 20);
	CHECK_INT(pmodel_write_tree_json(r, pmodel_write_buf, &b), ==, 0);
	CHECK_STR(b.data,
		  "{\"name\":\"total\",\"self\":0,\"total\":3,\"children\":[{\"name\":\"main\","
		  "\"file\":\"main.c\",\"line\":10,\"self\":0,\"total\":3,\"children\":[{\"name\":\"a\","
		  "\"file\":\"a.c\",\"self\":2,\"total\":2},{\"name\":\"b\",\"file\":\"b.c\",\"line\":10,"
		  "\"self\":1,\"total\":1}]}]}");
	ember_buf_release(&b);
	pmodel_result_free(r);
	return 0;
}

static int test_pmodel__tree_json_and_folded(void)
{
	struct pmodel_result *r = offline(SREC, CREC, 3, "samples");
	struct ember_buf b;

	CHECK(r);
	ember_buf_init(&b, 1 << 20);
	CHECK_INT(pmodel_write_tree_json(r, pmodel_write_buf, &b), ==, 0);
	CHECK_STR(
		b.data,
		"{\"name\":\"total\",\"self\":0,\"total\":10,\"children\":[{\"name\":\"main\","
		"\"file\":\"main.c\",\"line\":10,\"self\":0,\"total\":10,\"children\":[{\"name\":\"other\",\"file\":\"other.c\",\"line\":10,\"self\":1,\"total\":1},"
		"{\"name\":\"rec\",\"file\":\"rec.c\",\"line\":10,\"self\":0,\"total\":9,\"children\":[{\"name\":\"leaf\","
		"\"file\":\"leaf.c\",\"line\":10,\"self\":3,\"total\":3},{\"name\":\"rec\",\"file\":\"rec.c\",\"line\":10,\"self\":0,\"total\":6,\"children\":"
		"[{\"name\":\"leaf\",\"file\":\"leaf.c\",\"line\":10,\"self\":6,\"total\":6}]}]}]}]}");
	ember_buf_reset(&b);
	CHECK_INT(pmodel_write_folded(r, pmodel_write_buf, &b), ==, 0);
	CHECK_STR(b.data, "main;other 1\nmain;rec;leaf 3\nmain;rec;rec;leaf 6\n");
	ember_buf_release(&b);
	pmodel_result_free(r);
	return 0;
}

static int test_pmodel__flamegraph_svg_is_valid(void)
{
	struct pmodel_result *r = offline(SREC, CREC, 3, "cpu");
	const char *const weird[] = { "main;a<b>&\"c\";\xff\xfe bad utf8;tab\there" };
	struct pmodel_result *w = offline(weird, CREC, 1, "cpu");
	struct ember_buf b;
	char path[300];
	int rc;

	CHECK(r && w);
	CHECK(!make_dir());
	ember_buf_init(&b, 16 << 20);
	CHECK_INT(pmodel_write_flamegraph(r, NULL, pmodel_write_buf, &b), ==, 0);
	CHECK(strstr(b.data, "function zoom("));
	CHECK(strstr(b.data, "function search("));
	CHECK(strstr(b.data, "<title>rec (90.00 ms, 9 samples, 90.00%)</title>"));
	snprintf(path, sizeof(path), "%s/flame.svg", dir);
	CHECK(!write_file(path, b.data, b.len));
	rc = check_svg(path, "leaf");
	CHECK(rc == 0 || rc == UNIT_SKIP);
	ember_buf_reset(&b);
	CHECK_INT(pmodel_write_flamegraph(
			  w,
			  &(struct pmodel_svg_opts){ .sz = sizeof(struct pmodel_svg_opts),
						    .title = "T & <x>",
						    .icicle = true },
			  pmodel_write_buf, &b),
		  ==, 0);
	CHECK(strstr(b.data, "e:n=\"a&lt;b&gt;&amp;&quot;c&quot;\""));
	CHECK(!write_file(path, b.data, b.len));
	CHECK(check_svg(path, "main") == rc);
	ember_buf_release(&b);
	pmodel_result_free(r);
	pmodel_result_free(w);
	remove_dir();
	return rc;
}

static const struct pmodel_diff_row *row_of(const struct pmodel_diff_row *rows, size_t n,
					    const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(rows[i].name, name) == 0)
			return &rows[i];
	return NULL;
}

static int test_pmodel__diff_table_flags_past_noise(void)
{
	struct pmodel_result *b = offline(SB, CB, 5, "cpu"), *n = offline(SN, CN, 5, "cpu");
	struct pmodel_diff *d = NULL;
	struct pmodel_diff_row *rows;
	const struct pmodel_diff_row *hot, *few, *gone, *fresh, *idle;
	size_t k;

	CHECK(b && n);
	CHECK_INT(pmodel_diff_new(b, n, NULL, &d), ==, 0);
	CHECK_INT(pmodel_diff_table(d, &rows, &k), ==, 0);
	hot = row_of(rows, k, "hot");
	few = row_of(rows, k, "few");
	gone = row_of(rows, k, "gone");
	fresh = row_of(rows, k, "fresh");
	idle = row_of(rows, k, "idle");
	CHECK(hot && few && gone && fresh && idle);
	CHECK(strcmp(rows[0].name, "hot") == 0); /* the largest growth first */
	CHECK(fabs(hot->base_self_pct - 30) < 1e-9 && fabs(hot->new_self_pct - 50) < 1e-9);
	CHECK(hot->flagged && hot->z > 3);
	/* 2 -> 5 samples of 1,000 and 1,400: +150% relative, but noise */
	CHECK(few->rel_self > 0.5 && !few->flagged && fabs(few->z) < 3);
	/* a vanished function is there, shrunk; a new one grown */
	CHECK(gone->new_self_pct == 0 && gone->delta_self_pct < 0 && gone->flagged);
	CHECK(fresh->base_self_pct == 0 && fresh->delta_self_pct > 0 && isinf(fresh->rel_self));
	CHECK(idle->delta_self_pct < 0 && idle->flagged); /* 30% -> 21.4% of 300 samples */
	CHECK(strcmp(rows[k - 1].name, "gone") == 0); /* the largest shrink last */
	free(rows);
	pmodel_diff_free(d);
	pmodel_result_free(b);
	pmodel_result_free(n);
	return 0;
}

static int test_pmodel__diff_folded_and_flamegraph(void)
{
	struct pmodel_result *b = offline(SB, CB, 5, "samples"), *n = offline(SN, CN, 5, "samples");
	struct pmodel_diff *d = NULL;
	struct ember_buf out;
	char path[300];
	int rc;

	CHECK(b && n);
	CHECK_INT(pmodel_diff_new(b, n, NULL, &d), ==, 0);
	ember_buf_init(&out, 16 << 20);
	CHECK_INT(pmodel_write_diff_folded(d, false, pmodel_write_buf, &out), ==, 0);
	CHECK_STR(out.data, "main;few 2 5\nmain;fresh 0 95\nmain;gone 98 0\nmain;idle 300 300\n"
			    "main;work;cold 300 300\nmain;work;hot 300 700\n");
	ember_buf_reset(&out);
	CHECK_INT(pmodel_write_diff_folded(d, true, pmodel_write_buf, &out), ==, 0);
	CHECK(strstr(out.data, "main;gone 137 0\n")); /* 98 x 1400 / 1000 */
	ember_buf_reset(&out);
	/* the differential tree: both sides per frame, vanished and new kept */
	CHECK_INT(pmodel_write_diff_tree_json(d, pmodel_write_buf, &out), ==, 0);
	CHECK(strncmp(out.data, "{\"name\":\"total\",\"base_self\":0,\"base_total\":1000,"
			       "\"new_self\":0,\"new_total\":1400,\"children\":[", 90) == 0);
	CHECK(strstr(out.data, "{\"name\":\"gone\",\"base_self\":98,\"base_total\":98,"
			       "\"new_self\":0,\"new_total\":0,\"file\":\"gone.c\",\"line\":10}"));
	CHECK(strstr(out.data, "{\"name\":\"fresh\",\"base_self\":0,\"base_total\":0,"
			       "\"new_self\":95,\"new_total\":95,\"file\":\"fresh.c\",\"line\":10}"));
	CHECK(strstr(out.data, "{\"name\":\"hot\",\"base_self\":300,\"base_total\":300,"
			       "\"new_self\":700,\"new_total\":700,\"file\":\"hot.c\",\"line\":10}"));
	ember_buf_reset(&out);
	CHECK_INT(pmodel_write_diff_flamegraph(d, NULL, pmodel_write_buf, &out), ==, 0);
	CHECK(strstr(out.data, "<title>gone (base 9.80%, new 0.00%, -9.80 points)</title>"));
	CHECK(strstr(out.data, "<title>hot (base 30.00%, new 50.00%, +20.00 points)</title>"
			       "<rect x=\"10.00\"") || strstr(out.data, "fill=\"rgb(255,35,35)\""));
	CHECK(!make_dir());
	snprintf(path, sizeof(path), "%s/diff.svg", dir);
	CHECK(!write_file(path, out.data, out.len));
	rc = check_svg(path, "hot");
	CHECK(rc == 0 || rc == UNIT_SKIP);
	ember_buf_release(&out);
	pmodel_diff_free(d);
	pmodel_result_free(b);
	pmodel_result_free(n);
	remove_dir();
	return rc;
}

/* g's level d is exactly want[0..n). */
static int check_level(const struct pmodel_flamegraph *g, size_t d, const int64_t *want, size_t n)
{
	CHECK(d < g->n_levels);
	CHECK_INT(g->level_len[d], ==, n);
	for (size_t i = 0; i < n; i++)
		if (g->levels[d][i] != want[i]) {
			fprintf(stderr, "level %zu number %zu: %lld, want %lld\n", d, i,
				(long long)g->levels[d][i], (long long)want[i]);
			return 1;
		}
	return 0;
}

/* The flame graph of querier.v1 (pmodel_flamegraph_new), four numbers a
 * node, of main 1 (self), main;a 5, main;b 2, main;b;c 1, x 1: a child
 * starts after its parent's self, x delta-coded against the end of the
 * level's previous node, names in visit order.  Whole (max_nodes 0, and 5:
 * the five nodes fit), then max_nodes 3: the third largest total is 3,
 * so c (under b) and x (under total) fold into an "other" of each. */
static int test_pmodel__flamegraph_levels_and_folding(void)
{
	static const char *const st[] = { "main", "main;a", "main;b", "main;b;c", "x" };
	static const int64_t ct[] = { 1, 5, 2, 1, 1 };
	static const int64_t l0[] = { 0, 10, 0, 0 };
	static const int64_t l1[] = { 0, 9, 1, 1, 0, 1, 1, 5 };
	static const int64_t l2[] = { 1, 5, 5, 2, 0, 3, 2, 3 };
	static const int64_t l3[] = { 8, 1, 1, 4 };
	static const int64_t f1[] = { 0, 9, 1, 1, 0, 1, 1, 4 };
	static const char *const names[] = { "total", "main", "a", "b", "c", "x" };
	static const char *const fnames[] = { "total", "main", "a", "b", "other" };
	static const size_t whole[] = { 0, 5 };
	struct pmodel_result *r = offline(st, ct, 5, "samples");
	struct pmodel_flamegraph *g = NULL;

	CHECK(r);
	for (size_t k = 0; k < 2; k++) {
		CHECK_INT(pmodel_flamegraph_new(r, whole[k], &g), ==, 0);
		CHECK_INT(g->node_width, ==, 4);
		CHECK_INT(g->total, ==, 10);
		CHECK_INT(g->max_self, ==, 5);
		CHECK_INT(g->n_names, ==, 6);
		for (size_t i = 0; i < 6; i++)
			CHECK_STR(g->names[i], names[i]);
		CHECK_INT(g->n_levels, ==, 4);
		CHECK(!check_level(g, 0, l0, 4) && !check_level(g, 1, l1, 8) &&
		      !check_level(g, 2, l2, 8) && !check_level(g, 3, l3, 4));
		pmodel_flamegraph_free(g);
	}
	CHECK_INT(pmodel_flamegraph_new(r, 3, &g), ==, 0);
	CHECK_INT(g->total, ==, 10);
	CHECK_INT(g->n_names, ==, 5);
	for (size_t i = 0; i < 5; i++)
		CHECK_STR(g->names[i], fnames[i]);
	CHECK_INT(g->n_levels, ==, 4);
	/* level 3: b's "other" (name 4 now) where c was, as c was */
	CHECK(!check_level(g, 0, l0, 4) && !check_level(g, 1, f1, 8) &&
	      !check_level(g, 2, l2, 8) && !check_level(g, 3, l3, 4));
	pmodel_flamegraph_free(g);
	pmodel_result_free(r);
	return 0;
}

/* The diff's flame graph, seven numbers a node (Pyroscope's
 * FlameGraphDiff): left main 1, main;a 3, main;b 2; right main;a 1,
 * main;c 4, x 2.  Whole, then with max_nodes 3 (x and b, larger side 2,
 * below the third largest, 3: folded into "other" under their parents). */
static int test_pmodel__flamegraph_diff_levels(void)
{
	static const char *const sl[] = { "main", "main;a", "main;b" };
	static const char *const sr[] = { "main;a", "main;c", "x" };
	static const int64_t cl[] = { 1, 3, 2 }, cr[] = { 1, 4, 2 };
	static const int64_t l0[] = { 0, 6, 0, 0, 7, 0, 0 };
	static const int64_t l1[] = { 0, 6, 1, 0, 5, 0, 1, 0, 0, 0, 0, 2, 2, 5 };
	static const int64_t l2[] = { 1, 3, 3, 0, 1, 1, 2, 0, 2, 2, 0, 0, 0, 3,
				      0, 0, 0, 0, 4, 4, 4 };
	static const int64_t f1[] = { 0, 6, 1, 0, 5, 0, 1, 0, 0, 0, 0, 2, 2, 4 };
	static const int64_t f2[] = { 1, 3, 3, 0, 1, 1, 2, 0, 0, 0, 0, 4, 4, 3,
				      0, 2, 2, 0, 0, 0, 4 };
	static const char *const names[] = { "total", "main", "a", "b", "c", "x" };
	static const char *const fnames[] = { "total", "main", "a", "c", "other" };
	struct pmodel_result *b = offline(sl, cl, 3, "samples"), *n = offline(sr, cr, 3, "samples");
	struct pmodel_diff *d = NULL;
	struct pmodel_flamegraph *g = NULL;

	CHECK(b && n);
	CHECK_INT(pmodel_diff_new(b, n, NULL, &d), ==, 0);
	CHECK_INT(pmodel_flamegraph_diff_new(d, 0, &g), ==, 0);
	CHECK_INT(g->node_width, ==, 7);
	CHECK_INT(g->left_total, ==, 6);
	CHECK_INT(g->right_total, ==, 7);
	CHECK_INT(g->total, ==, 13);
	CHECK_INT(g->max_self, ==, 4);
	CHECK_INT(g->n_names, ==, 6);
	for (size_t i = 0; i < 6; i++)
		CHECK_STR(g->names[i], names[i]);
	CHECK_INT(g->n_levels, ==, 3);
	CHECK(!check_level(g, 0, l0, 7) && !check_level(g, 1, l1, 14) && !check_level(g, 2, l2, 21));
	pmodel_flamegraph_free(g);
	CHECK_INT(pmodel_flamegraph_diff_new(d, 3, &g), ==, 0);
	CHECK_INT(g->n_names, ==, 5);
	for (size_t i = 0; i < 5; i++)
		CHECK_STR(g->names[i], fnames[i]);
	CHECK(!check_level(g, 0, l0, 7) && !check_level(g, 1, f1, 14) && !check_level(g, 2, f2, 21));
	CHECK_INT(g->max_self, ==, 4);
	pmodel_flamegraph_free(g);
	pmodel_diff_free(d);
	pmodel_result_free(b);
	pmodel_result_free(n);
	return 0;
}

/* Our diff pprof and table agree with `go tool pprof -normalize -diff_base`. */

/* Names are bytes from profiles: what XML 1.0 forbids (U+FFFF, U+FFFE, a
 * C0 control, an encoded surrogate) and bytes that are not UTF-8 become
 * U+FFFD in the flame graph and the JSON tree alike, so both parse. */
static int test_pmodel__names_xml_forbids_replaced_in_svg_and_json(void)
{
	const char *const st[] = { "main;x\xef\xbf\xbf\xef\xbf\xbe\x01\xed\xa0\x80\xff"
				   "y" };
	static const char want[] = "x\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
				   "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdy";
	struct pmodel_result *r = offline(st, CREC, 1, "cpu");
	struct ember_buf b;
	char path[300];
	int rc;

	CHECK(r);
	CHECK(!make_dir());
	ember_buf_init(&b, 16 << 20);
	CHECK_INT(pmodel_write_flamegraph(r, NULL, pmodel_write_buf, &b), ==, 0);
	snprintf(path, sizeof(path), "%s/flame.svg", dir);
	CHECK(!write_file(path, b.data, b.len));
	CHECK(strstr(b.data, want));
	CHECK(!memmem(b.data, b.len, "\xef\xbf\xbf", 3) && !memmem(b.data, b.len, "\xed\xa0", 2));
	rc = check_svg(path, "main");
	ember_buf_reset(&b);
	CHECK_INT(pmodel_write_tree_json(r, pmodel_write_buf, &b), ==, 0);
	CHECK(strstr(b.data, want));
	ember_buf_release(&b);
	pmodel_result_free(r);
	remove_dir();
	return rc;
}

/* An alias means one type by a fixed rule: the built-in type first, then
 * byte order; another type pushed with the same sample type never makes
 * it fail or changes what it means. */
static int test_pmodel__type_alias_fixed_rule(void)
{
	char *ids[] = { "aaa:cpu:nanoseconds:cpu:nanoseconds", "block:delay:nanoseconds:x:y",
			"mutex:delay:nanoseconds:contentions:count",
			"process_cpu:cpu:count:cpu:count",
			"process_cpu:cpu:nanoseconds:cpu:nanoseconds" };
	struct {
		const char *alias;
		size_t from, n; /* ids[from..from+n) held */
		const char *want;
	} c[] = {
		{ "cpu", 0, 5, "process_cpu:cpu:nanoseconds:cpu:nanoseconds" },
		{ "process_cpu:cpu", 0, 5, "process_cpu:cpu:nanoseconds:cpu:nanoseconds" },
		{ "cpu", 0, 4, "aaa:cpu:nanoseconds:cpu:nanoseconds" },
		{ "process_cpu:cpu", 0, 4, "process_cpu:cpu:count:cpu:count" },
		{ "cpu", 0, 0, "process_cpu:cpu:nanoseconds:cpu:nanoseconds" },
		{ "delay", 0, 5, "mutex:delay:nanoseconds:contentions:count" },
		{ "delay", 1, 1, "block:delay:nanoseconds:x:y" },
		{ "block:delay", 0, 5, "block:delay:nanoseconds:x:y" },
		{ "a:b:c:d:e", 0, 5, "a:b:c:d:e" },
	};
	char why[256];
	struct ember_diag d = ember_diag_make(why, sizeof(why));
	char *out = NULL;

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		CHECK_INT(pmodel_type_resolve(c[i].alias, ids + c[i].from, c[i].n, &out, &d), ==, 0);
		CHECK_STR(out, c[i].want);
		free(out);
	}
	CHECK_INT(pmodel_type_resolve("block:delay", ids, 0, &out, &d), ==, -PMODEL_ERR_TYPE);
	CHECK_INT(pmodel_type_resolve("nope", ids, 5, &out, &d), ==, -PMODEL_ERR_TYPE);
	return 0;
}

/* A result's type is checked: a type the file lacks and a diff of two
 * kinds of values fail with the model's typed error, which is the
 * store's number (the HTTP layer maps PSTORE_ERR_TYPE to 400). */
static int test_pmodel__types_checked_with_a_typed_error(void)
{
	struct pprof_profile *p = mkprof(SREC, CREC, 3, T0);
	struct pmodel_result *cpu = offline(SREC, CREC, 3, "cpu");
	struct pmodel_result *samples = offline(SREC, CREC, 3, "samples");
	struct pmodel_result *r = NULL;
	struct pmodel_diff *d = NULL;
	char why[256] = "";

	CHECK(p && cpu && samples);
	CHECK_INT(pmodel_result_from_pprof(p, "alloc_space", &r, why, sizeof(why)), ==,
		  -PMODEL_ERR_TYPE);
	CHECK(r == NULL && strstr(why, "alloc_space"));
	CHECK_INT(pmodel_diff_new(cpu, samples, NULL, &d), ==, -PMODEL_ERR_TYPE);
	CHECK(d == NULL);
	CHECK(strcmp(pmodel_strerror(-PMODEL_ERR_TYPE), "unknown or mismatched profile type") == 0);
	pprof_profile_free(p);
	pmodel_result_free(cpu);
	pmodel_result_free(samples);
	return 0;
}

/* Two sides of other types are the request's fault; an errno is ours. */
static int test_pmodel__error_kind(void)
{
	CHECK_INT(pmodel_error_kind(-PMODEL_ERR_TYPE), ==, EMBER_ERRK_MALFORMED);
	CHECK_INT(pmodel_error_kind(-ENOMEM), ==, EMBER_ERRK_UNAVAILABLE);
	CHECK_INT(pmodel_error_kind(-E2BIG), ==, EMBER_ERRK_UNAVAILABLE);
	CHECK_INT(pmodel_error_kind(-ENOSPC), ==, EMBER_ERRK_NO_SPACE);
	return 0;
}

/* ---- frame types (profile.frame.type) -------------------------------------------------- */

/* A location's frame type is part of what it is: the same address as a
 * native and as a kernel frame, or with no type, is three locations; an
 * import carries the type's string. */
static int test_pmodel__frame_type_part_of_a_location(void)
{
	struct pmodel_dict a, b;
	struct pmodel_import im;
	uint32_t native, kernel, none, again, out, moved;

	CHECK_INT(pmodel_dict_init(&a), ==, 0);
	CHECK_INT(pmodel_dict_init(&b), ==, 0);
	CHECK_INT(pmodel_strtab_intern0(&a.str, "native", &native), ==, 0);
	CHECK_INT(pmodel_strtab_intern0(&a.str, "kernel", &kernel), ==, 0);
	CHECK_INT(pmodel_dict_loc(&a, 0, 0x1234, native, NULL, 0, &native), ==, 0);
	CHECK_INT(pmodel_dict_loc(&a, 0, 0x1234, a.locs.v[native].type == 1 ? 2 : 1, NULL, 0,
				  &kernel), ==, 0);
	CHECK_INT(pmodel_dict_loc(&a, 0, 0x1234, 0, NULL, 0, &none), ==, 0);
	CHECK_INT(pmodel_dict_loc(&a, 0, 0x1234, a.locs.v[native].type, NULL, 0, &again), ==, 0);
	CHECK_INT(a.locs.n, ==, 3);
	CHECK(native != kernel && native != none && kernel != none);
	CHECK_INT(again, ==, native);
	CHECK_STR(pmodel_str(&a.str, a.locs.v[native].type), "native");
	CHECK_STR(pmodel_str(&a.str, a.locs.v[kernel].type), "kernel");
	CHECK_INT(a.locs.v[none].type, ==, 0);
	CHECK_INT(pmodel_dict_loc(&b, 0, 0x1234, 0, NULL, 0, &moved), ==, 0); /* b: ids differ */
	CHECK_INT(pmodel_import_init(&im, &a, &b), ==, 0);
	CHECK_INT(pmodel_import_loc(&im, kernel, &out), ==, 0);
	CHECK(out != moved);
	CHECK_STR(pmodel_str(&b.str, b.locs.v[out].type), "kernel");
	CHECK_INT(pmodel_import_loc(&im, none, &out), ==, 0);
	CHECK_INT(out, ==, moved);
	pmodel_import_release(&im);
	pmodel_dict_release(&a);
	pmodel_dict_release(&b);
	return 0;
}

/* Random dictionaries of few strings, functions, addresses and lines:
 * every one drawn from the same stream (seed), and with mutate, about
 * one choice in four drawn again from another, so that two of them hold
 * much the same entries in much the same order, and entries that differ
 * from the other's in one field. */
struct draw {
	uint64_t base, other;
	bool mutate;
};

static uint32_t rnd32(uint64_t *x, uint32_t n)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return (uint32_t)(*x % n);
}

static uint32_t pick(struct draw *r, uint32_t n)
{
	uint32_t v = rnd32(&r->base, n);

	return r->mutate && rnd32(&r->other, 4) == 0 ? rnd32(&r->other, n) : v;
}

static int random_dict(struct pmodel_dict *d, uint64_t seed, uint64_t other)
{
	static const char *const names[] = { "main", "run", "rum", "a.go", "b.go" };
	struct draw r = { seed, other, other != 0 };
	uint32_t id;

	EMBER_FORWARD_IF_ERROR(pmodel_dict_init(d));
	for (int i = 0; i < 24; i++) {
		struct pmodel_func f = { .start_line = pick(&r, 3) };

		EMBER_FORWARD_IF_ERROR(pmodel_strtab_intern0(&d->str, names[pick(&r, 5)], &f.name));
		EMBER_FORWARD_IF_ERROR(
			pmodel_strtab_intern0(&d->str, names[pick(&r, 5)], &f.system_name));
		EMBER_FORWARD_IF_ERROR(pmodel_strtab_intern0(&d->str, names[pick(&r, 5)], &f.filename));
		EMBER_FORWARD_IF_ERROR(pmodel_dict_func(d, &f, &id));
	}
	for (int i = 0; i < 60; i++) {
		struct pmodel_line ln[2] = { { pick(&r, (uint32_t)d->funcs.n), pick(&r, 3) },
					     { pick(&r, (uint32_t)d->funcs.n), pick(&r, 3) } };

		EMBER_FORWARD_IF_ERROR(
			pmodel_dict_loc(d, 0, 0x10 * pick(&r, 3), 0, ln, 1 + pick(&r, 2), &id));
	}
	for (int i = 0; i < 400; i++)
		EMBER_FORWARD_IF_ERROR(pmodel_dict_node(d, pick(&r, (uint32_t)pmodel_dict_nodes(d)),
							pick(&r, (uint32_t)d->locs.n), &id));
	return 0;
}

/* Whether node x of a and node y of b are the same stack, by content. */
static bool same_stack(const struct pmodel_dict *a, uint32_t x, const struct pmodel_dict *b,
		       uint32_t y)
{
	for (; x && y; x = a->node_parent.v[x], y = b->node_parent.v[y]) {
		const struct pmodel_loc *l = &a->locs.v[a->node_loc.v[x]], *m = &b->locs.v[b->node_loc.v[y]];

		if (l->address != m->address || l->nlines != m->nlines)
			return false;
		for (uint32_t i = 0; i < l->nlines; i++) {
			const struct pmodel_line *p = &a->lines.v[l->line_off + i];
			const struct pmodel_line *q = &b->lines.v[m->line_off + i];
			const struct pmodel_func *f = &a->funcs.v[p->func], *g = &b->funcs.v[q->func];

			if (p->line != q->line || f->start_line != g->start_line ||
			    strcmp(pmodel_str(&a->str, f->name), pmodel_str(&b->str, g->name)) ||
			    strcmp(pmodel_str(&a->str, f->system_name),
				   pmodel_str(&b->str, g->system_name)) ||
			    strcmp(pmodel_str(&a->str, f->filename), pmodel_str(&b->str, g->filename)))
				return false;
		}
	}
	return !x && !y;
}

/* An import's guesses (dict_import.c: the destination entry after the
 * one the source's previous entry went to) are taken only when that
 * entry is equal: variants of one random dictionary (so that a guess
 * often lands on an entry that differs in one field) imported into it,
 * every node lands on the stack of its content, and the destination
 * keeps each stack once; and a guessed node with the location but
 * another parent is not taken. */
static int test_pmodel__import_guesses_only_equal_entries(void)
{
	struct pmodel_dict dst, src;
	struct pmodel_import im;
	uint32_t out;

	CHECK_INT(random_dict(&dst, 0x2545f4914f6cdd1dull, 0), ==, 0);
	for (uint64_t round = 1; round <= 20; round++) {
		size_t before = pmodel_dict_nodes(&dst);

		CHECK_INT(random_dict(&src, 0x2545f4914f6cdd1dull, round), ==, 0);
		CHECK_INT(pmodel_import_init(&im, &src, &dst), ==, 0);
		for (uint32_t n = 1; n < pmodel_dict_nodes(&src); n++) {
			CHECK_INT(pmodel_import_node(&im, n, &out), ==, 0);
			CHECK(same_stack(&src, n, &dst, out));
		}
		CHECK_INT(pmodel_dict_nodes(&dst), >=, before);
		pmodel_import_release(&im);
		/* imported again, whole: nothing new (each stack held once) */
		before = pmodel_dict_nodes(&dst);
		CHECK_INT(pmodel_import_init(&im, &src, &dst), ==, 0);
		for (uint32_t n = 1; n < pmodel_dict_nodes(&src); n++)
			CHECK_INT(pmodel_import_node(&im, n, &out), ==, 0);
		CHECK_INT(pmodel_dict_nodes(&dst), ==, before);
		pmodel_import_release(&im);
		pmodel_dict_release(&src);
	}
	pmodel_dict_release(&dst);
	/* a guess with the location but not the parent: a 1 = (root, x), 2 =
	 * (1, y); b 1 = (root, x), 2 = (root, y) */
	CHECK_INT(pmodel_dict_init(&dst), ==, 0);
	CHECK_INT(pmodel_dict_init(&src), ==, 0);
	for (int k = 0; k < 2; k++) {
		struct pmodel_dict *d = k ? &src : &dst;
		uint32_t x, y, n1;

		CHECK_INT(pmodel_dict_loc(d, 0, 0x10, 0, NULL, 0, &x), ==, 0);
		CHECK_INT(pmodel_dict_loc(d, 0, 0x20, 0, NULL, 0, &y), ==, 0);
		CHECK_INT(pmodel_dict_node(d, 0, x, &n1), ==, 0);
		CHECK_INT(pmodel_dict_node(d, k ? 0 : n1, y, &out), ==, 0);
	}
	CHECK_INT(pmodel_import_init(&im, &src, &dst), ==, 0);
	CHECK_INT(pmodel_import_node(&im, 1, &out), ==, 0);
	CHECK_INT(out, ==, 1);
	CHECK_INT(pmodel_import_node(&im, 2, &out), ==, 0);
	CHECK_INT(out, ==, 3);
	CHECK_INT(dst.node_parent.v[out], ==, 0);
	pmodel_import_release(&im);
	pmodel_dict_release(&src);
	pmodel_dict_release(&dst);
	return 0;
}

/* A one-frame stack whose fields are v's, but field which (0: none)
 * changed: its key under seed into *out. */
static int one_field_key(int which, const struct ember_hash_key *seed, struct pmodel_stack_key *out)
{
	struct pmodel_dict d;
	struct pmodel_map m = { .start = 0x1000, .limit = 0x2000, .offset = which == 1 ? 0x10 : 0 };
	struct pmodel_func f = { .start_line = which == 2 ? 7 : 3 };
	struct pmodel_line ln = { 0, which == 3 ? 41 : 40 };
	struct pmodel_stack_key *k = NULL;
	uint32_t map, loc, node, type;
	int err = pmodel_dict_init(&d);

	err = err ? err : pmodel_strtab_intern0(&d.str, "pad", &type); /* other ids */
	err = err ? err : pmodel_strtab_intern0(&d.str, which == 4 ? "Run" : "run", &f.name);
	err = err ? err : pmodel_strtab_intern0(&d.str, which == 5 ? "x.run" : "run", &f.system_name);
	err = err ? err : pmodel_strtab_intern0(&d.str, which == 6 ? "b.c" : "a.c", &f.filename);
	err = err ? err : pmodel_strtab_intern0(&d.str, which == 7 ? "/lib/b" : "/lib/a", &m.filename);
	err = err ? err : pmodel_strtab_intern0(&d.str, which == 8 ? "beef" : "feed", &m.build_id);
	err = err ? err : pmodel_strtab_intern0(&d.str, which == 9 ? "kernel" : "native", &type);
	err = err ? err : pmodel_dict_func(&d, &f, &ln.func);
	err = err ? err : pmodel_dict_map(&d, &m, &map);
	err = err ? err : pmodel_dict_loc(&d, which == 10 ? 0 : map + 1, which == 11 ? 0x1234 : 0x1230,
					  which == 12 ? 0 : type, &ln, 1, &loc);
	err = err ? err : pmodel_dict_node(&d, 0, loc, &node);
	err = err ? err : pmodel_dict_stack_keys(&d, seed, &k);
	if (!err)
		*out = k[node];
	free(k);
	pmodel_dict_release(&d);
	return err;
}

/* Each field a stack's identity holds changes its key. */
static int test_pmodel__stack_keys_differ_in_each_field(void)
{
	struct ember_hash_key seed = { 0x0123456789abcdefull, 0xfedcba9876543210ull };
	struct pmodel_stack_key base, again, k;

	CHECK_INT(one_field_key(0, &seed, &base), ==, 0);
	CHECK_INT(one_field_key(0, &seed, &again), ==, 0);
	CHECK(base.a == again.a && base.b == again.b);
	for (int which = 1; which <= 12; which++) {
		CHECK_INT(one_field_key(which, &seed, &k), ==, 0);
		CHECK_INT(k.a != base.a && k.b != base.b, ==, 1);
	}
	return 0;
}

/* Stack keys (stack_keys.c) say what same_stack says: over variants of
 * one random dictionary (ids in other orders, entries that differ in one
 * field), two nodes' keys are equal exactly when their stacks are; and
 * sums added by key give the result a plain import gives, its
 * dictionary's order and values included. */
static int test_pmodel__stack_keys_equal_exactly_for_equal_stacks(void)
{
	struct ember_hash_key seed = { 0x0123456789abcdefull, 0xfedcba9876543210ull };
	struct pmodel_dict d[4];
	struct pmodel_stack_key *k[4];
	struct pmodel_result *plain, *keyed;
	struct pmodel_stack_index ix = { 0 };

	CHECK_INT(pmodel_result_new("cpu", &plain), ==, 0);
	CHECK_INT(pmodel_result_new("cpu", &keyed), ==, 0);
	for (int i = 0; i < 4; i++) {
		CHECK_INT(random_dict(&d[i], 0x2545f4914f6cdd1dull, (uint64_t)i), ==, 0);
		CHECK_INT(pmodel_dict_stack_keys(&d[i], &seed, &k[i]), ==, 0);
	}
	for (int i = 0; i < 4; i++)
		for (int j = i; j < 4; j++)
			for (uint32_t x = 0; x < pmodel_dict_nodes(&d[i]); x++)
				for (uint32_t y = 0; y < pmodel_dict_nodes(&d[j]); y++)
					CHECK_INT(k[i][x].a == k[j][y].a && k[i][x].b == k[j][y].b,
						  ==, same_stack(&d[i], x, &d[j], y));
	for (int i = 0; i < 4; i++) {
		size_t n = pmodel_dict_nodes(&d[i]);
		int64_t *self = calloc(n, sizeof(*self));
		struct pmodel_import im = { 0 };

		CHECK(self != NULL);
		for (size_t x = 1; x < n; x++)
			self[x] = (x * 7 + (size_t)i) % 5 ? (int64_t)(x % 13) : 0;
		CHECK_INT(pmodel_result_add(plain, &d[i], self), ==, 0);
		CHECK_INT(pmodel_result_add_keyed(keyed, &ix, &im, &d[i], k[i], self, 1, n / 2), ==, 0);
		CHECK_INT(pmodel_result_add_keyed(keyed, &ix, &im, &d[i], k[i], self, n / 2, n), ==, 0);
		pmodel_import_release(&im);
		free(self);
	}
	CHECK_INT(pmodel_dict_nodes(&keyed->dict), ==, pmodel_dict_nodes(&plain->dict));
	for (size_t x = 0; x < pmodel_dict_nodes(&plain->dict); x++) {
		CHECK_INT(keyed->dict.node_parent.v[x], ==, plain->dict.node_parent.v[x]);
		CHECK_INT(keyed->dict.node_loc.v[x], ==, plain->dict.node_loc.v[x]);
		CHECK_INT(keyed->self.v[x], ==, plain->self.v[x]);
	}
	CHECK_INT(pmodel_result_total(keyed), >, 0);
	pmodel_stack_index_release(&ix);
	pmodel_result_free(plain);
	pmodel_result_free(keyed);
	for (int i = 0; i < 4; i++) {
		free(k[i]);
		pmodel_dict_release(&d[i]);
	}
	return 0;
}

/* A profile whose locations carry Ember's Location field 1000: kept by
 * encoding and decoding, shown by the JSON tree and top table, written
 * back by the pprof output; an untyped frame shows none. */
static int test_pmodel__frame_type_through_pprof_and_outputs(void)
{
	static const char *const st[] = { "main;work;0x1234" };
	static const int64_t c[] = { 3 };
	struct pprof_profile *p = mkprof(st, c, 1, T0), *q = NULL;
	const pprof_message_t *m;
	struct pmodel_result *r = NULL;
	struct ember_buf b;
	char why[256];

	CHECK(p);
	m = pprof_message(p);
	for (size_t i = 0; i < m->n_location; i++) {
		const char *f = m->location[i]->n_line
					? pprof_string(p, pprof_function_by_id(
						  p, m->location[i]->line[0]->function_id)->name)
					: "";

		if (strcmp(f, "main"))
			CHECK_INT(pprof_location_set_frame_type(p, m->location[i]->id,
								*f ? "jvm" : "native"), ==, 0);
	}
	ember_buf_init(&b, 1 << 20);
	CHECK_INT(pprof_encode(p, false, &b), ==, 0);
	pprof_profile_free(p);
	CHECK_INT(pprof_decode(b.data, b.len, NULL, &q, why, sizeof(why)), ==, 0);
	CHECK_INT(pmodel_result_from_pprof(q, "samples", &r, why, sizeof(why)), ==, 0);
	pprof_profile_free(q);
	ember_buf_reset(&b);
	CHECK_INT(pmodel_write_tree_json(r, pmodel_write_buf, &b), ==, 0);
	CHECK(strstr(b.data, "{\"name\":\"work\",\"file\":\"work.c\",\"line\":10,"
			     "\"frame_type\":\"jvm\""));
	CHECK(strstr(b.data, "\"frame_type\":\"native\""));
	CHECK(strstr(b.data, "{\"name\":\"main\",\"file\":\"main.c\",\"line\":10,\"self\""));
	ember_buf_reset(&b);
	CHECK_INT(pmodel_write_top(r, 0, true, pmodel_write_buf, &b), ==, 0);
	CHECK(strstr(b.data, "{\"name\":\"work\",\"file\":\"work.c\",\"frame_type\":\"jvm\","));
	CHECK(strstr(b.data, "{\"name\":\"main\",\"file\":\"main.c\",\"self\""));
	ember_buf_reset(&b);
	CHECK_INT(pmodel_write_pprof(r, &b), ==, 0);
	pmodel_result_free(r);
	CHECK_INT(pprof_decode(b.data, b.len, NULL, &q, why, sizeof(why)), ==, 0);
	m = pprof_message(q);
	{
		size_t jvm = 0, native = 0, none = 0;

		for (size_t i = 0; i < m->n_location; i++) {
			const char *t = pprof_location_frame_type(q, m->location[i]);

			jvm += t && !strcmp(t, "jvm");
			native += t && !strcmp(t, "native");
			none += !t;
		}
		CHECK_INT(jvm, ==, 1);
		CHECK_INT(native, ==, 1);
		CHECK_INT(none, ==, 1);
	}
	pprof_profile_free(q);
	ember_buf_release(&b);
	return 0;
}

/* ---- focus (Pyroscope's stack_trace_selector) ---------------------------------------- */

/* The folded stacks of r focused on path[0, n), into b; its total. */
static int64_t focus_folded(const struct pmodel_result *r, const char *const *path, size_t n,
			    struct ember_buf *b, size_t *attr_rows)
{
	struct pmodel_result *f = NULL;
	struct pmodel_result_info ri;

	ember_buf_reset(b);
	if (pmodel_result_focus(r, path, n, &f) || pmodel_write_folded(f, pmodel_write_buf, b) ||
	    ember_buf_putc(b, '\0'))
		return -1;
	pmodel_result_info(f, &ri);
	*attr_rows = f->attr_rows.n;
	CHECK_INT(ri.profiles, ==, 2);
	CHECK_INT(ri.period, ==, 10);
	pmodel_result_free(f);
	return ri.total;
}

/* Only the stacks beginning with the path, root first, each whole: at
 * the root level, deeper, ending inside a location's inlined frames,
 * through an unsymbolized frame, matching nothing (empty, total 0), and
 * no path (every stack). */
static int test_pmodel__focus_keeps_the_stacks_under_a_path(void)
{
	static const char *const p_main[] = { "main" }, *const p_work[] = { "main", "work" };
	static const char *const p_inner[] = { "main", "work", "inner" };
	static const char *const p_lib[] = { "main", "libx.so+0x10" };
	static const char *const p_none[] = { "work" };
	static const char *const p_long[] = { "main", "work", "inner", "deeper" };
	struct pmodel_result *r = focus_result();
	struct ember_buf b;
	size_t attrs = 0;

	CHECK(r);
	ember_buf_init(&b, 1 << 20);
	CHECK_INT(focus_folded(r, p_main, 1, &b, &attrs), ==, 10);
	CHECK_STR(b.data, "main;idle 4\nmain;libx.so+0x10 1\nmain;work 2\nmain;work;inner 3\n");
	CHECK_INT(attrs, ==, 1);
	CHECK_INT(focus_folded(r, p_work, 2, &b, &attrs), ==, 5);
	CHECK_STR(b.data, "main;work 2\nmain;work;inner 3\n");
	CHECK_INT(focus_folded(r, p_inner, 3, &b, &attrs), ==, 3);
	CHECK_STR(b.data, "main;work;inner 3\n");
	CHECK_INT(attrs, ==, 1);
	CHECK_INT(focus_folded(r, p_lib, 2, &b, &attrs), ==, 1);
	CHECK_STR(b.data, "main;libx.so+0x10 1\n");
	CHECK_INT(attrs, ==, 0);
	CHECK_INT(focus_folded(r, p_none, 1, &b, &attrs), ==, 0);
	CHECK_STR(b.data, "");
	CHECK_INT(focus_folded(r, p_long, 4, &b, &attrs), ==, 0);
	CHECK_STR(b.data, "");
	CHECK_INT(focus_folded(r, NULL, 0, &b, &attrs), ==, 15);
	CHECK_STR(b.data, "main;idle 4\nmain;libx.so+0x10 1\nmain;work 2\nmain;work;inner 3\n"
			  "other 5\n");
	ember_buf_release(&b);
	pmodel_result_free(r);
	return 0;
}

/* ---- unsymbolized frames grouped per module (unresolved.c) ------------------------------- */

/* The location of frame spec s in d: "NAME" a function's, "FILE@OFF"
 * unsymbolized at offset OFF of /usr/lib/FILE (mapped at 0x10000 a file,
 * offset 0), "@ADDR" unsymbolized without a mapping. */
static int unsym_loc(struct pmodel_dict *d, const char *s, uint32_t *out)
{
	const char *at = strchr(s, '@');
	struct pmodel_map m = { .start = 0x10000 * (1 + d->maps.n), .limit = 0 };
	struct pmodel_line ln = { 0 };
	struct pmodel_func f = { 0 };
	char file[64];
	uint32_t map;

	if (!at) {
		EMBER_FORWARD_IF_ERROR(pmodel_strtab_intern0(&d->str, s, &f.name));
		EMBER_FORWARD_IF_ERROR(pmodel_dict_func(d, &f, &ln.func));
		return pmodel_dict_loc(d, 0, 0x1000 + d->locs.n, 0, &ln, 1, out);
	}
	if (at == s)
		return pmodel_dict_loc(d, 0, strtoull(at + 1, NULL, 16), 0, NULL, 0, out);
	snprintf(file, sizeof(file), "/usr/lib/%.*s", (int)(at - s), s);
	for (map = 0; map < d->maps.n; map++) /* one mapping a file */
		if (!strcmp(pmodel_str(&d->str, d->maps.v[map].filename), file))
			break;
	if (map == d->maps.n) {
		m.limit = m.start + 0x10000;
		EMBER_FORWARD_IF_ERROR(pmodel_strtab_intern0(&d->str, file, &m.filename));
		EMBER_FORWARD_IF_ERROR(pmodel_dict_map(d, &m, &map));
	}
	return pmodel_dict_loc(d, map + 1, d->maps.v[map].start + strtoull(at + 1, NULL, 16), 0,
			       NULL, 0, out);
}

/* A result of stacks[i] ("a;b;c", root first, frames as unsym_loc reads
 * them) with value v[i]. */
static struct pmodel_result *unsym_result(const char *const *stacks, const int64_t *v, size_t n)
{
	struct pmodel_result *r = NULL;
	int err = pmodel_result_new("cpu:samples:count:cpu:nanoseconds", &r);

	for (size_t i = 0; !err && i < n; i++) {
		char buf[256], *save = NULL;
		uint32_t node = 0, loc;

		snprintf(buf, sizeof(buf), "%s", stacks[i]);
		for (char *f = strtok_r(buf, ";", &save); !err && f; f = strtok_r(NULL, ";", &save)) {
			err = unsym_loc(&r->dict, f, &loc);
			err = err ? err : pmodel_dict_node(&r->dict, node, loc, &node);
		}
		while (!err && r->self.n < pmodel_dict_nodes(&r->dict))
			err = EMBER_VEC_APPEND(&r->self, 0);
		if (!err)
			r->self.v[node] += v[i];
	}
	if (err) {
		pmodel_result_free(r);
		return NULL;
	}
	r->profiles = 1;
	return r;
}

static const char *const unsym_stacks[] = {
	"main;libx.so@10;libx.so@20;liby.so@30", "main;libx.so@10;libx.so@40", "main;libx.so@50",
	"main;libx.so@10;work;libx.so@60", "@99",
};
static const int64_t unsym_values[] = { 1, 2, 4, 3, 5 };

/* Runs of one module's unsymbolized frames become one frame "[MODULE]"
 * (a symbolized frame between two runs keeps them apart; no mapping:
 * "[unknown]"; "[vdso]" stays so), equal stacks merge, the total stays;
 * the top table has the module once. */
static int test_pmodel__unresolved_grouped_per_module(void)
{
	struct pmodel_result *r = unsym_result(unsym_stacks, unsym_values, 5), *g = NULL;
	struct pmodel_top_row *rows = NULL;
	struct pmodel_result_info ri;
	struct ember_buf b;
	size_t n = 0;

	CHECK(r);
	ember_buf_init(&b, 1 << 20);
	CHECK_INT(pmodel_write_folded(r, pmodel_write_buf, &b), ==, 0);
	CHECK_INT(ember_buf_putc(&b, '\0'), ==, 0);
	CHECK_STR(b.data, "0x99 5\nmain;libx.so+0x10;libx.so+0x20;liby.so+0x30 1\n"
			  "main;libx.so+0x10;libx.so+0x40 2\nmain;libx.so+0x10;work;libx.so+0x60 3\n"
			  "main;libx.so+0x50 4\n");
	CHECK_INT(pmodel_result_group_unresolved(r, &g), ==, 0);
	ember_buf_reset(&b);
	CHECK_INT(pmodel_write_folded(g, pmodel_write_buf, &b), ==, 0);
	CHECK_INT(ember_buf_putc(&b, '\0'), ==, 0);
	CHECK_STR(b.data, "[unknown] 5\nmain;[libx.so] 6\nmain;[libx.so];[liby.so] 1\n"
			  "main;[libx.so];work;[libx.so] 3\n");
	pmodel_result_info(g, &ri);
	CHECK_INT(ri.total, ==, 15);
	CHECK_INT(ri.profiles, ==, 1);
	CHECK_INT(pmodel_result_top(g, 0, &rows, &n), ==, 0);
	CHECK_INT(n, ==, 5); /* [libx.so], [unknown], [liby.so], main, work */
	CHECK_STR(rows[0].name, "[libx.so]");
	CHECK_INT(rows[0].self, ==, 9);
	CHECK_INT(rows[0].total, ==, 10);
	free(rows);
	pmodel_result_free(g);
	pmodel_result_free(r);
	/* a module named in brackets already keeps one pair */
	r = unsym_result((const char *const[]){ "main;[vdso]@10;[vdso]@20" }, unsym_values, 1);
	CHECK(r);
	CHECK_INT(pmodel_result_group_unresolved(r, &g), ==, 0);
	ember_buf_reset(&b);
	CHECK_INT(pmodel_write_folded(g, pmodel_write_buf, &b), ==, 0);
	CHECK_INT(ember_buf_putc(&b, '\0'), ==, 0);
	CHECK_STR(b.data, "main;[vdso] 1\n");
	ember_buf_release(&b);
	pmodel_result_free(g);
	pmodel_result_free(r);
	return 0;
}

/* A focus's path may name a group: it stands for the run of the module's
 * frames, on the result before grouping (the store focuses before the
 * output groups), and keeps what focusing the grouped result keeps. */
static int test_pmodel__focus_through_a_group(void)
{
	static const char *const p_group[] = { "main", "[libx.so]" };
	static const char *const p_work[] = { "main", "[libx.so]", "work", "[libx.so]" };
	static const char *const p_liby[] = { "main", "[libx.so]", "[liby.so]" };
	static const char *const p_frame[] = { "main", "libx.so+0x10", "libx.so+0x40" };
	struct pmodel_result *r = unsym_result(unsym_stacks, unsym_values, 5);
	struct ember_buf b;
	size_t attrs;

	CHECK(r);
	r->profiles = 2;
	r->period = 10;
	ember_buf_init(&b, 1 << 20);
	CHECK_INT(focus_folded(r, p_group, 2, &b, &attrs), ==, 10);
	CHECK_INT(focus_folded(r, p_work, 4, &b, &attrs), ==, 3);
	CHECK_STR(b.data, "main;libx.so+0x10;work;libx.so+0x60 3\n");
	CHECK_INT(focus_folded(r, p_liby, 3, &b, &attrs), ==, 1);
	CHECK_INT(focus_folded(r, p_frame, 3, &b, &attrs), ==, 2);
	ember_buf_release(&b);
	pmodel_result_free(r);
	return 0;
}

/* The coverage of names (name_coverage.c): leaf named, named whole, and per
 * module the stacks through it and those it leaves unnamed, each counted
 * once however often the module recurs; a perf map's module and frames
 * of no mapping marked jit. */
static int test_pmodel__coverage_named_leaf_and_whole(void)
{
	static const char *const stacks[] = {
		"main;libx.so@10;libx.so@20;liby.so@30", "main;libx.so@10;libx.so@40", "main;libx.so@50",
		"main;libx.so@10;work;libx.so@60", "@99", "main;work", "main;liby.so@30;work",
		"main;perf-123.map@10",
	};
	static const int64_t v[] = { 1, 2, 4, 3, 5, 6, 7, 1 };
	struct pmodel_result *r = unsym_result(stacks, v, 8);
	struct pmodel_coverage *c = NULL;

	CHECK(r);
	CHECK_INT(pmodel_result_coverage(r, &c), ==, 0);
	CHECK_INT(c->total, ==, 29);
	CHECK_INT(c->leaf_named, ==, 13);
	CHECK_INT(c->all_named, ==, 6);
	CHECK_INT(c->m.n, ==, 4);
	CHECK_STR(c->m.v[0].file, "/usr/lib/libx.so");
	CHECK(!c->m.v[0].jit);
	CHECK_INT(c->m.v[0].value, ==, 10);
	CHECK_INT(c->m.v[0].unnamed, ==, 10);
	CHECK_INT(c->m.v[0].leaf, ==, 9);
	CHECK_INT(c->m.v[0].leaf_named, ==, 0);
	CHECK_STR(c->m.v[1].file, "/usr/lib/liby.so");
	CHECK_INT(c->m.v[1].value, ==, 8);
	CHECK_INT(c->m.v[1].unnamed, ==, 8);
	CHECK_INT(c->m.v[1].leaf, ==, 1);
	CHECK_STR(c->m.v[2].file, ""); /* no mapping: main, work and 0x99 */
	CHECK(c->m.v[2].jit);
	CHECK_INT(c->m.v[2].value, ==, 29);
	CHECK_INT(c->m.v[2].unnamed, ==, 5);
	CHECK_INT(c->m.v[2].leaf, ==, 18);
	CHECK_INT(c->m.v[2].leaf_named, ==, 13);
	CHECK_STR(c->m.v[3].file, "/usr/lib/perf-123.map");
	CHECK(c->m.v[3].jit);
	CHECK_INT(c->m.v[3].unnamed, ==, 1);
	pmodel_coverage_free(c);
	pmodel_result_free(r);
	return 0;
}

/* ---- truncation (truncate.c) ------------------------------------------------------------ */

/* A result built by hand: main 1; main;a 6; main;[b;c] 2 (one location,
 * c inlined into b); main;b 2 (another location of b); 0x1234 1 (no
 * lines).  Its tree: main 11, a 6, b 4, c 2, 0x1234 1.  The 2 of
 * main;[b;c] is attributed to "thread=t1". */
static struct pmodel_result *hand_built(void)
{
	static const char *const names[] = { "main", "a", "b", "c" };
	struct pmodel_dict d;
	struct pmodel_result *r = NULL;
	struct pmodel_map m = { 0x400000, 0x500000, 0, 0, 0 };
	uint32_t f[4], map, lmain, la, lbc, lb, lx, nmain, na, nbc, nb, nx;
	int64_t self[8] = { 0 };
	int err = pmodel_dict_init(&d);

	err = err ? err : pmodel_strtab_intern0(&d.str, "/usr/bin/app", &m.filename);
	err = err ? err : pmodel_dict_map(&d, &m, &map);
	for (size_t i = 0; !err && i < 4; i++) {
		struct pmodel_func fn = { 0 };

		err = pmodel_strtab_intern0(&d.str, names[i], &fn.name);
		err = err ? err : pmodel_dict_func(&d, &fn, &f[i]);
	}
	if (!err) {
		struct pmodel_line main_ln = { f[0], 3 }, a_ln = { f[1], 4 }, b_ln = { f[2], 5 };
		struct pmodel_line bc_ln[] = { { f[3], 6 }, { f[2], 7 } }; /* innermost first */

		err = pmodel_dict_loc(&d, map + 1, 0x401000, 0, &main_ln, 1, &lmain);
		err = err ? err : pmodel_dict_loc(&d, map + 1, 0x402000, 0, &a_ln, 1, &la);
		err = err ? err : pmodel_dict_loc(&d, map + 1, 0x403000, 0, bc_ln, 2, &lbc);
		err = err ? err : pmodel_dict_loc(&d, map + 1, 0x404000, 0, &b_ln, 1, &lb);
		err = err ? err : pmodel_dict_loc(&d, map + 1, 0x401234, 0, NULL, 0, &lx);
	}
	err = err ? err : pmodel_dict_node(&d, 0, lmain, &nmain);
	err = err ? err : pmodel_dict_node(&d, nmain, la, &na);
	err = err ? err : pmodel_dict_node(&d, nmain, lbc, &nbc);
	err = err ? err : pmodel_dict_node(&d, nmain, lb, &nb);
	err = err ? err : pmodel_dict_node(&d, 0, lx, &nx);
	if (!err) {
		struct pmodel_attr_part part = { nbc, "thread=t1", 2 };

		self[nmain] = 1, self[na] = 6, self[nbc] = 2, self[nb] = 2, self[nx] = 1;
		err = pmodel_result_new("process_cpu:samples:count:cpu:nanoseconds", &r);
		err = err ? err : pmodel_result_add(r, &d, self);
		err = err ? err : pmodel_result_add_attrs(r, &d, &part, 1);
	}
	pmodel_dict_release(&d);
	if (err) {
		pmodel_result_free(r);
		return NULL;
	}
	r->profiles = 3;
	r->min_time = 1000000000;
	r->max_time = 2000000000;
	return r;
}

/* r cut to max_nodes: its folded stacks are want, its total 12. */
static int check_truncated(const struct pmodel_result *r, size_t max_nodes, const char *want)
{
	struct pmodel_result *c = NULL;
	struct pmodel_result_info ci;
	struct ember_buf b;

	CHECK_INT(pmodel_result_truncate(r, max_nodes, &c), ==, 0);
	pmodel_result_info(c, &ci);
	CHECK_INT(ci.total, ==, 12);
	CHECK_INT(ci.profiles, ==, 3);
	ember_buf_init(&b, 1 << 20);
	CHECK_INT(pmodel_write_folded(c, pmodel_write_buf, &b), ==, 0);
	CHECK_INT(ember_buf_putc(&b, '\0'), ==, 0);
	if (strcmp(b.data, want))
		fprintf(stderr, "max_nodes %zu:\n%s--- want:\n%s", max_nodes, b.data, want);
	CHECK_STR(b.data, want);
	ember_buf_release(&b);
	pmodel_result_free(c);
	return 0;
}

/* The names of the functions of pprof p's samples, sorted, joined by
 * ',' into out; the samples' sum. */
static int64_t pprof_functions(const struct pprof_profile *p, char *out, size_t size)
{
	const pprof_message_t *m = pprof_message(p);
	char seen[16][32];
	size_t n = 0, len = 0;
	int64_t sum = 0;

	for (size_t i = 0; i < m->n_location; i++)
		for (size_t k = 0; k < m->location[i]->n_line && n < 16; k++) {
			const char *f = pprof_string(
				p, pprof_function_by_id(p, m->location[i]->line[k]->function_id)
					   ->name);
			size_t j = 0;

			while (j < n && strcmp(seen[j], f))
				j++;
			if (j == n)
				snprintf(seen[n++], sizeof(seen[0]), "%s", f);
		}
	qsort(seen, n, sizeof(seen[0]), (int (*)(const void *, const void *))strcmp);
	out[0] = '\0';
	for (size_t j = 0; j < n; j++)
		len += (size_t)snprintf(out + len, size - len, "%s%s", j ? "," : "", seen[j]);
	for (size_t i = 0; i < m->n_sample; i++)
		sum += m->sample[i]->value[0];
	return sum;
}

/* pmodel_result_truncate on the hand-built result: max_nodes 0, 5 (the
 * tree's nodes) and 100 keep every stack; 4 cuts 0x1234 (1, below the
 * fourth largest total, 2) into a stack "other" alone; 3 (cut-off 4)
 * also cuts c, inlined into b: that location keeps b's line and gets
 * "other" under it, and merges by name with main;b in the tree; 1
 * (cut-off 11, main's) keeps main alone.  The total, the profile count
 * and the attributed part (moved to main;b;other) stay. */
static int test_pmodel__truncate_keeps_largest_nodes(void)
{
	static const size_t same[] = { 0, 5, 100 };
	struct pmodel_result *r = hand_built(), *c = NULL;
	struct pprof_profile *p = NULL;
	struct ember_buf b;
	char why[256], funcs[256];
	uint32_t other_loc = UINT32_MAX;

	CHECK(r);
	for (size_t k = 0; k < 3; k++)
		CHECK(!check_truncated(r, same[k],
				       "app+0x1234 1\nmain 1\nmain;a 6\nmain;b 2\nmain;b;c 2\n"));
	CHECK(!check_truncated(r, 4, "main 1\nmain;a 6\nmain;b 2\nmain;b;c 2\nother 1\n"));
	CHECK(!check_truncated(r, 3, "main 1\nmain;a 6\nmain;b 2\nmain;b;other 2\nother 1\n"));
	CHECK(!check_truncated(r, 1, "main 1\nmain;other 10\nother 1\n"));

	CHECK_INT(pmodel_result_truncate(r, 3, &c), ==, 0);
	for (uint32_t l = 0; l < c->dict.locs.n; l++) {
		const struct pmodel_loc *lc = &c->dict.locs.v[l];

		if (lc->nlines == 1 &&
		    !strcmp(pmodel_str(&c->dict.str,
				       c->dict.funcs.v[c->dict.lines.v[lc->line_off].func].name),
			    "other"))
			other_loc = l;
		if (lc->address == 0x403000) { /* [b;c] keeps b's line alone */
			CHECK_INT(lc->nlines, ==, 1);
			CHECK_INT(c->dict.lines.v[lc->line_off].line, ==, 7);
		}
	}
	CHECK(other_loc != UINT32_MAX);
	CHECK_INT(c->dict.locs.v[other_loc].mapping, ==, 0);
	CHECK_INT(c->attr_rows.n, ==, 1);
	CHECK_INT(c->attr_rows.v[0].value, ==, 2);
	CHECK_INT(c->dict.node_loc.v[c->attr_rows.v[0].node], ==, other_loc);
	ember_buf_init(&b, 1 << 20);
	CHECK_INT(pmodel_write_pprof(c, &b), ==, 0);
	pmodel_result_free(c);
	CHECK_INT(pprof_decode(b.data, b.len, NULL, &p, why, sizeof(why)), ==, 0);
	CHECK_INT(pprof_functions(p, funcs, sizeof(funcs)), ==, 12);
	CHECK_STR(funcs, "a,b,main,other");
	pprof_profile_free(p);
	ember_buf_release(&b);
	pmodel_result_free(r);
	return 0;
}

/* ---- source lines (source_lines.c) ------------------------------------------------------ */

/* A location in mapping map (index + 1) of lines (name, file, line)
 * innermost first. */
static int src_loc(struct pmodel_dict *d, uint32_t map, const char *const *fn, const int64_t *no,
		   uint32_t n, uint32_t *out)
{
	struct pmodel_line ln[2] = { { 0 } };

	for (uint32_t i = 0; i < n; i++) {
		struct pmodel_func f = { 0 };

		EMBER_FORWARD_IF_ERROR(pmodel_strtab_intern0(&d->str, fn[2 * i], &f.name));
		EMBER_FORWARD_IF_ERROR(pmodel_strtab_intern0(&d->str, fn[2 * i + 1], &f.filename));
		EMBER_FORWARD_IF_ERROR(pmodel_dict_func(d, &f, &ln[i].func));
		ln[i].line = no[i];
	}
	return pmodel_dict_loc(d, map, 0x1000 + d->locs.n, 0, ln, n, out);
}

/* A map of module file and build ID bid: its index + 1. */
static int src_map(struct pmodel_dict *d, const char *file, const char *bid, uint32_t *out)
{
	struct pmodel_map m = { .start = 0x1000, .limit = 0x100000 };

	EMBER_FORWARD_IF_ERROR(pmodel_strtab_intern0(&d->str, file, &m.filename));
	EMBER_FORWARD_IF_ERROR(pmodel_strtab_intern0(&d->str, bid, &m.build_id));
	EMBER_FORWARD_IF_ERROR(pmodel_dict_map(d, &m, out));
	++*out;
	return 0;
}

/* main;work:10;work:20 4, main;work:10;work:10 3 (recursion through one
 * line), main;work:12;[inner inlined at work:14] 2, main 1, and
 * main;work 5 of a namesake in another file and binary. */
static struct pmodel_result *source_result(void)
{
	static const char *const f_main[] = { "main", "/src/main.c" };
	static const char *const f_w[] = { "work", "/src/work.c" };
	static const char *const f_inl[] = { "inner", "/src/inner.h", "work", "/src/work.c" };
	static const char *const f_other[] = { "work", "/src/other.c" };
	static const int64_t l5[] = { 5 }, l10[] = { 10 }, l12[] = { 12 }, l20[] = { 20 };
	static const int64_t l3_14[] = { 3, 14 }, l7[] = { 7 };
	struct pmodel_result *r = NULL;
	uint32_t shop, lib, lm, lw10, lw12, lw20, linl, lo, nm, n10, n20, nrec, n12, ninl, no;
	struct pmodel_dict *d;

	if (pmodel_result_new("cpu:samples:count:cpu:nanoseconds", &r))
		return NULL;
	d = &r->dict;
	if (src_map(d, "/usr/bin/shop", "aaaa", &shop) || src_map(d, "/usr/lib/libo.so", "bbbb", &lib) ||
	    src_loc(d, shop, f_main, l5, 1, &lm) || src_loc(d, shop, f_w, l10, 1, &lw10) ||
	    src_loc(d, shop, f_w, l12, 1, &lw12) || src_loc(d, shop, f_w, l20, 1, &lw20) ||
	    src_loc(d, shop, f_inl, l3_14, 2, &linl) || src_loc(d, lib, f_other, l7, 1, &lo) ||
	    pmodel_dict_node(d, 0, lm, &nm) || pmodel_dict_node(d, nm, lw10, &n10) ||
	    pmodel_dict_node(d, n10, lw20, &n20) || pmodel_dict_node(d, n10, lw10, &nrec) ||
	    pmodel_dict_node(d, nm, lw12, &n12) || pmodel_dict_node(d, n12, linl, &ninl) ||
	    pmodel_dict_node(d, nm, lo, &no) || EMBER_VEC_RESERVE(&r->self, pmodel_dict_nodes(d))) {
		pmodel_result_free(r);
		return NULL;
	}
	while (r->self.n < pmodel_dict_nodes(d))
		r->self.v[r->self.n++] = 0;
	r->self.v[n20] = 4;
	r->self.v[nrec] = 3;
	r->self.v[ninl] = 2;
	r->self.v[nm] = 1;
	r->self.v[no] = 5;
	return r;
}

static int check_line(const struct pmodel_source_file *f, size_t i, int64_t line, int64_t self,
		      int64_t total)
{
	CHECK(i < f->n_lines);
	CHECK_INT(f->lines[i].line, ==, line);
	CHECK_INT(f->lines[i].self, ==, self);
	CHECK_INT(f->lines[i].total, ==, total);
	return 0;
}

/* Self on the leaf frame's line, total on every line of the stack once
 * (recursion through line 10 counts its stack once, an inlined callee's
 * stack counts on the call's line), per file, the heaviest first, with
 * the build ID and module of its mapping; a namesake elsewhere is a file
 * of its own; a function no stack holds has no files. */
static int test_pmodel__source_lines_self_and_total(void)
{
	struct pmodel_result *r = source_result();
	struct pmodel_source *s = NULL;
	const struct pmodel_source_file *f;

	CHECK(r);
	CHECK_INT(pmodel_result_source(r, "work", &s), ==, 0);
	CHECK_INT(s->self, ==, 12);
	CHECK_INT(s->total, ==, 14);
	CHECK_INT(s->n_files, ==, 2);
	f = &s->files[0];
	CHECK_STR(f->file, "/src/work.c");
	CHECK_STR(f->build_id, "aaaa");
	CHECK_STR(f->module, "/usr/bin/shop");
	CHECK_INT(f->self, ==, 7);
	CHECK_INT(f->total, ==, 9);
	CHECK_INT(f->n_lines, ==, 4);
	CHECK_INT(check_line(f, 0, 10, 3, 7), ==, 0);
	CHECK_INT(check_line(f, 1, 12, 0, 2), ==, 0);
	CHECK_INT(check_line(f, 2, 14, 0, 2), ==, 0);
	CHECK_INT(check_line(f, 3, 20, 4, 4), ==, 0);
	f = &s->files[1];
	CHECK_STR(f->file, "/src/other.c");
	CHECK_STR(f->build_id, "bbbb");
	CHECK_INT(f->self, ==, 5);
	CHECK_INT(check_line(f, 0, 7, 5, 5), ==, 0);
	pmodel_source_free(s);
	CHECK_INT(pmodel_result_source(r, "inner", &s), ==, 0);
	CHECK_INT(s->n_files, ==, 1);
	CHECK_STR(s->files[0].file, "/src/inner.h");
	CHECK_INT(check_line(&s->files[0], 0, 3, 2, 2), ==, 0);
	pmodel_source_free(s);
	CHECK_INT(pmodel_result_source(r, "absent", &s), ==, 0);
	CHECK_INT(s->n_files, ==, 0);
	CHECK_INT(s->total, ==, 0);
	pmodel_source_free(s);
	pmodel_result_free(r);
	return 0;
}

static const struct unit_case cases[] = {
	UNIT_CASE(test_pmodel__error_kind),
	UNIT_CASE(test_pmodel__types_checked_with_a_typed_error),
	UNIT_CASE(test_pmodel__top_counts_recursion_once),
	UNIT_CASE(test_pmodel__frame_type_part_of_a_location),
	UNIT_CASE(test_pmodel__import_guesses_only_equal_entries),
	UNIT_CASE(test_pmodel__stack_keys_equal_exactly_for_equal_stacks),
	UNIT_CASE(test_pmodel__stack_keys_differ_in_each_field),
	UNIT_CASE(test_pmodel__frame_type_through_pprof_and_outputs),
	UNIT_CASE(test_pmodel__tree_json_line_only_where_one),
	UNIT_CASE(test_pmodel__tree_json_and_folded),
	UNIT_CASE(test_pmodel__flamegraph_svg_is_valid),
	UNIT_CASE(test_pmodel__names_xml_forbids_replaced_in_svg_and_json),
	UNIT_CASE(test_pmodel__type_alias_fixed_rule),
	UNIT_CASE(test_pmodel__diff_table_flags_past_noise),
	UNIT_CASE(test_pmodel__diff_folded_and_flamegraph),
	UNIT_CASE(test_pmodel__flamegraph_diff_levels),
	UNIT_CASE(test_pmodel__flamegraph_levels_and_folding),
	UNIT_CASE(test_pmodel__focus_keeps_the_stacks_under_a_path),
	UNIT_CASE(test_pmodel__truncate_keeps_largest_nodes),
	UNIT_CASE(test_pmodel__source_lines_self_and_total),
	UNIT_CASE(test_pmodel__unresolved_grouped_per_module),
	UNIT_CASE(test_pmodel__focus_through_a_group),
	UNIT_CASE(test_pmodel__coverage_named_leaf_and_whole),
};

UNIT_MAIN_QUIET(cases)
