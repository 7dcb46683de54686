/*
 * errkind.c - what an error means to whoever asked (enum ember_errkind):
 * the default kind of an errno, and the kinds' names.  The HTTP layer maps
 * a kind to a status (api/status.c); components map their own errors to
 * kinds (pstore_error_kind(), ...).
 */
#include "common.h"

enum ember_errkind ember_errkind_of_errno(int err)
{
	switch (err) {
	case -ENOSPC:
	case -EDQUOT:
	case -EFBIG:
		return EMBER_ERRK_NO_SPACE;
	case -EAGAIN:
		return EMBER_ERRK_BUSY;
	default:
		return EMBER_ERRK_UNAVAILABLE;
	}
}

const char *ember_errkind_name(enum ember_errkind kind)
{
	static const char *const names[EMBER_ERRK_COUNT] = {
		[EMBER_ERRK_UNAVAILABLE] = "unavailable",
		[EMBER_ERRK_MALFORMED] = "malformed",
		[EMBER_ERRK_OVER_LIMIT] = "over_limit",
		[EMBER_ERRK_TOO_LARGE] = "too_large",
		[EMBER_ERRK_CAPACITY] = "capacity",
		[EMBER_ERRK_UNSUPPORTED] = "unsupported",
		[EMBER_ERRK_UNPROCESSABLE] = "unprocessable",
		[EMBER_ERRK_CONFLICT] = "conflict",
		[EMBER_ERRK_NOT_FOUND] = "not_found",
		[EMBER_ERRK_CORRUPT] = "corrupt",
		[EMBER_ERRK_NO_SPACE] = "no_space",
		[EMBER_ERRK_BUSY] = "busy",
		[EMBER_ERRK_INTERNAL] = "internal",
		[EMBER_ERRK_TIMEOUT] = "timeout",
	};

	return (unsigned)kind < EMBER_ERRK_COUNT ? names[kind] : "?";
}
