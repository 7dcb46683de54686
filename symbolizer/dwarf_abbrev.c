/*
 * dwarf_abbrev.c - abbreviation tables (.debug_abbrev, DWARF 5 §7.5.3)
 * for the DIE reader, with a plan per abbreviation: the slot of each
 * attribute the index needs, the size of every value whose form has a
 * fixed size, and a skip program in which each run of fixed-size values
 * is one step, so that the walk steps over most DIEs without looking at
 * their attributes (a DIE whose values all have fixed sizes is one
 * addition).  A DW_AT_sibling at a fixed position is read in place.
 */
#include "sym_internal.h"

#include <dwarf.h>
#include <stdlib.h>

/* The GNU split-DWARF attributes (DW_AT_GNU_dwo_name .. GNU_addr_base). */
#define AT_GNU_DWO_NAME 0x2130
#define AT_GNU_ADDR_BASE 0x2133

static uint8_t attr_slot(uint64_t name)
{
	switch (name) {
	case DW_AT_sibling: return SYM_DW_SIBLING;
	case DW_AT_name: return SYM_DW_NAME;
	case DW_AT_linkage_name: return SYM_DW_LINKAGE_NAME;
	case DW_AT_MIPS_linkage_name: return SYM_DW_MIPS_LINKAGE_NAME;
	case DW_AT_decl_file: return SYM_DW_DECL_FILE;
	case DW_AT_decl_line: return SYM_DW_DECL_LINE;
	case DW_AT_abstract_origin: return SYM_DW_ABSTRACT_ORIGIN;
	case DW_AT_specification: return SYM_DW_SPECIFICATION;
	case DW_AT_low_pc: return SYM_DW_LOW_PC;
	case DW_AT_high_pc: return SYM_DW_HIGH_PC;
	case DW_AT_ranges: return SYM_DW_RANGES;
	case DW_AT_entry_pc: return SYM_DW_ENTRY_PC;
	case DW_AT_call_file: return SYM_DW_CALL_FILE;
	case DW_AT_call_line: return SYM_DW_CALL_LINE;
	case DW_AT_call_column: return SYM_DW_CALL_COLUMN;
	case SYM_AT_GNU_DISCRIMINATOR: return SYM_DW_DISCRIMINATOR;
	case DW_AT_comp_dir: return SYM_DW_COMP_DIR;
	case DW_AT_stmt_list: return SYM_DW_STMT_LIST;
	case DW_AT_addr_base: return SYM_DW_ADDR_BASE;
	case DW_AT_str_offsets_base: return SYM_DW_STR_OFFSETS_BASE;
	case DW_AT_rnglists_base: return SYM_DW_RNGLISTS_BASE;
	case DW_AT_dwo_name: return SYM_DW_SPLIT;
	default:
		return name >= AT_GNU_DWO_NAME && name <= AT_GNU_ADDR_BASE
			       ? SYM_DW_SPLIT : SYM_DW_NOSLOT;
	}
}

uint8_t sym_dw_tag_kind(uint64_t tag)
{
	switch (tag) {
	case DW_TAG_compile_unit: case DW_TAG_partial_unit:
		return SYM_DW_UNIT;
	case DW_TAG_subprogram:
		return SYM_DW_FUNC;
	case DW_TAG_inlined_subroutine:
		return SYM_DW_INLINED;
	case DW_TAG_lexical_block: case DW_TAG_try_block:
	case DW_TAG_catch_block:
		return SYM_DW_BLOCK;
	case DW_TAG_namespace: case DW_TAG_module: case DW_TAG_class_type:
	case DW_TAG_structure_type: case DW_TAG_union_type:
		return SYM_DW_SCOPE;
	default:
		return SYM_DW_OTHER;
	}
}

void sym_dw_abbrevs_release(struct sym_dw_abbrevs *t)
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
 * a switch per attribute (the GNU forms above take the switch). */
struct form_sizes {
	int8_t size[0x2d];
};

static void form_sizes_init(struct form_sizes *fs, const struct sym_dw_abbrevs *t)
{
	for (unsigned f = 0; f < sizeof(fs->size); f++)
		fs->size[f] = (int8_t)sym_dw_form_size(f, t->addr_size, t->version);
}

/* One (name, form[, implicit value]) pair; *done at the (0, 0) end. */
static inline int read_spec(const uint8_t **pos, const uint8_t *end,
			    struct sym_dw_abbrevs *t,
			    const struct form_sizes *fs, struct sym_dw_spec *s,
			    bool *done)
{
	const uint8_t *p = *pos;
	uint64_t name, form;
	int64_t implicit = 0;
	int size;

	if (elfdw_read_uleb(&p, end, &name) || elfdw_read_uleb(&p, end, &form))
		return -EINVAL;
	*done = name == 0 && form == 0;
	if (!*done && form == DW_FORM_implicit_const &&
	    elfdw_read_sleb(&p, end, &implicit))
		return -EINVAL;
	*pos = p;
	if (*done)
		return 0;
	size = form < sizeof(fs->size) ? fs->size[form]
		: sym_dw_form_size(form > UINT16_MAX ? UINT16_MAX : (unsigned)form,
				   t->addr_size, t->version);
	*s = (struct sym_dw_spec){
		.form = form > UINT16_MAX ? UINT16_MAX : (uint16_t)form,
		.size = (int8_t)(size >= 0 ? size : -1),
		.slot = attr_slot(name),
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
	case DW_FORM_string: return SYM_DW_SKIP_STRING;
	case DW_FORM_block1: return SYM_DW_SKIP_BLOCK1;
	case DW_FORM_block2: return SYM_DW_SKIP_BLOCK2;
	case DW_FORM_block4: return SYM_DW_SKIP_BLOCK4;
	case DW_FORM_block: case DW_FORM_exprloc: return SYM_DW_SKIP_BLOCK;
	case DW_FORM_indirect: return SYM_DW_SKIP_INDIRECT;
	default: return SYM_DW_SKIP_LEB; /* the other variable-size forms */
	}
}

/* The skip program of a: runs of fixed-size values become one step. */
static int plan_ops(struct sym_dw_abbrevs *t, struct sym_dw_abbrev *a)
{
	struct sym_dw_skip op = { 0, SYM_DW_SKIP_NONE };

	a->op_first = (uint32_t)t->nops;
	for (uint32_t i = 0; i < a->n && !a->bad; i++) {
		const struct sym_dw_spec *s = &t->specs[a->first + i];

		if (s->size >= 0 && op.fixed <= UINT16_MAX - 16) {
			op.fixed = (uint16_t)(op.fixed + s->size);
			continue;
		}
		if (s->size >= 0) { /* a long run: close it, start anew */
			if (EMBER_VEC_PUSH(t->ops, t->nops, t->ops_alloc, op))
				return -ENOMEM;
			op = (struct sym_dw_skip){ (uint16_t)s->size, 0 };
			continue;
		}
		op.var = skip_var(s->form);
		if (EMBER_VEC_PUSH(t->ops, t->nops, t->ops_alloc, op))
			return -ENOMEM;
		op = (struct sym_dw_skip){ 0, SYM_DW_SKIP_NONE };
	}
	if (op.fixed && EMBER_VEC_PUSH(t->ops, t->nops, t->ops_alloc, op))
		return -ENOMEM;
	a->nops = (uint32_t)(t->nops - a->op_first);
	return 0;
}

/* Where a DW_AT_sibling is: at a fixed offset when all values before it
 * have fixed sizes (-1 otherwise). */
static void plan_sibling(struct sym_dw_abbrev *a, const struct sym_dw_spec *specs)
{
	int64_t fixed = 0;
	bool all_fixed = true;

	a->sibling_at = -1;
	a->sibling_form = 0;
	for (uint32_t i = 0; i < a->n; i++) {
		const struct sym_dw_spec *s = &specs[a->first + i];

		if (s->slot == SYM_DW_SIBLING && !a->sibling_form) {
			a->sibling_form = s->form;
			a->sibling_at = all_fixed ? (int32_t)fixed : -1;
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
static int plan_caps(struct sym_dw_abbrevs *t, struct sym_dw_abbrev *a)
{
	uint32_t at = 0;
	bool fixed = true, ok = !a->bad;

	a->cap_first = (uint32_t)t->ncaps;
	a->ncaps = a->cap_mask = 0;
	a->first_origin = 0;
	a->caps_fixed = false;
	/* only the kinds the walk reads whole (the others: spec by spec) */
	if (a->kind != SYM_DW_FUNC && a->kind != SYM_DW_INLINED)
		return 0;
	for (uint32_t i = 0; i < a->n; i++) {
		const struct sym_dw_spec *s = &t->specs[a->first + i];
		struct sym_dw_cap c = { s->slot, s->form,
					s->form == DW_FORM_implicit_const
						? s->implicit : at };

		if (s->slot && !(a->cap_mask & (1u << s->slot))) {
			a->cap_mask |= 1u << s->slot;
			if ((s->slot == SYM_DW_ABSTRACT_ORIGIN ||
			     s->slot == SYM_DW_SPECIFICATION) && !a->first_origin)
				a->first_origin = s->slot;
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

/* One abbreviation's specs into t; *done at the table's end (code 0). */
static int read_abbrev(const uint8_t **pos, const uint8_t *end,
		       struct sym_dw_abbrevs *t, const struct form_sizes *fs,
		       bool *done)
{
	struct sym_dw_abbrev a = { .first = (uint32_t)t->nspecs };
	uint64_t code, tag, children;
	bool last = false;

	if (elfdw_read_uleb(pos, end, &code))
		return -EINVAL;
	*done = code == 0;
	if (*done)
		return 0;
	if (elfdw_read_uleb(pos, end, &tag) || elfdw_read_un(pos, end, 1, &children) ||
	    t->nspecs >= UINT32_MAX / 2)
		return -EINVAL;
	for (;;) {
		struct sym_dw_spec s;
		int err = read_spec(pos, end, t, fs, &s, &last);

		if (err == -EOPNOTSUPP)
			a.bad = true; /* the table is fine; this DIE kind is not */
		else if (err)
			return err;
		if (last)
			break;
		if (EMBER_VEC_PUSH(t->specs, t->nspecs, t->specs_alloc, s))
			return -ENOMEM;
	}
	a.code = code;
	a.tag = tag > UINT32_MAX ? UINT32_MAX : (uint32_t)tag;
	a.kind = sym_dw_tag_kind(tag);
	a.children = children == DW_CHILDREN_yes;
	a.n = (uint32_t)(t->nspecs - a.first);
	plan_sibling(&a, t->specs);
	if (plan_ops(t, &a) || plan_caps(t, &a))
		return -ENOMEM;
	return EMBER_VEC_PUSH(t->v, t->n, t->alloc, a);
}

static int code_cmp(const void *pa, const void *pb)
{
	const struct sym_dw_abbrev *a = pa, *b = pb;

	return a->code < b->code ? -1 : a->code > b->code;
}

/* Sort by code (producers almost always number 1, 2, 3, ...); a code
 * defined twice is malformed. */
static int index_codes(struct sym_dw_abbrevs *t)
{
	bool sorted = true;

	for (size_t i = 1; i < t->n && sorted; i++)
		sorted = t->v[i - 1].code < t->v[i].code;
	if (!sorted) {
		qsort(t->v, t->n, sizeof(*t->v), code_cmp);
		for (size_t i = 1; i < t->n; i++)
			if (t->v[i - 1].code == t->v[i].code)
				return -EINVAL;
	}
	t->dense = t->n == 0 || t->v[t->n - 1].code == t->n;
	return 0;
}

int sym_dw_abbrevs_read(struct sym_dw_abbrevs *t, const struct elfdw_sect *sect,
			uint64_t off, uint8_t addr_size, uint8_t version)
{
	const uint8_t *p, *end;
	struct form_sizes fs;
	bool done = false;
	int err = 0;

	t->n = t->nspecs = t->nops = t->ncaps = t->nimplicits = 0;
	t->off = off;
	t->addr_size = addr_size;
	t->version = version;
	if (!sect->data || off >= sect->size)
		return -EINVAL;
	p = sect->data + off;
	end = sect->data + sect->size;
	form_sizes_init(&fs, t);
	while (!err && !done)
		err = read_abbrev(&p, end, t, &fs, &done);
	return err ? err : index_codes(t);
}

const struct sym_dw_abbrev *sym_dw_abbrev_search(const struct sym_dw_abbrevs *t,
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
