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
#include "elfdw.h"

#include <errno.h>

#include <gelf.h>
#include <elfutils/libdw.h>
#include <stdatomic.h>
#include <string.h>

#define SYM_NONE UINT32_MAX

/* ---- cursors over outside input ------------------------------------------
 *
 * Every parser of file bytes (line programs, DIEs, abbreviations, range
 * lists, .gopclntab) reads through the ELF/DWARF layer's cursors
 * (elfdw.h): (pos, end, out), advancing only on success, -ENODATA when
 * the bytes end, -ERANGE for a LEB128 number past 64 bits.  The readers
 * run on little-endian hosts and hand big-endian files to libdw (see
 * sym_dw_open).
 */

/* ---- growable arrays --------------------------------------------------- */

/* Small growable arrays are common.h's EMBER_VEC_PUSH. */
/* Arrays of many megabytes, mapped (big_array.c): make room for need
 * bytes (*bytes: the mapped size, 0 at first); free with the size. */
int sym_big_grow(void **data, size_t *bytes, size_t need);
void sym_big_free(void *data, size_t bytes);

/* ---- interned strings ---------------------------------------------------- */

struct sym_strtab {
	char *data;
	size_t len, alloc;
	struct ember_hset set;	/* of the strings' offsets; unset when loaded */
};

int sym_strtab_init(struct sym_strtab *st);
void sym_strtab_release(struct sym_strtab *st);
/* Offset of s (interned once), or a negative errno. */
int64_t sym_strtab_intern(struct sym_strtab *st, const char *s);
static inline const char *sym_strtab_get(const struct sym_strtab *st,
					 uint32_t off)
{
	/* Checked: a loaded index's offsets come from a file. */
	return off && off < st->len ? st->data + off : NULL;
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
	struct ember_hset name_set; /* of name ids, by offset (builds only) */
	_Atomic(char *) *demangled; /* 2 per name: [short, with params] */

	struct sym_node *nodes;
	size_t nnodes, nodes_map;	/* a big array (bytes mapped) */
	size_t nfunctions, ninlined;

	uint64_t *seg_start;
	struct sym_seg *segs;
	size_t nsegs;
	size_t seg_start_map, segs_map;	/* their mapped sizes (big arrays) */
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

	/* A loaded index (index_file.c): the arrays above point into this
	 * read-only mapping of its file, and only the demangling cache and
	 * debug_path are the index's own allocations. */
	void *file_map;
	size_t file_map_size;

	size_t units_read, units_libdw;	/* walked by the DIE reader, by libdw */
	uint8_t seg_source;	/* enum sym_source answering for segments
				   (DWARF unless set otherwise) */
};

/* sym_index_open with build flags (enum sym_build_flags), for tests. */
struct sym_index *sym_index_open_flags(const char *path,
				       const struct sym_open_opts *opts,
				       unsigned flags, int *err);

/* Append a node (an inlined instance when n->parent is set) and count it;
 * its id is the old nnodes. */
int sym_index_add_node(struct sym_index *idx, const struct sym_node *n);

/* Intern a raw function name as a name id (SYM_NONE for NULL). */
int sym_index_add_name(struct sym_index *idx, const char *raw,
		       uint32_t *name_id);

/* ---- ELF files ------------------------------------------------------------ */

struct sym_elf {
	int fd;
	Elf *elf;
	char *path;
};

/* Executable address ranges (struct elfdw_ranges, elfdw_exec_sections)
 * reject DWARF for discarded code. */

int sym_elf_open(const char *path, struct sym_elf *out);
void sym_elf_close(struct sym_elf *e);
bool sym_elf_has_dwarf(Elf *elf);
/* The PT_LOAD segments of elf into idx->loads. */
int sym_elf_read_loads(Elf *elf, struct sym_index *idx);

/*
 * The image of an ELF file as libelf mapped it, when that is a read-only
 * mapping of the file: its pages can be given back once read
 * (file_pages.c).  page == 0: they cannot, drops do nothing.
 */
struct sym_pages {
	const uint8_t *lo, *hi;
	size_t page;
};

void sym_pages_init(struct sym_pages *m, const struct sym_elf *e);
/*
 * The caller is done with the bytes from *from (and what precedes it on
 * its page) up to to: once they add up to a few megabytes, give their
 * pages back (up to the page holding to, not included) and move *from to
 * to.  *from starts at the first byte read.  Only a hint: reading them
 * again is fine.
 */
void sym_pages_done(const struct sym_pages *m, const uint8_t **from,
		    const void *to);

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
	    ember_vec_grow((void **)&iv->v, &iv->alloc, iv->n, sizeof(x)))
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

enum sym_build_flags {
	SYM_BUILD_LIBDW_ONLY = 1 << 0,	/* walk DIEs with libdw only (tests) */
};

/* State of one index build: per-unit scratch intervals and the blocks. */
struct sym_build {
	struct sym_index *idx;
	unsigned flags;			/* enum sym_build_flags */
	struct sym_pages pages;		/* of the file DWARF is read from */
	const uint8_t *line_done;	/* the worker's: line programs read */
	const struct elfdw_ranges *exec;
	struct sym_ivals scopes, lines, inner; /* the current unit's */
	struct sym_ivals spare;		/* scratch for reordering rows */
	struct sym_block *blocks;
	size_t nblocks, blocks_alloc;
	size_t block_first;		/* first segment of the open block */
};

/* Walk all DWARF units: nodes into b->idx, each unit flattened in turn;
 * syms (if set) is collected on the worker meanwhile. */
struct sym_symjob;
int sym_dwarf_collect(struct sym_build *b, Dwarf *dw, struct sym_symjob *syms);

/* ---- line programs (line_program.c) --------------------------------------- */

/* The sections a line program refers to (decompressed by libelf/libdw). */
struct sym_line_ctx {
	struct elfdw_sect line, line_str, str;
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

/* ---- the DIE reader (dwarf_form.c, dwarf_abbrev.c, dwarf_unit.c,
 *      dwarf_die.c, dwarf_rnglist.c) ------------------------------------------
 *
 * Reads .debug_info for the few attributes the index needs, in place of
 * libdw's DIE traversal: 32-bit DWARF 2-5 compile and partial units of
 * little-endian files.  Whatever it cannot read exactly as libdw would
 * (DWARF 64, split DWARF, supplementary files, unknown forms, bases it
 * would have to default, anything malformed) makes it return -EINVAL
 * (malformed) or -EOPNOTSUPP (not handled); the caller then hands the
 * whole unit to libdw.  It never guesses.  Spec: DWARF 5 §7.5 (unit
 * headers, abbreviations, forms), §2.17.3 and §7.25 (range lists).
 */

/* GCC's discriminator of an inlined call (not in elfutils' dwarf.h). */
#define SYM_AT_GNU_DISCRIMINATOR 0x2136

/* The sections the reader uses, as libdw loaded them (decompressed). */
struct sym_dw_sects {
	struct elfdw_sect info, abbrev, str, line_str, str_offsets, addr, ranges,
		rnglists;
};

/* Attributes the reader keeps when it reads a DIE (its slots). */
enum sym_dw_slot {
	SYM_DW_NOSLOT = 0,
	SYM_DW_SIBLING,
	SYM_DW_NAME,
	SYM_DW_LINKAGE_NAME,
	SYM_DW_MIPS_LINKAGE_NAME,
	SYM_DW_DECL_FILE,
	SYM_DW_DECL_LINE,
	SYM_DW_ABSTRACT_ORIGIN,
	SYM_DW_SPECIFICATION,
	SYM_DW_LOW_PC,
	SYM_DW_HIGH_PC,
	SYM_DW_RANGES,
	SYM_DW_ENTRY_PC,
	SYM_DW_CALL_FILE,
	SYM_DW_CALL_LINE,
	SYM_DW_CALL_COLUMN,
	SYM_DW_DISCRIMINATOR,	/* DW_AT_GNU_discriminator */
	SYM_DW_COMP_DIR,
	SYM_DW_STMT_LIST,
	SYM_DW_ADDR_BASE,
	SYM_DW_STR_OFFSETS_BASE,
	SYM_DW_RNGLISTS_BASE,
	SYM_DW_SPLIT,		/* any GNU split-DWARF attribute or DW_AT_dwo_name */
	SYM_DW_NSLOTS
};

/* What the walk does with a DIE, by tag. */
enum sym_dw_kind {
	SYM_DW_OTHER = 0,	/* skipped with its subtree */
	SYM_DW_UNIT,		/* compile or partial unit */
	SYM_DW_FUNC,		/* subprogram */
	SYM_DW_INLINED,		/* inlined_subroutine */
	SYM_DW_BLOCK,		/* lexical, try and catch blocks */
	SYM_DW_SCOPE,		/* namespace, module, class, struct, union */
};

/* An attribute of an abbreviation, as the reader needs it: 8 bytes, for
 * there are hundreds of thousands in a big program. */
struct sym_dw_spec {
	uint16_t form;		/* DW_FORM_* (0xffff when unknown) */
	int8_t size;		/* fixed size of the value, or -1 */
	uint8_t slot;		/* enum sym_dw_slot */
	uint32_t implicit;	/* DW_FORM_implicit_const: its value's index
				   in the table's implicits[] */
};

/* A step of skipping a DIE's values: fixed bytes, then one value whose
 * size is in the data (var: enum sym_dw_skip_var). */
struct sym_dw_skip {
	uint16_t fixed;
	uint8_t var;
};

enum sym_dw_skip_var {
	SYM_DW_SKIP_NONE = 0,
	SYM_DW_SKIP_LEB,	/* ULEB128 or SLEB128 */
	SYM_DW_SKIP_STRING,
	SYM_DW_SKIP_BLOCK1,
	SYM_DW_SKIP_BLOCK2,
	SYM_DW_SKIP_BLOCK4,
	SYM_DW_SKIP_BLOCK,	/* ULEB128 length: block, exprloc */
	SYM_DW_SKIP_INDIRECT,
};

struct sym_dw_abbrev {
	uint64_t code;
	uint32_t tag;
	uint8_t kind;		/* enum sym_dw_kind */
	bool children;
	bool bad;		/* a form of unknown size: unreadable */
	int32_t sibling_at;	/* offset of a fixed-position DW_AT_sibling, or -1 */
	uint16_t sibling_form;
	uint32_t first, n;	/* its specs in the table's specs[] */
	uint32_t op_first, nops; /* its skip program in the table's ops[] */
	/* Its slots' values at fixed offsets from its first value, when all
	 * are (caps_fixed): caps[cap_first..+ncaps), first of each slot. */
	uint32_t cap_first, ncaps, cap_mask;
	uint8_t first_origin;	/* as in struct sym_dw_die */
	bool caps_fixed;
};

/* Where a slot's value is in a DIE of one abbreviation. */
struct sym_dw_cap {
	uint8_t slot;
	uint16_t form;
	uint32_t at;		/* offset from the DIE's first value; for
				   DW_FORM_implicit_const, as in sym_dw_val */
};

/*
 * One abbreviation table parsed for one kind of unit (the sizes of some
 * forms depend on the unit's address size and version).  Invariant:
 * v[] is sorted by code; dense means v[i].code == i + 1 for all i.
 */
struct sym_dw_abbrevs {
	uint64_t off;
	uint8_t addr_size, version;
	bool dense;
	struct sym_dw_abbrev *v;
	size_t n, alloc;
	struct sym_dw_spec *specs;
	size_t nspecs, specs_alloc;
	struct sym_dw_skip *ops;
	size_t nops, ops_alloc;
	struct sym_dw_cap *caps;
	size_t ncaps, caps_alloc;
	int64_t *implicits;
	size_t nimplicits, implicits_alloc;
};

/* A unit of .debug_info. */
struct sym_dw_unit {
	uint64_t off, end;	/* its bytes in .debug_info: [off, end) */
	uint64_t die_off;	/* its unit DIE */
	uint64_t abbrev_off;
	uint8_t version, unit_type, addr_size;
	uint8_t state;		/* enum sym_dw_unit_state */
	/* From the unit DIE (sym_dw_unit_open); UINT64_MAX = absent. */
	uint64_t base;		/* base address of its range lists */
	uint64_t addr_base, str_off_base, rnglists_base;
	uint32_t die_tag;
	bool split;		/* the unit DIE carries split-DWARF attributes */
	Dwarf_Die cudie;	/* libdw's unit DIE, for the units left to it */
};

enum sym_dw_unit_state {
	SYM_DW_UNIT_NEW = 0,	/* header read, unit DIE not yet */
	SYM_DW_UNIT_OPEN,	/* unit DIE read: bases known */
	SYM_DW_UNIT_BAD,	/* not readable here: left to libdw */
};

#define SYM_DW_CACHE 8
#define SYM_DW_CHUNK 64	/* units a chunk */

/*
 * The reader of one file: its sections, its units as libdw lists them
 * (listed as the walk goes, or further when a reference points past the
 * last listed), and a few parsed abbreviation tables of other units (for
 * references across units).  Unit records live in fixed chunks, so that
 * pointers to them stay valid while more are listed.  Used by one thread
 * at a time.
 */
struct sym_dw {
	struct sym_dw_sects s;
	Dwarf *dw;
	Dwarf_CU *cu;			/* libdw's iteration: the last listed */
	struct sym_dw_unit **chunks;	/* unit i: chunks[i / CHUNK][i % CHUNK] */
	size_t nunits, nchunks;
	size_t ninfo;			/* units 0..ninfo: .debug_info's, by offset */
	bool listed;			/* libdw has no more units */
	bool truncated;			/* libdw could not read past the last */
	struct sym_dw_abbrevs cache[SYM_DW_CACHE];
	unsigned cache_next;
	const struct sym_dw_abbrevs *pinned; /* never evicted */
	const struct sym_dw_abbrevs *last_walked; /* evicted first */
};

/* A kept attribute value: where it is in its unit, and its form (8
 * bytes: a DIE keeps a score of them, and the walk a DIE a level). */
struct sym_dw_val {
	uint32_t at;		/* offset from the unit's start; for
				   DW_FORM_implicit_const the value's index
				   in the DIE's implicits[] */
	uint16_t form;
};

/* A DIE as read: its abbreviation and the attributes kept in slots. */
struct sym_dw_die {
	const struct sym_dw_unit *unit;
	const struct sym_dw_abbrev *ab;	/* NULL for a null entry */
	const int64_t *implicits;	/* of the table it was read with: read
					   its values before reading another
					   unit's DIE (the cache may move) */
	uint64_t off;
	const uint8_t *end;		/* first byte after its attributes */
	uint32_t have;			/* 1 << slot for each kept attribute */
	uint8_t first_origin;		/* the first of abstract_origin and
					   specification, in attribute order */
	struct sym_dw_val v[SYM_DW_NSLOTS];
};

static inline bool sym_dw_has(const struct sym_dw_die *d, enum sym_dw_slot s)
{
	return d->have & (1u << s);
}

/* The start of unit u's bytes. */
static inline const uint8_t *sym_dw_unit_start(const struct sym_dw *r,
					       const struct sym_dw_unit *u)
{
	return r->s.info.data + u->off;
}

/* Forms (dwarf_form.c).  Size of a value of form: >= 0 fixed, -1 to be
 * read, -2 unknown form. */
int sym_dw_form_size(unsigned form, uint8_t addr_size, uint8_t version);
int sym_dw_form_skip(const uint8_t **pos, const uint8_t *end, unsigned form,
		     uint8_t addr_size, uint8_t version);
/* Attribute values, as libdw's dwarf_form* read them; -EOPNOTSUPP for a
 * form the reader leaves to libdw.  Strings point into the sections. */
int sym_dw_val_const(const struct sym_dw *r, const struct sym_dw_die *d,
		     enum sym_dw_slot s, uint64_t *out);
int sym_dw_val_addr(const struct sym_dw *r, const struct sym_dw_die *d,
		    enum sym_dw_slot s, uint64_t *out);
int sym_dw_val_str(const struct sym_dw *r, const struct sym_dw_die *d,
		   enum sym_dw_slot s, const char **out);
/* Entry idx of the unit's part of .debug_addr (DW_AT_addr_base). */
int sym_dw_addrx(const struct sym_dw *r, const struct sym_dw_unit *u,
		 uint64_t idx, uint64_t *out);
/* Section offset of the DIE a reference of form at p in unit u points to. */
int sym_dw_form_ref(const struct sym_dw *r, const struct sym_dw_unit *u,
		    unsigned form, const uint8_t *p, uint64_t *out);
/* Section offset of the DIE a reference points to. */
int sym_dw_val_ref(const struct sym_dw *r, const struct sym_dw_die *d,
		   enum sym_dw_slot s, uint64_t *out);
/* An offset into another section (DW_FORM_sec_offset; data4/data8 before
 * DWARF 4). */
int sym_dw_val_secoff(const struct sym_dw *r, const struct sym_dw_die *d,
		      enum sym_dw_slot s, uint64_t *out);

/* Abbreviation tables (dwarf_abbrev.c). */
int sym_dw_abbrevs_read(struct sym_dw_abbrevs *t, const struct elfdw_sect *sect,
			uint64_t off, uint8_t addr_size, uint8_t version);
void sym_dw_abbrevs_release(struct sym_dw_abbrevs *t);
const struct sym_dw_abbrev *sym_dw_abbrev_search(const struct sym_dw_abbrevs *t,
						 uint64_t code);
/* The abbreviation of code, or NULL. */
static inline const struct sym_dw_abbrev *
sym_dw_abbrev_find(const struct sym_dw_abbrevs *t, uint64_t code)
{
	if (t->dense)
		return code - 1 < t->n ? &t->v[code - 1] : NULL;
	return sym_dw_abbrev_search(t, code);
}

/* Units (dwarf_unit.c).  sym_dw_open finds the sections of dw;
 * -EOPNOTSUPP when the file is not for this reader at all. */
int sym_dw_open(struct sym_dw *r, Dwarf *dw);
void sym_dw_release(struct sym_dw *r);
/* Unit i in libdw's order (listing it now if need be), NULL past the
 * last; *err is set on failure (-ENOMEM). */
struct sym_dw_unit *sym_dw_unit(struct sym_dw *r, size_t i, int *err);
/* The unit holding section offset off, or NULL. */
struct sym_dw_unit *sym_dw_unit_at(struct sym_dw *r, uint64_t off);
/* Read the unit's DIE for its bases; t is the unit's abbreviations. */
int sym_dw_unit_open(struct sym_dw *r, struct sym_dw_unit *u,
		     const struct sym_dw_abbrevs *t);
/* The abbreviations of unit u, parsed or from the cache (valid until the
 * next call); the unit is opened too. */
int sym_dw_unit_abbrevs(struct sym_dw *r, struct sym_dw_unit *u,
			const struct sym_dw_abbrevs **out);

/* DIEs (dwarf_die.c).  Read the DIE at *pos of unit u: all its slots when
 * its kind is in full (a mask of 1 << enum sym_dw_kind), else only what
 * finding its end needs (the sibling).  Null entries (a 0 byte at *pos)
 * are for the caller to see first. */
#define SYM_DW_ALL_KINDS (~0u)
int sym_dw_die_read(const struct sym_dw *r, const struct sym_dw_unit *u,
		    const struct sym_dw_abbrevs *t, const uint8_t **pos,
		    unsigned full, struct sym_dw_die *d);
/* The abbreviation of the DIE at *pos (not a null entry); *pos moves
 * past the code.  -EOPNOTSUPP for one with a form of unknown size. */
static inline int sym_dw_die_abbrev(const struct sym_dw_abbrevs *t,
				    const uint8_t **pos, const uint8_t *end,
				    const struct sym_dw_abbrev **out)
{
	const uint8_t *p = *pos;
	const struct sym_dw_abbrev *ab;
	uint64_t code;

	/* A null entry is a single 0 byte here; 0 spelled longer is not one
	 * for libdw either. */
	if (elfdw_read_uleb(&p, end, &code) || code == 0)
		return -EINVAL;
	ab = sym_dw_abbrev_find(t, code);
	if (!ab)
		return -EINVAL;
	if (ab->bad)
		return -EOPNOTSUPP;
	*pos = p;
	*out = ab;
	return 0;
}
/*
 * The next DIE of a list of siblings at *pos whose kind is in want (a
 * mask of 1 << enum sym_dw_kind), read into d as sym_dw_die_read reads it
 * (*pos moves past its values): returns 0.  The DIEs before it are
 * stepped over with their subtrees, as libdw's dwarf_siblingof does (by
 * DW_AT_sibling where a DIE has one).  At the end of the list returns 1,
 * *pos past its null entry (or at the unit's end).
 */
int sym_dw_next_child(const struct sym_dw *r, const struct sym_dw_unit *u,
		      const struct sym_dw_abbrevs *t, const uint8_t **pos,
		      unsigned want, unsigned full, struct sym_dw_die *d);
/* Read the DIE at section offset off, in whatever unit holds it. */
int sym_dw_die_at(struct sym_dw *r, uint64_t off, struct sym_dw_die *d);
/* Where the next sibling of d starts (its DW_AT_sibling, or past its
 * subtree), as libdw's dwarf_siblingof finds it. */
int sym_dw_die_after(const struct sym_dw *r, const struct sym_dw_abbrevs *t,
		     const struct sym_dw_die *d, const uint8_t **next);
/* The end of unit u's bytes. */
static inline const uint8_t *sym_dw_unit_end(const struct sym_dw *r,
					     const struct sym_dw_unit *u)
{
	return r->s.info.data + u->end;
}

/* Ranges of a DIE (dwarf_rnglist.c), as libdw's dwarf_ranges lists them:
 * low_pc/high_pc, else DW_AT_ranges.  fn sees every range, empty ones too. */
typedef int (*sym_dw_range_fn)(void *arg, uint64_t lo, uint64_t hi);
int sym_dw_die_ranges(const struct sym_dw *r, const struct sym_dw_die *d,
		      sym_dw_range_fn fn, void *arg);

/* DW_AT_comp_dir of a unit, or NULL (paths.c). */
const char *sym_unit_comp_dir(Dwarf_Die *cudie);
/* Intern name, joined to comp_dir when it is relative; 0 for NULL. */
int64_t sym_intern_path(struct sym_index *idx, const char *comp_dir,
			const char *name);

/* ---- units (collect.c, dwarf_lines.c, dwarf_scopes.c) -------------------- */

/* One unit on its way through the index build (collect.c). */
struct sym_unit {
	struct sym_unit_files files;	/* file number -> strtab offset */
	struct elfdw_ranges ranges;	/* the unit's own ranges, sorted */
	uint64_t stmt_off, stmt_end;	/* its line program in .debug_line */
	bool has_lines;
	bool rows_read;			/* lines holds its rows already */
	struct sym_ivals scopes;	/* from the DIE walk */
	struct sym_ivals lines;		/* rows read ahead (collect.c) */
	struct sym_unit *next;
};

/* Read the header of the unit's line program at off (files interned). */
int sym_unit_lines_open(struct sym_index *idx, const struct sym_line_ctx *ctx,
			uint64_t off, const char *comp_dir, struct sym_unit *u);
/* Read the unit's ranges and line-program header (files interned). */
int sym_unit_prepare(struct sym_index *idx, Dwarf_Die *cudie,
		     const struct sym_line_ctx *ctx, const char *comp_dir,
		     struct sym_unit *u);
/* The unit's line rows as intervals into lines; touches nothing shared. */
int sym_unit_rows(const struct sym_unit *u, const struct sym_line_ctx *ctx,
		  const struct elfdw_ranges *exec, struct sym_ivals *lines);
void sym_unit_free(struct sym_unit *u);

/* Both DIE walks stop descending at this nesting: deeper is corrupt
 * input, not code. */
#define SYM_WALK_MAX_DEPTH 512

/* What both DIE walks (dwarf_walk.c, dwarf_scopes.c) do with a DIE of a
 * kind (enum sym_dw_kind), inside a function's tree (node set) or not. */
enum sym_walk_step {
	SYM_WALK_SKIP = 0,	/* step over it and its subtree */
	SYM_WALK_FUNCTION,	/* a function node; its children in it */
	SYM_WALK_INLINED,	/* an inlined instance under node; likewise */
	SYM_WALK_DESCEND,	/* its children, under the same node */
};

static inline enum sym_walk_step sym_walk_step(uint8_t kind, uint32_t node)
{
	switch (kind) {
	case SYM_DW_FUNC:
		return SYM_WALK_FUNCTION;
	case SYM_DW_INLINED: /* an inlined call outside any function: none */
		return node == SYM_NONE ? SYM_WALK_SKIP : SYM_WALK_INLINED;
	case SYM_DW_BLOCK:
		return node == SYM_NONE ? SYM_WALK_SKIP : SYM_WALK_DESCEND;
	case SYM_DW_SCOPE: /* Rust and C++ define functions in these */
		return node == SYM_NONE ? SYM_WALK_DESCEND : SYM_WALK_SKIP;
	default:
		return SYM_WALK_SKIP;
	}
}

/* The kind of a DIE tag (dwarf_abbrev.c). */
uint8_t sym_dw_tag_kind(uint64_t tag);

/* What the DIE walk of a unit writes to (nodes, strings: the thread that
 * walks owns them) and reads. */
struct sym_walk_ctx {
	struct sym_index *idx;
	const struct elfdw_ranges *exec;
	struct sym_origin_cache *origins;
	const struct sym_line_ctx *lines;
	Dwarf *dw;		/* libdw, for what the reader leaves to it */
};

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
/* Names of key into n (returns 1), or 0 with *slot the place to put them
 * with sym_origin_cache_put once looked up; -ENOMEM.  *slot stays valid
 * until the next call. */
int sym_origin_cache_get(struct sym_origin_cache *c, uint64_t key,
			 struct sym_node *n, struct sym_origin **slot);
void sym_origin_cache_put(struct sym_origin_cache *c, struct sym_origin *slot,
			  uint64_t key, const struct sym_node *n);

/* The DIE walk of one unit: nodes into idx, scope intervals into scopes. */
int sym_dwarf_walk_unit(struct sym_index *idx, const struct elfdw_ranges *exec,
			struct sym_origin_cache *origins, Dwarf_Die *cudie,
			const char *comp_dir, const struct sym_unit_files *files,
			struct sym_ivals *scopes);
/*
 * The main thread's half of unit u by the DIE reader (dwarf_walk.c): its
 * ranges, line-program header and DIE walk, into su (nodes and strings
 * into c->idx).  -EINVAL or -EOPNOTSUPP: the reader leaves the unit to
 * libdw; the caller drops su and the nodes added since, and walks the
 * unit with sym_dwarf_walk_unit instead.
 */
int sym_dw_unit_collect(struct sym_dw *r, struct sym_dw_unit *u,
			const struct sym_walk_ctx *c, struct sym_unit *su);
/* ---- symbol tables (symtab.c) --------------------------------------------- */

/* One symbol table: bytes libelf loaded, borrowed until the ELF closes. */
struct sym_symsrc {
	struct elfdw_sect syms, strs;
	size_t entsize;
	bool is64;
};

struct sym_symtab {
	struct sym_symsrc *v;
	size_t n, alloc;
};

struct sym_tmp;
struct sym_symlist {
	struct sym_tmp *v;
	size_t n, alloc;
};

/*
 * The reading of an index's symbol tables, in three steps on up to two
 * threads: prepare (libelf; the thread owning the ELF handles), collect
 * (parse and sort the bytes; any thread, while the other walks DIEs),
 * store (intern the names; the thread owning the index).  Names point
 * into the ELF files until stored.
 */
struct sym_symjob {
	struct sym_symtab symtab, symtab_dbg, dynsym;
	struct sym_symlist symtab_list, dynsym_list;
	bool symtab_in_debug;	/* .symtab came from the debug file */
	bool collected;
	int err;		/* of collect, when another thread ran it */
};

int sym_symjob_prepare(struct sym_symjob *j, Elf *main_elf, Elf *dbg_elf);
/* Whether the tables are big enough to be worth another thread. */
bool sym_symjob_big(const struct sym_symjob *j);
int sym_symjob_collect(struct sym_symjob *j);
int sym_symjob_store(struct sym_index *idx, const struct sym_symjob *j);
void sym_symjob_release(struct sym_symjob *j);
/* Flatten the unit in b->scopes/b->lines into segments; empties both. */
int sym_flatten_unit(struct sym_build *b);
/* Go's .gopclntab of a file without DWARF into nodes and segment blocks
 * (gopclntab.c); 0 also when there is none or it is unusable (warned). */
int sym_gopclntab_collect(struct sym_build *b, Elf *elf);
/* Put all units' segment blocks in address order. */
int sym_flatten_finish(struct sym_build *b);
/* Build idx->buckets over the finished segment table (lookup.c). */
int sym_index_build_buckets(struct sym_index *idx);
void sym_build_release(struct sym_build *b);

#endif /* EMBER_SYM_INTERNAL_H */
