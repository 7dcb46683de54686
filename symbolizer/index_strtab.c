/*
 * index_strtab.c - interned strings of the symbol index.
 *
 * Every name and path in the index is stored once in one byte array and
 * referred to by offset, so the index is a handful of flat arrays (cheap
 * to build, to free and, later, to write to disk).  Offset 0 holds the
 * empty string and means "none".  Strings are deduplicated through a
 * keyed hash set of their offsets (common.h's ember_hset), so names
 * from a crafted file cannot be made to collide.
 */
#include "sym_internal.h"

#include <stdlib.h>
#include <string.h>

int sym_strtab_init(struct sym_strtab *st)
{
	int err;

	memset(st, 0, sizeof(*st));
	st->alloc = 4096;
	st->data = malloc(st->alloc);
	if (!st->data)
		return -ENOMEM;
	err = ember_hset_init(&st->set);
	if (err) {
		sym_strtab_release(st);
		return err;
	}
	st->data[0] = '\0';
	st->len = 1;
	return 0;
}

void sym_strtab_release(struct sym_strtab *st)
{
	if (!st)
		return;
	free(st->data);
	ember_hset_release(&st->set);
	memset(st, 0, sizeof(*st));
}

/* The string a lookup asks for. */
struct str_key {
	const char *s;
	size_t n;
};

/* Whether the string at offset idx is key: it ends with a NUL inside the
 * table, so compare up to it. */
static bool str_equal(const void *ctx, size_t idx, const void *key)
{
	const char *t = (const char *)ctx + idx;
	const struct str_key *k = key;

	return t[0] == k->s[0] && strncmp(t, k->s, k->n) == 0 && t[k->n] == '\0';
}

/* A new string's share of the hash set (a slot of 8 bytes, at most half
 * full), charged with its bytes. */
#define SET_BYTES 16

static int64_t strtab_append(struct sym_strtab *st, const char *s, size_t n)
{
	size_t off = st->len;
	int err;

	if (st->len + n + 1 > UINT32_MAX - 2)
		return -E2BIG;
	if (st->len + n + 1 > st->alloc) {
		size_t na = st->alloc;
		char *p;

		while (st->len + n + 1 > na)
			na *= 2;
		if ((err = sym_budget_charge(st->budget, na - st->alloc, "strings")))
			return err;
		p = realloc(st->data, na);
		if (!p) {
			sym_budget_give(st->budget, na - st->alloc);
			return -ENOMEM;
		}
		st->data = p;
		st->alloc = na;
	}
	if ((err = sym_budget_charge(st->budget, SET_BYTES, "strings")))
		return err;
	memcpy(st->data + off, s, n);
	st->data[off + n] = '\0';
	st->len += n + 1;
	return (int64_t)off;
}

int64_t sym_strtab_intern(struct sym_strtab *st, const char *s)
{
	struct str_key k = { s, strlen(s) };
	uint64_t h;
	size_t found;
	int64_t off;
	int err;

	if (k.n == 0)
		return 0;
	if ((err = sym_budget_work(st->budget, k.n, "strings")))
		return err;
	h = ember_hash(&st->set.key, s, k.n);
	found = ember_hset_find(&st->set, h, str_equal, st->data, &k);
	if (found != SIZE_MAX)
		return (int64_t)found;
	off = strtab_append(st, s, k.n);
	if (off < 0)
		return off;
	err = ember_hset_insert(&st->set, h, (size_t)off);
	if (err) {
		st->len = (size_t)off; /* as if never appended */
		st->data[off] = '\0';
		return err;
	}
	return off;
}
