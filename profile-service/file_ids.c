/*
 * file_ids.c - mappings that name their binary by the OpenTelemetry eBPF
 * profiler's file ID only (the OTLP mapping attribute
 * process.executable.build_id.htlhash, no .gnu or .go build ID) given a
 * build ID, so their frames are symbolized like any other.
 *
 * At ingest, before symbolization (profsvc_otlp_decode): the debuginfo
 * store's file-ID index (store_find_file_id: the file ID of every
 * executable it holds, debuginfo-store/file_id.c) gives the build ID,
 * which becomes the pprof mapping's.  A file ID no stored executable has
 * yet (or that the store cannot look up now) becomes the build ID
 * "htlhash:FILE_ID" instead: the frames stay addresses, stored under that
 * name, and resolve later like any unresolved build ID's:
 *  - a query's resolver and the compaction's (resolver.c) look the file ID
 *    up again each time, and symbolize through the build ID found;
 *  - when an executable arrives (an upload, a fetch), the arrival of its
 *    build ID is also the arrival of "htlhash:FILE_ID" for each file ID
 *    the store indexed for that build ID (profsvc_symbols_arrived), so the
 *    compaction rewrites the blocks holding such frames.
 * docs/formats.md, "OTLP profiles"; docs/store-format.md, "The file-ID index".
 */
#include "profsvc_internal.h"
#include "symsvc.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

const char *profsvc_file_id_named(const char *build_id)
{
	size_t n = sizeof(PROFSVC_FILE_ID_PREFIX) - 1;

	return build_id && strncmp(build_id, PROFSVC_FILE_ID_PREFIX, n) == 0 ? build_id + n
									       : NULL;
}

/* Mapping k (id k + 1) of op's profile p named by its file ID. */
static int name_mapping(struct symsvc *symbols, struct pprof_profile *p,
			const struct otlp_mapping_ids *ids, size_t k)
{
	char fid[STORE_FILE_ID_HEX], bid[STORE_BUILD_ID_HEX];
	char tag[sizeof(PROFSVC_FILE_ID_PREFIX) + STORE_FILE_ID_HEX];
	int err;

	if (!(ids->kinds & OTLP_BUILD_ID_HTLHASH) ||
	    (ids->kinds & (OTLP_BUILD_ID_GNU | OTLP_BUILD_ID_GO)) ||
	    !store_file_id_normalize(ids->htlhash, fid))
		return 0; /* a build ID already, or no file ID we know the form of */
	err = store_find_file_id(symsvc_store(symbols), fid, bid);
	if (!err)
		return pprof_mapping_set_build_id(p, k + 1, bid);
	if (err != -ENOENT) /* looked up again by the resolver, which reports it */
		pr_debug("profsvc: file ID '%s': %s", fid, strerror(-err));
	snprintf(tag, sizeof(tag), "%s%s", PROFSVC_FILE_ID_PREFIX, fid);
	return pprof_mapping_set_build_id(p, k + 1, tag);
}

int profsvc_otlp_name_binaries(const struct profsvc *s, struct otlp_request *r)
{
	int err = 0;

	for (size_t i = 0; !err && i < r->n_profiles; i++) {
		const struct otlp_profile *op = &r->profiles[i];

		for (size_t k = 0; !err && op->p && k < op->n_mappings; k++)
			err = name_mapping(s->symbols, op->p, &op->mappings[k], k);
	}
	return err;
}

/* pstore_symbols_arrived for "htlhash:FILE_ID". */
static int file_id_arrived(const char *file_id, void *arg)
{
	char tag[sizeof(PROFSVC_FILE_ID_PREFIX) + STORE_FILE_ID_HEX];

	snprintf(tag, sizeof(tag), "%s%s", PROFSVC_FILE_ID_PREFIX, file_id);
	if (pstore_symbols_arrived(arg, tag))
		pr_warn("profsvc: profile store: cannot note the symbols of '%s'", tag);
	return 0;
}

void profsvc_file_ids_arrived(struct profsvc *s, const char *build_id)
{
	int err = store_list_file_ids(symsvc_store(s->symbols), build_id, file_id_arrived,
				      s->store);

	if (err)
		pr_warn("profsvc: cannot list the file IDs of '%s': %s", build_id,
			strerror(-err));
}
