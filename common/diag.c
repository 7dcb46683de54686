/*
 * diag.c - how a parser of outside input explains its first failure
 * (the EMBER_FAIL guard macros of common.h, after zstd's
 * RETURN_ERROR_IF): formatted into the caller's buffer as "reason
 * [folder/file.c:line]" in debug builds, "reason" in release builds,
 * and logged at debug level with the place in every build.  The reason goes back to whoever sent the
 * input: an uploader, a profiler, the user of `ember unwind compile`.
 */
#include "common.h"

#include <stdio.h>
#include <string.h>

/* The last two components of a source path: "wire/pprof_decode.c:12". */
static const char *where_short(const char *where)
{
	const char *last = NULL, *prev = NULL;

	for (const char *p = where; *p; p++)
		if (*p == '/') {
			prev = last;
			last = p;
		}
	return prev ? prev + 1 : where;
}

int ember_diag_vfail(struct ember_diag *d, int err, const char *where,
		     const char *fmt, va_list ap)
{
	char msg[256];

	if (!d || d->set)
		return err;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	d->set = true;
	if (where)
		where = where_short(where);
#ifdef NDEBUG
	if (d->msg && d->size) /* the user gets the reason, the log the place */
		snprintf(d->msg, d->size, "%s", msg);
#else
	if (d->msg && d->size)
		snprintf(d->msg, d->size, where ? "%s [%s]" : "%s", msg, where);
#endif
	if (where)
		pr_debug("%.*s: %s (%s)", (int)strcspn(where, "/"), where, msg, where);
	else
		pr_debug("%s", msg);
	return err;
}

int ember_diag_fail(struct ember_diag *d, int err, const char *where,
		    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err = ember_diag_vfail(d, err, where, fmt, ap);
	va_end(ap);
	return err;
}
