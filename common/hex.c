/*
 * hex.c - lowercase hex: build IDs and sha256 digests as the debuginfod
 * protocol and the store name them, random file names, addresses.
 */
#include "common.h"

#include <ctype.h>
#include <errno.h>

static const char hex_digits[] = "0123456789abcdef";

void ember_hex_encode(const void *data, size_t len, char *out)
{
	const uint8_t *p = data;

	for (size_t i = 0; i < len; i++) {
		out[2 * i] = hex_digits[p[i] >> 4];
		out[2 * i + 1] = hex_digits[p[i] & 0xf];
	}
	out[2 * len] = '\0';
}

int ember_hex_decode(const char *hex, void *out, size_t len)
{
	uint8_t *p = out;

	for (size_t i = 0; i < len; i++) {
		int hi = ember_hex_digit(hex[2 * i]), lo = hi < 0 ? -1 : ember_hex_digit(hex[2 * i + 1]);

		if (lo < 0)
			return -EINVAL;
		p[i] = (uint8_t)(hi << 4 | lo);
	}
	return hex[2 * len] == '\0' ? 0 : -EINVAL;
}

size_t ember_hex_u64(uint64_t v, char out[17])
{
	char tmp[16];
	size_t n = 0;

	do {
		tmp[n++] = hex_digits[v & 0xf];
		v >>= 4;
	} while (v);
	for (size_t i = 0; i < n; i++)
		out[i] = tmp[n - 1 - i];
	out[n] = '\0';
	return n;
}

int ember_build_id_to_hex(const uint8_t *id, size_t len, char *out)
{
	if (len > EMBER_BUILD_ID_MAX)
		return -E2BIG;
	ember_hex_encode(id, len, out);
	return 0;
}

bool ember_build_id_hex_normalize(const char *s, char *out, size_t size)
{
	size_t n = s ? strlen(s) : 0;

	if (n < 2 || n % 2 || n >= size)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (!isxdigit((unsigned char)s[i]))
			return false;
		out[i] = (char)tolower((unsigned char)s[i]);
	}
	out[n] = '\0';
	return true;
}
