/*
 * diag.c - how wire/ explains a rejected input: the first failure is
 * formatted into the caller's why buffer ("location 12: mapping_id 7 does
 * not exist", "modules[2].addresses[5]: not an address"), with the file
 * and line of the failed check in debug builds, and logged at debug
 * level.  The reason goes back to whoever sent the input.  Also the
 * component's error strings.
 */
#include "wire_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int wire_diag_fail(struct wire_diag *d, int err, const char *where, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err = ember_diag_vfail(d, err, "wire/", where, fmt, ap);
	va_end(ap);
	return err;
}

const char *pprof_strerror(int err)
{
	switch (-err) {
	case PPROF_ERR_COMPRESSION:
		return "corrupt or truncated gzip or zstd stream";
	case PPROF_ERR_PROTOBUF:
		return "not a protobuf profile (truncated or malformed)";
	case PPROF_ERR_INVALID:
		return "inconsistent profile (dangling id, bad string index, ...)";
	default:
		return strerror(-err);
	}
}
