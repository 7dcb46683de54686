/*
 * errors.c - the profile store's error strings (enum pstore_error).  A
 * failure says more than its error: the first failed check is formatted
 * into the caller's why buffer ("label 'pod': value longer than 1024
 * bytes", "block 'blocks/...': section 4: hash mismatch") by common.h's
 * EMBER_FAIL guards.
 */
#include "pstore_internal.h"

#include <stdio.h>

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
		return "unknown or ambiguous profile type";
	case PSTORE_ERR_CORRUPT:
		return "corrupt block or log segment";
	case PSTORE_ERR_CLOSED:
		return "the store's log failed; no more writes";
	default:
		return strerror(-err);
	}
}
