/*
 * unwind_internal.h - what only unwind-compiler/ sees.
 *
 * The compiler runs in phases, one file each:
 *   elf_input.c     ELF image -> the CFI sections (struct unwind_input)
 *   eh_frame_hdr.c  .eh_frame_hdr: locate .eh_frame without section headers
 *   eh_pointer.c    DW_EH_PE_* encoded pointers (the cursors are elfdw.h's)
 *   cie_fde.c       walk a CFI section into CIEs and FDEs
 *   cfa_program.c   run an FDE's CFA program into rows (DWARF 5 §6.4.2)
 *   cfa_expr.c      classify DWARF expressions (PLT, deref, breg)
 *   rule.c          interpreter state -> 16-byte rule; rule interning
 *   fde_order.c     order the FDEs, bridge gaps, run them in order
 *   table_write.c   rows -> pages, palettes, push/pop merges, the table
 *   table_read.c    verify a table, look rows up, iterate them
 *   dump.c          the text form of a row
 *   compile.c       the public entry points
 *   errors.c        the component's error strings
 *
 * Rows are never stored whole: the interpreter emits them in address
 * order straight into the table writer, which keeps one 64 KiB page of
 * rows at a time.  Invariants of the emitted row stream: pc strictly
 * increasing, no two neighbours with the same rule, the last row END.
 */
#ifndef EMBER_UNWIND_INTERNAL_H
#define EMBER_UNWIND_INTERNAL_H

#include "unwind.h"
#include "common.h"
#include "elfdw.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define UNWIND_EM_X86_64 62
#define UNWIND_EM_AARCH64 183

/* ---- cursor reads (elfdw.h) and pointer encodings (eh_pointer.c) --------
 *
 * Every parser of outside input here reads through the ELF/DWARF layer's
 * cursors: (pos, end, out), advancing *pos only on success, never at or
 * past end whatever a length says; -ENODATA when the data ends first,
 * -ERANGE for a LEB128 value that does not fit 64 bits.  -ENOTSUP: a
 * pointer encoding unwind_read_encoded does not apply.
 */

/* What DW_EH_PE_pcrel and DW_EH_PE_datarel are relative to. */
struct unwind_ptr_ctx {
	const uint8_t *sec_start;  /* bytes of the section being read */
	uint64_t sec_vaddr;	   /* its address */
	uint64_t data_base;	   /* datarel base (.eh_frame_hdr), 0 = none */
	uint8_t addr_size;	   /* of DW_EH_PE_absptr */
};

/* A pointer in DW_EH_PE_* encoding enc (DW_EH_PE_omit is -ENOTSUP). */
int unwind_read_encoded(const uint8_t **pos, const uint8_t *end, uint8_t enc,
			const struct unwind_ptr_ctx *c, uint64_t *out);

/* ---- the input: CFI sections of one binary (elf_input.c) ------------------ */

enum unwind_sec { UNWIND_SEC_EH = 0, UNWIND_SEC_DEBUG = 1 };

struct unwind_section {
	const uint8_t *data;	/* NULL: absent */
	size_t size;
	uint64_t vaddr;		/* sh_addr (.debug_frame: 0) */
	bool size_known;	/* false: located through .eh_frame_hdr, the
				   walk stops at the zero terminator */
};

struct unwind_input {
	uint16_t machine;	/* UNWIND_EM_* */
	uint8_t addr_size;	/* 8 */
	unsigned flags;		/* enum unwind_compile_flags */
	struct unwind_section sec[2];	/* by enum unwind_sec */
	uint64_t code_lo, code_hi;	/* the binary's code; FDEs not inside
					   [code_lo, code_hi) are dropped */
	uint8_t build_id[EMBER_BUILD_ID_MAX];
	size_t build_id_len;
};

struct unwind_elf;	/* an open ELF image (elf_input.c) */

/* Open an ELF file (fd stays the caller's: mapped, or read with pread
 * when someone else may truncate it meanwhile) or a borrowed memory image. */
int unwind_elf_open_fd(int fd, bool mapped, struct ember_diag *d, struct unwind_elf **out);
int unwind_elf_open_mem(const void *image, size_t size, struct ember_diag *d,
			struct unwind_elf **out);
void unwind_elf_free(struct unwind_elf *e);
/* Fill in from the binary (and its debug file, or NULL); the sections
 * point into the images and are valid until unwind_elf_free().  A
 * compressed section is inflated only up to max_inflate bytes (-E2BIG). */
int unwind_elf_input(struct unwind_elf *bin, struct unwind_elf *dbg,
		     unsigned flags, uint64_t max_inflate, struct ember_diag *d,
		     struct unwind_input *in);

/* .eh_frame_hdr at vaddr: the address of .eh_frame it names. */
int unwind_hdr_eh_frame_ptr(const uint8_t *hdr, size_t size, uint64_t vaddr,
			    uint64_t *eh_frame_vaddr);

/* ---- interpreter state and rules (cfa_program.c, cfa_expr.c, rule.c) ------ */

/* One register's rule while running a program (offsets unscaled to s64). */
struct unwind_col {
	uint8_t kind;		/* enum unwind_reg_kind */
	uint64_t reg;
	int64_t off;
};

/* The rule columns the format keeps: CFA, return address, frame pointer. */
struct unwind_state {
	uint8_t cfa_kind;	/* enum unwind_cfa_kind; INVALID until defined */
	bool ra_signed;		/* arm64 DW_CFA_AARCH64_negate_ra_state */
	uint64_t cfa_reg;
	int64_t cfa_off;
	int64_t cfa_aux;
	struct unwind_col ra, fp;
};

struct unwind_arch {
	uint16_t machine;
	uint8_t sp_reg, fp_reg;	/* DWARF numbers: x86-64 7, 6; arm64 31, 29 */
};
int unwind_arch_get(uint16_t machine, struct unwind_arch *out);

/* Classify a DW_CFA_def_cfa_expression block into s's CFA columns. */
void unwind_expr_cfa(const uint8_t *expr, size_t len, uint16_t machine,
		     struct unwind_state *s);
/* Classify a DW_CFA_expression (val = false) or DW_CFA_val_expression. */
void unwind_expr_reg(const uint8_t *expr, size_t len, bool val,
		     struct unwind_col *c);

/* State -> rule; what does not fit becomes INVALID, never truncated. */
void unwind_rule_from_state(const struct unwind_state *s,
			    struct unwind_rule *r);

/* Interned rules: id = index into rules[]. */
struct unwind_rule_set {
	struct unwind_rule *rules;
	size_t n, alloc;
	uint32_t *slots;	/* open addressing: id + 1, 0 = empty */
	size_t nslots;
	unsigned bits;		/* nslots == 1 << bits */
	struct ember_words_key key; /* drawn when the slots are first made */
	size_t probes;		/* slots stepped past, for tests */
};
void unwind_rules_init(struct unwind_rule_set *s);
void unwind_rules_release(struct unwind_rule_set *s);
/* Id of r (added if new), or a negative errno. */
int64_t unwind_rules_intern(struct unwind_rule_set *s, const struct unwind_rule *r);

/* ---- CIEs and FDEs (cie_fde.c) ------------------------------------------------ */

struct unwind_cie {
	uint64_t offset;	/* in its section */
	const uint8_t *insns, *insns_end;
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;
	uint8_t version, fde_enc, addr_size, seg_size;
	uint8_t sec;		/* enum unwind_sec */
	bool aug_z;		/* augmentation data present ('z') */
	bool signal;		/* 'S': signal trampoline */
	int initial_err;	/* 1 = not run yet, 0 = initial is valid */
	bool initial_unsupported; /* initial instructions not understood */
	struct unwind_state initial; /* after the initial instructions */
};

/* 40 bytes: libLLVM has 95k of them. */
struct unwind_fde {
	uint64_t start, end;	/* [start, end) */
	const uint8_t *insns;
	uint32_t insns_len;
	uint32_t cie;		/* index into b->cfi[sec].cies (which may
				   move while the section is parsed) */
	uint32_t offset;	/* in its section */
	uint8_t sec;		/* enum unwind_sec */
	bool dropped;		/* overlapped (fde_order.c) */
};

/* One parsed section: its CIEs (sorted by offset). */
struct unwind_cfi {
	struct unwind_cie *cies;
	size_t ncies, cies_alloc;
};

struct unwind_build;

/* Walk section sec of the input; append its FDEs to b->fdes. */
int unwind_cfi_parse(struct unwind_build *b, enum unwind_sec sec);

/* ---- the build ------------------------------------------------------------------ */

struct unwind_writer;	/* the table being written (table_write.c) */

struct unwind_build {
	const struct unwind_input *in;
	struct ember_diag *diag;
	struct unwind_arch arch;
	struct unwind_cfi cfi[2];	/* by enum unwind_sec */
	struct unwind_fde *fdes;	/* in (section, offset) order */
	size_t nfdes, fdes_alloc;
	uint32_t *order;		/* indexes of the FDEs kept, by address */
	size_t norder;
	struct unwind_writer *writer;	/* where rows go */
	struct unwind_compile_stats stats;
};

void unwind_build_init(struct unwind_build *b, const struct unwind_input *in,
		       struct ember_diag *d);

/* The CIE of an FDE (stable once its section is parsed). */
static inline struct unwind_cie *unwind_fde_cie(const struct unwind_build *b,
						const struct unwind_fde *f)
{
	return &b->cfi[f->sec].cies[f->cie];
}
void unwind_build_release(struct unwind_build *b);

/* Run fde's program, emitting rows for [fde->start, end). */
int unwind_program_run(struct unwind_build *b, const struct unwind_fde *fde,
		       uint64_t end);
/* The CIE's initial state (computed on first use). */
int unwind_cie_initial(struct unwind_build *b, struct unwind_cie *cie);

/* Order the FDEs and run them all, in address order (fde_order.c). */
int unwind_table_build(struct unwind_build *b);

/*
 * The row sink (table_write.c): rows arrive in strictly increasing pc
 * order; a row whose rule equals the previous row's is dropped; pages
 * are encoded as soon as a row lands past them.  0 or a negative errno.
 */
/* The table is appended to out: the header placeholder now, page data as
 * pages complete, the tables and the header at the end. */
int unwind_writer_new(struct unwind_build *b, struct ember_buf *out);
int unwind_rows_push(struct unwind_build *b, uint64_t pc,
		     const struct unwind_rule *r);
/* Encode the last page, the tables, the header and the checksum. */
int unwind_writer_finish(struct unwind_build *b);
void unwind_writer_free(struct unwind_writer *w);

/* Whole pipeline on prepared sections (compile.c). */
int unwind_compile_input(const struct unwind_input *in, struct ember_diag *d,
			 struct unwind_compile_stats *stats,
			 struct ember_buf *out);

/* Register name as readelf prints it ("rsp", "r10", "x29"). */
const char *unwind_reg_name(uint16_t machine, unsigned reg, char *buf,
			    size_t size);

#endif /* EMBER_UNWIND_INTERNAL_H */
