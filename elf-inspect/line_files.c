/*
 * line_files.c - the file table of one DWARF line program, header only
 * (DWARF 2-5, section 6.2.4), without decoding its rows.
 *
 * libdw 0.188 has no way to read only the file names: dwarf_getsrcfiles()
 * and dwarf_next_lines() decode and keep every row (19 MB of heap for a
 * 4 MB debug file), which an upload does not need.  Every read goes
 * through a cursor that never passes `end`, whatever a length says.
 */
#include "inspect_internal.h"

#include <dwarf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ENTRIES (1u << 20)

struct cursor {
	const uint8_t *p, *end;
};

static int rd_u(struct cursor *c, unsigned n, uint64_t *v)
{
	if ((size_t)(c->end - c->p) < n)
		return -EINVAL;
	*v = 0;
	for (unsigned i = 0; i < n; i++)
		*v |= (uint64_t)c->p[i] << (8 * i);
	c->p += n;
	return 0;
}

static int rd_uleb(struct cursor *c, uint64_t *v)
{
	unsigned shift = 0;

	*v = 0;
	while (c->p < c->end && shift < 64) {
		uint8_t b = *c->p++;

		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return 0;
		shift += 7;
	}
	return -EINVAL;
}

static int rd_cstr(struct cursor *c, const char **s)
{
	const uint8_t *nul = memchr(c->p, 0, (size_t)(c->end - c->p));

	if (!nul)
		return -EINVAL;
	*s = (const char *)c->p;
	c->p = nul + 1;
	return 0;
}

static int skip(struct cursor *c, uint64_t n)
{
	if ((uint64_t)(c->end - c->p) < n)
		return -EINVAL;
	c->p += n;
	return 0;
}

/* A string at off in a string section, NUL-terminated inside it. */
static const char *sect_str(const struct inspect_bytes *b, uint64_t off)
{
	if (!b->data || off >= b->size || !memchr(b->data + off, 0, b->size - off))
		return NULL;
	return (const char *)b->data + off;
}

struct table {
	const char **v;
	uint64_t *dir;      /* files: directory index */
	size_t n, alloc;
};

static int table_add(struct table *t, const char *s, uint64_t dir)
{
	if (t->n == t->alloc) {
		size_t na = t->alloc ? 2 * t->alloc : 32;
		const char **v = realloc(t->v, na * sizeof(*v));
		uint64_t *d = v ? realloc(t->dir, na * sizeof(*d)) : NULL;

		if (v)
			t->v = v;
		if (!v || !d || na > MAX_ENTRIES)
			return -ENOMEM;
		t->dir = d;
		t->alloc = na;
	}
	t->v[t->n] = s;
	t->dir[t->n++] = dir;
	return 0;
}

struct header {
	const struct inspect_line_sections *s;
	unsigned version, offset_size;
	struct table dirs, files;
};

/* DWARF 2-4: NUL-terminated lists; directory 0 is the unit's comp_dir. */
static int read_v4_tables(struct cursor *c, struct header *h, const char *comp_dir)
{
	const char *s;
	uint64_t dir, ignored;
	int err = table_add(&h->dirs, comp_dir, 0);

	while (!err && !(err = rd_cstr(c, &s)) && *s)
		err = table_add(&h->dirs, s, 0);
	while (!err && !(err = rd_cstr(c, &s)) && *s) {
		err = rd_uleb(c, &dir);
		if (!err)
			err = rd_uleb(c, &ignored);
		if (!err)
			err = rd_uleb(c, &ignored);
		if (!err)
			err = table_add(&h->files, s, dir);
	}
	return err;
}

/* One attribute value of a DWARF 5 entry: a string for paths, a number
 * for directory indexes, skipped otherwise. */
static int read_form(struct cursor *c, const struct header *h, uint64_t form,
		     const char **str, uint64_t *num)
{
	uint64_t v;
	int err;

	switch (form) {
	case DW_FORM_string:
		return rd_cstr(c, str);
	case DW_FORM_line_strp:
	case DW_FORM_strp:
		err = rd_u(c, h->offset_size, &v);
		if (!err)
			*str = sect_str(form == DW_FORM_strp ? &h->s->str : &h->s->line_str, v);
		return err ? err : *str ? 0 : -EINVAL;
	case DW_FORM_udata:
		return rd_uleb(c, num);
	case DW_FORM_data1: return rd_u(c, 1, num);
	case DW_FORM_data2: return rd_u(c, 2, num);
	case DW_FORM_data4: return rd_u(c, 4, num);
	case DW_FORM_data8: return rd_u(c, 8, num);
	case DW_FORM_data16: return skip(c, 16);
	case DW_FORM_block:
		err = rd_uleb(c, &v);
		return err ? err : skip(c, v);
	default:
		return -ENOTSUP; /* strx and friends: no string offsets here */
	}
}

static int read_v5_entries(struct cursor *c, const struct header *h, struct table *t)
{
	uint64_t fmt[2 * 16], nfmt, count = 0;
	int err = rd_u(c, 1, &nfmt);

	if (err || nfmt > 16)
		return -EINVAL;
	for (uint64_t i = 0; i < 2 * nfmt && !err; i++)
		err = rd_uleb(c, &fmt[i]);
	if (!err)
		err = rd_uleb(c, &count);
	if (!err && count > MAX_ENTRIES)
		err = -EINVAL;
	for (uint64_t e = 0; e < count && !err; e++) {
		const char *path = NULL;
		uint64_t dir = 0;

		for (uint64_t i = 0; i < nfmt && !err; i++) {
			const char *s = NULL;
			uint64_t num = 0;

			err = read_form(c, h, fmt[2 * i + 1], &s, &num);
			if (fmt[2 * i] == DW_LNCT_path)
				path = s;
			else if (fmt[2 * i] == DW_LNCT_directory_index)
				dir = num;
		}
		if (!err)
			err = path ? table_add(t, path, dir) : -EINVAL;
	}
	return err;
}

/* From unit_length to the file tables; *c then covers the tables only. */
static int read_prologue(struct cursor *c, struct header *h)
{
	uint64_t len, version, hlen, opcode_base;
	int err = rd_u(c, 4, &len);

	h->offset_size = 4;
	if (!err && len == 0xffffffff) {
		h->offset_size = 8;
		err = rd_u(c, 8, &len);
	}
	if (err || len > (uint64_t)(c->end - c->p))
		return -EINVAL;
	c->end = c->p + len;
	err = rd_u(c, 2, &version);
	if (err || version < 2 || version > 5)
		return -EINVAL;
	h->version = (unsigned)version;
	if (version >= 5)
		err = skip(c, 2); /* address_size, segment_selector_size */
	if (!err)
		err = rd_u(c, h->offset_size, &hlen);
	if (err || hlen > (uint64_t)(c->end - c->p))
		return -EINVAL;
	c->end = c->p + hlen;
	/* min_inst_length, [max_ops], default_is_stmt, line_base, line_range */
	err = skip(c, version >= 4 ? 5 : 4);
	if (!err)
		err = rd_u(c, 1, &opcode_base);
	return err ? err : skip(c, opcode_base ? opcode_base - 1 : 0);
}

static int emit(const struct header *h, const char *comp_dir,
		int (*cb)(const char *dir, const char *name, void *arg), void *arg)
{
	int err = 0;

	for (size_t i = 0; i < h->files.n && !err; i++) {
		uint64_t d = h->files.dir[i];
		const char *dir = d < h->dirs.n ? h->dirs.v[d] : NULL;

		if (dir && dir[0] != '/' && comp_dir) {
			char *joined;

			if (asprintf(&joined, "%s/%s", comp_dir, dir) < 0)
				return -ENOMEM;
			err = cb(joined, h->files.v[i], arg);
			free(joined);
		} else {
			err = cb(dir, h->files.v[i], arg);
		}
	}
	return err;
}

int inspect_line_files(const struct inspect_line_sections *s, uint64_t offset,
		       const char *comp_dir,
		       int (*cb)(const char *dir, const char *name, void *arg), void *arg)
{
	struct header h = { .s = s };
	struct cursor c;
	int err;

	if (!s->line.data || offset >= s->line.size)
		return -EINVAL;
	c = (struct cursor){ s->line.data + offset, s->line.data + s->line.size };
	err = read_prologue(&c, &h);
	if (!err && h.version < 5)
		err = read_v4_tables(&c, &h, comp_dir);
	if (!err && h.version >= 5) {
		err = read_v5_entries(&c, &h, &h.dirs);
		if (!err)
			err = read_v5_entries(&c, &h, &h.files);
		comp_dir = h.dirs.n ? h.dirs.v[0] : comp_dir;
	}
	if (!err)
		err = emit(&h, comp_dir, cb, arg);
	free(h.dirs.v);
	free(h.dirs.dir);
	free(h.files.v);
	free(h.files.dir);
	return err;
}
