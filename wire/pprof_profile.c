/*
 * pprof_profile.c - the struct pprof_profile and its memory: creation,
 * release, the lookups by id, and the two allocation helpers every edit
 * uses.  All memory of the protobuf-c message comes from malloc (protobuf-
 * c's default allocator frees it in free_unpacked), so edits may realloc
 * its arrays and add malloc'd strings and submessages.  Repeated arrays
 * grow by doubling; their capacities live in p->caps, since protobuf-c
 * keeps only lengths.
 */
#include "wire_internal.h"

#include <stdlib.h>
#include <string.h>

int pprof_grow(void *arr, size_t n, size_t *cap, size_t elem_size)
{
	void **a = arr, *na;
	size_t ncap;

	if (n < *cap)
		return 0;
	ncap = *cap ? 2 * *cap : 8;
	if (ncap < n + 1)
		ncap = n + 1;
	if (ncap > SIZE_MAX / elem_size)
		return -ENOMEM;
	na = realloc(*a, ncap * elem_size);
	if (!na)
		return -ENOMEM;
	*a = na;
	*cap = ncap;
	return 0;
}

char *pprof_strdup(const char *s)
{
	return strdup(s ? s : "");
}

struct pprof_profile *pprof_profile_new(void)
{
	struct pprof_profile *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->msg = malloc(sizeof(*p->msg));
	if (p->msg)
		perftools__profiles__profile__init(p->msg);
	p->mappings.dense = p->locations.dense = p->functions.dense = true;
	if (!p->msg || pprof_grow(&p->msg->string_table, 0, &p->caps.strings,
				  sizeof(char *)) ||
	    !(p->msg->string_table[0] = pprof_strdup(""))) {
		pprof_profile_free(p);
		return NULL;
	}
	p->msg->n_string_table = 1;
	return p;
}

void pprof_profile_free(struct pprof_profile *p)
{
	if (!p)
		return;
	if (p->msg)
		perftools__profiles__profile__free_unpacked(p->msg, NULL);
	pprof_index_release(&p->mappings);
	pprof_index_release(&p->locations);
	pprof_index_release(&p->functions);
	ember_hset_release(&p->strings);
	ember_hset_release(&p->funcs);
	free(p);
}

const pprof_message_t *pprof_message(const struct pprof_profile *p)
{
	return p->msg;
}

const char *pprof_string(const struct pprof_profile *p, int64_t idx)
{
	if (idx < 0 || (uint64_t)idx >= p->msg->n_string_table)
		return NULL;
	return p->msg->string_table[idx];
}

const pprof_mapping_t *pprof_mapping_by_id(const struct pprof_profile *p, uint64_t id)
{
	size_t i = pprof_index_find(&p->mappings, id);

	return i == SIZE_MAX ? NULL : p->msg->mapping[i];
}

size_t pprof_mapping_index(const struct pprof_profile *p, uint64_t id)
{
	return pprof_index_find(&p->mappings, id);
}

const pprof_location_t *pprof_location_by_id(const struct pprof_profile *p, uint64_t id)
{
	size_t i = pprof_index_find(&p->locations, id);

	return i == SIZE_MAX ? NULL : p->msg->location[i];
}

const pprof_function_t *pprof_function_by_id(const struct pprof_profile *p, uint64_t id)
{
	size_t i = pprof_index_find(&p->functions, id);

	return i == SIZE_MAX ? NULL : p->msg->function[i];
}
