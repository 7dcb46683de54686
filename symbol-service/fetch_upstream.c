/*
 * fetch_upstream.c - the files of a build ID the store does not know, asked of the
 * owner's upstream fetch (symsvc_fetch_fn in symsvc.h) before the service
 * answers "unknown": the debug file for DWARF, the executable for program
 * headers and symbols.  Either is enough to build an index.
 */
#include "symsvc_internal.h"

#include <errno.h>

/* Whether a fetch's result says something about upstream (a miss or a
 * failure of it) rather than about our store. */
static bool upstream_said(int err)
{
	return err == -ENOENT || err == -ENOSYS || err == -EHOSTUNREACH || err == -ECANCELED;
}

/* What the index's callers are told of one file's fetch. */
static int fetch_result(int err)
{
	if (err == -ENOSYS)
		return -ENOENT; /* no upstream: nobody has it */
	if (err == -ECANCELED)
		return -EHOSTUNREACH;
	return err;
}

int symsvc_fetch_build_id(struct symsvc *svc, const char *build_id,
			  const struct symsvc_request_opts *ro)
{
	int dbg, exe;

	if (!svc->fetch)
		return -ENOENT;
	dbg = fetch_result(svc->fetch(svc->fetch_arg, build_id, STORE_WANT_DEBUGINFO, ro));
	if (dbg && !upstream_said(dbg))
		return dbg; /* the store failed (or the deadline came): the
			       executable would fare the same */
	exe = fetch_result(svc->fetch(svc->fetch_arg, build_id, STORE_WANT_EXECUTABLE, ro));
	if (!dbg || !exe)
		return 0;
	if (!upstream_said(exe))
		return exe;
	return dbg == -ENOENT ? exe : dbg; /* a failure says more than a miss */
}
