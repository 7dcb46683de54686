/*
 * symcache.c - the LRU of loaded symbol indexes (see symcache.h).
 *
 * One mutex guards the table, the LRU list and the counters; an index is
 * built outside it, by the first requester, while later ones wait on a
 * condition variable for that entry.
 */
#include "symcache.h"
#include "symindex_store.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum entry_state { ENTRY_BUILDING, ENTRY_READY, ENTRY_FAILED };

struct symcache_entry {
	char build_id[STORE_BUILD_ID_HEX];
	struct sym_index *idx;
	uint64_t bytes;
	unsigned refs;
	enum entry_state state;
	int err;
	char what[STORE_NAME_MAX];            /* the inputs it was made from */
	uint64_t gen;                         /* store generation they were checked at,
						 or UNCHECKED (mapped through a pin) */
	bool stale;                           /* better inputs arrived: freed when unused */
	struct symcache_entry *prev, *next;   /* LRU, most recent first */
	struct symcache_entry *hnext;         /* table chain */
};

#define BUCKETS 1024
#define UNCHECKED UINT64_MAX /* never a store generation */

struct symcache {
	struct store *store;
	pthread_mutex_t mu;
	pthread_cond_t built;
	struct symcache_entry *table[BUCKETS];
	struct symcache_entry *lru_head, *lru_tail;
	uint64_t bytes, budget;
	size_t loaded, builds, evictions, refused, disk_loads, pin_loads, unsaved, rebuilds;
	symcache_fetch_fn fetch;
	void *fetch_arg;
};

static size_t bucket(const char *id)
{
	uint64_t h = 1469598103934665603ull;

	for (; *id; id++)
		h = (h ^ (unsigned char)*id) * 1099511628211ull;
	return h % BUCKETS;
}

int symcache_new(struct store *s, uint64_t budget_bytes, struct symcache **out)
{
	struct symcache *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->store = s;
	c->budget = budget_bytes;
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->built, NULL);
	*out = c;
	return 0;
}

void symcache_free(struct symcache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < BUCKETS; i++)
		while (c->table[i]) {
			struct symcache_entry *e = c->table[i];

			c->table[i] = e->hnext;
			sym_index_free(e->idx);
			free(e);
		}
	pthread_cond_destroy(&c->built);
	pthread_mutex_destroy(&c->mu);
	free(c);
}

/* ---- table and LRU (under mu) ------------------------------------------- */

static struct symcache_entry *find(struct symcache *c, const char *id)
{
	for (struct symcache_entry *e = c->table[bucket(id)]; e; e = e->hnext)
		if (strcmp(e->build_id, id) == 0)
			return e;
	return NULL;
}

static void unhash(struct symcache *c, struct symcache_entry *e)
{
	for (struct symcache_entry **p = &c->table[bucket(e->build_id)]; *p; p = &(*p)->hnext)
		if (*p == e) {
			*p = e->hnext;
			return;
		}
}

static void lru_unlink(struct symcache *c, struct symcache_entry *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else if (c->lru_head == e)
		c->lru_head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else if (c->lru_tail == e)
		c->lru_tail = e->prev;
	e->prev = e->next = NULL;
}

static void lru_push_front(struct symcache *c, struct symcache_entry *e)
{
	e->next = c->lru_head;
	e->prev = NULL;
	if (c->lru_head)
		c->lru_head->prev = e;
	c->lru_head = e;
	if (!c->lru_tail)
		c->lru_tail = e;
}

/* Take e out of the LRU and the byte count (under mu); the caller frees it. */
static void drop(struct symcache *c, struct symcache_entry *e)
{
	lru_unlink(c, e);
	c->bytes -= e->bytes;
	c->loaded--;
}

/* Evict unused indexes, least recent first, until `need` more bytes fit.
 * Returns the indexes to free once the lock is dropped (chained by next). */
static struct symcache_entry *make_room(struct symcache *c, uint64_t need)
{
	struct symcache_entry *victims = NULL, *e = c->lru_tail;

	while (e && c->bytes + need > c->budget) {
		struct symcache_entry *prev = e->prev;

		if (e->refs == 0 && e->state == ENTRY_READY) {
			drop(c, e);
			unhash(c, e);
			c->evictions++;
			e->next = victims;
			victims = e;
		}
		e = prev;
	}
	return victims;
}

static void free_victims(struct symcache_entry *v)
{
	while (v) {
		struct symcache_entry *next = v->next;

		sym_index_free(v->idx);
		free(v);
		v = next;
	}
}

/* ---- building ----------------------------------------------------------------- */

/*
 * The inputs of id's index (asking upstream first when the store has
 * none and a fetch is set: -ENOENT when nobody has the build ID,
 * -EHOSTUNREACH when upstream failed, the store's error when it failed).
 */
static int find_inputs(struct symcache *c, const char *id, struct symindex_inputs *in)
{
	int err = symindex_find_inputs(c->store, id, in);

	if (err != -ENOENT || !c->fetch)
		return err;
	err = c->fetch(c->fetch_arg, id);
	if (err == -ENOENT || err == -ENOSYS)
		return -ENOENT;
	if (err == -EHOSTUNREACH || err == -ECANCELED)
		return -EHOSTUNREACH;
	return err ? err : symindex_find_inputs(c->store, id, in);
}

/*
 * While the store opens: the index pinned for e, unchecked (check_fresh
 * compares it with the store's inputs once the store is open).  NULL
 * when there is none that loads: the caller waits for the store.
 */
static struct sym_index *open_pinned(struct symcache *c, struct symcache_entry *e)
{
	char what[STORE_NAME_MAX];
	struct sym_index *idx;
	int err;

	if (store_is_open(c->store))
		return NULL;
	idx = symindex_open_pinned(c->store, e->build_id, what, &err);
	if (!idx)
		return NULL;
	pthread_mutex_lock(&c->mu);
	memcpy(e->what, what, sizeof(e->what));
	e->gen = UNCHECKED;
	c->disk_loads++;
	c->pin_loads++;
	pthread_mutex_unlock(&c->mu);
	return idx;
}

/* Load or build the index of e (outside mu); counts under mu. */
static struct sym_index *open_index(struct symcache *c, struct symcache_entry *e, int *err)
{
	enum symindex_origin origin = SYMINDEX_BUILT;
	struct symindex_inputs in;
	struct sym_index *idx = open_pinned(c, e);
	uint64_t gen;

	if (idx)
		return idx;
	*err = store_wait(c->store);
	gen = store_generation(c->store); /* before the inputs are read */
	if (!*err)
		*err = find_inputs(c, e->build_id, &in);
	if (!*err)
		idx = symindex_open(c->store, e->build_id, &in, &origin, err);
	if (idx && origin != SYMINDEX_BUILT_UNSAVED)
		symindex_pin(c->store, e->build_id, &in, gen);
	pthread_mutex_lock(&c->mu);
	if (idx) {
		snprintf(e->what, sizeof(e->what), "%s", in.what);
		e->gen = gen;
		c->disk_loads += origin == SYMINDEX_LOADED;
		c->builds += origin != SYMINDEX_LOADED;
		c->unsaved += origin == SYMINDEX_BUILT_UNSAVED;
	}
	pthread_mutex_unlock(&c->mu);
	return idx;
}

/* Publish the result of a build (under mu) and wake the waiters. */
static struct symcache_entry *publish(struct symcache *c, struct symcache_entry *e,
				      struct sym_index *idx, int err)
{
	struct sym_index_stats st;
	struct symcache_entry *victims = NULL;

	if (idx) {
		sym_index_get_stats(idx, &st);
		e->bytes = st.bytes;
		if (e->bytes > c->budget)
			err = -E2BIG;
	}
	if (!err) {
		e->idx = idx;
		e->state = ENTRY_READY;
		victims = make_room(c, e->bytes);
		c->bytes += e->bytes;
		c->loaded++;
		lru_push_front(c, e);
	} else {
		e->state = ENTRY_FAILED;
		e->err = err;
		c->refused += err == -E2BIG;
		unhash(c, e); /* failures are not cached */
		sym_index_free(idx);
	}
	pthread_cond_broadcast(&c->built);
	return victims;
}

static int build_entry(struct symcache *c, struct symcache_entry *e)
{
	struct symcache_entry *victims;
	struct sym_index *idx;
	int err = 0;

	pthread_mutex_unlock(&c->mu);
	idx = open_index(c, e, &err);
	pthread_mutex_lock(&c->mu);
	victims = publish(c, e, idx, idx ? 0 : err);
	pthread_mutex_unlock(&c->mu);
	free_victims(victims);
	pthread_mutex_lock(&c->mu);
	return e->state == ENTRY_READY ? 0 : e->err;
}

/* Drop a reference to a failed entry; the last one frees it. */
static int fail_ref(struct symcache_entry *e)
{
	int err = e->err;

	if (--e->refs == 0)
		free(e);
	return err;
}

/*
 * e as it is, or NULL when better files for its build ID were stored
 * since it was made: it is then unhashed, so the caller makes a new one,
 * and freed now (into *victim) or by its last user.  The store is asked
 * only when its generation moved, i.e. after an upload.
 */
static struct symcache_entry *check_fresh(struct symcache *c, struct symcache_entry *e,
					  struct symcache_entry **victim)
{
	uint64_t gen = store_generation(c->store);
	struct symindex_inputs in;
	int err;

	if (e->state != ENTRY_READY || e->gen == gen)
		return e;
	if (e->gen == UNCHECKED && !store_is_open(c->store))
		return e; /* pinned; checked once the store can say */
	err = symindex_find_inputs(c->store, e->build_id, &in);
	if (err && err != -ENOENT)
		return e; /* the store cannot say: as it was, checked again next time */
	if (!err && strcmp(in.what, e->what) == 0) {
		e->gen = gen;
		return e;
	}
	unhash(c, e);
	e->stale = true;
	c->rebuilds++;
	if (e->refs == 0) {
		drop(c, e);
		*victim = e;
	}
	return NULL;
}

int symcache_get(struct symcache *c, const char *build_id, struct symcache_entry **out)
{
	struct symcache_entry *e, *stale = NULL;
	int err = 0;

	if (strlen(build_id) >= STORE_BUILD_ID_HEX)
		return -ENOENT;
	pthread_mutex_lock(&c->mu);
	e = find(c, build_id);
	if (e)
		e = check_fresh(c, e, &stale);
	if (!e && (e = calloc(1, sizeof(*e)))) {
		strcpy(e->build_id, build_id);
		e->state = ENTRY_BUILDING;
		e->hnext = c->table[bucket(build_id)];
		c->table[bucket(build_id)] = e;
		e->refs++;
		err = build_entry(c, e);
	} else if (e) {
		e->refs++;
		while (e->state == ENTRY_BUILDING)
			pthread_cond_wait(&c->built, &c->mu);
		err = e->state == ENTRY_READY ? 0 : e->err;
	} else {
		err = -ENOMEM;
	}
	if (e && e->state == ENTRY_READY) {
		lru_unlink(c, e);
		lru_push_front(c, e);
		*out = e;
	} else if (e) {
		err = fail_ref(e);
	}
	pthread_mutex_unlock(&c->mu);
	if (stale) {
		stale->next = NULL;
		free_victims(stale);
	}
	return err;
}

const struct sym_index *symcache_index(const struct symcache_entry *e)
{
	return e->idx;
}

void symcache_put(struct symcache *c, struct symcache_entry *e)
{
	struct symcache_entry *victims, *stale = NULL;

	pthread_mutex_lock(&c->mu);
	e->refs--;
	if (e->stale && e->refs == 0) { /* superseded while in use: out of */
		drop(c, e);		 /* the LRU before make_room walks it */
		stale = e;
		stale->next = NULL;
	}
	victims = make_room(c, 0); /* what waited for users to finish */
	pthread_mutex_unlock(&c->mu);
	free_victims(victims);
	free_victims(stale);
}

void symcache_get_stats(struct symcache *c, struct symcache_stats *st)
{
	pthread_mutex_lock(&c->mu);
	*st = (struct symcache_stats){ c->bytes, c->budget, c->loaded, c->builds,
				       c->evictions, c->refused, c->disk_loads,
				       c->pin_loads, c->unsaved, c->rebuilds };
	pthread_mutex_unlock(&c->mu);
}

void symcache_set_fetch(struct symcache *c, symcache_fetch_fn fn, void *arg)
{
	c->fetch = fn;
	c->fetch_arg = arg;
}
