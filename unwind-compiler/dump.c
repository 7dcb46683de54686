/*
 * dump.c - the text form of a row, one line of `ember unwind dump`:
 *
 *   pc_start         cfa_reg cfa_off ra_rule fp_rule
 *   000000000002600f rsp     16      c-8     same
 *
 * The vocabulary is readelf's (--debug-dump=frames-interp) as normalized
 * by tests/unwind/readelf_rows.py, so a compiled table can be diffed
 * against GNU binutils; docs/unwind-format.md ("Text form") lists it.
 * Register names are readelf's (binutils dwarf.c dwarf_regnames_*).
 */
#include "unwind_internal.h"

#include <inttypes.h>
#include <stdio.h>

static const char *const x86_64_names[] = {
	"rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip",
};

const char *unwind_reg_name(uint16_t machine, unsigned reg, char *buf,
			    size_t size)
{
	if (machine == UNWIND_EM_X86_64 && reg < sizeof(x86_64_names) / sizeof(*x86_64_names))
		return x86_64_names[reg];
	if (machine == UNWIND_EM_X86_64 && reg >= 17 && reg <= 32)
		snprintf(buf, size, "xmm%u", reg - 17);
	else if (machine == UNWIND_EM_AARCH64 && reg == 31)
		snprintf(buf, size, "sp");
	else if (machine == UNWIND_EM_AARCH64 && reg < 31)
		snprintf(buf, size, "x%u", reg);
	else
		snprintf(buf, size, "r%u", reg);
	return buf;
}

/* "c-8", "reg:rdi", "at(rbp+0)", ... */
static void col_format(enum unwind_reg_kind kind, uint8_t reg, int16_t off,
		       uint16_t machine, char *out, size_t size)
{
	char nb[16];
	const char *name = unwind_reg_name(machine, reg, nb, sizeof(nb));

	switch (kind) {
	case UNWIND_REG_SAME: snprintf(out, size, "same"); break;
	case UNWIND_REG_UNDEFINED: snprintf(out, size, "undefined"); break;
	case UNWIND_REG_AT_CFA: snprintf(out, size, "c%+d", off); break;
	case UNWIND_REG_VAL_CFA: snprintf(out, size, "v%+d", off); break;
	case UNWIND_REG_REGISTER: snprintf(out, size, "reg:%s", name); break;
	case UNWIND_REG_AT_REG: snprintf(out, size, "at(%s%+d)", name, off); break;
	case UNWIND_REG_VAL_REG: snprintf(out, size, "vat(%s%+d)", name, off); break;
	default: snprintf(out, size, "invalid"); break;
	}
}

/* "rsp 16", "plt 11", "deref(rbp-40) 0", or a kind with "-" columns. */
static void cfa_format(const struct unwind_rule *r, uint16_t machine,
		       char *out, size_t size)
{
	char nb[16];
	const char *name = unwind_reg_name(machine, r->cfa_reg, nb, sizeof(nb));

	switch (r->cfa_kind) {
	case UNWIND_CFA_REG:
		snprintf(out, size, "%s %" PRId32, name, r->cfa_off);
		break;
	case UNWIND_CFA_PLT:
		snprintf(out, size, "plt %d", r->cfa_aux);
		break;
	case UNWIND_CFA_DEREF:
		snprintf(out, size, "deref(%s%+" PRId32 ") %d", name, r->cfa_off,
			 r->cfa_aux);
		break;
	default:
		out[0] = '\0';
	}
}

int unwind_row_format(const struct unwind_row *row, uint16_t machine,
		      char *buf, size_t size)
{
	static const char *const whole[] = {
		[UNWIND_CFA_END] = "end", [UNWIND_CFA_SIGNAL] = "signal",
		[UNWIND_CFA_INVALID] = "invalid",
	};
	const struct unwind_rule *r = &row->rule;
	char cfa[48], ra[32], fp[32];
	int n;

	cfa_format(r, machine, cfa, sizeof(cfa));
	if (!cfa[0]) {
		n = snprintf(buf, size, "%016" PRIx64 " %s - - -", row->pc,
			     r->cfa_kind < UNWIND_CFA_KIND_COUNT && whole[r->cfa_kind]
				     ? whole[r->cfa_kind] : "invalid");
	} else {
		col_format(unwind_rule_ra_kind(r), r->ra_reg, r->ra_off, machine,
			   ra, sizeof(ra));
		col_format(unwind_rule_fp_kind(r), r->fp_reg, r->fp_off, machine,
			   fp, sizeof(fp));
		n = snprintf(buf, size, "%016" PRIx64 " %s %s%s %s", row->pc, cfa,
			     ra, (r->flags & UNWIND_RULE_RA_SIGNED) ? "(signed)" : "",
			     fp);
	}
	return n < 0 || (size_t)n >= size ? -E2BIG : n;
}
