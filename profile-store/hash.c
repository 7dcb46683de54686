/*
 * hash.c - the store's hash function: 64 bits, word at a time (a block's
 * content name, log record checks and interning hash megabytes; wire's
 * byte-at-a-time FNV-1a would be the slower choice), little-endian words
 * so a block's name is the same on every machine.  The interning sets
 * are common.h's struct ember_hset.
 */
#include "pstore_internal.h"

uint64_t pstore_hash(const void *data, size_t len, uint64_t seed)
{
	const uint8_t *p = data;
	uint64_t h = seed ^ ((uint64_t)len * 0x9e3779b97f4a7c15ull), k = 0;

	for (; len >= 8; p += 8, len -= 8)
		h = (h ^ pstore_mix(pstore_rd64(p))) * 0x9e3779b97f4a7c15ull;
	for (size_t i = 0; i < len; i++)
		k |= (uint64_t)p[i] << (8 * i);
	return pstore_mix(h ^ pstore_mix(k ^ len));
}
