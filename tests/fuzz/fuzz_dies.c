/*
 * fuzz_dies.c - a structure-aware libFuzzer target for the DIE reader
 * (elf-dwarf/dwarf_die.c and friends, through the symbolizer's index
 * build): its inputs are valid ELF files with DWARF (the seeds), and its
 * mutator changes, in place, what the reader's bounds depend on:
 *
 *   - abbreviation codes, in .debug_abbrev and in the DIEs of .debug_info
 *     (to codes that exist, to others, to 0);
 *   - forms and attribute names of abbreviations (to any form, to
 *     DW_AT_sibling; the sizes of every value after it move);
 *   - children flags;
 *   - DW_AT_sibling values (to 0, backwards, the unit's end and just
 *     past it, far out, random);
 *   - unit lengths (shorter, longer, past the section, the DWARF 64 and
 *     reserved escapes).
 *
 * Byte-level fuzzing of whole files (fuzz_symbolizer) rarely reaches
 * these: the robustness test's 300 mutated ELFs never hit the sibling
 * read of issue 13.  Mutations keep the file's size and layout, so the
 * ELF stays readable and the DWARF reaches the reader.  Where things are
 * is found with libelf and the ELF/DWARF layer on each call (a file
 * whose DWARF no longer parses far gets fewer sites, and byte mutations).
 *
 * Each input is then indexed by the reader and by libdw's walk, and the
 * two must agree (index_compare.h, as in fuzz_symbolizer).
 *
 * LLVMFuzzerCustomMutator is the mutator; replay.c calls it too (with
 * --mutate N, seeds 0..N-1), so the plain test build replays N
 * deterministic structure-aware mutations of each seed.  Crashers go to
 * corpus/dies/ as crash-<what>.
 */
#include "symbolizer.h"
#include "sym_internal.h"
#include "common.h"
#include "elfdw.h"
#include "index_compare.h"

#include <dwarf.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
			       unsigned int seed);
/* libFuzzer's own mutator; absent in the replay build. */
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size)
	__attribute__((weak));

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_index_both(data, size);
	return 0;
}

/* ---- where things are ------------------------------------------------ */

enum site_kind {
	SITE_ABBREV_CODE,	/* a code in .debug_abbrev */
	SITE_DIE_CODE,		/* a DIE's code in .debug_info */
	SITE_FORM,
	SITE_ATTR,
	SITE_CHILDREN,
	SITE_SIBLING,		/* a DW_AT_sibling value */
	SITE_UNIT_LEN,
	SITE_KINDS
};

struct site {
	size_t at;		/* in the image */
	uint8_t len;		/* bytes of the value (a LEB128's) */
	uint32_t unit_end;	/* SITE_SIBLING: its unit's size */
};

#define MAX_SITES 4096

struct sites {
	struct site v[SITE_KINDS][MAX_SITES];
	size_t n[SITE_KINDS];
	uint64_t codes[64];	/* codes seen, to mutate to */
	size_t ncodes;
};

static void site_add(struct sites *s, enum site_kind k, size_t at, size_t len,
		     uint32_t unit_end)
{
	if (s->n[k] < MAX_SITES && len >= 1 && len <= 8)
		s->v[k][s->n[k]++] = (struct site){ at, (uint8_t)len, unit_end };
}

/* A section's bytes in the image (not compressed, not NOBITS). */
static bool section_span(Elf *elf, const char *name, size_t size, size_t *off,
			 size_t *len)
{
	GElf_Shdr sh;

	if (!elfdw_section_by_name(elf, name, &sh) || sh.sh_type == SHT_NOBITS ||
	    (sh.sh_flags & SHF_COMPRESSED) || sh.sh_offset > size ||
	    sh.sh_size > size - sh.sh_offset)
		return false;
	*off = (size_t)sh.sh_offset;
	*len = (size_t)sh.sh_size;
	return true;
}

/* Every table of .debug_abbrev, read byte by byte: codes, children
 * flags, attribute names and forms. */
static void abbrev_sites(const uint8_t *img, size_t off, size_t len, struct sites *s)
{
	const uint8_t *p = img + off, *end = p + len, *q;
	uint64_t v, name, form;
	int64_t sv;

	while (p < end) {
		q = p;
		if (ember_cur_uleb(&p, end, &v))
			return;
		site_add(s, SITE_ABBREV_CODE, (size_t)(q - img), (size_t)(p - q), 0);
		if (v == 0)
			continue; /* a table's end; another may follow */
		if (s->ncodes < 64)
			s->codes[s->ncodes++] = v;
		if (ember_cur_uleb(&p, end, &v) || p >= end)
			return;
		site_add(s, SITE_CHILDREN, (size_t)(p - img), 1, 0);
		p++;
		do {
			q = p;
			if (ember_cur_uleb(&p, end, &name))
				return;
			site_add(s, SITE_ATTR, (size_t)(q - img), (size_t)(p - q), 0);
			q = p;
			if (ember_cur_uleb(&p, end, &form))
				return;
			site_add(s, SITE_FORM, (size_t)(q - img), (size_t)(p - q), 0);
			if (form == DW_FORM_implicit_const && ember_cur_sleb(&p, end, &sv))
				return;
		} while (name || form);
	}
}

static const struct elfdw_schema siblings_only = { 0 };

/* The DIEs of one unit in order: their codes and DW_AT_sibling values. */
static void unit_die_sites(const uint8_t *img, const struct elfdw_sections *sec,
			   size_t info_off, struct elfdw_unit *u, struct sites *s)
{
	struct elfdw_abbrevs t = { 0 };
	const uint8_t *p = sec->info.data + u->die_off, *end = sec->info.data + u->end;
	struct elfdw_die d;

	if (u->offset_size != 4 ||
	    elfdw_abbrevs_read(&t, &siblings_only, &sec->abbrev, u->abbrev_off,
			       u->addr_size, u->version, NULL))
		goto out;
	for (int n = 0; p < end && n < 100000; n++) {
		const uint8_t *q = p, *r = p;
		uint64_t code;

		if (*p == 0) {
			p++;
			continue;
		}
		if (ember_cur_uleb(&r, end, &code))
			break;
		site_add(s, SITE_DIE_CODE, info_off + (size_t)(q - sec->info.data),
			 (size_t)(r - q), 0);
		if (elfdw_die_read(sec, u, &t, &p, ELFDW_ALL_KINDS, &d))
			break;
		if (elfdw_die_has(&d, ELFDW_SLOT_SIBLING)) {
			int size = elfdw_form_size(d.v[ELFDW_SLOT_SIBLING].form, u->addr_size,
						   u->version);

			if (size > 0)
				site_add(s, SITE_SIBLING,
					 info_off + (size_t)u->off + d.v[ELFDW_SLOT_SIBLING].at,
					 (size_t)size, (uint32_t)(u->end - u->off));
		}
	}
out:
	elfdw_abbrevs_release(&t);
}

/* The units of .debug_info: their lengths, and their DIEs' sites. */
static void info_sites(const uint8_t *img, size_t off, size_t len,
		       const struct elfdw_sections *sec, struct sites *s)
{
	uint64_t at = 0;

	while (at + 4 <= len) {
		struct elfdw_unit u;
		uint32_t ulen;

		memcpy(&ulen, img + off + at, 4);
		site_add(s, SITE_UNIT_LEN, off + (size_t)at, 4, 0);
		if (ulen >= 0xfffffff0 || elfdw_unit_header(&sec->info, at, &u, NULL))
			return;
		unit_die_sites(img, sec, off, &u, s);
		at = u.end;
	}
}

/* The sites of the image's DWARF; false when it has none to mutate. */
static bool find_sites(const uint8_t *img, size_t size, struct sites *s)
{
	size_t ioff, ilen, aoff, alen;
	struct elfdw_sections sec = { 0 };
	Elf *elf;
	bool found = false;

	memset(s->n, 0, sizeof(s->n));
	s->ncodes = 0;
	elf_version(EV_CURRENT);
	elf = elf_memory((char *)img, size);
	if (elf && elf_kind(elf) == ELF_K_ELF &&
	    section_span(elf, ".debug_info", size, &ioff, &ilen) &&
	    section_span(elf, ".debug_abbrev", size, &aoff, &alen)) {
		sec.info = (struct elfdw_sect){ img + ioff, ilen };
		sec.abbrev = (struct elfdw_sect){ img + aoff, alen };
		abbrev_sites(img, aoff, alen, s);
		info_sites(img, ioff, ilen, &sec, s);
		found = true;
	}
	elf_end(elf);
	return found;
}

/* ---- mutating them -------------------------------------------------- */

static uint64_t rng_next(uint64_t *r)
{
	*r ^= *r << 13;
	*r ^= *r >> 7;
	*r ^= *r << 17;
	return *r;
}

/* Write v into a site of len bytes: fixed-size little-endian, or a
 * LEB128 of exactly len bytes (v cut to what fits). */
static void write_value(uint8_t *p, size_t len, uint64_t v, bool leb)
{
	if (!leb) {
		for (size_t i = 0; i < len; i++)
			p[i] = (uint8_t)(v >> (8 * i));
		return;
	}
	if (len < 10)
		v &= (UINT64_C(1) << (7 * len)) - 1;
	for (size_t i = 0; i < len; i++, v >>= 7)
		p[i] = (uint8_t)((v & 0x7f) | (i + 1 < len ? 0x80 : 0));
}

/* Forms of every size (and some no reader knows). */
static const uint16_t forms[] = {
	DW_FORM_addr, DW_FORM_block2, DW_FORM_block4, DW_FORM_data2, DW_FORM_data4,
	DW_FORM_data8, DW_FORM_string, DW_FORM_block, DW_FORM_block1, DW_FORM_data1,
	DW_FORM_flag, DW_FORM_sdata, DW_FORM_strp, DW_FORM_udata, DW_FORM_ref_addr,
	DW_FORM_ref1, DW_FORM_ref2, DW_FORM_ref4, DW_FORM_ref8, DW_FORM_ref_udata,
	DW_FORM_indirect, DW_FORM_sec_offset, DW_FORM_exprloc, DW_FORM_flag_present,
	DW_FORM_strx, DW_FORM_addrx, DW_FORM_ref_sup4, DW_FORM_strp_sup,
	DW_FORM_data16, DW_FORM_line_strp, DW_FORM_ref_sig8, DW_FORM_implicit_const,
	DW_FORM_loclistx, DW_FORM_rnglistx, DW_FORM_ref_sup8, DW_FORM_strx1,
	DW_FORM_strx2, DW_FORM_strx3, DW_FORM_strx4, DW_FORM_addrx1, DW_FORM_addrx2,
	DW_FORM_addrx3, DW_FORM_addrx4, 0x2d, 0x7f, 0x1f01, 0x1f02, 0x1f20, 0x1f21,
};

/* A new value for a site of kind k. */
static uint64_t new_value(const struct sites *s, enum site_kind k,
			  const struct site *st, uint64_t old, uint64_t *r)
{
	uint64_t x = rng_next(r);

	switch (k) {
	case SITE_ABBREV_CODE:
	case SITE_DIE_CODE:
		if (x % 4 == 0)
			return x >> 8;
		return s->ncodes ? s->codes[(x >> 8) % s->ncodes] + (x % 3 == 0) : 0;
	case SITE_FORM:
		return forms[(x >> 8) % (sizeof(forms) / sizeof(forms[0]))];
	case SITE_ATTR:
		return x % 2 ? DW_AT_sibling : (x >> 8) % 0x90;
	case SITE_CHILDREN:
		return x % 3;
	case SITE_SIBLING: {
		const uint64_t picks[] = { 0, old - 1, old + 1 + (x >> 60), st->unit_end,
					   st->unit_end - 1, st->unit_end + (x >> 61),
					   0x7fffffff, 0xffffffff, (uint64_t)1 << 30,
					   x >> 8, old / 2 };

		return picks[(x >> 4) % (sizeof(picks) / sizeof(picks[0]))];
	}
	default: { /* SITE_UNIT_LEN */
		const uint64_t picks[] = { 0, 1, old - 1 - (x >> 62), old + 1 + (x >> 62),
					   old * 2, 0xfffffff0, 0xffffffff, 0xfffffff5,
					   x >> 32, 7, 11 };

		return picks[(x >> 4) % (sizeof(picks) / sizeof(picks[0]))];
	}
	}
}

/* The value at a site, as written. */
static uint64_t read_value(const uint8_t *p, size_t len, bool leb)
{
	uint64_t v = 0;

	for (size_t i = 0; i < len; i++)
		v |= leb ? (uint64_t)(p[i] & 0x7f) << (7 * i) : (uint64_t)p[i] << (8 * i);
	return v;
}

/* One mutation of a site of a kind the image has; false if it has none. */
static bool mutate_site(uint8_t *data, const struct sites *s, uint64_t *r)
{
	size_t kinds[SITE_KINDS], nk = 0;
	enum site_kind k;
	const struct site *st;
	bool leb;

	for (size_t i = 0; i < SITE_KINDS; i++)
		if (s->n[i])
			kinds[nk++] = i;
	if (!nk)
		return false;
	k = (enum site_kind)kinds[rng_next(r) % nk];
	st = &s->v[k][rng_next(r) % s->n[k]];
	leb = k != SITE_SIBLING && k != SITE_UNIT_LEN && k != SITE_CHILDREN;
	write_value(data + st->at, st->len,
		    new_value(s, k, st, read_value(data + st->at, st->len, leb), r), leb);
	return true;
}

/* Bytes changed at random (the replay build's stand-in for libFuzzer's
 * mutator). */
static void mutate_bytes(uint8_t *data, size_t size, uint64_t *r)
{
	for (int i = 0; i < 4 && size; i++)
		data[rng_next(r) % size] = (uint8_t)rng_next(r);
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
			       unsigned int seed)
{
	struct sites *s = malloc(sizeof(*s)); /* 460 KB: not on the stack */
	uint64_t r = 0x9e3779b97f4a7c15ull ^ ((uint64_t)seed << 1 | 1);
	unsigned n = 1 + (unsigned)(rng_next(&r) % 4);
	bool structured = s && rng_next(&r) % 8 != 0 && find_sites(data, size, s);

	for (unsigned i = 0; structured && i < n; i++)
		structured = mutate_site(data, s, &r) || i > 0;
	free(s);
	if (structured)
		return size;
	if (LLVMFuzzerMutate)
		return LLVMFuzzerMutate(data, size, max_size);
	mutate_bytes(data, size, &r);
	return size;
}
