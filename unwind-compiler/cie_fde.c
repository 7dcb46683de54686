/*
 * cie_fde.c - walk a CFI section into CIEs and FDEs: .debug_frame (DWARF
 * 5 §6.4.1, CIE versions 1, 3 and 4, 32- and 64-bit lengths) and
 * .eh_frame (LSB 5.0 "Exception Frames": CIE id 0, backward CIE
 * pointers, augmentation "z" with L/P/R/S/B/G, DW_EH_PE_* encoded
 * pointers).
 *
 * .eh_frame is read in one pass (an FDE's CIE pointer points back, at a
 * CIE already parsed); .debug_frame in two, CIEs first, since an FDE may
 * name a later CIE.  An FDE's CIE is found by offset.  Any
 * length, pointer or field that runs past its entry or section is
 * -UNWIND_ERR_BAD_CFI with a message naming the section, the offset and
 * the check: a corrupt section yields no table.  FDEs that describe no
 * code (empty, at address 0 (code removed by the linker), or outside the
 * binary's executable segments) are dropped and counted.  The instructions are only located here; cfa_program.c
 * runs them.
 */
#include "unwind_internal.h"

#include <inttypes.h>
#include <stdlib.h>

#define BAD(b, ...) EMBER_FAIL((b)->diag, -UNWIND_ERR_BAD_CFI, __VA_ARGS__)

static const char *sec_name(enum unwind_sec sec)
{
	return sec == UNWIND_SEC_EH ? ".eh_frame" : ".debug_frame";
}

/* One entry (CIE or FDE) of a section. */
struct entry {
	uint64_t off;		/* of the entry in the section */
	const uint8_t *id_pos;	/* its CIE id / CIE pointer field */
	const uint8_t *body;	/* after that field */
	const uint8_t *end;	/* end of the entry */
	uint64_t id;
	bool is64;		/* 64-bit DWARF format */
};

struct walk {
	enum unwind_sec sec;
	const uint8_t *start, *end;
	const uint8_t *pos;	/* next entry */
	bool stop_at_zero;	/* size unknown: a zero length ends it */
};

static void walk_init(struct walk *w, const struct unwind_section *s,
		      enum unwind_sec sec)
{
	w->sec = sec;
	w->start = w->pos = s->data;
	w->end = s->data + s->size;
	w->stop_at_zero = !s->size_known;
}

/* Next entry: 1 = *e filled, 0 = end of section, < 0 = error. */
static int walk_next(struct unwind_build *b, struct walk *w, struct entry *e)
{
	const uint8_t *p;
	uint64_t len, off;

	for (;;) {
		p = w->pos;
		off = (uint64_t)(p - w->start);
		if (p == w->end)
			return 0;
		if (ember_cur_uint(&p, w->end, 4, &len))
			return BAD(b, "'%s' +0x%" PRIx64 ": entry length runs past the section end",
				   sec_name(w->sec), off);
		if (len != 0)
			break;
		if (w->stop_at_zero)
			return 0;
		w->pos = p; /* zero terminator or padding: keep walking */
	}
	e->is64 = len == 0xffffffff;
	if (e->is64 && ember_cur_uint(&p, w->end, 8, &len))
		return BAD(b, "'%s' +0x%" PRIx64 ": 64-bit entry length runs past the section end",
			   sec_name(w->sec), off);
	if (len > (uint64_t)(w->end - p))
		return BAD(b, "'%s' +0x%" PRIx64 ": entry length 0x%" PRIx64 " runs past the section end (0x%zx)",
			   sec_name(w->sec), off, len, (size_t)(w->end - w->start));
	e->off = off;
	e->end = p + len;
	e->id_pos = p;
	if (ember_cur_uint(&p, e->end, e->is64 ? 8 : 4, &e->id))
		return BAD(b, "'%s' +0x%" PRIx64 ": entry too short for its CIE id",
			   sec_name(w->sec), off);
	e->body = p;
	w->pos = e->end;
	return 1;
}

static bool entry_is_cie(const struct entry *e, enum unwind_sec sec)
{
	if (sec == UNWIND_SEC_EH)
		return e->id == 0;
	return e->id == (e->is64 ? UINT64_MAX : 0xffffffffu);
}

/* The augmentation data of a "z" CIE: encodings and the 'S' flag. */
static int parse_cie_aug(struct unwind_build *b, enum unwind_sec sec,
			 const struct entry *e, const char *aug,
			 const uint8_t **pos, struct unwind_cie *cie)
{
	const struct unwind_section *s = &b->in->sec[sec];
	struct unwind_ptr_ctx pc = { s->data, s->vaddr, 0, cie->addr_size };
	const uint8_t *q, *qend;
	uint64_t len, skip;
	uint8_t enc;

	if (ember_cur_uleb(pos, e->end, &len) ||
	    ember_cur_bytes(pos, e->end, len, &q))
		return BAD(b, "'%s' +0x%" PRIx64 ": CIE augmentation data runs past the entry",
			   sec_name(sec), e->off);
	qend = q + len;
	for (const char *c = aug + 1; *c; c++) {
		if (*c == 'S' || *c == 'B' || *c == 'G')
			cie->signal |= *c == 'S';
		else if (*c == 'L' || *c == 'R') {
			if (ember_cur_u8(&q, qend, &enc))
				goto truncated;
			if (*c == 'R')
				cie->fde_enc = enc;
		} else if (*c == 'P') {
			if (ember_cur_u8(&q, qend, &enc) ||
			    unwind_read_encoded(&q, qend, enc & 0x0f, &pc, &skip))
				goto truncated;
		} else
			break; /* unknown: the rest is skipped by its length */
	}
	return 0;
truncated:
	return BAD(b, "'%s' +0x%" PRIx64 ": CIE augmentation '%s' does not fit its data",
		   sec_name(sec), e->off, aug);
}

/* Version, address size and alignment factors. */
static int parse_cie_fields(struct unwind_build *b, enum unwind_sec sec,
			    const struct entry *e, const uint8_t **p,
			    struct unwind_cie *cie)
{
	uint64_t ra;

	if (cie->version >= 4 &&
	    (ember_cur_u8(p, e->end, &cie->addr_size) ||
	     ember_cur_u8(p, e->end, &cie->seg_size)))
		goto truncated;
	EMBER_FAIL_IF(cie->addr_size != b->in->addr_size || cie->seg_size > 8, b->diag,
		      -UNWIND_ERR_BAD_CFI,
		      "'%s' +0x%" PRIx64 ": CIE address size %u, segment size %u unsupported",
		      sec_name(sec), e->off, cie->addr_size, cie->seg_size);
	if (ember_cur_uleb(p, e->end, &cie->code_align) ||
	    ember_cur_sleb(p, e->end, &cie->data_align))
		goto truncated;
	if (cie->version == 1) {
		uint8_t r;

		if (ember_cur_u8(p, e->end, &r))
			goto truncated;
		ra = r;
	} else if (ember_cur_uleb(p, e->end, &ra))
		goto truncated;
	cie->ra_reg = ra;
	return 0;
truncated:
	return BAD(b, "'%s' +0x%" PRIx64 ": CIE fields run past the entry",
		   sec_name(sec), e->off);
}

static int parse_cie(struct unwind_build *b, enum unwind_sec sec,
		     const struct entry *e, struct unwind_cie *cie)
{
	const uint8_t *p = e->body;
	const char *aug;
	uint64_t skip;
	int err;

	memset(cie, 0, sizeof(*cie));
	cie->offset = e->off;
	cie->sec = (uint8_t)sec;
	cie->addr_size = b->in->addr_size;
	cie->initial_err = 1;
	if (ember_cur_u8(&p, e->end, &cie->version) ||
	    ember_cur_cstr(&p, e->end, &aug))
		return BAD(b, "'%s' +0x%" PRIx64 ": CIE header runs past the entry",
			   sec_name(sec), e->off);
	EMBER_FAIL_IF(cie->version != 1 && cie->version != 3 &&
			      (cie->version != 4 || sec == UNWIND_SEC_EH),
		      b->diag, -UNWIND_ERR_BAD_CFI,
		      "'%s' +0x%" PRIx64 ": CIE version %u unsupported", sec_name(sec), e->off,
		      cie->version);
	if (strcmp(aug, "eh") == 0 &&
	    ember_cur_uint(&p, e->end, cie->addr_size, &skip))
		return BAD(b, "'%s' +0x%" PRIx64 ": CIE 'eh' data runs past the entry",
			   sec_name(sec), e->off);
	err = parse_cie_fields(b, sec, e, &p, cie);
	if (err)
		return err;
	cie->aug_z = aug[0] == 'z';
	if (cie->aug_z) {
		err = parse_cie_aug(b, sec, e, aug, &p, cie);
		if (err)
			return err;
	} else if (strcmp(aug, "eh") != 0) {
		/* without 'z' only flags that carry no data can be skipped
		 * (gas writes "S" into .debug_frame) */
		EMBER_FAIL_IF(aug[strspn(aug, "SBG")] != '\0', b->diag, -UNWIND_ERR_BAD_CFI,
			      "'%s' +0x%" PRIx64 ": CIE augmentation '%s' unsupported",
			      sec_name(sec), e->off, aug);
		cie->signal = strchr(aug, 'S') != NULL;
	}
	cie->insns = p;
	cie->insns_end = e->end;
	return 0;
}

static int add_cie(struct unwind_build *b, enum unwind_sec sec,
		   const struct entry *e)
{
	struct unwind_cfi *cfi = &b->cfi[sec];
	struct unwind_cie cie;
	int err = parse_cie(b, sec, e, &cie);

	if (err)
		return err;
	return EMBER_VEC_PUSH(cfi->cies, cfi->ncies, cfi->cies_alloc, cie);
}

static struct unwind_cie *find_cie(struct unwind_cfi *cfi, uint64_t off)
{
	size_t lo = 0, hi = cfi->ncies;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cfi->cies[mid].offset < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < cfi->ncies && cfi->cies[lo].offset == off ? &cfi->cies[lo] : NULL;
}

/* The CIE an FDE entry points at (it stays valid while this FDE is
 * parsed; FDEs keep its index, since the array grows in one pass). */
static int fde_cie(struct unwind_build *b, enum unwind_sec sec,
		   const struct entry *e, struct unwind_cie **out)
{
	uint64_t at = (uint64_t)(e->id_pos - b->in->sec[sec].data), off = e->id;

	if (sec == UNWIND_SEC_EH) {
		EMBER_FAIL_IF(e->id > at, b->diag, -UNWIND_ERR_BAD_CFI,
			      "'%s' +0x%" PRIx64 ": CIE pointer 0x%" PRIx64
			      " points before the section",
			      sec_name(sec), e->off, e->id);
		off = at - e->id;
	}
	*out = find_cie(&b->cfi[sec], off);
	EMBER_FAIL_IF(!*out, b->diag, -UNWIND_ERR_BAD_CFI,
		      "'%s' +0x%" PRIx64 ": FDE names no CIE at 0x%" PRIx64, sec_name(sec),
		      e->off, off);
	return 0;
}

/* pc_begin, pc_range, augmentation data, instructions. */
static int parse_fde(struct unwind_build *b, enum unwind_sec sec,
		     const struct entry *e, struct unwind_fde *f)
{
	const struct unwind_section *s = &b->in->sec[sec];
	const uint8_t *p = e->body, *aug;
	struct unwind_cie *cie;
	uint64_t range, len;
	uint8_t enc;
	int err;

	err = fde_cie(b, sec, e, &cie);
	if (err)
		return err;
	struct unwind_ptr_ctx pc = { s->data, s->vaddr, 0, cie->addr_size };

	enc = sec == UNWIND_SEC_EH ? cie->fde_enc : 0;
	if (cie->seg_size && ember_cur_uint(&p, e->end, cie->seg_size, &len))
		goto truncated;
	err = unwind_read_encoded(&p, e->end, enc, &pc, &f->start);
	if (!err)
		err = unwind_read_encoded(&p, e->end, enc & 0x0f, &pc, &range);
	if (err == -ENOTSUP)
		return BAD(b, "'%s' +0x%" PRIx64 ": FDE pointer encoding 0x%02x unsupported",
			   sec_name(sec), e->off, enc);
	if (err)
		goto truncated;
	if (cie->aug_z && (ember_cur_uleb(&p, e->end, &len) ||
			      ember_cur_bytes(&p, e->end, len, &aug)))
		goto truncated;
	EMBER_FAIL_IF(f->start + range < f->start, b->diag, -UNWIND_ERR_BAD_CFI,
		      "'%s' +0x%" PRIx64 ": FDE range 0x%" PRIx64 "+0x%" PRIx64 " wraps around",
		      sec_name(sec), e->off, f->start, range);
	f->end = f->start + range;
	f->insns = p;
	f->insns_len = (uint32_t)(e->end - p);
	f->cie = (uint32_t)(cie - b->cfi[sec].cies);
	f->offset = (uint32_t)e->off;
	f->sec = (uint8_t)sec;
	f->dropped = false;
	return 0;
truncated:
	return BAD(b, "'%s' +0x%" PRIx64 ": FDE fields run past the entry",
		   sec_name(sec), e->off);
}

/* An FDE, kept if it describes code of this binary. */
static int add_fde(struct unwind_build *b, enum unwind_sec sec,
		   const struct entry *e)
{
	struct unwind_fde f;
	int err = parse_fde(b, sec, e, &f);

	if (err)
		return err;
	if (f.start == f.end || f.start == 0 || f.start < b->in->code_lo ||
	    f.end > b->in->code_hi) {
		b->stats.fdes_dropped++;
		return 0;
	}
	return EMBER_VEC_PUSH(b->fdes, b->nfdes, b->fdes_alloc, f);
}

enum walk_what { WALK_CIES = 1, WALK_FDES = 2 };

/* One pass over the section, parsing the entries asked for. */
static int walk_section(struct unwind_build *b, enum unwind_sec sec,
			enum walk_what what)
{
	struct walk w;
	struct entry e = { 0 };
	int r;

	walk_init(&w, &b->in->sec[sec], sec);
	while ((r = walk_next(b, &w, &e)) > 0) {
		bool cie = entry_is_cie(&e, sec);

		if (!(what & (cie ? WALK_CIES : WALK_FDES)))
			continue;
		r = cie ? add_cie(b, sec, &e) : add_fde(b, sec, &e);
		if (r)
			return r;
	}
	return r;
}

/*
 * Room for every FDE the input can hold, at once: an FDE that parses
 * takes at least 10 bytes (length, CIE pointer, two 1-byte pointers).
 * One allocation, never copied while growing, its untouched pages never
 * backed.
 */
static int fdes_reserve(struct unwind_build *b)
{
	size_t n = 1;

	if (b->fdes)
		return 0;
	for (int i = 0; i < 2; i++)
		n += b->in->sec[i].data ? b->in->sec[i].size / 10 : 0;
	if (n > SIZE_MAX / sizeof(*b->fdes))
		return -ENOMEM;
	b->fdes = malloc(n * sizeof(*b->fdes));
	if (!b->fdes)
		return -ENOMEM;
	b->fdes_alloc = n;
	return 0;
}

int unwind_cfi_parse(struct unwind_build *b, enum unwind_sec sec)
{
	const struct unwind_section *s = &b->in->sec[sec];
	int err;

	if (!s->data)
		return 0;
	EMBER_FAIL_IF(s->size > UINT32_MAX, b->diag, -UNWIND_ERR_LIMIT,
		      "'%s': %zu bytes, more than 4 GiB", sec_name(sec), s->size);
	err = fdes_reserve(b);
	if (err)
		return err;
	/* .eh_frame CIE pointers point back: one pass sees each CIE before
	 * its FDEs.  A .debug_frame FDE may name a later CIE: CIEs first. */
	if (sec == UNWIND_SEC_EH)
		return walk_section(b, sec, WALK_CIES | WALK_FDES);
	err = walk_section(b, sec, WALK_CIES);
	return err ? err : walk_section(b, sec, WALK_FDES);
}
