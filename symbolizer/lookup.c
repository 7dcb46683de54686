/*
 * lookup.c - answering one address from a built index: one binary search
 * in the segment table, then the node chain for the inlined frames, with
 * the ELF symbol tables as fallbacks.  Lookups only read the index, so
 * any number of threads may call them at once (demangling and its cache:
 * demangle.c).
 */
#include "sym_internal.h"

#include <stdlib.h>
#include <string.h>

/* Index of the last element of v[0..n) that is <= key, or SIZE_MAX. */
static size_t upper_le(const uint64_t *v, size_t n, uint64_t key)
{
	const uint64_t *base = v;
	size_t len = n;

	if (n == 0 || key < v[0])
		return SIZE_MAX;
	while (len > 1) {
		size_t half = len / 2;

		base = base[half] <= key ? base + half : base;
		len -= half;
	}
	return (size_t)(base - v);
}

/* Aim for about 8 segments per bucket: a search within one or two cache
 * lines after one load from a table that stays in cache. */
#define SEGS_PER_BUCKET 8

int sym_index_build_buckets(struct sym_index *idx)
{
	uint64_t base, span;
	unsigned shift = 0;
	size_t n, k, i = 0;

	if (idx->nsegs < 2 * SEGS_PER_BUCKET)
		return 0;
	base = idx->seg_start[0];
	span = idx->seg_start[idx->nsegs - 1] - base;
	while ((span >> shift) > idx->nsegs / SEGS_PER_BUCKET)
		shift++;
	n = (size_t)(span >> shift) + 2;
	idx->buckets = malloc(n * sizeof(*idx->buckets));
	if (!idx->buckets)
		return -ENOMEM;
	for (k = 0; k < n; k++) {
		uint64_t at = base + ((uint64_t)k << shift);

		while (i < idx->nsegs && idx->seg_start[i] < at)
			i++;
		idx->buckets[k] = (uint32_t)i;
	}
	idx->nbuckets = n;
	idx->bucket_shift = shift;
	return 0;
}

/* The segment holding addr: bucket first, then a short binary search. */
static size_t seg_find(const struct sym_index *idx, uint64_t addr)
{
	size_t k, lo, hi, i;

	if (!idx->buckets || addr < idx->seg_start[0])
		return upper_le(idx->seg_start, idx->nsegs, addr);
	k = (size_t)((addr - idx->seg_start[0]) >> idx->bucket_shift);
	if (k + 1 >= idx->nbuckets)
		return idx->nsegs - 1; /* at or past the end marker */
	lo = idx->buckets[k] ? idx->buckets[k] - 1 : 0;
	hi = idx->buckets[k + 1];
	if (hi > idx->nsegs)
		hi = idx->nsegs;
	if (lo >= hi) /* not a table built here: search everything */
		return upper_le(idx->seg_start, idx->nsegs, addr);
	i = upper_le(idx->seg_start + lo, hi - lo, addr);
	return i == SIZE_MAX ? SIZE_MAX : lo + i;
}

/*
 * Prefetching for a run of lookups.  A lookup in a big index is a chain
 * of dependent loads, each a likely cache and TLB miss: the bucket, the
 * segment starts it points at, the segment, the innermost node.  Called
 * with stage 0 for an address some lookups ahead, then with 1, 2 and 3 as
 * it comes closer, each stage reads what the stage before it brought in
 * and starts the load of the next link, so that the misses of several
 * addresses overlap instead of following each other.  Only a hint: it
 * reads nothing that the lookup would not read (stage 2 and 3 repeat the
 * search on lines already loaded) and never changes the answer.
 */
void sym_index_prefetch(const struct sym_index *idx, uint64_t addr,
			unsigned stage)
{
	size_t k, lo, hi, i;

	if (!idx->buckets || addr < idx->seg_start[0])
		return;
	k = (size_t)((addr - idx->seg_start[0]) >> idx->bucket_shift);
	if (k + 1 >= idx->nbuckets)
		return;
	if (stage == 0) {
		__builtin_prefetch(&idx->buckets[k]);
		return;
	}
	if (stage == 1) {
		lo = idx->buckets[k] ? idx->buckets[k] - 1 : 0;
		hi = idx->buckets[k + 1];
		if (lo >= hi || hi > idx->nsegs)
			return;
		__builtin_prefetch(&idx->seg_start[lo]);
		__builtin_prefetch(&idx->seg_start[hi - 1]);
		return;
	}
	i = seg_find(idx, addr);
	if (i == SIZE_MAX)
		return;
	if (stage == 2) {
		__builtin_prefetch(&idx->segs[i]);
		return;
	}
	if (idx->segs[i].node < idx->nnodes)
		__builtin_prefetch(&idx->nodes[idx->segs[i].node]);
}

static size_t sym_find(const struct sym_symbol *s, const uint64_t *keys,
		       size_t n, uint64_t addr)
{
	size_t i = upper_le(keys, n, addr);

	if (i == SIZE_MAX || (s[i].size && addr - s[i].addr >= s[i].size))
		return SIZE_MAX;
	return i;
}

/*
 * The symbol covering addr in .symtab (the binary's, or its separate
 * debug file's: the same symbols), else .dynsym.  Several symbols at one
 * address (identical code folding) were reduced to one when the index
 * was built (symtab.c: the largest, then the last in the table, as
 * llvm-symbolizer keeps), so the name does not depend on which file of a
 * build ID holds the table (docs/symbolizer-correctness.md, "Folded
 * functions").
 */
static const struct sym_symbol *symbol_at(const struct sym_index *idx,
					  uint64_t addr, enum sym_source *src)
{
	size_t i = sym_find(idx->symtab, idx->symtab_addr, idx->nsymtab, addr);

	if (i != SIZE_MAX) {
		*src = SYM_SOURCE_SYMTAB;
		return &idx->symtab[i];
	}
	i = sym_find(idx->dynsym, idx->dynsym_addr, idx->ndynsym, addr);
	if (i != SIZE_MAX) {
		*src = SYM_SOURCE_DYNSYM;
		return &idx->dynsym[i];
	}
	return NULL;
}

static const char *name_of(const struct sym_index *idx, uint32_t id)
{
	return id >= idx->nnames ? NULL : sym_strtab_get(&idx->strtab, idx->names[id]);
}

static int dwarf_frames(const struct sym_index *idx, const struct sym_seg *s,
			struct sym_frame *frames, size_t max)
{
	uint32_t file = s->file, line = s->line, col = s->col, disc = s->disc;
	uint32_t node = s->node;
	/* 0: an index made before the field existed, all DWARF */
	enum sym_source src = idx->seg_source ? (enum sym_source)idx->seg_source
					      : SYM_SOURCE_DWARF;
	int n = 0;

	if (node >= idx->nnodes) { /* SYM_NONE, or out of range */
		if (max)
			frames[0] = (struct sym_frame){
				.file = sym_strtab_get(&idx->strtab, file),
				.line = line, .column = col,
				.func_start = SYM_ADDR_UNKNOWN,
				.discriminator = disc,
				.source = src, .name_id = SYM_NONE };
		return 1;
	}
	/* Ids are checked (a loaded index comes from a file): a node out of
	 * range ends the chain, and parents must have smaller ids, so the
	 * walk ends. */
	for (; node < idx->nnodes; n++) {
		const struct sym_node *nd = &idx->nodes[node];

		if ((size_t)n < max)
			frames[n] = (struct sym_frame){
				.name = name_of(idx, nd->name),
				.short_name = sym_strtab_get(&idx->strtab, nd->short_name),
				.file = sym_strtab_get(&idx->strtab, file),
				.line = line, .column = col,
				.decl_file = sym_strtab_get(&idx->strtab, nd->decl_file),
				.decl_line = nd->decl_line,
				.func_start = nd->entry,
				.discriminator = disc,
				.source = src,
				.inlined = nd->parent != SYM_NONE,
				.name_id = nd->name };
		file = nd->call_file;
		line = nd->call_line;
		col = nd->call_col;
		disc = nd->call_disc;
		node = nd->parent < node ? nd->parent : SYM_NONE;
	}
	return n;
}

static void frame_from_symbol(const struct sym_index *idx,
			      const struct sym_symbol *sym,
			      enum sym_source src, struct sym_frame *f)
{
	*f = (struct sym_frame){ .name = name_of(idx, sym->name),
				 .file = sym_strtab_get(&idx->strtab, sym->file),
				 .func_start = sym->addr,
				 .source = src,
				 .name_id = sym->name };
}

/* Addresses outside every PT_LOAD are code of nobody (a size-0 symbol
 * such as _fini must not claim the rest of the address space): loads.c. */

int sym_index_lookup(const struct sym_index *idx, uint64_t addr,
		     enum sym_addr_kind kind, unsigned flags,
		     struct sym_frame *frames, size_t max)
{
	const struct sym_symbol *sym;
	enum sym_source src = SYM_SOURCE_NONE;
	size_t i;
	int n = 0, err;

	if (kind == SYM_ADDR_FILE_OFFSET) {
		err = sym_index_offset_to_vaddr(idx, addr, &addr);
		if (err)
			return err;
	}
	if (!sym_loads_hold(idx, addr))
		return 0;
	i = seg_find(idx, addr);
	if (i != SIZE_MAX) {
		const struct sym_seg *s = &idx->segs[i];

		if (s->node != SYM_NONE || s->file || s->line)
			n = dwarf_frames(idx, s, frames, max);
	}
	if (n == 0 || (flags & SYM_LOOKUP_SYMBOL_NAME)) {
		sym = symbol_at(idx, addr, &src);
		if (sym && n == 0 && max)
			frame_from_symbol(idx, sym, src, &frames[0]);
		else if (sym && (size_t)n <= max) {
			frames[n - 1].name = name_of(idx, sym->name);
			frames[n - 1].name_id = sym->name;
			frames[n - 1].func_start = sym->addr;
			if (!frames[n - 1].file)
				frames[n - 1].file =
					sym_strtab_get(&idx->strtab, sym->file);
		}
		if (sym && n == 0)
			n = 1;
	}
	return n;
}
