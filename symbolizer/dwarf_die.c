/*
 * dwarf_die.c - reading one DIE (DWARF 5 §7.5.2: an abbreviation code,
 * then the values its abbreviation lists) and finding the next sibling
 * the way libdw's dwarf_siblingof does: DW_AT_sibling when the DIE has
 * one, else past its subtree.  Subtrees are skipped without recursion,
 * with each abbreviation's skip plan (dwarf_abbrev.c): a DIE whose
 * values all have fixed sizes costs one addition.
 */
#include "sym_internal.h"

#include <dwarf.h>

/* Keep the value of spec s at *pos in its slot (the first one wins, as
 * libdw's dwarf_attr finds the first); resolves DW_FORM_indirect. */
static int keep(const struct sym_dw *r, const struct sym_dw_spec *s,
		const uint8_t *pos, const uint8_t *end, struct sym_dw_die *d)
{
	unsigned form = s->form;
	uint64_t real;

	if (d->have & (1u << s->slot))
		return 0;
	if (form == DW_FORM_indirect) {
		if (elfdw_read_uleb(&pos, end, &real) || real > UINT16_MAX)
			return -EINVAL;
		form = (unsigned)real;
	}
	d->have |= 1u << s->slot;
	/* the spec's form, not one DW_FORM_indirect names: only the spec's
	 * implicit_const has a value in the table */
	d->v[s->slot] = (struct sym_dw_val){
		s->form == DW_FORM_implicit_const
			? s->implicit
			: (uint32_t)(pos - sym_dw_unit_start(r, d->unit)),
		(uint16_t)form };
	if ((s->slot == SYM_DW_ABSTRACT_ORIGIN ||
	     s->slot == SYM_DW_SPECIFICATION) && !d->first_origin)
		d->first_origin = s->slot;
	return 0;
}

/* Step over the values of d's abbreviation, keeping the slots (all of
 * them when full, else the sibling only). */
static int read_values(const struct sym_dw *r, const struct sym_dw_unit *u,
		       const struct sym_dw_abbrevs *t, const uint8_t **pos,
		       const uint8_t *end, bool full, struct sym_dw_die *d)
{
	const uint8_t *p = *pos;
	int err;

	/* indexed inside the loop: an empty table has no specs array at all */
	for (uint32_t i = 0; i < d->ab->n; i++) {
		const struct sym_dw_spec *s = &t->specs[d->ab->first + i];

		if (s->slot && (full || s->slot == SYM_DW_SIBLING) &&
		    (err = keep(r, s, p, end, d)))
			return err;
		if (s->size >= 0)
			err = elfdw_skip(&p, end, (uint64_t)s->size);
		else
			err = sym_dw_form_skip(&p, end, s->form, u->addr_size,
					       u->version);
		if (err)
			return err;
	}
	*pos = p;
	return 0;
}

/* A value whose size is in the data (enum sym_dw_skip_var), but for
 * LEB128 numbers, which skip_ops steps over itself. */
static int skip_var(const struct sym_dw_unit *u, unsigned var,
		    const uint8_t **pos, const uint8_t *end)
{
	static const uint16_t forms[] = {
		[SYM_DW_SKIP_STRING] = DW_FORM_string,
		[SYM_DW_SKIP_BLOCK1] = DW_FORM_block1,
		[SYM_DW_SKIP_BLOCK2] = DW_FORM_block2,
		[SYM_DW_SKIP_BLOCK4] = DW_FORM_block4,
		[SYM_DW_SKIP_BLOCK] = DW_FORM_block,
		[SYM_DW_SKIP_INDIRECT] = DW_FORM_indirect,
	};

	if (var >= sizeof(forms) / sizeof(forms[0]) || !forms[var])
		return -EINVAL;
	return sym_dw_form_skip(pos, end, forms[var], u->addr_size, u->version);
}

/* Run the skip program of ab (dwarf_abbrev.c) over a DIE's values. */
static inline int skip_ops(const struct sym_dw_unit *u,
			   const struct sym_dw_abbrevs *t,
			   const struct sym_dw_abbrev *ab, const uint8_t **pos,
			   const uint8_t *end)
{
	const uint8_t *p = *pos;

	for (uint32_t i = 0; i < ab->nops; i++) {
		const struct sym_dw_skip *op = &t->ops[ab->op_first + i];

		if ((size_t)(end - p) < op->fixed)
			return -EINVAL;
		p += op->fixed;
		if (op->var == SYM_DW_SKIP_LEB) {
			do {
				if (p >= end)
					return -EINVAL;
			} while (*p++ & 0x80);
		} else if (op->var && skip_var(u, op->var, &p, end)) {
			return -EINVAL;
		}
	}
	*pos = p;
	return 0;
}

/* All the slots of a DIE whose abbreviation has them at fixed offsets
 * from its first value (dwarf_abbrev.c); skip_ops then checks that the
 * values are all there. */
static int read_caps(const struct sym_dw *r, const struct sym_dw_abbrevs *t,
		     const struct sym_dw_abbrev *ab, const uint8_t *values,
		     struct sym_dw_die *d)
{
	uint32_t base = (uint32_t)(values - sym_dw_unit_start(r, d->unit));

	for (uint32_t i = 0; i < ab->ncaps; i++) {
		const struct sym_dw_cap *c = &t->caps[ab->cap_first + i];

		d->v[c->slot] = (struct sym_dw_val){
			c->form == DW_FORM_implicit_const ? c->at : base + c->at,
			c->form };
	}
	d->have = ab->cap_mask;
	d->first_origin = ab->first_origin;
	return 0;
}

int sym_dw_die_read(const struct sym_dw *r, const struct sym_dw_unit *u,
		    const struct sym_dw_abbrevs *t, const uint8_t **pos,
		    unsigned full, struct sym_dw_die *d)
{
	const uint8_t *p = *pos, *end = sym_dw_unit_end(r, u);
	const struct sym_dw_abbrev *ab;
	int err;

	err = sym_dw_die_abbrev(t, &p, end, &ab);
	if (err)
		return err;
	d->unit = u;
	d->ab = ab;
	d->implicits = t->implicits;
	d->off = (uint64_t)(*pos - r->s.info.data);
	d->have = 0;
	d->first_origin = 0;
	if (!(full & (1u << ab->kind)) &&
	    (!ab->sibling_form || ab->sibling_at >= 0)) {
		/* only the sibling is wanted, and it is at a fixed place */
		if (ab->sibling_form) {
			d->have = 1u << SYM_DW_SIBLING;
			d->v[SYM_DW_SIBLING] = (struct sym_dw_val){
				(uint32_t)(p - sym_dw_unit_start(r, u)) +
					(uint32_t)ab->sibling_at,
				ab->sibling_form };
		}
		err = skip_ops(u, t, ab, &p, end);
		if (err)
			return err;
	} else if ((full & (1u << ab->kind)) && ab->caps_fixed) {
		err = read_caps(r, t, ab, p, d);
		if (!err)
			err = skip_ops(u, t, ab, &p, end);
		if (err)
			return err;
	} else {
		err = read_values(r, u, t, &p, end, full & (1u << ab->kind), d);
		if (err)
			return err;
	}
	d->end = p;
	*pos = p;
	return 0;
}

int sym_dw_die_at(struct sym_dw *r, uint64_t off, struct sym_dw_die *d)
{
	struct sym_dw_unit *u = sym_dw_unit_at(r, off);
	const struct sym_dw_abbrevs *t;
	const uint8_t *p;
	int err;

	if (!u || off < u->die_off)
		return -EINVAL;
	if (u->unit_type != DW_UT_compile && u->unit_type != DW_UT_partial &&
	    u->unit_type != DW_UT_type)
		return -EOPNOTSUPP;
	err = sym_dw_unit_abbrevs(r, u, &t);
	if (err)
		return err;
	p = r->s.info.data + off;
	if (*p == 0) { /* a null entry: a DIE without attributes for libdw */
		*d = (struct sym_dw_die){ .unit = u, .off = off, .end = p + 1 };
		return 0;
	}
	return sym_dw_die_read(r, u, t, &p, SYM_DW_ALL_KINDS, d);
}

/* The target of the DW_AT_sibling of form at p, of the DIE at section
 * offset die in unit u, checked as libdw checks it: a unit-relative
 * reference past the DIE, inside the unit. */
static int sibling_at(const struct sym_dw *r, const struct sym_dw_unit *u,
		      uint64_t die, unsigned form, const uint8_t *p,
		      const uint8_t **next)
{
	uint64_t target;
	int err;

	if (form == DW_FORM_ref_addr)
		return -EOPNOTSUPP; /* libdw stops the walk there */
	err = sym_dw_form_ref(r, u, form, p, &target);
	if (err)
		return err;
	if (target <= die)
		return -EINVAL;
	*next = r->s.info.data + target;
	return 0;
}

static int sibling_target(const struct sym_dw *r, const struct sym_dw_die *d,
			  const uint8_t **next)
{
	const struct sym_dw_val *v = &d->v[SYM_DW_SIBLING];

	return sibling_at(r, d->unit, d->off, v->form,
			  sym_dw_unit_start(r, d->unit) + v->at, next);
}

/* The sibling of a DIE whose DW_AT_sibling follows a value of variable
 * size (rare: producers put it first). */
static int late_sibling(const struct sym_dw *r, const struct sym_dw_unit *u,
			const struct sym_dw_abbrevs *t, const uint8_t **pos)
{
	const uint8_t *p = *pos;
	struct sym_dw_die d;
	int err = sym_dw_die_read(r, u, t, &p, 0, &d);

	return err ? err : sibling_target(r, &d, pos);
}

/* Step over the DIE at *pos whose values start at p: to its sibling when
 * it names one, else past its values, *descend telling whether its
 * children come next. */
static inline int die_step(const struct sym_dw *r, const struct sym_dw_unit *u,
			   const struct sym_dw_abbrevs *t,
			   const struct sym_dw_abbrev *ab, const uint8_t *p,
			   const uint8_t **pos, bool *descend)
{
	int err;

	*descend = false;
	if (ab->sibling_form && ab->sibling_at >= 0)
		return sibling_at(r, u, (uint64_t)(*pos - r->s.info.data),
				  ab->sibling_form, p + ab->sibling_at, pos);
	if (ab->sibling_form)
		return late_sibling(r, u, t, pos);
	err = skip_ops(u, t, ab, &p, sym_dw_unit_end(r, u));
	if (err)
		return err;
	*descend = ab->children;
	*pos = p;
	return 0;
}

/* Past the children of a DIE whose values end at *pos (nesting level 1),
 * without recursion. */
static int skip_children(const struct sym_dw *r, const struct sym_dw_unit *u,
			 const struct sym_dw_abbrevs *t, const uint8_t **pos)
{
	const uint8_t *p = *pos, *end = sym_dw_unit_end(r, u);
	const struct sym_dw_abbrev *ab;
	const uint8_t *values;
	size_t level = 1;
	bool descend;
	int err;

	while (level > 0) {
		if (p >= end)
			return -EINVAL;
		if (*p == 0) {
			level--;
			p++;
			continue;
		}
		values = p;
		err = sym_dw_die_abbrev(t, &values, end, &ab);
		if (!err)
			err = die_step(r, u, t, ab, values, &p, &descend);
		if (err)
			return err;
		level += descend;
	}
	*pos = p;
	return 0;
}

int sym_dw_next_child(const struct sym_dw *r, const struct sym_dw_unit *u,
		      const struct sym_dw_abbrevs *t, const uint8_t **pos,
		      unsigned want, unsigned full, struct sym_dw_die *d)
{
	const uint8_t *p = *pos, *end = sym_dw_unit_end(r, u);
	const struct sym_dw_abbrev *ab;
	const uint8_t *values;
	bool descend;
	int err;

	while (p < end && *p != 0) {
		values = p;
		err = sym_dw_die_abbrev(t, &values, end, &ab);
		if (err)
			return err;
		if (want & (1u << ab->kind)) {
			*pos = p;
			return sym_dw_die_read(r, u, t, pos, full, d);
		}
		err = die_step(r, u, t, ab, values, &p, &descend);
		if (!err && descend)
			err = skip_children(r, u, t, &p);
		if (err)
			return err;
	}
	*pos = p < end ? p + 1 : p; /* past the null entry */
	return 1;
}

int sym_dw_die_after(const struct sym_dw *r, const struct sym_dw_abbrevs *t,
		     const struct sym_dw_die *d, const uint8_t **next)
{
	const uint8_t *p = d->end;
	int err;

	if (sym_dw_has(d, SYM_DW_SIBLING))
		return sibling_target(r, d, next);
	if (d->ab && d->ab->children) {
		err = skip_children(r, d->unit, t, &p);
		if (err)
			return err;
	}
	*next = p;
	return 0;
}
