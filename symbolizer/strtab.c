/*
 * strtab.c - interned strings of the symbol index.
 *
 * Every name and path in the index is stored once in one byte array and
 * referred to by offset, so the index is a handful of flat arrays (cheap
 * to build, to free and, later, to write to disk).  Offset 0 holds the
 * empty string and means "none".
 */
#include "sym_internal.h"

#include <stdlib.h>
#include <string.h>

int sym_vec_grow(void **data, size_t *alloc, size_t len, size_t elem)
{
	size_t n;
	void *p;

	if (len < *alloc)
		return 0;
	n = *alloc ? *alloc * 2 : 64;
	p = realloc(*data, n * elem);
	if (!p)
		return -ENOMEM;
	*data = p;
	*alloc = n;
	return 0;
}

int sym_strtab_init(struct sym_strtab *st)
{
	memset(st, 0, sizeof(*st));
	st->alloc = 4096;
	st->data = malloc(st->alloc);
	st->nslots = 1024;
	st->slots = calloc(st->nslots * 2, sizeof(uint32_t));
	if (!st->data || !st->slots) {
		sym_strtab_release(st);
		return -ENOMEM;
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
	free(st->slots);
	memset(st, 0, sizeof(*st));
}

/* Eight bytes a step (names and paths are tens of bytes): a multiply
 * and a rotate per word, the tail zero-padded, the length mixed in. */
static uint32_t str_hash(const char *s, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n, w;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		memcpy(&w, s + i, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 29;
	}
	w = 0;
	memcpy(&w, s + i, n - i);
	h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
	return (uint32_t)(h ^ (h >> 32));
}

static int strtab_rehash(struct sym_strtab *st)
{
	size_t n = st->nslots * 2;
	uint32_t *slots = calloc(n * 2, sizeof(uint32_t));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < st->nslots; i++) {
		uint32_t off = st->slots[2 * i];
		const char *s = st->data + off;
		size_t j;

		if (!off)
			continue;
		j = str_hash(s, strlen(s)) & (n - 1);
		while (slots[2 * j])
			j = (j + 1) & (n - 1);
		slots[2 * j] = off;
		slots[2 * j + 1] = st->slots[2 * i + 1];
	}
	free(st->slots);
	st->slots = slots;
	st->nslots = n;
	return 0;
}

static int64_t strtab_append(struct sym_strtab *st, const char *s, size_t n)
{
	size_t off = st->len;

	if (st->len + n + 1 > UINT32_MAX)
		return -E2BIG;
	if (st->len + n + 1 > st->alloc) {
		size_t na = st->alloc;
		char *p;

		while (st->len + n + 1 > na)
			na *= 2;
		p = realloc(st->data, na);
		if (!p)
			return -ENOMEM;
		st->data = p;
		st->alloc = na;
	}
	memcpy(st->data + off, s, n);
	st->data[off + n] = '\0';
	st->len += n + 1;
	return (int64_t)off;
}

int64_t sym_strtab_intern(struct sym_strtab *st, const char *s, uint32_t **aux)
{
	size_t n = strlen(s), j;
	int64_t off;

	if (n == 0)
		return 0;
	if ((st->count + 1) * 2 > st->nslots && strtab_rehash(st))
		return -ENOMEM;
	j = str_hash(s, n) & (st->nslots - 1);
	while (st->slots[2 * j]) {
		const char *t = st->data + st->slots[2 * j];

		/* t ends with a NUL inside the table: compare up to it */
		if (t[0] == s[0] && strncmp(t, s, n) == 0 && t[n] == '\0')
			goto found;
		j = (j + 1) & (st->nslots - 1);
	}
	off = strtab_append(st, s, n);
	if (off < 0)
		return off;
	st->slots[2 * j] = (uint32_t)off;
	st->slots[2 * j + 1] = SYM_NONE;
	st->count++;
found:
	if (aux)
		*aux = &st->slots[2 * j + 1];
	return st->slots[2 * j];
}
