/*
 * resolver.c - the symbolization service as the profile store's resolver
 * (pstore_resolve_fn): the addresses of one mapping of a query's result
 * (or of a block being compacted) are normalized to file offsets
 * (address - memory_start + file_offset, as symsvc_symbolize_pprof does),
 * looked up in the build ID's index in address order (symsvc batches),
 * and handed back as frames named by the rule ingest names them by
 * (symsvc_frame_name), so a function resolved late and one resolved at
 * ingest are one function.  The store calls it from its query and its
 * compaction; nothing of it passes through the HTTP layer.
 *
 * A build ID the service cannot symbolize (unknown, no debug info,
 * upstream down, over budget, past the request's cap on upstream
 * fetches) leaves its addresses unresolved with that reason; a store that
 * cannot be read is an error (the query answers 503 and is asked again;
 * the compaction retries at its next pass).  A query resolves on its
 * request's behalf (profsvc_resolve_for): one cap on upstream fetches for
 * all its mappings (the symbolization routes' --upstream-fetches-per-
 * request), and its check, whose error (deadline, client gone) stops the
 * query.  The compaction's resolver (profsvc_resolve) has no request.
 */
#include "profsvc_internal.h"
#include "symsvc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail_all(struct pstore_resolution *r, size_t n, const char *reason)
{
	for (size_t i = 0; i < n; i++)
		EMBER_FORWARD_IF_ERROR(pstore_resolution_fail(r, i, reason));
	return 0;
}

/* The frames of position bi of the batch as the resolution of address ri. */
static int report(struct pstore_resolution *r, const struct symsvc_batch *b,
		  const struct sym_index *idx, size_t bi, size_t ri)
{
	struct pstore_frame fr[SYMSVC_FRAMES_MAX];
	struct symsvc_frame_name fn;
	int n;
	const struct sym_frame *f = symsvc_batch_frames(b, bi, &n);

	if (n <= 0)
		return pstore_resolution_fail(r, ri, symsvc_pprof_why_name(
							     n < 0 ? SYMSVC_PPROF_NOT_IN_ELF
								   : SYMSVC_PPROF_NO_SYMBOLS));
	n = n > SYMSVC_FRAMES_MAX ? SYMSVC_FRAMES_MAX : n;
	for (int k = 0; k < n; k++) {
		symsvc_frame_name(idx, &f[k], true, &fn);
		fr[k] = (struct pstore_frame){ .function = fn.function,
					       .system_name = fn.system_name,
					       .filename = fn.filename,
					       .line = fn.line,
					       .start_line = fn.start_line };
	}
	return pstore_resolution_set(r, ri, fr, (size_t)n);
}

/* addrs[at, at + k) of mapping m through idx. */
static int resolve_chunk(struct symsvc_batch *b, const struct sym_index *idx,
			 const struct pstore_mapping *m, const uint64_t *addrs, size_t at,
			 size_t k, struct pstore_resolution *r)
{
	struct symjson_address q[SYMSVC_BATCH_MAX];
	size_t pos[SYMSVC_BATCH_MAX], nq = 0;
	int err = 0;

	for (size_t i = 0; !err && i < k; i++) {
		uint64_t a = addrs[at + i];

		if (a < m->start || (m->limit && a >= m->limit)) {
			err = pstore_resolution_fail(
				r, at + i, symsvc_pprof_why_name(SYMSVC_PPROF_OUTSIDE_MAPPING));
			continue;
		}
		pos[nq] = i;
		q[nq++] = (struct symjson_address){ a - m->start + m->offset, SYMJSON_FILE_OFFSET };
	}
	if (!err && nq)
		err = symsvc_batch_run(b, idx, q, nq, SYM_LOOKUP_SYMBOL_NAME);
	for (size_t j = 0; !err && j < nq; j++)
		err = report(r, b, idx, j, at + pos[j]);
	return err;
}

/* The build ID of a mapping's (hex, else "htlhash:FILE_ID" through the
 * store's file-ID index) into id: 0, -EINVAL (none), -ENOENT (a file ID
 * no stored executable has yet), or the store's error. */
static int build_id_of(struct symsvc *svc, const char *bid, char *id, size_t size)
{
	const char *fid = profsvc_file_id_named(bid);
	char found[STORE_BUILD_ID_HEX];
	int err;

	if (!fid)
		return ember_build_id_hex_normalize(bid, id, size) ? 0 : -EINVAL;
	err = store_find_file_id(symsvc_store(svc), fid, found);
	if (err)
		return err;
	snprintf(id, size, "%s", found);
	return 0;
}

/* The addresses of m through svc on request req's behalf (NULL: none). */
static int resolve(struct symsvc *svc, struct symsvc_req *req, const struct pstore_mapping *m,
		   const uint64_t *addrs, size_t n, struct pstore_resolution *r)
{
	struct symsvc_batch *b = NULL;
	struct symsvc_index *ix;
	char id[SYMJSON_BUILD_ID_HEX_MAX + 1];
	int err = build_id_of(svc, m->build_id, id, sizeof(id));

	if (err == -ENOENT)
		return fail_all(r, n, symjson_error_name(SYMJSON_ERR_UNKNOWN_BUILD_ID));
	if (err == -EINVAL)
		return fail_all(r, n, symsvc_pprof_why_name(SYMSVC_PPROF_NO_BUILD_ID));
	if (err)
		return err; /* the store */
	err = symsvc_index_get_for(svc, id, req, &ix);
	if (err) {
		enum symjson_error e = symsvc_error_reason(err);

		if (e == SYMJSON_ERR_STORE_UNAVAILABLE || err == symsvc_req_stopped(req))
			return err; /* the store, or the request stopped */
		return fail_all(r, n, symjson_error_name(e));
	}
	err = symsvc_batch_new(&b);
	for (size_t at = 0; !err && at < n; at += SYMSVC_BATCH_MAX)
		err = resolve_chunk(b, symsvc_index_sym(ix), m, addrs, at,
				    n - at < SYMSVC_BATCH_MAX ? n - at : SYMSVC_BATCH_MAX, r);
	symsvc_batch_free(b);
	symsvc_index_put(svc, ix);
	return err;
}

int profsvc_resolve(void *ctx, const struct pstore_mapping *m, const uint64_t *addrs, size_t n,
		    struct pstore_resolution *r)
{
	return resolve(ctx, NULL, m, addrs, n, r);
}

int profsvc_resolve_for(void *ctx, const struct pstore_mapping *m, const uint64_t *addrs,
			size_t n, struct pstore_resolution *r)
{
	struct profsvc_resolving *rs = ctx;

	return resolve(rs->symbols, rs->req, m, addrs, n, r);
}
