/*
 * gopclntab.h - what gopclntab.c and gopclntab_inline.c share: Go's
 * function table (.gopclntab) as read from one ELF file, while the index
 * is built.  Private to symbolizer/ (like sym_internal.h, which declares
 * the one entry point, sym_gopclntab_collect).
 *
 * The format is the Go runtime's (runtime/symtab.go, runtime/runtime2.go
 * _func, runtime/symtabinl.go or symtab.go inlinedCall, and
 * cmd/internal/objabi/funcdata.go for the table numbers); the layouts
 * read here are described in docs/symbol-index.md ("Go binaries without
 * DWARF").  Every pointer below points into libelf's image of the file
 * and lives only while the file is open: nothing of it is kept in the
 * index, which receives copies (interned strings, nodes, segments).
 */
#ifndef EMBER_GOPCLNTAB_H
#define EMBER_GOPCLNTAB_H

#include "sym_internal.h"

/* pcHeader.magic of the layouts read here, by the Go release that
 * introduced them. */
#define SYM_GO_MAGIC_116 0xfffffffau	/* Go 1.16, 1.17 */
#define SYM_GO_MAGIC_118 0xfffffff0u	/* Go 1.18, 1.19 */
#define SYM_GO_MAGIC_120 0xfffffff1u	/* Go 1.20 and later */

enum sym_go_version {
	SYM_GO_116 = 1,
	SYM_GO_118,
	SYM_GO_120,
};

/* cmd/internal/objabi/funcdata.go, the same from Go 1.12 on. */
#define SYM_GO_PCDATA_INLTREEINDEX 2
#define SYM_GO_FUNCDATA_INLTREE 3

/* Deepest chain of inlined calls followed in one function; the compiler
 * stops far below this (its inlining budget), so more is corrupt input. */
#define SYM_GO_MAX_INLINE_DEPTH 128

/* An allocated section with contents: its bytes at its address. */
struct sym_go_sect {
	uint64_t addr;
	const uint8_t *data;
	size_t size;
};

/*
 * The tables of one pclntab.  Each table runs from its header offset to
 * the end of the section (they are not sized in the header); reads check
 * against that end.
 */
struct sym_go_table {
	enum sym_go_version ver;
	uint8_t quantum, ptrsize;
	uint64_t nfunc, nfiles;	/* nfiles: distinct names, not cutab entries */
	uint64_t text_start;	/* base of 1.18+ entry offsets */
	struct sym_go_sect pclntab;	/* .gopclntab: the pcHeader first */
	struct elfdw_sect funcnames, cutab, filetab, pctab, funcs;
	uint64_t funcs_addr;	/* address of funcs.data (1.16 alignment) */
	/* moduledata.gofunc (1.18+), the base of funcdata offsets; found is
	 * false when moduledata could not be found and checked exactly, and
	 * then no inline tree is read. */
	uint64_t gofunc;
	bool gofunc_found;
	struct sym_go_sect *sects;	/* allocated sections with contents */
	size_t nsects;
	struct elfdw_ranges exec;		/* executable sections */
	struct ember_diag diag;	/* the first check that failed, into why */
	char why[192];
};

/* One function of the table, as its _func record says. */
struct sym_go_func {
	uint64_t entry, limit;	/* limit: the next function's entry */
	uint32_t nameoff, pcfile, pcln, npcdata, cu_offset;
	uint8_t nfuncdata;
	const uint8_t *pcdata;	/* npcdata u32 offsets into pctab */
	uint64_t pcdata_addr;	/* address of pcdata[0] (1.16 alignment) */
	const uint8_t *rec_end;	/* end of what the record may use */
};

/* A pc-value table decoded: value v holds over [lo, hi). */
struct sym_go_run {
	uint64_t lo, hi;
	int32_t v;
};

struct sym_go_runs {
	struct sym_go_run *v;
	size_t n, alloc;
};

/* The runs of one function's tables, and its extent. */
struct sym_go_fn_runs {
	struct sym_go_runs file, line, inl;
	uint64_t end;
};

/*
 * Find the pclntab of elf and read its header into t (and moduledata's
 * gofunc, when it can be found exactly).  Returns 0; 1 when the file has
 * no .gopclntab; -EINVAL when the header is unusable (t->why says why);
 * -ENOMEM.  Release t with sym_go_table_release in every case.
 */
int sym_go_table_open(struct sym_go_table *t, Elf *elf);
void sym_go_table_release(struct sym_go_table *t);

/* The value of runs at pc, or -1 where none holds (as the runtime's
 * pcvalue answers). */
int32_t sym_go_runs_at(const struct sym_go_runs *r, uint64_t pc);

/* The bytes at [addr, addr + size) in an allocated section, or NULL. */
const uint8_t *sym_go_bytes_at(const struct sym_go_table *t, uint64_t addr,
			       uint64_t size);

/* The NUL-terminated name at off in funcnametab, or NULL. */
const char *sym_go_name(const struct sym_go_table *t, uint64_t off);

/* The strtab offset of file number fileno of a function's unit (0: none;
 * a negative errno on failure).  cache holds one slot a cutab entry. */
int64_t sym_go_file(struct sym_index *idx, struct sym_go_table *t,
		    uint32_t *cache, uint32_t cu_offset, int32_t fileno);

/*
 * The inlined frames of function f (node fn_node, entry f->entry):
 * creates a node for every inline-tree entry its PCDATA_InlTreeIndex
 * table uses, and appends to scopes one interval for each run where an
 * inlined call is innermost.  Returns 0 without inline frames when f has
 * none; -EINVAL when its tree cannot be read exactly (the caller drops
 * the nodes added and keeps the function's lines); -ENOMEM.
 */
int sym_go_inline(struct sym_index *idx, struct sym_go_table *t,
		  uint32_t *file_cache, const struct sym_go_func *f,
		  uint32_t fn_node, const struct sym_go_fn_runs *runs,
		  struct sym_ivals *scopes);

#endif /* EMBER_GOPCLNTAB_H */
