/*
 * cfa_expr.c - classify the DWARF expressions (DWARF 5 §2.5) that CFI
 * uses into the few forms an eBPF unwinder can evaluate:
 *
 *   CFA  breg7 8; breg16 0; lit15; and; lit10|lit11; ge; lit3; shl; plus
 *          -> PLT: rsp + 8, plus 8 when (rip & 15) >= 10|11 (the x86-64
 *             lazy-binding PLT stubs GCC and binutils describe)
 *        bregN off; deref [; plus_uconst k]
 *          -> DEREF: *(regN + off) + k (DRAP and stack-switch frames)
 *   reg  bregN off -> AT_REG (DW_CFA_expression), VAL_REG (val_expression)
 *
 * Anything else is INVALID: never evaluated, never guessed.  The
 * expression bytes are matched op by op, so an operand encoded with
 * redundant LEB128 bytes still matches.
 */
#include "unwind_internal.h"

#include <dwarf.h>

/* One operation: opcode and the one operand these forms use. */
struct expr_op {
	uint8_t op;
	int64_t s;		/* bregN offset */
	uint64_t u;		/* plus_uconst */
};

/* Decode up to max operations; -1 if an op is outside the vocabulary
 * above or an operand is truncated, else the number of ops. */
static int expr_decode(const uint8_t *p, const uint8_t *end,
		       struct expr_op *ops, int max)
{
	int n = 0;

	while (p < end) {
		struct expr_op o = { .op = *p++ };

		if (n == max)
			return -1;
		if (o.op >= DW_OP_breg0 && o.op <= DW_OP_breg31) {
			if (ember_cur_sleb(&p, end, &o.s))
				return -1;
		} else if (o.op == DW_OP_plus_uconst) {
			if (ember_cur_uleb(&p, end, &o.u))
				return -1;
		} else if (o.op != DW_OP_deref && o.op != DW_OP_and &&
			   o.op != DW_OP_ge && o.op != DW_OP_shl &&
			   o.op != DW_OP_plus &&
			   !(o.op >= DW_OP_lit0 && o.op <= DW_OP_lit31)) {
			return -1;
		}
		ops[n++] = o;
	}
	return n;
}

static bool is_plt(const struct expr_op *o, int n, uint16_t machine)
{
	static const uint8_t shape[9] = {
		DW_OP_breg7, DW_OP_breg16, DW_OP_lit15, DW_OP_and, 0,
		DW_OP_ge, DW_OP_lit3, DW_OP_shl, DW_OP_plus,
	};

	if (machine != UNWIND_EM_X86_64 || n != 9 || o[0].s != 8 || o[1].s != 0)
		return false;
	for (int i = 0; i < 9; i++)
		if (i != 4 && o[i].op != shape[i])
			return false;
	return o[4].op == DW_OP_lit10 || o[4].op == DW_OP_lit11;
}

void unwind_expr_cfa(const uint8_t *expr, size_t len, uint16_t machine,
		     struct unwind_state *s)
{
	struct expr_op o[9];
	int n = expr_decode(expr, expr + len, o, 9);
	bool is_breg = n >= 1 && o[0].op >= DW_OP_breg0 && o[0].op <= DW_OP_breg31;

	s->cfa_reg = s->cfa_off = s->cfa_aux = 0;
	s->cfa_kind = UNWIND_CFA_INVALID;
	if (is_plt(o, n, machine)) {
		s->cfa_kind = UNWIND_CFA_PLT;
		s->cfa_reg = 7;
		s->cfa_off = 8;
		s->cfa_aux = o[4].op - DW_OP_lit0;
	} else if (is_breg && (n == 2 || n == 3) && o[1].op == DW_OP_deref &&
		   (n == 2 || o[2].op == DW_OP_plus_uconst) &&
		   (n == 2 || o[2].u <= INT64_MAX)) {
		s->cfa_kind = UNWIND_CFA_DEREF;
		s->cfa_reg = o[0].op - DW_OP_breg0;
		s->cfa_off = o[0].s;
		s->cfa_aux = n == 3 ? (int64_t)o[2].u : 0;
	}
}

void unwind_expr_reg(const uint8_t *expr, size_t len, bool val,
		     struct unwind_col *c)
{
	struct expr_op o[1];
	int n = expr_decode(expr, expr + len, o, 1);

	*c = (struct unwind_col){ UNWIND_REG_INVALID, 0, 0 };
	if (n == 1 && o[0].op >= DW_OP_breg0 && o[0].op <= DW_OP_breg31)
		*c = (struct unwind_col){ val ? UNWIND_REG_VAL_REG : UNWIND_REG_AT_REG,
					  (uint64_t)(o[0].op - DW_OP_breg0), o[0].s };
}
