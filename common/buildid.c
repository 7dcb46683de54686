/*
 * buildid.c - GNU build-ID hex conversion.  Build IDs name everything in
 * Ember's store and API; their textual form is lowercase hex, as in the
 * debuginfod protocol.
 */
#include "common.h"

#include <errno.h>
#include <string.h>

int ember_build_id_to_hex(const uint8_t *id, size_t len, char *out)
{
	static const char digits[] = "0123456789abcdef";

	if (len > EMBER_BUILD_ID_MAX)
		return -E2BIG;
	for (size_t i = 0; i < len; i++) {
		out[2 * i] = digits[id[i] >> 4];
		out[2 * i + 1] = digits[id[i] & 0xf];
	}
	out[2 * len] = '\0';
	return 0;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int ember_build_id_from_hex(const char *hex, uint8_t *out, size_t out_size)
{
	size_t n = strlen(hex);

	if (n < 2 || n % 2 || n / 2 > EMBER_BUILD_ID_MAX || n / 2 > out_size)
		return -EINVAL;
	for (size_t i = 0; i < n / 2; i++) {
		int hi = hex_digit(hex[2 * i]), lo = hex_digit(hex[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -EINVAL;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return (int)(n / 2);
}
