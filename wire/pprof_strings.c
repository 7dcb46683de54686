/*
 * pprof_strings.c - deduplicated additions to the string table.  The
 * dedup set is built on the first pprof_add_string() over the whole
 * table (the first of equal strings wins), then kept up to date; a
 * profile that is only read never pays for it.
 */
#include "wire_internal.h"

#include <stdlib.h>
#include <string.h>

static uint64_t str_hash(const struct pprof_profile *p, const char *s)
{
	return ember_hash(&p->strings.key, s, strlen(s));
}

static bool str_equal(const void *ctx, size_t idx, const void *key)
{
	return strcmp(((const pprof_message_t *)ctx)->string_table[idx], key) == 0;
}

static int build_set(struct pprof_profile *p)
{
	const pprof_message_t *m = p->msg;

	EMBER_FORWARD_IF_ERROR(ember_hset_init(&p->strings));
	for (size_t i = 0; i < m->n_string_table; i++) {
		const char *s = m->string_table[i];
		uint64_t h = str_hash(p, s);

		if (ember_hset_find(&p->strings, h, str_equal, m, s) != SIZE_MAX)
			continue;
		EMBER_FORWARD_IF_ERROR(ember_hset_insert(&p->strings, h, i));
	}
	return 0;
}

static int append_string(struct pprof_profile *p, const char *s, int64_t *idx)
{
	pprof_message_t *m = p->msg;
	char *copy;
	int err;

	if (m->n_string_table >= INT32_MAX)
		return -E2BIG;
	err = pprof_charge(p, PPROF_BLOCK_COST(strlen(s) + 1) + 2 * sizeof(char *) +
				      2 * sizeof(struct ember_hset_slot));
	if (!err)
		err = pprof_grow(&m->string_table, m->n_string_table, &p->caps.strings,
				 sizeof(char *));
	if (err)
		return err;
	copy = pprof_strdup(s);
	if (!copy)
		return -ENOMEM;
	m->string_table[m->n_string_table] = copy;
	err = ember_hset_insert(&p->strings, str_hash(p, s), m->n_string_table);
	if (err) {
		free(copy);
		return err;
	}
	*idx = (int64_t)m->n_string_table++;
	return 0;
}

int pprof_add_string(struct pprof_profile *p, const char *s, int64_t *idx)
{
	size_t found;

	if (!s)
		s = "";
	if (!p->strings.mask)
		EMBER_FORWARD_IF_ERROR(build_set(p));
	found = ember_hset_find(&p->strings, str_hash(p, s), str_equal, p->msg, s);
	if (found != SIZE_MAX) {
		*idx = (int64_t)found;
		return 0;
	}
	return append_string(p, s, idx);
}
