/*
 * read_request.c - one read's request context inside the service: the
 * limits the HTTP layer gives every read (struct symsvc_request_opts, the
 * same the symbolization routes take: the check of the deadline and the
 * client, the cap on upstream fetches, the memory account) split into
 * what the profile store polls and charges (struct pstore_request, given
 * with each selection) and what the query-time resolver spends across
 * mappings (a struct symsvc_req, so the cap counts over the whole
 * request, not per mapping).
 */
#include "profsvc_internal.h"
#include "symsvc.h"

#include <errno.h>
#include <string.h>

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
	return symsvc_req_new(ro, &r->resolving.req);
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
