/*
 * record.c - the keys and value records the store keeps in RocksDB.
 * Layout and version rule: docs/store-format.md.  Values are decoded with
 * length checks, so a damaged record is skipped, never over-read.
 */
#include "store_internal.h"

#include <errno.h>
#include <string.h>

#define RECORD_VERSION 1
#define RECORD_FIXED 32 /* version .. name_len, see docs/store-format.md */

int store_key_make(char *key, enum store_key_tag tag, const char *id,
		   const char *rest)
{
	size_t idlen = strlen(id), rlen = rest ? strlen(rest) : 0;

	if (1 + idlen + 1 + rlen > STORE_KEY_MAX)
		return -ENAMETOOLONG;
	key[0] = (char)tag;
	memcpy(key + 1, id, idlen);
	key[1 + idlen] = '\0';
	if (rlen)
		memcpy(key + 2 + idlen, rest, rlen);
	return (int)(2 + idlen + rlen);
}

static void put_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* version u8, kinds u8, dwarf_version u8, origin u8, flags u32, size u64,
 * mtime i64, name_len u16, pad[6], then the name.  Build ID and sha256 are
 * in the key (artifacts) or before the record (sources). */
size_t store_record_encode(const struct store_artifact *a, uint8_t *out,
			   size_t size)
{
	size_t nlen = strnlen(a->name, STORE_NAME_MAX - 1);

	if (size < RECORD_FIXED + nlen)
		return 0;
	memset(out, 0, RECORD_FIXED);
	out[0] = RECORD_VERSION;
	out[1] = (uint8_t)a->kinds;
	out[2] = (uint8_t)a->dwarf_version;
	out[3] = (uint8_t)(a->origin == STORE_FROM_UPSTREAM);
	put_le(out + 4, a->flags, 4);
	put_le(out + 8, a->size, 8);
	put_le(out + 16, (uint64_t)a->mtime, 8);
	put_le(out + 24, nlen, 2);
	memcpy(out + RECORD_FIXED, a->name, nlen);
	return RECORD_FIXED + nlen;
}

int store_record_decode(const uint8_t *p, size_t len, struct store_artifact *a)
{
	size_t nlen;

	if (len < RECORD_FIXED || p[0] != RECORD_VERSION)
		return -EINVAL;
	nlen = (size_t)get_le(p + 24, 2);
	if (nlen >= STORE_NAME_MAX || RECORD_FIXED + nlen != len)
		return -EINVAL;
	a->kinds = p[1];
	a->dwarf_version = p[2];
	a->origin = p[3] == 1 ? STORE_FROM_UPSTREAM : STORE_FROM_UPLOAD;
	a->flags = (unsigned)get_le(p + 4, 4);
	a->size = get_le(p + 8, 8);
	a->mtime = (int64_t)get_le(p + 16, 8);
	memcpy(a->name, p + RECORD_FIXED, nlen);
	a->name[nlen] = '\0';
	return 0;
}

size_t store_artifact_encode(const struct store_artifact *a, uint8_t *out, size_t size)
{
	return store_record_encode(a, out, size);
}

int store_artifact_decode(const uint8_t *p, size_t len, struct store_artifact *a)
{
	return store_record_decode(p, len, a);
}
