/*
 * dwarf_lines.c - line-table rows of one unit as address intervals
 * (DWARF 5 §6.2), read by line_program.c.  Row i covers [addr_i,
 * addr_{i+1}) of its sequence; among rows at one address the last wins
 * (as llvm-symbolizer does).  Rows are clipped to the unit's own address
 * ranges (DW_AT_ranges / low_pc+high_pc), which is how llvm-symbolizer
 * scopes a line-table lookup (unit first, then rows), and to executable
 * sections, which drops sequences of code the linker discarded.
 */
#include "sym_internal.h"

#include <dwarf.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

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

/* The raw sections line programs use; libdw has decompressed them. */
int sym_line_ctx_init(Dwarf *dw, struct sym_line_ctx *ctx)
{
	static const struct {
		const char *name;
		size_t off;
	} want[] = {
		{ ".debug_line", offsetof(struct sym_line_ctx, line) },
		{ ".zdebug_line", offsetof(struct sym_line_ctx, line) },
		{ ".debug_line_str", offsetof(struct sym_line_ctx, line_str) },
		{ ".debug_str", offsetof(struct sym_line_ctx, str) },
		{ ".zdebug_str", offsetof(struct sym_line_ctx, str) },
	};
	Elf *elf = dwarf_getelf(dw);
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	memset(ctx, 0, sizeof(*ctx));
	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		return -SYM_ERR_BAD_ELF;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		for (size_t i = 0; name && i < sizeof(want) / sizeof(want[0]); i++) {
			struct sym_sect *s = (struct sym_sect *)((char *)ctx + want[i].off);

			if (strcmp(name, want[i].name) != 0 || s->data)
				continue;
			if (sh.sh_flags & SHF_COMPRESSED)
				continue; /* libdw did not load it: leave it */
			d = elf_getdata(scn, NULL);
			if (!d || !d->d_buf ||
			    (name[1] == 'z' && d->d_size >= 4 &&
			     memcmp(d->d_buf, "ZLIB", 4) == 0))
				continue; /* GNU .zdebug still compressed */
			*s = (struct sym_sect){ d->d_buf, d->d_size };
		}
	}
	return 0;
}

struct unit_rows {
	struct sym_build *b;
	const struct unit_ranges *ur;
	const struct sym_unit_files *files;
};

static int unit_row(void *arg, const struct sym_line_row *r, uint64_t end)
{
	struct unit_rows *u = arg;
	uint64_t hi = end;
	uint32_t file;

	if (!unit_ranges_clip(u->ur, r->addr, &hi) ||
	    !sym_ranges_contain(u->b->exec, r->addr, hi))
		return 0;
	file = r->file < u->files->n ? u->files->off[r->file] : 0;
	return sym_ivals_push(&u->b->lines, (struct sym_ival){
		r->addr, hi, file, r->line, r->col, r->disc });
}

int sym_dwarf_unit_lines(struct sym_build *b, Dwarf_Die *cudie,
			 const struct sym_line_ctx *ctx, const char *comp_dir,
			 struct sym_unit_files *files)
{
	struct unit_ranges ur = { 0 };
	struct unit_rows u = { b, &ur, files };
	Dwarf_Attribute attr;
	Dwarf_Word off;
	int err;

	files->off = NULL;
	files->n = 0;
	if (!dwarf_attr(cudie, DW_AT_stmt_list, &attr) ||
	    dwarf_formudata(&attr, &off))
		return 0; /* no line table: functions still resolve */
	if (unit_ranges_read(cudie, &ur))
		return -ENOMEM;
	err = sym_line_program_read(b->idx, ctx, off, comp_dir, files,
				    unit_row, &u);
	free(ur.r);
	if (err == -EINVAL) {
		pr_debug("symbolizer: malformed line program at 0x%llx",
			 (unsigned long long)off);
		return 0; /* keep the rows read before the damage */
	}
	return err;
}
