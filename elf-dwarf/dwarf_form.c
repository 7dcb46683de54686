/*
 * dwarf_form.c - attribute forms for the DIE reader: how many bytes a
 * value takes (to skip it) and what it means (to read it), DWARF 5 §7.5.5
 * and §7.5.6, with the DWARF 2-4 differences (DW_FORM_ref_addr is
 * address-sized in DWARF 2; section offsets may be data4/data8 before
 * DWARF 4).
 *
 * The values are read as libdw's dwarf_formudata, dwarf_formaddr,
 * dwarf_formstring and dwarf_formref_die read them, for the forms this
 * reader handles; any other form is -EOPNOTSUPP, so that a caller with
 * libdw can hand the unit to libdw instead.  Only 32-bit DWARF reaches
 * here (elfdw_unit_open refuses DWARF 64).
 */
#include "elfdw_internal.h"

int elfdw_form_size(unsigned form, uint8_t addr_size, uint8_t version)
{
	switch (form) {
	case DW_FORM_flag_present:
	case DW_FORM_implicit_const:
		return 0;
	case DW_FORM_data1: case DW_FORM_ref1: case DW_FORM_flag:
	case DW_FORM_strx1: case DW_FORM_addrx1:
		return 1;
	case DW_FORM_data2: case DW_FORM_ref2: case DW_FORM_strx2:
	case DW_FORM_addrx2:
		return 2;
	case DW_FORM_strx3: case DW_FORM_addrx3:
		return 3;
	case DW_FORM_data4: case DW_FORM_ref4: case DW_FORM_strx4:
	case DW_FORM_addrx4: case DW_FORM_ref_sup4:
	case DW_FORM_strp: case DW_FORM_line_strp: case DW_FORM_sec_offset:
	case DW_FORM_strp_sup: case DW_FORM_GNU_strp_alt:
	case DW_FORM_GNU_ref_alt:
		return 4; /* offsets: 32-bit DWARF */
	case DW_FORM_data8: case DW_FORM_ref8: case DW_FORM_ref_sig8:
	case DW_FORM_ref_sup8:
		return 8;
	case DW_FORM_data16:
		return 16;
	case DW_FORM_addr:
		return addr_size;
	case DW_FORM_ref_addr:
		return version == 2 ? addr_size : 4;
	case DW_FORM_udata: case DW_FORM_sdata: case DW_FORM_ref_udata:
	case DW_FORM_strx: case DW_FORM_addrx: case DW_FORM_rnglistx:
	case DW_FORM_loclistx: case ELFDW_FORM_GNU_ADDR_INDEX:
	case ELFDW_FORM_GNU_STR_INDEX: case DW_FORM_string: case DW_FORM_block:
	case DW_FORM_block1: case DW_FORM_block2: case DW_FORM_block4:
	case DW_FORM_exprloc: case DW_FORM_indirect:
		return -1;
	default:
		return -2;
	}
}

/* A block: a length of len_size bytes (0: ULEB128), then that many bytes. */
static int skip_block(const uint8_t **pos, const uint8_t *end,
		      unsigned len_size)
{
	const uint8_t *p = *pos;
	uint64_t n;

	if ((len_size ? ember_cur_uint(&p, end, len_size, &n)
		      : ember_cur_uleb(&p, end, &n)) ||
	    ember_cur_skip(&p, end, n))
		return -EINVAL;
	*pos = p;
	return 0;
}

static int skip_variable(const uint8_t **pos, const uint8_t *end,
			 unsigned form, uint8_t addr_size, uint8_t version)
{
	const uint8_t *p = *pos;
	const char *s;
	uint64_t v;

	switch (form) {
	case DW_FORM_string:
		return ember_cur_cstr(pos, end, &s);
	case DW_FORM_block1:
		return skip_block(pos, end, 1);
	case DW_FORM_block2:
		return skip_block(pos, end, 2);
	case DW_FORM_block4:
		return skip_block(pos, end, 4);
	case DW_FORM_block:
	case DW_FORM_exprloc:
		return skip_block(pos, end, 0);
	case DW_FORM_indirect:
		/* The form comes first; libdw refuses these two inside it. */
		if (ember_cur_uleb(&p, end, &v) || v == DW_FORM_indirect ||
		    v == DW_FORM_implicit_const || v > UINT16_MAX ||
		    elfdw_form_skip(&p, end, (unsigned)v, addr_size, version))
			return -EINVAL;
		*pos = p;
		return 0;
	default: /* the ULEB128 and SLEB128 forms: same bytes */
		return ember_cur_uleb(pos, end, &v);
	}
}

int elfdw_form_skip(const uint8_t **pos, const uint8_t *end, unsigned form,
		     uint8_t addr_size, uint8_t version)
{
	int size = elfdw_form_size(form, addr_size, version);

	if (size >= 0)
		return ember_cur_skip(pos, end, (uint64_t)size);
	if (size == -2)
		return -EOPNOTSUPP;
	return skip_variable(pos, end, form, addr_size, version);
}

/* A slot's value as a cursor over the rest of its unit. */
struct val {
	const uint8_t *p, *end;
	unsigned form;
	int64_t implicit;
};

/* The slot's value, or -ENOENT when the DIE has no such attribute. */
static int slot_val(const struct elfdw_sections *s, const struct elfdw_die *d,
		    unsigned slot, struct val *v)
{
	if (!elfdw_die_has(d, slot))
		return -ENOENT;
	*v = (struct val){ elfdw_unit_start(s, d->unit) + d->v[slot].at,
			   elfdw_unit_end(s, d->unit), d->v[slot].form, 0 };
	if (v->form == DW_FORM_implicit_const) {
		v->p = v->end; /* no bytes in the DIE */
		v->implicit = d->implicits[d->v[slot].at];
	}
	return 0;
}

/* An unsigned value of size bytes, or ULEB128 for size 0. */
static int val_uint(struct val *v, unsigned size, uint64_t *out)
{
	return size ? ember_cur_uint(&v->p, v->end, size, out)
		    : ember_cur_uleb(&v->p, v->end, out);
}

/* The size val_uint takes for a constant or reference form. */
static unsigned uint_size(unsigned form)
{
	int size = elfdw_form_size(form, 0, 0);

	return size > 0 ? (unsigned)size : 0;
}

/* dwarf_formudata's constants (its section-offset cases are not here). */
int elfdw_val_const(const struct elfdw_sections *s, const struct elfdw_die *d,
		     unsigned slot, uint64_t *out)
{
	struct val v;
	int64_t sv;
	int err = slot_val(s, d, slot, &v);

	if (err)
		return err;
	switch (v.form) {
	case DW_FORM_data1: case DW_FORM_data2: case DW_FORM_data4:
	case DW_FORM_data8: case DW_FORM_udata:
		return val_uint(&v, uint_size(v.form), out);
	case DW_FORM_sdata:
		err = ember_cur_sleb(&v.p, v.end, &sv);
		if (!err)
			*out = (uint64_t)sv;
		return err;
	case DW_FORM_implicit_const:
		*out = (uint64_t)v.implicit;
		return 0;
	default:
		return -EOPNOTSUPP;
	}
}

/* Entry idx of size bytes of a table at base in sect (.debug_addr,
 * .debug_str_offsets); base must have been given (UINT64_MAX: absent). */
static int table_entry(const struct elfdw_sect *sect, uint64_t base,
		       uint64_t idx, unsigned size, uint64_t *out)
{
	const uint8_t *p;

	if (base == UINT64_MAX || !sect->data || size == 0)
		return -EOPNOTSUPP; /* libdw would use a default: not ours */
	if (base > sect->size || idx >= (sect->size - base) / size)
		return -EINVAL;
	p = sect->data + base + idx * size;
	return ember_cur_uint(&p, sect->data + sect->size, size, out);
}

int elfdw_addrx(const struct elfdw_sections *s, const struct elfdw_unit *u,
		 uint64_t idx, uint64_t *out)
{
	return table_entry(&s->addr, u->addr_base, idx, u->addr_size, out);
}

/* The index of an addrx/strx form: fixed-size or ULEB128. */
static int read_index(struct val *v, uint64_t *idx)
{
	switch (v->form) {
	case DW_FORM_addrx1: case DW_FORM_strx1:
		return val_uint(v, 1, idx);
	case DW_FORM_addrx2: case DW_FORM_strx2:
		return val_uint(v, 2, idx);
	case DW_FORM_addrx3: case DW_FORM_strx3:
		return val_uint(v, 3, idx);
	case DW_FORM_addrx4: case DW_FORM_strx4:
		return val_uint(v, 4, idx);
	default: /* DW_FORM_addrx, DW_FORM_strx */
		return val_uint(v, 0, idx);
	}
}

int elfdw_val_addr(const struct elfdw_sections *s, const struct elfdw_die *d,
		    unsigned slot, uint64_t *out)
{
	struct val v;
	uint64_t idx;
	int err = slot_val(s, d, slot, &v);

	if (err)
		return err;
	switch (v.form) {
	case DW_FORM_addr:
		return val_uint(&v, d->unit->addr_size, out);
	case DW_FORM_addrx: case DW_FORM_addrx1: case DW_FORM_addrx2:
	case DW_FORM_addrx3: case DW_FORM_addrx4:
		err = read_index(&v, &idx);
		return err ? err : elfdw_addrx(s, d->unit, idx, out);
	default:
		return -EOPNOTSUPP;
	}
}

int elfdw_sect_string(const struct elfdw_sect *sect, uint64_t off,
		      const char **out)
{
	const uint8_t *p;

	if (!sect->data)
		return -EOPNOTSUPP;
	if (off >= sect->size)
		return -EINVAL;
	p = sect->data + off;
	return ember_cur_cstr(&p, sect->data + sect->size, out);
}

int elfdw_val_str(const struct elfdw_sections *s, const struct elfdw_die *d,
		   unsigned slot, const char **out)
{
	struct val v;
	uint64_t off;
	int err = slot_val(s, d, slot, &v);

	if (err)
		return err;
	switch (v.form) {
	case DW_FORM_string:
		return ember_cur_cstr(&v.p, v.end, out);
	case DW_FORM_strp:
	case DW_FORM_line_strp:
		err = val_uint(&v, 4, &off);
		return err ? err : elfdw_sect_string(v.form == DW_FORM_strp ? &s->str
						     : &s->line_str, off, out);
	case DW_FORM_strx: case DW_FORM_strx1: case DW_FORM_strx2:
	case DW_FORM_strx3: case DW_FORM_strx4:
		err = read_index(&v, &off);
		if (!err)
			err = table_entry(&s->str_offsets, d->unit->str_off_base,
					  off, 4, &off);
		return err ? err : elfdw_sect_string(&s->str, off, out);
	default:
		return -EOPNOTSUPP;
	}
}

int elfdw_form_ref(const struct elfdw_sections *s, const struct elfdw_unit *u,
		    unsigned form, const uint8_t *p, uint64_t *out)
{
	struct val v = { p, elfdw_unit_end(s, u), form, 0 };
	uint64_t off;
	int err;

	switch (form) {
	case DW_FORM_ref4: /* GCC and clang: nearly every reference */
		err = val_uint(&v, 4, &off);
		break;
	case DW_FORM_ref1: case DW_FORM_ref2: case DW_FORM_ref8:
	case DW_FORM_ref_udata:
		err = val_uint(&v, uint_size(form), &off);
		break;
	case DW_FORM_ref_addr:
		return val_uint(&v, u->version == 2 ? u->addr_size : 4, out);
	default:
		return -EOPNOTSUPP;
	}
	if (err)
		return err;
	/* Unit-relative: inside the unit, past its header. */
	if (off >= u->end - u->off || u->off + off < u->die_off)
		return -EINVAL;
	*out = u->off + off;
	return 0;
}

int elfdw_val_ref(const struct elfdw_sections *s, const struct elfdw_die *d,
		   unsigned slot, uint64_t *out)
{
	struct val v;
	int err = slot_val(s, d, slot, &v);

	return err ? err : elfdw_form_ref(s, d->unit, v.form, v.p, out);
}

int elfdw_val_secoff(const struct elfdw_sections *s, const struct elfdw_die *d,
		      unsigned slot, uint64_t *out)
{
	struct val v;
	int err = slot_val(s, d, slot, &v);

	if (err)
		return err;
	if (v.form == DW_FORM_sec_offset)
		return val_uint(&v, 4, out);
	if (d->unit->version < 4 &&
	    (v.form == DW_FORM_data4 || v.form == DW_FORM_data8))
		return val_uint(&v, v.form == DW_FORM_data4 ? 4 : 8, out);
	return -EOPNOTSUPP;
}
