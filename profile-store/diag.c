/*
 * diag.c - how the profile store explains a failure: the first one is
 * formatted into the caller's why buffer ("label 'pod': value longer
 * than 1024 bytes", "block 'blocks/...': section 4: hash mismatch"), with
 * the file and line of the check in debug builds, and logged at debug
 * level.  Also the component's error strings.
 */
#include "pstore_internal.h"

#include <stdarg.h>
#include <stdio.h>

int pstore_diag_fail(struct pstore_diag *d, int err, const char *where, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err = ember_diag_vfail(d, err, "profile-store/", where, fmt, ap);
	va_end(ap);
	return err;
}

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
