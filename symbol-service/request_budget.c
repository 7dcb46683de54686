/*
 * request_budget.c - what one request may spend (symsvc_request_opts in
 * symsvc.h): its check, polled between steps so that a request past its
 * deadline or whose client went away stops, and its count of build IDs
 * asked upstream.
 */
#include "symsvc_internal.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

#define POLL_EVERY 256 /* steps between two checks in a per-address loop */

void symsvc_req_init(struct symsvc_req *r, const struct symsvc_request_opts *o)
{
	*r = (struct symsvc_req){ 0 };
	r->opts = (struct symsvc_request_opts){ .sz = sizeof(r->opts),
						.check = EMBER_OPTS_GET(o, check, 0),
						.check_arg = EMBER_OPTS_GET(o, check_arg, 0),
						.max_fetches = EMBER_OPTS_GET(o, max_fetches, 0),
						.deadline_ms = EMBER_OPTS_GET(o, deadline_ms, 0),
						.account = EMBER_OPTS_GET(o, account, 0) };
	r->fetches_left = r->opts.max_fetches;
	r->capped = r->fetches_left > 0;
}

int symsvc_req_new(const struct symsvc_request_opts *o, struct symsvc_req **out)
{
	struct symsvc_req *r = malloc(sizeof(*r));

	if (!r)
		return -ENOMEM;
	symsvc_req_init(r, o);
	*out = r;
	return 0;
}

void symsvc_req_free(struct symsvc_req *r)
{
	free(r);
}

int symsvc_req_stopped(const struct symsvc_req *r)
{
	return r ? r->stopped : 0;
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
