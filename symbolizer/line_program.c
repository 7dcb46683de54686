/*
 * line_program.c - a streaming reader of DWARF line-number programs
 * (DWARF 2-5, §6.2): on the header the ELF/DWARF layer reads
 * (elfdw_line_header_read: the directory and file tables, the state
 * machine's parameters), the unit's file paths interned as
 * llvm-symbolizer prints them, then the state machine, emitting one
 * interval per row straight into the index build.  libdw's reader keeps
 * every row of every unit until dwarf_end() and sorts them; this one
 * keeps nothing but the unit's file table.
 *
 * All reads go through the layer's bounds-checked cursors: an opcode
 * whose operands run past the unit ends the parse with -EINVAL, never a
 * read past the end.
 */
#include "sym_internal.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

/* A path is never longer than this (a longer one is malformed input). */
#define PATH_CAP (1u << 16)

static bool is_abs(const char *p)
{
	return p && p[0] == '/';
}

/* Append component s to buf with one '/' between parts (LLVM
 * path::append): 0, or -E2BIG past the buffer's cap. */
static int path_append(struct ember_buf *buf, const char *s)
{
	int err = 0;

	if (!s || !*s)
		return 0;
	if (buf->len && buf->data[buf->len - 1] != '/')
		err = ember_buf_putc(buf, '/');
	return err ? err : ember_buf_append(buf, s, strlen(s));
}

/*
 * Full path of file entry e, as llvm-symbolizer prints it: the name if
 * absolute, else include dir + name, prefixed by the compilation
 * directory when the include dir is relative.  A path that does not fit
 * the buffer is -E2BIG, never interned cut short.
 */
static int64_t file_path(struct sym_index *idx, const struct elfdw_line_header *h,
			 const struct elfdw_line_file *e, const char *comp_dir,
			 struct ember_buf *buf)
{
	const char *dir = NULL;
	int err = 0;

	if (is_abs(e->name))
		return sym_strtab_intern(&idx->strtab, e->name);
	if (h->version >= 5) {
		if (e->dir < h->ndirs)
			dir = h->dirs[e->dir];
	} else if (e->dir > 0 && e->dir <= h->ndirs) {
		dir = h->dirs[e->dir - 1];
	}
	ember_buf_reset(buf);
	if (comp_dir && !is_abs(dir))
		err = path_append(buf, comp_dir);
	if (!err)
		err = path_append(buf, dir);
	if (!err)
		err = path_append(buf, e->name);
	if (err)
		return err;
	if (!buf->data)
		return 0;
	return sym_strtab_intern(&idx->strtab, buf->data);
}

/* File numbers as DW_AT_call_file/decl_file and the program use them:
 * 0-based in DWARF 5, 1-based before (0 = no file). */
static int intern_files(struct sym_index *idx, const struct elfdw_line_header *h,
			const char *comp_dir, struct sym_unit_files *out)
{
	size_t base = h->version >= 5 ? 0 : 1;
	struct ember_buf buf;
	int err = 0;

	ember_buf_init(&buf, PATH_CAP);
	out->n = h->nfiles + base;
	out->off = calloc(out->n ? out->n : 1, sizeof(*out->off));
	if (!out->off)
		return -ENOMEM;
	for (size_t i = 0; i < h->nfiles && !err; i++) {
		int64_t off = file_path(idx, h, &h->files[i], comp_dir, &buf);

		if (off < 0)
			err = (int)off;
		else
			out->off[i + base] = (uint32_t)off;
	}
	ember_buf_release(&buf);
	if (err) {
		free(out->off);
		out->off = NULL;
		out->n = 0;
	}
	return err;
}

/*
 * The state machine (§6.2.2): registers in locals, so that they stay in
 * machine registers (the row handed to fn is the only thing in memory);
 * each row is passed on once the next one tells where it ends.
 */
struct machine {
	uint64_t addr, file, line, col, disc;
};

static const struct machine machine_init = { .file = 1, .line = 1 };

/* What each special opcode adds to the address and the line (§6.2.5.1),
 * worked out once per program instead of two divisions per row. */
struct specials {
	uint32_t addr[256];	/* at most 255 * 255 */
	int32_t line[256];	/* -128 .. 382 */
};

static void specials_init(struct specials *sp, const struct elfdw_line_header *h)
{
	for (unsigned op = h->opcode_base; op < 256; op++) {
		unsigned adj = op - h->opcode_base;

		sp->addr[op] = (adj / h->line_range) * h->min_inst;
		sp->line[op] = h->line_base + (int)(adj % h->line_range);
	}
}

static struct sym_line_row row_of(const struct machine *m)
{
	return (struct sym_line_row){ m->addr,
		(uint32_t)(m->file > UINT32_MAX ? 0 : m->file),
		(uint32_t)(m->line > UINT32_MAX ? UINT32_MAX : m->line),
		(uint32_t)(m->col > UINT32_MAX ? UINT32_MAX : m->col),
		(uint32_t)(m->disc > UINT32_MAX ? UINT32_MAX : m->disc) };
}

/* An extended opcode (after its 0): 1 for the end of a sequence. */
static int run_extended(const uint8_t **pos, const uint8_t *end,
			struct machine *m)
{
	const uint8_t *p = *pos, *op_end;
	uint64_t len, sub, v;

	if (ember_cur_uleb(&p, end, &len) || len == 0 || !ember_cur_has(p, end, len))
		return -EINVAL;
	op_end = p + len;
	*pos = op_end;
	sub = *p++;
	switch (sub) {
	case DW_LNE_end_sequence:
		return 1;
	case DW_LNE_set_address:
		if (len - 1 > 8 || ember_cur_uint(&p, op_end, (unsigned)(len - 1), &v))
			return -EINVAL;
		m->addr = v;
		return 0;
	case DW_LNE_set_discriminator:
		return ember_cur_uleb(&p, op_end, &m->disc) ? -EINVAL : 0;
	default: /* define_file and vendor extensions: skipped */
		return 0;
	}
}

/* A standard opcode; 1 for DW_LNS_copy (a row). */
static int run_standard(const uint8_t **pos, const uint8_t *end,
			const struct elfdw_line_header *h, struct machine *m,
			unsigned op)
{
	uint64_t v;
	int64_t sv;

	switch (op) {
	case DW_LNS_copy:
		return 1;
	case DW_LNS_advance_pc:
		if (ember_cur_uleb(pos, end, &v))
			return -EINVAL;
		m->addr += v * h->min_inst;
		return 0;
	case DW_LNS_advance_line:
		if (ember_cur_sleb(pos, end, &sv))
			return -EINVAL;
		m->line += (uint64_t)sv;
		return 0;
	case DW_LNS_set_file:
		return ember_cur_uleb(pos, end, &m->file) ? -EINVAL : 0;
	case DW_LNS_set_column:
		return ember_cur_uleb(pos, end, &m->col) ? -EINVAL : 0;
	case DW_LNS_const_add_pc:
		m->addr += (uint64_t)((255 - h->opcode_base) / h->line_range) * h->min_inst;
		return 0;
	case DW_LNS_fixed_advance_pc:
		if (ember_cur_uint(pos, end, 2, &v))
			return -EINVAL;
		m->addr += v;
		return 0;
	case DW_LNS_negate_stmt:
	case DW_LNS_set_basic_block:
	case DW_LNS_set_prologue_end:
	case DW_LNS_set_epilogue_begin:
		return 0;
	default: /* set_isa and unknown opcodes: skip their operands */
		for (unsigned i = 0; i < h->std_lengths[op - 1]; i++)
			if (ember_cur_uleb(pos, end, &v))
				return -EINVAL;
		return 0;
	}
}

/* Rows end where the next row (or the sequence) begins; of rows at one
 * address the last wins. */
static int run_program(const struct elfdw_line_header *h, sym_line_row_fn fn,
		       void *arg)
{
	const uint8_t *p = h->program, *end = h->program_end;
	const unsigned opcode_base = h->opcode_base; /* in a register: fn may write */
	struct machine m = machine_init;
	struct sym_line_row row = { 0 };
	bool pending = false;
	struct specials sp;
	int rc = 0;

	specials_init(&sp, h);
	while (p < end) {
		unsigned op = *p++;

		if (op >= opcode_base) {
			m.addr += sp.addr[op];
			m.line += (uint64_t)(int64_t)sp.line[op];
			rc = 1;
		} else {
			rc = op ? run_standard(&p, end, h, &m, op)
				: run_extended(&p, end, &m);
			if (rc < 0)
				break;
			if (!rc)
				continue;
		}
		/* a new row (op != 0) or the end of a sequence (op == 0) */
		if (pending && m.addr > row.addr &&
		    (rc = fn(arg, &row, m.addr)) != 0)
			break;
		pending = op != 0;
		if (pending)
			row = row_of(&m);
		m = pending ? (struct machine){ m.addr, m.file, m.line, m.col, 0 }
			    : machine_init;
	}
	return rc < 0 ? rc : 0;
}

/* Whether the build's budget refused something (an -E2BIG that is not
 * the input's). */
static bool budget_out(const struct sym_index *idx)
{
	return idx->budget && atomic_load(&idx->budget->exceeded);
}

/* The header's file table interned into files; the header and the
 * strings it named count toward the build's work (every unit naming it
 * reads it again). */
static int read_files(struct sym_index *idx, const struct elfdw_sections *s,
		      const struct elfdw_line_header *h, const char *comp_dir,
		      struct sym_unit_files *files, struct ember_diag *d)
{
	uint64_t read = (uint64_t)(h->program - (s->line.data + h->off)) + h->strings;
	int err = sym_budget_work(idx->budget, read, "line tables");

	if (!err && (err = intern_files(idx, h, comp_dir, files)) == -E2BIG &&
	    !budget_out(idx))
		(void)EMBER_FAIL(d, err, "line program at 0x%llx: a path longer than %u bytes",
				 (unsigned long long)h->off, PATH_CAP);
	return err;
}

int sym_line_program_read(struct sym_index *idx, const struct elfdw_sections *s,
			  uint64_t offset, const char *comp_dir,
			  struct sym_unit_files *files, sym_line_row_fn fn,
			  void *arg, struct ember_diag *d)
{
	struct elfdw_line_header h;
	int err;

	if (files) {
		files->off = NULL;
		files->n = 0;
	}
	err = elfdw_line_header_read(s, offset, files ? ELFDW_LINE_TABLES : 0, &h, d);
	if (err)
		return err;
	if (files)
		err = read_files(idx, s, &h, comp_dir, files, d);
	if (!err && fn && (err = run_program(&h, fn, arg)) == -EINVAL)
		(void)EMBER_FAIL(d, err, "line program at 0x%llx: an opcode runs past the unit",
			   (unsigned long long)offset);
	elfdw_line_header_release(&h);
	return err;
}
