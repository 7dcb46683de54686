/*
 * json_writer.c - the smallest JSON writer that is safe on any bytes
 * (RFC 8259): strings escaped and made valid UTF-8, numbers formatted
 * without printf.  Used for answers, where building a jansson tree per
 * frame would cost more than the symbolization (1M addresses/s).  Only
 * writing lives here: parsing is jansson's.
 */
#include "wire_internal.h"

#include <string.h>

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if invalid. */
static size_t utf8_len(const uint8_t *s)
{
	uint8_t c = s[0];
	size_t n;
	uint8_t lo = 0x80, hi = 0xbf;

	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
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
	for (size_t i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

/* The escape of an ASCII byte that needs one, written to esc; its length. */
static size_t escape_ascii(uint8_t c, char esc[7])
{
	static const char hex[] = "0123456789abcdef";

	switch (c) {
	case '"': memcpy(esc, "\\\"", 2); return 2;
	case '\\': memcpy(esc, "\\\\", 2); return 2;
	case '\n': memcpy(esc, "\\n", 2); return 2;
	case '\r': memcpy(esc, "\\r", 2); return 2;
	case '\t': memcpy(esc, "\\t", 2); return 2;
	case '\b': memcpy(esc, "\\b", 2); return 2;
	case '\f': memcpy(esc, "\\f", 2); return 2;
	default:
		memcpy(esc, "\\u00", 4);
		esc[4] = hex[c >> 4];
		esc[5] = hex[c & 0xf];
		return 6;
	}
}

/* Bytes from s that go out as they are. */
static size_t plain_run(const uint8_t *s)
{
	size_t i = 0;

	for (;;) {
		if (s[i] >= 0x20 && s[i] < 0x80 && s[i] != '"' && s[i] != '\\') {
			i++;
			continue;
		}
		if (s[i] >= 0x80) {
			size_t n = utf8_len(s + i);

			if (n) {
				i += n;
				continue;
			}
		}
		return i;
	}
}

int wire_json_str(struct ember_buf *b, const char *str)
{
	const uint8_t *s = (const uint8_t *)str;
	int err = ember_buf_putc(b, '"');

	while (!err && *s) {
		size_t run = plain_run(s);
		char esc[7];

		if (run) {
			err = ember_buf_append(b, s, run);
			s += run;
		} else if (*s >= 0x80) {
			err = WIRE_JSON_LIT(b, "\\ufffd");
			s++;
		} else {
			err = ember_buf_append(b, esc, escape_ascii(*s, esc));
			s++;
		}
	}
	return err ? err : ember_buf_putc(b, '"');
}

int wire_json_u64(struct ember_buf *b, uint64_t v)
{
	char tmp[20];
	size_t i = sizeof(tmp);

	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return ember_buf_append(b, tmp + i, sizeof(tmp) - i);
}

int wire_json_hex(struct ember_buf *b, uint64_t v)
{
	static const char hex[] = "0123456789abcdef";
	char tmp[20];
	size_t i = sizeof(tmp);

	tmp[--i] = '"';
	do {
		tmp[--i] = hex[v & 0xf];
		v >>= 4;
	} while (v);
	tmp[--i] = 'x';
	tmp[--i] = '0';
	tmp[--i] = '"';
	return ember_buf_append(b, tmp + i, sizeof(tmp) - i);
}
