/*
 * yajl_account.c - yajl's allocator charged to a request's memory
 * account, for the parsers that stream JSON through yajl
 * (symjson_request.c, otlp_json.c).
 *
 * yajl 2.1 does not survive an allocator that fails, so its allocations
 * are charged to the account without being refused; a charge past the
 * share or the budget marks the account, and the parser stops at its
 * next event (a token spans at most the body, itself capped).
 */
#include "wire_internal.h"

#include <malloc.h>
#include <stdlib.h>

static void *af_malloc(void *ctx, size_t n)
{
	ember_mem_account_charge(ctx, n);
	return malloc(n);
}

static void *af_realloc(void *ctx, void *p, size_t n)
{
	size_t old = p ? malloc_usable_size(p) : 0;

	if (n > old)
		ember_mem_account_charge(ctx, n - old);
	return realloc(p, n);
}

static void af_free(void *ctx, void *p)
{
	(void)ctx;
	free(p);
}

yajl_alloc_funcs wire_yajl_funcs(struct ember_mem_account *acct)
{
	return (yajl_alloc_funcs){ af_malloc, af_realloc, af_free, acct };
}
