/*
 * dwarf_rnglist.c - the address ranges of a DIE, as
 * libdw's dwarf_ranges lists them: DW_AT_low_pc with DW_AT_high_pc (an
 * address, or an offset from low_pc since DWARF 4) when both read, else
 * the range list DW_AT_ranges points to: .debug_ranges before DWARF 5
 * (DWARF 4 §2.17.3: address pairs, base selection, (0, 0) at the end),
 * .debug_rnglists from DWARF 5 on (§2.17.3 and §7.25: DW_RLE_* entries,
 * reached by offset or, with DW_FORM_rnglistx, through the unit's offset
 * table at DW_AT_rnglists_base).
 */
#include "elfdw_internal.h"

static bool is_addr_form(unsigned form)
{
	return form == DW_FORM_addr || form == DW_FORM_addrx ||
	       (form >= DW_FORM_addrx1 && form <= DW_FORM_addrx4);
}

/* low_pc and high_pc, as dwarf_lowpc and dwarf_highpc read them;
 * -ENOENT when either is missing. */
static int pc_pair(const struct elfdw_sections *s, const struct elfdw_die *d,
		   uint64_t *lo, uint64_t *hi)
{
	uint64_t len;
	int err;

	if (!elfdw_die_has(d, ELFDW_SLOT_HIGH_PC))
		return -ENOENT;
	err = elfdw_val_addr(s, d, ELFDW_SLOT_LOW_PC, lo);
	if (err)
		return err;
	if (is_addr_form(d->v[ELFDW_SLOT_HIGH_PC].form))
		return elfdw_val_addr(s, d, ELFDW_SLOT_HIGH_PC, hi);
	err = elfdw_val_const(s, d, ELFDW_SLOT_HIGH_PC, &len);
	if (!err)
		*hi = *lo + len;
	return err;
}

/* Where DW_AT_ranges points: an offset into .debug_ranges or
 * .debug_rnglists. */
static int list_offset(const struct elfdw_sections *s, const struct elfdw_die *d,
		       uint64_t *off)
{
	const struct elfdw_unit *u = d->unit;
	const struct elfdw_val *v = &d->v[ELFDW_SLOT_RANGES];
	const uint8_t *p;
	uint64_t idx, entry;
	int err;

	if (!elfdw_die_has(d, ELFDW_SLOT_RANGES))
		return -ENOENT;
	if (u->version < 5 || v->form != DW_FORM_rnglistx)
		return elfdw_val_secoff(s, d, ELFDW_SLOT_RANGES, off);
	if (u->rnglists_base == UINT64_MAX)
		return -EOPNOTSUPP; /* libdw would look for a default */
	p = elfdw_unit_start(s, u) + v->at;
	if ((err = ember_cur_uleb(&p, elfdw_unit_end(s, u), &idx)))
		return err;
	if (u->rnglists_base > s->rnglists.size ||
	    idx >= (s->rnglists.size - u->rnglists_base) / 4)
		return -EINVAL;
	p = s->rnglists.data + u->rnglists_base + idx * 4;
	if ((err = ember_cur_uint(&p, s->rnglists.data + s->rnglists.size, 4, &entry)))
		return err;
	*off = u->rnglists_base + entry;
	return 0;
}

struct list {
	const uint8_t *p, *end;
	uint64_t base;
	elfdw_range_fn fn;
	void *arg;
};

/* DWARF 2-4 .debug_ranges: pairs of addresses. */
static int read_ranges(const struct elfdw_unit *u, struct list *l)
{
	uint64_t all_ones = u->addr_size == 8 ? UINT64_MAX : UINT32_MAX;
	uint64_t begin, end;
	int err;

	for (;;) {
		if ((err = ember_cur_uint(&l->p, l->end, u->addr_size, &begin)) ||
		    (err = ember_cur_uint(&l->p, l->end, u->addr_size, &end)))
			return err;
		if (begin == all_ones) { /* base address selection */
			if (end == all_ones)
				return -EINVAL;
			l->base = end;
			continue;
		}
		if (begin == 0 && end == 0)
			return 0;
		err = l->fn(l->arg, begin + l->base, end + l->base);
		if (err)
			return err;
	}
}

/* An address given by index (the DW_RLE_*x entries). */
static int read_addrx(const struct elfdw_sections *s, const struct elfdw_unit *u,
		      struct list *l, uint64_t *out)
{
	uint64_t idx;
	int err = ember_cur_uleb(&l->p, l->end, &idx);

	return err ? err : elfdw_addrx(s, u, idx, out);
}

/* An address, then a ULEB128 length: *lo and *hi. */
static int start_length(const struct elfdw_sections *s, const struct elfdw_unit *u,
			struct list *l, bool indexed, uint64_t *lo, uint64_t *hi)
{
	uint64_t len;
	int err = indexed ? read_addrx(s, u, l, lo)
			  : ember_cur_uint(&l->p, l->end, u->addr_size, lo);

	if (!err)
		err = ember_cur_uleb(&l->p, l->end, &len);
	if (!err)
		*hi = *lo + len;
	return err;
}

/* One DW_RLE_* entry after its kind: *lo and *hi, or a new base
 * (returns 1), or the end of the list (returns 2). */
static int rle_entry(const struct elfdw_sections *s, const struct elfdw_unit *u,
		     struct list *l, uint8_t kind, uint64_t *lo, uint64_t *hi)
{
	unsigned w = u->addr_size;
	int err;

	switch (kind) {
	case DW_RLE_end_of_list:
		return 2;
	case DW_RLE_base_addressx:
		err = read_addrx(s, u, l, &l->base);
		return err ? err : 1;
	case DW_RLE_base_address:
		err = ember_cur_uint(&l->p, l->end, w, &l->base);
		return err ? err : 1;
	case DW_RLE_startx_endx:
		err = read_addrx(s, u, l, lo);
		return err ? err : read_addrx(s, u, l, hi);
	case DW_RLE_startx_length:
		return start_length(s, u, l, true, lo, hi);
	case DW_RLE_offset_pair:
		if (l->base == UINT64_MAX)
			return -EINVAL;
		if ((err = ember_cur_uleb(&l->p, l->end, lo)) ||
		    (err = ember_cur_uleb(&l->p, l->end, hi)))
			return err;
		*lo += l->base;
		*hi += l->base;
		return 0;
	case DW_RLE_start_end:
		err = ember_cur_uint(&l->p, l->end, w, lo);
		return err ? err : ember_cur_uint(&l->p, l->end, w, hi);
	case DW_RLE_start_length:
		return start_length(s, u, l, false, lo, hi);
	default:
		return -EINVAL;
	}
}

/* DWARF 5 .debug_rnglists: DW_RLE_* entries. */
static int read_rnglists(const struct elfdw_sections *s, const struct elfdw_unit *u,
			 struct list *l)
{
	uint64_t lo, hi;
	uint8_t kind;
	int rc;

	for (;;) {
		if ((rc = ember_cur_u8(&l->p, l->end, &kind)))
			return rc;
		rc = rle_entry(s, u, l, kind, &lo, &hi);
		if (rc == 2)
			return 0;
		if (rc == 0)
			rc = l->fn(l->arg, lo, hi);
		if (rc < 0)
			return rc;
	}
}

int elfdw_die_ranges(const struct elfdw_sections *s, const struct elfdw_die *d,
		     elfdw_range_fn fn, void *arg)
{
	const struct elfdw_unit *u = d->unit;
	const struct elfdw_sect *sect = u->version < 5 ? &s->ranges
						       : &s->rnglists;
	struct list l = { .base = u->base, .fn = fn, .arg = arg };
	uint64_t lo, hi, off;
	int err = pc_pair(s, d, &lo, &hi);

	if (err != -ENOENT)
		return err ? err : fn(arg, lo, hi);
	err = list_offset(s, d, &off);
	if (err)
		return err == -ENOENT ? 0 : err;
	if (!sect->data || u->base == UINT64_MAX)
		return -EOPNOTSUPP; /* libdw gives up: leave it to libdw */
	if (off >= sect->size)
		return -EINVAL;
	l.p = sect->data + off;
	l.end = sect->data + sect->size;
	return u->version < 5 ? read_ranges(u, &l) : read_rnglists(s, u, &l);
}
