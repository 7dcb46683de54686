/*
 * python_code.c - what a CPython code object says, read from a process'
 * memory: its qualified name, file, first line, and the line of an
 * instruction (from its location table, co_linetable).
 *
 * The memory belongs to the profiled process, which may be any local
 * user's and may lie: every object's type is checked against the
 * interpreter's own type object before it is read, every length is
 * bounded (AGENT_PY_STR_MAX, AGENT_PY_LINETABLE_MAX), and the location
 * table is decoded without reading past its end.  Reads go through a
 * function (process_vm_readv for a process: python_proc.c; a buffer in
 * the tests and the fuzz target).
 *
 * The location table (3.11, CPython's Objects/locations.md): a sequence of
 * entries, each covering 1-8 code units; its first byte has bit 7 set,
 * the entry's kind in bits 3-6 and its length - 1 in bits 0-2.  Kinds
 * 0-9 keep the line (one byte of columns follows), 10-12 move it by
 * kind - 10 (two bytes of columns), 13 moves it by a signed varint (no
 * columns), 14 by a signed varint followed by three varints (end line,
 * columns), 15 has no location.  Varints are 6 bits a byte, bit 6 set
 * when another byte follows, low bits first; a signed one is the
 * unsigned value v as -(v >> 1) when v & 1, else v >> 1.
 */
#include "agent_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint64_t get_u64(const uint8_t *b, size_t off)
{
	uint64_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

/* Read an object's first bytes and check its type: 0, -EFAULT unreadable,
 * -EINVAL another type. */
static int read_object(const struct agent_py_reader *r, uint64_t addr, uint64_t type,
		       void *buf, size_t n)
{
	if (!addr || (addr & 7) || n < (size_t)r->layout->ob_type + 8)
		return -EINVAL;
	if (r->read(r->ctx, addr, buf, n))
		return -EFAULT;
	return get_u64(buf, r->layout->ob_type) == type ? 0 : -EINVAL;
}

/* Append code point c as UTF-8 ('?' for a surrogate or past U+10FFFF). */
static size_t put_utf8(char *out, uint32_t c)
{
	if (c < 0x80) {
		out[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		out[0] = (char)(0xc0 | c >> 6);
		out[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if ((c >= 0xd800 && c < 0xe000) || c > 0x10ffff) {
		out[0] = '?';
		return 1;
	}
	if (c < 0x10000) {
		out[0] = (char)(0xe0 | c >> 12);
		out[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		out[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | c >> 18);
	out[1] = (char)(0x80 | ((c >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((c >> 6) & 0x3f));
	out[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

/* n characters of kind bytes each (1, 2, 4) as UTF-8 into a new string. */
static char *to_utf8(const uint8_t *chars, size_t n, unsigned kind)
{
	char *s = malloc(4 * n + 1);
	size_t k = 0;

	if (!s)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		uint32_t c = 0;

		memcpy(&c, chars + i * kind, kind); /* little-endian: the low bytes */
		k += put_utf8(s + k, c);
	}
	s[k] = '\0';
	return s;
}

int agent_py_str_read(const struct agent_py_reader *r, uint64_t addr, char **out)
{
	const struct agent_python_layout *l = r->layout;
	uint8_t head[128], chars[4 * AGENT_PY_STR_MAX];
	uint64_t len;
	uint32_t state;
	unsigned kind;
	size_t data;
	int err;

	if (l->str_compact_data > sizeof(head) - 8)
		return -EINVAL;
	err = read_object(r, addr, r->types.unicode, head, l->str_compact_data);
	if (err)
		return err;
	len = get_u64(head, l->str_length);
	memcpy(&state, head + l->str_state, sizeof(state));
	kind = (state >> l->str_kind_shift) & 7;
	if (!((state >> l->str_compact_bit) & 1) || (kind != 1 && kind != 2 && kind != 4))
		return -EINVAL; /* a legacy (not compact) string: not read */
	if (len > AGENT_PY_STR_MAX)
		return -E2BIG;
	if ((state >> l->str_ascii_bit) & 1) {
		kind = 1;
		data = l->str_ascii_data;
	} else {
		data = l->str_compact_data;
	}
	if (len && r->read(r->ctx, addr + data, chars, len * kind))
		return -EFAULT;
	*out = to_utf8(chars, len, kind);
	return *out ? 0 : -ENOMEM;
}

/* A bytes object's contents (the location table) into a new buffer. */
static int bytes_read(const struct agent_py_reader *r, uint64_t addr, uint8_t **out,
		      size_t *len)
{
	const struct agent_python_layout *l = r->layout;
	uint8_t head[64];
	uint64_t n;
	int err;

	if (l->bytes_data > sizeof(head))
		return -EINVAL;
	err = read_object(r, addr, r->types.bytes, head, l->bytes_data);
	if (err)
		return err;
	n = get_u64(head, l->bytes_size);
	if (n > AGENT_PY_LINETABLE_MAX)
		return -E2BIG;
	*out = malloc(n ? n : 1);
	if (!*out)
		return -ENOMEM;
	if (n && r->read(r->ctx, addr + l->bytes_data, *out, n)) {
		free(*out);
		*out = NULL;
		return -EFAULT;
	}
	*len = n;
	return 0;
}

int agent_py_code_head(const struct agent_py_reader *r, uint64_t code,
		       struct agent_py_code_id *id)
{
	const struct agent_python_layout *l = r->layout;
	uint8_t head[256];
	int32_t first;
	size_t n = (size_t)l->code_qualname + 8;
	int err;

	if ((size_t)l->code_linetable + 8 > n)
		n = (size_t)l->code_linetable + 8;
	if (n > sizeof(head) || (size_t)l->code_firstlineno + 4 > n)
		return -EINVAL;
	err = read_object(r, code, r->types.code, head, n);
	if (err)
		return err;
	memcpy(&first, head + l->code_firstlineno, sizeof(first));
	*id = (struct agent_py_code_id){
		.filename = get_u64(head, l->code_filename),
		.qualname = get_u64(head, l->code_qualname),
		.linetable = get_u64(head, l->code_linetable),
		.firstlineno = first,
	};
	return 0;
}

int agent_py_code_read(const struct agent_py_reader *r, uint64_t code, struct agent_py_code *out)
{
	struct agent_py_code c = { 0 };
	int err = agent_py_code_head(r, code, &c.id);

	if (!err)
		err = agent_py_str_read(r, c.id.qualname, &c.qualname);
	if (!err)
		err = agent_py_str_read(r, c.id.filename, &c.filename);
	if (!err)
		err = bytes_read(r, c.id.linetable, &c.linetable, &c.linetable_len);
	if (err) {
		agent_py_code_release(&c);
		return err;
	}
	*out = c;
	return 0;
}

void agent_py_code_release(struct agent_py_code *c)
{
	free(c->qualname);
	free(c->filename);
	free(c->linetable);
	*c = (struct agent_py_code){ 0 };
}

/* A varint of the location table at *p (< end): its value, *p past it;
 * -1 when it runs past end or past 32 bits. */
static int64_t varint(const uint8_t **p, const uint8_t *end)
{
	uint64_t v = 0;

	for (unsigned shift = 0; *p < end && shift < 32; shift += 6) {
		uint8_t b = *(*p)++;

		v |= (uint64_t)(b & 63) << shift;
		if (!(b & 64))
			return (int64_t)v;
	}
	return -1;
}

static int64_t svarint(const uint8_t **p, const uint8_t *end)
{
	int64_t v = varint(p, end);

	if (v < 0)
		return INT64_MIN;
	return (v & 1) ? -(v >> 1) : v >> 1;
}

/* Bytes after an entry's first byte that its kind does not read for the
 * line: the columns. */
static size_t column_bytes(unsigned kind)
{
	return kind < 10 ? 1 : kind < 13 ? 2 : 0;
}

/* Apply one entry at *p: the line moved by it into *line, its units into
 * *units; -1 when the table is malformed. */
static int entry(const uint8_t **p, const uint8_t *end, int64_t *line, bool *none,
		 unsigned *units)
{
	uint8_t b = *(*p)++;
	unsigned kind = (b >> 3) & 15;
	int64_t d = 0;

	if (!(b & 0x80))
		return -1;
	*units = (b & 7) + 1u;
	*none = kind == 15;
	if (kind == 13 || kind == 14) {
		d = svarint(p, end);
		if (d == INT64_MIN)
			return -1;
		for (int i = 0; kind == 14 && i < 3; i++)
			if (varint(p, end) < 0)
				return -1;
	} else if (kind >= 10 && kind <= 12) {
		d = kind - 10;
	}
	if (kind != 15) {
		if ((size_t)(end - *p) < column_bytes(kind))
			return -1;
		*p += column_bytes(kind);
	}
	*line += d;
	return 0;
}

int64_t agent_py_line(const uint8_t *table, size_t len, int64_t firstlineno, uint32_t idx)
{
	const uint8_t *p = table, *end = table + len;
	int64_t line = firstlineno;
	uint64_t unit = 0, want;

	if (idx == 0)
		return firstlineno; /* before the first instruction */
	want = idx - 1;
	while (p < end) {
		unsigned units;
		bool none;

		if (entry(&p, end, &line, &none, &units))
			return firstlineno;
		if (want < unit + units)
			return none ? firstlineno : line;
		unit += units;
	}
	return firstlineno;
}
