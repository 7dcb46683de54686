/*
 * pstore_blockio.h - the profile store's block-storage interface: where
 * its blocks, block index and per-push log objects live (a local
 * directory, pstore_blockio_dir() in pstore.h, or a bucket,
 * bucket/profiles.c).  It sits in a folder and a CMake target of its own
 * (ember_pstore_blockio, header only) so that an implementation links
 * only this interface and common code, not the store: the store takes
 * the struct at pstore_open (pstore_opts.blocks) and calls through it.
 *
 * Ownership: the struct is a value; ctx is the implementation's, freed by
 * release(ctx), which the store calls at pstore_free (or on a failed
 * open) once it was handed over.
 */
#ifndef EMBER_PSTORE_BLOCKIO_H
#define EMBER_PSTORE_BLOCKIO_H

#include "common.h"

#include <stddef.h>
#include <stdint.h>

/*
 * Where blocks live.  Every name is a short relative name such as
 * "blocks/0000018c5f2e4000-9f2c...pblk" (letters, digits, '-', '.', '/').
 * Each function returns 0 or a negative errno; -ENOENT only when the
 * object does not exist.  Implementations must be safe to call from
 * several threads.
 *  put:  create name holding data[0..len) atomically and durably: after
 *        0 a get returns exactly these bytes, after a failure or a crash
 *        either nothing or all of them.  An existing name is success
 *        (blocks are named by content).
 *  get:  append bytes [off, off + len) of name to out (len 0: to the
 *        end); fewer only at the end of the object.
 *  list: call fn for every name under prefix (any order); fn's non-zero
 *        return stops the listing and is returned.
 *  del:  remove name; -ENOENT when absent.
 *  release: free ctx (may be NULL).
 * Optional (NULL when the storage has no such thing):
 *  claim: create name holding data[0..len) only if it does not exist:
 *        -EEXIST when it does (someone else's, whatever its content).
 *        Required by pstore_opts.shared (the block index's entries).
 *  fetch: a hint that name is about to be read at length (a query or a
 *        merge loads it): a storage with a local cache may bring it
 *        whole now; an error is not fatal (the reads then go remote).
 *  renew: write name holding data[0..len), replacing what is there (a
 *        writer's lease).
 *  mtime: *sec = when name was last written, by the storage's own clock
 *        (seconds since the epoch; a bucket's Last-Modified), so that two
 *        stores compare times without trusting each other's clock.
 * renew and mtime are required for the takeover of a dead writer's log
 * (pstore_opts.shared; without them a store writes its log objects but
 * takes no lease and takes nothing over).
 */
struct pstore_blockio {
	size_t sz; /* sizeof(struct pstore_blockio) */
	void *ctx;
	int (*put)(void *ctx, const char *name, const void *data, size_t len);
	int (*get)(void *ctx, const char *name, uint64_t off, size_t len,
		   struct ember_buf *out);
	int (*list)(void *ctx, const char *prefix,
		    int (*fn)(void *arg, const char *name, uint64_t size), void *arg);
	int (*del)(void *ctx, const char *name);
	void (*release)(void *ctx);
	int (*claim)(void *ctx, const char *name, const void *data, size_t len);
	int (*fetch)(void *ctx, const char *name);
	int (*renew)(void *ctx, const char *name, const void *data, size_t len);
	int (*mtime)(void *ctx, const char *name, int64_t *sec);
};

#endif /* EMBER_PSTORE_BLOCKIO_H */
