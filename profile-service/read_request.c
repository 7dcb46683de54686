/*
 * read_request.c - one read's request context inside the service: the
 * limits the HTTP layer gives every read (struct symsvc_request_opts, the
 * same the symbolization routes take: the check of the deadline and the
 * client, the cap on upstream fetches, the memory account) split into
 * what the profile store polls and charges (struct pstore_request, given
 * with each selection) and what the query-time resolver spends across
 * mappings (a struct symsvc_req, so the cap counts over the whole
 * request, not per mapping); and the tenant's limits of a read
 * (--limits: max_query_bytes lowers the account's cap, max_query_range
 * refuses a longer selection: profsvc_read_range).
 */
#include "profsvc_internal.h"
#include "symsvc.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* The tenant's limits of a read: its memory (the account's cap lowered
 * to what it holds plus max_query_bytes), its range (kept in r). */
static void tenant_limits(struct profsvc *s, struct profsvc_read *r)
{
	struct ember_mem_account *a = r->store.account;
	struct profsvc_limits l;

	profsvc_limits_of(s, &l);
	r->tenant = s->tenant;
	r->max_range_s = l.max_query_range;
	if (a && l.max_query_bytes && l.max_query_bytes < a->cap - a->used)
		a->cap = a->used + l.max_query_bytes;
}

int profsvc_read_begin(struct profsvc *s, const struct symsvc_request_opts *ro,
		       struct profsvc_read *r)
{
	memset(r, 0, sizeof(*r));
	r->store = (struct pstore_request){
		.sz = sizeof(r->store),
		.check = EMBER_OPTS_GET(ro, check, NULL),
		.check_arg = EMBER_OPTS_GET(ro, check_arg, NULL),
		.account = EMBER_OPTS_GET(ro, account, NULL),
	};
	r->resolving.symbols = s->symbols;
	tenant_limits(s, r);
	return symsvc_req_new(ro, &r->resolving.req);
}

int profsvc_read_range(const struct profsvc_read *r, const struct pstore_selection *sel,
		       char *why, size_t why_size)
{
	int64_t to = sel->to_ns ? sel->to_ns : profsvc_now_ns();
	uint64_t span_s = to > sel->from_ns ? (uint64_t)(to - sel->from_ns) / 1000000000 : 0;

	if (!r->max_range_s || span_s <= r->max_range_s)
		return 0;
	snprintf(why, why_size, "tenant '%s': a range of %llu s, longer than its max_query_range "
				"of %llu s: narrow it",
		 r->tenant, (unsigned long long)span_s, (unsigned long long)r->max_range_s);
	return -PSTORE_ERR_LIMIT;
}

void profsvc_read_end(struct profsvc_read *r)
{
	symsvc_req_free(r->resolving.req);
	r->resolving.req = NULL;
}

struct pstore_selection profsvc_read_selection(const struct profsvc_read *r,
					       const struct pstore_selection *sel)
{
	struct pstore_selection out = sel ? *sel : (struct pstore_selection){ 0 };

	out.request = &r->store;
	return out;
}

struct pstore_query_opts profsvc_read_query_opts(struct profsvc_read *r)
{
	return (struct pstore_query_opts){ .sz = sizeof(struct pstore_query_opts),
					   .resolver = profsvc_resolve_for,
					   .resolver_ctx = &r->resolving };
}

struct ember_mem_account *profsvc_read_account(const struct profsvc_read *r)
{
	return r->store.account;
}
