/*
 * dwarf_die.c - reading one DIE (DWARF 5 §7.5.2: an abbreviation code,
 * then the values its abbreviation lists) and finding the next sibling
 * the way libdw's dwarf_siblingof does: DW_AT_sibling when the DIE has
 * one, else past its subtree.  Subtrees are skipped without recursion,
 * with each abbreviation's skip plan (dwarf_abbrev.c): a DIE whose
 * values all have fixed sizes costs one addition.
 */
#include "elfdw_internal.h"

/* Keep the value of spec sp at pos in its slot (the first one wins, as
 * libdw's dwarf_attr finds the first); resolves DW_FORM_indirect. */
static int keep(const struct elfdw_sections *s, const struct elfdw_schema *schema,
		const struct elfdw_spec *sp, const uint8_t *pos,
		const uint8_t *end, struct elfdw_die *d)
{
	unsigned form = sp->form;
	uint64_t real;
	int err;

	if (d->have & (1u << sp->slot))
		return 0;
	if (form == DW_FORM_indirect) {
		if ((err = ember_cur_uleb(&pos, end, &real)))
			return err;
		/* libdw refuses these two inside it (a value of neither could
		 * be read from the DIE) */
		if (real > UINT16_MAX || real == DW_FORM_indirect ||
		    real == DW_FORM_implicit_const)
			return -EINVAL;
		form = (unsigned)real;
	}
	d->have |= 1u << sp->slot;
	/* the spec's form, not one DW_FORM_indirect names: only the spec's
	 * implicit_const has a value in the table */
	d->v[sp->slot] = (struct elfdw_val){
		sp->form == DW_FORM_implicit_const
			? sp->implicit
			: (uint32_t)(pos - elfdw_unit_start(s, d->unit)),
		(uint16_t)form };
	if ((schema->first_mask & (1u << sp->slot)) && !d->first_slot)
		d->first_slot = sp->slot;
	return 0;
}

/* Step over the values of d's abbreviation, keeping the slots (all of
 * them when full, else the sibling only). */
static int read_values(const struct elfdw_sections *s, const struct elfdw_unit *u,
		       const struct elfdw_abbrevs *t, const uint8_t **pos,
		       const uint8_t *end, bool full, struct elfdw_die *d)
{
	const uint8_t *p = *pos;
	int err;

	/* indexed inside the loop: an empty table has no specs array at all */
	for (uint32_t i = 0; i < d->ab->n; i++) {
		const struct elfdw_spec *sp = &t->specs[d->ab->first + i];

		if (sp->slot && (full || sp->slot == ELFDW_SLOT_SIBLING) &&
		    (err = keep(s, t->schema, sp, p, end, d)))
			return err;
		if (sp->size >= 0)
			err = ember_cur_skip(&p, end, (uint64_t)sp->size);
		else
			err = elfdw_form_skip(&p, end, sp->form, u->addr_size,
					      u->version);
		if (err)
			return err;
	}
	*pos = p;
	return 0;
}

/* A value whose size is in the data (enum elfdw_skip_var), but for
 * LEB128 numbers, which skip_ops steps over itself. */
static int skip_var(const struct elfdw_unit *u, unsigned var,
		    const uint8_t **pos, const uint8_t *end)
{
	static const uint16_t forms[] = {
		[ELFDW_SKIP_STRING] = DW_FORM_string,
		[ELFDW_SKIP_BLOCK1] = DW_FORM_block1,
		[ELFDW_SKIP_BLOCK2] = DW_FORM_block2,
		[ELFDW_SKIP_BLOCK4] = DW_FORM_block4,
		[ELFDW_SKIP_BLOCK] = DW_FORM_block,
		[ELFDW_SKIP_INDIRECT] = DW_FORM_indirect,
	};

	if (var >= sizeof(forms) / sizeof(forms[0]) || !forms[var])
		return -EINVAL;
	return elfdw_form_skip(pos, end, forms[var], u->addr_size, u->version);
}

/* Run the skip program of ab (dwarf_abbrev.c) over a DIE's values. */
static inline int skip_ops(const struct elfdw_unit *u,
			   const struct elfdw_abbrevs *t,
			   const struct elfdw_abbrev *ab, const uint8_t **pos,
			   const uint8_t *end)
{
	const uint8_t *p = *pos;

	for (uint32_t i = 0; i < ab->nops; i++) {
		const struct elfdw_skip_op *op = &t->ops[ab->op_first + i];

		int err;

		/* p <= end: it starts at a DIE's values and moves by checked
		 * steps only (the cheaper check in the hottest loop) */
		if ((size_t)(end - p) < op->fixed)
			return -ENODATA;
		p += op->fixed;
		if (op->var == ELFDW_SKIP_LEB) {
			do {
				if (p >= end)
					return -ENODATA;
			} while (*p++ & 0x80);
		} else if (op->var && (err = skip_var(u, op->var, &p, end))) {
			return err;
		}
	}
	*pos = p;
	return 0;
}

/* All the slots of a DIE whose abbreviation has them at fixed offsets
 * from its first value (dwarf_abbrev.c); skip_ops then checks that the
 * values are all there. */
static int read_caps(const struct elfdw_sections *s, const struct elfdw_abbrevs *t,
		     const struct elfdw_abbrev *ab, const uint8_t *values,
		     struct elfdw_die *d)
{
	uint32_t base = (uint32_t)(values - elfdw_unit_start(s, d->unit));

	for (uint32_t i = 0; i < ab->ncaps; i++) {
		const struct elfdw_cap *c = &t->caps[ab->cap_first + i];

		d->v[c->slot] = (struct elfdw_val){
			c->form == DW_FORM_implicit_const ? c->at : base + c->at,
			c->form };
	}
	d->have = ab->cap_mask;
	d->first_slot = ab->first_slot;
	return 0;
}

int elfdw_die_read(const struct elfdw_sections *s, const struct elfdw_unit *u,
		   const struct elfdw_abbrevs *t, const uint8_t **pos,
		   unsigned full, struct elfdw_die *d)
{
	const uint8_t *p = *pos, *end = elfdw_unit_end(s, u);
	const struct elfdw_abbrev *ab;
	int err;

	err = elfdw_die_abbrev(t, &p, end, &ab);
	if (err)
		return err;
	d->unit = u;
	d->ab = ab;
	d->implicits = t->implicits;
	d->off = (uint64_t)(*pos - s->info.data);
	d->have = 0;
	d->first_slot = 0;
	if (!(full & (1u << ab->kind)) &&
	    (!ab->sibling_form || ab->sibling_at >= 0)) {
		/* only the sibling is wanted, and it is at a fixed place */
		if (ab->sibling_form) {
			d->have = 1u << ELFDW_SLOT_SIBLING;
			d->v[ELFDW_SLOT_SIBLING] = (struct elfdw_val){
				(uint32_t)(p - elfdw_unit_start(s, u)) +
					(uint32_t)ab->sibling_at,
				ab->sibling_form };
		}
		err = skip_ops(u, t, ab, &p, end);
		if (err)
			return err;
	} else if ((full & (1u << ab->kind)) && ab->caps_fixed) {
		err = read_caps(s, t, ab, p, d);
		if (!err)
			err = skip_ops(u, t, ab, &p, end);
		if (err)
			return err;
	} else {
		err = read_values(s, u, t, &p, end, full & (1u << ab->kind), d);
		if (err)
			return err;
	}
	d->end = p;
	*pos = p;
	return 0;
}

/* The target of the DW_AT_sibling of form at p, of the DIE at section
 * offset die in unit u, checked as libdw checks it: a unit-relative
 * reference past the DIE, inside the unit. */
static int sibling_at(const struct elfdw_sections *s, const struct elfdw_unit *u,
		      uint64_t die, unsigned form, const uint8_t *p,
		      const uint8_t **next)
{
	uint64_t target;
	int err;

	if (form == DW_FORM_ref_addr)
		return -EOPNOTSUPP; /* libdw stops the walk there */
	err = elfdw_form_ref(s, u, form, p, &target);
	if (err)
		return err;
	if (target <= die)
		return -EINVAL;
	*next = s->info.data + target;
	return 0;
}

static int sibling_target(const struct elfdw_sections *s, const struct elfdw_die *d,
			  const uint8_t **next)
{
	const struct elfdw_val *v = &d->v[ELFDW_SLOT_SIBLING];

	return sibling_at(s, d->unit, d->off, v->form,
			  elfdw_unit_start(s, d->unit) + v->at, next);
}

/* The sibling of a DIE whose DW_AT_sibling follows a value of variable
 * size (rare: producers put it first). */
static int late_sibling(const struct elfdw_sections *s, const struct elfdw_unit *u,
			const struct elfdw_abbrevs *t, const uint8_t **pos)
{
	const uint8_t *p = *pos;
	struct elfdw_die d;
	int err = elfdw_die_read(s, u, t, &p, 0, &d);

	return err ? err : sibling_target(s, &d, pos);
}

/* Step over the DIE at *pos whose values start at p (<= end, the unit's
 * end): to its sibling when it names one, else past its values, *descend
 * telling whether its children come next. */
static inline int die_step(const struct elfdw_sections *s, const struct elfdw_unit *u,
			   const struct elfdw_abbrevs *t,
			   const struct elfdw_abbrev *ab, const uint8_t *p,
			   const uint8_t *end, const uint8_t **pos, bool *descend)
{
	int err;

	*descend = false;
	if (ab->sibling_form && ab->sibling_at >= 0) {
		/* bounds first: the offset comes from the abbreviation */
		if ((size_t)(end - p) < (size_t)ab->sibling_at)
			return -ENODATA;
		return sibling_at(s, u, (uint64_t)(*pos - s->info.data),
				  ab->sibling_form, p + ab->sibling_at, pos);
	}
	if (ab->sibling_form)
		return late_sibling(s, u, t, pos);
	err = skip_ops(u, t, ab, &p, end);
	if (err)
		return err;
	*descend = ab->children;
	*pos = p;
	return 0;
}

/* Past the children of a DIE whose values end at *pos (nesting level 1),
 * without recursion. */
static int skip_children(const struct elfdw_sections *s, const struct elfdw_unit *u,
			 const struct elfdw_abbrevs *t, const uint8_t **pos)
{
	const uint8_t *p = *pos, *end = elfdw_unit_end(s, u);
	const struct elfdw_abbrev *ab;
	const uint8_t *values;
	size_t level = 1;
	bool descend;
	int err;

	while (level > 0) {
		if (p >= end)
			return -ENODATA;
		if (*p == 0) {
			level--;
			p++;
			continue;
		}
		values = p;
		err = elfdw_die_abbrev(t, &values, end, &ab);
		if (!err)
			err = die_step(s, u, t, ab, values, end, &p, &descend);
		if (err)
			return err;
		level += descend;
	}
	*pos = p;
	return 0;
}

int elfdw_next_child(const struct elfdw_sections *s, const struct elfdw_unit *u,
		     const struct elfdw_abbrevs *t, const uint8_t **pos,
		     unsigned want, unsigned full, struct elfdw_die *d)
{
	const uint8_t *p = *pos, *end = elfdw_unit_end(s, u);
	const struct elfdw_abbrev *ab;
	const uint8_t *values;
	bool descend;
	int err;

	while (p < end && *p != 0) {
		values = p;
		err = elfdw_die_abbrev(t, &values, end, &ab);
		if (err)
			return err;
		if (want & (1u << ab->kind)) {
			*pos = p;
			return elfdw_die_read(s, u, t, pos, full, d);
		}
		err = die_step(s, u, t, ab, values, end, &p, &descend);
		if (!err && descend)
			err = skip_children(s, u, t, &p);
		if (err)
			return err;
	}
	*pos = p < end ? p + 1 : p; /* past the null entry */
	return 1;
}

int elfdw_die_after(const struct elfdw_sections *s, const struct elfdw_abbrevs *t,
		    const struct elfdw_die *d, const uint8_t **next)
{
	const uint8_t *p = d->end;
	int err;

	if (elfdw_die_has(d, ELFDW_SLOT_SIBLING))
		return sibling_target(s, d, next);
	if (d->ab && d->ab->children) {
		err = skip_children(s, d->unit, t, &p);
		if (err)
			return err;
	}
	*next = p;
	return 0;
}
