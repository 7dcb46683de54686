/*
 * line_program.c - a streaming reader of DWARF line-number programs
 * (DWARF 2-5, §6.2): the header's directory and file tables, then the
 * state machine, emitting one interval per row straight into the index
 * build.  libdw's reader keeps every row of every unit until dwarf_end()
 * and sorts them; this one keeps nothing but the unit's file table.
 *
 * All reads go through a bounds-checked cursor: a length field that
 * points past the section ends the parse with -EINVAL, never a read past
 * the end.
 */
#include "sym_internal.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

struct cursor {
	const uint8_t *p, *end;
};

#define NEED(c, n)                                                           \
	do {                                                                 \
		if ((size_t)((c)->end - (c)->p) < (size_t)(n))               \
			return -EINVAL;                                      \
	} while (0)

/* The shared cursors (sym_internal.h) over a struct cursor. */
static int rd_u(struct cursor *c, unsigned n, uint64_t *v)
{
	return elfdw_read_un(&c->p, c->end, n, v);
}

static int rd_uleb(struct cursor *c, uint64_t *v)
{
	return elfdw_read_uleb(&c->p, c->end, v);
}

static int rd_cstr(struct cursor *c, const char **s)
{
	return elfdw_read_cstr(&c->p, c->end, s);
}

/* A string stored at offset off of a string section. */
static const char *sect_str(const struct elfdw_sect *s, uint64_t off)
{
	if (!s->data || off >= s->size || !memchr(s->data + off, 0, s->size - off))
		return NULL;
	return (const char *)s->data + off;
}

struct header {
	unsigned version, offset_size, min_inst, line_range, opcode_base;
	int line_base;
	bool default_stmt;
	const uint8_t *std_lengths;
	const char **dirs;
	size_t ndirs, dirs_alloc;
	struct file_entry {
		const char *name;
		uint64_t dir;
	} *files;
	size_t nfiles, files_alloc;
};

static int add_file(struct header *h, const char *name, uint64_t dir)
{
	struct file_entry e = { name, dir };

	return EMBER_VEC_PUSH(h->files, h->nfiles, h->files_alloc, e);
}

static int add_dir(struct header *h, const char *name)
{
	return EMBER_VEC_PUSH(h->dirs, h->ndirs, h->dirs_alloc, name);
}

/* DWARF 2-4: NUL-terminated lists. */
static int read_v4_tables(struct cursor *c, struct header *h)
{
	const char *s;
	uint64_t dir, skip;
	int err;

	while ((err = rd_cstr(c, &s)) == 0 && *s)
		if ((err = add_dir(h, s)))
			return err;
	if (err)
		return err;
	while ((err = rd_cstr(c, &s)) == 0 && *s) {
		if (rd_uleb(c, &dir) || rd_uleb(c, &skip) || rd_uleb(c, &skip))
			return -EINVAL;
		if ((err = add_file(h, s, dir)))
			return err;
	}
	return err;
}

/* One attribute value of a DWARF 5 entry: a string or a number. */
static int read_form(struct cursor *c, const struct header *h,
		     const struct elfdw_sections *ctx, uint64_t form,
		     const char **str, uint64_t *num)
{
	uint64_t off;

	*str = NULL;
	*num = 0;
	switch (form) {
	case DW_FORM_string:
		return rd_cstr(c, str);
	case DW_FORM_line_strp:
	case DW_FORM_strp:
		if (rd_u(c, h->offset_size, &off))
			return -EINVAL;
		*str = sect_str(form == DW_FORM_line_strp ? &ctx->line_str
							  : &ctx->str, off);
		return *str ? 0 : -EINVAL;
	case DW_FORM_udata:
		return rd_uleb(c, num);
	case DW_FORM_data1:
		return rd_u(c, 1, num);
	case DW_FORM_data2:
		return rd_u(c, 2, num);
	case DW_FORM_data4:
		return rd_u(c, 4, num);
	case DW_FORM_data8:
		return rd_u(c, 8, num);
	case DW_FORM_data16:
		NEED(c, 16);
		c->p += 16;
		return 0;
	case DW_FORM_block:
		if (rd_uleb(c, &off))
			return -EINVAL;
		NEED(c, off);
		c->p += off;
		return 0;
	default:
		return -EINVAL; /* strx needs the unit's offsets: not in line tables */
	}
}

/* DWARF 5: self-describing entry formats (§6.2.4.1). */
static int read_v5_entries(struct cursor *c, struct header *h,
			   const struct elfdw_sections *ctx, bool files)
{
	uint64_t fmt[16][2], count, v;
	uint64_t nfmt;

	if (rd_u(c, 1, &nfmt) || nfmt > 16)
		return -EINVAL;
	for (uint64_t i = 0; i < nfmt; i++)
		if (rd_uleb(c, &fmt[i][0]) || rd_uleb(c, &fmt[i][1]))
			return -EINVAL;
	if (rd_uleb(c, &count))
		return -EINVAL;
	for (uint64_t k = 0; k < count; k++) {
		const char *path = NULL, *s;
		uint64_t dir = 0;
		int err;

		for (uint64_t i = 0; i < nfmt; i++) {
			if (read_form(c, h, ctx, fmt[i][1], &s, &v))
				return -EINVAL;
			if (fmt[i][0] == DW_LNCT_path)
				path = s;
			else if (fmt[i][0] == DW_LNCT_directory_index)
				dir = v;
		}
		if (!path)
			return -EINVAL;
		err = files ? add_file(h, path, dir) : add_dir(h, path);
		if (err)
			return err;
	}
	return 0;
}

static int read_header(struct cursor *c, struct header *h,
		       const struct elfdw_sections *ctx, const uint8_t **prog_end)
{
	uint64_t len, hlen, v;
	struct cursor hc;

	if (rd_u(c, 4, &len))
		return -EINVAL;
	h->offset_size = 4;
	if (len == 0xffffffff) {
		h->offset_size = 8;
		if (rd_u(c, 8, &len))
			return -EINVAL;
	}
	NEED(c, len);
	*prog_end = c->p + len;
	c->end = *prog_end;
	if (rd_u(c, 2, &v) || v < 2 || v > 5)
		return -EINVAL;
	h->version = (unsigned)v;
	if (h->version >= 5 && rd_u(c, 2, &v)) /* address and selector size */
		return -EINVAL;
	if (rd_u(c, h->offset_size, &hlen))
		return -EINVAL;
	NEED(c, hlen);
	hc = (struct cursor){ c->p, c->p + hlen };
	c->p += hlen; /* the program starts right after the header */
	if (rd_u(&hc, 1, &v))
		return -EINVAL;
	h->min_inst = (unsigned)v;
	if (h->version >= 4 && rd_u(&hc, 1, &v)) /* max ops per instruction */
		return -EINVAL;
	if (rd_u(&hc, 1, &v))
		return -EINVAL;
	h->default_stmt = v != 0;
	if (rd_u(&hc, 1, &v))
		return -EINVAL;
	h->line_base = (int8_t)v;
	if (rd_u(&hc, 1, &v) || v == 0)
		return -EINVAL;
	h->line_range = (unsigned)v;
	if (rd_u(&hc, 1, &v) || v == 0)
		return -EINVAL;
	h->opcode_base = (unsigned)v;
	NEED(&hc, h->opcode_base - 1);
	h->std_lengths = hc.p;
	hc.p += h->opcode_base - 1;
	if (h->version < 5)
		return read_v4_tables(&hc, h);
	if (read_v5_entries(&hc, h, ctx, false))
		return -EINVAL;
	return read_v5_entries(&hc, h, ctx, true);
}

static bool is_abs(const char *p)
{
	return p && p[0] == '/';
}

/* Append component s to buf with one '/' between parts (LLVM path::append). */
static void path_append(struct ember_buf *buf, const char *s)
{
	if (!s || !*s)
		return;
	if (buf->len && buf->data[buf->len - 1] != '/')
		ember_buf_putc(buf, '/');
	ember_buf_append(buf, s, strlen(s));
}

/*
 * Full path of file entry e, as llvm-symbolizer prints it: the name if
 * absolute, else include dir + name, prefixed by the compilation
 * directory when the include dir is relative.
 */
static int64_t file_path(struct sym_index *idx, const struct header *h,
			 const struct file_entry *e, const char *comp_dir,
			 struct ember_buf *buf)
{
	const char *dir = NULL;

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
		path_append(buf, comp_dir);
	path_append(buf, dir);
	path_append(buf, e->name);
	if (!buf->data)
		return 0;
	return sym_strtab_intern(&idx->strtab, buf->data);
}

/* File numbers as DW_AT_call_file/decl_file and the program use them:
 * 0-based in DWARF 5, 1-based before (0 = no file). */
static int intern_files(struct sym_index *idx, const struct header *h,
			const char *comp_dir, struct sym_unit_files *out)
{
	size_t base = h->version >= 5 ? 0 : 1;
	struct ember_buf buf;
	int err = 0;

	ember_buf_init(&buf, 1 << 16);
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

static void specials_init(struct specials *sp, const struct header *h)
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

	if (elfdw_read_uleb(&p, end, &len) || len == 0 ||
	    (uint64_t)(end - p) < len)
		return -EINVAL;
	op_end = p + len;
	*pos = op_end;
	sub = *p++;
	switch (sub) {
	case DW_LNE_end_sequence:
		return 1;
	case DW_LNE_set_address:
		if (len - 1 > 8 || elfdw_read_un(&p, op_end, (unsigned)(len - 1), &v))
			return -EINVAL;
		m->addr = v;
		return 0;
	case DW_LNE_set_discriminator:
		return elfdw_read_uleb(&p, op_end, &m->disc);
	default: /* define_file and vendor extensions: skipped */
		return 0;
	}
}

/* A standard opcode; 1 for DW_LNS_copy (a row). */
static int run_standard(const uint8_t **pos, const uint8_t *end,
			const struct header *h, struct machine *m, unsigned op)
{
	uint64_t v;
	int64_t sv;

	switch (op) {
	case DW_LNS_copy:
		return 1;
	case DW_LNS_advance_pc:
		if (elfdw_read_uleb(pos, end, &v))
			return -EINVAL;
		m->addr += v * h->min_inst;
		return 0;
	case DW_LNS_advance_line:
		if (elfdw_read_sleb(pos, end, &sv))
			return -EINVAL;
		m->line += (uint64_t)sv;
		return 0;
	case DW_LNS_set_file:
		return elfdw_read_uleb(pos, end, &m->file);
	case DW_LNS_set_column:
		return elfdw_read_uleb(pos, end, &m->col);
	case DW_LNS_const_add_pc:
		m->addr += (uint64_t)((255 - h->opcode_base) / h->line_range) * h->min_inst;
		return 0;
	case DW_LNS_fixed_advance_pc:
		if (elfdw_read_un(pos, end, 2, &v))
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
			if (elfdw_read_uleb(pos, end, &v))
				return -EINVAL;
		return 0;
	}
}

/* Rows end where the next row (or the sequence) begins; of rows at one
 * address the last wins. */
static int run_program(struct cursor *c, const struct header *h,
		       sym_line_row_fn fn, void *arg)
{
	const uint8_t *p = c->p, *end = c->end;
	struct machine m = machine_init;
	struct sym_line_row row = { 0 };
	bool pending = false;
	struct specials sp;
	int rc = 0;

	specials_init(&sp, h);
	while (p < end) {
		unsigned op = *p++;

		if (op >= h->opcode_base) {
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
	c->p = p;
	return rc < 0 ? rc : 0;
}

int sym_line_program_read(struct sym_index *idx, const struct elfdw_sections *ctx,
			  uint64_t offset, const char *comp_dir,
			  struct sym_unit_files *files, sym_line_row_fn fn,
			  void *arg)
{
	struct header h = { 0 };
	struct cursor c;
	const uint8_t *prog_end;
	int err;

	if (files) {
		files->off = NULL;
		files->n = 0;
	}
	if (!ctx->line.data || offset >= ctx->line.size)
		return -EINVAL;
	c = (struct cursor){ ctx->line.data + offset, ctx->line.data + ctx->line.size };
	err = read_header(&c, &h, ctx, &prog_end);
	if (!err && files)
		err = intern_files(idx, &h, comp_dir, files);
	if (!err && fn)
		err = run_program(&c, &h, fn, arg);
	free(h.dirs);
	free(h.files);
	return err;
}
