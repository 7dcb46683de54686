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
 * sym_die_open).
 */

/* ---- what bounds a build (budget.c) -------------------------------------
 *
 * The bytes a build holds (sym_open_opts.max_bytes) and the work it does
 * reading strings and tables (64 times its input), both checked before
 * they grow; past either, -E2BIG and why.  Charged by both threads.
 */
struct sym_budget {
	uint64_t max_bytes;		/* 0: no limit */
	_Atomic uint64_t bytes;		/* held now */
	uint64_t max_work, work;	/* main thread only */
	_Atomic bool exceeded;		/* the first refusal is recorded */
	struct ember_diag diag;
	char why[200];
	/* Main thread: the line programs whose rows a unit took, by offset
	 * (indexes into programs[] in a keyed set): a unit naming one again
	 * takes its files, not its rows (unit_lines.c). */
	struct ember_hset program_set;
	uint64_t *programs;
	size_t nprograms, programs_alloc;
};

/* 0, or the error of drawing the set's key; release with _release. */
int sym_budget_init(struct sym_budget *b, uint64_t max_bytes);
void sym_budget_release(struct sym_budget *b);
/* Whether the rows of the line program at off were taken by a unit
 * already: 1 if so, 0 if not (and now they are), -ENOMEM. */
int sym_budget_program_seen(struct sym_budget *b, uint64_t off);
/* The work allowed for input_bytes of input. */
void sym_budget_set_input(struct sym_budget *b, uint64_t input_bytes);
/* Charge n bytes before allocating them, for what ("segments"): 0, or
 * -E2BIG past max_bytes (or after any refusal).  b may be NULL. */
int sym_budget_charge(struct sym_budget *b, uint64_t n, const char *what);
void sym_budget_give(struct sym_budget *b, uint64_t n);
/* Count n bytes read of what ("line table at 0x..."): 0 or -E2BIG. */
int sym_budget_work(struct sym_budget *b, uint64_t n, const char *what);
/* A limit of limit bytes read for what, hit elsewhere: -E2BIG, recorded
 * when it is the first refusal. */
int sym_budget_fail(struct sym_budget *b, const char *what, uint64_t limit);

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
	struct sym_budget *budget; /* a build's: bytes and work charged */
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
	_Atomic size_t demangled_bytes;	/* their texts' (demangle.c) */

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

	struct sym_load *loads;		/* by vaddr, disjoint when loads_sorted */
	size_t nloads;			/* at most SYM_MAX_LOADS */
	bool loads_sorted;		/* searched, else scanned (loads.c) */
	bool loads_by_offset;		/* their file ranges in order too */

	uint8_t build_id[EMBER_BUILD_ID_MAX];
	size_t build_id_len;
	char *debug_path;

	struct sym_budget *budget;	/* the build's; NULL after it */
	size_t nodes_charged;		/* nodes the budget was charged for */
	size_t lines_shared;		/* units whose line program an earlier
					   unit's rows were read from */
	size_t abbrev_parses;		/* abbreviation tables parsed */

	/* A loaded index (index_load.c): the arrays above point into this
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

/*
 * The text of a mangled name (demangle.c), params: with parameter lists;
 * NULL when libiberty cannot read it or it is past the bounds of
 * sym_frame_demangled.  Caller frees.  *work (when set): the bytes of
 * text the demanglers wrote, at most twice sym_demangle_cap(its length).
 */
char *sym_demangle(const char *name, bool params, size_t *work);
/* The most text a name of len bytes may demangle to. */
size_t sym_demangle_cap(size_t len);

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
/* ---- PT_LOAD segments (loads.c) ------------------------------------------ */

/* More PT_LOAD segments than this make a file malformed. */
#define SYM_MAX_LOADS 4096u

/* The PT_LOAD segments of elf into idx->loads, by address, disjoint:
 * 0, -SYM_ERR_BAD_ELF (unreadable, or too many), -ENOMEM. */
int sym_elf_read_loads(Elf *elf, struct sym_index *idx);
/* A loaded index's segments: -SYM_ERR_BAD_INDEX past SYM_MAX_LOADS;
 * their order noted (out of order: scanned). */
int sym_loads_check(struct sym_index *idx, struct ember_diag *d);
/* Whether addr is in one of them (true without any). */
bool sym_loads_hold(const struct sym_index *idx, uint64_t addr);

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
	struct sym_budget *budget;	/* charged for alloc; NULL: none */
};

/* Room for need intervals (the budget charged first): 0, -E2BIG, -ENOMEM. */
int sym_ivals_reserve(struct sym_ivals *iv, size_t need);
/* Append x (inline fast path: growth only when full). */
static inline int sym_ivals_push(struct sym_ivals *iv, struct sym_ival x)
{
	int err;

	if (iv->n >= iv->alloc && (err = sym_ivals_reserve(iv, iv->n + 1)))
		return err;
	iv->v[iv->n++] = x;
	return 0;
}
/* Free the intervals (their charge given back); the budget stays. */
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
	struct sym_budget *budget;	/* idx->budget */
	uint64_t max_section;		/* sym_open_opts.max_section_bytes */
	size_t segs_charged;		/* segments the budget was charged for */
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
 * syms (if set) is collected on the worker meanwhile (collect.c). */
struct sym_symjob;
int sym_collect_units(struct sym_build *b, Dwarf *dw, struct sym_symjob *syms);

/* ---- line programs (line_program.c) --------------------------------------- */

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
 * Read the line program at offset of .debug_line (its header by the
 * ELF/DWARF layer, strings from .debug_line_str and .debug_str of s): if
 * files is set, the file table interned into idx (caller frees
 * files->off); if fn is set, every row.  With files NULL nothing is
 * written but through fn, so the rows of one unit can be read on another
 * thread than the one interning.  A malformed program is an input error
 * (elfdw_err_input), a path longer than 64 KiB -E2BIG, both explained in
 * d (may be NULL); rows already passed to fn stay valid.
 */
int sym_line_program_read(struct sym_index *idx, const struct elfdw_sections *s,
			  uint64_t offset, const char *comp_dir,
			  struct sym_unit_files *files, sym_line_row_fn fn,
			  void *arg, struct ember_diag *d);

/* ---- the schema of the DIE reader (die_schema.c) ---------------------------
 *
 * What the index needs of a DIE, as the ELF/DWARF layer's DIE reader is
 * told (struct elfdw_schema): the attributes it keeps (its slots past the
 * layer's own), and the kinds of tags the walks tell apart.
 */

/* GCC's discriminator of an inlined call (not in elfutils' dwarf.h). */
#define SYM_AT_GNU_DISCRIMINATOR 0x2136

enum sym_slot {
	SYM_SLOT_NAME = ELFDW_SLOT_USER,
	SYM_SLOT_LINKAGE_NAME,
	SYM_SLOT_MIPS_LINKAGE_NAME,
	SYM_SLOT_DECL_FILE,
	SYM_SLOT_DECL_LINE,
	SYM_SLOT_ABSTRACT_ORIGIN,
	SYM_SLOT_SPECIFICATION,
	SYM_SLOT_CALL_FILE,
	SYM_SLOT_CALL_LINE,
	SYM_SLOT_CALL_COLUMN,
	SYM_SLOT_DISCRIMINATOR,	/* DW_AT_GNU_discriminator */
	SYM_SLOT_COMP_DIR,
	SYM_SLOT_STMT_LIST,
	SYM_NSLOTS
};

_Static_assert((int)SYM_NSLOTS <= (int)ELFDW_MAX_SLOTS, "the index's slots fit a DIE");

/* What the walks do with a DIE, by tag. */
enum sym_kind {
	SYM_KIND_OTHER = ELFDW_KIND_OTHER, /* skipped with its subtree */
	SYM_KIND_UNIT,		/* compile or partial unit */
	SYM_KIND_FUNC,		/* subprogram */
	SYM_KIND_INLINED,	/* inlined_subroutine */
	SYM_KIND_BLOCK,		/* lexical, try and catch blocks */
	SYM_KIND_SCOPE,		/* namespace, module, class, struct, union */
};

/* The index's schema: subprograms and inlined subroutines are read whole
 * (capture lists), and a DIE notes which of its two origins comes first. */
extern const struct elfdw_schema sym_die_schema;
/* The kind of a DIE tag (enum sym_kind). */
uint8_t sym_tag_kind(uint64_t tag);

/* ---- the DIE reader's units (die_units.c) ---------------------------------
 *
 * The index build reads .debug_info with the layer's DIE reader (elfdw.h)
 * for the few attributes it needs, in place of libdw's DIE traversal:
 * 32-bit DWARF 2-5 compile and partial units of little-endian files.
 * Which units exist and what type each is are libdw's answers
 * (dwarf_get_units), never a second opinion; the reader reads each
 * header again and walks what it can.  Whatever it cannot read exactly
 * as libdw would (DWARF 64, split DWARF, supplementary files, unknown
 * forms, bases it would have to default, anything malformed) makes it
 * return an input error (elfdw_err_input); the caller then hands the
 * whole unit to libdw.  It never guesses.
 */

enum sym_die_unit_state {
	SYM_DIE_UNIT_NEW = 0,	/* header read, unit DIE not yet */
	SYM_DIE_UNIT_OPEN,	/* unit DIE read: bases known */
	SYM_DIE_UNIT_BAD,	/* not readable here: left to libdw */
};

/* A unit of .debug_info as libdw lists it. */
struct sym_die_unit {
	struct elfdw_unit u;	/* its header and bases (the layer's) */
	uint8_t state;		/* enum sym_die_unit_state */
	Dwarf_Die cudie;	/* libdw's unit DIE, for the units left to it */
};

#define SYM_DIE_CACHE 8
#define SYM_DIE_CHUNK 64	/* units a chunk */

/*
 * The reader of one file: its sections, its units as libdw lists them
 * (listed as the walk goes, or further when a reference points past the
 * last listed), and a few parsed abbreviation tables of other units (for
 * references across units).  Unit records live in fixed chunks, so that
 * pointers to them stay valid while more are listed.  Used by one thread
 * at a time.
 */
struct sym_die_reader {
	const struct elfdw_sections *s;	/* borrowed from the build */
	Dwarf *dw;
	Dwarf_CU *cu;			/* libdw's iteration: the last listed */
	struct sym_die_unit **chunks;	/* unit i: chunks[i / CHUNK][i % CHUNK] */
	size_t nunits, nchunks;
	size_t ninfo;			/* units 0..ninfo: .debug_info's, by offset */
	bool listed;			/* libdw has no more units */
	bool truncated;			/* libdw could not read past the last */
	struct elfdw_abbrevs cache[SYM_DIE_CACHE];
	unsigned cache_next;
	const struct elfdw_abbrevs *pinned; /* never evicted */
	const struct elfdw_abbrevs *last_walked; /* evicted first */
	struct ember_diag diag;		/* why the last unit went to libdw */
	char why[160];
	struct sym_budget *budget;	/* unit records, abbreviation work */
	size_t abbrev_parses;		/* tables parsed (the cache missed) */
};

/* The reader over s (the sections libdw loaded from dw's file);
 * -EOPNOTSUPP when the file is not for this reader at all (big endian,
 * no .debug_info or .debug_abbrev). */
int sym_die_open(struct sym_die_reader *r, Dwarf *dw, const struct elfdw_sections *s);
void sym_die_release(struct sym_die_reader *r);
/* Unit i in libdw's order (listing it now if need be), NULL past the
 * last; *err is set on failure (-ENOMEM). */
struct sym_die_unit *sym_die_unit(struct sym_die_reader *r, size_t i, int *err);
/* The unit holding section offset off, or NULL. */
struct sym_die_unit *sym_die_unit_at(struct sym_die_reader *r, uint64_t off);
/* The abbreviations of unit u, parsed or from the cache (valid until the
 * next call); the unit is opened too (its bases read). */
int sym_die_unit_abbrevs(struct sym_die_reader *r, struct sym_die_unit *u,
			 const struct elfdw_abbrevs **out);
/* Read the DIE at section offset off, in whatever unit holds it. */
int sym_die_at(struct sym_die_reader *r, uint64_t off, struct elfdw_die *d);

/* Intern name, joined to comp_dir when it is relative; 0 for NULL
 * (paths.c). */
int64_t sym_intern_path(struct sym_index *idx, const char *comp_dir,
			const char *name);

/* ---- units (collect.c, unit_lines.c, die_walk.c, libdw_walk.c) ----------- */

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
int sym_unit_lines_open(struct sym_index *idx, const struct elfdw_sections *s,
			uint64_t off, const char *comp_dir, struct sym_unit *u);
/* The unit's line rows as intervals into lines; touches nothing shared. */
int sym_unit_rows(const struct sym_unit *u, const struct elfdw_sections *s,
		  const struct elfdw_ranges *exec, struct sym_ivals *lines);
void sym_unit_free(struct sym_unit *u);

/* Both DIE walks stop descending at this nesting: deeper is corrupt
 * input, not code. */
#define SYM_WALK_MAX_DEPTH 512

/*
 * What both DIE walks (die_walk.c, libdw_walk.c) do with a DIE of a kind
 * (enum sym_kind), inside a function's tree (node set) or not.
 *
 * A subprogram with code is a function of its own wherever it sits: C++
 * nests the concrete operator() of a lambda, and the member functions of
 * a class defined inside a function, in the DIE tree of the enclosing
 * function (subprogram -> lexical block -> class -> subprogram), with
 * their own low_pc/high_pc and their own inlined calls.  So a class or
 * namespace inside a function is walked as if outside any function
 * (SYM_WALK_NESTED), and a function found there (or directly inside
 * another one) gets a node without a parent whose scopes are deeper than
 * the enclosing function's: the enclosing scopes never claim its
 * addresses, and its frames never include the enclosing function.
 */
enum sym_walk_step {
	SYM_WALK_SKIP = 0,	/* step over it and its subtree */
	SYM_WALK_FUNCTION,	/* a function node; its children in it */
	SYM_WALK_INLINED,	/* an inlined instance under node; likewise */
	SYM_WALK_DESCEND,	/* its children, under the same node */
	SYM_WALK_NESTED,	/* its children, outside any function node */
};

static inline enum sym_walk_step sym_walk_step(uint8_t kind, uint32_t node)
{
	switch (kind) {
	case SYM_KIND_FUNC:
		return SYM_WALK_FUNCTION;
	case SYM_KIND_INLINED: /* an inlined call outside any function: none */
		return node == SYM_NONE ? SYM_WALK_SKIP : SYM_WALK_INLINED;
	case SYM_KIND_BLOCK:
		return node == SYM_NONE ? SYM_WALK_SKIP : SYM_WALK_DESCEND;
	case SYM_KIND_SCOPE: /* Rust and C++ define functions in these */
		return node == SYM_NONE ? SYM_WALK_DESCEND : SYM_WALK_NESTED;
	default:
		return SYM_WALK_SKIP;
	}
}

/* What the DIE walk of a unit writes to (nodes, strings: the thread that
 * walks owns them) and reads. */
struct sym_walk_ctx {
	struct sym_index *idx;
	const struct elfdw_ranges *exec;
	struct sym_origin_cache *origins;
	const struct elfdw_sections *sects;
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
	unsigned bits;			/* nslots == 1 << bits */
	struct ember_words_key key;	/* drawn at the first insert */
	size_t probes;			/* slots stepped past, for tests */
};

void sym_origin_cache_release(struct sym_origin_cache *c);
/* Names of key into n (returns 1), or 0 with *slot the place to put them
 * with sym_origin_cache_put once looked up; -ENOMEM, or the error of
 * drawing the key.  *slot stays valid until the next call. */
int sym_origin_cache_get(struct sym_origin_cache *c, uint64_t key,
			 struct sym_node *n, struct sym_origin **slot);
void sym_origin_cache_put(struct sym_origin_cache *c, struct sym_origin *slot,
			  uint64_t key, const struct sym_node *n);

/*
 * The main thread's half of unit u through libdw (libdw_walk.c): its
 * ranges and line-program header (files interned) into su, then the DIE
 * walk: nodes into c->idx, scope intervals into su->scopes.
 */
int sym_libdw_walk_unit(const struct sym_walk_ctx *c, Dwarf_Die *cudie,
			struct sym_unit *su);
/*
 * The same by the DIE reader (die_walk.c).  An input error
 * (elfdw_err_input, explained in r->diag): the reader leaves the unit to
 * libdw; the caller drops su and the nodes added since, and walks the
 * unit with sym_libdw_walk_unit instead.
 */
int sym_die_walk_unit(struct sym_die_reader *r, struct sym_die_unit *u,
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
	struct sym_budget *budget;
	/* Bytes the names may take to find their ends: 64 per byte of
	 * their string tables plus 16 MiB (a name is searched for its NUL,
	 * and every symbol may point into one long string). */
	uint64_t scan_left, scan_max;
};

/* The tables of both files; their symbols' memory charged to b, their
 * string tables inflated up to max_section bytes (-E2BIG, in b). */
int sym_symjob_prepare(struct sym_symjob *j, Elf *main_elf, Elf *dbg_elf,
		       struct sym_budget *b, uint64_t max_section);
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
