/*
 * sym_internal.h - what only symbolizer/ sees: the in-memory index and the
 * build-time helpers that fill it.  Layout and reasoning:
 * docs/symbol-index.md.
 *
 * Invariants of a built index:
 *  - seg_start[] is strictly increasing; segment i covers
 *    [seg_start[i], seg_start[i+1]); the last segment is an end marker
 *    (node == SYM_NONE, line == 0, file == 0).
 *  - nodes[] parents always have smaller depth; following parent from any
 *    node reaches a function (parent == SYM_NONE) in at most depth steps.
 *  - strings are offsets into strtab; offset 0 is the empty string and
 *    means "none".
 */
#ifndef EMBER_SYM_INTERNAL_H
#define EMBER_SYM_INTERNAL_H

#include "symbolizer.h"
#include "common.h"

#include <errno.h>

#include <gelf.h>
#include <elfutils/libdw.h>
#include <stdatomic.h>

#define SYM_NONE UINT32_MAX

/* ---- growable arrays --------------------------------------------------- */

/* Make room for one more element; returns 0 or -ENOMEM. */
int sym_vec_grow(void **data, size_t *alloc, size_t len, size_t elem);
#define SYM_VEC_PUSH(arr, len, alloc, val)                                   \
	(sym_vec_grow((void **)&(arr), &(alloc), (len), sizeof(*(arr))) ? -ENOMEM \
	 : ((arr)[(len)++] = (val), 0))

/* ---- interned strings ---------------------------------------------------- */

struct sym_strtab {
	char *data;
	size_t len, alloc;
	/* open-addressing hash: slot = {offset, aux}; offset 0 = empty slot */
	uint32_t *slots;
	size_t nslots, count;
};

int sym_strtab_init(struct sym_strtab *st);
void sym_strtab_release(struct sym_strtab *st);
/* Offset of s (interned), or a negative errno.  aux, if non-NULL, points
 * at a per-string u32 the caller may use (initially SYM_NONE). */
int64_t sym_strtab_intern(struct sym_strtab *st, const char *s,
			  uint32_t **aux);
static inline const char *sym_strtab_get(const struct sym_strtab *st,
					 uint32_t off)
{
	return off ? st->data + off : NULL;
}

/* ---- the index ----------------------------------------------------------- */

/* A function (parent == SYM_NONE) or an inlined instance of one. */
struct sym_node {
	uint32_t name;		/* name id (into names[]) or SYM_NONE */
	uint32_t short_name;	/* strtab offset */
	uint32_t parent;	/* node id or SYM_NONE */
	uint32_t call_file;	/* strtab offset: call site in the parent */
	uint32_t call_line;
	uint32_t call_col;
	uint32_t call_disc;
	uint32_t decl_file;
	uint32_t decl_line;
	uint64_t entry;		/* DW_AT_low_pc, or SYM_ADDR_UNKNOWN */
};

/* Payload of one flattened segment. */
struct sym_seg {
	uint32_t node;		/* innermost scope, or SYM_NONE */
	uint32_t file;		/* line-table file (strtab), 0 = no row */
	uint32_t line;
	uint16_t col;		/* clamped to 65535 */
	uint16_t disc;		/* line-table discriminator, clamped */
};

struct sym_symbol {
	uint64_t addr;
	uint64_t size;		/* 0: extends to the next symbol */
	uint32_t name;		/* name id */
	uint32_t file;		/* STT_FILE before a local symbol (strtab), 0 */
};

struct sym_load {
	uint64_t vaddr, memsz, offset, filesz;
};

struct sym_index {
	struct sym_strtab strtab;
	uint32_t *names;	/* name id -> strtab offset of raw name */
	size_t nnames, names_alloc;
	_Atomic(char *) *demangled; /* 2 per name: [short, with params] */

	struct sym_node *nodes;
	size_t nnodes, nodes_alloc;
	size_t nfunctions, ninlined;

	uint64_t *seg_start;
	struct sym_seg *segs;
	size_t nsegs;
	/* Bucket table over seg_start: bucket k holds the index of the first
	 * segment starting at or after seg_start[0] + (k << bucket_shift),
	 * so a lookup searches only the few segments of its bucket. */
	uint32_t *buckets;
	size_t nbuckets;
	unsigned bucket_shift;

	struct sym_symbol *symtab, *dynsym;
	size_t nsymtab, ndynsym;
	/* The symbols' addresses alone: a search touches 8 bytes a probe,
	 * not a 24-byte record (the key arrays of 10^4 symbols stay in L2). */
	uint64_t *symtab_addr, *dynsym_addr;
	bool symtab_in_debug;	/* .symtab came from the separate debug file */

	struct sym_load *loads;
	size_t nloads;

	uint8_t build_id[EMBER_BUILD_ID_MAX];
	size_t build_id_len;
	char *debug_path;
};

/* Intern a raw function name as a name id (SYM_NONE for NULL). */
int sym_index_add_name(struct sym_index *idx, const char *raw,
		       uint32_t *name_id);

/* ---- ELF files ------------------------------------------------------------ */

struct sym_elf {
	int fd;
	Elf *elf;
	char *path;
};

/* Executable address ranges, to reject DWARF for discarded code. */
struct sym_ranges {
	struct { uint64_t lo, hi; } *r;
	size_t n, alloc;
};

int sym_elf_open(const char *path, struct sym_elf *out);
void sym_elf_close(struct sym_elf *e);
/* The section called name, or NULL. */
Elf_Scn *sym_elf_find_section(Elf *elf, const char *name);
bool sym_elf_has_dwarf(Elf *elf);
int sym_elf_build_id(Elf *elf, uint8_t *out, size_t size);
int sym_elf_read_loads(Elf *elf, struct sym_index *idx);
int sym_elf_exec_ranges(Elf *elf, struct sym_ranges *out);
bool sym_ranges_contain(const struct sym_ranges *r, uint64_t lo, uint64_t hi);

/* Find and open the separate debug file of main (see sym_index_open). */
int sym_debug_find(const struct sym_elf *main_elf, const uint8_t *build_id,
		   size_t build_id_len, const struct sym_open_opts *opts,
		   struct sym_elf *out);

/* ---- builders -------------------------------------------------------------- */

/* An address interval with a payload, as collected before flattening. */
struct sym_ival {
	uint64_t lo, hi;
	uint32_t a, b, c, d;	/* scope: a=node, b=depth; line: file,line,col,disc */
};

struct sym_ivals {
	struct sym_ival *v;
	size_t n, alloc;
};

/* Append x (inline fast path: growth only when full). */
static inline int sym_ivals_push(struct sym_ivals *iv, struct sym_ival x)
{
	if (iv->n >= iv->alloc &&
	    sym_vec_grow((void **)&iv->v, &iv->alloc, iv->n, sizeof(x)))
		return -ENOMEM;
	iv->v[iv->n++] = x;
	return 0;
}
void sym_ivals_release(struct sym_ivals *iv);

/* A run of a unit's segments that ends with a gap marker. */
struct sym_block {
	uint64_t start;
	size_t first, count;
};

/* State of one index build: per-unit scratch intervals and the blocks. */
struct sym_build {
	struct sym_index *idx;
	const struct sym_ranges *exec;
	struct sym_ivals scopes, lines, inner; /* the current unit's */
	struct sym_ivals spare;		/* scratch for reordering rows */
	struct sym_block *blocks;
	size_t nblocks, blocks_alloc;
	size_t block_first;		/* first segment of the open block */
	size_t alloc_start, alloc_segs;	/* capacities of idx's segment arrays */
};

/* Walk all DWARF units: nodes into b->idx, each unit flattened in turn. */
int sym_dwarf_collect(struct sym_build *b, Dwarf *dw);

/* ---- line programs (line_program.c) --------------------------------------- */

struct sym_sect {
	const uint8_t *data;
	size_t size;
};

/* The sections a line program refers to (decompressed by libelf/libdw). */
struct sym_line_ctx {
	struct sym_sect line, line_str, str;
};

/* A unit's file table: file number -> strtab offset (0 = none). */
struct sym_unit_files {
	uint32_t *off;
	size_t n;
};

struct sym_line_row {
	uint64_t addr;
	uint32_t file, line, col, disc; /* file: the unit's file number */
};

/* Called for each row with the address where the row ends. */
typedef int (*sym_line_row_fn)(void *arg, const struct sym_line_row *row,
			       uint64_t end);

/*
 * Read the line program at offset of .debug_line: if files is set, the
 * file table interned into idx (caller frees files->off); if fn is set,
 * every row.  With files NULL nothing is written but through fn, so the
 * rows of one unit can be read on another thread than the one interning.
 * -EINVAL for a malformed program (rows already passed to fn stay valid).
 */
int sym_line_program_read(struct sym_index *idx, const struct sym_line_ctx *ctx,
			  uint64_t offset, const char *comp_dir,
			  struct sym_unit_files *files, sym_line_row_fn fn,
			  void *arg);
int sym_line_ctx_init(Dwarf *dw, struct sym_line_ctx *ctx);

/* DW_AT_comp_dir of a unit, or NULL (paths.c). */
const char *sym_unit_comp_dir(Dwarf_Die *cudie);
/* Intern name, joined to comp_dir when it is relative; 0 for NULL. */
int64_t sym_intern_path(struct sym_index *idx, const char *comp_dir,
			const char *name);

/* ---- units (collect.c, dwarf_lines.c, dwarf_scopes.c) -------------------- */

/* One unit on its way through the index build (collect.c). */
struct sym_unit {
	struct sym_unit_files files;	/* file number -> strtab offset */
	struct sym_ranges ranges;	/* the unit's own ranges, sorted */
	uint64_t stmt_off;		/* its line program in .debug_line */
	bool has_lines;
	struct sym_ivals scopes;	/* from the DIE walk */
	struct sym_unit *next;
};

/* Read the unit's ranges and line-program header (files interned). */
int sym_unit_prepare(struct sym_index *idx, Dwarf_Die *cudie,
		     const struct sym_line_ctx *ctx, const char *comp_dir,
		     struct sym_unit *u);
/* The unit's line rows as intervals into lines; touches nothing shared. */
int sym_unit_rows(const struct sym_unit *u, const struct sym_line_ctx *ctx,
		  const struct sym_ranges *exec, struct sym_ivals *lines);
void sym_unit_free(struct sym_unit *u);

/*
 * Names of abstract functions by DIE offset: every inlined instance (and
 * out-of-line copy) of a function refers to the same abstract DIE, whose
 * names and declaration need to be looked up once.  Values are interned,
 * so they hold for every unit.
 */
struct sym_origin_cache {
	struct sym_origin {
		uint64_t key;		/* DIE offset + 1; 0 = empty slot */
		uint32_t name, short_name, decl_file, decl_line;
	} *slots;
	size_t nslots, count;
};

void sym_origin_cache_release(struct sym_origin_cache *c);

/* The DIE walk of one unit: nodes into idx, scope intervals into scopes. */
int sym_dwarf_walk_unit(struct sym_index *idx, const struct sym_ranges *exec,
			struct sym_origin_cache *origins, Dwarf_Die *cudie,
			const char *comp_dir, const struct sym_unit_files *files,
			struct sym_ivals *scopes);
/* Read .symtab / .dynsym function symbols (sorted) into idx. */
int sym_symtab_read(struct sym_index *idx, Elf *elf, bool dynamic);
/* Flatten the unit in b->scopes/b->lines into segments; empties both. */
int sym_flatten_unit(struct sym_build *b);
/* Put all units' segment blocks in address order. */
int sym_flatten_finish(struct sym_build *b);
/* Build idx->buckets over the finished segment table (lookup.c). */
int sym_index_build_buckets(struct sym_index *idx);
void sym_build_release(struct sym_build *b);

#endif /* EMBER_SYM_INTERNAL_H */
