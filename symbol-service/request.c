/*
 * request.c - what one request may spend (symsvc_request_opts in
 * symsvc.h): its check, polled between steps so that a request past its
 * deadline or whose client went away stops, and its count of build IDs
 * asked upstream.
 */
#include "symsvc_internal.h"

#include <errno.h>
#include <stddef.h>

#define POLL_EVERY 256 /* steps between two checks in a per-address loop */

#define ROPT(o, f)                                                                 \
	((o) && (o)->sz >= offsetof(struct symsvc_request_opts, f) + sizeof((o)->f) ? (o)->f : 0)

void symsvc_req_init(struct symsvc_req *r, const struct symsvc_request_opts *o)
{
	*r = (struct symsvc_req){ 0 };
	r->opts = (struct symsvc_request_opts){ .sz = sizeof(r->opts),
						.check = ROPT(o, check),
						.check_arg = ROPT(o, check_arg),
						.max_fetches = ROPT(o, max_fetches),
						.deadline_ms = ROPT(o, deadline_ms),
						.account = ROPT(o, account) };
	r->fetches_left = r->opts.max_fetches;
	r->capped = r->fetches_left > 0;
}

int symsvc_req_check(struct symsvc_req *r)
{
	if (!r || r->stopped || !r->opts.check)
		return r ? r->stopped : 0;
	r->stopped = r->opts.check(r->opts.check_arg);
	return r->stopped;
}

int symsvc_req_poll(struct symsvc_req *r)
{
	if (!r || r->stopped)
		return r ? r->stopped : 0;
	return ++r->polls % POLL_EVERY ? 0 : symsvc_req_check(r);
}

int symsvc_req_take_fetch(struct symsvc_req *r)
{
	if (!r || !r->capped)
		return 0;
	if (!r->fetches_left)
		return -ENOBUFS;
	r->fetches_left--;
	return 0;
}
