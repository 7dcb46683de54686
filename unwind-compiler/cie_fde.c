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

#include <dwarf.h>
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
	const uint8_t *stop;	/* no entry is begun at or past it */
	bool stop_at_zero;	/* size unknown: a zero length ends it */
};

static void walk_init(struct walk *w, const struct unwind_section *s,
		      enum unwind_sec sec)
{
	w->sec = sec;
	w->start = w->pos = s->data;
	w->end = w->stop = s->data + s->size;
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
		if (p >= w->stop)
			return 0;
		if (unwind_read_un(&p, w->end, 4, &len))
			return BAD(b, "'%s' +0x%" PRIx64 ": entry length runs past the section end",
				   sec_name(w->sec), off);
		if (len != 0)
			break;
		if (w->stop_at_zero)
			return 0;
		w->pos = p; /* zero terminator or padding: keep walking */
	}
	e->is64 = len == 0xffffffff;
	if (e->is64 && unwind_read_un(&p, w->end, 8, &len))
		return BAD(b, "'%s' +0x%" PRIx64 ": 64-bit entry length runs past the section end",
			   sec_name(w->sec), off);
	if (len > (uint64_t)(w->end - p))
		return BAD(b, "'%s' +0x%" PRIx64 ": entry length 0x%" PRIx64 " runs past the section end (0x%zx)",
			   sec_name(w->sec), off, len, (size_t)(w->end - w->start));
	e->off = off;
	e->end = p + len;
	e->id_pos = p;
	if (unwind_read_un(&p, e->end, e->is64 ? 8 : 4, &e->id))
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

	if (unwind_read_uleb(pos, e->end, &len) ||
	    unwind_read_block(pos, e->end, len, &q))
		return BAD(b, "'%s' +0x%" PRIx64 ": CIE augmentation data runs past the entry",
			   sec_name(sec), e->off);
	qend = q + len;
	for (const char *c = aug + 1; *c; c++) {
		if (*c == 'S' || *c == 'B' || *c == 'G')
			cie->signal |= *c == 'S';
		else if (*c == 'L' || *c == 'R') {
			if (unwind_read_u8(&q, qend, &enc))
				goto truncated;
			if (*c == 'R')
				cie->fde_enc = enc;
		} else if (*c == 'P') {
			if (unwind_read_u8(&q, qend, &enc) ||
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
	    (unwind_read_u8(p, e->end, &cie->addr_size) ||
	     unwind_read_u8(p, e->end, &cie->seg_size)))
		goto truncated;
	EMBER_FAIL_IF(cie->addr_size != b->in->addr_size || cie->seg_size > 8, b->diag,
		      -UNWIND_ERR_BAD_CFI,
		      "'%s' +0x%" PRIx64 ": CIE address size %u, segment size %u unsupported",
		      sec_name(sec), e->off, cie->addr_size, cie->seg_size);
	if (unwind_read_uleb(p, e->end, &cie->code_align) ||
	    unwind_read_sleb(p, e->end, &cie->data_align))
		goto truncated;
	if (cie->version == 1) {
		uint8_t r;

		if (unwind_read_u8(p, e->end, &r))
			goto truncated;
		ra = r;
	} else if (unwind_read_uleb(p, e->end, &ra))
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
	if (unwind_read_u8(&p, e->end, &cie->version) ||
	    unwind_read_cstr(&p, e->end, &aug))
		return BAD(b, "'%s' +0x%" PRIx64 ": CIE header runs past the entry",
			   sec_name(sec), e->off);
	EMBER_FAIL_IF(cie->version != 1 && cie->version != 3 &&
			      (cie->version != 4 || sec == UNWIND_SEC_EH),
		      b->diag, -UNWIND_ERR_BAD_CFI,
		      "'%s' +0x%" PRIx64 ": CIE version %u unsupported", sec_name(sec), e->off,
		      cie->version);
	if (strcmp(aug, "eh") == 0 &&
	    unwind_read_un(&p, e->end, cie->addr_size, &skip))
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

/* The CIE at offset off; FDEs name the same CIE as the FDE before them
 * nearly always, so that one is tried first. */
static struct unwind_cie *find_cie(struct unwind_cfi *cfi, uint64_t off)
{
	size_t lo = 0, hi = cfi->ncies;

	if (cfi->hint < cfi->ncies && cfi->cies[cfi->hint].offset == off)
		return &cfi->cies[cfi->hint];

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cfi->cies[mid].offset < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo >= cfi->ncies || cfi->cies[lo].offset != off)
		return NULL;
	cfi->hint = lo;
	return &cfi->cies[lo];
}

/*
 * A CIE before the walk's start (a second half's, cie_fde_split.c): the
 * entry at off parsed here and kept in cfi->borrowed; its index in the
 * FDE is UNWIND_CIE_BORROWED | i until the halves are joined.  -EAGAIN
 * when off holds no CIE: the serial walk decides what that means.
 */
static int borrow_cie(struct unwind_build *b, enum unwind_sec sec, uint64_t off,
		      struct unwind_cie **out, uint32_t *index)
{
	struct unwind_cfi *cfi = &b->cfi[sec];
	struct walk w;
	struct entry e;
	struct unwind_cie cie;

	for (size_t i = 0; i < cfi->nborrowed; i++)
		if (cfi->borrowed[i].offset == off) {
			*out = &cfi->borrowed[i];
			*index = UNWIND_CIE_BORROWED | (uint32_t)i;
			return 0;
		}
	walk_init(&w, &b->in->sec[sec], sec);
	w.pos = w.start + off;
	if (walk_next(b, &w, &e) != 1 || !entry_is_cie(&e, sec) || parse_cie(b, sec, &e, &cie) ||
	    EMBER_VEC_PUSH(cfi->borrowed, cfi->nborrowed, cfi->borrowed_alloc, cie))
		return -EAGAIN;
	*out = &cfi->borrowed[cfi->nborrowed - 1];
	*index = UNWIND_CIE_BORROWED | (uint32_t)(cfi->nborrowed - 1);
	return 0;
}

/* The CIE an FDE entry points at, and its index (it stays valid while
 * this FDE is parsed; FDEs keep the index, since the array grows in one
 * pass). */
static int fde_cie(struct unwind_build *b, enum unwind_sec sec,
		   const struct entry *e, struct unwind_cie **out, uint32_t *index)
{
	uint64_t at = (uint64_t)(e->id_pos - b->in->sec[sec].data), off = e->id;
	struct unwind_cfi *cfi = &b->cfi[sec];

	if (sec == UNWIND_SEC_EH) {
		EMBER_FAIL_IF(e->id > at, b->diag, -UNWIND_ERR_BAD_CFI,
			      "'%s' +0x%" PRIx64 ": CIE pointer 0x%" PRIx64
			      " points before the section",
			      sec_name(sec), e->off, e->id);
		off = at - e->id;
	}
	if (off < cfi->from)
		return borrow_cie(b, sec, off, out, index);
	*out = find_cie(cfi, off);
	EMBER_FAIL_IF(!*out, b->diag, -UNWIND_ERR_BAD_CFI,
		      "'%s' +0x%" PRIx64 ": FDE names no CIE at 0x%" PRIx64, sec_name(sec),
		      e->off, off);
	*index = (uint32_t)(*out - cfi->cies);
	return 0;
}

/* pc_begin and pc_range; GCC's and clang's pcrel|sdata4 inline (a
 * call per pointer was a tenth of the parse). */
static int fde_span(const uint8_t **p, const uint8_t *end, uint8_t enc,
		    const struct unwind_ptr_ctx *pc, uint64_t *start, uint64_t *range)
{
	int32_t a, r;
	int err;

	if (enc != (DW_EH_PE_pcrel | DW_EH_PE_sdata4) || end - *p < 8) {
		err = unwind_read_encoded(p, end, enc, pc, start);
		return err ? err : unwind_read_encoded(p, end, enc & 0x0f, pc, range);
	}
	memcpy(&a, *p, 4);
	memcpy(&r, *p + 4, 4);
	*start = pc->sec_vaddr + (uint64_t)(*p - pc->sec_start) + (uint64_t)(int64_t)a;
	*range = (uint64_t)(int64_t)r;
	*p += 8;
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
	uint32_t cie_index;
	uint8_t enc;
	int err;

	err = fde_cie(b, sec, e, &cie, &cie_index);
	if (err)
		return err;
	struct unwind_ptr_ctx pc = { s->data, s->vaddr, 0, cie->addr_size };

	enc = sec == UNWIND_SEC_EH ? cie->fde_enc : 0;
	if (cie->seg_size && unwind_read_un(&p, e->end, cie->seg_size, &len))
		goto truncated;
	err = fde_span(&p, e->end, enc, &pc, &f->start, &range);
	if (err == -ENOTSUP)
		return BAD(b, "'%s' +0x%" PRIx64 ": FDE pointer encoding 0x%02x unsupported",
			   sec_name(sec), e->off, enc);
	if (err)
		goto truncated;
	if (cie->aug_z && (unwind_read_uleb(&p, e->end, &len) ||
			      unwind_read_block(&p, e->end, len, &aug)))
		goto truncated;
	EMBER_FAIL_IF(f->start + range < f->start, b->diag, -UNWIND_ERR_BAD_CFI,
		      "'%s' +0x%" PRIx64 ": FDE range 0x%" PRIx64 "+0x%" PRIx64 " wraps around",
		      sec_name(sec), e->off, f->start, range);
	f->end = f->start + range;
	f->insns = p;
	f->insns_len = (uint32_t)(e->end - p);
	f->cie = cie_index;
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

/*
 * One pass over the section from byte from, parsing the entries asked
 * for, until an entry would begin at or past byte to (or the end); *at:
 * where the next entry begins (to, or past it when an entry spans it).
 */
static int walk_section(struct unwind_build *b, enum unwind_sec sec,
			enum walk_what what, size_t from, size_t to, size_t *at)
{
	struct walk w;
	struct entry e = { 0 };
	int r;

	walk_init(&w, &b->in->sec[sec], sec);
	w.pos = w.start + from;
	w.stop = w.start + to;
	while ((r = walk_next(b, &w, &e)) > 0) {
		bool cie = entry_is_cie(&e, sec);

		if (!(what & (cie ? WALK_CIES : WALK_FDES)))
			continue;
		r = cie ? add_cie(b, sec, &e) : add_fde(b, sec, &e);
		if (r)
			return r;
	}
	*at = (size_t)(w.pos - w.start);
	return r;
}

/*
 * Room for n FDEs at once: one allocation, never copied while growing,
 * its untouched pages never backed.
 */
static int fdes_alloc(struct unwind_build *b, size_t n)
{
	if (n > SIZE_MAX / sizeof(*b->fdes))
		return -ENOMEM;
	b->fdes = ember_big_alloc(n * sizeof(*b->fdes));
	if (!b->fdes)
		return -ENOMEM;
	b->fdes_alloc = n;
	return 0;
}

/* Room for every FDE the input can hold: an FDE that parses takes at
 * least 10 bytes (length, CIE pointer, two 1-byte pointers). */
static int fdes_reserve(struct unwind_build *b)
{
	size_t n = 1;

	if (b->fdes)
		return 0;
	for (int i = 0; i < 2; i++)
		n += b->in->sec[i].data ? b->in->sec[i].size / 10 : 0;
	return fdes_alloc(b, n);
}

static int parse_check(struct unwind_build *b, enum unwind_sec sec)
{
	const struct unwind_section *s = &b->in->sec[sec];

	EMBER_FAIL_IF(s->size > UINT32_MAX, b->diag, -UNWIND_ERR_LIMIT,
		      "'%s': %zu bytes, more than 4 GiB", sec_name(sec), s->size);
	return fdes_reserve(b);
}

int unwind_cfi_parse_range(struct unwind_build *b, size_t from, size_t to,
			   size_t *at)
{
	const struct unwind_section *s = &b->in->sec[UNWIND_SEC_EH];
	int err = parse_check(b, UNWIND_SEC_EH);

	*at = from;
	if (err || !s->data)
		return err;
	return walk_section(b, UNWIND_SEC_EH, WALK_CIES | WALK_FDES, from, to, at);
}

int unwind_cfi_parse(struct unwind_build *b, enum unwind_sec sec)
{
	const struct unwind_section *s = &b->in->sec[sec];
	size_t at;
	int err;

	if (!s->data)
		return 0;
	/* .eh_frame CIE pointers point back: one pass sees each CIE before
	 * its FDEs.  A .debug_frame FDE may name a later CIE: CIEs first. */
	if (sec == UNWIND_SEC_EH)
		return unwind_cfi_parse_range(b, 0, s->size, &at);
	err = parse_check(b, sec);
	if (!err)
		err = walk_section(b, sec, WALK_CIES, 0, s->size, &at);
	return err ? err : walk_section(b, sec, WALK_FDES, 0, s->size, &at);
}

int unwind_cfi_parse_second_half(struct unwind_build *b, size_t from)
{
	const struct unwind_section *s = &b->in->sec[UNWIND_SEC_EH];
	size_t at;
	int err = fdes_alloc(b, (s->size - from) / 10 + 1);

	b->cfi[UNWIND_SEC_EH].from = from;
	return err ? err : walk_section(b, UNWIND_SEC_EH, WALK_CIES | WALK_FDES, from,
					s->size, &at);
}

/* ---- a second half (table_split.c) ------------------------------------------ */

/* Whether an .eh_frame entry plausibly begins at off: a 32-bit length
 * that fits, and a CIE id of 0 or a CIE pointer to an entry with id 0. */
static bool entry_plausible(const uint8_t *d, size_t size, size_t off, size_t *next)
{
	uint32_t len, id, cie_id;
	size_t cie;

	if (off + 8 > size)
		return false;
	memcpy(&len, d + off, 4);
	memcpy(&id, d + off + 4, 4);
	if (len < 8 || len == 0xffffffffu || len % 4 || len > size - off - 4)
		return false;
	if (id != 0) {
		if (id > off + 4)
			return false;
		cie = off + 4 - id;
		if (cie + 8 > size)
			return false;
		memcpy(&cie_id, d + cie + 4, 4);
		if (cie_id != 0)
			return false;
	}
	*next = off + 4 + len;
	return true;
}

size_t unwind_cfi_guess_boundary(const struct unwind_section *s, size_t near)
{
	const size_t chain = 16, window = (size_t)64 << 10;

	if (!s->data || !s->size_known)
		return 0;
	for (size_t off = (near + 3) & ~(size_t)3; off < near + window && off < s->size; off += 4) {
		size_t at = off, n = 0;

		while (n < chain && at < s->size && entry_plausible(s->data, s->size, at, &at))
			n++;
		if (n == chain)
			return off;
	}
	return 0;
}

/* ---- joining a second half ------------------------------------------------- */

bool unwind_cfi_lends(struct unwind_build *b, const struct unwind_build *h)
{
	const struct unwind_cfi *hc = &h->cfi[UNWIND_SEC_EH];

	for (size_t i = 0; i < hc->nborrowed; i++)
		if (!find_cie(&b->cfi[UNWIND_SEC_EH], hc->borrowed[i].offset))
			return false;
	return true;
}

/* b's index of the CIE at offset off (one unwind_cfi_lends() found). */
static uint32_t lent_index(struct unwind_cfi *a, uint64_t off)
{
	return (uint32_t)(find_cie(a, off) - a->cies);
}

int unwind_cfi_join(struct unwind_build *b, const struct unwind_build *h)
{
	struct unwind_cfi *a = &b->cfi[UNWIND_SEC_EH];
	const struct unwind_cfi *hc = &h->cfi[UNWIND_SEC_EH];
	size_t base = a->ncies;
	int err = 0;

	if (!unwind_cfi_lends(b, h) || b->nfdes + h->nfdes > b->fdes_alloc)
		return -EAGAIN; /* (the bound holds both halves: cannot happen) */
	for (size_t i = 0; i < h->nfdes; i++) {
		struct unwind_fde f = h->fdes[i];

		f.cie = f.cie & UNWIND_CIE_BORROWED
				? lent_index(a, hc->borrowed[f.cie & ~UNWIND_CIE_BORROWED].offset)
				: (uint32_t)(base + f.cie);
		b->fdes[b->nfdes++] = f;
	}
	for (size_t i = 0; i < hc->ncies && !err; i++)
		err = EMBER_VEC_PUSH(a->cies, a->ncies, a->cies_alloc, hc->cies[i]);
	if (!err)
		b->stats.fdes_dropped += h->stats.fdes_dropped;
	return err;
}
