/*
 * index.c - building and freeing a symbol index: the orchestration of
 * elf_file.c, debug_find.c, symtab.c, collect.c (which drives die_walk.c,
 * libdw_walk.c, unit_lines.c, line_program.c and flatten.c) and the
 * lookup tables of lookup.c.  The ELF and DWARF handles are closed before
 * the segment blocks are joined: the index holds copies of everything it
 * needs.
 */
#include "sym_internal.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

/* Whether name id idx is the string at strtab offset *key. */
static bool name_equal(const void *ctx, size_t idx, const void *key)
{
	return ((const uint32_t *)ctx)[idx] == *(const uint32_t *)key;
}

int sym_index_add_name(struct sym_index *idx, const char *raw,
		       uint32_t *name_id)
{
	uint32_t off32;
	uint64_t h;
	size_t found;
	int64_t off;
	int err;

	*name_id = SYM_NONE;
	if (!raw || !*raw)
		return 0;
	off = sym_strtab_intern(&idx->strtab, raw);
	if (off < 0)
		return (int)off;
	off32 = (uint32_t)off;
	h = ember_hash_u64(&idx->name_set.key, off32);
	found = ember_hset_find(&idx->name_set, h, name_equal, idx->names, &off32);
	if (found == SIZE_MAX) {
		found = idx->nnames;
		/* each name: its id, its set slots, its two demangled texts */
		if (idx->nnames == idx->names_alloc &&
		    (err = sym_budget_charge(idx->budget, (idx->names_alloc ? idx->names_alloc : 16) *
						     (sizeof(*idx->names) + 16 + 2 * sizeof(void *)),
					     "names")))
			return err;
		err = EMBER_VEC_PUSH(idx->names, idx->nnames, idx->names_alloc, off32);
		if (!err)
			err = ember_hset_insert(&idx->name_set, h, found);
		if (err) {
			idx->nnames = found;
			return err;
		}
	}
	*name_id = (uint32_t)found;
	return 0;
}

/* Nodes the budget is charged for at a time (192 KB). */
#define NODES_CHARGE ((size_t)4096)

int sym_index_add_node(struct sym_index *idx, const struct sym_node *n)
{
	size_t need = (idx->nnodes + 1) * sizeof(*n);
	int err;

	if (idx->nnodes + 1 > idx->nodes_charged) {
		if ((err = sym_budget_charge(idx->budget, NODES_CHARGE * sizeof(*n), "nodes")))
			return err;
		idx->nodes_charged += NODES_CHARGE;
	}
	if (need > idx->nodes_map &&
	    sym_big_grow((void **)&idx->nodes, &idx->nodes_map, need))
		return -ENOMEM;
	idx->nodes[idx->nnodes++] = *n;
	if (n->parent != SYM_NONE)
		idx->ninlined++;
	else
		idx->nfunctions++;
	return 0;
}

/* The bytes of the file open on fd (0 if fstat fails). */
static uint64_t file_bytes(int fd)
{
	struct stat st;

	return fd >= 0 && fstat(fd, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* Before libdw inflates anything: no DWARF section of dw_elf inflates
 * past the limit, and the budget holds them all; the work allowed is
 * set by the bytes read (both files, the inflated sections). */
static int dwarf_sections_fit(struct sym_build *b, const struct sym_elf *dw_file,
			      uint64_t other_bytes)
{
	uint64_t inflated = 0;
	int err = elfdw_inflate_check(dw_file->elf, NULL, b->max_section, &inflated,
				      &b->budget->diag);

	if (err == -E2BIG)
		atomic_store(&b->budget->exceeded, true); /* its why is recorded */
	if (err)
		return err == -EINVAL ? -SYM_ERR_BAD_ELF : err;
	sym_budget_set_input(b->budget, file_bytes(dw_file->fd) + other_bytes + inflated);
	return sym_budget_charge(b->budget, inflated, "inflated DWARF sections");
}

/* Scopes and lines of dw_elf, flattened unit by unit into b; the symbol
 * tables of syms read meanwhile on the pipeline's worker. */
static int index_dwarf(struct sym_build *b, const struct sym_elf *dw_file,
		       uint64_t other_bytes, struct sym_symjob *syms)
{
	struct elfdw_ranges exec = { 0 };
	Elf *dw_elf = dw_file->elf;
	Dwarf *dw;
	int err;

	sym_pages_init(&b->pages, dw_file);
	err = dwarf_sections_fit(b, dw_file, other_bytes);
	if (err)
		return err;
	err = elfdw_exec_sections(dw_elf, &exec);
	if (err) {
		free(exec.r);
		return err == -EINVAL ? -SYM_ERR_BAD_ELF : err;
	}
	b->exec = &exec;
	dw = dwarf_begin_elf(dw_elf, DWARF_C_READ, NULL);
	if (!dw) {
		pr_warn("symbolizer: cannot read DWARF: %s", dwarf_errmsg(-1));
		err = 0; /* fall back to the symbol tables */
	} else {
		err = sym_collect_units(b, dw, sym_symjob_big(syms) ? syms : NULL);
		dwarf_end(dw);
	}
	b->exec = NULL;
	free(exec.r);
	return err;
}

/* The symbol tables of syms into the index (read here unless the DWARF
 * pipeline's worker did). */
static int index_symbols(struct sym_index *idx, struct sym_symjob *syms)
{
	int err = syms->collected ? syms->err : sym_symjob_collect(syms);

	return err ? err : sym_symjob_store(idx, syms);
}

/* Open the ELF and its debug file; read symbols and DWARF units into b. */
static int index_read(struct sym_build *b, const char *path,
		      const struct sym_open_opts *opts)
{
	struct sym_elf main_elf = { .fd = -1 }, dbg = { .fd = -1 };
	struct sym_index *idx = b->idx;
	struct sym_symjob syms = { 0 };
	bool own_dwarf = false;
	int n, err;

	err = sym_elf_open(path, &main_elf);
	if (err)
		return err;
	n = elfdw_build_id(main_elf.elf, idx->build_id, sizeof(idx->build_id));
	if (n < 0) {
		pr_debug("symbolizer: '%s': build-ID note unreadable: %s", path,
			 strerror(-n));
		err = -SYM_ERR_BAD_ELF;
		goto out;
	}
	idx->build_id_len = (size_t)n;
	err = sym_elf_read_loads(main_elf.elf, idx);
	if (err)
		goto out;
	if (opts && opts->debug_file) {
		err = sym_debug_find(&main_elf, idx->build_id, idx->build_id_len,
				     opts, &dbg);
		if (err)
			goto out;
	} else if (!(own_dwarf = sym_elf_has_dwarf(main_elf.elf))) {
		/* none found: the symbol tables answer; any other error ends */
		err = sym_debug_find(&main_elf, idx->build_id, idx->build_id_len,
				     opts, &dbg);
		if (err && err != -ENOENT)
			goto out;
	}
	err = sym_symjob_prepare(&syms, main_elf.elf, dbg.elf, b->budget, b->max_section);
	if (err)
		goto out;
	/* A debug file found here has DWARF: sym_debug_find checked. */
	if (dbg.elf || own_dwarf) {
		const struct sym_elf *dw_file = dbg.elf ? &dbg : &main_elf;

		idx->debug_path = strdup(dw_file->path);
		err = idx->debug_path
			? index_dwarf(b, dw_file, dbg.elf ? file_bytes(main_elf.fd) : 0, &syms)
			: -ENOMEM;
	} else {
		sym_budget_set_input(b->budget, file_bytes(main_elf.fd));
		err = sym_gopclntab_collect(b, main_elf.elf); /* DWARF wins */
	}
	if (!err)
		err = index_symbols(idx, &syms);
out:
	sym_symjob_release(&syms);
	sym_elf_close(&dbg);
	sym_elf_close(&main_elf);
	return err;
}

/* A build refused by a limit: logged, and explained in the caller's diag. */
static void report_limit(const char *path, const struct sym_budget *budget,
			 const struct sym_open_opts *opts)
{
	struct ember_diag *d = EMBER_OPTS_GET(opts, diag, 0);

	pr_warn("symbolizer: '%s': %s", path, budget->why);
	if (d)
		(void)EMBER_FAIL(d, -E2BIG, "%s", budget->why);
}

/* The budget's share in the build's arrays. */
static void build_budget(struct sym_build *b, struct sym_budget *budget)
{
	b->budget = b->idx->budget = b->idx->strtab.budget = budget;
	b->scopes.budget = b->lines.budget = b->inner.budget = b->spare.budget = budget;
}

/*
 * Build the index.  The files are closed (and their pages unmapped)
 * before the segment blocks are joined, so the two phases' memory never
 * adds up.
 */
static int index_build(struct sym_index *idx, const char *path,
		       const struct sym_open_opts *opts, unsigned flags)
{
	struct sym_build b = { .idx = idx, .flags = flags,
			       .max_section = EMBER_OPTS_GET(opts, max_section_bytes, 0) };
	struct sym_budget budget;
	int err;

	if (!b.max_section)
		b.max_section = ELFDW_MAX_INFLATE_DEFAULT;
	err = sym_budget_init(&budget, EMBER_OPTS_GET(opts, max_bytes, 0));
	if (err)
		return err;
	build_budget(&b, &budget);
	err = index_read(&b, path, opts);
	if (!err)
		err = sym_flatten_finish(&b);
	sym_build_release(&b);
	if (!err)
		err = sym_index_build_buckets(idx);
	if (!err && idx->nsegs == 0 && idx->nsymtab == 0 && idx->ndynsym == 0)
		err = -SYM_ERR_NO_SYMBOLS;
	if (err == -E2BIG && budget.why[0])
		report_limit(path, &budget, opts);
	idx->budget = idx->strtab.budget = NULL;
	sym_budget_release(&budget);
	return err;
}

struct sym_index *sym_index_open(const char *path,
				 const struct sym_open_opts *opts, int *err)
{
	return sym_index_open_flags(path, opts, 0, err);
}

struct sym_index *sym_index_open_flags(const char *path,
				       const struct sym_open_opts *opts,
				       unsigned flags, int *err)
{
	struct sym_index *idx = calloc(1, sizeof(*idx));
	int e;

	if (!idx) {
		e = -ENOMEM;
		goto fail;
	}
	idx->seg_source = SYM_SOURCE_DWARF;
	e = sym_strtab_init(&idx->strtab);
	if (!e)
		e = ember_hset_init(&idx->name_set);
	if (!e)
		e = index_build(idx, path, opts, flags);
	/* Built: nothing is interned any more. */
	ember_hset_release(&idx->strtab.set);
	ember_hset_release(&idx->name_set);
	if (!e && idx->nnames) {
		idx->demangled = calloc(2 * idx->nnames, sizeof(*idx->demangled));
		if (!idx->demangled)
			e = -ENOMEM;
	}
	if (!e)
		return idx;
fail:
	sym_index_free(idx);
	if (err)
		*err = e;
	return NULL;
}

static void free_demangled(struct sym_index *idx)
{
	const char *lo = idx->strtab.data, *hi = lo + idx->strtab.len;

	if (!idx->demangled)
		return;
	for (size_t i = 0; i < 2 * idx->nnames; i++) {
		char *d = atomic_load(&idx->demangled[i]);

		if (d && (d < lo || d >= hi))
			free(d);
	}
	free(idx->demangled);
}

void sym_index_free(struct sym_index *idx)
{
	if (!idx)
		return;
	free_demangled(idx);
	free(idx->debug_path);
	if (idx->file_map) { /* the arrays are in the mapping */
		munmap(idx->file_map, idx->file_map_size);
		free(idx);
		return;
	}
	sym_strtab_release(&idx->strtab);
	ember_hset_release(&idx->name_set);
	free(idx->names);
	sym_big_free(idx->nodes, idx->nodes_map);
	sym_big_free(idx->seg_start, idx->seg_start_map);
	sym_big_free(idx->segs, idx->segs_map);
	free(idx->buckets);
	free(idx->symtab);
	free(idx->dynsym);
	free(idx->symtab_addr);
	free(idx->dynsym_addr);
	free(idx->loads);
	free(idx);
}

const uint8_t *sym_index_build_id(const struct sym_index *idx, size_t *len)
{
	*len = idx->build_id_len;
	return idx->build_id_len ? idx->build_id : NULL;
}

const char *sym_index_debug_path(const struct sym_index *idx)
{
	return idx->debug_path;
}

void sym_index_get_stats(const struct sym_index *idx, struct sym_index_stats *st)
{
	st->functions = idx->nfunctions;
	st->inlined = idx->ninlined;
	st->segments = idx->nsegs;
	st->symtab_symbols = idx->nsymtab;
	st->dynsym_symbols = idx->ndynsym;
	st->bytes = idx->strtab.len + idx->nnames * (4 + 2 * sizeof(void *)) +
		    idx->nnodes * sizeof(struct sym_node) +
		    idx->nsegs * (8 + sizeof(struct sym_seg)) +
		    idx->nbuckets * sizeof(uint32_t) +
		    (idx->nsymtab + idx->ndynsym) * (sizeof(struct sym_symbol) + 8);
}

const char *sym_source_name(enum sym_source src)
{
	switch (src) {
	case SYM_SOURCE_DWARF:
		return "dwarf";
	case SYM_SOURCE_SYMTAB:
		return "symtab";
	case SYM_SOURCE_DYNSYM:
		return "dynsym";
	case SYM_SOURCE_GOPCLNTAB:
		return "gopclntab";
	default:
		return "none";
	}
}

const char *sym_strerror(int err)
{
	switch (-err) {
	case SYM_ERR_NOT_ELF:
		return "not an ELF file";
	case SYM_ERR_TRUNCATED:
		return "truncated ELF file (headers point past its end)";
	case SYM_ERR_BAD_ELF:
		return "malformed ELF file";
	case SYM_ERR_NO_SYMBOLS:
		return "no DWARF and no symbol table";
	case SYM_ERR_OFFSET_UNMAPPED:
		return "file offset is in no loadable segment";
	case SYM_ERR_BAD_DEBUG_FILE:
		return "debug file has no DWARF";
	case SYM_ERR_BAD_INDEX:
		return "not a symbol index file, or a damaged one";
	case SYM_ERR_INDEX_VERSION:
		return "symbol index file of another format version";
	default:
		return strerror(-err);
	}
}
