/*
 * err_cache.c - keys remembered for a while, each with the error it
 * failed with (struct ember_errcache in common.h): the server's upstream
 * misses and failures, the symbolization service's failed index builds.
 * A bounded hash set of keys with an expiry time.
 * Expired entries are dropped whenever their bucket is touched; a full
 * cache refuses new keys rather than grow (a miss is then just asked
 * again), so memory stays bounded however many IDs clients invent.
 * Keys are client-chosen (build IDs, source paths): buckets come from
 * common.h's keyed hash, so nobody can aim many keys at one chain.
 */
#include "common.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BUCKETS 4096

struct errcache_entry {
	struct errcache_entry *next;
	time_t expires;
	int err;
	char key[];
};

struct ember_errcache {
	struct ember_hash_key key;	/* of the buckets' hash */
	unsigned ttl;
	size_t count, max;
	struct errcache_entry *buckets[BUCKETS];
};

static time_t now(void)
{
	return (time_t)(ember_monotonic_ms() / 1000);
}

size_t ember_errcache_bucket(const struct ember_errcache *mc, const char *key)
{
	return ember_hash(&mc->key, key, strlen(key)) % BUCKETS;
}

struct ember_errcache *ember_errcache_new(unsigned ttl_s, size_t max_entries)
{
	struct ember_errcache *mc = calloc(1, sizeof(*mc));

	if (!mc)
		return NULL;
	if (ember_hash_key_init(&mc->key)) {
		free(mc);
		return NULL;
	}
	mc->ttl = ttl_s;
	mc->max = max_entries;
	return mc;
}

void ember_errcache_free(struct ember_errcache *mc)
{
	if (!mc)
		return;
	for (size_t i = 0; i < BUCKETS; i++)
		while (mc->buckets[i]) {
			struct errcache_entry *e = mc->buckets[i];

			mc->buckets[i] = e->next;
			free(e);
		}
	free(mc);
}

/* Drop the expired entries of a bucket; return the entry for key, if any. */
static struct errcache_entry *sweep(struct ember_errcache *mc, size_t b, const char *key)
{
	struct errcache_entry **p = &mc->buckets[b], *found = NULL;
	time_t t = now();

	while (*p) {
		struct errcache_entry *e = *p;

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

/* A new entry of key with err and msg (the message after the key's NUL). */
static struct errcache_entry *entry_new(const char *key, int err, const char *msg)
{
	size_t len = strlen(key), mlen = msg ? strlen(msg) : 0;
	struct errcache_entry *e = malloc(sizeof(*e) + len + 1 + mlen + 1);

	if (!e)
		return NULL;
	memcpy(e->key, key, len + 1);
	memcpy(e->key + len + 1, msg ? msg : "", mlen + 1);
	e->err = err;
	return e;
}

void ember_errcache_put_msg(struct ember_errcache *mc, const char *key, int err,
			    const char *msg)
{
	size_t b = ember_errcache_bucket(mc, key);
	struct errcache_entry *e = sweep(mc, b, key), **p;

	if (e) { /* replaced whole: its message may be of another length */
		for (p = &mc->buckets[b]; *p != e; p = &(*p)->next)
			;
		*p = e->next;
		free(e);
		mc->count--;
	}
	if (mc->count >= mc->max || !(e = entry_new(key, err, msg)))
		return;
	e->expires = now() + mc->ttl;
	e->next = mc->buckets[b];
	mc->buckets[b] = e;
	mc->count++;
}

void ember_errcache_put(struct ember_errcache *mc, const char *key, int err)
{
	ember_errcache_put_msg(mc, key, err, NULL);
}

bool ember_errcache_get_msg(struct ember_errcache *mc, const char *key, int *err, char *msg,
			    size_t size)
{
	struct errcache_entry *e = sweep(mc, ember_errcache_bucket(mc, key), key);

	if (e) {
		*err = e->err;
		if (msg && size)
			snprintf(msg, size, "%s", e->key + strlen(e->key) + 1);
	}
	return e != NULL;
}

bool ember_errcache_get(struct ember_errcache *mc, const char *key, int *err)
{
	return ember_errcache_get_msg(mc, key, err, NULL, 0);
}
