/*
 * dwarf_lines.c - line-table rows of one unit as address intervals
 * (DWARF 5 §6.2).  Row i covers [addr_i, addr_{i+1}); an end_sequence row
 * closes its sequence.  libdw returns the rows sorted by address with an
 * end_sequence marker before a row that starts at the same address, and
 * among rows at one address the last one wins (as llvm-symbolizer does),
 * which falls out of dropping zero-length rows.
 *
 * That sort order hides where sequences end: a last row that sits at its
 * own sequence's end address sorts after the end marker and would seem
 * to run on to the next sequence.  So rows are clipped to the unit's own
 * address ranges (DW_AT_ranges / low_pc+high_pc), which is also how
 * llvm-symbolizer scopes a line-table lookup: unit first, then rows.
 */
#include "sym_internal.h"

#include <stdlib.h>

struct unit_ranges {
	struct { uint64_t lo, hi; } *r;
	size_t n, alloc;
};

static int range_cmp(const void *pa, const void *pb)
{
	const uint64_t *a = pa, *b = pb;

	return a[0] < b[0] ? -1 : a[0] > b[0];
}

static int unit_ranges_read(Dwarf_Die *cudie, struct unit_ranges *ur)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;

	while ((off = dwarf_ranges(cudie, off, &base, &lo, &hi)) > 0) {
		if (hi <= lo)
			continue;
		if (sym_vec_grow((void **)&ur->r, &ur->alloc, ur->n,
				 sizeof(*ur->r)))
			return -ENOMEM;
		ur->r[ur->n].lo = lo;
		ur->r[ur->n].hi = hi;
		ur->n++;
	}
	if (ur->n > 1)
		qsort(ur->r, ur->n, sizeof(*ur->r), range_cmp);
	return 0;
}

/* Clip [*lo, *hi) to the unit range holding *lo; false if none does.
 * A unit without ranges keeps all its rows. */
static bool unit_ranges_clip(const struct unit_ranges *ur, uint64_t lo,
			     uint64_t *hi)
{
	size_t a = 0, b = ur->n;

	if (ur->n == 0)
		return true;
	while (a < b) {
		size_t mid = a + (b - a) / 2;

		if (ur->r[mid].lo <= lo)
			a = mid + 1;
		else
			b = mid;
	}
	if (a == 0 || lo >= ur->r[a - 1].hi)
		return false;
	if (*hi > ur->r[a - 1].hi)
		*hi = ur->r[a - 1].hi;
	return true;
}

static int line_file(struct sym_index *idx, const char *comp_dir,
		     Dwarf_Line *line, const char **last_name,
		     uint32_t *last_off)
{
	const char *name = dwarf_linesrc(line, NULL, NULL);
	int64_t off;

	if (name == *last_name)
		return 0;
	off = sym_intern_path(idx, comp_dir, name);
	if (off < 0)
		return (int)off;
	*last_name = name;
	*last_off = (uint32_t)off;
	return 0;
}

int sym_dwarf_unit_lines(struct sym_index *idx, Dwarf_Die *cudie,
			 const struct sym_ranges *exec, struct sym_ivals *out)
{
	const char *comp_dir = sym_unit_comp_dir(cudie);
	struct unit_ranges ur = { 0 };
	const char *last_name = NULL;
	uint32_t last_off = 0;
	Dwarf_Lines *lines;
	Dwarf_Addr addr, next;
	size_t n;

	int err = 0;

	if (dwarf_getsrclines(cudie, &lines, &n) != 0)
		return 0; /* no line table: functions still resolve */
	if (unit_ranges_read(cudie, &ur))
		return -ENOMEM;
	for (size_t i = 0; i + 1 < n && !err; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		Dwarf_Line *nl = dwarf_onesrcline(lines, i + 1);
		bool end = false;
		int lineno = 0, col = 0;
		unsigned int disc = 0;

		if (!l || !nl || dwarf_lineendsequence(l, &end) || end ||
		    dwarf_lineaddr(l, &addr) || dwarf_lineaddr(nl, &next))
			continue;
		if (next <= addr || !unit_ranges_clip(&ur, addr, &next) ||
		    !sym_ranges_contain(exec, addr, next))
			continue;
		dwarf_lineno(l, &lineno);
		dwarf_linecol(l, &col);
		dwarf_linediscriminator(l, &disc);
		err = line_file(idx, comp_dir, l, &last_name, &last_off);
		if (err)
			break;
		struct sym_ival iv = { addr, next, last_off,
				       lineno > 0 ? (uint32_t)lineno : 0,
				       col > 0 ? (uint32_t)col : 0, disc };
		err = sym_ivals_push(out, iv);
	}
	free(ur.r);
	return err;
}
