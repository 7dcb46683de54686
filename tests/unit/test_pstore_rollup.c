/*
 * test_pstore_rollup.c - unit tests of profile-store/'s rollups
 * (rollup.c, docs/profile-store-format.md "Rollups"): a rollup's sums,
 * profile counts and time spans equal the full-resolution merge of each
 * of its buckets, attribute sets kept and spans dropped; its ROLLUP
 * section read back and checked; compaction building, replacing and
 * listing them (local and shared stores); retention per tier; day and
 * 6-hour rollups answering whole days and whole 6 hours.
 */
#include "pprof.h"
#include "pstore.h"
#include "pstore_block.h"
#include "pstore_catalog.h"
#include "pstore_compact.h"
#include "pstore_query.h"
#include "unit.h"
/* after unit.h, whose parameters would shadow its globals */
#include "profile_fixture.h"
#include "pstore_fixture.h"

#include <dirent.h>
#include <stdio.h>

#define CPU "process_cpu:cpu:nanoseconds:cpu:nanoseconds"
#define MIN (60 * SEC)
#define SIX (6 * HOUR)
#define DAY (24 * HOUR)

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t next(uint32_t n)
{
	return test_rand(&rng, n);
}

static const char *const STACKS[] = { "main;a;b", "main;a;c", "main;d", "main;d;e;f",
				      "main;g", "main;a;b;h", "main;0x400123", "main;i" };

/* A profile of a few random stacks, some of them again (labeled) with a
 * thread name (an attribute set) or a span (a link). */
static struct pprof_profile *random_profile(int64_t t, bool labeled)
{
	static const struct pprof_sample_label w1[1] = { { .key = "@thread.name", .str = "w1" } };
	static const struct pprof_sample_label w2[2] = { { .key = "@thread.name", .str = "w2" },
							 { .key = "span_id",
							   .str = "0123456789abcdef" } };
	static const struct pprof_sample_label sp[1] = { { .key = "span_id",
							   .str = "fedcba9876543210" } };
	const char *st[4];
	int64_t c[4];
	size_t n = 1 + next(4);
	struct pprof_profile *p;

	for (size_t i = 0; i < n; i++) {
		st[i] = STACKS[next(8)];
		c[i] = 1 + next(50);
	}
	p = mkprof(st, c, n, t);
	for (size_t i = 0; p && labeled && i < n; i++) {
		const Perftools__Profiles__Sample *s = pprof_message(p)->sample[i];
		int64_t v[2] = { 1 + next(9), 0 };
		uint32_t k = next(4);

		v[1] = v[0] * 10 * MS;
		if (k < 3 && pprof_add_sample_labeled(p, s->location_id, s->n_location_id, v, 2,
						      k == 0 ? w1 : k == 1 ? w2 : sp, k == 1 ? 2 : 1)) {
			pprof_profile_free(p);
			return NULL;
		}
	}
	return p;
}

static int append_random(struct pstore *s, const char *service, int64_t t, bool labeled)
{
	struct pstore_label l[1] = { { "service", service } };
	struct pstore_append_opts o = { .sz = sizeof(o), .labels = l, .n_labels = 1 };
	struct pprof_profile *p = random_profile(t, labeled);
	char why[256];
	int err = p ? pstore_append(s, p, &o, why, sizeof(why)) : -ENOMEM;

	if (err && p)
		fprintf(stderr, "pstore_append: %s\n", why);
	pprof_profile_free(p);
	return err;
}

static int append_at(struct pstore *s, const char *service, int64_t t)
{
	return append_random(s, service, t, true);
}

/* The sum of r's attributed parts per (leaf function, attribute set),
 * sorted, as text into out. */
static void attr_text(const struct pmodel_result *r, char *out, size_t size)
{
	char lines[64][96];
	int64_t sums[64];
	size_t n = 0, len = 0;

	for (size_t i = 0; i < r->attr_rows.n; i++) {
		const struct pmodel_attr_row *a = &r->attr_rows.v[i];
		const struct pmodel_loc *l = &r->dict.locs.v[r->dict.node_loc.v[a->node]];
		const char *f = l->nlines ? pmodel_str(&r->dict.str,
					     r->dict.funcs.v[r->dict.lines.v[l->line_off].func].name)
					  : "?";
		char line[96];
		size_t k;

		snprintf(line, sizeof(line), "%s %s", f, pmodel_str(&r->attr_str, a->attrs));
		for (k = 0; k < n && strcmp(lines[k], line); k++)
			;
		if (k == n && n < 64) {
			memcpy(lines[n], line, sizeof(line));
			sums[n++] = 0;
		}
		if (k < n)
			sums[k] += a->value;
	}
	out[0] = '\0';
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			if (strcmp(lines[j], lines[i]) < 0) {
				char t[96];
				int64_t v = sums[i];

				memcpy(t, lines[i], sizeof(t));
				memcpy(lines[i], lines[j], sizeof(t));
				memcpy(lines[j], t, sizeof(t));
				sums[i] = sums[j];
				sums[j] = v;
			}
	for (size_t i = 0; i < n && len < size; i++)
		len += (size_t)snprintf(out + len, size - len, "%s %lld\n", lines[i],
					(long long)sums[i]);
}

/* r as text into out (initialized here): folded stacks, profile count,
 * time span and attributed parts. */
static int result_text(const struct pmodel_result *r, struct ember_buf *out)
{
	char attrs[4096];
	int err;

	ember_buf_init(out, 1 << 20);
	err = pmodel_write_folded(r, pmodel_write_buf, out);
	attr_text(r, attrs, sizeof(attrs));
	if (!err)
		err = ember_buf_appendf(out, "profiles %llu\n", (unsigned long long)r->profiles);
	if (!err && r->profiles)
		err = ember_buf_appendf(out, "span %lld %lld\n", (long long)r->min_time,
				       (long long)r->max_time);
	if (!err)
		err = ember_buf_appendf(out, "%s", attrs);
	return err;
}

/* What one block answers for selector over [from, to), as text. */
static int block_answer(struct pstore *s, struct pstore_block *b, const char *selector,
			int64_t from, int64_t to, struct ember_buf *out)
{
	struct pstore_selection sel = { .selector = selector, .type = CPU };
	char why[256] = "";
	struct ember_diag d = ember_diag_make(why, sizeof(why));
	struct pstore_selector *parsed = NULL;
	struct pstore_qctx q = { .type = CPU, .from = from, .to = to, .cache = &s->cache, .d = &d };
	int err = pstore_selection_parse(&sel, &parsed, &d);

	q.sel = parsed;
	if (!err)
		err = pmodel_result_new(CPU, &q.r);
	if (!err)
		err = pstore_block_query(b, &q);
	if (!err)
		err = result_text(q.r, out);
	else
		ember_buf_init(out, 0);
	if (err)
		fprintf(stderr, "block query: %s\n", why[0] ? why : strerror(-err));
	pmodel_result_free(q.r);
	pstore_qctx_release_stacks(&q);
	pstore_selector_free(parsed);
	return err;
}

/* What the store answers for selector over [from, to), as text; with
 * full, from its blocks alone.  *read: the profiles it read. */
static int store_answer(struct pstore *s, const char *selector, int64_t from, int64_t to,
			bool full, struct ember_buf *out, uint64_t *read)
{
	struct pstore_selection sel = { .selector = selector, .type = "cpu", .from_ns = from,
					.to_ns = to, .full_resolution = full };
	struct pmodel_result *r = NULL;
	struct pstore_stats a, b;
	char why[256] = "";
	int err;

	pstore_stats(s, &a);
	err = pstore_query(s, &sel, NULL, &r, why, sizeof(why));
	pstore_stats(s, &b);
	*read = b.profiles_read - a.profiles_read;
	if (!err)
		err = result_text(r, out);
	else
		ember_buf_init(out, 0);
	if (!err && r->rollup_only_step)
		err = ember_buf_appendf(out, "rollups only, step %lld\n",
				       (long long)r->rollup_only_step);
	if (err)
		fprintf(stderr, "pstore_query: %s\n", why[0] ? why : strerror(-err));
	pmodel_result_free(r);
	return err;
}

/* Whether the texts a (of full resolution) and b (of the rollups) are
 * the same: -1, and both shown, when they are not. */
static int same_text(const struct ember_buf *a, const struct ember_buf *b, const char *what,
		     int64_t from, int64_t to, const char *selector)
{
	if (a->len == b->len && (!a->len || !memcmp(a->data, b->data, a->len)))
		return 0;
	fprintf(stderr, "%s differs over [%lld, %lld) %s:\n--- full\n%.*s--- rollups\n%.*s", what,
		(long long)from, (long long)to, selector ? selector : "", (int)a->len, a->data,
		(int)b->len, b->data);
	return -1;
}

/* The rollup's answer and the block's for [from, to): the same. */
static int same_answer(struct pstore *s, struct pstore_block *full, struct pstore_block *roll,
		       const char *selector, int64_t from, int64_t to)
{
	struct ember_buf a, b;
	int err = block_answer(s, full, selector, from, to, &a);

	if (!err && !(err = block_answer(s, roll, selector, from, to, &b))) {
		err = same_text(&a, &b, "rollup", from, to, selector);
		ember_buf_release(&b);
	}
	ember_buf_release(&a);
	return err;
}

/* The store's only block (referenced). */
static struct pstore_block *only_block(struct pstore *s)
{
	struct pstore_block *b = NULL;

	pthread_mutex_lock(&s->mu);
	if (s->blocks.n == 1)
		b = pstore_block_ref(s->blocks.v[0]);
	pthread_mutex_unlock(&s->mu);
	return b;
}

/* A partition of three series' random profiles, merged into one block:
 * its rollups at 1 and 10 minutes answer every bucket, and the whole
 * hour, as the block does. */
static int test_pstore_rollup__sums_equal_full_merge_of_each_bucket(void)
{
	static const char *const sel[] = { NULL, "{service=\"a\"}", "{service=~\"b|c\"}" };
	static const int64_t steps[] = { 60 * SEC, 600 * SEC };
	struct pstore *s = fresh_store();
	int64_t part = pstore_rollup_bucket(T0 - 3 * HOUR, HOUR);
	struct pstore_block *full = NULL;
	char why[256] = "";
	struct ember_diag d = ember_diag_make(why, sizeof(why));

	CHECK(s);
	for (int i = 0; i < 240; i++) {
		static const char *const svc[] = { "a", "b", "c" };

		CHECK_INT(append_at(s, svc[next(3)], part + (int64_t)next(3600) * SEC + next(1000)),
			  ==, 0);
		if (i == 120)
			CHECK_INT(pstore_flush(s), ==, 0);
	}
	CHECK_INT(pstore_flush(s), ==, 0);
	CHECK_INT(pstore_compact(s), ==, 0);
	CHECK((full = only_block(s)));
	CHECK_INT(full->meta.profiles, ==, 240);
	for (size_t k = 0; k < 2; k++) {
		struct pstore_block *roll = NULL;

		CHECK_INT(pstore_rollup_build(s, &full, 1, steps[k], &roll, &d), ==, 0);
		CHECK(roll && !roll->corrupt);
		CHECK(!strncmp(roll->name, "rollups/", 8));
		CHECK_INT(roll->meta.rollup_step, ==, steps[k]);
		CHECK_INT(roll->meta.rollup_profiles, ==, 240);
		CHECK_INT(roll->meta.sources.n, ==, 1);
		CHECK_STR(roll->meta.sources.v[0], full->name);
		CHECK_INT(roll->meta.wal.n, ==, 0);
		CHECK_INT(roll->meta.parents.n, ==, 0);
		CHECK_INT(roll->meta.profiles, <=, 3 * (HOUR / steps[k]));
		CHECK_INT(roll->meta.profiles, <, 240);
		for (int64_t b = part; b < part + HOUR; b += steps[k])
			for (size_t j = 0; j < 3; j++)
				CHECK_INT(same_answer(s, full, roll, sel[j], b, b + steps[k]), ==, 0);
		for (size_t j = 0; j < 3; j++)
			CHECK_INT(same_answer(s, full, roll, sel[j], part, part + HOUR), ==, 0);
		pstore_block_unref(roll);
	}
	pstore_block_unref(full);
	pstore_free(s);
	remove_dir();
	return 0;
}

/* A step that does not divide the partition is refused; a bucket's
 * start is a multiple of the step, before the epoch too. */
static int test_pstore_rollup__step_divides_partition(void)
{
	struct pstore *s = fresh_store();
	int64_t part = pstore_rollup_bucket(T0 - 3 * HOUR, HOUR);
	struct pstore_block *full = NULL, *roll = NULL;
	char why[256] = "";
	struct ember_diag d = ember_diag_make(why, sizeof(why));

	CHECK(s);
	CHECK_INT(pstore_rollup_bucket(125, 60), ==, 120);
	CHECK_INT(pstore_rollup_bucket(-1, 60), ==, -60);
	CHECK_INT(pstore_rollup_bucket(-60, 60), ==, -60);
	CHECK_INT(append_at(s, "a", part + 10 * SEC), ==, 0);
	CHECK_INT(pstore_flush(s), ==, 0);
	CHECK((full = only_block(s)));
	CHECK_INT(pstore_rollup_build(s, &full, 1, 7 * SEC, &roll, &d), ==, -EINVAL);
	CHECK(strstr(why, "does not divide"));
	CHECK(!roll);
	pstore_block_unref(full);
	pstore_free(s);
	remove_dir();
	return 0;
}

/* The ROLLUP section is checked: a count of profiles that is not the
 * block's, a profile summing none, or a last time past the step is a
 * corrupt rollup. */
static int test_pstore_rollup__section_checked(void)
{
	struct pstore_block_meta m = { .partition_ns = HOUR };
	struct pstore_bdata bd = { 0 };
	struct pstore_prof p = { .time = 100 };
	struct ember_buf b;
	char why[256] = "";
	struct ember_diag d = ember_diag_make(why, sizeof(why));
	static const struct {
		uint64_t total, n, count, span;
		int want;
	} cases[] = { { 3, 1, 3, 59, 0 },	 { 3, 2, 3, 59, -PSTORE_ERR_CORRUPT },
		      { 0, 1, 0, 5, -PSTORE_ERR_CORRUPT }, { 2, 1, 2, 60, -PSTORE_ERR_CORRUPT },
		      { 4, 1, 3, 59, -PSTORE_ERR_CORRUPT } };

	CHECK_INT(EMBER_VEC_APPEND(&bd.profs, p), ==, 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ember_buf_init(&b, 1024);
		CHECK_INT(ember_buf_put_uleb(&b, 60), ==, 0); /* step */
		CHECK_INT(ember_buf_put_uleb(&b, cases[i].total), ==, 0);
		CHECK_INT(ember_buf_put_uleb(&b, 1), ==, 0);
		CHECK_INT(ember_buf_put_lenbytes(&b, "blocks/x.pblk", 13), ==, 0);
		CHECK_INT(ember_buf_put_uleb(&b, cases[i].n), ==, 0);
		CHECK_INT(ember_buf_put_uleb(&b, cases[i].count), ==, 0);
		CHECK_INT(ember_buf_put_uleb(&b, cases[i].span), ==, 0);
		CHECK_INT(pstore_block_decode_rollup((const uint8_t *)b.data, b.len, &m, NULL, &d),
			  ==, 0);
		CHECK_INT(m.rollup_step, ==, 60);
		CHECK_INT(m.sources.n, ==, 1 + i);
		bd.rollup.n = 0;
		CHECK_INT(pstore_block_decode_rollup((const uint8_t *)b.data, b.len, &m, &bd, &d),
			  ==, cases[i].want);
		if (!cases[i].want)
			CHECK_INT(bd.rollup.v[0].last, ==, 159);
		ember_buf_release(&b);
	}
	/* a step longer than the partition */
	ember_buf_init(&b, 64);
	CHECK_INT(ember_buf_put_uleb(&b, 2 * HOUR), ==, 0);
	CHECK_INT(ember_buf_put_uleb(&b, 0), ==, 0);
	CHECK_INT(ember_buf_put_uleb(&b, 0), ==, 0);
	CHECK_INT(pstore_block_decode_rollup((const uint8_t *)b.data, b.len, &m, NULL, &d), ==,
		  -PSTORE_ERR_CORRUPT);
	ember_buf_release(&b);
	pstore_block_meta_release(&m);
	EMBER_VEC_FREE(&bd.profs);
	EMBER_VEC_FREE(&bd.rollup);
	return 0;
}

/* The number of files in dir/sub. */
static int files_in(const char *sub)
{
	char path[600];
	DIR *dp;
	struct dirent *e;
	int n = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, sub);
	if (!(dp = opendir(path)))
		return 0;
	while ((e = readdir(dp)))
		n += e->d_name[0] != '.';
	closedir(dp);
	return n;
}

/* Whether every rollup of s was built from its only block. */
static bool rollups_current(struct pstore *s)
{
	bool ok;

	pthread_mutex_lock(&s->mu);
	ok = s->blocks.n == 1;
	for (size_t i = 0; ok && i < s->rollups.n; i++)
		ok = s->rollups.v[i]->meta.sources.n == 1 &&
		     !strcmp(s->rollups.v[i]->meta.sources.v[0], s->blocks.v[0]->name);
	pthread_mutex_unlock(&s->mu);
	return ok;
}

/* A closed partition held by one block gets a rollup a step (1 minute and
 * 1 hour by default), once: a second pass or a reopen builds none; a late
 * profile merged into the partition replaces both, the old ones deleted
 * (local; old ones a crash left are deleted at the next open) or
 * superseded in the index (shared, where another replica reads them). */
static int builds_and_replaces(const char *replica)
{
	int64_t part = pstore_rollup_bucket(T0 - 3 * HOUR, HOUR);
	struct pstore *s;
	struct pstore_stats st;
	char cmd[1200];

	fake_now = T0;
	CHECK(!make_dir());
	CHECK((s = open_replica(NULL, replica)));
	for (int i = 0; i < 20; i++)
		CHECK_INT(append_at(s, "a", part + i * 3 * MIN), ==, 0);
	CHECK_INT(pstore_flush(s), ==, 0);
	fake_now = part + HOUR + 30 * SEC; /* closed at its end plus a head age */
	CHECK_INT(pstore_compact(s), ==, 0);
	pstore_stats(s, &st);
	CHECK_INT(st.rollups, ==, 0);
	fake_now = T0;
	CHECK_INT(pstore_compact(s), ==, 0);
	pstore_stats(s, &st);
	CHECK_INT(st.rollups, ==, 2);
	CHECK_INT(st.rollups_built, ==, 2);
	CHECK_INT(st.rollup_bytes, >, 0);
	CHECK(rollups_current(s));
	CHECK_INT(pstore_compact(s), ==, 0);
	pstore_stats(s, &st);
	CHECK_INT(st.rollups_built, ==, 2);
	if (!replica) { /* the replaced rollups, to put back as a crash would leave them */
		snprintf(cmd, sizeof(cmd), "cp -r '%s/rollups' '%s/old-rollups'", dir, dir);
		CHECK_INT(system(cmd), ==, 0);
	}
	/* a late profile: merged, rollups replaced */
	CHECK_INT(append_at(s, "a", part + 59 * MIN), ==, 0);
	CHECK_INT(pstore_flush(s), ==, 0);
	CHECK_INT(pstore_compact(s), ==, 0);
	pstore_stats(s, &st);
	CHECK_INT(st.blocks, ==, 1);
	CHECK_INT(st.rollups, ==, 2);
	CHECK_INT(st.rollups_built, ==, 4);
	CHECK_INT(st.rollup_drops, ==, 2);
	CHECK(rollups_current(s));
	if (!replica) {
		CHECK_INT(files_in("rollups"), ==, 2);
		snprintf(cmd, sizeof(cmd), "cp '%s/old-rollups/'* '%s/rollups/'", dir, dir);
		CHECK_INT(system(cmd), ==, 0);
		CHECK_INT(files_in("rollups"), ==, 4);
	}
	pstore_free(s);
	CHECK((s = open_replica(NULL, replica ? "other" : NULL)));
	pstore_stats(s, &st);
	CHECK_INT(st.rollups, ==, 2); /* the leftovers deleted at open */
	if (!replica)
		CHECK_INT(files_in("rollups"), ==, 2);
	CHECK(rollups_current(s));
	CHECK_INT(pstore_compact(s), ==, 0);
	pstore_stats(s, &st);
	CHECK_INT(st.rollups_built, ==, 0);
	pstore_free(s);
	remove_dir();
	return 0;
}

static int test_pstore_rollup__compaction_builds_and_replaces(void)
{
	return builds_and_replaces(NULL);
}

static int test_pstore_rollup__shared_store_lists_rollups_in_index(void)
{
	return builds_and_replaces("a");
}

/* Blocks of full resolution are kept --retention, rollups
 * --rollup-retention: past the first, only the rollups are left, and a
 * profile older than the retention arriving then never replaces them. */
static int test_pstore_rollup__retention_per_tier(void)
{
	struct pstore_opts o = test_opts();
	int64_t part = pstore_rollup_bucket(T0 - 3 * HOUR, HOUR);
	struct pstore *s;
	struct pstore_stats st;
	struct ember_buf before, after;
	uint64_t read;

	o.retention_ns = 24 * HOUR;
	o.rollup_retention_ns = 72 * HOUR;
	fake_now = T0;
	CHECK(!make_dir());
	CHECK((s = open_replica(&o, NULL)));
	for (int i = 0; i < 10; i++)
		CHECK_INT(append_at(s, "a", part + i * 5 * MIN), ==, 0);
	CHECK_INT(pstore_flush(s), ==, 0);
	CHECK_INT(pstore_compact(s), ==, 0);
	pstore_stats(s, &st);
	CHECK_INT(st.blocks, ==, 1);
	CHECK_INT(st.rollups, ==, 2);
	CHECK_INT(store_answer(s, NULL, part, part + HOUR, true, &before, &read), ==, 0);
	fake_now = T0 + 48 * HOUR;
	CHECK_INT(pstore_compact(s), ==, 0);
	pstore_stats(s, &st);
	CHECK_INT(st.blocks, ==, 0);
	CHECK_INT(st.rollups, ==, 2);
	/* answered from the rollups alone, and said so; a range that does
	 * not start on a minute rounded in to the next */
	CHECK_INT(store_answer(s, NULL, part, part + HOUR, false, &after, &read), ==, 0);
	CHECK_INT(ember_buf_appendf(&before, "rollups only, step %lld\n", (long long)MIN), ==, 0);
	CHECK_STR(after.data, before.data);
	ember_buf_release(&after);
	CHECK_INT(store_answer(s, NULL, part + 5 * MIN + 1, part + HOUR, false, &after, &read), ==, 0);
	CHECK(strstr(after.data, "profiles 8\n"));
	ember_buf_release(&after);
	ember_buf_release(&before);
	CHECK_INT(append_at(s, "a", part + 7 * MIN), ==, 0);
	CHECK_INT(pstore_flush(s), ==, 0);
	CHECK_INT(pstore_compact(s), ==, 0);
	pstore_stats(s, &st);
	CHECK_INT(st.blocks, ==, 0);
	CHECK_INT(st.rollups, ==, 2);
	CHECK_INT(st.rollups_built, ==, 2);
	fake_now = T0 + 96 * HOUR;
	CHECK_INT(pstore_compact(s), ==, 0);
	pstore_stats(s, &st);
	CHECK_INT(st.rollups, ==, 0);
	CHECK_INT(files_in("rollups"), ==, 0);
	pstore_free(s);
	remove_dir();
	return 0;
}

/* no_rollups: none built. */
static int test_pstore_rollup__none_when_off(void)
{
	struct pstore_opts o = test_opts();
	struct pstore *s;
	struct pstore_stats st;

	o.no_rollups = true;
	fake_now = T0;
	CHECK(!make_dir());
	CHECK((s = open_replica(&o, NULL)));
	CHECK_INT(append_at(s, "a", T0 - 3 * HOUR), ==, 0);
	CHECK_INT(pstore_flush(s), ==, 0);
	CHECK_INT(pstore_compact(s), ==, 0);
	pstore_stats(s, &st);
	CHECK_INT(st.blocks, ==, 1);
	CHECK_INT(st.rollups, ==, 0);
	pstore_free(s);
	remove_dir();
	return 0;
}

/* The planned answer and the full-resolution one for [from, to): the
 * same; the profiles each read added to *planned and *full. */
static int same_planned(struct pstore *s, const char *selector, int64_t from, int64_t to,
			uint64_t *planned, uint64_t *full)
{
	struct ember_buf a, b;
	uint64_t ra = 0, rb = 0;
	int err = store_answer(s, selector, from, to, true, &a, &ra);

	if (!err && !(err = store_answer(s, selector, from, to, false, &b, &rb))) {
		err = same_text(&a, &b, "planned answer", from, to, selector);
		ember_buf_release(&b);
	}
	ember_buf_release(&a);
	*planned += rb;
	*full += ra;
	return err;
}

/* The series line of selector over [from, to) at step, grouped by
 * service, as text (lines are in order of first appearance: sorted
 * here by their label); *read: the profiles it read. */
static int series_text(struct pstore *s, const char *selector, int64_t from, int64_t to,
		       int64_t step, bool full, struct ember_buf *out, uint64_t *read)
{
	static const char *const by[] = { "service" };
	struct pstore_selection sel = { .selector = selector, .type = "cpu", .from_ns = from,
					.to_ns = to, .full_resolution = full };
	struct pstore_series_set *set = NULL;
	struct pstore_stats a, b;
	char why[256] = "";
	int err;

	ember_buf_init(out, 1 << 20);
	pstore_stats(s, &a);
	err = pstore_series_totals(s, &sel, step, by, 1, &set, why, sizeof(why));
	pstore_stats(s, &b);
	*read = b.profiles_read - a.profiles_read;
	for (const char *v = "a"; !err && *v <= 'c'; v = *v == 'a' ? "b" : *v == 'b' ? "c" : "d")
		for (size_t i = 0; !err && i < set->n_lines; i++) {
			if (strcmp(set->lines[i].labels[0].value, v))
				continue;
			err = ember_buf_appendf(out, "%s:", v);
			for (size_t k = 0; !err && k < set->n_points; k++)
				if (set->lines[i].counts[k])
					err = ember_buf_appendf(out, " %zu=%lld/%u", k,
							       (long long)set->lines[i].values[k],
							       set->lines[i].counts[k]);
			err = err ? err : ember_buf_appendf(out, "\n");
		}
	if (!err && set->rollup_only_step)
		err = ember_buf_appendf(out, "rollups only\n");
	if (err)
		fprintf(stderr, "pstore_series_totals: %s\n", why[0] ? why : strerror(-err));
	pstore_series_set_free(set);
	return err;
}

/* The planned series line and the full-resolution one: the same. */
static int same_series(struct pstore *s, const char *selector, int64_t from, int64_t to,
		       int64_t step, uint64_t *planned, uint64_t *full)
{
	struct ember_buf a, b;
	uint64_t ra = 0, rb = 0;
	int err = series_text(s, selector, from, to, step, true, &a, &ra);

	if (!err && !(err = series_text(s, selector, from, to, step, false, &b, &rb))) {
		err = same_text(&a, &b, step >= HOUR ? "series (hour step)" : "series", from, to,
				selector);
		ember_buf_release(&b);
	}
	ember_buf_release(&a);
	*planned += rb;
	*full += ra;
	return err;
}

/* A random time in [lo, hi): on a minute or an hour now and then, else
 * anywhere (to the nanosecond). */
static int64_t random_time(int64_t lo, int64_t hi)
{
	int64_t t = lo + (int64_t)(((uint64_t)next(UINT32_MAX) << 20 | next(1 << 20)) %
				   (uint64_t)(hi - lo));

	switch (next(4)) {
	case 0:
		return pstore_rollup_bucket(t, MIN);
	case 1:
		return pstore_rollup_bucket(t, HOUR);
	default:
		return t;
	}
}

/* Six hours of three series' profiles, merged and rolled up (a series
 * line at a step of an hour then reads rollups alone), plus a late
 * profile still in the log (its partition's rollups stay usable: heads
 * are never in a block) and one written as a second block of its
 * partition (whose rollups then do not answer until it is merged): over
 * 300 random ranges, starting and ending anywhere, the planned answer
 * is the full-resolution answer and reads less than half the profiles;
 * and so are 100 series lines at random steps. */
/* A partition of one framed block (version 3) whose range covers more
 * than half its hour is answered by the hour's rollup less the block's
 * profiles outside the range: 60 profiles read for 301 (1 + 1 + 58), 61
 * for 300; one covering less by the minute rollups for its whole minutes
 * and the block's frames at its edges off the minute (19 + 5 + 2); each
 * answer the full-resolution one. */
static int test_pstore_rollup__edges_read_little(void)
{
	int64_t part = pstore_rollup_bucket(T0 - 3 * HOUR, HOUR);
	static const int64_t range[][2] = { { 10 * SEC, 50 * MIN + 20 * SEC },
					    { MIN, 51 * MIN },
					    { 10 * SEC, 20 * MIN + 20 * SEC } };
	static const uint64_t want[][2] = { { 301, 60 }, { 300, 61 }, { 121, 26 } };
	struct pstore *s = fresh_store();

	CHECK(s);
	for (int i = 0; i < 360; i++) /* one series, a profile every 10 s */
		CHECK_INT(append_at(s, "a", part + i * 10 * SEC), ==, 0);
	CHECK_INT(pstore_flush(s), ==, 0);
	CHECK_INT(pstore_compact(s), ==, 0);
	for (size_t i = 0; i < sizeof(range) / sizeof(range[0]); i++) {
		uint64_t planned = 0, full = 0;

		CHECK_INT(same_planned(s, NULL, part + range[i][0], part + range[i][1], &planned,
				       &full), ==, 0);
		CHECK_INT(full, ==, want[i][0]);
		CHECK_INT(planned, ==, want[i][1]);
	}
	pstore_free(s);
	return 0;
}

/* Profiles without attributes: a bucket less a block's profiles is
 * taken off by stack key before it is added (no stack ever at 0 in the
 * result): over 200 random ranges that cover more than half of the hours
 * at their edges, the planned answer is the full-resolution one, and
 * reads less than a fifth of its profiles. */
static int test_pstore_rollup__edges_taken_off_by_key(void)
{
	int64_t start = pstore_rollup_bucket(T0 - 8 * HOUR, HOUR);
	uint64_t planned = 0, full = 0;
	struct pstore *s = fresh_store();
	struct pstore_stats st;

	CHECK(s);
	for (int i = 0; i < 720; i++) {
		static const char *const svc[] = { "a", "b", "c" };

		CHECK_INT(append_random(s, svc[i % 3], start + i * 20 * SEC + next(1000) * MS, false),
			  ==, 0);
	}
	CHECK_INT(pstore_flush(s), ==, 0);
	CHECK_INT(pstore_compact(s), ==, 0);
	for (int i = 0; i < 200; i++) {
		int64_t from = start + next(4) * HOUR + next(1800) * SEC;
		int64_t to = start + (next(4) + 4) * HOUR - next(1800) * SEC;

		CHECK_INT(same_planned(s, i % 2 ? "{service=\"b\"}" : NULL, from, to, &planned,
				       &full), ==, 0);
	}
	CHECK_INT(planned * 5, <, full);
	pstore_stats(s, &st);
	CHECK_INT(st.zero_drops, ==, 0); /* every bucket taken off by key */
	pstore_free(s);
	remove_dir();
	return 0;
}

/* store_answer, *bytes the row stream bytes the query read. */
static int answer_read(struct pstore *s, int64_t from, int64_t to, bool full,
		       struct ember_buf *out, uint64_t *bytes)
{
	struct pstore_stats a, b;
	uint64_t read;
	int err;

	pstore_stats(s, &a);
	err = store_answer(s, NULL, from, to, full, out, &read);
	pstore_stats(s, &b);
	*bytes = b.rows_bytes_read - a.rows_bytes_read;
	return err;
}

/* The rollups of an hour and coarser hold a profile or a few a series:
 * their rows are decompressed once, when their data is loaded, so a
 * range of whole hours reads no row bytes at all, where its full
 * resolution reads the blocks' (and answers the same); a range with an
 * edge off the hour reads the edge's frames alone. */
static int test_pstore_rollup__coarse_rows_decoded_at_load(void)
{
	int64_t start = pstore_rollup_bucket(T0 - 8 * HOUR, HOUR);
	struct pstore *s = fresh_store();
	struct ember_buf full, planned;
	uint64_t fb, pb;

	CHECK(s);
	for (int i = 0; i < 3 * 360; i++) {
		static const char *const svc[] = { "a", "b", "c" };

		CHECK_INT(append_random(s, svc[i % 3], start + i * 20 * SEC, false), ==, 0);
	}
	CHECK_INT(pstore_flush(s), ==, 0);
	CHECK_INT(pstore_compact(s), ==, 0);
	for (int pass = 0; pass < 2; pass++) { /* loaded by the first, kept */
		CHECK_INT(answer_read(s, start + HOUR, start + 5 * HOUR, true, &full, &fb), ==, 0);
		CHECK_INT(answer_read(s, start + HOUR, start + 5 * HOUR, false, &planned, &pb),
			  ==, 0);
		CHECK(!same_text(&full, &planned, "whole hours", start + HOUR, start + 5 * HOUR,
				 "{}"));
		CHECK_INT(fb, >, 0);
		CHECK_INT(pb, ==, 0);
		ember_buf_release(&full);
		ember_buf_release(&planned);
	}
	CHECK_INT(answer_read(s, start + HOUR + 7 * SEC, start + 5 * HOUR, true, &full, &fb), ==,
		  0);
	CHECK_INT(answer_read(s, start + HOUR + 7 * SEC, start + 5 * HOUR, false, &planned, &pb),
		  ==, 0);
	CHECK(!same_text(&full, &planned, "an edge", start + HOUR + 7 * SEC, start + 5 * HOUR,
			 "{}"));
	CHECK_INT(pb, >, 0);
	CHECK_INT(pb * 10, <, fb);
	ember_buf_release(&full);
	ember_buf_release(&planned);
	pstore_free(s);
	remove_dir();
	return 0;
}

static int test_pstore_rollup__planned_equals_full_over_random_ranges(void)
{
	static const char *const sel[] = { NULL, "{service=\"a\"}", "{service=~\"b|c\"}" };
	int64_t start = pstore_rollup_bucket(T0 - 8 * HOUR, HOUR), end = start + 6 * HOUR;
	uint64_t planned = 0, full = 0, p6 = 0, f6 = 0;
	struct pstore *s = fresh_store();
	struct pstore_stats st;

	CHECK(s);
	for (int i = 0; i < 720; i++) {
		static const char *const svc[] = { "a", "b", "c" };

		CHECK_INT(append_at(s, svc[i % 3], start + i * 30 * SEC + next(1000) * MS), ==, 0);
		if (i % 100 == 99)
			CHECK_INT(pstore_flush(s), ==, 0);
	}
	CHECK_INT(pstore_flush(s), ==, 0);
	CHECK_INT(pstore_compact(s), ==, 0);
	pstore_stats(s, &st);
	CHECK_INT(st.blocks, ==, 6);
	/* and one of 6 hours: 14:00 to 18:00 in its 12:00 UTC span */
	CHECK_INT(st.rollups, ==, 12 + 1);
	/* a series line at a step of an hour reads the hour rollups alone */
	CHECK_INT(same_series(s, NULL, start, end, HOUR, &p6, &f6), ==, 0);
	CHECK_INT(f6, ==, 720);
	CHECK_INT(p6, ==, 6 * 3);
	p6 = f6 = 0;
	CHECK_INT(append_at(s, "b", start + 2 * HOUR + 17 * MIN + 3 * SEC), ==, 0);
	CHECK_INT(pstore_flush(s), ==, 0); /* a second block in hour 2 */
	CHECK_INT(append_at(s, "a", start + 4 * HOUR + 5 * SEC), ==, 0); /* in the log */
	/* the whole six hours: 5 x 3 hour sums and hour 2, not 721 profiles
	 * (the one in the log is read from it either way) */
	CHECK_INT(same_planned(s, NULL, start, end, &p6, &f6), ==, 0);
	CHECK_INT(f6, ==, 721);
	CHECK_INT(p6, ==, 5 * 3 + 121); /* hour 2 from its two blocks */
	for (int i = 0; i < 300; i++) {
		int64_t from = random_time(start - 20 * MIN, end + 20 * MIN);
		int64_t to = random_time(from + 1, from + 7 * HOUR);

		to = to > from ? to : from + MIN; /* rounded down below from */

		CHECK_INT(same_planned(s, sel[next(3)], from, to, &planned, &full), ==, 0);
	}
	CHECK_INT(planned * 2, <, full);
	pstore_stats(s, &st);
	CHECK_INT(st.zero_drops, >, 0); /* rows with attributes: zeros dropped after */
	/* series lines at steps of a minute, five, an hour and two hours,
	 * from any time: rollups only where their buckets fall in the points */
	planned = full = 0;
	for (int i = 0; i < 100; i++) {
		static const int64_t steps[] = { MIN, 5 * MIN, HOUR, 2 * HOUR };
		int64_t from = random_time(start - 20 * MIN, end + 20 * MIN);
		int64_t to = random_time(from + 1, from + 7 * HOUR);

		to = to > from ? to : from + MIN; /* rounded down below from */

		CHECK_INT(same_series(s, sel[next(3)], from, to, steps[next(4)], &planned, &full),
			  ==, 0);
	}
	CHECK_INT(planned, <, full);
	pstore_free(s);
	remove_dir();
	return 0;
}

/* The rollups of s spanning len (the partition rollups' rollups),
 * counted. */
static size_t span_rollups(struct pstore *s, int64_t len)
{
	size_t n = 0;

	pthread_mutex_lock(&s->mu);
	for (size_t i = 0; i < s->rollups.n; i++)
		n += s->rollups.v[i]->meta.partition_ns == len &&
		     s->rollups.v[i]->meta.rollup_step == len;
	pthread_mutex_unlock(&s->mu);
	return n;
}

/* Three days and a half of three series' profiles (one every 10 minutes
 * each, from 20:00 UTC): each past day gets a day rollup (the first of
 * its 4 hours) and each past 6 UTC hours one of 6 hours (the first: 20:00
 * to 24:00; the last: 00:00 to 06:00 of the fifth day), built from their
 * hours', summing every profile of their span once; ranges over them,
 * aligned or not, answer as full resolution does, a range of the whole
 * reads the days' sums and 24 hours not on a day the 6 hours' within it;
 * a late profile makes its day's and its 6 hours' rollups stale (not
 * used: the answers stay exact) until compaction replaces them; the
 * rollup retention drops them whole.  In a shared store, through the
 * block index: another replica reads them. */
static int day_rollups_answer(const char *replica)
{
	static const char *const sel[] = { NULL, "{service=\"a\"}", "{service=~\"b|c\"}" };
	int64_t start = pstore_rollup_bucket(T0 - 4 * DAY, DAY) + 20 * HOUR;
	int64_t end = start + 3 * DAY + 12 * HOUR, day1 = start + 4 * HOUR;
	uint64_t planned = 0, full = 0, pw = 0, fw = 0;
	struct pstore *s;
	struct pstore_stats st;

	fake_now = T0;
	CHECK(!make_dir());
	CHECK((s = open_replica(NULL, replica)));
	fake_now = start;
	for (int i = 0; start + i * 200 * SEC < end; i++) {
		static const char *const svc[] = { "a", "b", "c" };

		fake_now = start + i * 200 * SEC;
		CHECK_INT(append_at(s, svc[i % 3], fake_now + next(1000) * MS), ==, 0);
		if (i % 200 == 199)
			CHECK_INT(pstore_flush(s), ==, 0);
	}
	fake_now = end + HOUR;
	CHECK_INT(pstore_flush(s), ==, 0);
	CHECK_INT(pstore_compact(s), ==, 0);
	pstore_stats(s, &st);
	CHECK_INT(st.blocks, ==, 84);
	/* the first day's 4 hours, the next three; the fifth is not past */
	CHECK_INT(span_rollups(s, DAY), ==, 4);
	/* 20:00 to 24:00, 3 days' 4, the fifth day's first */
	CHECK_INT(span_rollups(s, SIX), ==, 1 + 3 * 4 + 1);
	CHECK_INT(st.rollups, ==, 84 * 2 + 4 + 14);
	/* the whole range: 3 days x 3 series, the 4 hours at its start, the
	 * 6 and 2 hours at its end */
	CHECK_INT(same_planned(s, NULL, start, end, &pw, &fw), ==, 0);
	CHECK_INT(fw, ==, 1512);
	CHECK_INT(pw, ==, 3 * 3 + (4 + 1 + 2) * 3);
	/* 24 hours from 14:00: hours 14 to 18, 6 hours to 24:00, two 6 hours
	 * of the next day, hours 12 and 13 (not 24 hours) */
	pw = fw = 0;
	CHECK_INT(same_planned(s, NULL, day1 + DAY + 14 * HOUR, day1 + 2 * DAY + 14 * HOUR, &pw,
			       &fw), ==, 0);
	CHECK_INT(fw, ==, 24 * 18);
	CHECK_INT(pw, ==, (4 + 1 + 2 + 2) * 3);
	/* a late profile in the first whole day: merged into its hour, whose
	 * rollups are rebuilt; the day's is stale and not used */
	CHECK_INT(append_at(s, "b", day1 + 5 * HOUR + 7 * MIN), ==, 0);
	CHECK_INT(pstore_flush(s), ==, 0);
	CHECK_INT(pstore_compact_merge(s), ==, 0);
	CHECK_INT(pstore_compact_rollups(s), ==, 0);
	/* (its other 6 hours answer: 3, and the 6 hours of the late one) */
	pw = fw = 0;
	CHECK_INT(same_planned(s, NULL, start, end, &pw, &fw), ==, 0);
	CHECK_INT(pw, ==, 2 * 3 + (3 + 6) * 3 + (4 + 1 + 2) * 3);
	CHECK_INT(pstore_compact(s), ==, 0);
	CHECK_INT(span_rollups(s, DAY), ==, 4); /* replaced */
	CHECK_INT(span_rollups(s, SIX), ==, 14);
	pw = fw = 0;
	CHECK_INT(same_planned(s, NULL, start, end, &pw, &fw), ==, 0);
	CHECK_INT(fw, ==, 1513);
	CHECK_INT(pw, ==, 3 * 3 + (4 + 1 + 2) * 3);
	if (replica) { /* another replica lists them from the index */
		pstore_free(s);
		CHECK((s = open_replica(NULL, "other")));
		CHECK_INT(span_rollups(s, DAY), ==, 4);
		CHECK_INT(span_rollups(s, SIX), ==, 14);
		pw = fw = 0;
		CHECK_INT(same_planned(s, NULL, start, end, &pw, &fw), ==, 0);
		CHECK_INT(pw, ==, 3 * 3 + (4 + 1 + 2) * 3);
		pw = fw = 0;
		CHECK_INT(same_planned(s, NULL, day1 + DAY + 14 * HOUR,
				       day1 + 2 * DAY + 14 * HOUR, &pw, &fw), ==, 0);
		CHECK_INT(pw, ==, (4 + 1 + 2 + 2) * 3);
	}
	for (int i = 0; i < (replica ? 20 : 200); i++) {
		int64_t from = random_time(start - HOUR, end + HOUR);
		int64_t to = random_time(from + 1, from + 3 * DAY);

		to = to > from ? to : from + MIN;
		if (next(4) == 0) /* on a day now and then */
			from = pstore_rollup_bucket(from, DAY);
		CHECK_INT(same_planned(s, sel[next(3)], from, to, &planned, &full), ==, 0);
	}
	CHECK_INT(planned * 4, <, full);
	planned = full = 0;
	for (int i = 0; i < (replica ? 20 : 200); i++) { /* a day or so */
		int64_t from = random_time(start - HOUR, end + HOUR);
		int64_t to = random_time(from + 1, from + 30 * HOUR);

		to = to > from ? to : from + MIN;
		if (next(3) == 0) /* on 6 hours now and then */
			from = pstore_rollup_bucket(from, SIX);
		CHECK_INT(same_planned(s, sel[next(3)], from, to, &planned, &full), ==, 0);
	}
	CHECK_INT(planned * 3, <, full);
	planned = full = 0;
	for (int i = 0; i < 40; i++) {
		static const int64_t steps[] = { HOUR, SIX, DAY, 2 * DAY };
		int64_t from = random_time(start - HOUR, end + HOUR);
		int64_t to = random_time(from + 1, from + 3 * DAY);

		to = to > from ? to : from + MIN;
		if (next(2) == 0)
			from = pstore_rollup_bucket(from, next(2) ? DAY : SIX);
		CHECK_INT(same_series(s, sel[next(3)], from, to, steps[next(4)], &planned, &full),
			  ==, 0);
	}
	CHECK_INT(planned, <, full);
	fake_now = end + 91 * DAY; /* past the rollup retention: dropped whole */
	CHECK_INT(pstore_compact(s), ==, 0);
	pstore_stats(s, &st);
	CHECK_INT(st.rollups, ==, 0);
	if (!replica)
		CHECK_INT(files_in("rollups"), ==, 0);
	pstore_free(s);
	remove_dir();
	return 0;
}

static int test_pstore_rollup__day_rollups_answer_whole_days(void)
{
	return day_rollups_answer(NULL);
}

static int test_pstore_rollup__day_rollups_shared_through_index(void)
{
	return day_rollups_answer("a");
}

/* The blocks and rollups whose data the store's cache holds. */
/* The blocks the cache holds whole (whole) or as their profiles alone. */
static size_t cached(struct pstore *s, bool whole)
{
	size_t n = 0;

	pthread_mutex_lock(&s->cache.mu);
	for (size_t i = 0; i < s->cache.lru.n; i++) {
		struct pstore_block *b = s->cache.lru.v[i];

		pthread_mutex_lock(&b->mu);
		n += whole ? b->data != NULL : b->profiles != NULL;
		pthread_mutex_unlock(&b->mu);
	}
	pthread_mutex_unlock(&s->cache.mu);
	return n;
}

/* A series line reads profiles' totals, never a dictionary: after one
 * (from blocks and rollups, over whole and partial hours) the cache holds
 * no block whole, only their profiles (a replica's next series line
 * fetches nothing); a flame graph query then loads them whole, in place
 * of their profiles. */
static int test_pstore_rollup__series_reads_no_dictionary(void)
{
	int64_t part = pstore_rollup_bucket(T0 - 4 * HOUR, HOUR);
	struct ember_buf a;
	uint64_t read = 0;
	struct pstore *s = fresh_store();

	CHECK(s);
	for (int i = 0; i < 40; i++)
		CHECK_INT(append_at(s, i % 2 ? "a" : "b", part + i * 3 * MIN), ==, 0);
	CHECK_INT(pstore_flush(s), ==, 0);
	CHECK_INT(pstore_compact(s), ==, 0);
	pstore_free(s);
	CHECK((s = open_store(NULL)));
	CHECK_INT(series_text(s, NULL, part, part + 2 * HOUR, HOUR, false, &a, &read), ==, 0);
	CHECK(strstr(a.data, "a: 0="));
	ember_buf_release(&a);
	CHECK_INT(series_text(s, NULL, part + 7 * SEC, part + HOUR, MIN, true, &a, &read), ==, 0);
	ember_buf_release(&a);
	CHECK_INT(read, >, 0);
	CHECK_INT(cached(s, true), ==, 0);
	CHECK_INT(cached(s, false), >, 0);
	CHECK_INT(store_answer(s, NULL, part, part + HOUR, false, &a, &read), ==, 0);
	ember_buf_release(&a);
	CHECK_INT(cached(s, true), >, 0);
	CHECK_INT(cached(s, true) + cached(s, false), ==, s->cache.lru.n); /* one or the other */
	pstore_free(s);
	remove_dir();
	return 0;
}

static const struct unit_case cases[] = {
	UNIT_CASE(test_pstore_rollup__series_reads_no_dictionary),
	UNIT_CASE(test_pstore_rollup__day_rollups_answer_whole_days),
	UNIT_CASE(test_pstore_rollup__day_rollups_shared_through_index),
	UNIT_CASE(test_pstore_rollup__planned_equals_full_over_random_ranges),
	UNIT_CASE(test_pstore_rollup__edges_read_little),
	UNIT_CASE(test_pstore_rollup__edges_taken_off_by_key),
	UNIT_CASE(test_pstore_rollup__coarse_rows_decoded_at_load),
	UNIT_CASE(test_pstore_rollup__compaction_builds_and_replaces),
	UNIT_CASE(test_pstore_rollup__shared_store_lists_rollups_in_index),
	UNIT_CASE(test_pstore_rollup__retention_per_tier),
	UNIT_CASE(test_pstore_rollup__none_when_off),
	UNIT_CASE(test_pstore_rollup__sums_equal_full_merge_of_each_bucket),
	UNIT_CASE(test_pstore_rollup__step_divides_partition),
	UNIT_CASE(test_pstore_rollup__section_checked),
};

UNIT_MAIN_QUIET(cases)
