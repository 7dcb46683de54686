/*
 * pstore_index.h - what a store sharing its block storage with others
 * adds (docs/object-storage-layout.md, "Profiles"): the block index and the writers'
 * leases.
 *
 *   block_index.c  the block index: entries read, the live set, collection
 *   index_entry.c  the index's keys (its entries' text is pstore.h's)
 *   takeover.c     this writer's lease; the logs of dead writers taken over
 *
 * Invariants: index entries are create-only and their SEQs dense in a
 * partition; every replica applies the same entries in SEQ order and so
 * computes the same live set; a superseded block is deleted after the
 * grace, by the store whose entry superseded it; an append is acknowledged
 * only while no other store can have claimed this writer's log.
 */
#ifndef EMBER_PSTORE_INDEX_H
#define EMBER_PSTORE_INDEX_H

#include "pstore_internal.h"

struct pstore_block;

/* ---- the writer's lease and the takeover of a dead writer's log (takeover.c) -- */

/* Renew this writer's lease when a head age has passed since the last
 * renewal (force: now), check its log is not claimed, and take over the
 * logs of writers whose lease expired.  0 when the store has no leases. */
int pstore_lease_tend(struct pstore *s, bool force, struct ember_diag *d);
/* Before an append is acknowledged: 0 when no other store can have
 * claimed this writer's log yet (the last renewal is recent enough by
 * this machine's monotonic clock), else after checking the claim is not
 * there; -PSTORE_ERR_CLOSED when it is (the store is fenced). */
int pstore_lease_check(struct pstore *s, struct ember_diag *d);

/* ---- a shared store's block index (block_index.c, index_entry.c) ------------------- */

#define PS_INDEX_KEY_MAX 40
void pstore_index_key(int64_t part, uint64_t seq, char name[PS_INDEX_KEY_MAX]);
int pstore_index_new(struct pstore *s);
void pstore_index_free(struct pstore_index *ix);
/* Read the entries not read yet and make the store's list the live set;
 * flushed (may be NULL) is taken out of the sealed heads in the same
 * critical section as its blocks come in.  Lock order: compact_mu, then
 * the index's, then s->mu. */
int pstore_index_refresh(struct pstore *s, struct pstore_head *flushed, struct ember_diag *d);
/* The same when the last refresh is older than opts.refresh_ns; 0 when
 * the store is not shared. */
int pstore_index_maybe_refresh(struct pstore *s, struct ember_diag *d);
/* Append an entry to partition part's index (create-only, next SEQ). */
int pstore_index_append(struct pstore *s, int64_t part, const struct pstore_index_entry *e,
			struct ember_diag *d);
/* The entry "b added (may be NULL), sup[0..n) superseded" in the
 * partition of b (else of sup[0]). */
int pstore_index_add(struct pstore *s, const struct pstore_block *b,
		     struct pstore_block *const *sup, size_t n_sup, struct ember_diag *d);
/* Delete the blocks this store superseded that are due and dead in the
 * index (a compaction pass). */
int pstore_index_collect(struct pstore *s);

#endif /* EMBER_PSTORE_INDEX_H */
