/*
 * cache.c - decoded block data (dictionary, profiles, stream directory)
 * kept between queries under a byte budget, least recently used first
 * out.  A block's data is loaded once however many queries want it at the
 * same time (the block's mutex), and a query holds its own reference, so
 * an eviction never frees what a query reads.  A scan of totals takes
 * the cached data when there is some, else reads the block's profiles
 * alone (no dictionary), kept as the block's entry until its whole data
 * is loaded (which replaces them) or it is evicted: a block is in the
 * LRU while it holds either.
 */
#include "pstore_block.h"
#include "pstore_catalog.h"


/* Take entry i out of the LRU and drop its block's data (under c->mu). */
static void drop_at(struct pstore_cache *c, size_t i)
{
	struct pstore_block *b = c->lru.v[i];

	c->lru.v[i] = c->lru.v[--c->lru.n];
	pthread_mutex_lock(&b->mu);
	c->used -= b->data ? b->data->bytes : 0;
	c->used -= b->profiles ? b->profiles->bytes : 0;
	pstore_bdata_unref(b->data);
	pstore_bdata_unref(b->profiles);
	b->data = b->profiles = NULL;
	pthread_mutex_unlock(&b->mu);
	pstore_block_unref(b);
}

static void evict(struct pstore_cache *c)
{
	while (c->used > c->budget && c->lru.n > 1) {
		size_t oldest = 0;

		for (size_t i = 1; i < c->lru.n; i++)
			if (c->lru.v[i]->last_use < c->lru.v[oldest]->last_use)
				oldest = i;
		drop_at(c, oldest);
	}
}

/* b used now; with its bytes changed by delta (new: it was not in the
 * LRU), then the LRU within its budget. */
static void touch(struct pstore_cache *c, struct pstore_block *b, bool new, int64_t delta)
{
	pthread_mutex_lock(&c->mu);
	b->last_use = ++c->tick;
	if (new && EMBER_VEC_APPEND(&c->lru, pstore_block_ref(b))) {
		pstore_block_unref(b); /* not listed: freed with the block */
		delta = 0;
	}
	c->used = (size_t)((int64_t)c->used + delta);
	evict(c);
	pthread_mutex_unlock(&c->mu);
}

/* b's whole data into b->data with its stack keys (the query's, which
 * find the stacks a result holds without importing them again). */
static int load_keyed(struct pstore_cache *c, struct pstore_block *b, struct ember_diag *d)
{
	struct pstore_bdata *bd = NULL;
	int err = pstore_block_load(b, &bd, d);

	if (!err && (err = pmodel_dict_stack_keys(&bd->dict, &c->stack_seed, &bd->keys)))
		pstore_bdata_unref(bd);
	if (err)
		return err;
	bd->bytes += pmodel_dict_nodes(&bd->dict) * sizeof(*bd->keys);
	b->data = bd;
	return 0;
}

int pstore_cache_data(struct pstore_cache *c, struct pstore_block *b, struct pstore_bdata **out,
		  struct ember_diag *d)
{
	struct pstore_bdata *bd = NULL, *partial = NULL;
	bool loaded = false, listed;
	int err = 0;

	pthread_mutex_lock(&b->mu);
	listed = b->data || b->profiles;
	if (!b->data) {
		err = load_keyed(c, b, d);
		loaded = !err;
	}
	if (loaded) { /* the whole data replaces the profiles alone */
		partial = b->profiles;
		b->profiles = NULL;
	}
	if (!err)
		bd = pstore_bdata_ref(b->data);
	pthread_mutex_unlock(&b->mu);
	if (err)
		return err;
	touch(c, b, loaded && !listed,
	      loaded ? (int64_t)bd->bytes - (int64_t)(partial ? partial->bytes : 0) : 0);
	pstore_bdata_unref(partial);
	*out = bd;
	return 0;
}

int pstore_cache_profiles(struct pstore_cache *c, struct pstore_block *b,
			  struct pstore_bdata **out, struct ember_diag *d)
{
	struct pstore_bdata *bd = NULL;
	bool kept = false;
	int err = 0;

	pthread_mutex_lock(&b->mu);
	if (b->data || b->profiles)
		bd = pstore_bdata_ref(b->data ? b->data : b->profiles);
	else if (!c)
		err = pstore_block_load_profiles(b, &bd, d);
	else if (!(err = pstore_block_load_profiles(b, &b->profiles, d))) {
		bd = pstore_bdata_ref(b->profiles);
		kept = true;
	}
	pthread_mutex_unlock(&b->mu);
	if (err)
		return err;
	if (c)
		touch(c, b, kept, kept ? (int64_t)bd->bytes : 0);
	*out = bd;
	return 0;
}

void pstore_cache_drop(struct pstore_cache *c, struct pstore_block *b)
{
	pthread_mutex_lock(&c->mu);
	for (size_t i = 0; i < c->lru.n; i++)
		if (c->lru.v[i] == b) {
			drop_at(c, i);
			break;
		}
	pthread_mutex_unlock(&c->mu);
}

void pstore_cache_release(struct pstore_cache *c)
{
	while (c->lru.n) {
		struct pstore_block *b = c->lru.v[--c->lru.n];

		pstore_bdata_unref(b->data);
		pstore_bdata_unref(b->profiles);
		b->data = b->profiles = NULL;
		pstore_block_unref(b);
	}
	EMBER_VEC_FREE(&c->lru);
	pthread_mutex_destroy(&c->mu);
}
