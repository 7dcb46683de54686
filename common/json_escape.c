/*
 * json_escape.c - the inside of a JSON string (RFC 8259 §7) from any
 * bytes: '"' and '\\' escaped, control characters as the short escapes
 * or \u00XX, valid UTF-8 passed through, and each byte that does not
 * start a valid UTF-8 sequence replaced by U+FFFD, as LLVM's JSON
 * writer (llvm::json::fixUTF8) does, so `ember symbolize
 * --output-style=JSON` prints what llvm-symbolizer prints.  Names and
 * paths come from ELF files anyone may upload: the output stays valid
 * JSON whatever they hold.
 */
#include "common.h"

size_t ember_utf8_len(const void *p, size_t n)
{
	const uint8_t *s = p;
	uint8_t c = s[0], lo = 0x80, hi = 0xbf;
	size_t len;

	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4;
	else
		return 0;
	if (len > n)
		return 0;
	if (c == 0xe0)
		lo = 0xa0; /* no overlong forms */
	else if (c == 0xed)
		hi = 0x9f; /* no surrogates */
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f; /* nothing past U+10FFFF */
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

#define BYTES_OF(c) (0x0101010101010101ull * (uint8_t)(c))
#define HIGH_BITS BYTES_OF(0x80)

/* Whether a byte of w needs a look: 0x80 and above (UTF-8 to check),
 * under 0x20 (control), '"' or '\\'.  Each test is the classic one for
 * "some byte is zero / under k" (k <= 0x80): exact as a yes or no. */
static bool word_needs_look(uint64_t w)
{
	uint64_t ctl = (w - BYTES_OF(0x20)) & ~w;
	uint64_t quote = w ^ BYTES_OF('"'), bslash = w ^ BYTES_OF('\\');

	quote = (quote - BYTES_OF(1)) & ~quote;
	bslash = (bslash - BYTES_OF(1)) & ~bslash;
	return (w | ctl | quote | bslash) & HIGH_BITS;
}

/* Leading bytes of s[0..n) that are plain ASCII, 8 at a time. */
static size_t plain_words(const uint8_t *s, size_t n)
{
	size_t i = 0;

	for (; n - i >= 8; i += 8) {
		uint64_t w;

		memcpy(&w, s + i, 8);
		if (word_needs_look(w))
			break;
	}
	return i;
}

/* Bytes from s[0..n) that go out as they are. */
static size_t plain_run(const uint8_t *s, size_t n)
{
	size_t i = 0;

	while ((i += plain_words(s + i, n - i)) < n) {
		size_t k;

		if (s[i] >= 0x20 && s[i] < 0x80 && s[i] != '"' && s[i] != '\\') {
			i++;
			continue;
		}
		if (s[i] < 0x80 || !(k = ember_utf8_len(s + i, n - i)))
			break;
		i += k;
	}
	return i;
}

/* The escape of byte c, which plain_run stopped at, into esc; its length. */
static size_t escape_byte(uint8_t c, char esc[6])
{
	static const char hex[] = "0123456789abcdef";
	const char *s = NULL;

	switch (c) {
	case '"': s = "\\\""; break;
	case '\\': s = "\\\\"; break;
	case '\n': s = "\\n"; break;
	case '\r': s = "\\r"; break;
	case '\t': s = "\\t"; break;
	case '\b': s = "\\b"; break;
	case '\f': s = "\\f"; break;
	default:
		break;
	}
	if (s) {
		memcpy(esc, s, 2);
		return 2;
	}
	if (c >= 0x80) { /* not valid UTF-8 here: U+REPLACEMENT CHARACTER */
		memcpy(esc, "\xef\xbf\xbd", 3);
		return 3;
	}
	memcpy(esc, "\\u00", 4);
	esc[4] = hex[c >> 4];
	esc[5] = hex[c & 0xf];
	return 6;
}

int ember_json_escape(const char *str, size_t n, ember_write_fn write, void *ctx)
{
	const uint8_t *s = (const uint8_t *)str;
	int err = 0;

	while (!err && n) {
		size_t run = plain_run(s, n);
		char esc[6];

		if (run) {
			err = write(ctx, s, run);
		} else {
			err = write(ctx, esc, escape_byte(*s, esc));
			run = 1;
		}
		s += run;
		n -= run;
	}
	return err;
}

int ember_buf_write(void *ctx, const void *data, size_t len)
{
	return ember_buf_append(ctx, data, len);
}

int ember_json_str(struct ember_buf *b, const char *s, size_t n)
{
	int err = ember_buf_putc(b, '"');

	if (!err)
		err = ember_json_escape(s, n, ember_buf_write, b);
	return err ? err : ember_buf_putc(b, '"');
}
