/*
 * evict.c - the disk quota of what upstream sent (store_evict_upstream()
 * in store.h, docs/store-format.md "Quota").
 *
 * A miss makes the server download and keep a file from upstream: a
 * client asking for many build IDs would fill the disk.  Every record
 * keeps its origin; those STORE_FROM_UPSTREAM count against the quota and
 * are evicted oldest first (by the time they were stored), uploads never.
 * The newest fetched record is never evicted, so the file a request is
 * about to be served stays.  An evicted record takes with it the pins of
 * its build ID, its file-ID index entry (file_id.c) and the derived
 * artifacts whose names carry its sha256;
 * its blob goes once no record names it (another build ID, an upload of
 * the same bytes).  One pass reads every artifact and source record: an
 * eviction is rare (a fetch past the quota), and the walk is cheap next
 * to the download that caused it.
 */
#include "store_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct victim {
	char *key;			/* the record's key (malloc'd) */
	size_t klen;
	char sha[STORE_SHA256_HEX];
	char build_id[STORE_BUILD_ID_HEX];
	uint64_t size;
	int64_t mtime;
	bool source;
};

struct victims {
	struct victim *v;
	size_t n, alloc;
};

/* A record of what upstream sent, as a candidate for eviction. */
static int collect(const char *key, size_t klen, const char *val, size_t vlen, void *arg)
{
	struct victims *w = arg;
	struct store_artifact a;
	struct victim *v;
	size_t idlen = strnlen(key + 1, klen - 1);
	bool source = key[0] == STORE_TAG_SOURCE;
	size_t skip = source ? STORE_SHA256_HEX - 1 : 0;

	if (idlen >= STORE_BUILD_ID_HEX || vlen < skip ||
	    store_record_decode((const uint8_t *)val + skip, vlen - skip, &a) ||
	    a.origin != STORE_FROM_UPSTREAM)
		return 0;
	if (!source && klen < 2 + idlen + STORE_SHA256_HEX - 1)
		return 0;
	if (ember_vec_grow((void **)&w->v, &w->alloc, w->n, sizeof(*w->v)))
		return -ENOMEM;
	v = &w->v[w->n];
	*v = (struct victim){ .klen = klen, .size = a.size, .mtime = a.mtime, .source = source };
	memcpy(v->build_id, key + 1, idlen);
	memcpy(v->sha, source ? val : key + klen - (STORE_SHA256_HEX - 1), STORE_SHA256_HEX - 1);
	v->key = malloc(klen);
	if (!v->key)
		return -ENOMEM;
	memcpy(v->key, key, klen);
	w->n++;
	return 0;
}

static int by_age(const void *a, const void *b)
{
	const struct victim *x = a, *y = b;

	return x->mtime < y->mtime ? -1 : x->mtime > y->mtime;
}

static void victims_release(struct victims *w)
{
	for (size_t i = 0; i < w->n; i++)
		free(w->v[i].key);
	free(w->v);
}

/* The derived records of v's build ID made from v's file (the name
 * carries its sha256), deleted in wb; their blobs' shas into *gone. */
struct derived_walk {
	struct store_batch *wb;
	const char *sha;
	struct sha_set *gone;
};

static int drop_derived_of(const char *key, size_t klen, const char *val, size_t vlen,
			   void *arg)
{
	struct derived_walk *w = arg;
	size_t idlen = strnlen(key + 1, klen - 1);

	if (!memmem(key + 2 + idlen, klen - 2 - idlen, w->sha, STORE_SHA256_HEX - 1))
		return 0;
	store_batch_delete(w->wb, key, klen);
	return vlen >= STORE_SHA256_HEX - 1 ? store_sha_set_add(w->gone, val) : 0;
}

/* Delete the records of w->v[0, n) in one synced batch, with the pins of
 * their build IDs and the derived artifacts made from them. */
static int delete_records(struct store *s, const struct victims *w, size_t n,
			  struct sha_set *derived_gone)
{
	char prefix[STORE_KEY_MAX];
	struct store_batch wb;
	int err = 0;

	for (size_t i = 0; !err && i < n; i++)
		err = store_pins_clear(s, w->v[i].build_id);
	if (err || (err = store_batch_begin(s, &wb)))
		return err;
	for (size_t i = 0; !err && i < n; i++) {
		struct derived_walk dw = { &wb, w->v[i].sha, derived_gone };
		int plen = store_key_make(prefix, STORE_TAG_DERIVED, w->v[i].build_id, NULL);

		store_batch_delete(&wb, w->v[i].key, w->v[i].klen);
		if (!w->v[i].source)
			err = store_file_id_drop(s, &wb, w->v[i].build_id, w->v[i].sha);
		if (!err && plen > 0)
			err = store_db_scan(s, prefix, (size_t)plen, drop_derived_of, &dw);
	}
	if (err) { /* commit nothing of a walk cut short: the batch is dropped */
		store_batch_discard(&wb);
		return err;
	}
	return store_batch_commit(&wb);
}

/* The blob files of what was evicted that no record names any more. */
static void remove_unnamed(struct store *s, const struct victims *w, size_t n,
			   const struct sha_set *derived_gone)
{
	struct sha_set named = { 0 }, dnamed = { 0 };
	char path[3 + STORE_SHA256_HEX];
	uint64_t bytes = 0;

	if (store_named_blobs(s, "AS", &named) == 0)
		for (size_t i = 0; i < n; i++) {
			snprintf(path, sizeof(path), "%.2s/%s", w->v[i].sha, w->v[i].sha);
			if (!store_sha_set_has(&named, w->v[i].sha))
				store_remove_old(s->blobs_fd, path, STORE_COMMIT_GRACE_S, &bytes);
		}
	if (store_named_blobs(s, "D", &dnamed) == 0)
		for (size_t i = 0; i < derived_gone->n; i++) {
			const char *sha = derived_gone->v[i];

			snprintf(path, sizeof(path), "%.2s/%s", sha, sha);
			if (!store_sha_set_has(&dnamed, sha))
				store_remove_old(s->derived_fd, path, STORE_COMMIT_GRACE_S, &bytes);
		}
	free(named.v);
	free(dnamed.v);
}

/* The counters once the records of w->v[0, n) are gone (under write_mu). */
static void count_evicted(struct store *s, const struct victims *w, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (w->v[i].source) {
			s->n_sources--;
		} else {
			s->n_artifacts--;
			s->blob_bytes -= w->v[i].size;
		}
		s->upstream_bytes -= w->v[i].size;
	}
	s->evictions += n;
	s->generation++; /* the best inputs of these build IDs may have changed */
}

int store_evict_upstream(struct store *s, uint64_t quota)
{
	struct victims w = { 0 };
	struct sha_set derived_gone = { 0 };
	uint64_t total;
	size_t n = 0;
	int err;

	pthread_mutex_lock(&s->write_mu);
	total = s->upstream_bytes;
	err = total <= quota ? 0 : store_db_scan(s, "A", 1, collect, &w);
	if (!err && total > quota)
		err = store_db_scan(s, "S", 1, collect, &w);
	if (!err && w.n > 1) {
		qsort(w.v, w.n, sizeof(*w.v), by_age);
		while (n < w.n - 1 && total > quota) /* never the newest */
			total -= w.v[n++].size;
		err = n ? delete_records(s, &w, n, &derived_gone) : 0;
		if (!err)
			count_evicted(s, &w, n);
	}
	pthread_mutex_unlock(&s->write_mu);
	if (!err && n) {
		remove_unnamed(s, &w, n, &derived_gone);
		pr_info("store: evicted %zu files fetched from upstream (quota %llu bytes)", n,
			(unsigned long long)quota);
	}
	victims_release(&w);
	free(derived_gone.v);
	return err ? err : (int)n;
}
