/*
 * test_pstore.c - unit tests of profile-store/: the cursor readers, the
 * selector parser and matching, appends and queries (head, blocks,
 * merged blocks: the same answers), sample labels, span links (kept per
 * row, queried by span or trace, blocks of version 2), limits and their
 * reasons, types and aliases, discovery, series totals, coverage and the
 * resolver, retention, the log's replay (a torn tail, and kill -9 of a
 * child in the middle of writes), corrupt blocks, every output (folded,
 * top, JSON tree, flame graph checked by xmllint, pprof read by
 * `go tool pprof`), and diffs (their noise estimate, and their pprof
 * against `go tool pprof -diff_base`).
 */
#include "pprof.h"
#include "pstore.h"
#include "pstore_block.h"
#include "pstore_bytes.h"
#include "pstore_catalog.h"
#include "pstore_compact.h"
#include "pstore_head.h"
#include "pstore_index.h"
#include "pstore_query.h"
#include "pstore_regex.h"
#include "pstore_wal.h"
#include "unit.h"
/* after unit.h, whose parameters would shadow its globals */
#include "profile_fixture.h"
#include "pstore_fixture.h"

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

/* ---- helpers ---------------------------------------------------------------- */

/* Function id of name in p (one function per name, file "NAME.c"). */
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

static struct pmodel_result *query(struct pstore *s, const char *selector, const char *type,
				   int64_t from, int64_t to)
{
	struct pstore_selection sel = { .selector = selector, .type = type, .from_ns = from,
					.to_ns = to };
	struct pmodel_result *r = NULL;
	char why[256];

	if (pstore_query(s, &sel, NULL, &r, why, sizeof(why))) {
		fprintf(stderr, "pstore_query: %s\n", why);
		return NULL;
	}
	return r;
}

/* The folded output of r in a buffer the caller releases. */
static int folded(const struct pmodel_result *r, struct ember_buf *b)
{
	ember_buf_init(b, 64 << 20);
	return pmodel_write_folded(r, pmodel_write_buf, b);
}

static int64_t total_of(const struct pmodel_result *r)
{
	struct pmodel_result_info info;

	pmodel_result_info(r, &info);
	return info.total;
}

/* The same folded output for the same query, before and after flushing
 * and merging. */
static int check_answer(struct pstore *s, const struct pstore_selection *sel, const char *want)
{
	struct pmodel_result *r = NULL;
	struct ember_buf b;
	char why[256];
	int err = pstore_query(s, sel, NULL, &r, why, sizeof(why));

	if (err)
		fprintf(stderr, "pstore_query: %s\n", why);
	else
		err = folded(r, &b);
	if (!err && strcmp(b.data ? b.data : "", want) != 0) {
		fprintf(stderr, "folded output differs:\n--- want\n%s--- got\n%s", want,
			b.data ? b.data : "");
		err = -1;
	}
	if (r)
		ember_buf_release(&b);
	pmodel_result_free(r);
	return err;
}

static int check_folded(struct pstore *s, const char *selector, const char *want)
{
	struct pstore_selection sel = { .selector = selector, .type = "cpu" };

	return check_answer(s, &sel, want);
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
	CHECK(!expect_bad_selector("{a=~\"(x)\\\\1\"}", "invalid escape sequence: \\1"));
	CHECK(!expect_bad_selector("{a=~\"((a{100}){100})\"}", "too large: invalid repetition"));
	CHECK(!expect_bad_selector("{a=\"x\"} junk", "unexpected text"));
	CHECK(!expect_bad_selector("{a=~\"x++\"}", "bad repetition operator: ++"));
	CHECK(!expect_bad_selector("{a=~\"x{2}*\"}", "bad repetition operator"));
	/* not wrapped in "^(" ... ")$": no way out of the anchors */
	CHECK(!expect_bad_selector("{a=~\"x)|(y\"}", "bad regex"));
	CHECK_INT(matches("{a=~\"[+*]+x\"}", (const struct pstore_label[]){ {"a", "*+x"} }, 1), ==,
		  1);
	return 0;
}

/* RE2's syntax, as Prometheus and Pyroscope match selector regexes. */
static int test_pstore__selector_re2_syntax(void)
{
	const struct pstore_label l[] = { { "pid", "1234" }, { "service", "Checkout" },
					  { "msg", "a\nb" }, { "v", "ab" } };

	CHECK_INT(matches("{pid=~\"\\\\d+\"}", l, 4), ==, 1);
	CHECK_INT(matches("{pid=~`\\d{4}`}", l, 4), ==, 1);
	CHECK_INT(matches("{pid!~\"\\\\d{5,}\"}", l, 4), ==, 1);
	CHECK_INT(matches("{service=~\"(?i)checkout\"}", l, 4), ==, 1);
	CHECK_INT(matches("{service=~\"checkout\"}", l, 4), ==, 0);
	CHECK_INT(matches("{service=~\"\\\\w+\"}", l, 4), ==, 1);
	CHECK_INT(matches("{msg=~\"a.b\"}", l, 4), ==, 1); /* '.' takes a newline */
	CHECK_INT(matches("{v=~\"a|b\"}", l, 4), ==, 0);   /* the whole value, not ^a|b$ */
	CHECK_INT(matches("{v=~\"a|ab\"}", l, 4), ==, 1);
	return 0;
}

/* Text of a selector of n matchers "{a0=~"RE",a1=~"RE",...}" (op "=~" or
 * "="), into buf. */
static const char *many_matchers(char *buf, size_t size, int n, const char *op, const char *re)
{
	size_t at = (size_t)snprintf(buf, size, "{");

	for (int i = 0; i < n && at < size; i++)
		at += (size_t)snprintf(buf + at, size - at, "a%d%s\"%s\",", i, op, re);
	if (at < size)
		snprintf(buf + at, size - at, "}");
	return buf;
}

/* A 45-byte regex that took glibc's regcomp 1.1 GB and 1.8 s (issue 23). */
#define HOSTILE_RE "((((a|b|c|d|e|f|g|h|i|j|k)?){0,9}){0,9}){0,9}"

static int test_pstore__selector_regex_limits(void)
{
	struct pstore_selector *sel = NULL;
	char buf[8192], re[1100], why[256];
	uint64_t t0 = ember_monotonic_ms();
	size_t mem = 0;

	CHECK(!expect_bad_selector(many_matchers(buf, sizeof(buf), 9, "=~", "x"),
				   "more than 8 regex matchers"));
	CHECK(!expect_bad_selector(many_matchers(buf, sizeof(buf), 33, "=", "x"),
				   "more than 32 matchers"));
	memset(re, 'x', 1025);
	re[1025] = '\0';
	CHECK(!expect_bad_selector(many_matchers(buf, sizeof(buf), 1, "=~", re),
				   "regex longer than 1024 bytes"));
	CHECK(!expect_bad_selector("{a=~\"[\\\\pL\\\\pN]{1,500}\"}", "too large: pattern too large"));
	/* eight of the hostile regex: compiled, each within its bound, at once */
	CHECK_INT(pstore_selector_parse(many_matchers(buf, sizeof(buf), 8, "=~", HOSTILE_RE), &sel,
					why, sizeof(why)), ==, 0);
	for (size_t i = 0; i < sel->m.n; i++)
		mem += pstore_regex_mem(sel->m.v[i].re);
	CHECK_INT(mem, >, 0);
	CHECK_INT(mem, <=, 8 << 20);
	CHECK_INT(ember_monotonic_ms() - t0, <, 2000);
	/* a1..a7 missing: "" matches them */
	CHECK_INT(pstore_selector_matches(sel, (const struct pstore_label[]){ { "a0", "abc" } }, 1),
		  ==, 1);
	CHECK_INT(pstore_selector_matches(sel, (const struct pstore_label[]){ { "a0", "xyz" } }, 1),
		  ==, 0);
	pstore_selector_free(sel);
	return 0;
}

static int parse_charged(const char *text, struct ember_mem_account *acct, char *why,
			 size_t size)
{
	struct pstore_request rq = { .sz = sizeof(rq), .account = acct };
	struct pstore_selection s = { .selector = text, .request = &rq };
	struct ember_diag d = ember_diag_make(why, size);
	struct pstore_selector *sel = NULL;
	int err = pstore_selection_parse(&s, &sel, &d);

	pstore_selector_free(sel);
	return err;
}

/* Each regex takes its bound (1 MiB) from the request's account before it
 * is compiled: past the request's share 400 (PSTORE_ERR_LIMIT), past the
 * server's budget -EAGAIN (503). */
static int test_pstore__selector_regex_memory_charged(void)
{
	struct ember_mem_budget budget;
	struct ember_mem_account acct;
	char why[256];

	ember_mem_budget_init(&budget, 64 << 20);
	ember_mem_account_init(&acct, &budget, 3 << 20);
	CHECK_INT(parse_charged("{a=~\"x.*\",b=~\"\\\\d+\",c=\"y\"}", &acct, why, sizeof(why)), ==,
		  0);
	CHECK_INT(acct.used, ==, 2 << 20);
	CHECK_INT(ember_mem_budget_used(&budget), ==, 2 << 20);
	ember_mem_account_release(&acct);
	CHECK_INT(parse_charged("{a=~\"1\",b=~\"2\",c=~\"3\",d=~\"4\"}", &acct, why, sizeof(why)),
		  ==, -PSTORE_ERR_LIMIT);
	CHECK(strstr(why, "share"));
	ember_mem_account_release(&acct);
	CHECK_INT(ember_mem_budget_take(&budget, 63 << 20), ==, 0); /* other requests */
	CHECK_INT(parse_charged("{a=~\"1\",b=~\"2\"}", &acct, why, sizeof(why)), ==, -EAGAIN);
	ember_mem_account_release(&acct);
	ember_mem_budget_give(&budget, 63 << 20);
	CHECK_INT(ember_mem_budget_used(&budget), ==, 0);
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
		CHECK_INT(append(s, mkprof(S3, C3, 3, T0 - 300 * SEC + i * 10 * SEC), "checkout",
				 "2.4"),
			  ==, 0);
	CHECK_INT(append(s, mkprof(S3, C3, 3, T0 - 200 * SEC), "cart", "1.0"), ==, 0);
	/* in the head */
	CHECK(!check_folded(
		s, "{service=\"checkout\"}",
		"main;idle 150000000\nmain;work;cold 300000000\nmain;work;hot 900000000\n"));
	/* in one block per flush, after two flushes */
	CHECK_INT(pstore_flush(s), ==, 0);
	CHECK_INT(append(s, mkprof(S3, C3, 3, T0 - 100 * SEC), "checkout", "2.5"), ==, 0);
	CHECK_INT(pstore_flush(s), ==, 0);
	pstore_stats(s, &st);
	CHECK_INT(st.blocks, ==, 2);
	CHECK_INT(st.head_profiles, ==, 0);
	CHECK_INT(st.profiles, ==, 5);
	CHECK(!check_folded(
		s, "{service=\"checkout\"}",
		"main;idle 200000000\nmain;work;cold 400000000\nmain;work;hot 1200000000\n"));
	CHECK(!check_folded(s, "{service=\"checkout\",version=\"2.5\"}", WANT3));
	/* merged into one (the partition is closed once its hour has passed) */
	fake_now = T0 + 2 * HOUR;
	CHECK_INT(pstore_compact(s), ==, 0);
	pstore_stats(s, &st);
	CHECK_INT(st.blocks, ==, 1);
	CHECK_INT(st.merges, ==, 1);
	CHECK_INT(st.profiles, ==, 5);
	CHECK(!check_folded(
		s, "{service=\"checkout\"}",
		"main;idle 200000000\nmain;work;cold 400000000\nmain;work;hot 1200000000\n"));
	CHECK(!check_folded(
		s, "{service=~\"c.*\"}",
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

/* A profile without samples is a data point too (no CPU in 10 s). */
static int test_pstore__empty_profile_stored(void)
{
	struct pstore *s = fresh_store();
	struct pmodel_result *r;
	struct pstore_stats st;
	struct pmodel_result_info info;

	CHECK(s);
	CHECK_INT(append(s, mkprof(S3, C3, 0, T0), "a", "1"), ==, 0);
	CHECK_INT(pstore_flush(s), ==, 0);
	CHECK_INT(append(s, mkprof(S3, C3, 0, T0 + SEC), "a", "1"), ==, 0);
	pstore_stats(s, &st);
	CHECK_INT(st.profiles, ==, 2);
	r = query(s, NULL, "cpu", 0, 0);
	CHECK(r);
	pmodel_result_info(r, &info);
	CHECK_INT(info.profiles, ==, 2);
	CHECK_INT(info.total, ==, 0);
	pmodel_result_free(r);
	pstore_free(s);
	remove_dir();
	return 0;
}

static int test_pstore__time_range_selects_profiles(void)
{
	struct pstore *s = fresh_store();
	struct pmodel_result *r;

	CHECK(s);
	for (int i = 0; i < 6; i++)
		CHECK_INT(append(s, mkprof(S3, C3, 3, T0 + i * 10 * SEC), "a", "1"), ==, 0);
	r = query(s, NULL, "cpu", T0 + 10 * SEC, T0 + 30 * SEC);
	CHECK(r);
	CHECK_INT(total_of(r), ==, 2 * 45 * 10 * MS);
	pmodel_result_free(r);
	CHECK_INT(pstore_flush(s), ==, 0);
	r = query(s, NULL, "cpu", T0 + 10 * SEC, T0 + 30 * SEC);
	CHECK(r);
	CHECK_INT(total_of(r), ==, 2 * 45 * 10 * MS);
	pmodel_result_free(r);
	r = query(s, NULL, "samples", T0 + 50 * SEC, 0);
	CHECK(r);
	CHECK_INT(total_of(r), ==, 45);
	pmodel_result_free(r);
	pstore_free(s);
	remove_dir();
	return 0;
}

static int test_pstore__time_from_profile_else_arrival(void)
{
	struct pstore *s = fresh_store();
	struct pprof_profile *p = mkprof(S3, C3, 3, 0);
	struct pstore_append_opts o = { .sz = sizeof(o), .time_ns = T0 - 5 * SEC };
	struct pmodel_result *r;
	struct pmodel_result_info info;

	CHECK(s && p);
	CHECK_INT(pstore_append(s, p, &o, NULL, 0), ==, 0);
	pprof_set_time(p, T0 - 100 * SEC, 10 * SEC);
	CHECK_INT(pstore_append(s, p, &o, NULL, 0), ==, 0);
	pprof_set_time(p, 0, 0);
	CHECK_INT(pstore_append(s, p, NULL, NULL, 0), ==, 0); /* now */
	r = query(s, NULL, "cpu", T0 - 6 * SEC, T0 - 4 * SEC);
	CHECK(r);
	pmodel_result_info(r, &info);
	CHECK_INT(info.profiles, ==, 1);
	CHECK_INT(info.min_time_ns, ==, T0 - 5 * SEC);
	pmodel_result_free(r);
	r = query(s, NULL, "cpu", T0 - 100 * SEC, T0 - 99 * SEC);
	CHECK(r && total_of(r) == 450 * MS);
	pmodel_result_free(r);
	r = query(s, NULL, "cpu", T0, T0 + 1);
	CHECK(r && total_of(r) == 450 * MS);
	pmodel_result_free(r);
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

/* ---- span links ----------------------------------------------------------------- */

#define SPAN_A "aaaaaaaaaaaaaaaa"
#define SPAN_B "bbbbbbbbbbbbbbbb"
#define TRACE_1 "11111111111111111111111111111111"

/* Sample i's stack of p again, with values v and labels l[0..n). */
static int add_again(struct pprof_profile *p, size_t i, int64_t count,
		     const struct pprof_sample_label *l, size_t n)
{
	const Perftools__Profiles__Sample *s = pprof_message(p)->sample[i];
	int64_t v[2] = { count, count * 10 * MS };

	return pprof_add_sample_labeled(p, s->location_id, s->n_location_id, v, 2, l, n);
}

/* The folded answer for the samples linked to span (hex) or trace (hex). */
static int check_linked(struct pstore *s, const char *span, const char *trace, const char *want)
{
	uint8_t sp[1][8], tr[1][16];
	struct pstore_link_filter f = { (const uint8_t(*)[8])sp, 0, (const uint8_t(*)[16])tr, 0 };
	struct pstore_selection sel = { .type = "cpu", .links = &f };

	if (span)
		f.n_span = !ember_hex_decode(span, sp[0], 8);
	if (trace)
		f.n_trace = !ember_hex_decode(trace, tr[0], 16);
	return check_answer(s, &sel, want);
}

/* A bit per version of the store's blocks, and whether some have a
 * LINKS section (BLOCK_LINKED) and some not (BLOCK_UNLINKED). */
#define BLOCK_LINKED (1u << 16)
#define BLOCK_UNLINKED (1u << 17)

static unsigned block_kinds_of(const char *path)
{
	uint8_t h[PS_BLOCK_HEADER + PS_BLOCK_MAX_SECTIONS * PS_SECTION_ENTRY];
	int fd = open(path, O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, h, sizeof(h)) : -1;
	unsigned v = 0, k;
	bool linked = false;

	if (fd >= 0)
		close(fd);
	if (n < PS_BLOCK_HEADER)
		return 0;
	v = 1u << (h[8] | h[9] << 8);
	k = h[12] | h[13] << 8;
	for (unsigned i = 0; i < k && PS_BLOCK_HEADER + (i + 1) * PS_SECTION_ENTRY <= (size_t)n;
	     i++)
		linked |= h[PS_BLOCK_HEADER + i * PS_SECTION_ENTRY] == PS_SEC_LINKS;
	return v | (linked ? BLOCK_LINKED : BLOCK_UNLINKED);
}

/* fn(ctx, NAME) for each block file of the store's directory (in
 * blocks/); -1 when there is no such directory. */
static int each_block(void (*fn)(void *ctx, const char *name), void *ctx)
{
	char path[600];
	DIR *dp;
	struct dirent *e;

	snprintf(path, sizeof(path), "%s/blocks", dir);
	if (!(dp = opendir(path)))
		return -1;
	while ((e = readdir(dp)))
		if (strstr(e->d_name, ".pblk"))
			fn(ctx, e->d_name);
	closedir(dp);
	return 0;
}

static void add_kinds(void *ctx, const char *name)
{
	char path[700];

	snprintf(path, sizeof(path), "%s/blocks/%s", dir, name);
	*(unsigned *)ctx |= block_kinds_of(path);
}

static unsigned block_versions(void)
{
	unsigned v = 0;

	return each_block(add_kinds, &v) ? 0 : v;
}

/* What a span, a trace and every sample answer, wherever the rows are. */
static int check_links(struct pstore *s, const char *all)
{
	if (check_linked(s, SPAN_A, NULL, "main;work;cold 20000000\nmain;work;hot 70000000\n") ||
	    check_linked(s, SPAN_B, NULL, "main;work;cold 30000000\n") ||
	    check_linked(s, NULL, TRACE_1, "main;work;cold 50000000\nmain;work;hot 70000000\n") ||
	    check_linked(s, "cccccccccccccccc", NULL, "") || check_folded(s, NULL, all))
		return -1;
	return 0;
}

/* span_id and trace_id labels are the sample's link: kept with its row,
 * never a series or a label value; a span or a trace asked for answers
 * exactly its samples, from the head, a block with links, a merge of it
 * with a block without links, and after a restart. */
static int test_pstore__span_links_kept_per_sample_not_series(void)
{
	static const char all[] = "main;idle 60000000\nmain;work;cold 150000000\n"
				  "main;work;hot 370000000\n";
	static const char all2[] = "main;idle 110000000\nmain;work;cold 250000000\n"
				   "main;work;hot 670000000\n";
	struct pstore *s = fresh_store();
	struct pprof_profile *p = mkprof(S3, C3, 3, T0 - 300 * SEC);
	struct pprof_sample_label a[2] = { { .key = "span_id", .str = SPAN_A },
					   { .key = "trace_id", .str = TRACE_1 } };
	struct pprof_sample_label b[2] = { { .key = "span_id", .str = SPAN_B },
					   { .key = "trace_id", .str = TRACE_1 } };
	struct pprof_sample_label bad[2] = { { .key = "span_id", .str = "not-hex" },
					     { .key = "handler", .str = "/x" } };
	struct pstore_selection sel = { 0 };
	struct pstore_strlist *names = NULL;
	struct pstore_stats st;

	CHECK(s && p);
	CHECK_INT(add_again(p, 0, 7, a, 2), ==, 0);
	CHECK_INT(add_again(p, 1, 3, b, 2), ==, 0);
	CHECK_INT(add_again(p, 1, 2, a, 2), ==, 0);
	CHECK_INT(add_again(p, 2, 1, bad, 2), ==, 0);
	CHECK_INT(append(s, p, "web", "1"), ==, 0);
	pstore_stats(s, &st);
	CHECK_INT(st.series, ==, 2); /* {service,version} and {handler,...}: no span */
	CHECK_INT(pstore_label_names(s, &sel, &names, NULL, 0), ==, 0);
	for (size_t i = 0; i < names->n; i++)
		CHECK(strcmp(names->v[i], "span_id") && strcmp(names->v[i], "trace_id"));
	pstore_strlist_free(names);
	CHECK(!check_links(s, all));
	CHECK_INT(pstore_flush(s), ==, 0);
	CHECK_INT(block_versions(), ==, (1u << PS_BLOCK_VERSION_FRAMES | BLOCK_LINKED));
	CHECK(!check_links(s, all));
	/* a block without links has no LINKS section */
	CHECK_INT(append(s, mkprof(S3, C3, 3, T0 - 200 * SEC), "web", "1"), ==, 0);
	CHECK_INT(pstore_flush(s), ==, 0);
	CHECK_INT(block_versions(), ==,
		  (1u << PS_BLOCK_VERSION_FRAMES | BLOCK_LINKED | BLOCK_UNLINKED));
	fake_now = T0 + 2 * HOUR;
	CHECK_INT(pstore_compact(s), ==, 0);
	pstore_stats(s, &st);
	CHECK_INT(st.merges, ==, 1);
	CHECK_INT(block_versions(), ==, (1u << PS_BLOCK_VERSION_FRAMES | BLOCK_LINKED));
	CHECK(!check_links(s, all2));
	pstore_free(s);
	s = open_store(NULL);
	CHECK(s);
	CHECK(!check_links(s, all2));
	pstore_free(s);
	remove_dir();
	return 0;
}

/* The full-resolution folded answer over [from, to) is want. */
static int check_range(struct pstore *s, int64_t from, int64_t to, const char *want)
{
	struct pstore_selection sel = { .type = "cpu", .from_ns = from, .to_ns = to,
					.full_resolution = true };

	return check_answer(s, &sel, want);
}

/* Forty profiles 10 s apart from the start of partition part, flushed:
 * profile i has i + 1 hot samples and 40 - i cold (three frames). */
static int store_forty(struct pstore *s, int64_t part)
{
	static const char *const st[] = { "main;work;hot", "main;work;cold" };

	for (int64_t i = 0; i < 40; i++)
		if (append(s, mkprof(st, (const int64_t[]){ i + 1, 40 - i }, 2,
				     part + i * 10 * SEC),
			   "web", "1"))
			return -1;
	return pstore_flush(s);
}

/* A block's row streams are a zstd frame per 16 profiles of a series
 * (version 3): a range reads the frames of its profiles alone (those
 * before skipped by their headers), within one frame, across three, and
 * all of them (store_forty's).  Asked again, the same ranges are read where the cached block's frame
 * table (learnt from the first reads) says their frames lie, and answer
 * the same. */
static int test_pstore__frames_read_alone_give_their_profiles(void)
{
	int64_t part = T0 - 3 * HOUR - (T0 - 3 * HOUR) % HOUR;
	struct pstore *s = fresh_store();

	CHECK(s);
	CHECK_INT(store_forty(s, part), ==, 0);
	CHECK_INT(block_versions(), ==, (1u << PS_BLOCK_VERSION_FRAMES | BLOCK_UNLINKED));
	for (int pass = 0; pass < 2; pass++) {
		/* profiles 16..19: the second frame alone */
		CHECK(!check_range(s, part + 160 * SEC, part + 200 * SEC,
				   "main;work;cold 900000000\nmain;work;hot 740000000\n"));
		/* 15..32: the end of the first, the second, the start of the third */
		CHECK(!check_range(s, part + 150 * SEC, part + 330 * SEC,
				   "main;work;cold 2970000000\nmain;work;hot 4410000000\n"));
		/* 39: the last frame, of 8 profiles */
		CHECK(!check_range(s, part + 390 * SEC, part + 400 * SEC,
				   "main;work;cold 10000000\nmain;work;hot 400000000\n"));
		CHECK(!check_range(s, part, part + HOUR,
				   "main;work;cold 8200000000\nmain;work;hot 8200000000\n"));
	}
	pstore_free(s);
	remove_dir();
	return 0;
}

/* Where one_block puts the name of the first block, and the count. */
struct named {
	char *name;
	size_t len;
	int n;
};

static void name_it(void *ctx, const char *name)
{
	struct named *nm = ctx;

	if (nm->n++ == 0)
		snprintf(nm->name, nm->len, "blocks/%s", name);
}

/* The name ("blocks/NAME") of the one block in the store's directory. */
static int one_block(char *name, size_t len)
{
	struct named nm = { name, len, 0 };

	return each_block(name_it, &nm) || nm.n != 1 ? -1 : 0;
}

/* Frames [f0, f1) of stream si of b through a reader of its own: what
 * it read (*bytes) and decoded (out). */
static int read_frames(struct pstore_block *b, struct pstore_bdata *bd, size_t si, size_t f0,
		       size_t f1, uint64_t *bytes, struct ember_buf *out)
{
	struct pstore_rows_reader rd = { 0 };
	int err;

	ember_buf_init(&rd.win, 0);
	err = pstore_block_read_frames_z(b, bd, si, f0, f1, &rd, out, NULL);
	*bytes = rd.bytes;
	ember_buf_release(&rd.win);
	return err;
}

/* A framed block's frame table: unknown until a stream is read whole
 * (the first read of its second frame reads all of it), then the same
 * frame read again reads only its own bytes and decodes the same rows;
 * every frame is the whole stream, read as such. */
static int test_pstore__frame_table_learnt_then_read_by(void)
{
	int64_t part = T0 - 3 * HOUR - (T0 - 3 * HOUR) % HOUR;
	struct pstore *s = fresh_store();
	struct pstore_blockio io;
	struct pstore_block *b = NULL;
	struct pstore_bdata *bd = NULL;
	struct ember_hash_key ident = { 1, 2 };
	struct ember_buf one, two;
	uint64_t whole, first, again, all, a, z;
	char name[300], path[1000];
	struct stat sb;
	size_t si;

	CHECK(s);
	CHECK_INT(store_forty(s, part), ==, 0);
	pstore_free(s);
	CHECK_INT(one_block(name, sizeof(name)), ==, 0);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	CHECK_INT(stat(path, &sb), ==, 0);
	CHECK_INT(pstore_blockio_dir(dir, &io), ==, 0);
	CHECK_INT(pstore_block_open(&io, name, (uint64_t)sb.st_size, &ident, &b, NULL), ==, 0);
	CHECK_INT(pstore_block_load(b, &bd, NULL), ==, 0);
	si = bd->series_stream.v[0]; /* the stack stream: 3 frames */
	whole = bd->streams.v[si].stored;
	CHECK(!pstore_frames_span(&bd->frames, si, 1, 2, &a, &z));
	ember_buf_init(&one, 0);
	ember_buf_init(&two, 0);
	CHECK_INT(read_frames(b, bd, si, 1, 2, &first, &one), ==, 0);
	CHECK(pstore_frames_span(&bd->frames, si, 1, 2, &a, &z));
	CHECK_INT(read_frames(b, bd, si, 1, 2, &again, &two), ==, 0);
	CHECK_INT(first, ==, whole);
	CHECK_INT(again, ==, z - a);
	CHECK_INT(again, <, whole / 2);
	CHECK_INT(one.len, >, 0);
	CHECK_INT(one.len, ==, two.len);
	CHECK(!memcmp(one.data, two.data, one.len));
	CHECK_INT(read_frames(b, bd, si, 0, SIZE_MAX, &all, &two), ==, 0);
	CHECK_INT(all, ==, whole);
	CHECK_INT(two.len, ==, bd->streams.v[si].raw);
	ember_buf_release(&one);
	ember_buf_release(&two);
	pstore_bdata_unref(bd);
	pstore_block_unref(b);
	io.release(io.ctx);
	remove_dir();
	return 0;
}

/* The block fixtures/pstore/NAME, written by the build before version 3,
 * put into the store's directory under the name the store gives it. */
static int put_fixture(const char *name)
{
	char path[600], bname[PS_BLOCK_NAME_MAX];
	size_t len;
	char *data;
	FILE *f;
	int err;

	snprintf(path, sizeof(path), "%s/%s", EMBER_PSTORE_FIXTURES, name);
	data = unit_slurp(path, &len);
	err = !data || len < PS_BLOCK_HEADER;
	if (!err)
		err = pstore_block_name((int64_t)pstore_rd64((const uint8_t *)data + 32), data, len,
					bname);
	if (!err) {
		snprintf(path, sizeof(path), "%s/%s", dir, bname);
		f = fopen(path, "wb");
		err = !f || fwrite(data, 1, len, f) != len;
		err |= f && fclose(f);
	}
	free(data);
	return err;
}

/* Blocks of versions 1 and 2 (made by tests/fuzz/make_pstore_seeds.c
 * before version 3) read as they were written, and their merge, written
 * as version 3 (framed), answers the same: every sample, and a span's. */
static int test_pstore__blocks_of_versions_1_and_2_still_read(void)
{
	static const char all[] = "main;work;app+0x2000 150000000\nmain;work;hot 340000000\n";
	static const char span[] = "main;work;hot 60000000\n";
	struct pstore *s = fresh_store();
	struct pstore_stats st;

	CHECK(s);
	pstore_free(s);
	CHECK_INT(put_fixture("flushed-v1.pblk"), ==, 0);
	CHECK_INT(put_fixture("linked-v2.pblk"), ==, 0);
	CHECK_INT(block_versions(), ==,
		  (1u << PS_BLOCK_VERSION | 1u << PS_BLOCK_VERSION_LINKS | BLOCK_LINKED |
		   BLOCK_UNLINKED));
	s = open_store(NULL);
	CHECK(s);
	CHECK(!check_folded(s, NULL, all));
	CHECK(!check_linked(s, "00f067aa0ba902b7", NULL, span));
	fake_now = T0 + 4 * HOUR;
	CHECK_INT(pstore_compact(s), ==, 0);
	pstore_stats(s, &st);
	CHECK_INT(st.merges, ==, 1);
	CHECK_INT(block_versions(), ==, (1u << PS_BLOCK_VERSION_FRAMES | BLOCK_LINKED));
	CHECK(!check_folded(s, NULL, all));
	CHECK(!check_linked(s, "00f067aa0ba902b7", NULL, span));
	pstore_free(s);
	remove_dir();
	return 0;
}

/* Rows of one stack with different links stay apart; equal pairs sum. */
static int test_pstore__rows_normalize_per_stack_and_link(void)
{
	struct pstore_rows r = { .ncols = 1 };
	static const uint32_t node[] = { 5, 3, 5, 3, 5 }, link[] = { 1, 0, 1, 2, 0 };
	static const int64_t val[] = { 1, 2, 4, 8, 16 };

	for (size_t i = 0; i < 5; i++) {
		CHECK_INT(EMBER_VEC_APPEND(&r.node, node[i]), ==, 0);
		CHECK_INT(EMBER_VEC_APPEND(&r.link, link[i]), ==, 0);
		CHECK_INT(EMBER_VEC_APPEND(&r.val, val[i]), ==, 0);
	}
	CHECK_INT(pstore_rows_normalize(&r), ==, 0);
	CHECK_INT(r.node.n, ==, 4);
	CHECK_INT(r.link.n, ==, 4);
	CHECK(r.node.v[0] == 3 && r.link.v[0] == 0 && r.val.v[0] == 2);
	CHECK(r.node.v[1] == 3 && r.link.v[1] == 2 && r.val.v[1] == 8);
	CHECK(r.node.v[2] == 5 && r.link.v[2] == 0 && r.val.v[2] == 16);
	CHECK(r.node.v[3] == 5 && r.link.v[3] == 1 && r.val.v[3] == 5);
	pstore_rows_release(&r);
	return 0;
}

/* A link stream naming a link past the table, and a LINKS section cut
 * short, are corrupt, never read past. */
static int test_pstore__link_stream_and_table_checked(void)
{
	static const uint8_t stream[] = { 0, 2, 3 }, table[] = { 2, 0xab };
	struct pstore_bdata b = { 0 };
	uint32_t links[3];

	CHECK_INT(pstore_rows_decode_links(stream, stream + 2, 2, 2, links, NULL), ==, 0);
	CHECK(links[0] == 0 && links[1] == 2);
	CHECK_INT(pstore_rows_decode_links(stream, stream + 3, 3, 2, links, NULL), ==,
		  -PSTORE_ERR_CORRUPT);
	CHECK_INT(pstore_rows_decode_links(stream, stream + 2, 3, 3, links, NULL), ==,
		  -PSTORE_ERR_CORRUPT);
	CHECK_INT(pstore_block_decode_links(table, sizeof(table), &b, NULL), ==,
		  -PSTORE_ERR_CORRUPT);
	pstore_linktab_release(&b.links);
	return 0;
}

/* ---- sample attributes ---------------------------------------------------------- */

/* The attributed parts of the cpu query's answer: "leaf attrs value"
 * lines (the attribute set's lines joined by ','), sorted. */
static int check_attrs(struct pstore *s, const char *want)
{
	struct pstore_selection sel = { .type = "cpu" };
	struct pmodel_result *r = NULL;
	char why[256], lines[16][128], got[2048] = "";
	size_t n = 0;
	int err = pstore_query(s, &sel, NULL, &r, why, sizeof(why));

	if (err) {
		fprintf(stderr, "pstore_query: %s\n", why);
		return err;
	}
	for (size_t i = 0; i < r->attr_rows.n && n < 16; i++, n++) {
		const struct pmodel_attr_row *a = &r->attr_rows.v[i];
		const struct pmodel_loc *l = &r->dict.locs.v[r->dict.node_loc.v[a->node]];
		const struct pmodel_func *f = &r->dict.funcs.v[r->dict.lines.v[l->line_off].func];
		char *c;

		snprintf(lines[n], sizeof(lines[n]), "%s %s %lld\n", pmodel_str(&r->dict.str, f->name),
			 pmodel_str(&r->attr_str, a->attrs), (long long)a->value);
		while ((c = strchr(lines[n], '\n')) && c[1])
			*c = ',';
	}
	qsort(lines, n, sizeof(lines[0]), (int (*)(const void *, const void *))strcmp);
	for (size_t i = 0; i < n; i++)
		strcat(got, lines[i]);
	pmodel_result_free(r);
	if (strcmp(got, want)) {
		fprintf(stderr, "attributed parts differ:\n--- want\n%s--- got\n%s", want, got);
		return -1;
	}
	return 0;
}

/* Labels named '@' KEY are the sample's attributes (OTLP's thread name
 * and ID, CPU): kept with its row (sorted by key, a repeated key's first
 * kept, an invalid key dropped), never a series or a label name, summed
 * per (stack, attributes) and given back beside the query's sums; from
 * the head, a block with links, a merge with a block without them, and
 * after a restart. */
static int test_pstore__sample_attrs_kept_per_sample_not_series(void)
{
	static const char want[] =
		"cold thread.id=7,thread.name=w2 30000000\n"
		"hot thread.name=w1 90000000\n"; /* the linked row's part too */
	static const char want2[] =
		"cold thread.id=7,thread.name=w2 60000000\n"
		"hot thread.name=w1 180000000\n";
	struct pstore *s = fresh_store();
	struct pprof_profile *p = mkprof(S3, C3, 3, T0 - 300 * SEC);
	struct pprof_sample_label w1[2] = { { .key = "@thread.name", .str = "w1" },
					    { .key = "@bad key", .str = "x" } };
	struct pprof_sample_label w2[3] = { { .key = "@thread.name", .str = "w2" },
					    { .key = "@thread.id", .str = "7" },
					    { .key = "@thread.name", .str = "w3" } };
	struct pprof_sample_label wl[2] = { { .key = "@thread.name", .str = "w1" },
					    { .key = "span_id", .str = SPAN_A } };
	struct pstore_selection sel = { 0 };
	struct pstore_strlist *names = NULL;
	struct pstore_stats st;

	CHECK(s && p);
	CHECK_INT(add_again(p, 0, 7, w1, 2), ==, 0);
	CHECK_INT(add_again(p, 1, 3, w2, 3), ==, 0);
	CHECK_INT(add_again(p, 0, 2, wl, 2), ==, 0);
	CHECK_INT(append(s, p, "web", "1"), ==, 0);
	pstore_stats(s, &st);
	CHECK_INT(st.series, ==, 1);
	CHECK_INT(pstore_label_names(s, &sel, &names, NULL, 0), ==, 0);
	for (size_t i = 0; i < names->n; i++)
		CHECK(!strstr(names->v[i], "thread"));
	pstore_strlist_free(names);
	CHECK(!check_folded(s, NULL, "main;idle 50000000\nmain;work;cold 130000000\n"
				     "main;work;hot 390000000\n"));
	CHECK(!check_attrs(s, want));
	CHECK(!check_linked(s, SPAN_A, NULL, "main;work;hot 20000000\n"));
	CHECK_INT(pstore_flush(s), ==, 0);
	CHECK_INT(block_versions(), ==, (1u << PS_BLOCK_VERSION_FRAMES | BLOCK_LINKED));
	CHECK(!check_attrs(s, want));
	CHECK_INT(append(s, mkprof(S3, C3, 3, T0 - 200 * SEC), "web", "1"), ==, 0);
	CHECK_INT(pstore_flush(s), ==, 0);
	fake_now = T0 + 2 * HOUR;
	CHECK_INT(pstore_compact(s), ==, 0);
	pstore_stats(s, &st);
	CHECK_INT(st.merges, ==, 1);
	CHECK(!check_attrs(s, want));
	pstore_free(s);
	s = open_store(NULL);
	CHECK(s);
	CHECK(!check_attrs(s, want));
	p = mkprof(S3, C3, 3, T0 - 100 * SEC);
	CHECK(p);
	CHECK_INT(add_again(p, 0, 7, w1, 2), ==, 0);
	CHECK_INT(add_again(p, 1, 3, w2, 3), ==, 0);
	CHECK_INT(add_again(p, 0, 2, wl, 2), ==, 0);
	CHECK_INT(append(s, p, "web", "1"), ==, 0);
	CHECK(!check_attrs(s, want2)); /* the head's and the block's summed */
	pstore_free(s);
	remove_dir();
	return 0;
}

/* The LINKS section's attribute sets: read back, and a set named past
 * the table, repeated or empty is corrupt. */
static int test_pstore__links_section_attribute_sets_checked(void)
{
	/* 1 set "a=b"; 1 link: 24 bytes of IDs, set 1 */
	uint8_t ok[1 + 4 + 1 + 25] = { 1, 3, 'a', '=', 'b', 1 };
	uint8_t past[sizeof(ok)], twice[] = { 2, 3, 'a', '=', 'b', 3, 'a', '=', 'b', 0 };
	uint8_t empty[] = { 1, 0, 0 };
	struct pstore_bdata b = { 0 };

	ok[sizeof(ok) - 1] = 1;
	ok[6] = 0xab; /* the trace ID's first byte */
	memcpy(past, ok, sizeof(ok));
	past[sizeof(past) - 1] = 2;
	CHECK_INT(pstore_block_decode_links(ok, sizeof(ok), &b, NULL), ==, 0);
	CHECK_INT(b.links.v.n, ==, 1);
	CHECK_INT(b.links.v.v[0].trace[0], ==, 0xab);
	CHECK_STR(pstore_linktab_attrs_of(&b.links, 1), "a=b");
	pstore_linktab_release(&b.links);
	memset(&b, 0, sizeof(b));
	CHECK_INT(pstore_block_decode_links(past, sizeof(past), &b, NULL), ==, -PSTORE_ERR_CORRUPT);
	pstore_linktab_release(&b.links);
	memset(&b, 0, sizeof(b));
	CHECK_INT(pstore_block_decode_links(twice, sizeof(twice), &b, NULL), ==,
		  -PSTORE_ERR_CORRUPT);
	pstore_linktab_release(&b.links);
	memset(&b, 0, sizeof(b));
	CHECK_INT(pstore_block_decode_links(empty, sizeof(empty), &b, NULL), ==,
		  -PSTORE_ERR_CORRUPT);
	pstore_linktab_release(&b.links);
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

/* Each error's kind: what an answer's status comes from (api/status.c). */
static int test_pstore__error_kinds(void)
{
	static const struct {
		int err;
		enum ember_errkind kind;
	} want[] = {
		{ -PSTORE_ERR_TOO_LARGE, EMBER_ERRK_TOO_LARGE },
		{ -PSTORE_ERR_LIMIT, EMBER_ERRK_OVER_LIMIT },
		{ -PSTORE_ERR_LABEL, EMBER_ERRK_MALFORMED },
		{ -PSTORE_ERR_SELECTOR, EMBER_ERRK_MALFORMED },
		{ -PSTORE_ERR_TYPE, EMBER_ERRK_MALFORMED },
		{ -EINVAL, EMBER_ERRK_MALFORMED },
		{ -PSTORE_ERR_SERIES_LIMIT, EMBER_ERRK_CAPACITY },
		{ -PSTORE_ERR_CORRUPT, EMBER_ERRK_CORRUPT },
		{ -PSTORE_ERR_CLOSED, EMBER_ERRK_UNAVAILABLE },
		{ -ENOSPC, EMBER_ERRK_NO_SPACE },
		{ -EDQUOT, EMBER_ERRK_NO_SPACE },
		{ -EFBIG, EMBER_ERRK_NO_SPACE },
		{ -EIO, EMBER_ERRK_UNAVAILABLE },
		{ -ENOENT, EMBER_ERRK_UNAVAILABLE }, /* a file the store lost: not a miss */
		{ -ENOMEM, EMBER_ERRK_UNAVAILABLE },
		{ -E2BIG, EMBER_ERRK_UNAVAILABLE },
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		enum ember_errkind k = pstore_error_kind(want[i].err);

		if (k != want[i].kind) {
			fprintf(stderr, "%d (%s): %s, want %s\n", want[i].err,
				pstore_strerror(want[i].err), ember_errkind_name(k),
				ember_errkind_name(want[i].kind));
			return 1;
		}
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
	CHECK(!expect_reject(s, p, &o, -PSTORE_ERR_TOO_LARGE, "3 samples, more than the limit of 2"));
	pprof_profile_free(p);
	p = mkprof(S3, C3, 2, T0);
	CHECK(!expect_reject(s, p, &o, -PSTORE_ERR_LIMIT, "stack of 3 frames"));
	pprof_profile_free(p);
	p = mkprof((const char *const[]){ "main;a", "main;b" }, C3, 2, T0);
	o.input_bytes = 5000;
	CHECK(!expect_reject(s, p, &o, -PSTORE_ERR_TOO_LARGE, "profile of 5000 bytes"));
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
	struct pmodel_result *r = NULL;
	struct pmodel_result_info ri;
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
	pmodel_result_free(r);
	r = query(s, NULL, "process_cpu:cpu", 0, 0);
	CHECK(r && total_of(r) == 450 * MS);
	pmodel_result_free(r);
	sel.type = "nope";
	CHECK_INT(pstore_query(s, &sel, NULL, &r, why, sizeof(why)), ==, -PSTORE_ERR_TYPE);
	CHECK(strstr(why, "unknown profile type 'nope'"));
	/* two profile names with the same sample type: the alias keeps the
	 * built-in type (docs/http-api.md, "Selections"), never ambiguous */
	p = mkprof(S3, C3, 3, T0);
	CHECK_INT(pstore_append(s, p, &o, NULL, 0), ==, 0);
	pprof_profile_free(p);
	sel.type = "cpu";
	CHECK_INT(pstore_query(s, &sel, NULL, &r, why, sizeof(why)), ==, 0);
	pmodel_result_info(r, &ri);
	CHECK_STR(ri.type, "process_cpu:cpu:nanoseconds:cpu:nanoseconds");
	pmodel_result_free(r);
	sel.type = "block:cpu";
	CHECK_INT(pstore_query(s, &sel, NULL, &r, why, sizeof(why)), ==, 0);
	CHECK_INT(total_of(r), ==, 450 * MS);
	pmodel_result_free(r);
	/* the selector may carry the type, as Pyroscope writes it */
	r = query(s, "process_cpu:cpu:nanoseconds:cpu:nanoseconds{service=\"a\"}", NULL, 0, 0);
	CHECK(r && total_of(r) == 450 * MS);
	pmodel_result_free(r);
	/* no type at all */
	sel.type = NULL;
	CHECK_INT(pstore_query(s, &sel, NULL, &r, why, sizeof(why)), ==, -PSTORE_ERR_TYPE);
	pstore_free(s);
	remove_dir();
	return 0;
}

/* ---- discovery, series, coverage ------------------------------------------------ */

static int test_pstore__discovery_labels_values_types(void)
{
	struct pstore *s = fresh_store();
	struct pstore_strlist *l = NULL;
	struct pstore_selection all = { 0 }, sel = { .selector = "{service=\"b\"}" };
	struct pstore_selection early = { .from_ns = T0, .to_ns = T0 + 5 * SEC };

	CHECK(s);
	CHECK_INT(append(s, mkprof(S3, C3, 3, T0), "a", "1"), ==, 0);
	CHECK_INT(pstore_flush(s), ==, 0);
	CHECK_INT(append(s, mkprof(S3, C3, 3, T0 + 10 * SEC), "b", "2"), ==, 0);
	CHECK_INT(pstore_label_names(s, &all, &l, NULL, 0), ==, 0);
	CHECK_INT(l->n, ==, 3);
	CHECK_STR(l->v[0], "__name__");
	CHECK_STR(l->v[1], "service");
	CHECK_STR(l->v[2], "version");
	pstore_strlist_free(l);
	CHECK_INT(pstore_label_values(s, "service", &all, &l, NULL, 0), ==, 0);
	CHECK_INT(l->n, ==, 2);
	CHECK_STR(l->v[0], "a");
	CHECK_STR(l->v[1], "b");
	pstore_strlist_free(l);
	CHECK_INT(pstore_label_values(s, "version", &sel, &l, NULL, 0), ==, 0);
	CHECK_INT(l->n, ==, 1);
	CHECK_STR(l->v[0], "2");
	pstore_strlist_free(l);
	CHECK_INT(pstore_label_values(s, "service", &early, &l, NULL, 0), ==, 0);
	CHECK_INT(l->n, ==, 1);
	CHECK_STR(l->v[0], "a");
	pstore_strlist_free(l);
	sel.selector = "{service=";
	CHECK_INT(pstore_label_names(s, &sel, &l, NULL, 0), ==, -PSTORE_ERR_SELECTOR);
	pstore_free(s);
	remove_dir();
	return 0;
}

static int test_pstore__series_totals_at_a_step(void)
{
	struct pstore *s = fresh_store();
	struct pstore_series_set *set = NULL;
	struct pstore_selection sel = { .type = "samples", .from_ns = T0,
					.to_ns = T0 + 60 * SEC };
	const char *by[1] = { "service" };

	CHECK(s);
	for (int i = 0; i < 6; i++)
		CHECK_INT(append(s, mkprof(S3, C3, 3, T0 + i * 10 * SEC), i % 2 ? "b" : "a", "1"),
			  ==, 0);
	CHECK_INT(pstore_flush(s), ==, 0);
	CHECK_INT(append(s, mkprof(S3, C3, 1, T0 + 55 * SEC), "a", "1"), ==, 0);
	CHECK_INT(pstore_series_totals(s, &sel, 20 * SEC, NULL, 0, &set, NULL, 0), ==, 0);
	CHECK_INT(set->n_points, ==, 3);
	CHECK_INT(set->n_lines, ==, 1);
	CHECK_INT(set->lines[0].values[0], ==, 90);
	CHECK_INT(set->lines[0].values[1], ==, 90);
	CHECK_INT(set->lines[0].values[2], ==, 120);
	pstore_series_set_free(set);
	CHECK_INT(pstore_series_totals(s, &sel, 20 * SEC, by, 1, &set, NULL, 0), ==, 0);
	CHECK_INT(set->n_lines, ==, 2);
	for (size_t i = 0; i < 2; i++) {
		bool a = strcmp(set->lines[i].labels[0].value, "a") == 0;

		CHECK_STR(set->lines[i].labels[0].name, "service");
		CHECK_INT(set->lines[i].values[2], ==, a ? 75 : 45);
	}
	pstore_series_set_free(set);
	sel.to_ns = 0;
	CHECK_INT(pstore_series_totals(s, &sel, 20 * SEC, NULL, 0, &set, NULL, 0), ==, -EINVAL);
	pstore_free(s);
	remove_dir();
	return 0;
}

static const char *const SRAW[] = { "main;work;hot", "main;0x7f0000000100;0x7f0000000200",
				     "main;work;0x7f0000000100" };
static const int64_t CRAW[] = { 50, 30, 20 };

static int resolve_beef(void *ctx, const struct pstore_mapping *m, const uint64_t *addrs,
			size_t n, struct pstore_resolution *r)
{
	int *calls = ctx;

	(*calls)++;
	if (strcmp(m->build_id, "beef") != 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char name[32];
		struct pstore_frame f = { name, NULL, "x.c", 7, 0 };

		if (addrs[i] == 0x7f0000000200) {
			EMBER_FORWARD_IF_ERROR(pstore_resolution_fail(r, i, "no_debuginfo"));
			continue;
		}
		snprintf(name, sizeof(name), "x_%llx", (unsigned long long)(addrs[i] & 0xfff));
		EMBER_FORWARD_IF_ERROR(pstore_resolution_set(r, i, &f, 1));
	}
	return 0;
}

static int test_pstore__coverage_and_query_resolver(void)
{
	struct pstore *s = fresh_store();
	struct pprof_profile *p = mkprof(SRAW, CRAW, 3, T0);
	struct pstore_unresolved un = { "beef", "no_debuginfo" };
	struct pstore_append_opts o = { .sz = sizeof(o), .unresolved = &un, .n_unresolved = 1 };
	struct pstore_selection sel = { .type = "cpu" };
	int calls = 0;
	struct pstore_query_opts qo = { .sz = sizeof(qo), .resolver = resolve_beef,
					.resolver_ctx = &calls };
	struct pstore_coverage *c = NULL;
	struct pmodel_result *r = NULL;
	struct ember_buf b;

	CHECK(s && p);
	CHECK_INT(pstore_append(s, p, &o, NULL, 0), ==, 0);
	CHECK_INT(pstore_coverage(s, NULL, &c, NULL, 0), ==, 0);
	CHECK_INT(c->profiles, ==, 1);
	CHECK_INT(c->samples, ==, 100);
	CHECK_INT(c->resolved_samples, ==, 50);
	CHECK_INT(c->n_rows, ==, 1);
	CHECK_STR(c->rows[0].build_id, "beef");
	CHECK_STR(c->rows[0].reason, "no_debuginfo");
	CHECK_INT(c->rows[0].samples, ==, 50);
	pstore_coverage_free(c);
	/* unresolved frames are named by file and offset */
	CHECK(!check_folded(s, NULL,
			    "main;libx.so+0x1100;libx.so+0x1200 300000000\n"
			    "main;work;hot 500000000\nmain;work;libx.so+0x1100 200000000\n"));
	/* a query's resolver names them, one call per mapping */
	CHECK_INT(pstore_query(s, &sel, &qo, &r, NULL, 0), ==, 0);
	CHECK_INT(calls, ==, 1);
	CHECK_INT(folded(r, &b), ==, 0);
	CHECK_STR(b.data, "main;work;hot 500000000\nmain;work;x_100 200000000\n"
			  "main;x_100;libx.so+0x1200 300000000\n");
	ember_buf_release(&b);
	pmodel_result_free(r);
	pprof_profile_free(p);
	pstore_free(s);
	remove_dir();
	return 0;
}

/* A compaction's resolver updates the block and its coverage. */
static int test_pstore__compaction_resolver_updates_block(void)
{
	struct pstore_opts opts = test_opts();
	struct pstore *s;
	int calls = 0;
	struct pstore_coverage *c = NULL;

	opts.resolver = resolve_beef;
	opts.resolver_ctx = &calls;
	CHECK(!make_dir());
	fake_now = T0;
	s = open_store(&opts);
	CHECK(s);
	CHECK_INT(append(s, mkprof(SRAW, CRAW, 3, T0), "a", "1"), ==, 0);
	CHECK_INT(pstore_flush(s), ==, 0);
	CHECK_INT(append(s, mkprof(SRAW, CRAW, 3, T0 + 10 * SEC), "a", "1"), ==, 0);
	CHECK_INT(pstore_flush(s), ==, 0);
	CHECK_INT(calls, ==, 0);
	fake_now = T0 + 3 * HOUR;
	CHECK_INT(pstore_compact(s), ==, 0);
	CHECK_INT(calls, ==, 1);
	CHECK(!check_folded(s, NULL, "main;work;hot 1000000000\nmain;work;x_100 400000000\n"
				     "main;x_100;libx.so+0x1200 600000000\n"));
	CHECK_INT(pstore_coverage(s, NULL, &c, NULL, 0), ==, 0);
	CHECK_INT(c->samples, ==, 200);
	CHECK_INT(c->resolved_samples, ==, 140);
	CHECK_INT(c->n_rows, ==, 1);
	CHECK_STR(c->rows[0].reason, "no_debuginfo");
	CHECK_INT(c->rows[0].samples, ==, 60);
	pstore_coverage_free(c);
	pstore_free(s);
	remove_dir();
	return 0;
}

/* The resolver of test_pstore__symbols_arrived_rewrite_blocks: no debug
 * info until *ready. */
struct late {
	bool ready;
	int calls;
};

static int resolve_late(void *ctx, const struct pstore_mapping *m, const uint64_t *addrs,
			size_t n, struct pstore_resolution *r)
{
	struct late *l = ctx;

	l->calls++;
	if (l->ready)
		return resolve_beef(&(int){ 0 }, m, addrs, n, r);
	for (size_t i = 0; i < n; i++)
		EMBER_FORWARD_IF_ERROR(pstore_resolution_fail(r, i, "no_debuginfo"));
	return 0;
}

/* Debug info that arrives after the profile: the block that holds its
 * frames is rewritten with them (one partition, one block: no merge
 * would have), and a block with nothing more to resolve is left alone. */
static int test_pstore__symbols_arrived_rewrite_blocks(void)
{
	struct pstore_opts opts = test_opts();
	struct pstore_unresolved un = { "beef", "no_debuginfo" };
	struct pstore_append_opts o = { .sz = sizeof(o), .unresolved = &un, .n_unresolved = 1 };
	struct pstore_coverage *c = NULL;
	struct late late = { 0 };
	struct pprof_profile *p;
	struct pstore_stats st;
	struct pstore *s;

	opts.resolver = resolve_late;
	opts.resolver_ctx = &late;
	CHECK(!make_dir());
	fake_now = T0;
	s = open_store(&opts);
	CHECK(s);
	p = mkprof(SRAW, CRAW, 3, T0);
	CHECK(p);
	CHECK_INT(pstore_append(s, p, &o, NULL, 0), ==, 0);
	pprof_profile_free(p);
	CHECK_INT(pstore_flush(s), ==, 0);
	CHECK_INT(pstore_compact(s), ==, 0);
	CHECK_INT(late.calls, ==, 0); /* nothing arrived: not asked */
	late.ready = true;
	CHECK_INT(pstore_symbols_arrived(s, "BEEF"), ==, 0);
	CHECK_INT(pstore_compact(s), ==, 0);
	CHECK_INT(late.calls, ==, 1);
	pstore_stats(s, &st);
	CHECK_INT(st.blocks, ==, 1);
	CHECK_INT(st.merges, ==, 1);
	/* the block itself now names them: no query resolver here */
	CHECK(!check_folded(s, NULL, "main;work;hot 500000000\nmain;work;x_100 200000000\n"
				     "main;x_100;libx.so+0x1200 300000000\n"));
	CHECK_INT(pstore_coverage(s, NULL, &c, NULL, 0), ==, 0);
	CHECK_INT(c->resolved_samples, ==, 70);
	CHECK_INT(c->n_rows, ==, 1);
	CHECK_INT(c->rows[0].samples, ==, 30);
	pstore_coverage_free(c);
	/* asked again (0x200 is still unresolved), nothing new: not rewritten */
	CHECK_INT(pstore_compact(s), ==, 0);
	CHECK_INT(late.calls, ==, 2);
	pstore_stats(s, &st);
	CHECK_INT(st.merges, ==, 1);
	/* an arrival is forgotten after three head ages */
	fake_now += 4 * 60 * SEC;
	CHECK_INT(pstore_compact(s), ==, 0);
	CHECK_INT(late.calls, ==, 2);
	CHECK_INT(pstore_symbols_arrived(s, ""), ==, -EINVAL);
	pstore_free(s);
	remove_dir();
	return 0;
}

/* ---- retention, compaction, recovery ---------------------------------------------- */

static int test_pstore__retention_drops_whole_blocks(void)
{
	struct pstore_opts opts = test_opts();
	struct pstore *s;
	struct pstore_stats st;
	struct pmodel_result *r;

	opts.retention_ns = 2 * HOUR;
	CHECK(!make_dir());
	fake_now = T0;
	s = open_store(&opts);
	CHECK(s);
	CHECK_INT(append(s, mkprof(S3, C3, 3, T0 - 5 * HOUR), "a", "1"), ==, 0);
	CHECK_INT(append(s, mkprof(S3, C3, 3, T0 - 10 * SEC), "a", "1"), ==, 0);
	CHECK_INT(pstore_flush(s), ==, 0);
	pstore_stats(s, &st);
	CHECK_INT(st.blocks, ==, 2);
	r = query(s, NULL, "samples", 0, 0);
	CHECK(r && total_of(r) == 90);
	pmodel_result_free(r);
	CHECK_INT(pstore_compact(s), ==, 0);
	pstore_stats(s, &st);
	CHECK_INT(st.blocks, ==, 1);
	CHECK_INT(st.retention_drops, ==, 1);
	r = query(s, NULL, "samples", 0, 0);
	CHECK(r && total_of(r) == 45);
	pmodel_result_free(r);
	pstore_free(s);
	remove_dir();
	return 0;
}

/* Choosing the blocks to merge sorts the list once (issue 23: a count
 * of the whole list per block, 0.2 s of CPU every pass at 7,000 blocks,
 * under the store's mutex): 20,000 blocks, one partition each but for
 * two closed ones and four small ones of an open one, picked in well
 * under the quadratic choice's seconds. */
static int test_pstore__merge_pick_not_quadratic_in_blocks(void)
{
	enum { N = 20000 };
	struct pstore_block **v = calloc(N, sizeof(*v));
	struct pstore_u32s out = { 0 };
	int64_t t0 = (int64_t)ember_monotonic_ns();

	CHECK(v);
	for (size_t i = 0; i < N; i++) {
		CHECK((v[i] = calloc(1, sizeof(**v))));
		v[i]->meta.partition = (int64_t)i * HOUR; /* all closed at T0 but the last ones */
		v[i]->meta.partition_ns = HOUR;
		v[i]->size = 1000;
	}
	v[N - 1]->meta.partition = v[N - 7]->meta.partition = 7 * HOUR; /* closed: three */
	for (size_t i = N - 6; i < N - 2; i++)
		v[i]->meta.partition = T0; /* open: four of one tier */
	CHECK_INT(pstore_merge_pick(v, N, T0, 60 * SEC, &out), ==, 0);
	CHECK_INT(out.n, ==, 3);
	CHECK_INT(out.v[0], ==, 7);
	CHECK_INT(out.v[1], ==, N - 7);
	CHECK_INT(out.v[2], ==, N - 1);
	v[N - 7]->meta.partition = (N + 1) * HOUR; /* then the open partition's four */
	v[N - 1]->meta.partition = (N + 2) * HOUR;
	CHECK_INT(pstore_merge_pick(v, N, T0, 60 * SEC, &out), ==, 0);
	CHECK_INT(out.n, ==, 4);
	CHECK_INT(out.v[0], ==, N - 6);
	v[N - 3]->size = (uint64_t)1 << 30; /* three of a tier: nothing due */
	CHECK_INT(pstore_merge_pick(v, N, T0, 60 * SEC, &out), ==, 0);
	CHECK_INT(out.n, ==, 0);
	CHECK((int64_t)ember_monotonic_ns() - t0 < 2 * SEC);
	for (size_t i = 0; i < N; i++)
		free(v[i]);
	free(v);
	EMBER_VEC_FREE(&out);
	return 0;
}

/* The series limit counts series with recent data (issue 23: one push
 * of many label sets held --max-series for good): filled by one batch,
 * a new series refused; an hour and more later, once the batch's block
 * is past the series window, a new series taken, and the stats say so.
 * The log's replay after a restart keeps admitting what it logged. */
static int test_pstore__series_limit_freed_when_data_gets_old(void)
{
	struct pstore_opts opts = test_opts();
	struct pstore *s;
	struct pstore_stats st;

	opts.limits = (struct pstore_limits){ .sz = sizeof(opts.limits), .max_series = 3 };
	CHECK(!make_dir());
	fake_now = T0;
	s = open_store(&opts);
	CHECK(s);
	for (int i = 0; i < 3; i++)
		CHECK_INT(append(s, mkprof(S3, C3, 3, T0 - 10 * SEC), i == 0 ? "a" : i == 1 ? "b" : "c",
				 "1"), ==, 0);
	CHECK_INT(append(s, mkprof(S3, C3, 3, T0 - 5 * SEC), "d", "1"), ==, -PSTORE_ERR_SERIES_LIMIT);
	CHECK_INT(pstore_flush(s), ==, 0);
	CHECK_INT(pstore_compact(s), ==, 0);
	CHECK_INT(append(s, mkprof(S3, C3, 3, T0 - 5 * SEC), "d", "1"), ==, -PSTORE_ERR_SERIES_LIMIT);
	fake_now = T0 + 2 * HOUR; /* the batch's block is past the hour */
	CHECK_INT(pstore_compact(s), ==, 0);
	pstore_stats(s, &st);
	CHECK_INT(st.series, ==, 0);
	CHECK_INT(append(s, mkprof(S3, C3, 3, fake_now - SEC), "d", "1"), ==, 0);
	CHECK_INT(append(s, mkprof(S3, C3, 3, fake_now - SEC), "a", "1"), ==, 0);
	pstore_stats(s, &st);
	CHECK_INT(st.series, ==, 2);
	CHECK_INT(st.profiles, ==, 5); /* the old data is still there */
	pstore_free(s);
	s = open_store(&opts); /* replayed: the head's series counted, the block's not */
	CHECK(s);
	pstore_stats(s, &st);
	CHECK_INT(st.series, ==, 2);
	pstore_free(s);
	remove_dir();
	return 0;
}

/* A profile of n + 1 label sets: one sample without labels and n with
 * handler=PREFIX0..; its caller labels l (n_labels of them).  The append's
 * answer. */
static int append_handlers(struct pstore *s, int n, const char *prefix,
			   const struct pstore_label *l, size_t n_labels, char *why)
{
	struct pprof_profile *p = mkprof(S3, C3, 1, T0);
	struct pstore_append_opts o = { .sz = sizeof(o), .labels = l, .n_labels = n_labels };
	int64_t v[2] = { 1, MS };
	char name[32];
	int err = p ? 0 : -ENOMEM;

	for (int i = 0; !err && i < n; i++) {
		struct pprof_sample_label sl = { .key = "handler", .str = name };
		uint64_t loc = pprof_message(p)->sample[0]->location_id[0];

		snprintf(name, sizeof(name), "%s%d", prefix, i);
		err = pprof_add_sample_labeled(p, &loc, 1, v, 2, &sl, 1);
	}
	if (!err)
		err = pstore_append(s, p, &o, why, 256);
	pprof_profile_free(p);
	return err;
}

/* A profile refused by the series limit holds no slot (issue 23: the
 * label sets of a refused profile admitted before the refusal kept
 * counting): 7 of 10 slots taken, a profile whose 4 label sets are one
 * series (the caller's label wins) takes 1, one of 6 new series is
 * refused whole, then one of 2 takes the 2 slots left; the count the
 * same after a flush and after the log's replay. */
static int test_pstore__series_limit_refused_profile_holds_no_slot(void)
{
	struct pstore_opts opts = test_opts();
	struct pstore_label x = { "service", "x" }, yz[2] = { { "service", "y" },
							   { "handler", "z" } };
	struct pstore *s;
	struct pstore_stats st;
	char why[256] = "";
	static const char *const svc[] = { "s0", "s1", "s2", "s3", "s4", "s5", "s6" };

	opts.limits = (struct pstore_limits){ .sz = sizeof(opts.limits), .max_series = 10 };
	CHECK(!make_dir());
	fake_now = T0;
	s = open_store(&opts);
	CHECK(s);
	for (int i = 0; i < 7; i++)
		CHECK_INT(append(s, mkprof(S3, C3, 3, T0), svc[i], "1"), ==, 0);
	CHECK_INT(append_handlers(s, 3, "h", yz, 2, why), ==, 0);
	pstore_stats(s, &st);
	CHECK_INT(st.series, ==, 8);
	CHECK_INT(append_handlers(s, 5, "h", &x, 1, why), ==, -PSTORE_ERR_SERIES_LIMIT);
	pstore_stats(s, &st);
	CHECK_INT(st.series, ==, 8);
	CHECK_INT(st.profiles, ==, 11);
	CHECK(strstr(why, "the store holds 8 series, its limit 10: no room for the profile's 6 new "
			  "series"));
	CHECK_INT(append_handlers(s, 1, "h", &x, 1, why), ==, 0);
	CHECK_INT(append_handlers(s, 1, "k", &x, 1, why), ==, -PSTORE_ERR_SERIES_LIMIT);
	pstore_stats(s, &st);
	CHECK_INT(st.series, ==, 10);
	pstore_free(s);
	s = open_store(&opts); /* the refused profiles were never logged */
	CHECK(s);
	pstore_stats(s, &st);
	CHECK_INT(st.series, ==, 10);
	CHECK_INT(st.profiles, ==, 13);
	CHECK_INT(pstore_flush(s), ==, 0);
	CHECK_INT(pstore_compact(s), ==, 0);
	pstore_stats(s, &st);
	CHECK_INT(st.series, ==, 10);
	pstore_free(s);
	remove_dir();
	return 0;
}

static int count_files(const char *sub, const char *suffix);

/* Four profiles of the current hour, each flushed into a block and
 * compacted: one block, merged (the stats in *st). */
static int four_small_blocks_merged(struct pstore *s, struct pstore_stats *st)
{
	for (int i = 0; i < 4; i++) {
		CHECK_INT(append(s, mkprof(S3, C3, 3, T0 + i * SEC), "a", "1"), ==, 0);
		CHECK_INT(pstore_flush(s), ==, 0);
		CHECK_INT(pstore_compact(s), ==, 0);
	}
	pstore_stats(s, st);
	CHECK_INT(st->blocks, ==, 1);
	return 0;
}

/* In the current hour, four small blocks are merged without waiting. */
static int test_pstore__open_partition_merges_four(void)
{
	struct pstore *s = fresh_store();
	struct pstore_stats st;
	struct pmodel_result *r;

	CHECK(s);
	CHECK(!four_small_blocks_merged(s, &st));
	CHECK_INT(st.merges, ==, 1);
	r = query(s, NULL, "samples", 0, 0);
	CHECK(r && total_of(r) == 4 * 45);
	pmodel_result_free(r);
	pstore_free(s);
	remove_dir();
	return 0;
}

static int count_files(const char *sub, const char *suffix)
{
	char path[400];
	DIR *d;
	struct dirent *e;
	int n = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, sub);
	d = opendir(path);
	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.' && strstr(e->d_name, suffix) &&
		     strcmp(e->d_name + strlen(e->d_name) - strlen(suffix), suffix) == 0;
	closedir(d);
	return n;
}

static int first_file(const char *sub, const char *suffix, char *out, size_t size)
{
	char path[300];
	DIR *d;
	struct dirent *e;
	int found = -1;

	snprintf(path, sizeof(path), "%s/%s", dir, sub);
	d = opendir(path);
	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.' && strstr(e->d_name, suffix) && found)
			found = snprintf(out, size, "%s/%s/%s", dir, sub, e->d_name) < (int)size ? 0 : -1;
	if (d)
		closedir(d);
	return found;
}

static int copy_file(const char *from, const char *to)
{
	char cmd[2048];

	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", from, to);
	return system(cmd);
}

/* A crash after a merge wrote its block but before it deleted the old
 * ones: the next open deletes them, nothing counts twice. */
static int test_pstore__merge_parents_deleted_after_crash(void)
{
	struct pstore *s = fresh_store();
	struct pstore_stats st;
	char old[512], saved[600];
	struct pmodel_result *r;

	CHECK(s);
	CHECK_INT(append(s, mkprof(S3, C3, 3, T0), "a", "1"), ==, 0);
	CHECK_INT(pstore_flush(s), ==, 0);
	CHECK(!first_file("blocks", ".pblk", old, sizeof(old)));
	snprintf(saved, sizeof(saved), "%s.saved", old);
	CHECK(!copy_file(old, saved));
	CHECK_INT(append(s, mkprof(S3, C3, 3, T0 + 10 * SEC), "a", "1"), ==, 0);
	CHECK_INT(pstore_flush(s), ==, 0);
	CHECK_INT(count_files("blocks", ".pblk"), ==, 2);
	fake_now = T0 + 3 * HOUR;
	CHECK_INT(pstore_compact(s), ==, 0);
	CHECK_INT(count_files("blocks", ".pblk"), ==, 1);
	pstore_free(s);
	CHECK(rename(saved, old) == 0); /* as if the delete never happened */
	CHECK_INT(count_files("blocks", ".pblk"), ==, 2);
	s = open_store(NULL);
	CHECK(s);
	pstore_stats(s, &st);
	CHECK_INT(st.blocks, ==, 1);
	CHECK_INT(count_files("blocks", ".pblk"), ==, 1);
	r = query(s, NULL, "samples", 0, 0);
	CHECK(r && total_of(r) == 90);
	pmodel_result_free(r);
	pstore_free(s);
	remove_dir();
	return 0;
}

static int test_pstore__log_replayed_at_open(void)
{
	struct pstore *s = fresh_store();
	struct pstore_stats st;

	CHECK(s);
	for (int i = 0; i < 2; i++)
		CHECK_INT(append(s, mkprof(S3, C3, 3, T0 + i * SEC), "a", "1"), ==, 0);
	{	/* one logged as its body (gzip), as received */
		struct pprof_profile *p = mkprof(S3, C3, 3, T0 + 2 * SEC);
		struct ember_buf gz;
		struct pstore_append_opts o = { .sz = sizeof(o) };

		ember_buf_init(&gz, 1 << 20);
		CHECK(p && !pprof_encode(p, true, &gz));
		o.body = gz.data;
		o.body_len = gz.len;
		CHECK_INT(pstore_append(s, p, &o, NULL, 0), ==, 0);
		ember_buf_release(&gz);
		pprof_profile_free(p);
	}
	pstore_free(s); /* no flush: only the log has them */
	CHECK_INT(count_files("wal", ".wal"), ==, 1);
	s = open_store(NULL);
	CHECK(s);
	pstore_stats(s, &st);
	CHECK_INT(st.head_profiles, ==, 3);
	CHECK_INT(st.blocks, ==, 0);
	CHECK(!check_folded(s, NULL, "main;idle 150000000\nmain;work;cold 300000000\n"
				     "main;work;hot 900000000\n"));
	CHECK_INT(pstore_flush(s), ==, 0);
	CHECK_INT(count_files("wal", ".wal"), ==, 0); /* the new segment has no file before its first append */
	pstore_stats(s, &st);
	CHECK_INT(st.blocks, ==, 1);
	CHECK_INT(st.profiles, ==, 3);
	pstore_free(s);
	remove_dir();
	return 0;
}

/* A crash after a head was written as blocks but before its segment was
 * deleted: the blocks say which segment they hold, nothing counts twice. */
static int test_pstore__replay_skips_what_blocks_hold(void)
{
	struct pstore *s = fresh_store();
	char seg[512], saved[600];
	struct pmodel_result *r;

	CHECK(s);
	CHECK_INT(append(s, mkprof(S3, C3, 3, T0), "a", "1"), ==, 0);
	CHECK_INT(append(s, mkprof(S3, C3, 3, T0 + 2 * HOUR), "a", "1"), ==, 0);
	CHECK(!first_file("wal", ".wal", seg, sizeof(seg)));
	snprintf(saved, sizeof(saved), "%s.saved", seg);
	CHECK(!copy_file(seg, saved));
	CHECK_INT(pstore_flush(s), ==, 0);
	pstore_free(s);
	CHECK(rename(saved, seg) == 0);
	s = open_store(NULL);
	CHECK(s);
	r = query(s, NULL, "samples", 0, 0);
	CHECK(r && total_of(r) == 90);
	pmodel_result_free(r);
	pstore_free(s);
	remove_dir();
	return 0;
}

/* Copy the store's (first) log segment aside, to put it back later as if
 * its deletion never happened. */
static int save_segment(char seg[512], char saved[600])
{
	if (first_file("wal", ".wal", seg, 512))
		return -1;
	snprintf(saved, 600, "%s.saved", seg);
	return copy_file(seg, saved);
}

/* Open the store with o, check every profile sums to want, close it. */
static int reopen_total_is(const struct pstore_opts *o, int64_t want)
{
	struct pstore *s = open_store(o);
	struct pmodel_result *r = s ? query(s, NULL, "samples", 0, 0) : NULL;
	int64_t got = r ? total_of(r) : -1;

	pmodel_result_free(r);
	pstore_free(s);
	CHECK_INT(got, ==, want);
	return 0;
}

/* The same crash, reopened with another partition length (the kill -9
 * case's children write 2 s partitions, its check opens with the default
 * hour): a block covers its log records by its own partition (start and
 * length, as its header says), not by the one the store now uses. */
static int replay_skips_across_partition_lengths(int64_t write_ns, int64_t open_ns)
{
	struct pstore_opts o = test_opts();
	struct pstore *s;
	char seg[512], saved[600];

	fake_now = T0;
	CHECK(!make_dir());
	o.partition_ns = write_ns;
	s = open_store(&o);
	CHECK(s);
	CHECK_INT(append(s, mkprof(S3, C3, 3, T0 + 3 * SEC), "a", "1"), ==, 0);
	CHECK_INT(append(s, mkprof(S3, C3, 3, T0 + 7 * SEC), "a", "1"), ==, 0);
	CHECK(!save_segment(seg, saved));
	CHECK_INT(pstore_flush(s), ==, 0);
	pstore_free(s);
	CHECK(rename(saved, seg) == 0); /* the block and the segment it came from */
	o.partition_ns = open_ns;
	CHECK(!reopen_total_is(&o, 90));
	/* and once more after the replayed head (if any) is a block too */
	s = open_store(&o);
	CHECK(s);
	CHECK_INT(pstore_flush(s), ==, 0);
	fake_now = T0 + 3 * HOUR;
	CHECK_INT(pstore_compact(s), ==, 0);
	pstore_free(s);
	CHECK(!reopen_total_is(&o, 90));
	remove_dir();
	return 0;
}

static int test_pstore__replay_skips_blocks_of_another_partition_length(void)
{
	CHECK(!replay_skips_across_partition_lengths(2 * SEC, HOUR));
	CHECK(!replay_skips_across_partition_lengths(HOUR, 2 * SEC));
	return 0;
}

/* Blocks of one partition start but other lengths (a 2 s block and an
 * hour's, both starting at the hour) are not merged: the merged block
 * would name one length, and its log ranges would cover what the other
 * span holds.  A crash leaving the hour block's segment still replays
 * nothing twice. */
static int test_pstore__merge_keeps_partition_lengths_apart(void)
{
	const int64_t h = T0 / HOUR * HOUR;
	struct pstore_opts o = test_opts();
	struct pstore *s;
	char seg[512], saved[600];

	fake_now = h;
	CHECK(!make_dir());
	o.partition_ns = 2 * SEC;
	s = open_store(&o);
	CHECK(s);
	CHECK_INT(append(s, mkprof(S3, C3, 3, h + SEC), "a", "1"), ==, 0);
	CHECK_INT(pstore_flush(s), ==, 0);
	pstore_free(s);
	o.partition_ns = HOUR;
	s = open_store(&o);
	CHECK(s);
	CHECK_INT(append(s, mkprof(S3, C3, 3, h + SEC), "a", "1"), ==, 0);
	CHECK_INT(append(s, mkprof(S3, C3, 3, h + 600 * SEC), "a", "1"), ==, 0);
	CHECK(!save_segment(seg, saved));
	CHECK_INT(pstore_flush(s), ==, 0);
	fake_now = h + 3 * HOUR;
	CHECK_INT(pstore_compact(s), ==, 0);
	CHECK_INT(count_files("blocks", ".pblk"), ==, 2);
	pstore_free(s);
	CHECK(rename(saved, seg) == 0);
	CHECK(!reopen_total_is(&o, 135));
	remove_dir();
	return 0;
}

static int test_pstore__torn_log_tail_dropped(void)
{
	struct pstore *s = fresh_store();
	struct pstore_stats st;
	char seg[512];
	struct stat sb;
	struct pmodel_result *r;
	int fd;

	CHECK(s);
	CHECK_INT(append(s, mkprof(S3, C3, 3, T0), "a", "1"), ==, 0);
	CHECK_INT(append(s, mkprof(S3, C3, 3, T0 + SEC), "a", "1"), ==, 0);
	pstore_free(s);
	CHECK(!first_file("wal", ".wal", seg, sizeof(seg)));
	CHECK(stat(seg, &sb) == 0);
	CHECK(truncate(seg, sb.st_size - 7) == 0); /* the last record torn */
	fd = open(seg, O_WRONLY | O_APPEND);
	CHECK(fd >= 0);
	CHECK(write(fd, "garbage!", 8) == 8);
	close(fd);
	s = open_store(NULL);
	CHECK(s);
	pstore_stats(s, &st);
	CHECK_INT(st.head_profiles, ==, 1);
	CHECK(st.wal_torn_bytes > 8);
	r = query(s, NULL, "samples", 0, 0);
	CHECK(r && total_of(r) == 45);
	pmodel_result_free(r);
	/* new appends go on, into a new segment */
	CHECK_INT(append(s, mkprof(S3, C3, 3, T0 + 2 * SEC), "a", "1"), ==, 0);
	pstore_free(s);
	s = open_store(NULL);
	CHECK(s);
	r = query(s, NULL, "samples", 0, 0);
	CHECK(r && total_of(r) == 90);
	pmodel_result_free(r);
	pstore_free(s);
	remove_dir();
	return 0;
}

/* A segment whose header is not one is moved aside, never deleted. */
static int test_pstore__bad_segment_set_aside(void)
{
	struct pstore *s = fresh_store();
	char seg[512];
	int fd;

	CHECK(s);
	CHECK_INT(append(s, mkprof(S3, C3, 3, T0), "a", "1"), ==, 0);
	pstore_free(s);
	CHECK(!first_file("wal", ".wal", seg, sizeof(seg)));
	fd = open(seg, O_WRONLY);
	CHECK(fd >= 0 && pwrite(fd, "XXXX", 4, 0) == 4);
	close(fd);
	s = open_store(NULL);
	CHECK(s);
	CHECK_INT(count_files("wal", ".corrupt"), ==, 1);
	pstore_free(s);
	remove_dir();
	return 0;
}

/* ---- kill -9 in the middle of writes ------------------------------------------------ */

#define KILL_SEQ_LABEL "seq"

static int64_t kill_count(int i)
{
	return 1 + i % 7;
}

/* Append profiles {seq=i} with known values until killed; report each
 * acknowledged one on fd. */
static void kill_child(int fd, int first)
{
	struct pstore_opts o = { .sz = sizeof(o), .head_max_age_ns = 150 * MS, .zstd_level = 1,
				 .partition_ns = 2 * SEC };
	struct pstore *s = NULL;

	if (pstore_open(dir, &o, &s, NULL, 0))
		_exit(3);
	for (int i = first;; i++) {
		char seq[16];
		struct pstore_label l = { KILL_SEQ_LABEL, seq };
		struct pstore_append_opts ao = { .sz = sizeof(ao), .labels = &l, .n_labels = 1 };
		int64_t c[3] = { kill_count(i), 2 * kill_count(i), 3 };
		struct pprof_profile *p = mkprof(S3, c, 3, 0);

		snprintf(seq, sizeof(seq), "%d", i);
		if (!p || pstore_append(s, p, &ao, NULL, 0))
			_exit(4);
		pprof_profile_free(p);
		if (write(fd, &i, sizeof(i)) != sizeof(i))
			_exit(5);
	}
}

/* Run a child from seq first, kill it after `after` acknowledgements and
 * a random delay; returns the last acknowledged seq, or -1. */
static int run_and_kill(int first, int after, unsigned delay_us)
{
	int fds[2], last = -1, got = 0, status;
	pid_t pid;

	if (pipe(fds))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(fds[0]);
		kill_child(fds[1], first);
	}
	close(fds[1]);
	while (got < after && read(fds[0], &last, sizeof(last)) == sizeof(last))
		got++;
	/* and until the child's compaction has written a block (at most 20 s),
	 * so the kill may land in a flush or a merge as well as in appends */
	for (int i = 0; i < 20000 && count_files("blocks", ".pblk") < 1; i++)
		if (read(fds[0], &last, sizeof(last)) == sizeof(last))
			got++;
	usleep(delay_us);
	kill(pid, SIGKILL);
	/* acknowledgements written before the kill still count */
	while (read(fds[0], &last, sizeof(last)) == sizeof(last))
		got++;
	close(fds[0]);
	waitpid(pid, &status, 0);
	return got >= after && WIFSIGNALED(status) ? last : -1;
}

static int check_seq(struct pstore *s, int i, bool must)
{
	char sel[64];
	struct pmodel_result *r;
	int64_t want = (kill_count(i) + 2 * kill_count(i) + 3);

	snprintf(sel, sizeof(sel), "{" KILL_SEQ_LABEL "=\"%d\"}", i);
	r = query(s, sel, "samples", 0, 0);
	if (!r)
		return -1;
	if (total_of(r) != want && (must || total_of(r) != 0)) {
		fprintf(stderr, "seq %d: total %lld, want %lld%s\n", i, (long long)total_of(r),
			(long long)want, must ? " (acknowledged)" : "");
		pmodel_result_free(r);
		return -1;
	}
	pmodel_result_free(r);
	return 0;
}

static int test_pstore__kill9_keeps_every_acknowledged_profile(void)
{
	struct pstore *s;
	int last1, last2;

	CHECK(!make_dir());
	srand((unsigned)time(NULL));
	last1 = run_and_kill(0, 150, (unsigned)(rand() % 50000));
	CHECK(last1 >= 149);
	/* the child compacted while it appended (the test is about a kill
	 * that may land in either) */
	CHECK(count_files("blocks", ".pblk") >= 1);
	/* a second run replays the first's log, compacts while appending,
	 * and is killed too */
	last2 = run_and_kill(last1 + 100, 150, (unsigned)(rand() % 50000));
	CHECK(last2 >= last1 + 249);
	s = open_store(NULL);
	CHECK(s);
	for (int i = 0; i <= last1 + 5; i++)
		CHECK(!check_seq(s, i, i <= last1));
	for (int i = last1 + 100; i <= last2 + 5; i++)
		CHECK(!check_seq(s, i, i <= last2));
	pstore_free(s);
	remove_dir();
	return 0;
}

/* ---- corrupt blocks ---------------------------------------------------------------- */

static int flip_byte(const char *path, long off)
{
	int fd = open(path, O_RDWR);
	uint8_t c;
	struct stat sb;

	if (fd < 0 || fstat(fd, &sb))
		return -1;
	if (off < 0)
		off += sb.st_size;
	if (pread(fd, &c, 1, off) != 1)
		return -1;
	c ^= 0x5a;
	if (pwrite(fd, &c, 1, off) != 1)
		return -1;
	return close(fd);
}

static int expect_corrupt_query(struct pstore *s)
{
	struct pstore_selection sel = { .type = "process_cpu:samples:count:cpu:nanoseconds" };
	struct pmodel_result *r = NULL;
	char why[256] = "";
	int err = pstore_query(s, &sel, NULL, &r, why, sizeof(why));

	if (err != -PSTORE_ERR_CORRUPT || !strstr(why, "corrupt")) {
		fprintf(stderr, "query: %d '%s', want corrupt\n", err, why);
		pmodel_result_free(r);
		return 1;
	}
	return 0;
}

static int test_pstore__corrupt_block_is_reported_not_empty(void)
{
	struct pstore *s = fresh_store();
	struct pstore_stats st;
	char blk[512];

	CHECK(s);
	CHECK_INT(append(s, mkprof(S3, C3, 3, T0), "a", "1"), ==, 0);
	CHECK_INT(pstore_flush(s), ==, 0);
	pstore_free(s);
	CHECK(!first_file("blocks", ".pblk", blk, sizeof(blk)));
	/* the rows, read only by queries: zstd's checksum catches it */
	CHECK(!flip_byte(blk, -20));
	s = open_store(NULL);
	CHECK(s);
	pstore_stats(s, &st);
	CHECK_INT(st.corrupt_blocks, ==, 0);
	CHECK(!expect_corrupt_query(s));
	pstore_free(s);
	/* the header: found at open */
	CHECK(!flip_byte(blk, 30));
	s = open_store(NULL);
	CHECK(s);
	pstore_stats(s, &st);
	CHECK_INT(st.corrupt_blocks, ==, 1);
	CHECK(!expect_corrupt_query(s));
	pstore_free(s);
	/* truncated */
	CHECK(!flip_byte(blk, 30));
	CHECK(truncate(blk, 100) == 0);
	s = open_store(NULL);
	CHECK(s);
	pstore_stats(s, &st);
	CHECK_INT(st.corrupt_blocks, ==, 1);
	CHECK(!expect_corrupt_query(s));
	pstore_free(s);
	remove_dir();
	return 0;
}

/* ---- block storage errors are errors -------------------------------------------------- */

/* The local directory, with gets that fail once fail_gets is set, and,
 * with squat set, puts that find the name already taken by other bytes
 * of the same length (a damaged file, another writer's object). */
struct flaky {
	struct pstore_blockio dir;
	bool fail_gets, squat;
	char squatted[PS_BLOCK_NAME_MAX];
};

static int flaky_put(void *ctx, const char *name, const void *data, size_t len)
{
	struct flaky *f = ctx;

	if (f->squat && len) {
		char *other = malloc(len);
		int err;

		if (!other)
			return -ENOMEM;
		memcpy(other, data, len);
		other[len - 1] ^= 0x5a;
		err = f->dir.put(f->dir.ctx, name, other, len);
		free(other);
		if (err)
			return err;
		snprintf(f->squatted, sizeof(f->squatted), "%s", name);
	}
	return f->dir.put(f->dir.ctx, name, data, len); /* 0: "already there" */
}

static int flaky_get(void *ctx, const char *name, uint64_t off, size_t len, struct ember_buf *out)
{
	struct flaky *f = ctx;

	return f->fail_gets ? -EIO : f->dir.get(f->dir.ctx, name, off, len, out);
}

static int flaky_list(void *ctx, const char *prefix,
		      int (*fn)(void *arg, const char *name, uint64_t size), void *arg)
{
	struct flaky *f = ctx;

	return f->dir.list(f->dir.ctx, prefix, fn, arg);
}

static int flaky_del(void *ctx, const char *name)
{
	struct flaky *f = ctx;

	return f->dir.del(f->dir.ctx, name);
}

static void flaky_release(void *ctx)
{
	struct flaky *f = ctx;

	f->dir.release(f->dir.ctx);
}

static struct pstore_blockio flaky_io(struct flaky *f)
{
	return (struct pstore_blockio){ .sz = sizeof(struct pstore_blockio), .ctx = f,
					.put = flaky_put, .get = flaky_get, .list = flaky_list,
					.del = flaky_del, .release = flaky_release };
}

static int test_pstore__storage_errors_are_not_empty_answers(void)
{
	struct flaky f = { 0 };
	struct pstore_blockio io = flaky_io(&f);
	struct pstore_opts o = test_opts();
	struct pstore_selection sel = { .type = "samples" };
	struct pmodel_result *r = NULL;
	struct pstore *s = NULL;
	char why[256];

	CHECK(!make_dir());
	fake_now = T0;
	o.blocks = &io;
	CHECK_INT(pstore_blockio_dir(dir, &f.dir), ==, 0);
	CHECK_INT(pstore_open(dir, &o, &s, NULL, 0), ==, 0);
	CHECK_INT(append(s, mkprof(S3, C3, 3, T0), "a", "1"), ==, 0);
	CHECK_INT(pstore_flush(s), ==, 0);
	pstore_free(s); /* releases io */
	/* a block the storage cannot read: the query fails, with the error */
	CHECK_INT(pstore_blockio_dir(dir, &f.dir), ==, 0);
	CHECK_INT(pstore_open(dir, &o, &s, NULL, 0), ==, 0);
	f.fail_gets = true;
	CHECK_INT(pstore_query(s, &sel, NULL, &r, why, sizeof(why)), ==, -EIO);
	CHECK(strstr(why, "cannot read"));
	pstore_free(s);
	/* and at open: the open fails, it does not start without the block */
	CHECK_INT(pstore_blockio_dir(dir, &f.dir), ==, 0);
	CHECK_INT(pstore_open(dir, &o, &s, why, sizeof(why)), ==, -EIO);
	CHECK(strstr(why, "cannot read"));
	remove_dir();
	return 0;
}

/* ---- block storage that is no filesystem --------------------------------------------- */

/* Objects in memory, as an object store holds them: flat names, whole
 * objects put once, ranges read.  The store above the interface must work
 * on it alone. */
#define MEMIO_MAX 64

struct memio {
	pthread_mutex_t mu;
	size_t n, puts, dels;
	struct memobj {
		char name[PS_BLOCK_NAME_MAX];
		char *data;
		size_t len;
	} o[MEMIO_MAX];
};

static ssize_t memio_find(const struct memio *m, const char *name)
{
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->o[i].name, name) == 0)
			return (ssize_t)i;
	return -1;
}

static int memio_put(void *ctx, const char *name, const void *data, size_t len)
{
	struct memio *m = ctx;
	int err = 0;

	pthread_mutex_lock(&m->mu);
	if (memio_find(m, name) < 0) { /* named by content: else already there */
		struct memobj *o = &m->o[m->n];

		err = m->n == MEMIO_MAX ? -ENOSPC : !(o->data = malloc(len ? len : 1)) ? -ENOMEM : 0;
		if (!err) {
			memcpy(o->data, data, len);
			o->len = len;
			snprintf(o->name, sizeof(o->name), "%s", name);
			m->n++;
			m->puts++;
		}
	}
	pthread_mutex_unlock(&m->mu);
	return err;
}

static int memio_get(void *ctx, const char *name, uint64_t off, size_t len, struct ember_buf *out)
{
	struct memio *m = ctx;
	ssize_t i;
	int err;

	pthread_mutex_lock(&m->mu);
	i = memio_find(m, name);
	err = i < 0 ? -ENOENT : 0;
	if (!err) {
		const struct memobj *o = &m->o[i];

		off = off > o->len ? o->len : off;
		len = !len || len > o->len - off ? o->len - (size_t)off : len;
		err = ember_buf_reserve(out, len);
		if (!err) {
			memcpy(out->data + out->len, o->data + off, len);
			out->len += len;
		}
	}
	pthread_mutex_unlock(&m->mu);
	return err;
}

static int memio_list(void *ctx, const char *prefix,
		      int (*fn)(void *arg, const char *name, uint64_t size), void *arg)
{
	struct memio *m = ctx;
	int err = 0;

	pthread_mutex_lock(&m->mu);
	for (size_t i = 0; !err && i < m->n; i++)
		if (strncmp(m->o[i].name, prefix, strlen(prefix)) == 0)
			err = fn(arg, m->o[i].name, m->o[i].len);
	pthread_mutex_unlock(&m->mu);
	return err;
}

static int memio_del(void *ctx, const char *name)
{
	struct memio *m = ctx;
	ssize_t i;

	pthread_mutex_lock(&m->mu);
	i = memio_find(m, name);
	if (i >= 0) {
		free(m->o[i].data);
		m->o[i] = m->o[--m->n];
		m->dels++;
	}
	pthread_mutex_unlock(&m->mu);
	return i < 0 ? -ENOENT : 0;
}

/* Blocks put, read, merged, listed at open and deleted by retention, all
 * in memory: no block file reaches the data directory (which holds the
 * log, local by design). */
static int test_pstore__blocks_in_storage_that_is_no_filesystem(void)
{
	static struct memio m = { .mu = PTHREAD_MUTEX_INITIALIZER };
	struct pstore_blockio io = { .sz = sizeof(io), .ctx = &m, .put = memio_put,
				     .get = memio_get, .list = memio_list, .del = memio_del };
	struct pstore_opts o = test_opts();
	struct pstore_stats st;
	struct pmodel_result *r;
	struct pstore *s = NULL;

	CHECK(!make_dir());
	fake_now = T0;
	o.blocks = &io;
	o.retention_ns = 2 * HOUR;
	CHECK_INT(pstore_open(dir, &o, &s, NULL, 0), ==, 0);
	CHECK_INT(append(s, mkprof(S3, C3, 3, T0 - 5 * HOUR), "a", "1"), ==, 0);
	CHECK(!four_small_blocks_merged(s, &st));
	CHECK(st.merges >= 1 && st.retention_drops == 1);
	CHECK(m.n == 1 && m.puts >= 5 && m.dels >= 4); /* the old hour and the merged parents */
	r = query(s, NULL, "samples", 0, 0);
	CHECK(r && total_of(r) == 4 * 45);
	pmodel_result_free(r);
	pstore_free(s);
	CHECK(count_files("blocks", ".pblk") <= 0);
	/* reopened: the blocks listed and read from memory alone */
	CHECK_INT(pstore_open(dir, &o, &s, NULL, 0), ==, 0);
	r = query(s, "{service=\"a\"}", "samples", 0, 0);
	CHECK(r && total_of(r) == 4 * 45);
	pmodel_result_free(r);
	pstore_free(s);
	while (m.n)
		CHECK_INT(memio_del(&m, m.o[0].name), ==, 0);
	remove_dir();
	return 0;
}

/* A block name that exists with other bytes is never taken as written:
 * the flush fails saying so, the profile stays in the log and the head,
 * queryable, and is there after a restart; the other object is left as
 * it was. */
static int test_pstore__block_name_taken_by_other_bytes_detected(void)
{
	struct flaky f = { 0 };
	struct pstore_blockio io = flaky_io(&f);
	struct pstore_opts o = test_opts();
	struct pstore_stats st;
	struct pstore *s = NULL;
	struct ember_buf held;

	CHECK(!make_dir());
	fake_now = T0;
	o.blocks = &io;
	CHECK_INT(pstore_blockio_dir(dir, &f.dir), ==, 0);
	CHECK_INT(pstore_open(dir, &o, &s, NULL, 0), ==, 0);
	CHECK_INT(append(s, mkprof(S3, C3, 3, T0), "a", "1"), ==, 0);
	f.squat = true;
	CHECK_INT(pstore_flush(s), ==, -PSTORE_ERR_CORRUPT);
	f.squat = false;
	CHECK(f.squatted[0]);
	CHECK_STR(f.squatted + strlen(f.squatted) - 5, ".pblk");
	CHECK_INT(strlen(f.squatted), ==, strlen("blocks/") + 16 + 1 + 64 + 5); /* sha256 */
	pstore_stats(s, &st);
	CHECK_INT(st.blocks, ==, 0);
	CHECK_INT(st.profiles, ==, 1);
	CHECK(!check_folded(s, "{service=\"a\"}", WANT3));
	pstore_free(s);
	/* the other object is still there, as it was (then an operator
	 * removes it: a store with it would fail the queries of its
	 * partition as corrupt, test_pstore__corrupt_block_is_reported_not_empty) */
	ember_buf_init(&held, 1 << 24);
	CHECK_INT(pstore_blockio_dir(dir, &f.dir), ==, 0);
	CHECK_INT(f.dir.get(f.dir.ctx, f.squatted, 0, 0, &held), ==, 0);
	CHECK(held.len > 0);
	CHECK_INT(f.dir.del(f.dir.ctx, f.squatted), ==, 0);
	f.dir.release(f.dir.ctx);
	/* after a restart the profile is still there, from the log */
	s = open_store(NULL);
	CHECK(s);
	CHECK(!check_folded(s, "{service=\"a\"}", WANT3));
	pstore_free(s);
	ember_buf_release(&held);
	remove_dir();
	return 0;
}

/* ---- block storage -------------------------------------------------------------------- */

static int on_list(void *arg, const char *name, uint64_t size)
{
	int *n = arg;

	if (strcmp(name, "blocks/x.pblk") == 0 && size == 5)
		(*n)++;
	return 0;
}

static int test_pstore__blockio_dir_semantics(void)
{
	struct pstore_blockio io;
	struct ember_buf b;
	int n = 0;

	CHECK(!make_dir());
	CHECK_INT(pstore_blockio_dir(dir, &io), ==, 0);
	ember_buf_init(&b, 1024);
	CHECK_INT(io.get(io.ctx, "blocks/x.pblk", 0, 0, &b), ==, -ENOENT);
	CHECK_INT(io.put(io.ctx, "blocks/x.pblk", "hello", 5), ==, 0);
	CHECK_INT(io.put(io.ctx, "blocks/x.pblk", "other", 5), ==, 0); /* named by content */
	CHECK_INT(io.get(io.ctx, "blocks/x.pblk", 1, 3, &b), ==, 0);
	CHECK_INT(b.len, ==, 3);
	CHECK(memcmp(b.data, "ell", 3) == 0);
	ember_buf_reset(&b);
	CHECK_INT(io.get(io.ctx, "blocks/x.pblk", 2, 0, &b), ==, 0);
	CHECK_STR(b.data, "llo");
	CHECK_INT(io.list(io.ctx, "blocks/", on_list, &n), ==, 0);
	CHECK_INT(n, ==, 1);
	CHECK_INT(io.put(io.ctx, "../escape", "x", 1), ==, -EINVAL);
	CHECK_INT(io.del(io.ctx, "blocks/x.pblk"), ==, 0);
	CHECK_INT(io.del(io.ctx, "blocks/x.pblk"), ==, -ENOENT);
	ember_buf_release(&b);
	io.release(io.ctx);
	remove_dir();
	return 0;
}

/* ---- outputs -------------------------------------------------------------------------- */

/* `go tool pprof -top` on the file: rows "flat flat% sum% cum cum% name". */
static int go_top(const char *args, struct ember_buf *out)
{
	char cmd[4096];

	snprintf(cmd, sizeof(cmd),
		 "HOME='%s' GOFLAGS= GOPROXY=off GOTOOLCHAIN=local go tool pprof -symbolize=none "
		 "-nodefraction=0 -nodecount=1000 -top %s 2>&1", dir, args);
	ember_buf_init(out, 1 << 20);
	return run_cmd(cmd, out);
}

/* flat% (cum: cum%) of function name in pprof's -top output, with the
 * sign of the value (pprof prints percentages of a diff unsigned), or
 * NAN. */
static double go_pct(const char *top, const char *name, bool cum)
{
	for (const char *line = top; line && *line;
	     line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		char flat[64], flatpct[64], sum[64], cumv[64], cumpct[64], fn[256];

		if (sscanf(line, "%63s %63s %63s %63s %63s %255s", flat, flatpct, sum, cumv, cumpct,
			   fn) == 6 && strcmp(fn, name) == 0 && strchr(flatpct, '%'))
			return cum ? (cumv[0] == '-' ? -1 : 1) * atof(cumpct)
				   : (flat[0] == '-' ? -1 : 1) * atof(flatpct);
	}
	return NAN;
}

static double go_flat_pct(const char *top, const char *name)
{
	return go_pct(top, name, false);
}

static int test_pstore__pprof_output_read_by_go_tool_pprof(void)
{
	struct pstore *s;
	struct pmodel_result *r;
	struct pmodel_top_row *rows;
	struct ember_buf b, out;
	char path[300], args[400];
	size_t n;
	int rc;

	if (!have("go")) {
		fprintf(stderr, "go not found (apt-get install golang-go)\n");
		return UNIT_SKIP;
	}
	s = fresh_store();
	CHECK(s);
	for (int i = 0; i < 3; i++)
		CHECK_INT(append(s, mkprof(SREC, CREC, 3, T0 + i * 10 * SEC), "a", "1"), ==, 0);
	CHECK_INT(pstore_flush(s), ==, 0);
	CHECK_INT(append(s, mkprof(SRAW, CRAW, 3, T0 + 40 * SEC), "a", "1"), ==, 0);
	r = query(s, NULL, "cpu", 0, 0);
	CHECK(r);
	ember_buf_init(&b, 64 << 20);
	CHECK_INT(pmodel_write_pprof(r, &b), ==, 0);
	CHECK((uint8_t)b.data[0] == 0x1f && (uint8_t)b.data[1] == 0x8b);
	snprintf(path, sizeof(path), "%s/merged.pb.gz", dir);
	CHECK(!write_file(path, b.data, b.len));
	snprintf(args, sizeof(args), "'%s'", path);
	rc = go_top(args, &out);
	if (rc)
		fprintf(stderr, "go tool pprof: %s\n", out.data);
	CHECK_INT(rc, ==, 0);
	CHECK(strstr(out.data, "Type: cpu"));
	/* pprof's flat% is our self% for every function we list */
	CHECK_INT(pmodel_result_top(r, 0, &rows, &n), ==, 0);
	for (size_t i = 0; i < n; i++) {
		double go = go_flat_pct(out.data, rows[i].name);

		if (strchr(rows[i].name, '+'))
			continue; /* pprof names unsymbolized frames by address */
		if (!(fabs(go - rows[i].self_pct) < 0.011)) {
			fprintf(stderr, "%s: go %.2f%%, ours %.4f%%\n%s", rows[i].name, go,
				rows[i].self_pct, out.data);
			CHECK(0);
		}
	}
	free(rows);
	ember_buf_release(&out);
	ember_buf_release(&b);
	pmodel_result_free(r);
	pstore_free(s);
	remove_dir();
	return 0;
}

/* ---- diffs ---------------------------------------------------------------------------- */

static int test_pstore__diff_pprof_matches_go_diff_base(void)
{
	struct pstore *s;
	struct pmodel_result *b, *n;
	struct pmodel_diff *d = NULL;
	struct pmodel_diff_row *rows;
	struct ember_buf buf, go1, go2;
	char pb[300], pn[300], pd[300], args[1000];
	size_t k;

	if (!have("go")) {
		fprintf(stderr, "go not found (apt-get install golang-go)\n");
		return UNIT_SKIP;
	}
	s = fresh_store();
	CHECK(s);
	CHECK_INT(append(s, mkprof(SB, CB, 5, T0), "a", "2.3"), ==, 0);
	CHECK_INT(append(s, mkprof(SN, CN, 5, T0), "a", "2.4"), ==, 0);
	b = query(s, "{version=\"2.3\"}", "cpu", 0, 0);
	n = query(s, "{version=\"2.4\"}", "cpu", 0, 0);
	CHECK(b && n);
	snprintf(pb, sizeof(pb), "%s/base.pb.gz", dir);
	snprintf(pn, sizeof(pn), "%s/new.pb.gz", dir);
	snprintf(pd, sizeof(pd), "%s/diff.pb.gz", dir);
	ember_buf_init(&buf, 64 << 20);
	CHECK_INT(pmodel_write_pprof(b, &buf), ==, 0);
	CHECK(!write_file(pb, buf.data, buf.len));
	ember_buf_reset(&buf);
	CHECK_INT(pmodel_write_pprof(n, &buf), ==, 0);
	CHECK(!write_file(pn, buf.data, buf.len));
	CHECK_INT(pmodel_diff_new(b, n, NULL, &d), ==, 0);
	ember_buf_reset(&buf);
	CHECK_INT(pmodel_write_diff_pprof(d, &buf), ==, 0);
	CHECK(!write_file(pd, buf.data, buf.len));
	snprintf(args, sizeof(args), "-normalize -diff_base '%s' '%s'", pb, pn);
	CHECK_INT(go_top(args, &go1), ==, 0);
	snprintf(args, sizeof(args), "'%s'", pd);
	CHECK_INT(go_top(args, &go2), ==, 0);
	CHECK_INT(pmodel_diff_table(d, &rows, &k), ==, 0);
	for (size_t i = 0; i < k; i++) {
		const struct pmodel_diff_row *r = &rows[i];
		double a = go_flat_pct(go1.data, r->name), c = go_flat_pct(go2.data, r->name);
		double ta = go_pct(go1.data, r->name, true), tc = go_pct(go2.data, r->name, true);

		if (!(fabs(a - r->delta_self_pct) < 0.011 && fabs(c - r->delta_self_pct) < 0.011 &&
		      fabs(ta - r->delta_total_pct) < 0.011 &&
		      fabs(tc - r->delta_total_pct) < 0.011)) {
			fprintf(stderr,
				"%s: go -diff_base %.2f%% %.2f%%, go on our diff %.2f%% %.2f%%, "
				"ours %.4f %.4f\n%s\n%s",
				r->name, a, ta, c, tc, r->delta_self_pct, r->delta_total_pct,
				go1.data, go2.data);
			CHECK(0);
		}
	}
	free(rows);
	ember_buf_release(&go1);
	ember_buf_release(&go2);
	ember_buf_release(&buf);
	pmodel_diff_free(d);
	pmodel_result_free(b);
	pmodel_result_free(n);
	pstore_free(s);
	remove_dir();
	return 0;
}

/* ---- warnings, concurrency ------------------------------------------------------------- */

static int test_pstore__unbounded_label_reported(void)
{
	struct pstore *s = fresh_store();
	struct pstore_strlist *w = NULL;
	struct pstore_stats st;

	CHECK(s);
	for (int i = 0; i < 300; i++) {
		char id[16];
		char pod[16];
		struct pstore_label l[2] = { { "request_id", id }, { "pod", pod } };
		struct pstore_append_opts o = { .sz = sizeof(o), .labels = l, .n_labels = 2 };
		struct pprof_profile *p = mkprof(S3, C3, 1, T0 + i);

		snprintf(id, sizeof(id), "r%d", i);
		snprintf(pod, sizeof(pod), "pod-%d", i % 200); /* 200 pods: not unbounded */
		CHECK(p);
		CHECK_INT(pstore_append(s, p, &o, NULL, 0), ==, 0);
		pprof_profile_free(p);
	}
	CHECK_INT(pstore_warnings(s, &w), ==, 0);
	CHECK_INT(w->n, ==, 1);
	CHECK(strstr(w->v[0], "request_id: 128 new values in the last 128 profiles"));
	pstore_strlist_free(w);
	pstore_stats(s, &st);
	CHECK_INT(st.unbounded_labels, ==, 1);
	CHECK_INT(st.series, ==, 300);
	pstore_free(s);
	remove_dir();
	return 0;
}

struct worker {
	struct pstore *s;
	int id, err;
};

static void *appender(void *arg)
{
	struct worker *w = arg;
	char svc[16];

	snprintf(svc, sizeof(svc), "svc%d", w->id);
	for (int i = 0; i < 40 && !w->err; i++)
		w->err = append(w->s, mkprof(S3, C3, 3, T0 + i * SEC), svc, "1");
	return NULL;
}

static void *reader(void *arg)
{
	struct worker *w = arg;

	for (int i = 0; i < 40 && !w->err; i++) {
		struct pmodel_result *r = query(w->s, "{service=~\"svc.*\"}", "cpu", 0, 0);

		w->err = r ? 0 : -1;
		pmodel_result_free(r);
		if (i % 10 == 0 && !w->err)
			w->err = pstore_flush(w->s);
	}
	return NULL;
}

/* Appends, queries and flushes from several threads (and the background
 * thread): nothing lost, nothing twice. */
static int test_pstore__concurrent_appends_queries_flushes(void)
{
	struct pstore_opts o = test_opts();
	struct worker w[4];
	pthread_t t[4];
	struct pstore *s;
	struct pmodel_result *r;

	o.no_background = false;
	o.head_max_age_ns = 50 * MS;
	CHECK(!make_dir());
	fake_now = T0;
	s = open_store(&o);
	CHECK(s);
	for (int i = 0; i < 4; i++) {
		w[i] = (struct worker){ s, i, 0 };
		CHECK(!pthread_create(&t[i], NULL, i == 3 ? reader : appender, &w[i]));
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		CHECK_INT(w[i].err, ==, 0);
	}
	r = query(s, NULL, "samples", 0, 0);
	CHECK(r && total_of(r) == 3 * 40 * 45);
	pmodel_result_free(r);
	pstore_free(s);
	s = open_store(NULL);
	r = query(s, NULL, "samples", 0, 0);
	CHECK(r && total_of(r) == 3 * 40 * 45);
	pmodel_result_free(r);
	pstore_free(s);
	remove_dir();
	return 0;
}


/* ---- shared block storage (pstore_opts.shared: replicas on one bucket) -------- */

/* A store in dir/NAME whose blocks are in dir/shared, read again from the
 * index after refresh_s seconds. */
static struct pstore *open_shared(const char *name, int refresh_s)
{
	struct pstore_opts o = test_opts();
	struct pstore_blockio io;
	struct pstore *s = NULL;
	char path[400], why[256];

	snprintf(path, sizeof(path), "%s/shared", dir);
	if (pstore_blockio_dir(path, &io))
		return NULL;
	o.blocks = &io;
	o.shared = true;
	o.refresh_ns = refresh_s * SEC;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (pstore_open(path, &o, &s, why, sizeof(why))) {
		fprintf(stderr, "pstore_open: %s\n", why);
		return NULL;
	}
	return s;
}

static int64_t samples_total(struct pstore *s)
{
	struct pmodel_result *r = query(s, NULL, "samples", 0, 0);
	int64_t t = r ? total_of(r) : -1;

	pmodel_result_free(r);
	return t;
}

static uint64_t blocks_of(struct pstore *s)
{
	struct pstore_stats st;

	pstore_stats(s, &st);
	return st.blocks;
}

/* Two stores on one block storage: what each flushed is in the other's
 * queries once its list is older than the refresh: at once for the recent
 * partitions, after 30 refresh intervals (a listing of the whole index)
 * for an older one. */
static int test_pstore__shared_stores_see_each_others_blocks(void)
{
	struct pstore *a, *b;

	fake_now = T0;
	CHECK(!make_dir());
	CHECK((a = open_shared("a", 2)) && (b = open_shared("b", 2)));
	CHECK_INT(append(a, mkprof(S3, C3, 3, T0 - 10 * SEC), "a", "1"), ==, 0);
	CHECK_INT(append(a, mkprof(S3, C3, 2, T0 - 5 * HOUR), "a", "1"), ==, 0);
	CHECK_INT(append(b, mkprof(S3, C3, 1, T0 - 5 * SEC), "b", "1"), ==, 0);
	CHECK_INT(samples_total(a), ==, 45 + 40); /* the other's head is its own */
	CHECK_INT(pstore_flush(a), ==, 0);
	CHECK_INT(pstore_flush(b), ==, 0);
	CHECK_INT(samples_total(b), ==, 45 + 30); /* b's flush read the recent partitions */
	CHECK_INT(samples_total(a), ==, 45 + 40); /* a's list is younger than 2 s */
	fake_now += 3 * SEC;
	CHECK_INT(samples_total(a), ==, 45 + 40 + 30);
	CHECK_INT(blocks_of(a), ==, 3);
	CHECK_INT(samples_total(b), ==, 45 + 30); /* the older partition: not listed yet */
	fake_now += 60 * SEC;
	CHECK_INT(samples_total(b), ==, 45 + 40 + 30);
	CHECK_INT(blocks_of(b), ==, 3);
	pstore_free(a);
	pstore_free(b);
	remove_dir();
	return 0;
}

/* Merge every block of s's list as one, as the compaction would. */
static int merge_all(struct pstore *s)
{
	struct pstore_blocks todo = { 0 };
	char why[256] = "";
	struct ember_diag d = ember_diag_make(why, sizeof(why));
	int err = 0;

	pthread_mutex_lock(&s->compact_mu);
	pthread_mutex_lock(&s->mu);
	for (size_t i = 0; !err && i < s->blocks.n; i++)
		if (!(err = EMBER_VEC_APPEND(&todo, s->blocks.v[i])))
			pstore_block_ref(s->blocks.v[i]);
	pthread_mutex_unlock(&s->mu);
	if (!err)
		err = pstore_merge_blocks(s, todo.v, todo.n, false, &d);
	pthread_mutex_unlock(&s->compact_mu);
	for (size_t i = 0; i < todo.n; i++)
		pstore_block_unref(todo.v[i]);
	EMBER_VEC_FREE(&todo);
	if (err)
		fprintf(stderr, "merge: %s\n", why);
	return err;
}

/* Two stores merge one partition at once on lists that differ: the
 * second's entry names a block the first's superseded, so it is skipped
 * by every reader; nothing counts twice, and the superseded blocks stay
 * in the storage for the grace (another replica may be reading them),
 * then go. */
static int test_pstore__shared_merge_race_counts_once(void)
{
	struct pstore *a, *b;

	fake_now = T0;
	CHECK(!make_dir());
	CHECK((a = open_shared("a", 1000)) && (b = open_shared("b", 1000)));
	/* the previous partition, closed (and listed by every refresh) */
	CHECK_INT(append(a, mkprof(S3, C3, 3, T0 - HOUR), "a", "1"), ==, 0);
	CHECK_INT(pstore_flush(a), ==, 0);
	CHECK_INT(append(b, mkprof(S3, C3, 2, T0 - HOUR + SEC), "b", "1"), ==, 0);
	CHECK_INT(pstore_flush(b), ==, 0); /* b's list: both blocks */
	CHECK_INT(append(a, mkprof(S3, C3, 1, T0 - HOUR + 2 * SEC), "a", "2"), ==, 0);
	CHECK_INT(pstore_flush(a), ==, 0); /* a's: all three */
	CHECK_INT(blocks_of(b), ==, 2);
	CHECK_INT(blocks_of(a), ==, 3);
	CHECK_INT(merge_all(b), ==, 0);
	CHECK_INT(blocks_of(b), ==, 2); /* its merge and a's third block */
	CHECK_INT(merge_all(a), ==, 0); /* two of its three are gone: skipped */
	CHECK_INT(blocks_of(a), ==, 2);
	CHECK_INT(samples_total(a), ==, 45 + 40 + 30);
	CHECK_INT(samples_total(b), ==, 45 + 40 + 30);
	CHECK_INT(pstore_compact(a), ==, 0); /* the closed partition's two: one */
	CHECK_INT(blocks_of(a), ==, 1);
	CHECK_INT(count_files("shared/blocks", ".pblk"), >=, 5); /* none deleted yet */
	fake_now += 599 * SEC;
	CHECK_INT(pstore_compact(b), ==, 0);
	CHECK_INT(count_files("shared/blocks", ".pblk"), >=, 5); /* before the grace */
	fake_now += 402 * SEC;
	CHECK_INT(samples_total(b), ==, 45 + 40 + 30);
	CHECK_INT(blocks_of(b), ==, 1);
	CHECK_INT(pstore_compact(b), ==, 0); /* deletes the two it superseded */
	CHECK_INT(pstore_compact(a), ==, 0); /* and a the two of its last merge */
	CHECK_INT(samples_total(a), ==, 45 + 40 + 30);
	CHECK_INT(samples_total(b), ==, 45 + 40 + 30);
	/* a's skipped merge (never live: its name may be live one day) and
	 * the last merge are left */
	CHECK_INT(count_files("shared/blocks", ".pblk"), ==, 2);
	pstore_free(a);
	pstore_free(b);
	remove_dir();
	return 0;
}

/* Two stores merge the same blocks from the same list: the same bytes,
 * one block, whatever each store's random hash key. */
static int test_pstore__shared_same_merge_same_name(void)
{
	struct pstore *a, *b;

	fake_now = T0;
	CHECK(!make_dir());
	CHECK((a = open_shared("a", 1000)) && (b = open_shared("b", 1)));
	CHECK_INT(append(a, mkprof(S3, C3, 3, T0 - HOUR), "a", "1"), ==, 0);
	CHECK_INT(pstore_flush(a), ==, 0);
	CHECK_INT(append(a, mkprof(S3, C3, 2, T0 - HOUR + SEC), "b", "1"), ==, 0);
	CHECK_INT(pstore_flush(a), ==, 0);
	fake_now += 2 * SEC;
	CHECK_INT(samples_total(b), ==, 45 + 40); /* b read both */
	CHECK_INT(merge_all(a), ==, 0);
	CHECK_INT(blocks_of(b), ==, 2); /* b's list is 0 s old: its merge races a's */
	CHECK_INT(merge_all(b), ==, 0);
	CHECK_INT(blocks_of(b), ==, 1);
	CHECK_INT(count_files("shared/blocks", ".pblk"), ==, 3); /* 2 + one merged name */
	CHECK_INT(samples_total(b), ==, 45 + 40);
	pstore_free(a);
	pstore_free(b);
	remove_dir();
	return 0;
}

/* The directory's block storage whose claims fail once fail_claims_after
 * more have succeeded (-1: never). */
static int fail_claims_after = -1;
static struct pstore_blockio inner_io;

static int flaky_claim(void *ctx, const char *name, const void *data, size_t len)
{
	if (fail_claims_after == 0)
		return -EIO;
	if (fail_claims_after > 0)
		fail_claims_after--;
	return inner_io.claim(ctx, name, data, len);
}

/* A flush that fails between its two entries leaves its head queryable
 * and its first block in the index: a query's refresh must not add that
 * block while the head is there (it would count its profiles twice), and
 * the flush tried again settles it. */
static int test_pstore__shared_flush_failing_between_entries_counts_once(void)
{
	struct pstore_opts o = test_opts();
	struct pstore_blockio io;
	struct pstore *a = NULL, *b;
	char path[400], why[256];

	fake_now = T0;
	CHECK(!make_dir());
	snprintf(path, sizeof(path), "%s/shared", dir);
	CHECK_INT(pstore_blockio_dir(path, &inner_io), ==, 0);
	io = inner_io;
	io.claim = flaky_claim;
	o.blocks = &io;
	o.shared = true;
	o.refresh_ns = 1 * SEC;
	snprintf(path, sizeof(path), "%s/a", dir);
	CHECK_INT(pstore_open(path, &o, &a, why, sizeof(why)), ==, 0);
	CHECK((b = open_shared("b", 1)));
	CHECK_INT(append(a, mkprof(S3, C3, 3, T0 - 10 * SEC), "a", "1"), ==, 0);
	CHECK_INT(append(a, mkprof(S3, C3, 2, T0 - HOUR), "a", "1"), ==, 0);
	fail_claims_after = 1;
	CHECK(pstore_flush(a) != 0);
	fake_now += 2 * SEC;
	CHECK_INT(samples_total(a), ==, 45 + 40); /* its head; the indexed block waits */
	CHECK_INT(blocks_of(a), ==, 0);
	CHECK_INT(samples_total(b), ==, 40); /* b has the indexed block only (no head) */
	fail_claims_after = -1;
	CHECK_INT(pstore_compact(a), ==, 0); /* the sealed head again: both entries */
	CHECK_INT(samples_total(a), ==, 45 + 40);
	CHECK_INT(blocks_of(a), ==, 2);
	fake_now += 2 * SEC;
	CHECK_INT(samples_total(b), ==, 45 + 40);
	pstore_free(a);
	pstore_free(b);
	remove_dir();
	return 0;
}

/* An entry adding another block for log records a live block holds (a
 * flush retried after symbols arrived encodes other bytes) is skipped by
 * every reader: the records are counted once. */
static int test_pstore__shared_same_log_records_counted_once(void)
{
	struct pstore *a, *b;
	struct pstore_index_range r;
	struct pstore_index_entry e = { .add_size = 100, .wal = &r, .n_wal = 1 };
	char name[PS_BLOCK_NAME_MAX], why[256];
	struct ember_diag d = ember_diag_make(why, sizeof(why));
	int64_t part;

	fake_now = T0;
	CHECK(!make_dir());
	CHECK((a = open_shared("a", 1)));
	CHECK_INT(append(a, mkprof(S3, C3, 3, T0 - 10 * SEC), "a", "1"), ==, 0);
	CHECK_INT(pstore_flush(a), ==, 0);
	CHECK_INT(blocks_of(a), ==, 1);
	CHECK_INT(a->blocks.v[0]->meta.wal.n, ==, 1);
	part = a->blocks.v[0]->meta.partition;
	memcpy(r.writer, a->blocks.v[0]->meta.wal.v[0].writer, 16);
	r.lo = r.hi = a->blocks.v[0]->meta.wal.v[0].lo;
	snprintf(name, sizeof(name), "blocks/%016llx-%064d.pblk", (unsigned long long)part, 0);
	e.add = name; /* never written: a reader that took the entry fails */
	CHECK_INT(pstore_index_append(a, part, &e, &d), ==, 0);
	CHECK((b = open_shared("b", 1)));
	CHECK_INT(blocks_of(b), ==, 1);
	CHECK_INT(samples_total(b), ==, 45);
	fake_now += 2 * SEC;
	CHECK_INT(samples_total(a), ==, 45);
	pstore_free(a);
	pstore_free(b);
	remove_dir();
	return 0;
}

/* A block the index names and the storage lost: listed as corrupt, so the
 * queries over its partition fail with the reason and the others answer
 * (the store opens). */
static int test_pstore__shared_missing_block_fails_its_queries_only(void)
{
	struct pstore *a, *c;
	struct pmodel_result *r = NULL;
	struct pstore_selection sel = { .type = "samples", .from_ns = T0 - 3 * HOUR,
					.to_ns = T0 - 2 * HOUR + HOUR / 2 };
	struct pstore_stats st;
	char path[600], why[256];

	fake_now = T0;
	CHECK(!make_dir());
	CHECK((a = open_shared("a", 1)));
	CHECK_INT(append(a, mkprof(S3, C3, 3, T0 - 10 * SEC), "a", "1"), ==, 0);
	CHECK_INT(append(a, mkprof(S3, C3, 2, T0 - 2 * HOUR - 60 * SEC), "a", "1"), ==, 0);
	CHECK_INT(pstore_flush(a), ==, 0);
	for (size_t i = 0; i < a->blocks.n; i++)
		if (a->blocks.v[i]->meta.min_time < T0 - HOUR)
			snprintf(path, sizeof(path), "%s/shared/%s", dir, a->blocks.v[i]->name);
	pstore_free(a);
	CHECK_INT(unlink(path), ==, 0);
	CHECK((c = open_shared("c", 1)));
	pstore_stats(c, &st);
	CHECK_INT(st.blocks, ==, 2);
	CHECK_INT(st.corrupt_blocks, ==, 1);
	CHECK_INT(pstore_query(c, &sel, NULL, &r, why, sizeof(why)), ==, -PSTORE_ERR_CORRUPT);
	CHECK(strstr(why, "the storage does not have it"));
	CHECK_INT(samples_total(c) < 0, ==, 1); /* every time: that partition too */
	r = query(c, NULL, "samples", T0 - HOUR, 0);
	CHECK(r && total_of(r) == 45);
	pmodel_result_free(r);
	pstore_free(c);
	remove_dir();
	return 0;
}

/* A store opened in an empty directory on the storage: its list is the
 * index's, and retention drops go through the index too. */
static int test_pstore__shared_empty_dir_reads_the_index(void)
{
	struct pstore *a, *c;

	fake_now = T0;
	CHECK(!make_dir());
	CHECK((a = open_shared("a", 1)));
	CHECK_INT(append(a, mkprof(S3, C3, 3, T0 - 2 * HOUR), "a", "1"), ==, 0);
	CHECK_INT(append(a, mkprof(S3, C3, 3, T0 - 20 * 24 * HOUR), "a", "1"), ==, 0);
	CHECK_INT(append(a, mkprof(S3, C3, 2, T0 - 10 * SEC), "a", "1"), ==, 0);
	CHECK_INT(pstore_flush(a), ==, 0);
	pstore_free(a);
	CHECK((c = open_shared("c", 1)));
	CHECK_INT(blocks_of(c), ==, 3);
	CHECK_INT(samples_total(c), ==, 45 + 45 + 40);
	CHECK_INT(pstore_compact(c), ==, 0); /* the 20-day-old block is past 14 days */
	CHECK_INT(samples_total(c), ==, 45 + 40);
	pstore_free(c);
	CHECK((a = open_shared("a", 1)));
	CHECK_INT(samples_total(a), ==, 45 + 40);
	pstore_free(a);
	remove_dir();
	return 0;
}

/* dir/shared/log/WRITER of store s (its per-push log objects). */
static void log_dir_of(struct pstore *s, char *out, size_t size)
{
	char name[PS_LOGOBJ_NAME_MAX];

	pstore_logobj_name(s->writer, 0, 0, name);
	*strrchr(name, '/') = '\0';
	snprintf(out, size, "shared/%s", name);
}

/* A shared store writes each append as a log object before it answers,
 * named by its segment and record; the flush that put the segment's
 * blocks in the index deletes them.  An append whose log object cannot
 * be written fails and is not counted. */
static int test_pstore__shared_append_writes_log_objects(void)
{
	struct pstore *a;
	char sub[200], name[PS_LOGOBJ_NAME_MAX], path[600];
	uint64_t seg;
	FILE *f;

	fake_now = T0;
	CHECK(!make_dir());
	CHECK((a = open_shared("a", 1)));
	seg = pstore_wal_seq(a->wal);
	CHECK_INT(append(a, mkprof(S3, C3, 3, T0 - 10 * SEC), "a", "1"), ==, 0);
	CHECK_INT(append(a, mkprof(S3, C3, 2, T0 - 9 * SEC), "a", "1"), ==, 0);
	log_dir_of(a, sub, sizeof(sub));
	CHECK_INT(count_files(sub, "-0000000000"), ==, 1);
	CHECK_INT(count_files(sub, "-0000000001"), ==, 1);
	pstore_logobj_name(a->writer, seg, 1, name);
	CHECK(strstr(name, "-0000000001"));
	CHECK_INT(pstore_flush(a), ==, 0);
	CHECK_INT(count_files(sub, "-00000000"), ==, 0);
	/* the next record's name taken by someone else: that append fails */
	pstore_logobj_name(a->writer, pstore_wal_seq(a->wal), 0, name);
	snprintf(path, sizeof(path), "%s/shared/%s", dir, name);
	CHECK((f = fopen(path, "w")) && fclose(f) == 0);
	CHECK_INT(append(a, mkprof(S3, C3, 1, T0 - 8 * SEC), "a", "1"), ==, -PSTORE_ERR_CLOSED);
	CHECK_INT(samples_total(a), ==, 45 + 40);
	CHECK_INT(append(a, mkprof(S3, C3, 1, T0 - 7 * SEC), "a", "1"), ==, 0); /* record 1 */
	CHECK_INT(samples_total(a), ==, 45 + 40 + 30);
	pstore_free(a);
	remove_dir();
	return 0;
}

/* dir/shared/log/WRITER/LEAF of store s, back by one hour (a lease
 * that stopped being renewed). */
static int leaf_path(struct pstore *s, const char *leaf, char *out, size_t size)
{
	char sub[200];

	log_dir_of(s, sub, sizeof(sub));
	return snprintf(out, size, "%s/%s/%s", dir, sub, leaf) < (int)size ? 0 : -1;
}

static int age_lease(const char *path)
{
	struct timespec t[2];

	clock_gettime(CLOCK_REALTIME, &t[0]);
	t[0].tv_sec -= 3600;
	t[1] = t[0];
	return utimensat(AT_FDCWD, path, t, 0);
}

/* A writer's disk is lost with acknowledged appends in no block: while
 * its lease is fresh nobody takes its log; once it is old (by the
 * storage's times), the next store to renew its own claims the log,
 * answers from it at once, flushes it into blocks that name the dead
 * writer's segment and deletes its objects; a third store finds the
 * claim and takes nothing.  A writer that finds its log claimed takes no
 * more appends. */
static int test_pstore__shared_dead_writers_log_taken_over(void)
{
	struct pstore *a, *b, *c;
	char lease[600], claim[600], sub[200], cmd[700], why[256];
	struct ember_diag d = ember_diag_make(why, sizeof(why));
	uint8_t wa[16];
	FILE *f;

	fake_now = T0;
	CHECK(!make_dir());
	CHECK((a = open_shared("a", 1)));
	CHECK_INT(append(a, mkprof(S3, C3, 3, T0 - 10 * SEC), "a", "1"), ==, 0);
	CHECK_INT(append(a, mkprof(S3, C3, 2, T0 - 2 * HOUR), "a", "1"), ==, 0);
	CHECK(!leaf_path(a, "lease", lease, sizeof(lease)) &&
	      !leaf_path(a, "claim", claim, sizeof(claim)));
	log_dir_of(a, sub, sizeof(sub));
	memcpy(wa, a->writer, 16);
	CHECK((f = fopen(lease, "r")) && fgets(cmd, sizeof(cmd), f) && fgets(cmd, sizeof(cmd), f) &&
	      fclose(f) == 0);
	CHECK_STR(cmd, "expiry_ns 180000000000\n"); /* 3 head ages, declared */
	pstore_free(a);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s/a'", dir);
	CHECK_INT(system(cmd), ==, 0); /* the disk is gone */
	CHECK((b = open_shared("b", 1)));
	CHECK_INT(samples_total(b), ==, 0); /* a's lease is fresh: not taken */
	CHECK_INT(access(claim, F_OK), ==, -1);
	CHECK_INT(age_lease(lease), ==, 0);
	CHECK_INT(pstore_lease_tend(b, true, &d), ==, 0);
	CHECK_INT(access(claim, F_OK), ==, 0);
	CHECK_INT(samples_total(b), ==, 45 + 40); /* the sealed heads, at once */
	CHECK((c = open_shared("c", 1)));	  /* the claim is b's */
	CHECK_INT(samples_total(c), ==, 0);
	CHECK_INT(pstore_flush(b), ==, 0);
	CHECK_INT(count_files(sub, "-00000000"), ==, 0); /* a's records deleted */
	CHECK_INT(blocks_of(b), ==, 2);
	for (size_t i = 0; i < b->blocks.n; i++)
		CHECK(b->blocks.v[i]->meta.wal.n == 1 && !memcmp(b->blocks.v[i]->meta.wal.v[0].writer, wa, 16));
	CHECK_INT(samples_total(b), ==, 45 + 40);
	fake_now += 70 * SEC; /* c's next refresh lists the whole index */
	CHECK_INT(samples_total(c), ==, 45 + 40);
	/* fenced: c's own log claimed */
	CHECK(!leaf_path(c, "claim", claim, sizeof(claim)));
	CHECK((f = fopen(claim, "w")) && fclose(f) == 0);
	CHECK_INT(pstore_lease_tend(c, true, &d), ==, -PSTORE_ERR_CLOSED);
	CHECK_INT(append(c, mkprof(S3, C3, 1, T0 - 5 * SEC), "c", "1"), ==, -PSTORE_ERR_CLOSED);
	CHECK_INT(samples_total(c), ==, 45 + 40);
	pstore_free(b);
	pstore_free(c);
	remove_dir();
	return 0;
}

/* ---- frame types in blocks ---------------------------------------------------------- */

/* The section count of the one block in the store's directory, or -1. */
static int block_sections(void)
{
	char path[400];
	uint8_t h[16];
	FILE *f;
	size_t n;

	if (first_file("blocks", ".pblk", path, sizeof(path)))
		return -1;
	f = fopen(path, "rb");
	n = f ? fread(h, 1, sizeof(h), f) : 0;
	if (f)
		fclose(f);
	return n == sizeof(h) ? (int)pstore_rd32(h + 12) : -1;
}

/* S3 with the frame type of every location (OTLP's profile.frame.type). */
static struct pprof_profile *typed_prof(int64_t time, const char *type)
{
	struct pprof_profile *p = mkprof(S3, C3, 3, time);
	const pprof_message_t *m = p ? pprof_message(p) : NULL;

	for (size_t i = 0; m && i < m->n_location; i++)
		if (pprof_location_set_frame_type(p, m->location[i]->id, type)) {
			pprof_profile_free(p);
			return NULL;
		}
	return p;
}

/* A location's frame type is kept by the log, a block (the optional
 * LOCATION_TYPES section), a restart and a merge; a block without any is
 * the layout it always was (twelve sections), read as before; the same
 * stack of native and of untyped frames is two stacks. */
static int test_pstore__block_keeps_location_frame_types(void)
{
	struct pstore *s = fresh_store();
	struct pmodel_result *r;
	struct ember_buf b;

	CHECK(s);
	CHECK_INT(append(s, mkprof(S3, C3, 3, T0 - 300 * SEC), "plain", "1"), ==, 0);
	CHECK_INT(pstore_flush(s), ==, 0);
	CHECK_INT(block_sections(), ==, PS_SEC_REQUIRED_MAX);
	pstore_free(s);
	remove_dir();
	s = fresh_store();
	CHECK(s);
	CHECK_INT(append(s, typed_prof(T0 - 300 * SEC, "native"), "typed", "1"), ==, 0);
	CHECK_INT(pstore_flush(s), ==, 0);
	CHECK_INT(block_sections(), ==, PS_SEC_LOCATION_TYPES);
	CHECK_INT(append(s, mkprof(S3, C3, 3, T0 - 200 * SEC), "typed", "1"), ==, 0);
	CHECK_INT(pstore_flush(s), ==, 0);
	fake_now = T0 + 2 * HOUR;
	CHECK_INT(pstore_compact(s), ==, 0); /* the two blocks merged */
	CHECK_INT(count_files("blocks", ".pblk"), ==, 1);
	CHECK_INT(block_sections(), ==, PS_SEC_LOCATION_TYPES);
	pstore_free(s);
	s = open_store(NULL);
	CHECK(s);
	r = query(s, "{service=\"typed\"}", "cpu", 0, 0);
	CHECK(r);
	CHECK_INT(pmodel_dict_nodes(&r->dict), ==, 1 + 2 * 5); /* each stack twice */
	ember_buf_init(&b, 1 << 20);
	CHECK_INT(pmodel_write_tree_json(r, pmodel_write_buf, &b), ==, 0);
	CHECK(strstr(b.data, "{\"name\":\"hot\",\"file\":\"hot.c\",\"line\":10,"
			     "\"frame_type\":\"native\",\"self\":600000000,"));
	ember_buf_release(&b);
	pmodel_result_free(r);
	pstore_free(s);
	remove_dir();
	return 0;
}

static const struct unit_case cases[] = {
	UNIT_CASE(test_pstore__span_links_kept_per_sample_not_series),
	UNIT_CASE(test_pstore__blocks_of_versions_1_and_2_still_read),
	UNIT_CASE(test_pstore__frames_read_alone_give_their_profiles),
	UNIT_CASE(test_pstore__frame_table_learnt_then_read_by),
	UNIT_CASE(test_pstore__rows_normalize_per_stack_and_link),
	UNIT_CASE(test_pstore__link_stream_and_table_checked),
	UNIT_CASE(test_pstore__sample_attrs_kept_per_sample_not_series),
	UNIT_CASE(test_pstore__links_section_attribute_sets_checked),
	UNIT_CASE(test_pstore__series_limit_freed_when_data_gets_old),
	UNIT_CASE(test_pstore__block_keeps_location_frame_types),
	UNIT_CASE(test_pstore__series_limit_refused_profile_holds_no_slot),
	UNIT_CASE(test_pstore__merge_pick_not_quadratic_in_blocks),
	UNIT_CASE(test_pstore__shared_dead_writers_log_taken_over),
	UNIT_CASE(test_pstore__shared_append_writes_log_objects),
	UNIT_CASE(test_pstore__shared_stores_see_each_others_blocks),
	UNIT_CASE(test_pstore__shared_merge_race_counts_once),
	UNIT_CASE(test_pstore__shared_same_merge_same_name),
	UNIT_CASE(test_pstore__shared_empty_dir_reads_the_index),
	UNIT_CASE(test_pstore__shared_missing_block_fails_its_queries_only),
	UNIT_CASE(test_pstore__shared_same_log_records_counted_once),
	UNIT_CASE(test_pstore__shared_flush_failing_between_entries_counts_once),
	UNIT_CASE(test_pstore__selector_matching),
	UNIT_CASE(test_pstore__selector_errors_explain),
	UNIT_CASE(test_pstore__selector_re2_syntax),
	UNIT_CASE(test_pstore__selector_regex_limits),
	UNIT_CASE(test_pstore__selector_regex_memory_charged),
	UNIT_CASE(test_pstore__append_query_head_blocks_merged_agree),
	UNIT_CASE(test_pstore__empty_profile_stored),
	UNIT_CASE(test_pstore__time_range_selects_profiles),
	UNIT_CASE(test_pstore__time_from_profile_else_arrival),
	UNIT_CASE(test_pstore__sample_labels_split_series),
	UNIT_CASE(test_pstore__error_kinds),
	UNIT_CASE(test_pstore__limits_reject_with_reasons),
	UNIT_CASE(test_pstore__types_aliases_and_names),
	UNIT_CASE(test_pstore__discovery_labels_values_types),
	UNIT_CASE(test_pstore__series_totals_at_a_step),
	UNIT_CASE(test_pstore__coverage_and_query_resolver),
	UNIT_CASE(test_pstore__compaction_resolver_updates_block),
	UNIT_CASE(test_pstore__symbols_arrived_rewrite_blocks),
	UNIT_CASE(test_pstore__retention_drops_whole_blocks),
	UNIT_CASE(test_pstore__merge_parents_deleted_after_crash),
	UNIT_CASE(test_pstore__open_partition_merges_four),
	UNIT_CASE(test_pstore__log_replayed_at_open),
	UNIT_CASE(test_pstore__replay_skips_what_blocks_hold),
	UNIT_CASE(test_pstore__replay_skips_blocks_of_another_partition_length),
	UNIT_CASE(test_pstore__merge_keeps_partition_lengths_apart),
	UNIT_CASE(test_pstore__torn_log_tail_dropped),
	UNIT_CASE(test_pstore__bad_segment_set_aside),
	UNIT_CASE(test_pstore__kill9_keeps_every_acknowledged_profile),
	UNIT_CASE(test_pstore__corrupt_block_is_reported_not_empty),
	UNIT_CASE(test_pstore__storage_errors_are_not_empty_answers),
	UNIT_CASE(test_pstore__blocks_in_storage_that_is_no_filesystem),
	UNIT_CASE(test_pstore__block_name_taken_by_other_bytes_detected),
	UNIT_CASE(test_pstore__blockio_dir_semantics),
	UNIT_CASE(test_pstore__pprof_output_read_by_go_tool_pprof),
	UNIT_CASE(test_pstore__diff_pprof_matches_go_diff_base),
	UNIT_CASE(test_pstore__unbounded_label_reported),
	UNIT_CASE(test_pstore__concurrent_appends_queries_flushes),
};

UNIT_MAIN_QUIET(cases)
