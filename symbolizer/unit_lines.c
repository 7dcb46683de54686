/*
 * unit_lines.c - line-table rows of one unit as address intervals
 * (DWARF 5 §6.2), read by line_program.c.  Row i covers [addr_i,
 * addr_{i+1}) of its sequence; among rows at one address the last wins
 * (as llvm-symbolizer does).  Rows are clipped to the unit's own address
 * ranges (DW_AT_ranges / low_pc+high_pc), which is how llvm-symbolizer
 * scopes a line-table lookup (unit first, then rows), and to executable
 * sections, which drops sequences of code the linker discarded.
 */
#include "sym_internal.h"

#include <stdlib.h>
#include <string.h>

/* Index + 1 of the last unit range starting at or before lo (0: none).
 * Rows come in address order, so the range of the row before is tried
 * first (*last). */
static size_t unit_range_find(const struct elfdw_ranges *ur, uint64_t lo,
			      size_t *last)
{
	size_t a = 0, b = ur->n, k = *last;

	if (k < ur->n && ur->r[k].lo <= lo &&
	    (k + 1 == ur->n || ur->r[k + 1].lo > lo))
		return k + 1;
	while (a < b) {
		size_t mid = a + (b - a) / 2;

		if (ur->r[mid].lo <= lo)
			a = mid + 1;
		else
			b = mid;
	}
	if (a)
		*last = a - 1;
	return a;
}

/* Clip [*lo, *hi) to the unit range holding *lo; false if none does.
 * A unit without ranges keeps all its rows. */
static bool unit_ranges_clip(const struct elfdw_ranges *ur, uint64_t lo,
			     uint64_t *hi, size_t *last)
{
	size_t a;

	if (ur->n == 0)
		return true;
	a = unit_range_find(ur, lo, last);
	if (a == 0 || lo >= ur->r[a - 1].hi)
		return false;
	if (*hi > ur->r[a - 1].hi)
		*hi = ur->r[a - 1].hi;
	return true;
}

struct unit_rows {
	const struct sym_unit *u;
	const struct elfdw_ranges *exec;	/* NULL: the unit's ranges are all live */
	struct sym_ivals *lines;
	size_t last;			/* unit range of the row before */
};

/* True when rows clipped to the unit's ranges need no further check. */
static bool unit_all_exec(const struct elfdw_ranges *ur,
			  const struct elfdw_ranges *exec)
{
	if (ur->n == 0)
		return false;
	for (size_t i = 0; i < ur->n; i++)
		if (!elfdw_ranges_contain(exec, ur->r[i].lo, ur->r[i].hi))
			return false;
	return true;
}

static int unit_row(void *arg, const struct sym_line_row *r, uint64_t end)
{
	struct unit_rows *ur = arg;
	const struct sym_unit_files *files = &ur->u->files;
	uint64_t hi = end;
	uint32_t file;

	if (!unit_ranges_clip(&ur->u->ranges, r->addr, &hi, &ur->last) ||
	    (ur->exec && !elfdw_ranges_contain(ur->exec, r->addr, hi)))
		return 0;
	file = r->file < files->n ? files->off[r->file] : 0;
	return sym_ivals_push(ur->lines, (struct sym_ival){
		r->addr, hi, file, r->line, r->col, r->disc });
}

/* Whether err says the line program is unusable (malformed, a path too
 * long): the unit goes without rows, the build goes on. */
static bool lines_unusable(int err)
{
	return elfdw_err_input(err) || err == -E2BIG;
}

int sym_unit_lines_open(struct sym_index *idx, const struct elfdw_sections *s,
			uint64_t off, const char *comp_dir, struct sym_unit *u)
{
	char why[160];
	struct ember_diag d = ember_diag_make(why, sizeof(why));
	struct elfdw_line_header h;
	int err = sym_line_program_read(idx, s, off, comp_dir, &u->files,
					NULL, NULL, &d);

	if (lines_unusable(err)) {
		pr_debug("symbolizer: line program header at 0x%llx not used: %s",
			 (unsigned long long)off, why);
		return 0;
	}
	if (err)
		return err;
	/* read again without its tables: where the program ends */
	err = elfdw_line_header_read(s, off, 0, &h, NULL);
	if (err)
		return err;
	u->stmt_off = off;
	u->stmt_end = h.end;
	u->has_lines = true;
	return 0;
}

int sym_unit_rows(const struct sym_unit *u, const struct elfdw_sections *s,
		  const struct elfdw_ranges *exec, struct sym_ivals *lines)
{
	struct unit_rows ur = { u, exec, lines, 0 };
	char why[160];
	struct ember_diag d = ember_diag_make(why, sizeof(why));
	int err;

	if (!u->has_lines)
		return 0;
	if (unit_all_exec(&u->ranges, exec))
		ur.exec = NULL; /* checked once here, not once a row */
	err = sym_line_program_read(NULL, s, u->stmt_off, NULL, NULL,
				    unit_row, &ur, &d);
	if (lines_unusable(err)) {
		pr_debug("symbolizer: line program at 0x%llx stopped: %s",
			 (unsigned long long)u->stmt_off, why);
		return 0; /* keep the rows read before the damage */
	}
	return err;
}

void sym_unit_free(struct sym_unit *u)
{
	if (!u)
		return;
	free(u->files.off);
	free(u->ranges.r);
	sym_ivals_release(&u->scopes);
	sym_ivals_release(&u->lines);
	free(u);
}
