/*
 * file_cache.c - the bounded cache of local files (common.h, "a bounded
 * cache of local files"): with `ember serve --storage`, the bucket holds
 * the truth and the data directory keeps copies: the debuginfo store's
 * blob files (blobs/ and derived/) and the profile store's blocks
 * (profiles/cache/).  One struct ember_fcache counts them all under the
 * one --cache-mb budget.
 *
 * The entries are an array indexed by a hash set of (namespace, name);
 * an eviction sorts the array by last use, unlinks from the oldest until
 * a tenth of the budget is free, and rebuilds the set, which is rare
 * (each frees a tenth of the cache).  A removed entry is marked dead and
 * dropped at the next rebuild.  Last use is the wall clock in ms, so a
 * file's mtime can stand for it when a directory is scanned.
 */
#include "common.h"

#include <assert.h>
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct fcache_entry {
	char *name; /* relative to its namespace's directory; NULL: dead */
	int ns;
	uint64_t size;
	int64_t used_ms;
};

struct fcache_ns {
	int dir_fd;
	struct ember_fcache_stats st;
};

struct ember_fcache {
	pthread_mutex_t mu;
	uint64_t limit;
	unsigned grace_ms;
	struct fcache_ns ns[EMBER_FCACHE_NS_MAX];
	int n_ns;
	EMBER_VEC(struct fcache_entry) e;
	size_t dead;
	struct ember_hset set;
};

struct fcache_key {
	int ns;
	const char *name;
};

static int64_t now_ms(void)
{
	return (int64_t)(ember_realtime_ns() / 1000000);
}

static uint64_t key_hash(const struct ember_fcache *c, int ns, const char *name)
{
	return ember_hash(&c->set.key, name, strlen(name)) ^ (uint64_t)ns;
}

static bool key_equal(const void *ctx, size_t idx, const void *key)
{
	const struct ember_fcache *c = ctx;
	const struct fcache_entry *e = &c->e.v[idx];
	const struct fcache_key *k = key;

	return e->name && e->ns == k->ns && strcmp(e->name, k->name) == 0;
}

/* Under mu: the live entry of (ns, name), or NULL. */
static struct fcache_entry *find(struct ember_fcache *c, int ns, const char *name)
{
	struct fcache_key k = { ns, name };
	size_t i = ember_hset_find(&c->set, key_hash(c, ns, name), key_equal, c, &k);

	return i == SIZE_MAX ? NULL : &c->e.v[i];
}

/* Under mu: count a new entry (the caller made sure there is none). */
static int add(struct ember_fcache *c, int ns, const char *name, uint64_t size, int64_t used_ms)
{
	struct fcache_entry e = { .name = strdup(name), .ns = ns, .size = size, .used_ms = used_ms };
	int err = e.name ? EMBER_VEC_RESERVE(&c->e, c->e.n + 1) : -ENOMEM;

	if (!err)
		err = ember_hset_insert(&c->set, key_hash(c, ns, name), c->e.n);
	if (err) {
		free(e.name);
		return err;
	}
	c->e.v[c->e.n++] = e;
	c->ns[ns].st.bytes += size;
	c->ns[ns].st.files++;
	return 0;
}

/* Under mu: entry e no longer counted (its file is gone or going). */
static void drop(struct ember_fcache *c, struct fcache_entry *e)
{
	c->ns[e->ns].st.bytes -= e->size;
	c->ns[e->ns].st.files--;
	free(e->name);
	e->name = NULL;
	c->dead++;
}

/* ---- eviction -------------------------------------------------------------------- */

static uint64_t total_bytes(const struct ember_fcache *c)
{
	uint64_t n = 0;

	for (int i = 0; i < c->n_ns; i++)
		n += c->ns[i].st.bytes;
	return n;
}

static int by_use(const void *a, const void *b)
{
	const struct fcache_entry *x = a, *y = b;

	return (x->used_ms > y->used_ms) - (x->used_ms < y->used_ms);
}

/* Under mu: the dead entries out of the array, the set made again. */
static void compact(struct ember_fcache *c)
{
	size_t kept = 0;

	for (size_t i = 0; i < c->e.n; i++)
		if (c->e.v[i].name)
			c->e.v[kept++] = c->e.v[i];
	c->e.n = kept;
	c->dead = 0;
	ember_hset_clear(&c->set);
	for (size_t i = 0; i < c->e.n; i++) /* fits: the slots held more */
		ember_hset_insert(&c->set, key_hash(c, c->e.v[i].ns, c->e.v[i].name), i);
}

/* Under mu: past the budget, the least recently used out until a tenth
 * of it is free, sparing what was used within the grace.  A file that
 * vanished on its own counts as removed. */
static void evict(struct ember_fcache *c)
{
	uint64_t target = c->limit - c->limit / 10, bytes = total_bytes(c);
	int64_t spare_from = now_ms() - c->grace_ms;

	if (!c->limit || bytes <= c->limit)
		return;
	qsort(c->e.v, c->e.n, sizeof(*c->e.v), by_use);
	for (size_t i = 0; i < c->e.n && bytes > target; i++) {
		struct fcache_entry *e = &c->e.v[i];

		if (!e->name || e->used_ms >= spare_from)
			continue;
		if (unlinkat(c->ns[e->ns].dir_fd, e->name, 0) < 0 && errno != ENOENT)
			continue; /* kept, and counted: its bytes are still there */
		bytes -= e->size;
		c->ns[e->ns].st.evictions++;
		drop(c, e);
	}
	compact(c); /* the sort moved every index */
}

/* ---- what a directory holds ---------------------------------------------------------- */

static bool is_temp(const char *name)
{
	return strstr(name, ".tmp.") != NULL;
}

/* Under mu: the regular files of directory fd (prefix "SUB/" or ""), each
 * counted with its mtime as its last use; with DROP_TEMP, temporary ones
 * a crash left removed; with FANOUT, subdirectories walked (one level). */
static void scan(struct ember_fcache *c, int ns, int fd, const char *prefix, unsigned flags)
{
	DIR *d = fdopendir(fd);
	struct dirent *de;
	char name[512];
	struct stat st;

	if (!d) {
		close(fd);
		return;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISDIR(st.st_mode) && (flags & EMBER_FCACHE_FANOUT)) {
			int sub = openat(fd, de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

			snprintf(name, sizeof(name), "%s/", de->d_name);
			if (sub >= 0) /* closed by the walk */
				scan(c, ns, sub, name, flags & ~EMBER_FCACHE_FANOUT);
		} else if (S_ISREG(st.st_mode) && (flags & EMBER_FCACHE_DROP_TEMP) &&
			   is_temp(de->d_name)) {
			unlinkat(fd, de->d_name, 0);
		} else if (S_ISREG(st.st_mode) && !(flags & EMBER_FCACHE_FANOUT) &&
			   snprintf(name, sizeof(name), "%s%s", prefix, de->d_name) < (int)sizeof(name) &&
			   !find(c, ns, name)) {
			add(c, ns, name, (uint64_t)st.st_size,
			    (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000);
		}
	}
	closedir(d);
}

/* ---- the calls --------------------------------------------------------------------- */

struct ember_fcache *ember_fcache_new(uint64_t max_bytes, unsigned grace_ms)
{
	struct ember_fcache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	if (ember_hset_init(&c->set)) {
		free(c);
		return NULL;
	}
	pthread_mutex_init(&c->mu, NULL);
	c->limit = max_bytes;
	c->grace_ms = grace_ms;
	return c;
}

void ember_fcache_free(struct ember_fcache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->e.n; i++)
		free(c->e.v[i].name);
	EMBER_VEC_FREE(&c->e);
	for (int i = 0; i < c->n_ns; i++)
		close(c->ns[i].dir_fd);
	ember_hset_release(&c->set);
	pthread_mutex_destroy(&c->mu);
	free(c);
}

int ember_fcache_add_dir(struct ember_fcache *c, int dir_fd, unsigned flags)
{
	int ns, fd, walk;

	pthread_mutex_lock(&c->mu);
	ns = c->n_ns;
	fd = ns < EMBER_FCACHE_NS_MAX ? fcntl(dir_fd, F_DUPFD_CLOEXEC, 0) : -1;
	walk = fd >= 0 ? openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	if (walk < 0) {
		ns = ns < EMBER_FCACHE_NS_MAX ? -errno : -EMFILE;
		if (fd >= 0)
			close(fd);
	} else {
		c->ns[c->n_ns++] = (struct fcache_ns){ .dir_fd = fd };
		scan(c, ns, walk, "", flags);
		evict(c);
	}
	pthread_mutex_unlock(&c->mu);
	return ns;
}

/* Lock c and find the entry of (ns, name), or NULL; unlock after. */
static struct fcache_entry *lock_find(struct ember_fcache *c, int ns, const char *name)
{
	assert(ns >= 0 && ns < c->n_ns);
	pthread_mutex_lock(&c->mu);
	return find(c, ns, name);
}

void ember_fcache_used(struct ember_fcache *c, int ns, const char *name)
{
	struct fcache_entry *e = c ? lock_find(c, ns, name) : NULL;

	if (!c)
		return;
	if (e)
		e->used_ms = now_ms();
	evict(c);
	pthread_mutex_unlock(&c->mu);
}

void ember_fcache_written(struct ember_fcache *c, int ns, const char *name, uint64_t size)
{
	struct fcache_entry *e = c ? lock_find(c, ns, name) : NULL;

	if (!c)
		return;
	if (e) { /* written again (fetched after it vanished, or grown) */
		c->ns[ns].st.bytes += size - e->size;
		e->size = size;
		e->used_ms = now_ms();
	} else {
		add(c, ns, name, size, now_ms()); /* on failure uncounted, as before a restart */
	}
	evict(c);
	pthread_mutex_unlock(&c->mu);
}

void ember_fcache_remove(struct ember_fcache *c, int ns, const char *name)
{
	struct fcache_entry *e = c ? lock_find(c, ns, name) : NULL;

	if (!c)
		return;
	unlinkat(c->ns[ns].dir_fd, name, 0);
	if (e)
		drop(c, e);
	if (c->dead > c->e.n / 2)
		compact(c);
	pthread_mutex_unlock(&c->mu);
}

void ember_fcache_stats(struct ember_fcache *c, int ns, struct ember_fcache_stats *out)
{
	*out = (struct ember_fcache_stats){ 0 };
	if (!c)
		return;
	pthread_mutex_lock(&c->mu);
	for (int i = 0; i < c->n_ns; i++) {
		if (ns >= 0 && i != ns)
			continue;
		out->bytes += c->ns[i].st.bytes;
		out->files += c->ns[i].st.files;
		out->evictions += c->ns[i].st.evictions;
	}
	pthread_mutex_unlock(&c->mu);
}
