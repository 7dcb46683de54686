/*
 * diag.c - how a parser of outside input explains its first failure:
 * formatted into the caller's buffer as "reason [file:line]" (the file
 * path cut to start at the component's folder), and logged at debug
 * level.  wire/ and unwind-compiler/ wrap it with their own prefixes.
 */
#include "common.h"

#include <stdio.h>
#include <string.h>

int ember_diag_vfail(struct ember_diag *d, int err, const char *component,
		     const char *where, const char *fmt, va_list ap)
{
	char msg[256];
	const char *cut;

	if (!d || d->set)
		return err;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	d->set = true;
	if (where && (cut = strstr(where, component)))
		where = cut;
	if (d->msg && d->size)
		snprintf(d->msg, d->size, where ? "%s [%s]" : "%s", msg, where);
	pr_debug("%.*s: %s", (int)strcspn(component, "/-"), component, msg);
	return err;
}
