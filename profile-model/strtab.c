/*
 * strtab.c - interned strings: each string once, NUL-terminated in one
 * byte buffer, named by a dense id (0 is "").  Decoders add strings
 * without the set and index them only when something interns into the
 * table later (pmodel_strtab_index through the first pmodel_strtab_intern).
 * The set hashes with its own random key (common.h's ember_hash), so no
 * input can aim its strings at one probe run.
 */
#include "pmodel_internal.h"

#define STRTAB_CAP ((size_t)1 << 32) /* offsets are 32 bits */

struct key {
	const char *s;
	size_t len;
};

static uint64_t str_hash(const void *ctx, size_t idx)
{
	const struct pmodel_strtab *t = ctx;
	const char *s = pmodel_str(t, idx);

	return ember_hash(&t->set.key, s, strlen(s));
}

static bool str_equal(const void *ctx, size_t idx, const void *k)
{
	const struct pmodel_strtab *t = ctx;
	const struct key *key = k;
	const char *s = pmodel_str(t, idx);

	return strncmp(s, key->s, key->len) == 0 && s[key->len] == '\0';
}

static const struct pmodel_hset_ops ops = { str_hash, str_equal };

int pmodel_strtab_add(struct pmodel_strtab *t, const char *s, size_t len, uint32_t *id)
{
	size_t off = t->bytes.len;

	if (memchr(s, '\0', len))
		return -EINVAL;
	if (t->off.n >= UINT32_MAX - 2)
		return -E2BIG;
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_RESERVE(&t->off, t->off.n + 1));
	EMBER_FORWARD_IF_ERROR(ember_buf_append(&t->bytes, s, len));
	EMBER_FORWARD_IF_ERROR(ember_buf_putc(&t->bytes, '\0'));
	t->off.v[t->off.n] = (uint32_t)off;
	*id = (uint32_t)t->off.n++;
	return 0;
}

int pmodel_strtab_init(struct pmodel_strtab *t)
{
	uint32_t id;

	memset(t, 0, sizeof(*t));
	ember_buf_init(&t->bytes, STRTAB_CAP - 1);
	EMBER_FORWARD_IF_ERROR(ember_hset_init(&t->set));
	return pmodel_strtab_add(t, "", 0, &id);
}

void pmodel_strtab_release(struct pmodel_strtab *t)
{
	ember_buf_release(&t->bytes);
	EMBER_VEC_FREE(&t->off);
	ember_hset_release(&t->set);
}

static int index_all(struct pmodel_strtab *t)
{
	for (size_t i = t->set.used; i < t->off.n; i++) {
		const char *s = pmodel_str(t, (uint32_t)i);
		struct key k = { s, strlen(s) };
		uint64_t h = ember_hash(&t->set.key, s, k.len);

		if (pmodel_hset_find(&t->set, &ops, t, h, &k) == UINT32_MAX)
			EMBER_FORWARD_IF_ERROR(pmodel_hset_insert(&t->set, &ops, t, (uint32_t)i, h));
		else
			t->set.used++; /* a duplicate a decoder added: counted, not placed */
	}
	return 0;
}

int pmodel_strtab_intern(struct pmodel_strtab *t, const char *s, size_t len, uint32_t *id)
{
	struct key k = { s, len };
	uint64_t h;
	uint32_t found;

	if (t->set.used != t->off.n)
		EMBER_FORWARD_IF_ERROR(index_all(t));
	h = ember_hash(&t->set.key, s, len);
	found = pmodel_hset_find(&t->set, &ops, t, h, &k);
	if (found != UINT32_MAX) {
		*id = found;
		return 0;
	}
	EMBER_FORWARD_IF_ERROR(pmodel_strtab_add(t, s, len, &found));
	EMBER_FORWARD_IF_ERROR(pmodel_hset_insert(&t->set, &ops, t, found, h));
	*id = found;
	return 0;
}

uint32_t pmodel_strtab_find(const struct pmodel_strtab *t, const char *s, size_t len)
{
	struct key k = { s, len };

	if (t->set.used != t->off.n)
		return UINT32_MAX; /* not interned: only interned tables are searched */
	return pmodel_hset_find(&t->set, &ops, t, ember_hash(&t->set.key, s, len), &k);
}
