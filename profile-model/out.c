/*
 * out.c - how outputs are written: a buffered writer over the caller's
 * pmodel_write_fn (64 KiB pieces, so an HTTP layer can stream them), and
 * the escaping of names for XML (the flame graphs) and JSON: names come
 * from profiles and ELF files and are bytes, so control characters,
 * bytes that are not UTF-8 and the characters XML 1.0 forbids (encoded
 * surrogates, U+FFFE, U+FFFF) become U+FFFD, in both: a name reads the
 * same in every output.
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

/* The bytes of the character at s[0..n), and in *ok whether JSON
 * carries it as it is or escaped: what XML 1.0 carries (the same names go
 * to both), tab and LF too (escaped); CR and other control characters
 * are replaced. */
static size_t char_len(const unsigned char *s, size_t n, bool *ok)
{
	size_t len = ember_xml_char(s, n, ok);

	*ok |= *s == '\n' || *s == '\t';
	return len;
}

static int json_escaped(struct pmodel_out *o, const char *s)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + strlen(s);

	while (p < end) {
		bool ok;
		size_t n = char_len(p, (size_t)(end - p), &ok);
		const char *rep = NULL;

		if (!ok)
			rep = "\xef\xbf\xbd"; /* U+FFFD */
		else if (*p == '"')
			rep = "\\\"";
		else if (*p == '\\')
			rep = "\\\\";
		else if (*p == '\n')
			rep = "\\n";
		else if (*p == '\t')
			rep = "\\t";
		if (rep)
			pmodel_out_str(o, rep);
		else
			pmodel_out_write(o, p, n);
		p += n;
	}
	return o->err;
}

static int out_write(void *ctx, const void *data, size_t len)
{
	return pmodel_out_write(ctx, data, len);
}

int pmodel_out_xml(struct pmodel_out *o, const char *s)
{
	return ember_xml_escape(s, strlen(s), out_write, o);
}

int pmodel_out_json(struct pmodel_out *o, const char *s)
{
	pmodel_out_write(o, "\"", 1);
	json_escaped(o, s);
	return pmodel_out_write(o, "\"", 1);
}
