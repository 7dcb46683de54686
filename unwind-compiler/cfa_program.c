/*
 * cfa_program.c - the CFA program interpreter (DWARF 5 §6.4.2): runs a
 * CIE's initial instructions once, then each FDE's instructions from
 * that state, and emits a row at every location change.  Only the
 * columns the format keeps are tracked (CFA, return address, frame
 * pointer); instructions on other registers are decoded and skipped.
 *
 * What the stream may do and the format cannot follow (an unknown
 * opcode, DW_CFA_set_loc going backwards, DW_CFA_restore_state with
 * nothing remembered, more than UNWIND_STATE_DEPTH remembered states)
 * makes the rest of the FDE INVALID.  An operand that runs past the end
 * of its entry is a corrupt section: -UNWIND_ERR_BAD_CFI.
 *
 * Offsets are kept as s64 here; scaling by the alignment factors is
 * checked for overflow (an overflowing rule is INVALID).  rule.c turns
 * the state into the 16-byte rule and decides what fits.
 */
#include "unwind_internal.h"

#include <dwarf.h>
#include <inttypes.h>

#define UNWIND_STATE_DEPTH 64

enum { OP_CONTINUE = 0, OP_STOP = 1 };

struct prog {
	struct unwind_build *b;
	const struct unwind_cie *cie;
	const struct unwind_fde *fde;	/* NULL while running the CIE */
	const uint8_t *p, *end;		/* instructions */
	struct unwind_state st;
	struct unwind_state stack[UNWIND_STATE_DEPTH];
	size_t depth;
	uint64_t loc, loc_end;		/* rows at or past loc_end are dropped */
	bool dirty;			/* st changed since the last row */
	bool stopped;			/* unsupported instruction seen */
};

static const char *where_sec(const struct prog *pr)
{
	return pr->cie->sec == UNWIND_SEC_DEBUG ? ".debug_frame" : ".eh_frame";
}

static uint64_t where_off(const struct prog *pr)
{
	return pr->fde ? pr->fde->offset : pr->cie->offset;
}

static int truncated(struct prog *pr, unsigned op)
{
	return EMBER_FAIL(pr->b->diag, -UNWIND_ERR_BAD_CFI,
			  "'%s' +0x%" PRIx64 ": operand of DW_CFA 0x%02x runs past the entry",
			  where_sec(pr), where_off(pr), op);
}

/* The rest of the FDE is INVALID (or the CIE's whole initial state). */
static int unsupported(struct prog *pr)
{
	pr->st.cfa_kind = UNWIND_CFA_INVALID;
	pr->dirty = true;
	pr->stopped = true;
	if (pr->fde)
		pr->b->stats.fdes_unsupported++;
	return OP_STOP;
}

static void state_default(struct unwind_state *s)
{
	memset(s, 0, sizeof(*s));
	s->cfa_kind = UNWIND_CFA_INVALID; /* until a DW_CFA_def_cfa* */
	s->ra.kind = UNWIND_REG_SAME;
	s->fp.kind = UNWIND_REG_SAME;
}

/* The tracked column of DWARF register reg, or NULL. */
static struct unwind_col *col(struct prog *pr, uint64_t reg)
{
	if (reg == pr->cie->ra_reg)
		return &pr->st.ra;
	if (reg == pr->b->arch.fp_reg)
		return &pr->st.fp;
	return NULL;
}

static int emit(struct prog *pr)
{
	struct unwind_rule r;

	if (!pr->fde || !pr->dirty || pr->loc >= pr->loc_end)
		return 0;
	pr->dirty = false;
	unwind_rule_from_state(&pr->st, &r);
	return unwind_rows_push(pr->b, pr->loc, &r);
}

/*
 * Emit the row of the current location, then move to next (>= loc).
 * Not moving emits nothing: the instructions that follow still belong
 * to the same row (a later row at the same address wins).
 */
static int move_to(struct prog *pr, uint64_t next)
{
	int err;

	if (next == pr->loc)
		return OP_CONTINUE;
	err = emit(pr);
	if (err)
		return err;
	pr->loc = next;
	return pr->fde && next >= pr->loc_end ? OP_STOP : OP_CONTINUE;
}

/* DW_CFA_advance_loc*: delta code alignment units. */
static int advance(struct prog *pr, uint64_t delta)
{
	uint64_t bytes, next;

	if (__builtin_mul_overflow(delta, pr->cie->code_align, &bytes) ||
	    __builtin_add_overflow(pr->loc, bytes, &next))
		next = UINT64_MAX;
	return move_to(pr, next);
}

/* DW_CFA_set_loc: an address in the FDE's pointer encoding. */
static int set_loc(struct prog *pr)
{
	const struct unwind_section *s = &pr->b->in->sec[pr->cie->sec];
	struct unwind_ptr_ctx c = { s->data, s->vaddr, 0, pr->cie->addr_size };
	uint8_t enc = pr->cie->sec == UNWIND_SEC_EH ? pr->cie->fde_enc : 0;
	uint64_t to;
	int err = unwind_read_encoded(&pr->p, pr->end, enc, &c, &to);

	if (err == -ENOTSUP)
		return unsupported(pr);
	if (err)
		return truncated(pr, DW_CFA_set_loc);
	if (to < pr->loc)
		return unsupported(pr);
	return move_to(pr, to);
}

/* off * data_align into c (kind), INVALID on overflow. */
static void col_set_scaled(struct unwind_col *c, uint8_t kind, int64_t off,
			   int64_t align)
{
	c->kind = kind;
	c->reg = 0;
	if (__builtin_mul_overflow(off, align, &c->off))
		c->kind = UNWIND_REG_INVALID;
}

/* An unsigned operand as s64 (INVALID beyond INT64_MAX, flagged by -1). */
static int64_t s64_of(uint64_t v, bool *ok)
{
	*ok = v <= INT64_MAX;
	return (int64_t)(v & INT64_MAX);
}

/* DW_CFA_offset, _extended, _sf, val_offset*, GNU_negative_offset_extended. */
static int op_offset(struct prog *pr, unsigned op, uint64_t reg)
{
	uint64_t u = 0;
	int64_t s = 0;
	bool ok = true;
	bool sf = op == DW_CFA_offset_extended_sf || op == DW_CFA_val_offset_sf;
	uint8_t kind = op == DW_CFA_val_offset || op == DW_CFA_val_offset_sf
			       ? UNWIND_REG_VAL_CFA : UNWIND_REG_AT_CFA;
	struct unwind_col *c;

	if (sf ? ember_cur_sleb(&pr->p, pr->end, &s)
	       : ember_cur_uleb(&pr->p, pr->end, &u))
		return truncated(pr, op);
	if (!sf)
		s = s64_of(u, &ok);
	if (op == DW_CFA_GNU_negative_offset_extended)
		s = -s;
	c = col(pr, reg);
	if (c) {
		col_set_scaled(c, kind, s, pr->cie->data_align);
		if (!ok)
			c->kind = UNWIND_REG_INVALID;
		pr->dirty = true;
	}
	return OP_CONTINUE;
}

/* DW_CFA_restore, _extended: back to the CIE's rule. */
static void op_restore(struct prog *pr, uint64_t reg)
{
	struct unwind_col *c = col(pr, reg);
	struct unwind_state def;

	if (!c)
		return;
	if (pr->fde) {
		*c = c == &pr->st.ra ? pr->cie->initial.ra : pr->cie->initial.fp;
	} else {
		state_default(&def);
		*c = def.ra;
	}
	pr->dirty = true;
}

/* Register-rule instructions with a ULEB register operand first. */
static int op_register_rule(struct prog *pr, unsigned op)
{
	uint64_t reg, reg2 = 0, len = 0;
	const uint8_t *block = NULL;
	struct unwind_col *c;

	if (ember_cur_uleb(&pr->p, pr->end, &reg))
		return truncated(pr, op);
	switch (op) {
	case DW_CFA_offset_extended: case DW_CFA_offset_extended_sf:
	case DW_CFA_val_offset: case DW_CFA_val_offset_sf:
	case DW_CFA_GNU_negative_offset_extended:
		return op_offset(pr, op, reg);
	case DW_CFA_restore_extended:
		op_restore(pr, reg);
		return OP_CONTINUE;
	case DW_CFA_register:
		if (ember_cur_uleb(&pr->p, pr->end, &reg2))
			return truncated(pr, op);
		break;
	case DW_CFA_expression: case DW_CFA_val_expression:
		if (ember_cur_uleb(&pr->p, pr->end, &len) ||
		    ember_cur_bytes(&pr->p, pr->end, len, &block))
			return truncated(pr, op);
		break;
	}
	c = col(pr, reg);
	if (!c)
		return OP_CONTINUE;
	pr->dirty = true;
	if (op == DW_CFA_undefined || op == DW_CFA_same_value)
		*c = (struct unwind_col){ op == DW_CFA_undefined ? UNWIND_REG_UNDEFINED
								 : UNWIND_REG_SAME, 0, 0 };
	else if (op == DW_CFA_register)
		*c = (struct unwind_col){ UNWIND_REG_REGISTER, reg2, 0 };
	else
		unwind_expr_reg(block, len, op == DW_CFA_val_expression, c);
	return OP_CONTINUE;
}

/* DW_CFA_def_cfa* */
static int op_def_cfa(struct prog *pr, unsigned op)
{
	struct unwind_state *s = &pr->st;
	uint64_t reg = s->cfa_reg, u = 0, len = 0;
	int64_t off = 0;
	const uint8_t *block = NULL;
	bool ok = true, sf = op == DW_CFA_def_cfa_sf || op == DW_CFA_def_cfa_offset_sf;

	pr->dirty = true;
	if (op == DW_CFA_def_cfa_expression) {
		if (ember_cur_uleb(&pr->p, pr->end, &len) ||
		    ember_cur_bytes(&pr->p, pr->end, len, &block))
			return truncated(pr, op);
		unwind_expr_cfa(block, len, pr->b->in->machine, s);
		return OP_CONTINUE;
	}
	if (op != DW_CFA_def_cfa_offset && op != DW_CFA_def_cfa_offset_sf &&
	    ember_cur_uleb(&pr->p, pr->end, &reg))
		return truncated(pr, op);
	if (op != DW_CFA_def_cfa_register &&
	    (sf ? ember_cur_sleb(&pr->p, pr->end, &off)
		: ember_cur_uleb(&pr->p, pr->end, &u)))
		return truncated(pr, op);
	if (op == DW_CFA_def_cfa_register) {
		off = s->cfa_off; /* the offset stays (readelf, libgcc) */
	} else if (sf) {
		ok = !__builtin_mul_overflow(off, pr->cie->data_align, &off);
	} else {
		off = s64_of(u, &ok);
	}
	if ((op == DW_CFA_def_cfa_offset || op == DW_CFA_def_cfa_offset_sf) &&
	    s->cfa_kind != UNWIND_CFA_REG)
		ok = false; /* only a register rule has an offset to change */
	*s = (struct unwind_state){ ok ? UNWIND_CFA_REG : UNWIND_CFA_INVALID,
				    s->ra_signed, reg, off, 0, s->ra, s->fp };
	return OP_CONTINUE;
}

static int op_state(struct prog *pr, unsigned op)
{
	if (op == DW_CFA_remember_state) {
		if (pr->depth == UNWIND_STATE_DEPTH)
			return unsupported(pr);
		pr->stack[pr->depth++] = pr->st;
		return OP_CONTINUE;
	}
	if (pr->depth == 0)
		return unsupported(pr);
	pr->st = pr->stack[--pr->depth];
	pr->dirty = true;
	return OP_CONTINUE;
}

/* Location instructions: DW_CFA_advance_loc1/2/4, MIPS_advance_loc8. */
static int op_advance(struct prog *pr, unsigned op)
{
	static const uint8_t size[] = { [DW_CFA_advance_loc1] = 1,
					[DW_CFA_advance_loc2] = 2,
					[DW_CFA_advance_loc4] = 4 };
	unsigned n = op == DW_CFA_MIPS_advance_loc8 ? 8 : size[op];
	uint64_t delta;

	if (ember_cur_uint(&pr->p, pr->end, n, &delta))
		return truncated(pr, op);
	return advance(pr, delta);
}

/* One extended (low 6 bits = opcode) instruction. */
static int op_extended(struct prog *pr, unsigned op)
{
	uint64_t skip;

	switch (op) {
	case DW_CFA_nop:
		return OP_CONTINUE;
	case DW_CFA_set_loc:
		return set_loc(pr);
	case DW_CFA_advance_loc1: case DW_CFA_advance_loc2:
	case DW_CFA_advance_loc4: case DW_CFA_MIPS_advance_loc8:
		return op_advance(pr, op);
	case DW_CFA_offset_extended: case DW_CFA_restore_extended:
	case DW_CFA_undefined: case DW_CFA_same_value: case DW_CFA_register:
	case DW_CFA_expression: case DW_CFA_offset_extended_sf:
	case DW_CFA_val_offset: case DW_CFA_val_offset_sf:
	case DW_CFA_val_expression: case DW_CFA_GNU_negative_offset_extended:
		return op_register_rule(pr, op);
	case DW_CFA_remember_state: case DW_CFA_restore_state:
		return op_state(pr, op);
	case DW_CFA_def_cfa: case DW_CFA_def_cfa_register:
	case DW_CFA_def_cfa_offset: case DW_CFA_def_cfa_expression:
	case DW_CFA_def_cfa_sf: case DW_CFA_def_cfa_offset_sf:
		return op_def_cfa(pr, op);
	case DW_CFA_GNU_args_size:
		return ember_cur_uleb(&pr->p, pr->end, &skip) ? truncated(pr, op)
								: OP_CONTINUE;
	case DW_CFA_AARCH64_negate_ra_state: /* = DW_CFA_GNU_window_save */
		if (pr->b->in->machine == UNWIND_EM_AARCH64) {
			pr->st.ra_signed = !pr->st.ra_signed;
			pr->dirty = true;
		}
		return OP_CONTINUE;
	default:
		return unsupported(pr);
	}
}

static int step(struct prog *pr)
{
	uint8_t op = *pr->p++;

	switch (op & 0xc0) {
	case DW_CFA_advance_loc:
		return advance(pr, op & 0x3f);
	case DW_CFA_offset:
		return op_offset(pr, DW_CFA_offset, op & 0x3f);
	case DW_CFA_restore:
		op_restore(pr, op & 0x3f);
		return OP_CONTINUE;
	default:
		return op_extended(pr, op);
	}
}

/* Run to the end of the instructions (or a stop), then emit the last row. */
static int run(struct prog *pr)
{
	int r = OP_CONTINUE;

	while (pr->p < pr->end && r == OP_CONTINUE)
		r = step(pr);
	if (r < 0)
		return r;
	return emit(pr);
}

/* Set up pr without touching its remember stack (5 KiB, per FDE). */
static void prog_init(struct prog *pr, struct unwind_build *b,
		      const struct unwind_cie *cie, const struct unwind_fde *fde,
		      uint64_t end)
{
	pr->b = b;
	pr->cie = cie;
	pr->fde = fde;
	pr->p = fde ? fde->insns : cie->insns;
	pr->end = fde ? fde->insns + fde->insns_len : cie->insns_end;
	pr->depth = 0;
	pr->loc = fde ? fde->start : 0;
	pr->loc_end = end;
	pr->dirty = true;
	pr->stopped = false;
	if (fde)
		pr->st = cie->initial;
	else
		state_default(&pr->st);
}

int unwind_cie_initial(struct unwind_build *b, struct unwind_cie *cie)
{
	struct prog pr;
	int err;

	if (cie->initial_err <= 0)
		return cie->initial_err;
	prog_init(&pr, b, cie, NULL, 0);
	err = run(&pr);
	if (err) {
		cie->initial_err = err;
		return err;
	}
	cie->initial = pr.st;
	cie->initial_unsupported = pr.stopped;
	cie->initial_err = 0;
	return 0;
}

int unwind_program_run(struct unwind_build *b, const struct unwind_fde *fde,
		       uint64_t end)
{
	struct unwind_cie *cie = unwind_fde_cie(b, fde);
	struct prog pr;
	int err = unwind_cie_initial(b, cie);

	if (err)
		return err;
	if (cie->signal || cie->initial_unsupported) {
		struct unwind_rule r = { .cfa_kind = cie->signal ? UNWIND_CFA_SIGNAL
								 : UNWIND_CFA_INVALID };

		b->stats.fdes_unsupported += !cie->signal;
		return unwind_rows_push(b, fde->start, &r);
	}
	prog_init(&pr, b, cie, fde, end);
	return run(&pr);
}
