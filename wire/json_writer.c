/*
 * json_writer.c - the smallest JSON writer that is safe on any bytes
 * (RFC 8259): strings escaped and made valid UTF-8 (common.h's
 * ember_json_str), numbers formatted without printf.  Used for answers, where building a jansson tree per
 * frame would cost more than the symbolization (1M addresses/s).  Only
 * writing lives here: parsing is jansson's.
 */
#include "wire_internal.h"

#include <string.h>

int wire_json_str(struct ember_buf *b, const char *s)
{
	return ember_json_str(b, s, strlen(s));
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
