/*
 * elfdw.h - Ember's ELF/DWARF layer: the one place that reads ELF notes,
 * segments and sections and DWARF byte by byte, under the symbolizer,
 * elf-inspect and the unwind compiler (and the eBPF agent to come).
 *
 * On libelf and ember_common only: no libdw.  What it holds:
 *   - bounds-checked cursors: fixed-size little-endian values, LEB128
 *     (DWARF 5 §7.6), NUL-terminated strings, blocks (cursor inlines here);
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
 * The first three are what elfdw_err_input() calls malformed: cursors
 * say which of truncated and overflowing, so that a diagnosis can too;
 * the readers above them use -EINVAL for the checks of meaning.
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

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the cursors read little-endian values with memcpy"
#endif

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
 * (pos, end, out): each reads one value at *pos, never at or past end
 * whatever a length says, and rejects *pos > end; on success it advances
 * *pos and writes *out, on failure it leaves both alone.
 */

/* Whether n bytes are left at pos. */
static inline bool elfdw_has(const uint8_t *pos, const uint8_t *end, uint64_t n)
{
	return pos <= end && (uint64_t)(end - pos) >= n;
}

static inline int elfdw_skip(const uint8_t **pos, const uint8_t *end, uint64_t n)
{
	if (!elfdw_has(*pos, end, n))
		return -ENODATA;
	*pos += n;
	return 0;
}

static inline int elfdw_read_u8(const uint8_t **pos, const uint8_t *end,
				uint8_t *out)
{
	if (*pos >= end)
		return -ENODATA;
	*out = *(*pos)++;
	return 0;
}

/* An unsigned little-endian value of n bytes, 1 <= n <= 8 (-EINVAL
 * otherwise). */
static inline int elfdw_read_un(const uint8_t **pos, const uint8_t *end,
				unsigned n, uint64_t *out)
{
	uint64_t v = 0;
	uint32_t v4;
	uint16_t v2;

	if (n - 1 > 7)
		return -EINVAL;
	if (!elfdw_has(*pos, end, n))
		return -ENODATA;
	switch (n) { /* constant sizes: no call to memcpy */
	case 1:
		v = **pos;
		break;
	case 2:
		memcpy(&v2, *pos, 2);
		v = v2;
		break;
	case 4:
		memcpy(&v4, *pos, 4);
		v = v4;
		break;
	case 8:
		memcpy(&v, *pos, 8);
		break;
	default:
		memcpy(&v, *pos, n);
		break;
	}
	*pos += n;
	*out = v;
	return 0;
}

/*
 * A LEB128 number of any length (the slow path of the readers below):
 * -ERANGE when it does not fit 64 bits.  Bytes past the 64th bit may
 * only repeat zero (unsigned) or the sign (signed): padding producers
 * write, which changes no value.
 */
int elfdw_read_leb(const uint8_t **pos, const uint8_t *end, bool is_signed,
		   uint64_t *out);

static inline int elfdw_read_uleb(const uint8_t **pos, const uint8_t *end,
				  uint64_t *out)
{
	if (*pos < end && !(**pos & 0x80)) { /* the common one-byte case */
		*out = *(*pos)++;
		return 0;
	}
	return elfdw_read_leb(pos, end, false, out);
}

static inline int elfdw_read_sleb(const uint8_t **pos, const uint8_t *end,
				  int64_t *out)
{
	uint64_t v;
	int err;

	if (*pos < end && !(**pos & 0x80)) {
		uint8_t b = *(*pos)++;

		*out = (b & 0x40) ? (int64_t)b - 0x80 : (int64_t)b;
		return 0;
	}
	err = elfdw_read_leb(pos, end, true, &v);
	if (!err)
		*out = (int64_t)v;
	return err;
}

/* Step over a LEB128 number without decoding it: only its end is
 * checked (a skipped value is no value, however long; libdw steps over
 * the same bytes). */
static inline int elfdw_skip_leb(const uint8_t **pos, const uint8_t *end)
{
	const uint8_t *p = *pos;

	if (p > end)
		return -ENODATA;
	do {
		if (p >= end)
			return -ENODATA;
	} while (*p++ & 0x80);
	*pos = p;
	return 0;
}

/* A NUL-terminated string that ends before end. */
static inline int elfdw_read_cstr(const uint8_t **pos, const uint8_t *end,
				  const char **out)
{
	const uint8_t *nul = *pos < end ? memchr(*pos, 0, (size_t)(end - *pos))
					: NULL;

	if (!nul)
		return -ENODATA;
	*out = (const char *)*pos;
	*pos = nul + 1;
	return 0;
}

/* len bytes: *out points at them. */
static inline int elfdw_read_block(const uint8_t **pos, const uint8_t *end,
				   uint64_t len, const uint8_t **out)
{
	if (!elfdw_has(*pos, end, len))
		return -ENODATA;
	*out = *pos;
	*pos += len;
	return 0;
}

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
 * The bytes of the first of the named sections (a NULL-terminated list)
 * that has them as they are now: not NOBITS, not still compressed
 * (SHF_COMPRESSED, or a GNU .zdebug section still starting "ZLIB").
 * libdw decompresses the sections it uses when it opens a file, so after
 * dwarf_begin_elf these are libdw's bytes.  {NULL, 0} when none is.
 */
struct elfdw_sect elfdw_section_loaded(Elf *elf, const char *const *names);

/*
 * The same, decompressing the section first when it is compressed
 * (elf_compress, elf_compress_gnu), unless its inflated size exceeds
 * max_size: -E2BIG.  libelf rewrites the section header in place: elf
 * must be writable (ELF_C_READ_MMAP, ELF_C_READ_MMAP_PRIVATE, or a
 * private memory image).  0; -ENOENT when none of the names is a section
 * with bytes; -EINVAL when decompression fails.
 */
int elfdw_section_read(Elf *elf, const char *const *names, uint64_t max_size,
		       struct elfdw_sect *out);

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

#endif /* EMBER_ELFDW_H */
