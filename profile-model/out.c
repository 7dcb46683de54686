/*
 * out.c - how outputs are written: a buffered writer over the caller's
 * pmodel_write_fn (64 KiB pieces, so an HTTP layer can stream them), and
 * the escaping of names for XML (the flame graphs) and JSON: names come
 * from profiles and ELF files and are bytes, so control characters and
 * bytes that are not UTF-8 become U+FFFD.
 */
#include "pmodel_internal.h"

#include <stdarg.h>
#include <stdio.h>

#define FLUSH_AT (64 * 1024)

int pmodel_write_buf(void *ctx, const void *data, size_t len)
{
	return ember_buf_append(ctx, data, len);
}

void pmodel_out_init(struct pmodel_out *o, pmodel_write_fn fn, void *ctx)
{
	o->fn = fn;
	o->ctx = ctx;
	o->err = 0;
	ember_buf_init(&o->buf, 2 * FLUSH_AT);
}

static void flush(struct pmodel_out *o)
{
	if (!o->err && o->buf.len)
		o->err = o->fn(o->ctx, o->buf.data, o->buf.len);
	ember_buf_reset(&o->buf);
}

int pmodel_out_write(struct pmodel_out *o, const void *data, size_t len)
{
	if (o->err)
		return o->err;
	if (o->buf.len + len > FLUSH_AT)
		flush(o);
	if (len > FLUSH_AT) {
		if (!o->err)
			o->err = o->fn(o->ctx, data, len);
		return o->err;
	}
	if (!o->err)
		o->err = ember_buf_append(&o->buf, data, len);
	return o->err;
}

int pmodel_out_printf(struct pmodel_out *o, const char *fmt, ...)
{
	char small[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0)
		return o->err = -EINVAL;
	if ((size_t)n < sizeof(small))
		return pmodel_out_write(o, small, (size_t)n);
	{
		char *big = malloc((size_t)n + 1);

		if (!big)
			return o->err = -ENOMEM;
		va_start(ap, fmt);
		vsnprintf(big, (size_t)n + 1, fmt, ap);
		va_end(ap);
		pmodel_out_write(o, big, (size_t)n);
		free(big);
	}
	return o->err;
}

int pmodel_out_finish(struct pmodel_out *o)
{
	flush(o);
	ember_buf_release(&o->buf);
	return o->err;
}

/* Length of the valid UTF-8 sequence at s (0 when invalid). */
static size_t utf8_len(const unsigned char *s)
{
	size_t n = s[0] < 0x80 ? 1 : (s[0] & 0xe0) == 0xc0 ? 2 : (s[0] & 0xf0) == 0xe0 ? 3
		 : (s[0] & 0xf8) == 0xf0 ? 4 : 0;

	if (n == 2 && s[0] < 0xc2)
		return 0;
	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if (n == 3 && ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0)))
		return 0;
	if (n == 4 &&
	    ((s[0] == 0xf0 && s[1] < 0x90) || s[0] > 0xf4 || (s[0] == 0xf4 && s[1] >= 0x90)))
		return 0;
	return n;
}

static int escaped(struct pmodel_out *o, const char *s, bool json)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		size_t n = utf8_len(p);
		const char *rep = NULL;

		if (!n || (*p < 0x20 && !(json && (*p == '\n' || *p == '\t'))))
			rep = "\xef\xbf\xbd"; /* U+FFFD */
		else if (json && *p == '"')
			rep = "\\\"";
		else if (json && *p == '\\')
			rep = "\\\\";
		else if (json && *p == '\n')
			rep = "\\n";
		else if (json && *p == '\t')
			rep = "\\t";
		else if (!json && *p == '&')
			rep = "&amp;";
		else if (!json && *p == '<')
			rep = "&lt;";
		else if (!json && *p == '>')
			rep = "&gt;";
		else if (!json && *p == '"')
			rep = "&quot;";
		if (rep)
			pmodel_out_str(o, rep);
		else
			pmodel_out_write(o, p, n);
		p += n ? n : 1;
	}
	return o->err;
}

int pmodel_out_xml(struct pmodel_out *o, const char *s)
{
	return escaped(o, s, false);
}

int pmodel_out_json(struct pmodel_out *o, const char *s)
{
	pmodel_out_write(o, "\"", 1);
	escaped(o, s, true);
	return pmodel_out_write(o, "\"", 1);
}
