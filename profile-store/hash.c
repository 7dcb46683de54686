/*
 * hash.c - the store's checksum: 64 bits, word at a time, little-endian
 * words so a file reads the same on every machine; it guards block
 * sections and log records against damage (not against an adversary:
 * nothing outside writes them).  Blocks are named by sha256
 * (block_name.c); the interning sets hash with common.h's keyed
 * ember_hash.
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
