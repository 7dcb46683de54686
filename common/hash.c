/*
 * hash.c - the one hash function of Ember: SipHash-1-3 (Aumasson and
 * Bernstein, "SipHash: a fast short-input PRF", 2012; one compression
 * and three finalization rounds, the variant Rust's HashMap and Python
 * use), keyed per table with 128 random bits.  Every table keyed by
 * strings or ids from outside input (DWARF names, pprof strings, build
 * IDs, label values) hashes through it, so nobody who does not know a
 * table's key can choose inputs that collide in it (hash flooding);
 * tables of a few 32-bit words probed in hot loops use the keyed
 * multiply-add-shift of common.h (ember_hash_words) instead.
 */
#include "common.h"

#include <errno.h>
#include <sys/random.h>

int ember_hash_key_init(struct ember_hash_key *k)
{
	if (getrandom(k, sizeof(*k), 0) != (ssize_t)sizeof(*k))
		return errno ? -errno : -EIO;
	return 0;
}

static inline uint64_t rotl(uint64_t x, unsigned b)
{
	return (x << b) | (x >> (64 - b));
}

struct sip {
	uint64_t v0, v1, v2, v3;
};

static inline void sip_round(struct sip *s)
{
	s->v0 += s->v1;
	s->v1 = rotl(s->v1, 13);
	s->v1 ^= s->v0;
	s->v0 = rotl(s->v0, 32);
	s->v2 += s->v3;
	s->v3 = rotl(s->v3, 16);
	s->v3 ^= s->v2;
	s->v0 += s->v3;
	s->v3 = rotl(s->v3, 21);
	s->v3 ^= s->v0;
	s->v2 += s->v1;
	s->v1 = rotl(s->v1, 17);
	s->v1 ^= s->v2;
	s->v2 = rotl(s->v2, 32);
}

static inline void sip_word(struct sip *s, uint64_t m)
{
	s->v3 ^= m;
	sip_round(s);
	s->v0 ^= m;
}

uint64_t ember_hash(const struct ember_hash_key *k, const void *data, size_t len)
{
	struct sip s = { k->k0 ^ 0x736f6d6570736575ull, k->k1 ^ 0x646f72616e646f6dull,
			 k->k0 ^ 0x6c7967656e657261ull, k->k1 ^ 0x7465646279746573ull };
	const uint8_t *p = data;
	uint64_t m, last = (uint64_t)len << 56;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		memcpy(&m, p + i, 8); /* little endian, as the reference reads */
		sip_word(&s, m);
	}
	for (size_t j = 0; i + j < len; j++)
		last |= (uint64_t)p[i + j] << (8 * j);
	sip_word(&s, last);
	s.v2 ^= 0xff;
	sip_round(&s);
	sip_round(&s);
	sip_round(&s);
	return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

uint64_t ember_hash_u64(const struct ember_hash_key *k, uint64_t v)
{
	return ember_hash(k, &v, sizeof(v));
}

int ember_words_key_init(struct ember_words_key *k)
{
	if (getrandom(k, sizeof(*k), 0) != (ssize_t)sizeof(*k))
		return errno ? -errno : -EIO;
	return 0;
}
