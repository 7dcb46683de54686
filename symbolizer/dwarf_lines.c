/*
 * dwarf_lines.c - line-table rows of one unit as address intervals
 * (DWARF 5 §6.2).  Row i covers [addr_i, addr_{i+1}); an end_sequence row
 * closes its sequence.  libdw returns the rows sorted by address with an
 * end_sequence marker before a row that starts at the same address, and
 * among rows at one address the last one wins (as llvm-symbolizer does),
 * which falls out of dropping zero-length rows.
 */
#include "sym_internal.h"

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
	const char *last_name = NULL;
	uint32_t last_off = 0;
	Dwarf_Lines *lines;
	Dwarf_Addr addr, next;
	size_t n;

	if (dwarf_getsrclines(cudie, &lines, &n) != 0)
		return 0; /* no line table: functions still resolve */
	for (size_t i = 0; i + 1 < n; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		Dwarf_Line *nl = dwarf_onesrcline(lines, i + 1);
		bool end = false;
		int lineno = 0, col = 0, err;

		if (!l || !nl || dwarf_lineendsequence(l, &end) || end ||
		    dwarf_lineaddr(l, &addr) || dwarf_lineaddr(nl, &next))
			continue;
		if (next <= addr || !sym_ranges_contain(exec, addr, next))
			continue;
		dwarf_lineno(l, &lineno);
		dwarf_linecol(l, &col);
		err = line_file(idx, comp_dir, l, &last_name, &last_off);
		if (err)
			return err;
		struct sym_ival iv = { addr, next, last_off,
				       lineno > 0 ? (uint32_t)lineno : 0,
				       col > 0 ? (uint32_t)col : 0, 0 };
		if (sym_ivals_push(out, iv))
			return -ENOMEM;
	}
	return 0;
}
