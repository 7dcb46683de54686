/*
 * gc.c - what the store no longer needs, collected (docs/store-format.md,
 * "Garbage").
 *
 * Three things become garbage.  A derived artifact (a saved index, an
 * unwind table) is made for the current best inputs of its build ID, so
 * when a new one of the same kind is recorded the older ones are
 * superseded: their records go at once (store_add_derived), their blobs
 * as soon as no other record names them.  Blob files that no record
 * names (a crash between commit and record, an eviction, an older
 * version's derived blobs under blobs/) are swept at every open.  A blob
 * is removed only when it is older than a grace period: a writer commits
 * a blob (rename, or a touch of an identical one) before it writes the
 * record that names it, and the grace covers that gap.
 *
 * Uploads and derived artifacts live in two namespaces (blobs/, derived/),
 * so removing a derived blob never removes an upload of equal bytes.
 */
#include "store_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>


/* ---- a set of sha256s (sorted, searched) -------------------------------------- */

static int sha_add(struct sha_set *set, const char *sha, size_t len)
{
	if (len != STORE_SHA256_HEX - 1)
		return 0; /* not a blob name: names nothing */
	if (ember_vec_grow((void **)&set->v, &set->alloc, set->n, sizeof(*set->v)))
		return -ENOMEM;
	memcpy(set->v[set->n], sha, len);
	set->v[set->n++][len] = '\0';
	return 0;
}

int store_sha_set_add(struct sha_set *set, const char *sha)
{
	return sha_add(set, sha, STORE_SHA256_HEX - 1);
}

static int sha_cmp(const void *a, const void *b)
{
	return memcmp(a, b, STORE_SHA256_HEX - 1);
}

bool store_sha_set_has(const struct sha_set *set, const char *sha)
{
	return set->n && bsearch(sha, set->v, set->n, sizeof(*set->v), sha_cmp);
}

/* The blob each record names: A keys end with it, S and D values start with it. */
static int add_named(const char *key, size_t klen, const char *val, size_t vlen, void *arg)
{
	struct sha_set *set = arg;

	if (key[0] == STORE_TAG_ARTIFACT)
		return klen > STORE_SHA256_HEX ? sha_add(set, key + klen - (STORE_SHA256_HEX - 1),
							 STORE_SHA256_HEX - 1)
					       : 0;
	return vlen >= STORE_SHA256_HEX - 1 ? sha_add(set, val, STORE_SHA256_HEX - 1) : 0;
}

/* The blobs the records of tags name (a store error stops it). */
int store_named_blobs(struct store *s, const char *tags, struct sha_set *set)
{
	int err = 0;

	for (const char *t = tags; !err && *t; t++)
		err = store_db_scan(s, t, 1, add_named, set);
	if (!err && set->n)
		qsort(set->v, set->n, sizeof(*set->v), sha_cmp);
	return err;
}

/* ---- removing blob files -------------------------------------------------------- */

bool store_remove_old(int ns_fd, const char *path, uint64_t grace_s, uint64_t *bytes)
{
	struct stat st;

	if (fstatat(ns_fd, path, &st, AT_SYMLINK_NOFOLLOW))
		return false;
	if ((uint64_t)time(NULL) < (uint64_t)st.st_mtime + grace_s)
		return false; /* maybe about to be recorded */
	if (unlinkat(ns_fd, path, 0))
		return false;
	*bytes += (uint64_t)st.st_size;
	return true;
}

/* Every file of NS/xx/ that set does not name, older than grace_s. */
static void sweep_dir(int ns_fd, const char *sub, const struct sha_set *set, uint64_t grace_s,
		      struct store_gc_stats *st)
{
	int fd = openat(ns_fd, sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;
	char path[3 + 256];

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' || store_sha_set_has(set, e->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", sub, e->d_name);
		st->files += store_remove_old(ns_fd, path, grace_s, &st->bytes);
	}
	closedir(d);
}

static void sweep(int ns_fd, const struct sha_set *set, uint64_t grace_s,
		  struct store_gc_stats *st)
{
	static const char hex[] = "0123456789abcdef";
	char sub[3] = { 0 };

	for (int i = 0; i < 16; i++)
		for (int j = 0; j < 16; j++) {
			sub[0] = hex[i];
			sub[1] = hex[j];
			sweep_dir(ns_fd, sub, set, grace_s, st);
		}
}

/* One at a time (gc_mu): a sweep whose set of named blobs was taken
 * before a record was written must be over before another's begins (the
 * open's runs beside the first requests). */
int store_collect_garbage(struct store *s, uint64_t grace_s, struct store_gc_stats *st)
{
	struct sha_set uploads = { 0 }, derived = { 0 };
	int err;

	pthread_mutex_lock(&s->gc_mu);
	err = store_named_blobs(s, "AS", &uploads);
	*st = (struct store_gc_stats){ 0 };
	if (!err)
		err = store_named_blobs(s, "D", &derived);
	if (!err) { /* a walk cut short names too little: nothing is removed then */
		sweep(s->blobs_fd, &uploads, grace_s, st);
		sweep(s->derived_fd, &derived, grace_s, st);
	}
	free(uploads.v);
	free(derived.v);
	pthread_mutex_unlock(&s->gc_mu);
	return err;
}

/* ---- superseded derived artifacts ------------------------------------------------ */

struct superseded {
	const char *kind, *keep;	/* the kind of what, and what itself */
	size_t kind_len, prefix_len;
	char (*keys)[STORE_KEY_MAX];
	char (*shas)[STORE_SHA256_HEX];
	size_t n, alloc, alloc2;
};

/* The kind of a derived artifact: its name up to the first '-'. */
static size_t kind_len(const char *what)
{
	return strcspn(what, "-");
}

static int find_superseded(const char *key, size_t klen, const char *val, size_t vlen,
			   void *arg)
{
	struct superseded *w = arg;
	const char *what = key + w->prefix_len;
	size_t wlen = klen - w->prefix_len;

	if (wlen >= STORE_KEY_MAX - w->prefix_len || vlen < STORE_SHA256_HEX - 1 ||
	    (wlen == strlen(w->keep) && !memcmp(what, w->keep, wlen)) ||
	    wlen <= w->kind_len || memcmp(what, w->kind, w->kind_len) || what[w->kind_len] != '-')
		return 0;
	if (ember_vec_grow((void **)&w->keys, &w->alloc, w->n, sizeof(*w->keys)) ||
	    ember_vec_grow((void **)&w->shas, &w->alloc2, w->n, sizeof(*w->shas)))
		return -ENOMEM;
	memcpy(w->keys[w->n], what, wlen);
	w->keys[w->n][wlen] = '\0';
	memcpy(w->shas[w->n], val, STORE_SHA256_HEX - 1);
	w->shas[w->n++][STORE_SHA256_HEX - 1] = '\0';
	return 0;
}

/* Their records and pins, in one synced batch (under write_mu). */
static int drop_records(struct store *s, const char *id, const struct superseded *w)
{
	char key[STORE_KEY_MAX];
	struct store_batch wb;
	int err = 0;

	for (size_t i = 0; !err && i < w->n; i++)
		err = store_pin_drop(s, id, w->keys[i]);
	if (!err && !(err = store_batch_begin(s, &wb))) {
		for (size_t i = 0; i < w->n; i++) {
			int klen = store_key_make(key, STORE_TAG_DERIVED, id, w->keys[i]);

			if (klen > 0)
				store_batch_delete(&wb, key, (size_t)klen);
		}
		err = store_batch_commit(&wb);
	}
	return err;
}

int store_derived_supersede(struct store *s, const char *id, const char *what)
{
	struct superseded w = { .kind = what, .keep = what, .kind_len = kind_len(what) };
	char prefix[STORE_KEY_MAX], path[3 + STORE_SHA256_HEX];
	struct sha_set named = { 0 };
	struct store_gc_stats st = { 0 };
	int plen = store_key_make(prefix, STORE_TAG_DERIVED, id, NULL);
	int err;

	if (plen < 0 || !what[w.kind_len])
		return 0; /* no kind in its name: nothing it supersedes */
	w.prefix_len = (size_t)plen;
	pthread_mutex_lock(&s->write_mu);
	err = store_db_scan(s, prefix, (size_t)plen, find_superseded, &w);
	if (!err && w.n)
		err = drop_records(s, id, &w);
	if (!err && w.n)
		err = store_named_blobs(s, "D", &named); /* another build ID's may be the same bytes */
	for (size_t i = 0; !err && i < w.n; i++) {
		snprintf(path, sizeof(path), "%.2s/%s", w.shas[i], w.shas[i]);
		if (!store_sha_set_has(&named, w.shas[i]))
			store_remove_old(s->derived_fd, path, STORE_COMMIT_GRACE_S, &st.bytes);
	}
	pthread_mutex_unlock(&s->write_mu);
	free(w.keys);
	free(w.shas);
	free(named.v);
	return err;
}

/* ---- derived blobs of an older version, under blobs/ ------------------------------ */

static int migrate_one(const char *key, size_t klen, const char *val, size_t vlen, void *arg)
{
	struct store *s = arg;
	char sub[3], path[3 + STORE_SHA256_HEX];

	(void)key, (void)klen;
	if (vlen < STORE_SHA256_HEX - 1)
		return 0;
	snprintf(sub, sizeof(sub), "%.2s", val);
	snprintf(path, sizeof(path), "%.2s/%.64s", val, val);
	if (faccessat(s->derived_fd, path, F_OK, 0) == 0 ||
	    faccessat(s->blobs_fd, path, F_OK, 0) != 0)
		return 0;
	if (mkdirat(s->derived_fd, sub, 0700) && errno != EEXIST)
		return 0;
	/* the same inode in its own namespace; the old name is swept once no
	 * upload names it */
	linkat(s->blobs_fd, path, s->derived_fd, path, 0);
	return 0;
}

int store_migrate_derived(struct store *s)
{
	return store_db_scan_opened(s, "D", 1, migrate_one, s);
}
