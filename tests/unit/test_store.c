/*
 * test_store.c - unit tests of debuginfo-store/: blobs, candidates and
 * their ranking, sources, crash leftovers, damaged records, the data
 * directory's lock, the background open, pins.
 */
#include "store.h"
#include "store_internal.h"
#include "unit.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char dir[256];

static struct store *fresh_store(void)
{
	struct store *s = NULL;

	snprintf(dir, sizeof(dir), "/tmp/ember-test-store.XXXXXX");
	if (!mkdtemp(dir) || store_open(dir, &s))
		return NULL;
	return s;
}

static void remove_dir(void)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", dir);
}

static int count_files(const char *sub)
{
	char path[300];
	DIR *d;
	struct dirent *e;
	int n = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, sub);
	d = opendir(path);
	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* Store content under id with the given feature flags, as stored at
 * mtime from origin. */
static int put_as(struct store *s, const char *id, const char *content, unsigned flags,
		  unsigned kinds, int64_t mtime, unsigned origin, bool *is_new)
{
	struct store_artifact a = { .flags = flags, .kinds = kinds, .mtime = mtime,
				    .origin = origin };
	struct store_blob *b;
	int err = store_blob_begin(s, &b);

	if (err)
		return err;
	err = store_blob_write(b, content, strlen(content));
	if (!err)
		err = store_blob_seal(b, a.sha256, &a.size);
	if (err) {
		store_blob_discard(b);
		return err;
	}
	snprintf(a.build_id, sizeof(a.build_id), "%s", id);
	snprintf(a.name, sizeof(a.name), "file-%zu", strlen(content));
	return store_add_artifact(s, b, &a, NULL, 0, is_new);
}

/* Store content under id with the given feature flags (uploaded). */
static int put(struct store *s, const char *id, const char *content, unsigned flags,
	       unsigned kinds, bool *is_new)
{
	return put_as(s, id, content, flags, kinds, 1, STORE_FROM_UPLOAD, is_new);
}

/* ---- the eBPF profiler's file IDs ---------------------------------------- */

/* Bytes (i * 131 + 7) mod 256, the file of the golden file IDs below. */
static int pattern_file(size_t n)
{
	char path[300];
	int fd;

	snprintf(path, sizeof(path), "%s/pattern", dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	for (size_t i = 0; fd >= 0 && i < n; i++) {
		unsigned char c = (unsigned char)(i * 131 + 7);

		if (write(fd, &c, 1) != 1) {
			close(fd);
			return -1;
		}
	}
	return fd;
}

/*
 * The golden IDs were computed by Python's hashlib from the profiler's
 * definition (libpf/fileid.go), not from file_id.c:
 *   h = sha256(b[:4096] + b[-4096:] + struct.pack('>Q', len(b)))[:16]
 * at every boundary: empty, under 4 KiB (hashed twice), 4 KiB, between
 * (the ends overlap), 8 KiB (they meet), past it.
 */
static int test_store__file_id_matches_the_profilers_definition(void)
{
	static const struct {
		size_t size;
		const char *id;
	} cases[] = {
		{ 0, "af5570f5a1810b7af78caf4bc70a660f" },
		{ 100, "9728eeab69e53201466e9c419f416910" },
		{ 4096, "2b3e39d6827bbb13046997f961c2134e" },
		{ 5000, "1f7341497107e1062663c8259dce85fd" },
		{ 8192, "03b0745711168eea28500d8b99e2c9aa" },
		{ 10000, "f32b45a0e81f2dd2f1ade41fb74b34d4" },
	};
	char id[STORE_FILE_ID_HEX];

	snprintf(dir, sizeof(dir), "/tmp/ember-test-store.XXXXXX");
	CHECK(mkdtemp(dir));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int fd = pattern_file(cases[i].size);

		CHECK(fd >= 0);
		CHECK_INT(store_file_id_fd(fd, cases[i].size, id), ==, 0);
		CHECK_STR(id, cases[i].id);
		/* a file shorter than it is said to be is an error, not an ID */
		CHECK_INT(store_file_id_fd(fd, cases[i].size + 1, id), ==, -EIO);
		close(fd);
	}
	CHECK(store_file_id_normalize("2B3E39D6827BBB13046997F961C2134E", id));
	CHECK_STR(id, "2b3e39d6827bbb13046997f961c2134e");
	CHECK(!store_file_id_normalize("2b3e39d6827bbb13046997f961c2134", id));
	CHECK(!store_file_id_normalize("0x3e39d6827bbb13046997f961c2134e", id));
	remove_dir();
	return 0;
}

/* The file ID of content as store_add_artifact indexes it. */
static void content_file_id(const char *content, char id[STORE_FILE_ID_HEX])
{
	char path[300];
	int fd;

	snprintf(path, sizeof(path), "%s/content", dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	id[0] = '\0';
	if (fd >= 0 && write(fd, content, strlen(content)) == (ssize_t)strlen(content))
		store_file_id_fd(fd, strlen(content), id);
	if (fd >= 0)
		close(fd);
}

static int collect_id(const char *file_id, void *arg)
{
	snprintf(arg, STORE_FILE_ID_HEX, "%s", file_id);
	return 0;
}

static int test_store__file_ids_of_executables_are_indexed_and_kept(void)
{
	struct store *s = fresh_store();
	char exe[STORE_FILE_ID_HEX], dbg[STORE_FILE_ID_HEX], bid[STORE_BUILD_ID_HEX];
	char listed[STORE_FILE_ID_HEX] = "";
	bool is_new;

	CHECK(s);
	content_file_id("stripped executable", exe);
	content_file_id("debug file", dbg);
	CHECK_INT(put(s, "abcd", "stripped executable", STORE_HAS_DYNSYM | STORE_HAS_TEXT,
		      STORE_KIND_EXECUTABLE, &is_new), ==, 0);
	CHECK_INT(put(s, "abcd", "debug file", STORE_HAS_DWARF | STORE_HAS_SYMTAB,
		      STORE_KIND_DEBUGINFO, &is_new), ==, 0);
	CHECK_INT(store_find_file_id(s, exe, bid), ==, 0);
	CHECK_STR(bid, "abcd");
	/* the profiler never hashes a debug file: not indexed */
	CHECK_INT(store_find_file_id(s, dbg, bid), ==, -ENOENT);
	CHECK_INT(store_find_file_id(s, "not a file id", bid), ==, -EINVAL);
	CHECK_INT(store_list_file_ids(s, "abcd", collect_id, listed), ==, 0);
	CHECK_STR(listed, exe);
	store_free(s);
	s = NULL;
	CHECK_INT(store_open(dir, &s), ==, 0); /* persisted with the records */
	CHECK_INT(store_find_file_id(s, exe, bid), ==, 0);
	CHECK_STR(bid, "abcd");
	store_free(s);
	remove_dir();
	return 0;
}

/* content stored as fetched from upstream at time mtime. */
static int put_fetched(struct store *s, const char *id, const char *content, int64_t mtime)
{
	bool is_new;

	return put_as(s, id, content, STORE_HAS_TEXT, STORE_KIND_EXECUTABLE, mtime,
		      STORE_FROM_UPSTREAM, &is_new);
}

static int test_store__evicted_executable_takes_its_file_id(void)
{
	struct store *s = fresh_store();
	char old[STORE_FILE_ID_HEX], young[STORE_FILE_ID_HEX], bid[STORE_BUILD_ID_HEX];

	CHECK(s);
	content_file_id("fetched first", old);
	content_file_id("fetched last", young);
	CHECK_INT(put_fetched(s, "0011", "fetched first", 100), ==, 0);
	CHECK_INT(put_fetched(s, "0022", "fetched last", 200), ==, 0);
	CHECK_INT(store_find_file_id(s, old, bid), ==, 0);
	CHECK_INT(store_evict_upstream(s, 0), ==, 1); /* never the newest */
	CHECK_INT(store_find_file_id(s, old, bid), ==, -ENOENT);
	CHECK_INT(store_find_file_id(s, young, bid), ==, 0);
	CHECK_STR(bid, "0022");
	store_free(s);
	remove_dir();
	return 0;
}

static int copy_sha(const struct store_artifact *a, void *arg)
{
	memcpy(arg, a->sha256, STORE_SHA256_HEX);
	return 0;
}

/* A store written before the index (its records only): its executables
 * indexed at the next open, once. */
static int test_store__file_ids_of_an_older_store_are_backfilled(void)
{
	static const char meta[] = "Mfile-id-index";
	struct store *s = fresh_store();
	char exe[STORE_FILE_ID_HEX], bid[STORE_BUILD_ID_HEX], sha[STORE_SHA256_HEX];
	struct store_batch wb;
	bool is_new;

	CHECK(s);
	content_file_id("an old executable", exe);
	CHECK_INT(put(s, "beef", "an old executable", STORE_HAS_SYMTAB | STORE_HAS_TEXT,
		      STORE_KIND_EXECUTABLE, &is_new), ==, 0);
	CHECK_INT(store_list(s, "beef", copy_sha, sha), ==, 0);
	CHECK_INT(store_batch_begin(s, &wb), ==, 0);
	CHECK_INT(store_file_id_drop(s, &wb, "beef", sha), ==, 0);
	store_batch_delete(&wb, meta, sizeof(meta)); /* the key's NUL included */
	CHECK_INT(store_batch_commit(&wb), ==, 0);
	CHECK_INT(store_find_file_id(s, exe, bid), ==, -ENOENT);
	store_free(s);
	s = NULL;
	CHECK_INT(store_open(dir, &s), ==, 0);
	CHECK_INT(store_find_file_id(s, exe, bid), ==, 0);
	CHECK_STR(bid, "beef");
	store_free(s);
	remove_dir();
	return 0;
}

static int test_store__sha256_of_known_content(void)
{
	struct store *s = fresh_store();
	struct store_blob *b;
	char sha[STORE_SHA256_HEX];
	uint64_t size;

	CHECK(s);
	CHECK_INT(store_blob_begin(s, &b), ==, 0);
	CHECK_INT(store_blob_write(b, "abc", 3), ==, 0);
	CHECK_INT(store_blob_seal(b, sha, &size), ==, 0);
	CHECK_STR(sha, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	CHECK_INT(size, ==, 3);
	CHECK_INT(store_blob_write(b, "x", 1), ==, -EINVAL); /* sealed */
	store_blob_discard(b);
	CHECK_INT(count_files("tmp"), ==, 0);
	store_free(s);
	remove_dir();
	return 0;
}

static int test_store__duplicate_content_is_one_record(void)
{
	struct store *s = fresh_store();
	struct store_stats st;
	bool is_new;

	CHECK(s);
	CHECK_INT(put(s, "aabb", "content", STORE_HAS_DWARF, STORE_KIND_DEBUGINFO, &is_new), ==, 0);
	CHECK(is_new);
	CHECK_INT(put(s, "aabb", "content", STORE_HAS_DWARF, STORE_KIND_EXECUTABLE, &is_new), ==, 0);
	CHECK(!is_new);
	store_get_stats(s, &st);
	CHECK_INT(st.artifacts, ==, 1);
	CHECK_INT(st.blob_bytes, ==, 7);
	CHECK_INT(count_files("tmp"), ==, 0);
	store_free(s);
	remove_dir();
	return 0;
}

static int test_store__dwarf_wins_whatever_the_order(void)
{
	static const unsigned orders[2][2] = {
		{ STORE_HAS_SYMTAB | STORE_HAS_TEXT, STORE_HAS_DWARF | STORE_HAS_SYMTAB },
		{ STORE_HAS_DWARF | STORE_HAS_SYMTAB, STORE_HAS_SYMTAB | STORE_HAS_TEXT },
	};

	for (int o = 0; o < 2; o++) {
		struct store *s = fresh_store();
		struct store_artifact best;
		bool is_new;

		CHECK(s);
		CHECK_INT(put(s, "cc", orders[o][0] & STORE_HAS_DWARF ? "dwarf!" : "symtab",
			      orders[o][0], STORE_KIND_EXECUTABLE, &is_new), ==, 0);
		CHECK_INT(put(s, "cc", orders[o][1] & STORE_HAS_DWARF ? "dwarf!" : "symtab",
			      orders[o][1], STORE_KIND_EXECUTABLE, &is_new), ==, 0);
		CHECK_INT(store_find_best(s, "cc", STORE_WANT_DEBUGINFO, &best), ==, 0);
		CHECK(best.flags & STORE_HAS_DWARF);
		CHECK_INT(store_find_best(s, "cc", STORE_WANT_SYMBOLS, &best), ==, 0);
		CHECK(best.flags & STORE_HAS_DWARF);
		CHECK_INT(store_find_best(s, "cc", STORE_WANT_EXECUTABLE, &best), ==, 0);
		CHECK(best.flags & STORE_HAS_TEXT);
		CHECK_INT(store_find_best(s, "cd", STORE_WANT_DEBUGINFO, &best), ==, -ENOENT);
		store_free(s);
		remove_dir();
	}
	return 0;
}

static int test_store__symtab_only_is_no_debuginfo(void)
{
	struct store *s = fresh_store();
	struct store_artifact best;
	bool is_new;

	CHECK(s);
	CHECK_INT(put(s, "dd", "syms", STORE_HAS_SYMTAB, STORE_KIND_DEBUGINFO, &is_new), ==, 0);
	CHECK_INT(store_find_best(s, "dd", STORE_WANT_DEBUGINFO, &best), ==, -ENOENT);
	CHECK_INT(store_find_best(s, "dd", STORE_WANT_SYMBOLS, &best), ==, 0);
	CHECK_STR(best.name, "file-4");
	store_free(s);
	remove_dir();
	return 0;
}

static int test_store__reopen_keeps_records_and_drops_tmp(void)
{
	struct store *s = fresh_store();
	struct store_artifact best;
	struct store_blob *b;
	struct store_stats st;
	bool is_new;

	CHECK(s);
	CHECK_INT(put(s, "ee", "kept", STORE_HAS_DWARF, STORE_KIND_DEBUGINFO, &is_new), ==, 0);
	CHECK_INT(store_blob_begin(s, &b), ==, 0);
	CHECK_INT(store_blob_write(b, "partial", 7), ==, 0);
	CHECK_INT(count_files("tmp"), ==, 1);
	close(store_blob_fd(b));   /* a crash: nothing cleans up */
	free(b);
	store_free(s);
	CHECK_INT(store_open(dir, &s), ==, 0);
	CHECK_INT(count_files("tmp"), ==, 0);
	CHECK_INT(store_find_best(s, "ee", STORE_WANT_DEBUGINFO, &best), ==, 0);
	CHECK_INT(best.size, ==, 4);
	store_get_stats(s, &st);
	CHECK_INT(st.artifacts, ==, 1);
	store_free(s);
	remove_dir();
	return 0;
}

static int test_store__damaged_record_is_skipped(void)
{
	struct store_artifact a = { .size = 5, .kinds = 1, .flags = 3, .dwarf_version = 5 }, b;
	uint8_t buf[512];
	size_t n;

	snprintf(a.name, sizeof(a.name), "x.debug");
	n = store_record_encode(&a, buf, sizeof(buf));
	CHECK(n > 0);
	CHECK_INT(store_record_decode(buf, n, &b), ==, 0);
	CHECK_INT(b.size, ==, 5);
	CHECK_STR(b.name, "x.debug");
	for (size_t cut = 0; cut < n; cut++)
		CHECK_INT(store_record_decode(buf, cut, &b), ==, -EINVAL);
	buf[0] = 99; /* a future version */
	CHECK_INT(store_record_decode(buf, n, &b), ==, -EINVAL);
	return 0;
}

static int test_store__sources_only_when_named(void)
{
	struct store *s = fresh_store();
	const char *names[] = { "/src/a.c", "/src/b.h" };
	struct store_artifact a = { .flags = STORE_HAS_DWARF, .kinds = 1 }, got;
	struct store_blob *b;
	char sha[STORE_SHA256_HEX];
	uint64_t size;
	bool is_new;

	CHECK(s);
	CHECK_INT(store_blob_begin(s, &b), ==, 0);
	CHECK_INT(store_blob_write(b, "elf", 3), ==, 0);
	CHECK_INT(store_blob_seal(b, a.sha256, &a.size), ==, 0);
	snprintf(a.build_id, sizeof(a.build_id), "ff");
	CHECK_INT(store_add_artifact(s, b, &a, names, 2, &is_new), ==, 0);
	CHECK_INT(store_source_named(s, "ff", "/src/a.c"), ==, 0);
	CHECK_INT(store_source_named(s, "ff", "/etc/passwd"), ==, -ENOENT);
	CHECK_INT(store_source_named(s, "fe", "/src/a.c"), ==, -ENOENT);
	CHECK_INT(store_find_source(s, "ff", "/src/a.c", &got), ==, -ENOENT);
	CHECK_INT(store_blob_begin(s, &b), ==, 0);
	CHECK_INT(store_blob_write(b, "int main;", 9), ==, 0);
	CHECK_INT(store_blob_seal(b, sha, &size), ==, 0);
	CHECK_INT(store_add_source(s, b, "ff", "/src/a.c", sha, size, STORE_FROM_UPLOAD, &is_new),
		  ==, 0);
	CHECK(is_new);
	CHECK_INT(store_find_source(s, "ff", "/src/a.c", &got), ==, 0);
	CHECK_STR(got.sha256, sha);
	CHECK_STR(got.name, "a.c");
	CHECK_INT(got.size, ==, 9);
	{
		uint64_t named = 0, stored = 0;

		CHECK_INT(store_count_sources(s, "ff", &named, &stored), ==, 0);
		CHECK_INT(named, ==, 2);
		CHECK_INT(stored, ==, 1);
		CHECK_INT(store_count_sources(s, "f", &named, &stored), ==, 0);
		CHECK_INT(named, ==, 0); /* a prefix of an ID is not that ID */
	}
	store_free(s);
	remove_dir();
	return 0;
}

struct walk_ids {
	char ids[8][STORE_BUILD_ID_HEX];
	int n, calls, stop_after;
};

static int note_id(const struct store_artifact *a, void *arg)
{
	struct walk_ids *w = arg;

	if (++w->calls > w->stop_after)
		return 1;
	if (!w->n || strcmp(w->ids[w->n - 1], a->build_id))
		snprintf(w->ids[w->n++], STORE_BUILD_ID_HEX, "%s", a->build_id);
	return 0;
}

/* Every build ID in order, each candidate once, from past `after`. */
static int test_store__list_all_pages_in_build_id_order(void)
{
	struct store *s = fresh_store();
	struct walk_ids w = { .stop_after = 100 };
	bool is_new;

	CHECK(s);
	CHECK_INT(put(s, "bb", "one", STORE_HAS_SYMTAB, 1, &is_new), ==, 0);
	CHECK_INT(put(s, "aa", "two", STORE_HAS_SYMTAB, 1, &is_new), ==, 0);
	CHECK_INT(put(s, "bb", "three", STORE_HAS_DWARF, 1, &is_new), ==, 0);
	CHECK_INT(put(s, "bbcc", "four", STORE_HAS_DWARF, 1, &is_new), ==, 0);
	CHECK_INT(store_list_all(s, NULL, note_id, &w), ==, 0);
	CHECK_INT(w.calls, ==, 4);
	CHECK_INT(w.n, ==, 3);
	CHECK_STR(w.ids[0], "aa");
	CHECK_STR(w.ids[1], "bb");
	CHECK_STR(w.ids[2], "bbcc");
	w = (struct walk_ids){ .stop_after = 100 };
	CHECK_INT(store_list_all(s, "bb", note_id, &w), ==, 0); /* past bb, not bbcc */
	CHECK_INT(w.n, ==, 1);
	CHECK_STR(w.ids[0], "bbcc");
	w = (struct walk_ids){ .stop_after = 1 };
	CHECK_INT(store_list_all(s, "", note_id, &w), ==, 1); /* the callback stops it */
	CHECK_INT(w.n, ==, 1);
	w = (struct walk_ids){ .stop_after = 100 };
	CHECK_INT(store_list_all(s, "bbcc", note_id, &w), ==, 0);
	CHECK_INT(w.n, ==, 0);
	store_free(s);
	remove_dir();
	return 0;
}

static int test_store__second_open_is_refused_at_once(void)
{
	struct store *s = fresh_store(), *t = (struct store *)1;

	CHECK(s);
	CHECK_INT(store_new(dir, &t), ==, -EBUSY); /* before RocksDB is asked */
	CHECK(t == (struct store *)1);
	store_free(s);
	CHECK_INT(store_open(dir, &t), ==, 0); /* the lock went with the store */
	store_free(t);
	remove_dir();
	return 0;
}

static int test_store__started_store_waits_for_its_open(void)
{
	struct store_artifact best;
	struct store *s = fresh_store();
	bool is_new;

	CHECK(s);
	CHECK_INT(put(s, "ab01", "debug", STORE_HAS_DWARF, STORE_KIND_DEBUGINFO, &is_new), ==, 0);
	store_free(s);
	CHECK_INT(store_new(dir, &s), ==, 0);
	CHECK(!store_is_open(s));
	/* A record read before any open begins it, and waits for it. */
	CHECK_INT(store_find_best(s, "ab01", STORE_WANT_DEBUGINFO, &best), ==, 0);
	CHECK(store_is_open(s));
	CHECK_INT(store_wait(s), ==, 0);
	store_free(s);
	remove_dir();
	return 0;
}

static int list_count(const struct store_artifact *a, void *arg)
{
	(void)a;
	++*(int *)arg;
	return 0;
}

/* Every reading function, on a store whose records cannot be read, gives
 * want (the error, never -ENOENT). */
static int check_reads_fail(struct store *s, const char *id, int want)
{
	struct store_artifact a;
	struct store_pair pair;

	CHECK_INT(store_find_best(s, id, STORE_WANT_DEBUGINFO, &a), ==, want);
	CHECK_INT(store_find_best(s, id, STORE_WANT_SYMBOLS, &a), ==, want);
	CHECK_INT(store_find_pair(s, id, &pair), ==, want);
	CHECK_INT(store_list(s, id, list_count, &(int){ 0 }), ==, want);
	CHECK_INT(store_source_named(s, id, "/src/a.c"), ==, want);
	CHECK_INT(store_find_source(s, id, "/src/a.c", &a), ==, want);
	CHECK_INT(store_find_derived(s, id, "idx-1", &a), ==, want);
	return 0;
}

static int test_store__failed_open_fails_every_read(void)
{
	struct store *s;
	char path[300];
	FILE *f;

	snprintf(dir, sizeof(dir), "/tmp/ember-test-store.XXXXXX");
	CHECK(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/db", dir); /* a file where RocksDB wants a folder */
	CHECK((f = fopen(path, "w")));
	fclose(f);
	CHECK_INT(store_new(dir, &s), ==, 0);
	CHECK_INT(store_open_begin(s), ==, 0);
	CHECK_INT(store_wait(s), ==, -EIO);
	CHECK(!store_is_open(s));
	/* Not "not found": a debuginfod client would cache that. */
	if (check_reads_fail(s, "ab", -EIO))
		return 1;
	store_free(s);
	CHECK_INT(store_open(dir, &s), ==, -EIO);
	remove_dir();
	return 0;
}

static int put_derived_text(void *arg, struct store_blob *b)
{
	return store_blob_write(b, arg, strlen(arg));
}

/* Cases that need a RocksDB failing on demand (rocksdb_fault.c) skip in
 * builds without it. */
#ifdef EMBER_STORE_FAULTS
#define NEED_STORE_FAULTS() ((void)0)
#else
#define NEED_STORE_FAULTS()                                                          \
	do {                                                                         \
		fprintf(stderr, "SKIP: a Release build: the store's fault injection " \
				"(EMBER_TEST_STORE_FAULT) is in Debug builds only\n");         \
		return UNIT_SKIP;                                                    \
	} while (0)
#endif

/* dir's store reopened under rocksdb_fault.c: `reads` record reads are
 * answered, counted from the open (its count of the records included). */
static int open_faulty(int reads, struct store **s)
{
	char n[32];
	int err;

	snprintf(n, sizeof(n), "%d", reads);
	setenv("EMBER_TEST_STORE_FAULT", n, 1);
	err = store_open(dir, s);
	unsetenv("EMBER_TEST_STORE_FAULT");
	return err;
}

/*
 * RocksDB fails in the middle of a scan (an iterator turning invalid with
 * its error set, as on an I/O error or a corrupt block): the lookup fails
 * with -EIO, never answers from the candidates it saw before, never
 * -ENOENT.
 */
static int test_store__scan_failure_midway_is_an_error(void)
{
	struct store *s;
	struct store_artifact best;
	int seen = 0;
	bool is_new;

	NEED_STORE_FAULTS();
	s = fresh_store();
	CHECK(s);
	CHECK_INT(put(s, "ab02", "symtab only", STORE_HAS_SYMTAB, STORE_KIND_EXECUTABLE,
		      &is_new), ==, 0);
	CHECK_INT(put(s, "ab02", "dwarf one", STORE_HAS_DWARF, STORE_KIND_DEBUGINFO,
		      &is_new), ==, 0);
	CHECK_INT(put(s, "ab02", "dwarf, bigger", STORE_HAS_DWARF, STORE_KIND_DEBUGINFO,
		      &is_new), ==, 0);
	store_free(s);
	/* The open reads 9 times here (counting the records, with the steps
	 * of its walks onto the file-ID index's key past them, and that
	 * key's get); then the seek and the first candidate of the next
	 * scan: the second candidate fails. */
	CHECK_INT(open_faulty(11, &s), ==, 0);
	CHECK_INT(store_find_best(s, "ab02", STORE_WANT_DEBUGINFO, &best), ==, -EIO);
	CHECK_INT(store_list(s, "ab02", list_count, &seen), ==, -EIO);
	CHECK_INT(seen, ==, 0);
	if (check_reads_fail(s, "ab02", -EIO))
		return 1;
	store_free(s);
	/* The same store without the faults answers. */
	CHECK_INT(store_open(dir, &s), ==, 0);
	CHECK_INT(store_find_best(s, "ab02", STORE_WANT_DEBUGINFO, &best), ==, 0);
	CHECK_STR(best.name, "file-13");
	CHECK_INT(store_list(s, "ab02", list_count, &seen), ==, 0);
	CHECK_INT(seen, ==, 3);
	store_free(s);
	remove_dir();
	return 0;
}

/* A store whose records cannot be read through when it opens (its count
 * of them fails) is not opened. */
static int test_store__unreadable_records_fail_the_open(void)
{
	struct store *s;
	bool is_new;

	NEED_STORE_FAULTS();
	s = fresh_store();
	CHECK(s);
	CHECK_INT(put(s, "ab03", "one", STORE_HAS_SYMTAB, STORE_KIND_EXECUTABLE, &is_new), ==, 0);
	CHECK_INT(put(s, "ab03", "two", STORE_HAS_DWARF, STORE_KIND_DEBUGINFO, &is_new), ==, 0);
	store_free(s);
	s = (struct store *)1;
	CHECK_INT(open_faulty(1, &s), ==, -EIO); /* the seek, then the first record fails */
	CHECK(s == NULL);
	/* the open's 8 reads (as in test_store__scan_failure_midway_is_an_error) */
	CHECK_INT(open_faulty(8, &s), ==, 0);
	if (check_reads_fail(s, "ab03", -EIO))
		return 1;
	store_free(s);
	remove_dir();
	return 0;
}

/* A log handler that changes errno, as a real one writing to a file may. */
static void errno_clobbering_log(enum ember_log_level l, const char *m, void *c)
{
	(void)l, (void)m, (void)c;
	errno = EBADMSG;
}

/* The error returned is the failure's, not what the log call left in errno. */
static int test_store__errno_survives_the_log(void)
{
	struct store *s = (struct store *)1;
	char path[300];
	FILE *f;
	int err;

	snprintf(dir, sizeof(dir), "/tmp/ember-test-store.XXXXXX");
	CHECK(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/blobs", dir); /* a file where a folder goes */
	CHECK((f = fopen(path, "w")));
	fclose(f);
	ember_log_set_handler(errno_clobbering_log, NULL);
	err = store_new(dir, &s);
	ember_log_set_handler(unit_quiet, NULL);
	CHECK_INT(err, ==, -ENOTDIR);
	CHECK(s == (struct store *)1);
	remove_dir();
	return 0;
}

/* A pin file that cannot be written (a file size limit here) fails the
 * pin, leaves no pin and no temporary file. */
static int test_store__pin_write_failure_is_an_error(void)
{
	struct store *s = fresh_store();
	struct rlimit old, none = { 0, 0 };
	struct store_pin pin;
	char tmp[300];
	bool is_new;
	int err;

	CHECK(s);
	CHECK_INT(put(s, "cd02", "exe", STORE_HAS_SYMTAB, STORE_KIND_EXECUTABLE, &is_new), ==, 0);
	CHECK_INT(store_put_derived(s, "cd02", "idx-1", put_derived_text, "index"), ==, 0);
	CHECK_INT(getrlimit(RLIMIT_FSIZE, &old), ==, 0);
	none.rlim_max = old.rlim_max;
	signal(SIGXFSZ, SIG_IGN); /* a failed write, not death */
	CHECK_INT(setrlimit(RLIMIT_FSIZE, &none), ==, 0);
	err = store_pin_derived(s, "cd02", "idx", "idx-1", store_generation(s));
	CHECK_INT(setrlimit(RLIMIT_FSIZE, &old), ==, 0);
	CHECK_INT(err, ==, -EFBIG);
	CHECK_INT(store_find_pin(s, "cd02", "idx", &pin), ==, -ENOENT);
	CHECK_INT(count_files("pins"), ==, 0);
	snprintf(tmp, sizeof(tmp), "%s/pins/.cd02.tmp", dir);
	CHECK(access(tmp, F_OK) != 0);
	CHECK_INT(store_pin_derived(s, "cd02", "idx", "idx-1", store_generation(s)), ==, 0);
	CHECK_INT(store_find_pin(s, "cd02", "idx", &pin), ==, 0);
	store_free(s);
	remove_dir();
	return 0;
}

static int test_store__pin_names_a_derived_artifact(void)
{
	struct store *s = fresh_store();
	struct store_artifact d;
	struct store_pin pin;
	bool is_new;

	CHECK(s);
	CHECK_INT(put(s, "cd01", "exe", STORE_HAS_SYMTAB, STORE_KIND_EXECUTABLE, &is_new), ==, 0);
	CHECK_INT(store_put_derived(s, "cd01", "idx-1", put_derived_text, "index one"), ==, 0);
	CHECK_INT(store_find_derived(s, "cd01", "idx-1", &d), ==, 0);
	CHECK_INT(store_find_pin(s, "cd01", "idx", &pin), ==, -ENOENT);
	CHECK_INT(store_pin_derived(s, "cd01", "idx", "idx-1", store_generation(s)), ==, 0);
	CHECK_INT(store_find_pin(s, "cd01", "idx", &pin), ==, 0);
	CHECK_STR(pin.what, "idx-1");
	CHECK_STR(pin.sha256, d.sha256);
	CHECK_INT(store_find_pin(s, "cd01", "unwind", &pin), ==, -ENOENT);
	/* Another kind lives beside it; a pin of an unknown artifact is refused. */
	CHECK_INT(store_put_derived(s, "cd01", "uw-1", put_derived_text, "table"), ==, 0);
	CHECK_INT(store_pin_derived(s, "cd01", "unwind", "uw-1", store_generation(s)), ==, 0);
	CHECK_INT(store_pin_derived(s, "cd01", "idx", "idx-9", store_generation(s)), ==, -ENOENT);
	CHECK_INT(store_find_pin(s, "cd01", "idx", &pin), ==, 0);
	CHECK_STR(pin.what, "idx-1");
	/* Readable with the store still opening, i.e. without RocksDB. */
	store_free(s);
	CHECK_INT(store_new(dir, &s), ==, 0);
	CHECK_INT(store_find_pin(s, "cd01", "unwind", &pin), ==, 0);
	CHECK(!store_is_open(s));
	CHECK_STR(pin.what, "uw-1");
	/* Dropping the artifact drops its pin only. */
	CHECK_INT(store_drop_derived(s, "cd01", "idx-1"), ==, 0);
	CHECK_INT(store_find_pin(s, "cd01", "idx", &pin), ==, -ENOENT);
	CHECK_INT(store_find_pin(s, "cd01", "unwind", &pin), ==, 0);
	store_free(s);
	remove_dir();
	return 0;
}

static int test_store__upload_removes_pins_and_races_refuse_them(void)
{
	struct store *s = fresh_store();
	struct store_pin pin;
	uint64_t gen;
	bool is_new;

	CHECK(s);
	CHECK_INT(put(s, "ef02", "exe", STORE_HAS_SYMTAB, STORE_KIND_EXECUTABLE, &is_new), ==, 0);
	CHECK_INT(store_put_derived(s, "ef02", "idx-a", put_derived_text, "a"), ==, 0);
	CHECK_INT(store_pin_derived(s, "ef02", "idx", "idx-a", store_generation(s)), ==, 0);
	CHECK_INT(count_files("pins"), ==, 1);
	/* Better debug info: the pin goes before the record is written. */
	CHECK_INT(put(s, "ef02", "debug", STORE_HAS_DWARF, STORE_KIND_DEBUGINFO, &is_new), ==, 0);
	CHECK_INT(store_find_pin(s, "ef02", "idx", &pin), ==, -ENOENT);
	CHECK_INT(count_files("pins"), ==, 0);
	/* Inputs chosen at gen, an upload, then the pin: refused. */
	gen = store_generation(s);
	CHECK_INT(store_put_derived(s, "ef02", "idx-b", put_derived_text, "b"), ==, 0);
	CHECK_INT(put(s, "ef02", "newer", STORE_HAS_DWARF, STORE_KIND_DEBUGINFO, &is_new), ==, 0);
	CHECK_INT(store_pin_derived(s, "ef02", "idx", "idx-b", gen), ==, -ESTALE);
	CHECK_INT(store_find_pin(s, "ef02", "idx", &pin), ==, -ENOENT);
	store_free(s);
	remove_dir();
	return 0;
}

static int test_store__damaged_pins_are_no_pins(void)
{
	static const char *const bad[] = {
		"", "idx idx-1\n", "idx idx-1 abc\n", "idx idx-1 " /* torn: no newline */
		"0000000000000000000000000000000000000000000000000000000000000000",
		"idx idx-1 00000000000000000000000000000000000000000000000000000000000000zz\n",
	};
	struct store *s = fresh_store();
	struct store_pin pin;
	char path[300];

	CHECK(s);
	snprintf(path, sizeof(path), "%s/pins/0a0b", dir);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		FILE *f = fopen(path, "w");

		CHECK(f);
		fputs(bad[i], f);
		fclose(f);
		CHECK_INT(store_find_pin(s, "0a0b", "idx", &pin), ==, -ENOENT);
	}
	/* Build IDs name files: nothing but lowercase hex is looked up. */
	CHECK_INT(store_find_pin(s, "../pins/0a0b", "idx", &pin), ==, -ENOENT);
	CHECK_INT(store_find_pin(s, "0A0B", "idx", &pin), ==, -ENOENT);
	CHECK_INT(store_pin_derived(s, "../x", "idx", "w", store_generation(s)), ==, -EINVAL);
	store_free(s);
	remove_dir();
	return 0;
}

/* Backdate a blob file (NS "blobs" or "derived") by two hours. */
static int backdate(const char *ns, const char *sha)
{
	char path[400];
	struct timespec t[2] = { { time(NULL) - 7200, 0 }, { time(NULL) - 7200, 0 } };

	snprintf(path, sizeof(path), "%s/%s/%.2s/%s", dir, ns, sha, sha);
	return utimensat(AT_FDCWD, path, t, 0) ? -errno : 0;
}

static bool blob_exists(const char *ns, const char *sha)
{
	char path[400];

	snprintf(path, sizeof(path), "%s/%s/%.2s/%s", dir, ns, sha, sha);
	return access(path, F_OK) == 0;
}

/* Derived artifacts have a namespace of their own: dropping one never
 * removes an uploaded file of the same bytes. */
static int test_store__derived_blobs_never_share_an_upload(void)
{
	struct store *s = fresh_store();
	struct store_artifact a, d;
	bool is_new;
	int fd;

	CHECK(s);
	CHECK_INT(put(s, "aa01", "same bytes", STORE_HAS_SYMTAB, STORE_KIND_EXECUTABLE, &is_new),
		  ==, 0);
	CHECK_INT(store_put_derived(s, "aa02", "idx-1", put_derived_text, "same bytes"), ==, 0);
	CHECK_INT(store_find_derived(s, "aa02", "idx-1", &d), ==, 0);
	CHECK_INT(store_find_best(s, "aa01", STORE_WANT_SYMBOLS, &a), ==, 0);
	CHECK_STR(a.sha256, d.sha256);
	CHECK(d.kinds & STORE_KIND_DERIVED);
	CHECK(blob_exists("derived", d.sha256) && blob_exists("blobs", a.sha256));
	CHECK_INT(store_drop_derived(s, "aa02", "idx-1"), ==, 0);
	CHECK(!blob_exists("derived", d.sha256));
	CHECK_INT(store_artifact_open(s, &a, &fd), ==, 0); /* the upload is whole */
	close(fd);
	store_free(s);
	remove_dir();
	return 0;
}

/* A derived artifact supersedes the others of its kind and build ID:
 * their records go, and their blobs unless another record names them. */
static int test_store__superseded_derived_collected(void)
{
	struct store *s = fresh_store();
	struct store_artifact one, shared, two, table;

	CHECK(s);
	CHECK_INT(store_put_derived(s, "cd01", "idx-v1-aaaa", put_derived_text, "one"), ==, 0);
	CHECK_INT(store_put_derived(s, "cd01", "idx-v1-bbbb", put_derived_text, "shared"), ==, 0);
	CHECK_INT(store_find_derived(s, "cd01", "idx-v1-aaaa", &one), ==, -ENOENT);
	CHECK_INT(store_find_derived(s, "cd01", "idx-v1-bbbb", &shared), ==, 0);
	CHECK_INT(store_put_derived(s, "cd02", "idx-v1-cccc", put_derived_text, "shared"), ==, 0);
	CHECK_INT(store_put_derived(s, "cd01", "uw-v1-aaaa", put_derived_text, "table"), ==, 0);
	CHECK_INT(backdate("derived", shared.sha256), ==, 0);
	CHECK_INT(store_put_derived(s, "cd01", "idx-v2-bbbb", put_derived_text, "two"), ==, 0);
	CHECK_INT(store_find_derived(s, "cd01", "idx-v1-bbbb", &shared), ==, -ENOENT);
	CHECK_INT(store_find_derived(s, "cd01", "idx-v2-bbbb", &two), ==, 0);
	CHECK_INT(store_find_derived(s, "cd01", "uw-v1-aaaa", &table), ==, 0); /* another kind */
	CHECK_INT(store_find_derived(s, "cd02", "idx-v1-cccc", &shared), ==, 0);
	CHECK(blob_exists("derived", shared.sha256)); /* cd02 names it still */
	CHECK(blob_exists("derived", two.sha256) && blob_exists("derived", table.sha256));
	store_free(s);
	remove_dir();
	return 0;
}

/* Files no record names are swept once older than the grace period. */
static int test_store__unnamed_old_blobs_swept(void)
{
	static const char *orphan = "ab00000000000000000000000000000000000000000000000000000000000000";
	static const char *fresh = "ab11111111111111111111111111111111111111111111111111111111111111";
	struct store *s = fresh_store();
	struct store_artifact a;
	struct store_gc_stats st;
	char path[400];
	bool is_new;
	FILE *f;

	CHECK(s);
	CHECK_INT(put(s, "ef01", "kept", STORE_HAS_SYMTAB, STORE_KIND_EXECUTABLE, &is_new), ==, 0);
	CHECK_INT(store_find_best(s, "ef01", STORE_WANT_SYMBOLS, &a), ==, 0);
	/* the open's own collection runs beside the first requests: one that
	 * took its named blobs before "kept" was recorded is over once this
	 * one is (one at a time), before "kept" is backdated */
	CHECK_INT(store_collect_garbage(s, 3600, &st), ==, 0);
	snprintf(path, sizeof(path), "%s/blobs/ab", dir);
	mkdir(path, 0700);
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/blobs/ab/%s", dir, i ? fresh : orphan);
		CHECK((f = fopen(path, "w")));
		fputs("nobody names me", f);
		fclose(f);
	}
	CHECK_INT(backdate("blobs", orphan), ==, 0);
	CHECK_INT(backdate("blobs", a.sha256), ==, 0);
	CHECK_INT(store_collect_garbage(s, 3600, &st), ==, 0);
	CHECK(st.files <= 1); /* the open's own sweep may have been later */
	CHECK(!blob_exists("blobs", orphan));
	CHECK(blob_exists("blobs", fresh)); /* maybe about to be recorded */
	CHECK(blob_exists("blobs", a.sha256)); /* named, however old */
	store_free(s);
	remove_dir();
	return 0;
}

/* A lookup's -ENOENT is the one "not found"; any other errno is a store
 * that cannot say. */
static int test_store__error_kind(void)
{
	CHECK_INT(store_error_kind(-ENOENT), ==, EMBER_ERRK_NOT_FOUND);
	CHECK_INT(store_error_kind(-EIO), ==, EMBER_ERRK_UNAVAILABLE);
	CHECK_INT(store_error_kind(-ESTALE), ==, EMBER_ERRK_UNAVAILABLE);
	CHECK_INT(store_error_kind(-ENOSPC), ==, EMBER_ERRK_NO_SPACE);
	CHECK_INT(store_error_kind(-EAGAIN), ==, EMBER_ERRK_BUSY);
	return 0;
}

static const struct unit_case cases[] = {
	UNIT_CASE(test_store__error_kind),
	UNIT_CASE(test_store__derived_blobs_never_share_an_upload),
	UNIT_CASE(test_store__superseded_derived_collected),
	UNIT_CASE(test_store__unnamed_old_blobs_swept),
	UNIT_CASE(test_store__sha256_of_known_content),
	UNIT_CASE(test_store__list_all_pages_in_build_id_order),
	UNIT_CASE(test_store__duplicate_content_is_one_record),
	UNIT_CASE(test_store__dwarf_wins_whatever_the_order),
	UNIT_CASE(test_store__symtab_only_is_no_debuginfo),
	UNIT_CASE(test_store__reopen_keeps_records_and_drops_tmp),
	UNIT_CASE(test_store__damaged_record_is_skipped),
	UNIT_CASE(test_store__sources_only_when_named),
	UNIT_CASE(test_store__second_open_is_refused_at_once),
	UNIT_CASE(test_store__started_store_waits_for_its_open),
	UNIT_CASE(test_store__failed_open_fails_every_read),
	UNIT_CASE(test_store__scan_failure_midway_is_an_error),
	UNIT_CASE(test_store__unreadable_records_fail_the_open),
	UNIT_CASE(test_store__errno_survives_the_log),
	UNIT_CASE(test_store__pin_write_failure_is_an_error),
	UNIT_CASE(test_store__pin_names_a_derived_artifact),
	UNIT_CASE(test_store__upload_removes_pins_and_races_refuse_them),
	UNIT_CASE(test_store__damaged_pins_are_no_pins),
	UNIT_CASE(test_store__file_id_matches_the_profilers_definition),
	UNIT_CASE(test_store__file_ids_of_executables_are_indexed_and_kept),
	UNIT_CASE(test_store__evicted_executable_takes_its_file_id),
	UNIT_CASE(test_store__file_ids_of_an_older_store_are_backfilled),
};

UNIT_MAIN_QUIET(cases)
