/*
 * pprof_index.c - lookups by id of mappings, locations and functions.
 * profile.proto lets a writer choose any unique non-zero ids; Go and most
 * agents number them 1..n in order, which this index recognizes and
 * answers in O(1) (dense).  Any other numbering is kept as (id, index)
 * pairs sorted by id and searched in O(log n).  New elements always get
 * max_id + 1, which keeps either form without re-sorting.
 */
#include "wire_internal.h"

#include <stdlib.h>

static int slot_cmp(const void *a, const void *b)
{
	const struct pprof_id_slot *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int build_sorted(struct pprof_id_index *ix, void *const *elems, size_t n,
			pprof_id_of_fn id_of, uint64_t *dup)
{
	ix->slots = malloc(n * sizeof(*ix->slots));
	if (!ix->slots)
		return -ENOMEM;
	ix->alloc = n;
	for (size_t i = 0; i < n; i++)
		ix->slots[i] = (struct pprof_id_slot){ id_of(elems[i]), i };
	qsort(ix->slots, n, sizeof(*ix->slots), slot_cmp);
	for (size_t i = 1; i < n; i++) {
		if (ix->slots[i].id == ix->slots[i - 1].id) {
			*dup = ix->slots[i].id;
			return -EEXIST;
		}
	}
	ix->max_id = ix->slots[n - 1].id;
	return 0;
}

int pprof_index_build(struct pprof_id_index *ix, void *const *elems, size_t n,
		      pprof_id_of_fn id_of, uint64_t *dup)
{
	size_t i = 0;

	pprof_index_release(ix);
	ix->n = n;
	while (i < n && id_of(elems[i]) == i + 1)
		i++;
	if (i == n) {
		ix->dense = true;
		ix->max_id = n;
		return 0;
	}
	ix->dense = false;
	return build_sorted(ix, elems, n, id_of, dup);
}

size_t pprof_index_find(const struct pprof_id_index *ix, uint64_t id)
{
	size_t lo = 0, hi = ix->n;

	if (ix->dense)
		return id >= 1 && id <= ix->n ? (size_t)(id - 1) : SIZE_MAX;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ix->slots[mid].id == id)
			return ix->slots[mid].idx;
		if (ix->slots[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return SIZE_MAX;
}

uint64_t pprof_index_append(struct pprof_id_index *ix, size_t idx)
{
	uint64_t id = ix->max_id + 1;

	if (id == 0) /* ids exhausted (max_id was UINT64_MAX) */
		return 0;
	if (!ix->dense) {
		if (pprof_grow(&ix->slots, ix->n, &ix->alloc, sizeof(*ix->slots)))
			return 0;
		ix->slots[ix->n] = (struct pprof_id_slot){ id, idx };
	}
	ix->n++;
	ix->max_id = id;
	return id;
}

void pprof_index_release(struct pprof_id_index *ix)
{
	if (!ix)
		return;
	free(ix->slots);
	*ix = (struct pprof_id_index){ .dense = true };
}
