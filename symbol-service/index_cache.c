/*
 * index_cache.c - the loaded symbol indexes, by build ID, under a memory
 * budget (symsvc_index_get() in symsvc.h).
 *
 * The first request of a build ID builds its index from the best files the
 * store holds (or maps the saved one, saved_index.c); requests that arrive
 * meanwhile wait for that one build.  Indexes live in an LRU whose total
 * size (sym_index_get_stats().bytes) stays under the budget: an index not
 * in use is evicted when a new one needs room, and an index larger than
 * the whole budget is refused (-E2BIG).  Indexes in use are never freed
 * under their users, so the total can exceed the budget by the indexes of
 * requests in flight.
 *
 * One mutex guards the table, the LRU list and the counters; an index is
 * built outside it, by the first requester, while later ones wait on a
 * condition variable for that entry.
 */
#include "symsvc_internal.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum entry_state { ENTRY_BUILDING, ENTRY_READY, ENTRY_FAILED };

struct symsvc_index {
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
	struct symsvc_index *prev, *next;     /* LRU, most recent first */
	struct symsvc_index *hnext;           /* table chain */
};

#define UNCHECKED UINT64_MAX /* never a store generation */
#define FAILED_TTL_S 86400   /* a failed build's inputs, remembered (content-addressed) */
#define FAILED_MAX 4096

/* Whether a build's failure is one of its inputs (the same files would
 * fail again), not of the store or of the request. */
static bool failure_of_inputs(int err)
{
	return err == -E2BIG || (-err >= SYM_ERR_NOT_ELF && -err <= SYM_ERR_INDEX_VERSION);
}

/* The failure remembered for inputs what: true with *err (counted). */
static bool known_failure(struct symsvc_cache *c, const char *what, int *err)
{
	bool known;

	pthread_mutex_lock(&c->mu);
	known = ember_errcache_get(c->failed, what, err);
	c->failures_cached += known;
	pthread_mutex_unlock(&c->mu);
	return known;
}

static size_t bucket(const struct symsvc_cache *c, const char *id)
{
	return ember_hash(&c->key, id, strlen(id)) % SYMSVC_CACHE_BUCKETS;
}

int symsvc_cache_init(struct symsvc_cache *c, uint64_t budget)
{
	int err;

	memset(c, 0, sizeof(*c));
	err = ember_hash_key_init(&c->key);
	if (err)
		return err;
	c->failed = ember_errcache_new(FAILED_TTL_S, FAILED_MAX);
	if (!c->failed)
		return -ENOMEM;
	c->budget = budget;
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->built, NULL);
	return 0;
}

void symsvc_cache_release(struct symsvc_cache *c)
{
	for (size_t i = 0; i < SYMSVC_CACHE_BUCKETS; i++)
		while (c->table[i]) {
			struct symsvc_index *e = c->table[i];

			c->table[i] = e->hnext;
			sym_index_free(e->idx);
			free(e);
		}
	ember_errcache_free(c->failed);
	pthread_cond_destroy(&c->built);
	pthread_mutex_destroy(&c->mu);
}

/* ---- table and LRU (under mu) ------------------------------------------- */

static struct symsvc_index *find(struct symsvc_cache *c, const char *id)
{
	for (struct symsvc_index *e = c->table[bucket(c, id)]; e; e = e->hnext)
		if (strcmp(e->build_id, id) == 0)
			return e;
	return NULL;
}

static void unhash(struct symsvc_cache *c, struct symsvc_index *e)
{
	for (struct symsvc_index **p = &c->table[bucket(c, e->build_id)]; *p; p = &(*p)->hnext)
		if (*p == e) {
			*p = e->hnext;
			return;
		}
}

static void lru_unlink(struct symsvc_cache *c, struct symsvc_index *e)
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

static void lru_push_front(struct symsvc_cache *c, struct symsvc_index *e)
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
static void drop(struct symsvc_cache *c, struct symsvc_index *e)
{
	lru_unlink(c, e);
	c->bytes -= e->bytes;
	c->loaded--;
}

/* Evict unused indexes, least recent first, until `need` more bytes fit.
 * Returns the indexes to free once the lock is dropped (chained by next). */
static struct symsvc_index *make_room(struct symsvc_cache *c, uint64_t need)
{
	struct symsvc_index *victims = NULL, *e = c->lru_tail;

	while (e && c->bytes + need > c->budget) {
		struct symsvc_index *prev = e->prev;

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

static void free_victims(struct symsvc_index *v)
{
	while (v) {
		struct symsvc_index *next = v->next;

		sym_index_free(v->idx);
		free(v);
		v = next;
	}
}

/* ---- building ----------------------------------------------------------------- */

/*
 * The inputs of id's index, asking upstream first when the store has none
 * (fetch_upstream.c): -ENOENT when nobody has the build ID, -EHOSTUNREACH when
 * upstream failed, the store's error when it failed.
 */
static int find_inputs(struct symsvc *svc, const char *id, struct symsvc_req *r,
		       struct symsvc_inputs *in)
{
	int err = symsvc_inputs_find(svc->store, id, in);

	if (err != -ENOENT || !svc->fetch)
		return err;
	err = symsvc_req_take_fetch(r);
	if (!err)
		err = symsvc_fetch_build_id(svc, id, r ? &r->opts : NULL);
	if (err && symsvc_req_check(r)) /* the deadline came, or the client went */
		return r->stopped;
	return err ? err : symsvc_inputs_find(svc->store, id, in);
}

/*
 * While the store opens: the index pinned for e, unchecked (check_fresh
 * compares it with the store's inputs once the store is open).  NULL
 * when there is none that loads: the caller waits for the store.
 */
static struct sym_index *open_pinned(struct symsvc *svc, struct symsvc_index *e)
{
	struct symsvc_cache *c = &svc->cache;
	char what[STORE_NAME_MAX];
	struct sym_index *idx;
	int err;

	if (store_is_open(svc->store))
		return NULL;
	idx = symsvc_saved_open_pinned(svc->store, e->build_id, what, &err);
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
static struct sym_index *open_index(struct symsvc *svc, struct symsvc_index *e,
				    struct symsvc_req *r, int *err)
{
	struct symsvc_cache *c = &svc->cache;
	enum symsvc_origin origin = SYMSVC_BUILT;
	struct symsvc_inputs in;
	struct sym_index *idx = open_pinned(svc, e);
	uint64_t gen;

	if (idx)
		return idx;
	*err = store_wait(svc->store);
	gen = store_generation(svc->store); /* before the inputs are read */
	if (!*err)
		*err = find_inputs(svc, e->build_id, r, &in);
	if (!*err) {
		snprintf(e->what, sizeof(e->what), "%s", in.what); /* for publish() too */
		if (known_failure(c, in.what, err))
			return NULL;
		idx = symsvc_saved_open(svc->store, e->build_id, &in, &svc->build, &origin, err);
	}
	if (idx && origin != SYMSVC_BUILT_UNSAVED)
		symsvc_saved_pin(svc->store, e->build_id, &in, gen);
	pthread_mutex_lock(&c->mu);
	if (idx) {
		snprintf(e->what, sizeof(e->what), "%s", in.what);
		e->gen = gen;
		c->disk_loads += origin == SYMSVC_LOADED;
		c->builds += origin != SYMSVC_LOADED;
		c->unsaved += origin == SYMSVC_BUILT_UNSAVED;
	}
	pthread_mutex_unlock(&c->mu);
	return idx;
}

/* Publish the result of a build (under mu) and wake the waiters. */
static struct symsvc_index *publish(struct symsvc_cache *c, struct symsvc_index *e,
				    struct sym_index *idx, int err)
{
	struct sym_index_stats st;
	struct symsvc_index *victims = NULL;

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
		unhash(c, e); /* failed entries are not kept; their inputs may be: */
		if (e->what[0] && failure_of_inputs(err) && !ember_errcache_get(c->failed, e->what,
										  &(int){ 0 })) {
			ember_errcache_put(c->failed, e->what, err);
			c->build_failures++;
		}
		sym_index_free(idx);
	}
	pthread_cond_broadcast(&c->built);
	return victims;
}

/* Build e (called and returning under mu, which it drops meanwhile). */
static int build_entry(struct symsvc *svc, struct symsvc_index *e, struct symsvc_req *r)
{
	struct symsvc_cache *c = &svc->cache;
	struct symsvc_index *victims;
	struct sym_index *idx;
	int err = 0;

	pthread_mutex_unlock(&c->mu);
	idx = open_index(svc, e, r, &err);
	pthread_mutex_lock(&c->mu);
	victims = publish(c, e, idx, idx ? 0 : err);
	pthread_mutex_unlock(&c->mu);
	free_victims(victims);
	pthread_mutex_lock(&c->mu);
	return e->state == ENTRY_READY ? 0 : e->err;
}

/* Drop a reference to a failed entry; the last one frees it. */
static int fail_ref(struct symsvc_index *e)
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
 * only when its generation moved, i.e. after an upload (under mu).
 */
static struct symsvc_index *check_fresh(struct symsvc *svc, struct symsvc_index *e,
					struct symsvc_index **victim)
{
	struct symsvc_cache *c = &svc->cache;
	uint64_t gen = store_generation(svc->store);
	struct symsvc_inputs in;
	int err;

	if (e->state != ENTRY_READY || e->gen == gen)
		return e;
	if (e->gen == UNCHECKED && !store_is_open(svc->store))
		return e; /* pinned; checked once the store can say */
	err = symsvc_inputs_find(svc->store, e->build_id, &in);
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

/* A new entry of build_id in the table, built by this caller (under mu). */
static int add_entry(struct symsvc *svc, const char *build_id, struct symsvc_req *r,
		     struct symsvc_index **out)
{
	struct symsvc_cache *c = &svc->cache;
	struct symsvc_index *e = calloc(1, sizeof(*e));

	*out = e;
	if (!e)
		return -ENOMEM;
	strcpy(e->build_id, build_id);
	e->state = ENTRY_BUILDING;
	e->hnext = c->table[bucket(c, build_id)];
	c->table[bucket(c, build_id)] = e;
	e->refs++;
	return build_entry(svc, e, r);
}

/*
 * Wait (under mu) until e, built by another request, is ready or failed:
 * its result; or, polling r's check every WAIT_POLL_MS, the check's error
 * (e still building: the caller only drops its reference).
 */
#define WAIT_POLL_MS 100

static int wait_built(struct symsvc_cache *c, struct symsvc_index *e, struct symsvc_req *r)
{
	struct timespec ts;
	int err;

	while (e->state == ENTRY_BUILDING) {
		if (!r || !r->opts.check) {
			pthread_cond_wait(&c->built, &c->mu);
			continue;
		}
		clock_gettime(CLOCK_REALTIME, &ts); /* the condition's clock */
		ts.tv_nsec += WAIT_POLL_MS * 1000000L;
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&c->built, &c->mu, &ts);
		if (e->state == ENTRY_BUILDING && (err = symsvc_req_check(r)))
			return err;
	}
	return e->state == ENTRY_READY ? 0 : e->err;
}

static int index_get_once(struct symsvc *svc, const char *build_id, struct symsvc_req *r,
			  struct symsvc_index **out);

int symsvc_index_get(struct symsvc *svc, const char *build_id, struct symsvc_index **out)
{
	return symsvc_index_get_for(svc, build_id, NULL, out);
}

/* Whether the failure of a build another request made was that request's
 * stop (its deadline, its client gone), which says nothing about the
 * index: a waiter whose own request goes on builds it again. */
static bool builder_stopped(int err, struct symsvc_req *r)
{
	return (err == -ETIMEDOUT || err == -ECANCELED) && !symsvc_req_check(r);
}

int symsvc_index_get_for(struct symsvc *svc, const char *build_id, struct symsvc_req *r,
			 struct symsvc_index **out)
{
	int err, tries = 0;

	do
		err = index_get_once(svc, build_id, r, out);
	while (builder_stopped(err, r) && ++tries < 3);
	return err;
}

static int index_get_once(struct symsvc *svc, const char *build_id, struct symsvc_req *r,
			  struct symsvc_index **out)
{
	struct symsvc_cache *c = &svc->cache;
	struct symsvc_index *e, *stale = NULL;
	int err = symsvc_req_check(r);

	if (err)
		return err;
	if (strlen(build_id) >= STORE_BUILD_ID_HEX)
		return -ENOENT;
	pthread_mutex_lock(&c->mu);
	e = find(c, build_id);
	if (e)
		e = check_fresh(svc, e, &stale);
	if (!e) {
		err = add_entry(svc, build_id, r, &e);
	} else {
		e->refs++;
		err = wait_built(c, e, r);
		if (err && e->state == ENTRY_BUILDING) {
			e->refs--; /* its builder holds a reference too */
			e = NULL;
		}
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

const struct sym_index *symsvc_index_sym(const struct symsvc_index *ix)
{
	return ix->idx;
}

void symsvc_index_put(struct symsvc *svc, struct symsvc_index *e)
{
	struct symsvc_cache *c = &svc->cache;
	struct symsvc_index *victims, *stale = NULL;

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

void symsvc_cache_get_stats(struct symsvc_cache *c, struct symsvc_stats *st)
{
	pthread_mutex_lock(&c->mu);
	*st = (struct symsvc_stats){ c->bytes, c->budget, c->loaded, c->builds,
				     c->evictions, c->refused, c->disk_loads,
				     c->pin_loads, c->unsaved, c->rebuilds,
				     c->build_failures, c->failures_cached };
	pthread_mutex_unlock(&c->mu);
}
