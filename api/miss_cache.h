/*
 * miss_cache.h - keys remembered for a while, each with its error
 * (upstream misses, -ENOENT, and upstream failures).
 * Not thread-safe: the caller holds its lock.  Bounded: with
 * MISS_CACHE_MAX live entries, new keys are not remembered.
 */
#ifndef EMBER_MISS_CACHE_H
#define EMBER_MISS_CACHE_H

#include <stdbool.h>
#include <stddef.h>

#define MISS_KEY_MAX 4352
#define MISS_CACHE_MAX 65536

struct miss_cache;

struct miss_cache *miss_cache_new(unsigned ttl_s);
void miss_cache_free(struct miss_cache *mc);
/* Remember key, and the error err (< 0) its fetch failed with, for ttl
 * seconds from now. */
void miss_cache_put(struct miss_cache *mc, const char *key, int err);
/* Whether key was put less than ttl seconds ago: then *err is its error. */
bool miss_cache_get(struct miss_cache *mc, const char *key, int *err);
/* The bucket key falls in: keyed per cache (ember_hash), so the same keys
 * spread differently in every cache and cannot be aimed at one chain. */
size_t miss_cache_bucket(const struct miss_cache *mc, const char *key);

#endif /* EMBER_MISS_CACHE_H */
