/*
 * checksum64.c - an unkeyed 64-bit hash, word at a time over little-endian
 * words so a file reads the same on every machine.  The profile store's
 * checksum of block sections and log records (docs/profile-store-format.md)
 * and the flame graph's frame colours (profile-model/out_svg.c): both are
 * formats, so its output never changes.  It guards against damage, not
 * against an adversary (nothing outside writes what it checks); tables
 * keyed by outside input hash with ember_hash (hash.c).
 */
#include "common.h"

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

uint64_t ember_checksum64(const void *data, size_t len, uint64_t seed)
{
	const uint8_t *p = data;
	uint64_t h = seed ^ ((uint64_t)len * 0x9e3779b97f4a7c15ull), k = 0;

	for (; len >= 8; p += 8, len -= 8)
		h = (h ^ ember_mix64(rd64(p))) * 0x9e3779b97f4a7c15ull;
	for (size_t i = 0; i < len; i++)
		k |= (uint64_t)p[i] << (8 * i);
	return ember_mix64(h ^ ember_mix64(k ^ len));
}
