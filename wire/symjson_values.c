/*
 * symjson_values.c - the scalars of a POST /api/v1/symbolize request,
 * taken from jansson values: addresses (JSON integers or "0x" hex
 * strings, uint64), build IDs (hex, normalized to lowercase) and address
 * kinds, from a parser's text (the server's streamed request) or from
 * jansson values (the client's reply).  Strings are walked with bounds
 * checks on their length, so an embedded NUL or an overlong string is an
 * error, never a truncation.
 */
#include "wire_internal.h"
#include "symbolize_json.h"

#include <jansson.h>
#include <string.h>

#define HEX_ADDR_MAX_CHARS 64

/* "0x" + hex digits, s of len bytes (not NUL-terminated in general). */
static int parse_hex_u64(const char *s, size_t len, uint64_t *out, const char **why)
{
	uint64_t v = 0;

	if (len < 3 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X') || len > HEX_ADDR_MAX_CHARS) {
		*why = "not an address (a non-negative integer or a \"0x\" hex string)";
		return -EINVAL;
	}
	for (size_t i = 2; i < len; i++) {
		int d = ember_hex_digit(s[i]);

		if (d < 0) {
			*why = "not an address (a non-negative integer or a \"0x\" hex string)";
			return -EINVAL;
		}
		if (v >> 60) {
			*why = "address larger than 64 bits";
			return -EINVAL;
		}
		v = v << 4 | (uint64_t)d;
	}
	*out = v;
	return 0;
}

/* A JSON number's text as an address: a non-negative integer of at most
 * 64 bits. */
static int parse_dec_u64(const char *s, size_t len, uint64_t *out, const char **why)
{
	uint64_t v = 0;

	if (memchr(s, '.', len) || memchr(s, 'e', len) || memchr(s, 'E', len)) {
		*why = "address is not an integer";
		return -EINVAL;
	}
	if (len && s[0] == '-') {
		*why = "negative address";
		return -EINVAL;
	}
	for (size_t i = 0; i < len; i++) {
		unsigned d = (unsigned)(s[i] - '0');

		if (d > 9) {
			*why = "not an address (a non-negative integer or a \"0x\" hex string)";
			return -EINVAL;
		}
		if (v > (UINT64_MAX - d) / 10) {
			*why = "address larger than 64 bits";
			return -EINVAL;
		}
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

int symjson_address_text(const char *s, size_t len, bool number, uint64_t *out,
			 const char **why)
{
	return number ? parse_dec_u64(s, len, out, why) : parse_hex_u64(s, len, out, why);
}

int symjson_address_value(const json_t *v, uint64_t *out, const char **why)
{
	if (json_is_integer(v)) {
		json_int_t i = json_integer_value(v);

		if (i < 0) {
			*why = "negative address";
			return -EINVAL;
		}
		*out = (uint64_t)i;
		return 0;
	}
	if (json_is_string(v))
		return parse_hex_u64(json_string_value(v), json_string_length(v), out, why);
	*why = json_is_real(v) ? "address is not an integer"
			       : "not an address (a non-negative integer or a \"0x\" hex string)";
	return -EINVAL;
}

int symjson_build_id_str(const char *s, size_t len, char *out, size_t out_size,
			 const char **why)
{
	*why = "not a build ID (even-length hex, 2 to 128 digits)";
	if (!s || len < 2 || len % 2 || len > SYMJSON_BUILD_ID_HEX_MAX || len >= out_size)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		int d = ember_hex_digit(s[i]);

		if (d < 0)
			return -EINVAL;
		out[i] = "0123456789abcdef"[d];
	}
	out[len] = '\0';
	return 0;
}

int symjson_kind_str(const char *s, size_t len, int *out, const char **why)
{
	if (s && len == 5 && memcmp(s, "vaddr", 5) == 0) {
		*out = SYMJSON_VADDR;
		return 0;
	}
	if (s && len == 11 && memcmp(s, "file_offset", 11) == 0) {
		*out = SYMJSON_FILE_OFFSET;
		return 0;
	}
	*why = "not \"vaddr\" or \"file_offset\"";
	return -EINVAL;
}
