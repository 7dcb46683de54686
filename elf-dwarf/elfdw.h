/*
 * elfdw.h - Ember's ELF/DWARF layer: the one place that reads ELF notes,
 * segments and sections and DWARF byte by byte, under the symbolizer,
 * elf-inspect, the unwind compiler and the eBPF agent.
 *
 * On libelf and ember_common only: no libdw.  What it holds:
 *   - it reads bytes through common.h's bounds-checked cursors
 *     (ember_cur_*: fixed-size little-endian values, LEB128 of DWARF 5
 *     §7.6, NUL-terminated strings, blocks);
 *   - ELF: the GNU build-ID note, .gnu_debuglink, PT_LOAD segments, the
 *     executable address ranges, sections by name (elf_note.c,
 *     elf_layout.c);
 *   - DWARF 2-5 (§7.5): unit headers and bases, abbreviation tables,
 *     forms, one DIE, the next sibling, range lists, and the header of a
 *     line-number program (§6.2.4) (dwarf_*.c, line_header.c).
 *
 * The DWARF readers are generic: which attributes a DIE keeps (its slots)
 * and how tags are grouped (kinds) come from the caller's schema.  They
 * read little-endian 32-bit DWARF only, and say so (-EOPNOTSUPP) for
 * anything else they meet, so that a caller with libdw can hand that to
 * libdw; they never guess.
 *
 * Errors (negated):
 *   -ENODATA     the bytes end before the value does (also *pos > end)
 *   -ERANGE      a LEB128 value that does not fit 64 bits
 *   -EINVAL      any other malformation (an offset outside its section,
 *                a code defined twice, a reference before its unit...)
 *   -EOPNOTSUPP  valid input this layer does not read (DWARF 64 DIEs, an
 *                unknown form, a base the producer left to a default)
 *   -ENOENT      a DIE without the attribute asked for; a missing section
 *   -ENOMEM, -E2BIG
 * The first four are the input's fault, not the machine's
 * (elfdw_err_input).  Why these codes: the cursors tell truncated
 * (-ENODATA) from overflowing (-ERANGE), so that a message can say which
 * (the unwind compiler's readers did already), and neither is -EINVAL,
 * which the readers above them keep for checks of meaning; none of them
 * is -ENOENT, which means "absent" and would read as "not found".
 *
 * Ownership: every pointer handed out points into the caller's section
 * bytes (or libelf's), valid as long as those are; tables the readers
 * allocate (abbreviations, line-header tables) are freed with their
 * _release.  Readers with a struct ember_diag * explain a rejection there
 * (NULL: not wanted); they never print.
 */
#ifndef EMBER_ELFDW_H
#define EMBER_ELFDW_H

#include "common.h"

#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Whether err says "this input" (malformed or not handled here) rather
 * than "this machine" (-ENOMEM): a caller with another reader (libdw)
 * hands the input to it on these. */
static inline bool elfdw_err_input(int err)
{
	return err == -ENODATA || err == -ERANGE || err == -EINVAL ||
	       err == -EOPNOTSUPP;
}

/* ---- cursors ------------------------------------------------------------
 *
 * The layer reads through common.h's bounded cursors (ember_cur_*): each
 * reads one value at *pos, never at or past end whatever a length says,
 * and rejects *pos > end; on success it advances *pos and writes *out, on
 * failure it leaves both alone.  A LEB128 number past 64 bits is -ERANGE
 * (libdw drops the extra bits instead; the symbolizer hands a unit whose
 * numbers the layer rejects to libdw, so nothing is lost, and nothing
 * reads a truncated value as if it were the real one).
 */

/* ---- ELF (elf_note.c, elf_layout.c) --------------------------------------- */

/* Bytes of a section, borrowed from libelf (or the caller). */
struct elfdw_sect {
	const uint8_t *data;
	size_t size;
};

/*
 * The GNU build ID (NT_GNU_BUILD_ID, owner "GNU"), found as
 * dwelf_elf_gnu_build_id finds it: in the SHT_NOTE sections when the
 * file has section headers, else in its PT_NOTE segments.  Copied into
 * out: returns its length (> 0), 0 when there is none (or it is empty),
 * -E2BIG when it is longer than size, -EINVAL when the headers do not
 * read.
 */
int elfdw_build_id(Elf *elf, uint8_t *out, size_t size);

/*
 * The .gnu_debuglink of elf, as dwelf_elf_gnu_debuglink reads it: *name
 * the NUL-terminated file name at its start (pointing into libelf's
 * data, valid until elf_end), *crc the CRC-32 in the section's last 4
 * bytes, in the file's byte order.  0; -ENOENT without the section;
 * -EINVAL when it holds no name and CRC.
 */
int elfdw_debuglink(Elf *elf, const char **name, uint32_t *crc);

/* The section called name (its header in *sh when sh is set), or NULL. */
Elf_Scn *elfdw_section_by_name(Elf *elf, const char *name, GElf_Shdr *sh);

/*
 * The bytes of the section libdw reads for the named ones (a
 * NULL-terminated list, e.g. ".debug_info" and ".zdebug_info"): the
 * first of them in file order that has bytes as they are now (not
 * NOBITS, not still compressed: SHF_COMPRESSED, or a GNU .zdebug section
 * still starting "ZLIB") and is in no section group (SHF_GROUP, which
 * libdw ignores outside the group).  libdw decompresses the sections it
 * uses when it opens a file, so after dwarf_begin_elf these are libdw's
 * bytes.  {NULL, 0} when none is.
 */
struct elfdw_sect elfdw_section_loaded(Elf *elf, const char *const *names);

/* ---- compressed sections ------------------------------------------------
 *
 * A compressed section says how big it is inflated (an SHF_COMPRESSED
 * section's Elf64_Chdr/Elf32_Chdr ch_size; a GNU .zdebug section's
 * big-endian size after "ZLIB"), and libelf allocates that much when it
 * inflates it, whatever the compressed bytes really hold: a few
 * kilobytes of file can claim gigabytes.  Every reader that inflates
 * (elfdw_section_read here, the unwind compiler's .debug_frame, the
 * symbolizer's string tables, and libdw's dwarf_begin_elf, which
 * inflates every DWARF section it knows) checks that size against a
 * limit first, through elfdw_section_inflated_size.  The callers'
 * default limit is ELFDW_MAX_INFLATE_DEFAULT.
 */
#define ELFDW_MAX_INFLATE_DEFAULT ((uint64_t)1 << 30) /* 1 GiB */

/*
 * The size scn inflates to, as its header says: 1 and *size for a
 * compressed section, 0 for one stored as it is (or NOBITS), -EINVAL for
 * an unreadable header.  Reads nothing but headers.
 */
int elfdw_section_inflated_size(Elf *elf, Elf_Scn *scn, uint64_t *size);
/*
 * Inflate scn in place (elf_compress, elf_compress_gnu) when it is
 * compressed, unless its inflated size exceeds max_size: -E2BIG, with
 * the section, its size and the limit in d.  libelf rewrites the section
 * header in place: elf must be writable (ELF_C_READ, ELF_C_READ_MMAP,
 * ELF_C_READ_MMAP_PRIVATE, or a private memory image).  0 (also for a
 * section stored as it is); -EINVAL when it does not inflate.
 */
int elfdw_section_inflate(Elf *elf, Elf_Scn *scn, uint64_t max_size,
			  struct ember_diag *d);
/*
 * Before anything is inflated: every compressed section named in names
 * (a NULL-terminated list), or every .debug_* and .zdebug_* section when
 * names is NULL (what libdw's dwarf_begin_elf inflates), inflates to at
 * most max_size bytes: 0, and their inflated sizes added up in *total
 * (when set); else -E2BIG explained in d as elfdw_section_inflate does.
 */
int elfdw_inflate_check(Elf *elf, const char *const *names, uint64_t max_size,
			uint64_t *total, struct ember_diag *d);

/*
 * The bytes of the first of the named sections that has bytes, inflated
 * first when it is compressed (elfdw_section_inflate: not past max_size).
 * 0; -ENOENT when none of the names is a section with bytes; -E2BIG and
 * -EINVAL as elfdw_section_inflate, explained in d.
 */
int elfdw_section_read(Elf *elf, const char *const *names, uint64_t max_size,
		       struct elfdw_sect *out, struct ember_diag *d);

/*
 * The first bytes of the first of the named sections with bytes, into
 * buf[0..size): *got of them (fewer when the section is shorter), and
 * *total, the size of the whole section (inflated).  A compressed
 * section (SHF_COMPRESSED with zlib, or a GNU .zdebug one) is inflated
 * only as far as size bytes: nothing is allocated, nothing of elf
 * rewritten, so a header can be read from any image.  0; -ENOENT;
 * -EINVAL when the compressed bytes do not inflate; -EOPNOTSUPP for
 * another compression.
 */
int elfdw_section_head(Elf *elf, const char *const *names, uint8_t *buf,
		       size_t size, size_t *got, uint64_t *total);

/* A PT_LOAD segment. */
struct elfdw_load {
	uint64_t vaddr, memsz, offset, filesz;
	uint32_t flags;		/* PF_X, PF_W, PF_R */
};

/* fn for each PT_LOAD segment in program-header order; a non-zero fn
 * return stops the walk and is returned.  -EINVAL for unreadable
 * program headers. */
int elfdw_each_load(Elf *elf, int (*fn)(void *arg, const struct elfdw_load *l),
		    void *arg);

/*
 * Address ranges [lo, hi), e.g. where a file's code is.  Invariant:
 * lo < hi for each; sorted only after elfdw_ranges_sort.
 */
struct elfdw_range {
	uint64_t lo, hi;
};

struct elfdw_ranges {
	struct elfdw_range *r;
	size_t n, alloc;
};

void elfdw_ranges_release(struct elfdw_ranges *r);
/* Add [lo, hi) unless it is empty: 0 or -ENOMEM (an int (*)(void *,
 * uint64_t, uint64_t), so that it can collect a DIE's ranges). */
int elfdw_ranges_add(void *ranges, uint64_t lo, uint64_t hi);
/* By lo. */
void elfdw_ranges_sort(struct elfdw_ranges *r);
/* Whether one range holds all of [lo, hi); true for an empty set (a file
 * without section headers: nothing to judge by).  A linear scan: these
 * sets are a few ranges. */
bool elfdw_ranges_contain(const struct elfdw_ranges *r, uint64_t lo, uint64_t hi);

/* The executable sections (SHF_ALLOC and SHF_EXECINSTR, of non-zero size;
 * NOBITS too, as in a debug file) appended to out: 0, -EINVAL for an
 * unreadable section header, -ENOMEM. */
int elfdw_exec_sections(Elf *elf, struct elfdw_ranges *out);
/* The executable (PF_X) PT_LOAD segments appended to out. */
int elfdw_exec_segments(Elf *elf, struct elfdw_ranges *out);

/* ---- DWARF: sections and units (dwarf_unit.c) ------------------------------ */

/* The sections the DWARF readers use (decompressed). */
struct elfdw_sections {
	struct elfdw_sect info, abbrev, str, line_str, str_offsets, addr,
		ranges, rnglists, line;
};

/* Each of them as elfdw_section_loaded finds it (.zdebug_* too). */
void elfdw_sections_loaded(Elf *elf, struct elfdw_sections *s);
/* Each of them by elfdw_section_read (none inflated past max_size);
 * absent ones are {NULL, 0}.  0 or elfdw_section_read's first error but
 * -ENOENT, explained in d. */
int elfdw_sections_read(Elf *elf, uint64_t max_size, struct elfdw_sections *s,
			struct ember_diag *d);

/* A unit of .debug_info (DWARF 5 §7.5.1). */
struct elfdw_unit {
	uint64_t off, end;	/* its bytes in .debug_info: [off, end) */
	uint64_t die_off;	/* its unit DIE, right after the header */
	uint64_t abbrev_off;
	uint64_t unit_id;	/* dwo_id, or type signature (0: none) */
	uint64_t type_off;	/* type units: the type DIE, from off */
	uint8_t version, unit_type, addr_size, offset_size;
	/* From the unit DIE (elfdw_unit_open); UINT64_MAX = absent. */
	uint64_t base;		/* base address of range lists: low_pc,
				   else entry_pc, else 0 (as libdw) */
	uint64_t addr_base, str_off_base, rnglists_base;
	uint32_t die_tag;
	bool split;		/* the unit DIE has split-DWARF attributes */
};

/*
 * The header of the unit at offset off of info: 32- or 64-bit, DWARF
 * 2-5 (before 5 its type is DW_UT_compile).  -ENODATA when the unit runs
 * past the section or the header past the unit, -EINVAL for a reserved
 * length, -EOPNOTSUPP for a version or DWARF 5 unit type it cannot read.
 * The bases are unset (UINT64_MAX) until elfdw_unit_open.
 */
int elfdw_unit_header(const struct elfdw_sect *info, uint64_t off,
		      struct elfdw_unit *u, struct ember_diag *d);

/*
 * The DWARF version of the unit whose first bytes are head[0..len) in a
 * section of size bytes (e.g. read by elfdw_section_head): its length
 * (32- or 64-bit) and version only, checked as libdw's dwarf_next_unit
 * checks them.  -ENODATA, -EINVAL (a reserved length), -EOPNOTSUPP (a
 * version but 2-5).
 */
int elfdw_unit_version(const uint8_t *head, size_t len, uint64_t size,
		       uint8_t *version, struct ember_diag *d);

/* The start and end of u's bytes. */
static inline const uint8_t *elfdw_unit_start(const struct elfdw_sections *s,
					      const struct elfdw_unit *u)
{
	return s->info.data + u->off;
}

static inline const uint8_t *elfdw_unit_end(const struct elfdw_sections *s,
					    const struct elfdw_unit *u)
{
	return s->info.data + u->end;
}

/* ---- DWARF: the schema, abbreviations, DIEs (dwarf_abbrev.c, dwarf_die.c) -
 *
 * A DIE is read into slots: for each attribute its abbreviation lists
 * that the schema keeps, where its value is and its form.  Slots below
 * ELFDW_SLOT_USER are the layer's own (it steps by the sibling, reads the
 * unit bases and range lists from them); the schema maps other
 * attributes to ELFDW_SLOT_USER.. ELFDW_MAX_SLOTS - 1.  The schema also
 * sorts tags into kinds (< 32): the walk of a caller asks for DIEs by
 * kind and reads whole (all slots) only those of the kinds it says.
 */
enum elfdw_slot {
	ELFDW_NOSLOT = 0,
	ELFDW_SLOT_SIBLING,
	ELFDW_SLOT_LOW_PC,
	ELFDW_SLOT_HIGH_PC,
	ELFDW_SLOT_RANGES,
	ELFDW_SLOT_ENTRY_PC,
	ELFDW_SLOT_ADDR_BASE,
	ELFDW_SLOT_STR_OFFSETS_BASE,
	ELFDW_SLOT_RNGLISTS_BASE,
	ELFDW_SLOT_SPLIT,	/* DW_AT_dwo_name or a GNU split-DWARF attribute */
	ELFDW_SLOT_USER,	/* the first slot of a schema */
	ELFDW_MAX_SLOTS = 32,
};

#define ELFDW_KIND_OTHER 0	/* a kind no walk wants: skipped unread */
#define ELFDW_ALL_KINDS (~0u)

struct elfdw_schema {
	/* The slot keeping attribute name (>= ELFDW_SLOT_USER), or 0. */
	uint8_t (*attr_slot)(uint64_t name);
	/* The kind of tag, < 32. */
	uint8_t (*tag_kind)(uint64_t tag);
	/* Kinds (1 << kind) whose DIEs are read whole often: their
	 * abbreviations get a capture list (the slots' offsets, when all
	 * are fixed), so such a DIE is read without a look at its values. */
	uint32_t capture_kinds;
	/* Slots (1 << slot) of which a DIE records the first it has in
	 * attribute order (struct elfdw_die's first_slot), e.g. the two origins. */
	uint32_t first_mask;
};

/* An attribute of an abbreviation, as the reader needs it: 8 bytes, for
 * there are hundreds of thousands in a big program. */
struct elfdw_spec {
	uint16_t form;		/* DW_FORM_* (0xffff when unknown) */
	int8_t size;		/* fixed size of the value, or -1 */
	uint8_t slot;		/* enum elfdw_slot or a schema slot */
	uint32_t implicit;	/* DW_FORM_implicit_const: its value's index
				   in the table's implicits[] */
};

/* A step of skipping a DIE's values: fixed bytes, then one value whose
 * size is in the data (var: enum elfdw_skip_var). */
struct elfdw_skip_op {
	uint16_t fixed;
	uint8_t var;
};

enum elfdw_skip_var {
	ELFDW_SKIP_NONE = 0,
	ELFDW_SKIP_LEB,		/* ULEB128 or SLEB128 */
	ELFDW_SKIP_STRING,
	ELFDW_SKIP_BLOCK1,
	ELFDW_SKIP_BLOCK2,
	ELFDW_SKIP_BLOCK4,
	ELFDW_SKIP_BLOCK,	/* ULEB128 length: block, exprloc */
	ELFDW_SKIP_INDIRECT,
};

struct elfdw_abbrev {
	uint64_t code;
	uint32_t tag;
	uint8_t kind;		/* the schema's */
	bool children;
	bool bad;		/* a form of unknown size: unreadable */
	int32_t sibling_at;	/* offset of a fixed-position DW_AT_sibling, or -1 */
	uint16_t sibling_form;
	uint32_t first, n;	/* its specs in the table's specs[] */
	uint32_t op_first, nops; /* its skip program in the table's ops[] */
	/* Its slots' values at fixed offsets from its first value, when all
	 * are (caps_fixed): caps[cap_first..+ncaps), first of each slot. */
	uint32_t cap_first, ncaps, cap_mask;
	uint8_t first_slot;	/* as in struct elfdw_die */
	bool caps_fixed;
};

/* Where a slot's value is in a DIE of one abbreviation. */
struct elfdw_cap {
	uint8_t slot;
	uint16_t form;
	uint32_t at;		/* offset from the DIE's first value; for
				   DW_FORM_implicit_const, as in elfdw_val */
};

/*
 * One abbreviation table (.debug_abbrev, §7.5.3) parsed for one kind of
 * unit (the sizes of some forms depend on the unit's address size and
 * version) under one schema, with a plan per abbreviation: the slot of
 * each attribute, the size of each value whose form has a fixed size, a
 * skip program in which each run of fixed-size values is one step, the
 * place of a fixed-position DW_AT_sibling and the capture list.
 * Invariant: v[] is sorted by code; dense means v[i].code == i + 1.
 */
struct elfdw_abbrevs {
	const struct elfdw_schema *schema;
	/* The schema's slot of each attribute below 0x90, worked out once
	 * for the struct (a table is parsed again into the same struct), so
	 * that a spec is a lookup, not a call; for slots_of. */
	const struct elfdw_schema *slots_of;
	uint8_t slot[0x90];
	uint64_t off, end;		/* the table's bytes: [off, end) */
	uint8_t addr_size, version;	/* addr_size 0: nothing parsed */
	bool dense;
	struct elfdw_abbrev *v;
	size_t n, alloc;
	struct elfdw_spec *specs;
	size_t nspecs, specs_alloc;
	struct elfdw_skip_op *ops;
	size_t nops, ops_alloc;
	struct elfdw_cap *caps;
	size_t ncaps, caps_alloc;
	int64_t *implicits;
	size_t nimplicits, implicits_alloc;
};

/*
 * Parse the table at off of sect into t (whose arrays are reused: a
 * zeroed struct the first time).  -EINVAL for a malformed table (a code
 * twice, a table without its end), -ENODATA when it runs past the
 * section.  An abbreviation with a form of unknown size is kept, marked
 * bad: a DIE of it cannot be read.  On failure t->addr_size is 0.
 */
int elfdw_abbrevs_read(struct elfdw_abbrevs *t, const struct elfdw_schema *schema,
		       const struct elfdw_sect *sect, uint64_t off,
		       uint8_t addr_size, uint8_t version, struct ember_diag *d);
void elfdw_abbrevs_release(struct elfdw_abbrevs *t);
const struct elfdw_abbrev *elfdw_abbrev_search(const struct elfdw_abbrevs *t,
					       uint64_t code);
/* The abbreviation of code, or NULL. */
static inline const struct elfdw_abbrev *
elfdw_abbrev_find(const struct elfdw_abbrevs *t, uint64_t code)
{
	if (t->dense)
		return code - 1 < t->n ? &t->v[code - 1] : NULL;
	return elfdw_abbrev_search(t, code);
}

/* A kept attribute value: where it is in its unit, and its form (8
 * bytes: a DIE keeps a score of them, and a walk a DIE a level). */
struct elfdw_val {
	uint32_t at;		/* offset from the unit's start; for
				   DW_FORM_implicit_const the value's index
				   in the DIE's implicits[] */
	uint16_t form;
};

/* A DIE as read: its abbreviation and the attributes kept in slots. */
struct elfdw_die {
	const struct elfdw_unit *unit;
	const struct elfdw_abbrev *ab;	/* NULL for a null entry */
	const int64_t *implicits;	/* of the table it was read with: read
					   its values while that table lives */
	uint64_t off;			/* in .debug_info */
	const uint8_t *end;		/* first byte after its attributes */
	uint32_t have;			/* 1 << slot for each kept attribute */
	uint8_t first_slot;		/* the first slot of the schema's
					   first_mask it has, in attribute
					   order; 0 if none */
	struct elfdw_val v[ELFDW_MAX_SLOTS];
};

static inline bool elfdw_die_has(const struct elfdw_die *d, unsigned slot)
{
	return d->have & (1u << slot);
}

/*
 * The abbreviation of the DIE at *pos (not a null entry); *pos moves
 * past the code.  -EINVAL for an unknown code, -EOPNOTSUPP for an
 * abbreviation with a form of unknown size.
 */
static inline int elfdw_die_abbrev(const struct elfdw_abbrevs *t,
				   const uint8_t **pos, const uint8_t *end,
				   const struct elfdw_abbrev **out)
{
	const uint8_t *p = *pos;
	const struct elfdw_abbrev *ab;
	uint64_t code;
	int err = ember_cur_uleb(&p, end, &code);

	/* A null entry is a single 0 byte here; 0 spelled longer is not one
	 * for libdw either. */
	if (err)
		return err;
	ab = code ? elfdw_abbrev_find(t, code) : NULL;
	if (!ab)
		return -EINVAL;
	if (ab->bad)
		return -EOPNOTSUPP;
	*pos = p;
	*out = ab;
	return 0;
}

/*
 * Read the DIE at *pos of unit u (t: the unit's table): all its slots
 * when its kind is in full (a mask of 1 << kind), else only what finding
 * its end needs (the sibling).  *pos moves past its values.  Null
 * entries (a 0 byte at *pos) are for the caller to see first.
 */
int elfdw_die_read(const struct elfdw_sections *s, const struct elfdw_unit *u,
		   const struct elfdw_abbrevs *t, const uint8_t **pos,
		   unsigned full, struct elfdw_die *d);
/*
 * The next DIE of a list of siblings at *pos whose kind is in want (a
 * mask of 1 << kind), read into d as elfdw_die_read reads it: returns 0.
 * The DIEs before it are stepped over with their subtrees, as libdw's
 * dwarf_siblingof does (by DW_AT_sibling where a DIE has one).  At the
 * end of the list returns 1, *pos past its null entry (or at the unit's
 * end).
 */
int elfdw_next_child(const struct elfdw_sections *s, const struct elfdw_unit *u,
		     const struct elfdw_abbrevs *t, const uint8_t **pos,
		     unsigned want, unsigned full, struct elfdw_die *d);
/* Where the next sibling of d starts (its DW_AT_sibling, or past its
 * subtree), as libdw's dwarf_siblingof finds it. */
int elfdw_die_after(const struct elfdw_sections *s, const struct elfdw_abbrevs *t,
		    const struct elfdw_die *d, const uint8_t **next);

/*
 * Read unit u's DIE (at die_off; t: its table) with every slot into *cu
 * (when set) and the bases it gives the unit's values: the base address
 * of its range lists, DW_AT_addr_base, DW_AT_str_offsets_base,
 * DW_AT_rnglists_base; u->split when it has split-DWARF attributes (the
 * caller decides).  -EOPNOTSUPP for DWARF 64 or an address size but 4
 * and 8.
 */
int elfdw_unit_open(const struct elfdw_sections *s, struct elfdw_unit *u,
		    const struct elfdw_abbrevs *t, struct elfdw_die *cu);

/* ---- DWARF: values (dwarf_form.c) -----------------------------------------
 *
 * Read as libdw's dwarf_formudata, dwarf_formaddr, dwarf_formstring and
 * dwarf_formref_die read them, for the forms handled here; any other form
 * is -EOPNOTSUPP; a slot the DIE lacks is -ENOENT.  Strings point into
 * the sections.
 */

/* Size of a value of form: >= 0 fixed, -1 in the data, -2 unknown form. */
int elfdw_form_size(unsigned form, uint8_t addr_size, uint8_t version);
/* Step over a value of form at *pos. */
int elfdw_form_skip(const uint8_t **pos, const uint8_t *end, unsigned form,
		    uint8_t addr_size, uint8_t version);
/* A constant (data1-8, udata, sdata, implicit_const). */
int elfdw_val_const(const struct elfdw_sections *s, const struct elfdw_die *d,
		    unsigned slot, uint64_t *out);
/* An address (addr, addrx*). */
int elfdw_val_addr(const struct elfdw_sections *s, const struct elfdw_die *d,
		   unsigned slot, uint64_t *out);
/* A string (string, strp, line_strp, strx*). */
int elfdw_val_str(const struct elfdw_sections *s, const struct elfdw_die *d,
		  unsigned slot, const char **out);
/* The section offset of the DIE a reference points to. */
int elfdw_val_ref(const struct elfdw_sections *s, const struct elfdw_die *d,
		  unsigned slot, uint64_t *out);
/* An offset into another section (DW_FORM_sec_offset; data4/data8
 * before DWARF 4). */
int elfdw_val_secoff(const struct elfdw_sections *s, const struct elfdw_die *d,
		     unsigned slot, uint64_t *out);
/* The same reference read from a value of form at p of unit u. */
int elfdw_form_ref(const struct elfdw_sections *s, const struct elfdw_unit *u,
		   unsigned form, const uint8_t *p, uint64_t *out);
/* Entry idx of the unit's part of .debug_addr (DW_AT_addr_base). */
int elfdw_addrx(const struct elfdw_sections *s, const struct elfdw_unit *u,
		uint64_t idx, uint64_t *out);

/* ---- DWARF: range lists (dwarf_rnglist.c) ---------------------------------
 *
 * The ranges of a DIE as libdw's dwarf_ranges lists them: low_pc and
 * high_pc, else the list DW_AT_ranges points to (.debug_ranges before
 * DWARF 5, .debug_rnglists from 5 on).  fn sees every range, empty ones
 * too; its non-zero return stops the list and is returned.
 */
typedef int (*elfdw_range_fn)(void *arg, uint64_t lo, uint64_t hi);
int elfdw_die_ranges(const struct elfdw_sections *s, const struct elfdw_die *d,
		     elfdw_range_fn fn, void *arg);

/* ---- DWARF: line-program headers (line_header.c) ---------------------------
 *
 * The header of a line-number program (DWARF 2-5, §6.2.4), for a caller
 * that runs the program (the symbolizer) or lists its files (elf-inspect).
 * The tables are as the header has them: DWARF 5 directory 0 is the
 * unit's directory and file numbers start at 0; before 5 the unit's
 * directory is implicit (index 0) and dirs[0] is directory 1.
 */
struct elfdw_line_file {
	const char *name;	/* into the sections */
	uint64_t dir;		/* directory index as written */
};

struct elfdw_line_header {
	uint64_t off, end;		/* the unit in .debug_line: [off, end) */
	const uint8_t *program, *program_end;	/* its opcodes */
	uint8_t version, offset_size, addr_size, min_inst, max_ops;
	uint8_t line_range, opcode_base;
	int8_t line_base;
	bool default_stmt;
	const uint8_t *std_lengths;	/* opcode_base - 1 operand counts */
	const char **dirs;		/* NULL without ELFDW_LINE_TABLES */
	size_t ndirs;
	struct elfdw_line_file *files;
	size_t nfiles;
	uint64_t strings;		/* bytes of strings the tables named in
					   the string sections */
};

/* The strings a header's tables may name in .debug_line_str and
 * .debug_str: this many bytes per byte of the tables, plus the minimum
 * (a table of 8-byte entries of 60-byte paths needs 8 a byte). */
#define ELFDW_LINE_STRINGS_PER_BYTE 64
#define ELFDW_LINE_STRINGS_MIN ((uint64_t)64 << 10)

enum elfdw_line_flags {
	ELFDW_LINE_TABLES = 1 << 0,	/* read the directory and file tables */
};

/*
 * Read the header at offset off of s->line (strings of DWARF 5 entries
 * from s->line_str and s->str).  What it allocates and reads is bounded
 * by the input: a table's count is checked against the bytes left before
 * any allocation, and the strings its entries name against
 * ELFDW_LINE_STRINGS_PER_BYTE times the tables' bytes (-E2BIG past it).
 * -ENODATA, -ERANGE, -EINVAL, -E2BIG (explained in d), -ENOMEM.  On
 * failure h holds nothing to release.
 */
int elfdw_line_header_read(const struct elfdw_sections *s, uint64_t off,
			   unsigned flags, struct elfdw_line_header *h,
			   struct ember_diag *d);
void elfdw_line_header_release(struct elfdw_line_header *h);

#endif /* EMBER_ELFDW_H */
