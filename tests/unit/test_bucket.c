/*
 * test_bucket.c - unit tests of bucket/: the s3:// URL and the key
 * parsers, and, against the real radosgw of the objstore_ceph fixture
 * (cases test_bucket__rgw_*), the debuginfo store on a bucket: two stores
 * (two replicas' data directories) on one prefix see each other's
 * candidates, sources and derived artifacts; concurrent writers of one
 * build ID agree on its candidates; a blob above the multipart threshold
 * goes up in parts and comes back whole; concurrent opens of a missing
 * blob fetch it once; a bucket that cannot be reached fails uploads and
 * lookups with its error, never "not found"; the profile store's block
 * storage (create-only put and claim, range and whole gets, its cache's
 * bound, list, del, another replica's reads).
 */
#include "bucket.h"
#include "objstore.h"
#include "pstore_blockio.h"
#include "store.h"
#include "unit.h"

#include "rgw_env.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- without a bucket ------------------------------------------------------- */

static int test_bucket__url_parse(void)
{
	char b[BUCKET_NAME_MAX], p[BUCKET_PREFIX_MAX], msg[256];

	CHECK_INT(bucket_url_parse("s3://my-bucket", b, p, msg, sizeof(msg)), ==, 0);
	CHECK_STR(b, "my-bucket");
	CHECK_STR(p, "");
	CHECK_INT(bucket_url_parse("s3://my.bucket/a/b/", b, p, msg, sizeof(msg)), ==, 0);
	CHECK_STR(b, "my.bucket");
	CHECK_STR(p, "a/b/");
	CHECK_INT(bucket_url_parse("s3://bkt/prod", b, p, msg, sizeof(msg)), ==, 0);
	CHECK_STR(p, "prod/");
	CHECK_INT(bucket_url_parse("http://bkt/x", b, p, msg, sizeof(msg)), ==, -EINVAL);
	CHECK(strstr(msg, "not an s3:// URL"));
	CHECK_INT(bucket_url_parse("s3://Upper/x", b, p, msg, sizeof(msg)), ==, -EINVAL);
	CHECK(strstr(msg, "not a bucket name"));
	CHECK_INT(bucket_url_parse("s3://ab", b, p, msg, sizeof(msg)), ==, -EINVAL);
	CHECK_INT(bucket_url_parse("s3://bkt/a/../b", b, p, msg, sizeof(msg)), ==, -EINVAL);
	CHECK_INT(bucket_url_parse("s3://bkt/a//b", b, p, msg, sizeof(msg)), ==, -EINVAL);
	CHECK_INT(bucket_url_parse("s3://bkt//a", b, p, msg, sizeof(msg)), ==, -EINVAL);
	CHECK_INT(bucket_url_parse("s3://bkt/a b", b, p, msg, sizeof(msg)), ==, -EINVAL);
	CHECK(strstr(msg, "prefix 'a b'"));
	return 0;
}

static int test_bucket__cand_name_parse(void)
{
	const char *sha = "0b03cd0b9c3fc990c9affb4a9957a991c66c88876aedee99947c4f7d22977143";
	struct bucket_cand_name c;
	char name[128];

	snprintf(name, sizeof(name), "%s/3-1", sha);
	CHECK_INT(bucket_cand_name_parse(name, strlen(name), &c), ==, 0);
	CHECK_STR(c.sha256, sha);
	CHECK_INT(c.kinds, ==, 3);
	CHECK_INT(c.origin, ==, 1);
	snprintf(name, sizeof(name), "%s/255-0", sha);
	CHECK_INT(bucket_cand_name_parse(name, strlen(name), &c), ==, 0);
	CHECK_INT(c.kinds, ==, 255);
	static const char *const bad[] = { "/256-0", "/1-2", "/-0", "/1-", "/1", "/a-0", "/1-0x",
			      "/1000-0", "x1-0" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(name, sizeof(name), "%s%s", sha, bad[i]);
		CHECK_INT(bucket_cand_name_parse(name, strlen(name), &c), ==, -EINVAL);
	}
	snprintf(name, sizeof(name), "0B03%s/1-0", sha + 4); /* upper case: not ours */
	CHECK_INT(bucket_cand_name_parse(name, strlen(name), &c), ==, -EINVAL);
	CHECK_INT(bucket_cand_name_parse(sha, 10, &c), ==, -EINVAL);
	return 0;
}

struct names_seen {
	char all[256];
	int n;
};

static int note_name(void *arg, const char *path)
{
	struct names_seen *s = arg;

	s->n++;
	strncat(s->all, path, sizeof(s->all) - strlen(s->all) - 2);
	strcat(s->all, ";");
	return 0;
}

static int test_bucket__names_parse(void)
{
	static const uint8_t good[] = "/a/b.c\0/d.h\0\0/e\0";
	static const uint8_t tail[] = "/a\0/unterminated";
	struct names_seen s = { 0 };
	bool bad;

	CHECK_INT(bucket_names_parse(good, sizeof(good) - 1, note_name, &s, &bad), ==, 0);
	CHECK_STR(s.all, "/a/b.c;/d.h;/e;");
	CHECK(!bad);
	memset(&s, 0, sizeof(s));
	CHECK_INT(bucket_names_parse(tail, sizeof(tail) - 1, note_name, &s, &bad), ==, 0);
	CHECK_STR(s.all, "/a;");
	CHECK(bad);
	return 0;
}

/* ---- two stores on one bucket ------------------------------------------------ */

struct replica {
	char dir[128];
	struct objstore *os;
	struct store *s;
};

static void replica_close(struct replica *r)
{
	char cmd[200];

	store_free(r->s);
	objstore_free(r->os);
	r->s = NULL;
	r->os = NULL;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", r->dir);
	if (r->dir[0] && system(cmd))
		fprintf(stderr, "cannot remove %s\n", r->dir);
}

static void small_parts(struct objstore_opts *o, void *ctx)
{
	(void)ctx;
	o->part_size = 5u << 20;
	o->multipart_threshold = 5u << 20;
}

/* A store in a new directory on prefix of the fixture's bucket (through a
 * dead endpoint when dead_port is not 0): 0, or a negative errno. */
static int replica_open(struct replica *r, const struct rgw_env *e, const char *prefix,
			int dead_port)
{
	struct bucket_opts bo = { .sz = sizeof(bo), .prefix = prefix, .refresh_ms = 60000 };
	struct store_backend be;
	int err;

	memset(r, 0, sizeof(*r));
	snprintf(r->dir, sizeof(r->dir), "/tmp/ember-test-bucket.XXXXXX");
	if (!mkdtemp(r->dir))
		return -errno;
	r->os = rgw_open(e, dead_port, small_parts, NULL);
	if (!r->os)
		return -EIO;
	bo.os = r->os;
	err = bucket_store_backend(&bo, &be);
	if (!err)
		err = store_new(r->dir, &r->s);
	if (!err)
		err = store_set_backend(r->s, &be);
	if (!err)
		err = store_open_begin(r->s);
	return err ? err : store_wait(r->s);
}

/* Store len bytes of content (a pattern from seed) as a candidate of id. */
static int put_bytes(struct store *s, const char *id, size_t len, uint64_t seed,
		     unsigned flags, unsigned kinds, struct store_artifact *out)
{
	struct store_artifact a = { .flags = flags, .kinds = kinds, .mtime = 1 };
	const char *names[] = { "/src/main.c", "/src/util.h" };
	struct store_blob *b;
	uint8_t buf[65536];
	bool is_new;
	int err = store_blob_begin(s, &b);

	for (size_t done = 0; !err && done < len;) {
		size_t n = len - done < sizeof(buf) ? len - done : sizeof(buf);

		fill_random(buf, n, seed + done);
		err = store_blob_write(b, buf, n);
		done += n;
	}
	if (!err)
		err = store_blob_seal(b, a.sha256, &a.size);
	if (err) {
		store_blob_discard(b);
		return err;
	}
	snprintf(a.build_id, sizeof(a.build_id), "%s", id);
	snprintf(a.name, sizeof(a.name), "file-%zu", len);
	if (out)
		*out = a;
	return store_add_artifact(s, b, &a, names, 2, &is_new);
}

/* Whether fd holds what put_bytes(len, seed) wrote. */
static bool same_bytes(int fd, size_t len, uint64_t seed)
{
	uint8_t want[65536], got[65536];
	struct stat st;

	if (fstat(fd, &st) || (size_t)st.st_size != len)
		return false;
	for (size_t done = 0; done < len;) {
		size_t n = len - done < sizeof(want) ? len - done : sizeof(want);

		fill_random(want, n, seed + done);
		if (pread(fd, got, n, (off_t)done) != (ssize_t)n || memcmp(want, got, n))
			return false;
		done += n;
	}
	return true;
}

#define ID1 "5eca4289d212cde5a18b90eecea2406dcae6cd47"

static int test_bucket__rgw_other_replica_serves_an_upload(void)
{
	struct rgw_env e;
	struct replica a, b;
	struct store_artifact up, got;
	struct store_backend_stats bs;
	int err = rgw_env_load(&e), fd, rc = 1;
	const char *prefix;

	if (err)
		return err;
	prefix = case_prefix("other_replica");
	if (replica_open(&a, &e, prefix, 0) || replica_open(&b, &e, prefix, 0))
		goto out;
	CHECK_INT(store_find_best(b.s, ID1, STORE_WANT_DEBUGINFO, &got), ==, -ENOENT);
	CHECK_INT(put_bytes(a.s, ID1, 3000, 7, STORE_HAS_DWARF | STORE_HAS_SYMTAB,
			    STORE_KIND_DEBUGINFO, &up), ==, 0);
	/* b listed ID1 a moment ago (none): a miss is never taken from that */
	CHECK_INT(store_find_best(b.s, ID1, STORE_WANT_DEBUGINFO, &got), ==, 0);
	CHECK_STR(got.sha256, up.sha256);
	CHECK_INT(got.size, ==, 3000);
	CHECK_STR(got.name, "file-3000");
	CHECK_INT(store_source_named(b.s, ID1, "/src/util.h"), ==, 0);
	CHECK_INT(store_source_named(b.s, ID1, "/src/other.h"), ==, -ENOENT);
	CHECK_INT(store_blob_open(b.s, got.sha256, &fd), ==, 0);
	CHECK(same_bytes(fd, 3000, 7));
	close(fd);
	store_get_backend_stats(b.s, &bs);
	CHECK_INT(bs.fetches, ==, 1);
	CHECK_INT(bs.fetch_bytes, ==, 3000);
	rc = 0;
out:
	replica_close(&a);
	replica_close(&b);
	return rc;
}

static int put_text(void *arg, struct store_blob *b)
{
	return store_blob_write(b, arg, strlen(arg));
}

static int read_all(int fd, char *buf, size_t size)
{
	ssize_t n = pread(fd, buf, size - 1, 0);

	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

static int test_bucket__rgw_sources_and_derived_are_shared(void)
{
	struct rgw_env e;
	struct replica a, b;
	struct store_artifact got;
	struct store_blob *blob;
	char sha[STORE_SHA256_HEX], text[64];
	uint64_t size;
	bool is_new;
	int err = rgw_env_load(&e), fd, rc = 1;
	const char *prefix;

	if (err)
		return err;
	prefix = case_prefix("sources_derived");
	if (replica_open(&a, &e, prefix, 0) || replica_open(&b, &e, prefix, 0))
		goto out;
	CHECK_INT(put_bytes(a.s, ID1, 100, 1, STORE_HAS_DWARF, STORE_KIND_DEBUGINFO, NULL), ==, 0);
	CHECK_INT(store_blob_begin(a.s, &blob), ==, 0);
	CHECK_INT(store_blob_write(blob, "int main;\n", 10), ==, 0);
	CHECK_INT(store_blob_seal(blob, sha, &size), ==, 0);
	CHECK_INT(store_add_source(a.s, blob, ID1, "/src/main.c", sha, size, STORE_FROM_UPLOAD,
				   &is_new), ==, 0);
	CHECK_INT(store_put_derived(a.s, ID1, "symidx-v1-aa-none", put_text, "index bytes"), ==, 0);

	CHECK_INT(store_find_source(b.s, ID1, "/src/main.c", &got), ==, 0);
	CHECK_STR(got.sha256, sha);
	CHECK_STR(got.name, "main.c");
	CHECK_INT(store_blob_open(b.s, got.sha256, &fd), ==, 0);
	CHECK_INT(read_all(fd, text, sizeof(text)), ==, 0);
	CHECK_STR(text, "int main;\n");
	CHECK_INT(store_find_source(b.s, ID1, "/src/util.h", &got), ==, -ENOENT);

	CHECK_INT(store_find_derived(b.s, ID1, "symidx-v1-aa-none", &got), ==, 0);
	CHECK(got.kinds & STORE_KIND_DERIVED);
	CHECK_INT(store_artifact_open(b.s, &got, &fd), ==, 0);
	CHECK_INT(read_all(fd, text, sizeof(text)), ==, 0);
	CHECK_STR(text, "index bytes");
	CHECK_INT(store_find_derived(b.s, ID1, "symidx-v1-bb-none", &got), ==, -ENOENT);
	rc = 0;
out:
	replica_close(&a);
	replica_close(&b);
	return rc;
}

/* ---- concurrent writers -------------------------------------------------------- */

struct writer {
	struct store *s;
	uint64_t seed;
	unsigned kinds;
	int err;
};

static void *write_some(void *arg)
{
	struct writer *w = arg;

	for (int i = 0; i < 3 && !w->err; i++) /* seeds shared by both writers */
		w->err = put_bytes(w->s, ID1, 1000 + (size_t)i, w->seed + (uint64_t)i,
				   STORE_HAS_DWARF, w->kinds, NULL);
	return NULL;
}

struct cand_list {
	char text[2048];
};

static int note_cand(const struct store_artifact *a, void *arg)
{
	struct cand_list *l = arg;
	size_t n = strlen(l->text);

	snprintf(l->text + n, sizeof(l->text) - n, "%.8s:%u:%llu;", a->sha256, a->kinds,
		 (unsigned long long)a->size);
	return 0;
}

/* How many "sha:kinds:size;" entries of text have kinds 3; *n: entries. */
static int count_both_kinds(const char *text, int *n)
{
	unsigned kinds;
	int both = 0;

	*n = 0;
	for (const char *p = text; *p; p = strchr(p, ';') + 1, ++*n)
		if (sscanf(p, "%*8[0-9a-f]:%u:", &kinds) == 1 && kinds == 3)
			both++;
	return both;
}

static int test_bucket__rgw_concurrent_uploads_agree(void)
{
	struct rgw_env e;
	struct replica a, b, c;
	struct writer wa, wb;
	struct cand_list la = { "" }, lb = { "" }, lc = { "" };
	struct store_artifact x;
	pthread_t ta, tb;
	int err = rgw_env_load(&e), rc = 1, n;
	const char *prefix;

	if (err)
		return err;
	prefix = case_prefix("concurrent");
	if (replica_open(&a, &e, prefix, 0) || replica_open(&b, &e, prefix, 0) ||
	    replica_open(&c, &e, prefix, 0))
		goto out;
	/* the same three files from both, as another kind from b, at once */
	wa = (struct writer){ a.s, 100, STORE_KIND_DEBUGINFO, 0 };
	wb = (struct writer){ b.s, 100, STORE_KIND_EXECUTABLE, 0 };
	pthread_create(&ta, NULL, write_some, &wa);
	pthread_create(&tb, NULL, write_some, &wb);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	CHECK_INT(wa.err, ==, 0);
	CHECK_INT(wb.err, ==, 0);
	/* each re-lists (refresh_ms is a minute: force it by a fresh store c,
	 * and by a miss on a and b for a want none of them serves) */
	CHECK_INT(store_list(c.s, ID1, note_cand, &lc), ==, 0);
	CHECK_INT(store_find_best(a.s, ID1, STORE_WANT_EXECUTABLE, &x), ==, -ENOENT);
	CHECK_INT(store_find_best(b.s, ID1, STORE_WANT_EXECUTABLE, &x), ==, -ENOENT);
	CHECK_INT(store_list(a.s, ID1, note_cand, &la), ==, 0);
	CHECK_INT(store_list(b.s, ID1, note_cand, &lb), ==, 0);
	CHECK_STR(la.text, lc.text);
	CHECK_STR(lb.text, lc.text);
	/* three candidates, each with both kinds */
	CHECK_INT(count_both_kinds(lc.text, &n), ==, 3);
	CHECK_INT(n, ==, 3);
	rc = 0;
out:
	replica_close(&a);
	replica_close(&b);
	replica_close(&c);
	return rc;
}

/* ---- large blobs, one fetch ---------------------------------------------------- */

struct opener {
	struct store *s;
	const char *sha;
	size_t len;
	uint64_t seed;
	bool ok;
};

static void *open_one(void *arg)
{
	struct opener *o = arg;
	int fd;

	if (store_blob_open(o->s, o->sha, &fd) == 0) {
		o->ok = same_bytes(fd, o->len, o->seed);
		close(fd);
	}
	return NULL;
}

static int test_bucket__rgw_multipart_blob_fetched_once(void)
{
	enum { N = 6 };
	const size_t len = (11u << 20) + 12345; /* three 5 MiB parts */
	struct rgw_env e;
	struct replica a, b;
	struct store_artifact up, got;
	struct store_backend_stats bs;
	struct opener op[N];
	pthread_t t[N];
	int err = rgw_env_load(&e), rc = 1;
	const char *prefix;

	if (err)
		return err;
	prefix = case_prefix("multipart");
	if (replica_open(&a, &e, prefix, 0) || replica_open(&b, &e, prefix, 0))
		goto out;
	CHECK_INT(put_bytes(a.s, ID1, len, 42, STORE_HAS_DWARF, STORE_KIND_DEBUGINFO, &up), ==, 0);
	CHECK_INT(store_find_best(b.s, ID1, STORE_WANT_DEBUGINFO, &got), ==, 0);
	for (int i = 0; i < N; i++) {
		op[i] = (struct opener){ b.s, got.sha256, len, 42, false };
		pthread_create(&t[i], NULL, open_one, &op[i]);
	}
	for (int i = 0; i < N; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < N; i++)
		CHECK(op[i].ok);
	store_get_backend_stats(b.s, &bs);
	CHECK_INT(bs.fetches, ==, 1);
	CHECK_INT(bs.fetch_bytes, ==, len);
	rc = 0;
out:
	replica_close(&a);
	replica_close(&b);
	return rc;
}

/* ---- the bounded cache ------------------------------------------------------------ */

/* Files under DIR/blobs/xx/. */
static int count_blob_files(const char *dir)
{
	char path[300];
	DIR *top, *sub;
	struct dirent *e, *f;
	int n = 0;

	snprintf(path, sizeof(path), "%s/blobs", dir);
	top = opendir(path);
	if (!top)
		return -1;
	while ((e = readdir(top))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/blobs/%s", dir, e->d_name);
		sub = opendir(path);
		while (sub && (f = readdir(sub)))
			n += f->d_name[0] != '.';
		if (sub)
			closedir(sub);
	}
	closedir(top);
	return n;
}

static int test_bucket__rgw_cache_keeps_its_bound(void)
{
	struct rgw_env e;
	struct replica a;
	struct store_artifact first, got;
	struct store_backend_stats bs;
	int err = rgw_env_load(&e), rc = 1, fd;

	if (err)
		return err;
	if (replica_open(&a, &e, case_prefix("cache"), 0))
		goto out;
	CHECK_INT(store_set_cache_limit(a.s, 3500u << 10, 0), ==, 0); /* 3.4 MiB, no grace */
	CHECK_INT(store_set_cache_limit(a.s, 1u << 20, 0), ==, -EINVAL); /* once */
	for (uint64_t i = 0; i < 5; i++) /* 1 MiB each: the 4th and 5th evict one */
		CHECK_INT(put_bytes(a.s, ID1, 1u << 20, 1000 * i, STORE_HAS_DWARF,
				    STORE_KIND_DEBUGINFO, i ? NULL : &first), ==, 0);
	store_get_backend_stats(a.s, &bs);
	CHECK_INT(bs.cache_evictions, ==, 2);
	CHECK_INT(bs.cache_bytes, ==, 3u << 20);
	CHECK_INT(count_blob_files(a.dir), ==, 3);
	/* the oldest went, and comes back from the bucket, whole */
	CHECK_INT(store_find_best(a.s, ID1, STORE_WANT_DEBUGINFO, &got), ==, 0);
	CHECK_INT(store_blob_open(a.s, first.sha256, &fd), ==, 0);
	CHECK(same_bytes(fd, 1u << 20, 0));
	close(fd);
	store_get_backend_stats(a.s, &bs);
	CHECK_INT(bs.fetches, ==, 1);
	CHECK_INT(bs.cache_evictions, ==, 3); /* room made for it */
	CHECK_INT(count_blob_files(a.dir), ==, 3);
	rc = 0;
out:
	replica_close(&a);
	return rc;
}

/* ---- a bucket that cannot be reached ------------------------------------------- */

static int test_bucket__rgw_unreachable_bucket_is_an_error(void)
{
	struct rgw_env e;
	struct replica a;
	struct store_artifact got;
	int err = rgw_env_load(&e), rc = 1, fd;

	if (err)
		return err;
	/* port 1 on loopback: nothing listens */
	if (replica_open(&a, &e, case_prefix("unreachable"), 1))
		goto out;
	err = put_bytes(a.s, ID1, 100, 1, STORE_HAS_DWARF, STORE_KIND_DEBUGINFO, &got);
	CHECK_INT(err, ==, -ECONNREFUSED);
	/* nothing recorded locally, and a lookup says it cannot tell */
	CHECK_INT(store_find_best(a.s, ID1, STORE_WANT_DEBUGINFO, &got), ==, -ECONNREFUSED);
	CHECK_INT(store_blob_open(a.s, got.sha256, &fd), ==, -ECONNREFUSED);
	CHECK_INT(store_find_derived(a.s, ID1, "symidx-v1-aa-none", &got), ==, -ECONNREFUSED);
	rc = 0;
out:
	replica_close(&a);
	return rc;
}


/* ---- the profile store's block storage (bucket/profiles.c) -------------------- */

static int count_files_in(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return d ? n : -1;
}

static int note_listed(void *arg, const char *name, uint64_t size)
{
	char *all = arg;
	char one[160];

	snprintf(one, sizeof(one), "%s=%llu;", name, (unsigned long long)size);
	strncat(all, one, 1023 - strlen(all));
	return 0;
}

static int block_io_open(struct objstore *os, const char *prefix, const char *cache,
			 struct pstore_blockio *io)
{
	struct bucket_profile_opts o = { .sz = sizeof(o), .os = os, .prefix = prefix,
					 .cache_dir = cache, .cache_bytes = 2500 };

	return bucket_profile_blockio(&o, io);
}

/* put create-only (again: success), claim (again: -EEXIST), gets by range
 * and whole, the cache's bound, list, del; a second replica's reads. */
static int test_bucket__rgw_profile_blocks(void)
{
	static const char *const names[] = { "blocks/0000000000000e10-aa.pblk",
					     "blocks/0000000000000e10-bb.pblk",
					     "blocks/0000000000001c20-cc.pblk" };
	char dir[] = "/tmp/ember-test-pblocks.XXXXXX", c1[64], c2[64], listed[1024] = "";
	struct pstore_blockio a = { 0 }, b = { 0 };
	uint8_t data[3][1000];
	struct ember_buf got;
	struct rgw_env e;
	struct objstore *os = NULL;
	const char *prefix = case_prefix("pblocks");
	int err = rgw_env_load(&e), rc = 1;

	if (err)
		return err;
	ember_buf_init(&got, 1 << 20);
	CHECK(mkdtemp(dir));
	snprintf(c1, sizeof(c1), "%s/a", dir);
	snprintf(c2, sizeof(c2), "%s/b", dir);
	CHECK((os = rgw_open(&e, 0, NULL, NULL)));
	CHECK_INT(block_io_open(os, prefix, c1, &a), ==, 0);
	CHECK_INT(block_io_open(os, prefix, c2, &b), ==, 0);
	for (int i = 0; i < 3; i++) {
		fill_random(data[i], sizeof(data[i]), 7 + (uint64_t)i);
		CHECK_INT(a.put(a.ctx, names[i], data[i], sizeof(data[i])), ==, 0);
	}
	CHECK_INT(a.put(a.ctx, names[0], data[0], sizeof(data[0])), ==, 0); /* 412: ours */
	CHECK_INT(count_files_in(c1), ==, 2); /* 3000 bytes past 2500: the oldest out */
	CHECK_INT(a.get(a.ctx, names[0], 100, 50, &got), ==, 0); /* by range, remote */
	CHECK(got.len == 50 && !memcmp(got.data, data[0] + 100, 50));
	CHECK_INT(count_files_in(c1), ==, 2);
	ember_buf_reset(&got);
	CHECK_INT(a.get(a.ctx, names[0], 0, 0, &got), ==, 0); /* whole: cached again */
	CHECK(got.len == 1000 && !memcmp(got.data, data[0], 1000));
	CHECK_INT(count_files_in(c1), ==, 2);
	ember_buf_reset(&got);
	CHECK_INT(b.get(b.ctx, names[2], 990, 100, &got), ==, 0); /* fewer at the end */
	CHECK(got.len == 10 && !memcmp(got.data, data[2] + 990, 10));
	CHECK_INT(count_files_in(c2), ==, 0);
	CHECK_INT(b.fetch(b.ctx, names[2]), ==, 0);
	CHECK_INT(count_files_in(c2), ==, 1);
	ember_buf_reset(&got);
	CHECK_INT(b.get(b.ctx, names[2], 0, 0, &got), ==, 0);
	CHECK(got.len == 1000 && !memcmp(got.data, data[2], 1000));
	CHECK_INT(a.claim(a.ctx, "index/0000000000000e10/0000000001", "x", 1), ==, 0);
	CHECK_INT(b.claim(b.ctx, "index/0000000000000e10/0000000001", "y", 1), ==, -EEXIST);
	CHECK_INT(b.list(b.ctx, "blocks/", note_listed, listed), ==, 0);
	CHECK(strstr(listed, "blocks/0000000000000e10-aa.pblk=1000;") &&
	      strstr(listed, "blocks/0000000000000e10-bb.pblk=1000;") &&
	      strstr(listed, "blocks/0000000000001c20-cc.pblk=1000;") && !strstr(listed, "index"));
	listed[0] = '\0';
	CHECK_INT(b.list(b.ctx, "index/", note_listed, listed), ==, 0);
	CHECK_STR(listed, "index/0000000000000e10/0000000001=1;");
	CHECK_INT(a.del(a.ctx, names[1]), ==, 0);
	ember_buf_reset(&got);
	CHECK_INT(b.get(b.ctx, names[1], 0, 0, &got), ==, -ENOENT);
	CHECK_INT(b.get(b.ctx, names[1], 0, 10, &got), ==, -ENOENT);
	rc = 0;
	if (a.release)
		a.release(a.ctx);
	if (b.release)
		b.release(b.ctx);
	objstore_free(os);
	ember_buf_release(&got);
	{
		char cmd[100];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd))
			fprintf(stderr, "cannot remove %s\n", dir);
	}
	return rc;
}

static const struct unit_case cases[] = {
	UNIT_CASE(test_bucket__url_parse),
	UNIT_CASE(test_bucket__cand_name_parse),
	UNIT_CASE(test_bucket__names_parse),
	UNIT_CASE(test_bucket__rgw_other_replica_serves_an_upload),
	UNIT_CASE(test_bucket__rgw_sources_and_derived_are_shared),
	UNIT_CASE(test_bucket__rgw_concurrent_uploads_agree),
	UNIT_CASE(test_bucket__rgw_multipart_blob_fetched_once),
	UNIT_CASE(test_bucket__rgw_cache_keeps_its_bound),
	UNIT_CASE(test_bucket__rgw_unreachable_bucket_is_an_error),
	UNIT_CASE(test_bucket__rgw_profile_blocks),
};

UNIT_MAIN_QUIET(cases)
