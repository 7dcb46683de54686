/*
 * test_pstore_query.c - unit tests of how profile-store/ runs a query
 * (query.c, query_workers.c, docs/profile-store.md "Queries"): a plan's
 * pieces summed by several threads give the answer one thread gives,
 * byte for byte, over random ranges; what a query holds is taken from
 * its request's account, past whose share or budget it fails with the
 * account's error; the request's check stops every thread; a thread's
 * failure is the query's.
 */
#include "pprof.h"
#include "pstore.h"
#include "pstore_catalog.h"
#include "pstore_query.h"
#include "unit.h"
/* after unit.h, whose parameters would shadow its globals */
#include "profile_fixture.h"
#include "pstore_fixture.h"

#include <stdio.h>

#define MIN (60 * SEC)
#define NRANGES 150

static uint64_t rng;

static uint32_t next(uint32_t n)
{
	return test_rand(&rng, n);
}

static const char *const STACKS[] = { "main;a;b", "main;a;c", "main;d", "main;d;e;f",
				      "main;g", "main;a;b;h", "main;0x400123", "main;i;j",
				      "main;i;k", "main;l" };

static int append_at(struct pstore *s, const char *service, int64_t t)
{
	static const struct pprof_sample_label w1[1] = { { .key = "@thread.name", .str = "w1" } };
	struct pstore_label l[1] = { { "service", service } };
	struct pstore_append_opts o = { .sz = sizeof(o), .labels = l, .n_labels = 1 };
	const char *st[4];
	int64_t c[4];
	size_t n = 1 + next(4);
	struct pprof_profile *p;
	char why[256];
	int err;

	for (size_t i = 0; i < n; i++) {
		st[i] = STACKS[next(10)];
		c[i] = 1 + next(50);
	}
	p = mkprof(st, c, n, t);
	if (p && !next(3)) { /* a sample with an attribute set */
		const Perftools__Profiles__Sample *s0 = pprof_message(p)->sample[0];
		int64_t v[2] = { 1 + next(9), 10 * MS };

		if (pprof_add_sample_labeled(p, s0->location_id, s0->n_location_id, v, 2, w1, 1)) {
			pprof_profile_free(p);
			p = NULL;
		}
	}
	err = p ? pstore_append(s, p, &o, why, sizeof(why)) : -ENOMEM;
	if (err && p)
		fprintf(stderr, "pstore_append: %s\n", why);
	pprof_profile_free(p);
	return err;
}

/* Ten hours of three services: the first five compacted (merged and
 * rolled up), the next five in several blocks a partition, the last
 * minutes in the head. */
static int fill(struct pstore *s, int64_t start)
{
	static const char *const svc[] = { "a", "b", "c" };

	rng = 0x9e3779b97f4a7c15ull;
	for (int i = 0; i < 600; i++) {
		EMBER_FORWARD_IF_ERROR(append_at(s, svc[i % 3], start + i * MIN + next(1000) * MS));
		if (i % 40 == 39)
			EMBER_FORWARD_IF_ERROR(pstore_flush(s));
		if (i == 299)
			EMBER_FORWARD_IF_ERROR(pstore_compact(s));
	}
	return 0;
}

static struct pstore_opts threads_opts(unsigned threads)
{
	struct pstore_opts o = test_opts();

	o.query_threads = threads;
	o.query_split_bytes = 1; /* every piece worth a thread */
	return o;
}

/* A store of fill()'s data, its queries run by threads threads. */
static struct pstore *filled_store(unsigned threads, int64_t *start)
{
	struct pstore_opts o = threads_opts(threads);
	struct pstore *s;

	fake_now = T0;
	*start = T0 - 12 * HOUR;
	if (make_dir() || !(s = open_store(&o)))
		return NULL;
	if (fill(s, *start)) {
		pstore_free(s);
		return NULL;
	}
	return s;
}

/* The answer to selector over [from, to) as bytes: its pprof (the
 * result's dictionary in its order), profiles and time span. */
static int answer(struct pstore *s, const struct pstore_selection *sel, struct ember_buf *out)
{
	struct pmodel_result *r = NULL;
	char why[256] = "";
	int err = pstore_query(s, sel, NULL, &r, why, sizeof(why));

	ember_buf_init(out, 1 << 24);
	if (!err)
		err = pmodel_write_pprof(r, out);
	if (!err)
		err = ember_buf_appendf(out, "profiles %llu span %lld %lld rollups %lld",
					(unsigned long long)r->profiles, (long long)r->min_time,
					(long long)r->max_time, (long long)r->rollup_only_step);
	if (err)
		fprintf(stderr, "pstore_query: %s\n", why[0] ? why : strerror(-err));
	pmodel_result_free(r);
	return err;
}

/* NRANGES random selections over [start - 1 h, start + 11 h), the same
 * for the same seed. */
static struct pstore_selection random_selection(int64_t start, uint32_t i)
{
	static const char *const sel[] = { NULL, "{service=\"a\"}", "{service=~\"b|c\"}" };
	int64_t from = start - HOUR + (int64_t)next(12 * 3600) * SEC + next(1000) * MS;
	int64_t to = from + 1 + (int64_t)next(8 * 3600) * SEC;

	return (struct pstore_selection){ .selector = sel[next(3)], .type = "cpu",
					  .from_ns = from, .to_ns = to,
					  .full_resolution = i % 2 };
}

static int answers(struct pstore *s, int64_t start, struct ember_buf *out)
{
	rng = 0x2545f4914f6cdd1dull;
	for (uint32_t i = 0; i < NRANGES; i++) {
		struct pstore_selection sel = random_selection(start, i);

		EMBER_FORWARD_IF_ERROR(answer(s, &sel, &out[i]));
	}
	return 0;
}

/* Over random ranges, with rollups and at full resolution, the answer of
 * four threads is the answer of one, byte for byte (the result's
 * dictionary in the same order), and the threads are given back. */
static int test_pstore_query__threads_answer_as_one_over_random_ranges(void)
{
	static struct ember_buf one[NRANGES], four[NRANGES];
	struct pstore_opts o = threads_opts(1);
	struct pstore_stats st;
	int64_t start;
	struct pstore *s = filled_store(4, &start);
	int same = 0;

	CHECK(s);
	pstore_stats(s, &st);
	CHECK_INT(st.rollups, >, 0);
	CHECK_INT(st.blocks, >, 10);
	CHECK_INT(answers(s, start, four), ==, 0);
	CHECK_INT(atomic_load(&s->query_spare), ==, 4);
	pstore_free(s);
	CHECK((s = open_store(&o)));
	CHECK_INT(answers(s, start, one), ==, 0);
	pstore_free(s);
	for (uint32_t i = 0; i < NRANGES; i++) {
		if (one[i].len == four[i].len && !memcmp(one[i].data, four[i].data, one[i].len))
			same++;
		else
			fprintf(stderr, "range %u: one thread %zu bytes, four %zu\n", i, one[i].len,
				four[i].len);
		ember_buf_release(&one[i]);
		ember_buf_release(&four[i]);
	}
	CHECK_INT(same, ==, NRANGES);
	remove_dir();
	return 0;
}

/* The whole range, every service, from the blocks. */
static struct pstore_selection whole(int64_t start, const struct pstore_request *req)
{
	return (struct pstore_selection){ .type = "cpu", .from_ns = start - HOUR,
					  .to_ns = start + 11 * HOUR, .request = req,
					  .full_resolution = true };
}

static int query_with(struct pstore *s, const struct pstore_selection *sel, char *why,
		      size_t size, struct pmodel_result **r)
{
	*r = NULL;
	return pstore_query(s, sel, NULL, r, why, size);
}

/* What a query holds is taken from its request's account, at least its
 * result's bytes; past the request's share it fails with -E2BIG, past
 * the server's budget with -EAGAIN (the account's error either way, which
 * the HTTP layer answers with 413 and 503), and the budget is whole
 * again once the request gives its account back. */
static int test_pstore_query__memory_taken_from_request_account(void)
{
	struct ember_mem_budget budget;
	struct ember_mem_account a;
	struct pstore_request req = { .sz = sizeof(req), .account = &a };
	struct pstore_selection sel;
	struct pmodel_result *r;
	char why[256];
	int64_t start;
	uint64_t used;
	struct pstore *s = filled_store(4, &start);

	CHECK(s);
	sel = whole(start, &req);
	ember_mem_budget_init(&budget, 1ull << 40);
	ember_mem_account_init(&a, &budget, 1ull << 40);
	CHECK_INT(query_with(s, &sel, why, sizeof(why), &r), ==, 0);
	used = a.used;
	CHECK_INT(used, >=, pmodel_result_bytes(r));
	CHECK_INT(ember_mem_budget_used(&budget), ==, used);
	pmodel_result_free(r);
	ember_mem_account_release(&a);
	CHECK_INT(ember_mem_budget_used(&budget), ==, 0);
	/* the share: a quarter of what it took */
	ember_mem_account_init(&a, &budget, used / 4);
	CHECK_INT(query_with(s, &sel, why, sizeof(why), &r), ==, -E2BIG);
	CHECK(!r);
	CHECK_INT(a.err, ==, -E2BIG);
	CHECK(strstr(why, "share"));
	ember_mem_account_release(&a);
	/* the budget: a quarter free */
	ember_mem_budget_init(&budget, used / 4);
	ember_mem_account_init(&a, &budget, 1ull << 40);
	CHECK_INT(query_with(s, &sel, why, sizeof(why), &r), ==, -EAGAIN);
	CHECK_INT(a.err, ==, -EAGAIN);
	CHECK(strstr(why, "again"));
	ember_mem_account_release(&a);
	CHECK_INT(ember_mem_budget_used(&budget), ==, 0);
	CHECK_INT(atomic_load(&s->query_spare), ==, 4);
	pstore_free(s);
	remove_dir();
	return 0;
}

struct stopper {
	int calls, stop_at, err;
};

/* The request's check: err from the stop_at-th call on. */
static int stop_check(void *arg)
{
	struct stopper *st = arg;

	return ++st->calls >= st->stop_at ? st->err : 0;
}

static uint64_t read_by(struct pstore *s, const struct pstore_selection *sel, int *err,
			char *why, size_t size)
{
	struct pstore_stats a, b;
	struct pmodel_result *r;

	pstore_stats(s, &a);
	*err = query_with(s, sel, why, size, &r);
	pstore_stats(s, &b);
	pmodel_result_free(r);
	return b.profiles_read - a.profiles_read;
}

/* The request's check stops every thread: stopped at its first call,
 * the query reads no profile of a block; stopped later, fewer than all;
 * its error (-ECANCELED: the client went away) is the query's. */
static int test_pstore_query__check_stops_every_thread(void)
{
	struct stopper st = { .stop_at = 1, .err = -ECANCELED };
	struct pstore_request req = { .sz = sizeof(req), .check = stop_check, .check_arg = &st };
	struct pstore_selection sel;
	char why[256];
	uint64_t all;
	int err;
	int64_t start;
	struct pstore *s = filled_store(4, &start);

	CHECK(s);
	sel = whole(start, NULL);
	all = read_by(s, &sel, &err, why, sizeof(why));
	CHECK_INT(err, ==, 0);
	sel.request = &req;
	CHECK_INT(read_by(s, &sel, &err, why, sizeof(why)), ==, 0);
	CHECK_INT(err, ==, -ECANCELED);
	CHECK(strstr(why, "stopped"));
	st = (struct stopper){ .stop_at = 6, .err = -ETIMEDOUT };
	CHECK_INT(read_by(s, &sel, &err, why, sizeof(why)), <, all);
	CHECK_INT(err, ==, -ETIMEDOUT);
	CHECK(strstr(why, "deadline"));
	/* the check is called again by no thread once it stopped the query
	 * (the others see the halt) */
	CHECK_INT(st.calls, ==, 6);
	CHECK_INT(atomic_load(&s->query_spare), ==, 4);
	pstore_free(s);
	remove_dir();
	return 0;
}

/* A block that fails its checks in the last thread's part fails the
 * query with that block's name, though the first part is whole. */
static int test_pstore_query__failed_thread_fails_query(void)
{
	struct pstore_selection sel;
	struct pstore_block *b;
	char why[256], name[128];
	int err;
	int64_t start;
	struct pstore *s = filled_store(4, &start);

	CHECK(s);
	sel = whole(start, NULL);
	pthread_mutex_lock(&s->mu);
	b = s->blocks.v[s->blocks.n - 1];
	snprintf(name, sizeof(name), "%s", b->name);
	b->corrupt = true;
	snprintf(b->why, sizeof(b->why), "a test's");
	pthread_mutex_unlock(&s->mu);
	read_by(s, &sel, &err, why, sizeof(why));
	CHECK_INT(err, ==, -PSTORE_ERR_CORRUPT);
	CHECK(strstr(why, name));
	b->corrupt = false;
	read_by(s, &sel, &err, why, sizeof(why));
	CHECK_INT(err, ==, 0);
	CHECK_INT(atomic_load(&s->query_spare), ==, 4);
	pstore_free(s);
	remove_dir();
	return 0;
}

static const struct unit_case cases[] = {
	UNIT_CASE(test_pstore_query__threads_answer_as_one_over_random_ranges),
	UNIT_CASE(test_pstore_query__memory_taken_from_request_account),
	UNIT_CASE(test_pstore_query__check_stops_every_thread),
	UNIT_CASE(test_pstore_query__failed_thread_fails_query),
};

UNIT_MAIN_QUIET(cases)
