/*
 * unwind.h - the unwind compiler: an ELF file's call-frame information
 * (.eh_frame with .eh_frame_hdr, .debug_frame; DWARF 5 section 6.4) ->
 * a compact, versioned, checksummed unwind table that an eBPF unwinder
 * searches in a bounded number of steps.
 *
 * Pipeline position: the server compiles a table once per build ID (from
 * the binary and, optionally, its separate debug file) and hands it to
 * agents, which load it into BPF maps at startup.  The byte layout, the
 * normalizations (merges, gap bridging) and the BPF loading scheme are in
 * docs/unwind-format.md; the structs and constants below are that layout.
 *
 * A table holds, for every code address covered by CFI, one rule with
 * three parts: how to compute the CFA, where the return address is, and
 * where the caller's frame pointer is (rbp on x86-64, x29 on arm64).
 * What the format cannot express is an explicit kind (INVALID), never a
 * guess; offsets are never truncated.
 *
 * Ownership: compile functions append to a caller-owned struct ember_buf
 * (whose cap bounds the table); on failure its contents are left as they
 * were (its allocation may have grown: release it as always).
 * A struct unwind_table borrows the bytes it was opened on: they must stay
 * valid and unchanged until unwind_table_free().  Rows handed to callbacks
 * live for the duration of the call.  Nothing here keeps global state;
 * separate tables and compilations may run on separate threads.
 */
#ifndef EMBER_UNWIND_H
#define EMBER_UNWIND_H

#include "common.h"

#include <stddef.h>
#include <stdint.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the unwind table is little-endian; add byte swapping for this host"
#endif

/* ---- the table layout (docs/unwind-format.md) -------------------------- */

#define UNWIND_TABLE_MAGIC "EMBUNWND"	/* 8 bytes, no terminator */
#define UNWIND_TABLE_VERSION 1
#define UNWIND_PAGE_BITS 16		/* a page is 64 KiB of addresses */
#define UNWIND_GAP_BRIDGE_MAX 15	/* gaps between FDEs up to this are bridged */
#define UNWIND_MAX_RULES 65535		/* palette entries are u16 */

/* How the CFA (the caller's stack pointer at the call) is computed. */
enum unwind_cfa_kind {
	UNWIND_CFA_END = 0,	/* no CFI covers this address: stop */
	UNWIND_CFA_REG = 1,	/* CFA = cfa_reg + cfa_off */
	UNWIND_CFA_PLT = 2,	/* CFA = rsp + cfa_off + ((pc & 15) >= cfa_aux ? 8 : 0)
				   (the GCC/binutils PLT expression) */
	UNWIND_CFA_DEREF = 3,	/* CFA = *(u64 *)(cfa_reg + cfa_off) + cfa_aux */
	UNWIND_CFA_SIGNAL = 4,	/* signal trampoline (CIE augmentation 'S'):
				   registers come from the ucontext at sp */
	UNWIND_CFA_INVALID = 5,	/* CFI this format does not express: stop */
	UNWIND_CFA_KIND_COUNT
};

/* Where the return address or the caller's frame pointer is. */
enum unwind_reg_kind {
	UNWIND_REG_SAME = 0,	  /* unchanged from the callee */
	UNWIND_REG_UNDEFINED = 1, /* RA undefined: outermost frame */
	UNWIND_REG_AT_CFA = 2,	  /* saved at CFA + off */
	UNWIND_REG_VAL_CFA = 3,	  /* value is CFA + off */
	UNWIND_REG_REGISTER = 4,  /* value is in register reg */
	UNWIND_REG_AT_REG = 5,	  /* saved at reg + off */
	UNWIND_REG_VAL_REG = 6,	  /* value is reg + off */
	UNWIND_REG_INVALID = 7,	  /* not expressible (other DWARF expression,
				     offset beyond s16) */
	UNWIND_REG_KIND_COUNT
};

/* struct unwind_rule.flags */
enum unwind_rule_flags {
	UNWIND_MERGE_AT_MASK = 0x0f, /* 0, or n: from row pc + n on ... */
	UNWIND_MERGE_POP = 1 << 4,   /* ... CFA offset -8 (else +8) */
	UNWIND_RULE_RA_SIGNED = 1 << 5, /* arm64: RA signed (pointer auth.) */
};

/*
 * One rule of the rule table, 16 bytes, little-endian.  Fields a kind
 * does not use are zero, so equal rules are equal bytes.
 */
struct unwind_rule {
	uint8_t cfa_kind;	/* enum unwind_cfa_kind */
	uint8_t reg_kinds;	/* bits 0-3: RA rule, 4-7: FP rule (unwind_reg_kind) */
	uint8_t flags;		/* enum unwind_rule_flags */
	uint8_t cfa_reg;	/* DWARF register of REG and DEREF */
	uint8_t ra_reg;		/* for REGISTER, AT_REG, VAL_REG */
	uint8_t fp_reg;
	int16_t cfa_aux;	/* PLT: threshold; DEREF: addend after the load */
	int32_t cfa_off;	/* REG: offset; PLT: rsp offset; DEREF: offset of
				   the load */
	int16_t ra_off;
	int16_t fp_off;
};
_Static_assert(sizeof(struct unwind_rule) == 16 &&
		       offsetof(struct unwind_rule, cfa_aux) == 6 &&
		       offsetof(struct unwind_rule, cfa_off) == 8 &&
		       offsetof(struct unwind_rule, fp_off) == 14,
	       "rule layout (docs/unwind-format.md)");

static inline enum unwind_reg_kind unwind_rule_ra_kind(const struct unwind_rule *r)
{
	return (enum unwind_reg_kind)(r->reg_kinds & 0x0f);
}

static inline enum unwind_reg_kind unwind_rule_fp_kind(const struct unwind_rule *r)
{
	return (enum unwind_reg_kind)(r->reg_kinds >> 4);
}

/* Table header, 128 bytes at offset 0. */
struct unwind_table_header {
	char magic[8];		/* UNWIND_TABLE_MAGIC */
	uint16_t version;	/* UNWIND_TABLE_VERSION */
	uint16_t machine;	/* ELF e_machine: 62 x86-64, 183 arm64 */
	uint32_t header_size;	/* sizeof(struct unwind_table_header) */
	uint32_t crc32;		/* CRC-32 (zlib's) of the table, this field as 0 */
	uint32_t flags;		/* enum unwind_table_flags */
	uint64_t size;		/* the whole table */
	uint32_t nrules;	/* struct unwind_rule[nrules] after the data */
	uint32_t npages;	/* struct unwind_page[npages] after the rules */
	uint32_t data_size;	/* page data area at header_size, a multiple of 8 */
	uint32_t nrows;		/* rows as `ember unwind dump` prints them */
	uint32_t nstored;	/* rows stored in the pages */
	uint32_t ninvalid;	/* of nrows, those with an INVALID CFA */
	uint32_t nfdes;		/* FDEs compiled */
	uint8_t build_id_len;
	uint8_t reserved[3];
	uint8_t build_id[64];	/* GNU build ID of the binary, zero-padded */
};
_Static_assert(sizeof(struct unwind_table_header) == 128, "header is 128 bytes");

enum unwind_table_flags {
	UNWIND_TABLE_EH_FRAME = 1 << 0,	  /* rows from .eh_frame */
	UNWIND_TABLE_DEBUG_FRAME = 1 << 1, /* rows from .debug_frame */
};

/*
 * One 64 KiB page of addresses, 16 bytes; the page table is sorted by
 * page.  At data_off in the data area: u16 palette[npalette] (rule ids),
 * u16 pc_low[nrows] (strictly increasing, pc_low[0] == 0), then the rule
 * index of each row into the palette, u8 when npalette <= 256 else u16,
 * then one zero byte if needed to keep the next page 2-aligned.
 */
struct unwind_page {
	uint32_t page;		/* address >> UNWIND_PAGE_BITS */
	uint32_t data_off;	/* even */
	uint16_t nrows_m1;	/* rows - 1 */
	uint16_t npalette;	/* >= 1 */
	uint32_t reserved;
};
_Static_assert(sizeof(struct unwind_page) == 16, "page is 16 bytes");

/* ---- errors -------------------------------------------------------------- */

/* Domain errors, returned negated like errnos (see unwind_strerror). */
enum unwind_error {
	UNWIND_ERR_NOT_ELF = 5000,  /* not an ELF file */
	UNWIND_ERR_BAD_ELF,	    /* libelf cannot read it, or it is truncated */
	UNWIND_ERR_ARCH,	    /* not x86-64 or arm64 (64-bit, little-endian) */
	UNWIND_ERR_NO_CFI,	    /* neither .eh_frame nor .debug_frame */
	UNWIND_ERR_BAD_CFI,	    /* truncated or malformed CFI (err_msg says where) */
	UNWIND_ERR_DEBUG_MISMATCH,  /* debug file's build ID differs */
	UNWIND_ERR_LIMIT,	    /* more than the format holds (rules, sizes) */
	UNWIND_ERR_BAD_TABLE,	    /* not a table, truncated or inconsistent */
	UNWIND_ERR_CHECKSUM,	    /* table checksum mismatch */
	UNWIND_ERR_VERSION,	    /* table of another format version */
};

/* Message for a negative error of this component (errno or UNWIND_ERR). */
const char *unwind_strerror(int err);
/*
 * What such an error means to whoever asked: -UNWIND_ERR_NO_CFI
 * EMBER_ERRK_NOT_FOUND (the file has no table to give), the other
 * -UNWIND_ERR_* and -E2BIG (a section that inflates past
 * max_section_bytes) EMBER_ERRK_UNPROCESSABLE (the input is unusable), any
 * other errno ember_errkind_of_errno().
 */
enum ember_errkind unwind_error_kind(int err);

/* ---- compiling ------------------------------------------------------------ */

enum unwind_compile_flags {
	UNWIND_COMPILE_EH_FRAME_ONLY = 1 << 0,	  /* ignore .debug_frame */
	UNWIND_COMPILE_DEBUG_FRAME_ONLY = 1 << 1, /* ignore .eh_frame */
};

/* Figures of one compilation. */
struct unwind_compile_stats {
	size_t fdes;		/* FDEs compiled */
	size_t fdes_debug_frame; /* of which from .debug_frame */
	size_t fdes_dropped;	/* empty, at address 0, or overlapped */
	size_t fdes_unsupported; /* with an unknown opcode or bad state ops */
	size_t rows;		/* rows as the dump prints them */
	size_t rows_stored;	/* rows in the pages (after push/pop merging) */
	size_t rows_invalid;	/* rows with an INVALID CFA */
	size_t rows_end;	/* END rows (real gaps and the end) */
	size_t gaps_bridged;	/* gaps <= UNWIND_GAP_BRIDGE_MAX bytes */
	size_t rules;		/* rule table entries */
	size_t pages;
	size_t table_size;
};

/* Options for the compile functions; NULL means all defaults. */
struct unwind_compile_opts {
	size_t sz;		/* sizeof(struct unwind_compile_opts) */
	unsigned flags;		/* enum unwind_compile_flags */
	char *err_msg;		/* on failure, if non-NULL: why, where */
	size_t err_msg_size;
	struct unwind_compile_stats *stats; /* on success, if non-NULL */
	/* A compressed .debug_frame (or other CFI section) whose header
	 * says it inflates past this is refused before anything is
	 * inflated: -E2BIG, the section and sizes in err_msg.  0: 1 GiB
	 * (ELFDW_MAX_INFLATE_DEFAULT); UINT64_MAX: no limit. */
	uint64_t max_section_bytes;
};

/*
 * Compile the CFI of the ELF at elf_path (and the .debug_frame of
 * debug_path, a separate debug file whose build ID must match, or NULL)
 * and append the table to out.  .eh_frame wins where both sections cover
 * an address.  Returns 0, a negative errno or -UNWIND_ERR_*; a corrupt
 * CFI section is an error and no table is written.  The output depends
 * only on the input bytes (same input, same table).  The files are
 * mapped: they must be the caller's own (a file truncated during the call
 * is a SIGBUS); another user's file goes through unwind_table_compile_fd.
 */
int unwind_table_compile(const char *elf_path, const char *debug_path,
			 const struct unwind_compile_opts *opts,
			 struct ember_buf *out);

/* The same from an open ELF file (the caller's descriptor, kept open by
 * it until the call returns).  Files are read with pread, never mapped:
 * one truncated during the call is an error, never a SIGBUS. */
int unwind_table_compile_fd(int fd, const struct unwind_compile_opts *opts,
			    struct ember_buf *out);

/* The same from ELF images in memory (debug may be NULL).  The images
 * are only read, and not referenced after the call. */
int unwind_table_compile_mem(const void *elf, size_t elf_size,
			     const void *debug, size_t debug_size,
			     const struct unwind_compile_opts *opts,
			     struct ember_buf *out);

/* ---- reading a table -------------------------------------------------------- */

struct unwind_table;

/*
 * Check a table completely (magic, version, size, checksum, every offset
 * and index) and return a handle on it, or NULL with a negative errno or
 * -UNWIND_ERR_* in *err.  Borrows data (see Ownership above); caller
 * frees the handle with unwind_table_free().  Once open, lookups need no
 * further checks.
 */
struct unwind_table *unwind_table_new(const void *data, size_t size, int *err);
void unwind_table_free(struct unwind_table *b);

/* The header of an open table (a copy owned by b; valid until
 * unwind_table_free). */
const struct unwind_table_header *unwind_table_header(const struct unwind_table *b);

/* A row: rule holds from pc up to the next row's pc.  Rules handed out
 * here have their push/pop merge applied (flags & UNWIND_MERGE_* == 0). */
struct unwind_row {
	uint64_t pc;		/* ELF virtual address */
	struct unwind_rule rule;
};

/*
 * The row covering the ELF virtual address pc: the same search an eBPF
 * unwinder does (page, then a binary search in the page).  Returns 0, or
 * -ENOENT when no CFI covers pc (outside every page, or an END row).
 */
int unwind_table_lookup(const struct unwind_table *b, uint64_t pc,
		       struct unwind_row *out);

/*
 * Call fn for every row in address order, merges expanded, identical
 * neighbours joined: the rows the compiler produced before encoding.
 * Stops at and returns fn's first non-zero result; 0 at the end.
 */
typedef int (*unwind_row_fn)(const struct unwind_row *row, void *ctx);
int unwind_table_foreach_row(const struct unwind_table *b, unwind_row_fn fn,
			    void *ctx);

/*
 * Format a row as one line of `ember unwind dump` (no newline):
 *   pc_start cfa_reg cfa_off ra_rule fp_rule
 *   000000000002600f rsp 16 c-8 same
 * (vocabulary in docs/unwind-format.md).  machine is the table's.
 * Returns the length, or -E2BIG when size is too small (64 is enough).
 */
int unwind_row_format(const struct unwind_row *row, uint16_t machine,
		      char *buf, size_t size);

#endif /* EMBER_UNWIND_H */
