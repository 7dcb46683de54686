/*
 * service_lookup.c - symsvc_lookup(): the frames of a build ID's addresses for an
 * in-process caller, through the index cache and batches of
 * SYMSVC_BATCH_MAX addresses in address order, handed back in request
 * order.
 */
#include "symsvc_internal.h"

#include <errno.h>

/* addrs[0, n) of idx, batch after batch, each address's frames to fn. */
static int lookup_all(struct symsvc_batch *b, const struct sym_index *idx,
		      const struct symjson_address *addrs, size_t n, unsigned flags,
		      symsvc_frames_fn fn, void *arg)
{
	int err = 0;

	for (size_t at = 0; !err && at < n; at += SYMSVC_BATCH_MAX) {
		size_t k = n - at < SYMSVC_BATCH_MAX ? n - at : SYMSVC_BATCH_MAX;

		err = symsvc_batch_run(b, idx, addrs + at, k, flags);
		for (size_t i = 0; !err && i < k; i++) {
			int nf;
			const struct sym_frame *f = symsvc_batch_frames_at(b, i, &nf);

			err = fn(arg, at + i, f, nf);
		}
	}
	return err;
}

int symsvc_lookup(struct symsvc *svc, const char *build_id,
		  const struct symjson_address *addrs, size_t n, unsigned flags,
		  symsvc_frames_fn fn, void *arg)
{
	struct symsvc_batch *b;
	struct symsvc_index *ix;
	int err = symsvc_index_get(svc, build_id, &ix);

	if (err)
		return err;
	err = symsvc_batch_new(&b);
	if (!err)
		err = lookup_all(b, symsvc_index_sym(ix), addrs, n, flags, fn, arg);
	symsvc_batch_free(b);
	symsvc_index_put(svc, ix);
	return err;
}
