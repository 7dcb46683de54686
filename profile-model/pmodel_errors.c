/*
 * pmodel_errors.c - the profile model's error strings (enum pmodel_error).
 * A failure says more than its error: the first failed check is
 * formatted into the caller's why buffer by common.h's EMBER_FAIL guards.
 */
#include "pmodel_internal.h"

const char *pmodel_strerror(int err)
{
	if (-err == PMODEL_ERR_TYPE)
		return "unknown or mismatched profile type";
	return strerror(-err);
}

enum ember_errkind pmodel_error_kind(int err)
{
	switch (-err) {
	case PMODEL_ERR_TYPE:
		return EMBER_ERRK_MALFORMED;
	default:
		return ember_errkind_of_errno(err);
	}
}
