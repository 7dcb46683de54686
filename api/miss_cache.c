/*
 * miss_cache.c - a bounded hash set of keys with an expiry time.
 * Expired entries are dropped whenever their bucket is touched; a full
 * cache refuses new keys rather than grow (a miss is then just asked
 * again), so memory stays bounded however many IDs clients invent.
 * Keys are client-chosen (build IDs, source paths): buckets come from
 * common.h's keyed hash, so nobody can aim many keys at one chain.
 */
#include "miss_cache.h"
#include "common.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BUCKETS 4096

struct miss_entry {
	struct miss_entry *next;
	time_t expires;
	int err;
	char key[];
};

struct miss_cache {
	struct ember_hash_key key;	/* of the buckets' hash */
	unsigned ttl;
	size_t count;
	struct miss_entry *buckets[BUCKETS];
};

static time_t now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

size_t miss_cache_bucket(const struct miss_cache *mc, const char *key)
{
	return ember_hash(&mc->key, key, strlen(key)) % BUCKETS;
}

struct miss_cache *miss_cache_new(unsigned ttl_s)
{
	struct miss_cache *mc = calloc(1, sizeof(*mc));

	if (!mc)
		return NULL;
	if (ember_hash_key_init(&mc->key)) {
		free(mc);
		return NULL;
	}
	mc->ttl = ttl_s;
	return mc;
}

void miss_cache_free(struct miss_cache *mc)
{
	if (!mc)
		return;
	for (size_t i = 0; i < BUCKETS; i++)
		while (mc->buckets[i]) {
			struct miss_entry *e = mc->buckets[i];

			mc->buckets[i] = e->next;
			free(e);
		}
	free(mc);
}

/* Drop the expired entries of a bucket; return the entry for key, if any. */
static struct miss_entry *sweep(struct miss_cache *mc, size_t b, const char *key)
{
	struct miss_entry **p = &mc->buckets[b], *found = NULL;
	time_t t = now();

	while (*p) {
		struct miss_entry *e = *p;

		if (e->expires <= t) {
			*p = e->next;
			free(e);
			mc->count--;
			continue;
		}
		if (strcmp(e->key, key) == 0)
			found = e;
		p = &e->next;
	}
	return found;
}

void miss_cache_put(struct miss_cache *mc, const char *key, int err)
{
	size_t b = miss_cache_bucket(mc, key);
	struct miss_entry *e = sweep(mc, b, key);
	size_t len = strlen(key);

	if (e) {
		e->expires = now() + mc->ttl;
		e->err = err;
		return;
	}
	if (mc->count >= MISS_CACHE_MAX || !(e = malloc(sizeof(*e) + len + 1)))
		return;
	memcpy(e->key, key, len + 1);
	e->expires = now() + mc->ttl;
	e->err = err;
	e->next = mc->buckets[b];
	mc->buckets[b] = e;
	mc->count++;
}

bool miss_cache_get(struct miss_cache *mc, const char *key, int *err)
{
	struct miss_entry *e = sweep(mc, miss_cache_bucket(mc, key), key);

	if (e)
		*err = e->err;
	return e != NULL;
}
