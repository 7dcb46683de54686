/*
 * dwarf_abbrev.c - abbreviation tables (.debug_abbrev, DWARF 5 §7.5.3)
 * with a plan per abbreviation: the slot of each attribute the caller's
 * schema (or the layer itself) keeps, the size of every value whose form
 * has a fixed size, and a skip program in which each run of fixed-size
 * values is one step, so that a walk steps over most DIEs without looking
 * at their attributes (a DIE whose values all have fixed sizes is one
 * addition).  A DW_AT_sibling at a fixed position is read in place; the
 * kinds the schema reads whole get capture lists.
 */
#include "elfdw_internal.h"

#include <stdlib.h>

/* The layer's own slots, else the schema's. */
static uint8_t attr_slot(const struct elfdw_schema *schema, uint64_t name)
{
	uint8_t slot;

	switch (name) {
	case DW_AT_sibling: return ELFDW_SLOT_SIBLING;
	case DW_AT_low_pc: return ELFDW_SLOT_LOW_PC;
	case DW_AT_high_pc: return ELFDW_SLOT_HIGH_PC;
	case DW_AT_ranges: return ELFDW_SLOT_RANGES;
	case DW_AT_entry_pc: return ELFDW_SLOT_ENTRY_PC;
	case DW_AT_addr_base: return ELFDW_SLOT_ADDR_BASE;
	case DW_AT_str_offsets_base: return ELFDW_SLOT_STR_OFFSETS_BASE;
	case DW_AT_rnglists_base: return ELFDW_SLOT_RNGLISTS_BASE;
	case DW_AT_dwo_name: return ELFDW_SLOT_SPLIT;
	default:
		if (name >= ELFDW_AT_GNU_DWO_NAME && name <= ELFDW_AT_GNU_ADDR_BASE)
			return ELFDW_SLOT_SPLIT;
		slot = schema->attr_slot ? schema->attr_slot(name) : 0;
		return slot >= ELFDW_SLOT_USER && slot < ELFDW_MAX_SLOTS ? slot : 0;
	}
}

void elfdw_abbrevs_release(struct elfdw_abbrevs *t)
{
	if (!t)
		return;
	free(t->v);
	free(t->specs);
	free(t->ops);
	free(t->caps);
	free(t->implicits);
	memset(t, 0, sizeof(*t));
}

/* Sizes of the forms below 0x2d for a table's units: a lookup instead of
 * a switch per attribute (the GNU forms above take the switch); the
 * slots of the attributes below 0x90 likewise (t->slot, once a schema). */
struct form_sizes {
	int8_t size[0x2d];
};

static void form_sizes_init(struct form_sizes *fs, struct elfdw_abbrevs *t)
{
	for (unsigned f = 0; f < sizeof(fs->size); f++)
		fs->size[f] = (int8_t)elfdw_form_size(f, t->addr_size, t->version);
	if (t->slots_of == t->schema)
		return;
	for (unsigned a = 0; a < sizeof(t->slot); a++)
		t->slot[a] = attr_slot(t->schema, a);
	t->slots_of = t->schema;
}

/* One (name, form[, implicit value]) pair; *done at the (0, 0) end. */
static inline int read_spec(const uint8_t **pos, const uint8_t *end,
			    struct elfdw_abbrevs *t,
			    const struct form_sizes *fs, struct elfdw_spec *s,
			    bool *done)
{
	const uint8_t *p = *pos;
	uint64_t name, form;
	int64_t implicit = 0;
	int size, err;

	if ((err = ember_cur_uleb(&p, end, &name)) ||
	    (err = ember_cur_uleb(&p, end, &form)))
		return err;
	*done = name == 0 && form == 0;
	if (!*done && form == DW_FORM_implicit_const &&
	    (err = ember_cur_sleb(&p, end, &implicit)))
		return err;
	*pos = p;
	if (*done)
		return 0;
	size = form < sizeof(fs->size) ? fs->size[form]
		: elfdw_form_size(form > UINT16_MAX ? UINT16_MAX : (unsigned)form,
				   t->addr_size, t->version);
	*s = (struct elfdw_spec){
		.form = form > UINT16_MAX ? UINT16_MAX : (uint16_t)form,
		.size = (int8_t)(size >= 0 ? size : -1),
		.slot = name < sizeof(t->slot) ? t->slot[name] : attr_slot(t->schema, name),
		.implicit = (uint32_t)t->nimplicits,
	};
	if (form == DW_FORM_implicit_const &&
	    EMBER_VEC_PUSH(t->implicits, t->nimplicits, t->implicits_alloc, implicit))
		return -ENOMEM;
	return size == -2 ? -EOPNOTSUPP : 0;
}

static uint8_t skip_var(unsigned form)
{
	switch (form) {
	case DW_FORM_string: return ELFDW_SKIP_STRING;
	case DW_FORM_block1: return ELFDW_SKIP_BLOCK1;
	case DW_FORM_block2: return ELFDW_SKIP_BLOCK2;
	case DW_FORM_block4: return ELFDW_SKIP_BLOCK4;
	case DW_FORM_block: case DW_FORM_exprloc: return ELFDW_SKIP_BLOCK;
	case DW_FORM_indirect: return ELFDW_SKIP_INDIRECT;
	default: return ELFDW_SKIP_LEB; /* the other variable-size forms */
	}
}

/* The skip program of a: runs of fixed-size values become one step. */
static int plan_ops(struct elfdw_abbrevs *t, struct elfdw_abbrev *a)
{
	struct elfdw_skip_op op = { 0, ELFDW_SKIP_NONE };

	a->op_first = (uint32_t)t->nops;
	for (uint32_t i = 0; i < a->n && !a->bad; i++) {
		const struct elfdw_spec *s = &t->specs[a->first + i];

		if (s->size >= 0 && op.fixed <= UINT16_MAX - 16) {
			op.fixed = (uint16_t)(op.fixed + s->size);
			continue;
		}
		if (s->size >= 0) { /* a long run: close it, start anew */
			if (EMBER_VEC_PUSH(t->ops, t->nops, t->ops_alloc, op))
				return -ENOMEM;
			op = (struct elfdw_skip_op){ (uint16_t)s->size, 0 };
			continue;
		}
		op.var = skip_var(s->form);
		if (EMBER_VEC_PUSH(t->ops, t->nops, t->ops_alloc, op))
			return -ENOMEM;
		op = (struct elfdw_skip_op){ 0, ELFDW_SKIP_NONE };
	}
	if (op.fixed && EMBER_VEC_PUSH(t->ops, t->nops, t->ops_alloc, op))
		return -ENOMEM;
	a->nops = (uint32_t)(t->nops - a->op_first);
	return 0;
}

/* Where a DW_AT_sibling is: at a fixed offset when all values before it
 * have fixed sizes and it has bytes of its own (-1 otherwise: a
 * DW_FORM_implicit_const one is in the table, read as any value is). */
static void plan_sibling(struct elfdw_abbrev *a, const struct elfdw_spec *specs)
{
	int64_t fixed = 0;
	bool all_fixed = true;

	a->sibling_at = -1;
	a->sibling_form = 0;
	for (uint32_t i = 0; i < a->n; i++) {
		const struct elfdw_spec *s = &specs[a->first + i];

		if (s->slot == ELFDW_SLOT_SIBLING && !a->sibling_form) {
			a->sibling_form = s->form;
			a->sibling_at = all_fixed && s->size > 0 ? (int32_t)fixed : -1;
			return;
		}
		if (s->size >= 0 && fixed < INT32_MAX / 2)
			fixed += s->size;
		else
			all_fixed = false;
	}
}

/* The capture list of a subprogram's or inlined subroutine's
 * abbreviation: the first spec of each slot, at its offset when every
 * value before it has a fixed size (else caps_fixed is off and DIEs of a
 * are read spec by spec). */
static int plan_caps(struct elfdw_abbrevs *t, struct elfdw_abbrev *a)
{
	uint32_t at = 0;
	bool fixed = true, ok = !a->bad;

	a->cap_first = (uint32_t)t->ncaps;
	a->ncaps = a->cap_mask = 0;
	a->first_slot = 0;
	a->caps_fixed = false;
	/* only the kinds the walk reads whole (the others: spec by spec) */
	if (!(t->schema->capture_kinds & (1u << a->kind)))
		return 0;
	for (uint32_t i = 0; i < a->n; i++) {
		const struct elfdw_spec *s = &t->specs[a->first + i];
		struct elfdw_cap c = { s->slot, s->form,
					s->form == DW_FORM_implicit_const
						? s->implicit : at };

		if (s->slot && !(a->cap_mask & (1u << s->slot))) {
			a->cap_mask |= 1u << s->slot;
			if ((t->schema->first_mask & (1u << s->slot)) && !a->first_slot)
				a->first_slot = s->slot;
			/* after a value of variable size, or its form in the DIE */
			ok = ok && fixed && s->form != DW_FORM_indirect;
			if (ok && EMBER_VEC_PUSH(t->caps, t->ncaps, t->caps_alloc, c))
				return -ENOMEM;
		}
		if (s->size < 0 || at > UINT32_MAX / 2)
			fixed = false;
		at += s->size >= 0 ? (uint32_t)s->size : 0;
	}
	a->caps_fixed = ok;
	a->ncaps = (uint32_t)(t->ncaps - a->cap_first);
	return 0;
}

/* The specs of abbreviation a into t, up to their (0, 0) end. */
static int read_specs(const uint8_t **pos, const uint8_t *end,
		      struct elfdw_abbrevs *t, const struct form_sizes *fs,
		      struct elfdw_abbrev *a)
{
	bool last = false;

	while (!last) {
		struct elfdw_spec s;
		int err = read_spec(pos, end, t, fs, &s, &last);

		if (err == -EOPNOTSUPP)
			a->bad = true; /* the table is fine; this DIE kind is not */
		else if (err)
			return err;
		if (!last && EMBER_VEC_PUSH(t->specs, t->nspecs, t->specs_alloc, s))
			return -ENOMEM;
	}
	return 0;
}

/* One abbreviation's specs into t; *done at the table's end (code 0). */
static int read_abbrev(const uint8_t **pos, const uint8_t *end,
		       struct elfdw_abbrevs *t, const struct form_sizes *fs,
		       bool *done, struct ember_diag *d)
{
	struct elfdw_abbrev a = { .first = (uint32_t)t->nspecs };
	uint64_t code, tag;
	uint8_t children;
	int err;

	if ((err = ember_cur_uleb(pos, end, &code)))
		return EMBER_FAIL(d, err, "abbreviations at 0x%llx: no end before the section's",
				  (unsigned long long)t->off);
	*done = code == 0;
	if (*done)
		return 0;
	if ((err = ember_cur_uleb(pos, end, &tag)) ||
	    (err = ember_cur_u8(pos, end, &children)) ||
	    (err = read_specs(pos, end, t, fs, &a)))
		return err == -ENOMEM ? err
			: EMBER_FAIL(d, err, "abbreviations at 0x%llx: code %llu %s",
				     (unsigned long long)t->off, (unsigned long long)code,
				     err == -ERANGE ? "has a number past 64 bits"
						    : "runs past the section");
	EMBER_FAIL_IF(t->nspecs >= UINT32_MAX / 2, d, -E2BIG,
		      "abbreviations at 0x%llx: too many attributes",
		      (unsigned long long)t->off);
	a.code = code;
	a.tag = tag > UINT32_MAX ? UINT32_MAX : (uint32_t)tag;
	a.kind = t->schema->tag_kind ? t->schema->tag_kind(tag) & 31 : 0;
	a.children = children == DW_CHILDREN_yes;
	a.n = (uint32_t)(t->nspecs - a.first);
	plan_sibling(&a, t->specs);
	if (plan_ops(t, &a) || plan_caps(t, &a))
		return -ENOMEM;
	return EMBER_VEC_PUSH(t->v, t->n, t->alloc, a);
}

static int code_cmp(const void *pa, const void *pb)
{
	const struct elfdw_abbrev *a = pa, *b = pb;

	return a->code < b->code ? -1 : a->code > b->code;
}

/* Sort by code (producers almost always number 1, 2, 3, ...); a code
 * defined twice is malformed. */
static int index_codes(struct elfdw_abbrevs *t, struct ember_diag *d)
{
	bool sorted = true;

	for (size_t i = 1; i < t->n && sorted; i++)
		sorted = t->v[i - 1].code < t->v[i].code;
	if (!sorted) {
		qsort(t->v, t->n, sizeof(*t->v), code_cmp);
		for (size_t i = 1; i < t->n; i++)
			EMBER_FAIL_IF(t->v[i - 1].code == t->v[i].code, d, -EINVAL,
				      "abbreviations at 0x%llx: code %llu defined twice",
				      (unsigned long long)t->off,
				      (unsigned long long)t->v[i].code);
	}
	t->dense = t->n == 0 || t->v[t->n - 1].code == t->n;
	return 0;
}

static int read_table(struct elfdw_abbrevs *t, const struct elfdw_sect *sect,
		      struct ember_diag *d)
{
	const uint8_t *p, *end;
	struct form_sizes fs;
	bool done = false;
	int err = 0;

	EMBER_FAIL_IF(!sect->data || t->off >= sect->size, d, -EINVAL,
		      "abbreviations at 0x%llx: outside .debug_abbrev (%zu bytes)",
		      (unsigned long long)t->off, sect->size);
	p = sect->data + t->off;
	end = sect->data + sect->size;
	form_sizes_init(&fs, t);
	while (!err && !done)
		err = read_abbrev(&p, end, t, &fs, &done, d);
	t->end = (uint64_t)(p - sect->data);
	return err ? err : index_codes(t, d);
}

int elfdw_abbrevs_read(struct elfdw_abbrevs *t, const struct elfdw_schema *schema,
		       const struct elfdw_sect *sect, uint64_t off,
		       uint8_t addr_size, uint8_t version, struct ember_diag *d)
{
	int err;

	t->n = t->nspecs = t->nops = t->ncaps = t->nimplicits = 0;
	t->schema = schema;
	t->off = off;
	t->addr_size = addr_size;
	t->version = version;
	err = read_table(t, sect, d);
	if (err)
		t->addr_size = 0;
	return err;
}

const struct elfdw_abbrev *elfdw_abbrev_search(const struct elfdw_abbrevs *t,
						 uint64_t code)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->v[mid].code < code)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->n && t->v[lo].code == code ? &t->v[lo] : NULL;
}
