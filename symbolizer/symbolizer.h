/*
 * symbolizer.h - address -> function, file, line, with every inlined frame.
 *
 * Pipeline position: a raw instruction address inside one ELF file (as an
 * ELF virtual address or a file offset) comes in; frames innermost first
 * come out.  The index is built once per file from DWARF (libdw), with the
 * ELF symbol tables (.symtab, then .dynsym) as fallbacks where DWARF is
 * absent or does not cover an address; Go binaries without DWARF are read
 * from .gopclntab instead.  Layout and search: docs/symbol-index.md.
 *
 * Ownership: a struct sym_index owns everything it hands out.  Strings in a
 * struct sym_frame point into the index and stay valid until
 * sym_index_free().  After sym_index_open() returns, the index is
 * immutable except for its internal demangling cache, which is safe to
 * fill from several threads: lookups may run concurrently.
 */
#ifndef EMBER_SYMBOLIZER_H
#define EMBER_SYMBOLIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sym_index;

#define SYM_ADDR_UNKNOWN UINT64_MAX

/* Which source answered for a frame. */
enum sym_source {
	SYM_SOURCE_NONE = 0, /* nothing covers the address */
	SYM_SOURCE_DWARF,
	SYM_SOURCE_SYMTAB,
	SYM_SOURCE_DYNSYM,
	SYM_SOURCE_GOPCLNTAB,	/* Go's .gopclntab (Go binaries without DWARF) */
};

/* How an input address is to be read. */
enum sym_addr_kind {
	SYM_ADDR_VADDR = 0,   /* ELF virtual address (as in p_vaddr/st_value) */
	SYM_ADDR_FILE_OFFSET, /* offset in the file, mapped through PT_LOAD */
};

/* Domain errors, returned negated like errnos (see sym_strerror). */
enum sym_error {
	SYM_ERR_NOT_ELF = 4000,	/* not an ELF file */
	SYM_ERR_TRUNCATED,	/* ELF headers point past the end of the file */
	SYM_ERR_BAD_ELF,	/* libelf could not read it */
	SYM_ERR_NO_SYMBOLS,	/* neither DWARF nor a symbol table */
	SYM_ERR_OFFSET_UNMAPPED, /* file offset in no PT_LOAD segment */
	SYM_ERR_BAD_DEBUG_FILE,	/* debug file given but unusable */
	SYM_ERR_BAD_INDEX,	/* a saved index that is not one, or damaged */
	SYM_ERR_INDEX_VERSION,	/* a saved index of another format version */
};

/*
 * One frame.  For an address inside inlined code the array holds the
 * inlined callee first; each outer frame's file/line/column is the call
 * site of the frame before it.
 */
struct sym_frame {
	const char *name;	  /* raw name: linkage name when known, else
				     DW_AT_name or the symbol; NULL if unknown */
	const char *short_name;	  /* DW_AT_name (no scope, no params) or NULL */
	const char *file;	  /* full path, or NULL */
	uint32_t line;		  /* 0 when unknown */
	uint32_t column;	  /* 0 when unknown */
	const char *decl_file;	  /* where the function is declared, or NULL */
	uint32_t decl_line;
	uint64_t func_start;	  /* DW_AT_low_pc of the function or inlined
				     instance, or the ELF symbol's address
				     (outermost frame); SYM_ADDR_UNKNOWN */
	uint32_t discriminator;	  /* DWARF line/call discriminator, or 0 */
	enum sym_source source;
	bool inlined;		  /* this frame was inlined into the next one */
	uint32_t name_id;	  /* private: key of the demangling cache */
};

struct ember_diag;

/* Options for sym_index_open; NULL means all defaults. */
struct sym_open_opts {
	size_t sz;		  /* sizeof(struct sym_open_opts) */
	const char *debug_file;	  /* explicit separate debug file */
	const char *debug_root;	  /* root of /usr/lib/debug-style layout;
				     NULL: "/usr/lib/debug" */
	bool no_debug_search;	  /* do not look for separate debug files */
	/*
	 * The bytes the build may hold at once; 0: no limit.  Charged before
	 * each of the index's arrays grows (segments, nodes, strings, names,
	 * symbols) and for the build's scratch (the intervals of the units
	 * in flight, segment blocks, unit records) and the DWARF sections
	 * libdw inflates; past it the build stops with -E2BIG.  The index
	 * it builds holds at most this much (sym_index_get_stats' bytes).
	 * Not counted: libdw's own allocations for the units it walks and
	 * the parsed abbreviation tables, both bounded by the input's size.
	 * A server passes the share of its memory it grants the build.
	 */
	size_t max_bytes;
	/*
	 * A compressed section (SHF_COMPRESSED or .zdebug_*) of the DWARF or
	 * the symbol tables whose header says it inflates past this is
	 * refused before anything is inflated: -E2BIG.  0: 1 GiB
	 * (ELFDW_MAX_INFLATE_DEFAULT); UINT64_MAX: no limit.
	 */
	uint64_t max_section_bytes;
	/* Why a build stopped at a limit (-E2BIG): which limit, what it was
	 * building ("the index needs more than its limit of 268435456 bytes
	 * (segments: ...)"); also logged at warning level.  May be NULL. */
	struct ember_diag *diag;
};

/*
 * Open the ELF at path, find its debug info (the file itself, an explicit
 * debug_file, its .gnu_debuglink target next to it, in .debug/ or under
 * debug_root, or debug_root/.build-id/xx/rest.debug) and build the index.
 * Returns NULL and a negative errno or -SYM_ERR_* in *err on failure;
 * -E2BIG when a limit of opts stopped it (or the work its reading took:
 * at most 64 bytes of strings and tables read per byte of input plus
 * 16 MiB, which no file a compiler wrote comes near), explained in
 * opts->diag.  Caller frees with sym_index_free().
 */
struct sym_index *sym_index_open(const char *path,
				 const struct sym_open_opts *opts, int *err);
void sym_index_free(struct sym_index *idx);

/*
 * The path of the separate debug file of the ELF at path (found as
 * sym_index_open() finds it) into out.  Returns 0, -ENOENT when there is
 * none, or another negative errno.
 */
int sym_debug_file_path(const char *path, const char *debug_root, char *out,
			size_t size);

/* Lookup flags. */
enum sym_lookup_flags {
	/* Name the outermost frame after the ELF symbol covering the address,
	 * as llvm-symbolizer does for linkage names (keeps GCC clone suffixes
	 * such as .constprop.0 that tell physical copies apart). */
	SYM_LOOKUP_SYMBOL_NAME = 1 << 0,
};

/*
 * Symbolize addr.  Writes up to max frames, innermost first, and returns
 * the number of frames the address has (which may exceed max; only max
 * are written).  Returns 0 when nothing covers the address, or a negative
 * error (-SYM_ERR_OFFSET_UNMAPPED for a file offset outside PT_LOAD).
 */
int sym_index_lookup(const struct sym_index *idx, uint64_t addr,
		     enum sym_addr_kind kind, unsigned flags,
		     struct sym_frame *frames, size_t max);

/*
 * A hint for a run of lookups in a big index: starts loading what
 * sym_index_lookup(idx, addr, SYM_ADDR_VADDR, ...) will read.  Call it
 * with stage 0 for an address about 16 lookups ahead, then 1, 2 and 3 as
 * it comes closer (12, 8 and 4 ahead: cli/cmd_symbolize.c); each stage
 * uses what the one before brought into the cache, so the cache misses
 * of several lookups overlap.  Changes no answer; a no-op on an index too
 * small for its bucket table.  Measured in docs/performance-notes.md.
 */
void sym_index_prefetch(const struct sym_index *idx, uint64_t addr,
			unsigned stage);

/* Map a file offset to an ELF virtual address through PT_LOAD headers. */
int sym_index_offset_to_vaddr(const struct sym_index *idx, uint64_t offset,
			      uint64_t *vaddr);

/*
 * Demangled name of a frame (C++ Itanium, Rust legacy and v0, via
 * libiberty, as cplus_demangle reads them), with parameter lists when
 * params is set.  Returns frame->name itself when it is not mangled or
 * not demangled, NULL when the frame has no name.  The result is cached
 * in the index (each name is demangled at most once) and valid until
 * sym_index_free().
 *
 * Bounded, for names come from files anybody may have written: a name
 * longer than SYM_DEMANGLE_MAX_NAME bytes, or one whose demangled text
 * would be longer than 64 bytes per byte of the name plus 256, or than
 * SYM_DEMANGLE_MAX_TEXT, stays raw, and demangling it stops as soon as
 * the text is too long (a 200-byte name can stand for a gigabyte of
 * text); an index caches at most 64 MiB plus 16 times its strings of
 * text, names past that stay raw.  libiberty itself reads no C++ name
 * longer than 1024 bytes (its arrays live on the stack) and recurses at
 * most DEMANGLE_RECURSION_LIMIT deep: demangling takes up to about half
 * a megabyte of stack, so look names up from threads of at least 1 MB.
 */
#define SYM_DEMANGLE_MAX_NAME 16384
#define SYM_DEMANGLE_MAX_TEXT (256u << 10)

const char *sym_frame_demangled(const struct sym_index *idx,
				const struct sym_frame *frame, bool params);

/* GNU build ID of the file (raw bytes), or NULL when it has none. */
const uint8_t *sym_index_build_id(const struct sym_index *idx, size_t *len);

/* Path of the file DWARF was read from (the ELF itself or its debug
 * file), or NULL when no DWARF was found. */
const char *sym_index_debug_path(const struct sym_index *idx);

/* Figures of the index, for tools and tests. */
struct sym_index_stats {
	size_t functions;	/* DWARF subprograms with code */
	size_t inlined;		/* DWARF inlined subroutines */
	size_t segments;	/* rows of the flattened range table */
	size_t symtab_symbols;
	size_t dynsym_symbols;
	size_t bytes;		/* memory held by the index itself */
};
void sym_index_get_stats(const struct sym_index *idx,
			 struct sym_index_stats *st);

/* ---- saved indexes (docs/symbol-index-format.md) ----------------------- */

/*
 * The format version of saved indexes, in their header (a file of another
 * version is refused with -SYM_ERR_INDEX_VERSION) and in the names the
 * server keeps them under.  It changes with the layout, and with what the
 * builder puts in an index for the same files (version 2: functions
 * nested in other functions' DIE trees, C++ lambdas and local classes,
 * get their inlined frames), so an old index is built again, never
 * misread or kept with answers a new build would not give.
 */
#define SYM_INDEX_FORMAT_VERSION 2

/* Where sym_index_save() writes: 0, or a negative errno to stop it. */
typedef int (*sym_write_fn)(void *arg, const void *data, size_t len);

/*
 * Write idx in the on-disk format, in order, through write (a few calls
 * per array).  The bytes depend only on the index: the same files give
 * the same file.  Returns 0, -EINVAL for an index the format cannot hold,
 * or what write returned.
 */
int sym_index_save(const struct sym_index *idx, sym_write_fn write, void *arg);

enum sym_load_flags {
	/* Check the CRC of the whole body too (reads every page). */
	SYM_LOAD_VERIFY = 1 << 0,
};

/*
 * Map a saved index from fd (which the caller may close afterwards).  The
 * result is used like a built one and freed with sym_index_free(); its
 * arrays stay in the read-only mapping (page cache, not heap).  Returns
 * NULL with -SYM_ERR_BAD_INDEX, -SYM_ERR_INDEX_VERSION or a negative
 * errno in *err.
 */
struct sym_index *sym_index_load(int fd, unsigned flags, int *err);
/*
 * The same, a refused file explained in d (common.h's struct ember_diag;
 * may be NULL): which check failed ("header checksum mismatch", "section
 * 3: 12 records run past the file", "format version 2, this build reads
 * 1"), for the caller to log.
 */
struct sym_index *sym_index_load_diag(int fd, unsigned flags, struct ember_diag *d,
				      int *err);

const char *sym_source_name(enum sym_source src);
/* Message for a negative error from this component (errno or SYM_ERR). */
const char *sym_strerror(int err);

#endif /* EMBER_SYMBOLIZER_H */
