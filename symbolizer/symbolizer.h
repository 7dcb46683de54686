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

/* Options for sym_index_open; NULL means all defaults. */
struct sym_open_opts {
	size_t sz;		  /* sizeof(struct sym_open_opts) */
	const char *debug_file;	  /* explicit separate debug file */
	const char *debug_root;	  /* root of /usr/lib/debug-style layout;
				     NULL: "/usr/lib/debug" */
	bool no_debug_search;	  /* do not look for separate debug files */
	size_t max_bytes;	  /* memory the build may allocate (heap and
				     anonymous mappings); past it the build fails
				     with -E2BIG rather than allocate more.  0: no
				     bound.  The server passes its build share
				     (issue 13); enforcing it is the build's. */
};

/*
 * Open the ELF at path, find its debug info (the file itself, an explicit
 * debug_file, its .gnu_debuglink target next to it, in .debug/ or under
 * debug_root, or debug_root/.build-id/xx/rest.debug) and build the index.
 * Returns NULL and a negative errno or -SYM_ERR_* in *err on failure.
 * Caller frees with sym_index_free().
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

/* Map a file offset to an ELF virtual address through PT_LOAD headers. */
int sym_index_offset_to_vaddr(const struct sym_index *idx, uint64_t offset,
			      uint64_t *vaddr);

/*
 * Demangled name of a frame (C++ Itanium, Rust legacy and v0, via
 * libiberty's cplus_demangle), with parameter lists when params is set.
 * Returns frame->name itself when it is not mangled, NULL when the frame
 * has no name.  The result is cached in the index (each name is demangled
 * at most once) and valid until sym_index_free().
 */
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

const char *sym_source_name(enum sym_source src);
/* Message for a negative error from this component (errno or SYM_ERR). */
const char *sym_strerror(int err);

#endif /* EMBER_SYMBOLIZER_H */
