/*
 * dwarf_rnglist.c - the address ranges of a DIE for the DIE reader, as
 * libdw's dwarf_ranges lists them: DW_AT_low_pc with DW_AT_high_pc (an
 * address, or an offset from low_pc since DWARF 4) when both read, else
 * the range list DW_AT_ranges points to: .debug_ranges before DWARF 5
 * (DWARF 4 §2.17.3: address pairs, base selection, (0, 0) at the end),
 * .debug_rnglists from DWARF 5 on (§2.17.3 and §7.25: DW_RLE_* entries,
 * reached by offset or, with DW_FORM_rnglistx, through the unit's offset
 * table at DW_AT_rnglists_base).
 */
#include "sym_internal.h"

#include <dwarf.h>

static bool is_addr_form(unsigned form)
{
	return form == DW_FORM_addr || form == DW_FORM_addrx ||
	       (form >= DW_FORM_addrx1 && form <= DW_FORM_addrx4);
}

/* low_pc and high_pc, as dwarf_lowpc and dwarf_highpc read them;
 * -ENOENT when either is missing. */
static int pc_pair(const struct sym_dw *r, const struct sym_dw_die *d,
		   uint64_t *lo, uint64_t *hi)
{
	uint64_t len;
	int err;

	if (!sym_dw_has(d, SYM_DW_HIGH_PC))
		return -ENOENT;
	err = sym_dw_val_addr(r, d, SYM_DW_LOW_PC, lo);
	if (err)
		return err;
	if (is_addr_form(d->v[SYM_DW_HIGH_PC].form))
		return sym_dw_val_addr(r, d, SYM_DW_HIGH_PC, hi);
	err = sym_dw_val_const(r, d, SYM_DW_HIGH_PC, &len);
	if (!err)
		*hi = *lo + len;
	return err;
}

/* Where DW_AT_ranges points: an offset into .debug_ranges or
 * .debug_rnglists. */
static int list_offset(const struct sym_dw *r, const struct sym_dw_die *d,
		       uint64_t *off)
{
	const struct sym_dw_unit *u = d->unit;
	const struct sym_dw_val *v = &d->v[SYM_DW_RANGES];
	const uint8_t *p = sym_dw_unit_start(r, u) + v->at;
	uint64_t idx, entry;

	if (!sym_dw_has(d, SYM_DW_RANGES))
		return -ENOENT;
	if (u->version < 5 || v->form != DW_FORM_rnglistx)
		return sym_dw_val_secoff(r, d, SYM_DW_RANGES, off);
	if (u->rnglists_base == UINT64_MAX)
		return -EOPNOTSUPP; /* libdw would look for a default */
	if (elfdw_read_uleb(&p, sym_dw_unit_end(r, u), &idx) ||
	    u->rnglists_base > r->s.rnglists.size ||
	    idx >= (r->s.rnglists.size - u->rnglists_base) / 4)
		return -EINVAL;
	p = r->s.rnglists.data + u->rnglists_base + idx * 4;
	if (elfdw_read_un(&p, r->s.rnglists.data + r->s.rnglists.size, 4, &entry))
		return -EINVAL;
	*off = u->rnglists_base + entry;
	return 0;
}

struct list {
	const uint8_t *p, *end;
	uint64_t base;
	sym_dw_range_fn fn;
	void *arg;
};

/* DWARF 2-4 .debug_ranges: pairs of addresses. */
static int read_ranges(const struct sym_dw_unit *u, struct list *l)
{
	uint64_t all_ones = u->addr_size == 8 ? UINT64_MAX : UINT32_MAX;
	uint64_t begin, end;
	int err;

	for (;;) {
		if (elfdw_read_un(&l->p, l->end, u->addr_size, &begin) ||
		    elfdw_read_un(&l->p, l->end, u->addr_size, &end))
			return -EINVAL;
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
static int read_addrx(const struct sym_dw *r, const struct sym_dw_unit *u,
		      struct list *l, uint64_t *out)
{
	uint64_t idx;

	if (elfdw_read_uleb(&l->p, l->end, &idx))
		return -EINVAL;
	return sym_dw_addrx(r, u, idx, out);
}

/* One DW_RLE_* entry after its kind: *lo and *hi, or a new base
 * (returns 1), or the end of the list (returns 2). */
static int rle_entry(const struct sym_dw *r, const struct sym_dw_unit *u,
		     struct list *l, uint64_t kind, uint64_t *lo, uint64_t *hi)
{
	unsigned w = u->addr_size;
	uint64_t len;
	int err = -EINVAL;

	switch (kind) {
	case DW_RLE_end_of_list:
		return 2;
	case DW_RLE_base_addressx:
		err = read_addrx(r, u, l, &l->base);
		return err ? err : 1;
	case DW_RLE_base_address:
		return elfdw_read_un(&l->p, l->end, w, &l->base) ? -EINVAL : 1;
	case DW_RLE_startx_endx:
		err = read_addrx(r, u, l, lo);
		return err ? err : read_addrx(r, u, l, hi);
	case DW_RLE_startx_length:
		err = read_addrx(r, u, l, lo);
		if (!err && elfdw_read_uleb(&l->p, l->end, &len))
			err = -EINVAL;
		break;
	case DW_RLE_offset_pair:
		if (l->base == UINT64_MAX || elfdw_read_uleb(&l->p, l->end, lo) ||
		    elfdw_read_uleb(&l->p, l->end, hi))
			return -EINVAL;
		*lo += l->base;
		*hi += l->base;
		return 0;
	case DW_RLE_start_end:
		return elfdw_read_un(&l->p, l->end, w, lo) ||
		       elfdw_read_un(&l->p, l->end, w, hi) ? -EINVAL : 0;
	case DW_RLE_start_length:
		err = elfdw_read_un(&l->p, l->end, w, lo) ||
		      elfdw_read_uleb(&l->p, l->end, &len) ? -EINVAL : 0;
		break;
	default:
		return -EINVAL;
	}
	if (!err)
		*hi = *lo + len;
	return err;
}

/* DWARF 5 .debug_rnglists: DW_RLE_* entries. */
static int read_rnglists(const struct sym_dw *r, const struct sym_dw_unit *u,
			 struct list *l)
{
	uint64_t kind, lo, hi;
	int rc;

	for (;;) {
		if (elfdw_read_un(&l->p, l->end, 1, &kind))
			return -EINVAL;
		rc = rle_entry(r, u, l, kind, &lo, &hi);
		if (rc == 2)
			return 0;
		if (rc == 0)
			rc = l->fn(l->arg, lo, hi);
		if (rc < 0)
			return rc;
	}
}

int sym_dw_die_ranges(const struct sym_dw *r, const struct sym_dw_die *d,
		      sym_dw_range_fn fn, void *arg)
{
	const struct sym_dw_unit *u = d->unit;
	const struct elfdw_sect *sect = u->version < 5 ? &r->s.ranges
						     : &r->s.rnglists;
	struct list l = { .base = u->base, .fn = fn, .arg = arg };
	uint64_t lo, hi, off;
	int err = pc_pair(r, d, &lo, &hi);

	if (err != -ENOENT)
		return err ? err : fn(arg, lo, hi);
	err = list_offset(r, d, &off);
	if (err)
		return err == -ENOENT ? 0 : err;
	if (!sect->data || u->base == UINT64_MAX)
		return -EOPNOTSUPP; /* libdw gives up: leave it to libdw */
	if (off >= sect->size)
		return -EINVAL;
	l.p = sect->data + off;
	l.end = sect->data + sect->size;
	return u->version < 5 ? read_ranges(u, &l) : read_rnglists(r, u, &l);
}
