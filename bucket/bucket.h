/*
 * bucket.h - Ember's stores on an S3-compatible bucket (issue 18): the
 * debuginfo store's durable backend (struct store_backend) and the
 * profile store's block storage (struct pstore_blockio) over one
 * struct objstore, with the key layout of docs/object-storage-layout.md.
 *
 * Sits above debuginfo-store/, the profile store's block-storage
 * interface (profile-store/blockio/, not the engine) and object-store/,
 * and below the server: neither store links an HTTP client, and the
 * offline tools link none of this.  Every prefix below is the path of the s3:// URL, normalized to ""
 * or to end in '/'.
 */
#ifndef EMBER_BUCKET_H
#define EMBER_BUCKET_H

#include "objstore.h"
#include "store.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BUCKET_NAME_MAX 64	/* S3 bucket names are 3..63 bytes */
#define BUCKET_PREFIX_MAX 512

/*
 * "s3://BUCKET" or "s3://BUCKET/PREFIX" into bucket and prefix (prefix ""
 * or ending in '/', without a leading '/'): 0, or -EINVAL with msg (may be
 * NULL) saying what is wrong.
 */
int bucket_url_parse(const char *url, char bucket[BUCKET_NAME_MAX],
		     char prefix[BUCKET_PREFIX_MAX], char *msg, size_t msg_size);

struct bucket_opts {
	size_t sz;		/* sizeof(struct bucket_opts) */
	/* The client; borrowed: it must outlive the store the backend is
	 * set on. */
	struct objstore *os;
	const char *prefix;	/* normalized (bucket_url_parse), copied */
	unsigned refresh_ms;	/* store_backend.refresh_ms; 0: 1000 */
	/* The largest blob fetched (the largest this server stores: its
	 * --max-upload-mb or --upstream-max-size-mb); a larger object fails
	 * with -E2BIG before the cache fills.  0: 4 GiB. */
	uint64_t max_blob;
};

/*
 * Fill *out with the debuginfo store's backend on the bucket: blobs at
 * PREFIXv1/blobs/SHA, candidates, source names, sources and derived
 * records under PREFIXv1/buildid/ID/.  Hand *out to store_set_backend()
 * (which owns its context from then on).  0, -EINVAL, -ENOMEM.
 */
int bucket_store_backend(const struct bucket_opts *opts, struct store_backend *out);

/*
 * Abort the multipart uploads under the prefix that started more than
 * older_than_s seconds ago (a replica killed during an upload leaves
 * one; a younger one may be another replica's in progress).  *aborted
 * (may be NULL) counts them.  0 or the client's negative errno.
 */
int bucket_cleanup_uploads(struct objstore *os, const char *prefix,
			   unsigned older_than_s, unsigned *aborted);

/* ---- the profile store's blocks (profiles.c) -------------------------------- */

struct pstore_blockio;

/* The largest block object fetched into the cache: far above any block a
 * compaction writes (64 sections, each compressed from at most 2 GiB). */
#define BUCKET_BLOCK_MAX ((uint64_t)16 << 30)

struct bucket_profile_opts {
	size_t sz;		/* sizeof(struct bucket_profile_opts) */
	struct objstore *os;	/* borrowed: it must outlive the profile store */
	const char *prefix;	/* normalized (bucket_url_parse), copied */
	const char *cache_dir;	/* the local cache of blocks (created) */
	/* The bounded cache its files are counted in (the server's, shared
	 * with the debuginfo store's blob files: store_set_cache); borrowed:
	 * it must outlive the profile store.  NULL: one of its own, without
	 * a bound. */
	struct ember_fcache *cache;
};

/*
 * Fill *out with the profile store's block storage on the bucket: NAME at
 * PREFIXv1/profiles/NAME (blocks/..., index/PART/SEQ), create-only
 * writes, blocks cached whole in cache_dir (a block object larger than
 * BUCKET_BLOCK_MAX is refused with -E2BIG), counted in o->cache
 * (docs/object-storage-layout.md, "Profiles").  It has claim and fetch,
 * as pstore_opts.shared needs.  Hand *out to pstore_open (which owns its
 * context from then on).  0, -EINVAL, -ENOMEM, or the cache directory's
 * errno.
 */
int bucket_profile_blockio(const struct bucket_profile_opts *o, struct pstore_blockio *out);

/* ---- keys (keys.c; the parsers are fuzzed: tests/fuzz/fuzz_bucket_keys.c) ---- */

/* One candidate object's name below PREFIXv1/buildid/ID/cand/:
 * "SHA/K-O", K the kinds (decimal, < 256), O the origin (0 or 1). */
struct bucket_cand_name {
	char sha256[STORE_SHA256_HEX];
	unsigned kinds, origin;
};
/* Parse name (the part after .../cand/): 0, or -EINVAL for a name that
 * is not one (another writer's, or a damaged listing). */
int bucket_cand_name_parse(const char *name, size_t len, struct bucket_cand_name *out);

/* The source names object's bytes: each name ended by a NUL.  cb for
 * each non-empty name (a NUL-terminated copy, valid during the call); an
 * unterminated tail is not a name.  Returns cb's first non-zero return,
 * or 0; *bad (may be NULL) is set when the bytes had an unterminated tail
 * or a name longer than 4095 bytes (skipped). */
int bucket_names_parse(const uint8_t *p, size_t len,
		       int (*cb)(void *arg, const char *path), void *arg, bool *bad);

#endif /* EMBER_BUCKET_H */
