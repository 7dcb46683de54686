/*
 * cache.c - with a backend, the local blob files are a bounded cache
 * (store_set_cache_limit, `ember serve --cache-mb`): every file of blobs/
 * and derived/ is an entry with its size and the time it was last opened
 * or written; past the limit the least recently used go (unlinked: a
 * reader that has the file open keeps reading it, sendfile included) until
 * a tenth of the limit is free, and are fetched again at their next open
 * (fetch.c).  Files used within the grace (10 s in the server) are kept,
 * so a caller between store_blob_path() and its open(2) never loses the
 * file.  Records are never evicted: they are small, and they are the
 * index the lookups rank.
 *
 * The entries are an array indexed by a hash set of (namespace, sha256);
 * an eviction sorts the array by last use and rebuilds the set, which is
 * rare (each frees a tenth of the cache).  The first use scans the two
 * directories, taking each file's mtime as its last use.
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

struct cache_entry {
	char sha256[STORE_SHA256_HEX];
	bool derived;
	uint64_t size;
	int64_t used_ms;
};

struct store_cache {
	pthread_mutex_t mu;
	uint64_t limit, bytes, evictions;
	unsigned grace_ms;
	struct cache_entry *v;
	size_t n, alloc;
	struct ember_hset set;
	bool loaded;
};

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static uint64_t entry_hash(const struct store_cache *c, const char *sha, bool derived)
{
	char key[STORE_SHA256_HEX + 1];

	memcpy(key, sha, STORE_SHA256_HEX - 1);
	key[STORE_SHA256_HEX - 1] = derived ? 'd' : 'b';
	return ember_hash(&c->set.key, key, STORE_SHA256_HEX);
}

struct entry_key {
	const char *sha;
	bool derived;
};

static bool entry_equal(const void *ctx, size_t idx, const void *key)
{
	const struct store_cache *c = ctx;
	const struct entry_key *k = key;

	return c->v[idx].derived == k->derived && strcmp(c->v[idx].sha256, k->sha) == 0;
}

static struct cache_entry *find(struct store_cache *c, const char *sha, bool derived)
{
	struct entry_key k = { sha, derived };
	size_t i = ember_hset_find(&c->set, entry_hash(c, sha, derived), entry_equal, c, &k);

	return i == SIZE_MAX ? NULL : &c->v[i];
}

/* Under mu: a new entry (the caller made sure there is none). */
static int add(struct store_cache *c, const char *sha, bool derived, uint64_t size,
	       int64_t used_ms)
{
	struct cache_entry *e;
	int err = ember_vec_grow((void **)&c->v, &c->alloc, c->n, sizeof(*c->v));

	if (!err)
		err = ember_hset_insert(&c->set, entry_hash(c, sha, derived), c->n);
	if (err)
		return err;
	e = &c->v[c->n++];
	snprintf(e->sha256, sizeof(e->sha256), "%s", sha);
	e->derived = derived;
	e->size = size;
	e->used_ms = used_ms;
	c->bytes += size;
	return 0;
}

/* ---- the first use: what the directories hold ---------------------------------- */

static void load_sub(struct store_cache *c, int ns_fd, const char *sub, bool derived)
{
	int fd = openat(ns_fd, sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	struct stat st;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(d)))
		if (strlen(de->d_name) == STORE_SHA256_HEX - 1 &&
		    fstatat(dirfd(d), de->d_name, &st, 0) == 0 && S_ISREG(st.st_mode) &&
		    !find(c, de->d_name, derived))
			add(c, de->d_name, derived, (uint64_t)st.st_size,
			    (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000);
	closedir(d);
}

static void load(struct store *s, struct store_cache *c)
{
	static const char hex[] = "0123456789abcdef";
	char sub[3] = "";

	for (int i = 0; i < 256; i++) {
		sub[0] = hex[i >> 4];
		sub[1] = hex[i & 15];
		load_sub(c, s->blobs_fd, sub, false);
		load_sub(c, s->derived_fd, sub, true);
	}
	c->loaded = true;
}

/* ---- eviction --------------------------------------------------------------------- */

static int by_use(const void *a, const void *b)
{
	const struct cache_entry *x = a, *y = b;

	return (x->used_ms > y->used_ms) - (x->used_ms < y->used_ms);
}

static void rebuild_set(struct store_cache *c)
{
	ember_hset_release(&c->set);
	if (ember_hset_init(&c->set))
		return; /* find() then misses: entries are added again */
	for (size_t i = 0; i < c->n; i++)
		ember_hset_insert(&c->set, entry_hash(c, c->v[i].sha256, c->v[i].derived), i);
}

/* Under mu: drop the least recently used until a tenth of the limit is
 * free, sparing what was used within the grace. */
static void evict(struct store *s, struct store_cache *c)
{
	uint64_t target = c->limit - c->limit / 10;
	int64_t spare_from = now_ms() - c->grace_ms;
	char path[3 + STORE_SHA256_HEX];
	size_t kept = 0;

	qsort(c->v, c->n, sizeof(*c->v), by_use);
	for (size_t i = 0; i < c->n; i++) {
		struct cache_entry *e = &c->v[i];

		if (c->bytes > target && e->used_ms < spare_from) {
			snprintf(path, sizeof(path), "%.2s/%s", e->sha256, e->sha256);
			if (unlinkat(e->derived ? s->derived_fd : s->blobs_fd, path, 0) == 0 ||
			    errno == ENOENT) {
				c->bytes -= e->size;
				c->evictions++;
				continue;
			}
		}
		c->v[kept++] = *e;
	}
	c->n = kept;
	rebuild_set(c);
}

/* ---- the store's calls -------------------------------------------------------------- */

int store_set_cache_limit(struct store *s, uint64_t max_bytes, unsigned grace_ms)
{
	struct store_cache *c;
	int err;

	if (!s->has_backend || s->cache_lru)
		return -EINVAL;
	if (!max_bytes)
		return 0;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	err = ember_hset_init(&c->set);
	if (err) {
		free(c);
		return err;
	}
	pthread_mutex_init(&c->mu, NULL);
	c->limit = max_bytes;
	c->grace_ms = grace_ms;
	s->cache_lru = c;
	return 0;
}

void store_cache_use(struct store *s, int ns_fd, const char *sha256, uint64_t size,
		     bool written)
{
	struct store_cache *c = s->cache_lru;
	bool derived = ns_fd == s->derived_fd;
	struct cache_entry *e;

	if (!c)
		return;
	pthread_mutex_lock(&c->mu);
	if (!c->loaded)
		load(s, c);
	e = find(c, sha256, derived);
	if (e)
		e->used_ms = now_ms();
	else if (written)
		add(c, sha256, derived, size, now_ms());
	if (c->bytes > c->limit)
		evict(s, c);
	pthread_mutex_unlock(&c->mu);
}

void store_cache_stats(struct store *s, uint64_t *bytes, uint64_t *evictions)
{
	struct store_cache *c = s->cache_lru;

	*bytes = *evictions = 0;
	if (!c)
		return;
	pthread_mutex_lock(&c->mu);
	*bytes = c->bytes;
	*evictions = c->evictions;
	pthread_mutex_unlock(&c->mu);
}

void store_cache_free(struct store *s)
{
	struct store_cache *c = s->cache_lru;

	if (!c)
		return;
	ember_hset_release(&c->set);
	pthread_mutex_destroy(&c->mu);
	free(c->v);
	free(c);
}
