/*
 * test_common.c - unit tests of common/: growable arrays, the keyed hash
 * and hash set, hex, JSON string escaping, the parser guards, the log
 * level and the clocks.
 */
#include "common.h"
#include "unit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int test_common__vec_push_grows(void)
{
	uint32_t *v = NULL;
	size_t n = 0, alloc = 0;

	for (uint32_t i = 0; i < 1000; i++)
		CHECK(EMBER_VEC_PUSH(v, n, alloc, i) == 0);
	CHECK_INT(n, ==, 1000);
	CHECK_INT(alloc, >=, 1000);
	for (uint32_t i = 0; i < 1000; i++)
		CHECK_INT(v[i], ==, i);
	free(v);
	return 0;
}

/* A count whose bytes overflow size_t is refused, never a short block. */
static int test_common__vec_overflow_refused(void)
{
	void *data = NULL;
	size_t alloc = 0;

	CHECK_INT(ember_vec_reserve(&data, &alloc, SIZE_MAX / 8 + 1, 8), ==, -E2BIG);
	CHECK(data == NULL && alloc == 0);
	alloc = SIZE_MAX / 16; /* as if that many were there */
	CHECK_INT(ember_vec_grow(&data, &alloc, alloc, 16), ==, -E2BIG);
	CHECK_INT(ember_vec_grow(&data, &alloc, SIZE_MAX, 1), ==, -E2BIG);
	return 0;
}

/* SipHash-1-3: the same input under one key hashes the same, under
 * another key differently; the length is part of the input. */
static int test_common__hash_keyed(void)
{
	struct ember_hash_key a = { 1, 2 }, b = { 1, 3 };
	const char s[] = "symbolizer";

	CHECK(ember_hash(&a, s, sizeof(s) - 1) == ember_hash(&a, s, sizeof(s) - 1));
	CHECK(ember_hash(&a, s, sizeof(s) - 1) != ember_hash(&b, s, sizeof(s) - 1));
	CHECK(ember_hash(&a, s, 3) != ember_hash(&a, s, 4));
	CHECK(ember_hash(&a, "", 0) != ember_hash(&a, "\0", 1));
	CHECK(ember_hash_u64(&a, 7) == ember_hash(&a, &(uint64_t){ 7 }, 8));
	CHECK(ember_hash_key_init(&b) == 0);
	CHECK(b.k0 != 0 || b.k1 != 0);
	return 0;
}

static bool str_eq(const void *ctx, size_t idx, const void *key)
{
	return strcmp(((const char *const *)ctx)[idx], key) == 0;
}

static int test_common__hset_dedups(void)
{
	static const char *words[] = { "a", "b", "c", "a", "b", "d" };
	const char *kept[8];
	size_t nkept = 0;
	struct ember_hset s;

	CHECK(ember_hset_init(&s) == 0);
	CHECK(ember_hset_find(&s, 0, str_eq, kept, "a") == SIZE_MAX);
	for (size_t i = 0; i < 6; i++) {
		uint64_t h = ember_hash(&s.key, words[i], strlen(words[i]));

		if (ember_hset_find(&s, h, str_eq, kept, words[i]) != SIZE_MAX)
			continue;
		kept[nkept] = words[i];
		CHECK(ember_hset_insert(&s, h, nkept++) == 0);
	}
	CHECK_INT(nkept, ==, 4);
	CHECK_INT(ember_hset_find(&s, ember_hash(&s.key, "d", 1), str_eq, kept, "d"), ==, 3);
	ember_hset_clear(&s); /* empty, its slots kept */
	CHECK(s.mask && s.used == 0);
	CHECK(ember_hset_find(&s, ember_hash(&s.key, "d", 1), str_eq, kept, "d") == SIZE_MAX);
	ember_hset_release(&s);
	ember_hset_release(NULL);
	return 0;
}

/* Growing keeps every element findable (positions come from the kept
 * hash bits, nothing is hashed again). */
static int test_common__hset_grows(void)
{
	enum { N = 100000 };
	uint64_t *keys = malloc(N * sizeof(*keys));
	struct ember_hset s;

	CHECK(keys && ember_hset_init(&s) == 0);
	for (size_t i = 0; i < N; i++) {
		keys[i] = i * 0x9e3779b97f4a7c15ull;
		CHECK(ember_hset_insert(&s, ember_hash_u64(&s.key, keys[i]), i) == 0);
	}
	CHECK_INT(s.used, ==, N);
	CHECK_INT(s.mask + 1, >=, 2 * N);
	for (size_t i = 0; i < N; i += 97) {
		size_t got = SIZE_MAX;
		uint64_t h = ember_hash_u64(&s.key, keys[i]);

		for (size_t j = h & s.mask; s.slots[j].idx1; j = (j + 1) & s.mask)
			if (keys[s.slots[j].idx1 - 1] == keys[i])
				got = s.slots[j].idx1 - 1;
		CHECK_INT(got, ==, i);
	}
	CHECK_INT(ember_hset_insert(&s, 0, UINT32_MAX - 1), ==, -E2BIG);
	ember_hset_release(&s);
	free(keys);
	return 0;
}

static int test_common__hex(void)
{
	char out[17], id[9];

	ember_hex_encode((const uint8_t[]){ 0x00, 0xab, 0x10, 0xff }, 4, id);
	CHECK_STR(id, "00ab10ff");
	CHECK_INT(ember_hex_u64(0, out), ==, 1);
	CHECK_STR(out, "0");
	CHECK_INT(ember_hex_u64(0x4c3a0, out), ==, 5);
	CHECK_STR(out, "4c3a0");
	CHECK_INT(ember_hex_u64(UINT64_MAX, out), ==, 16);
	CHECK_STR(out, "ffffffffffffffff");
	CHECK_INT(ember_build_id_to_hex((const uint8_t *)"", EMBER_BUILD_ID_MAX + 1, out),
		  ==, -E2BIG);
	return 0;
}

/* An options struct as a caller built against an older header passes it:
 * the fields past its sz are not read, whatever the memory holds. */
struct opts_v2 {
	size_t sz;
	int a;
	const char *b;
};

static int test_common__opts_size(void)
{
	struct opts_v2 full = { .sz = sizeof(full), .a = 7, .b = "b" };
	struct opts_v2 old = { .sz = offsetof(struct opts_v2, b), .a = 7, .b = "junk" };
	const struct opts_v2 *none = NULL, *o = &old, *f = &full;

	CHECK(EMBER_OPTS_HAS(f, b));
	CHECK_STR(EMBER_OPTS_GET(f, b, "def"), "b");
	CHECK(EMBER_OPTS_HAS(o, a));
	CHECK(!EMBER_OPTS_HAS(o, b));
	CHECK_STR(EMBER_OPTS_GET(o, b, "def"), "def");
	CHECK_INT(EMBER_OPTS_GET(none, a, -1), ==, -1);
	old.a = 0;
	CHECK_INT(EMBER_OPTS_OR(o, a, 5), ==, 5); /* zero: the default */
	CHECK_INT(EMBER_OPTS_OR(f, a, 5), ==, 7);
	return 0;
}

/* ---- the bounded cache of local files (file_cache.c) ------------------------- */

struct fc_dirs {
	char root[40];
	int fd[2]; /* root/a and root/b */
};

static int fc_dirs_make(struct fc_dirs *d)
{
	char path[64];

	snprintf(d->root, sizeof(d->root), "/tmp/ember-fcache.XXXXXX");
	if (!mkdtemp(d->root))
		return -errno;
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%c", d->root, 'a' + i);
		if (mkdir(path, 0755) < 0)
			return -errno;
		d->fd[i] = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (d->fd[i] < 0)
			return -errno;
	}
	return 0;
}

static void fc_dirs_remove(struct fc_dirs *d)
{
	char cmd[80];

	close(d->fd[0]);
	close(d->fd[1]);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d->root);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", d->root);
}

/* A file of size bytes at name in dir fd, its mtime age_s seconds ago. */
static int fc_put(int fd, const char *name, size_t size, int age_s)
{
	static const char zeros[4096];
	struct timespec t[2];
	int f = openat(fd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int err = f < 0 ? -errno : ember_write_all(f, zeros, size);

	clock_gettime(CLOCK_REALTIME, &t[0]);
	t[0].tv_sec -= age_s;
	t[1] = t[0];
	if (!err && futimens(f, t) < 0)
		err = -errno;
	if (f >= 0)
		close(f);
	return err;
}

static bool fc_has(int fd, const char *name)
{
	return faccessat(fd, name, F_OK, 0) == 0;
}

static void fc_sleep_ms(long ms)
{
	struct timespec t = { 0, ms * 1000000 };

	nanosleep(&t, NULL);
}

/* Past the budget the least recently used go first: a file opened since
 * outlives one written after it; a tenth of the budget is made free. */
static int test_common__fcache_evicts_least_recently_used(void)
{
	struct fc_dirs d;
	struct ember_fcache *c = ember_fcache_new(4000, 0);
	struct ember_fcache_stats st;
	int ns;

	CHECK(c && fc_dirs_make(&d) == 0);
	ns = ember_fcache_add_dir(c, d.fd[0], 0);
	CHECK_INT(ns, ==, 0);
	for (int i = 0; i < 4; i++) {
		char name[8];

		snprintf(name, sizeof(name), "f%d", i);
		CHECK_INT(fc_put(d.fd[0], name, 1000, 0), ==, 0);
		ember_fcache_written(c, ns, name, 1000);
		fc_sleep_ms(3);
	}
	ember_fcache_used(c, ns, "f0"); /* f1 is now the least recent */
	fc_sleep_ms(3);
	CHECK_INT(fc_put(d.fd[0], "f4", 1000, 0), ==, 0);
	ember_fcache_written(c, ns, "f4", 1000); /* 5000 > 4000: down to 3600 */
	CHECK(fc_has(d.fd[0], "f0") && !fc_has(d.fd[0], "f1") && !fc_has(d.fd[0], "f2"));
	CHECK(fc_has(d.fd[0], "f3") && fc_has(d.fd[0], "f4"));
	ember_fcache_stats(c, ns, &st);
	CHECK_INT(st.bytes, ==, 3000);
	CHECK_INT(st.files, ==, 3);
	CHECK_INT(st.evictions, ==, 2);
	ember_fcache_free(c);
	fc_dirs_remove(&d);
	return 0;
}

/* A file used within the grace stays, over the budget, until it is not. */
static int test_common__fcache_spares_files_in_their_grace(void)
{
	struct fc_dirs d;
	struct ember_fcache *c = ember_fcache_new(1500, 300);
	struct ember_fcache_stats st;

	CHECK(c && fc_dirs_make(&d) == 0);
	CHECK_INT(ember_fcache_add_dir(c, d.fd[0], 0), ==, 0);
	CHECK_INT(fc_put(d.fd[0], "x", 1000, 0), ==, 0);
	ember_fcache_written(c, 0, "x", 1000);
	CHECK_INT(fc_put(d.fd[0], "y", 1000, 0), ==, 0);
	ember_fcache_written(c, 0, "y", 1000);
	CHECK(fc_has(d.fd[0], "x") && fc_has(d.fd[0], "y")); /* both in use */
	ember_fcache_stats(c, -1, &st);
	CHECK_INT(st.bytes, ==, 2000);
	fc_sleep_ms(400);
	ember_fcache_used(c, 0, "y");
	CHECK(!fc_has(d.fd[0], "x") && fc_has(d.fd[0], "y"));
	ember_fcache_free(c);
	fc_dirs_remove(&d);
	return 0;
}

/* Two directories, one budget: a write in one evicts from the other. */
static int test_common__fcache_budget_shared_by_two_directories(void)
{
	struct fc_dirs d;
	struct ember_fcache *c = ember_fcache_new(2500, 0);
	struct ember_fcache_stats a, b, all;
	int na, nb;

	CHECK(c && fc_dirs_make(&d) == 0);
	CHECK_INT(mkdirat(d.fd[0], "ab", 0755), ==, 0);
	CHECK_INT(fc_put(d.fd[0], "ab/old", 1000, 60), ==, 0);
	CHECK_INT(fc_put(d.fd[0], "top", 1000, 60), ==, 0); /* not fanned out: not counted */
	na = ember_fcache_add_dir(c, d.fd[0], EMBER_FCACHE_FANOUT);
	nb = ember_fcache_add_dir(c, d.fd[1], 0);
	CHECK(na == 0 && nb == 1);
	CHECK_INT(fc_put(d.fd[1], "new1", 1000, 0), ==, 0);
	ember_fcache_written(c, nb, "new1", 1000);
	CHECK(fc_has(d.fd[0], "ab/old"));
	CHECK_INT(fc_put(d.fd[1], "new2", 1000, 0), ==, 0);
	ember_fcache_written(c, nb, "new2", 1000); /* 3000 > 2500 */
	CHECK(!fc_has(d.fd[0], "ab/old") && fc_has(d.fd[0], "top"));
	CHECK(fc_has(d.fd[1], "new1") && fc_has(d.fd[1], "new2"));
	ember_fcache_stats(c, na, &a);
	ember_fcache_stats(c, nb, &b);
	ember_fcache_stats(c, -1, &all);
	CHECK(a.bytes == 0 && a.evictions == 1 && b.bytes == 2000 && b.evictions == 0);
	CHECK(all.bytes == 2000 && all.files == 2 && all.evictions == 1);
	ember_fcache_free(c);
	fc_dirs_remove(&d);
	return 0;
}

/* A file that vanished behind the cache's back counts as freed when its
 * turn comes; one written again (grown) counts at its new size; one its
 * owner removes is uncounted at once. */
static int test_common__fcache_files_vanished_or_grown(void)
{
	struct fc_dirs d;
	struct ember_fcache *c = ember_fcache_new(3000, 0);
	struct ember_fcache_stats st;

	CHECK(c && fc_dirs_make(&d) == 0);
	CHECK_INT(fc_put(d.fd[0], "gone", 1000, 30), ==, 0);
	CHECK_INT(fc_put(d.fd[0], "grows", 1000, 20), ==, 0);
	CHECK_INT(fc_put(d.fd[0], "del", 500, 10), ==, 0);
	CHECK_INT(ember_fcache_add_dir(c, d.fd[0], 0), ==, 0);
	ember_fcache_stats(c, 0, &st);
	CHECK(st.bytes == 2500 && st.files == 3);
	ember_fcache_remove(c, 0, "del");
	ember_fcache_stats(c, 0, &st);
	CHECK(st.bytes == 2000 && st.files == 2 && st.evictions == 0 && !fc_has(d.fd[0], "del"));
	CHECK_INT(unlinkat(d.fd[0], "gone", 0), ==, 0);
	CHECK_INT(fc_put(d.fd[0], "grows", 1800, 0), ==, 0);
	ember_fcache_written(c, 0, "grows", 1800); /* 2800: no eviction yet */
	ember_fcache_stats(c, 0, &st);
	CHECK(st.bytes == 2800 && st.files == 2 && st.evictions == 0);
	CHECK_INT(fc_put(d.fd[0], "more", 500, 0), ==, 0);
	ember_fcache_written(c, 0, "more", 500); /* 3300: "gone" first, already gone */
	ember_fcache_stats(c, 0, &st);
	CHECK(st.bytes == 2300 && st.files == 2 && st.evictions == 1);
	CHECK(fc_has(d.fd[0], "grows") && fc_has(d.fd[0], "more"));
	ember_fcache_free(c);
	fc_dirs_remove(&d);
	return 0;
}

/* A new cache over the same directories (a restarted server) counts what
 * they hold, in the order of their mtimes, and drops a crash's temporary
 * files where asked. */
static int test_common__fcache_restart_rebuilds_from_the_directory(void)
{
	struct fc_dirs d;
	struct ember_fcache *c = ember_fcache_new(0, 0), *again = ember_fcache_new(2500, 0);
	struct ember_fcache_stats st;

	CHECK(c && again && fc_dirs_make(&d) == 0);
	CHECK_INT(ember_fcache_add_dir(c, d.fd[1], EMBER_FCACHE_DROP_TEMP), ==, 0);
	CHECK_INT(fc_put(d.fd[1], "oldest", 1000, 300), ==, 0);
	CHECK_INT(fc_put(d.fd[1], "newest", 1000, 0), ==, 0);
	CHECK_INT(fc_put(d.fd[1], "middle", 1000, 100), ==, 0);
	ember_fcache_written(c, 0, "oldest", 1000);
	ember_fcache_written(c, 0, "newest", 1000);
	ember_fcache_written(c, 0, "middle", 1000);
	ember_fcache_stats(c, 0, &st);
	CHECK(st.bytes == 3000 && st.evictions == 0); /* no bound */
	ember_fcache_free(c);
	CHECK_INT(fc_put(d.fd[1], "blk.tmp.12.3", 700, 0), ==, 0);
	/* 3000 found, past 2500: the oldest by mtime goes at once */
	CHECK_INT(ember_fcache_add_dir(again, d.fd[1], EMBER_FCACHE_DROP_TEMP), ==, 0);
	CHECK(!fc_has(d.fd[1], "blk.tmp.12.3") && !fc_has(d.fd[1], "oldest"));
	CHECK(fc_has(d.fd[1], "middle") && fc_has(d.fd[1], "newest"));
	ember_fcache_stats(again, 0, &st);
	CHECK(st.bytes == 2000 && st.files == 2 && st.evictions == 1);
	ember_fcache_free(again);
	fc_dirs_remove(&d);
	return 0;
}

static char *json_of(const char *s, size_t n)
{
	struct ember_buf b;

	ember_buf_init(&b, 1 << 16);
	if (ember_json_str(&b, s, n)) {
		ember_buf_release(&b);
		return NULL;
	}
	return b.data;
}

/* Escapes as LLVM's JSON writer writes them; invalid UTF-8 replaced by
 * U+FFFD (the bytes EF BF BD), valid UTF-8 kept; DEL is not escaped. */
static int test_common__json_escape(void)
{
	static const struct {
		const char *in;
		size_t n;
		const char *out;
	} cases[] = {
		{ "plain", 5, "\"plain\"" },
		{ "a\"b\\c", 5, "\"a\\\"b\\\\c\"" },
		{ "\n\r\t\b\f", 5, "\"\\n\\r\\t\\b\\f\"" },
		{ "\x01\x1f\x7f", 3, "\"\\u0001\\u001f\x7f\"" },
		{ "caf\xc3\xa9", 5, "\"caf\xc3\xa9\"" },
		{ "\xf0\x9f\x94\xa5", 4, "\"\xf0\x9f\x94\xa5\"" },
		{ "a\xff" "b", 3, "\"a\xef\xbf\xbd" "b\"" },
		{ "\xc3", 1, "\"\xef\xbf\xbd\"" },		/* cut sequence */
		{ "\xc0\xaf", 2, "\"\xef\xbf\xbd\xef\xbf\xbd\"" },	/* overlong */
		{ "\xed\xa0\x80", 3, "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"" }, /* surrogate */
		{ "x\0y", 3, "\"x\\u0000y\"" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = json_of(cases[i].in, cases[i].n);

		CHECK_STR(got, cases[i].out);
		free(got);
	}
	return 0;
}

/* XML 1.0 text: the five specials as entities, valid UTF-8 kept, what
 * XML cannot carry (control characters, tab and LF too, invalid UTF-8,
 * U+FFFE, U+FFFF) as U+FFFD (EF BF BD); DEL kept. */
static int test_common__xml_escape(void)
{
	static const struct {
		const char *in;
		size_t n;
		const char *out;
	} cases[] = {
		{ "plain", 5, "plain" },
		{ "<a&b>\"'", 7, "&lt;a&amp;b&gt;&quot;&apos;" },
		{ "\t\n\r\x01\x7f", 5, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\x7f" },
		{ "caf\xc3\xa9", 5, "caf\xc3\xa9" },
		{ "a\xff" "b", 3, "a\xef\xbf\xbd" "b" },
		{ "\xef\xbf\xbe", 3, "\xef\xbf\xbd" },		/* U+FFFE */
		{ "\xed\xa0\x80", 3, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" }, /* surrogate */
		{ "x\0y", 3, "x\xef\xbf\xbdy" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ember_buf b;

		ember_buf_init(&b, 1 << 16);
		CHECK_INT(ember_xml_str(&b, cases[i].in, cases[i].n), ==, 0);
		CHECK_INT(ember_buf_putc(&b, '\0'), ==, 0);
		CHECK_STR(b.data, cases[i].out);
		ember_buf_release(&b);
	}
	return 0;
}

/* The shown URL: no userinfo (all of it, to the last '@' of the
 * authority), secret-named query values REDACTED, the rest kept; a URL
 * that does not fit is "" and -ENAMETOOLONG. */
/* Mimir's rule: 1 to 150 characters of [a-zA-Z0-9!-_.*'()], not "." or "..". */
static int test_common__tenant_id_rule(void)
{
	char longest[EMBER_TENANT_MAX + 2];

	memset(longest, 'x', EMBER_TENANT_MAX);
	longest[EMBER_TENANT_MAX] = '\0';
	CHECK(ember_tenant_valid("anonymous"));
	CHECK(ember_tenant_valid("team-a_1.prod(eu)*'!"));
	CHECK(ember_tenant_valid("..."));
	CHECK(ember_tenant_valid(longest));
	longest[EMBER_TENANT_MAX] = 'x';
	longest[EMBER_TENANT_MAX + 1] = '\0';
	CHECK(!ember_tenant_valid(longest));
	CHECK(!ember_tenant_valid(NULL));
	CHECK(!ember_tenant_valid(""));
	CHECK(!ember_tenant_valid("."));
	CHECK(!ember_tenant_valid(".."));
	CHECK(!ember_tenant_valid("a/b"));
	CHECK(!ember_tenant_valid("../a"));
	CHECK(!ember_tenant_valid("a b"));
	CHECK(!ember_tenant_valid("a|b"));
	CHECK(!ember_tenant_valid("caf\xc3\xa9"));
	return 0;
}

static int test_common__url_shown_strips_credentials(void)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "http://h:1/debug/pprof", "http://h:1/debug/pprof" },
		{ "http://u:p@h:1/debug/pprof", "http://h:1/debug/pprof" },
		{ "https://u:p@ss@h:1", "https://h:1" },
		{ "http://u@h/x?seconds=5", "http://h/x?seconds=5" },
		{ "http://h/x/a@b", "http://h/x/a@b" },
		{ "http://h/p?token=abc&seconds=1", "http://h/p?token=REDACTED&seconds=1" },
		{ "http://h/p?a=1&X-Amz-Signature=s&APIKEY=k&pass=x",
		  "http://h/p?a=1&X-Amz-Signature=REDACTED&APIKEY=REDACTED&pass=x" },
		{ "http://h/p?password=a&pwd=b&session_id=c&client_secret=d",
		  "http://h/p?password=REDACTED&pwd=REDACTED&session_id=REDACTED&"
		  "client_secret=REDACTED" },
		{ "http://h/p?token&key=#key=frag", "http://h/p?token&key=REDACTED#key=frag" },
		{ "http://h/p#a?token=x", "http://h/p#a?token=x" },
	};
	char out[128];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CHECK_INT(ember_url_shown(cases[i].in, out, sizeof(out)), ==, (int)strlen(cases[i].out));
		CHECK_STR(out, cases[i].out);
	}
	CHECK_INT(ember_url_shown("http://u:p@h/p?key=1", out, 23), ==, -ENAMETOOLONG);
	CHECK_STR(out, "");
	CHECK_INT(ember_url_shown("http://u:p@h/p?key=1", out, 24), ==, 23);
	CHECK_STR(out, "http://h/p?key=REDACTED");
	return 0;
}

/* The escaper looks at 8 bytes at a time: every byte that needs an
 * escape, and its neighbours that do not, at every place of strings
 * longer than a word, are written as they are alone. */
static int test_common__json_escape_words(void)
{
	static const struct {
		const char *in, *out;
	} bytes[] = {
		{ "\"", "\\\"" }, { "\\", "\\\\" }, { "\x01", "\\u0001" }, { "\x1f", "\\u001f" },
		{ "\n", "\\n" }, { "\xff", "\xef\xbf\xbd" }, { "\x80", "\xef\xbf\xbd" },
		{ "\xc3\xa9", "\xc3\xa9" }, { " ", " " }, { "!", "!" }, { "#", "#" },
		{ "[", "[" }, { "]", "]" }, { "\x7f", "\x7f" }, { "~", "~" },
	};
	char in[64], want[80];

	for (size_t k = 0; k < sizeof(bytes) / sizeof(bytes[0]); k++) {
		for (size_t len = 8; len <= 24; len++) {
			for (size_t at = 0; at <= len; at++) {
				size_t bl = strlen(bytes[k].in), n = 0;
				char *got;

				memset(in, 'a', len);
				memcpy(in + at, bytes[k].in, bl);
				memset(in + at + bl, 'b', len - at);
				snprintf(want, sizeof(want), "\"%.*s%s%.*s\"", (int)at, in,
					 bytes[k].out, (int)(len - at), in + at + bl);
				n = len + bl;
				got = json_of(in, n);
				CHECK_STR(got, want);
				free(got);
			}
		}
	}
	return 0;
}

/* The place of a failed check is in the message in debug builds only. */
#ifdef NDEBUG
#define WITH_PLACE(msg, place) msg
#else
#define WITH_PLACE(msg, place) msg place
#endif

/* The first failure wins; the place is cut to folder/file.c:line. */
static int test_common__diag_first_failure(void)
{
	char msg[128];
	struct ember_diag d = ember_diag_make(msg, sizeof(msg));

	CHECK_INT(ember_diag_fail(&d, -EINVAL, "/src/ember/wire/pprof_decode.c:12",
				  "sample %d: bad", 3), ==, -EINVAL);
	CHECK_STR(msg, WITH_PLACE("sample 3: bad", " [wire/pprof_decode.c:12]"));
	CHECK_INT(ember_diag_fail(&d, -E2BIG, NULL, "second"), ==, -E2BIG);
	CHECK_STR(msg, WITH_PLACE("sample 3: bad", " [wire/pprof_decode.c:12]"));
	d = ember_diag_make(msg, sizeof(msg));
	CHECK_STR(msg, "");
	CHECK_INT(ember_diag_fail(&d, -EIO, NULL, "no place"), ==, -EIO);
	CHECK_STR(msg, "no place");
	CHECK_INT(ember_diag_fail(NULL, -EIO, NULL, "nowhere"), ==, -EIO);
	return 0;
}

static int guarded(int v, struct ember_diag *d)
{
	EMBER_FAIL_IF(v < 0, d, -ERANGE, "value %d is negative", v);
	return 0;
}

static int test_common__fail_if_names_the_check(void)
{
	char msg[128];
	struct ember_diag d = ember_diag_make(msg, sizeof(msg));

	CHECK_INT(guarded(1, &d), ==, 0);
	CHECK_STR(msg, "");
	CHECK_INT(guarded(-2, &d), ==, -ERANGE);
	CHECK(strncmp(msg, WITH_PLACE("value -2 is negative", " [unit/test_common.c:"),
		      strlen(WITH_PLACE("value -2 is negative", " [unit/test_common.c:"))) == 0);
#ifdef NDEBUG
	CHECK_STR(msg, "value -2 is negative");
#endif
	return 0;
}

static int test_common__log_level_parse(void)
{
	enum ember_log_level l;

	CHECK(ember_log_level_parse("debug", &l) == 0 && l == EMBER_LOG_DEBUG);
	CHECK(ember_log_level_parse("INFO", &l) == 0 && l == EMBER_LOG_INFO);
	CHECK(ember_log_level_parse("warning", &l) == 0 && l == EMBER_LOG_WARN);
	CHECK(ember_log_level_parse("error", &l) == 0 && l == EMBER_LOG_ERROR);
	CHECK_INT(ember_log_level_parse("loud", &l), ==, -EINVAL);
	CHECK_STR(ember_log_level_name(EMBER_LOG_INFO), "info");
	return 0;
}

struct seen {
	int n;
	enum ember_log_level last;
};

static void count_log(enum ember_log_level level, const char *msg, void *ctx)
{
	struct seen *s = ctx;

	(void)msg;
	s->n++;
	s->last = level;
}

/* Messages above the level never reach the handler. */
static int test_common__log_level_filters(void)
{
	struct seen s = { 0 };

	ember_log_set_handler(count_log, &s);
	ember_log_set_level(EMBER_LOG_WARN);
	pr_info("dropped");
	pr_debug("dropped");
	pr_warn("kept");
	CHECK_INT(s.n, ==, 1);
	ember_log_set_level(EMBER_LOG_DEBUG);
	CHECK(ember_log_enabled(EMBER_LOG_DEBUG));
	pr_debug("kept");
	CHECK_INT(s.n, ==, 2);
	CHECK(s.last == EMBER_LOG_DEBUG);
	ember_log_set_level(EMBER_LOG_ERROR);
	CHECK(!ember_log_enabled(EMBER_LOG_WARN));
	pr_warn("dropped");
	CHECK_INT(s.n, ==, 2);
	ember_log_set_handler(unit_quiet, NULL);
	ember_log_set_level(EMBER_LOG_WARN);
	return 0;
}

/* A request's account takes from the budget up to its share: past the
 * share -E2BIG, past the budget -EAGAIN, both sticky; released, all comes
 * back; a buffer growing through it fails the same way. */
static int test_common__mem_account_share_and_budget(void)
{
	struct ember_mem_budget b;
	struct ember_mem_account a1, a2;
	struct ember_buf buf;
	char chunk[1024] = { 0 };

	ember_mem_budget_init(&b, 10000);
	ember_mem_account_init(&a1, &b, 6000);
	ember_mem_account_init(&a2, &b, 6000);
	CHECK_INT(ember_mem_account_take(&a1, 5000), ==, 0);
	CHECK_INT(ember_mem_account_take(&a1, 1001), ==, -E2BIG); /* its share */
	CHECK_INT(ember_mem_account_take(&a1, 1), ==, -E2BIG);    /* sticky */
	CHECK_INT(ember_mem_account_take(&a2, 5001), ==, -EAGAIN); /* the budget */
	CHECK_INT(ember_mem_budget_used(&b), ==, 5000);
	ember_mem_account_release(&a1);
	ember_mem_account_release(&a2);
	CHECK_INT(ember_mem_budget_used(&b), ==, 0);
	ember_buf_init_account(&buf, 1 << 20, &a1);
	CHECK_INT(ember_buf_append(&buf, chunk, sizeof(chunk)), ==, 0);
	CHECK(a1.used >= sizeof(chunk));
	while (!ember_buf_append(&buf, chunk, sizeof(chunk)))
		;
	CHECK_INT(a1.err, ==, -E2BIG);
	CHECK(buf.len <= 6000 && a1.used <= 6000);
	ember_buf_release(&buf);
	ember_mem_account_release(&a1);
	CHECK_INT(ember_mem_budget_used(&b), ==, 0);
	return 0;
}

static int test_common__errcache_expires(void)
{
	struct ember_errcache *mc = ember_errcache_new(0, 16);
	int err = 0;

	CHECK(mc);
	ember_errcache_put(mc, "k", -ENOENT);
	CHECK(!ember_errcache_get(mc, "k", &err)); /* ttl 0: gone at once */
	ember_errcache_free(mc);
	mc = ember_errcache_new(600, 16);
	ember_errcache_put(mc, "k", -ENOENT);
	ember_errcache_put(mc, "down", -EHOSTUNREACH);
	CHECK(ember_errcache_get(mc, "k", &err));
	CHECK_INT(err, ==, -ENOENT);
	CHECK(ember_errcache_get(mc, "down", &err)); /* a failure is not a miss */
	CHECK_INT(err, ==, -EHOSTUNREACH);
	CHECK(!ember_errcache_get(mc, "other", &err));
	ember_errcache_put(mc, "down", -ENOENT); /* the last answer counts */
	CHECK(ember_errcache_get(mc, "down", &err));
	CHECK_INT(err, ==, -ENOENT);
	ember_errcache_free(mc);
	return 0;
}

/* Client-chosen keys cannot be aimed at one chain: each cache keys its
 * hash afresh, so the same keys land in other buckets in another cache. */
static int test_common__errcache_hash_is_keyed(void)
{
	struct ember_errcache *a = ember_errcache_new(600, 16), *b = ember_errcache_new(600, 16);
	size_t same = 0;
	char key[64];

	CHECK(a && b);
	for (int i = 0; i < 16; i++) {
		snprintf(key, sizeof(key), "5/%040d/", i);
		same += ember_errcache_bucket(a, key) == ember_errcache_bucket(b, key);
	}
	CHECK_INT(same, <, 16);
	ember_errcache_free(a);
	ember_errcache_free(b);
	return 0;
}

/* ---- cursors and LEB128 ----------------------------------------------------- */

static int test_common__cursor_leb_round_trips(void)
{
	static const uint64_t u[] = { 0, 1, 127, 128, 300, 16383, 16384, 1ull << 35,
				      UINT64_MAX >> 1, UINT64_MAX };
	static const int64_t sv[] = { 0, 1, -1, 63, -64, 64, -65, 8191, -8192, INT64_MAX,
				      INT64_MIN };
	struct ember_buf b;
	const uint8_t *p, *end;

	ember_buf_init(&b, 4096);
	for (size_t i = 0; i < sizeof(u) / sizeof(u[0]); i++)
		CHECK_INT(ember_buf_put_uleb(&b, u[i]), ==, 0);
	for (size_t i = 0; i < sizeof(sv) / sizeof(sv[0]); i++) {
		CHECK_INT(ember_buf_put_sleb(&b, sv[i]), ==, 0);
		CHECK_INT(ember_buf_put_zigzag(&b, sv[i]), ==, 0);
	}
	CHECK_INT(ember_buf_put_lenbytes(&b, "abc", 3), ==, 0);
	p = (const uint8_t *)b.data;
	end = p + b.len;
	for (size_t i = 0; i < sizeof(u) / sizeof(u[0]); i++) {
		uint64_t v;

		CHECK_INT(ember_cur_uleb(&p, end, &v), ==, 0);
		CHECK(v == u[i]);
	}
	for (size_t i = 0; i < sizeof(sv) / sizeof(sv[0]); i++) {
		int64_t a, z;

		CHECK_INT(ember_cur_sleb(&p, end, &a), ==, 0);
		CHECK_INT(ember_cur_zigzag(&p, end, &z), ==, 0);
		CHECK(a == sv[i] && z == sv[i]);
	}
	{
		const uint8_t *s;
		size_t n;

		CHECK_INT(ember_cur_lenbytes(&p, end, 3, &s, &n), ==, 0);
		CHECK(n == 3 && memcmp(s, "abc", 3) == 0);
	}
	CHECK(p == end);
	ember_buf_release(&b);
	return 0;
}

static int test_common__cursor_bounds_and_range(void)
{
	/* ten bytes whose last carries more than bit 63; then padding */
	static const uint8_t over[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f };
	static const uint8_t max[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 };
	static const uint8_t padded[] = { 0x85, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
					  0x80, 0x80, 0x80, 0x00 };
	static const uint8_t bad_pad[] = { 0x85, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
					   0x80, 0x80, 0x81, 0x00 };
	static const uint8_t str[] = { 100, 'a', 'b', 'c' };
	const uint8_t *p, *s;
	uint64_t v;
	size_t n;

	p = over;
	CHECK_INT(ember_cur_uleb(&p, over + sizeof(over), &v), ==, -ERANGE);
	CHECK(p == over);
	p = max;
	CHECK_INT(ember_cur_uleb(&p, max + sizeof(max), &v), ==, 0);
	CHECK(v == UINT64_MAX && p == max + sizeof(max));
	p = padded; /* padding past the 64th bit changes no value */
	CHECK_INT(ember_cur_uleb(&p, padded + sizeof(padded), &v), ==, 0);
	CHECK(v == 5 && p == padded + sizeof(padded));
	p = bad_pad;
	CHECK_INT(ember_cur_uleb(&p, bad_pad + sizeof(bad_pad), &v), ==, -ERANGE);
	/* truncated: the cursor stays */
	p = max;
	CHECK_INT(ember_cur_uleb(&p, max + 3, &v), ==, -ENODATA);
	CHECK(p == max);
	/* *pos past end is refused by every reader */
	p = max + 5;
	CHECK_INT(ember_cur_uleb(&p, max + 4, &v), ==, -ENODATA);
	CHECK_INT(ember_cur_skip(&p, max + 4, 0), ==, -ENODATA);
	CHECK_INT(ember_cur_bytes(&p, max + 4, 0, &s), ==, -ENODATA);
	CHECK_INT(ember_cur_skip_leb(&p, max + 4), ==, -ENODATA);
	CHECK(p == max + 5);
	/* a maximum, a length past the end, a length past its maximum */
	p = str;
	CHECK_INT(ember_cur_uleb_max(&p, str + 4, 99, &v), ==, -ERANGE);
	CHECK(p == str);
	CHECK_INT(ember_cur_lenbytes(&p, str + 4, 1000, &s, &n), ==, -ENODATA);
	CHECK_INT(ember_cur_lenbytes(&p, str + 4, 50, &s, &n), ==, -ERANGE);
	CHECK(p == str);
	CHECK_INT(ember_cur_uint(&p, str + 4, 4, &v), ==, 0);
	CHECK(v == 0x63626164ull && p == str + 4);
	p = str;
	CHECK_INT(ember_cur_uint(&p, str + 4, 9, &v), ==, -EINVAL);
	CHECK_INT(ember_cur_uint(&p, str + 3, 4, &v), ==, -ENODATA);
	{
		const char *c;
		static const uint8_t cs[] = { 'h', 'i', 0, 'x' };

		p = cs;
		CHECK_INT(ember_cur_cstr(&p, cs + 4, &c), ==, 0);
		CHECK(strcmp(c, "hi") == 0 && p == cs + 3);
		CHECK_INT(ember_cur_cstr(&p, cs + 4, &c), ==, -ENODATA);
		CHECK(p == cs + 3);
	}
	return 0;
}

/* The three clocks in their units: the monotonic clock in ms and ns
 * agree, the wall clock is time(2)'s in ns. */
static int test_common__clocks_in_their_units(void)
{
	uint64_t ms = ember_monotonic_ms(), ns = ember_monotonic_ns();
	uint64_t wall = ember_realtime_ns();
	uint64_t t = (uint64_t)time(NULL);

	CHECK_INT(ns / 1000000, >=, ms);
	CHECK_INT(ns / 1000000 - ms, <, 1000);
	CHECK_INT(wall / 1000000000, >=, t - 1);
	CHECK_INT(wall / 1000000000, <=, t + 1);
	CHECK_INT(ember_monotonic_ns(), >=, ns);
	return 0;
}

/* Lines of a configuration file: blanks and '#' comments skipped, leading
 * blanks cut, each with its number; the first refusal ends the walk. */
struct seen_lines {
	char got[256];
	unsigned stop_at;
};

static int take_line(void *arg, unsigned no, char *line)
{
	struct seen_lines *s = arg;
	size_t n = strlen(s->got);

	snprintf(s->got + n, sizeof(s->got) - n, "%u:%s|", no, line);
	return no == s->stop_at ? -EINVAL : 0;
}

static int test_common__config_lines(void)
{
	char text[] = "# head\n\n  a 1\n\t# indented comment\nb  2\r\n \nc";
	char again[] = "x\ny\nz\n";
	struct seen_lines s = { .got = "" };

	CHECK(ember_config_line_count(text, strlen(text)) == 7);
	CHECK(ember_config_line_count("", 0) == 1);
	CHECK_INT(ember_config_lines(text, take_line, &s), ==, 0);
	CHECK_STR(s.got, "3:a 1|5:b  2\r|7:c|");
	s = (struct seen_lines){ .got = "", .stop_at = 2 };
	CHECK_INT(ember_config_lines(again, take_line, &s), ==, -EINVAL);
	CHECK_STR(s.got, "1:x|2:y|");
	return 0;
}

static const struct unit_case cases[] = {
	UNIT_CASE(test_common__opts_size),
	UNIT_CASE(test_common__fcache_evicts_least_recently_used),
	UNIT_CASE(test_common__fcache_spares_files_in_their_grace),
	UNIT_CASE(test_common__fcache_budget_shared_by_two_directories),
	UNIT_CASE(test_common__fcache_files_vanished_or_grown),
	UNIT_CASE(test_common__fcache_restart_rebuilds_from_the_directory),
	UNIT_CASE(test_common__errcache_expires),
	UNIT_CASE(test_common__errcache_hash_is_keyed),
	UNIT_CASE(test_common__mem_account_share_and_budget),
	UNIT_CASE(test_common__vec_push_grows),
	UNIT_CASE(test_common__vec_overflow_refused),
	UNIT_CASE(test_common__hash_keyed),
	UNIT_CASE(test_common__hset_dedups),
	UNIT_CASE(test_common__hset_grows),
	UNIT_CASE(test_common__hex),
	UNIT_CASE(test_common__json_escape),
	UNIT_CASE(test_common__xml_escape),
	UNIT_CASE(test_common__json_escape_words),
	UNIT_CASE(test_common__diag_first_failure),
	UNIT_CASE(test_common__fail_if_names_the_check),
	UNIT_CASE(test_common__log_level_parse),
	UNIT_CASE(test_common__log_level_filters),
	UNIT_CASE(test_common__cursor_leb_round_trips),
	UNIT_CASE(test_common__cursor_bounds_and_range),
	UNIT_CASE(test_common__clocks_in_their_units),
	UNIT_CASE(test_common__url_shown_strips_credentials),
	UNIT_CASE(test_common__tenant_id_rule),
	UNIT_CASE(test_common__config_lines),
};

UNIT_MAIN_QUIET(cases)
