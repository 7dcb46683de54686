/*
 * service.c - the symbolization service itself (symsvc.h): its options,
 * lifetime and figures, and what each error means for an address.
 */
#include "symsvc_internal.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

#define DEFAULT_CACHE_BYTES ((uint64_t)1 << 30)

int symsvc_new(struct store *s, const struct symsvc_opts *o, struct symsvc **out)
{
	struct symsvc *svc = calloc(1, sizeof(*svc));
	uint64_t budget = EMBER_OPTS_GET(o, cache_bytes, 0);
	int err;

	if (!svc)
		return -ENOMEM;
	svc->store = s;
	svc->fetch = EMBER_OPTS_GET(o, fetch, 0);
	svc->fetch_arg = EMBER_OPTS_GET(o, fetch_arg, 0);
	svc->build = (struct symsvc_build_limits){ EMBER_OPTS_GET(o, budget, 0), EMBER_OPTS_GET(o, build_bytes, 0) };
	err = symsvc_cache_init(&svc->cache, budget ? budget : DEFAULT_CACHE_BYTES);
	if (err) {
		free(svc);
		return err;
	}
	*out = svc;
	return 0;
}

struct store *symsvc_store(const struct symsvc *svc)
{
	return svc->store;
}

void symsvc_free(struct symsvc *svc)
{
	if (!svc)
		return;
	symsvc_cache_release(&svc->cache);
	free(svc);
}

void symsvc_get_stats(struct symsvc *svc, struct symsvc_stats *st)
{
	symsvc_cache_get_stats(&svc->cache, st);
}

enum symjson_error symsvc_error_reason(int err)
{
	if (err == -ENOENT)
		return SYMJSON_ERR_UNKNOWN_BUILD_ID;
	if (err == -E2BIG)
		return SYMJSON_ERR_OVER_BUDGET;
	if (err == -EHOSTUNREACH)
		return SYMJSON_ERR_UPSTREAM_UNAVAILABLE;
	if (err == -ETIMEDOUT)
		return SYMJSON_ERR_DEADLINE;
	if (err == -ENOBUFS)
		return SYMJSON_ERR_FETCH_LIMIT;
	if (err == -EAGAIN)
		return SYMJSON_ERR_BUSY;
	if (-err >= SYM_ERR_NOT_ELF && -err <= SYM_ERR_INDEX_VERSION)
		return SYMJSON_ERR_NO_DEBUGINFO; /* no symbols, unreadable ELF */
	return SYMJSON_ERR_STORE_UNAVAILABLE; /* the store or its files failed */
}

enum ember_errkind symsvc_error_kind(int err)
{
	switch (symsvc_error_reason(err)) {
	case SYMJSON_ERR_UNKNOWN_BUILD_ID:
		return EMBER_ERRK_NOT_FOUND;
	case SYMJSON_ERR_NO_DEBUGINFO:
		return EMBER_ERRK_UNPROCESSABLE;
	case SYMJSON_ERR_OVER_BUDGET:
		return EMBER_ERRK_TOO_LARGE;
	case SYMJSON_ERR_DEADLINE:
		return EMBER_ERRK_TIMEOUT;
	case SYMJSON_ERR_FETCH_LIMIT:
		return EMBER_ERRK_OVER_LIMIT;
	case SYMJSON_ERR_BUSY:
		return EMBER_ERRK_BUSY;
	default: /* upstream_unavailable, store_unavailable */
		return err == -ENOMEM ? EMBER_ERRK_INTERNAL : ember_errkind_of_errno(err);
	}
}
