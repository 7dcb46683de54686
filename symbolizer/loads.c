/*
 * loads.c - the PT_LOAD segments of an indexed file, which every lookup
 * asks twice at most: is the address in the image, and which address is
 * a file offset.  Both are binary searches, for the count comes from the
 * file: a linear scan per lookup let a file of 65,535 segments make every
 * lookup of it cost a hundred microseconds.
 *
 * At a build the segments are put in address order and made disjoint
 * (the ELF specification orders them so and they never overlap in a
 * file any linker wrote; a segment that overlaps one before it, or that
 * maps nothing, is dropped), and more than SYM_MAX_LOADS of them make
 * the file malformed.  Their file ranges are in order too in such files;
 * when they are not, offsets are looked up by a scan, which the cap
 * bounds.  A saved index's segments are checked the same way when it is
 * loaded (never trusted: an index file may be damaged), and searched by
 * a scan when they are out of order.
 */
#include "sym_internal.h"

#include <stdlib.h>

struct load_in {
	struct sym_load l;
	size_t order;		/* program-header index: ties keep it */
};

static int load_cmp(const void *pa, const void *pb)
{
	const struct load_in *a = pa, *b = pb;

	if (a->l.vaddr != b->l.vaddr)
		return a->l.vaddr < b->l.vaddr ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

struct loads_in {
	struct load_in *v;
	size_t n, alloc;
};

static int add_load(void *arg, const struct elfdw_load *l)
{
	struct loads_in *in = arg;
	struct load_in x = { { l->vaddr, l->memsz, l->offset, l->filesz }, in->n };

	if (in->n >= SYM_MAX_LOADS)
		return -E2BIG;
	return EMBER_VEC_PUSH(in->v, in->n, in->alloc, x);
}

/* Whether [vaddr, vaddr + memsz) is a range that starts at or after end
 * (the end of the one before). */
static bool load_after(const struct sym_load *l, uint64_t end)
{
	return l->memsz && l->vaddr + l->memsz > l->vaddr && l->vaddr >= end;
}

/* The file ranges in order too (then offsets are searched). */
static bool offsets_in_order(const struct sym_load *v, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (v[i].offset < v[i - 1].offset ||
		    v[i].offset - v[i - 1].offset < v[i - 1].filesz)
			return false;
	return true;
}

static void loads_note_order(struct sym_index *idx)
{
	bool sorted = true;

	for (size_t i = 1; i < idx->nloads && sorted; i++)
		sorted = load_after(&idx->loads[i],
				    idx->loads[i - 1].vaddr + idx->loads[i - 1].memsz);
	idx->loads_sorted = sorted;
	idx->loads_by_offset = sorted && offsets_in_order(idx->loads, idx->nloads);
}

int sym_elf_read_loads(Elf *elf, struct sym_index *idx)
{
	struct loads_in in = { 0 };
	uint64_t end = 0;
	int err = elfdw_each_load(elf, add_load, &in);

	if (err == -E2BIG)
		pr_debug("symbolizer: more than %u PT_LOAD segments", SYM_MAX_LOADS);
	if (err) {
		free(in.v);
		return err == -EINVAL || err == -E2BIG ? -SYM_ERR_BAD_ELF : err;
	}
	if (in.n > 1)
		qsort(in.v, in.n, sizeof(*in.v), load_cmp);
	idx->loads = malloc((in.n ? in.n : 1) * sizeof(*idx->loads));
	if (!idx->loads) {
		free(in.v);
		return -ENOMEM;
	}
	for (size_t i = 0; i < in.n; i++) {
		if (!load_after(&in.v[i].l, end))
			continue; /* overlaps the one before, or maps nothing */
		idx->loads[idx->nloads++] = in.v[i].l;
		end = in.v[i].l.vaddr + in.v[i].l.memsz;
	}
	free(in.v);
	loads_note_order(idx);
	return 0;
}

int sym_loads_check(struct sym_index *idx, struct ember_diag *d)
{
	EMBER_FAIL_IF(idx->nloads > SYM_MAX_LOADS, d, -SYM_ERR_BAD_INDEX,
		      "%zu loads, more than %u", idx->nloads, SYM_MAX_LOADS);
	loads_note_order(idx);
	return 0;
}

/* The last load starting at or before key (by vaddr, or by offset), or
 * NULL. */
static const struct sym_load *load_le(const struct sym_load *v, size_t n,
				      uint64_t key, bool by_offset)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t k = by_offset ? v[mid].offset : v[mid].vaddr;

		if (k <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &v[lo - 1] : NULL;
}

bool sym_loads_hold(const struct sym_index *idx, uint64_t addr)
{
	const struct sym_load *l;

	if (idx->nloads == 0)
		return true;
	if (idx->loads_sorted) {
		l = load_le(idx->loads, idx->nloads, addr, false);
		return l && addr - l->vaddr < l->memsz;
	}
	for (size_t i = 0; i < idx->nloads; i++)
		if (addr >= idx->loads[i].vaddr &&
		    addr - idx->loads[i].vaddr < idx->loads[i].memsz)
			return true;
	return false;
}

int sym_index_offset_to_vaddr(const struct sym_index *idx, uint64_t offset,
			      uint64_t *vaddr)
{
	const struct sym_load *l = NULL;

	if (idx->loads_by_offset) {
		l = load_le(idx->loads, idx->nloads, offset, true);
		if (l && offset - l->offset >= l->filesz)
			l = NULL;
	} else {
		for (size_t i = 0; i < idx->nloads && !l; i++)
			if (offset >= idx->loads[i].offset &&
			    offset - idx->loads[i].offset < idx->loads[i].filesz)
				l = &idx->loads[i];
	}
	if (!l)
		return -SYM_ERR_OFFSET_UNMAPPED;
	*vaddr = offset - l->offset + l->vaddr;
	return 0;
}
