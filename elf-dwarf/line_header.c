/*
 * line_header.c - the header of a DWARF line-number program (DWARF 2-5,
 * §6.2.4): unit length and version, the parameters of the state machine
 * (minimum instruction length, line base and range, opcode base and the
 * operand counts of the standard opcodes), and the directory and file
 * tables: NUL-terminated lists before DWARF 5, self-describing entry
 * formats (§6.2.4.1) from 5 on.  The symbolizer runs the program on top
 * of it (line_program.c); elf-inspect lists the files.
 *
 * Every read goes through the cursors, bounded by the unit, then by the
 * header's own length.  A DWARF 5 table's count is checked against the
 * bytes left (each entry takes at least the minimal size of its forms),
 * so a header claiming a million entries in a few bytes fails before it
 * allocates anything: what it allocates (16 bytes an entry) is
 * proportional to its bytes.  The strings its entries name in
 * .debug_line_str and .debug_str are bounded the same way
 * (ELFDW_LINE_STRINGS_PER_BYTE): entries are a few bytes each but may
 * all name one long string, or a suffix of it each, and every string is
 * searched for its end.
 */
#include "elfdw_internal.h"

#include <stdlib.h>

struct tables {
	const char **dirs;
	size_t ndirs, dirs_alloc;
	struct elfdw_line_file *files;
	size_t nfiles, files_alloc;
};

static void tables_release(struct tables *t)
{
	free(t->dirs);
	free(t->files);
}

static int add_dir(struct tables *t, const char *name)
{
	return EMBER_VEC_PUSH(t->dirs, t->ndirs, t->dirs_alloc, name);
}

static int add_file(struct tables *t, const char *name, uint64_t dir)
{
	struct elfdw_line_file f = { name, dir };

	return EMBER_VEC_PUSH(t->files, t->nfiles, t->files_alloc, f);
}

/* What the readers of one header share; strings_left: the bytes of
 * strings its tables may still name (see elfdw_line_header_read). */
struct reader {
	const struct elfdw_sections *s;
	struct elfdw_line_header *h;
	struct ember_diag *d;
	uint64_t strings_left;
};

#define FAIL(r, err, what)                                                   \
	EMBER_FAIL((r)->d, (err), "line program at 0x%llx: %s",               \
		   (unsigned long long)(r)->h->off, (what))

/* DWARF 2-4: NUL-terminated lists; each file has three ULEB128s after
 * its name (directory, time, size). */
static int read_v4_tables(struct reader *r, const uint8_t **p,
			  const uint8_t *end, struct tables *t)
{
	const char *s;
	uint64_t dir, skip;
	int err;

	while ((err = ember_cur_cstr(p, end, &s)) == 0 && *s)
		if ((err = add_dir(t, s)))
			return err;
	if (err)
		return FAIL(r, err, "directory table without its end");
	while ((err = ember_cur_cstr(p, end, &s)) == 0 && *s) {
		if ((err = ember_cur_uleb(p, end, &dir)) ||
		    (err = ember_cur_uleb(p, end, &skip)) ||
		    (err = ember_cur_uleb(p, end, &skip)))
			return FAIL(r, err, "file entry truncated");
		if ((err = add_file(t, s, dir)))
			return err;
	}
	return err ? FAIL(r, err, "file table without its end") : 0;
}

/* The fewest bytes a value of form takes; 0 for a form entries may not
 * use. */
static unsigned form_min_size(uint64_t form, unsigned offset_size)
{
	switch (form) {
	case DW_FORM_string: case DW_FORM_udata: case DW_FORM_data1:
	case DW_FORM_block:
		return 1;
	case DW_FORM_line_strp: case DW_FORM_strp:
		return offset_size;
	case DW_FORM_data2: return 2;
	case DW_FORM_data4: return 4;
	case DW_FORM_data8: return 8;
	case DW_FORM_data16: return 16;
	default: return 0; /* strx and friends: no string offsets here */
	}
}

/* A string at offset off of a string section, counted against the
 * strings the header may name: no search past what is left of them. */
static int sect_str(struct reader *r, const struct elfdw_sect *sect, uint64_t off,
		    const char **out)
{
	const uint8_t *p, *nul;
	uint64_t n;

	if (!sect->data || off >= sect->size)
		return -EINVAL; /* no section, or outside it: malformed */
	p = sect->data + off;
	n = sect->size - off < r->strings_left ? sect->size - off : r->strings_left;
	nul = memchr(p, 0, (size_t)n);
	if (!nul && n == r->strings_left)
		return EMBER_FAIL(r->d, -E2BIG,
				  "line program at 0x%llx: its tables name more than %llu bytes of strings",
				  (unsigned long long)r->h->off,
				  (unsigned long long)r->h->strings + r->strings_left);
	if (!nul)
		return -ENODATA;
	r->strings_left -= (uint64_t)(nul - p) + 1;
	r->h->strings += (uint64_t)(nul - p) + 1;
	*out = (const char *)p;
	return 0;
}

/* One value of a DWARF 5 entry: a string (*str) or a number (*num). */
static int read_form(struct reader *r, const uint8_t **p,
		     const uint8_t *end, uint64_t form, const char **str,
		     uint64_t *num)
{
	const uint8_t *block;
	uint64_t v;
	int err;

	*str = NULL;
	*num = 0;
	switch (form) {
	case DW_FORM_string:
		return ember_cur_cstr(p, end, str);
	case DW_FORM_line_strp:
	case DW_FORM_strp:
		err = ember_cur_uint(p, end, r->h->offset_size, &v);
		return err ? err : sect_str(r, form == DW_FORM_line_strp ? &r->s->line_str
						   : &r->s->str, v, str);
	case DW_FORM_udata:
		return ember_cur_uleb(p, end, num);
	case DW_FORM_data1: case DW_FORM_data2: case DW_FORM_data4:
	case DW_FORM_data8:
		return ember_cur_uint(p, end, form_min_size(form, 4), num);
	case DW_FORM_data16:
		return ember_cur_skip(p, end, 16);
	case DW_FORM_block:
		err = ember_cur_uleb(p, end, &v);
		return err ? err : ember_cur_bytes(p, end, v, &block);
	default:
		return -EINVAL;
	}
}

/* An entry format (§6.2.4.1): up to 16 (content type, form) pairs. */
struct format {
	uint64_t pair[16][2];
	uint8_t n;
	unsigned min_size;	/* of an entry */
	bool has_path;
	uint64_t bad_form;	/* a form entries may not use, or 0 */
};

static int read_format(struct reader *r, const uint8_t **p,
		       const uint8_t *end, struct format *f)
{
	int err = ember_cur_u8(p, end, &f->n);

	if (err)
		return FAIL(r, err, "entry format truncated");
	EMBER_FAIL_IF(f->n > 16, r->d, -EINVAL,
		      "line program at 0x%llx: %u fields in an entry format",
		      (unsigned long long)r->h->off, f->n);
	f->min_size = 0;
	f->has_path = false;
	f->bad_form = 0;
	for (unsigned i = 0; i < f->n; i++) {
		unsigned min;

		if ((err = ember_cur_uleb(p, end, &f->pair[i][0])) ||
		    (err = ember_cur_uleb(p, end, &f->pair[i][1])))
			return FAIL(r, err, "entry format truncated");
		min = form_min_size(f->pair[i][1], r->h->offset_size);
		if (!min && !f->bad_form)
			f->bad_form = f->pair[i][1] ? f->pair[i][1] : UINT64_MAX;
		f->min_size += min;
		f->has_path |= f->pair[i][0] == DW_LNCT_path;
	}
	return 0;
}

/* One entry: its path and directory index. */
static int read_entry(struct reader *r, const uint8_t **p,
		      const uint8_t *end, const struct format *f,
		      const char **path, uint64_t *dir)
{
	*path = NULL;
	*dir = 0;
	for (unsigned i = 0; i < f->n; i++) {
		const char *s;
		uint64_t v;
		int err = read_form(r, p, end, f->pair[i][1], &s, &v);

		if (err == -E2BIG)
			return err;
		if (err)
			return FAIL(r, err, "entry truncated");
		if (f->pair[i][0] == DW_LNCT_path)
			*path = s;
		else if (f->pair[i][0] == DW_LNCT_directory_index)
			*dir = v;
	}
	EMBER_FAIL_IF(!*path, r->d, -EINVAL,
		      "line program at 0x%llx: entry whose path is not a string",
		      (unsigned long long)r->h->off);
	return 0;
}

/* DWARF 5: a directory or file table (an entry format, then entries). */
static int read_v5_table(struct reader *r, const uint8_t **p,
			 const uint8_t *end, struct tables *t, bool files)
{
	struct format f;
	uint64_t count;
	int err = read_format(r, p, end, &f);

	if (!err && (err = ember_cur_uleb(p, end, &count)))
		return FAIL(r, err, "table count truncated");
	if (err)
		return err;
	/* a format no entry uses may say anything */
	EMBER_FAIL_IF(count && f.bad_form, r->d, -EINVAL,
		      "line program at 0x%llx: form 0x%llx in an entry",
		      (unsigned long long)r->h->off, (unsigned long long)f.bad_form);
	EMBER_FAIL_IF(count && !f.has_path, r->d, -EINVAL,
		      "line program at 0x%llx: entries without a path",
		      (unsigned long long)r->h->off);
	EMBER_FAIL_IF(count && count > (uint64_t)(end - *p) / f.min_size, r->d, -EINVAL,
		      "line program at 0x%llx: %llu entries cannot fit in %zu bytes",
		      (unsigned long long)r->h->off, (unsigned long long)count,
		      (size_t)(end - *p));
	for (uint64_t k = 0; k < count; k++) {
		const char *path;
		uint64_t dir;

		if ((err = read_entry(r, p, end, &f, &path, &dir)))
			return err;
		err = files ? add_file(t, path, dir) : add_dir(t, path);
		if (err)
			return err;
	}
	return 0;
}

/* The fixed fields after header_length (§6.2.4 items 5-11). */
static int read_params(struct reader *r, const uint8_t **p,
		       const uint8_t *end)
{
	struct elfdw_line_header *h = r->h;
	uint8_t v[5];
	int err = 0;

	h->max_ops = 1;
	for (unsigned i = 0; i < 5 && !err; i++) {
		if (i == 1 && h->version < 4)
			continue; /* maximum_operations_per_instruction: DWARF 4 on */
		err = ember_cur_u8(p, end, &v[i]);
	}
	if (err)
		return FAIL(r, err, "header truncated");
	h->min_inst = v[0];
	if (h->version >= 4)
		h->max_ops = v[1];
	h->default_stmt = v[2] != 0;
	h->line_base = (int8_t)v[3];
	h->line_range = v[4];
	EMBER_FAIL_IF(h->line_range == 0, r->d, -EINVAL,
		      "line program at 0x%llx: line_range 0",
		      (unsigned long long)h->off);
	if ((err = ember_cur_u8(p, end, &h->opcode_base)))
		return FAIL(r, err, "header truncated");
	EMBER_FAIL_IF(h->opcode_base == 0, r->d, -EINVAL,
		      "line program at 0x%llx: opcode_base 0",
		      (unsigned long long)h->off);
	if ((err = ember_cur_bytes(p, end, h->opcode_base - 1u, &h->std_lengths)))
		return FAIL(r, err, "standard opcode lengths truncated");
	return 0;
}

/* From unit_length to header_length: *p at the parameters, *hend where
 * the header ends (the program starts). */
static int read_prologue(struct reader *r, const uint8_t **p,
			 const uint8_t **hend)
{
	struct elfdw_line_header *h = r->h;
	const struct elfdw_sect *line = &r->s->line;
	const uint8_t *end = line->data + line->size;
	uint64_t len, v;
	int err = ember_cur_uint(p, end, 4, &len);

	h->offset_size = 4;
	if (!err && len == 0xffffffff) {
		h->offset_size = 8;
		err = ember_cur_uint(p, end, 8, &len);
	}
	if (err)
		return FAIL(r, err, "unit length truncated");
	EMBER_FAIL_IF(len > (uint64_t)(end - *p), r->d, -ENODATA,
		      "line program at 0x%llx: length 0x%llx runs past .debug_line",
		      (unsigned long long)h->off, (unsigned long long)len);
	h->program_end = *p + len;
	h->end = (uint64_t)(h->program_end - line->data);
	if ((err = ember_cur_uint(p, h->program_end, 2, &v)))
		return FAIL(r, err, "version truncated");
	EMBER_FAIL_IF(v < 2 || v > 5, r->d, -EINVAL,
		      "line program at 0x%llx: version %llu",
		      (unsigned long long)h->off, (unsigned long long)v);
	h->version = (uint8_t)v;
	if (h->version >= 5 && ((err = ember_cur_u8(p, h->program_end, &h->addr_size)) ||
				(err = ember_cur_skip(p, h->program_end, 1))))
		return FAIL(r, err, "header truncated"); /* segment selector size */
	if ((err = ember_cur_uint(p, h->program_end, h->offset_size, &v)))
		return FAIL(r, err, "header length truncated");
	EMBER_FAIL_IF(v > (uint64_t)(h->program_end - *p), r->d, -ENODATA,
		      "line program at 0x%llx: header length 0x%llx runs past the unit",
		      (unsigned long long)h->off, (unsigned long long)v);
	*hend = *p + v;
	return 0;
}

static int read_tables(struct reader *r, const uint8_t **p,
		       const uint8_t *end, struct tables *t)
{
	int err;

	r->strings_left = ELFDW_LINE_STRINGS_PER_BYTE * (uint64_t)(end - *p) +
			  ELFDW_LINE_STRINGS_MIN;
	if (r->h->version < 5)
		return read_v4_tables(r, p, end, t);
	err = read_v5_table(r, p, end, t, false);
	return err ? err : read_v5_table(r, p, end, t, true);
}

int elfdw_line_header_read(const struct elfdw_sections *s, uint64_t off,
			   unsigned flags, struct elfdw_line_header *out,
			   struct ember_diag *d)
{
	struct elfdw_line_header h = { .off = off };
	struct reader r = { s, &h, d, 0 };
	struct tables t = { 0 };
	const uint8_t *p, *hend = NULL;
	int err;

	EMBER_FAIL_IF(!s->line.data || off >= s->line.size, d, -EINVAL,
		      "line program at 0x%llx: outside .debug_line (%zu bytes)",
		      (unsigned long long)off, s->line.size);
	p = s->line.data + off;
	err = read_prologue(&r, &p, &hend);
	if (!err)
		err = read_params(&r, &p, hend);
	if (!err && (flags & ELFDW_LINE_TABLES))
		err = read_tables(&r, &p, hend, &t);
	if (err) {
		tables_release(&t);
		return err;
	}
	h.program = hend;
	h.dirs = t.dirs;
	h.ndirs = t.ndirs;
	h.files = t.files;
	h.nfiles = t.nfiles;
	*out = h;
	return 0;
}

void elfdw_line_header_release(struct elfdw_line_header *h)
{
	if (!h)
		return;
	free(h->dirs);
	free(h->files);
	h->dirs = NULL;
	h->files = NULL;
	h->ndirs = h->nfiles = 0;
}
