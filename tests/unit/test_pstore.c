/*
 * test_pstore.c - unit tests of profile-store/: the cursor readers, the
 * selector parser and matching, appends and queries (head, blocks,
 * merged blocks: the same answers), sample labels, limits and their
 * reasons, types and aliases, discovery, series totals, coverage and the
 * resolver, retention, the log's replay (a torn tail, and kill -9 of a
 * child in the middle of writes), corrupt blocks, every output (folded,
 * top, JSON tree, flame graph checked by xmllint, pprof read by
 * `go tool pprof`), and diffs (their noise estimate, and their pprof
 * against `go tool pprof -diff_base`).
 */
#include "pprof.h"
#include "pstore.h"
#include "pstore_internal.h"
#include "unit.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SEC ((int64_t)1000000000)
#define MS ((int64_t)1000000)
#define HOUR (3600 * SEC)
#define T0 ((int64_t)1700000000 * SEC) /* a fixed "now" */

static char dir[256];

/* ---- helpers ---------------------------------------------------------------- */

static int64_t fake_now = T0;

static int64_t clock_fn(void *ctx)
{
	(void)ctx;
	return fake_now;
}

static int make_dir(void)
{
	snprintf(dir, sizeof(dir), "/tmp/ember-test-pstore.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static void remove_dir(void)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", dir);
}

static struct pstore_opts test_opts(void)
{
	return (struct pstore_opts){ .sz = sizeof(struct pstore_opts), .no_background = true,
				     .clock_ns = clock_fn, .zstd_level = 3 };
}

static struct pstore *open_store(const struct pstore_opts *o)
{
	struct pstore_opts def = test_opts();
	struct pstore *s = NULL;
	char why[256];

	if (pstore_open(dir, o ? o : &def, &s, why, sizeof(why))) {
		fprintf(stderr, "pstore_open: %s\n", why);
		return NULL;
	}
	return s;
}

static struct pstore *fresh_store(void)
{
	fake_now = T0;
	return make_dir() ? NULL : open_store(NULL);
}

/* Function id of name in p (one function per name, file "NAME.c"). */
static int func_of(struct pprof_profile *p, const char *name, uint64_t *id)
{
	char file[128];
	struct pprof_function_desc f = { name, name, file, 1 };

	snprintf(file, sizeof(file), "%s.c", name);
	return pprof_add_function(p, &f, id);
}

/* A location with one line of function name (one location per name). */
static int loc_of(struct pprof_profile *p, uint64_t mid, const char *name, uint64_t *id)
{
	const pprof_message_t *m = pprof_message(p);
	struct pprof_line ln = { 0, 10, 0 };
	uint64_t addr = 0x401000 + (ps_hash(name, strlen(name), 0) & 0xffff0);

	for (size_t i = 0; i < m->n_location; i++)
		if (m->location[i]->n_line &&
		    strcmp(pprof_string(p, pprof_function_by_id(p, m->location[i]->line[0]->function_id)->name),
			   name) == 0) {
			*id = m->location[i]->id;
			return 0;
		}
	if (func_of(p, name, &ln.function_id) || pprof_add_location(p, mid, addr, id))
		return -1;
	return pprof_location_set_lines(p, *id, &ln, 1);
}

/* A location without lines at address (unsymbolized). */
static int raw_loc(struct pprof_profile *p, uint64_t mid, uint64_t addr, uint64_t *id)
{
	const pprof_message_t *m = pprof_message(p);

	for (size_t i = 0; i < m->n_location; i++)
		if (!m->location[i]->n_line && m->location[i]->address == addr &&
		    m->location[i]->mapping_id == mid) {
			*id = m->location[i]->id;
			return 0;
		}
	return pprof_add_location(p, mid, addr, id);
}

/*
 * A CPU profile (samples/count, cpu/nanoseconds, period 10 ms) of stacks
 * "root;...;leaf" with counts[i] samples each.  A frame "0xADDR" is an
 * unsymbolized address in the mapping of build ID "beef" (others are in
 * the mapping of "cafe").
 */
static struct pprof_profile *mkprof(const char *const *stacks, const int64_t *counts, size_t n,
				    int64_t time)
{
	struct pprof_mapping_desc md = { 0x400000, 0x500000, 0, "/usr/bin/app", "cafe" };
	struct pprof_mapping_desc raw = { 0x7f0000000000, 0x7f0000100000, 0x1000, "/lib/libx.so",
					  "beef" };
	struct pprof_profile *p = pprof_profile_new();
	uint64_t mid, rid;

	if (!p || pprof_add_sample_type(p, "samples", "count") ||
	    pprof_add_sample_type(p, "cpu", "nanoseconds") ||
	    pprof_set_period(p, "cpu", "nanoseconds", 10 * MS) || pprof_add_mapping(p, &md, &mid) ||
	    pprof_add_mapping(p, &raw, &rid))
		goto fail;
	pprof_set_time(p, time, 10 * SEC);
	for (size_t i = 0; i < n; i++) {
		uint64_t locs[64];
		size_t k = 0;
		char copy[1024], *save, *tok;
		int64_t v[2] = { counts[i], counts[i] * 10 * MS };

		snprintf(copy, sizeof(copy), "%s", stacks[i]);
		for (tok = strtok_r(copy, ";", &save); tok; tok = strtok_r(NULL, ";", &save)) {
			int err = strncmp(tok, "0x", 2) == 0
					  ? raw_loc(p, rid, strtoull(tok, NULL, 16), &locs[k])
					  : loc_of(p, mid, tok, &locs[k]);

			if (err)
				goto fail;
			k++;
		}
		for (size_t a = 0, b = k ? k - 1 : 0; a < b; a++, b--) { /* leaf first */
			uint64_t t = locs[a];

			locs[a] = locs[b];
			locs[b] = t;
		}
		if (pprof_add_sample(p, locs, k, v, 2))
			goto fail;
	}
	return p;
fail:
	pprof_profile_free(p);
	return NULL;
}

static int append(struct pstore *s, struct pprof_profile *p, const char *service,
		  const char *version)
{
	struct pstore_label l[2] = { { "service", service }, { "version", version } };
	struct pstore_append_opts o = { .sz = sizeof(o), .labels = l, .n_labels = 2 };
	char why[256];
	int err;

	if (!p)
		return -ENOMEM;
	err = pstore_append(s, p, &o, why, sizeof(why));
	if (err)
		fprintf(stderr, "pstore_append: %s\n", why);
	pprof_profile_free(p);
	return err;
}

static const char *const S3[] = { "main;work;hot", "main;work;cold", "main;idle" };
static const int64_t C3[] = { 30, 10, 5 };

static struct pstore_result *query(struct pstore *s, const char *selector, const char *type,
				   int64_t from, int64_t to)
{
	struct pstore_selection sel = { selector, type, from, to };
	struct pstore_result *r = NULL;
	char why[256];

	if (pstore_query(s, &sel, NULL, &r, why, sizeof(why))) {
		fprintf(stderr, "pstore_query: %s\n", why);
		return NULL;
	}
	return r;
}

/* The folded output of r in a buffer the caller releases. */
static int folded(const struct pstore_result *r, struct ember_buf *b)
{
	ember_buf_init(b, 64 << 20);
	return pstore_write_folded(r, pstore_write_buf, b);
}

static int64_t total_of(const struct pstore_result *r)
{
	struct pstore_result_info info;

	pstore_result_info(r, &info);
	return info.total;
}

/* The same folded output for the same query, before and after flushing
 * and merging. */
static int check_folded(struct pstore *s, const char *selector, const char *want)
{
	struct pstore_result *r = query(s, selector, "cpu", 0, 0);
	struct ember_buf b;
	int err = r ? folded(r, &b) : -1;

	if (!err && strcmp(b.data ? b.data : "", want) != 0) {
		fprintf(stderr, "folded output differs:\n--- want\n%s--- got\n%s", want,
			b.data ? b.data : "");
		err = -1;
	}
	if (r)
		ember_buf_release(&b);
	pstore_result_free(r);
	return err;
}

/* ---- cursor readers ---------------------------------------------------------- */

static int test_pstore__varint_cursor_bounds(void)
{
	struct ember_buf b;
	const uint8_t *p, *end, *start;
	uint64_t v;
	int64_t sv;
	const uint8_t over[11] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0 };

	ember_buf_init(&b, 1024);
	CHECK_INT(ps_put_uvarint(&b, 0), ==, 0);
	CHECK_INT(ps_put_uvarint(&b, 300), ==, 0);
	CHECK_INT(ps_put_uvarint(&b, UINT64_MAX), ==, 0);
	CHECK_INT(ps_put_svarint(&b, -5), ==, 0);
	p = start = (const uint8_t *)b.data;
	end = p + b.len;
	CHECK_INT(ps_get_uvarint(&p, end, &v), ==, 0);
	CHECK_INT(v, ==, 0);
	CHECK_INT(ps_get_uvarint(&p, end, &v), ==, 0);
	CHECK_INT(v, ==, 300);
	CHECK_INT(ps_get_uvarint(&p, end, &v), ==, 0);
	CHECK(v == UINT64_MAX);
	CHECK_INT(ps_get_svarint(&p, end, &sv), ==, 0);
	CHECK_INT(sv, ==, -5);
	CHECK(p == end);
	CHECK_INT(ps_get_uvarint(&p, end, &v), ==, -PSTORE_ERR_CORRUPT);
	/* *pos past end is refused, and the cursor does not move */
	p = end + 1;
	CHECK_INT(ps_get_uvarint(&p, end, &v), ==, -PSTORE_ERR_CORRUPT);
	CHECK(p == end + 1);
	/* a truncated varint, an over-long one */
	p = start + 1;
	CHECK_INT(ps_get_uvarint(&p, start + 2, &v), ==, -PSTORE_ERR_CORRUPT);
	CHECK(p == start + 1);
	p = over;
	CHECK_INT(ps_get_uvarint(&p, over + 11, &v), ==, -PSTORE_ERR_CORRUPT);
	CHECK(p == over);
	/* a string whose length runs past the end */
	ember_buf_reset(&b);
	CHECK_INT(ps_put_uvarint(&b, 100), ==, 0);
	CHECK_INT(ember_buf_append(&b, "abc", 3), ==, 0);
	p = (const uint8_t *)b.data;
	{
		const char *s;
		size_t n;

		CHECK_INT(ps_get_str(&p, p + b.len, 1000, &s, &n), ==, -PSTORE_ERR_CORRUPT);
		CHECK(p == (const uint8_t *)b.data);
	}
	ember_buf_release(&b);
	return 0;
}

/* ---- selectors ---------------------------------------------------------------- */

static int matches(const char *selector, const struct pstore_label *l, size_t n)
{
	struct pstore_selector *sel;
	char why[256];
	int m;

	if (pstore_selector_parse(selector, &sel, why, sizeof(why))) {
		fprintf(stderr, "'%s': %s\n", selector, why);
		return -1;
	}
	m = pstore_selector_matches(sel, l, n);
	pstore_selector_free(sel);
	return m;
}

static int test_pstore__selector_matching(void)
{
	const struct pstore_label l[] = { { "service", "checkout" }, { "version", "2.4.1" },
					  { "k8s.pod", "a-1" } };

	CHECK_INT(matches("{service=\"checkout\"}", l, 3), ==, 1);
	CHECK_INT(matches("{service=\"cart\"}", l, 3), ==, 0);
	CHECK_INT(matches("{version=~\"2\\\\.4.*\"}", l, 3), ==, 1);
	CHECK_INT(matches("{version=~\"2\\\\.3.*\"}", l, 3), ==, 0);
	/* anchored: a partial match is no match */
	CHECK_INT(matches("{version=~\"4\\\\.1\"}", l, 3), ==, 0);
	CHECK_INT(matches("{version!~\"2\\\\..*\"}", l, 3), ==, 0);
	CHECK_INT(matches("{service!=\"cart\", version=~\"2.*\",}", l, 3), ==, 1);
	CHECK_INT(matches("{k8s.pod='a-1'}", l, 3), ==, 1);
	CHECK_INT(matches("{missing=\"\"}", l, 3), ==, 1);
	CHECK_INT(matches("{missing!=\"\"}", l, 3), ==, 0);
	CHECK_INT(matches("{missing=~\".*\"}", l, 3), ==, 1);
	CHECK_INT(matches("{}", l, 3), ==, 1);
	CHECK_INT(matches("", l, 3), ==, 1);
	CHECK_INT(matches("process_cpu:cpu:nanoseconds:cpu:nanoseconds{service=`checkout`}", l, 3),
		  ==, 1);
	return 0;
}

static int expect_bad_selector(const char *text, const char *reason)
{
	struct pstore_selector *sel = NULL;
	char why[256];
	int err = pstore_selector_parse(text, &sel, why, sizeof(why));

	if (err != -PSTORE_ERR_SELECTOR || !strstr(why, reason)) {
		fprintf(stderr, "'%s': %d '%s', want '%s'\n", text, err, why, reason);
		pstore_selector_free(sel);
		return 1;
	}
	return 0;
}

static int test_pstore__selector_errors_explain(void)
{
	CHECK(!expect_bad_selector("{service=checkout}", "expected a quoted value"));
	CHECK(!expect_bad_selector("{service==\"x\"}", "expected a quoted value"));
	CHECK(!expect_bad_selector("{service~\"x\"}", "expected =, !=, =~ or !~"));
	CHECK(!expect_bad_selector("{service=\"x\"", "expected ',' or '}'"));
	CHECK(!expect_bad_selector("{service=\"x}", "unterminated string"));
	CHECK(!expect_bad_selector("{9a=\"x\"}", "expected a label name"));
	CHECK(!expect_bad_selector("{a=\"x\\.y\"}", "unknown escape"));
	CHECK(!expect_bad_selector("{a=~\"(\"}", "bad regex"));
	CHECK(!expect_bad_selector("{a=~\"(x)\\\\1\"}", "back-references"));
	CHECK(!expect_bad_selector("{a=~\"((a{100}){100})\"}", "repeats too much"));
	CHECK(!expect_bad_selector("{a=\"x\"} junk", "unexpected text"));
	return 0;
}

/* ---- append and query ---------------------------------------------------------- */

static const char *const WANT3 = "main;idle 50000000\nmain;work;cold 100000000\n"
				 "main;work;hot 300000000\n";

static int test_pstore__append_query_head_blocks_merged_agree(void)
{
	struct pstore *s = fresh_store();
	struct pstore_stats st;

	CHECK(s);
	for (int i = 0; i < 3; i++)
		CHECK_INT(append(s, mkprof(S3, C3, 3, T0 - 300 * SEC + i * 10 * SEC), "checkout", "2.4"),
			  ==, 0);
	CHECK_INT(append(s, mkprof(S3, C3, 3, T0 - 200 * SEC), "cart", "1.0"), ==, 0);
	/* in the head */
	CHECK(!check_folded(s, "{service=\"checkout\"}",
			    "main;idle 150000000\nmain;work;cold 300000000\nmain;work;hot 900000000\n"));
	/* in one block per flush, after two flushes */
	CHECK_INT(pstore_flush(s), ==, 0);
	CHECK_INT(append(s, mkprof(S3, C3, 3, T0 - 100 * SEC), "checkout", "2.5"), ==, 0);
	CHECK_INT(pstore_flush(s), ==, 0);
	pstore_stats(s, &st);
	CHECK_INT(st.blocks, ==, 2);
	CHECK_INT(st.head_profiles, ==, 0);
	CHECK_INT(st.profiles, ==, 5);
	CHECK(!check_folded(s, "{service=\"checkout\"}",
			    "main;idle 200000000\nmain;work;cold 400000000\nmain;work;hot 1200000000\n"));
	CHECK(!check_folded(s, "{service=\"checkout\",version=\"2.5\"}", WANT3));
	/* merged into one (the partition is closed once its hour has passed) */
	fake_now = T0 + 2 * HOUR;
	CHECK_INT(pstore_compact(s), ==, 0);
	pstore_stats(s, &st);
	CHECK_INT(st.blocks, ==, 1);
	CHECK_INT(st.merges, ==, 1);
	CHECK_INT(st.profiles, ==, 5);
	CHECK(!check_folded(s, "{service=\"checkout\"}",
			    "main;idle 200000000\nmain;work;cold 400000000\nmain;work;hot 1200000000\n"));
	CHECK(!check_folded(s, "{service=~\"c.*\"}",
			    "main;idle 250000000\nmain;work;cold 500000000\nmain;work;hot 1500000000\n"));
	CHECK(!check_folded(s, "{service=\"nothing\"}", ""));
	pstore_free(s);
	/* and after a restart, from the block alone */
	s = open_store(NULL);
	CHECK(s);
	CHECK(!check_folded(s, "{service=\"cart\"}", WANT3));
	pstore_free(s);
	remove_dir();
	return 0;
}

static int test_pstore__time_range_selects_profiles(void)
{
	struct pstore *s = fresh_store();
	struct pstore_result *r;

	CHECK(s);
	for (int i = 0; i < 6; i++)
		CHECK_INT(append(s, mkprof(S3, C3, 3, T0 + i * 10 * SEC), "a", "1"), ==, 0);
	r = query(s, NULL, "cpu", T0 + 10 * SEC, T0 + 30 * SEC);
	CHECK(r);
	CHECK_INT(total_of(r), ==, 2 * 45 * 10 * MS);
	pstore_result_free(r);
	CHECK_INT(pstore_flush(s), ==, 0);
	r = query(s, NULL, "cpu", T0 + 10 * SEC, T0 + 30 * SEC);
	CHECK(r);
	CHECK_INT(total_of(r), ==, 2 * 45 * 10 * MS);
	pstore_result_free(r);
	r = query(s, NULL, "samples", T0 + 50 * SEC, 0);
	CHECK(r);
	CHECK_INT(total_of(r), ==, 45);
	pstore_result_free(r);
	pstore_free(s);
	remove_dir();
	return 0;
}

static int test_pstore__time_from_profile_else_arrival(void)
{
	struct pstore *s = fresh_store();
	struct pprof_profile *p = mkprof(S3, C3, 3, 0);
	struct pstore_append_opts o = { .sz = sizeof(o), .time_ns = T0 - 5 * SEC };
	struct pstore_result *r;
	struct pstore_result_info info;

	CHECK(s && p);
	CHECK_INT(pstore_append(s, p, &o, NULL, 0), ==, 0);
	pprof_set_time(p, T0 - 100 * SEC, 10 * SEC);
	CHECK_INT(pstore_append(s, p, &o, NULL, 0), ==, 0);
	pprof_set_time(p, 0, 0);
	CHECK_INT(pstore_append(s, p, NULL, NULL, 0), ==, 0); /* now */
	r = query(s, NULL, "cpu", T0 - 6 * SEC, T0 - 4 * SEC);
	CHECK(r);
	pstore_result_info(r, &info);
	CHECK_INT(info.profiles, ==, 1);
	CHECK_INT(info.min_time_ns, ==, T0 - 5 * SEC);
	pstore_result_free(r);
	r = query(s, NULL, "cpu", T0 - 100 * SEC, T0 - 99 * SEC);
	CHECK(r && total_of(r) == 450 * MS);
	pstore_result_free(r);
	r = query(s, NULL, "cpu", T0, T0 + 1);
	CHECK(r && total_of(r) == 450 * MS);
	pstore_result_free(r);
	pprof_profile_free(p);
	pstore_free(s);
	remove_dir();
	return 0;
}

/* Samples with labels are series of their own; the caller's labels win. */
static int test_pstore__sample_labels_split_series(void)
{
	struct pstore *s = fresh_store();
	struct pprof_profile *p = mkprof(S3, C3, 2, T0);
	struct pprof_sample_label sl[2] = { { .key = "handler", .str = "/cart" },
					    { .key = "service", .str = "ignored" } };
	struct pstore_label l[1] = { { "service", "web" } };
	struct pstore_append_opts o = { .sz = sizeof(o), .labels = l, .n_labels = 1 };
	struct pstore_strlist *vals = NULL;
	struct pstore_selection all = { 0 };
	struct pstore_stats st;
	uint64_t loc = pprof_message(p)->sample[0]->location_id[0];
	int64_t v[2] = { 7, 70 * MS };

	CHECK(s && p);
	CHECK_INT(pprof_add_sample_labeled(p, &loc, 1, v, 2, sl, 2), ==, 0);
	CHECK_INT(pstore_append(s, p, &o, NULL, 0), ==, 0);
	pstore_stats(s, &st);
	CHECK_INT(st.series, ==, 2);
	CHECK_INT(st.profiles, ==, 2);
	CHECK(!check_folded(s, "{handler=\"/cart\"}", "hot 70000000\n"));
	CHECK(!check_folded(s, "{handler=\"\",service=\"web\"}",
			    "main;work;cold 100000000\nmain;work;hot 300000000\n"));
	CHECK_INT(pstore_label_values(s, "service", &all, &vals, NULL, 0), ==, 0);
	CHECK_INT(vals->n, ==, 1);
	CHECK_STR(vals->v[0], "web");
	pstore_strlist_free(vals);
	pprof_profile_free(p);
	pstore_free(s);
	remove_dir();
	return 0;
}

/* ---- limits -------------------------------------------------------------------- */

static int expect_reject(struct pstore *s, struct pprof_profile *p,
			 const struct pstore_append_opts *o, int want, const char *reason)
{
	char why[256] = "";
	int err = pstore_append(s, p, o, why, sizeof(why));

	if (err != want || !strstr(why, reason)) {
		fprintf(stderr, "append: %d '%s', want %d '%s'\n", err, why, want, reason);
		return 1;
	}
	return 0;
}

static int test_pstore__limits_reject_with_reasons(void)
{
	struct pstore_opts opts = test_opts();
	struct pstore *s;
	struct pprof_profile *p;
	char longv[64];
	struct pstore_label l[3] = { { "a", "1" }, { "b", "2" }, { "c", "3" } };
	struct pstore_append_opts o = { .sz = sizeof(o), .labels = l, .n_labels = 1 };
	struct pstore_stats st;

	opts.limits = (struct pstore_limits){ .sz = sizeof(opts.limits), .max_profile_bytes = 1000,
					      .max_samples = 2, .max_stack_depth = 2,
					      .max_labels = 3, .max_label_name_len = 8,
					      .max_label_value_len = 16, .max_series = 2 };
	CHECK(!make_dir());
	fake_now = T0;
	s = open_store(&opts);
	CHECK(s);
	p = mkprof(S3, C3, 3, T0);
	CHECK(!expect_reject(s, p, &o, -PSTORE_ERR_LIMIT, "3 samples, more than the limit of 2"));
	pprof_profile_free(p);
	p = mkprof(S3, C3, 2, T0);
	CHECK(!expect_reject(s, p, &o, -PSTORE_ERR_LIMIT, "stack of 3 frames"));
	pprof_profile_free(p);
	p = mkprof((const char *const[]){ "main;a", "main;b" }, C3, 2, T0);
	o.input_bytes = 5000;
	CHECK(!expect_reject(s, p, &o, -PSTORE_ERR_LIMIT, "profile of 5000 bytes"));
	o.input_bytes = 0;
	o.n_labels = 3; /* with __name__: 4 */
	CHECK(!expect_reject(s, p, &o, -PSTORE_ERR_LIMIT, "4 labels, more than the limit of 3"));
	l[1].name = "bad-name";
	o.n_labels = 2;
	CHECK(!expect_reject(s, p, &o, -PSTORE_ERR_LABEL, "label name 'bad-name'"));
	l[1].name = "toolongname";
	CHECK(!expect_reject(s, p, &o, -PSTORE_ERR_LIMIT, "longer than 8 bytes"));
	memset(longv, 'x', 40);
	longv[40] = '\0';
	l[1] = (struct pstore_label){ "b", longv };
	CHECK(!expect_reject(s, p, &o, -PSTORE_ERR_LIMIT, "label 'b': value longer than 16"));
	l[1] = (struct pstore_label){ "a", "again" };
	CHECK(!expect_reject(s, p, &o, -PSTORE_ERR_LABEL, "label 'a' given twice"));
	/* two series fit, the third does not, an old one still does */
	o.n_labels = 1;
	for (int i = 0; i < 2; i++) {
		l[0].value = i ? "v1" : "v0";
		CHECK_INT(pstore_append(s, p, &o, NULL, 0), ==, 0);
	}
	l[0].value = "v2";
	CHECK(!expect_reject(s, p, &o, -PSTORE_ERR_SERIES_LIMIT, "the store holds 2 series"));
	l[0].value = "v0";
	CHECK_INT(pstore_append(s, p, &o, NULL, 0), ==, 0);
	/* after a flush the series are in a block: still counted */
	CHECK_INT(pstore_flush(s), ==, 0);
	l[0].value = "v3";
	CHECK(!expect_reject(s, p, &o, -PSTORE_ERR_SERIES_LIMIT, "the store holds 2 series"));
	pstore_stats(s, &st);
	CHECK_INT(st.rejected, ==, 10);
	CHECK_INT(st.appends, ==, 3);
	pprof_profile_free(p);
	pstore_free(s);
	remove_dir();
	return 0;
}

/* ---- types ---------------------------------------------------------------------- */

static int test_pstore__types_aliases_and_names(void)
{
	struct pstore *s = fresh_store();
	struct pstore_strlist *types = NULL;
	struct pstore_selection all = { 0 }, sel = { .type = "delay" };
	struct pstore_result *r = NULL;
	struct pprof_profile *p;
	char why[256];
	struct pstore_label ln = { "__name__", "block" };
	struct pstore_append_opts o = { .sz = sizeof(o), .labels = &ln, .n_labels = 1 };

	CHECK(s);
	CHECK_INT(append(s, mkprof(S3, C3, 3, T0), "a", "1"), ==, 0);
	CHECK_INT(pstore_profile_types(s, &all, &types, NULL, 0), ==, 0);
	CHECK_INT(types->n, ==, 2);
	CHECK_STR(types->v[0], "process_cpu:cpu:nanoseconds:cpu:nanoseconds");
	CHECK_STR(types->v[1], "process_cpu:samples:count:cpu:nanoseconds");
	pstore_strlist_free(types);
	/* a full ID, and an alias; an unknown one fails with a reason */
	r = query(s, NULL, "process_cpu:samples:count:cpu:nanoseconds", 0, 0);
	CHECK(r && total_of(r) == 45);
	pstore_result_free(r);
	r = query(s, NULL, "process_cpu:cpu", 0, 0);
	CHECK(r && total_of(r) == 450 * MS);
	pstore_result_free(r);
	sel.type = "nope";
	CHECK_INT(pstore_query(s, &sel, NULL, &r, why, sizeof(why)), ==, -PSTORE_ERR_TYPE);
	CHECK(strstr(why, "unknown profile type 'nope'"));
	/* two profile names with the same sample type: the alias is ambiguous */
	p = mkprof(S3, C3, 3, T0);
	CHECK_INT(pstore_append(s, p, &o, NULL, 0), ==, 0);
	pprof_profile_free(p);
	sel.type = "cpu";
	CHECK_INT(pstore_query(s, &sel, NULL, &r, why, sizeof(why)), ==, -PSTORE_ERR_TYPE);
	CHECK(strstr(why, "ambiguous"));
	sel.type = "block:cpu";
	CHECK_INT(pstore_query(s, &sel, NULL, &r, why, sizeof(why)), ==, 0);
	CHECK_INT(total_of(r), ==, 450 * MS);
	pstore_result_free(r);
	/* the selector may carry the type, as Pyroscope writes it */
	r = query(s, "process_cpu:cpu:nanoseconds:cpu:nanoseconds{service=\"a\"}", NULL, 0, 0);
	CHECK(r && total_of(r) == 450 * MS);
	pstore_result_free(r);
	/* no type at all */
	sel.type = NULL;
	CHECK_INT(pstore_query(s, &sel, NULL, &r, why, sizeof(why)), ==, -PSTORE_ERR_TYPE);
	pstore_free(s);
	remove_dir();
	return 0;
}

static const struct unit_case cases[] = {
	UNIT_CASE(test_pstore__varint_cursor_bounds),
	UNIT_CASE(test_pstore__selector_matching),
	UNIT_CASE(test_pstore__selector_errors_explain),
	UNIT_CASE(test_pstore__append_query_head_blocks_merged_agree),
	UNIT_CASE(test_pstore__time_range_selects_profiles),
	UNIT_CASE(test_pstore__time_from_profile_else_arrival),
	UNIT_CASE(test_pstore__sample_labels_split_series),
	UNIT_CASE(test_pstore__limits_reject_with_reasons),
	UNIT_CASE(test_pstore__types_aliases_and_names),
};

UNIT_MAIN_QUIET(cases)
