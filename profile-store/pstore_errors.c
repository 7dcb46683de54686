/*
 * pstore_errors.c - the profile store's error strings (enum pstore_error).  A
 * failure says more than its error: the first failed check is formatted
 * into the caller's why buffer ("label 'pod': value longer than 1024
 * bytes", "block 'blocks/...': section 4: hash mismatch") by common.h's
 * EMBER_FAIL guards; the error's kind (pstore_error_kind()) is what an
 * answer's status comes from.
 */
#include "pstore.h"

#include <string.h>

const char *pstore_strerror(int err)
{
	switch (-err) {
	case PSTORE_ERR_LIMIT:
		return "profile past a limit of the store";
	case PSTORE_ERR_LABEL:
		return "malformed label";
	case PSTORE_ERR_SERIES_LIMIT:
		return "too many series in the store";
	case PSTORE_ERR_SELECTOR:
		return "malformed label selector";
	case PSTORE_ERR_TYPE:
		return "unknown or mismatched profile type";
	case PSTORE_ERR_CORRUPT:
		return "corrupt block or log segment";
	case PSTORE_ERR_CLOSED:
		return "the store's log failed; no more writes";
	case PSTORE_ERR_TOO_LARGE:
		return "profile larger than the store takes";
	default:
		return strerror(-err);
	}
}

enum ember_errkind pstore_error_kind(int err)
{
	switch (-err) {
	case PSTORE_ERR_TOO_LARGE:
		return EMBER_ERRK_TOO_LARGE;
	case PSTORE_ERR_LIMIT:
		return EMBER_ERRK_OVER_LIMIT;
	case PSTORE_ERR_LABEL:
	case PSTORE_ERR_SELECTOR:
	case PSTORE_ERR_TYPE:
	case EINVAL:
		return EMBER_ERRK_MALFORMED;
	case PSTORE_ERR_SERIES_LIMIT:
		return EMBER_ERRK_CAPACITY;
	case PSTORE_ERR_CORRUPT:
		return EMBER_ERRK_CORRUPT;
	case PSTORE_ERR_CLOSED:
		return EMBER_ERRK_UNAVAILABLE;
	default:
		return ember_errkind_of_errno(err);
	}
}
